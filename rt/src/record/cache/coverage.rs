//! The plain bytes one thread's segment already recorded, and with which kind: the filter the
//! segment cache consults on a stream miss before it looks the access up among its ranges.
//!
//! Takes the plain accesses the cache recorded (address, size, read or write) and, until it is
//! told to forget, answers whether an access's bytes were all recorded with a kind that covers it
//! (a write covers a read). It is asked first by the check the pass inlines before each plain
//! load or store of at most a granule (the table is published to it through the thread-local
//! pointer `abi::COVER_TLS`; see [`Coverage::publish`]), so that a held access costs no call,
//! then on the hooks' fast path, when the access's stream missed.
//! A covered access needs no record: the bytes already lie in a range of the segment, in the
//! pending slot or written out, whose kind covers it, and ranges only grow and only get stronger. So the filter outlives an early drain of a full cache (the segment goes on),
//! which is what the ranges cannot do: a segment with more scattered bytes than the cache holds
//! ranges (a sort, a hash table, a frequency table) recorded the same bytes once per drain.
//!
//! Direct-mapped by 32-byte granule: each of [`ENTRIES`] entries holds one granule's tag and the
//! bits of its bytes recorded as read and as written. A granule that takes an entry over evicts
//! the one before, which only costs that granule's later accesses a repeated record. An access
//! that spans two granules is neither answered nor kept (it takes the cache's usual path); so are
//! atomic accesses, which the filter leaves out so that no atomic record can ever stand for a
//! plain access (their ranges stay apart in the cache, see `cache.rs`).
//!
//! Forgetting is O(1): the epoch is part of each entry's tag, so moving to the next epoch empties
//! the table; it is really cleared once every 2^22 epochs, when the epoch wraps.
//!
//! Replay keeps the same table per thread for its own inlined check, with the site in each tag
//! (`replay::cover` says what an entry claims there): [`Coverage::for_replay`],
//! [`Coverage::keep_site`], [`bump`], published through its own pointer (`abi::REPLAY_COVER_TLS`),
//! which the pass reads only where recording's is null: recording's check runs what it ran
//! before (with the site in the same check, lu's recording took 0.96 CPU s, not 0.83; spreading
//! the entries by site too, 1.22). Its tags hold, above the granule number's bits (24 for an
//! address below 2^47, the only ones it keeps), 20 bits of the site pointer's 16-byte unit, then
//! a 20-bit epoch; those site bits also spread a granule's sites over the table, so that a load
//! and the store after it (two sites) do not take turns on one entry (without, fft's HB-only
//! replay took 4.9 CPU s, not 3.8).
//!
//! Memory per thread: [`ENTRIES`] x 16 bytes = 4 MiB of zeroed pages, touched only as they fill:
//! a page of entries answers for 8 KiB of address space (modulo 8 MiB), so a thread keeps resident
//! at most as many pages of it as it touches pages of memory, and never more than 4 MiB. The size is what
//! compressors' workers touch per block: zstd -T4 -3 (16 MB) wrote 62 million records without the
//! filter, 29.7, 19.2 and 15.8 million with 2^15, 2^16 and 2^17 entries (3.0, 2.5 and 2.2 s of
//! CPU; its peak RSS, the mapped trace included, fell from 187 to 121 MB); lbzip2 -1 needs 2^15
//! (7.0 million records without, 3.4 million with 2^14 entries, 2.2 million from 2^15 on). Since
//! the streams' hits fill the table too (for the pass's inlined check), zstd wrote 15.7 million
//! records with 2^17 entries and 13.9 million with 2^18 (1.58 and 1.49 s; peak RSS 129 and 124
//! MB).

use std::sync::atomic::{compiler_fence, AtomicU64, Ordering};

use ilgen_trace::abi;

/// Bytes per entry.
const GRANULE: u64 = abi::COVER_GRANULE;
/// Entries per thread (a power of two).
pub(crate) const ENTRIES: usize = abi::COVER_ENTRIES;
const INDEX_BITS: u32 = ENTRIES.trailing_zeros();
/// Where the epoch sits in a tag: above the granule number's bits not implied by its entry.
const EPOCH_SHIFT: u32 = 64 - GRANULE.trailing_zeros() - INDEX_BITS;
const EPOCH_ONE: u64 = 1 << EPOCH_SHIFT;
/// Words before the first entry: the epoch and the site mask (see `abi::COVER_TLS`).
const HEADER: usize = 2;
/// Replay's tags: the epoch above the site's bits (`abi::COVER_SITE_MASK`).
pub(crate) const REPLAY_EPOCH_ONE: u64 = 1 << 44;

