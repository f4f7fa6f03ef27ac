//! Shadow memory for replay: per 8-byte granule, the last write and the recent reads, and the race
//! check of every access against them.
//!
//! Takes each instrumented access in replay mode (thread, its vector clock, address, size, site,
//! kind); gives the earlier accesses it races with (conflicting, from another thread, at least one
//! write, not both atomic, and not happened-before the present of the accessing thread). Atomics
//! also synchronize: each atomic location keeps a clock that an atomic read acquires and an atomic
//! write (a store, RMW or compare-exchange: the hook does not tell them apart) acquires and then
//! releases, as seq_cst would; so atomics never race with each other and order what surrounds them.
//! The hooks run before the instruction, so an atomic load's hook can run before the store whose
//! value the load then reads: the acquire is therefore done again at the thread's next hook
//! ([`acquire_again`], called by the access hooks and `sync_replay`), which runs after the load.
//!
//! FastTrack's representation (Flanagan & Freund 2009), per byte range of a granule: the last
//! write epoch, and read epochs (with their sites) only for reads not already ordered before a
//! newer read, at most [`MAX_READS`] of them. Each cell keeps its byte mask within the granule:
//! `int x, y;` share a granule, and the write of `x` must not replace the one of `y`; a write
//! replaces only the cells whose bytes it covers. Each cell also keeps its address, size and site
//! for the report.
//!
//! Why a sharded hash table and not a reserved `MAP_NORESERVE` shadow region: a region needs a
//! fixed application-to-shadow address mapping that covers heap, stacks, globals and mmaps of any
//! layout (PIE, static, ASLR), at 4x the application's address range for 32-byte cells, which
//! does not fit in 47 bits without TSan's per-platform mapping tables. Replay runs are short proofs
//! of one schedule, not production runs: a table of [`SHARDS`] mutex-protected maps, keyed by
//! granule index, costs one uncontended lock and one probe per access and only holds what the
//! program touched. Allocation on this path is fine: it is replay mode only.
//!
//! Freed memory is not reset (the runtime does not see `free`): a block reused by another thread
//! without synchronization the runtime sees (the allocator's own locks) could be reported.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, OnceLock};

use ilgen_trace::{AccessKind, SiteId, ThreadId};

use crate::hb::{Epoch, VectorClock};

pub(crate) const GRANULE: u64 = 8;
/// Read cells kept per granule; the oldest goes first.
pub(crate) const MAX_READS: usize = 4;
/// Write cells kept per granule (disjoint byte ranges: at most one per byte).
pub(crate) const MAX_WRITES: usize = 8;
pub(crate) const SHARDS: usize = 256;
/// Conflicts reported per granule and access (one per earlier cell is enough to name the pair).
const MAX_CONFLICTS: usize = MAX_WRITES + MAX_READS;

/// One remembered access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cell {
    pub epoch: Epoch,
    pub addr: u64,
    pub size: u32,
    pub site: SiteId,
    pub kind: AccessKind,
    /// Bytes of the granule it touched.
    pub mask: u8,
}

impl Cell {
    pub fn tid(&self) -> ThreadId {
        self.epoch.tid()
    }

    /// `self` (earlier) and `cur` (now, by a thread whose clock is `now`) race.
    fn races_with(&self, cur: &Cell, now: &VectorClock) -> bool {
        self.tid() != cur.tid()
            && self.mask & cur.mask != 0
            && (self.kind.is_write() || cur.kind.is_write())
            && !(self.kind.is_atomic() && cur.kind.is_atomic())
            && !self.epoch.before(now)
    }
}

#[derive(Default)]
pub(crate) struct Granule {
    writes: Vec<Cell>,
    reads: Vec<Cell>,
    /// The release/acquire clock of an atomic location starting in this granule.
    atomic: Option<Box<VectorClock>>,
}

/// The earlier cells an access raced with (a fixed array: no allocation to return them).
#[derive(Default)]
pub(crate) struct Conflicts {
    cells: [Option<Cell>; MAX_CONFLICTS],
}

