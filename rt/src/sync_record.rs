//! Recording one sync operation: the steps every wrapper shares.
//!
//! Takes an operation, its site and when it happens relative to the real call; gives its record
//! in the calling thread's file, after the segment cache (the accesses before it) is flushed.
//! Following `ilgen_trace::Sync`: [`now`] takes the sequence number at once, so a wrapper calls it
//! before the real call for releasing operations and after it for acquiring ones; [`pending`]
//! writes a blocking operation with seq `PENDING` before the real call, and [`complete`] fills in
//! seq and outcome in place after it, so a thread blocked forever still shows what it waited for.

use ilgen_trace::{SyncOp, PENDING};

use crate::{runtime, sites, thread};

/// A record written before a blocking call, to be completed (or retracted) after it.
pub(crate) struct Pending {
    at: Option<usize>,
    site: u32,
}

/// Flushes the segment and writes `op` with the next sequence number. Returns the record's
/// offset (for [`retract`]).
pub(crate) fn now(site: *const libc::c_void, op: SyncOp) -> Option<usize> {
    let st = thread::current()?;
    let mut inner = st.enter()?;
    inner.flush();
    inner.write_sync(runtime::next_seq(), sites::id(site as usize), op)
}

/// Flushes the segment and writes `op` as pending.
pub(crate) fn pending(site: *const libc::c_void, op: SyncOp) -> Pending {
    let site = sites::id(site as usize);
    let at = thread::current().and_then(|st| {
        let mut inner = st.enter()?;
        inner.flush();
        inner.write_sync(PENDING, site, op)
    });
    Pending { at, site }
}

/// Completes a pending record with the next sequence number and the outcome in `op` (same kind
/// as the pending one).
pub(crate) fn complete(p: Pending, op: SyncOp) {
    let Some(at) = p.at else { return };
    let Some(st) = thread::current() else { return };
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
    if let Some(at) = p.at {
        if retract(Some(at)) {
            return;
        }
    }
    complete(p, op);
}

/// Removes the record at `at` if it is the thread's last one; returns whether it did.
pub(crate) fn retract(at: Option<usize>) -> bool {
    let Some(at) = at else { return false };
    let Some(st) = thread::current() else {
        return false;
    };
    let Some(mut inner) = st.enter() else {
        return false;
    };
    inner.writer.retract(at)
}