pub(crate) struct Coverage {
    /// The epoch (shifted into place), the site mask (0: recording; the pass's replay check has
    /// replay's as a constant, the runtime reads it here), then per entry: its tag
    /// (`epoch << EPOCH_SHIFT | granule >> INDEX_BITS`, 0 for none: epochs start at 1; in replay
    /// with the site's bits), then its read bits (low half) and
    /// written bits (high half), byte i as bit i. This layout is the pass's too: the check it
    /// inlines before a load or store reads it through [`publish`]'s thread-local pointer.
    words: Box<[u64]>,
    /// Whether anything was kept in this epoch: forgetting nothing keeps the epoch.
    kept: bool,
}

impl Coverage {
    pub fn new() -> Coverage {
        // Zeroed memory: pages are touched only as the table fills.
        let mut words = vec![0u64; HEADER + 2 * ENTRIES].into_boxed_slice();
        words[0] = EPOCH_ONE;
        Coverage { words, kept: false }
    }

    /// A table for a replaying thread: entries per site (see the module doc).
    pub fn for_replay() -> Coverage {
        let mut c = Coverage::new();
        c.words[0] = REPLAY_EPOCH_ONE;
        c.words[1] = abi::COVER_SITE_MASK;
        c
    }

    /// The epoch word, which a flusher may bump (see `thread::claim`), or in replay another
    /// thread ([`bump`]), while the owner's inlined checks read it: atomic, relaxed (it costs a
    /// plain load and store).
    #[inline(always)]
    pub fn epoch(&self) -> &AtomicU64 {
        // SAFETY: word 0 lives as long as `self`, 8-aligned; it is only accessed atomically.
        unsafe { AtomicU64::from_ptr(self.words.as_ptr().cast_mut()) }
    }

    /// The entry of an access's granule, the tag it has there at `epoch` from site pointer
    /// `site` (0 when recording: the site mask is not read) and the bits of its bytes; `None` for
    /// an empty access or one that spans two granules. Replay keeps no address from 2^47 on (its
    /// granule number would reach the site's bits).
    #[inline(always)]
    fn place(&self, epoch: u64, addr: u64, size: u64, site: u64) -> Option<(usize, u64, u64)> {
        let offset = addr % GRANULE;
        if size == 0 || size > GRANULE - offset {
            return None;
        }
        let granule = addr / GRANULE;
        let site = match site {
            0 => 0,
            // SAFETY: the header's second word.
            _ => (site << abi::COVER_SITE_SHIFT) & unsafe { *self.words.get_unchecked(1) },
        };
        let tag = epoch | granule >> INDEX_BITS | site;
        let at = granule ^ (site >> abi::COVER_SPREAD_SHIFT).wrapping_mul(abi::COVER_SPREAD);
        let bits = (u64::from(u32::MAX) >> (GRANULE - size)) << offset;
        Some((HEADER + 2 * (at as usize & (ENTRIES - 1)), tag, bits))
    }

    /// Whether every byte of the plain access was kept in this epoch with a kind that covers it.
    #[inline(always)]
    pub fn covers(&self, addr: u64, size: u64, write: bool) -> bool {
        self.covers_at(self.epoch().load(Ordering::Relaxed), addr, size, write, 0)
    }

    /// [`Coverage::covers`] at `epoch` for site pointer `site` (0 when recording): what the
    /// inlined check decides.
    #[inline(always)]
    pub fn covers_at(&self, epoch: u64, addr: u64, size: u64, write: bool, site: u64) -> bool {
        let Some((at, tag, bits)) = self.place(epoch, addr, size, site) else {
            return false;
        };
        // SAFETY: `place` gives an entry below `HEADER + 2 * ENTRIES`.
        let (kept, kinds) = unsafe {
            (
                *self.words.get_unchecked(at),
                *self.words.get_unchecked(at + 1),
            )
        };
        if kept != tag {
            return false;
        }
        let written = kinds >> 32;
        let have = if write { written } else { written | kinds };
        have & bits == bits
    }

    /// Keeps a plain access the segment cache recorded, evicting another granule of its entry.
    /// A signal handler's inlined check may read the entry between any two of these stores: the
    /// bits are emptied before the tag changes, so it never sees a tag with another granule's
    /// bits.
    #[inline(always)]
    pub fn keep(&mut self, addr: u64, size: u64, write: bool) {
        let epoch = self.epoch().load(Ordering::Relaxed);
        self.keep_site(epoch, addr, size, write, 0);
    }

