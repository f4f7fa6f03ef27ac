//! Filter: the shared objects that can still race, and their race-pair candidates.
//!
//! Takes the prepared [`Program`]; gives, per shared object of its model, the pairs of accesses (different
//! threads, at least one write, not both atomic) that two cheap and exact tests leave: a weakened
//! happens-before without mutex edges (fork → start, end → join, signal → wait, barrier enters →
//! exits, an atomic's release → the acquires that read from it; vector clocks over the observed
//! seq order, a clock per stretch between two sync events or atomic records), then locksets (a common lock, or a common
//! rwlock held for writing by one side, keeps two accesses apart). Both only remove pairs that no
//! order of the model can bring together, so the solver may trust a pair they removed. Also gives
//! the counts of variables and pairs each test removed, those of the objects prepare left out of
//! the model because happens-before orders all their pairs ([`crate::ordered`]) included.

use std::collections::HashMap;

use ilgen_trace::{AccessKind, SiteId};

use crate::model::{At, Model, ModelEvent, ModelOp, VarId};
use crate::ordered::{segment_clocks, Clocks};
use crate::prepare::Program;

/// Stored race pairs per variable: the cut path tries these; beyond them the variable goes to the
/// exhaustive search if they give no candidate (the counts stay exact).
const MAX_PAIRS: usize = 100_000;

#[derive(Clone, Debug)]
pub struct Survivor {
    pub var: VarId,
    /// Race-pair candidates left (events of the full model), in a fixed order.
    pub pairs: Vec<(At, At)>,
    /// Some candidates were not stored (more than the filter keeps per variable).
    pub truncated: bool,
    /// Race-pair candidates left, stored or not.
    pub pairs_left: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FilterStats {
    pub vars_shared: usize,
    /// Shared objects with no conflicting pair at all (e.g. only atomics on one side).
    pub vars_without_pair: usize,
    pub vars_removed_by_hb: usize,
    pub vars_removed_by_lockset: usize,
    pub vars_left: usize,
    pub pairs_total: u64,
    pub pairs_removed_by_hb: u64,
    pub pairs_removed_by_lockset: u64,
    pub pairs_left: u64,
}

/// A lock held at an access; `exclusive` is false for an rwlock held for reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Held {
    Mutex(usize),
    Rw { rw: usize, exclusive: bool },
}

/// An access of one variable: 20 bytes, one per access kept.
struct Acc {
    thread: u32,
    index: u32,
    segment: u32,
    lockset: u32,
    kind: AccessKind,
}

impl Acc {
    fn at(&self) -> At {
        At {
            thread: self.thread as usize,
            index: self.index as usize,
        }
    }
}

pub fn filter(program: &Program) -> (Vec<Survivor>, FilterStats) {
    let model = &program.model;
    let clocks = segment_clocks(model, &program.atomics);
    let mut locksets: Vec<Vec<Held>> = Vec::new();
    // Sized exactly: together the lists hold every access of the model.
    let mut counts = vec![0usize; program.vars.len()];
    for e in model.threads.iter().flat_map(|t| &t.events) {
        if let ModelEvent::Access { var, .. } = e {
            if let Some(n) = counts.get_mut(*var as VarId) {
                *n += 1;
            }
        }
    }
    let mut per_var: Vec<Vec<Acc>> = counts.into_iter().map(Vec::with_capacity).collect();
    let mut interned: HashMap<Vec<Held>, u32> = HashMap::new();
    for (t, thread) in model.threads.iter().enumerate() {
        let mut held: Vec<Held> = Vec::new();
        let mut lockset = intern(&mut interned, &mut locksets, &held);
        let mut segment = 0u32;
        let mut points = program.atomics.of_thread(t).iter().peekable();
        for (index, event) in thread.events.iter().enumerate() {
            // The atomic records before this event end segments too.
            while points
                .next_if(|p| p.model_index as usize <= index)
                .is_some()
            {
                segment += 1;
            }
            match *event {
                ModelEvent::Access { var, kind, .. } => {
                    if let Some(list) = per_var.get_mut(var as VarId) {
                        list.push(Acc {
                            thread: t as u32,
                            index: index as u32,
                            segment,
                            kind,
                            lockset,
                        });
                    }
                }
                ModelEvent::Sync { op, .. } => {
                    segment += 1;
                    if update_held(&mut held, op.get()) {
                        lockset = intern(&mut interned, &mut locksets, &held);
                    }
                }
            }
        }
    }
    // The objects prepare left out: happens-before orders every pair of theirs.
    let ordered = &program.ordered;
    let mut stats = FilterStats {
        vars_shared: program.shared(),
        vars_without_pair: ordered.vars_without_pair,
        vars_removed_by_hb: ordered.vars - ordered.vars_without_pair,
        pairs_total: ordered.pairs,
        pairs_removed_by_hb: ordered.pairs,
        ..FilterStats::default()
    };
    let mut survivors = Vec::new();
    for (var, accs) in per_var.iter().enumerate() {
        let counted = count_pairs(&clocks, &locksets, accs);
        stats.pairs_total += counted.total;
        stats.pairs_removed_by_hb += counted.total - counted.after_hb;
        stats.pairs_removed_by_lockset += counted.after_hb - counted.left;
        stats.pairs_left += counted.left;
        if counted.total == 0 {
            stats.vars_without_pair += 1;
        } else if counted.after_hb == 0 {
            stats.vars_removed_by_hb += 1;
        } else if counted.left == 0 {
            stats.vars_removed_by_lockset += 1;
        } else {
            stats.vars_left += 1;
            let mut pairs = counted.pairs;
            pairs.sort_unstable();
            survivors.push(Survivor {
                var,
                truncated: counted.left > pairs.len() as u64,
                pairs_left: counted.left,
                pairs,
            });
        }
    }
    (survivors, stats)
}

