//! Shadow memory for replay: per 8-byte granule, a few recent accesses of any threads, and the
//! race check of every access against them.
//!
//! Takes each instrumented access in replay mode (thread, its vector clock, address, size, site,
//! kind); gives the earlier accesses it races with (conflicting, from another thread, at least one
//! write, not both atomic, and not happened-before the present of the accessing thread). Atomics
//! also synchronize: each atomic location keeps a clock that an atomic read acquires and an atomic
//! write (a store, RMW or compare-exchange: the hook does not tell them apart) acquires and then
//! releases, as seq_cst would; so atomics never race with each other and order what surrounds them.
//! The hooks run before the instruction, so an atomic load's hook can run before the store whose
//! value the load then reads: the acquire is therefore done again at the thread's next hook
//! ([`acquire_again`], called by the access hooks and `replay::sync`), which runs after the load.
//!
//! Each granule keeps up to [`CELLS`] cells, oldest first, as TSan keeps 4 shadow cells per 8
//! bytes; each cell is one access: its epoch (thread and instant, as in FastTrack, Flanagan &
//! Freund 2009, instead of a whole vector clock), site, kind (read or write, plain or atomic), byte
//! mask within the granule (`int x, y;` share a granule and do not conflict), address, size, and
//! the ids of its thread's stack and held locks then (`stack`, `owners`: what the report shows for
//! the earlier access of a pair). An access is checked against every cell, so it is reported
//! against the recent accesses of every other thread still remembered, one report per cell it races
//! with (the reports are deduplicated per site pair downstream).
//!
//! Why several cells and not FastTrack's one last write (plus reads): replay exists to confirm
//! one predicted pair of sites, and the first race of a schedule often hides it. Two threads doing
//! `lock; n++ (A); unlock; n-- (B)`, the second one's lock after the first's unlocked `n--`:
//! its `n++` races with the first's `n--` (A/B, reported), and with a single last-write cell that
//! `n++` would replace the first thread's write, so its own `n--` would be compared only with its
//! own `n++` and the predicted B/B would never show. A write that races with a cell must not
//! erase it; neither must a write that merely happened after it from another site, since a later
//! access of a third thread can race with both and name two different pairs.
//!
//! Within one instant of a thread (between two of its sync operations) the cells follow the
//! trace's granularity: the recorder keeps, per segment and byte range, one record of the dominant
//! kind with the first site of that kind (`cache`), so a predicted pair never names a read that
//! the same segment's write of those bytes follows, nor a second access of the same kind. So an
//! access that a cell of its own thread and instant already covers (all its bytes, at least as
//! strong: a write over a read, a plain access over an atomic one) is the fast path: it returns
//! after one scan, checking and storing nothing. That loses no race: no release of the thread came
//! in between (it would have moved the instant), so every cell stored since was checked against
//! that covering cell, and every cell stored before was checked when it was. It is also the common
//! case (a loop between two sync operations, the load and the store of `n++`), which stays as
//! cheap as FastTrack's same-epoch check.
//!
//! What else is forgotten, and why that is safe:
//! - at once, a cell that the new access covers and that is of the same site and happened before
//!   it (its own thread's or ordered by sync): any later access racing with it races with the new
//!   one, with the same pair of sites; this keeps a loop with sync operations at one cell per
//!   thread and instruction. Likewise a cell of the same thread and instant of a weaker kind (the
//!   load of `n++` when its store comes), which the trace does not keep either;
//! - when the granule is full, the oldest cell of the accessing thread that the access covers,
//!   else the oldest cell of another thread that happened before the access and that it covers
//!   (both lose at most a site pair, never a race), else the oldest cell (which can lose a race,
//!   as TSan's eviction can; it takes [`CELLS`] remembered accesses to one granule, of distinct
//!   threads, sites, instants or bytes, none covering another, for that to happen).
//!
//! Otherwise an access costs one scan of at most [`CELLS`] cells, an epoch comparison each.
//!
//! Why a sharded hash table and not a reserved `MAP_NORESERVE` shadow region: a region needs a
//! fixed application-to-shadow address mapping that covers heap, stacks, globals and mmaps of any
//! layout (PIE, static, ASLR), at 4x the application's address range for 32-byte cells, which
//! does not fit in 47 bits without TSan's per-platform mapping tables. Replay runs are short proofs
//! of one schedule, not production runs: a table of [`SHARDS`] mutex-protected maps, keyed by
//! granule index, costs one uncontended lock and one probe per access and only holds what the
//! program touched. Allocation on this path is fine: it is replay mode only.
//!
//! Lifetimes ([`lifetime`]): an allocation, and a new thread's stack, forget every granule of the
//! block, as TSan resets its shadow at allocation, so the accesses of the block's earlier object
//! (a job freed by one thread, handed to another by malloc) never pair with the new object's. A
//! free is a write over the whole block, stored even over the thread's own cells of that instant,
//! so an access that a reordering moves after another thread's free races with the free and names
//! its site. Blocks of more than [`WHOLE_BLOCK`] granules are handled through the granules the
//! table already holds, not one by one: a free then covers only the bytes that were accessed.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, OnceLock};

