//! The atomic-block markers: `__ilgen_tx_begin` and `__ilgen_tx_end`.
//!
//! Takes the calls the pass puts at the entry and every return of a function marked
//! `ILGEN_ATOMIC`, and those `ILGEN_ATOMIC_BEGIN()`/`ILGEN_ATOMIC_END()` expand to (`ilgen.h`);
//! gives one `SyncOp::TxBegin`/`TxEnd` per outermost block of a thread, in both modes. The
//! nesting depth is counted here, per thread, so that a marked function called from another
//! one (or recursively) stays inside its caller's transaction, and record and replay number the
//! same markers alike. An end without a begin (a block left by `longjmp` and ended again) is
//! dropped: begins and ends alternate in every trace.

use std::cell::Cell;
use std::ffi::c_void;

use ilgen_trace::SyncOp;

use crate::record;

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
