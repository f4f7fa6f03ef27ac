//! The reorder model: every order of the recorded sync operations that their semantics allow.
//!
//! Takes nothing itself (prepare builds it from a trace); gives [`Model`], a plain data structure:
//! per thread its events in program order (memory accesses to shared objects and every sync
//! operation, each resolved to the semantics it has in the model: [`ModelOp`]) and the sync
//! objects those operations act on ([`SyncObjects`]: mutexes, rwlocks, semaphores, condition
//! instances, barrier instances). It is independent of any solver: the native solver
//! ([`crate::state`], [`crate::solve`]) reads it, and a CSP_M back end can print it
//! (one process per thread, one per object). [`Model::restrict`] keeps the accesses to one
//! variable, as the paper builds one model per shared variable.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::{Arc, OnceLock};

use ilgen_trace::{AccessKind, SiteId, SyncOp, ThreadId};

/// Index of a shared object in [`crate::prepare::Program::vars`].
pub type VarId = usize;

/// `before` (a sync event) must have run before `after` (a sync event) runs: an edge that keeps
/// what a deciding read of `var` saw ([`crate::reads_from`] makes them): its writer's segment
/// before its own, or, for a waiting loop's read, its own before the next writer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RfEdge {
    pub after: At,
    pub before: At,
    pub var: VarId,
    /// The deciding read (an access event) the edge keeps.
    pub read: At,
}

/// One event of a model: thread index and index among the thread's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct At {
    pub thread: usize,
    pub index: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    pub threads: Vec<ModelThread>,
    pub objects: SyncObjects,
    /// Derived from `threads` by [`Model::new`].
    sources: Sources,
    /// Built by the first [`Model::restrict`]: a run has thousands of shared variables, and a
    /// scan of every event per variable made restricting quadratic.
    index: Derived,
}

/// The [`EventIndex`], once built. It follows from the threads, so two models are equal or not
/// by their threads whether either has built it yet.
#[derive(Clone, Debug, Default)]
struct Derived(OnceLock<EventIndex>);

impl PartialEq for Derived {
    fn eq(&self, _: &Derived) -> bool {
        true
    }
}

impl Eq for Derived {}

/// Where each thread's sync events and each variable's accesses are, by index, and the
/// reads-from edges grouped by the order they ask for.
#[derive(Clone, Debug, Default)]
struct EventIndex {
    /// Per thread, the indices of its sync events. In `u32`, and each list sized exactly: the
    /// index lives as long as the model, and has an entry per event of it.
    syncs: Vec<Vec<u32>>,
    /// Per variable, its accesses as (thread, index), by thread, then index.
    accesses: Vec<Vec<(u32, u32)>>,
    /// Per distinct (`after`, `before`) of [`Sources::reads_from`], in its order, the edges'
    /// (`var`, `read`). A compressor's run had 404,216 edges but 3,012 distinct orders: a model of
    /// one variable keeps an order if any of its reads still needs it.
    orders: Vec<Order>,
}

/// `before` must run before `after` for these reads. Each event comes with the count of its
/// thread's sync events before it: a restricted model keeps them all, so its index there is that
/// count plus the kept accesses before it, found without a search over the thread's events (a
/// model per variable, thousands of variables, an order per hand-off).
#[derive(Clone, Debug)]
struct Order {
    after: At,
    before: At,
    syncs_before: (u32, u32),
    reads: Vec<OrderRead>,
}

/// A deciding read of `var` that an [`Order`] keeps.
#[derive(Clone, Debug)]
struct OrderRead {
    var: VarId,
    read: At,
    /// Its thread's sync events before it.
    syncs_before: u32,
    /// The index of the first event of its segment (right after its thread's last constraining
    /// event before it).
    segment: u32,
    /// The constraining event that ends its segment (its index, and its thread's sync events
    /// before it), if the thread has one after the read.
    end: Option<(u32, u32)>,
}

impl EventIndex {
    fn of(threads: &[ModelThread], edges: &[RfEdge]) -> EventIndex {
        let mut counts: Vec<usize> = Vec::new();
        for e in threads.iter().flat_map(|t| &t.events) {
            if let ModelEvent::Access { var, .. } = e {
                let var = *var as VarId;
                if counts.len() <= var {
                    counts.resize(var + 1, 0);
                }
                counts[var] += 1;
            }
        }
        let mut index = EventIndex {
            syncs: threads
                .iter()
                .map(|t| Vec::with_capacity(t.observed.len()))
                .collect(),
            accesses: counts.into_iter().map(Vec::with_capacity).collect(),
            orders: Vec::new(),
        };
        for (thread, t) in threads.iter().enumerate() {
            for (i, e) in t.events.iter().enumerate() {
                match e {
                    ModelEvent::Sync { .. } => index.syncs[thread].push(i as u32),
                    ModelEvent::Access { var, .. } => {
                        index.accesses[*var as VarId].push((thread as u32, i as u32));
                    }
                }
            }
        }
        let syncs_before = |at: At| -> u32 {
            let syncs = &index.syncs[at.thread];
            syncs.partition_point(|&s| (s as usize) < at.index) as u32
        };
        let mut orders: Vec<Order> = Vec::new();
        for e in edges {
            let read_syncs = syncs_before(e.read);
            let events = &threads[e.read.thread].events;
            let segment = index.syncs[e.read.thread][..read_syncs as usize]
                .iter()
                .rev()
                .find(|&&s| events[s as usize].constrains())
                .map_or(0, |&s| s + 1);
            let end = index.syncs[e.read.thread][read_syncs as usize..]
                .iter()
                .zip(read_syncs..)
                .find(|(&s, _)| events[s as usize].constrains())
                .map(|(&s, before)| (s, before));
            let read = OrderRead {
                var: e.var,
                read: e.read,
                syncs_before: read_syncs,
                segment,
                end,
            };
            match orders.last_mut() {
                Some(o) if (o.after, o.before) == (e.after, e.before) => o.reads.push(read),
                _ => orders.push(Order {
                    after: e.after,
                    before: e.before,
                    syncs_before: (syncs_before(e.after), syncs_before(e.before)),
                    reads: vec![read],
                }),
            }
        }
        index.orders = orders;
        index
    }

