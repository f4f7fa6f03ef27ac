//! `pthread_once` (what `std::call_once` calls), recorded as a mutex on the once control.
//!
//! Takes the program's once calls; gives `MutexLock` and `MutexUnlock` of the control's address:
//! around the init routine in the thread that runs it, and right after the call returns in every
//! other thread (their call returned only once the init was done, so their lock follows its
//! unlock). So every caller is ordered after the init, as a lock would order it, and a reordered
//! schedule lets another caller be the one that runs the init, as it would be. Replay gates each
//! caller's lock before its real call, so the thread the schedule puts first is the one that
//! runs the init.
//!
//! The init routine reaches the wrapper through a thread-local (`pthread_once` passes it no
//! argument), saved and restored around the call for an init that calls `pthread_once` itself.
//! An init that unwinds (a C++ exception out of `std::call_once`) leaves its lock unreleased in
//! the trace.

use std::cell::Cell;
use std::ffi::c_void;

use ilgen_trace::SyncOp;

use crate::real::{self, InitRoutine};
use crate::record;

/// The call in progress on this thread, for [`run_init`].
struct Call {
    init: InitRoutine,
    control: u64,
    site: *const c_void,
    /// Replay: the turn taken before the real call; `None` once the lock is recorded.
    turn: Option<record::sync::Turn>,
}

thread_local! {
    static CALL: Cell<*mut Call> = const { Cell::new(std::ptr::null_mut()) };
}

fn lock_op(control: u64) -> SyncOp {
    SyncOp::MutexLock { mutex: control }
}

/// Records the lock of `call` if not done yet.
fn lock(call: &mut Call) {
    if let Some(turn) = call.turn.take() {
        record::sync::now_after(turn, call.site, lock_op(call.control));
    }
}

/// The init routine as the real `pthread_once` sees it: lock, the program's init, unlock.
unsafe extern "C-unwind" fn run_init() {
    let p = CALL.with(|c| c.get());
    // SAFETY: set by the wrapper below on this thread for the duration of its real call.
    let call = unsafe { &mut *p };
    lock(call);
    let (init, control, site) = (call.init, call.control, call.site);
    // SAFETY: the program's init routine.
    unsafe { init() };
    record::sync::release(site, SyncOp::MutexUnlock { mutex: control }, false, || 0);
}

/// # Safety
/// Same contract as `pthread_once`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __ilgen_wrap_pthread_once(
    control: *mut libc::pthread_once_t,
    init: Option<InitRoutine>,
    site: *const c_void,
) -> libc::c_int {
    let Some(init) = init else {
        return libc::EINVAL;
    };
    let mut call = Call {
        init,
        control: control as u64,
        site,
        turn: Some(record::sync::turn(site, lock_op(control as u64))),
    };
    let ran_init = std::ptr::addr_of_mut!(call);
    let outer = CALL.with(|c| c.replace(ran_init));
    // SAFETY: the program's call, with an init routine that runs the program's one.
    let rc = unsafe { real::pthread_once(control, Some(run_init)) };
    CALL.with(|c| c.set(outer));
    if call.turn.is_some() {
        // Another thread ran the init (now or earlier): this thread only passes the lock.
        lock(&mut call);
        record::sync::release(
            site,
            SyncOp::MutexUnlock {
                mutex: control as u64,
            },
            false,
            || 0,
        );
    }
    rc
}
