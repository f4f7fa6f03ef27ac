//! The per-thread segment cache: the byte ranges one thread accessed between two sync events.
//!
//! Takes every memory access of one thread (address, size, kind, raw site pointer); gives back,
//! when drained, ranges in first-access order such that every byte the thread accessed in the
//! segment lies in a range of at least that kind (a write dominates a read, a plain access an
//! atomic one; an atomic range holds only atomically accessed bytes), and each range's site is
//! the first site of its kind among the accesses it covers. Draining happens at every sync event
//! (the segment ends) and early when the cache is full ([`SegmentCache::spill`]): splitting a
//! segment in two is harmless to the analysis, it only repeats a range, and the coverage filter
//! keeps most of those repeats out.
//!
//! Merging adjacent and overlapping accesses of one kind into one range is the lever: the paper's
//! "it is enough to trace a single access to a specific address", extended to ranges, so that an
//! array sweep is one record per segment instead of one per element. Three ways an access finds
//! its range, cheapest first:
//! - **Streams** (the fast path, [`SegmentCache::record_fast`], inlined into the hooks): each
//!   (site, kind) remembers the range it last touched, in a small direct-mapped table. An access
//!   inside that range, by a kind the range already dominates, changes nothing; one that overlaps
//!   or abuts it with the same kind grows it. So a loop sweeping an array writes one range per
//!   contiguous run, whatever the number of interleaved streams (a stencil reads five), and a loop
//!   on one variable one range.
//! - **Source streams** (on a stream miss): the same per source expression (file, line, column,
//!   function of the site), which the copies of an access that loop unrolling made share.
//! - **Exact ranges**: otherwise the access is looked up by (address, size, atomic-ness) in an
//!   open-addressing table over `2 * capacity` slots (load at most one half) that index a dense
//!   range array in insertion order; a hit merges kinds ([`AccessKind::dominant`]), a miss adds a
//!   range. A grown range keeps its slot under its first (address, size), which then matches
//!   nothing, until the next range of that key takes the slot over. Slots carry a tag of their
//!   key, so a probe reads only the ranges it may match.
//!
//! On a stream miss, still on the fast path, the **coverage filter** (`cache/coverage.rs`): the
//! plain bytes the segment recorded, and with which kind, per 32-byte granule. An access whose
//! bytes it holds, with a kind that covers it, records nothing. It outlives early drains, which
//! the streams and the exact table do not: a sort or a hash table scatters more ranges over a
//! segment than the cache holds, and each drain used to record their bytes again (lbzip2 -1 wrote
//! 7.0 million records without it, 2.2 million with it; zstd -3 62 and 16 million). It forgets at
//! the segment's end and at a [`Mark`]. A stream's hit keeps its bytes there too: the check the
//! pass inlines before a plain access reads the filter alone.
//!
//! Only one source expression's own accesses extend its ranges: `a = 1; b = 2;` on neighbouring
//! variables stays two records, each with the site that touched it, so a race report names the
//! right line. A range never takes a kind stronger than each of its bytes had: growing needs the
//! same kind, and only an exact hit changes a range's kind.
//!
//! The ranges live in the thread's pending slot (`record::pending`), mapped `MAP_SHARED`
//! ([`SegmentCache::in_slot`]): the segment is in the page cache at every moment, so a process
//! killed before it drains loses nothing. Each range is written before the count that covers it is
//! published, and the count drops to 0 only after the ranges were written out as records (a kill
//! in between repeats them, harmlessly). A store into that mapping costs what a store into the
//! heap costs; the fast path is unchanged.
//!
//! A segment can also be cut at a [`Mark`] without a sync event: a recorded call takes one when
//! it is entered, and when its `TxBegin` is written (lazily, see `crate::calls`) the ranges before
//! the mark are written out first ([`SegmentCache::drain_to`]), so the call's own accesses follow
//! its begin. Taking a mark starts a new generation when the segment has ranges, so no access
//! after the mark extends a range before it, and empties the coverage filter, so none goes
//! unrecorded for bytes recorded before it. The ranges written out by `drain_to` stay in the
//! slot, below `start`, until the segment ends: a process killed before that repeats them.
//!
//! Memory per thread: `capacity` ranges of 32 bytes, `2 * capacity` (rounded up to a power of
//! two) slots of 8 bytes, 2 x [`STREAMS`] streams of 16 bytes (and a source key of 8 bytes each of the first
//! [`STREAMS`]), and the coverage filter's 4 MiB:
//! 4.2 MiB at the default 4096 ranges, preallocated when the thread starts (zeroed pages, touched only as the table fills) and
//! never grown. With merging, 4096 ranges hold far more than a thread's working set per segment in
//! a sweep (`array_kernel` needs about 500 per thread and barrier phase). Clearing is O(1): slots
//! and streams carry the generation they were filled in, and draining bumps the generation, so a
//! thread that syncs often does not pay for the tables' size; they are really cleared once every
//! 32768 drains, when the 15-bit generation wraps.

use std::sync::atomic::{AtomicU32, Ordering};

use ilgen_trace::codec::WINDOW_BYTES;
use ilgen_trace::pending::{self, Shape, LEN_AT, SLOT_HEADER};
use ilgen_trace::AccessKind;

use crate::record::pending::Slot;
use coverage::Coverage;

pub(crate) mod coverage;

/// Streams per thread (a power of two): more than the distinct access instructions of a hot loop.
pub(crate) const STREAMS: usize = 256;

/// Drains between two real clearings of the tables: generations live in 15 bits (see [`Stream`]).
const GENERATIONS: u32 = 1 << 15;

/// A slot's generation and its key's tag (see [`SegmentCache::slots`]).
const GENERATION_BITS: u64 = (GENERATIONS as u64 - 1) << 32;
const TAG_BITS: u64 = !0 << 47;

/// A point in a thread's stream of accesses: the segment (counted by drains) and the number of
/// ranges before it; [`NO_MARK`] when none could be taken.
pub(crate) type Mark = u64;

/// No mark: `drain_to` it drains the whole segment.
pub(crate) const NO_MARK: Mark = u64::MAX;

/// One range of one segment, as drained: an access record, or a window record when `mask` is
/// not 0 (see `ilgen_trace::codec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub addr: u64,
    /// The access's size; 0 in a window.
    pub size: u32,
    pub kind: AccessKind,
    /// The raw site pointer: turned into a site id only when the entry is written.
    pub site: usize,
    /// A window's bytes from `addr` (bit `i`: byte `addr + i`), 0 for an access.
    pub mask: u64,
}

/// One range of one segment, as kept: `[lo, hi)` and, for each bit `i` of `mask`, byte `lo + i`
/// (an access past `hi` that left a gap, inside the window from `lo`), drained as a window record
/// or as `u32`-sized access records (`pending::shape`). Its bytes are a range of the pending
/// file's layout.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Range {
    lo: u64,
    hi: u64,
    site: usize,
    kind: AccessKind,
    mask: u64,
}

const _: () = assert!(std::mem::size_of::<Range>() == pending::RANGE);

/// Where the ranges live, after a pending slot's header: the thread's slot of the shared pool, or
/// private memory when no pending file could be made (and in unit tests).
enum Memory {
    Shared(Slot),
    Private(Box<[u64]>),
}

impl Memory {
    fn base(&mut self) -> *mut u8 {
        match self {
            Memory::Shared(slot) => slot.base(),
            Memory::Private(words) => words.as_mut_ptr().cast(),
        }
    }
}

