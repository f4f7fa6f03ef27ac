//! Atomicity violations: the minimal serializability violations some order of the run allows,
//! after Farzan, Madhusudan and Sorrentino (CAV 2009), with a schedule that reaches each.
//!
//! Takes the [`Program`] (its model holds each thread's accesses to shared objects, its sync
//! operations and its `tx_begin`/`tx_end` markers); gives [`Prediction`]s, one per distinct
//! (transaction site, e1 site, f site, e2 site, pattern): accesses e1 and e2 of one transaction
//! of thread T to one object, and an access f of another thread T' that conflicts with both, in an
//! order e1 f e2 the sync semantics allow; with [`Counts`] of what was found and dropped.
//!
//! - Phase I, one pass over each thread: the lockset and acquisition history (per held lock, the
//!   locks taken since; Kahlon et al.) at every point a thread can be stopped, interned as a
//!   [`Key`]. Per thread and object, the witnesses of f (`R`, `W`: per key and site, the first
//!   read or write) and of e (`WW`, `AA`: per key and pair of sites, the first point between two
//!   writes, or two accesses, of one transaction). A thread stops only at a sync operation, so e
//!   is a point before one of the sync operations between e1 and e2 but the first (which must
//!   have run for e1 to be done), and e1 and e2 lie in different segments. Memory grows with the
//!   distinct sites and keys, not with the run.
//! - Phase II, per object and pair of threads: `WW` against `R` (write–read–write) and `AA`
//!   against `W` (read–write–read, read–write–write, write–write–read, write–write–write), a pair
//!   of keys at a time: disjoint locksets and compatible acquisition histories, each pair of keys
//!   decided once (the index the paper names as missing from its own tool).
//! - The paper's model knows only locks. Each prediction is then driven through the model's full
//!   sync semantics ([`State`]: joins, condition variables, barriers, semaphores too): T runs past
//!   the sync operation after e1, then T' from before f through the sync operation after it, then
//!   T through the one before e2, every other thread in the observed order. A prediction no such
//!   schedule reaches is dropped and counted, never reported.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ilgen_trace::{AccessKind, SiteId, SyncOp, PENDING};
use serde::{Deserialize, Serialize};

use crate::finding::Schedule;
use crate::model::{At, Model, ModelEvent, ModelOp, VarId};
use crate::prepare::Program;
use crate::state::State;

/// The order of the three accesses e1 f e2, by what each does.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    ReadWriteRead,
    ReadWriteWrite,
    WriteReadWrite,
    WriteWriteRead,
    WriteWriteWrite,
}

impl Pattern {
    fn of(e1: AccessKind, f: AccessKind, e2: AccessKind) -> Option<Pattern> {
        match (e1.is_write(), f.is_write(), e2.is_write()) {
            (false, true, false) => Some(Pattern::ReadWriteRead),
            (false, true, true) => Some(Pattern::ReadWriteWrite),
            (true, false, true) => Some(Pattern::WriteReadWrite),
            (true, true, false) => Some(Pattern::WriteWriteRead),
            (true, true, true) => Some(Pattern::WriteWriteWrite),
            _ => None,
        }
    }

    /// `read-write-write`, as reports name it.
    pub fn text(self) -> &'static str {
        match self {
            Pattern::ReadWriteRead => "read-write-read",
            Pattern::ReadWriteWrite => "read-write-write",
            Pattern::WriteReadWrite => "write-read-write",
            Pattern::WriteWriteRead => "write-write-read",
            Pattern::WriteWriteWrite => "write-write-write",
        }
    }

    /// What goes wrong, in a few words.
    pub fn meaning(self) -> &'static str {
        match self {
            Pattern::ReadWriteRead => "the block reads two different values",
            Pattern::ReadWriteWrite => "lost update: the block writes back a stale value",
            Pattern::WriteReadWrite => "the other thread reads the block's intermediate value",
            Pattern::WriteWriteRead => "the block reads the other thread's value, not its own",
            Pattern::WriteWriteWrite => "the other thread's write is lost",
        }
    }
}

/// One predicted violation, in positions of the program's model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prediction {
    pub var: VarId,
    /// The `tx_begin` of the transaction.
    pub begin: At,
    pub e1: At,
    pub f: At,
    pub e2: At,
    pub pattern: Pattern,
    pub schedule: Schedule,
}

/// Where the predictions went.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub transactions: usize,
    /// Distinct violations with a schedule.
    pub predicted: usize,
    /// Distinct violations the locks allow but the other sync operations do not (no schedule
    /// reaches e1 f e2 in the model).
    pub no_schedule: usize,
    /// Distinct violations whose f no sync operation brackets (first or last segment of its
    /// thread): replay cannot put it between e1 and e2.
    pub unbracketed: usize,
}