    /// The accesses of `var` by `thread` (none for `None`), by index.
    fn accesses_of(&self, thread: usize, var: Option<VarId>) -> &[(u32, u32)] {
        let all = var
            .and_then(|v| self.accesses.get(v))
            .map_or(&[][..], |a| a);
        let from = all.partition_point(|a| (a.0 as usize) < thread);
        let to = all.partition_point(|a| a.0 as usize <= thread);
        &all[from..to]
    }

    /// The indices of `thread`'s events a model of `var` keeps (every sync event, and the
    /// accesses of `var`; `None`: sync events only), in order.
    fn kept(&self, thread: usize, var: Option<VarId>) -> Vec<usize> {
        let syncs = &self.syncs[thread];
        let own = self.accesses_of(thread, var);
        let accesses = own.iter().map(|a| a.1 as usize);
        let mut kept = Vec::with_capacity(syncs.len() + own.len());
        let mut syncs = syncs.iter().map(|&s| s as usize).peekable();
        for a in accesses {
            while let Some(s) = syncs.next_if(|&s| s < a) {
                kept.push(s);
            }
            kept.push(a);
        }
        kept.extend(syncs);
        kept
    }
}

/// Where each event others wait for is, per thread, condition instance and barrier instance:
/// how the solvers tell from thread positions alone whether a thread was forked or ended, an
/// instance signalled, a barrier entered, or the process exited.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sources {
    pub fork_of: Vec<Option<At>>,
    pub end_of: Vec<Option<At>>,
    pub signal_of: Vec<Option<At>>,
    pub enters_of: Vec<Vec<At>>,
    /// The [`ModelOp::Exit`] that ends the process, if the run had one.
    pub exit_of: Option<At>,
    /// Per condition instance: the waits it wakes that no wait loop encloses, as (thread, index
    /// of the wait's [`ModelOp::WaitRelease`]). Such a wait has no predicate to re-check: a signal
    /// that comes before the wait is entered is lost to it (a missed signal).
    pub bare_waits_of: Vec<Vec<(usize, usize)>>,
    /// Per [`ModelOp::TryFail`] whose object the observed order shows busy when it ran: the
    /// events that made it so. A mutex or rwlock: the acquisition of one other holder (the
    /// writer if there is one). A semaphore: every wait on it before (with them all, the count
    /// cannot be above the observed zero). The cut path runs these before the failure, as the run
    /// did; other orders may keep the object busy otherwise. A failure missing here was not busy
    /// in the observed order (see [`Model::unexplained_try_failures`]).
    pub busy_of: BTreeMap<At, Vec<At>>,
    /// Ordering edges that keep what each deciding read saw, sorted by the event that waits
    /// ([`crate::reads_from`]); set by [`Model::set_reads_from`], empty unless the binary marked
    /// deciding reads.
    pub reads_from: Vec<RfEdge>,
    /// Per thread, per event index (and one past its last event): where the edges of
    /// `reads_from` whose `after` is at or past that event begin; empty without edges. The
    /// exhaustive search asks [`Model::rf_needs`] for every step it tries, and a binary search of
    /// the edges there was a quarter of app_tpool's detect.
    rf_from: Vec<Vec<u32>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelThread {
    pub tid: ThreadId,
    pub events: Vec<ModelEvent>,
    /// What the trace recorded of each sync event, in program order ([`ModelEvent::Sync`]'s
    /// `sync`): apart from the events, so that an event stays small, and shared by the models
    /// [restricted](Model::restrict) from this one, which keep every sync event.
    pub observed: Arc<[Observed]>,
}

/// 16 bytes: a model holds one per sync operation and per access kept, and each unit of work
/// solved in parallel a copy of the sync events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelEvent {
    /// The thread accessed shared object `var` (a [`VarId`]) in this segment (one record per
    /// object and segment: the dominant kind, the first site of that kind).
    Access {
        var: u32,
        kind: AccessKind,
        site: SiteId,
    },
    /// The thread's `sync`-th sync operation (its [`Observed::op_index`], the index into
    /// [`ModelThread::observed`]).
    Sync { op: PackedOp, sync: u32 },
}

/// A [`ModelOp`] in 12 bytes, as a [`ModelEvent`] holds it: which operation, and its object
/// indices as `u32` ([`PackedOp::get`] gives it back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedOp {
    kind: OpKind,
    a: u32,
    b: u32,
}

