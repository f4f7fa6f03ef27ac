//! Prepare: from the per-thread files of one run to the reorder model.
//!
//! Takes every [`ThreadTrace`] of a run and which shared objects to [`Keep`]; gives a [`Program`]:
//! the shared objects kept (byte ranges of one allocation epoch that two or more threads touched,
//! at least one of them writing, split where any access begins or ends; see [`crate::objects`]
//! and [`crate::lifetime`]), with the counts of those left out ([`Ordered`]: happens-before orders
//! them wholly, [`crate::ordered`]), and a [`Model`] holding, per thread, its accesses to the
//! objects kept (one per object and segment, a segment also ending at an atomic operation's
//! acquire or release, a free being a write over its whole block at the free's site) and every
//! sync operation resolved to its model semantics:
//! - condition variables: each signal or broadcast is its own instance; a wait that returned is
//!   matched to the signal that released it (seq order); a wait loop left without any wait is
//!   ordered after the earliest earlier signal no wait or other such exit took (a signal that
//!   woke nobody stands for one item made available), or after an earlier broadcast, which can
//!   serve any number of exits (see [`match_conditions`]);
//! - barriers: the n-th use of a barrier object is its own instance;
//! - semaphores: the initial count the run recorded (`sem_init`, `sem_open`), or, for one
//!   initialised outside instrumented code, the least count the observed order needs; a
//!   `sem_destroy` ends one, and the next use of its address is another;
//! - streams between threads (pipes, FIFOs, stream sockets): a semaphore whose units are bytes,
//!   or, for one that carries a single byte as a lock token, a mutex (see [`semaphores`]);
//! - threads: fork → start and end → join by the thread tree;
//! - a pending operation (the thread was blocked in it when the run ended) is the thread's last
//!   attempt; one followed by other operations was abandoned;
//! - a failed try operation can happen only while its object is busy ([`ModelOp::TryFail`]),
//!   unless its own thread held the lock or the observed order does not show the object busy;
//! - the exit that is the run's last completed step ends the process ([`ModelOp::Exit`]);
//! - operations the model cannot give meaning to become [`ModelOp::Nop`] (see there).
//!
//! The sync operations are resolved first, from the threads' marks ([`skeleton`]: the model
//! without accesses, whose clocks [`crate::ordered`] needs); then the accesses are walked, each
//! walk decoding the records again (objects, the happens-before walk, the model), so that no
//! decoded trace is ever held whole.
//!
//! Never fails: a trace the runtime cut short or that comes from partly uninstrumented code is
//! modelled as far as it goes.

use std::collections::{BTreeSet, HashMap};

use ilgen_trace::format::ThreadTrace;
use ilgen_trace::{AccessKind, Event, SyncOp, ThreadId, PENDING};

use crate::atomics::Atomics;
use crate::lifetime::{accesses, span, Lifetimes};
use crate::model::{
    BarrierObject, Model, ModelEvent, ModelOp, ModelThread, MutexObject, Observed, SemObject,
    SyncObjects, ThreadBuilder, TryTarget, Wake,
};
pub use crate::objects::SharedObject;
use crate::objects::{Hint, Objects};
use crate::ordered;

/// Which shared objects the model keeps the accesses of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Every one: what `export-csp` and the atomicity analysis look at.
    All,
    /// Those whose accesses by different threads happens-before does not wholly order
    /// ([`crate::ordered`]): all the race analysis needs.
    Unordered,
}

#[derive(Clone, Debug)]
pub struct Program {
    /// The shared objects the model keeps the accesses of, by epoch and address: a
    /// [`crate::model::VarId`] indexes them.
    pub vars: Vec<SharedObject>,
    pub model: Model,
    /// Access records read from the trace.
    pub accesses_read: usize,
    /// Access records kept (on shared objects, one per object and segment), those of objects
    /// left out of the model included.
    pub accesses_kept: usize,
    /// The shared objects left out of the model ([`Keep::Unordered`]).
    pub ordered: Ordered,
    /// The acquire and release halves of atomic operations, placed among the model's events.
    pub atomics: Atomics,
}

impl Program {
    /// Shared objects of the run, those left out of the model included.
    pub fn shared(&self) -> usize {
        self.vars.len() + self.ordered.vars
    }

    /// Sync events of the model, all threads.
    pub fn sync_events(&self) -> usize {
        self.model
            .threads
            .iter()
            .flat_map(|t| &t.events)
            .filter(|e| e.is_sync())
            .count()
    }
}

/// The shared objects happens-before orders wholly, left out of the model, as the filter counts
/// them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ordered {
    pub vars: usize,
    /// Of those, the ones without a conflicting pair (e.g. only atomics on one side).
    pub vars_without_pair: usize,
    /// Their race-pair candidates: accesses of two threads, at least one writing, not both
    /// atomic; every one ordered.
    pub pairs: u64,
}

/// The program of `run` with every read deciding ([`crate::testkit::every_read_deciding`]) and
/// the reads-from edges that keeps.
#[cfg(test)]
pub fn prepare_deciding(run: &crate::testkit::Run) -> Program {
    let mut program = prepare(run.traces());
    let deciding = crate::testkit::every_read_deciding(&program.model);
    let edges = crate::reads_from::edges(&program.model, &deciding);
    program.model.set_reads_from(edges);
    program
}

/// A sync event of the run: thread index, index among the thread's events, the event.
#[derive(Clone, Copy)]
struct At {
    thread: usize,
    index: usize,
    seq: u64,
}

/// The model of every shared object ([`Keep::All`]).
pub fn prepare(traces: Vec<ThreadTrace>) -> Program {
    prepare_keeping(traces, Keep::All)
}

/// Object index in [`Program::vars`] of an object left out of the model.
const LEFT_OUT: u32 = u32::MAX;

pub fn prepare_keeping(traces: Vec<ThreadTrace>, keep: Keep) -> Program {
    let lifetimes = Lifetimes::of(&traces);
    let objects = Objects::of(&traces, &lifetimes);
    prepare_from(traces, keep, &lifetimes, &objects)
}

/// [`prepare_keeping`] with the run's lifetimes and shared objects already found.
pub fn prepare_from(
    traces: Vec<ThreadTrace>,
    keep: Keep,
    lifetimes: &Lifetimes,
    objects: &Objects,
) -> Program {
    let skeleton = skeleton(&traces);
    let mut atomics = Atomics::of(&traces, lifetimes);
    let kept = match keep {
        Keep::All => vec![true; objects.len()],
        Keep::Unordered => ordered::unordered(&traces, &skeleton, &atomics, objects, lifetimes),
    };
    let mut vars = Vec::new();
    // Per object: its index in `vars`, or LEFT_OUT.
    let place: Vec<u32> = kept
        .iter()
        .enumerate()
        .map(|(object, &kept)| {
            if !kept {
                return LEFT_OUT;
            }
            vars.push(objects.get(object));
            u32::try_from(vars.len() - 1).expect("fewer than 2^32 shared objects")
        })
        .collect();
    drop(kept);
    let mut tallies = Tallies {
        of: match vars.len() < objects.len() {
            true => vec![Tally::NEW; objects.len()],
            false => Vec::new(),
        },
        pairs: 0,
    };
    let Model {
        threads: sync_threads,
        objects: sync_objects,
        ..
    } = skeleton;
    let mut accesses_read = 0;
    let mut accesses_kept = 0;
    // The model has one record per object and segment. Segments are numbered over the whole
    // walk (from 1): per object kept, the segment of its last record and that record's index.
    let mut segment = 0u32;
    let mut records = vec![(0u32, 0u32); vars.len()];
    let mut threads = Vec::with_capacity(traces.len());
    for (t, (trace, syncs)) in traces.iter().zip(sync_threads.iter()).enumerate() {
        let mut events: Vec<ModelEvent> = Vec::with_capacity(syncs.events.len());
        let mut next_sync = syncs.events.iter();
        let mut hint = Hint::default();
        let mut points = 0;
        segment += 1;
        for (event, access) in accesses(trace, lifetimes) {
            if let Some((a, epoch)) = access {
                match event {
                    Event::Access(_) => accesses_read += 1,
                    // The free is its own access (its site is the one to report), after
                    // whatever the segment did to the block before it; so is the use of a
                    // destroyed sync object, before the operation (which may release it).
                    Event::Heap(_) | Event::Sync(_) | Event::Atomic(_) => segment += 1,
                }
                let (lo, hi) = span(&a);
                for object in objects.touched(epoch, lo, hi, &mut hint) {
                    let var = place[object];
                    if var == LEFT_OUT {
                        accesses_kept += usize::from(tallies.add(object, t, segment, a.kind));
                        continue;
                    }
                    let record = &mut records[var as usize];
                    if record.0 == segment {
                        if let ModelEvent::Access { kind, site, .. } =
                            &mut events[record.1 as usize]
                        {
                            let merged = kind.dominant(a.kind);
                            if merged != *kind && merged == a.kind {
                                *site = a.site;
                            }
                            *kind = merged;
                        }
                    } else {
                        accesses_kept += 1;
                        *record = (segment, events.len() as u32);
                        events.push(ModelEvent::Access {
                            var,
                            kind: a.kind,
                            site: a.site,
                        });
                    }
                }
            }
            match event {
                Event::Sync(_) => {
                    segment += 1;
                    events.extend(next_sync.next().copied());
                }
                // The accesses after an acquire or release are ordered unlike those before it:
                // they are other records, with the clock of their own stretch (see `atomics`).
                Event::Atomic(_) => {
                    segment += 1;
                    atomics.note_model(t, points, events.len());
                    points += 1;
                }
                Event::Access(_) | Event::Heap(_) => {}
            }
        }
        // Held for the whole analysis, copied exactly sized.
        threads.push(ModelThread {
            tid: syncs.tid,
            events: events.into(),
            observed: syncs.observed.clone(),
        });
    }
    Program {
        atomics,
        ordered: tallies.ordered(&place),
        vars,
        model: Model::new(threads, sync_objects),
        accesses_read,
        accesses_kept,
    }
}

