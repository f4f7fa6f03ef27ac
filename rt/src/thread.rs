//! Thread identity and per-thread state, reached through one thread-local pointer.
//!
//! Takes thread starts (the `pthread_create` trampoline, or the first hook of a thread the runtime
//! did not see created) and thread ends (the trampoline, `pthread_exit`, or the thread-key
//! destructor when a thread leaves through uninstrumented code); gives [`current`], the calling
//! thread's [`ThreadState`]: its logical id, its segment cache and its trace file.
//!
//! The fast path is one thread-local load and a compare: the pointer is null before the thread's
//! state exists (created lazily, the slow path), [`REPLAY`] when the process replays, [`DEAD`] once
//! the thread ended or when nothing is recorded, and a real pointer otherwise. [`record_fast`] is a
//! whole memory-access hook without a call for the common case.
//!
//! A thread that ends leaves its state to the next thread that starts (see [`end`]): its file, which
//! goes on with a section for the new thread, its drained segment cache and its signal stack's
//! memory. A program that starts a thread per job makes as many files and caches as it has
//! threads alive at once.
//!
//! Identity: main is 0 (the thread whose kernel id is the process id); every other thread takes
//! the next id when its creation is seen, and its file header names (parent, nth child of that
//! parent), the identity that is stable across runs. Threads created by uninstrumented code have
//! parent `NO_THREAD` and are numbered among themselves in the order they first call a hook.
//!
//! Signals: a signal handler of the runtime (the flush request at exit, a fatal signal) may run
//! on top of any code of this thread. `in_rt` is set while the thread changes its cache or file;
//! a handler that finds it set does not touch them (the flush request is then served when the
//! thread leaves the runtime, see [`Entered`]), and a hook reached from a program signal handler
//! that interrupted the runtime records nothing.

use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{compiler_fence, AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;

use ilgen_trace::abi;
use ilgen_trace::format::{encode_header, ThreadHeader};
use ilgen_trace::{
    Access, AccessKind, Atomic, AtomicOp, Event, Sync, SyncOp, ThreadId, FORMAT_VERSION, NO_SITE,
    NO_THREAD,
};

use crate::record::altstack::{self, AltStack};
use crate::record::cache::{Entry, Mark, SegmentCache};
use crate::record::pending::Pool;
use crate::record::stripes;
use crate::record::writer::{self, Writer};
use crate::registry::Registry;
use crate::runtime::{self, Runtime};
use crate::{arch, sites};

/// The thread-local pointer of a thread that records nothing and whose accesses go to the replay
/// checker (the process replays).
pub(crate) const REPLAY: usize = 1;
/// The thread-local pointer of a thread that records nothing and checks nothing (ended, forked
/// child, mode off): its hooks return after one compare. The highest sentinel: a pointer above it
/// is a live state.
pub(crate) const DEAD: usize = 2;

thread_local! {
    /// Flush-request signals this thread received: a wrapper whose real call fails with EINTR
    /// because of one retries it (the program did not ask for that signal).
    static FLUSH_SIGNALS: Cell<u32> = const { Cell::new(0) };
}

/// Next id of a thread the runtime did not see created; main is 0.
static NEXT_TID: AtomicU32 = AtomicU32::new(1);
/// Child index of the next thread created by uninstrumented code (parent `NO_THREAD`).
static NEXT_ORPHAN: AtomicU32 = AtomicU32::new(0);
/// Threads created through the wrapper that are not registered yet: the exit grace waits for them
/// (they are not among the live threads it watches).
static STARTING: AtomicU32 = AtomicU32::new(0);
/// Flush requests served, counted by every thread that served one (see [`flush_request`]).
static ACKS: AtomicUsize = AtomicUsize::new(0);
/// The run is being sealed (see [`seal`]): no new thread file is created.
static SEALING: AtomicBool = AtomicBool::new(false);
/// Threads inside [`start`], which may be creating a file: sealing waits for none to be.
static IN_START: AtomicU32 = AtomicU32::new(0);
/// The key whose destructor ends a thread that exits through code the runtime does not see.
static EXIT_KEY: OnceLock<libc::pthread_key_t> = OnceLock::new();

/// The pending slots of the recording threads.
pub(crate) static PENDING: Pool = Pool::new();

/// The live recording threads and the `pthread_t` handles of the process.
pub(crate) static THREADS: Registry<ThreadState> = Registry::new();

pub(crate) struct ThreadState {
    in_rt: AtomicBool,
    /// Another thread is flushing this thread's cache (see [`claim`]): wait before entering.
    claimed: AtomicBool,
    flush_pending: AtomicBool,
    /// Inside a recorded blocking operation (between its pending record and its completion).
    blocked: AtomicBool,
    /// Blocking operations left so far: the exit grace tells a thread that moved from one that
    /// stayed blocked.
    unblocked: AtomicU32,
    inner: UnsafeCell<Inner>,
}

/// What only the owning thread touches, and only with `in_rt` set.
pub(crate) struct Inner {
    pub tid: ThreadId,
    /// The identity of the thread file's header (`NO_THREAD` for main and orphans).
    pub parent: ThreadId,
    pub child_index: u32,
    /// Children created so far: the next child's index.
    pub children: u32,
    /// `End` was written (or is not due: main).
    pub ended: bool,
    pub cache: SegmentCache,
    pub writer: Writer,
    /// Where the fatal-signal handler runs on a stack overflow.
    altstack: AltStack,
    /// What this thread last did on atomic locations, to leave out the records that would order
    /// nothing new ([`Inner::atomic_leave`]).
    atomic_memo: AtomicMemo,
    /// Between the hooks of an atomic operation that took its address's lock.
    pub atomic_held: bool,
}

/// What a thread last did on atomic locations ([`Inner::atomic_leave`]).
#[derive(Clone, Copy, Default)]
struct AtomicMemo {
    /// An address whose location's clock this thread's clock holds as long as its stripe's last
    /// release is still this one (as `stripes::last` gives it).
    joined: (u64, u64),
    /// Its last release record.
    released: Option<Released>,
}

/// A release record and the access written before it.
#[derive(Clone, Copy)]
struct Released {
    addr: u64,
    size: u32,
    /// As `stripes::last` gives it after this release.
    last: u64,
    op: AtomicOp,
    /// Whether the thread held the location's clock before it.
    held: bool,
    /// Its offset in the file (none if it could not be written).
    at: Option<usize>,
    /// The file's length after it (and the segment's accesses it wrote out).
    end: usize,
}

/// The calling thread's state, or `None` when it records nothing.
#[inline(always)]
pub(crate) fn current() -> Option<&'static ThreadState> {
    let p = arch::get().cast::<ThreadState>();
    if p as usize > DEAD {
        // SAFETY: a pointer above DEAD is this thread's live state, freed only after the
        // pointer is reset (see `end`).
        Some(unsafe { &*p })
    } else if p.is_null() {
        current_slow()
    } else {
        // Mode off, replay, or an ended thread: decided here, without a call.
        None
    }
}

