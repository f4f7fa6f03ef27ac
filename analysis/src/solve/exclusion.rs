//! Exclusion by mutual exclusion: a race pair ruled out because a thread of the pair holds a
//! mutex at its access.
//!
//! Takes a [`Model`], the pair's required cut (closed without the failed try operations' extra
//! requirements, so every event in it runs in every schedule that reaches the pair) and the two
//! threads' [`Pinned`] positions; gives whether no schedule reaches the pair ([`excluded`]).
//!
//! Where a pinned thread holds mutex `m` at its access, taken at its event `a`, it holds `m`
//! from `a` until past the pair; so every critical section of `m` another thread enters in the
//! cut must have ended before `a` runs. Those releases join the cut (with what they need), and
//! each becomes a requirement of `a`. If the cut then runs a pinned thread past its access, or
//! the requirements (program order, fork, end, signal, barrier, the deciding reads' edges and
//! these releases) form a cycle, no schedule reaches the pair. The cut solver's observed-order
//! repair cannot see this: it completes the holder's critical section, which runs the holder
//! past its access and leaves the pair undecided. A worker that decrements a latch's count under
//! the latch's lock and unlocks, against the waiter that saw the count reach zero and destroys
//! the lock (app_tpool), is such a pair: the waiter's read needs the worker's write, inside the
//! worker's section, and the waiter's own section around the read must end before that section
//! began.

use crate::model::{At, Model, ModelOp};

use super::cut::{close, need, op_needs, within, Closed};

/// Where a race pair's access stops its thread: it has run its first `cut` events (the last
/// event that constrains before the access among them), and no lock operation lies between.
#[derive(Clone, Copy)]
pub(super) struct Pinned {
    pub thread: usize,
    pub cut: usize,
}

/// A critical section of one mutex in one thread: the event that took the mutex, and the event
/// that must have run before the mutex is free again (the release, or, where a wait-loop exit
/// may release it without an event, the event before that exit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Section {
    taken: usize,
    freed: Option<usize>,
}

/// The critical sections of `mutex` in `thread` whose taking is among its first `upto` events
/// (the last one's `freed` may lie beyond, or be `None` if the thread never frees it).
fn sections(model: &Model, thread: usize, mutex: usize, upto: usize) -> Vec<Section> {
    let events = &model.threads[thread].events;
    let mut out: Vec<Section> = Vec::new();
    let mut depth = 0u32;
    for index in 0..events.len() {
        if depth == 0 && index >= upto {
            break;
        }
        let Some(op) = events[index].op() else {
            continue;
        };
        match op {
            ModelOp::Lock { mutex: m } if m == mutex => {
                if depth == 0 {
                    if index >= upto {
                        break;
                    }
                    out.push(Section {
                        taken: index,
                        freed: None,
                    });
                }
                depth += 1;
            }
            ModelOp::Unlock { mutex: m } if m == mutex && depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    end(&mut out, index);
                }
            }
            ModelOp::WaitRelease { mutex: m } if m == mutex && depth > 0 => {
                depth = 0;
                end(&mut out, index);
            }
            ModelOp::WaitReturn { mutex: m, .. } | ModelOp::LoopExit { mutex: Some(m), .. }
                if m == mutex =>
            {
                // A wait-loop exit may release the mutex before it, with no event of its own,
                // and take it back at the exit.
                if depth > 0 {
                    end(&mut out, index - 1);
                }
                if index >= upto {
                    break;
                }
                out.push(Section {
                    taken: index,
                    freed: None,
                });
                depth = 1;
            }
            _ => {}
        }
    }
    out
}

/// Ends the open section of `out` with `freed`.
fn end(out: &mut [Section], freed: usize) {
    if let Some(open) = out.last_mut() {
        open.freed = Some(freed);
    }
}

/// The mutexes `pinned`'s thread holds at its access, each with the event that last took it.
fn held(model: &Model, pinned: Pinned) -> Vec<(usize, usize)> {
    let events = &model.threads[pinned.thread].events;
    let mut mutexes: Vec<usize> = events
        .range(0..pinned.cut)
        .filter_map(|e| match e.op()? {
            ModelOp::Lock { mutex } | ModelOp::WaitReturn { mutex, .. } => Some(mutex),
            ModelOp::LoopExit { mutex, .. } => mutex,
            _ => None,
        })
        .collect();
    mutexes.sort_unstable();
    mutexes.dedup();
    mutexes
        .into_iter()
        .filter_map(|m| {
            let last = *sections(model, pinned.thread, m, pinned.cut).last()?;
            (last.freed.is_none_or(|f| f >= pinned.cut)).then_some((m, last.taken))
        })
        .collect()
}