/// Sites of the two accesses of a pair.
pub fn sites(model: &Model, pair: (At, At)) -> Option<(SiteId, SiteId)> {
    let site = |at: At| match model.threads.get(at.thread)?.events.get(at.index)? {
        ModelEvent::Access { site, .. } => Some(*site),
        ModelEvent::Sync { .. } => None,
    };
    Some((site(pair.0)?, site(pair.1)?))
}

fn intern(map: &mut HashMap<Vec<Held>, u32>, sets: &mut Vec<Vec<Held>>, held: &[Held]) -> u32 {
    let mut key = held.to_vec();
    key.sort_unstable();
    key.dedup();
    *map.entry(key.clone()).or_insert_with(|| {
        sets.push(key);
        (sets.len() - 1) as u32
    })
}

/// Tracks the locks a thread holds (one entry per level); true if the set changed.
fn update_held(held: &mut Vec<Held>, op: ModelOp) -> bool {
    let remove = |held: &mut Vec<Held>, f: &dyn Fn(&Held) -> bool| {
        if let Some(i) = held.iter().rposition(f) {
            held.remove(i);
        }
    };
    match op {
        ModelOp::Lock { mutex } | ModelOp::WaitReturn { mutex, .. } => {
            held.push(Held::Mutex(mutex))
        }
        ModelOp::Unlock { mutex } => remove(held, &|h| *h == Held::Mutex(mutex)),
        ModelOp::WaitRelease { mutex } => held.retain(|h| *h != Held::Mutex(mutex)),
        ModelOp::ReadLock { rw } => held.push(Held::Rw {
            rw,
            exclusive: false,
        }),
        ModelOp::WriteLock { rw } => held.push(Held::Rw {
            rw,
            exclusive: true,
        }),
        ModelOp::RwUnlock { rw } => {
            remove(held, &|h| matches!(h, Held::Rw { rw: r, .. } if *r == rw))
        }
        _ => return false,
    }
    true
}

/// No lock keeps the two apart: no common mutex, no common rwlock held for writing by either.
fn disjoint(x: &[Held], y: &[Held]) -> bool {
    !x.iter().any(|hx| {
        y.iter().any(|hy| match (hx, hy) {
            (Held::Mutex(a), Held::Mutex(b)) => a == b,
            (
                Held::Rw {
                    rw: a,
                    exclusive: ea,
                },
                Held::Rw {
                    rw: b,
                    exclusive: eb,
                },
            ) => a == b && (*ea || *eb),
            _ => false,
        })
    })
}

/// The access kinds, in the order of their index ([`class`]).
const KINDS: [AccessKind; 4] = [
    AccessKind::Read,
    AccessKind::Write,
    AccessKind::AtomicRead,
    AccessKind::AtomicWrite,
];