/// [`ModelOp`]'s variants, with the variant of a [`Wake`], of a [`TryTarget`] and whether a loop
/// exit names a mutex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpKind {
    Start,
    End,
    Fork,
    Join,
    Lock,
    Unlock,
    ReadLock,
    WriteLock,
    RwUnlock,
    WaitRelease,
    WaitReturnSignal,
    WaitReturnUnsignalled,
    WaitReturnNever,
    Signal,
    LoopExit,
    LoopExitWithMutex,
    BarrierEnter,
    BarrierExit,
    SemWait,
    SemPost,
    TryMutex,
    TryRwRead,
    TryRwWrite,
    TrySem,
    Exit,
    Nop,
}

impl From<ModelOp> for PackedOp {
    fn from(op: ModelOp) -> PackedOp {
        // Every object of the model is named by some event of it, and a model holds fewer than
        // 2^32 events of a thread.
        let i = |x: usize| u32::try_from(x).expect("fewer than 2^32 objects of a kind");
        let (kind, a, b) = match op {
            ModelOp::Start { forked } => (OpKind::Start, u32::from(forked), 0),
            ModelOp::End => (OpKind::End, 0, 0),
            ModelOp::Fork { child } => (OpKind::Fork, i(child), 0),
            ModelOp::Join { child } => (OpKind::Join, i(child), 0),
            ModelOp::Lock { mutex } => (OpKind::Lock, i(mutex), 0),
            ModelOp::Unlock { mutex } => (OpKind::Unlock, i(mutex), 0),
            ModelOp::ReadLock { rw } => (OpKind::ReadLock, i(rw), 0),
            ModelOp::WriteLock { rw } => (OpKind::WriteLock, i(rw), 0),
            ModelOp::RwUnlock { rw } => (OpKind::RwUnlock, i(rw), 0),
            ModelOp::WaitRelease { mutex } => (OpKind::WaitRelease, i(mutex), 0),
            ModelOp::WaitReturn { mutex, wake } => match wake {
                Wake::Signal(cond) => (OpKind::WaitReturnSignal, i(mutex), i(cond)),
                Wake::Unsignalled => (OpKind::WaitReturnUnsignalled, i(mutex), 0),
                Wake::Never => (OpKind::WaitReturnNever, i(mutex), 0),
            },
            ModelOp::Signal { cond } => (OpKind::Signal, i(cond), 0),
            ModelOp::LoopExit { cond, mutex } => match mutex {
                Some(m) => (OpKind::LoopExitWithMutex, i(cond), i(m)),
                None => (OpKind::LoopExit, i(cond), 0),
            },
            ModelOp::BarrierEnter { barrier } => (OpKind::BarrierEnter, i(barrier), 0),
            ModelOp::BarrierExit { barrier } => (OpKind::BarrierExit, i(barrier), 0),
            ModelOp::SemWait { sem } => (OpKind::SemWait, i(sem), 0),
            ModelOp::SemPost { sem } => (OpKind::SemPost, i(sem), 0),
            ModelOp::TryFail { target } => match target {
                TryTarget::Mutex(m) => (OpKind::TryMutex, i(m), 0),
                TryTarget::RwRead(rw) => (OpKind::TryRwRead, i(rw), 0),
                TryTarget::RwWrite(rw) => (OpKind::TryRwWrite, i(rw), 0),
                TryTarget::Sem(sem) => (OpKind::TrySem, i(sem), 0),
            },
            ModelOp::Exit => (OpKind::Exit, 0, 0),
            ModelOp::Nop => (OpKind::Nop, 0, 0),
        };
        PackedOp { kind, a, b }
    }
}

impl PackedOp {
    #[inline]
    pub fn get(self) -> ModelOp {
        let (a, b) = (self.a as usize, self.b as usize);
        match self.kind {
            OpKind::Start => ModelOp::Start { forked: a != 0 },
            OpKind::End => ModelOp::End,
            OpKind::Fork => ModelOp::Fork { child: a },
            OpKind::Join => ModelOp::Join { child: a },
            OpKind::Lock => ModelOp::Lock { mutex: a },
            OpKind::Unlock => ModelOp::Unlock { mutex: a },
            OpKind::ReadLock => ModelOp::ReadLock { rw: a },
            OpKind::WriteLock => ModelOp::WriteLock { rw: a },
            OpKind::RwUnlock => ModelOp::RwUnlock { rw: a },
            OpKind::WaitRelease => ModelOp::WaitRelease { mutex: a },
            OpKind::WaitReturnSignal => ModelOp::WaitReturn {
                mutex: a,
                wake: Wake::Signal(b),
            },
            OpKind::WaitReturnUnsignalled => ModelOp::WaitReturn {
                mutex: a,
                wake: Wake::Unsignalled,
            },
            OpKind::WaitReturnNever => ModelOp::WaitReturn {
                mutex: a,
                wake: Wake::Never,
            },
            OpKind::Signal => ModelOp::Signal { cond: a },
            OpKind::LoopExit => ModelOp::LoopExit {
                cond: a,
                mutex: None,
            },
            OpKind::LoopExitWithMutex => ModelOp::LoopExit {
                cond: a,
                mutex: Some(b),
            },
            OpKind::BarrierEnter => ModelOp::BarrierEnter { barrier: a },
            OpKind::BarrierExit => ModelOp::BarrierExit { barrier: a },
            OpKind::SemWait => ModelOp::SemWait { sem: a },
            OpKind::SemPost => ModelOp::SemPost { sem: a },
            OpKind::TryMutex => ModelOp::TryFail {
                target: TryTarget::Mutex(a),
            },
            OpKind::TryRwRead => ModelOp::TryFail {
                target: TryTarget::RwRead(a),
            },
            OpKind::TryRwWrite => ModelOp::TryFail {
                target: TryTarget::RwWrite(a),
            },
            OpKind::TrySem => ModelOp::TryFail {
                target: TryTarget::Sem(a),
            },
            OpKind::Exit => ModelOp::Exit,
            OpKind::Nop => ModelOp::Nop,
        }
    }
}

