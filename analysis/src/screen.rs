//! Screen: whether a run needs the reorder model at all, decided before one is built.
//!
//! Takes every thread of a run, its [`Lifetimes`] and its shared [`Objects`]; gives, for a run
//! whose synchronization is plain ([`plain`]) and none of whose shared objects keeps a race pair
//! after the filter's two tests, the counts the whole analysis gives it ([`Clean`]: no candidate,
//! the same [`FilterStats`] to the pair); otherwise `None`, and the run goes through prepare,
//! filter and solve. A run of 10^8 lock/unlock sections on a few thousand locked objects so
//! needs one walk of its accesses that holds nothing per access or per sync event, where the
//! model would hold every one.
//!
//! Plain: threads (create, join, end), mutexes and spinlocks (try and timed locks included),
//! signals nobody waits for, the markers that order nothing, nothing pending at the end, no
//! atomic operation that acquires or releases (relaxed ones are accesses only); every
//! lock released before a join and by the end of its thread, and the lock-order graph acyclic.
//! That is [`crate::solve::lockgraph::cannot_deadlock`]'s condition, so the deadlock search
//! finds nothing either; and the weakened happens-before of such a run has only fork → start and
//! end → join edges.
//!
//! Exact, not approximate: the filter pairs the model's records (one per object and segment, of
//! the segment's dominant kind) by their vector clock and lockset. A thread's clock changes its
//! other components only at a start or a join, and others learn its own component only at a
//! fork or its end; between two such events of a thread (an interval) every record is ordered
//! alike against every record of another thread. So per object the records of one thread,
//! interval and lockset are one group, counted by kind, and the pairs of two groups are the
//! product of their counts, ordered, kept apart by a common lock, or left. The walk stops at the
//! first pair left: the model is needed.

use std::collections::BTreeSet;

use ilgen_trace::format::ThreadTrace;
use ilgen_trace::{AccessKind, Event, SyncOp, ThreadId};
use rustc_hash::FxHashMap;

use crate::filter::FilterStats;
use crate::lifetime::{accesses, span, Lifetimes};
use crate::objects::{Hint, Objects};
use crate::solve::lockgraph::acyclic;

/// What the whole analysis gives a run the screen clears: no candidate, and these counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clean {
    pub sync_events: usize,
    pub accesses_read: usize,
    pub accesses_kept: usize,
    pub filter: FilterStats,
}

/// What a plain run's sync operation does to the screen.
#[derive(Clone, Copy)]
enum Step {
    Lock(u64),
    Unlock(u64),
    /// Start, end, fork or join: an interval ends.
    Thread,
    Other,
}

/// The step of `op`, `None` if a run with it is not plain.
fn step(op: SyncOp) -> Option<Step> {
    use SyncOp::*;
    Some(match op {
        MutexLock { mutex: m }
        | SpinLock { lock: m }
        | MutexTimedLock {
            mutex: m,
            acquired: true,
        }
        | MutexTryLock {
            mutex: m,
            acquired: true,
        }
        | SpinTryLock {
            lock: m,
            acquired: true,
        } => Step::Lock(m),
        MutexUnlock { mutex: m } | SpinUnlock { lock: m } => Step::Unlock(m),
        Start | End | Fork { .. } | Join { .. } => Step::Thread,
        MutexTimedLock { .. }
        | MutexTryLock { .. }
        | SpinTryLock { .. }
        | CondSignal { .. }
        | CondBroadcast { .. }
        | WaitLoopEnter { .. }
        | Exit
        | Detach { .. }
        | TxBegin
        | TxEnd
        | MutexDestroy { .. }
        | CondDestroy { .. }
        | BarrierDestroy { .. } => Step::Other,
        _ => return None,
    })
}

/// The mutexes one thread holds, with their counts (a recursive mutex is held once per level).
#[derive(Default)]
struct Held(Vec<(u32, u32)>);

impl Held {
    /// Takes `m`; true if the set of mutexes held changed.
    fn lock(&mut self, m: u32) -> bool {
        match self.0.iter_mut().find(|(h, _)| *h == m) {
            Some((_, n)) => {
                *n += 1;
                false
            }
            None => {
                self.0.push((m, 1));
                true
            }
        }
    }

