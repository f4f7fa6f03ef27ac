//! The end of the process: nothing recorded is lost, however it ends.
//!
//! Takes `exit()` and `quick_exit()` (their wrappers, then `atexit`/`at_quick_exit` handlers; a
//! return from `main` is an exit too, announced by the pass's hook), `_exit()` and `_Exit()` (their
//! wrappers, which do the handlers' part themselves), fatal and terminating signals
//! (SIGSEGV, SIGBUS, SIGABRT, which `abort()` raises, SIGINT, SIGTERM) and `fork()`; gives the
//! exit grace and the `Exit` record, every thread's segment cache flushed into its file and
//! `meta.json` rewritten with how the run ended.
//!
//! The exit grace ([`exiting`]): threads the program left running when it exits would otherwise
//! be cut off wherever they are, often before their first step, and nothing they would have done
//! could be predicted. So the exiting thread first lets them run, up to `exit_grace_ms`, until
//! every other live thread is blocked in a recorded blocking operation (lock, condition wait,
//! join, `sem_wait`, barrier: between its pending record and its completion) or has ended, and
//! has stayed so for [`SETTLED_MS`]; a thread in `sleep`, `read` or a spin is running as far as
//! the runtime can tell, and uses up the grace. Then it writes `Exit` with the next sequence
//! number, after every step the others took meanwhile. A program whose other threads all wait
//! forever loses a few milliseconds; one without other threads, nothing. `_exit` and `_Exit` get
//! the grace too (programs such as lbzip2 finish with them); fatal signals do not: they are not
//! the program's way of finishing.
//!
//! Each thread owns its cache. The thread that ends the process flushes its own, then the other
//! live threads' caches without interrupting them: it claims each one, issues one
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, and flushes every thread that is outside the
//! runtime (waiting up to `flush_timeout_ms` for one that is inside to leave); see
//! `thread::claim` for the handshake. No signal is sent, so the program sees nothing.
//!
//! Fallback when the kernel refuses `membarrier` registration: it sends each live thread the flush
//! signal (`flush_signal`, default 62 = SIGRTMAX-2 on Linux, installed with SA_RESTART) whose
//! handler flushes that thread's cache (deferred to the moment it leaves the runtime if it was
//! inside), and waits up to `flush_timeout_ms` for acknowledgements. Side effect of the fallback:
//! in the last moments of the process, a call that returns EINTR for any handled signal (`sleep`,
//! `pause`) may return early in the other threads; the `sem_wait` wrapper retries on the
//! runtime's own signal. The flush signal's handler is installed only for the fallback, so by
//! default the runtime takes no signal number from the program.
//!
//! A fatal signal is handled, then passed on: to the handler the program had installed before the
//! runtime did (if it returns, the program goes on), else the default action is restored and the
//! signal raised again, so the exit status is the real one. Signals ignored at start stay ignored;
//! a handler the program installs later replaces the runtime's (its exit path still flushes
//! through `atexit`). SIGKILL runs nothing, nor does an `_exit` made where the pass did not see it
//! (in an uninstrumented library): the files then end with zero padding after the last record
//! written, which still reads, and each thread's current segment is in its pending slot
//! (`pending`), which the reader appends. A fatal signal leaves the pending files
//! too, for a thread that did not flush in time; a sealed exit removes them.
//!
//! The exit handler is registered when the runtime initializes (its constructor, or the first
//! hook). Code that runs after it (atexit handlers registered earlier, static destructors) is
//! still recorded, up to the seal.
//!
//! A normal exit then seals the trace, as late as the runtime can: from its ELF destructor (which
//! runs after every exit handler), or at once on `quick_exit`, `_exit` and `_Exit`. The same
//! handshake that flushes the other threads closes their files (and those ended threads left for
//! new ones), no new thread is recorded, and
//! `meta.json` lists every thread file's length and checksum (`MetaFile::write_sealed`), so the
//! reader can refuse a file changed afterwards; what runs after the seal (other ELF destructors,
//! libgcc's at the very end) is not recorded. Sealing needs the handshake; under the signal fallback, or when a thread does not
//! leave the runtime in time, the exit stays unsealed, as do a fatal signal's and a truncated run's.
//!
//! `fork()`: the child shares the parent's file mappings, so its runtime turns recording off for
//! good in a `pthread_atfork` child handler and never writes into the parent's trace.