/// A [`ModelThread`] built event by event, in program order.
pub struct ThreadBuilder {
    tid: ThreadId,
    pub(crate) events: Vec<ModelEvent>,
    observed: Vec<Observed>,
}

impl ThreadBuilder {
    pub fn new(tid: ThreadId) -> ThreadBuilder {
        ThreadBuilder::with_capacity(tid, 0, 0)
    }

    /// Room for `events` events, `syncs` of them sync events: reserved once rather than doubled
    /// as they come (up to twice the thread's size in address space while it is built).
    pub fn with_capacity(tid: ThreadId, events: usize, syncs: usize) -> ThreadBuilder {
        ThreadBuilder {
            tid,
            events: Vec::with_capacity(events),
            observed: Vec::with_capacity(syncs),
        }
    }

    pub fn access(&mut self, var: VarId, kind: AccessKind, site: SiteId) -> &mut ThreadBuilder {
        // A shared object has an access of its own in the model, and a thread of the model
        // fewer than 2^32 events.
        let var = u32::try_from(var).expect("fewer than 2^32 shared objects");
        self.events.push(ModelEvent::Access { var, kind, site });
        self
    }

    /// The next sync operation: `observed.op_index` is its number among the thread's.
    pub fn sync(&mut self, op: ModelOp, observed: Observed) -> &mut ThreadBuilder {
        let sync = self.observed.len() as u32;
        self.events.push(ModelEvent::Sync {
            op: op.into(),
            sync,
        });
        self.observed.push(Observed {
            op_index: sync,
            ..observed
        });
        self
    }

    pub fn build(mut self) -> ModelThread {
        // Held for the whole analysis: without the slack of growing.
        self.events.shrink_to_fit();
        ModelThread {
            tid: self.tid,
            events: self.events,
            observed: self.observed.into(),
        }
    }
}

/// What the trace recorded of a sync operation: the schedule names it by these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observed {
    /// Process-wide order of the run ([`ilgen_trace::PENDING`] if it never completed).
    pub seq: u64,
    /// This is the thread's `op_index`-th sync operation (0-based): replay matches by it.
    pub op_index: u32,
    pub site: SiteId,
    pub op: SyncOp,
}

/// A sync operation's meaning in the model. Thread and object fields are indices into
/// [`Model::threads`] and the vectors of [`SyncObjects`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelOp {
    /// `forked`: some recorded thread forks this one, so it starts only after that fork.
    Start {
        forked: bool,
    },
    End,
    Fork {
        child: usize,
    },
    /// Enabled once `child` has executed its `End`.
    Join {
        child: usize,
    },
    /// Mutex and spin lock acquisitions, successful try and timed locks included.
    Lock {
        mutex: usize,
    },
    /// Only the holder unlocks; a recursive mutex is free when its count drops to zero.
    Unlock {
        mutex: usize,
    },
    ReadLock {
        rw: usize,
    },
    WriteLock {
        rw: usize,
    },
    RwUnlock {
        rw: usize,
    },
    /// `pthread_cond_wait` entered: releases `mutex`.
    WaitRelease {
        mutex: usize,
    },
    /// The wait returned: needs its wake-up and takes `mutex` again.
    WaitReturn {
        mutex: usize,
        wake: Wake,
    },
    /// A signal or broadcast: the release of condition instance `cond`.
    Signal {
        cond: usize,
    },
    /// A wait loop was left, in the run without calling the wait: the awaited predicate held.
    /// In the model it is left once instance `cond` was signalled; until then the thread would
    /// have called the wait, so it may release `mutex` (the condition variable's mutex, when some
    /// wait on it names it) and take it back to leave.
    LoopExit {
        cond: usize,
        mutex: Option<usize>,
    },
    BarrierEnter {
        barrier: usize,
    },
    /// Enabled once every party of the instance has entered.
    BarrierExit {
        barrier: usize,
    },
    SemWait {
        sem: usize,
    },
    SemPost {
        sem: usize,
    },
    /// A try operation that failed (trylock, spin trylock, tryrdlock, trywrlock, sem_trywait):
    /// it neither blocks nor acquires, and leaves every object as it is, but it can happen only
    /// while its object is busy ([`TryTarget`] says when). Where it cannot, the real operation would
    /// have succeeded and the thread gone another way: a thread stopped at it is not blocked (no
    /// deadlock), the model just does not follow it further.
    TryFail {
        target: TryTarget,
    },
    /// The exit that ended the process (`exit()`, `quick_exit()`, `_exit()`, `_Exit()`, the return
    /// from `main`), the last operation the run completed: other threads' steps may come before it
    /// in any order, none after it. An exit the run shows others going on after (exit handlers that
    /// ran while other threads still took steps, or took steps themselves) is a [`ModelOp::Nop`].
    Exit,
    /// Constrains nothing in the model: a failed try operation the observed order does not show
    /// busy (its object taken by uninstrumented code, or released just before the failed attempt
    /// was recorded), one that failed on a lock its own thread held, a timed lock that timed out,
    /// detach, wait-loop entry, a wait-loop exit no signal is known for, an unlock of a lock the
    /// thread did not hold (taken by uninstrumented code), a join of an unrecorded thread, an
    /// operation left pending while the thread went on (cancelled in it).
    Nop,
}

