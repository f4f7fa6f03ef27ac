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
//! signals nobody waits for, the markers that order nothing, nothing pending at the end, atomic
//! operations (their acquire and release records; relaxed ones are accesses only); every lock
//! released before a join and by the end of its thread, and the lock-order graph acyclic.
//! That is [`crate::solve::lockgraph::cannot_deadlock`]'s condition, so the deadlock search
//! finds nothing either; and the weakened happens-before of such a run has only fork → start,
//! end → join and release → acquire edges. (A C++ program's shared pointers and its own
//! `std::atomic`s release and acquire: without them in the screen, every C++ run built the
//! model of the whole run, 80-160 bytes an event.)
//!
//! Exact, not approximate: the filter pairs the model's records (one per object and segment, of
//! the segment's dominant kind) by their vector clock and lockset. A thread's clock changes its
//! other components only at a start, a join or an acquire, and others learn its own component
//! only at a fork, its end or a release; between two such events of a thread (an interval) every
//! record is ordered alike against every record of another thread. Each atomic record is an
//! interval's end, as it ends a stretch of the filter's clocks; so is each of a thread's fork,
//! start, join and end events. So per object the records of one thread,
//! interval and lockset are one group, counted by kind, and the pairs of two groups are the
//! product of their counts, ordered, kept apart by a common lock, or left. The walk stops at the
//! first pair left: the model is needed.

use std::collections::BTreeSet;

use ilgen_trace::format::ThreadTrace;
use ilgen_trace::{AccessKind, AtomicOp, Event, SyncOp, ThreadId};
use rustc_hash::FxHashMap;

use crate::atomics::{self, join, key, Atomics};
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

/// The sync facts of a plain run: each mutex's dense id, and per thread the class of each
/// interval and the vector clock of the weakened happens-before in each class (see [`classes`]).
pub struct Plain {
    mutexes: FxHashMap<u64, u32>,
    classes: Vec<Vec<u32>>,
    clocks: Vec<Vec<Vec<u32>>>,
    sync_events: usize,
}

/// Most clock components the intervals of a run may take (64 MiB): a run with more acquire and
/// release records than that pays for goes to the model, as before.
const CLOCK_WORDS: usize = 1 << 24;

/// An event that ends an interval and may order it after another thread's.
#[derive(Clone, Copy)]
enum Edge {
    /// Start, end, fork or join.
    Thread(SyncOp),
    /// An acquire or release record of atomic location `location`.
    Atomic { location: u32, op: AtomicOp },
}

/// The sync facts of `traces`, `None` if the run is not plain (see the module doc).
pub fn plain(traces: &[ThreadTrace], lifetimes: &Lifetimes) -> Option<Plain> {
    let index_of: FxHashMap<ThreadId, usize> = traces
        .iter()
        .enumerate()
        .map(|(i, t)| (t.header.tid, i))
        .collect();
    let atomics = Atomics::of(traces, lifetimes);
    let mut mutexes: FxHashMap<u64, u32> = FxHashMap::default();
    let mut graph: BTreeSet<(usize, usize)> = BTreeSet::new();
    // The events that end intervals: (key in the run's order, thread, index among its sync
    // events and atomic records, what it does).
    let mut events: Vec<(u64, usize, u32, Edge)> = Vec::new();
    let mut sync_events = 0;
    for (t, trace) in traces.iter().enumerate() {
        let mut held = Held::default();
        let mut index = 0u32;
        let mut points = atomics.of_thread(t).iter();
        for (_, e) in trace.events.marks() {
            let s = match e {
                Event::Sync(s) => s,
                Event::Atomic(_) => {
                    let p = points.next()?;
                    let (location, op) = (p.location, p.op);
                    events.push((p.key, t, index, Edge::Atomic { location, op }));
                    index += 1;
                    continue;
                }
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
                    events.push((key(s.seq, None), t, index, Edge::Thread(s.op)));
                }
                Step::Other => {}
            }
            sync_events += 1;
            index += 1;
        }
        if !held.0.is_empty() {
            return None;
        }
    }
    if (events.len() + traces.len()).saturating_mul(traces.len()) > CLOCK_WORDS {
        return None;
    }
    if !acyclic(&graph) {
        return None;
    }
    let (classes, clocks) = classes(interval_clocks(
        traces.len(),
        &index_of,
        atomics.locations,
        events,
    ));
    Some(Plain {
        mutexes,
        classes,
        clocks,
        sync_events,
    })
}

