//! Process exit wrappers: `exit`, `quick_exit`, `_exit`, `_Exit`, and the hook before every
//! return of `main`.
//!
//! Takes the program's way of finishing, at its site; gives the exit grace and the `Exit` record
//! (`record::finish::exiting`; in replay mode, `Exit` waits for its turn in the schedule like any
//! sync operation), then the real exit. `_exit` and `_Exit` run no exit handler, so their wrapper
//! also ends the trace or writes the replay's outcome first
//! (`record::finish::exiting_without_handlers`). `pthread_exit` is not here: from `main` it leaves
//! the process running until its last thread ends, as it does without ilgen.

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

#[export_name = "__ilgen_wrap__exit"]
pub extern "C" fn wrap_underscore_exit(status: libc::c_int, site: *const c_void) -> ! {
    record::finish::exiting_without_handlers(site);
    // SAFETY: the program's own call.
    unsafe { libc::_exit(status) }
}

/// `_Exit` is `_exit` (C99's name for it).
#[export_name = "__ilgen_wrap__Exit"]
pub extern "C" fn wrap_underscore_c_exit(status: libc::c_int, site: *const c_void) -> ! {
    wrap_underscore_exit(status, site)
}
