//! Destroy wrappers: `pthread_mutex_destroy`, `pthread_cond_destroy`, `pthread_rwlock_destroy`,
//! `pthread_barrier_destroy` (`sem_destroy` is with the semaphores).
//!
//! Takes the program's destroy calls; gives `MutexDestroy`, `CondDestroy`, `RwDestroy` and
//! `BarrierDestroy`, each before the real call (it ends the object: a use another thread makes
//! after it must not be numbered before it) and removed if the call fails (EBUSY: the object
//! lives on). The mutex and condition variable destroys are interposed calls too
//! (`ilgen_trace::abi::INTERPOSED_CALLS`: `std::condition_variable`'s destructor is libstdc++'s
//! code), so they reach the destroy through `real`. The analysis and the replay detector treat a
//! destroy as a write of the object and every other operation on it as an atomic read
//! ([`ilgen_trace::SyncOp::object_access`]).

use std::ffi::c_void;

use ilgen_trace::SyncOp;

use crate::{real, record};

/// # Safety
/// Same contract as `pthread_mutex_destroy`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_mutex_destroy(
    m: *mut libc::pthread_mutex_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::MutexDestroy { mutex: m as u64 };
    // SAFETY: the program's own call.
    record::sync::release(site, op, true, || unsafe { real::pthread_mutex_destroy(m) })
}

/// # Safety
/// Same contract as `pthread_cond_destroy`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_cond_destroy(
    c: *mut libc::pthread_cond_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::CondDestroy { cond: c as u64 };
    // SAFETY: the program's own call.
    record::sync::release(site, op, true, || unsafe { real::pthread_cond_destroy(c) })
}

/// # Safety
/// Same contract as `pthread_rwlock_destroy`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_rwlock_destroy(
    l: *mut libc::pthread_rwlock_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::RwDestroy { lock: l as u64 };
    // SAFETY: the program's own call.
    record::sync::release(site, op, true, || unsafe {
        libc::pthread_rwlock_destroy(l)
    })
}

/// # Safety
/// Same contract as `pthread_barrier_destroy`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_barrier_destroy(
    b: *mut libc::pthread_barrier_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::BarrierDestroy { barrier: b as u64 };
    // SAFETY: the program's own call.
    record::sync::release(site, op, true, || unsafe {
        libc::pthread_barrier_destroy(b)
    })
}