/// Per thread, its intervals numbered by class, and each class's clock: two consecutive
/// intervals of a thread are of one class when their clocks differ in the thread's own component
/// only and no other thread's clock ever holds a value of it that tells them apart (a release
/// nobody acquired, an acquire that brought nothing new). Every record of one class is then
/// ordered alike against every record of another thread, as within one interval: a run of
/// reference counting has an interval per count, and grouping by interval would give an object
/// its threads' accesses between two counts as a group each.
fn classes(clocks: Vec<Vec<Vec<u32>>>) -> (Vec<Vec<u32>>, Vec<Vec<Vec<u32>>>) {
    let n = clocks.len();
    // Per thread, the values of its component that other threads' clocks hold.
    let mut seen: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (b, own) in clocks.iter().enumerate() {
        for c in own {
            for (a, &v) in c.iter().enumerate().filter(|&(a, _)| a != b) {
                seen[a].push(v);
            }
        }
    }
    let mut classes = Vec::with_capacity(n);
    let mut kept = Vec::with_capacity(n);
    for (a, (own, mut seen)) in clocks.into_iter().zip(seen).enumerate() {
        seen.sort_unstable();
        seen.dedup();
        let mut class = Vec::with_capacity(own.len());
        let mut firsts: Vec<Vec<u32>> = Vec::new();
        for c in own {
            let same = firsts.last().is_some_and(|first| {
                let told = seen.partition_point(|&v| v < first[a]);
                seen.get(told).is_none_or(|&v| v >= c[a])
                    && first
                        .iter()
                        .zip(&c)
                        .enumerate()
                        .all(|(b, (x, y))| b == a || x == y)
            });
            if !same {
                firsts.push(c);
            }
            class.push(firsts.len() as u32 - 1);
        }
        classes.push(class);
        kept.push(firsts);
    }
    (classes, kept)
}