/// What a failed try operation tried, and so when it fails ([`ModelOp::TryFail`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TryTarget {
    /// `pthread_mutex_trylock`, `pthread_spin_trylock`: fails while another thread holds the mutex.
    Mutex(usize),
    /// `pthread_rwlock_tryrdlock`: fails while another thread holds the rwlock for writing.
    RwRead(usize),
    /// `pthread_rwlock_trywrlock`: fails while another thread holds the rwlock, for writing or
    /// for reading.
    RwWrite(usize),
    /// `sem_trywait`: fails while the semaphore's count is zero.
    Sem(usize),
}

/// What released a condition wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// The signal or broadcast of this condition instance.
    Signal(usize),
    /// It returned without a signal (timed out or spurious): nothing to wait for.
    Unsignalled,
    /// It never returned in the run (PENDING) and no signal is known that could release it.
    Never,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncObjects {
    pub mutexes: Vec<MutexObject>,
    /// Addresses of the rwlocks.
    pub rwlocks: Vec<u64>,
    pub sems: Vec<SemObject>,
    /// Address of each condition instance (one per signal or broadcast).
    pub conds: Vec<u64>,
    pub barriers: Vec<BarrierObject>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MutexObject {
    pub addr: u64,
    /// Some thread locked it while holding it, so the run's mutex is recursive.
    pub recursive: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SemObject {
    pub addr: u64,
    /// The count the model starts from: the recorded one, or the smallest the observed run needs.
    pub initial: u32,
    /// The count `sem_init` or `sem_open` gave it in the run, if that was recorded.
    pub recorded: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierObject {
    pub addr: u64,
    /// Threads that entered this instance.
    pub parties: u32,
    /// Some thread left it in the run; if none did, its exits never happen in the model either.
    pub released: bool,
}

impl ModelEvent {
    /// Whether the solver must interleave at this event: accesses and [`ModelOp::Nop`] run along
    /// with their thread's segment.
    pub fn constrains(&self) -> bool {
        matches!(self, ModelEvent::Sync { op, .. } if op.kind != OpKind::Nop)
    }

    /// The operation of a sync event.
    #[inline]
    pub fn op(&self) -> Option<ModelOp> {
        match self {
            ModelEvent::Sync { op, .. } => Some(op.get()),
            ModelEvent::Access { .. } => None,
        }
    }

    pub fn is_sync(&self) -> bool {
        matches!(self, ModelEvent::Sync { .. })
    }
}

impl ModelThread {
    /// Whether event `index` is a try or timed operation that took its object in the run: where
    /// the object is not free, the real call fails or times out instead of waiting for good, so a
    /// thread stopped before it is not blocked, and it requests no lock of the lock graph.
    pub fn acquires_by_try(&self, index: usize) -> bool {
        self.observed_at(index).and_then(|o| o.op.acquired()) == Some(true)
    }

    /// What the trace recorded of event `index`, a sync event.
    pub fn observed_at(&self, index: usize) -> Option<&Observed> {
        match self.events.get(index)? {
            ModelEvent::Sync { sync, .. } => self.observed.get(*sync as usize),
            ModelEvent::Access { .. } => None,
        }
    }

    /// The recorded operation of event `e` of this thread, a sync event.
    pub fn observed_of(&self, e: &ModelEvent) -> Option<&Observed> {
        match e {
            ModelEvent::Sync { sync, .. } => self.observed.get(*sync as usize),
            ModelEvent::Access { .. } => None,
        }
    }
}

/// [`Model::observed_order`], as it goes.
pub struct ObservedOrder<'a> {
    model: &'a Model,
    /// Per thread: where its events stop, the next event to look at, the seq of its last
    /// completed operation so far.
    end: Vec<usize>,
    next: Vec<usize>,
    last: Vec<u64>,
    /// Each thread's next sync event, by (seq or the seq before it, thread, index), least first.
    heads: BinaryHeap<Reverse<(u64, usize, usize)>>,
}

impl ObservedOrder<'_> {
    fn push_next(&mut self, thread: usize) {
        let t = &self.model.threads[thread];
        while self.next[thread] < self.end[thread] {
            let index = self.next[thread];
            self.next[thread] += 1;
            if let Some(o) = t.observed_at(index) {
                if o.seq != ilgen_trace::PENDING {
                    self.last[thread] = o.seq;
                }
                self.heads.push(Reverse((self.last[thread], thread, index)));
                return;
            }
        }
    }
}

impl Iterator for ObservedOrder<'_> {
    type Item = At;

    fn next(&mut self) -> Option<At> {
        let Reverse((_, thread, index)) = self.heads.pop()?;
        self.push_next(thread);
        Some(At { thread, index })
    }
}

