//! Process exit wrappers: `exit`, `quick_exit`, and the hook before every return of `main`.
//!
//! Takes the program's way of finishing, at its site; gives the exit grace and the `Exit` record
//! (`record::finish::exiting`; in replay mode, `Exit` waits for its turn in the schedule like any
//! sync operation), then the real exit. `_exit` and `pthread_exit` are not here: the first runs
//! no handler, and `pthread_exit` from `main` leaves the process running until its last thread
//! ends, as it does without ilgen.

use std::ffi::c_void;

use crate::record;

extern "C" {
    fn quick_exit(status: libc::c_int) -> !;
}

/// `main` is about to return: the C library calls `exit` with its value next.
#[no_mangle]
pub extern "C" fn __ilgen_main_return(site: *const c_void) {
    record::finish::exiting(site);
}

#[no_mangle]
pub extern "C" fn __ilgen_wrap_exit(status: libc::c_int, site: *const c_void) -> ! {
    record::finish::exiting(site);
    // SAFETY: the program's own call.
    unsafe { libc::exit(status) }
}

#[no_mangle]
pub extern "C" fn __ilgen_wrap_quick_exit(status: libc::c_int, site: *const c_void) -> ! {
    record::finish::exiting(site);
    // SAFETY: the program's own call.
    unsafe { quick_exit(status) }
}