/// The range a (site, kind) touched last in this generation.
#[derive(Clone, Copy, Default)]
struct Stream {
    /// `generation << 49 | site << 2 | kind` (user-space pointers have 47 bits); 0 is never a
    /// key in use (generations start at 1).
    key: u64,
    /// Index of the range in `ranges`.
    index: usize,
}

pub(crate) struct SegmentCache {
    streams: [Stream; STREAMS],
    /// `capacity` ranges in `memory`, the first `len` in use.
    ranges: *mut Range,
    len: usize,
    /// Ranges below it were written out by [`SegmentCache::drain_to`].
    start: usize,
    /// Drains so far (wrapping): the segment a [`Mark`] belongs to.
    drains: u32,
    /// `generation << 49`, or'ed into stream keys.
    generation_key: u64,
    /// `tag << 47 | generation << 32 | range index` (the tag: see [`SegmentCache::hash`]); a
    /// slot of an older generation is empty.
    slots: Box<[u64]>,
    shift: u32,
    generation: u32,
    capacity: usize,
    /// The range each source expression (all the instructions that loop unrolling made of one
    /// access) touched last, per kind: the copies take turns extending it (see
    /// [`SegmentCache::record_miss`]). Keyed like `streams`, with [`source_key`] for the site.
    sources: [Stream; STREAMS],
    /// The source expression of a site (see [`source_key`]).
    source_key: fn(usize) -> Option<u64>,
    /// `source_key` of the site of `streams[i]` ([`NO_SOURCE`] for none), valid while that stream
    /// is the site's: a miss on a site's own stream reads it here rather than calling
    /// `source_key` again (an indirect call and a read of the site section, 15% of the miss
    /// path's instructions on xz).
    stream_sources: [u64; STREAMS],
    /// The plain bytes recorded since the segment or the last mark began, early drains included.
    coverage: Coverage,
    memory: Memory,
}

// SAFETY: a cache belongs to one thread; it is only moved, never shared.
unsafe impl Send for SegmentCache {}

/// In [`SegmentCache::stream_sources`], a site without a source expression: no 47-bit
/// [`source_key`] is all ones.
const NO_SOURCE: u64 = u64::MAX;