impl Model {
    /// The model with every source but [`Sources::busy_of`].
    pub(crate) fn derive(threads: Vec<ModelThread>, objects: SyncObjects) -> Model {
        let mut s = Sources {
            fork_of: vec![None; threads.len()],
            end_of: vec![None; threads.len()],
            signal_of: vec![None; objects.conds.len()],
            enters_of: vec![Vec::new(); objects.barriers.len()],
            exit_of: None,
            bare_waits_of: vec![Vec::new(); objects.conds.len()],
            busy_of: BTreeMap::new(),
            reads_from: Vec::new(),
            rf_from: Vec::new(),
        };
        for (thread, t) in threads.iter().enumerate() {
            // Wait loops open around this point (their condition variables; 0: unknown), and the
            // index of the wait last entered outside any of them.
            let mut open_loops: Vec<u64> = Vec::new();
            let mut bare_release = None;
            for (index, e) in t.events.iter().enumerate() {
                let at = At { thread, index };
                let ModelEvent::Sync { op, sync } = e else {
                    continue;
                };
                let observed = &t.observed[*sync as usize];
                match observed.op {
                    SyncOp::WaitLoopEnter { cond } => open_loops.push(cond),
                    SyncOp::WaitLoopExit { cond } => {
                        if let Some(i) = open_loops.iter().rposition(|&c| c == cond) {
                            open_loops.remove(i);
                        }
                    }
                    _ => {}
                }
                match op.get() {
                    ModelOp::WaitRelease { .. } => {
                        let cond = observed.op.object();
                        let looped = open_loops.iter().any(|&c| c == 0 || Some(c) == cond);
                        bare_release = (!looped).then_some(index);
                    }
                    ModelOp::WaitReturn {
                        wake: Wake::Signal(cond),
                        ..
                    } => {
                        if let (Some(release), Some(list)) =
                            (bare_release.take(), s.bare_waits_of.get_mut(cond))
                        {
                            list.push((thread, release));
                        }
                    }
                    // Indices come from prepare; `get_mut` keeps a hand-made model from panicking.
                    ModelOp::Fork { child } => {
                        if let Some(slot) = s.fork_of.get_mut(child) {
                            *slot = Some(at);
                        }
                    }
                    ModelOp::End => s.end_of[thread] = Some(at),
                    ModelOp::Exit => s.exit_of = Some(at),
                    ModelOp::Signal { cond } => {
                        if let Some(slot) = s.signal_of.get_mut(cond) {
                            *slot = Some(at);
                        }
                    }
                    ModelOp::BarrierEnter { barrier } => {
                        if let Some(list) = s.enters_of.get_mut(barrier) {
                            list.push(at);
                        }
                    }
                    _ => {}
                }
            }
        }
        Model {
            threads,
            objects,
            sources: s,
            index: Derived::default(),
        }
    }

    /// The [`ModelOp::TryFail`] events whose object the observed order does not show busy: the
    /// run's failure is not explained by the recorded operations.
    pub fn unexplained_try_failures(&self) -> Vec<At> {
        let mut out = Vec::new();
        for (thread, t) in self.threads.iter().enumerate() {
            for (index, e) in t.events.iter().enumerate() {
                let at = At { thread, index };
                if matches!(e.op(), Some(ModelOp::TryFail { .. }))
                    && !self.sources.busy_of.contains_key(&at)
                {
                    out.push(at);
                }
            }
        }
        out
    }

    pub fn sources(&self) -> &Sources {
        &self.sources
    }

    /// Sets [`Sources::reads_from`].
    pub fn set_reads_from(&mut self, mut edges: Vec<RfEdge>) {
        edges.sort_unstable();
        self.put_reads_from(edges);
        self.index = Derived::default();
    }

    /// Sets [`Sources::reads_from`] to `edges`, sorted, and indexes them by the event that waits.
    fn put_reads_from(&mut self, edges: Vec<RfEdge>) {
        self.sources.rf_from = if edges.is_empty() {
            Vec::new()
        } else {
            let mut next = 0;
            (0..self.threads.len())
                .map(|thread| {
                    (0..=self.threads[thread].events.len())
                        .map(|index| {
                            let at = At { thread, index };
                            while edges.get(next).is_some_and(|e| e.after < at) {
                                next += 1;
                            }
                            next as u32
                        })
                        .collect()
                })
                .collect()
        };
        self.sources.reads_from = edges;
    }

