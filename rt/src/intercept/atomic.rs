//! The atomic-block markers, `__ilgen_tx_begin` and `__ilgen_tx_end`, and the call hooks,
//! `__ilgen_call_enter` and `__ilgen_call_leave`.
//!
//! Takes the calls the pass puts at the entry and every return of a function marked
//! `ILGEN_ATOMIC`, and those `ILGEN_ATOMIC_BEGIN()`/`ILGEN_ATOMIC_END()` expand to (`ilgen.h`);
//! gives one `SyncOp::TxBegin`/`TxEnd` per outermost block of a thread, in both modes. The
//! nesting depth is counted here, per thread, so that a marked function called from another
//! one (or recursively) stays inside its caller's transaction, and record and replay number the
//! same markers alike. An end without a begin (a block left by `longjmp` and ended again) is
//! dropped: these begins and ends alternate in every trace.
//!
//! The call hooks are at the entry, every return and every landing pad of each function that may
//! synchronize; under `calls=1` they keep the thread's stack of open calls ([`crate::calls`]),
//! each with where the thread's segment was at its entry, whose begins `record::sync` writes
//! before a sync operation runs inside them (after the accesses made before the entry), and a
//! return writes the `TxEnd` of each begun call it leaves. Its site is the return's, flagged as a
//! call's like the entry's.

use std::cell::Cell;
use std::ffi::c_void;

use ilgen_trace::SyncOp;

use crate::{calls, record};

thread_local! {
    /// Open atomic blocks of this thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// The depth after adding `delta`, and the depth before; `None` when the thread's locals are
/// gone (its exit is under way: nothing is recorded then).
fn step(delta: i32) -> Option<(u32, u32)> {
    DEPTH
        .try_with(|d| {
            let before = d.get();
            let after = before.saturating_add_signed(delta);
            d.set(after);
            (before, after)
        })
        .ok()
}

/// Entered an atomic block.
///
/// # Safety
/// Callable from any thread; `site` is a site unit of the `ilgen_sites` section, or null.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_tx_begin(site: *const c_void) {
    if let Some((0, 1)) = step(1) {
        record::sync::now(site, SyncOp::TxBegin);
    }
}

/// Left an atomic block.
///
/// # Safety
/// As [`__ilgen_tx_begin`].
#[no_mangle]
pub unsafe extern "C" fn __ilgen_tx_end(site: *const c_void) {
    if let Some((1, 0)) = step(-1) {
        record::sync::now(site, SyncOp::TxEnd);
    }
}

/// Entered a function that may synchronize; gives the depth of open calls before it, for its
/// [`__ilgen_call_leave`]s.
///
/// # Safety
/// Callable from any thread; `site` is a site unit of the `ilgen_sites` section, or null.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_call_enter(site: *const c_void) -> u32 {
    calls::enter(site as usize, record::sync::mark)
}

/// Returning from that function (`depth`: what its enter gave), or landed in one of its landing
/// pads (`depth` + 1: the calls an exception left end, its own goes on).
///
/// # Safety
/// As [`__ilgen_call_enter`].
#[no_mangle]
pub unsafe extern "C" fn __ilgen_call_leave(depth: u32, site: *const c_void) {
    let ended = calls::leave(depth);
    if ended > 0 {
        record::sync::end_calls(ended, site);
    }
}
