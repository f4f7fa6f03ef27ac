//! Semaphore wrappers: `sem_init`, `sem_open` (a hook after it), `sem_destroy`, `sem_wait`,
//! `sem_timedwait`, `sem_clockwait`, `sem_trywait`, `sem_post`.
//!
//! Takes the program's semaphore calls; gives `SemInit` (after the call, with the count it set),
//! `SemDestroy` (before the call, removed if it fails), `SemWait` (pending across the real call),
//! `SemTimedWait` (pending, completed with the outcome), `SemTryWait` (after the call, with the
//! outcome) and `SemPost` (before the call). A semaphore's count is what lets several threads
//! hold it at once, so the analysis must not guess it from the run.
//! `sem_wait` and the timed waits fail with EINTR when any signal handler runs, SA_RESTART or not;
//! when the signal was the runtime's own flush request the wrapper calls again, so the program
//! never sees it.
//! A `sem_wait` that fails otherwise did not decrement: its record is removed.

use std::ffi::c_void;

use ilgen_trace::SyncOp;

use crate::{record, thread};

extern "C-unwind" {
    fn sem_wait(s: *mut libc::sem_t) -> libc::c_int;
    fn sem_timedwait(s: *mut libc::sem_t, abstime: *const libc::timespec) -> libc::c_int;
    fn sem_clockwait(
        s: *mut libc::sem_t,
        clock: libc::clockid_t,
        abstime: *const libc::timespec,
    ) -> libc::c_int;
}

/// # Safety
/// Same contract as `sem_init`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_sem_init(
    s: *mut libc::sem_t,
    pshared: libc::c_int,
    value: libc::c_uint,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    let rc = unsafe { libc::sem_init(s, pshared, value) };
    if rc == 0 {
        // Recorded after the call: nothing can use the semaphore before it is initialised.
        init(s, value, site);
    }
    rc
}

/// # Safety
/// Same contract as `sem_destroy`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_sem_destroy(
    s: *mut libc::sem_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::SemDestroy { sem: s as u64 };
    // SAFETY: the program's own call.
    record::sync::release(site, op, true, || unsafe { libc::sem_destroy(s) })
}

/// Right after `sem = sem_open(...)`: the count of the semaphore it returned. `sem_getvalue` at
/// once is the count for the analysis: O_CREAT's value when the call created it, the current
/// count when it existed (the value argument is then ignored, and a semaphore opened without
/// O_CREAT has no other source).
///
/// # Safety
/// `sem` is what `sem_open` returned.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_sem_opened(s: *mut libc::sem_t, site: *const c_void) {
    if s == libc::SEM_FAILED {
        return;
    }
    keeping_errno(|| {
        let mut value: libc::c_int = 0;
        // SAFETY: a semaphore sem_open returned.
        if unsafe { libc::sem_getvalue(s, &mut value) } == 0 {
            init(s, u32::try_from(value).unwrap_or(0), site);
        }
    });
}

fn init(s: *mut libc::sem_t, count: u32, site: *const c_void) {
    record::sync::now(
        site,
        SyncOp::SemInit {
            sem: s as u64,
            count,
        },
    );
}

/// # Safety
/// Same contract as `sem_wait`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __ilgen_wrap_sem_wait(
    s: *mut libc::sem_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::SemWait { sem: s as u64 };
    // SAFETY: the program's own call.
    let (p, rc) = wait(s, site, op, |_| unsafe { sem_wait(s) });
    if rc == 0 {
        record::sync::complete(p, op);
    } else {
        keeping_errno(|| record::sync::fail(p, op));
    }
    rc
}

/// # Safety
/// Same contract as `sem_timedwait`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __ilgen_wrap_sem_timedwait(
    s: *mut libc::sem_t,
    abstime: *const libc::timespec,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    timed_wait(s, site, || unsafe { sem_timedwait(s, abstime) })
}