    /// The sync events that must have run before the sync event `at` runs, to keep what the
    /// deciding reads saw ([`Sources::reads_from`]).
    pub fn rf_needs(&self, at: At) -> impl Iterator<Item = At> + '_ {
        let from = &self.sources.rf_from;
        let range = from
            .get(at.thread)
            .and_then(|f| Some(*f.get(at.index)? as usize..*f.get(at.index + 1)? as usize))
            .unwrap_or(0..0);
        self.sources.reads_from[range].iter().map(|e| e.before)
    }

    /// Sets [`Sources::busy_of`], which [`Model::new`] derives by running the observed order.
    pub(crate) fn set_busy_of(&mut self, busy_of: BTreeMap<At, Vec<At>>) {
        self.sources.busy_of = busy_of;
    }

    /// The model of one variable: its accesses and every sync event (`None`: sync events only, the
    /// deadlock model). Also gives, per thread, the index in `self` of each kept event.
    pub fn restrict(&self, var: Option<VarId>) -> (Model, Vec<Vec<usize>>) {
        let index = self
            .index
            .0
            .get_or_init(|| EventIndex::of(&self.threads, &self.sources.reads_from));
        let mut origin = Vec::with_capacity(self.threads.len());
        let threads: Vec<ModelThread> = self
            .threads
            .iter()
            .enumerate()
            .map(|(thread, t)| {
                let keep = index.kept(thread, var);
                let events = keep.iter().map(|&i| t.events[i]).collect();
                origin.push(keep);
                ModelThread {
                    tid: t.tid,
                    events,
                    observed: Arc::clone(&t.observed),
                }
            })
            .collect();
        let mut model = Model::derive(threads, self.objects.clone());
        // Every sync event is kept: what made a failed try fail is the same, at its new index.
        let local = |at: &At| {
            let index = origin[at.thread].binary_search(&at.index).ok()?;
            Some(At {
                thread: at.thread,
                index,
            })
        };
        model.sources.busy_of = self
            .sources
            .busy_of
            .iter()
            .filter_map(|(at, busy)| {
                Some((local(at)?, busy.iter().map(local).collect::<Option<_>>()?))
            })
            .collect();
        // A model of one object lets the reads of that object see another write: its race is a
        // change of what they see. So are the reads that come after an access of the object in
        // their segment: the race can be taken at that access, before the read happens (`while
        // (q.len || working)` races on `q.len` whatever `working` would then have read). Such an
        // edge still holds from the end of the read's segment on: the race is taken inside the
        // segment or not at all, and a thread that went on past a read that saw another pointer
        // would go elsewhere (a worker's `p->head = t->next` read NULL where the run read the
        // next task; it would not free the task the submitter then links to). An edge that keeps
        // another thread's write after the read is dropped.
        let own: Vec<&[(u32, u32)]> = (0..self.threads.len())
            .map(|thread| index.accesses_of(thread, var))
            .collect();
        // The kept accesses of `at`'s thread before it.
        let accesses_before =
            |at: At| own[at.thread].partition_point(|a| (a.1 as usize) < at.index);
        let kept_at = |at: At, syncs_before: u32| At {
            thread: at.thread,
            index: syncs_before as usize + accesses_before(at),
        };
        let touches = |r: &OrderRead, v: VarId| {
            let before = accesses_before(r.read);
            r.var == v || (before > 0 && own[r.read.thread][before - 1].1 >= r.segment)
        };
        // The edges of the orders as they are, in the order of `index.orders` (sorted, and
        // kept_at keeps each thread's sync events in order); an edge moved to its read's segment
        // end is out of that order, and goes in by a merge: sorting the whole list anew for each
        // of a run's ~10^5 variables was a third of their analysis.
        let mut in_order: Vec<RfEdge> = Vec::with_capacity(index.orders.len());
        let mut moved: Vec<RfEdge> = Vec::new();
        // Checked as they come: a pass of its own over the list cost a tenth of the unit.
        let mut sorted = true;
        for o in &index.orders {
            let (r, after, is_moved) = match var {
                None => match o.reads.first() {
                    Some(r) => (r, kept_at(o.after, o.syncs_before.0), false),
                    None => continue,
                },
                Some(v) => match o.reads.iter().find(|r| !touches(r, v)) {
                    Some(r) => (r, kept_at(o.after, o.syncs_before.0), false),
                    None => {
                        let Some((r, end)) = o.reads.iter().find_map(|r| {
                            let (end, syncs) = r.end.filter(|_| o.after.thread == r.read.thread)?;
                            let end = At {
                                thread: r.read.thread,
                                index: end as usize,
                            };
                            Some((r, kept_at(end, syncs)))
                        }) else {
                            continue;
                        };
                        (r, end, true)
                    }
                },
            };
            // A read the model does not keep (the deadlock model keeps no access) stands at
            // the last event kept before it.
            let read = kept_at(r.read, r.syncs_before);
            let kept = var == Some(r.var);
            let edge = RfEdge {
                after,
                before: kept_at(o.before, o.syncs_before.1),
                var: r.var,
                read: At {
                    thread: read.thread,
                    index: read.index - usize::from(!kept && read.index > 0),
                },
            };
            if is_moved {
                moved.push(edge);
            } else {
                sorted &= in_order.last().is_none_or(|last| *last <= edge);
                in_order.push(edge);
            }
        }
        let mut reads_from = merge(in_order, sorted, moved);
        reads_from.dedup_by_key(|e| (e.after, e.before));
        model.put_reads_from(reads_from);
        (model, origin)
    }

    /// The sync events before `upto[t]` of each thread, in the observed order: by seq, and an
    /// operation that never completed right after its thread's previous one, so that program
    /// order always holds. Each thread's events are in that order already (seqs increase along a
    /// thread), so this merges the threads rather than sorting the run.
    pub fn observed_order(&self, upto: &[usize]) -> ObservedOrder<'_> {
        let mut order = ObservedOrder {
            model: self,
            end: (0..self.threads.len())
                .map(|t| {
                    upto.get(t)
                        .map_or(0, |&u| u.min(self.threads[t].events.len()))
                })
                .collect(),
            next: vec![0; self.threads.len()],
            last: vec![0; self.threads.len()],
            heads: BinaryHeap::with_capacity(self.threads.len()),
        };
        for thread in 0..self.threads.len() {
            order.push_next(thread);
        }
        order
    }

    /// The operation of event `at`, for a sync event.
    pub fn op(&self, at: At) -> Option<ModelOp> {
        self.threads.get(at.thread)?.events.get(at.index)?.op()
    }

    /// Whether a state whose thread positions are `pos` can be a deadlock at all: not once a
    /// thread that ends the process ([`Model::ends_process`]) has run all its events, since the
    /// process then exits with every thread still blocked (threads left waiting at exit are not a
    /// deadlock).
    pub fn process_alive(&self, pos: &[usize]) -> bool {
        !self
            .threads
            .iter()
            .enumerate()
            .zip(pos)
            .any(|((i, t), &p)| {
                self.ends_process(i)
                    && self.next_stop_from(t, p).is_none()
                    && !self.ran_pending(i, p)
            })
    }

    /// Whether thread `t` ends the process once it has run all its events: main (its return is
    /// an exit), or a thread whose last event is an `exit()` (or `quick_exit()`, `_exit()`...).
    pub fn ends_process(&self, t: usize) -> bool {
        let thread = &self.threads[t];
        thread.tid == 0
            || thread
                .events
                .last()
                .and_then(|e| thread.observed_of(e))
                .is_some_and(|o| o.op == SyncOp::Exit)
    }

    fn next_stop_from(&self, thread: &ModelThread, pos: usize) -> Option<usize> {
        (pos..thread.events.len()).find(|&i| thread.events[i].constrains())
    }

    /// Whether the thread's first `pos` events include an operation that never completed in the run.
    pub fn ran_pending(&self, thread: usize, pos: usize) -> bool {
        let t = &self.threads[thread];
        t.events[..pos]
            .iter()
            .rev()
            .find_map(|e| t.observed_of(e))
            .is_some_and(|o| o.seq == ilgen_trace::PENDING)
    }

    /// Index of the thread's next event that [constrains](ModelEvent::constrains) the schedule,
    /// at or after `pos`.
    pub fn next_stop(&self, thread: usize, pos: usize) -> Option<usize> {
        self.next_stop_from(&self.threads[thread], pos)
    }
}

