//! Thread identity and per-thread state in replay mode, reached through one thread-local pointer.
//!
//! Takes the states `sync` makes as threads start and end (with their recorded tid, mapped through
//! the schedule, see `gate`); gives [`slot`], the calling thread's [`ReplayThread`] if it has one:
//! its vector clock, its count of sync operations (the schedule's `index`), and a [`ThreadInfo`]
//! that the watchdog and the reports read: who it is, whether it runs, waits at the schedule gate,
//! is blocked in a program sync operation, or ended. Holds state only: `sync::current` makes a
//! missing state and runs the thread's `start` through the gate.
//!
//! Mirrors `thread` (record mode) without the file and the segment cache. `busy` plays the role
//! of `in_rt`: a hook reached from a program signal handler that interrupted the runtime on this
//! thread does nothing instead of touching the clock under the interrupted code.

use std::cell::{Cell, UnsafeCell};
use std::collections::BTreeMap;
use std::sync::atomic::{compiler_fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use ilgen_trace::replay::{StackFrame, ThreadRef};
use ilgen_trace::sites::UNIT;
use ilgen_trace::{SiteId, SyncOp, ThreadId};

use crate::replay::cover::{self, Own};
use crate::replay::gate::Replay;
use crate::replay::hb::VectorClock;
use crate::replay::stack::StackId;

const DEAD: usize = 1;

thread_local! {
    static CURRENT: Cell<*const ReplayThread> = const { Cell::new(std::ptr::null()) };
}

/// Fresh tids for threads the schedule does not name, and child indices of orphans.
static NEXT_FRESH: AtomicU32 = AtomicU32::new(0);
static NEXT_ORPHAN: AtomicU32 = AtomicU32::new(0);

/// The key whose destructor ends a thread that exits through code the runtime does not see.
static EXIT_KEY: OnceLock<libc::pthread_key_t> = OnceLock::new();

/// Every thread that ever started, for the watchdog and for naming threads in reports.
static THREADS: Mutex<Vec<Arc<ThreadInfo>>> = Mutex::new(Vec::new());

/// Children whose `pthread_create` began and whose thread has not registered yet: no thread
/// list shows them, yet they can run, so while one is coming no state of the listed threads is a
/// deadlock (minimap2: a kt_for worker not yet running on a loaded machine, its creator's join of
/// it and the pipeline's waits were reported as one).
static COMING: AtomicU32 = AtomicU32::new(0);

/// A child is being created (its thread will [`register`], or [`child_arrived`] says it won't).
pub(crate) fn child_coming() {
    COMING.fetch_add(1, Ordering::SeqCst);
}

/// The child [`child_coming`] announced registered, or was never created.
pub(crate) fn child_arrived() {
    COMING.fetch_sub(1, Ordering::SeqCst);
}

/// Whether a child is being created and not listed yet.
pub(crate) fn children_coming() -> bool {
    COMING.load(Ordering::SeqCst) > 0
}

/// Per thread created in the replay, its creator's shadow stack at the fork.
static CREATED: Mutex<BTreeMap<ThreadId, StackId>> = Mutex::new(BTreeMap::new());

/// What a thread is doing, as the watchdog sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Running,
    /// Waiting at the schedule gate before its sync operation `index`.
    Gated {
        index: u32,
    },
    /// Inside a program sync operation that may block (lock, join, wait, ...).
    Blocked {
        op: SyncOp,
        site: SiteId,
        /// Its callers (`replay::stack`).
        stack: StackId,
    },
    /// Inside a read whose recorded outcome it waits for (`replay::inputs`): the thread's
    /// `nth` read, on `fd`, `want` bytes in the recording.
    Input {
        fd: i32,
        nth: u32,
        want: i64,
    },
    Ended,
}

pub(crate) struct ThreadInfo {
    pub me: ThreadRef,
    status: Mutex<Status>,
    /// Changes on every status change: the watchdog's proof that a thread stayed blocked.
    generation: AtomicU64,
    /// Sync operations done (the schedule index of the next one).
    pub syncs: AtomicU32,
    /// Reads of streams done (`replay::inputs`: the index of the next recorded outcome).
    pub inputs: AtomicU32,
    /// The last condition wait entered was a timed one: its wake is not a block (it times out).
    pub timed_wait: AtomicBool,
    /// Outside the schedule: the lock (its address) that a try-lock the schedule did not have
    /// there took, until the thread lets it go; 0: on the schedule (`replay::sync`).
    pub outside: AtomicU64,
    /// The operation under way lets `outside`'s lock go: the thread is back on the schedule once
    /// it is done.
    pub outside_ends: AtomicBool,
    /// The thread's CPU-time clock (`None` where the system gives none): the watchdog tells a
    /// thread that computes toward its next step from one that waits elsewhere.
    cpu_clock: Option<libc::clockid_t>,
}

