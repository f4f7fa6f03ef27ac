//! Atomicity violations: the minimal serializability violations some order of the run allows,
//! after Farzan, Madhusudan and Sorrentino (CAV 2009), with a schedule that reaches each.
//!
//! Takes the [`Program`] (its model holds each thread's accesses to shared objects, its sync
//! operations and its `tx_begin`/`tx_end` markers), the window size and which transactions to
//! check ([`Transactions`]: by the site of their `tx_begin`, every marked block by default, and
//! under `--atomic GLOB` the chosen blocks and recorded calls, each outermost one of a nest, the
//! thread's own outermost call never); gives [`Prediction`]s,
//! one per distinct (transaction site, e1 site, f site, e2 site, pattern): accesses e1 and e2 of
//! one transaction of thread T to one object, and an access f of another thread T' that conflicts
//! with both, in an order e1 f e2 the sync semantics allow; with [`Counts`] of what was found and
//! dropped.
//!
//! - Phase I, one pass over the run, window by window (a window: the events of each thread up to
//!   its first sync operation whose seq reaches the window's bound; bounds every `window` seqs):
//!   the lockset and acquisition history (per held lock, the locks taken since; Kahlon et al.) at
//!   every point a thread can be stopped, interned as a [`Key`]. Per window, thread and object,
//!   the witnesses of f (`R`, `W`: per key and site, the first read or write) and of e (`WW`,
//!   `AA`: per key, transaction site and pair of sites, the first point between two writes, or two
//!   accesses, of one transaction). A thread stops only at a sync operation, so e is a point
//!   before one of the sync operations between e1 and e2 but the first (which must have run for e1
//!   to be done), and e1 and e2 lie in different segments. Only two windows' witnesses are held
//!   at a time, so memory grows with the distinct sites and keys, not with the run.
//! - Phase II, at the end of each window, per object and pair of threads: `WW` against `R`
//!   (write–read–write) and `AA` against `W` (read–write–read, read–write–write, write–write–read,
//!   write–write–write) of this window and the one before, a pair of keys at a time: disjoint
//!   locksets and compatible acquisition histories, each pair of keys decided once for the whole
//!   run (the index the paper names as missing from its own tool). A violation already reached
//!   is not looked at again, so each window costs the same whatever came before it.
//! - The paper's model knows only locks. Each prediction is then driven through the model's full
//!   sync semantics ([`State`]: joins, condition variables, barriers, semaphores too), from the
//!   state the observed order reaches at the start of the previous window (kept up to date as the
//!   windows go by, so a schedule costs the length of two windows, not of the run): T runs past
//!   the sync operation after e1, then T' from before f through the sync operation after it, then
//!   T through the one before e2, every other thread in the observed order. A prediction no such
//!   schedule reaches is dropped and counted, never reported; so is one whose e and f lie more
//!   than a window apart (as the race analysis's windows, a false negative bounded by the window).
//!   The schedule written out is the observed order before that window, then these steps.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ilgen_trace::{AccessKind, SiteId, SyncOp, PENDING};
use serde::{Deserialize, Serialize};

use crate::finding::Schedule;
use crate::model::{At, Model, ModelEvent, ModelOp, Observed, VarId};
use crate::options::Transactions;
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
    /// Key → the first sync operation before which the thread stops with that key, of those a
    /// schedule from the previous window's start can still stop it before.
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

/// Phase I's witnesses of one thread and object, in one window.
#[derive(Default)]
struct Witnesses {
    /// Per (key, site, writes): the first access.
    f: BTreeMap<(Key, SiteId, bool), Access>,
    /// Per (key, transaction site, e1 site, e2 site, kinds): the first e between them.
    e: BTreeMap<(Key, SiteId, SiteId, SiteId, bool, bool), Between>,
}

/// Per thread, per object: one window's witnesses.
type WindowWitnesses = Vec<BTreeMap<VarId, Witnesses>>;