/// The edges of `in_order` and `moved`, sorted. `in_order` comes sorted from the orders of a
/// model's own edges (`sorted` says it did); only the few moved edges are sorted and merged in.
fn merge(mut in_order: Vec<RfEdge>, sorted: bool, mut moved: Vec<RfEdge>) -> Vec<RfEdge> {
    // Edges given by hand ([`Model::set_reads_from`] takes any) between events of one thread
    // that the restriction maps to one index may come out of order: sorted whole, as before.
    if !sorted {
        in_order.append(&mut moved);
        in_order.sort_unstable();
        return in_order;
    }
    if moved.is_empty() {
        return in_order;
    }
    moved.sort_unstable();
    // Whole runs of `in_order` copied between the moved edges: a pass comparing every edge with
    // the next moved one cost as much as the sort it replaced.
    let mut all = Vec::with_capacity(in_order.len() + moved.len());
    let mut from = 0;
    for m in moved {
        let to = from + in_order[from..].partition_point(|e| *e <= m);
        all.extend_from_slice(&in_order[from..to]);
        all.push(m);
        from = to;
    }
    all.extend_from_slice(&in_order[from..]);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_moved_edges_gives_the_sorted_list() {
        let edge = |after: usize, before: usize, read: usize| RfEdge {
            after: At {
                thread: after % 3,
                index: after,
            },
            before: At {
                thread: 1,
                index: before,
            },
            var: 0,
            read: At {
                thread: 0,
                index: read,
            },
        };
        let mut in_order: Vec<RfEdge> = (0..40).map(|i| edge(i * 2, i, i)).collect();
        in_order.sort_unstable();
        // Before the first, between two, equal to one, after the last, unsorted among themselves.
        let moved = vec![
            edge(81, 0, 0),
            edge(0, 0, 0),
            edge(7, 3, 1),
            edge(14, 7, 7),
            edge(0, 0, 0),
        ];
        for (list, sorted) in [
            (in_order.clone(), true),
            (in_order.iter().rev().copied().collect(), false),
        ] {
            let mut want: Vec<RfEdge> = list.iter().chain(&moved).copied().collect();
            want.sort_unstable();
            assert_eq!(merge(list, sorted, moved.clone()), want);
        }
    }

    #[test]
    fn an_event_is_16_bytes() {
        assert_eq!(std::mem::size_of::<ModelEvent>(), 16);
    }

    #[test]
    fn every_operation_packs_and_unpacks_to_itself() {
        let ops = [
            ModelOp::Start { forked: true },
            ModelOp::Start { forked: false },
            ModelOp::End,
            ModelOp::Fork { child: 3 },
            ModelOp::Join { child: 3 },
            ModelOp::Lock { mutex: 7 },
            ModelOp::Unlock { mutex: 7 },
            ModelOp::ReadLock { rw: 2 },
            ModelOp::WriteLock { rw: 2 },
            ModelOp::RwUnlock { rw: 2 },
            ModelOp::WaitRelease { mutex: 1 },
            ModelOp::WaitReturn {
                mutex: 1,
                wake: Wake::Signal(9),
            },
            ModelOp::WaitReturn {
                mutex: 1,
                wake: Wake::Unsignalled,
            },
            ModelOp::WaitReturn {
                mutex: 1,
                wake: Wake::Never,
            },
            ModelOp::Signal { cond: 9 },
            ModelOp::LoopExit {
                cond: 9,
                mutex: Some(1),
            },
            ModelOp::LoopExit {
                cond: 9,
                mutex: None,
            },
            ModelOp::BarrierEnter { barrier: 4 },
            ModelOp::BarrierExit { barrier: 4 },
            ModelOp::SemWait { sem: 5 },
            ModelOp::SemPost { sem: 5 },
            ModelOp::TryFail {
                target: TryTarget::Mutex(7),
            },
            ModelOp::TryFail {
                target: TryTarget::RwRead(2),
            },
            ModelOp::TryFail {
                target: TryTarget::RwWrite(2),
            },
            ModelOp::TryFail {
                target: TryTarget::Sem(5),
            },
            ModelOp::Exit,
            ModelOp::Nop,
        ];
        for op in ops {
            assert_eq!(PackedOp::from(op).get(), op);
        }
    }
}