/// The whole hook of a recording thread when the access extends or repeats a range of its
/// instruction's stream or needs no record (see [`SegmentCache::record_fast`]): no call, no
/// stack frame. Returns false when the caller must take the full path ([`current`], then
/// [`Inner::record`] or the replay checker): first hook of the thread, replay, a signal handler
/// that interrupted the runtime, a flush in progress or requested, or an access that needs a new
/// record. A thread that records nothing ([`DEAD`]) returns true at the first compare.
#[inline(always)]
pub(crate) fn record_fast(addr: u64, size: u64, kind: AccessKind, site: usize) -> bool {
    let p = arch::get().cast::<ThreadState>();
    if p as usize <= DEAD {
        return p as usize == DEAD;
    }
    // SAFETY: as in `current`.
    let st = unsafe { &*p };
    // `enter` without its slow paths: the same handshake with a flusher (see `claim`).
    if st.in_rt.load(Ordering::Relaxed) {
        return false;
    }
    st.in_rt.store(true, Ordering::Relaxed);
    compiler_fence(Ordering::SeqCst);
    let hit = !st.claimed.load(Ordering::Relaxed) && {
        // SAFETY: `in_rt` is set and no flusher holds the state: only this thread touches it.
        let inner = unsafe { &mut *st.inner.get() };
        inner.cache.record_fast(addr, size, kind, site)
    };
    compiler_fence(Ordering::SeqCst);
    st.in_rt.store(false, Ordering::Release);
    // A flush request came meanwhile: the full path records the access again (a no-op now) and
    // serves it when it leaves the runtime. No call here keeps this path free of a stack frame.
    hit && !st.flush_pending.load(Ordering::Relaxed)
}