/// A 47-bit hash of a site's source location (file, line, column, function), equal for the copies
/// of one access that loop unrolling made; `None` for a pointer that is not a site. A site is the
/// address of its 16-byte unit in the `ilgen_sites` section (see `ilgen_trace::sites`), read only
/// when it lies in that section.
pub(crate) fn source_key(site: usize) -> Option<u64> {
    if site % ilgen_trace::sites::UNIT != 0 || crate::sites::id(site) == ilgen_trace::NO_SITE {
        return None;
    }
    // SAFETY: a 16-aligned address of a site unit inside the mapped, read-only section.
    let unit = unsafe { std::ptr::read(site as *const [u64; 2]) };
    Some((unit[0] ^ unit[1].rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 17)
}

#[inline(always)]
fn kind_bits(kind: AccessKind) -> u64 {
    match kind {
        AccessKind::Read => 0,
        AccessKind::Write => 1,
        AccessKind::AtomicRead => 2,
        AccessKind::AtomicWrite => 3,
    }
}

/// Whether a range of kind `kept` already accounts for an access of kind `kind` to its bytes.
#[inline(always)]
fn covers(kept: AccessKind, kind: AccessKind) -> bool {
    kept.is_atomic() == kind.is_atomic() && (kept.is_write() || !kind.is_write())
}

impl SegmentCache {
    /// A cache that holds `capacity` ranges before it asks to be drained, in private memory: a
    /// process killed before it drains loses them.
    pub fn new(capacity: usize) -> SegmentCache {
        let capacity = Self::clamp(capacity);
        let words = pending::slot_bytes(capacity) / 8;
        Self::with_memory(
            capacity,
            Memory::Private(vec![0u64; words].into_boxed_slice()),
        )
    }

    /// A cache whose ranges are in `slot`, which holds `capacity` ranges; gives the slot back
    /// when it drops.
    pub fn in_slot(capacity: usize, slot: Slot) -> SegmentCache {
        Self::with_memory(Self::clamp(capacity), Memory::Shared(slot))
    }

    fn clamp(capacity: usize) -> usize {
        capacity.clamp(1, u32::MAX as usize)
    }

    fn with_memory(capacity: usize, mut memory: Memory) -> SegmentCache {
        let slots = (capacity * 2).next_power_of_two().max(2);
        SegmentCache {
            streams: [Stream::default(); STREAMS],
            // SAFETY: `memory` holds a slot header and `capacity` ranges, 8-aligned.
            ranges: unsafe { memory.base().add(SLOT_HEADER).cast() },
            len: 0,
            start: 0,
            drains: 0,
            generation_key: 1 << 49,
            // Zeroed memory: pages are touched only as the table fills.
            slots: vec![0u64; slots].into_boxed_slice(),
            shift: 64 - slots.trailing_zeros(),
            generation: 1,
            capacity,
            sources: [Stream::default(); STREAMS],
            source_key,
            stream_sources: [NO_SOURCE; STREAMS],
            coverage: Coverage::new(),
            memory,
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the segment holds no access.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Range `index`, which is below `len`.
    #[inline(always)]
    fn range(&mut self, index: usize) -> &mut Range {
        debug_assert!(index < self.len);
        // SAFETY: below `len <= capacity`, inside `memory`; written before `len` covered it.
        unsafe { &mut *self.ranges.add(index) }
    }

    /// Makes the first `len` ranges the pending slot's segment, after their bytes.
    #[inline(always)]
    fn publish(&mut self) {
        // SAFETY: the slot header's 4-aligned `len` field, only ever accessed by this thread,
        // atomically.
        let count = unsafe { &*self.memory.base().add(LEN_AT).cast::<AtomicU32>() };
        count.store(self.len as u32, Ordering::Release);
    }

    /// The home slot of (`addr`, `size`, atomic-ness) and its tag: the 17 bits of the hash
    /// below those that chose the slot, shifted to where a slot keeps them.
    #[inline(always)]
    fn hash(&self, addr: u64, size: u32, atomic: bool) -> (usize, u64) {
        let key = addr ^ (u64::from(size) << 40) ^ (u64::from(atomic) << 63);
        let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // `shift` is at least 31 (at most 2^33 slots), so 17 bits lie below the slot's.
        let tag = (h << (64 - self.shift)) >> 47 << 47;
        ((h >> self.shift) as usize, tag)
    }

    /// The stream key of (`site`, `kind`) in this generation, and its slot. `site` may also be a
    /// 47-bit [`source_key`].
    #[inline(always)]
    fn stream_key(&self, site: usize, kind: AccessKind) -> (u64, usize) {
        let key = ((site as u64) << 2) | kind_bits(kind);
        let index =
            (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - STREAMS.trailing_zeros())) as usize;
        (key | self.generation_key, index)
    }

    /// Records one access. Returns false, recording nothing, when a new range is needed and the
    /// cache is full: the caller drains it and records again.
    #[inline(always)]
    pub fn record(&mut self, addr: u64, size: u32, kind: AccessKind, site: usize) -> bool {
        self.record_fast(addr, u64::from(size), kind, site)
            || self.record_miss(addr, size, kind, site)
    }

    /// The fast path alone, inlined into the hooks: [`SegmentCache::record_stream`], else true if
    /// the coverage filter holds the access (it needs no record). Returns false, recording
    /// nothing, otherwise. A plain read's window is the miss path's: inlined here, its checks
    /// made every read hook save five registers on entry, hits included. Any `size`.
    #[inline(always)]
    pub fn record_fast(&mut self, addr: u64, size: u64, kind: AccessKind, site: usize) -> bool {
        self.record_stream(addr, size, kind, site)
            || (!kind.is_atomic() && self.coverage.covers(addr, size, kind.is_write()))
    }

    /// Records the access if it lies inside the range its (site, kind) stream touched last and
    /// that range's kind covers it, or if it overlaps or abuts that range and has its kind (the
    /// range grows). Returns false, recording nothing, otherwise.
    /// Any `size` (0, or above `u32::MAX`: ranges are split when drained).
    #[inline(always)]
    fn record_stream(&mut self, addr: u64, size: u64, kind: AccessKind, site: usize) -> bool {
        let (key, index) = self.stream_key(site, kind);
        let s = self.streams[index];
        if s.key != key {
            return false;
        }
        // A stream whose key holds the current generation was set by `record_miss` in this
        // generation to a range it found or pushed, and ranges are only removed by `clear`, which
        // changes the generation (and, when generations run out, empties every stream).
        let r = self.range(s.index);
        let Some(end) = addr.checked_add(size) else {
            return false;
        };
        // The two common cases only; the others (growing backwards, overlapping the end) are
        // `grow`'s, on the miss path.
        let hit = if addr == r.hi {
            // A forward sweep: the next element.
            let grows = r.kind == kind;
            if grows {
                r.hi = end;
            }
            grows
        } else {
            addr >= r.lo && end <= r.hi && covers(r.kind, kind)
        };
        // The coverage filter keeps what the streams hold too, so that the program's inlined
        // check finds it (a sweep read again by another instruction).
        if hit && !kind.is_atomic() {
            self.coverage.keep(addr, size, kind.is_write());
        }
        hit
    }

    /// Makes this cache's coverage filter the one the calling thread's inlined checks read (see
    /// `cache/coverage.rs`); called by the thread that owns the cache.
    pub fn publish_coverage(&self) {
        self.coverage.publish();
    }

    /// The owner ended: its inlined checks stop reading the coverage filter, so that the cache
    /// can go to another thread ([`SegmentCache::assign`]).
    pub fn withdraw_coverage(&self) {
        self.coverage.withdraw();
    }

    /// Gives the cache, drained, to thread `tid`: its pending slot names `tid`. The tables need
    /// no clearing: the drain started a new generation and emptied the coverage filter.
    pub fn assign(&mut self, tid: ilgen_trace::ThreadId) {
        debug_assert!(self.is_empty());
        if let Memory::Shared(slot) = &self.memory {
            slot.assign(tid);
        }
    }

    /// Adds `[addr, end)` of `kind` to `r` if it lies inside `[lo, hi)` and `r`'s kind covers it,
    /// or if it overlaps or abuts `[lo, hi)` and has `r`'s kind; false, changing nothing,
    /// otherwise.
    #[inline(always)]
    fn grow(r: &mut Range, addr: u64, end: u64, kind: AccessKind) -> bool {
        if addr >= r.lo && end <= r.hi && covers(r.kind, kind) {
            return true;
        }
        if r.kind != kind || addr > r.hi || end < r.lo || (addr < r.lo && r.mask != 0) {
            // A mask counts from `lo`, which stays.
            return false;
        }
        r.lo = r.lo.min(addr);
        r.hi = r.hi.max(end);
        true
    }

    /// The bits `[addr, end)` of `kind` at `site` adds to the mask of `r` if it lies past
    /// `[lo, hi)` but inside the window from `lo`, is plain, and `r` has that kind and that site
    /// (so that each of its bytes was accessed by its site); `None` otherwise. A loop reading a
    /// byte at a stride so takes one range per window rather than one per read, and the unrolled
    /// copies of a loop writing one array by turns (lbzip2's `*q++ = ch`, four sites a byte each)
    /// one window per copy rather than a range per byte.
    ///
    /// A write joins only a range of one access of its size (its site has not swept before the
    /// gap) and only when it does not abut a byte the mask holds: a site that sweeps in runs
    /// (two sites filling one array by turns, as xz's match finder fills `son[]`) goes on
    /// sweeping after a gap, and the range it starts instead is one the fast path grows, where
    /// the window's stream would send each of its next writes down the miss path. Reads keep
    /// joining: no such case was measured to gain from it.
    #[inline(always)]
    fn window_bits(r: &Range, addr: u64, end: u64, kind: AccessKind, site: usize) -> Option<u64> {
        if kind.is_atomic() || r.kind != kind || r.site != site || addr <= r.hi || r.hi == r.lo {
            return None;
        }
        if end - r.lo > WINDOW_BYTES {
            return None;
        }
        if kind.is_write() && (r.hi - r.lo != end - addr || r.mask >> (addr - 1 - r.lo) & 1 != 0) {
            return None;
        }
        if end == addr {
            return Some(0);
        }
        Some((u64::MAX >> (WINDOW_BYTES - (end - addr))) << (addr - r.lo))
    }

    #[inline(always)]
    fn merge(r: &mut Range, kind: AccessKind, site: usize) {
        let kept = r.kind.dominant(kind);
        if kept != r.kind {
            // The kind changed (a write after reads): its first site is this one.
            r.kind = kept;
            r.site = site;
        }
    }

    /// A miss of the fast path. An access that overlaps or abuts the range its instruction, or
    /// else its source expression, touched last, with its kind, extends it (one inside it that it
    /// covers changes nothing): the source expression is how the copies of an unrolled loop's
    /// access (one instruction each) sweep together, while `a = 1; b = 2;` stays two ranges with
    /// their own sites. A plain access past its instruction's range joins that range's window
    /// ([`SegmentCache::window_bits`]) if it can, before the source expression's range and
    /// without the exact lookup: the coverage filter, which the fast path asked, holds the bytes
    /// of every plain range of the segment, so the lookup would have found none to merge with
    /// (unless the filter lost them to a collision: then a read is recorded twice, as an early
    /// drain repeats a range). A write the filter finds read before takes the lookup instead, so
    /// that the read's range becomes the write (one record, not two). Otherwise the exact-range
    /// lookup, which merges, or else adds a range. Either way the streams of (`site`, `kind`) and
    /// of its source expression then point at the range, and the coverage filter keeps a plain
    /// access's bytes.
    ///
    /// Returns false as [`SegmentCache::record`] does. The hooks call it directly once their fast
    /// path ([`SegmentCache::record_fast`]) missed, so that its probes are not repeated; an access
    /// the fast path would have held (a flusher drained the cache in between, or a flush request
    /// turned a hit away) is recorded again at worst, which repeats a range.
    #[inline(never)]
    pub fn record_miss(&mut self, addr: u64, size: u32, kind: AccessKind, site: usize) -> bool {
        let (key, stream) = self.stream_key(site, kind);
        let end = addr.saturating_add(u64::from(size));
        // The instruction's own range (the cases the fast path leaves out), its window, then its
        // source expression's range.
        let mut found = None;
        let own = self.streams[stream];
        if own.key == key {
            if Self::grow(self.range(own.index), addr, end, kind) {
                found = Some(own.index);
            } else if let Some(bits) =
                Self::window_bits(self.range(own.index), addr, end, kind, site).filter(|_| {
                    // A write of bytes the segment read merges with their read's exact range.
                    !kind.is_write() || !self.coverage.covers(addr, u64::from(size), false)
                })
            {
                self.range(own.index).mask |= bits;
                self.coverage.keep(addr, u64::from(size), kind.is_write());
                return true;
            }
        }
        let h = if own.key == key {
            self.stream_sources[stream]
        } else {
            (self.source_key)(site).unwrap_or(NO_SOURCE)
        };
        let source = (h != NO_SOURCE).then(|| self.stream_key(h as usize, kind));
        if let (None, Some((skey, slot))) = (found, source) {
            let s = self.sources[slot];
            if s.key == skey && Self::grow(self.range(s.index), addr, end, kind) {
                found = Some(s.index);
            }
        }
        let index = match found {
            Some(index) => index,
            None => match self.find_or_add(addr, size, kind, site) {
                Some(index) => index,
                None => return false,
            },
        };
        self.streams[stream] = Stream { key, index };
        self.stream_sources[stream] = h;
        if let Some((skey, slot)) = source {
            self.sources[slot] = Stream { key: skey, index };
        }
        if !kind.is_atomic() {
            self.coverage.keep(addr, u64::from(size), kind.is_write());
        }
        true
    }

    /// The range of exactly (`addr`, `size`, atomic-ness), merged with this access; or a new range,
    /// or `None` when that needs room the cache does not have.
    ///
    /// A range that grew since it was added under its key matches that key no more, yet it keeps
    /// its slot. The next range added under that key takes over the slot instead of the first
    /// empty one after it: else every key a sweep or a sort touches again and again would string
    /// its dead slots into one probe chain that grows with the segment (lbzip2's suffix sort
    /// spent 86% of its recording in this loop with 65536-range caches, 49% with 4096). The dead
    /// slot is known by its tag and by its range holding the key's bytes, as a range grown from
    /// the key does; another key of the same tag whose range holds them (one in 2^17) loses its
    /// slot, which only costs that key a repeated record.
    #[inline(always)]
    fn find_or_add(
        &mut self,
        addr: u64,
        size: u32,
        kind: AccessKind,
        site: usize,
    ) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let generation = u64::from(self.generation) << 32;
        let end = addr.saturating_add(u64::from(size));
        let (mut i, tag) = self.hash(addr, size, kind.is_atomic());
        loop {
            let slot = self.slots[i];
            if slot & GENERATION_BITS != generation {
                // Empty in this generation: a new range.
                break;
            }
            // Another key's tag rules its range out without reading it, so probing stays in the
            // slot array.
            if slot & TAG_BITS == tag {
                let index = (slot & 0xffff_ffff) as usize;
                let r = self.range(index);
                if r.lo <= addr && end <= r.hi && r.kind.is_atomic() == kind.is_atomic() {
                    // A masked range's kind is its masked bytes' too: only a kind it covers
                    // leaves it as it is.
                    if r.lo == addr && r.hi == end && (r.mask == 0 || covers(r.kind, kind)) {
                        Self::merge(r, kind, site);
                        return Some(index);
                    }
                    break;
                }
            }
            i = (i + 1) & mask;
        }
        if self.len >= self.capacity {
            return None;
        }
        let index = self.len;
        // SAFETY: below `capacity`, inside `memory`.
        unsafe {
            self.ranges.add(index).write(Range {
                lo: addr,
                hi: end,
                site,
                kind,
                mask: 0,
            });
        }
        self.len += 1;
        self.publish();
        self.slots[i] = tag | generation | index as u64;
        Some(index)
    }

    /// Gives every range not yet written out, in insertion order, to `emit`, then empties the
    /// cache: the segment ends.
    pub fn drain(&mut self, emit: impl FnMut(&Entry)) {
        self.spill(emit);
        self.coverage.forget();
    }

    /// [`SegmentCache::drain`] when the cache is full: the segment goes on, and bytes it recorded
    /// before (now written out) still need no record again.
    pub fn spill(&mut self, emit: impl FnMut(&Entry)) {
        self.emit(self.len, emit);
        self.clear();
    }

    /// The current point of the segment; accesses after it never extend a range before it, nor
    /// go unrecorded for bytes recorded before it.
    pub fn mark(&mut self) -> Mark {
        self.coverage.forget();
        if self.len > self.start {
            self.new_generation();
        }
        u64::from(self.drains) << 32 | self.len as u64
    }

    /// Gives the ranges recorded before `mark` to `emit`, in insertion order, if the segment has
    /// not been drained since it was taken (otherwise they were drained with it); later ones stay.
    /// [`NO_MARK`]: [`SegmentCache::drain`].
    pub fn drain_to(&mut self, mark: Mark, emit: impl FnMut(&Entry)) {
        if mark == NO_MARK {
            self.drain(emit);
        } else if (mark >> 32) as u32 == self.drains {
            self.emit((mark as u32 as usize).min(self.len), emit);
        }
    }

    /// Gives the ranges from `start` up to `end` to `emit` (one longer than `u32::MAX` bytes as
    /// several entries), and moves `start` there.
    fn emit(&mut self, end: usize, mut emit: impl FnMut(&Entry)) {
        for index in self.start..end {
            let r = *self.range(index);
            match pending::shape(r.lo, r.hi, r.mask) {
                Shape::Window(mask) => emit(&Entry {
                    addr: r.lo,
                    size: 0,
                    kind: r.kind,
                    site: r.site,
                    mask,
                }),
                Shape::Range(hi) => {
                    for (addr, size) in pending::split(r.lo, hi) {
                        emit(&Entry {
                            addr,
                            size,
                            kind: r.kind,
                            site: r.site,
                            mask: 0,
                        });
                    }
                }
            }
        }
        self.start = self.start.max(end);
    }

    fn clear(&mut self) {
        self.len = 0;
        self.start = 0;
        self.drains = self.drains.wrapping_add(1);
        self.publish();
        self.new_generation();
    }

    /// Forgets every stream and slot (ranges stay).
    fn new_generation(&mut self) {
        self.generation += 1;
        if self.generation == GENERATIONS {
            // Out of generations: really clear slots and streams, once every 32768 drains.
            self.slots.fill(0);
            self.streams.fill(Stream::default());
            self.sources.fill(Stream::default());
            self.generation = 1;
        }
        self.generation_key = u64::from(self.generation) << 49;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AccessKind::*;

    /// `e` as the accesses the trace reader decodes: a window's runs one by one.
    fn expand(e: &Entry, out: &mut Vec<Entry>) {
        if e.mask == 0 {
            out.push(*e);
            return;
        }
        for (i, size) in ilgen_trace::codec::runs(e.mask) {
            out.push(Entry {
                addr: e.addr + u64::from(i),
                size,
                mask: 0,
                ..*e
            });
        }
    }

    fn drained(c: &mut SegmentCache) -> Vec<Entry> {
        let mut out = Vec::new();
        c.drain(|e| expand(e, &mut out));
        out
    }

    /// The entries as drained, windows unexpanded.
    fn drained_raw(c: &mut SegmentCache) -> Vec<Entry> {
        let mut raw = Vec::new();
        c.drain(|e| raw.push(*e));
        raw
    }

    fn expanded(raw: &[Entry]) -> Vec<Entry> {
        let mut out = Vec::new();
        raw.iter().for_each(|e| expand(e, &mut out));
        out
    }

    fn e(addr: u64, size: u32, kind: AccessKind, site: usize) -> Entry {
        Entry {
            addr,
            size,
            kind,
            site,
            mask: 0,
        }
    }

    #[test]
    fn the_pending_slot_holds_the_segment_until_it_drains() {
        let (_dir, path, _, _) = crate::record::writer::tests::temp("cache");
        let dir = path.parent().unwrap();
        let sites = 0x1000;
        let pool = Box::leak(Box::new(crate::record::pending::Pool::new()));
        let slot = pool.take(dir, 16, sites, 5).unwrap().unwrap();
        let mut c = SegmentCache::in_slot(16, slot);
        let file = dir.join("pending.0");
        let pending = || {
            let segments =
                ilgen_trace::pending::decode(&file, &std::fs::read(&file).unwrap()).unwrap();
            match &segments[..] {
                [] => vec![],
                [(5, accesses)] => accesses.clone(),
                other => panic!("one segment of thread 5 expected: {other:?}"),
            }
        };
        for i in 0..8u64 {
            c.record(0x100 + 4 * i, 4, Write, sites + 16);
        }
        c.record(0x200, 8, Read, sites + 32);
        c.record(0x200, 8, Write, sites + 48);
        let access = |addr, size, site, kind| ilgen_trace::Access {
            addr,
            size,
            site,
            kind,
        };
        // What a killed process leaves: every range so far, as the drain would write it.
        let left = vec![access(0x100, 32, 1, Write), access(0x200, 8, 3, Write)];
        assert_eq!(pending(), left);
        let drained: Vec<_> = drained(&mut c)
            .iter()
            .map(|e| {
                access(
                    e.addr,
                    e.size,
                    ilgen_trace::sites::id_at(e.site, sites),
                    e.kind,
                )
            })
            .collect();
        assert_eq!(drained, left);
        assert_eq!(pending(), vec![], "drained: nothing pending");
        c.record(0x300, 1, AtomicRead, 0);
        assert_eq!(
            pending(),
            vec![access(0x300, 1, ilgen_trace::NO_SITE, AtomicRead)]
        );
    }

    #[test]
    fn a_million_writes_to_one_variable_are_one_record() {
        let mut c = SegmentCache::new(64);
        for i in 0..1_000_000usize {
            assert!(c.record(0x1000, 4, Write, 100 + i % 3));
        }
        assert_eq!(drained(&mut c), vec![e(0x1000, 4, Write, 100)]);
    }

    #[test]
    fn write_dominates_reads_and_keeps_the_first_site_of_its_kind() {
        let mut c = SegmentCache::new(64);
        c.record(0x10, 8, Read, 1);
        c.record(0x20, 8, Read, 2);
        c.record(0x10, 8, Read, 3);
        c.record(0x10, 8, Write, 4);
        c.record(0x10, 8, Write, 5);
        c.record(0x10, 8, Read, 6);
        assert_eq!(
            drained(&mut c),
            vec![e(0x10, 8, Write, 4), e(0x20, 8, Read, 2)],
            "insertion order kept, the read keeps its first site"
        );
    }

    #[test]
    fn size_and_atomicity_make_distinct_ranges() {
        let mut c = SegmentCache::new(64);
        c.record(0x10, 4, Read, 1);
        c.record(0x10, 8, Read, 2);
        c.record(0x10, 4, AtomicWrite, 3);
        c.record(0x10, 4, AtomicRead, 4);
        c.record(0x10, 4, Write, 5);
        assert_eq!(
            drained(&mut c),
            vec![
                e(0x10, 4, Write, 5),
                e(0x10, 8, Read, 2),
                e(0x10, 4, AtomicWrite, 3)
            ]
        );
    }

    #[test]
    fn full_cache_refuses_new_ranges_until_drained() {
        let mut c = SegmentCache::new(16);
        for i in 0..16u64 {
            // Gaps wider than a window between the ranges: nothing grows.
            assert!(c.record(i * 128, 8, Read, 0));
        }
        assert!(c.record(0, 8, Write, 9), "an existing range still merges");
        assert!(!c.record(0x10_0000, 8, Read, 0));
        let out = drained(&mut c);
        assert_eq!(out.len(), 16);
        assert_eq!(out[0], e(0, 8, Write, 9));
        assert!(c.record(0x10_0000, 8, Read, 0));
        assert_eq!(drained(&mut c), vec![e(0x10_0000, 8, Read, 0)]);
    }

    #[test]
    fn draining_starts_a_new_segment() {
        let mut c = SegmentCache::new(16);
        c.record(0x10, 4, Write, 1);
        drained(&mut c);
        c.record(0x10, 4, Read, 2);
        assert_eq!(drained(&mut c), vec![e(0x10, 4, Read, 2)]);
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn a_mark_cuts_the_segment_where_it_was_taken() {
        let drained_to = |c: &mut SegmentCache, mark| {
            let mut out = Vec::new();
            c.drain_to(mark, |e| expand(e, &mut out));
            out
        };
        let mut c = SegmentCache::new(16);
        c.record(0x10, 4, Read, 1);
        let outer = c.mark();
        // The same variable and the same site after the mark: a range of its own.
        c.record(0x10, 4, Read, 1);
        c.record(0x14, 4, Write, 2);
        let inner = c.mark();
        let empty = c.mark();
        c.record(0x20, 4, Write, 3);
        assert_eq!(drained_to(&mut c, outer), vec![e(0x10, 4, Read, 1)]);
        assert_eq!(
            drained_to(&mut c, inner),
            vec![e(0x10, 4, Read, 1), e(0x14, 4, Write, 2)]
        );
        assert_eq!(drained_to(&mut c, empty), vec![]);
        assert_eq!(drained_to(&mut c, NO_MARK), vec![e(0x20, 4, Write, 3)]);
        assert_eq!(drained(&mut c), vec![]);
        // A mark of a segment drained since (the cache was full): its ranges went with it.
        c.record(0x30, 4, Write, 4);
        let stale = c.mark();
        c.record(0x40, 4, Write, 5);
        assert_eq!(drained(&mut c).len(), 2);
        c.record(0x50, 4, Write, 6);
        assert_eq!(drained_to(&mut c, stale), vec![]);
        assert_eq!(drained(&mut c), vec![e(0x50, 4, Write, 6)]);
    }

    /// Records `n` ranges with gaps between them (nothing grows) far from the tests' addresses,
    /// spilling the cache into `out` when it is full, as `thread::Inner::record` does.
    fn scatter(c: &mut SegmentCache, n: u64, out: &mut Vec<Entry>) {
        for i in 0..n {
            record_spilling(c, 0x100_0000 + 64 * i, 8, Read, 99, out);
        }
    }

    fn record_spilling(
        c: &mut SegmentCache,
        addr: u64,
        size: u32,
        kind: AccessKind,
        site: usize,
        out: &mut Vec<Entry>,
    ) {
        if !c.record(addr, size, kind, site) {
            c.spill(|e| expand(e, out));
            assert!(c.record(addr, size, kind, site));
        }
    }

    fn at(out: &[Entry], addr: u64) -> Vec<Entry> {
        out.iter().filter(|e| e.addr == addr).copied().collect()
    }

    #[test]
    fn bytes_recorded_before_an_early_drain_are_not_recorded_again() {
        let mut c = SegmentCache::new(16);
        let mut out = Vec::new();
        for round in 0..5 {
            // Scattered reads and writes of one table by two sites, then enough other ranges to
            // fill the cache: every round after the first finds its bytes covered.
            for i in 0..8u64 {
                record_spilling(&mut c, 0x1000 + 32 * i, 4, Read, 1, &mut out);
                record_spilling(&mut c, 0x1000 + 32 * i, 4, Write, 2 + round, &mut out);
                record_spilling(&mut c, 0x1000 + 32 * i + 1, 2, Read, 3, &mut out);
            }
            scatter(&mut c, 20, &mut out);
        }
        c.drain(|e| expand(e, &mut out));
        for i in 0..8u64 {
            assert_eq!(
                at(&out, 0x1000 + 32 * i),
                vec![e(0x1000 + 32 * i, 4, Write, 2)],
                "one record per byte and kind, the first write's site: {out:x?}"
            );
        }
    }

    #[test]
    fn bytes_a_stream_grew_over_are_held_by_the_filter() {
        // The inlined check reads only the filter: a sweep grown on the stream path is there, so
        // another instruction's read of it after an early drain records nothing.
        let mut c = SegmentCache::new(16);
        let mut out = Vec::new();
        for i in 0..8u64 {
            record_spilling(&mut c, 0x1000 + 4 * i, 4, Write, 1, &mut out);
        }
        assert!(c.coverage.covers(0x1000, 32, true));
        scatter(&mut c, 20, &mut out);
        record_spilling(&mut c, 0x1008, 8, Read, 2, &mut out);
        c.drain(|e| expand(e, &mut out));
        let sweep: Vec<_> = out.iter().filter(|e| e.addr >> 8 == 0x10).collect();
        assert_eq!(sweep, vec![&e(0x1000, 32, Write, 1)]);
    }

    #[test]
    fn a_new_segment_records_its_bytes_again() {
        let mut c = SegmentCache::new(16);
        let mut out = Vec::new();
        record_spilling(&mut c, 0x1000, 4, Write, 1, &mut out);
        scatter(&mut c, 20, &mut out);
        c.drain(|e| expand(e, &mut out));
        record_spilling(&mut c, 0x1000, 4, Read, 2, &mut out);
        c.drain(|e| expand(e, &mut out));
        assert_eq!(
            at(&out, 0x1000),
            vec![e(0x1000, 4, Write, 1), e(0x1000, 4, Read, 2)]
        );
    }

    #[test]
    fn accesses_after_a_mark_are_recorded_after_it() {
        let mut c = SegmentCache::new(16);
        let mut out = Vec::new();
        record_spilling(&mut c, 0x1000, 4, Write, 1, &mut out);
        scatter(&mut c, 20, &mut out);
        let mark = c.mark();
        record_spilling(&mut c, 0x1000, 4, Read, 2, &mut out);
        record_spilling(&mut c, 0x1000, 4, Write, 3, &mut out);
        let mut before = Vec::new();
        c.drain_to(mark, |e| before.push(*e));
        assert!(at(&before, 0x1000).is_empty(), "{before:x?}");
        let mut after = Vec::new();
        c.drain(|e| after.push(*e));
        assert_eq!(at(&after, 0x1000), vec![e(0x1000, 4, Write, 3)]);
    }

    #[test]
    fn a_recorded_read_does_not_cover_a_write_of_its_bytes() {
        let mut c = SegmentCache::new(16);
        let mut out = Vec::new();
        record_spilling(&mut c, 0x1000, 8, Read, 1, &mut out);
        scatter(&mut c, 20, &mut out);
        record_spilling(&mut c, 0x1004, 4, Write, 2, &mut out);
        scatter(&mut c, 20, &mut out);
        // Now covered: both halves were read, the second one also written.
        record_spilling(&mut c, 0x1000, 8, Read, 3, &mut out);
        record_spilling(&mut c, 0x1004, 4, Read, 4, &mut out);
        record_spilling(&mut c, 0x1004, 4, Write, 5, &mut out);
        c.drain(|e| expand(e, &mut out));
        assert_eq!(at(&out, 0x1000), vec![e(0x1000, 8, Read, 1)]);
        assert_eq!(at(&out, 0x1004), vec![e(0x1004, 4, Write, 2)]);
    }

    #[test]
    fn atomic_and_plain_accesses_never_cover_each_other() {
        let mut c = SegmentCache::new(16);
        let mut out = Vec::new();
        record_spilling(&mut c, 0x1000, 4, AtomicWrite, 1, &mut out);
        record_spilling(&mut c, 0x1008, 4, Write, 2, &mut out);
        scatter(&mut c, 20, &mut out);
        record_spilling(&mut c, 0x1000, 4, Read, 3, &mut out);
        record_spilling(&mut c, 0x1008, 4, AtomicRead, 4, &mut out);
        c.drain(|e| expand(e, &mut out));
        assert_eq!(
            at(&out, 0x1000),
            vec![e(0x1000, 4, AtomicWrite, 1), e(0x1000, 4, Read, 3)]
        );
        assert_eq!(
            at(&out, 0x1008),
            vec![e(0x1008, 4, Write, 2), e(0x1008, 4, AtomicRead, 4)]
        );
    }

    #[test]
    fn generation_wrap_really_clears() {
        let mut c = SegmentCache::new(16);
        c.generation = GENERATIONS - 1;
        c.generation_key = u64::from(c.generation) << 49;
        c.record(0x10, 4, Write, 1);
        drained(&mut c);
        assert_eq!(c.generation, 1);
        c.record(0x10, 4, Read, 2);
        assert_eq!(drained(&mut c), vec![e(0x10, 4, Read, 2)]);
    }

    #[test]
    fn many_colliding_ranges_round_trip() {
        let mut c = SegmentCache::new(4096);
        for round in 0..3 {
            for i in 0..4096u64 {
                assert!(c.record(i << 20, 1, Read, i as usize));
            }
            let out = drained(&mut c);
            assert_eq!(out.len(), 4096, "round {round}");
            assert!(out.iter().enumerate().all(|(i, e)| e.site == i));
        }
    }

    #[test]
    fn a_key_whose_range_grew_gets_a_new_range_that_later_accesses_find() {
        let mut c = SegmentCache::new(64);
        for i in 0..20u64 {
            let at = 0x1000 + 0x100 * i;
            // Site 1 adds the key (at, 4) and grows its range past it.
            c.record(at, 4, Read, 1);
            c.record(at + 4, 4, Read, 1);
            // Sites 2 and 3 then use the key: one new range, in the grown range's slot.
            c.record(at, 4, Write, 2);
            c.record(at, 4, Write, 3);
            c.record(at, 4, Read, 3);
        }
        let out = drained(&mut c);
        let want: Vec<_> = (0..20u64)
            .flat_map(|i| {
                let at = 0x1000 + 0x100 * i;
                [e(at, 8, Read, 1), e(at, 4, Write, 2)]
            })
            .collect();
        assert_eq!(out, want);
    }

    #[test]
    fn adjacent_writes_of_one_site_coalesce_and_keep_the_first_site() {
        let mut c = SegmentCache::new(64);
        for i in 0..100u64 {
            assert!(c.record(0x1000 + 4 * i, 4, Write, 7));
        }
        // Backwards and overlapping also grow the range.
        c.record(0x0ffc, 4, Write, 7);
        c.record(0x1002, 8, Write, 7);
        assert_eq!(drained(&mut c), vec![e(0x0ffc, 404, Write, 7)]);
    }

    #[test]
    fn a_sweep_of_a_million_elements_is_one_record_per_stream() {
        let mut c = SegmentCache::new(16);
        // A five-point stencil: five read streams over src, one write stream over dst.
        let (src, dst, row) = (0x10_0000u64, 0x90_0000u64, 1000u64);
        for i in row..row + 1_000_000 {
            for (site, off) in [(1usize, 0i64), (2, 1), (3, -1), (4, -1000), (5, 1000)] {
                let a = (src as i64 + 4 * (i as i64 + off)) as u64;
                assert!(c.record(a, 4, Read, site));
            }
            assert!(c.record(dst + 4 * i, 4, Write, 6));
        }
        let out = drained(&mut c);
        assert_eq!(out.len(), 6, "{out:x?}");
        assert_eq!(out[5], e(dst + 4 * row, 4_000_000, Write, 6));
        assert_eq!(out[0], e(src + 4 * row, 4_000_000, Read, 1));
    }

    #[test]
    fn a_gap_past_the_window_starts_a_new_range() {
        let mut c = SegmentCache::new(64);
        c.record(0x100, 4, Write, 1);
        c.record(0x104, 4, Write, 1);
        c.record(0x13e, 4, Write, 1);
        assert_eq!(
            drained(&mut c),
            vec![e(0x100, 8, Write, 1), e(0x13e, 4, Write, 1)]
        );
    }

    #[test]
    fn strided_reads_of_one_site_are_one_window_of_exactly_their_bytes() {
        let mut c = SegmentCache::new(64);
        // A skip loop: one byte at a stride of 2, two abutting bytes, then past the window.
        let mut reads = vec![];
        for i in 0..20u64 {
            reads.push(0x1000 + 2 * i);
        }
        reads.extend([0x1029, 0x102a, 0x103f, 0x1040, 0x1042]);
        for &a in &reads {
            assert!(c.record(a, 1, Read, 7));
        }
        assert_eq!(c.len(), 2, "one range per window");
        let raw = drained_raw(&mut c);
        let stride: u64 = (0..20).map(|i| 1u64 << (2 * i)).sum();
        let window = stride | 0b11 << 0x29 | 1 << 0x3f;
        assert_eq!(
            raw,
            vec![
                Entry {
                    addr: 0x1000,
                    size: 0,
                    kind: Read,
                    site: 7,
                    mask: window,
                },
                Entry {
                    addr: 0x1040,
                    size: 0,
                    kind: Read,
                    site: 7,
                    mask: 0b101,
                }
            ]
        );
        let out = expanded(&raw);
        let mut want: Vec<_> = reads.iter().map(|&a| e(a, 1, Read, 7)).collect();
        // 0x1029 and 0x102a abut: one run.
        want.splice(20..22, [e(0x1029, 2, Read, 7)]);
        assert_eq!(out, want);
    }

    #[test]
    fn a_write_sweep_going_on_past_a_gap_starts_a_range_the_fast_path_grows() {
        // Two sites filling one array in runs by turns: a run's first write after the other
        // site's joins its site's window, the next starts a range its later writes grow on the
        // fast path.
        let mut c = SegmentCache::new(64);
        c.record(0x100, 4, Write, 1);
        c.record(0x104, 4, Write, 2);
        c.record(0x108, 4, Write, 1);
        assert!(!c.record_fast(0x10c, 4, Write, 1));
        c.record(0x10c, 4, Write, 1);
        assert!(c.record_fast(0x110, 4, Write, 1));
        let raw = drained_raw(&mut c);
        assert_eq!(raw.len(), 3);
        assert_eq!(raw[0].mask, 0xf0f);
        let out = expanded(&raw);
        assert_eq!(
            out,
            vec![
                e(0x100, 4, Write, 1),
                e(0x108, 4, Write, 1),
                e(0x104, 4, Write, 2),
                e(0x10c, 8, Write, 1)
            ]
        );
        // A site whose range is a sweep of more than one access takes no window past a gap.
        c.record(0x200, 4, Write, 1);
        c.record(0x204, 4, Write, 1);
        c.record(0x208, 4, Write, 2);
        c.record(0x20c, 4, Write, 1);
        assert!(c.record_fast(0x210, 4, Write, 1));
        assert_eq!(
            drained(&mut c),
            vec![
                e(0x200, 8, Write, 1),
                e(0x208, 4, Write, 2),
                e(0x20c, 8, Write, 1)
            ]
        );
    }

    #[test]
    fn unrolled_byte_writes_by_turns_are_one_window_per_site() {
        // lbzip2's `*q++ = ch` unrolled four times: four sites, each writing every fourth byte.
        let mut c = SegmentCache::new(64);
        for i in 0..64u64 {
            c.record(0x4000 + i, 1, Write, 1 + (i % 4) as usize);
        }
        // Each byte is held as a write: another site's access to it needs no record.
        for i in 0..64u64 {
            assert!(c.record_fast(0x4000 + i, 1, Read, 9));
        }
        let raw = drained_raw(&mut c);
        assert_eq!(raw.len(), 4);
        let out = expanded(&raw);
        let mut want: Vec<_> = (0..64u64)
            .map(|i| e(0x4000 + i, 1, Write, 1 + (i % 4) as usize))
            .collect();
        want.sort_by_key(|w| (w.site, w.addr));
        assert_eq!(out, want);
    }

    #[test]
    fn strided_reads_of_bytes_the_segment_wrote_join_no_window() {
        let mut c = SegmentCache::new(64);
        for i in 0..8u64 {
            c.record(0x3000 + 8 * i, 8, Write, 1);
        }
        c.record(0x3100, 1, Read, 2);
        for i in 0..32u64 {
            assert!(c.record_fast(0x3000 + 2 * i, 1, Read, 2));
        }
        c.record(0x3102, 1, Read, 2);
        assert_eq!(
            drained(&mut c),
            vec![
                e(0x3000, 64, Write, 1),
                e(0x3100, 1, Read, 2),
                e(0x3102, 1, Read, 2)
            ]
        );
    }

    #[test]
    fn a_window_keeps_its_kind_and_a_write_inside_it_is_its_own_range() {
        let mut c = SegmentCache::new(64);
        c.record(0x2000, 1, Read, 1);
        c.record(0x2002, 1, Read, 1);
        // The exact range of the first read takes no write: its mask's byte was only read.
        c.record(0x2000, 1, Write, 2);
        c.record(0x2002, 1, Write, 3);
        // A read before the window's first byte does not move it.
        c.record(0x1fff, 1, Read, 1);
        assert_eq!(
            drained(&mut c),
            vec![
                e(0x2000, 1, Read, 1),
                e(0x2002, 1, Read, 1),
                e(0x2000, 1, Write, 2),
                e(0x2002, 1, Write, 3),
                e(0x1fff, 1, Read, 1),
            ]
        );
    }

    #[test]
    fn different_sites_do_not_merge_adjacent_variables() {
        let mut c = SegmentCache::new(64);
        c.record(0x100, 4, Write, 1);
        c.record(0x104, 4, Write, 2);
        c.record(0x108, 4, AtomicWrite, 3);
        c.record(0x10c, 4, AtomicWrite, 4);
        assert_eq!(
            drained(&mut c),
            vec![
                e(0x100, 4, Write, 1),
                e(0x104, 4, Write, 2),
                e(0x108, 4, AtomicWrite, 3),
                e(0x10c, 4, AtomicWrite, 4)
            ]
        );
    }

    #[test]
    fn read_then_write_of_a_sub_range_keeps_each_byte_at_its_strength() {
        let mut c = SegmentCache::new(64);
        for i in 0..16u64 {
            c.record(0x200 + 4 * i, 4, Read, 1);
        }
        // A write inside the read range: only its own bytes become written.
        c.record(0x208, 4, Write, 2);
        c.record(0x20c, 4, Write, 2);
        // A read inside the write range is covered by it: no record.
        c.record(0x208, 4, Read, 3);
        // The read stream goes on: still a read range, never grown into written bytes' kind.
        c.record(0x240, 4, Read, 1);
        let out = drained(&mut c);
        assert_eq!(out, vec![e(0x200, 0x44, Read, 1), e(0x208, 8, Write, 2)]);
        // Every written byte is in a write range.
        for b in 0x208..0x210u64 {
            assert!(out
                .iter()
                .any(|r| r.kind == Write && r.addr <= b && b < r.addr + u64::from(r.size)));
        }
    }

    #[test]
    fn a_read_stream_never_extends_a_range_a_write_made_exact() {
        let mut c = SegmentCache::new(64);
        c.record(0x300, 4, Read, 1);
        c.record(0x300, 4, Write, 2);
        // Same site as the first read, next element: must not become a write.
        c.record(0x304, 4, Read, 1);
        assert_eq!(
            drained(&mut c),
            vec![e(0x300, 4, Write, 2), e(0x304, 4, Read, 1)]
        );
    }

    #[test]
    fn atomics_stay_apart_from_plain_accesses_of_the_same_bytes() {
        let mut c = SegmentCache::new(64);
        for i in 0..8u64 {
            c.record(0x400 + 4 * i, 4, AtomicRead, 1);
        }
        c.record(0x400, 4, Read, 1);
        c.record(0x404, 4, Read, 1);
        c.record(0x420, 4, AtomicWrite, 2);
        c.record(0x424, 4, AtomicRead, 1);
        assert_eq!(
            drained(&mut c),
            vec![
                e(0x400, 32, AtomicRead, 1),
                e(0x400, 8, Read, 1),
                e(0x420, 4, AtomicWrite, 2),
                // Past the first range's end with a gap: only a plain read joins a window.
                e(0x424, 4, AtomicRead, 1),
            ]
        );
    }

    #[test]
    fn x_plus_plus_in_a_loop_is_one_write_record() {
        let mut c = SegmentCache::new(64);
        for _ in 0..1000 {
            c.record(0x500, 4, Read, 1);
            c.record(0x500, 4, Write, 2);
        }
        assert_eq!(drained(&mut c), vec![e(0x500, 4, Write, 2)]);
    }

    #[test]
    fn ranges_longer_than_u32_max_drain_as_several_records() {
        let mut c = SegmentCache::new(64);
        let max = u64::from(u32::MAX);
        c.record(0, u32::MAX, Write, 1);
        c.record(max, 4, Write, 1);
        assert_eq!(
            drained(&mut c),
            vec![e(0, u32::MAX, Write, 1), e(max, 4, Write, 1)]
        );
    }

    #[test]
    fn a_full_cache_still_grows_streams() {
        let mut c = SegmentCache::new(16);
        for i in 0..1000u64 {
            assert!(c.record(0x1000 + 4 * i, 4, Write, 1));
        }
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn streams_are_forgotten_at_drain() {
        let mut c = SegmentCache::new(16);
        c.record(0x10, 4, Write, 1);
        drained(&mut c);
        c.record(0x14, 4, Write, 1);
        assert_eq!(drained(&mut c), vec![e(0x14, 4, Write, 1)]);
    }

    #[test]
    fn unrolled_copies_of_one_access_sweep_together() {
        let mut c = SegmentCache::new(64);
        // Sites 100..=103 are one source expression (an unrolled loop), 200 and 300 others.
        c.source_key = |s| Some(s as u64 / 100);
        for i in 0..1000u64 {
            assert!(c.record(0x1000 + 4 * i, 4, Write, 100 + (i % 4) as usize));
        }
        assert_eq!(drained(&mut c), vec![e(0x1000, 4000, Write, 100)]);
        c.record(0x10, 4, Write, 200);
        c.record(0x14, 4, Write, 300);
        assert_eq!(
            drained(&mut c),
            vec![e(0x10, 4, Write, 200), e(0x14, 4, Write, 300)]
        );
    }

    #[test]
    fn unrolled_copies_of_two_interleaved_sweeps_each_sweep_together() {
        let mut c = SegmentCache::new(64);
        c.source_key = |s| Some(s as u64 / 100);
        // `a[i] = b[i] = v` unrolled by two: four instructions, two source expressions.
        for i in 0..1000u64 {
            let copy = (i % 2) as usize;
            c.record(0x9000 + 4 * i, 4, Write, 100 + copy);
            c.record(0x1000 + 4 * i, 4, Write, 200 + copy);
        }
        assert_eq!(
            drained(&mut c),
            vec![e(0x9000, 4000, Write, 100), e(0x1000, 4000, Write, 200)]
        );
    }

    #[test]
    fn a_miss_on_a_sites_own_stream_reuses_its_source_key() {
        thread_local!(static CALLS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) });
        let mut c = SegmentCache::new(64);
        c.source_key = |s| {
            CALLS.with(|n| n.set(n.get() + 1));
            Some(s as u64 / 100)
        };
        // Site 100 misses twice (a new stream, then a jump); site 101, the same source
        // expression, then grows the range site 100 jumped to.
        c.record(0x10, 4, Write, 100);
        c.record(0x800, 4, Write, 100);
        assert_eq!(CALLS.with(|n| n.get()), 1);
        c.record(0x804, 4, Write, 101);
        assert_eq!(CALLS.with(|n| n.get()), 2);
        assert_eq!(
            drained(&mut c),
            vec![e(0x10, 4, Write, 100), e(0x800, 8, Write, 100)]
        );
        // A new generation forgets the stream and its source key.
        c.record(0x900, 4, Write, 100);
        assert_eq!(CALLS.with(|n| n.get()), 3);
    }

    #[test]
    fn source_key_reads_site_units_only_inside_the_table() {
        // No site table in the test binary: nothing is read.
        let unit = [7u32, 3, 0, 0];
        assert_eq!(source_key(&unit as *const _ as usize), None);
        assert_eq!(source_key(0), None);
    }

    #[test]
    fn random_accesses_keep_every_byte_at_its_strength_and_claim_nothing_more() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let kinds = [Read, Write, AtomicRead, AtomicWrite];
        for round in 0..200 {
            let mut c = SegmentCache::new(16 + next(64) as usize);
            c.source_key = |s| Some(s as u64 / 4);
            let mut accesses = Vec::new();
            let mut out = Vec::new();
            for _ in 0..next(400) {
                // Sweeps, repeats and strays over 256 bytes, by 12 sites of fixed kinds.
                let site = 1 + next(12) as usize;
                let kind = kinds[site % 4];
                let size = [1u32, 2, 4, 8][next(4) as usize];
                let addr = 0x1000 + next(256 / u64::from(size)) * u64::from(size);
                if !c.record(addr, size, kind, site) {
                    c.spill(|e| expand(e, &mut out));
                    assert!(c.record(addr, size, kind, site));
                }
                accesses.push((addr, size, kind, site));
            }
            c.drain(|e| expand(e, &mut out));
            let inside = |b: u64, a: u64, n: u32| a <= b && b < a + u64::from(n);
            for &(addr, size, kind, _) in &accesses {
                for b in addr..addr + u64::from(size) {
                    assert!(
                        out.iter()
                            .any(|r| inside(b, r.addr, r.size) && covers(r.kind, kind)),
                        "round {round}: byte {b:#x} of a {kind:?} is not covered: {out:x?}"
                    );
                }
            }
            for r in &out {
                for b in r.addr..r.addr + u64::from(r.size) {
                    assert!(
                        accesses
                            .iter()
                            .any(|&(a, n, k, _)| inside(b, a, n) && covers(k, r.kind)),
                        "round {round}: {r:x?} claims byte {b:#x} at a kind it never had"
                    );
                }
                assert!(
                    accesses.iter().any(|&(a, n, k, site)| site == r.site
                        && k == r.kind
                        && a < r.addr + u64::from(r.size)
                        && r.addr < a + u64::from(n)),
                    "round {round}: {r:x?} names a site that did not access it with its kind"
                );
            }
        }
    }
}