    /// Keeps a plain access at `epoch` (read before the access was decided: a bump since then
    /// leaves an entry no check matches) from site pointer `site` (in replay; 0 when recording).
    #[inline(always)]
    pub fn keep_site(&mut self, epoch: u64, addr: u64, size: u64, write: bool, site: u64) {
        let Some((at, tag, bits)) = self.place(epoch, addr, size, site) else {
            return;
        };
        // SAFETY: as in `covers`.
        let entry = unsafe { self.words.get_unchecked_mut(at..at + 2) };
        if entry[0] != tag {
            entry[1] = 0;
            compiler_fence(Ordering::SeqCst);
            entry[0] = tag;
            compiler_fence(Ordering::SeqCst);
        }
        entry[1] |= if write { bits << 32 } else { bits };
        self.kept = true;
    }

    /// Forgets every access kept so far.
    pub fn forget(&mut self) {
        if !self.kept {
            return;
        }
        self.kept = false;
        let epoch = self.epoch().load(Ordering::Relaxed).wrapping_add(EPOCH_ONE);
        if epoch == 0 {
            // Tags first: a check between the two stores sees the old epoch and no entry.
            self.words[HEADER..].fill(0);
            compiler_fence(Ordering::SeqCst);
            self.epoch().store(EPOCH_ONE, Ordering::Relaxed);
        } else {
            self.epoch().store(epoch, Ordering::Relaxed);
        }
    }

    /// Empties every entry, for a replaying owner whose epoch has gone half its range since the
    /// last time (other threads bump it, so it never restarts at the first epoch as
    /// [`Coverage::forget`]'s does).
    pub fn clear(&mut self) {
        self.words[HEADER..].fill(0);
    }

    /// Makes this the table the calling thread's inlined checks read: called by its owner.
    #[inline(always)]
    pub fn publish(&self) {
        tls::set(&tls::RECORD, self.words.as_ptr().cast());
    }

    /// Makes this replay table the one the calling thread's inlined checks read where they find
    /// no recording table: called by its owner.
    pub fn publish_replay(&self) {
        tls::set(&tls::REPLAY, self.words.as_ptr().cast());
    }

    /// The calling thread's inlined checks stop reading this table, if they read it.
    pub fn withdraw(&self) {
        for slot in [&tls::RECORD, &tls::REPLAY] {
            if tls::get(slot) == self.words.as_ptr().cast() {
                tls::set(slot, std::ptr::null());
                compiler_fence(Ordering::SeqCst);
            }
        }
    }
}

/// Moves a replay table (its epoch word) to the next epoch: none of its entries holds from now
/// on. Any thread may: the owner when its instant moves, another before and after it removes a
/// cell the owner's entries may stand for. A locked instruction, so that the owner's later checks
/// and hooks see every store made before it.
pub(crate) fn bump(epoch: &AtomicU64) {
    epoch.fetch_add(REPLAY_EPOCH_ONE, Ordering::SeqCst);
}

impl Drop for Coverage {
    /// The owner's inlined checks stop reading the table before it is freed (a thread's state is
    /// freed by the thread itself, see `thread::end`).
    fn drop(&mut self) {
        self.withdraw();
    }
}

/// The calling thread's published table ([`abi::COVER_TLS`]), null while it has none: the
/// thread has not recorded yet, records nothing (replay, mode off) or ended. On x86-64 Linux a
/// `.tbss` variable the program's instrumented code reads with the initial-exec model (local-exec
/// once linked: the runtime is linked into executables only); the pass inlines no check for
/// other targets, so there the pointer stays unpublished.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod tls {
    std::arch::global_asm!(
        ".pushsection .tbss,\"awT\",@nobits",
        ".p2align 3",
        ".globl __ilgen_cover",
        ".hidden __ilgen_cover",
        ".type __ilgen_cover, @object",
        ".size __ilgen_cover, 8",
        "__ilgen_cover:",
        ".zero 8",
        ".globl __ilgen_rcover",
        ".hidden __ilgen_rcover",
        ".type __ilgen_rcover, @object",
        ".size __ilgen_rcover, 8",
        "__ilgen_rcover:",
        ".zero 8",
        ".popsection",
    );

    /// Which pointer: recording's (`abi::COVER_TLS`) or replay's (`abi::REPLAY_COVER_TLS`).
    pub(super) struct Slot(bool);
    pub(super) const RECORD: Slot = Slot(false);
    pub(super) const REPLAY: Slot = Slot(true);

    #[inline(always)]
    pub(super) fn get(slot: &Slot) -> *const () {
        let p: *const ();
        // SAFETY: reads one of this thread's 8-byte TLS slots defined above.
        unsafe {
            if slot.0 {
                std::arch::asm!(
                    "movq %fs:__ilgen_rcover@tpoff, {}",
                    out(reg) p,
                    options(att_syntax, nostack, preserves_flags, readonly)
                );
            } else {
                std::arch::asm!(
                    "movq %fs:__ilgen_cover@tpoff, {}",
                    out(reg) p,
                    options(att_syntax, nostack, preserves_flags, readonly)
                );
            }
        }
        p
    }

    #[inline(always)]
    pub(super) fn set(slot: &Slot, p: *const ()) {
        // SAFETY: writes one of this thread's 8-byte TLS slots defined above.
        unsafe {
            if slot.0 {
                std::arch::asm!(
                    "movq {}, %fs:__ilgen_rcover@tpoff",
                    in(reg) p,
                    options(att_syntax, nostack, preserves_flags)
                );
            } else {
                std::arch::asm!(
                    "movq {}, %fs:__ilgen_cover@tpoff",
                    in(reg) p,
                    options(att_syntax, nostack, preserves_flags)
                );
            }
        }
    }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