/// The first hook of a thread: creates its state, or marks it DEAD when nothing is recorded.
#[cold]
#[inline(never)]
fn current_slow() -> Option<&'static ThreadState> {
    let Some(rt) = runtime::recording() else {
        if runtime::replaying() {
            arch::set(REPLAY as *mut ());
        } else if runtime::settled() {
            // Mode off (or a forked child): for good. While the runtime initializes, the pointer
            // stays null and the next hook asks again.
            set_dead();
        }
        return None;
    };
    // SAFETY: plain system calls.
    let is_main = unsafe { libc::gettid() == libc::getpid() };
    let (tid, child_index) = if is_main {
        (0, 0)
    } else {
        (
            NEXT_TID.fetch_add(1, Ordering::Relaxed),
            NEXT_ORPHAN.fetch_add(1, Ordering::Relaxed),
        )
    };
    start(rt, tid, NO_THREAD, child_index, is_main)
}

/// Creates the key whose destructor ends a thread that leaves through code the runtime does not
/// see (at start-up, before any thread starts recording); false when the system refuses.
pub(crate) fn create_exit_key() -> bool {
    let mut key: libc::pthread_key_t = 0;
    // SAFETY: creating a key with a destructor that accepts any value this runtime stores.
    let created = unsafe { libc::pthread_key_create(&mut key, Some(on_thread_exit)) } == 0;
    created && EXIT_KEY.set(key).is_ok()
}

/// Allocates the next logical id for a child the calling thread is creating, which counts as
/// starting until [`child_started`].
pub(crate) fn next_child_tid() -> ThreadId {
    STARTING.fetch_add(1, Ordering::AcqRel);
    NEXT_TID.fetch_add(1, Ordering::Relaxed)
}

/// A child announced by [`next_child_tid`] registered (or was never created).
pub(crate) fn child_started() {
    STARTING.fetch_sub(1, Ordering::AcqRel);
}

/// Children announced that are not registered yet.
pub(crate) fn starting() -> u32 {
    STARTING.load(Ordering::Acquire)
}

/// Whether the thread of `st` is inside a recorded blocking operation, and how many it has left.
///
/// # Safety
/// As [`claim`]: `st` stays allocated while the caller holds the registry lock.
pub(crate) unsafe fn blocked(st: *const ThreadState) -> (bool, u32) {
    // SAFETY: per the contract.
    let st = unsafe { &*st };
    (
        st.blocked.load(Ordering::Acquire),
        st.unblocked.load(Ordering::Acquire),
    )
}

fn set_dead() {
    arch::set(DEAD as *mut ());
}

/// Creates the calling thread's state and file, and writes `Start` unless it is main. Once the run
/// is being sealed, creates nothing: the thread is not recorded.
pub(crate) fn start(
    rt: &Runtime,
    tid: ThreadId,
    parent: ThreadId,
    child_index: u32,
    is_main: bool,
) -> Option<&'static ThreadState> {
    IN_START.fetch_add(1, Ordering::SeqCst);
    let st = if SEALING.load(Ordering::SeqCst) {
        set_dead();
        None
    } else {
        start_recording(rt, tid, parent, child_index, is_main)
    };
    IN_START.fetch_sub(1, Ordering::SeqCst);
    st
}

fn start_recording(
    rt: &Runtime,
    tid: ThreadId,
    parent: ThreadId,
    child_index: u32,
    is_main: bool,
) -> Option<&'static ThreadState> {
    let header = encode_header(&ThreadHeader {
        version: FORMAT_VERSION,
        tid,
        parent,
        child_index,
    });
    let spare = THREADS.lock().take_spare();
    let state = match spare {
        // SAFETY: a spare state is owned by its taker alone.
        Some(spare) => unsafe { take_over(spare.cast_mut(), tid, parent, child_index, &header) },
        None => new_state(rt, tid, parent, child_index, is_main, &header),
    };
    let Some(state) = state else {
        set_dead();
        return None;
    };
    arch::set(state.cast());
    if let Some(&key) = EXIT_KEY.get() {
        // SAFETY: the key was created at start-up; the pointer stays valid until `end`.
        unsafe { libc::pthread_setspecific(key, state as *const libc::c_void) };
    }
    {
        // SAFETY: pthread_self never fails.
        let me = unsafe { libc::pthread_self() };
        let mut threads = THREADS.lock();
        threads.add_live(tid, me, state);
        if parent == NO_THREAD && !is_main {
            // Created by uninstrumented code: no wrapper recorded its handle, so record it here,
            // for a join that comes after this thread ended.
            threads.add_handle(me, tid);
        }
    }
    // SAFETY: just created or taken over, owned by this thread.
    let st = unsafe { &*state };
    crate::record::chaos::thread_started(&rt.options, parent, child_index);
    if !is_main {
        if let Some(mut inner) = st.enter() {
            inner.write_sync(runtime::next_seq(), NO_SITE, SyncOp::Start);
        }
    }
    Some(st)
}

