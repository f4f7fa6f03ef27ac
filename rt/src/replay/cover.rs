//! Replay's coverage tables: per thread, the plain accesses each of its sites made in its present
//! instant, read by the check the pass inlines before a plain load or store, so that an access
//! the shadow would decide on its fast path costs no call.
//!
//! Takes, from the access hooks, each plain access the shadow's fast path has just decided (its
//! site pointer; address and size, widened to the bytes of the cell of the instant that covers
//! it when that cell touches every byte its kind's cells there touch, `replay::shadow::access`;
//! kind, and the table's epoch read before the check: a repeat, which
//! a loop will likely make again; the first access of some bytes makes no entry, so a thread
//! that touches its bytes once per instant, a stream, pays for no entry); from the thread's state,
//! its instant after every entry into the runtime; from the shadow, the threads whose cells it
//! is about to remove, and has removed. Gives the thread's table, published through
//! `abi::REPLAY_COVER_TLS` (`record::cache::coverage` holds its layout, shared with recording's
//! filter; the pass reads it where recording's pointer is null).
//!
//! What an entry claims: the access's site has made its access of the thread's present instant
//! (its first of the instant is behind it: `replay::shadow`'s rule for a site's first access), and
//! a cell of this thread and instant covers these bytes with this kind or a stronger one (the
//! shadow's fast path found one). A later access of the same
//! site, instant and bytes, of a kind the entry holds, is then what the shadow's fast path
//! decides without storing or reporting anything: the inlined check skips it. The site is in the
//! entry's tag (20 bits of its 16-byte unit), so another site's first access of the instant
//! reaches the hook, as issue 18 needs (tests/confirm/second_read_site_race.c). Two sites of the
//! executable never share those bits while its sites section is below 16 MiB (a million sites),
//! which [`take`] checks; a pointer outside the section (an instrumented shared library's site,
//! `NO_SITE` to the shadow) could alias one.
//!
//! When an entry stops holding: its instant ends (the owner bumps its epoch when it leaves the
//! runtime with its own clock moved: a release, a fork, an atomic write), or a cell it stands
//! for is removed by the thread itself (a free, a destroy, an allocation over it) or by another
//! (an eviction from a full granule, an allocation). The remover bumps the owner's epoch before
//! the removal, in the section that removes it, so that no entry made before survives it, and
//! again after the granule's state is written, so that none the owner made in between (from the
//! state as it was) does: an owner whose hook read the epoch after the second bump reads the new
//! state too (x86-64 orders a locked instruction with every access around it). An entry's
//! epoch is the one its hook read before deciding, so a bump while it decides leaves it stale.
//! A watched replay (the debugger's stop, atomicity's watched sites) publishes no table: every
//! access reaches the hook.
//!
//! Tables are never freed: a thread that ends gives its own back for the next thread to start
//! (after a bump), since other threads may still bump it through [`TABLES`]; so a replay keeps as
//! many 4 MiB tables (zero pages, touched as they fill) as it had threads alive at once. Threads
//! from [`TABLED`] on have none.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::Mutex;

use ilgen_trace::sites::UNIT;
use ilgen_trace::ThreadId;

use crate::record::cache::coverage::{bump, Coverage, REPLAY_EPOCH_ONE};

/// Threads below this tid have a table.
pub(crate) const TABLED: ThreadId = 1 << 10;

/// Per tid, the epoch word of its thread's table while it lives.
static TABLES: [AtomicPtr<AtomicU64>; TABLED as usize] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; TABLED as usize];

/// Tables of threads that ended, for threads to come.
static SPARE: Mutex<Vec<Coverage>> = Mutex::new(Vec::new());

/// Units of 16 bytes whose site bits a tag holds: a sites section this long or longer gives none.
const SITE_UNITS: usize = 1 << 20;

/// Epochs after which the owner empties its table: half the tags' range, so that an entry's epoch
/// never comes round again while it is there.
const CLEAR_AFTER: u64 = 1 << 63;

/// A thread's own table and what it needs to keep it right.
pub(crate) struct Own {
    table: Coverage,
    tid: ThreadId,
    /// The thread's own clock when the table's epoch last moved for it.
    instant: u32,
    /// The epoch when the table was last emptied.
    cleared: u64,
}

/// The table of thread `tid` at `instant`, published for its inlined checks; `None` for a watched
/// replay, a tid from [`TABLED`] on, or an executable whose sites section is too long for the tags
/// (`section` is its length in bytes).
pub(crate) fn take(tid: ThreadId, instant: u32, watched: bool, section: usize) -> Option<Own> {
    if watched || tid >= TABLED || section / UNIT >= SITE_UNITS {
        return None;
    }
    let spare = SPARE.lock().unwrap_or_else(|e| e.into_inner()).pop();
    let table = spare.unwrap_or_else(Coverage::for_replay);
    // Entries of the thread that had it last hold nothing for this one.
    bump(table.epoch());
    TABLES[tid as usize].store(
        std::ptr::from_ref(table.epoch()).cast_mut(),
        Ordering::SeqCst,
    );
    table.publish_replay();
    let cleared = table.epoch().load(Ordering::Relaxed);
    Some(Own {
        table,
        tid,
        instant,
        cleared,
    })
}

impl Own {
    /// The epoch to keep the hook's access at: read before the shadow decides it.
    #[inline(always)]
    pub fn epoch(&self) -> u64 {
        self.table.epoch().load(Ordering::Relaxed)
    }

