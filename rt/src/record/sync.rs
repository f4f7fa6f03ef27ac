//! Recording one sync operation: the steps every wrapper shares.
//!
//! Takes an operation, its site and when it happens relative to the real call; gives its record
//! in the calling thread's file, after the segment cache (the accesses before it) is flushed.
//! Following `ilgen_trace::Sync`: [`now`] takes the sequence number at once, so a wrapper calls it
//! before the real call for releasing operations and after it for acquiring ones; [`pending`]
//! writes a blocking operation with seq `PENDING` before the real call, and [`complete`] fills in
//! seq and outcome in place after it, so a thread blocked forever still shows what it waited for;
//! in between the thread counts as blocked for the exit grace (`finish`).
//! A try operation, recorded after its real call, announces itself before it with [`turn`].
//!
//! In replay mode no thread records (`thread::current` is `None`): each function hands the same
//! operation to its mirror in `replay::sync`, which gates it on the schedule instead.
//!
//! Under `calls=1` every operation is first preceded by the `TxBegin` of each open call not begun
//! yet ([`crate::calls`]), in both modes.

use ilgen_trace::{SyncOp, PENDING};

use crate::record::cache::{Mark, NO_MARK};
use crate::{calls, record, replay, runtime, sites, thread};

/// A record written before a blocking call, to be completed (or retracted) after it.
pub(crate) struct Pending {
    at: Option<usize>,
    site: u32,
    replay: Option<replay::sync::Token>,
}

/// A try operation about to make its real call (replay: its turn at the gate was taken).
pub(crate) struct Turn(Option<replay::sync::Token>);

/// Flushes the segment and writes `op` with the next sequence number. Returns the record's
/// offset (for [`retract`]).
pub(crate) fn now(site: *const libc::c_void, op: SyncOp) -> Option<usize> {
    begin_calls();
    let Some(st) = thread::current() else {
        replay::sync::now(site, op);
        return None;
    };
    perturb();
    write_now(st, site, op)
}

/// Writes (or, replaying, gates) the `TxBegin` of each open call the trace has not begun: a sync
/// operation is about to run inside it. The accesses the thread made before the call was entered
/// go first, so those the call made follow its begin.
fn begin_calls() {
    calls::begin_open(|site, mark| {
        let site = site as *const libc::c_void;
        match thread::current() {
            Some(st) => {
                if let Some(mut inner) = st.enter() {
                    inner.flush_to(mark);
                    inner.write_sync(
                        runtime::next_seq(),
                        sites::id(site as usize),
                        SyncOp::TxBegin,
                    );
                }
            }
            None => replay::sync::now(site, SyncOp::TxBegin),
        }
    });
}

/// Where the calling thread's segment is, for a call entered now ([`NO_MARK`] when it records
/// nothing or is inside the runtime: its call's begin then writes the whole segment before it).
pub(crate) fn mark() -> Mark {
    thread::current()
        .and_then(|st| st.enter())
        .map_or(NO_MARK, |mut inner| inner.cache.mark())
}

/// Writes (or gates) the `TxEnd` of each of `n` begun calls that returned, without the chaos
/// delay of a sync operation.
pub(crate) fn end_calls(n: u32, site: *const libc::c_void) {
    for _ in 0..n {
        match thread::current() {
            Some(st) => {
                write_now(st, site, SyncOp::TxEnd);
            }
            None => replay::sync::now(site, SyncOp::TxEnd),
        }
    }
}

fn write_now(st: &thread::ThreadState, site: *const libc::c_void, op: SyncOp) -> Option<usize> {
    let mut inner = st.enter()?;
    inner.flush();
    inner.write_sync(runtime::next_seq(), sites::id(site as usize), op)
}

/// A releasing operation that does not block (unlock, signal, broadcast, post): [`now`], then
/// `real`, and if `real` fails and `retract_on_error`, [`retract`]. Replay mode moves the schedule
/// on only after `real`, so that the next step (a trylock of the same mutex, say) finds it done.
pub(crate) fn release(
    site: *const libc::c_void,
    op: SyncOp,
    retract_on_error: bool,
    real: impl FnOnce() -> libc::c_int,
) -> libc::c_int {
    release_if(site, op, real, |&rc| rc == 0 || !retract_on_error)
}

/// [`release`] of a call whose result `happened` says whether the operation took place (a write
/// that wrote nothing released nothing); if not, its record is retracted.
pub(crate) fn release_if<R>(
    site: *const libc::c_void,
    op: SyncOp,
    real: impl FnOnce() -> R,
    happened: impl FnOnce(&R) -> bool,
) -> R {
    if thread::current().is_some() {
        let at = now(site, op);
        let r = real();
        if !happened(&r) {
            retract(at);
        }
        return r;
    }
    begin_calls();
    let tok = replay::sync::release(site, op);
    let r = real();
    if let Some(tok) = tok {
        replay::sync::released(tok, happened(&r));
    }
    r
}

