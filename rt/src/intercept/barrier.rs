//! Barrier wrapper: `pthread_barrier_wait`.
//!
//! Takes the program's barrier waits; gives `BarrierEnter` (sequence number before the real call:
//! it releases) and `BarrierExit` (pending across the call, completed with `serial` set for the
//! one thread that got `PTHREAD_BARRIER_SERIAL_THREAD`).

use std::ffi::c_void;

use ilgen_trace::SyncOp;

use crate::record;

/// glibc's `PTHREAD_BARRIER_SERIAL_THREAD`.
const SERIAL_THREAD: libc::c_int = -1;

/// # Safety
/// Same contract as `pthread_barrier_wait`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pthread_barrier_wait(
    b: *mut libc::pthread_barrier_t,
    site: *const c_void,
) -> libc::c_int {
    let barrier = b as u64;
    let enter = record::sync::now(site, SyncOp::BarrierEnter { barrier });
    let exit = |serial| SyncOp::BarrierExit { barrier, serial };
    let p = record::sync::pending(site, exit(false));
    // SAFETY: the program's own call.
    let rc = unsafe { libc::pthread_barrier_wait(b) };
    if rc == 0 || rc == SERIAL_THREAD {
        record::sync::complete(p, exit(rc == SERIAL_THREAD));
    } else {
        // EINVAL: nothing happened; remove both records when they are still the last ones.
        record::sync::fail(p, exit(false));
        record::sync::retract(enter);
    }
    rc
}