    /// Keeps the plain access the shadow just checked, read at `epoch` (see the module doc).
    #[inline(always)]
    pub fn keep(&mut self, epoch: u64, addr: u64, size: u64, write: bool, site: usize) {
        // A granule number from 2^42 on would reach the tag's site bits.
        if addr >> 47 != 0 {
            return;
        }
        if epoch.wrapping_sub(self.cleared) >= CLEAR_AFTER {
            self.table.clear();
            self.cleared = epoch;
        }
        self.table.keep_site(epoch, addr, size, write, site as u64);
    }

    /// The thread leaves the runtime at `instant` (its own clock): a new instant ends every entry.
    #[inline(always)]
    pub fn settle(&mut self, instant: u32) {
        if instant != self.instant {
            self.instant = instant;
            bump(self.table.epoch());
        }
    }

    /// The thread ends: its inlined checks stop reading the table, which goes to the spares.
    pub fn give_back(self) {
        self.table.withdraw();
        TABLES[self.tid as usize].store(std::ptr::null_mut(), Ordering::SeqCst);
        SPARE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(self.table);
    }
}

/// A cell of thread `tid` is about to be removed, or was removed from a granule whose state is
/// written: none of its table's entries holds from now on (see the module doc).
#[inline]
pub(crate) fn lost(tid: ThreadId) {
    let Some(slot) = TABLES.get(tid as usize) else {
        return;
    };
    let epoch = slot.load(Ordering::SeqCst);
    if !epoch.is_null() {
        // SAFETY: tables are never freed; one given back to the spares only loses entries.
        bump(unsafe { &*epoch });
    }
}

const _: () = assert!(CLEAR_AFTER % REPLAY_EPOCH_ONE == 0);

#[cfg(test)]
mod tests {
    use super::*;

    /// The site pointers of a test: 16-byte units.
    const S1: usize = 0x5555_0000_1000;
    const S2: usize = S1 + UNIT;

    fn covers(own: &Own, addr: u64, size: u64, write: bool, site: usize) -> bool {
        own.table
            .covers_at(own.epoch(), addr, size, write, site as u64)
    }

    #[test]
    fn an_entry_holds_for_its_own_site_and_instant_until_a_cell_is_lost() {
        let mut own = take(900, 1, false, 4096).expect("a table");
        let e = own.epoch();
        own.keep(e, 0x1000, 8, false, S1);
        assert!(covers(&own, 0x1000, 8, false, S1));
        assert!(covers(&own, 0x1002, 2, false, S1));
        assert!(!covers(&own, 0x1000, 8, true, S1), "a read holds no write");
        assert!(
            !covers(&own, 0x1000, 8, false, S2),
            "another site's first access"
        );
        // The same instant: nothing moves.
        own.settle(1);
        assert!(covers(&own, 0x1000, 8, false, S1));
        // A release: the next instant.
        own.settle(2);
        assert!(!covers(&own, 0x1000, 8, false, S1));
        // Kept again, then another thread removes one of its cells.
        let e = own.epoch();
        own.keep(e, 0x1000, 8, true, S1);
        assert!(covers(&own, 0x1000, 4, false, S1));
        lost(900);
        assert!(!covers(&own, 0x1000, 4, false, S1));
        // Kept with an epoch read before a bump: stale from the start.
        let e = own.epoch();
        lost(900);
        own.keep(e, 0x1000, 8, true, S1);
        assert!(!covers(&own, 0x1000, 8, true, S1));
        own.give_back();
        lost(900);
    }

    #[test]
    fn two_sites_of_one_granule_keep_their_entries_side_by_side() {
        // A load and the store after it: each its own entry, neither evicting the other.
        let mut own = take(906, 1, false, 4096).expect("a table");
        let e = own.epoch();
        for i in 0..64u64 {
            own.keep(e, 0x10_0000 + 8 * i, 8, false, S1);
            own.keep(e, 0x10_0000 + 8 * i, 8, true, S2);
        }
        for i in 0..64u64 {
            assert!(covers(&own, 0x10_0000 + 8 * i, 8, false, S1));
            assert!(covers(&own, 0x10_0000 + 8 * i, 8, true, S2));
            assert!(!covers(&own, 0x10_0000 + 8 * i, 8, true, S1));
        }
        own.give_back();
    }

    #[test]
    fn no_table_for_a_watched_replay_a_high_tid_or_a_long_sites_section() {
        assert!(take(901, 1, true, 4096).is_none());
        assert!(take(TABLED, 1, false, 4096).is_none());
        assert!(take(902, 1, false, SITE_UNITS * UNIT).is_none());
    }

    #[test]
    fn a_table_given_back_serves_the_next_thread_without_its_entries() {
        let mut own = take(903, 1, false, 4096).expect("a table");
        let e = own.epoch();
        own.keep(e, 0x2000, 4, true, S1);
        own.give_back();
        let next = take(904, 1, false, 4096).expect("a table");
        assert!(!covers(&next, 0x2000, 4, true, S1));
        next.give_back();
    }

    #[test]
    fn addresses_from_2_to_the_47_are_never_kept() {
        let mut own = take(905, 1, false, 4096).expect("a table");
        let e = own.epoch();
        own.keep(e, 1 << 47, 4, true, S1);
        assert!(!covers(&own, 1 << 47, 4, true, S1));
        own.keep(e, (1 << 47) - 8, 4, true, S1);
        assert!(covers(&own, (1 << 47) - 8, 4, true, S1));
        own.give_back();
    }
}