/// The access kinds, by their index (`kind as usize`).
const KINDS: [AccessKind; 4] = [
    AccessKind::Read,
    AccessKind::Write,
    AccessKind::AtomicRead,
    AccessKind::AtomicWrite,
];

/// The records of an object left out of the model (one per segment, as the model would have kept
/// them), by kind: those of the threads walked before the last one that made one (threads are
/// walked in order), that thread's own, and the one of the segment it last made one in, which
/// may still grow.
#[derive(Clone, Copy)]
struct Tally {
    earlier: [u32; 4],
    own: [u32; 4],
    thread: u32,
    segment: u32,
    kind: AccessKind,
    paired: bool,
}

impl Tally {
    const NEW: Tally = Tally {
        earlier: [0; 4],
        own: [0; 4],
        thread: 0,
        segment: 0,
        kind: AccessKind::Read,
        paired: false,
    };

    /// Counts the record of the last segment, complete now; gives its race-pair candidates
    /// with the earlier threads' records.
    fn count(&mut self) -> u64 {
        if self.segment == 0 {
            return 0;
        }
        let pairs: u64 = (0..4)
            .filter(|&k| self.kind.conflicts_with(KINDS[k]))
            .map(|k| u64::from(self.earlier[k]))
            .sum();
        self.paired |= pairs > 0;
        self.own[self.kind as usize] += 1;
        self.segment = 0;
        pairs
    }
}

/// The race-pair candidates of the objects left out of the model, counted as the filter counts
/// them (on the records the model would have kept) without holding the records.
struct Tallies {
    of: Vec<Tally>,
    pairs: u64,
}

impl Tallies {
    /// An access of `kind` to `object` by thread `t` in `segment`; true if it begins the
    /// segment's record.
    fn add(&mut self, object: usize, t: usize, segment: u32, kind: AccessKind) -> bool {
        let tally = &mut self.of[object];
        if tally.segment == segment {
            tally.kind = tally.kind.dominant(kind);
            return false;
        }
        self.pairs += tally.count();
        if tally.thread != t as u32 {
            for k in 0..4 {
                tally.earlier[k] += tally.own[k];
            }
            tally.own = [0; 4];
            tally.thread = t as u32;
        }
        tally.segment = segment;
        tally.kind = kind;
        true
    }

    fn ordered(&mut self, place: &[u32]) -> Ordered {
        for tally in &mut self.of {
            self.pairs += tally.count();
        }
        let left = || (0..place.len()).filter(|&o| place[o] == LEFT_OUT);
        Ordered {
            vars: left().count(),
            vars_without_pair: left().filter(|&o| !self.of[o].paired).count(),
            pairs: self.pairs,
        }
    }
}