    /// Releases one level of `m` if held (an unlock of a mutex not held orders nothing); true if
    /// the set changed.
    fn unlock(&mut self, m: u32) -> bool {
        let Some(i) = self.0.iter().position(|(h, _)| *h == m) else {
            return false;
        };
        self.0[i].1 -= 1;
        if self.0[i].1 == 0 {
            self.0.swap_remove(i);
            return true;
        }
        false
    }
}

/// The sync facts of a plain run: each mutex's dense id, and per thread the vector clock of the
/// weakened happens-before in each interval (in its first segment; see the module doc).
pub struct Plain {
    mutexes: FxHashMap<u64, u32>,
    clocks: Vec<Vec<Vec<u32>>>,
    sync_events: usize,
}

/// The sync facts of `traces`, `None` if the run is not plain (see the module doc).
pub fn plain(traces: &[ThreadTrace]) -> Option<Plain> {
    let index_of: FxHashMap<ThreadId, usize> = traces
        .iter()
        .enumerate()
        .map(|(i, t)| (t.header.tid, i))
        .collect();
    let mut mutexes: FxHashMap<u64, u32> = FxHashMap::default();
    let mut graph: BTreeSet<(usize, usize)> = BTreeSet::new();
    // The fork, start, end and join events: (seq, thread, index among its sync events, op).
    let mut events: Vec<(u64, usize, u32, SyncOp)> = Vec::new();
    let mut sync_events = 0;
    for (t, trace) in traces.iter().enumerate() {
        let mut held = Held::default();
        let mut index = 0u32;
        for (_, e) in trace.events.marks() {
            let s = match e {
                Event::Sync(s) => s,
                // Its edges are not the intervals' (see the module doc).
                Event::Atomic(_) => return None,
                Event::Access(_) | Event::Heap(_) => continue,
            };
            if s.is_pending() {
                return None;
            }
            let mut id = |addr: u64| {
                let next = mutexes.len() as u32;
                *mutexes.entry(addr).or_insert(next)
            };
            match step(s.op)? {
                Step::Lock(m) => {
                    let m = id(m);
                    graph.extend(
                        held.0
                            .iter()
                            .filter(|&&(h, _)| h != m)
                            .map(|&(h, _)| (h as usize, m as usize)),
                    );
                    held.lock(m);
                }
                Step::Unlock(m) => {
                    held.unlock(id(m));
                }
                Step::Thread => {
                    if matches!(s.op, SyncOp::Join { .. }) && !held.0.is_empty() {
                        return None;
                    }
                    events.push((s.seq, t, index, s.op));
                }
                Step::Other => {}
            }
            index += 1;
        }
        if !held.0.is_empty() {
            return None;
        }
        sync_events += index as usize;
    }
    if !acyclic(&graph) {
        return None;
    }
    Some(Plain {
        mutexes,
        clocks: interval_clocks(traces.len(), &index_of, events),
        sync_events,
    })
}

/// Per thread, the clock of each interval: what [`crate::ordered::segment_clocks`] gives its
/// first segment, from the fork, start, end and join `events` alone (a thread's own component
/// is its segment number plus one, and the other edges of that happens-before need waits or
/// barriers, which a plain run has none of).
fn interval_clocks(
    n: usize,
    index_of: &FxHashMap<ThreadId, usize>,
    mut events: Vec<(u64, usize, u32, SyncOp)>,
) -> Vec<Vec<Vec<u32>>> {
    events.sort_unstable_by_key(|e| e.0);
    let mut current: Vec<Vec<u32>> = (0..n)
        .map(|t| {
            let mut c = vec![0; n];
            c[t] = 1;
            c
        })
        .collect();
    let mut clocks: Vec<Vec<Vec<u32>>> = current.iter().map(|c| vec![c.clone()]).collect();
    let mut forked: Vec<Option<Vec<u32>>> = vec![None; n];
    let mut ended: Vec<Option<Vec<u32>>> = vec![None; n];
    for (_, t, index, op) in events {
        current[t][t] = index + 1;
        let from = match op {
            SyncOp::Start => forked[t].as_ref(),
            SyncOp::Join { child } => index_of.get(&child).and_then(|&c| ended[c].as_ref()),
            _ => None,
        };
        if let Some(from) = from {
            let joined: Vec<u32> = current[t]
                .iter()
                .zip(from)
                .map(|(a, b)| *a.max(b))
                .collect();
            current[t] = joined;
        }
        match op {
            SyncOp::Fork { child } => {
                if let Some(&c) = index_of.get(&child) {
                    forked[c] = Some(current[t].clone());
                }
            }
            SyncOp::End => ended[t] = Some(current[t].clone()),
            _ => {}
        }
        current[t][t] = index + 2;
        clocks[t].push(current[t].clone());
    }
    clocks
}