impl ThreadInfo {
    /// A thread `me` that is running and has done nothing yet.
    fn new(me: ThreadRef, cpu_clock: Option<libc::clockid_t>) -> ThreadInfo {
        ThreadInfo {
            me,
            status: Mutex::new(Status::Running),
            generation: AtomicU64::new(0),
            syncs: AtomicU32::new(0),
            inputs: AtomicU32::new(0),
            timed_wait: AtomicBool::new(false),
            outside: AtomicU64::new(0),
            outside_ends: AtomicBool::new(false),
            cpu_clock,
        }
    }

    #[cfg(test)]
    pub fn for_test(tid: ThreadId) -> ThreadInfo {
        let me = ThreadRef {
            tid,
            parent: None,
            child_index: 0,
        };
        ThreadInfo::new(me, None)
    }

    pub fn status(&self) -> (Status, u64) {
        let s = *self.status.lock().unwrap_or_else(|e| e.into_inner());
        (s, self.generation.load(Ordering::Acquire))
    }

    pub fn set(&self, s: Status) {
        *self.status.lock().unwrap_or_else(|e| e.into_inner()) = s;
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Whether the thread runs outside the schedule (`outside`).
    pub fn outside_schedule(&self) -> bool {
        self.outside.load(Ordering::Relaxed) != 0
    }

    /// CPU time the thread has used, in microseconds; `None` without a clock or once the thread
    /// is gone.
    pub fn cpu_us(&self) -> Option<u64> {
        let clock = self.cpu_clock?;
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a clock id of this process's thread; a thread that ended makes the call fail.
        if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
            return None;
        }
        Some(ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000)
    }
}

/// The calling thread's CPU-time clock.
fn own_cpu_clock() -> Option<libc::clockid_t> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: the calling thread's own handle and a local out-parameter.
    (unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) } == 0).then_some(clock)
}

pub(crate) struct ReplayThread {
    pub info: Arc<ThreadInfo>,
    /// `info.me.tid`, kept here: every hook reads it, and `info` is another allocation.
    tid: ThreadId,
    /// The replay, if it watches accesses (`gate::watching`, fixed before any thread registers):
    /// read here, in the thread's own state, by every access hook, not from a global next to
    /// locks that other threads take.
    pub watch: Option<&'static Replay>,
    busy: AtomicBool,
    inner: UnsafeCell<Inner>,
}

/// What only the owning thread touches, and only while `busy` is set.
pub(crate) struct Inner {
    pub clock: VectorClock,
    pub children: u32,
    /// Granule of the thread's last atomic access, plus one (0: none): its acquire is done again
    /// at the next hook (see `replay::shadow::acquire_again`).
    pub atomic_after: u64,
    /// Per site pointer (direct-mapped by its unit, see [`SITES`]), the site and the instant (the
    /// thread's own clock) of its last access: whether an access is its site's first of the
    /// instant ([`Inner::first_of_site`]).
    sites: [(usize, u32); SITES],
    /// The table the pass's inlined checks read (`None`: every access calls its hook).
    cover: Option<Own>,
}

/// Slots of [`Inner::first_of_site`]'s table, indexed by the site's unit in the sites section
/// (its id) modulo their number: the sites of one function have consecutive ids, so those of a hot
/// loop never share a slot (two sites that do alternate as firsts, and each of their accesses takes
/// the shadow's slow path: a multiplicative hash of the pointer put blackscholes' loop in that
/// case for a third of its accesses).
const SITES: usize = 1024;

impl Inner {
    /// Whether this access at `site` (a hook's site pointer) is the first of its site since the
    /// thread's last sync operation (`replay::shadow`: such an access is checked and kept even
    /// where a cell of another site of the same instant covers it).
    #[inline(always)]
    pub fn first_of_site(&mut self, tid: ThreadId, site: usize) -> bool {
        let now = (site, self.clock.get(tid));
        let slot = &mut self.sites[site / UNIT % SITES];
        if *slot == now {
            return false;
        }
        *slot = now;
        true
    }

    /// The epoch to keep a plain access at, read before the shadow checks it (0: no table).
    #[inline(always)]
    pub fn cover_epoch(&self) -> u64 {
        self.cover.as_ref().map_or(0, Own::epoch)
    }

    /// The plain access at `site` (a hook's site pointer) that the shadow has checked, read at
    /// `epoch`, goes into the thread's table (`replay::cover`).
    #[inline(always)]
    pub fn keep_covered(&mut self, epoch: u64, addr: u64, size: u64, write: bool, site: usize) {
        if let Some(c) = &mut self.cover {
            c.keep(epoch, addr, size, write, site);
        }
    }
}