/// Phase I's walk of one thread, carried from one window to the next.
struct Walk<'a> {
    /// The transactions to check.
    chosen: &'a Transactions,
    /// The recorded calls open on the thread, outermost first: whether the transaction began
    /// with each.
    calls: Vec<bool>,
    /// Whether a marked block is open, and whether the transaction began with it.
    block: Option<bool>,
    /// The next event to walk.
    pos: usize,
    /// The seq of the sync event at `pos` the walk stopped before (`None`: the thread is done).
    waiting: Option<u64>,
    locks: Locks,
    key: Key,
    /// The `tx_begin` of the transaction the thread is in, with its site.
    begin: Option<(At, SiteId)>,
    open: BTreeMap<VarId, Vec<Open>>,
}

impl<'a> Walk<'a> {
    fn new(keys: &mut Keys, chosen: &'a Transactions) -> Walk<'a> {
        Walk {
            chosen,
            calls: Vec::new(),
            block: None,
            pos: 0,
            waiting: None,
            locks: Locks::default(),
            key: keys.intern(&Vec::new()),
            begin: None,
            open: BTreeMap::new(),
        }
    }

    /// Walks thread `t` up to its first sync event with a seq of `hi` or more (every event when
    /// `hi` is `u64::MAX`, pending ones too): files its witnesses into `out`, its sync events into
    /// `ops`, and counts its transactions. A thread can be stopped in this window's schedules only
    /// from `from` on, so stop points before it are forgotten.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        model: &Model,
        t: usize,
        hi: u64,
        from: usize,
        keys: &mut Keys,
        transactions: &mut usize,
        out: &mut BTreeMap<VarId, Witnesses>,
        ops: &mut Vec<At>,
    ) {
        for o in self.open.values_mut().flatten() {
            o.stops.retain(|_, stop| *stop >= from);
        }
        let thread = &model.threads[t];
        let events = &thread.events;
        self.waiting = None;
        while self.pos < events.len() {
            let index = self.pos;
            let at = At { thread: t, index };
            match events[index] {
                ModelEvent::Access { var, kind, site } => {
                    self.access(at, var as VarId, kind, site, out)
                }
                ModelEvent::Sync { op, sync } => {
                    let observed = thread.observed.at(sync as usize);
                    if hi != u64::MAX && observed.seq >= hi {
                        self.waiting = Some(observed.seq);
                        return;
                    }
                    ops.push(at);
                    self.sync(model, at, op.get(), observed, keys, transactions);
                }
            }
            self.pos += 1;
        }
    }

