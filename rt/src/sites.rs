//! Site ids: turns the `site` pointer each hook receives into a [`SiteId`].
//!
//! Takes the address of a 16-byte unit in the executable's `ilgen_sites` section (see
//! `ilgen_trace::sites`); gives `(site - start of section) / 16`, or [`NO_SITE`] for NULL and for
//! a pointer outside the section. The section start comes from the C shim `sites.c` (a weak
//! `__start_ilgen_sites` reference) and is read once at initialization, so the hot path stores
//! raw pointers and converts them only when a record is written.

use std::sync::atomic::{AtomicUsize, Ordering};

use ilgen_trace::{SiteId, NO_SITE};

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

/// The id of `site`, given the section start `start` (0 when the executable has no site table).
pub(crate) fn id_from(site: usize, start: usize) -> SiteId {
    if site == 0 || start == 0 || site < start {
        return NO_SITE;
    }
    let id = (site - start) / ilgen_trace::sites::UNIT;
    if id >= NO_SITE as usize {
        NO_SITE
    } else {
        id as SiteId
    }
}

/// The id of `site` in this executable.
pub(crate) fn id(site: usize) -> SiteId {
    id_from(site, START.load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unit_indices_and_null_is_no_site() {
        assert_eq!(id_from(0, 0x1000), NO_SITE);
        assert_eq!(id_from(0x1000, 0), NO_SITE);
        assert_eq!(id_from(0x1000, 0x1000), 0);
        assert_eq!(id_from(0x1030, 0x1000), 3);
        assert_eq!(id_from(0x0ff0, 0x1000), NO_SITE);
    }
}
