//! Condition variable wrappers: `pthread_cond_wait`, `_timedwait`, `_clockwait`, `_signal`,
//! `_broadcast`.
//!
//! Takes the program's condition calls; gives, for a wait, `CondWait` (the release of the mutex,
//! with a sequence number before the real call) followed by `CondWake` (pending across the call,
//! completed when it returns with the mutex held again, with `timed_out`), and `CondSignal` /
//! `CondBroadcast` before the real call. Waits are cancellation points: `extern "C-unwind"`.
//! A replayed timed wait whose wake has a recorded outcome returns that outcome without a real
//! wait (`replay::sync`).

use std::ffi::c_void;

use ilgen_trace::SyncOp;

use crate::real;
use crate::record;

extern "C-unwind" {
    fn pthread_cond_clockwait(
        c: *mut libc::pthread_cond_t,
        m: *mut libc::pthread_mutex_t,
        clock: libc::clockid_t,
        abstime: *const libc::timespec,
    ) -> libc::c_int;
    fn pthread_cond_timedwait(
        c: *mut libc::pthread_cond_t,
        m: *mut libc::pthread_mutex_t,
        abstime: *const libc::timespec,
    ) -> libc::c_int;
}

fn wait(
    c: *mut libc::pthread_cond_t,
    m: *mut libc::pthread_mutex_t,
    timed: bool,
    site: *const c_void,
    call: impl FnOnce() -> libc::c_int,
) -> libc::c_int {
    let (cond, mutex) = (c as u64, m as u64);
    record::sync::now(site, SyncOp::CondWait { cond, mutex, timed });
    let wake = |timed_out| SyncOp::CondWake {
        cond,
        mutex,
        timed_out,
    };
    let p = record::sync::pending(site, wake(false));
    // Replaying a wake with a recorded outcome, no real wait: the gate holds the wake until its
    // turn, its mutex let go meanwhile, and the schedule puts the signal that woke it (if any)
    // before it. A real wait would let the clock decide (a slower replay times out where the
    // recording was signalled), and a real untimed wait entered after the scheduled signal
    // (a signaller that does not hold the mutex) would never return.
    let rc = match record::sync::recorded_timeout(&p) {
        Some(true) => libc::ETIMEDOUT,
        Some(false) => 0,
        None => call(),
    };
    record::sync::complete(p, wake(rc == libc::ETIMEDOUT));
    rc
}

/// # Safety
/// Same contract as `pthread_cond_wait`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __ilgen_wrap_pthread_cond_wait(
    c: *mut libc::pthread_cond_t,
    m: *mut libc::pthread_mutex_t,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    wait(c, m, false, site, || unsafe {
        real::pthread_cond_wait(c, m)
    })
}

/// # Safety
/// Same contract as `pthread_cond_timedwait`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __ilgen_wrap_pthread_cond_timedwait(
    c: *mut libc::pthread_cond_t,
    m: *mut libc::pthread_mutex_t,
    abstime: *const libc::timespec,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    wait(c, m, true, site, || unsafe {
        pthread_cond_timedwait(c, m, abstime)
    })
}

/// # Safety
/// Same contract as `pthread_cond_clockwait` (what `std::condition_variable::wait_for` calls).
#[no_mangle]
pub unsafe extern "C-unwind" fn __ilgen_wrap_pthread_cond_clockwait(
    c: *mut libc::pthread_cond_t,
    m: *mut libc::pthread_mutex_t,
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    wait(c, m, true, site, || unsafe {
        pthread_cond_clockwait(c, m, clock, abstime)
    })
}

/// # Safety
/// Same contract as `pthread_cond_signal`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_cond_signal(
    c: *mut libc::pthread_cond_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::CondSignal { cond: c as u64 };
    // While a schedule is being replayed, a signal wakes every waiter: the kernel, not the
    // schedule, would choose which single waiter a signal wakes, and a wrong choice leaves the
    // scheduled waiter asleep forever. A waiter woken early is a spurious wakeup, which POSIX
    // allows and programs already handle; the gate holds it, its mutex released, until its
    // scheduled wake.
    let replaying = crate::replay::gate::replaying().is_some_and(|r| !r.finished());
    // SAFETY: the program's own call.
    record::sync::release(site, op, false, || unsafe {
        if replaying {
            real::pthread_cond_broadcast(c)
        } else {
            real::pthread_cond_signal(c)
        }
    })
}

/// # Safety
/// Same contract as `pthread_cond_broadcast`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_cond_broadcast(
    c: *mut libc::pthread_cond_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::CondBroadcast { cond: c as u64 };
    // SAFETY: the program's own call.
    record::sync::release(site, op, false, || unsafe {
        real::pthread_cond_broadcast(c)
    })
}