/// A new state for thread `tid`, with its own file (`t<tid>.trace`, beginning with `header`),
/// cache and signal stack; `None` when the file cannot be made.
fn new_state(
    rt: &Runtime,
    tid: ThreadId,
    parent: ThreadId,
    child_index: u32,
    is_main: bool,
    header: &[u8],
) -> Option<*mut ThreadState> {
    let path = rt.dir.join(ilgen_trace::format::thread_file_name(tid));
    let chunk = rt.options.chunk_kb as usize * 1024;
    let writer = writer::c_paths(&path)
        .and_then(|(c, tmp)| Writer::create(&c, &tmp, header, chunk, mark_truncated));
    let writer = match writer {
        Ok(w) => w,
        Err(errno) => {
            if matches!(errno, libc::EFBIG | libc::ENOSPC | libc::EDQUOT) {
                rt.meta.mark_truncated();
            }
            runtime::say(&format!(
                "ilgen: failed to create {}: {}; this thread is not recorded",
                path.display(),
                std::io::Error::from_raw_os_error(errno)
            ));
            return None;
        }
    };
    Some(Box::into_raw(Box::new(ThreadState {
        in_rt: AtomicBool::new(false),
        claimed: AtomicBool::new(false),
        flush_pending: AtomicBool::new(false),
        blocked: AtomicBool::new(false),
        unblocked: AtomicU32::new(0),
        inner: UnsafeCell::new(Inner {
            tid,
            parent,
            child_index,
            children: 0,
            ended: is_main,
            cache: new_cache(rt, tid),
            writer,
            altstack: altstack::install(),
            atomic_memo: AtomicMemo::default(),
            atomic_held: false,
        }),
    })))
}

/// The state a thread that ended left ([`end`]), made thread `tid`'s, which is not main: its file
/// goes on with a section for `tid` (`header`), its drained cache and its signal stack's memory
/// are reused. A file per thread cost a file creation, a rename and a truncation, and the
/// coverage filter 4 MiB of zeroing: thread-per-job programs recorded 10 times slower than they
/// ran. `None`, the state freed, when the file cannot take the section (it cannot grow).
///
/// # Safety
/// `state` is a spare state the caller took from [`THREADS`].
unsafe fn take_over(
    state: *mut ThreadState,
    tid: ThreadId,
    parent: ThreadId,
    child_index: u32,
    header: &[u8],
) -> Option<*mut ThreadState> {
    // SAFETY: per the contract, no one else reaches the state.
    let inner = unsafe { &mut *(*state).inner.get() };
    if !inner.writer.begin_section(header) {
        // SAFETY: created by `Box::into_raw` in `new_state`, owned by the caller.
        drop(unsafe { Box::from_raw(state) });
        return None;
    }
    inner.cache.assign(tid);
    inner.altstack.reinstall();
    (inner.tid, inner.parent, inner.child_index) = (tid, parent, child_index);
    (inner.children, inner.ended) = (0, false);
    inner.atomic_memo = AtomicMemo::default();
    inner.atomic_held = false;
    Some(state)
}

/// Thread `tid`'s segment cache, in a pending slot so that a killed process loses nothing; in
/// private memory, with one message per process, when no pending file can be made.
fn new_cache(rt: &Runtime, tid: ThreadId) -> SegmentCache {
    let capacity = rt.options.segment_cache as usize;
    match PENDING.take(&rt.dir, capacity, sites::start(), tid) {
        Ok(Some(slot)) => SegmentCache::in_slot(capacity, slot),
        Ok(None) => SegmentCache::new(capacity),
        Err(message) => {
            runtime::say(&message);
            SegmentCache::new(capacity)
        }
    }
}

/// A thread's trace ends early (its writer broke): `meta.json` says the trace is truncated.
fn mark_truncated() {
    if let Some(rt) = runtime::get() {
        rt.meta.mark_truncated();
    }
}

