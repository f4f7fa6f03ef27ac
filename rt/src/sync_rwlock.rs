//! Read-write lock wrappers: `pthread_rwlock_rdlock`, `_wrlock`, `_tryrdlock`, `_trywrlock`,
//! `_unlock`.
//!
//! Takes the program's rwlock calls; gives `RwRdLock`/`RwWrLock` (pending across the real call),
//! `RwTryRdLock`/`RwTryWrLock` (after the call, with the outcome) and `RwUnlock` (before the call).
//! A lock call that fails with an error did not lock: its record is removed.

use std::ffi::c_void;

use ilgen_trace::SyncOp;

use crate::sync_record;

fn blocking(site: *const c_void, op: SyncOp, call: impl FnOnce() -> libc::c_int) -> libc::c_int {
    let p = sync_record::pending(site, op);
    let rc = call();
    if rc == 0 {
        sync_record::complete(p, op);
    } else {
        sync_record::fail(p, op);
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
    // SAFETY: the program's own call.
    blocking(site, SyncOp::RwRdLock { lock: l as u64 }, || unsafe {
        libc::pthread_rwlock_rdlock(l)
    })
}

/// # Safety
/// Same contract as `pthread_rwlock_wrlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_wrlock(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    blocking(site, SyncOp::RwWrLock { lock: l as u64 }, || unsafe {
        libc::pthread_rwlock_wrlock(l)
    })
}

/// # Safety
/// Same contract as `pthread_rwlock_tryrdlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_tryrdlock(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    let rc = unsafe { libc::pthread_rwlock_tryrdlock(l) };
    sync_record::now(
        site,
        SyncOp::RwTryRdLock {
            lock: l as u64,
            acquired: rc == 0,
        },
    );
    rc
}

/// # Safety
/// Same contract as `pthread_rwlock_trywrlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_trywrlock(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    let rc = unsafe { libc::pthread_rwlock_trywrlock(l) };
    sync_record::now(
        site,
        SyncOp::RwTryWrLock {
            lock: l as u64,
            acquired: rc == 0,
        },
    );
    rc
}

/// # Safety
/// Same contract as `pthread_rwlock_unlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_unlock(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
) -> libc::c_int {
    let at = sync_record::now(site, SyncOp::RwUnlock { lock: l as u64 });
    // SAFETY: the program's own call.
    let rc = unsafe { libc::pthread_rwlock_unlock(l) };
    if rc != 0 {
        sync_record::retract(at);
    }
    rc
}
