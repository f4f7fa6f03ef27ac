//! Spin lock wrappers: `pthread_spin_lock`, `_trylock`, `_unlock`.
//!
//! Takes the program's spin lock calls; gives `SpinLock` (pending across the real call),
//! `SpinTryLock` (after the call, with the outcome) and `SpinUnlock` (before the call).

use std::ffi::c_void;

use ilgen_trace::SyncOp;

use crate::sync_record;

/// # Safety
/// Same contract as `pthread_spin_lock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_spin_lock(
    l: *mut libc::pthread_spinlock_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::SpinLock { lock: l as u64 };
    let mut p = sync_record::pending(site, op);
    // SAFETY: the program's own calls.
    let rc = sync_record::acquire(
        &mut p,
        || {
            let rc = unsafe { libc::pthread_spin_trylock(l) };
            (rc != libc::EBUSY).then_some(rc)
        },
        || unsafe { libc::pthread_spin_lock(l) },
    );
    if rc == 0 {
        sync_record::complete(p, op);
    } else {
        sync_record::fail(p, op);
    }
    rc
}

/// # Safety
/// Same contract as `pthread_spin_trylock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_spin_trylock(
    l: *mut libc::pthread_spinlock_t,
    site: *const c_void,
) -> libc::c_int {
    let op = |acquired| SyncOp::SpinTryLock {
        lock: l as u64,
        acquired,
    };
    let turn = sync_record::turn(site, op(false));
    // SAFETY: the program's own call.
    let rc = unsafe { libc::pthread_spin_trylock(l) };
    sync_record::now_after(turn, site, op(rc == 0));
    rc
}

/// # Safety
/// Same contract as `pthread_spin_unlock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_spin_unlock(
    l: *mut libc::pthread_spinlock_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::SpinUnlock { lock: l as u64 };
    // SAFETY: the program's own call.
    sync_record::release(site, op, false, || unsafe { libc::pthread_spin_unlock(l) })
}
