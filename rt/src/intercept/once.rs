//! `pthread_once` (and so `std::call_once`, which libstdc++ builds on it).
//!
//! Takes the program's `pthread_once(once, init)`; gives the call as a critical section on the
//! once control: `MutexLock { mutex: once }`, `MutexUnlock { mutex: once }`. The caller that runs
//! the initializer writes the lock before `init` and the unlock after it (from a trampoline the
//! real `pthread_once` runs in place of `init`), so the initializer's accesses are inside the
//! critical section; every other caller writes both after the real call returned, so its lock
//! comes after the initializer's unlock and everything it does after the call is ordered after the
//! initializer, in the model as in replay. Every caller has the same two operations whichever runs
//! the initializer, so a replay that lets another caller be first simply makes that one the
//! initializer; its turn at the gate is taken before the real call, so that a caller held back by
//! the schedule cannot become the initializer meanwhile.

use std::cell::RefCell;
use std::ffi::c_void;

use ilgen_trace::SyncOp;

use crate::record;
use crate::record::sync::Turn;

type Init = unsafe extern "C-unwind" fn();

extern "C-unwind" {
    fn pthread_once(
        once: *mut libc::pthread_once_t,
        init: unsafe extern "C-unwind" fn(),
    ) -> libc::c_int;
}

/// The call in progress on this thread, until the initializer (if this thread runs it) or the
/// return of the real call takes it.
struct Call {
    once: u64,
    init: Init,
    site: *const c_void,
    turn: Turn,
}

thread_local! {
    static CALL: RefCell<Option<Call>> = const { RefCell::new(None) };
}

/// The lock and the unlock of one caller, around `between` (the initializer, or nothing).
fn critical_section(call: Call, between: impl FnOnce()) {
    let Call {
        once, site, turn, ..
    } = call;
    record::sync::now_after(turn, site, SyncOp::MutexLock { mutex: once });
    between();
    record::sync::release(site, SyncOp::MutexUnlock { mutex: once }, false, || 0);
}

unsafe extern "C-unwind" fn trampoline() {
    let Some(call) = CALL.with(|c| c.borrow_mut().take()) else {
        return;
    };
    let init = call.init;
    // SAFETY: the program's initializer, run once by the real pthread_once.
    critical_section(call, || unsafe { init() });
}

/// # Safety
/// Same contract as `pthread_once`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __ilgen_wrap_pthread_once(
    once: *mut libc::pthread_once_t,
    init: Option<Init>,
    site: *const c_void,
) -> libc::c_int {
    let Some(init) = init else {
        return libc::EINVAL;
    };
    let lock = SyncOp::MutexLock { mutex: once as u64 };
    let call = Call {
        once: once as u64,
        init,
        site,
        turn: record::sync::turn(site, lock),
    };
    // A nested pthread_once in an initializer finds the slot empty again: its own call fills it.
    CALL.with(|c| *c.borrow_mut() = Some(call));
    // SAFETY: the program's once control, with the trampoline in place of its initializer.
    let rc = unsafe { pthread_once(once, trampoline) };
    if let Some(call) = CALL.with(|c| c.borrow_mut().take()) {
        // Another caller ran the initializer (or it had run already).
        critical_section(call, || {});
    }
    rc
}
