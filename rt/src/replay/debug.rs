//! Replay's debugger interface: symbols a debugger reads or breaks on (the `ilgen` gdb and lldb
//! commands of `tools/debug/`).
//!
//! Takes the gate's steps, the threads' start and the accesses of a replaying process; gives
//! [`__ilgen_debug_cursor`] (steps taken so far), [`__ilgen_debug_threads`] (each live thread's
//! kernel tid next to its recorded tid), [`__ilgen_step_hook`] (called on the thread that took a
//! step) and [`__ilgen_stop_hook`] (called before the access named by the `stop_at` option, once).
//! A debugger reads the two arrays without calling into the process, so a stopped program is
//! never run by a query.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use ilgen_trace::{SiteId, ThreadId};

/// Steps of the schedule taken so far (the gate's cursor).
#[no_mangle]
pub static __ilgen_debug_cursor: AtomicU32 = AtomicU32::new(0);

/// Threads the debugger can name; later threads are left out of the table.
pub const MAX_THREADS: usize = 256;

/// `kernel tid << 32 | recorded tid` of each thread that started replaying; 0 is an empty slot.
#[no_mangle]
pub static __ilgen_debug_threads: [AtomicU64; MAX_THREADS] =
    [const { AtomicU64::new(0) }; MAX_THREADS];

static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);
static STOPPED: AtomicBool = AtomicBool::new(false);

/// Called on the thread that took step `step` (0-based), after the cursor moved past it.
#[no_mangle]
#[inline(never)]
pub extern "C" fn __ilgen_step_hook(step: u32) {
    crate::arch::keep_alive(0, step, 0, 0);
}

/// Called on thread `tid` before its access at `site`, the `stop_at` option's.
#[no_mangle]
#[inline(never)]
pub extern "C" fn __ilgen_stop_hook(site: u32, tid: u32) {
    crate::arch::keep_alive(0, site, tid, 0);
}

/// The gate's cursor moved past step `p`.
pub(crate) fn step_taken(p: usize) {
    __ilgen_debug_cursor.store(p as u32 + 1, Ordering::Release);
    __ilgen_step_hook(p as u32);
}

/// The calling thread replays as recorded thread `tid`.
pub(crate) fn thread_started(tid: ThreadId) {
    let slot = NEXT_SLOT.fetch_add(1, Ordering::Relaxed);
    if let Some(s) = __ilgen_debug_threads.get(slot) {
        // SAFETY: a plain system call.
        let lwp = unsafe { libc::gettid() } as u32;
        s.store(u64::from(lwp) << 32 | u64::from(tid), Ordering::Release);
    }
}

/// Thread `tid` is about to access memory at `site`: the stop hook when it is the access the
/// `stop_at` option names (`stop_at`), the first time only (a loop would stop at every
/// iteration, and `continue` must reach the race).
pub(crate) fn access(tid: ThreadId, site: SiteId, stop_at: Option<(SiteId, ThreadId)>) {
    if stop_at == Some((site, tid)) && !STOPPED.swap(true, Ordering::AcqRel) {
        __ilgen_stop_hook(site, tid);
    }
}
