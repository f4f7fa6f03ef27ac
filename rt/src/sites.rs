//! Site ids: turns the `site` pointer each hook receives into a [`SiteId`], and says whether two
//! sites are one statement.
//!
//! Takes the address of a 16-byte unit in the executable's `ilgen_sites` section (see
//! `ilgen_trace::sites`); gives `(site - start of section) / 16`, or [`ilgen_trace::NO_SITE`] for
//! NULL and for a pointer outside the section. The section's bounds come from the C shim `sites.c`
//! (weak `__start_ilgen_sites` and `__stop_ilgen_sites` references) and are read once at
//! initialization, so the hot path stores raw pointers and converts them only when a record is
//! written. [`same_statement`] reads the units of two ids (the schedule gate's, rarely).

use std::sync::atomic::{AtomicUsize, Ordering};

use ilgen_trace::sites::UNIT;
use ilgen_trace::SiteId;

extern "C" {
    fn __ilgen_rt_sites_start() -> *const u8;
    fn __ilgen_rt_sites_stop() -> *const u8;
}

static START: AtomicUsize = AtomicUsize::new(0);
static STOP: AtomicUsize = AtomicUsize::new(0);

/// Reads the section's bounds from the shim; called once by initialization.
pub(crate) fn init() {
    // SAFETY: the shim only returns the addresses of (weak) linker symbols.
    let (start, stop) = unsafe { (__ilgen_rt_sites_start(), __ilgen_rt_sites_stop()) };
    START.store(start as usize, Ordering::Relaxed);
    STOP.store(stop as usize, Ordering::Relaxed);
}

/// The id of `site` in this executable.
pub(crate) fn id(site: usize) -> SiteId {
    ilgen_trace::sites::id_at(site, start())
}

/// Whether sites `a` and `b` of this executable are one statement
/// ([`ilgen_trace::sites::same_statement`]); false for an id outside the section (a schedule is
/// input from outside).
pub(crate) fn same_statement(a: SiteId, b: SiteId) -> bool {
    let (start, stop) = (start(), STOP.load(Ordering::Relaxed));
    let units = stop.saturating_sub(start) / UNIT;
    if start == 0 || a as usize >= units || b as usize >= units {
        return false;
    }
    let unit = |i: usize| -> [u8; UNIT] {
        // SAFETY: unit i < units lies inside the mapped section.
        unsafe { std::ptr::read_unaligned((start + i * UNIT) as *const [u8; UNIT]) }
    };
    ilgen_trace::sites::same_statement(unit, a, b)
}

/// The section's length in bytes (0 when the executable has none).
pub(crate) fn section_len() -> usize {
    STOP.load(Ordering::Relaxed).saturating_sub(start())
}

/// The address of the section (0 when the executable has none).
pub(crate) fn start() -> usize {
    START.load(Ordering::Relaxed)
}