/// The records of one thread, interval and lockset on one object, by kind (`kind as usize`).
#[derive(Clone, Copy)]
struct Group {
    thread: u32,
    interval: u32,
    lockset: u32,
    counts: [u64; 4],
}

/// An object's record of the current segment, which may still grow.
#[derive(Clone, Copy, Default)]
struct Open {
    segment: u32,
    kind: u8,
    thread: u32,
    interval: u32,
    lockset: u32,
}

/// The access kinds, by their index (`kind as usize`).
const KINDS: [AccessKind; 4] = [
    AccessKind::Read,
    AccessKind::Write,
    AccessKind::AtomicRead,
    AccessKind::AtomicWrite,
];

/// The walk's groups and the facts they are judged by.
struct Records<'a> {
    plain: &'a Plain,
    /// Locksets, sorted mutex ids each: lockset 0 is the empty one.
    locksets: Vec<Vec<u32>>,
    ids: FxHashMap<Vec<u32>, u32>,
    /// Each lockset change seen: (lockset, mutex, taken) → lockset.
    next: FxHashMap<(u32, u32, bool), u32>,
    open: Vec<Open>,
    groups: Vec<Vec<Group>>,
    kept: usize,
}

/// A race pair left: the run needs the model.
struct Left;

impl Records<'_> {
    /// The lockset after `m` was taken or released, from `lockset`, with `held` held now.
    fn change(&mut self, lockset: u32, m: u32, taken: bool, held: &Held) -> u32 {
        let (locksets, ids) = (&mut self.locksets, &mut self.ids);
        *self.next.entry((lockset, m, taken)).or_insert_with(|| {
            let mut set: Vec<u32> = held.0.iter().map(|&(h, _)| h).collect();
            set.sort_unstable();
            let fresh = locksets.len() as u32;
            *ids.entry(set.clone()).or_insert_with(|| {
                locksets.push(set);
                fresh
            })
        })
    }

    fn unordered(&self, x: &Group, y: &Group) -> bool {
        let (a, b) = (x.thread as usize, y.thread as usize);
        let cx = &self.plain.clocks[a][x.interval as usize];
        let cy = &self.plain.clocks[b][y.interval as usize];
        cx[a] > cy[a] && cy[b] > cx[b]
    }

    fn disjoint(&self, x: &Group, y: &Group) -> bool {
        let (p, q) = (
            &self.locksets[x.lockset as usize],
            &self.locksets[y.lockset as usize],
        );
        !p.iter().any(|m| q.binary_search(m).is_ok())
    }

    /// An access of `kind` to `object` in `segment`, with the facts of its thread there.
    fn add(&mut self, object: usize, segment: u32, kind: AccessKind, at: Open) -> Result<(), Left> {
        let open = &mut self.open[object];
        if open.segment == segment {
            open.kind = KINDS[open.kind as usize].dominant(kind) as u8;
            return Ok(());
        }
        self.close(object)?;
        self.kept += 1;
        self.open[object] = Open {
            segment,
            kind: kind as u8,
            ..at
        };
        Ok(())
    }

    /// Counts the object's open record into its group; a kind new to the group is paired with
    /// the other threads' groups first.
    fn close(&mut self, object: usize) -> Result<(), Left> {
        let open = self.open[object];
        if open.segment == 0 {
            return Ok(());
        }
        self.open[object].segment = 0;
        let groups = &self.groups[object];
        let found = groups
            .iter()
            .rev()
            .take_while(|g| g.thread == open.thread && g.interval == open.interval)
            .position(|g| g.lockset == open.lockset)
            .map(|i| groups.len() - 1 - i);
        let kind = open.kind as usize;
        let group = match found {
            Some(i) if self.groups[object][i].counts[kind] > 0 => {
                self.groups[object][i].counts[kind] += 1;
                return Ok(());
            }
            Some(i) => i,
            None => {
                self.groups[object].push(Group {
                    thread: open.thread,
                    interval: open.interval,
                    lockset: open.lockset,
                    counts: [0; 4],
                });
                self.groups[object].len() - 1
            }
        };
        let g = self.groups[object][group];
        let left = self.groups[object].iter().any(|h| {
            h.thread != g.thread
                && (0..4).any(|k| h.counts[k] > 0 && KINDS[kind].conflicts_with(KINDS[k]))
                && self.unordered(&g, h)
                && self.disjoint(&g, h)
        });
        if left {
            return Err(Left);
        }
        self.groups[object][group].counts[kind] += 1;
        Ok(())
    }

    /// The filter's counts of the objects, none with a pair left.
    fn stats(&self) -> FilterStats {
        let mut stats = FilterStats {
            vars_shared: self.groups.len(),
            ..FilterStats::default()
        };
        for groups in &self.groups {
            let (mut total, mut after_hb) = (0u64, 0u64);
            for (i, x) in groups.iter().enumerate() {
                for y in groups[i + 1..].iter().filter(|y| y.thread != x.thread) {
                    let mut pairs = 0;
                    for (kx, &nx) in x.counts.iter().enumerate() {
                        for (ky, &ny) in y.counts.iter().enumerate() {
                            if KINDS[kx].conflicts_with(KINDS[ky]) {
                                pairs += nx * ny;
                            }
                        }
                    }
                    total += pairs;
                    if self.unordered(x, y) {
                        after_hb += pairs;
                    }
                }
            }
            stats.pairs_total += total;
            stats.pairs_removed_by_hb += total - after_hb;
            stats.pairs_removed_by_lockset += after_hb;
            if total == 0 {
                stats.vars_without_pair += 1;
            } else if after_hb == 0 {
                stats.vars_removed_by_hb += 1;
            } else {
                stats.vars_removed_by_lockset += 1;
            }
        }
        stats
    }
}