use ilgen_trace::{AccessKind, HeapOp, SiteId, ThreadId};

use crate::replay::hb::{Epoch, VectorClock};
use crate::replay::owners::{self, HoldsId};
use crate::replay::stack::{self, StackId};

pub(crate) const GRANULE: u64 = 8;
/// Cells kept per granule (see the module doc: why several, and which one goes when full).
pub(crate) const CELLS: usize = 8;
pub(crate) const SHARDS: usize = 256;
/// Blocks up to this many granules are reset or freed granule by granule; larger ones (big
/// buffers, thread stacks) through one pass over the granules the table holds.
pub(crate) const WHOLE_BLOCK: u64 = 4096;
/// Conflicts reported per granule and access: at most one per cell.
const MAX_CONFLICTS: usize = CELLS;

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
    /// The access is the free of the block (a write over all of it).
    pub free: bool,
    /// With `free`: the block was unmapped, not freed.
    pub unmap: bool,
    /// The access is the destroy of the sync object at `addr` (a write of its first byte).
    pub destroy: bool,
    /// Its thread's callers when it ran (`replay::stack`).
    pub stack: StackId,
    /// The locks its thread held when it ran (`replay::owners`).
    pub locks: HoldsId,
}

impl Cell {
    pub fn tid(&self) -> ThreadId {
        self.epoch.tid()
    }

    /// `self` (earlier) and `cur` (now, by a thread whose clock is `now`) race.
    #[inline]
    fn races_with(&self, cur: &Cell, now: &VectorClock) -> bool {
        self.tid() != cur.tid()
            && self.mask & cur.mask != 0
            && self.kind.conflicts_with(cur.kind)
            && !self.epoch.before(now)
    }

    /// Whatever conflicts with `self` conflicts with `by` too: `by` touches all of `self`'s bytes
    /// and is at least as strong (a write over a read, a plain access over an atomic one).
    #[inline]
    fn covered_by(&self, by: &Cell) -> bool {
        self.mask & !by.mask == 0
            && (by.kind.is_write() || !self.kind.is_write())
            && (!by.kind.is_atomic() || self.kind.is_atomic())
    }
}

