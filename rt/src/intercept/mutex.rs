//! Mutex wrappers: `pthread_mutex_lock`, `_trylock`, `_timedlock`, `_clocklock`, `_unlock`.
//!
//! Takes the program's mutex calls; gives `MutexLock` (pending across the real call, completed
//! when it returns holding the lock), `MutexTryLock` (after the call, with its outcome),
//! `MutexTimedLock` (timedlock and clocklock: pending, completed with its outcome) and `MutexUnlock` (before the call, so
//! its sequence number precedes the next owner's lock). A lock call that fails with an error
//! (EDEADLK, EINVAL) did not lock: its record is removed.

use std::ffi::c_void;

use ilgen_trace::SyncOp;

use crate::real;
use crate::record;

/// A trylock's result as an attempt of `record::sync::acquire`: `None` when the lock is busy.
fn busy(rc: libc::c_int) -> Option<libc::c_int> {
    (rc != libc::EBUSY).then_some(rc)
}

/// # Safety
/// Same contract as `pthread_mutex_lock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_mutex_lock(
    m: *mut libc::pthread_mutex_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::MutexLock { mutex: m as u64 };
    let mut p = record::sync::pending(site, op);
    // SAFETY: the program's own calls.
    let rc = record::sync::acquire(
        &mut p,
        || busy(unsafe { libc::pthread_mutex_trylock(m) }),
        || unsafe { real::pthread_mutex_lock(m) },
    );
    if rc == 0 {
        record::sync::complete(p, op);
    } else {
        record::sync::fail(p, op);
    }
    rc
}

/// # Safety
/// Same contract as `pthread_mutex_trylock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_mutex_trylock(
    m: *mut libc::pthread_mutex_t,
    site: *const c_void,
) -> libc::c_int {
    let op = |acquired| SyncOp::MutexTryLock {
        mutex: m as u64,
        acquired,
    };
    let turn = record::sync::turn(site, op(false));
    // SAFETY: the program's own call.
    let rc = unsafe { libc::pthread_mutex_trylock(m) };
    record::sync::now_after(turn, site, op(rc == 0));
    rc
}

/// # Safety
/// Same contract as `pthread_mutex_timedlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_mutex_timedlock(
    m: *mut libc::pthread_mutex_t,
    abstime: *const libc::timespec,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    timed(m, site, || unsafe {
        libc::pthread_mutex_timedlock(m, abstime)
    })
}

/// # Safety
/// Same contract as `pthread_mutex_clocklock` (what `std::timed_mutex::try_lock_for` calls).
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_mutex_clocklock(
    m: *mut libc::pthread_mutex_t,
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    timed(m, site, || unsafe {
        pthread_mutex_clocklock(m, clock, abstime)
    })
}

extern "C" {
    fn pthread_mutex_clocklock(
        m: *mut libc::pthread_mutex_t,
        clock: libc::clockid_t,
        abstime: *const libc::timespec,
    ) -> libc::c_int;
}

/// A lock call with a time limit: `MutexTimedLock`, pending across `call`, with its outcome.
fn timed(
    m: *mut libc::pthread_mutex_t,
    site: *const c_void,
    call: impl FnOnce() -> libc::c_int,
) -> libc::c_int {
    let op = |acquired| SyncOp::MutexTimedLock {
        mutex: m as u64,
        acquired,
    };
    let mut p = record::sync::pending(site, op(false));
    // Replaying with a recorded outcome (`replay::sync`): timed out, no real call; acquired,
    // without the time limit that a slower replay could run out of.
    let rc = match record::sync::recorded_timeout(&p) {
        Some(true) => libc::ETIMEDOUT,
        // SAFETY: the program's own calls.
        recorded => record::sync::acquire(
            &mut p,
            || busy(unsafe { libc::pthread_mutex_trylock(m) }),
            || match recorded {
                Some(false) => unsafe { real::pthread_mutex_lock(m) },
                _ => call(),
            },
        ),
    };
    record::sync::complete(p, op(rc == 0));
    rc
}

/// # Safety
/// Same contract as `pthread_mutex_unlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_mutex_unlock(
    m: *mut libc::pthread_mutex_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::MutexUnlock { mutex: m as u64 };
    // SAFETY: the program's own call.
    record::sync::release(site, op, true, || unsafe { real::pthread_mutex_unlock(m) })
}