mod tls {
    pub(super) struct Slot;
    pub(super) const RECORD: Slot = Slot;
    pub(super) const REPLAY: Slot = Slot;

    pub(super) fn get(_: &Slot) -> *const () {
        std::ptr::null()
    }

    pub(super) fn set(_: &Slot, _: *const ()) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_covers_reads_and_writes_a_read_only_reads() {
        let mut c = Coverage::new();
        c.keep(0x100, 4, false);
        assert!(c.covers(0x100, 4, false));
        assert!(c.covers(0x102, 2, false));
        assert!(!c.covers(0x100, 4, true));
        c.keep(0x102, 4, true);
        assert!(c.covers(0x102, 4, true));
        assert!(c.covers(0x100, 6, false), "read bytes and written bytes");
        assert!(!c.covers(0x100, 6, true));
        assert!(!c.covers(0x104, 4, false), "a byte never kept");
    }

    #[test]
    fn accesses_over_two_granules_are_never_answered() {
        let mut c = Coverage::new();
        c.keep(0x100, 32, true);
        c.keep(0x120, 32, true);
        assert!(c.covers(0x100, 32, true));
        assert!(!c.covers(0x11c, 8, false));
        c.keep(0x1fc, 8, true);
        assert!(!c.covers(0x1fc, 4, false));
        assert!(!c.covers(0x100, 0, false));
    }

    #[test]
    fn a_granule_of_the_same_entry_evicts_the_one_before() {
        let mut c = Coverage::new();
        let other = 0x100 + GRANULE * ENTRIES as u64;
        c.keep(0x100, 8, true);
        c.keep(other, 8, false);
        assert!(c.covers(other, 8, false));
        assert!(!c.covers(other, 8, true));
        assert!(!c.covers(0x100, 8, false));
        // Addresses far apart in the high bits keep distinct tags.
        c.keep(0x100 | 1 << 63, 8, true);
        assert!(!c.covers(0x100, 8, false));
    }

    #[test]
    fn the_owner_publishes_its_table_until_it_drops() {
        assert!(tls::get(&tls::RECORD).is_null());
        let c = Coverage::new();
        c.publish();
        assert_eq!(tls::get(&tls::RECORD), c.words.as_ptr().cast());
        // Another table dropping leaves the published one alone.
        drop(Coverage::new());
        assert_eq!(tls::get(&tls::RECORD), c.words.as_ptr().cast());
        assert!(tls::get(&tls::REPLAY).is_null());
        drop(c);
        assert!(tls::get(&tls::RECORD).is_null());
    }

    #[test]
    fn forgetting_empties_the_table_and_the_wrap_really_clears() {
        let mut c = Coverage::new();
        c.keep(0x100, 8, true);
        c.forget();
        assert!(!c.covers(0x100, 8, false));
        // Kept in the first epoch, then the last epoch's forgetting wraps back to the first.
        let mut c = Coverage::new();
        c.keep(0x100, 8, true);
        c.epoch()
            .store(0u64.wrapping_sub(EPOCH_ONE), Ordering::Relaxed);
        c.keep(0x200, 8, true);
        c.forget();
        assert_eq!(c.epoch().load(Ordering::Relaxed), EPOCH_ONE);
        assert!(!c.covers(0x100, 8, false));
        assert!(!c.covers(0x200, 8, false));
    }
}