/// An access kind as an index into [`KINDS`].
fn class(kind: AccessKind) -> usize {
    match kind {
        AccessKind::Read => 0,
        AccessKind::Write => 1,
        AccessKind::AtomicRead => 2,
        AccessKind::AtomicWrite => 3,
    }
}

/// Whether accesses of these classes make a race-pair candidate.
fn conflict(a: usize, b: usize) -> bool {
    KINDS[a].conflicts_with(KINDS[b])
}

/// One thread's accesses to one variable, indexed for counting pairs by range.
struct ThreadAccesses<'a> {
    thread: usize,
    accs: &'a [Acc],
    /// `prefix[k][c]`: accesses of class `c` among the first `k`.
    prefix: Vec<[u32; 4]>,
    /// Per lockset: positions in `accs` of each class.
    by_lockset: Vec<(u32, [Vec<u32>; 4])>,
}

struct Counted {
    total: u64,
    after_hb: u64,
    left: u64,
    /// The first [`MAX_PAIRS`] pairs left.
    pairs: Vec<(At, At)>,
}

/// Counts one variable's race-pair candidates in O(n log n) rather than by pairs, which a hot
/// variable (every lock/unlock starts a segment) would make quadratic. For an access y of thread
/// b, the accesses of thread a ordered before it are a prefix of a's (a's own clock component only
/// grows), those ordered after it a suffix (their clock's b component only grows): the unordered
/// ones are a range, found by binary search.
fn count_pairs(clocks: &Clocks, locksets: &[Vec<Held>], accs: &[Acc]) -> Counted {
    // The list holds each thread's accesses in one run (threads were walked one after another).
    let threads: Vec<ThreadAccesses> = accs
        .chunk_by(|x, y| x.thread == y.thread)
        .map(|run| {
            let mut prefix = Vec::with_capacity(run.len() + 1);
            let mut counts = [0u32; 4];
            prefix.push(counts);
            let mut by_lockset: Vec<(u32, [Vec<u32>; 4])> = Vec::new();
            for (pos, acc) in run.iter().enumerate() {
                let c = class(acc.kind);
                counts[c] += 1;
                prefix.push(counts);
                let pos = pos as u32;
                match by_lockset.iter_mut().find(|(l, _)| *l == acc.lockset) {
                    Some((_, lists)) => lists[c].push(pos),
                    None => {
                        let mut lists: [Vec<u32>; 4] = Default::default();
                        lists[c].push(pos);
                        by_lockset.push((acc.lockset, lists));
                    }
                }
            }
            ThreadAccesses {
                thread: run[0].thread as usize,
                accs: run,
                prefix,
                by_lockset,
            }
        })
        .collect();
    let mut out = Counted {
        total: 0,
        after_hb: 0,
        left: 0,
        pairs: Vec::new(),
    };
    for (i, ta) in threads.iter().enumerate() {
        for tb in &threads[i + 1..] {
            let (a, b) = (ta.thread, tb.thread);
            let (sa, sb) = (clocks.slot(a), clocks.slot(b));
            for y in tb.accs {
                let cy = clocks.at(b, y.segment);
                let epoch_y = cy[sb];
                let lo = ta
                    .accs
                    .partition_point(|x| clocks.at(a, x.segment)[sa] <= cy[sa]);
                let hi = ta
                    .accs
                    .partition_point(|x| clocks.at(a, x.segment)[sb] < epoch_y)
                    .max(lo);
                let all = ta.accs.len();
                for cx in (0..4).filter(|&cx| conflict(cx, class(y.kind))) {
                    out.total += u64::from(ta.prefix[all][cx]);
                    out.after_hb += u64::from(ta.prefix[hi][cx] - ta.prefix[lo][cx]);
                    for (lockset, lists) in &ta.by_lockset {
                        if !disjoint(&locksets[*lockset as usize], &locksets[y.lockset as usize]) {
                            continue;
                        }
                        let list = &lists[cx];
                        let from = list.partition_point(|&p| (p as usize) < lo);
                        let to = list.partition_point(|&p| (p as usize) < hi);
                        out.left += (to - from) as u64;
                        let room = MAX_PAIRS.saturating_sub(out.pairs.len());
                        out.pairs.extend(
                            list[from..to]
                                .iter()
                                .take(room)
                                .map(|&p| (ta.accs[p as usize].at(), y.at())),
                        );
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use ilgen_trace::{AccessKind, AtomicOp, SyncOp};
    use proptest::prelude::*;

    use super::*;
    use crate::prepare::{prepare, prepare_keeping, Keep};
    use crate::testkit::{check_random_runs, Run};

    const D: u64 = 0x100;
    const M: u64 = 0x900;

    fn stats(r: &Run) -> FilterStats {
        filter(&prepare(r.traces())).1
    }

    #[test]
    fn weakened_happens_before_has_no_mutex_edges() {
        // Ordered by unlock → lock in the run, but that order could flip: the pair stays.
        let mut r = Run::new(2);
        r.fork(0, 1)
            .lock(0, M)
            .unlock(0, M)
            .w(0, D, 1)
            .start(1)
            .lock(1, M)
            .unlock(1, M)
            .w(1, D, 2);
        let s = stats(&r);
        assert_eq!((s.pairs_total, s.pairs_left, s.vars_left), (1, 1, 1));
    }

    #[test]
    fn signal_to_wait_and_barrier_order_pairs() {
        let (c, b) = (0xc0, 0xb0);
        let mut r = Run::new(2);
        r.fork(0, 1)
            .start(1)
            .lock(1, M)
            .sync(
                1,
                SyncOp::CondWait {
                    cond: c,
                    mutex: M,
                    timed: false,
                },
            )
            .w(0, D, 1)
            .sync(0, SyncOp::CondSignal { cond: c })
            .sync(
                1,
                SyncOp::CondWake {
                    cond: c,
                    mutex: M,
                    timed_out: false,
                },
            )
            .unlock(1, M)
            .w(1, D, 2)
            .sync(1, SyncOp::BarrierEnter { barrier: b })
            .sync(0, SyncOp::BarrierEnter { barrier: b })
            .sync(
                0,
                SyncOp::BarrierExit {
                    barrier: b,
                    serial: true,
                },
            )
            .sync(
                1,
                SyncOp::BarrierExit {
                    barrier: b,
                    serial: false,
                },
            )
            .w(0, D, 3);
        let s = stats(&r);
        assert_eq!(s.pairs_total, 2);
        assert_eq!(s.pairs_removed_by_hb, 2);
        assert_eq!(s.vars_removed_by_hb, 1);
    }

    #[test]
    fn locksets_follow_waits_and_rwlock_modes() {
        let (c, l) = (0xc0, 0x700);
        let mut r = Run::new(2);
        r.fork(0, 1)
            .start(1)
            // Under M, though a wait released and retook it in between.
            .lock(0, M)
            .sync(
                0,
                SyncOp::CondWait {
                    cond: c,
                    mutex: M,
                    timed: true,
                },
            )
            .sync(
                0,
                SyncOp::CondWake {
                    cond: c,
                    mutex: M,
                    timed_out: true,
                },
            )
            .w(0, D, 1)
            .unlock(0, M)
            .lock(1, M)
            .w(1, D, 2)
            .unlock(1, M)
            // A read lock does not keep a write from a read.
            .sync(0, SyncOp::RwRdLock { lock: l })
            .w(0, D + 8, 3)
            .sync(0, SyncOp::RwUnlock { lock: l })
            .sync(1, SyncOp::RwRdLock { lock: l })
            .r(1, D + 8, 4)
            .sync(1, SyncOp::RwUnlock { lock: l });
        let s = stats(&r);
        assert_eq!(s.vars_shared, 2);
        assert_eq!((s.vars_removed_by_lockset, s.vars_left), (1, 1));
        assert_eq!((s.pairs_removed_by_lockset, s.pairs_left), (1, 1));
    }

    #[test]
    fn a_thread_forked_after_a_join_shares_the_joined_ones_clock_slot_and_stays_after_it() {
        // Main runs 1 and then 2 (each joined before the next fork), then 3 and 4 together:
        // 2 and 3 take 1's slot in turn, 4 a slot of its own.
        let mut r = Run::new(5);
        r.fork(0, 1).start(1).w(1, D, 1).end(1).join(0, 1);
        r.fork(0, 2).start(2).w(2, D, 2).end(2).join(0, 2);
        r.fork(0, 3).fork(0, 4).start(3).start(4);
        r.w(3, D + 8, 3)
            .w(4, D + 8, 4)
            .w(3, D + 16, 5)
            .end(3)
            .end(4);
        r.join(0, 3).join(0, 4).w(0, D + 16, 6);
        let program = prepare(r.traces());
        let clocks = segment_clocks(&program.model, &program.atomics);
        let slot = |t| clocks.slot(t);
        assert_eq!((slot(1), slot(2), slot(3)), (slot(1), slot(1), slot(1)));
        assert_ne!(slot(4), slot(1));
        assert_eq!(clocks.slots(), 3);
        // D: 1's write before 2's; D + 8: 3 and 4 unordered; D + 16: 3's before main's.
        let s = stats(&r);
        assert_eq!(s.vars_shared, 3);
        assert_eq!((s.vars_removed_by_hb, s.vars_left), (2, 1));
        assert_eq!((s.pairs_removed_by_hb, s.pairs_left), (2, 1));
    }

    #[test]
    fn atomics_never_pair_with_each_other() {
        let mut r = Run::new(2);
        r.access(0, D, 4, AccessKind::AtomicWrite, 1)
            .access(1, D, 4, AccessKind::AtomicWrite, 2)
            .access(0, D + 8, 4, AccessKind::AtomicWrite, 3)
            .access(1, D + 8, 4, AccessKind::Read, 4);
        let (survivors, s) = filter(&prepare(r.traces()));
        assert_eq!((s.vars_without_pair, s.vars_left), (1, 1));
        assert_eq!(survivors.len(), 1);
        assert_eq!(survivors[0].var, 1);
    }

    const F: u64 = 0xf00;

    /// Main writes `D` and `D + 8`, publishing `F` between them (its release `op`, or none);
    /// the child, started before, acquires `F` (after the release, or before it with `early`),
    /// then reads both. The filter's counts, and the objects prepare leaves out.
    fn published(op: Option<AtomicOp>, early: bool) -> (FilterStats, usize) {
        let mut r = Run::new(2);
        r.fork(0, 1).start(1).w(0, D, 1);
        if early {
            r.acquire(1, F);
        }
        r.access(0, F, 4, AccessKind::AtomicWrite, 2);
        if let Some(op) = op {
            r.release(0, F, op);
        }
        r.w(0, D + 8, 3);
        if !early {
            r.acquire(1, F);
        }
        r.access(1, F, 4, AccessKind::AtomicRead, 4)
            .r(1, D, 5)
            .r(1, D + 8, 6);
        let left_out = prepare_keeping(r.traces(), Keep::Unordered);
        let (_, stats) = filter(&left_out);
        // The filter counts alike whether prepare left the ordered objects out or not.
        assert_eq!(stats, self::stats(&r));
        (stats, left_out.ordered.vars)
    }

    #[test]
    fn a_release_orders_the_accesses_before_it_for_an_acquire_that_reads_it() {
        for op in [AtomicOp::ReleaseStore, AtomicOp::ReleaseRmw] {
            let (s, ordered) = published(Some(op), false);
            // D and F (its store is before its release) are ordered and left out; D + 8, written
            // after the release, is not.
            assert_eq!(ordered, 2, "{op:?}");
            assert_eq!((s.vars_shared, s.vars_without_pair), (3, 1), "{op:?}");
            assert_eq!((s.vars_removed_by_hb, s.vars_left), (1, 1), "{op:?}");
            assert_eq!((s.pairs_removed_by_hb, s.pairs_left), (1, 1), "{op:?}");
        }
    }

    #[test]
    fn an_acquire_before_the_release_or_a_relaxed_store_orders_nothing() {
        for (op, early) in [(Some(AtomicOp::ReleaseStore), true), (None, false)] {
            let (s, ordered) = published(op, early);
            assert_eq!(ordered, 0, "{op:?} {early}");
            assert_eq!(
                (s.pairs_removed_by_hb, s.pairs_left),
                (0, 2),
                "{op:?} {early}"
            );
        }
    }

    #[test]
    fn a_release_store_heads_a_new_release_sequence_and_a_read_modify_write_goes_on() {
        // Main publishes D; thread 2 then stores (or adds to) F with release; thread 1 acquires.
        for (op, ordered) in [(AtomicOp::ReleaseRmw, 1), (AtomicOp::ReleaseStore, 0)] {
            let mut r = Run::new(3);
            r.fork(0, 1).fork(0, 2).start(1).start(2).w(0, D, 1);
            r.release(0, F, AtomicOp::ReleaseStore)
                .release(2, F, op)
                .acquire(1, F)
                .r(1, D, 2);
            let s = stats(&r);
            assert_eq!(
                (s.pairs_removed_by_hb, s.pairs_left),
                (ordered, 1 - ordered),
                "{op:?}"
            );
        }
    }

    #[test]
    fn the_acquires_of_one_location_take_its_clock_and_the_accesses_before_them_do_not() {
        // The child reads D before its acquire too: that read stays unordered.
        let mut r = Run::new(2);
        r.fork(0, 1)
            .start(1)
            .w(0, D, 1)
            .release(0, F, AtomicOp::ReleaseStore);
        r.r(1, D, 2).acquire(1, F).r(1, D, 3);
        let s = stats(&r);
        assert_eq!(
            (s.pairs_total, s.pairs_removed_by_hb, s.pairs_left),
            (2, 1, 1)
        );
    }

    /// The counts by enumerating every pair, as the definition says.
    fn naive(program: &Program) -> (FilterStats, Vec<Vec<(At, At)>>) {
        let model = &program.model;
        let clocks = segment_clocks(model, &program.atomics);
        let mut stats = FilterStats {
            vars_shared: program.vars.len(),
            ..FilterStats::default()
        };
        let mut all = Vec::new();
        for var in 0..program.vars.len() {
            // (at, segment, kind, locks held)
            let mut accs = Vec::new();
            for (t, thread) in model.threads.iter().enumerate() {
                let (mut segment, mut held) = (0, Vec::new());
                for (index, e) in thread.events.iter().enumerate() {
                    segment += program
                        .atomics
                        .of_thread(t)
                        .iter()
                        .filter(|p| p.model_index as usize == index)
                        .count() as u32;
                    match *e {
                        ModelEvent::Access { var: v, kind, .. } if v as VarId == var => {
                            accs.push((At { thread: t, index }, segment, kind, held.clone()));
                        }
                        ModelEvent::Access { .. } => {}
                        ModelEvent::Sync { op, .. } => {
                            segment += 1;
                            update_held(&mut held, op.get());
                        }
                    }
                }
            }
            let (mut total, mut after_hb, mut pairs) = (0, 0, Vec::new());
            for (i, x) in accs.iter().enumerate() {
                for y in &accs[i + 1..] {
                    if x.0.thread == y.0.thread || !conflict(class(x.2), class(y.2)) {
                        continue;
                    }
                    total += 1;
                    let cx = clocks.at(x.0.thread, x.1);
                    let cy = clocks.at(y.0.thread, y.1);
                    let (sx, sy) = (clocks.slot(x.0.thread), clocks.slot(y.0.thread));
                    if cx[sx] <= cy[sx] || cy[sy] <= cx[sy] {
                        continue;
                    }
                    after_hb += 1;
                    if disjoint(&x.3, &y.3) {
                        pairs.push((x.0, y.0));
                    }
                }
            }
            let left = pairs.len() as u64;
            stats.pairs_total += total;
            stats.pairs_removed_by_hb += total - after_hb;
            stats.pairs_removed_by_lockset += after_hb - left;
            stats.pairs_left += left;
            match (total, after_hb, left) {
                (0, _, _) => stats.vars_without_pair += 1,
                (_, 0, _) => stats.vars_removed_by_hb += 1,
                (_, _, 0) => stats.vars_removed_by_lockset += 1,
                _ => stats.vars_left += 1,
            }
            pairs.sort_unstable();
            all.push(pairs);
        }
        (stats, all)
    }

    #[test]
    fn range_counting_equals_enumerating_every_pair() {
        check_random_runs(0x0123_4567_89ab_cdef, 500, |run| {
            let program = prepare(run.traces());
            let (survivors, stats) = filter(&program);
            let (expected, pairs) = naive(&program);
            prop_assert_eq!(&stats, &expected, "{:#?}", run.traces());
            for s in &survivors {
                prop_assert_eq!(&s.pairs, &pairs[s.var], "{:#?}", run.traces());
                prop_assert!(!s.truncated);
            }
            Ok(())
        });
    }
}
