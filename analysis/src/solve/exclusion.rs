//! Exclusion by mutual exclusion: a race pair ruled out because a thread of the pair holds a
//! mutex at its access.
//!
//! Takes a [`Model`], the pair's required cut (closed without the failed try operations' extra
//! requirements, so every event in it runs in every schedule that reaches the pair), the two
//! threads' [`Start`]s, each thread's critical sections ([`Sections`], kept across a
//! model's pairs) and the required cut of any one event (the cut path's kept closures); gives
//! whether no schedule reaches the pair ([`excluded`]).
//!
//! Where a thread of the pair holds mutex `m` at its access, taken at its event `a`, it holds `m`
//! from `a` until past the pair; so every critical section of `m` another thread enters in the
//! cut must have ended before `a` runs. Those releases join the cut (with what they need), and
//! each becomes a requirement of `a`. If the cut then runs a thread of the pair past its access, or
//! the requirements (program order, fork, end, signal, barrier, the deciding reads' edges and
//! these releases) form a cycle, no schedule reaches the pair. The cut solver's observed-order
//! repair cannot see this: it completes the holder's critical section, which runs the holder
//! past its access and leaves the pair undecided. A worker that decrements a latch's count under
//! the latch's lock and unlocks, against the waiter that saw the count reach zero and destroys
//! the lock (app_tpool), is such a pair: the waiter's read needs the worker's write, inside the
//! worker's section, and the waiter's own section around the read must end before that section
//! began.

use rustc_hash::FxHashMap;

use super::prefix::{has, merge, within, Start};
use crate::model::{At, Model, ModelOp};

/// A critical section of one mutex in one thread: the event that took the mutex, and the event
/// that must have run before the mutex is free again (the release, or, where a wait-loop exit
/// may release it without an event, the event before that exit; `None`: never freed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Section {
    taken: usize,
    freed: Option<usize>,
}

/// Each thread's critical sections, per mutex in the order taken: found by one scan of the
/// thread when first asked for, since a model's pairs ask again and again.
#[derive(Default)]
pub(super) struct Sections(Vec<Option<FxHashMap<usize, Vec<Section>>>>);

impl Sections {
    fn of(&mut self, model: &Model, thread: usize) -> &FxHashMap<usize, Vec<Section>> {
        if self.0.len() <= thread {
            self.0
                .resize_with(model.threads.len().max(thread + 1), || None);
        }
        self.0[thread].get_or_insert_with(|| scan(model, thread))
    }

    /// The last section of `mutex` that `thread` takes among its first `upto` events.
    fn last(&mut self, model: &Model, thread: usize, mutex: usize, upto: usize) -> Option<Section> {
        let sections = self.of(model, thread).get(&mutex)?;
        let n = sections.partition_point(|s| s.taken < upto);
        n.checked_sub(1).map(|i| sections[i])
    }

    /// The mutexes `start`'s thread holds at its access, each with the event that last took it
    /// (no lock operation lies between its `cut` and the access).
    fn held(&mut self, model: &Model, start: Start) -> Vec<(usize, usize)> {
        let mut held: Vec<(usize, usize)> = self
            .of(model, start.thread)
            .iter()
            .filter_map(|(&mutex, sections)| {
                let n = sections.partition_point(|s| s.taken < start.cut);
                let last = sections[..n].last()?;
                last.freed
                    .is_none_or(|f| f >= start.cut)
                    .then_some((mutex, last.taken))
            })
            .collect();
        held.sort_unstable();
        held
    }
}