/// A lockset with its acquisition history: per held lock (mutexes, then rwlocks held for
/// writing, numbered after them), the locks taken since it was. Sorted.
type History = Vec<(usize, Vec<usize>)>;

/// An interned [`History`].
type Key = u32;

#[derive(Default)]
struct Keys {
    ids: HashMap<History, Key>,
    all: Vec<History>,
    compatible: HashMap<(Key, Key), bool>,
}

impl Keys {
    fn intern(&mut self, h: &History) -> Key {
        if let Some(&k) = self.ids.get(h) {
            return k;
        }
        let k = self.all.len() as Key;
        self.all.push(h.clone());
        self.ids.insert(h.clone(), k);
        k
    }

    /// Two threads can be stopped at points with these keys at once (Kahlon et al.): no lock held
    /// by both, and no two locks each taken by one thread while it held the other.
    fn compatible(&mut self, a: Key, b: Key) -> bool {
        if let Some(&c) = self.compatible.get(&(a, b)) {
            return c;
        }
        let (ha, hb) = (&self.all[a as usize], &self.all[b as usize]);
        let held = |h: &History, l: usize| h.binary_search_by_key(&l, |e| e.0).ok();
        let disjoint = ha.iter().all(|(l, _)| held(hb, *l).is_none());
        let crossed = ha.iter().any(|(l, after_l)| {
            after_l
                .iter()
                .any(|m| held(hb, *m).is_some_and(|i| hb[i].1.binary_search(l).is_ok()))
        });
        let c = disjoint && !crossed;
        self.compatible.insert((a, b), c);
        c
    }
}

/// The locks a thread holds, as it runs.
#[derive(Default)]
struct Locks {
    /// Held locks with their recursion count and the locks taken since.
    held: BTreeMap<usize, (u32, BTreeSet<usize>)>,
}

impl Locks {
    fn acquire(&mut self, l: usize) {
        if let Some((count, _)) = self.held.get_mut(&l) {
            // A recursive acquisition changes nothing (as the paper's tool treats Java's).
            *count += 1;
            return;
        }
        for (_, after) in self.held.values_mut() {
            after.insert(l);
        }
        self.held.insert(l, (1, BTreeSet::new()));
    }

    fn release(&mut self, l: usize) {
        if let Some((count, _)) = self.held.get_mut(&l) {
            *count -= 1;
            if *count == 0 {
                self.held.remove(&l);
            }
        }
    }

    fn history(&self) -> History {
        self.held
            .iter()
            .map(|(&l, (_, after))| (l, after.iter().copied().collect()))
            .collect()
    }

    fn apply(&mut self, model: &Model, op: ModelOp) {
        let rw = |r: usize| model.objects.mutexes.len() + r;
        match op {
            ModelOp::Lock { mutex } | ModelOp::WaitReturn { mutex, .. } => self.acquire(mutex),
            ModelOp::Unlock { mutex } => self.release(mutex),
            // A wait gives its mutex up whatever the recursion count.
            ModelOp::WaitRelease { mutex } => {
                self.held.remove(&mutex);
            }
            ModelOp::WriteLock { rw: r } => self.acquire(rw(r)),
            ModelOp::RwUnlock { rw: r } => self.release(rw(r)),
            _ => {}
        }
    }
}

/// An access of the current transaction that may be an e1, with the keys of the points since
/// at which its thread can be stopped.
struct Open {
    at: At,
    kind: AccessKind,
    site: SiteId,
    /// The first sync operation after it has run.
    passed_first: bool,
    /// Key → the first sync operation before which the thread stops with that key.
    stops: BTreeMap<Key, usize>,
}

/// A witness e: the thread stopped before `stop` (with the key it is filed under), between `e1`
/// and `e2`.
#[derive(Clone, Copy)]
struct Between {
    stop: usize,
    begin: At,
    e1: At,
    e2: At,
    kinds: (AccessKind, AccessKind),
}

/// A witness f: an access made with the key it is filed under.
#[derive(Clone, Copy)]
struct Access {
    at: At,
    kind: AccessKind,
}

/// Phase I's witnesses of one thread and object.
#[derive(Default)]
struct Witnesses {
    /// Per (key, site, writes): the first access.
    f: BTreeMap<(Key, SiteId, bool), Access>,
    /// Per (key, e1 site, e2 site, kinds): the first e between them.
    e: BTreeMap<(Key, SiteId, SiteId, bool, bool), Between>,
}

