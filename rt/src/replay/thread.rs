//! Thread identity and per-thread state in replay mode, reached through one thread-local pointer.
//!
//! Takes thread starts (the `pthread_create` trampoline, or the first hook of main and of threads
//! the runtime did not see created) and thread ends; gives [`current`], the calling thread's
//! [`ReplayThread`]: its recorded tid (mapped through the schedule, see `replay`), its vector
//! clock, its count of sync operations (the schedule's `index`), and a [`ThreadInfo`] that the
//! watchdog reads: whether the thread runs, waits at the schedule gate, is blocked in a program
//! sync operation, or ended.
//!
//! Mirrors `thread` (record mode) without the file and the segment cache. `busy` plays the role
//! of `in_rt`: a hook reached from a program signal handler that interrupted the runtime on this
//! thread does nothing instead of touching the clock under the interrupted code.

use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use ilgen_trace::replay::ThreadRef;
use ilgen_trace::{known_thread, SiteId, SyncOp, ThreadId, NO_SITE};

use crate::replay;
use crate::replay::gate::Replay;
use crate::replay::hb::VectorClock;
use crate::runtime;

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
    /// The last condition wait entered was a timed one: its wake is not a block (it times out).
    pub timed_wait: AtomicBool,
}

impl ThreadInfo {
    #[cfg(test)]
    pub fn for_test(tid: ThreadId) -> ThreadInfo {
        ThreadInfo {
            me: ThreadRef {
                tid,
                parent: None,
                child_index: 0,
            },
            status: Mutex::new(Status::Running),
            generation: AtomicU64::new(0),
            syncs: AtomicU32::new(0),
            timed_wait: AtomicBool::new(false),
        }
    }

    pub fn status(&self) -> (Status, u64) {
        let s = *self.status.lock().unwrap_or_else(|e| e.into_inner());
        (s, self.generation.load(Ordering::Acquire))
    }

    pub fn set(&self, s: Status) {
        *self.status.lock().unwrap_or_else(|e| e.into_inner()) = s;
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

pub(crate) struct ReplayThread {
    pub info: Arc<ThreadInfo>,
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
}

impl Inner {
    /// Completes the acquire of the last atomic access, now that its instruction has run.
    #[inline]
    pub fn settle_atomic(&mut self) {
        if self.atomic_after != 0 {
            crate::replay::shadow::acquire_again(self.atomic_after - 1, &mut self.clock);
            self.atomic_after = 0;
        }
    }
}

impl ReplayThread {
    pub fn tid(&self) -> ThreadId {
        self.info.me.tid
    }

    /// Exclusive access to the clock until the guard drops; `None` when already inside.
    pub fn enter(&self) -> Option<Entered<'_>> {
        if self.busy.swap(true, Ordering::Acquire) {
            return None;
        }
        Some(Entered(self))
    }
}

pub(crate) struct Entered<'a>(&'a ReplayThread);

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
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::Release);
    }
}

/// The calling thread's replay state, creating it for main and for threads of uninstrumented
/// code; `None` when not replaying or after the thread ended.
#[inline]
pub(crate) fn current() -> Option<&'static ReplayThread> {
    let p = CURRENT.with(|c| c.get());
    if p as usize > DEAD {
        // SAFETY: a live state is freed only after CURRENT is reset (see `end`).
        return Some(unsafe { &*p });
    }
    if p as usize == DEAD {
        return None;
    }
    current_slow()
}

/// The calling thread's replay state if it has one; never creates it (for the heap events, which
/// come before and after the runtime's own life on a thread).
#[inline]
pub(crate) fn current_if_live() -> Option<&'static ReplayThread> {
    let p = CURRENT.with(|c| c.get());
    // SAFETY: as in `current`.
    (p as usize > DEAD).then(|| unsafe { &*p })
}

#[cold]
fn current_slow() -> Option<&'static ReplayThread> {
    let Some(r) = replay::gate::replaying() else {
        if runtime::settled() {
            CURRENT.with(|c| c.set(DEAD as *const ReplayThread));
        }
        return None;
    };
    // SAFETY: plain system calls.
    let is_main = unsafe { libc::gettid() == libc::getpid() };
    let me = if is_main {
        ThreadRef {
            tid: r.plan.main_tid(),
            parent: None,
            child_index: 0,
        }
    } else {
        ThreadRef {
            tid: fresh_tid(r),
            parent: None,
            child_index: NEXT_ORPHAN.fetch_add(1, Ordering::Relaxed),
        }
    };
    let mut clock = VectorClock::default();
    clock.set(me.tid, 1);
    let t = register(me, clock);
    if !is_main {
        // A thread of uninstrumented code: its first record is a start, as in record mode.
        replay::sync::thread_start(t);
    }
    Some(t)
}

fn fresh_tid(r: &Replay) -> ThreadId {
    let _ = NEXT_FRESH.compare_exchange(0, r.plan.first_fresh, Ordering::AcqRel, Ordering::Relaxed);
    NEXT_FRESH.fetch_add(1, Ordering::AcqRel)
}