impl Conflicts {
    fn push(&mut self, c: Cell) {
        if let Some(slot) = self.cells.iter_mut().find(|s| s.is_none()) {
            *slot = Some(c);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Cell> {
        self.cells.iter().flatten()
    }
}

impl Granule {
    /// Checks `cur` against what the granule remembers, then remembers it. `now` is the clock of
    /// the accessing thread; an atomic access first synchronizes through the location's clock.
    pub fn access(&mut self, cur: Cell, now: &mut VectorClock) -> Conflicts {
        let mut out = Conflicts::default();
        let tid = cur.tid();
        if cur.kind.is_atomic() {
            if let Some(c) = &self.atomic {
                now.join(c);
            }
        }
        // The present may have moved by the acquire above: the cell records it.
        let cur = Cell {
            epoch: now.epoch(tid),
            ..cur
        };
        for w in &self.writes {
            if w.races_with(&cur, now) {
                out.push(*w);
            }
        }
        if cur.kind.is_write() {
            for r in &self.reads {
                if r.races_with(&cur, now) {
                    out.push(*r);
                }
            }
            // Reads of bytes this write covers are dropped: they either raced with it (reported
            // now) or happened before it, and then a later write racing with them races with this
            // write too and is reported against it. Reads of other bytes stay.
            self.reads.retain(|r| r.mask & !cur.mask != 0);
            // Likewise for earlier writes: a write left with some bytes this one also covers
            // either raced with it or happened before it, so it adds no false report later.
            self.writes.retain(|w| w.mask & !cur.mask != 0);
            if self.writes.len() == MAX_WRITES {
                self.writes.remove(0);
            }
            self.writes.push(cur);
        } else {
            // A read ordered before this one, of bytes this one covers, is subsumed: whatever a
            // later write misses ordering with it, it misses with this read too.
            self.reads
                .retain(|r| !(r.mask & !cur.mask == 0 && (r.tid() == tid || r.epoch.before(now))));
            if self.reads.len() == MAX_READS {
                self.reads.remove(0);
            }
            self.reads.push(cur);
        }
        if cur.kind == AccessKind::AtomicWrite {
            self.atomic.get_or_insert_with(Default::default).join(now);
            now.tick(tid);
        }
        out
    }
}

/// Bytes of `[addr, addr + size)` inside granule `g`, as a mask.
pub(crate) fn mask(g: u64, addr: u64, size: u64) -> u8 {
    let lo = addr.max(g * GRANULE);
    let hi = addr.saturating_add(size).min((g + 1) * GRANULE);
    if hi <= lo {
        return 0;
    }
    let n = hi - lo;
    let bits: u16 = ((1u16 << n) - 1) << (lo - g * GRANULE);
    bits as u8
}

/// Granule indices are already well spread except for their low bits' locality; one multiply.
#[derive(Default)]
pub(crate) struct GranuleHasher(u64);

impl Hasher for GranuleHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type Map = HashMap<u64, Granule, BuildHasherDefault<GranuleHasher>>;

static TABLE: OnceLock<Box<[Mutex<Map>]>> = OnceLock::new();

fn table() -> &'static [Mutex<Map>] {
    TABLE.get_or_init(|| (0..SHARDS).map(|_| Mutex::new(Map::default())).collect())
}

fn shard(g: u64) -> &'static Mutex<Map> {
    &table()[(g.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize % SHARDS]
}

/// The acquire of the atomic access to granule `g` that the thread made last, done again now that
/// the instruction has run (see the module doc).
pub(crate) fn acquire_again(g: u64, now: &mut VectorClock) {
    let map = shard(g).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = map.get(&g).and_then(|g| g.atomic.as_deref()) {
        now.join(c);
    }
}

/// Checks and records one access of `size` bytes at `addr` by the thread whose clock is `now`;
/// calls `found` (outside every shard lock) with each earlier cell it races with and the cell of
/// the access itself in that granule.
pub(crate) fn access(
    now: &mut VectorClock,
    tid: ThreadId,
    addr: u64,
    size: u64,
    site: SiteId,
    kind: AccessKind,
    mut found: impl FnMut(&Cell, &Cell),
) {
    if size == 0 {
        return;
    }
    let first = addr / GRANULE;
    let last = addr.saturating_add(size - 1) / GRANULE;
    for g in first..=last {
        let cur = Cell {
            epoch: now.epoch(tid),
            addr,
            size: size.min(u64::from(u32::MAX)) as u32,
            site,
            kind,
            mask: mask(g, addr, size),
        };
        let conflicts = {
            let mut map = shard(g).lock().unwrap_or_else(|e| e.into_inner());
            map.entry(g).or_default().access(cur, now)
        };
        for prev in conflicts.iter() {
            found(prev, &cur);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hb::{Role, SyncClocks};

    fn cell(tid: ThreadId, now: &VectorClock, site: SiteId, kind: AccessKind) -> Cell {
        Cell {
            epoch: now.epoch(tid),
            addr: 0x1000,
            size: 4,
            site,
            kind,
            mask: mask(0x1000 / GRANULE, 0x1000, 4),
        }
    }

    fn clocks() -> (VectorClock, VectorClock) {
        let mut a = VectorClock::default();
        a.set(0, 1);
        let mut b = VectorClock::default();
        b.set(1, 1);
        (a, b)
    }

    fn sites(c: &Conflicts) -> Vec<SiteId> {
        c.iter().map(|c| c.site).collect()
    }

    #[test]
    fn masks_cover_the_bytes_in_each_granule() {
        assert_eq!(mask(0, 0, 8), 0xff);
        assert_eq!(mask(0, 2, 2), 0b1100);
        assert_eq!(mask(0, 6, 4), 0b1100_0000);
        assert_eq!(mask(1, 6, 4), 0b11);
        assert_eq!(mask(2, 6, 4), 0);
    }

    #[test]
    fn write_write_from_two_threads_races() {
        let (mut a, mut b) = clocks();
        let mut g = Granule::default();
        assert!(sites(&g.access(cell(0, &a, 1, AccessKind::Write), &mut a)).is_empty());
        assert_eq!(
            sites(&g.access(cell(1, &b, 2, AccessKind::Write), &mut b)),
            vec![1]
        );
    }

    #[test]
    fn read_write_races_both_ways_and_reads_do_not() {
        let (mut a, mut b) = clocks();
        let mut g = Granule::default();
        g.access(cell(0, &a, 1, AccessKind::Read), &mut a);
        assert!(sites(&g.access(cell(1, &b, 2, AccessKind::Read), &mut b)).is_empty());
        assert_eq!(
            sites(&g.access(cell(1, &b, 3, AccessKind::Write), &mut b)),
            vec![1]
        );
        let mut g = Granule::default();
        g.access(cell(0, &a, 4, AccessKind::Write), &mut a);
        assert_eq!(
            sites(&g.access(cell(1, &b, 5, AccessKind::Read), &mut b)),
            vec![4]
        );
    }

    #[test]
    fn ordered_by_a_lock_is_no_race() {
        let (mut a, mut b) = clocks();
        let mut s = SyncClocks::default();
        let mut g = Granule::default();
        g.access(cell(0, &a, 1, AccessKind::Write), &mut a);
        s.release(0x99, Role::Lock, 0, &mut a);
        s.acquire(0x99, Role::Lock, &mut b);
        assert!(sites(&g.access(cell(1, &b, 2, AccessKind::Write), &mut b)).is_empty());
        assert!(sites(&g.access(cell(1, &b, 3, AccessKind::Read), &mut b)).is_empty());
        // And the lock does not order what thread 0 does after releasing it.
        assert_eq!(
            sites(&g.access(cell(0, &a, 4, AccessKind::Write), &mut a)),
            vec![2, 3]
        );
    }

    #[test]
    fn same_thread_never_races() {
        let (mut a, _) = clocks();
        let mut g = Granule::default();
        g.access(cell(0, &a, 1, AccessKind::Write), &mut a);
        assert!(sites(&g.access(cell(0, &a, 2, AccessKind::Write), &mut a)).is_empty());
    }

    #[test]
    fn atomics_never_race_and_order_what_follows() {
        let (mut a, mut b) = clocks();
        let mut g = Granule::default();
        g.access(cell(0, &a, 1, AccessKind::AtomicWrite), &mut a);
        assert!(sites(&g.access(cell(1, &b, 2, AccessKind::AtomicWrite), &mut b)).is_empty());
        assert!(sites(&g.access(cell(0, &a, 3, AccessKind::AtomicRead), &mut a)).is_empty());
        // A plain write concurrent with an atomic one is a race.
        let (mut a, mut b) = clocks();
        let mut h = Granule::default();
        h.access(cell(0, &a, 4, AccessKind::Write), &mut a);
        assert_eq!(
            sites(&h.access(cell(1, &b, 5, AccessKind::AtomicRead), &mut b)),
            vec![4]
        );
        // Message passing: data written, flag stored atomically; the flag's reader sees the data.
        let (mut a, mut b) = clocks();
        let mut data = Granule::default();
        let mut flag = Granule::default();
        data.access(cell(0, &a, 6, AccessKind::Write), &mut a);
        flag.access(cell(0, &a, 7, AccessKind::AtomicWrite), &mut a);
        flag.access(cell(1, &b, 8, AccessKind::AtomicRead), &mut b);
        assert!(sites(&data.access(cell(1, &b, 9, AccessKind::Read), &mut b)).is_empty());
    }

    #[test]
    fn a_write_to_other_bytes_keeps_the_earlier_write() {
        // `int x, y;` in one granule: T0 writes y, T1 writes x, then T1 writes y: still a race.
        let (mut a, mut b) = clocks();
        let mut g = Granule::default();
        let mut y0 = cell(0, &a, 1, AccessKind::Write);
        y0.mask = 0xf0;
        g.access(y0, &mut a);
        let mut x1 = cell(1, &b, 2, AccessKind::Write);
        x1.mask = 0x0f;
        assert!(sites(&g.access(x1, &mut b)).is_empty());
        let mut y1 = cell(1, &b, 3, AccessKind::Write);
        y1.mask = 0xf0;
        assert_eq!(sites(&g.access(y1, &mut b)), vec![1]);
    }

    #[test]
    fn a_load_whose_hook_ran_before_the_store_acquires_at_the_next_hook() {
        let (mut a, mut b) = clocks();
        let base = 0x7778_0000u64;
        let (data, flag) = (base, base + 64);
        // The reader's hook for the load runs first, then the writer's data write and flag store.
        access(&mut b, 1, flag, 4, 1, AccessKind::AtomicRead, |_, _| {});
        access(&mut a, 0, data, 4, 2, AccessKind::Write, |_, _| {});
        access(&mut a, 0, flag, 4, 3, AccessKind::AtomicWrite, |_, _| {});
        // The real load read the store; the reader's next hook acquires again first.
        acquire_again(flag / GRANULE, &mut b);
        let mut races = 0;
        access(&mut b, 1, data, 4, 4, AccessKind::Read, |_, _| races += 1);
        assert_eq!(races, 0);
    }

    #[test]
    fn disjoint_bytes_of_one_granule_do_not_conflict() {
        let (mut a, mut b) = clocks();
        let mut g = Granule::default();
        let mut c0 = cell(0, &a, 1, AccessKind::Write);
        c0.mask = 0b0001;
        g.access(c0, &mut a);
        let mut c1 = cell(1, &b, 2, AccessKind::Write);
        c1.mask = 0b0010;
        assert!(sites(&g.access(c1, &mut b)).is_empty());
    }

    #[test]
    fn the_table_reports_each_racing_granule() {
        let (mut a, mut b) = clocks();
        // An address no other test uses: the table is process-wide.
        let base = 0x7777_0000u64;
        access(&mut a, 0, base, 16, 1, AccessKind::Write, |_, _| {});
        let mut seen = Vec::new();
        access(&mut b, 1, base + 4, 8, 2, AccessKind::Read, |p, c| {
            seen.push((p.site, c.site, c.mask))
        });
        assert_eq!(seen, vec![(1, 2, 0xf0), (1, 2, 0x0f)]);
    }
}
