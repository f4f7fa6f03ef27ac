//! Memory exhaustion in the `ilgen` command: one message and a chosen exit status, never an abort;
//! and one malloc arena for all its threads ([`one_arena`]), which keeps its address space small.
//!
//! Takes every allocation of a process that installs [`ExitOnExhaustion`] as its global allocator
//! (the `ilgen` command does; the runtime does not), and the message set with [`on_exhaustion`];
//! gives the system allocator's memory or, when there is none left, that message on stderr and
//! the exit status. Rust's own handler aborts (SIGABRT, core dump), and the stable library has no
//! hook before it (`std::alloc::set_alloc_error_hook` is unstable), so the allocator itself must
//! not return the failure. Inside [`fallibly`] it does, so that a `try_reserve` there still reports
//! to its caller (a trace file too large for memory is its own error, see `file`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

/// The system allocator, exiting with [`on_exhaustion`]'s message when it has no memory left.
pub struct ExitOnExhaustion;

/// Printed when nothing more precise was set.
const DEFAULT: &[u8] = b"ilgen: error: out of memory\n";
/// The message: a leaked `&'static [u8]`, null for [`DEFAULT`]. One pointer, so that a failing
/// thread never sees the text of one message with the length of another.
static MESSAGE: AtomicPtr<&'static [u8]> = AtomicPtr::new(std::ptr::null_mut());
static STATUS: AtomicI32 = AtomicI32::new(2);

thread_local! {
    /// This thread is inside [`fallibly`]. Const-initialized and without a destructor, so reading
    /// it allocates nothing.
    static FALLIBLE: Cell<bool> = const { Cell::new(false) };
}

/// Says what to print, and the status to exit with, when memory runs out from now on. The
/// message is one line without its newline.
pub fn on_exhaustion(message: &str, status: i32) {
    let text: &'static [u8] = Box::leak(format!("{message}\n").into_bytes().into_boxed_slice());
    STATUS.store(status, Ordering::Relaxed);
    MESSAGE.store(Box::into_raw(Box::new(text)), Ordering::Release);
}

/// Makes every thread allocate from one malloc arena; call it before any other thread starts.
/// glibc gives each thread that allocates an arena of its own, and each arena reserves 64 MiB of
/// address space: with the analysis's worker threads that was a fifth of what `ulimit -v` counts
/// (192 of 904 MiB for a 10^7-event trace on 2 cores), and it grows with the cores. One arena
/// instead (each thread still keeps a cache of small blocks of its own).
pub fn one_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: a plain setting of the allocator, made before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Runs `f` with allocation failures returned to the caller (null from the allocator, `Err` from
/// `try_reserve`) instead of ending the process.
pub fn fallibly<T>(f: impl FnOnce() -> T) -> T {
    /// Puts the flag back also when `f` unwinds.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            FALLIBLE.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(FALLIBLE.with(|c| c.replace(true)));
    f()
}

/// Prints the message with one `write` (no allocation, no lock) and exits without running
/// destructors or atexit handlers, which might allocate.
fn exhausted() -> ! {
    let p = MESSAGE.load(Ordering::Acquire);
    // SAFETY: a non-null pointer came from `Box::into_raw` of a leaked slice and is never freed.
    let text: &[u8] = if p.is_null() { DEFAULT } else { unsafe { *p } };
    // SAFETY: writing a live buffer to stderr, then ending the process.
    unsafe {
        libc::write(2, text.as_ptr().cast(), text.len());
        libc::_exit(STATUS.load(Ordering::Relaxed))
    }
}

fn checked(p: *mut u8) -> *mut u8 {
    if p.is_null() && !FALLIBLE.try_with(Cell::get).unwrap_or(false) {
        exhausted();
    }
    p
}

// SAFETY: every call goes to the system allocator with the caller's arguments unchanged; only a
// null result is acted on.
unsafe impl GlobalAlloc for ExitOnExhaustion {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        checked(System.alloc(layout))
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        checked(System.alloc_zeroed(layout))
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        checked(System.realloc(ptr, layout, new_size))
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}
