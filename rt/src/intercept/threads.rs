//! Thread wrappers: `pthread_create`, `pthread_join`, `pthread_exit`, `pthread_detach`.
//!
//! Takes the program's thread calls; gives `Fork` (before the real create, so the child's `Start`
//! follows it in sequence), the child's `Start` and `End` (from a trampoline around its start
//! routine), `Join` (pending across the real join) and `Detach`, and keeps the `pthread_t` →
//! logical id map that join and detach need.
//!
//! `pthread_exit` and thread cancellation unwind the stack (a forced unwind). The trampoline and
//! the wrappers of calls that can exit or be cancelled are `extern "C-unwind"` and hold nothing
//! that needs dropping while they call out, so that unwind passes through them; the thread-key
//! destructor then ends the thread's trace.
//!
//! A child starts with every signal blocked and gets its creator's mask back once registered, so
//! a signal that arrives at its very start cannot make up a thread the runtime did not create.

use std::ffi::c_void;

use ilgen_trace::{SyncOp, ThreadId, NO_THREAD};

use crate::real::{pthread_create, pthread_detach, pthread_join, StartRoutine};
use crate::{record, replay, runtime, thread};

extern "C-unwind" {
    fn pthread_exit(retval: *mut c_void) -> !;
}

/// What the trampoline needs to set the child up; boxed by the parent, freed by the child.
#[derive(Clone, Copy)]
struct Child {
    start: StartRoutine,
    arg: *mut c_void,
    tid: ThreadId,
    parent: ThreadId,
    child_index: u32,
    /// The creator's signal mask, restored once the child is registered (see the wrapper).
    mask: libc::sigset_t,
}

unsafe extern "C-unwind" fn trampoline(raw: *mut c_void) -> *mut c_void {
    // SAFETY: `raw` is the `Child` the wrapper boxed for this thread alone. The box is freed at
    // the end of this statement, so that no drop is pending while the start routine runs.
    let Child {
        start,
        arg,
        tid,
        parent,
        child_index,
        mask,
    } = unsafe { *Box::from_raw(raw as *mut Child) };
    if let Some(rt) = runtime::get() {
        thread::start(rt, tid, parent, child_index, false);
        thread::child_started();
    } else {
        replay::sync::start(tid, parent, child_index);
    }
    crate::intercept::heap::thread_stack();
    // SAFETY: restoring the mask the program's thread would have started with.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut()) };
    // Nothing that needs dropping is alive across this call: a forced unwind may skip the rest.
    // SAFETY: the program's start routine with the program's argument.
    let result = unsafe { start(arg) };
    if let Some(st) = thread::current_if_live() {
        thread::end(st, 0);
    } else {
        replay::sync::end(ilgen_trace::NO_SITE);
    }
    result
}

/// # Safety
/// Same contract as `pthread_create`; `site` is a site pointer or NULL.
#[no_mangle]
pub unsafe extern "C-unwind" fn __ilgen_wrap_pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: Option<StartRoutine>,
    arg: *mut c_void,
    site: *const c_void,
) -> libc::c_int {
    let Some(start) = start else {
        return libc::EINVAL;
    };
    // Record mode numbers the child itself; replay mode maps it through the schedule.
    let ids = match thread::current() {
        Some(st) => st.enter().map(|mut inner| {
            let index = inner.children;
            inner.children += 1;
            (inner.tid, index, thread::next_child_tid())
        }),
        None => replay::sync::new_child(),
    };
    let Some((parent, child_index, tid)) = ids else {
        // SAFETY: the program's own call.
        return unsafe { pthread_create(thread, attr, Some(start), arg) };
    };
    // The child starts with every signal blocked and unblocks them once registered: a signal
    // arriving before then would run the program's (instrumented) handler on a thread the runtime
    // does not know yet, which would make up a thread of its own.
    // SAFETY: filling and swapping signal sets on the stack.
    let (all, mask) = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut mask: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut mask);
        (all, mask)
    };
    let child = Box::into_raw(Box::new(Child {
        start,
        arg,
        tid,
        parent,
        child_index,
        mask,
    }));
    let fork = record::sync::now(site, SyncOp::Fork { child: tid });
    // SAFETY: the program's call, with our trampoline and its boxed argument, under a full mask
    // that the child inherits; the caller's own mask is restored right after. What glibc
    // allocates for the new thread (its TLS vector) belongs to the thread's machinery, not to the
    // program.
    let rc = crate::intercept::heap::quiet(|| unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, std::ptr::null_mut());
        let rc = pthread_create(thread, attr, Some(trampoline), child as *mut c_void);
        libc::pthread_sigmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut());
        rc
    });
    if rc != 0 {
        record::sync::retract(fork);
        if runtime::get().is_some() {
            thread::child_started();
        } else {
            replay::thread::child_arrived();
        }
        // SAFETY: no thread was created, so the box is still ours.
        drop(unsafe { Box::from_raw(child) });
        return rc;
    }
    if !thread.is_null() {
        // SAFETY: pthread_create filled it in.
        thread::THREADS.lock().add_handle(unsafe { *thread }, tid);
    }
    rc
}

/// # Safety
/// Same contract as `pthread_join`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __ilgen_wrap_pthread_join(
    thread: libc::pthread_t,
    retval: *mut *mut c_void,
    site: *const c_void,
) -> libc::c_int {
    if thread::current().is_none() && !runtime::replaying() {
        // SAFETY: the program's own call.
        return unsafe { pthread_join(thread, retval) };
    }
    let child = thread::THREADS.lock().tid_of(thread);
    let p = record::sync::pending(site, SyncOp::Join { child });
    // SAFETY: the program's own call.
    let rc = unsafe { pthread_join(thread, retval) };
    if rc == 0 {
        let mut threads = thread::THREADS.lock();
        // A thread created by uninstrumented code may have registered only after the join began.
        let child = if child == NO_THREAD {
            threads.tid_of(thread)
        } else {
            child
        };
        threads.remove_handle(thread);
        drop(threads);
        record::sync::complete(p, SyncOp::Join { child });
    } else {
        record::sync::fail(p, SyncOp::Join { child });
    }
    rc
}

/// # Safety
/// Same contract as `pthread_exit`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __ilgen_wrap_pthread_exit(
    retval: *mut c_void,
    site: *const c_void,
) -> ! {
    if let Some(st) = thread::current_if_live() {
        thread::end(st, site as usize);
    } else {
        replay::sync::end(crate::sites::id(site as usize));
    }
    // SAFETY: the program's own call.
    unsafe { pthread_exit(retval) }
}

/// # Safety
/// Same contract as `pthread_detach`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __ilgen_wrap_pthread_detach(
    thread: libc::pthread_t,
    site: *const c_void,
) -> libc::c_int {
    let child = if thread::current().is_some() || runtime::replaying() {
        thread::THREADS.lock().tid_of(thread)
    } else {
        NO_THREAD
    };
    let at = record::sync::now(site, SyncOp::Detach { child });
    // SAFETY: the program's own call.
    let rc = unsafe { pthread_detach(thread) };
    if rc == 0 {
        thread::THREADS.lock().remove_handle(thread);
    } else {
        record::sync::retract(at);
    }
    rc
}