impl ReplayThread {
    pub fn tid(&self) -> ThreadId {
        self.tid
    }

    /// Exclusive access to the clock until the guard drops; `None` when already inside.
    /// Only the owning thread enters, and a signal handler that interrupts it runs to its end
    /// before the interrupted code goes on: a load and a store do, as `thread::enter` (record
    /// mode), where an atomic swap would cost a locked instruction per access.
    #[inline]
    pub fn enter(&self) -> Option<Entered<'_>> {
        if self.busy.load(Ordering::Relaxed) {
            return None;
        }
        self.busy.store(true, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
        Some(Entered(self))
    }
}

pub(crate) struct Entered<'a>(&'a ReplayThread);

impl Entered<'_> {
    /// Completes the acquire of the thread's last atomic access, now that its instruction has run.
    #[inline]
    pub fn settle_atomic(&mut self) {
        let tid = self.0.tid();
        let inner = &mut **self;
        if inner.atomic_after != 0 {
            crate::replay::shadow::acquire_again(inner.atomic_after - 1, tid, &mut inner.clock);
            inner.atomic_after = 0;
        }
    }
}

impl std::ops::Deref for Entered<'_> {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        // SAFETY: `busy` is set: nothing else on this thread touches `inner`.
        unsafe { &*self.0.inner.get() }
    }
}

impl std::ops::DerefMut for Entered<'_> {
    fn deref_mut(&mut self) -> &mut Inner {
        // SAFETY: as above; one `Entered` per thread at a time.
        unsafe { &mut *self.0.inner.get() }
    }
}

impl Drop for Entered<'_> {
    /// Leaves the runtime; a table whose thread's instant moved inside holds nothing more.
    fn drop(&mut self) {
        let tid = self.0.tid;
        let Inner { clock, cover, .. } = &mut **self;
        if let Some(c) = cover {
            c.settle(clock.get(tid));
        }
        compiler_fence(Ordering::SeqCst);
        self.0.busy.store(false, Ordering::Release);
    }
}

/// The calling thread's replay state, as far as it exists.
pub(crate) enum Slot {
    /// Not made yet: main before its first hook, a thread of uninstrumented code, or any thread
    /// while the runtime starts.
    Unset,
    Live(&'static ReplayThread),
    /// Ended, or replays nothing (the process does not replay, a forked child).
    Done,
}

/// The calling thread's slot: one thread-local load.
#[inline]
pub(crate) fn slot() -> Slot {
    let p = CURRENT.with(|c| c.get());
    if p as usize > DEAD {
        // SAFETY: a live state is freed only after CURRENT is reset (see `finish`).
        Slot::Live(unsafe { &*p })
    } else if p as usize == DEAD {
        Slot::Done
    } else {
        Slot::Unset
    }
}

/// The calling thread's replay state if it has one; never creates it (for the heap events, which
/// come before and after the runtime's own life on a thread).
#[inline]
pub(crate) fn current_if_live() -> Option<&'static ReplayThread> {
    match slot() {
        Slot::Live(t) => Some(t),
        _ => None,
    }
}

/// A tid for a thread the schedule does not name: above every scheduled one.
pub(crate) fn fresh_tid(r: &Replay) -> ThreadId {
    let _ = NEXT_FRESH.compare_exchange(0, r.plan.first_fresh, Ordering::AcqRel, Ordering::Relaxed);
    NEXT_FRESH.fetch_add(1, Ordering::AcqRel)
}

/// The child index of the next thread of uninstrumented code (parent absent).
pub(crate) fn next_orphan() -> u32 {
    NEXT_ORPHAN.fetch_add(1, Ordering::Relaxed)
}

/// Makes the calling thread's state, listed for the watchdog and the reports, and hands its
/// value to the exit key.
pub(crate) fn register(me: ThreadRef, clock: VectorClock) -> &'static ReplayThread {
    let info = Arc::new(ThreadInfo::new(me, own_cpu_clock()));
    THREADS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(info.clone());
    let watch = crate::replay::gate::watching();
    let cover = cover::take(
        me.tid,
        clock.get(me.tid),
        watch.is_some(),
        crate::sites::section_len(),
    );
    let t = Box::leak(Box::new(ReplayThread {
        info,
        tid: me.tid,
        watch,
        busy: AtomicBool::new(false),
        inner: UnsafeCell::new(Inner {
            clock,
            children: 0,
            atomic_after: 0,
            sites: [(0, 0); SITES],
            cover,
        }),
    }));
    CURRENT.with(|c| c.set(t));
    crate::replay::debug::thread_started(t.info.me.tid);
    if let Some(&key) = EXIT_KEY.get() {
        // SAFETY: the key was created at start-up.
        unsafe { libc::pthread_setspecific(key, t as *const ReplayThread as *const _) };
    }
    t
}

