//! The per-thread segment cache: one record per accessed range between two sync events.
//!
//! Takes every memory access of one thread (address, size, kind, raw site pointer); gives back,
//! when drained, one entry per distinct (address, size, atomic-ness) in first-access order, whose
//! kind is the dominant kind seen ([`AccessKind::dominant`]: a write dominates reads) and whose
//! site is the first site of that kind. Draining happens at every sync event (the segment ends)
//! and early when the cache is full: splitting a segment in two is harmless to the analysis, it
//! only repeats a range.
//!
//! The table is preallocated when the thread starts and never grows: open addressing over
//! `2 * capacity` slots (load at most one half) that index a dense entry array in insertion order.
//! Clearing is O(1): each slot carries the generation it was filled in, and draining bumps the
//! generation, so a thread that syncs often does not pay for the table's size.

use ilgen_trace::AccessKind;

/// One range of one segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub addr: u64,
    pub size: u32,
    pub kind: AccessKind,
    /// The raw site pointer: turned into a site id only when the entry is written.
    pub site: usize,
}

pub(crate) struct SegmentCache {
    /// `generation << 32 | entry index`; a slot of an older generation is empty.
    slots: Box<[u64]>,
    shift: u32,
    generation: u32,
    entries: Vec<Entry>,
    capacity: usize,
    /// Index of the entry the previous access hit: a loop on one variable skips the probe.
    last: usize,
}

impl SegmentCache {
    /// A cache that holds `capacity` ranges before it asks to be drained.
    pub fn new(capacity: usize) -> SegmentCache {
        let capacity = capacity.max(1);
        let slots = (capacity * 2).next_power_of_two().max(2);
        SegmentCache {
            // Zeroed memory: pages are touched only as the table fills.
            slots: vec![0u64; slots].into_boxed_slice(),
            shift: 64 - slots.trailing_zeros(),
            generation: 1,
            entries: Vec::with_capacity(capacity),
            capacity,
            last: usize::MAX,
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    #[inline(always)]
    fn hash(&self, addr: u64, size: u32, atomic: bool) -> usize {
        let key = addr ^ (u64::from(size) << 40) ^ (u64::from(atomic) << 63);
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Records one access. Returns false, recording nothing, when a new range is needed and the
    /// cache is full: the caller drains it and records again.
    #[inline(always)]
    pub fn record(&mut self, addr: u64, size: u32, kind: AccessKind, site: usize) -> bool {
        if let Some(e) = self.entries.get_mut(self.last) {
            if e.addr == addr && e.size == size && e.kind.is_atomic() == kind.is_atomic() {
                Self::merge(e, kind, site);
                return true;
            }
        }
        self.record_probe(addr, size, kind, site)
    }

    #[inline(always)]
    fn merge(e: &mut Entry, kind: AccessKind, site: usize) {
        let kept = e.kind.dominant(kind);
        if kept != e.kind {
            // The kind changed (a write after reads): its first site is this one.
            e.kind = kept;
            e.site = site;
        }
    }

    #[inline(always)]
    fn record_probe(&mut self, addr: u64, size: u32, kind: AccessKind, site: usize) -> bool {
        let mask = self.slots.len() - 1;
        let generation = u64::from(self.generation) << 32;
        let mut i = self.hash(addr, size, kind.is_atomic());
        loop {
            let slot = self.slots[i];
            if slot & !0xffff_ffff != generation {
                // Empty in this generation: a new range.
                if self.entries.len() >= self.capacity {
                    return false;
                }
                let index = self.entries.len();
                self.entries.push(Entry {
                    addr,
                    size,
                    kind,
                    site,
                });
                self.slots[i] = generation | index as u64;
                self.last = index;
                return true;
            }
            let index = (slot & 0xffff_ffff) as usize;
            let e = &mut self.entries[index];
            if e.addr == addr && e.size == size && e.kind.is_atomic() == kind.is_atomic() {
                Self::merge(e, kind, site);
                self.last = index;
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    /// Gives every entry in insertion order to `emit`, then empties the cache.
    pub fn drain(&mut self, mut emit: impl FnMut(&Entry)) {
        for e in &self.entries {
            emit(e);
        }
        self.clear();
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.last = usize::MAX;
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Wrapped: slots of generation 1 might still look current, so really clear them.
            self.slots.fill(0);
            self.generation = 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AccessKind::*;

    fn drained(c: &mut SegmentCache) -> Vec<Entry> {
        let mut out = Vec::new();
        c.drain(|e| out.push(*e));
        out
    }

    fn e(addr: u64, size: u32, kind: AccessKind, site: usize) -> Entry {
        Entry {
            addr,
            size,
            kind,
            site,
        }
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
            assert!(c.record(i * 8, 8, Read, 0));
        }
        assert!(c.record(0, 8, Write, 9), "an existing range still merges");
        assert!(!c.record(1000, 8, Read, 0));
        let out = drained(&mut c);
        assert_eq!(out.len(), 16);
        assert_eq!(out[0], e(0, 8, Write, 9));
        assert!(c.record(1000, 8, Read, 0));
        assert_eq!(drained(&mut c), vec![e(1000, 8, Read, 0)]);
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
    fn generation_wrap_really_clears() {
        let mut c = SegmentCache::new(16);
        c.generation = u32::MAX;
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
}
