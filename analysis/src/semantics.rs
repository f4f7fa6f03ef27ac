//! The sync semantics, once: per kind of sync object, which operations its state allows and the
//! state each leaves behind.
//!
//! Takes an object's state (or the facts it stands on), the thread and the operation in the
//! object's own terms ([`MutexOp`], [`RwOp`], ...); gives the next state, or `None` where the
//! operation is not enabled now. Both back ends derive from these functions and from nothing
//! else: the native [`crate::state::State`] stores one state per mutex, rwlock and semaphore and
//! runs them through these transitions; the CSP_M translation ([`crate::csp`]) enumerates each
//! object's automaton by calling the same transitions from its initial state.
//!
//! Some facts the native model reads off the threads' positions (a thread forked or ended, an
//! instance signalled, how many entered a barrier, whether a bare wait was entered before its
//! signal), where an automaton must track them in its state. Those objects' functions take the
//! fact as an argument ([`Creation`], [`Termination`], the `signalled` of [`condition`], the
//! `entered` of [`barrier`], the `exited` of [`process`]), so the native side passes what the positions say and the CSP side
//! what its state says. Bounds that only keep an automaton finite (a mutex's or rwlock's nesting
//! depth, a semaphore's cap, the enterers of a barrier, the joins of a thread) are arguments too;
//! the native model passes the type's maximum, having no need of them.

/// A mutex: its holder and recursion count.
pub type Holder = Option<(usize, u32)>;

/// What a thread does to a mutex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MutexOp {
    Lock,
    Unlock,
    /// A condition wait releases the mutex whatever its count (pthreads requires one level).
    WaitRelease,
    /// The wait returns and takes the mutex again.
    WaitReturn,
    /// A wait-loop exit: takes the mutex if free, keeps it if the thread holds it.
    LoopExit,
    /// A thread at an unsignalled wait-loop exit releases the mutex to wait.
    LoopRelease,
    /// A failed trylock: possible only while another thread holds the mutex; changes nothing.
    TryFail,
}

/// The mutex after `thread` performs `op`, if it may now. `depth`: the most levels `thread` may
/// hold (a bound for the automaton only).
pub fn mutex(
    holder: Holder,
    thread: usize,
    op: MutexOp,
    recursive: bool,
    depth: u32,
) -> Option<Holder> {
    let mine = |h: usize| h == thread;
    match (op, holder) {
        (MutexOp::Lock | MutexOp::WaitReturn | MutexOp::LoopExit, None) => Some(Some((thread, 1))),
        (MutexOp::Lock, Some((h, n))) => {
            (mine(h) && recursive && n < depth).then_some(Some((h, n + 1)))
        }
        (MutexOp::Unlock, Some((h, n))) => mine(h).then_some((n > 1).then_some((h, n - 1))),
        (MutexOp::WaitRelease, _) => Some(None),
        (MutexOp::LoopExit, Some((h, _))) => mine(h).then_some(holder),
        (MutexOp::LoopRelease, Some((h, _))) => mine(h).then_some(None),
        (MutexOp::TryFail, Some((h, _))) => (!mine(h)).then_some(holder),
        (MutexOp::Unlock | MutexOp::LoopRelease | MutexOp::TryFail, None)
        | (MutexOp::WaitReturn, Some(_)) => None,
    }
}

/// An rwlock: its writer and its readers, one entry per read lock held (a thread may hold
/// several), in the order they took it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RwLock {
    pub writer: Option<usize>,
    pub readers: Vec<usize>,
}

/// What a thread does to an rwlock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwOp {
    Read,
    Write,
    Unlock,
    /// A failed tryrdlock: possible only while another thread writes.
    TryReadFail,
    /// A failed trywrlock: possible only while another thread holds it at all.
    TryWriteFail,
}

impl RwLock {
    /// Whether `thread` may perform `op` now. `depth`: the most read locks `thread` may hold (a
    /// bound for the automaton only).
    pub fn allows(&self, thread: usize, op: RwOp, depth: u32) -> bool {
        let other = |&h: &usize| h != thread;
        match op {
            RwOp::Read => {
                self.writer.is_none()
                    && (self.readers.iter().filter(|&&r| r == thread).count() as u32) < depth
            }
            RwOp::Write => self.writer.is_none() && self.readers.is_empty(),
            RwOp::Unlock => self.writer == Some(thread) || self.readers.contains(&thread),
            RwOp::TryReadFail => self.writer.iter().any(other),
            RwOp::TryWriteFail => self.writer.iter().chain(&self.readers).any(other),
        }
    }

    /// Performs `op` for `thread`; callers ask [`RwLock::allows`] first.
    pub fn apply(&mut self, thread: usize, op: RwOp) {
        match op {
            RwOp::Read => self.readers.push(thread),
            RwOp::Write => self.writer = Some(thread),
            RwOp::Unlock if self.writer == Some(thread) => self.writer = None,
            RwOp::Unlock => {
                if let Some(i) = self.readers.iter().position(|&r| r == thread) {
                    self.readers.swap_remove(i);
                }
            }
            RwOp::TryReadFail | RwOp::TryWriteFail => {}
        }
    }
}