#[derive(Default)]
pub(crate) struct Granule {
    /// At most [`CELLS`], oldest first.
    cells: Vec<Cell>,
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
        // Fast path: this thread already left a cell at least as strong over these bytes at this
        // same instant (between the same two sync operations). See the module doc.
        let seen = !cur.free
            && !cur.destroy
            && self
                .cells
                .iter()
                .any(|c| c.epoch == cur.epoch && cur.covered_by(c));
        if !seen {
            for c in &self.cells {
                if c.races_with(&cur, now) {
                    out.push(*c);
                }
            }
            // Cells that `cur` covers and that name nothing `cur` will not: of the same site and
            // happened before it (any later access racing with them races with `cur`, the same
            // pair of sites), or of this thread at this instant and of a weaker kind (the trace
            // keeps only the stronger one too, see the module doc).
            self.cells.retain(|c| {
                !(c.covered_by(&cur)
                    && ((c.site == cur.site && c.epoch.before(now))
                        || (c.epoch == cur.epoch && c.kind != cur.kind)))
            });
            if self.cells.len() == CELLS {
                let victim = self.victim(&cur, now);
                self.cells.remove(victim);
            }
            self.cells.push(cur);
        }
        if cur.kind == AccessKind::AtomicWrite {
            self.atomic.get_or_insert_with(Default::default).join(now);
            now.tick(tid);
        }
        out
    }

    /// The cell to forget when the granule is full, for `cur` to take its place: the oldest one
    /// of `cur`'s own thread that `cur` covers, else the oldest of another thread that happened
    /// before `cur` and that `cur` covers (both lose at most a site pair, never a race), else the
    /// oldest.
    fn victim(&self, cur: &Cell, now: &VectorClock) -> usize {
        let tid = cur.tid();
        self.cells
            .iter()
            .position(|c| c.tid() == tid && c.covered_by(cur))
            .or_else(|| {
                self.cells
                    .iter()
                    .position(|c| c.epoch.before(now) && c.covered_by(cur))
            })
            .unwrap_or(0)
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
    found: impl FnMut(&Cell, &Cell),
) {
    if size == 0 {
        return;
    }
    let first = addr / GRANULE;
    let last = addr.saturating_add(size - 1) / GRANULE;
    let access = Access {
        tid,
        addr,
        size,
        site,
        kind,
        free: false,
        unmap: false,
        destroy: false,
        stack: stack::current(),
        locks: owners::held(tid),
    };
    check(now, &access, first..=last, found);
}

/// Checks and records the destroy of the sync object at `addr` (`pthread_mutex_destroy`, ...) by
/// the thread whose clock is `now`: a write of its first byte, which every other operation on
/// the object reads atomically (`ilgen_trace::SyncOp::object_access`); calls `found` like
/// [`access`].
pub(crate) fn destroy(
    now: &mut VectorClock,
    tid: ThreadId,
    addr: u64,
    site: SiteId,
    found: impl FnMut(&Cell, &Cell),
) {
    let access = Access {
        tid,
        addr,
        size: 1,
        site,
        kind: AccessKind::Write,
        free: false,
        unmap: false,
        destroy: true,
        stack: stack::current(),
        locks: owners::held(tid),
    };
    check(now, &access, [addr / GRANULE], found);
}

/// One access as [`check`] stores it in each granule.
struct Access {
    tid: ThreadId,
    addr: u64,
    size: u64,
    site: SiteId,
    kind: AccessKind,
    free: bool,
    unmap: bool,
    destroy: bool,
    stack: StackId,
    locks: HoldsId,
}

