//! Read-write lock wrappers: `pthread_rwlock_rdlock`, `_wrlock`, `_tryrdlock`, `_trywrlock`,
//! `_unlock`.
//!
//! Takes the program's rwlock calls; gives `RwRdLock`/`RwWrLock` (pending across the real call),
//! `RwTryRdLock`/`RwTryWrLock` (after the call, with the outcome) and `RwUnlock` (before the call).
//! A lock call that fails with an error did not lock: its record is removed.

use std::ffi::c_void;

use ilgen_trace::SyncOp;

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

/// # Safety
/// Same contract as `pthread_rwlock_rdlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_rdlock(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own calls.
    blocking(
        site,
        SyncOp::RwRdLock { lock: l as u64 },
        || unsafe { libc::pthread_rwlock_tryrdlock(l) },
        || unsafe { libc::pthread_rwlock_rdlock(l) },
    )
}

/// # Safety
/// Same contract as `pthread_rwlock_wrlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_wrlock(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own calls.
    blocking(
        site,
        SyncOp::RwWrLock { lock: l as u64 },
        || unsafe { libc::pthread_rwlock_trywrlock(l) },
        || unsafe { libc::pthread_rwlock_wrlock(l) },
    )
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
    record::sync::release(site, op, true, || unsafe { libc::pthread_rwlock_unlock(l) })
}