/// Phase I over thread `t`: its witnesses per object; counts its transactions.
fn phase_one(
    model: &Model,
    t: usize,
    keys: &mut Keys,
    transactions: &mut usize,
) -> BTreeMap<VarId, Witnesses> {
    let mut out: BTreeMap<VarId, Witnesses> = BTreeMap::new();
    let mut locks = Locks::default();
    let mut key = keys.intern(&Vec::new());
    let mut begin: Option<At> = None;
    let mut open: BTreeMap<VarId, Vec<Open>> = BTreeMap::new();
    for (index, event) in model.threads[t].events.iter().enumerate() {
        let at = At { thread: t, index };
        match *event {
            ModelEvent::Access { var, kind, site } => {
                let w = out.entry(var).or_default();
                w.f.entry((key, site, kind.is_write()))
                    .or_insert(Access { at, kind });
                let Some(begin) = begin else {
                    continue;
                };
                let pending = open.entry(var).or_default();
                for o in pending.iter() {
                    for (&k, &stop) in &o.stops {
                        let id = (k, o.site, site, o.kind.is_write(), kind.is_write());
                        w.e.entry(id).or_insert(Between {
                            stop,
                            begin,
                            e1: o.at,
                            e2: at,
                            kinds: (o.kind, kind),
                        });
                    }
                }
                // The earliest e1 of a site has every stop a later one has.
                if !pending
                    .iter()
                    .any(|o| o.site == site && o.kind.is_write() == kind.is_write())
                {
                    pending.push(Open {
                        at,
                        kind,
                        site,
                        passed_first: false,
                        stops: BTreeMap::new(),
                    });
                }
            }
            ModelEvent::Sync { op, observed } => {
                match observed.op {
                    SyncOp::TxBegin => {
                        begin = Some(at);
                        *transactions += 1;
                        open.clear();
                    }
                    SyncOp::TxEnd => {
                        begin = None;
                        open.clear();
                    }
                    _ => {}
                }
                if !event.constrains() {
                    continue;
                }
                for o in open.values_mut().flatten() {
                    if o.passed_first {
                        o.stops.entry(key).or_insert(index);
                    }
                    o.passed_first = true;
                }
                locks.apply(model, op);
                key = keys.intern(&locks.history());
            }
        }
    }
    out
}

/// Witnesses in key order, grouped by key.
fn by_key<'a, T>(sorted: impl Iterator<Item = (Key, &'a T)>) -> Vec<(Key, Vec<&'a T>)> {
    let mut out: Vec<(Key, Vec<&'a T>)> = Vec::new();
    for (k, w) in sorted {
        match out.last_mut() {
            Some((last, ws)) if *last == k => ws.push(w),
            _ => out.push((k, vec![w])),
        }
    }
    out
}

/// A violation before its schedule: phase II's output.
struct Candidate {
    var: VarId,
    e: Between,
    f: Access,
    pattern: Pattern,
}

/// Every distinct violation of the run, with a schedule, and the counts.
pub fn predict(program: &Program) -> (Vec<Prediction>, Counts) {
    let model = &program.model;
    let mut keys = Keys::default();
    let mut counts = Counts::default();
    let per_thread: Vec<BTreeMap<VarId, Witnesses>> = (0..model.threads.len())
        .map(|t| phase_one(model, t, &mut keys, &mut counts.transactions))
        .collect();
    // Phase II, keyed by what makes a violation distinct; witnesses are sorted by key, so each
    // pair of keys is decided once and only the witnesses of compatible keys are paired.
    let mut found: BTreeMap<(SiteId, SiteId, SiteId, SiteId, Pattern), Vec<Candidate>> =
        BTreeMap::new();
    for (t, mine) in per_thread.iter().enumerate() {
        for (u, theirs) in per_thread.iter().enumerate() {
            if t == u {
                continue;
            }
            for (&var, w) in mine {
                let Some(other) = theirs.get(&var) else {
                    continue;
                };
                for (ke, es) in by_key(w.e.iter().map(|(id, e)| (id.0, e))) {
                    for (kf, fs) in by_key(other.f.iter().map(|(id, f)| (id.0, f))) {
                        if !keys.compatible(ke, kf) {
                            continue;
                        }
                        for e in &es {
                            for f in &fs {
                                let Some(pattern) = Pattern::of(e.kinds.0, f.kind, e.kinds.1)
                                else {
                                    continue;
                                };
                                let site = |at: At| site_of(model, at);
                                let id =
                                    (site(e.begin), site(e.e1), site(f.at), site(e.e2), pattern);
                                found.entry(id).or_default().push(Candidate {
                                    var,
                                    e: **e,
                                    f: **f,
                                    pattern,
                                });
                            }
                        }
                    }
                }
            }
        }
    }
    // Each distinct violation is reported with the first of its instances a schedule reaches.
    let mut out = Vec::new();
    for instances in found.into_values() {
        let mut dropped = Dropped::Unbracketed;
        let reached = instances.iter().find_map(|c| match schedule(model, c) {
            Ok(schedule) => Some(Prediction {
                var: c.var,
                begin: c.e.begin,
                e1: c.e.e1,
                f: c.f.at,
                e2: c.e.e2,
                pattern: c.pattern,
                schedule,
            }),
            Err(why) => {
                dropped = dropped.max(why);
                None
            }
        });
        match reached {
            Some(p) => out.push(p),
            None if dropped == Dropped::NoSchedule => counts.no_schedule += 1,
            None => counts.unbracketed += 1,
        }
    }
    counts.predicted = out.len();
    (out, counts)
}

/// The site of the event at `at`, access or sync.
fn site_of(model: &Model, at: At) -> SiteId {
    match model.threads[at.thread].events[at.index] {
        ModelEvent::Access { site, .. } => site,
        ModelEvent::Sync { observed, .. } => observed.site,
    }
}

/// Why an instance has no schedule; of a violation's instances, the last in this order counts.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Dropped {
    Unbracketed,
    NoSchedule,
}