/// The thread is ending: flushes its segment, writes `End` (not for main), and leaves its state
/// (open file, drained cache, signal stack's memory) to the next thread that starts
/// ([`take_over`]); or, when its file can take no more, closes the file and frees the state,
/// which gives its pending slot back. Later hooks of this thread record nothing.
pub(crate) fn end(st: &'static ThreadState, site: usize) {
    let (tid, spare) = match st.enter() {
        Some(mut inner) => {
            inner.flush();
            if !inner.ended {
                inner.ended = true;
                inner.write_sync(runtime::next_seq(), sites::id(site), SyncOp::End);
            }
            inner.cache.withdraw_coverage();
            let spare = inner.writer.is_open();
            if spare {
                inner.altstack.disable();
            } else {
                inner.writer.close();
                inner.altstack.remove();
            }
            (inner.tid, spare)
        }
        // Interrupted inside the runtime (a program signal handler calling pthread_exit): leave
        // the state alone; the file keeps its zero padding and still reads.
        None => return,
    };
    if let (Some(_), Some(&key)) = (runtime::get(), EXIT_KEY.get()) {
        // SAFETY: clearing this thread's key value so the destructor does not run again.
        unsafe { libc::pthread_setspecific(key, std::ptr::null()) };
    }
    let p = st as *const ThreadState;
    set_dead();
    // The pointer must read DEAD before the state goes to another thread or the memory goes, for
    // a signal handler on this thread.
    compiler_fence(Ordering::SeqCst);
    let mut threads = THREADS.lock();
    if spare {
        threads.retire(tid, p);
        return;
    }
    threads.remove_live(tid);
    drop(threads);
    // SAFETY: created by `Box::into_raw` in `new_state`; no reference survives: the pointer is
    // DEAD and the state left the registry.
    drop(unsafe { Box::from_raw(p.cast_mut()) });
}

/// Thread-key destructor: the thread exits without the runtime having ended it (uninstrumented
/// exit path, or main calling `pthread_exit`).
extern "C" fn on_thread_exit(value: *mut libc::c_void) {
    let p = arch::get().cast::<ThreadState>();
    if p as usize > DEAD && p as *mut libc::c_void == value {
        // SAFETY: this thread's live state.
        end(unsafe { &*p }, 0);
    }
}

/// Forgets the calling thread's state in a forked child: the file belongs to the parent.
pub(crate) fn abandon_after_fork() {
    let p = arch::get().cast::<ThreadState>();
    if p as usize > DEAD {
        // SAFETY: this thread's live state; the child has no other thread to race with.
        unsafe { (*(*p).inner.get()).writer.abandon() };
    }
    set_dead();
}

/// Serves a flush request (exit or fatal signal on another thread) on the calling thread, from
/// its signal handler, and acknowledges it ([`acknowledged`]); when the thread was inside the
/// runtime, both happen when the thread leaves it.
pub(crate) fn flush_request() {
    FLUSH_SIGNALS.with(|c| c.set(c.get().wrapping_add(1)));
    let p = arch::get().cast::<ThreadState>();
    if p as usize > DEAD {
        // SAFETY: this thread's live state (see `end` for why it cannot be freed under us).
        let st = unsafe { &*p };
        if st.in_rt.load(Ordering::Relaxed) {
            st.flush_pending.store(true, Ordering::Relaxed);
            return;
        }
        if let Some(mut inner) = st.enter_without_service() {
            inner.flush();
        }
    }
    acknowledge();
}

fn acknowledge() {
    ACKS.fetch_add(1, Ordering::Release);
}

/// Flush requests served so far, by all threads.
pub(crate) fn acknowledged() -> usize {
    ACKS.load(Ordering::Acquire)
}

/// Flush-request signals received so far by the calling thread.
pub(crate) fn flush_signals_seen() -> u32 {
    FLUSH_SIGNALS.with(|c| c.get())
}

/// Flushes the calling thread's segment cache (exit path, on the thread that ends the process),
/// and with `seal` closes its file too. Does nothing when the thread is inside the runtime: its
/// cache may be half-updated. Returns whether it did what was asked (true without a live state).
pub(crate) fn flush_self(seal: bool) -> bool {
    let Some(st) = current_if_live() else {
        return true;
    };
    match st.enter() {
        Some(mut inner) => {
            inner.flush_and_seal(seal);
            true
        }
        None => false,
    }
}