/// The counts of a plain run none of whose shared objects keeps a race pair; `None` when one
/// does (see the module doc).
pub fn screen(
    traces: &[ThreadTrace],
    plain: &Plain,
    lifetimes: &Lifetimes,
    objects: &Objects,
) -> Option<Clean> {
    let mut records = Records {
        plain,
        locksets: vec![Vec::new()],
        ids: FxHashMap::from_iter([(Vec::new(), 0)]),
        next: FxHashMap::default(),
        open: vec![Open::default(); objects.len()],
        groups: vec![Vec::new(); objects.len()],
        kept: 0,
    };
    let mut accesses_read = 0;
    // Numbered as prepare numbers the model's records: over the whole walk, from 1.
    let mut segment = 0u32;
    for (t, trace) in traces.iter().enumerate() {
        segment += 1;
        let mut held = Held::default();
        let mut at = Open {
            thread: t as u32,
            ..Open::default()
        };
        let mut hint = Hint::default();
        for (event, access) in accesses(trace, lifetimes) {
            if let Some((a, epoch)) = access {
                match event {
                    Event::Access(_) => accesses_read += 1,
                    // The free, or the use of a destroyed sync object, is a record of its own.
                    Event::Heap(_) | Event::Sync(_) | Event::Atomic(_) => segment += 1,
                }
                let (lo, hi) = span(&a);
                for object in objects.touched(epoch, lo, hi, &mut hint) {
                    records.add(object, segment, a.kind, at).ok()?;
                }
            }
            let Event::Sync(s) = event else { continue };
            segment += 1;
            let (m, taken) = match step(s.op)? {
                Step::Lock(m) => (plain.mutexes[&m], true),
                Step::Unlock(m) => (plain.mutexes[&m], false),
                Step::Thread => {
                    at.interval += 1;
                    continue;
                }
                Step::Other => continue,
            };
            let changed = match taken {
                true => held.lock(m),
                false => held.unlock(m),
            };
            if changed {
                at.lockset = records.change(at.lockset, m, taken, &held);
            }
        }
    }
    for object in 0..objects.len() {
        records.close(object).ok()?;
    }
    Some(Clean {
        sync_events: plain.sync_events,
        accesses_read,
        accesses_kept: records.kept,
        filter: records.stats(),
    })
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use proptest::prelude::*;

    use super::*;
    use crate::prepare::{prepare_keeping, Keep};
    use crate::testkit::{check_random_runs, options, Run};
    use crate::{filter, solve};

    /// The screen of `traces`, or why it gave none: not plain, or a pair left.
    fn screened(traces: &[ThreadTrace]) -> Result<Clean, &'static str> {
        let plain = plain(traces).ok_or("not plain")?;
        let lifetimes = Lifetimes::of(traces);
        let objects = Objects::of(traces, &lifetimes);
        screen(traces, &plain, &lifetimes, &objects).ok_or("a pair left")
    }

    /// What prepare, filter and the deadlock search give: the counts of [`Clean`], and whether
    /// they found anything (a race pair left, a deadlock).
    fn modelled(traces: Vec<ThreadTrace>) -> (Clean, bool) {
        let program = prepare_keeping(traces, Keep::Unordered);
        let (survivors, filter) = filter::filter(&program);
        let options = options();
        let deadlocks = solve::deadlocks_with(&program, &options, &|| {});
        let clean = Clean {
            sync_events: program.sync_events(),
            accesses_read: program.accesses_read,
            accesses_kept: program.accesses_kept,
            filter,
        };
        let found = !survivors.is_empty()
            || !deadlocks.findings.is_empty()
            || deadlocks.stats != solve::SolveStats::default();
        (clean, found)
    }

    #[test]
    fn a_cleared_run_gets_the_counts_of_the_model_and_every_plain_clean_run_is_cleared() {
        let cleared = Cell::new(0);
        check_random_runs(0x5c7e_e41a_0b1e_c7ed, 600, |run| {
            let traces = run.traces();
            let screen = screened(&traces);
            let (counts, found) = modelled(traces);
            match screen {
                Ok(clean) => {
                    prop_assert!(!found, "cleared, but the model finds something");
                    prop_assert_eq!(clean, counts);
                    cleared.set(cleared.get() + 1);
                }
                Err(why) => prop_assert!(
                    why == "not plain" || found,
                    "not cleared ({why}), yet the model finds nothing"
                ),
            }
            Ok(())
        });
        assert!(cleared.get() >= 20, "only {} runs cleared", cleared.get());
    }

    #[test]
    fn locked_sections_and_fork_join_order_are_cleared_a_lock_cycle_is_not() {
        const M: u64 = 0x900;
        const N: u64 = 0x910;
        let mut r = Run::new(2);
        r.w(0, 0x100, 1).fork(0, 1).start(1).w(1, 0x100, 2);
        for _ in 0..3 {
            r.lock(0, M).w(0, 0x200, 3).unlock(0, M);
            r.lock(1, M).r(1, 0x200, 4).unlock(1, M);
        }
        r.end(1).join(0, 1).w(0, 0x100, 5);
        let clean = screened(&r.traces()).expect("cleared");
        assert_eq!(
            (
                clean.filter.vars_removed_by_hb,
                clean.filter.vars_removed_by_lockset
            ),
            (1, 1)
        );
        assert_eq!(clean, modelled(r.traces()).0);
        let mut cycle = Run::new(2);
        cycle.fork(0, 1).start(1);
        cycle.lock(0, M).lock(0, N).unlock(0, N).unlock(0, M);
        cycle.lock(1, N).lock(1, M).unlock(1, M).unlock(1, N);
        assert_eq!(screened(&cycle.traces()).err(), Some("not plain"));
    }
}