/// Before the real call of a try operation (`op` with any outcome): in record mode only the
/// begins of open calls.
pub(crate) fn turn(site: *const libc::c_void, op: SyncOp) -> Turn {
    begin_calls();
    if thread::current().is_some() {
        perturb();
        return Turn(None);
    }
    Turn(replay::sync::turn(site, op))
}

/// After the real call of a try operation: [`now`] with its outcome.
pub(crate) fn now_after(turn: Turn, site: *const libc::c_void, op: SyncOp) -> Option<usize> {
    match turn.0 {
        Some(tok) => {
            replay::sync::now_in(tok, op);
            None
        }
        // The delay was taken before the real call, at `turn`.
        None => thread::current().and_then(|st| write_now(st, site, op)),
    }
}

/// Flushes the segment and writes `op` as pending.
pub(crate) fn pending(site_ptr: *const libc::c_void, op: SyncOp) -> Pending {
    begin_calls();
    let site = sites::id(site_ptr as usize);
    let Some(st) = thread::current() else {
        return Pending {
            at: None,
            site,
            replay: replay::sync::pending(site_ptr, op),
        };
    };
    perturb();
    let at = st.enter().and_then(|mut inner| {
        inner.flush();
        inner.write_sync(PENDING, site, op)
    });
    st.set_blocked(true);
    Pending {
        at,
        site,
        replay: None,
    }
}

/// Replay mode: the recorded outcome of the pending timed operation `p`, which the wrapper
/// enforces (`Some(true)`: it timed out); `None` when the real call decides, always in record
/// mode (see `replay::sync`).
pub(crate) fn recorded_timeout(p: &Pending) -> Option<bool> {
    p.replay.as_ref().and_then(replay::sync::recorded_timeout)
}

/// Runs the real call of a blocking acquire whose record is `p`. Record mode: `real`. Replay
/// mode: `attempt` (the non-blocking form; `None` when it would block) first, and only if it
/// would block, `real`, after the schedule moved on (see `replay::sync`).
pub(crate) fn acquire(
    p: &mut Pending,
    attempt: impl FnOnce() -> Option<libc::c_int>,
    real: impl FnOnce() -> libc::c_int,
) -> libc::c_int {
    let Some(tok) = p.replay.as_mut() else {
        return real();
    };
    if let Some(rc) = attempt() {
        return rc;
    }
    replay::sync::entering(tok);
    real()
}

/// Completes a pending record with the next sequence number and the outcome in `op` (same kind
/// as the pending one).
pub(crate) fn complete(p: Pending, op: SyncOp) {
    if let Some(tok) = p.replay {
        replay::sync::complete(tok, op);
        return;
    }
    let Some(st) = thread::current() else { return };
    st.set_blocked(false);
    let Some(at) = p.at else { return };
    let Some(mut inner) = st.enter() else { return };
    let event = ilgen_trace::Event::Sync(ilgen_trace::Sync {
        seq: runtime::next_seq(),
        site: p.site,
        op,
    });
    inner.writer.rewrite(at, &event);
}

/// Removes a record whose operation did not happen (the real call failed), if it is still the
/// thread's last record; otherwise completes it, which the analysis then over-approximates.
pub(crate) fn fail(p: Pending, op: SyncOp) {
    if let Some(tok) = p.replay {
        replay::sync::fail(tok);
        return;
    }
    if let Some(at) = p.at {
        if retract(Some(at)) {
            if let Some(st) = thread::current() {
                st.set_blocked(false);
            }
            return;
        }
    }
    complete(p, op);
}

/// The delay `chaos=SEED` puts before a recording thread's sync operation; outside the runtime,
/// so that the exit flush never waits for a sleeping thread.
fn perturb() {
    // Off (the default), a sync operation pays one compare, not a thread-local lookup.
    if let Some(rt) = runtime::recording().filter(|rt| rt.options.chaos != 0) {
        record::chaos::before_sync(&rt.options);
    }
}

/// Removes the record at `at` if it is the thread's last one; returns whether it did.
pub(crate) fn retract(at: Option<usize>) -> bool {
    let Some(st) = thread::current() else {
        replay::sync::retract();
        return false;
    };
    let Some(at) = at else { return false };
    let Some(mut inner) = st.enter() else {
        return false;
    };
    inner.writer.retract(at)
}