/// The model without accesses: every sync event resolved to its model semantics (see the module
/// doc), failed tries the observed order does not explain made no-ops. Its threads' recorded
/// operations are the program model's: [`crate::candidates::read`] expands heads by them.
pub(crate) fn skeleton(traces: &[ThreadTrace]) -> Model {
    // Decoded once here: the trace holds its records only. Each thread's list cut to its length:
    // it lives while the model is built, and grown by doubling it held up to twice its bytes
    // (elevator's 10^6 events: 50 MB of the 104 MB peak).
    let marks: Marks = traces
        .iter()
        .map(|t| {
            let mut syncs: Vec<_> = t
                .events
                .marks()
                .filter_map(|(index, e)| match e {
                    Event::Sync(s) => Some((index, s)),
                    Event::Access(_) | Event::Heap(_) | Event::Atomic(_) => None,
                })
                .collect();
            syncs.shrink_to_fit();
            syncs
        })
        .collect();
    let index_of: HashMap<ThreadId, usize> = traces
        .iter()
        .enumerate()
        .map(|(i, t)| (t.header.tid, i))
        .collect();
    let conds = match_conditions(&marks);
    let barriers = barrier_instances(&marks);
    let sems = semaphores(&marks);
    let forked: BTreeSet<ThreadId> = syncs(&marks)
        .filter_map(|(_, s)| match s.op {
            SyncOp::Fork { child } => Some(child),
            _ => None,
        })
        .collect();
    let ended: BTreeSet<ThreadId> = traces
        .iter()
        .zip(&marks)
        .filter(|(_, m)| {
            m.iter()
                .any(|(_, s)| s.op == SyncOp::End && !s.is_pending())
        })
        .map(|(t, _)| t.header.tid)
        .collect();

    // The run's last completed step: an exit there ended the process ([`ModelOp::Exit`]).
    let last_seq = syncs(&marks)
        .map(|(at, _)| at.seq)
        .filter(|&seq| seq != PENDING)
        .max();
    let mut objects = SyncObjects {
        conds: conds.instances.clone(),
        barriers: barriers.instances.clone(),
        sems: sems.objects.clone(),
        ..SyncObjects::default()
    };
    let mut mutex_ids: HashMap<u64, usize> = HashMap::new();
    let mut mutexes: Vec<u64> = Vec::new();
    let mut recursive: BTreeSet<usize> = BTreeSet::new();
    let mut rw_ids: HashMap<u64, usize> = HashMap::new();
    let mut threads = Vec::with_capacity(traces.len());
    // Each thread's decoded records dropped once its events are built: all of them held until
    // the last thread's were (48 bytes a sync operation) made the peak of a run of condition
    // variables.
    for (t, (trace, sync_marks)) in traces.iter().zip(marks).enumerate() {
        let count = sync_marks.len();
        let mut thread = ThreadBuilder::with_capacity(trace.header.tid, count, count);
        let mut held: HashMap<usize, u32> = HashMap::new();
        let mut rw_held: HashMap<usize, u32> = HashMap::new();
        // Mutexes held, in the order they were taken.
        let mut order: Vec<usize> = Vec::new();
        // A pending operation followed by others was abandoned (the thread was cancelled in it,
        // or jumped out): it never completed, and did not block the thread either.
        let last_sync = sync_marks.last().map(|&(index, _)| index);
        for (index, sync) in &sync_marks {
            let at = (t, *index);
            let mut mutex = |addr: u64| intern(&mut mutex_ids, &mut mutexes, addr);
            let mut rw = |addr: u64| intern(&mut rw_ids, &mut objects.rwlocks, addr);
            let pending = sync.is_pending();
            let op = match sync.op {
                _ if pending && Some(*index) != last_sync => ModelOp::Nop,
                SyncOp::Start => ModelOp::Start {
                    forked: forked.contains(&trace.header.tid),
                },
                SyncOp::End => ModelOp::End,
                SyncOp::Fork { child } => match index_of.get(&child) {
                    Some(&child) => ModelOp::Fork { child },
                    None => ModelOp::Nop,
                },
                SyncOp::Join { child } => match index_of.get(&child) {
                    Some(&c) if pending || ended.contains(&child) => ModelOp::Join { child: c },
                    _ => ModelOp::Nop,
                },
                SyncOp::MutexLock { mutex: m } | SyncOp::SpinLock { lock: m } => {
                    let m = mutex(m);
                    lock(&mut held, m, &mut recursive, pending)
                }
                SyncOp::MutexTimedLock { mutex: m, acquired } if acquired || pending => {
                    let m = mutex(m);
                    lock(&mut held, m, &mut recursive, pending)
                }
                SyncOp::MutexTryLock {
                    mutex: m,
                    acquired: true,
                }
                | SyncOp::SpinTryLock {
                    lock: m,
                    acquired: true,
                } => {
                    let m = mutex(m);
                    lock(&mut held, m, &mut recursive, pending)
                }
                SyncOp::MutexUnlock { mutex: m } | SyncOp::SpinUnlock { lock: m } => {
                    let m = mutex(m);
                    if release(&mut held, m) {
                        ModelOp::Unlock { mutex: m }
                    } else {
                        ModelOp::Nop
                    }
                }
                SyncOp::RwRdLock { lock: l }
                | SyncOp::RwTryRdLock {
                    lock: l,
                    acquired: true,
                } => {
                    let l = rw(l);
                    *rw_held.entry(l).or_default() += 1;
                    ModelOp::ReadLock { rw: l }
                }
                SyncOp::RwWrLock { lock: l }
                | SyncOp::RwTryWrLock {
                    lock: l,
                    acquired: true,
                } => {
                    let l = rw(l);
                    *rw_held.entry(l).or_default() += 1;
                    ModelOp::WriteLock { rw: l }
                }
                SyncOp::RwUnlock { lock: l } => {
                    let l = rw(l);
                    if release(&mut rw_held, l) {
                        ModelOp::RwUnlock { rw: l }
                    } else {
                        ModelOp::Nop
                    }
                }
                SyncOp::CondWait { mutex: m, .. } => {
                    let m = mutex(m);
                    if held.remove(&m).is_some() {
                        ModelOp::WaitRelease { mutex: m }
                    } else {
                        ModelOp::Nop
                    }
                }
                SyncOp::CondWake { mutex: m, .. } => {
                    let m = mutex(m);
                    held.insert(m, 1);
                    ModelOp::WaitReturn {
                        mutex: m,
                        wake: conds.wakes.get(&at).copied().unwrap_or(Wake::Never),
                    }
                }
                SyncOp::CondSignal { .. } | SyncOp::CondBroadcast { .. } => {
                    match conds.signals.get(&at) {
                        Some(&cond) => ModelOp::Signal { cond },
                        None => ModelOp::Nop,
                    }
                }
                SyncOp::WaitLoopExit { cond: addr } => match conds.loop_exits.get(&at) {
                    Some(&cond) => {
                        // The condition variable's mutex if the thread holds it, else the lock
                        // it took last: the one a wait in this loop would release.
                        let named = conds.mutex_of.get(&addr).map(|&m| mutex(m));
                        ModelOp::LoopExit {
                            cond,
                            mutex: named
                                .filter(|m| order.contains(m))
                                .or(order.last().copied()),
                        }
                    }
                    None => ModelOp::Nop,
                },
                SyncOp::BarrierEnter { .. } => match barriers.of.get(&at) {
                    Some(&barrier) => ModelOp::BarrierEnter { barrier },
                    None => ModelOp::Nop,
                },
                SyncOp::BarrierExit { .. } => match barriers.of.get(&at) {
                    Some(&barrier) => ModelOp::BarrierExit { barrier },
                    None => ModelOp::Nop,
                },
                // A timed wait that timed out took nothing and, like a timedlock's, needs no
                // busy object; one still blocked as the run ended is the thread's last attempt.
                SyncOp::SemTimedWait {
                    acquired: false, ..
                } if !pending => ModelOp::Nop,
                SyncOp::SemWait { .. }
                | SyncOp::SemTryWait { acquired: true, .. }
                | SyncOp::SemTimedWait { .. } => match sems.of.get(&at) {
                    Some(&sem) => ModelOp::SemWait { sem, units: 1 },
                    None => ModelOp::Nop,
                },
                SyncOp::SemPost { .. } => match sems.of.get(&at) {
                    Some(&sem) => ModelOp::SemPost { sem, units: 1 },
                    None => ModelOp::Nop,
                },
                // A token stream's mutex: keyed apart from every address (bit 63, which no user
                // address has), so that an inode never meets a mutex at an equal address.
                SyncOp::ChannelWrite { channel, .. } | SyncOp::ChannelRead { channel, .. }
                    if sems.token.contains_key(&at) =>
                {
                    let m = mutex(channel | 1 << 63);
                    match sems.token[&at] {
                        Token::Take => lock(&mut held, m, &mut recursive, false),
                        Token::Give if release(&mut held, m) => ModelOp::Unlock { mutex: m },
                        Token::Give | Token::Put => ModelOp::Nop,
                    }
                }
                SyncOp::ChannelWrite { bytes, .. } => match sems.of.get(&at) {
                    Some(&sem) => ModelOp::SemPost { sem, units: bytes },
                    None => ModelOp::Nop,
                },
                SyncOp::ChannelRead { bytes, .. } => match sems.of.get(&at) {
                    Some(&sem) => ModelOp::SemWait { sem, units: bytes },
                    None => ModelOp::Nop,
                },
                // A failed try operation: busy in the run. On a lock its own thread held it fails
                // whatever the others do.
                SyncOp::MutexTryLock { mutex: m, .. } | SyncOp::SpinTryLock { lock: m, .. } => {
                    let m = mutex(m);
                    if held.contains_key(&m) {
                        ModelOp::Nop
                    } else {
                        ModelOp::TryFail {
                            target: TryTarget::Mutex(m),
                        }
                    }
                }
                SyncOp::RwTryRdLock { lock: l, .. } | SyncOp::RwTryWrLock { lock: l, .. } => {
                    let l = rw(l);
                    if rw_held.contains_key(&l) {
                        ModelOp::Nop
                    } else if matches!(sync.op, SyncOp::RwTryRdLock { .. }) {
                        ModelOp::TryFail {
                            target: TryTarget::RwRead(l),
                        }
                    } else {
                        ModelOp::TryFail {
                            target: TryTarget::RwWrite(l),
                        }
                    }
                }
                SyncOp::SemTryWait { .. } => match sems.of.get(&at) {
                    Some(&sem) => ModelOp::TryFail {
                        target: TryTarget::Sem(sem),
                    },
                    None => ModelOp::Nop,
                },
                SyncOp::Exit if Some(sync.seq) == last_seq => ModelOp::Exit,
                // An exit with steps recorded after it (exit handlers ran while threads went on,
                // or took steps themselves) did not end the process there.
                SyncOp::Exit => ModelOp::Nop,
                // A semaphore's init gives the object its initial count, and its destroy ends
                // the object ([`semaphores`]); a destroy is a write of its object, an access
                // before the step ([`Lifetimes::sync_access`]), and orders nothing itself.
                SyncOp::MutexTimedLock { .. }
                | SyncOp::SemDestroy { .. }
                | SyncOp::MutexDestroy { .. }
                | SyncOp::CondDestroy { .. }
                | SyncOp::RwDestroy { .. }
                | SyncOp::BarrierDestroy { .. }
                | SyncOp::Detach { .. }
                | SyncOp::WaitLoopEnter { .. }
                | SyncOp::TxBegin
                | SyncOp::TxEnd
                | SyncOp::SemInit { .. } => ModelOp::Nop,
            };
            match op {
                ModelOp::Lock { mutex } | ModelOp::WaitReturn { mutex, .. } => order.push(mutex),
                ModelOp::Unlock { mutex } => {
                    if let Some(i) = order.iter().rposition(|&m| m == mutex) {
                        order.remove(i);
                    }
                }
                ModelOp::WaitRelease { mutex } => order.retain(|&m| m != mutex),
                _ => {}
            }
            thread.sync(
                op,
                Observed {
                    seq: sync.seq,
                    op_index: 0,
                    site: sync.site,
                    op: sync.op,
                },
            );
        }
        threads.push(thread.build());
    }
    objects.mutexes = mutexes
        .iter()
        .enumerate()
        .map(|(i, &addr)| MutexObject {
            addr,
            recursive: recursive.contains(&i),
        })
        .collect();
    explain_try_failures(Model::new(threads, objects))
}

/// A failed try operation whose object the observed order does not show busy becomes
/// [`ModelOp::Nop`], as it was before try failures constrained anything: it may have failed on a
/// lock taken by uninstrumented code, or just before a release was recorded (a release takes its
/// seq before its real call, a try after it). As a [`ModelOp::TryFail`] it might never be enabled
/// and would end its thread's part of the model there.
fn explain_try_failures(model: Model) -> Model {
    let unexplained = model.unexplained_try_failures();
    if unexplained.is_empty() {
        return model;
    }
    let Model {
        threads, objects, ..
    } = model;
    let mut threads = threads.to_vec();
    for at in unexplained {
        if let Some(ModelEvent::Sync { op, .. }) = threads[at.thread].events.get_mut(at.index) {
            *op = ModelOp::Nop.into();
        }
    }
    Model::new(threads, objects)
}

/// A lock acquisition by a thread holding `held`: marks the mutex recursive when the thread
/// already held it and the relock completed.
fn lock(
    held: &mut HashMap<usize, u32>,
    mutex: usize,
    recursive: &mut BTreeSet<usize>,
    pending: bool,
) -> ModelOp {
    let count = held.entry(mutex).or_default();
    if *count > 0 && !pending {
        recursive.insert(mutex);
    }
    *count += 1;
    ModelOp::Lock { mutex }
}

/// Index of the object at `addr`, added to `list` on first sight.
fn intern(ids: &mut HashMap<u64, usize>, list: &mut Vec<u64>, addr: u64) -> usize {
    *ids.entry(addr).or_insert_with(|| {
        list.push(addr);
        list.len() - 1
    })
}

/// Releases one level of `lock` if the thread holds it; false if it did not.
fn release(held: &mut HashMap<usize, u32>, lock: usize) -> bool {
    match held.get_mut(&lock) {
        Some(n) if *n > 1 => {
            *n -= 1;
            true
        }
        Some(_) => {
            held.remove(&lock);
            true
        }
        None => false,
    }
}

/// Per thread, its sync events with their indices among its events.
type Marks = Vec<Vec<(usize, ilgen_trace::Sync)>>;

fn syncs(marks: &Marks) -> impl Iterator<Item = (At, &ilgen_trace::Sync)> {
    marks.iter().enumerate().flat_map(|(thread, m)| {
        m.iter().map(move |(index, s)| {
            (
                At {
                    thread,
                    index: *index,
                    seq: s.seq,
                },
                s,
            )
        })
    })
}

/// Every shared object of the run ([`Objects`]).
pub fn shared_objects(traces: &[ThreadTrace]) -> Vec<SharedObject> {
    Objects::of(traces, &Lifetimes::of(traces)).all()
}

struct Conditions {
    /// Address of each instance (one per signal or broadcast).
    instances: Vec<u64>,
    /// Signal or broadcast event (thread, index) → its instance.
    signals: HashMap<(usize, usize), usize>,
    /// Wake event → what released it.
    wakes: HashMap<(usize, usize), Wake>,
    /// Wait-loop exit without a wait inside → the instance ordered before it.
    loop_exits: HashMap<(usize, usize), usize>,
    /// Condition variable → the mutex its waits name (the first seen).
    mutex_of: HashMap<u64, u64>,
}