/// Whether no schedule reaches the pair whose threads stop at `pinned`, given its required
/// closed cut `cut` and the threads' `limit`s (see the module doc).
pub(super) fn excluded(
    model: &Model,
    mut cut: Vec<usize>,
    pinned: [Pinned; 2],
    limit: &[usize],
) -> bool {
    let holds: Vec<(usize, usize, usize)> = pinned
        .iter()
        .flat_map(|&p| {
            held(model, p)
                .into_iter()
                .map(move |(m, taken)| (p.thread, m, taken))
        })
        .collect();
    if holds.is_empty() {
        return false;
    }
    let mut scanned = cut.clone();
    // Per taking event of a pinned thread: per thread, the last event that must run before it.
    let mut after: Vec<(At, Vec<Option<usize>>)>;
    loop {
        let before = cut.clone();
        after = Vec::new();
        for &(holder, mutex, taken) in &holds {
            let mut needs = vec![None; cut.len()];
            for (t, need_t) in needs.iter_mut().enumerate().filter(|(t, _)| *t != holder) {
                let Some(last) = sections(model, t, mutex, cut[t]).last().copied() else {
                    continue;
                };
                // A section never freed in the run: which of them must stay out is left to the
                // search.
                let Some(freed) = last.freed else {
                    return false;
                };
                *need_t = Some(freed);
                need(
                    &mut cut,
                    At {
                        thread: t,
                        index: freed,
                    },
                );
            }
            after.push((
                At {
                    thread: holder,
                    index: taken,
                },
                needs,
            ));
        }
        if close(model, &mut cut, &mut scanned, false) == Closed::Unreachable
            || !within(&cut, limit)
        {
            return true;
        }
        if cut == before {
            break;
        }
    }
    !runs_through(model, &cut, &after)
}

