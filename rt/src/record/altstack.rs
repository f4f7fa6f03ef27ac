//! An alternate signal stack for each recording thread, so a stack overflow still flushes.
//!
//! Takes the calling thread at its start and at its end; gives it a signal stack of its own
//! (`sigaltstack`; the memory of a thread that ended when the runtime hands that thread's state
//! over, see `thread`), on which the runtime's fatal-signal handlers (installed `SA_ONSTACK` by
//! `finish`) run: a SIGSEGV raised by a stack overflow finds no room on the thread's stack, and
//! without this the handler could not run and the thread's last segment would be lost. A thread
//! that already has an alternate stack (the program set one) keeps it.

use std::ptr;

/// Room for the fatal-signal handler: flushing a segment cache, rewriting `meta.json`.
const SIZE: usize = 64 * 1024;

/// The stack [`install`] mapped for the calling thread, to unmap at its end or to hand to the
/// next thread (null if none).
pub(crate) struct AltStack(*mut libc::c_void);

/// Gives the calling thread an alternate signal stack unless it has one.
pub(crate) fn install() -> AltStack {
    let mut stack = AltStack(ptr::null_mut());
    stack.reinstall();
    stack
}

impl AltStack {
    /// Makes this stack the calling thread's alternate signal stack unless the thread has one,
    /// mapping it first if it has no memory (a fresh one, or one a thread that ended left:
    /// [`AltStack::disable`]).
    pub(crate) fn reinstall(&mut self) {
        // SAFETY: sigaltstack queries and sets the calling thread's own stack; the mapping is
        // fresh or one no thread uses.
        unsafe {
            let mut old: libc::stack_t = std::mem::zeroed();
            if libc::sigaltstack(ptr::null(), &mut old) != 0 || old.ss_flags & libc::SS_DISABLE == 0
            {
                return;
            }
            if self.0.is_null() {
                let sp = libc::mmap(
                    ptr::null_mut(),
                    SIZE,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                if sp == libc::MAP_FAILED {
                    return;
                }
                self.0 = sp;
            }
            let stack = libc::stack_t {
                ss_sp: self.0,
                ss_flags: 0,
                ss_size: SIZE,
            };
            if libc::sigaltstack(&stack, ptr::null_mut()) != 0 {
                libc::munmap(self.0, SIZE);
                self.0 = ptr::null_mut();
            }
        }
    }

    /// The calling thread (at its end, outside any handler) stops using the stack, if it still
    /// is the thread's (the program may have replaced it); its memory stays for the next thread
    /// ([`AltStack::reinstall`]). Memory a handler still runs on is forgotten, never reused.
    pub(crate) fn disable(&mut self) {
        if self.0.is_null() {
            return;
        }
        // SAFETY: as in `reinstall`.
        unsafe {
            let mut cur: libc::stack_t = std::mem::zeroed();
            if libc::sigaltstack(ptr::null(), &mut cur) != 0 {
                self.0 = ptr::null_mut();
                return;
            }
            if cur.ss_sp != self.0 {
                return;
            }
            if cur.ss_flags & libc::SS_ONSTACK != 0 {
                self.0 = ptr::null_mut();
                return;
            }
            let off = libc::stack_t {
                ss_sp: ptr::null_mut(),
                ss_flags: libc::SS_DISABLE,
                ss_size: 0,
            };
            libc::sigaltstack(&off, ptr::null_mut());
        }
    }

    /// [`AltStack::disable`], then unmaps the memory.
    pub(crate) fn remove(&mut self) {
        self.disable();
        if !self.0.is_null() {
            // SAFETY: no thread uses the stack any more.
            unsafe { libc::munmap(self.0, SIZE) };
        }
        self.0 = ptr::null_mut();
    }
}
