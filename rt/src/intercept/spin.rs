//! Spin lock wrappers: `pthread_spin_lock`, `_trylock`, `_unlock`.
//!
//! Takes the program's spin lock calls; gives `SpinLock` (pending across the real call),
//! `SpinTryLock` (after the call, with the outcome) and `SpinUnlock` (before the call).

use std::ffi::c_void;

use ilgen_trace::SyncOp;

use crate::record;

/// # Safety
/// Same contract as `pthread_spin_lock`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_spin_lock(
    l: *mut libc::pthread_spinlock_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::SpinLock { lock: l as u64 };
    let mut p = record::sync::pending(site, op);
    // SAFETY: the program's own calls.
    let rc = record::sync::acquire(
        &mut p,
        || {
            let rc = unsafe { libc::pthread_spin_trylock(l) };
            (rc != libc::EBUSY).then_some(rc)
        },
        || unsafe { libc::pthread_spin_lock(l) },
    );
    if rc == 0 {
        record::sync::complete(p, op);
    } else {
        record::sync::fail(p, op);
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
    let turn = record::sync::turn(site, op(false));
    // SAFETY: the program's own call.
    let rc = unsafe { libc::pthread_spin_trylock(l) };
    record::sync::now_after(turn, site, op(rc == 0));
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
    record::sync::release(site, op, false, || unsafe { libc::pthread_spin_unlock(l) })
}