    fn access(
        &mut self,
        at: At,
        var: VarId,
        kind: AccessKind,
        site: SiteId,
        out: &mut BTreeMap<VarId, Witnesses>,
    ) {
        let w = out.entry(var).or_default();
        w.f.entry((self.key, site, kind.is_write()))
            .or_insert(Access { at, kind });
        let Some((begin, begin_site)) = self.begin else {
            return;
        };
        let pending = self.open.entry(var).or_default();
        for o in pending.iter() {
            for (&k, &stop) in &o.stops {
                let id = (
                    k,
                    begin_site,
                    o.site,
                    site,
                    o.kind.is_write(),
                    kind.is_write(),
                );
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

    fn sync(
        &mut self,
        model: &Model,
        at: At,
        op: ModelOp,
        recorded: Observed,
        keys: &mut Keys,
        transactions: &mut usize,
    ) {
        let call = self.chosen.calls.contains(&recorded.site);
        match recorded.op {
            SyncOp::TxBegin => {
                let chosen = match &self.chosen.selected {
                    None => !call,
                    // The thread's outermost call is its start routine (or `main`): the calls it
                    // makes are the transactions, as a thread's methods were in the paper.
                    Some(s) => s.contains(&recorded.site) && !(call && self.calls.is_empty()),
                };
                let begins = chosen && self.begin.is_none();
                if begins {
                    self.begin = Some((at, recorded.site));
                    *transactions += 1;
                    self.open.clear();
                }
                if call {
                    self.calls.push(begins);
                } else {
                    self.block = Some(begins);
                }
            }
            SyncOp::TxEnd => {
                let began = if call {
                    self.calls.pop()
                } else {
                    self.block.take()
                };
                if began == Some(true) {
                    self.begin = None;
                    self.open.clear();
                }
            }
            _ => {}
        }
        if !model.threads[at.thread].events[at.index].constrains() {
            return;
        }
        for o in self.open.values_mut().flatten() {
            if o.passed_first {
                o.stops.entry(self.key).or_insert(at.index);
            }
            o.passed_first = true;
        }
        self.locks.apply(model, op);
        self.key = keys.intern(&self.locks.history());
    }
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

/// What makes a violation distinct: the sites of the transaction's begin, e1, f and e2, and the
/// pattern.
type Id = (SiteId, SiteId, SiteId, SiteId, Pattern);

/// Phase II over one window's witnesses: the e witnesses of `es` against the f witnesses of
/// another thread in `fs`, per object; witnesses are sorted by key, so each pair of keys is
/// decided once (then from the cache of [`Keys`]) and only the witnesses of compatible keys are
/// paired. Instances of violations that `reached` already holds are left out.
fn pair(
    model: &Model,
    keys: &mut Keys,
    es: &WindowWitnesses,
    fs: &WindowWitnesses,
    reached: &BTreeMap<Id, (Prediction, Vec<usize>)>,
    found: &mut BTreeMap<Id, Vec<Candidate>>,
) {
    for (t, mine) in es.iter().enumerate() {
        for (u, theirs) in fs.iter().enumerate() {
            if t == u {
                continue;
            }
            for (&var, w) in mine {
                let Some(other) = theirs.get(&var) else {
                    continue;
                };
                let f_keys = by_key(other.f.iter().map(|(id, f)| (id.0, f)));
                for (ke, es) in by_key(w.e.iter().map(|(id, e)| (id.0, e))) {
                    for (kf, fs) in &f_keys {
                        if !keys.compatible(ke, *kf) {
                            continue;
                        }
                        for e in &es {
                            for f in fs {
                                let Some(pattern) = Pattern::of(e.kinds.0, f.kind, e.kinds.1)
                                else {
                                    continue;
                                };
                                let site = |at: At| site_of(model, at);
                                let id =
                                    (site(e.begin), site(e.e1), site(f.at), site(e.e2), pattern);
                                if reached.contains_key(&id) {
                                    continue;
                                }
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
}

/// Every distinct violation of the `chosen` transactions of the run, with a schedule, and the
/// counts; the run is walked in windows of `window` seqs (see the module doc).
pub fn predict(
    program: &Program,
    window: usize,
    chosen: &Transactions,
) -> (Vec<Prediction>, Counts) {
    let model = &program.model;
    let threads = model.threads.len();
    let width = window.max(1) as u64;
    let mut keys = Keys::default();
    let mut counts = Counts::default();
    let mut walks: Vec<Walk> = (0..threads).map(|_| Walk::new(&mut keys, chosen)).collect();
    // The state at the start of the previous window, its sync events and witnesses.
    let mut from = State::initial(model);
    let mut prev_ops: Vec<At> = Vec::new();
    let mut prev: WindowWitnesses = (0..threads).map(|_| BTreeMap::new()).collect();
    let mut reached: BTreeMap<Id, (Prediction, Vec<usize>)> = BTreeMap::new();
    let mut dropped: BTreeMap<Id, Dropped> = BTreeMap::new();
    let mut hi = 0;
    loop {
        let mut cur: WindowWitnesses = (0..threads).map(|_| BTreeMap::new()).collect();
        let mut ops = Vec::new();
        for (t, walk) in walks.iter_mut().enumerate() {
            walk.run(
                model,
                t,
                hi,
                from.pos[t],
                &mut keys,
                &mut counts.transactions,
                &mut cur[t],
                &mut ops,
            );
        }
        // The previous window's witnesses against this one's, both ways, and this one's against
        // each other: every pair of the two windows but those the previous window decided.
        let mut found = BTreeMap::new();
        pair(model, &mut keys, &cur, &prev, &reached, &mut found);
        pair(model, &mut keys, &cur, &cur, &reached, &mut found);
        pair(model, &mut keys, &prev, &cur, &reached, &mut found);
        for (id, instances) in found {
            let mut why = Dropped::Unbracketed;
            let first = instances
                .iter()
                .find_map(|c| match schedule(model, c, &from) {
                    Ok(steps) => Some((c, steps)),
                    Err(w) => {
                        why = why.max(w);
                        None
                    }
                });
            match first {
                Some((c, steps)) => {
                    let p = Prediction {
                        var: c.var,
                        begin: c.e.begin,
                        e1: c.e.e1,
                        f: c.f.at,
                        e2: c.e.e2,
                        pattern: c.pattern,
                        schedule: Schedule::listed(0, steps),
                    };
                    reached.insert(id, (p, from.pos.clone()));
                }
                None => {
                    let d = dropped.entry(id).or_insert(why);
                    *d = (*d).max(why);
                }
            }
        }
        let next = walks.iter().filter_map(|w| w.waiting).min();
        if walks
            .iter()
            .enumerate()
            .all(|(t, w)| w.pos == model.threads[t].events.len())
        {
            break;
        }
        // The previous window is behind every schedule from now on: run it as the run did.
        let seq = |at: &At| model.threads[at.thread].seq_at(at.index);
        prev_ops.sort_unstable_by_key(|at| (seq(at), at.thread, at.index));
        from.run_observed(model, prev_ops);
        prev_ops = ops;
        prev = cur;
        hi = match next {
            Some(seq) if seq != PENDING => (seq / width + 1) * width,
            _ => u64::MAX,
        };
    }
    for (id, why) in dropped {
        match (reached.contains_key(&id), why) {
            (true, _) => {}
            (false, Dropped::NoSchedule) => counts.no_schedule += 1,
            (false, Dropped::Unbracketed) => counts.unbracketed += 1,
        }
    }
    counts.predicted = reached.len();
    (
        with_prefixes(model, reached.into_values().collect()),
        counts,
    )
}

/// Each prediction's schedule, which starts at the beginning of its window (the positions given
/// with it), preceded by the observed order before that window: one sort of the run for all.
fn with_prefixes(model: &Model, reached: Vec<(Prediction, Vec<usize>)>) -> Vec<Prediction> {
    let mut last = vec![0; model.threads.len()];
    for (_, start) in &reached {
        for (l, &s) in last.iter_mut().zip(start) {
            *l = (*l).max(s);
        }
    }
    let order: Vec<At> = model.observed_order(&last).collect();
    reached
        .into_iter()
        .map(|(mut p, start)| {
            let mut steps: Vec<At> = order
                .iter()
                .filter(|at| at.index < start[at.thread])
                .copied()
                .collect();
            let prefix = steps.len();
            steps.append(&mut p.schedule.steps);
            p.schedule = Schedule::listed(prefix, steps);
            p
        })
        .collect()
}

/// The site of the event at `at`, access or sync.
fn site_of(model: &Model, at: At) -> SiteId {
    let thread = &model.threads[at.thread];
    match thread.events[at.index] {
        ModelEvent::Access { site, .. } => site,
        ModelEvent::Sync { sync, .. } => thread.observed.at(sync as usize).site,
    }
}

/// Why an instance has no schedule; of a violation's instances, the last in this order counts.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Dropped {
    Unbracketed,
    NoSchedule,
}

/// The sync operations from state `from` that reach e1, then f, then e2 (see the module doc).
fn schedule(model: &Model, c: &Candidate, from: &State) -> Result<Vec<At>, Dropped> {
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
    // The window's start must leave T before the witness e and T' before f.
    if from.pos[t] > c.e.stop || from.pos[u] > before_f {
        return Err(Dropped::NoSchedule);
    }
    let all: Vec<usize> = model.threads.iter().map(|th| th.events.len()).collect();
    let mut state = from.clone();
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
    Ok(steps)
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
    let mut next: Vec<(u64, usize, usize)> = Vec::with_capacity(model.threads.len());
    while state.pos[thread] < target {
        next.clear();
        next.extend((0..model.threads.len()).filter_map(|t| {
            let q = model.next_stop(t, state.pos[t])?;
            let seq = model.threads[t].seq_at(q)?;
            (q < limit[t]).then_some((seq, t, q))
        }));
        next.sort_unstable();
        let moved = next.iter().find_map(|&(_, t, q)| {
            let from = state.pos[t];
            state.advance(model, t, q).then_some((t, from, q))
        });
        let Some((t, from, q)) = moved else {
            return Err(Dropped::NoSchedule);
        };
        steps.extend(
            (from..=q)
                .filter(|&index| model.threads[t].events[index].is_sync())
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
        predict(&prepare(r.traces()), 10_000, &Transactions::default())
    }

    /// Two threads withdrawing one after the other, the second after the first ended.
    fn serial_withdraws() -> Run {
        let mut r = Run::new(3);
        r.fork(0, 1).fork(0, 2).start(1);
        withdraw(&mut r, 1);
        r.end(1).start(2);
        withdraw(&mut r, 2);
        r.end(2).join(0, 1).join(0, 2);
        r
    }

    #[test]
    fn serial_withdraws_predict_the_lost_update_with_its_schedule() {
        let r = serial_withdraws();
        let (found, counts) = predictions(&r);
        assert_eq!(counts.transactions, 2);
        // Each way round (the testkit gives every sync operation its own site, so the two
        // transactions begin at different sites): T1's first, by its begin's site.
        assert_eq!((counts.predicted, counts.no_schedule), (2, 0));
        let p = &found[0];
        assert_eq!(p.pattern, Pattern::ReadWriteWrite);
        let program = prepare(r.traces());
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
                    m.threads[at.thread].observed_at(at.index).unwrap().op,
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
    fn windows_find_what_the_whole_run_finds_after_the_observed_order_before_them() {
        // Main works alone first, so the withdraws lie windows into the run; then two threads
        // withdraw in turns.
        let mut r = Run::new(3);
        for _ in 0..20 {
            r.lock(0, M + 8).unlock(0, M + 8);
        }
        r.fork(0, 1).fork(0, 2).start(1).start(2);
        for _ in 0..5 {
            withdraw(&mut r, 1);
            withdraw(&mut r, 2);
        }
        r.end(1).end(2).join(0, 1).join(0, 2);
        let program = prepare(r.traces());
        let m = &program.model;
        let all = Transactions::default();
        let (whole, whole_counts) = predict(&program, 10_000, &all);
        let (windowed, counts) = predict(&program, 16, &all);
        // Each sync operation of the testkit has its own site, so each withdraw is a transaction
        // site of its own, and so each pair of withdraws of the two threads a violation.
        assert_eq!(counts.transactions, 10);
        assert!(counts.predicted >= 2, "{counts:?}");
        assert_eq!(counts, whole_counts);
        let sites = |p: &Prediction| {
            let site = |at| site_of(m, at);
            (site(p.begin), site(p.e1), site(p.f), site(p.e2), p.pattern)
        };
        assert_eq!(
            windowed.iter().map(sites).collect::<Vec<_>>(),
            whole.iter().map(sites).collect::<Vec<_>>()
        );
        for p in &windowed {
            let s = &p.schedule;
            // The prefix is the observed order before the window: main's lock operations.
            assert!(s.prefix > 0, "{s:?}");
            assert_eq!(
                s.steps[..s.prefix],
                m.observed_order(&{
                    let mut upto = vec![0; m.threads.len()];
                    for at in &s.steps[..s.prefix] {
                        upto[at.thread] = at.index + 1;
                    }
                    upto
                })
                .collect::<Vec<_>>()
            );
            // The whole schedule runs in the model, and leaves T before e2 with e1 and f done.
            let mut state = State::initial(m);
            for &at in &s.steps {
                if m.threads[at.thread].events[at.index].constrains() {
                    assert!(state.advance(m, at.thread, at.index), "{at:?} in {s:?}");
                }
            }
            assert!(state.pos[p.e1.thread] > p.e1.index && state.pos[p.f.thread] > p.f.index);
            assert!(state.pos[p.e2.thread] <= p.e2.index);
        }
    }

    #[test]
    fn only_the_selected_transactions_are_checked() {
        let r = serial_withdraws();
        let program = prepare(r.traces());
        let m = &program.model;
        let t1 = m.threads.iter().position(|t| t.tid == 1).unwrap();
        let begin = m.threads[t1]
            .observed
            .iter()
            .find(|o| o.op == SyncOp::TxBegin)
            .unwrap()
            .site;
        let only = |sites: BTreeSet<SiteId>| Transactions {
            calls: BTreeSet::new(),
            selected: Some(sites),
        };
        let (found, counts) = predict(&program, 10_000, &only(BTreeSet::from([begin])));
        assert_eq!((counts.transactions, counts.predicted), (1, 1));
        assert_eq!(
            (found[0].begin.thread, site_of(m, found[0].begin)),
            (t1, begin)
        );
        let (found, counts) = predict(&program, 10_000, &only(BTreeSet::new()));
        assert!(found.is_empty());
        assert_eq!(counts.transactions, 0);
    }

    #[test]
    fn recorded_calls_are_transactions_when_chosen_the_start_routine_never() {
        // Each thread's start routine (a recorded call) calls withdraw (another), recorded
        // serially, as `calls=1` records them.
        let mut r = Run::new(3);
        r.fork(0, 1).fork(0, 2);
        for t in [1, 2] {
            r.start(t).sync(t, SyncOp::TxBegin);
            withdraw(&mut r, t);
            r.sync(t, SyncOp::TxEnd).end(t);
        }
        r.join(0, 1).join(0, 2);
        let program = prepare(r.traces());
        let m = &program.model;
        let markers = |ops: &[SyncOp]| -> Vec<Vec<SiteId>> {
            m.threads
                .iter()
                .map(|t| {
                    let sites = t.observed.iter().filter(|o| ops.contains(&o.op));
                    sites.map(|o| o.site).collect()
                })
                .collect()
        };
        let calls: BTreeSet<SiteId> = markers(&[SyncOp::TxBegin, SyncOp::TxEnd])
            .into_iter()
            .flatten()
            .collect();
        let begins = markers(&[SyncOp::TxBegin]);
        let chose = |selected: Option<BTreeSet<SiteId>>| {
            let chosen = Transactions {
                calls: calls.clone(),
                selected,
            };
            predict(&program, 10_000, &chosen)
        };
        // `--atomic '*'`: every call, of which the withdraws are the transactions.
        let (found, counts) = chose(Some(begins.iter().flatten().copied().collect()));
        assert_eq!((counts.transactions, counts.predicted), (2, 2));
        assert!(found.iter().all(|p| p.pattern == Pattern::ReadWriteWrite));
        let withdraw_begins: BTreeSet<SiteId> =
            begins.iter().filter_map(|b| b.get(1)).copied().collect();
        assert!(found
            .iter()
            .all(|p| withdraw_begins.contains(&site_of(m, p.begin))));
        // Without GLOBs calls are no transactions; the start routines alone never are.
        assert_eq!(chose(None).1.transactions, 0);
        let starts = begins.iter().filter_map(|b| b.first()).copied().collect();
        assert_eq!(chose(Some(starts)).1.transactions, 0);
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