use std::sync::atomic::{AtomicBool, Ordering};

use ilgen_trace::SyncOp;

use crate::{record, replay, runtime, thread};

/// Signals whose default action ends the process and that the runtime handles.
const FATAL: [libc::c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGABRT,
    libc::SIGINT,
    libc::SIGTERM,
];

/// `membarrier` private expedited is registered: flush other threads by handshake, not signals.
static MEMBARRIER: AtomicBool = AtomicBool::new(false);
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

/// A thread is finishing the process (flushing everyone); others only flush themselves.
static FINISHING: AtomicBool = AtomicBool::new(false);
/// The program's handlers from before the runtime's, indexed by signal number.
static mut PREVIOUS: [Option<libc::sigaction>; 65] = [None; 65];

/// How long the other threads must stay blocked, none of them moving, before the exit grace
/// ends early: a thread that entered an uncontended lock is `blocked` for a moment.
const SETTLED_MS: u64 = 5;

extern "C" {
    fn at_quick_exit(f: extern "C" fn()) -> libc::c_int;
}

/// The process is ending on the calling thread at `site` (`exit()`, `quick_exit()`, `_exit()`,
/// `_Exit()`, the return from `main`): the exit grace when it records, then `Exit`. Replay: `Exit` takes its turn in the
/// schedule, then the same grace (by the replay threads' status), so that the steps the schedule
/// let the others reach (the racing access right after its last step) are taken before the end.
pub(crate) fn exiting(site: *const libc::c_void) {
    if let (Some(rt), Some(_)) = (runtime::get(), thread::current_if_live()) {
        grace(u64::from(rt.options.exit_grace_ms), others_blocked);
    }
    record::sync::now(site, SyncOp::Exit);
    if let Some(r) = replay::gate::get() {
        grace(
            u64::from(r.options.exit_grace_ms),
            replay::thread::others_blocked,
        );
    }
}

/// `_exit()`/`_Exit()` at `site`: [`exiting`], then what the exit handlers these calls skip would
/// have done: the trace written and sealed at once (as on `quick_exit`), or the replay's outcome.
/// Nothing at all in a `vfork` child: it shares the parent's memory, runtime included, and runs no
/// fork handler, so its `_exit` (after a failed `exec`) must leave the parent's trace and replay
/// alone.
pub(crate) fn exiting_without_handlers(site: *const libc::c_void) {
    // SAFETY: getpid never fails.
    let pid = unsafe { libc::getpid() } as u32;
    let recording = runtime::get().is_some_and(|rt| rt.pid == pid);
    let replaying = replay::gate::get().is_some_and(|r| r.pid == pid);
    if !recording && !replaying {
        return;
    }
    exiting(site);
    if recording {
        on_quick_exit();
    } else {
        replay::report::at_exit();
    }
}

/// Lets the other threads run for up to `ms` milliseconds, less once they are all blocked or
/// ended and none has moved for [`SETTLED_MS`]. `others_blocked` says when no other thread can
/// run: how many are live, and a count that changes whenever one of them moves.
fn grace(ms: u64, others_blocked: fn() -> Option<(u64, u64)>) {
    let deadline = now_ms() + ms;
    let mut still: Option<(u64, u64)> = None;
    while now_ms() < deadline {
        match others_blocked() {
            Some((0, _)) => return,
            Some((_, moves)) => match still {
                Some((since, seen)) if seen == moves => {
                    if now_ms() >= since + SETTLED_MS {
                        return;
                    }
                }
                _ => still = Some((now_ms(), moves)),
            },
            None => still = None,
        }
        let ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        // SAFETY: nanosleep with a valid request and no remainder (an early wake-up is harmless).
        unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
    }
}