/// What a thread does to a semaphore, or to a stream between threads, which is one counting
/// bytes: a write posts as many units as it wrote, a read waits for as many as it got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SemOp {
    /// Takes this many units (a `sem_wait` one).
    Wait(u32),
    /// Gives this many units (a `sem_post` one).
    Post(u32),
    /// A failed `sem_trywait`: possible only at count zero; takes nothing.
    TryWaitFail,
}

/// The count after `op`, if it may happen now. `cap`: the highest count (a bound for the
/// automaton only).
pub fn semaphore(count: u32, op: SemOp, cap: u32) -> Option<u32> {
    match op {
        SemOp::Wait(units) => count.checked_sub(units),
        SemOp::Post(units) => count.checked_add(units).filter(|&n| n <= cap),
        SemOp::TryWaitFail => (count == 0).then_some(0),
    }
}

/// What a thread does at a barrier instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierOp {
    Enter,
    /// Possible once every party entered, and only if some thread left the instance in the run.
    Exit,
}

/// The count of threads that entered after `op`, if it may happen now. `enterers`: the most
/// enters the instance takes (a bound for the automaton only).
pub fn barrier(
    entered: u32,
    op: BarrierOp,
    parties: u32,
    released: bool,
    enterers: u32,
) -> Option<u32> {
    match op {
        BarrierOp::Enter => (entered < enterers).then(|| entered + 1),
        BarrierOp::Exit => (released && entered >= parties).then_some(entered),
    }
}

/// What a thread does to a condition instance (one signal or broadcast and the waits it wakes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CondOp {
    /// The instance's signal or broadcast: it happens once.
    Signal,
    /// A bare wait (no wait loop around it) released its mutex: it now waits for the signal.
    Enter,
    /// A wait returns woken by the instance.
    Wake,
    /// A wait loop is left: its predicate holds once the instance was signalled.
    LoopExit,
    /// A thread at a wait-loop exit calls the wait instead, before the signal.
    LoopRelease,
}

/// Whether `op` may happen now. `signalled`: the instance's signal ran; `lost`: it ran before the
/// thread entered its bare wait ([`lost_to`]), so it never wakes that wait.
pub fn condition(signalled: bool, lost: bool, op: CondOp) -> bool {
    match op {
        CondOp::Signal | CondOp::LoopRelease => !signalled,
        CondOp::Enter => true,
        CondOp::Wake => signalled && !lost,
        CondOp::LoopExit => signalled,
    }
}

/// The bare waiters a signal is lost to, from (waiter, whether it entered its wait already): it
/// reaches none of the waits not yet entered.
pub fn lost_to(waiters: impl IntoIterator<Item = (usize, bool)>) -> impl Iterator<Item = usize> {
    waiters
        .into_iter()
        .filter_map(|(waiter, entered)| (!entered).then_some(waiter))
}

/// Thread creation as seen by the created thread: forked by its parent, started itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Creation {
    pub forked: bool,
    pub started: bool,
}

/// What happens to a thread's creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreationOp {
    Fork,
    /// `forked`: some recorded thread forks this one, so it starts only after that fork.
    Start {
        forked: bool,
    },
}

/// The creation after `op`, if it may happen now: each happens once, a start after its fork.
pub fn creation(s: Creation, op: CreationOp) -> Option<Creation> {
    match op {
        CreationOp::Fork => (!s.forked).then_some(Creation { forked: true, ..s }),
        CreationOp::Start { forked } => {
            (!s.started && (s.forked || !forked)).then_some(Creation { started: true, ..s })
        }
    }
}

/// A thread's end as its joiners see it: ended, and how many joins took it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Termination {
    pub ended: bool,
    pub joined: usize,
}

/// What happens to a thread's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TerminationOp {
    End,
    Join,
}

/// The termination after `op`, if it may happen now: a join after the end. `joins`: how many
/// joins there are (a bound for the automaton only).
pub fn termination(s: Termination, op: TerminationOp, joins: usize) -> Option<Termination> {
    match op {
        TerminationOp::End => (!s.ended).then_some(Termination { ended: true, ..s }),
        TerminationOp::Join => (s.ended && s.joined < joins).then_some(Termination {
            joined: s.joined + 1,
            ..s
        }),
    }
}

/// What a thread does to the process as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessOp {
    /// Any other step of any thread.
    Step,
    /// The exit that ends the process (`exit()`, the return from `main`).
    Exit,
}

/// Whether the process has exited after `op`, if `op` may happen now: once the exit has
/// happened, no thread takes another step, the exiting one included.
pub fn process(exited: bool, op: ProcessOp) -> Option<bool> {
    (!exited).then_some(op == ProcessOp::Exit)
}