/// The sync operations that reach e1, then f, then e2 (see the module doc).
fn schedule(model: &Model, c: &Candidate) -> Result<Schedule, Dropped> {
    let (t, u) = (c.e.e1.thread, c.f.at.thread);
    let constraining =
        |thread: usize, index: usize| model.threads[thread].events[index].constrains();
    // T: the first sync operation after e1, and the last before e2.
    let after_e1 = model
        .next_stop(t, c.e.e1.index)
        .ok_or(Dropped::NoSchedule)?;
    let before_e2 = (0..c.e.e2.index)
        .rev()
        .find(|&i| constraining(t, i))
        .ok_or(Dropped::NoSchedule)?;
    // T': the sync operations around f.
    let before_f = (0..c.f.at.index)
        .rev()
        .find(|&i| constraining(u, i))
        .ok_or(Dropped::Unbracketed)?;
    let after_f = model
        .next_stop(u, c.f.at.index)
        .ok_or(Dropped::Unbracketed)?;
    let all: Vec<usize> = model.threads.iter().map(|th| th.events.len()).collect();
    let mut state = State::initial(model);
    let mut steps = Vec::new();
    let mut limit = all.clone();
    // e1 done, f not begun.
    limit[t] = after_e1 + 1;
    limit[u] = before_f;
    drive(model, &mut state, &mut steps, &limit, t, after_e1 + 1)?;
    // f done, with T stopped at the witness e at the latest.
    limit[t] = c.e.stop;
    limit[u] = after_f + 1;
    drive(model, &mut state, &mut steps, &limit, u, after_f + 1)?;
    // e2 next.
    limit[t] = before_e2 + 1;
    drive(model, &mut state, &mut steps, &limit, t, before_e2 + 1)?;
    Ok(Schedule { prefix: 0, steps })
}