/// Whether every event of `cut` can run once its requirements have: program order, what its
/// operation needs, the deciding reads' edges, and `after` (per event, the last event of each
/// thread that must run before it). False if the requirements form a cycle.
fn runs_through(model: &Model, cut: &[usize], after: &[(At, Vec<Option<usize>>)]) -> bool {
    let mut pos = vec![0usize; cut.len()];
    let ran = |pos: &[usize], at: At| pos[at.thread] > at.index;
    loop {
        let mut progress = false;
        for t in 0..cut.len() {
            while pos[t] < cut[t] {
                let at = At {
                    thread: t,
                    index: pos[t],
                };
                let ready = model.rf_needs(at).all(|s| ran(&pos, s))
                    && after
                        .iter()
                        .filter(|(taken, _)| *taken == at)
                        .flat_map(|(_, needs)| needs.iter().enumerate())
                        .all(|(u, n)| n.is_none_or(|i| pos[u] > i))
                    && model.op(at).is_none_or(|op| {
                        let mut ok = true;
                        op_needs(model, at, op, false, |s| ok &= ran(&pos, s)) == Closed::Ok && ok
                    });
                if !ready {
                    break;
                }
                pos[t] += 1;
                progress = true;
            }
        }
        if !progress {
            return pos == cut;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::solve::cut::{race_alone, Start, Verdict};
    use crate::state::{Next, State};
    use crate::testkit::{check_random_runs, every_read_deciding, Run};

    const LEFT: u64 = 0x100;
    const V: u64 = 0x200;
    const L: u64 = 0x900;

    /// A latch: the worker (thread 1) writes the count and `v` under `L`; the waiter (thread 2)
    /// reads the count under `L`, then writes `v`. The run had the worker first.
    fn latch() -> Run {
        let mut r = Run::new(3);
        r.fork(0, 1)
            .fork(0, 2)
            .start(1)
            .start(2)
            .lock(1, L)
            .w(1, LEFT, 2)
            .w(1, V, 4)
            .unlock(1, L)
            .lock(2, L)
            .r(2, LEFT, 5)
            .unlock(2, L)
            .w(2, V, 6);
        r
    }

    /// The model of `v` of `run`, with every read deciding or none.
    fn model_of(run: &Run, deciding: bool) -> Model {
        let mut program = crate::prepare::prepare(run.traces());
        if deciding {
            let reads = every_read_deciding(&program.model);
            let edges = crate::reads_from::edges(&program.model, &reads);
            program.model.set_reads_from(edges);
        }
        let var = program
            .vars
            .iter()
            .position(|v| v.addr == V)
            .expect("v is shared");
        program.model.restrict(Some(var)).0
    }

    /// The accesses to `v` of threads 1 and 2.
    fn writes_of_v(model: &Model) -> (At, At) {
        let of = |thread: usize| At {
            thread,
            index: (0..model.threads[thread].events.len())
                .rev()
                .find(|&i| !model.threads[thread].events[i].is_sync())
                .expect("an access"),
        };
        (of(1), of(2))
    }

    #[test]
    fn a_section_the_waiter_read_from_orders_the_pair() {
        let model = model_of(&latch(), true);
        let (x, y) = writes_of_v(&model);
        assert_eq!(race_alone(&model, x, y), Verdict::Excluded);
        assert!(!reachable_pairs(&model).contains(&(x, y)));
    }

    /// Without the count read deciding, the waiter may go first: the pair is reachable, and not
    /// ruled out (the observed order's repair cannot show it either: it runs the worker first).
    #[test]
    fn without_the_read_the_section_orders_nothing() {
        let model = model_of(&latch(), false);
        let (x, y) = writes_of_v(&model);
        assert!(reachable_pairs(&model).contains(&(x, y)));
        assert_eq!(race_alone(&model, x, y), Verdict::Unknown);
    }

    /// Of random runs with every read deciding, each variable's model: every pair of accesses of
    /// two threads that [`excluded`] rules out is in no reachable state.
    #[test]
    fn pairs_ruled_out_are_unreachable_on_random_runs() {
        let ruled_out = std::cell::Cell::new(0);
        check_random_runs(0x2545_f491_4f6c_dd1d, 300, |run| {
            let mut program = crate::prepare::prepare(run.traces());
            let reads = every_read_deciding(&program.model);
            let edges = crate::reads_from::edges(&program.model, &reads);
            program.model.set_reads_from(edges);
            for var in 0..program.vars.len() {
                let (model, _) = program.model.restrict(Some(var));
                let reachable = reachable_pairs(&model);
                let accesses: Vec<At> = (0..model.threads.len())
                    .flat_map(|thread| {
                        let events = &model.threads[thread].events;
                        (0..events.len())
                            .filter(move |&index| !events[index].is_sync())
                            .map(move |index| At { thread, index })
                    })
                    .collect();
                for &x in &accesses {
                    for &y in accesses.iter().filter(|y| y.thread != x.thread) {
                        let starts = [x, y].map(|at| Start::of(&model, at));
                        let mut cut = vec![0; model.threads.len()];
                        let mut limit: Vec<usize> =
                            model.threads.iter().map(|t| t.events.len()).collect();
                        for s in starts {
                            cut[s.thread] = s.cut;
                            limit[s.thread] = s.limit;
                        }
                        let mut scanned = vec![0; cut.len()];
                        if close(&model, &mut cut, &mut scanned, false) == Closed::Unreachable
                            || !within(&cut, &limit)
                        {
                            continue;
                        }
                        let pinned = starts.map(|s| Pinned {
                            thread: s.thread,
                            cut: s.cut,
                        });
                        if excluded(&model, cut, pinned, &limit) {
                            ruled_out.set(ruled_out.get() + 1);
                            proptest::prop_assert!(
                                !reachable.contains(&(x, y)),
                                "var {}: pair {:?} is reachable",
                                var,
                                (x, y)
                            );
                        }
                    }
                }
            }
            Ok(())
        });
        eprintln!("{} pairs ruled out", ruled_out.get());
        assert!(ruled_out.get() > 100, "only {ruled_out:?} pairs ruled out");
    }

    /// Every pair of accesses (both orders) that some state reachable in `model` has in the
    /// current segments of their two threads: the exhaustive search's race test, over all states.
    fn reachable_pairs(model: &Model) -> HashSet<(At, At)> {
        let n = model.threads.len();
        let mut seen: HashSet<State> = HashSet::new();
        let mut out = HashSet::new();
        let mut stack = vec![State::initial(model)];
        while let Some(state) = stack.pop() {
            if seen.contains(&state) {
                continue;
            }
            let segment = |t: usize| {
                let from = state.pos[t];
                let to = if state.waiting(t) {
                    from
                } else {
                    model
                        .next_stop(t, from)
                        .unwrap_or(model.threads[t].events.len())
                };
                (from..to)
                    .filter(move |&i| !model.threads[t].events[i].is_sync())
                    .map(move |index| At { thread: t, index })
            };
            for a in 0..n {
                for b in (0..n).filter(|&b| b != a) {
                    for x in segment(a) {
                        out.extend(segment(b).map(|y| (x, y)));
                    }
                }
            }
            for t in 0..n {
                let Next::At(stop) = state.next(model, t, usize::MAX) else {
                    continue;
                };
                let mut next = state.clone();
                let op = model.threads[t].events[stop].op().expect("a sync event");
                let moved = if state.may_advance(model, t, stop) {
                    next.advance(model, t, stop)
                } else {
                    matches!(op, ModelOp::LoopExit { mutex: Some(_), .. })
                        && next.release_to_wait(model, t, op)
                };
                if moved {
                    stack.push(next);
                }
            }
            seen.insert(state);
        }
        out
    }
}