/// Per thread, the clock of each interval: what [`crate::ordered::segment_clocks`] gives its
/// first segment, from the fork, start, end, join and atomic `events` alone (a thread's own
/// component is its segment number plus one, and the other edges of that happens-before need
/// waits or barriers, which a plain run has none of). Atomic locations carry clocks as there
/// ([`atomics::apply`]).
fn interval_clocks(
    n: usize,
    index_of: &FxHashMap<ThreadId, usize>,
    locations: usize,
    mut events: Vec<(u64, usize, u32, Edge)>,
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
    let mut located: Vec<Option<Vec<u32>>> = vec![None; locations];
    for (_, t, index, edge) in events {
        current[t][t] = index + 1;
        match edge {
            Edge::Thread(op) => {
                let from = match op {
                    SyncOp::Start => forked[t].as_ref(),
                    SyncOp::Join { child } => index_of.get(&child).and_then(|&c| ended[c].as_ref()),
                    _ => None,
                };
                if let Some(from) = from {
                    join(&mut current[t], from);
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
            }
            Edge::Atomic { location, op } => {
                atomics::apply(op, &mut located[location as usize], &mut current[t])
            }
        }
        current[t][t] = index + 2;
        clocks[t].push(current[t].clone());
    }
    clocks
}

/// The records of one thread, interval class and lockset on one object, by kind (`kind as usize`;
/// fewer than the walk's segments, which are numbered in a `u32`), the object's group made
/// before it ([`NO_GROUP`] for its first) and, once it has a write, the object's group that had
/// its first write before.
#[derive(Clone, Copy)]
struct Group {
    thread: u32,
    class: u32,
    lockset: u32,
    counts: [u32; 4],
    next: u32,
    next_writer: u32,
}

impl Group {
    fn writes(&self) -> bool {
        (0..4).any(|k| self.counts[k] > 0 && KINDS[k].is_write())
    }
}

const NO_GROUP: u32 = u32::MAX;

/// In [`Records::common`]: no group yet.
const UNSET: u32 = u32::MAX;

/// Every object's groups, 36 bytes each, in chunks that never move: most objects have a group or
/// two, and a vector per object cost 24 bytes and an allocation of four groups.
#[derive(Default)]
struct Groups {
    chunks: Vec<Vec<Group>>,
    len: u32,
}

impl Groups {
    const CHUNK: usize = 1 << 16;

    fn push(&mut self, group: Group) -> u32 {
        if self.len as usize % Self::CHUNK == 0 {
            self.chunks.push(Vec::with_capacity(Self::CHUNK));
        }
        self.chunks.last_mut().expect("a chunk").push(group);
        self.len += 1;
        self.len - 1
    }

    fn get(&self, at: u32) -> &Group {
        &self.chunks[at as usize / Self::CHUNK][at as usize % Self::CHUNK]
    }

    fn get_mut(&mut self, at: u32) -> &mut Group {
        &mut self.chunks[at as usize / Self::CHUNK][at as usize % Self::CHUNK]
    }

    /// The groups from `head` on along `link`, the newest first.
    fn from(&self, head: u32, link: fn(&Group) -> u32) -> impl Iterator<Item = (u32, &Group)> {
        std::iter::successors(Some(head).filter(|&h| h != NO_GROUP), move |&at| {
            Some(link(self.get(at))).filter(|&n| n != NO_GROUP)
        })
        .map(|at| (at, self.get(at)))
    }
}

/// An object's record of the current segment, which may still grow.
#[derive(Clone, Copy, Default)]
struct Open {
    segment: u32,
    kind: u8,
    thread: u32,
    class: u32,
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
    /// Per object, its newest group, and its group that had the latest first write.
    heads: Vec<u32>,
    writers: Vec<u32>,
    /// Per object, the lockset every one of its groups holds ([`UNSET`] before its first): while
    /// it is not empty, no pair of the object can be left, and a new group needs no pairing.
    common: Vec<u32>,
    /// The intersections of two locksets met so far.
    meets: FxHashMap<(u32, u32), u32>,
    /// Per object, whether a plain access has come: until then its groups are of atomic
    /// operations, which pair with no other (an atomic index that threads take turns on).
    plain_access: Vec<bool>,
    groups: Groups,
    kept: usize,
}

/// The run needs the model: a race pair is left, or an object has more than [`GROUPS`] groups
/// that must be paired (each new one with those there, so the screen's time would grow with their
/// square; an object that threads acquiring each other's releases take turns on has a group per
/// turn): those of an object with a plain access and no lock common to all its accesses.
struct Needed;

/// Most groups an object may have.
const GROUPS: usize = 1024;

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

    /// Counts a record of `kind` into `group` of `object`, which it gives its first write.
    fn count(&mut self, object: usize, group: u32, kind: usize) {
        let first_write = KINDS[kind].is_write() && !self.groups.get(group).writes();
        let g = self.groups.get_mut(group);
        g.counts[kind] += 1;
        if first_write {
            g.next_writer = self.writers[object];
            self.writers[object] = group;
        }
    }

    /// The lockset both `p` and `q` hold.
    fn meet(&mut self, p: u32, q: u32) -> u32 {
        let key = (p.min(q), p.max(q));
        if let Some(&m) = self.meets.get(&key) {
            return m;
        }
        let q = &self.locksets[q as usize];
        let set: Vec<u32> = self.locksets[p as usize]
            .iter()
            .copied()
            .filter(|m| q.binary_search(m).is_ok())
            .collect();
        let fresh = self.locksets.len() as u32;
        let m = *self.ids.entry(set.clone()).or_insert_with(|| {
            self.locksets.push(set);
            fresh
        });
        self.meets.insert(key, m);
        m
    }

    fn unordered(&self, x: &Group, y: &Group) -> bool {
        let (a, b) = (x.thread as usize, y.thread as usize);
        let cx = &self.plain.clocks[a][x.class as usize];
        let cy = &self.plain.clocks[b][y.class as usize];
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
    fn add(
        &mut self,
        object: usize,
        segment: u32,
        kind: AccessKind,
        at: Open,
    ) -> Result<(), Needed> {
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
    fn close(&mut self, object: usize) -> Result<(), Needed> {
        let open = self.open[object];
        if open.segment == 0 {
            return Ok(());
        }
        self.open[object].segment = 0;
        let found = self
            .groups
            .from(self.heads[object], |g| g.next)
            .take_while(|(_, g)| g.thread == open.thread && g.class == open.class)
            .find(|(_, g)| g.lockset == open.lockset)
            .map(|(at, _)| at);
        let kind = open.kind as usize;
        let group = match found {
            Some(at) if self.groups.get(at).counts[kind] > 0 => {
                self.groups.get_mut(at).counts[kind] += 1;
                return Ok(());
            }
            Some(at) => at,
            None => {
                let at = self.groups.push(Group {
                    thread: open.thread,
                    class: open.class,
                    lockset: open.lockset,
                    counts: [0; 4],
                    next: self.heads[object],
                    next_writer: NO_GROUP,
                });
                self.heads[object] = at;
                at
            }
        };
        let g = *self.groups.get(group);
        let common = match self.common[object] {
            UNSET => g.lockset,
            c => self.meet(c, g.lockset),
        };
        self.common[object] = common;
        let plain = self.plain_access[object] || !KINDS[kind].is_atomic();
        self.plain_access[object] = plain;
        if common != 0 || !plain {
            self.count(object, group, kind);
            return Ok(());
        }
        // A read pairs with writes only: the groups that have one.
        let (head, link): (u32, fn(&Group) -> u32) = match KINDS[kind].is_write() {
            true => (self.heads[object], |g| g.next),
            false => (self.writers[object], |g| g.next_writer),
        };
        let mut count = 0;
        let left = self.groups.from(head, link).any(|(_, h)| {
            count += 1;
            h.thread != g.thread
                && (0..4).any(|k| h.counts[k] > 0 && KINDS[kind].conflicts_with(KINDS[k]))
                && self.unordered(&g, h)
                && self.disjoint(&g, h)
        });
        if left || count > GROUPS {
            return Err(Needed);
        }
        self.count(object, group, kind);
        Ok(())
    }

    /// The conflicting pairs of one object's `groups` (sorted by thread, then class), and how
    /// many of them happens-before leaves unordered. Per two threads a and b, the groups of a
    /// unordered with a group y of b are those after every event of a that y's clock holds and
    /// before y's own clock reaches them: one range of a's classes, so prefix sums of a's counts
    /// give them (an object a thread takes turns on has a group per turn).
    fn pairs(&self, groups: &[Group]) -> (u64, u64) {
        let threads: Vec<&[Group]> = groups.chunk_by(|x, y| x.thread == y.thread).collect();
        let (mut total, mut after_hb) = (0u64, 0u64);
        let mut prefix: Vec<[u64; 4]> = Vec::new();
        for (i, xs) in threads.iter().enumerate() {
            let a = xs[0].thread as usize;
            prefix.clear();
            prefix.push([0; 4]);
            for x in xs.iter() {
                let mut sum = prefix[prefix.len() - 1];
                for (s, &n) in sum.iter_mut().zip(&x.counts) {
                    *s += u64::from(n);
                }
                prefix.push(sum);
            }
            let all = prefix[xs.len()];
            let clock = |x: &Group| &self.plain.clocks[a][x.class as usize];
            for ys in &threads[i + 1..] {
                let b = ys[0].thread as usize;
                for y in ys.iter() {
                    let cy = &self.plain.clocks[b][y.class as usize];
                    let lo = xs.partition_point(|x| clock(x)[a] <= cy[a]);
                    let hi = xs.partition_point(|x| clock(x)[b] < cy[b]).max(lo);
                    for (ky, &ny) in y.counts.iter().enumerate() {
                        for kx in (0..4).filter(|&kx| KINDS[kx].conflicts_with(KINDS[ky])) {
                            total += u64::from(ny) * all[kx];
                            after_hb += u64::from(ny) * (prefix[hi][kx] - prefix[lo][kx]);
                        }
                    }
                }
            }
        }
        (total, after_hb)
    }

    /// The filter's counts of the objects, none with a pair left.
    fn stats(&self) -> FilterStats {
        let mut stats = FilterStats {
            vars_shared: self.heads.len(),
            ..FilterStats::default()
        };
        let mut groups: Vec<Group> = Vec::new();
        for &head in &self.heads {
            groups.clear();
            groups.extend(self.groups.from(head, |g| g.next).map(|(_, g)| *g));
            groups.sort_unstable_by_key(|g| (g.thread, g.class));
            let (total, after_hb) = self.pairs(&groups);
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
        heads: vec![NO_GROUP; objects.len()],
        writers: vec![NO_GROUP; objects.len()],
        common: vec![UNSET; objects.len()],
        meets: FxHashMap::default(),
        plain_access: vec![false; objects.len()],
        groups: Groups::default(),
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
        let mut interval = 0;
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
            let s = match event {
                Event::Sync(s) => s,
                // Like a thread event, it ends an interval; and a segment, as in prepare.
                Event::Atomic(_) => {
                    segment += 1;
                    interval += 1;
                    at.class = plain.classes[t][interval];
                    continue;
                }
                Event::Access(_) | Event::Heap(_) => continue,
            };
            segment += 1;
            let (m, taken) = match step(s.op)? {
                Step::Lock(m) => (plain.mutexes[&m], true),
                Step::Unlock(m) => (plain.mutexes[&m], false),
                Step::Thread => {
                    interval += 1;
                    at.class = plain.classes[t][interval];
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
    use proptest::test_runner::TestCaseError;

    use super::*;
    use crate::prepare::{prepare_keeping, Keep};
    use crate::testkit::{check_random_runs, check_runs_of, options, random_atomic_run, Run};
    use crate::{filter, solve};

    /// The screen of `traces`, or why it gave none: not plain, or the model is needed.
    fn screened(traces: &[ThreadTrace]) -> Result<Clean, &'static str> {
        let lifetimes = Lifetimes::of(traces);
        let plain = plain(traces, &lifetimes).ok_or("not plain")?;
        let objects = Objects::of(traces, &lifetimes);
        screen(traces, &plain, &lifetimes, &objects).ok_or("the model is needed")
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

    /// A cleared run gets the counts of the model, and every plain run in which the model finds
    /// nothing is cleared; counts the cleared runs in `cleared`.
    fn as_the_model(run: &Run, cleared: &Cell<usize>) -> Result<(), TestCaseError> {
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
    }

    #[test]
    fn a_cleared_run_gets_the_counts_of_the_model_and_every_plain_clean_run_is_cleared() {
        let cleared = Cell::new(0);
        check_random_runs(0x5c7e_e41a_0b1e_c7ed, 600, |run| {
            as_the_model(run, &cleared)
        });
        assert!(cleared.get() >= 20, "only {} runs cleared", cleared.get());
    }

    #[test]
    fn runs_with_atomics_are_cleared_as_the_model_orders_them() {
        let cleared = Cell::new(0);
        check_runs_of(random_atomic_run, 0xa70_41c5_c7ee_0001, 600, |run| {
            as_the_model(run, &cleared)
        });
        assert!(cleared.get() >= 100, "only {} runs cleared", cleared.get());
    }

    #[test]
    fn releases_nobody_acquires_leave_one_class_of_intervals() {
        const F: u64 = 0x400;
        let mut r = Run::new(2);
        r.fork(0, 1).start(1);
        for k in 0..100 {
            r.w(1, 0x100, 10 + k).release(1, F, AtomicOp::ReleaseRmw);
        }
        r.end(1).join(0, 1).w(0, 0x100, 5);
        let traces = r.traces();
        let plain = plain(&traces, &Lifetimes::of(&traces)).expect("plain");
        // Before the start, from it to the end (the 100 releases), after the end.
        assert_eq!(plain.classes[1].len(), 103);
        assert_eq!(plain.clocks[1].len(), 3);
        assert_eq!(screened(&traces), Ok(modelled(r.traces()).0));
    }

    /// Two threads take `n` turns writing 0x100, each handing the next turn over through an
    /// atomic flag (release, then the other's acquire), under a lock or not: a group per thread
    /// and turn on 0x100, all ordered.
    fn turns(n: u32, locked: bool) -> Vec<ThreadTrace> {
        const M: u64 = 0x900;
        const FLAG: [u64; 2] = [0x400, 0x408];
        let mut r = Run::new(2);
        r.fork(0, 1).start(1);
        for k in 0..n {
            let (t, other) = (k % 2, 1 - k % 2);
            match locked {
                true => r.lock(t, M).w(t, 0x100, 10 + t).unlock(t, M),
                false => r.w(t, 0x100, 10 + t),
            };
            r.release(t, FLAG[t as usize], AtomicOp::ReleaseStore)
                .acquire(other, FLAG[t as usize]);
        }
        r.end(1).join(0, 1);
        r.traces()
    }

    #[test]
    fn an_object_of_more_groups_than_the_screen_pairs_goes_to_the_model() {
        let few = turns(GROUPS as u32 - 1, false);
        assert_eq!(screened(&few), Ok(modelled(few).0));
        let many = turns(GROUPS as u32 + 2, false);
        assert_eq!(screened(&many), Err("the model is needed"));
        assert!(!modelled(many).1, "the model finds nothing either");
    }

    #[test]
    fn an_object_of_atomic_operations_only_is_not_paired_and_not_capped() {
        let mut r = Run::new(2);
        r.fork(0, 1).start(1);
        for k in 0..4 * GROUPS as u32 {
            let (t, other) = (k % 2, 1 - k % 2);
            r.access(t, 0x400, 8, AccessKind::AtomicWrite, 10 + k)
                .release(t, 0x400, AtomicOp::ReleaseRmw)
                .acquire(other, 0x400);
        }
        r.end(1)
            .join(0, 1)
            .access(0, 0x400, 8, AccessKind::AtomicRead, 5);
        let clean = screened(&r.traces()).expect("cleared");
        assert_eq!(clean, modelled(r.traces()).0);
    }

    #[test]
    fn a_read_is_paired_with_the_writes_only() {
        const FLAG: [u64; 2] = [0x400, 0x408];
        let mut r = Run::new(2);
        r.w(0, 0x100, 1).fork(0, 1).start(1);
        for k in 0..4 * GROUPS as u32 {
            let (t, other) = (k % 2, 1 - k % 2);
            r.r(t, 0x100, 10 + t)
                .release(t, FLAG[t as usize], AtomicOp::ReleaseStore)
                .acquire(other, FLAG[t as usize]);
        }
        r.end(1).join(0, 1);
        let clean = screened(&r.traces()).expect("cleared");
        assert_eq!(clean, modelled(r.traces()).0);
    }

    #[test]
    fn groups_that_hold_a_common_lock_are_not_paired_and_not_capped() {
        let many = turns(4 * GROUPS as u32, true);
        let clean = screened(&many).expect("cleared");
        assert_eq!(clean.filter.pairs_removed_by_hb, clean.filter.pairs_total);
        assert_eq!(clean, modelled(many).0);
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