/// # Safety
/// Same contract as `sem_clockwait`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __ilgen_wrap_sem_clockwait(
    s: *mut libc::sem_t,
    clock: libc::clockid_t,
    abstime: *const libc::timespec,
    site: *const c_void,
) -> libc::c_int {
    // SAFETY: the program's own call.
    timed_wait(s, site, || unsafe { sem_clockwait(s, clock, abstime) })
}

/// A wait with a time limit: `SemTimedWait`, pending across `call`, completed with its outcome
/// (a time-out or an interruption took nothing).
fn timed_wait(
    s: *mut libc::sem_t,
    site: *const c_void,
    call: impl Fn() -> libc::c_int,
) -> libc::c_int {
    let op = |acquired| SyncOp::SemTimedWait {
        sem: s as u64,
        acquired,
    };
    let (p, rc) = wait(s, site, op(false), |recorded| match recorded {
        // Replaying with a recorded outcome (`replay::sync`): timed out, no real call; took
        // the semaphore, without the time limit that a slower replay could run out of.
        Some(true) => {
            // SAFETY: this thread's errno.
            unsafe { *libc::__errno_location() = libc::ETIMEDOUT };
            -1
        }
        // SAFETY: the program's own call.
        Some(false) => unsafe { sem_wait(s) },
        None => call(),
    });
    keeping_errno(|| record::sync::complete(p, op(rc == 0)));
    rc
}

/// Writes `op` pending and makes the blocking `call` (replay: `sem_trywait` first), again when
/// only the runtime's flush signal interrupted it; `call` is given the recorded outcome the
/// replay enforces, and alone decides a recorded time-out. Gives the record to complete and the
/// result.
fn wait(
    s: *mut libc::sem_t,
    site: *const c_void,
    op: SyncOp,
    call: impl Fn(Option<bool>) -> libc::c_int,
) -> (record::sync::Pending, libc::c_int) {
    let mut p = record::sync::pending(site, op);
    let recorded = record::sync::recorded_timeout(&p);
    if recorded == Some(true) {
        return (p, call(recorded));
    }
    let attempt = || {
        // SAFETY: the program's own call.
        let rc = unsafe { libc::sem_trywait(s) };
        (!(rc != 0 && errno() == libc::EAGAIN)).then_some(rc)
    };
    let rc = record::sync::acquire(&mut p, attempt, || loop {
        let seen = thread::flush_signals_seen();
        let rc = call(recorded);
        if !(rc != 0 && errno() == libc::EINTR && thread::flush_signals_seen() != seen) {
            break rc;
        }
    });
    (p, rc)
}

fn errno() -> libc::c_int {
    // SAFETY: reading this thread's errno.
    unsafe { *libc::__errno_location() }
}

/// Runs the bookkeeping `f` with the program's errno kept across it.
pub(crate) fn keeping_errno(f: impl FnOnce()) {
    let saved = errno();
    f();
    // SAFETY: writing this thread's errno.
    unsafe { *libc::__errno_location() = saved };
}

/// # Safety
/// Same contract as `sem_trywait`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_sem_trywait(
    s: *mut libc::sem_t,
    site: *const c_void,
) -> libc::c_int {
    let op = |acquired| SyncOp::SemTryWait {
        sem: s as u64,
        acquired,
    };
    let turn = record::sync::turn(site, op(false));
    // SAFETY: the program's own call.
    let rc = unsafe { libc::sem_trywait(s) };
    keeping_errno(|| {
        record::sync::now_after(turn, site, op(rc == 0));
    });
    rc
}

/// # Safety
/// Same contract as `sem_post`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_sem_post(
    s: *mut libc::sem_t,
    site: *const c_void,
) -> libc::c_int {
    let op = SyncOp::SemPost { sem: s as u64 };
    // SAFETY: the program's own call.
    record::sync::release(site, op, false, || unsafe { libc::sem_post(s) })
}