fn check(
    now: &mut VectorClock,
    a: &Access,
    granules: impl IntoIterator<Item = u64>,
    mut found: impl FnMut(&Cell, &Cell),
) {
    for g in granules {
        let cur = Cell {
            epoch: now.epoch(a.tid),
            addr: a.addr,
            size: a.size.min(u64::from(u32::MAX)) as u32,
            site: a.site,
            kind: a.kind,
            mask: mask(g, a.addr, a.size),
            free: a.free,
            unmap: a.unmap,
            destroy: a.destroy,
            stack: a.stack,
            locks: a.locks,
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

/// The granules of `[addr, addr + size)` the table holds now, when the block is too large to go
/// through one by one (see [`WHOLE_BLOCK`]); `None` otherwise.
fn held_granules(first: u64, last: u64) -> Option<Vec<u64>> {
    if last - first < WHOLE_BLOCK {
        return None;
    }
    let mut held = Vec::new();
    for shard in table() {
        let map = shard.lock().unwrap_or_else(|e| e.into_inner());
        held.extend(map.keys().copied().filter(|g| (first..=last).contains(g)));
    }
    held.sort_unstable();
    Some(held)
}

/// A lifetime event of the thread whose clock is `now`: an allocation or a new stack forgets the
/// block's granules; a free checks and records a write of all its bytes at `site` (see the module
/// doc), calling `found` like [`access`].
pub(crate) fn lifetime(
    now: &mut VectorClock,
    tid: ThreadId,
    op: HeapOp,
    site: SiteId,
    found: impl FnMut(&Cell, &Cell),
) {
    let (addr, size) = op.block();
    if size == 0 {
        return;
    }
    let first = addr / GRANULE;
    let last = addr.saturating_add(size - 1) / GRANULE;
    match op {
        HeapOp::Alloc { .. } | HeapOp::Stack { .. } | HeapOp::Map { .. } => {
            let forget = |g: u64| {
                let mut map = shard(g).lock().unwrap_or_else(|e| e.into_inner());
                map.remove(&g);
            };
            match held_granules(first, last) {
                Some(held) => held.into_iter().for_each(forget),
                None => (first..=last).for_each(forget),
            }
        }
        HeapOp::Free { .. } | HeapOp::Unmap { .. } => {
            let free = Access {
                tid,
                addr,
                size,
                site,
                kind: AccessKind::Write,
                free: true,
                unmap: matches!(op, HeapOp::Unmap { .. }),
                destroy: false,
                stack: stack::current(),
                locks: owners::held(tid),
            };
            match held_granules(first, last) {
                Some(held) => check(now, &free, held, found),
                None => check(now, &free, first..=last, found),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::hb::{Role, SyncClocks};

    fn cell(tid: ThreadId, now: &VectorClock, site: SiteId, kind: AccessKind) -> Cell {
        Cell {
            epoch: now.epoch(tid),
            addr: 0x1000,
            size: 4,
            site,
            kind,
            mask: mask(0x1000 / GRANULE, 0x1000, 4),
            free: false,
            unmap: false,
            destroy: false,
            stack: 0,
            locks: 0,
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

    fn sites_of(g: &Granule) -> Vec<SiteId> {
        g.cells.iter().map(|c| c.site).collect()
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
        b.tick(1);
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

    /// The schedule of s52: two threads do `lock; n++ (line 48); unlock; n-- (line 55)`, and the
    /// second one's lock comes after the first one's unlocked `n--`. Sites are line * 10 + 1 for
    /// the load and + 2 for the store.
    #[test]
    fn a_race_reported_first_does_not_hide_the_next_pair() {
        let (mut a, mut b) = clocks();
        let mut s = SyncClocks::default();
        let mut g = Granule::default();
        let mut lines = std::collections::BTreeSet::new();
        let mut go = |g: &mut Granule, tid, now: &mut VectorClock, site, kind| {
            for c in g.access(cell(tid, now, site, kind), now).iter() {
                let pair = (c.site / 10, site / 10);
                lines.insert((pair.0.min(pair.1), pair.0.max(pair.1)));
            }
        };
        s.acquire(0x99, Role::Lock, &mut a);
        go(&mut g, 0, &mut a, 481, AccessKind::Read);
        go(&mut g, 0, &mut a, 482, AccessKind::Write);
        s.release(0x99, Role::Lock, 0, &mut a);
        go(&mut g, 0, &mut a, 551, AccessKind::Read);
        go(&mut g, 0, &mut a, 552, AccessKind::Write);
        s.acquire(0x99, Role::Lock, &mut b);
        go(&mut g, 1, &mut b, 481, AccessKind::Read);
        go(&mut g, 1, &mut b, 482, AccessKind::Write);
        s.release(0x99, Role::Lock, 1, &mut b);
        go(&mut g, 1, &mut b, 551, AccessKind::Read);
        go(&mut g, 1, &mut b, 552, AccessKind::Write);
        assert_eq!(
            lines.into_iter().collect::<Vec<_>>(),
            vec![(48, 55), (55, 55)]
        );
    }

    #[test]
    fn a_third_thread_is_reported_against_both_ordered_writers() {
        // T0 writes (1), T1 writes after acquiring T0's release (2): no race; T2, ordered with
        // neither, races with both, and both pairs are named.
        let (mut a, mut b) = clocks();
        let mut c = VectorClock::default();
        c.set(2, 1);
        let mut s = SyncClocks::default();
        let mut g = Granule::default();
        g.access(cell(0, &a, 1, AccessKind::Write), &mut a);
        s.release(0x99, Role::Lock, 0, &mut a);
        s.acquire(0x99, Role::Lock, &mut b);
        assert!(sites(&g.access(cell(1, &b, 2, AccessKind::Write), &mut b)).is_empty());
        assert_eq!(
            sites(&g.access(cell(2, &c, 3, AccessKind::Read), &mut c)),
            vec![1, 2]
        );
    }

    #[test]
    fn same_thread_accesses_never_race_whatever_their_sites_and_kinds() {
        let (mut a, mut b) = clocks();
        let mut g = Granule::default();
        let kinds = [
            AccessKind::Read,
            AccessKind::Write,
            AccessKind::AtomicRead,
            AccessKind::AtomicWrite,
        ];
        for round in 0..3 {
            for site in 0..2 * CELLS as SiteId {
                let kind = kinds[site as usize % kinds.len()];
                if site % 3 == 0 {
                    a.tick(0);
                }
                let c = g.access(cell(0, &a, site, kind), &mut a);
                assert!(sites(&c).is_empty(), "round {round} site {site}");
                assert!(g.cells.len() <= CELLS);
            }
            a.tick(0);
        }
        // Thread 1's accesses race with thread 0's cells, never with its own.
        for (site, kind) in [
            (100, AccessKind::Write),
            (101, AccessKind::Write),
            (102, AccessKind::Read),
        ] {
            b.tick(1);
            let c = g.access(cell(1, &b, site, kind), &mut b);
            assert!(c.iter().count() > 0 && c.iter().all(|c| c.tid() == 0));
        }
    }

    #[test]
    fn atomics_never_race_with_atomics_of_any_thread() {
        let mut clocks: Vec<VectorClock> = (0..4)
            .map(|t| {
                let mut c = VectorClock::default();
                c.set(t, 1);
                c
            })
            .collect();
        let mut g = Granule::default();
        for i in 0..40u32 {
            let t = (i * 7 % 4) as ThreadId;
            let kind = if i % 3 == 0 {
                AccessKind::AtomicRead
            } else {
                AccessKind::AtomicWrite
            };
            let now = &mut clocks[t as usize];
            let c = g.access(cell(t, now, i, kind), now);
            assert!(sites(&c).is_empty(), "access {i}");
        }
        // A plain write by a fresh thread, ordered with none of them, races with what is kept.
        let mut e = VectorClock::default();
        e.set(4, 1);
        assert!(!sites(&g.access(cell(4, &e, 99, AccessKind::Write), &mut e)).is_empty());
    }

    #[test]
    fn a_loop_keeps_one_cell_per_thread_and_instruction() {
        let (mut a, mut b) = clocks();
        let mut s = SyncClocks::default();
        let mut g = Granule::default();
        for _ in 0..10 {
            for (t, now) in [(0, &mut a), (1, &mut b)] {
                s.acquire(0x99, Role::Lock, now);
                for _ in 0..3 {
                    let r = g.access(cell(t, now, 1, AccessKind::Read), now);
                    let w = g.access(cell(t, now, 2, AccessKind::Write), now);
                    assert!(sites(&r).is_empty() && sites(&w).is_empty());
                }
                s.release(0x99, Role::Lock, t, now);
            }
        }
        // The earlier thread's cells at the same instructions happened before: replaced; the
        // load is covered by the store at the same instant: not kept.
        assert_eq!(g.cells.len(), 1);
    }

    #[test]
    fn an_access_covered_at_the_same_instant_stores_nothing() {
        let (mut a, mut b) = clocks();
        let mut g = Granule::default();
        g.access(cell(0, &a, 1, AccessKind::Read), &mut a);
        g.access(cell(0, &a, 2, AccessKind::Write), &mut a);
        for site in [1, 2, 3] {
            g.access(cell(0, &a, site, AccessKind::Read), &mut a);
            g.access(cell(0, &a, site, AccessKind::Write), &mut a);
        }
        assert_eq!(sites_of(&g), vec![2]);
        // After a sync operation (a new instant) a store from another site is remembered too.
        a.tick(0);
        g.access(cell(0, &a, 3, AccessKind::Write), &mut a);
        assert_eq!(sites_of(&g), vec![2, 3]);
        // Another thread's write races with both, and both pairs are named.
        assert_eq!(
            sites(&g.access(cell(1, &b, 4, AccessKind::Write), &mut b)),
            vec![2, 3]
        );
    }

    #[test]
    fn a_full_granule_forgets_the_accessing_threads_own_cells_first() {
        let (mut a, mut b) = clocks();
        let mut g = Granule::default();
        g.access(cell(1, &b, 1000, AccessKind::Write), &mut b);
        // Thread 0 writes from many sites, each after a sync operation: its own cells make room,
        // thread 1's write stays.
        for site in 0..3 * CELLS as SiteId {
            a.tick(0);
            let c = g.access(cell(0, &a, site, AccessKind::Write), &mut a);
            assert_eq!(sites(&c), vec![1000], "site {site}");
            assert_eq!(g.cells.len(), (site as usize + 2).min(CELLS));
        }
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

    fn sites_seen(
        now: &mut VectorClock,
        tid: ThreadId,
        addr: u64,
        kind: AccessKind,
    ) -> Vec<(SiteId, bool)> {
        let mut seen = Vec::new();
        access(now, tid, addr, 4, 9, kind, |p, _| {
            seen.push((p.site, p.free))
        });
        seen
    }

    #[test]
    fn an_allocation_forgets_the_old_objects_accesses() {
        let (mut a, mut b) = clocks();
        let base = 0x7778_0000u64;
        access(&mut a, 0, base, 64, 1, AccessKind::Write, |_, _| {});
        let alloc = HeapOp::Alloc {
            addr: base,
            size: 64,
        };
        lifetime(&mut b, 1, alloc, 2, |_, _| {
            panic!("an allocation races with nothing")
        });
        assert!(sites_seen(&mut b, 1, base + 8, AccessKind::Write).is_empty());
        // Without the allocation the same access races.
        let other = 0x7779_0000u64;
        access(&mut a, 0, other, 64, 1, AccessKind::Write, |_, _| {});
        assert_eq!(
            sites_seen(&mut b, 1, other + 8, AccessKind::Write),
            vec![(1, false)]
        );
    }

    #[test]
    fn a_destroy_races_with_uses_that_are_atomic_reads_of_the_object() {
        let (mut a, mut b) = clocks();
        let m = 0x777d_0000u64;
        // Two threads' operations on the object: atomic reads, no race between them.
        access(&mut a, 0, m, 1, 1, AccessKind::AtomicRead, |_, _| {
            panic!("nothing to race with yet")
        });
        access(&mut b, 1, m, 1, 2, AccessKind::AtomicRead, |_, _| {
            panic!("uses never race with each other")
        });
        let mut seen = Vec::new();
        destroy(&mut a, 0, m, 3, |p, c| {
            seen.push((p.site, c.site, c.destroy))
        });
        assert_eq!(seen, vec![(2, 3, true)]);
    }

    #[test]
    fn a_free_is_a_write_over_the_block_that_later_accesses_race_with() {
        let (mut a, mut b) = clocks();
        let base = 0x777a_0000u64;
        // The freeing thread's own write of the same instant does not hide the free.
        access(&mut a, 0, base, 4, 1, AccessKind::Write, |_, _| {});
        let free = HeapOp::Free {
            addr: base,
            size: 32,
        };
        lifetime(&mut a, 0, free, 5, |_, _| {
            panic!("nothing to race with yet")
        });
        assert_eq!(
            sites_seen(&mut b, 1, base + 24, AccessKind::Read),
            vec![(5, true)]
        );
        // A read that came first races with the free: reported from the free's side.
        let other = 0x777b_0000u64;
        access(&mut b, 1, other + 8, 4, 7, AccessKind::Read, |_, _| {});
        let mut seen = Vec::new();
        let free = HeapOp::Free {
            addr: other,
            size: 32,
        };
        lifetime(&mut a, 0, free, 5, |p, c| {
            seen.push((p.site, c.site, c.free))
        });
        assert_eq!(seen, vec![(7, 5, true)]);
    }

    #[test]
    fn a_large_block_is_reset_and_freed_through_the_granules_held() {
        let (mut a, mut b) = clocks();
        let base = 0x7780_0000u64;
        let size = GRANULE * WHOLE_BLOCK * 4;
        access(
            &mut a,
            0,
            base + size - 8,
            4,
            1,
            AccessKind::Write,
            |_, _| {},
        );
        let free = HeapOp::Free { addr: base, size };
        lifetime(&mut a, 0, free, 5, |_, _| {});
        assert_eq!(
            sites_seen(&mut b, 1, base + size - 8, AccessKind::Read),
            vec![(1, false), (5, true)]
        );
        let stack = HeapOp::Stack { addr: base, size };
        lifetime(&mut b, 1, stack, 0, |_, _| {});
        assert!(sites_seen(&mut b, 1, base + size - 8, AccessKind::Write).is_empty());
    }
}