/// When no other thread can run (each live one is blocked in a recorded operation, none is
/// starting): how many are live, and how many blocking operations they have left so far.
fn others_blocked() -> Option<(u64, u64)> {
    if thread::starting() > 0 {
        return None;
    }
    let threads = thread::THREADS.lock();
    let (mut live, mut moves) = (0u64, 0u64);
    // SAFETY: pthread_self never fails; the registry lock keeps every listed state allocated.
    unsafe {
        for (_, st) in threads.others(libc::pthread_self()) {
            let (blocked, left) = thread::blocked(st);
            if !blocked {
                return None;
            }
            live += 1;
            moves += u64::from(left);
        }
    }
    Some((live, moves))
}

/// Installs the exit, fork and signal handlers; called once, right after initialization.
pub(crate) fn install() {
    let Some(rt) = runtime::get() else { return };
    // SAFETY: registering handlers that only touch the runtime's own state.
    unsafe {
        let registered = libc::syscall(
            libc::SYS_membarrier,
            MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
            0,
            0,
        );
        MEMBARRIER.store(
            registered == 0 && !rt.options.flush_by_signal,
            Ordering::Relaxed,
        );
        libc::atexit(on_exit);
        at_quick_exit(on_quick_exit);
        libc::pthread_atfork(None, None, Some(on_fork_child));
        if !MEMBARRIER.load(Ordering::Relaxed) {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_flush_signal as *const () as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(rt.options.flush_signal, &sa, std::ptr::null_mut());
        }
        if !rt.options.handle_signals {
            return;
        }
        for sig in FATAL {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            if old.sa_sigaction != libc::SIG_DFL {
                (*std::ptr::addr_of_mut!(PREVIOUS))[sig as usize] = Some(old);
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_fatal_signal as *const () as usize;
            // On the thread's alternate stack (`altstack`): a stack overflow still flushes.
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART | libc::SA_ONSTACK;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Flushes the calling thread and asks every other live thread to flush, waiting up to the
/// configured timeout; with `seal` (a normal exit), also closes every thread file and records no
/// new thread. Returns whether all of that was done: every file then is final. Async-signal-safe
/// without `seal`: no allocation, bounded waits only.
fn flush_everyone(rt: &runtime::Runtime, seal: bool) -> bool {
    if FINISHING.swap(true, Ordering::AcqRel) {
        // Another thread is already doing it (an exit racing a signal).
        thread::flush_self(false);
        return false;
    }
    let deadline = now_ms() + u64::from(rt.options.flush_timeout_ms);
    let expired = || now_ms() >= deadline;
    // Sealing needs the handshake: a thread flushing itself on a signal cannot be told to stop.
    let seal = seal && MEMBARRIER.load(Ordering::Relaxed) && thread::stop_new_files(expired);
    let own = thread::flush_self(seal);
    let all = if MEMBARRIER.load(Ordering::Relaxed) {
        flush_by_handshake(deadline, seal)
    } else {
        flush_by_signal(rt, deadline)
    };
    if rt.options.verbosity >= 2 {
        let msg: &[u8] = if all {
            b"ilgen: every thread flushed\n"
        } else {
            b"ilgen: some threads did not flush in time\n"
        };
        // SAFETY: write(2) of a static message.
        unsafe { libc::write(2, msg.as_ptr() as *const libc::c_void, msg.len()) };
    }
    FINISHING.store(false, Ordering::Release);
    seal && own && all
}

/// Flushes every other live thread's cache from this thread, and with `seal` closes its file and
/// those of the spare states (threads that ended); true if all were flushed.
fn flush_by_handshake(deadline: u64, seal: bool) -> bool {
    let Some(threads) = thread::THREADS.try_lock(10_000) else {
        return false;
    };
    // SAFETY: pthread_self never fails; the registry lock keeps every listed state allocated.
    unsafe {
        let me = libc::pthread_self();
        for (_, st) in threads.others(me) {
            thread::claim(st);
        }
        if libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0 {
            // Cannot order the handshake: release everyone untouched.
            for (_, st) in threads.others(me) {
                thread::flush_claimed(st, || true, false);
            }
            return false;
        }
        let mut all = true;
        for (_, st) in threads.others(me) {
            all &= thread::flush_claimed(st, || now_ms() >= deadline, seal);
        }
        if seal {
            for st in threads.spares() {
                thread::close_spare(st);
            }
        }
        all
    }
}

/// The fallback: asks every other live thread to flush itself; true if all acknowledged in time.
fn flush_by_signal(rt: &runtime::Runtime, deadline: u64) -> bool {
    let before = thread::acknowledged();
    let mut sent = 0usize;
    if let Some(threads) = thread::THREADS.try_lock(10_000) {
        // SAFETY: pthread_self never fails; pthread_kill of a live, registered thread (threads
        // leave the registry, under this lock, before they exit).
        unsafe {
            let me = libc::pthread_self();
            for (t, _) in threads.others(me) {
                if libc::pthread_kill(t, rt.options.flush_signal) == 0 {
                    sent += 1;
                }
            }
        }
    }
    while thread::acknowledged().wrapping_sub(before) < sent && now_ms() < deadline {
        // SAFETY: sched_yield is async-signal-safe.
        unsafe { libc::sched_yield() };
    }
    thread::acknowledged().wrapping_sub(before) >= sent
}

fn now_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// Whether this process is the one that started recording (not a forked child).
fn own_process(rt: &runtime::Runtime) -> bool {
    // SAFETY: getpid never fails.
    unsafe { libc::getpid() as u32 == rt.pid }
}

extern "C" fn on_exit() {
    let Some(rt) = runtime::get() else { return };
    if !own_process(rt) {
        return;
    }
    flush_everyone(rt, false);
    rt.meta.write_exit();
    if rt.options.verbosity >= 1 {
        runtime::say(&format!("ilgen: trace written to {}", rt.dir.display()));
    }
}

/// `quick_exit` runs no ELF destructor (nor do `_exit` and `_Exit`): the exit is written sealed at
/// once.
extern "C" fn on_quick_exit() {
    on_exit();
    seal();
}

/// Seals the trace of a process that exits normally (see the module doc); once only.
pub(crate) fn seal() {
    static SEALED: AtomicBool = AtomicBool::new(false);
    let Some(rt) = runtime::get() else { return };
    if !own_process(rt) || SEALED.swap(true, Ordering::AcqRel) {
        return;
    }
    if flush_everyone(rt, true) {
        rt.meta.write_sealed(&rt.dir);
        // Every segment is in the thread files: a sealed run leaves no pending file.
        thread::PENDING.remove_files(&rt.dir);
    }
}

extern "C" fn on_fork_child() {
    runtime::turn_off();
    thread::abandon_after_fork();
}

extern "C" fn on_flush_signal(_sig: libc::c_int) {
    // SAFETY: saving and restoring the interrupted code's errno.
    let errno = unsafe { *libc::__errno_location() };
    thread::flush_request();
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

extern "C" fn on_fatal_signal(
    sig: libc::c_int,
    info: *mut libc::siginfo_t,
    ctx: *mut libc::c_void,
) {
    // SAFETY: saving and restoring the interrupted code's errno.
    let errno = unsafe { *libc::__errno_location() };
    if let Some(rt) = runtime::get() {
        if own_process(rt) {
            flush_everyone(rt, false);
            rt.meta.write_signal(sig);
        }
    }
    // SAFETY: reading the handler saved at installation, which nothing writes afterwards.
    let previous = unsafe {
        (*std::ptr::addr_of!(PREVIOUS))
            .get(sig as usize)
            .copied()
            .flatten()
    };
    match previous {
        Some(old) if old.sa_flags & libc::SA_SIGINFO != 0 => {
            // SAFETY: the program's own handler, called as it asked to be.
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                unsafe { std::mem::transmute(old.sa_sigaction) };
            f(sig, info, ctx);
        }
        Some(old) => {
            // SAFETY: as above.
            let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(old.sa_sigaction) };
            f(sig);
        }
        None => {
            // SAFETY: restore the default action and raise again: the signal is blocked while
            // this handler runs, so it is delivered, with its default action, when it returns.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = libc::SIG_DFL;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
                libc::raise(sig);
            }
        }
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}