/// Stops new thread files for good and waits (until `expired` says stop) for the threads creating
/// one to finish: after it, every thread file belongs to a thread in [`THREADS`] or to an ended
/// one, so closing the live ones' files (`seal` of [`flush_claimed`]) leaves the directory final.
/// Returns whether no thread was still creating a file.
pub(crate) fn stop_new_files(expired: impl Fn() -> bool) -> bool {
    SEALING.store(true, Ordering::SeqCst);
    while IN_START.load(Ordering::SeqCst) > 0 {
        if expired() {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

/// The calling thread's state without creating one.
pub(crate) fn current_if_live() -> Option<&'static ThreadState> {
    let p = arch::get().cast::<ThreadState>();
    // SAFETY: as in `current`.
    (p as usize > DEAD).then(|| unsafe { &*p })
}

impl ThreadState {
    /// The thread enters (true) or leaves (false) a recorded blocking operation.
    pub fn set_blocked(&self, blocked: bool) {
        if !blocked {
            self.unblocked.fetch_add(1, Ordering::AcqRel);
        }
        self.blocked.store(blocked, Ordering::Release);
    }

    /// Another thread is flushing this one's cache: step out of the runtime until it is done.
    #[cold]
    #[inline(never)]
    fn wait_while_claimed(&self) {
        loop {
            self.in_rt.store(false, Ordering::Release);
            while self.claimed.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            self.in_rt.store(true, Ordering::Relaxed);
            compiler_fence(Ordering::SeqCst);
            if !self.claimed.load(Ordering::Relaxed) {
                return;
            }
        }
    }

    /// Enters the runtime: exclusive access to the cache and file until the guard drops.
    /// `None` when the thread is already inside (a program signal handler interrupted it).
    #[inline(always)]
    pub fn enter(&self) -> Option<Entered<'_>> {
        let mut e = self.enter_without_service()?;
        e.serve = true;
        Some(e)
    }

    #[inline(always)]
    fn enter_without_service(&self) -> Option<Entered<'_>> {
        if self.in_rt.load(Ordering::Relaxed) {
            return None;
        }
        self.in_rt.store(true, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
        if self.claimed.load(Ordering::Relaxed) {
            self.wait_while_claimed();
        }
        Some(Entered {
            state: self,
            serve: false,
        })
    }
}

/// Inside the runtime on this thread. Dropping it leaves the runtime and serves a flush request
/// that arrived meanwhile.
pub(crate) struct Entered<'a> {
    state: &'a ThreadState,
    serve: bool,
}

impl std::ops::Deref for Entered<'_> {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        // SAFETY: `in_rt` is set: nothing else on this thread touches `inner`.
        unsafe { &*self.state.inner.get() }
    }
}

impl std::ops::DerefMut for Entered<'_> {
    fn deref_mut(&mut self) -> &mut Inner {
        // SAFETY: as above; only one `Entered` exists per thread at a time.
        unsafe { &mut *self.state.inner.get() }
    }
}

impl Drop for Entered<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        compiler_fence(Ordering::SeqCst);
        self.state.in_rt.store(false, Ordering::Release);
        if self.serve && self.state.flush_pending.load(Ordering::Relaxed) {
            serve_pending(self.state);
        }
    }
}

#[cold]
#[inline(never)]
fn serve_pending(st: &ThreadState) {
    st.flush_pending.store(false, Ordering::Relaxed);
    if let Some(mut inner) = st.enter_without_service() {
        inner.flush();
    }
    acknowledge();
}

impl Inner {
    /// [`Inner::flush`], then with `seal` closes the file: it is final, later records are dropped.
    fn flush_and_seal(&mut self, seal: bool) {
        self.flush();
        if seal {
            self.writer.close();
        }
    }

    /// Writes the segment cache out as access records and empties it.
    pub fn flush(&mut self) {
        let Inner { cache, writer, .. } = self;
        cache.drain(|e| write_access(writer, e));
    }

    /// Writes out the accesses of the segment recorded before `mark` (see [`SegmentCache::mark`]).
    pub fn flush_to(&mut self, mark: Mark) {
        let Inner { cache, writer, .. } = self;
        cache.drain_to(mark, |e| write_access(writer, e));
    }