/// The calling thread (`t`) ended: it replays nothing more.
pub(crate) fn finish(t: &ReplayThread) {
    // Interrupted inside the runtime, the thread keeps its table (it replays nothing more).
    if let Some(own) = t.enter().and_then(|mut inner| inner.cover.take()) {
        own.give_back();
    }
    t.info.set(Status::Ended);
    set_done();
    if let (Some(_), Some(&key)) = (crate::replay::gate::get(), EXIT_KEY.get()) {
        // SAFETY: clearing this thread's key value so the destructor does not run again.
        unsafe { libc::pthread_setspecific(key, std::ptr::null()) };
    }
    // The state stays allocated: reports name threads through `info`, which is shared, and a
    // leaked `ReplayThread` per thread is the price of never freeing under a signal handler.
}

/// The calling thread replays nothing (more): it ended, the process does not replay, or it is
/// the calling thread of a forked child.
pub(crate) fn set_done() {
    CURRENT.with(|c| c.set(DEAD as *const ReplayThread));
}

/// Creates the key whose `destructor` ends a thread that leaves through code the runtime does not
/// see (at start-up, before any thread replays); false when the system refuses.
pub(crate) fn create_exit_key(destructor: unsafe extern "C" fn(*mut libc::c_void)) -> bool {
    let mut key: libc::pthread_key_t = 0;
    // SAFETY: creating a key whose destructor accepts any value this runtime stores.
    let created = unsafe { libc::pthread_key_create(&mut key, Some(destructor)) } == 0;
    created && EXIT_KEY.set(key).is_ok()
}

/// When no thread but the caller can run (each is gated, blocked or ended): how many are live,
/// and the sum of their status generations, which changes whenever one of them moves (the exit
/// grace, `record::finish`).
pub(crate) fn others_blocked() -> Option<(u64, u64)> {
    let me = current_if_live().map(|t| t.tid());
    let (mut live, mut moves) = (0u64, 0u64);
    for t in all().iter().filter(|t| Some(t.me.tid) != me) {
        let (status, generation) = t.status();
        match status {
            Status::Ended => {}
            Status::Gated { .. } | Status::Blocked { .. } => {
                live += 1;
                moves = moves.wrapping_add(generation);
            }
            Status::Running | Status::Input { .. } => return None,
        }
    }
    Some((live, moves))
}

/// Every thread that started, ended or not.
pub(crate) fn all() -> Vec<Arc<ThreadInfo>> {
    THREADS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Whether a live thread among `threads` was created where the runtime did not see it (no
/// parent, and not `main`): nothing orders it after its creator, so running other threads free
/// beside it would report races with it that no execution has.
pub(crate) fn orphan_lives<'a>(
    threads: impl IntoIterator<Item = &'a ThreadInfo>,
    main: ThreadId,
) -> bool {
    threads
        .into_iter()
        .any(|i| i.me.parent.is_none() && i.me.tid != main && i.status().0 != Status::Ended)
}

/// The calling thread creates `child`: its stack now is where the child was created.
pub(crate) fn forked(child: ThreadId) {
    let stack = crate::replay::stack::current();
    CREATED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(child, stack);
}

/// Per thread created so far, its creator's stack at the fork, innermost first.
pub(crate) fn creation_stacks() -> BTreeMap<ThreadId, Vec<StackFrame>> {
    let created = CREATED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    created
        .into_iter()
        .map(|(t, s)| (t, crate::replay::stack::frames(s)))
        .filter(|(_, s)| !s.is_empty())
        .collect()
}

/// The identity of thread `tid`, for reports (a bare tid if it never started).
pub(crate) fn thread_ref(tid: ThreadId) -> ThreadRef {
    THREADS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|i| i.me.tid == tid)
        .map(|i| i.me)
        .unwrap_or(ThreadRef {
            tid,
            parent: None,
            child_index: 0,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sites_of_a_loop_are_each_first_once_per_instant() {
        let mut inner = Inner {
            clock: VectorClock::default(),
            children: 0,
            atomic_after: 0,
            sites: [(0, 0); SITES],
            cover: None,
        };
        inner.clock.set(3, 1);
        // A loop's sites: consecutive units of the section, as many as the table has slots,
        // taken in turn, twice over at one instant.
        let start = 0x5555_0000_1230usize;
        let sites: Vec<usize> = (0..SITES).map(|i| start + i * UNIT).collect();
        assert!(sites.iter().all(|&s| inner.first_of_site(3, s)));
        assert!(sites.iter().all(|&s| !inner.first_of_site(3, s)));
        // After a release, each is the first of its site again, once.
        inner.clock.tick(3);
        assert!(sites.iter().all(|&s| inner.first_of_site(3, s)));
        assert!(!inner.first_of_site(3, sites[7]));
    }
}
