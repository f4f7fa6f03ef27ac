//! Site ids: turns the `site` pointer each hook receives into a [`SiteId`].
//!
//! Takes the address of a 16-byte unit in the executable's `ilgen_sites` section (see
//! `ilgen_trace::sites`); gives `(site - start of section) / 16`, or [`ilgen_trace::NO_SITE`] for
//! NULL and for a pointer outside the section. The section start comes from the C shim `sites.c`
//! (a weak `__start_ilgen_sites` reference) and is read once at initialization, so the hot path
//! stores raw pointers and converts them only when a record is written.

use std::sync::atomic::{AtomicUsize, Ordering};

use ilgen_trace::SiteId;

extern "C" {
    fn __ilgen_rt_sites_start() -> *const u8;
}

static START: AtomicUsize = AtomicUsize::new(0);

/// Reads the section start from the shim; called once by initialization.
pub(crate) fn init() {
    // SAFETY: the shim only returns the address of a (weak) linker symbol.
    let start = unsafe { __ilgen_rt_sites_start() } as usize;
    START.store(start, Ordering::Relaxed);
}

/// The id of `site` in this executable.
pub(crate) fn id(site: usize) -> SiteId {
    ilgen_trace::sites::id_at(site, start())
}

/// The address of the section (0 when the executable has none).
pub(crate) fn start() -> usize {
    START.load(Ordering::Relaxed)
}