    /// An atomic operation of `kind` on `[addr, addr + size)` at `site` that acquires or
    /// releases (`how`: the `abi::ATOMIC_*` bits), after its instruction, the lock of its
    /// address's `stripe` held: the accesses so far, then the acquire record (the counter's
    /// value), the operation's access and the release record (the next number), so that the
    /// accesses before and after it are before and after it in the file. After a release the
    /// segment's bytes are forgotten: an access after it is recorded again, as it is not ordered
    /// before the release's acquirers. After an acquire alone they are not: an access repeated
    /// after it is left to its record before it, which every other access is ordered against at
    /// most as much (the acquire orders nothing of this thread before anything else).
    ///
    /// The records that would order nothing new are left out (ThreadSanitizer's clocks, as the
    /// analysis keeps them: a release store sets the location's clock to the thread's, a release
    /// read-modify-write joins the thread's into it, an acquire joins it into the thread's):
    /// - an acquire, when this thread's clock already holds the location's: it did so after its
    ///   last operation there ([`AtomicMemo::joined`]) and no release was recorded on the stripe
    ///   since. Its access is then recorded as a relaxed one's, in the segment (a spinning load
    ///   writes one record);
    /// - the whole operation, when it releases and the file ends with this thread's last release
    ///   on the same bytes, numbered last on the stripe, no acquire recorded there since, its
    ///   acquire half (if any) left out by the rule above, and nothing in the segment: the access
    ///   and release records before it stand for it exactly. Every access of another thread is
    ///   ordered before or after its access as before that one (no acquirer read the release in
    ///   between, this thread joined nothing new), and the location's clock after it is the one
    ///   after that release (a store after a read-modify-write only when the thread held the
    ///   location's clock). A single thread's loop of read-modify-writes writes one release;
    /// - a release still the file's last record, acquired by no one, when this thread's next
    ///   release on the location comes (accesses between them waiting in the segment): the new
    ///   one's record takes its place as the location's last, so the old one would order nothing
    ///   the new one does not (the location's clock after both is as after the new one alone,
    ///   save a read-modify-write after a store the thread released without holding the clock).
    pub fn atomic_leave(
        &mut self,
        addr: u64,
        size: u32,
        kind: AccessKind,
        site: usize,
        how: u64,
        stripe: usize,
    ) {
        if stripes::hot(stripe) {
            // Hot since this thread looked: an access, as a relaxed operation's.
            return self.record(addr, size, kind, site);
        }
        let acquires = how & abi::ATOMIC_ACQUIRES != 0;
        let release = match (how & abi::ATOMIC_RELEASES, how & abi::ATOMIC_RMW) {
            (0, _) => None,
            (_, 0) => Some(AtomicOp::ReleaseStore),
            _ => Some(AtomicOp::ReleaseRmw),
        };
        let (last, acquired_since) = stripes::last(stripe);
        let memo = self.atomic_memo;
        let holds = memo.joined == (addr, last);
        let acquire = acquires && !holds;
        if let (Some(op), Some(prev)) = (release, memo.released) {
            let stands = (prev.addr, prev.size, prev.last, prev.end)
                == (addr, size, last, self.writer.len())
                && !acquired_since
                && !acquire
                && (op == AtomicOp::ReleaseRmw || prev.op == AtomicOp::ReleaseStore || holds)
                && self.cache.is_empty();
            if stands {
                return;
            }
            // Still the file's last record, read by no one: this release's record takes its place
            // as the location's, ordering what it ordered and the accesses since.
            let replaces = (prev.addr, prev.last, prev.end) == (addr, last, self.writer.len())
                && !acquired_since
                && (op == AtomicOp::ReleaseStore || prev.op == AtomicOp::ReleaseRmw || prev.held);
            if let (true, Some(at)) = (replaces, prev.at) {
                self.writer.retract(at);
            }
        }
        if acquire {
            let seq = runtime::acquire_seq();
            self.spill();
            self.write_atomic(seq, addr, sites::id(site), AtomicOp::Acquire);
            stripes::note_acquire(stripe);
        }
        if acquires {
            self.atomic_memo.joined = (addr, last);
        }
        self.record(addr, size, kind, site);
        if let Some(op) = release {
            self.spill();
            let seq = runtime::release_seq();
            let at = self.write_atomic(seq, addr, sites::id(site), op);
            stripes::note_release(stripe, seq);
            // The location's clock is this thread's after a store, and after a read-modify-write
            // when it held the location's before.
            let now = stripes::last(stripe).0;
            let held = self.atomic_memo.joined == (addr, last);
            if op == AtomicOp::ReleaseStore || held {
                self.atomic_memo.joined = (addr, now);
            }
            self.flush();
            self.atomic_memo.released = Some(Released {
                addr,
                size,
                last: now,
                op,
                held,
                at,
                end: self.writer.len(),
            });
        }
    }

