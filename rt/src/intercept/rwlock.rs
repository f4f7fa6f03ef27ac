//! Read-write lock wrappers: `pthread_rwlock_rdlock`, `_wrlock`, their `_timed` and `_clock`
//! forms, `_tryrdlock`, `_trywrlock`, `_unlock`.
//!
//! Takes the program's rwlock calls; gives `RwRdLock`/`RwWrLock` (pending across the real call;
//! a timed form that times out did not lock, and its record is removed, as for an error),
//! `RwTryRdLock`/`RwTryWrLock` (after the call, with the outcome) and `RwUnlock` (before the call).
//! A lock call that fails with an error did not lock: its record is removed.

use std::ffi::c_void;

use ilgen_trace::SyncOp;

use crate::real;
use crate::record;

/// A blocking lock call, tried first with its `try` form in replay (see `record::sync::acquire`).
fn blocking(
    site: *const c_void,
    op: SyncOp,
    attempt: impl FnOnce() -> libc::c_int,
    call: impl FnOnce() -> libc::c_int,
) -> libc::c_int {
    let mut p = record::sync::pending(site, op);
    let try_first = || {
        let rc = attempt();
        (rc != libc::EBUSY).then_some(rc)
    };
    let rc = record::sync::acquire(&mut p, try_first, call);
    if rc == 0 {
        record::sync::complete(p, op);
    } else {
        record::sync::fail(p, op);
    }
    rc
}

/// A blocking read lock whose real call is `call`.
fn read_lock(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
    call: impl FnOnce() -> libc::c_int,
) -> libc::c_int {
    let op = SyncOp::RwRdLock { lock: l as u64 };
    // SAFETY: the program's own call.
    blocking(
        site,
        op,
        || unsafe { libc::pthread_rwlock_tryrdlock(l) },
        call,
    )
}

/// A blocking write lock whose real call is `call`.
fn write_lock(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
    call: impl FnOnce() -> libc::c_int,
) -> libc::c_int {
    let op = SyncOp::RwWrLock { lock: l as u64 };
    // SAFETY: the program's own call.
    blocking(
        site,
        op,
        || unsafe { libc::pthread_rwlock_trywrlock(l) },
        call,
    )
}

/// # Safety
/// Same contract as `pthread_rwlock_rdlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_rdlock(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    read_lock(l, site, || unsafe { real::pthread_rwlock_rdlock(l) })
}

/// # Safety
/// Same contract as `pthread_rwlock_wrlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_wrlock(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    write_lock(l, site, || unsafe { real::pthread_rwlock_wrlock(l) })
}

/// # Safety
/// Same contract as `pthread_rwlock_timedrdlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_timedrdlock(
    l: *mut libc::pthread_rwlock_t,
    abstime: *const libc::timespec,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    read_lock(l, site, || unsafe {
        pthread_rwlock_timedrdlock(l, abstime)
    })
}

/// # Safety
/// Same contract as `pthread_rwlock_timedwrlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_timedwrlock(
    l: *mut libc::pthread_rwlock_t,
    abstime: *const libc::timespec,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    write_lock(l, site, || unsafe {
        pthread_rwlock_timedwrlock(l, abstime)
    })
}

/// # Safety
/// Same contract as `pthread_rwlock_clockrdlock` (what `std::shared_timed_mutex` calls).
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_clockrdlock(
    l: *mut libc::pthread_rwlock_t,
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    read_lock(l, site, || unsafe {
        pthread_rwlock_clockrdlock(l, clock, abstime)
    })
}

/// # Safety
/// Same contract as `pthread_rwlock_clockwrlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_clockwrlock(
    l: *mut libc::pthread_rwlock_t,
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    write_lock(l, site, || unsafe {
        pthread_rwlock_clockwrlock(l, clock, abstime)
    })
}

extern "C" {
    fn pthread_rwlock_timedrdlock(
        l: *mut libc::pthread_rwlock_t,
        abstime: *const libc::timespec,
    ) -> libc::c_int;
    fn pthread_rwlock_timedwrlock(
        l: *mut libc::pthread_rwlock_t,
        abstime: *const libc::timespec,
    ) -> libc::c_int;
    fn pthread_rwlock_clockrdlock(
        l: *mut libc::pthread_rwlock_t,
        clock: libc::clockid_t,
        abstime: *const libc::timespec,
    ) -> libc::c_int;
    fn pthread_rwlock_clockwrlock(
        l: *mut libc::pthread_rwlock_t,
        clock: libc::clockid_t,
        abstime: *const libc::timespec,
    ) -> libc::c_int;
}

/// # Safety
/// Same contract as `pthread_rwlock_tryrdlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_tryrdlock(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
) -> libc::c_int {
    let op = |acquired| SyncOp::RwTryRdLock {
        lock: l as u64,
        acquired,
    };
    let turn = record::sync::turn(site, op(false));
    // SAFETY: the program's own call.
    let rc = unsafe { libc::pthread_rwlock_tryrdlock(l) };
    record::sync::now_after(turn, site, op(rc == 0));
    rc
}

/// # Safety
/// Same contract as `pthread_rwlock_trywrlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_trywrlock(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
) -> libc::c_int {
    let op = |acquired| SyncOp::RwTryWrLock {
        lock: l as u64,
        acquired,
    };
    let turn = record::sync::turn(site, op(false));
    // SAFETY: the program's own call.
    let rc = unsafe { libc::pthread_rwlock_trywrlock(l) };
    record::sync::now_after(turn, site, op(rc == 0));
    rc
}

/// # Safety
/// Same contract as `pthread_rwlock_unlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_unlock(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::RwUnlock { lock: l as u64 };
    // SAFETY: the program's own call.
    record::sync::release(site, op, true, || unsafe { real::pthread_rwlock_unlock(l) })
}