/// The critical sections of every mutex in `thread`.
fn scan(model: &Model, thread: usize) -> FxHashMap<usize, Vec<Section>> {
    let mut out: FxHashMap<usize, Vec<Section>> = FxHashMap::default();
    // Per mutex held: its recursion depth.
    let mut depth: FxHashMap<usize, u32> = FxHashMap::default();
    let events = &model.threads[thread].events;
    for index in 0..events.len() {
        let Some(op) = events[index].op() else {
            continue;
        };
        match op {
            ModelOp::Lock { mutex } => {
                let d = depth.entry(mutex).or_insert(0);
                if *d == 0 {
                    out.entry(mutex).or_default().push(Section {
                        taken: index,
                        freed: None,
                    });
                }
                *d += 1;
            }
            ModelOp::Unlock { mutex } => {
                if let Some(d) = depth.get_mut(&mutex).filter(|d| **d > 0) {
                    *d -= 1;
                    if *d == 0 {
                        end(&mut out, mutex, index);
                    }
                }
            }
            ModelOp::WaitRelease { mutex } => {
                let held = depth.insert(mutex, 0).is_some_and(|d| d > 0);
                if held {
                    end(&mut out, mutex, index);
                }
            }
            ModelOp::WaitReturn { mutex, .. }
            | ModelOp::LoopExit {
                mutex: Some(mutex), ..
            } => {
                // A wait-loop exit may release the mutex before it, with no event of its own,
                // and take it back at the exit.
                if depth.insert(mutex, 1).is_some_and(|d| d > 0) {
                    end(&mut out, mutex, index - 1);
                }
                out.entry(mutex).or_default().push(Section {
                    taken: index,
                    freed: None,
                });
            }
            _ => {}
        }
    }
    out
}

/// Ends `mutex`'s open section in `out` at `freed`.
fn end(out: &mut FxHashMap<usize, Vec<Section>>, mutex: usize, freed: usize) {
    if let Some(open) = out.get_mut(&mutex).and_then(|s| s.last_mut()) {
        open.freed = Some(freed);
    }
}

/// Whether no schedule reaches the pair whose threads stop at `starts`, given its required
/// closed cut `cut`, the threads' `limit`s, each thread's `sections`, and `closure`, the
/// required closed cut of one event (`None`: it can never run). See the module doc.
pub(super) fn excluded(
    model: &Model,
    mut cut: Vec<usize>,
    starts: [Start; 2],
    limit: &[usize],
    sections: &mut Sections,
    closure: &mut dyn FnMut(At) -> Option<Vec<usize>>,
) -> bool {
    let holds: Vec<(At, usize)> = starts
        .iter()
        .flat_map(|&start| {
            sections
                .held(model, start)
                .into_iter()
                .map(move |(mutex, taken)| {
                    let taken = At {
                        thread: start.thread,
                        index: taken,
                    };
                    (taken, mutex)
                })
        })
        .collect();
    if holds.is_empty() {
        return false;
    }
    // (release, taking): the release must run before the taking.
    let mut edges: Vec<(At, At)> = Vec::new();
    loop {
        let before = cut.clone();
        edges.clear();
        for &(taken, mutex) in &holds {
            for t in (0..cut.len()).filter(|&t| t != taken.thread) {
                let Some(last) = sections.last(model, t, mutex, cut[t]) else {
                    continue;
                };
                // A section never freed in the run: which of them must stay out is left to the
                // search.
                let Some(freed) = last.freed else {
                    return false;
                };
                let release = At {
                    thread: t,
                    index: freed,
                };
                edges.push((release, taken));
                let Some(required) = closure(release) else {
                    return true;
                };
                merge(&mut cut, &required);
            }
        }
        // A thread of the pair run past its access.
        if !within(&cut, limit) {
            return true;
        }
        if cut == before {
            break;
        }
    }
    // The required orders alone follow the run's order, so a cycle takes a release → taking
    // order: one whose taking must come before its release.
    edges.iter().any(|&(release, taken)| {
        let Some(mut before) = closure(release) else {
            return true;
        };
        loop {
            let grown = before.clone();
            for &(r, t) in &edges {
                if has(&before, t) {
                    match closure(r) {
                        Some(c) => merge(&mut before, &c),
                        None => return true,
                    }
                }
            }
            if has(&before, taken) {
                return true;
            }
            if before == grown {
                return false;
            }
        }
    })
}