fn register(me: ThreadRef, clock: VectorClock) -> &'static ReplayThread {
    let info = Arc::new(ThreadInfo {
        me,
        status: Mutex::new(Status::Running),
        generation: AtomicU64::new(0),
        syncs: AtomicU32::new(0),
        timed_wait: AtomicBool::new(false),
    });
    THREADS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(info.clone());
    let t = Box::leak(Box::new(ReplayThread {
        info,
        busy: AtomicBool::new(false),
        inner: UnsafeCell::new(Inner {
            clock,
            children: 0,
            atomic_after: 0,
        }),
    }));
    CURRENT.with(|c| c.set(t));
    replay::debug::thread_started(t.info.me.tid);
    if let Some(&key) = EXIT_KEY.get() {
        // SAFETY: the key was created at start-up.
        unsafe { libc::pthread_setspecific(key, t as *const ReplayThread as *const _) };
    }
    t
}

/// The calling thread is about to create a child: its (parent tid, child index, child tid).
pub(crate) fn new_child() -> Option<(ThreadId, u32, ThreadId)> {
    let r = replay::gate::get()?;
    let t = current()?;
    let mut inner = t.enter()?;
    let index = inner.children;
    inner.children += 1;
    let tid = r
        .plan
        .child_tid(t.tid(), index)
        .unwrap_or_else(|| fresh_tid(r));
    Some((t.tid(), index, tid))
}

/// Starts the calling thread, created by the wrapper as (parent, child_index) with tid `tid`:
/// its clock is the one its parent left at the fork; then its `start` goes through the gate.
pub(crate) fn start(tid: ThreadId, parent: ThreadId, child_index: u32) {
    if replay::gate::replaying().is_none() {
        return;
    }
    let clock = replay::hb::with_clocks(|c| c.start(tid));
    let t = register(
        ThreadRef {
            tid,
            parent: known_thread(parent),
            child_index,
        },
        clock,
    );
    replay::sync::thread_start(t);
}

/// The calling thread ends (its start routine returned, `pthread_exit`, or the key destructor):
/// its `end` goes through the gate and its clock is left for the joiner. Main has no `end`.
pub(crate) fn end(site: SiteId) {
    let p = CURRENT.with(|c| c.get());
    if p as usize <= DEAD {
        return;
    }
    // SAFETY: this thread's live state.
    let t = unsafe { &*p };
    if !is_main() {
        replay::sync::thread_end(t, site);
    }
    t.info.set(Status::Ended);
    CURRENT.with(|c| c.set(DEAD as *const ReplayThread));
    if let (Some(_), Some(&key)) = (replay::gate::get(), EXIT_KEY.get()) {
        // SAFETY: clearing this thread's key value so the destructor does not run again.
        unsafe { libc::pthread_setspecific(key, std::ptr::null()) };
    }
    // The state stays allocated: reports name threads through `info`, which is shared, and a
    // leaked `ReplayThread` per thread is the price of never freeing under a signal handler.
}

fn is_main() -> bool {
    // SAFETY: plain system calls.
    unsafe { libc::gettid() == libc::getpid() }
}

/// The calling thread of a forked child replays nothing more.
pub(crate) fn abandon_after_fork() {
    CURRENT.with(|c| c.set(DEAD as *const ReplayThread));
}

/// Creates the key whose destructor ends a thread that leaves through code the runtime does not
/// see (at start-up, before any thread replays); false when the system refuses.
pub(crate) fn create_exit_key() -> bool {
    let mut key: libc::pthread_key_t = 0;
    // SAFETY: creating a key whose destructor accepts any value this runtime stores.
    let created = unsafe { libc::pthread_key_create(&mut key, Some(on_exit)) } == 0;
    created && EXIT_KEY.set(key).is_ok()
}

/// Thread-key destructor: the thread exits without the runtime having ended it.
extern "C" fn on_exit(_value: *mut libc::c_void) {
    end(NO_SITE);
}

/// When no thread but the caller can run (each is gated, blocked or ended): how many are live,
/// and the sum of their status generations, which changes whenever one of them moves (the exit
/// grace, `record::finish`).
pub(crate) fn others_blocked() -> Option<(u64, u64)> {
    let me = current().map(|t| t.tid());
    let (mut live, mut moves) = (0u64, 0u64);
    for t in all().iter().filter(|t| Some(t.me.tid) != me) {
        let (status, generation) = t.status();
        match status {
            Status::Ended => {}
            Status::Gated { .. } | Status::Blocked { .. } => {
                live += 1;
                moves = moves.wrapping_add(generation);
            }
            Status::Running => return None,
        }
    }
    Some((live, moves))
}

/// Every thread that started, ended or not.
pub(crate) fn all() -> Vec<Arc<ThreadInfo>> {
    THREADS.lock().unwrap_or_else(|e| e.into_inner()).clone()
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