    /// Writes one atomic record; returns its offset, for retraction.
    fn write_atomic(&mut self, seq: u64, addr: u64, site: u32, op: AtomicOp) -> Option<usize> {
        self.writer.write(&Event::Atomic(Atomic {
            seq,
            addr,
            site,
            op,
        }))
    }

    /// Writes one sync record; returns its offset for completion or retraction.
    pub fn write_sync(&mut self, seq: u64, site: u32, op: SyncOp) -> Option<usize> {
        self.writer.write(&Event::Sync(Sync { seq, site, op }))
    }
}

impl Inner {
    /// Adds one access whose hook's fast path ([`record_fast`]) just missed to the segment cache
    /// (its probes are not repeated: [`SegmentCache::record_miss`]), writing the cache out first
    /// when it is full.
    #[inline(always)]
    pub fn record_missed(&mut self, addr: u64, size: u32, kind: AccessKind, site: usize) {
        if !self.cache.record_miss(addr, size, kind, site) {
            self.flush_full(addr, size, kind, site);
        }
    }

    /// Records an access no hook's fast path has tried yet (an atomic operation's, after its
    /// instruction).
    pub fn record(&mut self, addr: u64, size: u32, kind: AccessKind, site: usize) {
        if !self.cache.record(addr, size, kind, site) {
            self.flush_full(addr, size, kind, site);
        }
    }

    /// Writes out the segment's accesses so far, keeping its bytes.
    fn spill(&mut self) {
        let Inner { cache, writer, .. } = self;
        cache.spill(|e| write_access(writer, e));
    }

    #[cold]
    #[inline(never)]
    fn flush_full(&mut self, addr: u64, size: u32, kind: AccessKind, site: usize) {
        self.spill();
        self.cache.record(addr, size, kind, site);
    }
}

fn write_access(writer: &mut Writer, e: &Entry) {
    if e.mask != 0 {
        writer.write_window(e.addr, e.mask, e.kind, sites::id(e.site));
        return;
    }
    writer.write_access(&Access {
        addr: e.addr,
        size: e.size,
        site: sites::id(e.site),
        kind: e.kind,
    });
}

/// Flushing another thread's cache from the thread that ends the process, without interrupting
/// it: an asymmetric Dekker handshake. The owner's entry into the runtime is `in_rt = 1` then a
/// read of `claimed` (plain instructions, no fence); the flusher sets `claimed` on every thread,
/// issues one `membarrier` (which puts a full barrier on every running thread of the process), and
/// then each owner is either outside the runtime, and will wait at its next entry, or inside, and
/// the flusher waits for it to leave. No signal is sent, so no system call of the program returns
/// EINTR.
///
/// # Safety
/// `st` must stay allocated until [`flush_claimed`] returns: the caller holds the registry lock,
/// which every thread takes before it frees its state.
pub(crate) unsafe fn claim(st: *const ThreadState) {
    // SAFETY: per the contract.
    unsafe { (*st).claimed.store(true, Ordering::Relaxed) };
}

/// Closes the file of a spare state (left by a thread that ended, see [`end`]): the seal, once no
/// thread starts any more ([`stop_new_files`]).
///
/// # Safety
/// `st` is a spare state of [`THREADS`], whose lock the caller holds.
pub(crate) unsafe fn close_spare(st: *const ThreadState) {
    // SAFETY: per the contract, no thread owns the state.
    unsafe { (*(*st).inner.get()).writer.close() };
}

/// After [`claim`] and a `membarrier`: waits (until `expired` says stop) for the owner to be
/// outside the runtime, flushes its cache (and with `seal` closes its file), and releases it.
/// Returns whether it flushed.
///
/// # Safety
/// As [`claim`].
pub(crate) unsafe fn flush_claimed(
    st: *const ThreadState,
    expired: impl Fn() -> bool,
    seal: bool,
) -> bool {
    // SAFETY: per the contract.
    let st = unsafe { &*st };
    let mut flushed = false;
    loop {
        if !st.in_rt.load(Ordering::Acquire) {
            // SAFETY: the owner is outside the runtime and waits at its next entry while
            // `claimed` is set, so this is the only access to its cache and file.
            unsafe { (*st.inner.get()).flush_and_seal(seal) };
            flushed = true;
            break;
        }
        if expired() {
            break;
        }
        // SAFETY: sched_yield is async-signal-safe.
        unsafe { libc::sched_yield() };
    }
    st.claimed.store(false, Ordering::Release);
    flushed
}
