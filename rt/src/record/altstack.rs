//! An alternate signal stack for each recording thread, so a stack overflow still flushes.
//!
//! Takes the calling thread at its start and at its end; gives it a signal stack of its own
//! (`sigaltstack`), on which the runtime's fatal-signal handlers (installed `SA_ONSTACK` by
//! `finish`) run: a SIGSEGV raised by a stack overflow finds no room on the thread's stack, and
//! without this the handler could not run and the thread's last segment would be lost. A thread
//! that already has an alternate stack (the program set one) keeps it.

use std::ptr;

/// Room for the fatal-signal handler: flushing a segment cache, rewriting `meta.json`.
const SIZE: usize = 64 * 1024;

/// The stack [`install`] mapped for the calling thread, to unmap at its end (null if none).
pub(crate) struct AltStack(*mut libc::c_void);

/// Gives the calling thread an alternate signal stack unless it has one.
pub(crate) fn install() -> AltStack {
    // SAFETY: sigaltstack queries and sets the calling thread's own stack; the mapping is fresh.
    unsafe {
        let mut old: libc::stack_t = std::mem::zeroed();
        if libc::sigaltstack(ptr::null(), &mut old) != 0 || old.ss_flags & libc::SS_DISABLE == 0 {
            return AltStack(ptr::null_mut());
        }
        let sp = libc::mmap(
            ptr::null_mut(),
            SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if sp == libc::MAP_FAILED {
            return AltStack(ptr::null_mut());
        }
        let stack = libc::stack_t {
            ss_sp: sp,
            ss_flags: 0,
            ss_size: SIZE,
        };
        if libc::sigaltstack(&stack, ptr::null_mut()) != 0 {
            libc::munmap(sp, SIZE);
            return AltStack(ptr::null_mut());
        }
        AltStack(sp)
    }
}

impl AltStack {
    /// Disables and unmaps the stack if it still is the thread's (the program may have replaced
    /// it); called by the thread itself at its end, outside any handler.
    pub(crate) fn remove(&mut self) {
        if self.0.is_null() {
            return;
        }
        // SAFETY: as in `install`; the stack is unmapped only once it is no longer in use.
        unsafe {
            let mut cur: libc::stack_t = std::mem::zeroed();
            if libc::sigaltstack(ptr::null(), &mut cur) == 0
                && cur.ss_sp == self.0
                && cur.ss_flags & libc::SS_ONSTACK == 0
            {
                let off = libc::stack_t {
                    ss_sp: ptr::null_mut(),
                    ss_flags: libc::SS_DISABLE,
                    ss_size: 0,
                };
                libc::sigaltstack(&off, ptr::null_mut());
                libc::munmap(self.0, SIZE);
            }
        }
        self.0 = ptr::null_mut();
    }
}