/// Runs threads from `state`, each below its `limit`, always the enabled one whose next sync
/// operation came first in the run, until `thread` has run `target` events.
fn drive(
    model: &Model,
    state: &mut State,
    steps: &mut Vec<At>,
    limit: &[usize],
    thread: usize,
    target: usize,
) -> Result<(), Dropped> {
    while state.pos[thread] < target {
        let mut next: Vec<(u64, usize, usize)> = (0..model.threads.len())
            .filter_map(|t| {
                let q = model.next_stop(t, state.pos[t])?;
                let seq = model.threads[t].events[q].observed()?.seq;
                (q < limit[t]).then_some((if seq == PENDING { u64::MAX } else { seq }, t, q))
            })
            .collect();
        next.sort_unstable();
        let moved = next.into_iter().find_map(|(_, t, q)| {
            let from = state.pos[t];
            state.advance(model, t, q).then_some((t, from, q))
        });
        let Some((t, from, q)) = moved else {
            return Err(Dropped::NoSchedule);
        };
        steps.extend(
            (from..=q)
                .filter(|&index| model.threads[t].events[index].observed().is_some())
                .map(|index| At { thread: t, index }),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ilgen_trace::SyncOp;

    use super::*;
    use crate::prepare::prepare;
    use crate::testkit::Run;

    const M: u64 = 0x100;
    const X: u64 = 0x2000;

    /// One withdraw of thread `t`: the check (read, site 1) and the update (write, site 2) in two
    /// critical sections of one transaction.
    fn withdraw(r: &mut Run, t: u32) {
        r.sync(t, SyncOp::TxBegin)
            .lock(t, M)
            .r(t, X, 1)
            .unlock(t, M);
        r.lock(t, M).w(t, X, 2).unlock(t, M).sync(t, SyncOp::TxEnd);
    }

    fn predictions(r: &Run) -> (Vec<Prediction>, Counts) {
        predict(&prepare(&r.traces()))
    }

    #[test]
    fn serial_withdraws_predict_the_lost_update_with_its_schedule() {
        let mut r = Run::new(3);
        r.fork(0, 1).fork(0, 2).start(1);
        withdraw(&mut r, 1);
        r.end(1).start(2);
        withdraw(&mut r, 2);
        r.end(2).join(0, 1).join(0, 2);
        let (found, counts) = predictions(&r);
        assert_eq!(counts.transactions, 2);
        // Each way round (the testkit gives every sync operation its own site, so the two
        // transactions begin at different sites): T1's first, by its begin's site.
        assert_eq!((counts.predicted, counts.no_schedule), (2, 0));
        let p = &found[0];
        assert_eq!(p.pattern, Pattern::ReadWriteWrite);
        let program = prepare(&r.traces());
        let m = &program.model;
        let tid = |at: At| m.threads[at.thread].tid;
        assert_eq!((tid(p.e1), tid(p.f), tid(p.e2)), (1, 2, 1));
        assert_eq!(
            (site_of(m, p.e1), site_of(m, p.f), site_of(m, p.e2)),
            (1, 2, 2)
        );
        // T1 stops after its check's unlock; T2 runs its whole withdraw; T1 locks for its update.
        let ops: Vec<(u32, SyncOp)> = p
            .schedule
            .steps
            .iter()
            .map(|&at| {
                (
                    tid(at),
                    m.threads[at.thread].events[at.index].observed().unwrap().op,
                )
            })
            .collect();
        let lock = SyncOp::MutexLock { mutex: M };
        let unlock = SyncOp::MutexUnlock { mutex: M };
        assert_eq!(
            ops[2..],
            [
                (1, SyncOp::Start),
                (1, SyncOp::TxBegin),
                (1, lock),
                (1, unlock),
                (2, SyncOp::Start),
                (2, SyncOp::TxBegin),
                (2, lock),
                (2, unlock),
                (2, lock),
                (2, unlock),
                (1, lock),
            ]
        );
    }

    #[test]
    fn a_join_between_the_withdraws_leaves_no_schedule_and_is_counted() {
        // Thread 2 is created only after thread 1 was joined: the locks alone would allow the
        // lost update, the join does not.
        let mut r = Run::new(3);
        r.fork(0, 1).start(1);
        withdraw(&mut r, 1);
        r.end(1).join(0, 1).fork(0, 2).start(2);
        withdraw(&mut r, 2);
        r.end(2).join(0, 2);
        let (found, counts) = predictions(&r);
        assert!(found.is_empty());
        assert_eq!((counts.predicted, counts.no_schedule), (0, 2));
    }

    #[test]
    fn one_critical_section_or_no_transaction_predicts_nothing() {
        let mut one = Run::new(3);
        one.fork(0, 1).fork(0, 2);
        for t in [1, 2] {
            one.start(t)
                .sync(t, SyncOp::TxBegin)
                .lock(t, M)
                .r(t, X, 1)
                .w(t, X, 2);
            one.unlock(t, M).sync(t, SyncOp::TxEnd).end(t);
        }
        assert_eq!(predictions(&one).1.predicted, 0);
        let mut unmarked = Run::new(3);
        unmarked.fork(0, 1).fork(0, 2);
        for t in [1, 2] {
            unmarked.start(t).lock(t, M).r(t, X, 1).unlock(t, M);
            unmarked.lock(t, M).w(t, X, 2).unlock(t, M).end(t);
        }
        let (found, counts) = predictions(&unmarked);
        assert!(found.is_empty());
        assert_eq!(counts.transactions, 0);
    }

    #[test]
    fn crossed_acquisition_histories_are_incompatible() {
        let mut keys = Keys::default();
        // Holds lock 0, took 1 since; holds lock 1, took 0 since: each needs the other's lock.
        let a = keys.intern(&vec![(0, vec![1])]);
        let b = keys.intern(&vec![(1, vec![0])]);
        let c = keys.intern(&vec![(1, vec![])]);
        let both = keys.intern(&vec![(0, vec![])]);
        assert!(!keys.compatible(a, b));
        assert!(keys.compatible(a, c));
        assert!(!keys.compatible(a, both), "lock 0 held by both");
    }
}