/// Matches each returned wait to a signal or broadcast on its condition variable issued between
/// the wait's release and its return. Waits are taken by return order and each gets the earliest
/// broadcast in its interval, else the earliest signal no other wait used (a signal wakes at most
/// one waiter): the greedy that matches the most waits. Then orders each wait loop left without
/// a wait after one earlier signal or broadcast (see the comment on that step), and hands the
/// signals out again in the order the waits and exits returned ([`in_take_order`]).
fn match_conditions(marks: &Marks) -> Conditions {
    let mut c = Conditions {
        instances: Vec::new(),
        signals: HashMap::new(),
        wakes: HashMap::new(),
        loop_exits: HashMap::new(),
        mutex_of: HashMap::new(),
    };
    let mut all: Vec<(At, SyncOp)> = syncs(marks)
        .filter(|(_, s)| {
            matches!(
                s.op,
                SyncOp::CondSignal { .. } | SyncOp::CondBroadcast { .. }
            )
        })
        .map(|(at, s)| (at, s.op))
        .collect();
    all.sort_by_key(|(at, _)| (at.seq, at.thread));
    // Per condition variable: (seq, instance) of its signals and of its broadcasts.
    let mut signals: HashMap<u64, BTreeSet<(u64, usize)>> = HashMap::new();
    let mut broadcasts: HashMap<u64, Vec<(u64, usize)>> = HashMap::new();
    for (at, op) in &all {
        if at.seq == PENDING {
            continue;
        }
        let (cond, broadcast) = match *op {
            SyncOp::CondSignal { cond } => (cond, false),
            SyncOp::CondBroadcast { cond } => (cond, true),
            _ => continue,
        };
        let inst = c.instances.len();
        c.instances.push(cond);
        c.signals.insert((at.thread, at.index), inst);
        let list = if broadcast {
            broadcasts.entry(cond).or_default()
        } else {
            signals.entry(cond).or_default().insert((at.seq, inst));
            continue;
        };
        list.push((at.seq, inst));
    }
    let all_signals: HashMap<u64, Vec<(u64, usize)>> = signals
        .iter()
        .map(|(&cond, set)| {
            let mut v: Vec<(u64, usize)> = set.iter().copied().collect();
            v.extend(broadcasts.get(&cond).into_iter().flatten().copied());
            v.sort_unstable();
            (cond, v)
        })
        .chain(
            broadcasts
                .iter()
                .filter(|(cond, _)| !signals.contains_key(cond))
                .map(|(&cond, v)| (cond, v.clone())),
        )
        .collect();

    // Waits (release seq, wake) and wait loops, per thread in program order.
    struct WaitInterval {
        cond: u64,
        from: u64,
        wake: At,
        /// The thread went on past the wait: it did not wait again right away on the same
        /// condition variable (a wait loop whose predicate still failed).
        went_on: bool,
    }
    let mut waits: Vec<WaitInterval> = Vec::new();
    let mut loops: Vec<(u64, At)> = Vec::new();
    for (thread, m) in marks.iter().enumerate() {
        let mut open_wait: Option<(u64, u64)> = None;
        // Open wait loops: (cond, whether a wait was called inside).
        let mut open_loops: Vec<(u64, bool)> = Vec::new();
        // The thread's last wait, if it returned at its last sync event.
        let mut just_woken: Option<usize> = None;
        for &(index, s) in m {
            if let Some(i) = just_woken.take() {
                if matches!(s.op, SyncOp::CondWait { cond, .. } if cond == waits[i].cond) {
                    waits[i].went_on = false;
                }
            }
            let at = At {
                thread,
                index,
                seq: s.seq,
            };
            match s.op {
                SyncOp::CondWait { cond, mutex, .. } => {
                    c.mutex_of.entry(cond).or_insert(mutex);
                    open_wait = Some((cond, s.seq));
                    for l in open_loops.iter_mut().filter(|l| l.0 == cond || l.0 == 0) {
                        l.1 = true;
                    }
                }
                SyncOp::CondWake {
                    cond, timed_out, ..
                } => {
                    let from = match open_wait.take() {
                        Some((c, from)) if c == cond => from,
                        _ => 0,
                    };
                    if s.is_pending() {
                        c.wakes.insert((thread, index), Wake::Never);
                    } else if timed_out {
                        c.wakes.insert((thread, index), Wake::Unsignalled);
                    } else {
                        just_woken = Some(waits.len());
                        waits.push(WaitInterval {
                            cond,
                            from,
                            wake: at,
                            went_on: true,
                        });
                    }
                }
                SyncOp::WaitLoopEnter { cond } => open_loops.push((cond, false)),
                SyncOp::WaitLoopExit { cond } => {
                    if let Some(i) = open_loops.iter().rposition(|l| l.0 == cond) {
                        let (_, waited) = open_loops.remove(i);
                        if !waited && cond != 0 && !s.is_pending() {
                            loops.push((cond, at));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    waits.sort_by_key(|w| (w.wake.seq, w.wake.thread));
    // Per instance: a wait or a loop exit took it (only a signal's mark matters).
    let mut used = vec![false; c.instances.len()];
    let is_broadcast: Vec<bool> = {
        let mut b = vec![false; c.instances.len()];
        for &(_, inst) in broadcasts.values().flatten() {
            b[inst] = true;
        }
        b
    };
    for w in &waits {
        let in_range = |seq: u64| seq > w.from && seq < w.wake.seq;
        // Broadcasts are in seq order: the earliest in the interval is the first after `from`.
        let broadcast = broadcasts.get(&w.cond).and_then(|b| {
            b.get(b.partition_point(|(seq, _)| *seq <= w.from))
                .filter(|(seq, _)| in_range(*seq))
        });
        let signal = || {
            let set = signals.get_mut(&w.cond)?;
            let &(seq, inst) = set.range((w.from.saturating_add(1), 0)..).next()?;
            in_range(seq).then(|| {
                set.remove(&(seq, inst));
                (seq, inst)
            })
        };
        let wake = match broadcast.copied().or_else(signal) {
            Some((_, inst)) => {
                used[inst] = true;
                Wake::Signal(inst)
            }
            None => Wake::Unsignalled,
        };
        c.wakes.insert((w.wake.thread, w.wake.index), wake);
    }
    // Loop exits in seq order. A signal that woke nobody stands for one item made available, so
    // each exit takes the earliest earlier signal that no wait and no earlier exit took: the k-th
    // dequeue of a queue follows the k-th enqueue's signal, not the last one. A broadcast
    // announces state that stays (a flag, a close) and serves any number of exits, so a "ready"
    // broadcast followed by unrelated signals keeps its exits right after it. When in doubt,
    // earlier: an exit enabled too early gives schedules that replay finds diverged, one enabled
    // too late hides races (every dequeue after the last enqueue). Still a guess: an exit waiting
    // for a count to reach N needs all N signals, not the first, and a race pair whose schedule
    // diverges is not tried again with another.
    loops.sort_by_key(|(_, exit)| (exit.seq, exit.thread));
    // Per condition variable: the index in its signal list of the first one a loop exit may take
    // (a broadcast, or a signal not taken). Taken signals stay taken, so the cursor only moves
    // forward and all the exits together walk each list once.
    let mut first_free: HashMap<u64, usize> = HashMap::new();
    for &(cond, exit) in &loops {
        let Some(list) = all_signals.get(&cond) else {
            continue;
        };
        let cursor = first_free.entry(cond).or_insert(0);
        while list
            .get(*cursor)
            .is_some_and(|&(_, inst)| used[inst] && !is_broadcast[inst])
        {
            *cursor += 1;
        }
        let before = list.partition_point(|(seq, _)| *seq < exit.seq);
        let earlier = &list[..before];
        let pick = earlier
            .get(*cursor)
            // Every earlier signal is taken: the exit sees state left over from one of them (a
            // flag signalled once, a batch under one signal, an item a woken waiter came too late
            // for); the latest is the likeliest to have published it.
            .or_else(|| earlier.last());
        if let Some(&(_, inst)) = pick {
            used[inst] = true;
            c.loop_exits.insert((exit.thread, exit.index), inst);
        }
    }
    let waits = waits.iter().map(|w| Taker {
        cond: w.cond,
        at: w.wake,
        after: Some(w.from),
        went_on: w.went_on,
    });
    let exits = loops.iter().map(|&(cond, at)| Taker {
        cond,
        at,
        after: None,
        went_on: true,
    });
    in_take_order(&mut c, &all_signals, &is_broadcast, waits.chain(exits));
    c
}

/// A returned wait (`after`: the seq it released its mutex at) or a wait loop left without a
/// wait (`after`: `None`) on condition variable `cond`.
struct Taker {
    cond: u64,
    at: At,
    after: Option<u64>,
    /// Whether the thread went on past it (every exit does; a wait followed by another wait on
    /// the same condition variable did not).
    went_on: bool,
}

/// Hands the signals of each condition variable out again to the waits and loop exits that took
/// one (not a broadcast), in the order they returned: first to those the thread went on past,
/// each the earliest signal not handed out that it can have followed, then likewise to waits
/// that only waited again; one that finds none keeps what it had (shared). Waits were matched
/// alone, by the greedy that matches the most, and exits after them; so a waiter that returned
/// after an exit could hold the earlier signal and the exit the later one, or a waiter that found
/// nothing and waited again the signal of a job another took. On a job queue
/// (`benchmarks/detect/workloads/compress_jobs.c`) the waiter's reads of the job it took, written
/// after the signal it held, were left unordered by happens-before (64,330 objects a run) in the
/// runs whose schedule had a worker find a job queued while another slept. Handed out by return
/// order, the k-th dequeue follows the k-th enqueue's signal; taking the earliest that fits, by
/// return, matches as many as any order does (points to intervals by right end).
fn in_take_order(
    c: &mut Conditions,
    all_signals: &HashMap<u64, Vec<(u64, usize)>>,
    is_broadcast: &[bool],
    takers: impl Iterator<Item = Taker>,
) {
    // Per condition variable: the takers of a signal, those the thread went on past first, each
    // part in return order.
    let mut of: HashMap<u64, Vec<Taker>> = HashMap::new();
    for t in takers {
        let key = (t.at.thread, t.at.index);
        let inst = match t.after {
            Some(_) => match c.wakes.get(&key) {
                Some(&Wake::Signal(inst)) => inst,
                _ => continue,
            },
            None => match c.loop_exits.get(&key) {
                Some(&inst) => inst,
                None => continue,
            },
        };
        if !is_broadcast[inst] {
            of.entry(t.cond).or_default().push(t);
        }
    }
    for (cond, mut list) in of {
        list.sort_by_key(|t| (!t.went_on, t.at.seq, t.at.thread));
        let mut pool: BTreeSet<(u64, usize)> = all_signals[&cond]
            .iter()
            .filter(|&&(_, inst)| !is_broadcast[inst])
            .copied()
            .collect();
        for t in &list {
            let from = t.after.map_or(0, |f| f.saturating_add(1));
            let Some(&pick) = pool.range((from, 0)..).next() else {
                continue;
            };
            if pick.0 >= t.at.seq {
                continue;
            }
            pool.remove(&pick);
            let key = (t.at.thread, t.at.index);
            if t.after.is_some() {
                c.wakes.insert(key, Wake::Signal(pick.1));
            } else {
                c.loop_exits.insert(key, pick.1);
            }
        }
    }
}

struct Barriers {
    instances: Vec<BarrierObject>,
    of: HashMap<(usize, usize), usize>,
}

/// Instances of barrier objects. Every enter of one instance precedes (in seq) every exit of it,
/// since enters take their seq before the real call and exits after it; so in seq order an enter
/// opens a new instance exactly when the current one has seen an exit. An exit belongs to the
/// instance its thread entered.
fn barrier_instances(marks: &Marks) -> Barriers {
    let mut b = Barriers {
        instances: Vec::new(),
        of: HashMap::new(),
    };
    let mut all: Vec<(At, SyncOp)> = syncs(marks)
        .filter(|(_, s)| {
            matches!(
                s.op,
                SyncOp::BarrierEnter { .. } | SyncOp::BarrierExit { .. }
            )
        })
        .map(|(at, s)| (at, s.op))
        .collect();
    all.sort_by_key(|(at, _)| (at.seq, at.thread));
    // Per barrier address: its current instance and whether that has seen an exit.
    let mut current: HashMap<u64, (usize, bool)> = HashMap::new();
    let mut entered: HashMap<(u64, usize), usize> = HashMap::new();
    for (at, op) in all {
        match op {
            SyncOp::BarrierEnter { barrier } => {
                let inst = match current.get(&barrier) {
                    Some(&(inst, false)) => inst,
                    _ => {
                        b.instances.push(BarrierObject {
                            addr: barrier,
                            parties: 0,
                            released: false,
                        });
                        let inst = b.instances.len() - 1;
                        current.insert(barrier, (inst, false));
                        inst
                    }
                };
                b.instances[inst].parties += 1;
                entered.insert((barrier, at.thread), inst);
                b.of.insert((at.thread, at.index), inst);
            }
            SyncOp::BarrierExit { barrier, .. } => {
                let Some(inst) = entered.remove(&(barrier, at.thread)) else {
                    continue;
                };
                if at.seq != PENDING {
                    b.instances[inst].released = true;
                    if let Some(cur) = current.get_mut(&barrier).filter(|c| c.0 == inst) {
                        cur.1 = true;
                    }
                }
                b.of.insert((at.thread, at.index), inst);
            }
            _ => {}
        }
    }
    b
}

struct Semaphores {
    objects: Vec<SemObject>,
    /// The semaphore each operation acts on, by thread and event index.
    of: HashMap<(usize, usize), usize>,
    /// What each operation on a token stream does, by thread and event index.
    token: HashMap<(usize, usize), Token>,
}

/// An operation on a stream that carries one byte as a lock token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    /// A read of the byte: the lock is taken.
    Take,
    /// Its write back by the thread that took it: the lock is released.
    Give,
    /// The write that put the byte in first (no take before it in its thread).
    Put,
}

/// Semaphores with their initial count. A semaphore is an address from its first operation (in
/// seq order) to its `SemDestroy`; the next operation at that address starts another. Its
/// initial count is the one the run recorded (`SemInit`, from `sem_init` or `sem_open`) when that
/// is its first operation; otherwise (it was initialised by code outside instrumentation) the
/// least count under which the observed order never waits on zero. A later `SemInit` with no
/// destroy before it (the semaphore opened again) does not reset the model's counter: the
/// initial count is then raised to what the observed order needs, if it needs more.
///
/// A stream between threads (a pipe, FIFO or stream socket, `SyncOp::ChannelWrite`/`ChannelRead`)
/// is a semaphore of its own, kept apart from any semaphore at an equal address (its id is an
/// inode): a write gives the bytes it wrote, a read takes the bytes it got, so a read waits for
/// the writes whose bytes it got. Its initial count is the least the observed order needs: bytes
/// written before the recording, by another process or by calls the runtime does not see
/// (`writev`, `fwrite`) are there from the start, which allows every order those writers could
/// have taken. An inode used again by a later stream joins its count to the earlier one's, which
/// allows more orders, never fewer.
///
/// A stream that is a lock token (libuv's signal lock: a pipe holding one byte, read to lock and
/// written to unlock) becomes a mutex instead ([`Token`]), so that the filter's locksets and the
/// cut path know its sections as they know a mutex's: every read and write of it moves one byte,
/// each thread's writes but those that put the token in follow a read of its own with no other
/// read between (take, give), and one token exists (the initial count plus the puts is one). A
/// semaphore of one unit whose only givers are its takers is then a mutex, except that the put
/// may come after a take in the model, which allows more orders, never fewer.
fn semaphores(marks: &Marks) -> Semaphores {
    let mut all: Vec<(At, SyncOp)> = syncs(marks)
        .filter(|(_, s)| {
            matches!(
                s.op,
                SyncOp::SemPost { .. }
                    | SyncOp::SemWait { .. }
                    | SyncOp::SemTryWait { .. }
                    | SyncOp::SemTimedWait { .. }
                    | SyncOp::SemInit { .. }
                    | SyncOp::SemDestroy { .. }
                    | SyncOp::ChannelWrite { .. }
                    | SyncOp::ChannelRead { .. }
            )
        })
        .map(|(at, s)| (at, s.op))
        .collect();
    all.sort_by_key(|(at, _)| at.seq);
    let mut s = Semaphores {
        objects: Vec::new(),
        of: HashMap::new(),
        token: HashMap::new(),
    };
    // Per stream semaphore: whether it is still a token, its puts, and the threads holding it.
    let mut tokens: HashMap<usize, (bool, i64, BTreeSet<usize>)> = HashMap::new();
    // The semaphore living at each address, and each stream's (`true`).
    let mut live: HashMap<(u64, bool), usize> = HashMap::new();
    // Per semaphore: running count from zero and its minimum.
    let mut counts: Vec<(i64, i64)> = Vec::new();
    for (at, op) in all {
        let seq = at.seq;
        let (sem, delta) = match op {
            SyncOp::ChannelWrite { channel, bytes } => (channel, i64::from(bytes)),
            SyncOp::ChannelRead { channel, bytes } => (channel, -i64::from(bytes)),
            SyncOp::SemPost { sem } => (sem, 1),
            SyncOp::SemWait { sem } if seq != PENDING => (sem, -1),
            SyncOp::SemTryWait { sem, acquired } | SyncOp::SemTimedWait { sem, acquired }
                if seq != PENDING =>
            {
                (sem, if acquired { -1 } else { 0 })
            }
            SyncOp::SemWait { sem }
            | SyncOp::SemTryWait { sem, .. }
            | SyncOp::SemTimedWait { sem, .. }
            | SyncOp::SemInit { sem, .. }
            | SyncOp::SemDestroy { sem } => (sem, 0),
            _ => continue,
        };
        let stream = matches!(op, SyncOp::ChannelWrite { .. } | SyncOp::ChannelRead { .. });
        let id = *live.entry((sem, stream)).or_insert_with(|| {
            s.objects.push(SemObject {
                addr: sem,
                initial: 0,
                recorded: match op {
                    SyncOp::SemInit { count, .. } => Some(count),
                    _ => None,
                },
            });
            counts.push((0, 0));
            s.objects.len() - 1
        });
        s.of.insert((at.thread, at.index), id);
        if stream {
            let (token, puts, holders) = tokens
                .entry(id)
                .or_insert_with(|| (true, 0, BTreeSet::new()));
            let role = match op {
                SyncOp::ChannelRead { bytes: 1, .. } if holders.insert(at.thread) => Token::Take,
                SyncOp::ChannelWrite { bytes: 1, .. } if holders.remove(&at.thread) => Token::Give,
                SyncOp::ChannelWrite { bytes: 1, .. } => {
                    *puts += 1;
                    Token::Put
                }
                _ => {
                    *token = false;
                    Token::Put
                }
            };
            s.token.insert((at.thread, at.index), role);
        }
        if let SyncOp::SemDestroy { .. } = op {
            live.remove(&(sem, false));
        }
        let c = &mut counts[id];
        c.0 += delta;
        c.1 = c.1.min(c.0);
    }
    for (obj, (_, min)) in s.objects.iter_mut().zip(counts) {
        let needed = u32::try_from(-min).unwrap_or(u32::MAX);
        obj.initial = obj.recorded.map_or(needed, |c| c.max(needed));
    }
    let locks: BTreeSet<usize> = tokens
        .into_iter()
        .filter(|&(id, (token, puts, _))| token && i64::from(s.objects[id].initial) + puts == 1)
        .map(|(id, _)| id)
        .collect();
    let of = &s.of;
    s.token.retain(|at, _| locks.contains(&of[at]));
    s
}

#[cfg(test)]
mod tests {
    use ilgen_trace::AccessKind;

    use super::*;
    use crate::model::VarId;
    use crate::state::State;
    use crate::testkit::Run;

    fn objects(r: &Run) -> Vec<(u64, u64)> {
        shared_objects(&r.traces())
            .iter()
            .map(|o| (o.addr, o.len))
            .collect()
    }

    #[test]
    fn overlapping_ranges_share_only_their_common_bytes() {
        let mut r = Run::new(2);
        r.access(0, 0x100, 8, AccessKind::Write, 1)
            .access(1, 0x104, 8, AccessKind::Read, 2);
        assert_eq!(objects(&r), vec![(0x104, 4)]);
    }

    #[test]
    fn adjacent_variables_stay_apart_even_when_an_access_spans_them() {
        let mut r = Run::new(3);
        r.w(0, 0x100, 1)
            .w(1, 0x100, 2)
            .w(0, 0x104, 3)
            .r(1, 0x104, 4);
        assert_eq!(objects(&r), vec![(0x100, 4), (0x104, 4)]);
        // An 8-byte read by a third thread (a merged sweep) spans both: it touches both objects,
        // and the writes of 0x100 and 0x104 still share no object.
        r.access(2, 0x100, 8, AccessKind::Read, 5);
        assert_eq!(objects(&r), vec![(0x100, 4), (0x104, 4)]);
    }

    #[test]
    fn disjoint_writes_under_one_sweeping_read_are_separate_objects() {
        let mut r = Run::new(3);
        r.access(0, 0x100, 12, AccessKind::Read, 1)
            .w(1, 0x104, 2)
            .w(2, 0x108, 3);
        assert_eq!(objects(&r), vec![(0x104, 4), (0x108, 4)]);
    }

    #[test]
    fn a_gap_keeps_objects_apart() {
        let mut r = Run::new(2);
        r.w(0, 0x100, 1)
            .w(1, 0x100, 2)
            .w(0, 0x108, 3)
            .w(1, 0x108, 4);
        assert_eq!(objects(&r), vec![(0x100, 4), (0x108, 4)]);
    }

    #[test]
    fn read_only_and_single_thread_ranges_are_not_shared() {
        let mut r = Run::new(2);
        r.r(0, 0x100, 1)
            .r(1, 0x100, 2)
            .w(0, 0x200, 3)
            .access(0, 0x200, 8, AccessKind::Write, 4)
            .w(1, 0x300, 5)
            .r(0, 0x304, 6);
        assert_eq!(objects(&r), vec![]);
    }

    #[test]
    fn one_thread_writing_and_another_reading_overlapping_bytes_is_shared() {
        let mut r = Run::new(3);
        r.access(0, 0x100, 2, AccessKind::Write, 1)
            .access(1, 0x101, 4, AccessKind::Read, 2)
            .access(2, 0x100, 16, AccessKind::Read, 3);
        // 0x100: threads 0 and 2, 0 writes; 0x101: all three (another set of accesses, so
        // another object); beyond 0x102 nobody writes.
        assert_eq!(objects(&r), vec![(0x100, 1), (0x101, 1)]);
    }

    #[test]
    fn redundant_accesses_of_a_segment_merge_and_a_wide_access_touches_every_object() {
        let mut r = Run::new(2);
        r.r(0, 0x100, 1)
            .w(0, 0x100, 2)
            .r(0, 0x100, 3)
            .w(1, 0x100, 4)
            .w(1, 0x108, 5)
            .lock(0, 0x900)
            .access(0, 0x100, 16, AccessKind::Read, 6);
        let p = prepare(r.traces());
        assert_eq!(p.vars.len(), 2);
        let events = &p.model.threads[0].events;
        assert_eq!(
            events[0],
            ModelEvent::Access {
                var: 0,
                kind: AccessKind::Write,
                site: 2
            }
        );
        assert!(matches!(events[1], ModelEvent::Sync { .. }));
        let vars: Vec<VarId> = events
            .range(2..events.len())
            .filter_map(|e| match e {
                ModelEvent::Access { var, .. } => Some(*var as VarId),
                ModelEvent::Sync { .. } => None,
            })
            .collect();
        assert_eq!(vars, vec![0, 1]);
        assert_eq!((p.accesses_read, p.accesses_kept), (6, 5));
    }

    fn ops(p: &Program, t: usize) -> Vec<ModelOp> {
        p.model.threads[t]
            .events
            .iter()
            .filter_map(ModelEvent::op)
            .collect()
    }

    /// The two halves of an untimed `pthread_cond_wait(c, m)`.
    fn wait_and_wake(c: u64, m: u64) -> (SyncOp, SyncOp) {
        (
            SyncOp::CondWait {
                cond: c,
                mutex: m,
                timed: false,
            },
            SyncOp::CondWake {
                cond: c,
                mutex: m,
                timed_out: false,
            },
        )
    }

    #[test]
    fn signals_are_matched_to_the_waits_they_released() {
        let (c, m) = (0xc0, 0x90);
        let (wait, wake) = wait_and_wake(c, m);
        let mut r = Run::new(3);
        r.lock(0, m)
            .sync(0, wait) // 2
            .lock(1, m)
            .sync(1, wait) // 4
            .lock(2, m)
            .sync(2, SyncOp::CondSignal { cond: c }) // 6: instance 0
            .sync(2, SyncOp::CondSignal { cond: c }) // 7: instance 1
            .unlock(2, m)
            .sync(1, wake) // woken first: gets the earliest signal
            .unlock(1, m)
            .sync(0, wake)
            .unlock(0, m)
            .lock(2, m)
            .sync(
                2,
                SyncOp::CondWait {
                    cond: c,
                    mutex: m,
                    timed: true,
                },
            )
            .sync(
                2,
                SyncOp::CondWake {
                    cond: c,
                    mutex: m,
                    timed_out: true,
                },
            );
        let p = prepare(r.traces());
        let wake_of = |t| {
            ops(&p, t).into_iter().find_map(|op| match op {
                ModelOp::WaitReturn { wake, .. } => Some(wake),
                _ => None,
            })
        };
        assert_eq!(wake_of(1), Some(Wake::Signal(0)));
        assert_eq!(wake_of(0), Some(Wake::Signal(1)));
        assert_eq!(wake_of(2), Some(Wake::Unsignalled), "timed out");
    }

    #[test]
    fn a_wait_loop_without_wait_is_ordered_after_an_earlier_broadcast() {
        let (c, m) = (0xc0, 0x90);
        let mut r = Run::new(2);
        r.lock(1, m)
            .sync(1, SyncOp::CondBroadcast { cond: c })
            .unlock(1, m)
            .lock(0, m)
            .sync(0, SyncOp::WaitLoopEnter { cond: c })
            .sync(0, SyncOp::WaitLoopExit { cond: c })
            .unlock(0, m);
        let p = prepare(r.traces());
        assert_eq!(
            ops(&p, 0),
            vec![
                ModelOp::Lock { mutex: 0 },
                ModelOp::Nop,
                ModelOp::LoopExit {
                    cond: 0,
                    mutex: Some(0)
                },
                ModelOp::Unlock { mutex: 0 },
            ]
        );
    }

    #[test]
    fn wait_loop_exits_take_the_earliest_signal_not_taken_and_share_broadcasts() {
        let (c, m) = (0xc0, 0x90);
        let signal = SyncOp::CondSignal { cond: c };
        let (wait, wake) = wait_and_wake(c, m);
        let exit = |r: &mut Run, t| {
            r.lock(t, m)
                .sync(t, SyncOp::WaitLoopEnter { cond: c })
                .sync(t, SyncOp::WaitLoopExit { cond: c })
                .unlock(t, m);
        };
        let mut r = Run::new(4);
        r.lock(3, m).sync(3, wait); // a waiter, woken by the first signal
        r.sync(0, signal) // instance 0: the waiter's
            .sync(0, signal) // 1: woke nobody
            .sync(0, signal) // 2: woke nobody
            .sync(3, wake)
            .unlock(3, m)
            .sync(0, SyncOp::CondBroadcast { cond: c }) // 3
            .sync(0, signal); // 4: free, but later than the broadcast
        exit(&mut r, 1); // takes 1
        exit(&mut r, 2); // takes 2
        exit(&mut r, 1); // no signal left: the broadcast
        exit(&mut r, 2); // the broadcast again
        let p = prepare(r.traces());
        let exits = |p: &Program, t| -> Vec<usize> {
            ops(p, t)
                .into_iter()
                .filter_map(|op| match op {
                    ModelOp::LoopExit { cond, .. } => Some(cond),
                    _ => None,
                })
                .collect()
        };
        assert_eq!((exits(&p, 1), exits(&p, 2)), (vec![1, 3], vec![2, 3]));

        // A "ready" broadcast, then signals for something else: exits stay after the broadcast.
        let mut r = Run::new(2);
        r.sync(0, SyncOp::CondBroadcast { cond: c })
            .sync(0, signal)
            .sync(0, signal);
        exit(&mut r, 1);
        exit(&mut r, 1);
        let p = prepare(r.traces());
        assert_eq!(exits(&p, 1), vec![0, 0]);

        // Every earlier signal taken (the third exit): the latest.
        let mut r = Run::new(3);
        r.sync(0, signal).sync(0, signal);
        exit(&mut r, 1);
        exit(&mut r, 2);
        exit(&mut r, 1);
        let p = prepare(r.traces());
        assert_eq!((exits(&p, 1), exits(&p, 2)), (vec![0, 1], vec![1]));
    }

    #[test]
    fn a_waiter_woken_after_an_exit_took_a_job_is_ordered_after_the_later_job() {
        // compress_jobs.c's queue: worker 1 sleeps; main queues job A (signal 0), then job B
        // (signal 1); worker 2 finds A queued and takes it, then worker 1 wakes and takes B.
        let (c, m, a, b) = (0xc0, 0x90, 0x1000, 0x2000);
        let signal = SyncOp::CondSignal { cond: c };
        let (wait, wake) = wait_and_wake(c, m);
        let mut r = Run::new(3);
        r.lock(1, m)
            .sync(1, SyncOp::WaitLoopEnter { cond: c })
            .sync(1, wait);
        r.w(0, a, 1).lock(0, m).sync(0, signal).unlock(0, m);
        r.w(0, b, 2).lock(0, m).sync(0, signal).unlock(0, m);
        r.lock(2, m)
            .sync(2, SyncOp::WaitLoopEnter { cond: c })
            .sync(2, SyncOp::WaitLoopExit { cond: c })
            .unlock(2, m)
            .r(2, a, 3);
        r.sync(1, wake)
            .sync(1, SyncOp::WaitLoopExit { cond: c })
            .unlock(1, m)
            .r(1, b, 4);
        let p = prepare(r.traces());
        let wake_of = ops(&p, 1).into_iter().find_map(|op| match op {
            ModelOp::WaitReturn { wake, .. } => Some(wake),
            _ => None,
        });
        let exit_of = ops(&p, 2).into_iter().find_map(|op| match op {
            ModelOp::LoopExit { cond, .. } => Some(cond),
            _ => None,
        });
        // Each job is read after the signal that follows its writing.
        assert_eq!((wake_of, exit_of), (Some(Wake::Signal(1)), Some(0)));
    }

    #[test]
    fn a_waiter_that_waits_again_takes_no_signal_from_one_that_took_a_job() {
        // Main queues job A (signal 0); worker 2 finds it queued and takes it; main queues job B
        // (signal 1); worker 1, asleep since before A, wakes and takes B; worker 3, asleep as
        // long, wakes to an empty queue and waits again.
        let (c, m, a, b) = (0xc0, 0x90, 0x1000, 0x2000);
        let signal = SyncOp::CondSignal { cond: c };
        let (wait, wake) = wait_and_wake(c, m);
        let mut r = Run::new(4);
        for t in [1, 3] {
            r.lock(t, m)
                .sync(t, SyncOp::WaitLoopEnter { cond: c })
                .sync(t, wait);
        }
        r.w(0, a, 1).lock(0, m).sync(0, signal).unlock(0, m);
        r.lock(2, m)
            .sync(2, SyncOp::WaitLoopEnter { cond: c })
            .sync(2, SyncOp::WaitLoopExit { cond: c })
            .unlock(2, m)
            .r(2, a, 3);
        r.w(0, b, 2).lock(0, m).sync(0, signal).unlock(0, m);
        r.sync(1, wake)
            .sync(1, SyncOp::WaitLoopExit { cond: c })
            .unlock(1, m)
            .r(1, b, 4);
        r.sync(3, wake).pending(3, wait);
        let p = prepare(r.traces());
        let wake_of = |t| {
            ops(&p, t).into_iter().find_map(|op| match op {
                ModelOp::WaitReturn { wake, .. } => Some(wake),
                _ => None,
            })
        };
        let exit_of = ops(&p, 2).into_iter().find_map(|op| match op {
            ModelOp::LoopExit { cond, .. } => Some(cond),
            _ => None,
        });
        assert_eq!(
            (exit_of, wake_of(1), wake_of(3)),
            (Some(0), Some(Wake::Signal(1)), Some(Wake::Signal(1)))
        );
    }

    #[test]
    fn each_use_of_a_barrier_is_its_own_instance() {
        let b = 0xb0;
        let enter = SyncOp::BarrierEnter { barrier: b };
        let exit = SyncOp::BarrierExit {
            barrier: b,
            serial: false,
        };
        let mut r = Run::new(2);
        r.sync(0, enter)
            .sync(1, enter)
            .sync(0, exit)
            .sync(0, enter) // before thread 1 left the first use
            .sync(1, exit)
            .sync(1, enter)
            .pending(0, exit);
        let p = prepare(r.traces());
        assert_eq!(
            p.model.objects.barriers,
            vec![
                BarrierObject {
                    addr: b,
                    parties: 2,
                    released: true
                },
                BarrierObject {
                    addr: b,
                    parties: 2,
                    released: false
                },
            ]
        );
        assert_eq!(ops(&p, 1)[2], ModelOp::BarrierEnter { barrier: 1 });
    }

    #[test]
    fn semaphore_initial_count_is_the_least_the_run_needs() {
        let s = 0x50;
        let mut r = Run::new(2);
        r.sync(0, SyncOp::SemWait { sem: s })
            .sync(1, SyncOp::SemWait { sem: s })
            .sync(0, SyncOp::SemPost { sem: s })
            .sync(
                1,
                SyncOp::SemTryWait {
                    sem: s,
                    acquired: false,
                },
            )
            .sync(1, SyncOp::SemWait { sem: s });
        let p = prepare(r.traces());
        assert_eq!(
            p.model.objects.sems,
            vec![SemObject {
                addr: s,
                initial: 2,
                recorded: None,
            }]
        );
        assert_eq!(
            ops(&p, 1)[1],
            ModelOp::Nop,
            "a failed trywait the observed counts do not explain (1 left)"
        );
    }

    #[test]
    fn semaphore_initial_count_is_the_recorded_one_when_its_init_comes_first() {
        let (s, u, v) = (0x50, 0x60, 0x70);
        let mut r = Run::new(2);
        // s: count 2, its holders never overlapped (1 would do for the observed order).
        r.sync(0, SyncOp::SemInit { sem: s, count: 2 })
            .sync(0, SyncOp::SemWait { sem: s })
            .sync(0, SyncOp::SemPost { sem: s })
            .sync(1, SyncOp::SemWait { sem: s })
            .sync(1, SyncOp::SemPost { sem: s })
            // u: used before any init was recorded (initialised outside instrumented code).
            .sync(1, SyncOp::SemWait { sem: u })
            .sync(0, SyncOp::SemInit { sem: u, count: 0 })
            // v: initialised again with a larger count, which the counter does not follow.
            .sync(0, SyncOp::SemInit { sem: v, count: 0 })
            .sync(0, SyncOp::SemInit { sem: v, count: 1 })
            .sync(1, SyncOp::SemWait { sem: v });
        let p = prepare(r.traces());
        let sem = |addr, initial, recorded| SemObject {
            addr,
            initial,
            recorded,
        };
        assert_eq!(
            p.model.objects.sems,
            vec![sem(s, 2, Some(2)), sem(u, 1, None), sem(v, 1, Some(0))]
        );
        assert_eq!(
            ops(&p, 0)[0],
            ModelOp::Nop,
            "the init itself orders nothing"
        );
        assert_eq!(ops(&p, 1)[0], ModelOp::SemWait { sem: 0, units: 1 });
    }

    #[test]
    fn a_stream_is_a_semaphore_of_bytes_a_read_waits_for() {
        // One channel (inode 0x50, also the address of a real semaphore, which stays apart): main
        // put one byte in before the thread started reading, the thread read 2 bytes once main
        // had written one more, and 1 byte came from a writer the recording did not see.
        let c = 0x50;
        let write = |bytes| SyncOp::ChannelWrite { channel: c, bytes };
        let read = |bytes| SyncOp::ChannelRead { channel: c, bytes };
        let mut r = Run::new(2);
        r.sync(0, write(1))
            .sync(1, SyncOp::SemWait { sem: c })
            .sync(0, write(1))
            .sync(1, read(2))
            .sync(1, read(1))
            .sync(0, SyncOp::SemPost { sem: c });
        let p = prepare(r.traces());
        let sem = |initial| SemObject {
            addr: c,
            initial,
            recorded: None,
        };
        assert_eq!(p.model.objects.sems, vec![sem(1), sem(1)]);
        let (give, take) = (
            |units| ModelOp::SemPost { sem: 0, units },
            |units| ModelOp::SemWait { sem: 0, units },
        );
        assert_eq!(
            ops(&p, 0),
            vec![give(1), give(1), ModelOp::SemPost { sem: 1, units: 1 }]
        );
        assert_eq!(ops(&p, 1)[1..], [take(2), take(1)]);

        // The read of 2 waits for a write: the byte from outside alone is not enough. After it
        // the stream is empty, and the read of 1 waits for the second write.
        let m = &p.model;
        let mut s = State::initial(m);
        assert!(!s.enabled(m, 1, take(2)), "one byte in the stream");
        s.apply(m, 0, give(1));
        assert!(s.enabled(m, 1, take(2)));
        s.apply(m, 1, take(2));
        assert!(!s.enabled(m, 1, take(1)), "the read of 2 took every byte");
        s.apply(m, 0, give(1));
        assert!(s.enabled(m, 1, take(1)));
    }

    #[test]
    fn a_stream_that_carries_one_byte_as_a_token_is_a_mutex() {
        // Main puts the byte in, then both threads take it and give it back; a second stream
        // where thread 1 writes without having read (two tokens) stays a semaphore.
        let (c, d) = (0x50, 0x60);
        let write = |channel| SyncOp::ChannelWrite { channel, bytes: 1 };
        let read = |channel| SyncOp::ChannelRead { channel, bytes: 1 };
        let mut r = Run::new(2);
        r.sync(0, write(c))
            .sync(0, read(c))
            .sync(0, write(c))
            .sync(1, read(c))
            .sync(1, write(c))
            .sync(0, write(d))
            .sync(1, write(d))
            .sync(1, read(d));
        let p = prepare(r.traces());
        assert_eq!(p.model.objects.mutexes.len(), 1);
        assert_eq!(p.model.objects.mutexes[0].addr, c | 1 << 63);
        let (lock, unlock) = (ModelOp::Lock { mutex: 0 }, ModelOp::Unlock { mutex: 0 });
        let put = |sem| ModelOp::SemPost { sem, units: 1 };
        assert_eq!(ops(&p, 0), vec![ModelOp::Nop, lock, unlock, put(1)]);
        assert_eq!(
            ops(&p, 1),
            vec![lock, unlock, put(1), ModelOp::SemWait { sem: 1, units: 1 }]
        );
    }

    #[test]
    fn a_semaphore_initialised_again_after_its_destroy_is_another_one() {
        let s = 0x50;
        let mut r = Run::new(1);
        r.sync(0, SyncOp::SemInit { sem: s, count: 1 })
            .sync(0, SyncOp::SemWait { sem: s })
            .sync(0, SyncOp::SemDestroy { sem: s })
            .sync(0, SyncOp::SemInit { sem: s, count: 3 })
            .sync(0, SyncOp::SemWait { sem: s });
        let p = prepare(r.traces());
        let sem = |initial| SemObject {
            addr: s,
            initial,
            recorded: Some(initial),
        };
        assert_eq!(p.model.objects.sems, vec![sem(1), sem(3)]);
        let (nop, wait) = (ModelOp::Nop, |sem| ModelOp::SemWait { sem, units: 1 });
        assert_eq!(ops(&p, 0), vec![nop, wait(0), nop, nop, wait(1)]);
    }

    #[test]
    fn operations_on_a_destroyed_object_read_it_and_the_destroy_writes_it() {
        let (m, n) = (0x90, 0x98);
        let destroy = |mutex| SyncOp::MutexDestroy { mutex };
        let mut r = Run::new(2);
        // m is destroyed, then initialised again, used and destroyed by thread 1: another
        // object, of one thread. n is never destroyed: its operations are no accesses.
        r.lock(1, m) // seq 1
            .lock(1, n)
            .unlock(1, n)
            .unlock(1, m) // seq 4
            .sync(0, destroy(m)) // seq 5
            .lock(1, m)
            .unlock(1, m)
            .sync(1, destroy(m));
        let p = prepare(r.traces());
        assert_eq!(
            p.vars,
            vec![SharedObject {
                addr: m,
                len: 1,
                epoch: crate::lifetime::NO_EPOCH
            }]
        );
        let accesses = |t: usize| -> Vec<(VarId, AccessKind, ilgen_trace::SiteId)> {
            p.model.threads[t]
                .events
                .iter()
                .filter_map(|e| match *e {
                    ModelEvent::Access { var, kind, site } => Some((var as VarId, kind, site)),
                    ModelEvent::Sync { .. } => None,
                })
                .collect()
        };
        // Each use before its operation, at the operation's site (1000 + seq).
        let read = |site| (0, AccessKind::AtomicRead, site);
        assert_eq!(accesses(1), vec![read(1001), read(1004)]);
        assert_eq!(accesses(0), vec![(0, AccessKind::Write, 1005)]);
        assert!(matches!(
            p.model.threads[1].events.range(0..2).collect::<Vec<_>>()[..],
            [ModelEvent::Access { .. }, ModelEvent::Sync { .. }]
        ));
    }

    #[test]
    fn a_timed_semaphore_wait_takes_the_count_only_when_it_got_it() {
        let s = 0x50;
        let timed = |acquired| SyncOp::SemTimedWait { sem: s, acquired };
        let mut r = Run::new(2);
        r.sync(0, SyncOp::SemInit { sem: s, count: 1 })
            .sync(0, timed(true))
            .sync(1, timed(false)) // timed out
            .pending(1, timed(false)); // still waiting as the run ended
        let p = prepare(r.traces());
        assert_eq!(p.model.objects.sems[0].initial, 1);
        let wait = ModelOp::SemWait { sem: 0, units: 1 };
        assert_eq!(ops(&p, 0), vec![ModelOp::Nop, wait]);
        assert_eq!(ops(&p, 1), vec![ModelOp::Nop, wait]);
    }

    #[test]
    fn failed_tries_fail_while_busy_unless_the_run_does_not_show_why() {
        let (m, l, s) = (0x90, 0xa0, 0x50);
        let try_lock = SyncOp::MutexTryLock {
            mutex: m,
            acquired: false,
        };
        let mut r = Run::new(2);
        r.lock(0, m)
            .sync(1, try_lock) // thread 0 holds m
            .sync(0, try_lock) // its own lock: fails whatever the others do
            .unlock(0, m)
            .sync(1, try_lock) // nobody holds m in the observed order
            .sync(0, SyncOp::RwRdLock { lock: l })
            .sync(
                1,
                SyncOp::RwTryWrLock {
                    lock: l,
                    acquired: false,
                },
            )
            .sync(
                1,
                SyncOp::RwTryRdLock {
                    lock: l,
                    acquired: false,
                },
            ) // readers share: unexplained
            .sync(0, SyncOp::RwUnlock { lock: l })
            .sync(0, SyncOp::SemPost { sem: s })
            .sync(1, SyncOp::SemWait { sem: s })
            .sync(
                0,
                SyncOp::SemTryWait {
                    sem: s,
                    acquired: false,
                },
            );
        let p = prepare(r.traces());
        let fail = |target| ModelOp::TryFail { target };
        assert_eq!(
            ops(&p, 1),
            vec![
                fail(TryTarget::Mutex(0)),
                ModelOp::Nop,
                fail(TryTarget::RwWrite(0)),
                ModelOp::Nop,
                ModelOp::SemWait { sem: 0, units: 1 },
            ]
        );
        assert_eq!(ops(&p, 0)[1], ModelOp::Nop);
        assert_eq!(ops(&p, 0)[6], fail(TryTarget::Sem(0)));
        // What kept each busy in the run: thread 1's wait (every wait before the trywait), thread
        // 0's lock, thread 0's read lock (no accesses: event indices count sync events).
        let at = |thread, index| crate::model::At { thread, index };
        assert_eq!(
            p.model.sources().busy_of.iter().collect::<Vec<_>>(),
            vec![
                (&at(0, 6), &vec![at(1, 4)]),
                (&at(1, 0), &vec![at(0, 0)]),
                (&at(1, 2), &vec![at(0, 3)]),
            ]
        );
    }

    #[test]
    fn locks_resolve_by_outcome_and_holding() {
        let (m, n) = (0x90, 0x98);
        let mut r = Run::new(1);
        r.unlock(0, n) // taken by uninstrumented code: nothing to release
            .sync(
                0,
                SyncOp::MutexTryLock {
                    mutex: m,
                    acquired: false,
                },
            )
            .sync(
                0,
                SyncOp::MutexTryLock {
                    mutex: m,
                    acquired: true,
                },
            )
            .lock(0, m) // relock while holding: a recursive mutex
            .unlock(0, m)
            .unlock(0, m)
            .pending(
                0,
                SyncOp::MutexTimedLock {
                    mutex: m,
                    acquired: false,
                },
            );
        let p = prepare(r.traces());
        // Objects are numbered in the order first seen.
        let (n, m) = (0, 1);
        assert_eq!(
            ops(&p, 0),
            vec![
                ModelOp::Nop,
                ModelOp::Nop,
                ModelOp::Lock { mutex: m },
                ModelOp::Lock { mutex: m },
                ModelOp::Unlock { mutex: m },
                ModelOp::Unlock { mutex: m },
                ModelOp::Lock { mutex: m },
            ]
        );
        assert!(p.model.objects.mutexes[m].recursive);
        assert!(!p.model.objects.mutexes[n].recursive);
    }
}
