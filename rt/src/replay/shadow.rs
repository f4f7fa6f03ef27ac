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
//! Why a sharded hash table of pages and not a reserved `MAP_NORESERVE` shadow region: a region
//! needs a fixed application-to-shadow address mapping that covers heap, stacks, globals and mmaps
//! of any layout (PIE, static, ASLR), at 4x the application's address range for 32-byte cells,
//! which does not fit in 47 bits without TSan's per-platform mapping tables. Replay runs are short
//! proofs of one schedule, not production runs: a table of [`SHARDS`] locked maps, keyed by page
//! (4 KiB of the program's memory, [`PAGE`] granules) and holding a dense array of granule slots
//! per page, costs one uncontended lock, one probe and an index per access (the granules of one
//! access that share a page share the lock and the probe too), and only holds the pages the
//! program touched. Allocation on this path is fine: it is replay mode only.
//!
//! Lifetimes ([`lifetime`]): an allocation, and a new thread's stack, forget every granule of the
//! block, as TSan resets its shadow at allocation, so the accesses of the block's earlier object
//! (a job freed by one thread, handed to another by malloc) never pair with the new object's. A
//! free is a write over the whole block, stored even over the thread's own cells of that instant,
//! so an access that a reordering moves after another thread's free races with the free and names
//! its site. Blocks of more than [`WHOLE_BLOCK`] granules are freed only in the granules the table
//! already holds: a free then covers only the bytes that were accessed. Either event walks the
//! pages of its block, or the pages the table holds when they are fewer (a reservation of
//! gigabytes), never the granules of the whole table; a page the block covers whole is dropped.

use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

use ilgen_trace::{AccessKind, HeapOp, SiteId, ThreadId};

use crate::replay::hb::{Epoch, VectorClock};
use crate::replay::owners::{self, HoldsId};
use crate::replay::stack::{self, StackId};

pub(crate) const GRANULE: u64 = 8;
/// Cells kept per granule (see the module doc: why several, and which one goes when full).
pub(crate) const CELLS: usize = 8;
pub(crate) const SHARDS: usize = 256;
/// Blocks up to this many granules are freed granule by granule; larger ones (big buffers,
/// thread stacks) only in the granules the table holds.
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

/// The earlier cells an access raced with in one granule: a fixed array that the caller keeps
/// across granules, so nothing is allocated, initialized or copied per access.
#[derive(Default)]
pub(crate) struct Conflicts {
    cells: [Option<Cell>; MAX_CONFLICTS],
    len: usize,
}

impl Conflicts {
    fn push(&mut self, c: Cell) {
        if let Some(slot) = self.cells.get_mut(self.len) {
            *slot = Some(c);
            self.len += 1;
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Cell> {
        self.cells[..self.len].iter().flatten()
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn clear(&mut self) {
        self.len = 0;
    }
}

impl Granule {
    /// The granule remembers an access (the table holds it).
    fn held(&self) -> bool {
        !self.cells.is_empty() || self.atomic.is_some()
    }

    /// Checks `cur` against what the granule remembers, then remembers it; adds the cells it
    /// races with to `out`. `now` is the clock of the accessing thread; an atomic access first
    /// synchronizes through the location's clock.
    pub fn access(&mut self, cur: Cell, now: &mut VectorClock, out: &mut Conflicts) {
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

/// Granules per page of the table: 4 KiB of the program's memory.
pub(crate) const PAGE: u64 = 512;

/// The granule slots of one page, by index within it.
type Page = Box<[Granule]>;

/// One multiply spreads page numbers: bits 32..40 of the product pick the shard, and the map
/// hashes with the whole product (its low bits choose the bucket, its top 7 the tag), so the keys
/// of one shard, which share the shard bits, still differ in both.
#[inline]
fn spread(page: u64) -> u64 {
    page.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

#[derive(Default)]
pub(crate) struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = spread(v);
    }
}

type Map = HashMap<u64, Page, BuildHasherDefault<PageHasher>>;

/// One shard, alone in its cache lines: threads locking neighbouring shards do not contend.
///
/// Its lock is a flag taken by a compare-exchange and given back by a plain release store, where
/// `std::sync::Mutex` gives back by an atomic swap (to wake sleepers): a second locked
/// instruction, a full barrier, on every access. Sections are short (one access to one page, or
/// one page's lifetime event) and never block, so a waiter spins, yielding the CPU between tries
/// once the holder is likely preempted.
#[repr(align(128))]
struct Shard {
    locked: AtomicBool,
    map: UnsafeCell<Map>,
}

// SAFETY: `map` is only reached through a `Locked`, which holds `locked`.
unsafe impl Sync for Shard {}

impl Shard {
    fn lock(&self) -> Locked<'_> {
        let mut tries = 0u32;
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // Taken: wait reading, not writing, the flag's cache line.
            while self.locked.load(Ordering::Relaxed) {
                tries += 1;
                if tries < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
        Locked(self)
    }
}

/// A locked shard's map.
struct Locked<'a>(&'a Shard);

impl std::ops::Deref for Locked<'_> {
    type Target = Map;
    fn deref(&self) -> &Map {
        // SAFETY: the lock is held: no other thread reaches the map.
        unsafe { &*self.0.map.get() }
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Map {
        // SAFETY: as above.
        unsafe { &mut *self.0.map.get() }
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        self.0.locked.store(false, Ordering::Release);
    }
}

static TABLE: OnceLock<Box<[Shard]>> = OnceLock::new();

/// Pages the table holds, over all shards (see [`for_each_page`]).
static PAGES: AtomicUsize = AtomicUsize::new(0);

fn table() -> &'static [Shard] {
    TABLE.get_or_init(|| {
        (0..SHARDS)
            .map(|_| Shard {
                locked: AtomicBool::new(false),
                map: UnsafeCell::new(Map::default()),
            })
            .collect()
    })
}

/// The locked shard of `page`.
fn shard(page: u64) -> Locked<'static> {
    table()[(spread(page) >> 32) as usize % SHARDS].lock()
}

fn new_page() -> Page {
    PAGES.fetch_add(1, Ordering::Relaxed);
    (0..PAGE).map(|_| Granule::default()).collect()
}

/// The acquire of the atomic access to granule `g` that the thread made last, done again now that
/// the instruction has run (see the module doc).
pub(crate) fn acquire_again(g: u64, now: &mut VectorClock) {
    let map = shard(g / PAGE);
    let slot = map.get(&(g / PAGE)).map(|p| &p[(g % PAGE) as usize]);
    if let Some(c) = slot.and_then(|s| s.atomic.as_deref()) {
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
    check(now, &access, first, last, false, found);
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
    check(now, &access, addr / GRANULE, addr / GRANULE, false, found);
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

impl Access {
    /// Its cell in granule `g`, at the present of a thread whose clock is `now`.
    #[inline]
    fn cell(&self, g: u64, now: &VectorClock) -> Cell {
        Cell {
            epoch: now.epoch(self.tid),
            addr: self.addr,
            size: self.size.min(u64::from(u32::MAX)) as u32,
            site: self.site,
            kind: self.kind,
            mask: mask(g, self.addr, self.size),
            free: self.free,
            unmap: self.unmap,
            destroy: self.destroy,
            stack: self.stack,
            locks: self.locks,
        }
    }
}

/// Checks and records `a` in granules `first..=last`, ascending; with `held_only`, only in those
/// the table holds (a large block's free, see [`WHOLE_BLOCK`]).
fn check(
    now: &mut VectorClock,
    a: &Access,
    first: u64,
    last: u64,
    held_only: bool,
    mut found: impl FnMut(&Cell, &Cell),
) {
    let visit = |page: u64| {
        let (lo, hi) = page_part(page, first, last);
        check_page(now, a, page, lo, hi, held_only, &mut found);
    };
    if held_only {
        for_each_page(first / PAGE, last / PAGE, visit);
    } else {
        (first / PAGE..=last / PAGE).for_each(visit);
    }
}

/// The granules of `first..=last` in `page`, as a range `(lo, hi)` that it is not empty.
fn page_part(page: u64, first: u64, last: u64) -> (u64, u64) {
    (first.max(page * PAGE), last.min(page * PAGE + PAGE - 1))
}

/// [`check`] over granules `lo..=hi` of one page: one lock and one lookup for all of them, left
/// only to call `found` with the cells a granule raced with.
fn check_page(
    now: &mut VectorClock,
    a: &Access,
    page: u64,
    lo: u64,
    hi: u64,
    held_only: bool,
    found: &mut impl FnMut(&Cell, &Cell),
) {
    let mut out = Conflicts::default();
    let mut g = lo;
    while g <= hi {
        let mut raced = None;
        {
            let mut map = shard(page);
            let slots = if held_only {
                match map.get_mut(&page) {
                    Some(slots) => slots,
                    None => return,
                }
            } else {
                map.entry(page).or_insert_with(new_page)
            };
            while g <= hi && raced.is_none() {
                let slot = &mut slots[(g % PAGE) as usize];
                if !held_only || slot.held() {
                    let cur = a.cell(g, now);
                    slot.access(cur, now, &mut out);
                    if !out.is_empty() {
                        raced = Some(cur);
                    }
                }
                g += 1;
            }
        }
        if let Some(cur) = raced {
            for prev in out.iter() {
                found(prev, &cur);
            }
            out.clear();
        }
    }
}

/// Calls `f` with each page of `first..=last` (page numbers) that the table may hold, ascending:
/// every page of the range, or the pages the table holds when they are fewer (a block of
/// gigabytes, a large reservation), so that a lifetime event costs the smaller of the two.
fn for_each_page(first: u64, last: u64, f: impl FnMut(u64)) {
    if last - first < PAGES.load(Ordering::Relaxed) as u64 {
        (first..=last).for_each(f);
        return;
    }
    let mut held = Vec::new();
    for shard in table() {
        let map = shard.lock();
        held.extend(map.keys().copied().filter(|p| (first..=last).contains(p)));
    }
    held.sort_unstable();
    held.into_iter().for_each(f);
}

/// Forgets granules `first..=last` in `page`; the whole page when they cover it.
fn forget(page: u64, first: u64, last: u64) {
    let (lo, hi) = page_part(page, first, last);
    let mut map = shard(page);
    if hi - lo == PAGE - 1 {
        let gone = map.remove(&page);
        drop(map);
        if gone.is_some() {
            PAGES.fetch_sub(1, Ordering::Relaxed);
        }
    } else if let Some(slots) = map.get_mut(&page) {
        for slot in &mut slots[(lo % PAGE) as usize..=(hi % PAGE) as usize] {
            *slot = Granule::default();
        }
    }
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
            for_each_page(first / PAGE, last / PAGE, |page| forget(page, first, last));
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
            check(now, &free, first, last, last - first >= WHOLE_BLOCK, found);
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

    /// [`Granule::access`], giving the cells it raced with.
    fn acc(g: &mut Granule, cur: Cell, now: &mut VectorClock) -> Conflicts {
        let mut out = Conflicts::default();
        g.access(cur, now, &mut out);
        out
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
        assert!(sites(&acc(&mut g, cell(0, &a, 1, AccessKind::Write), &mut a)).is_empty());
        assert_eq!(
            sites(&acc(&mut g, cell(1, &b, 2, AccessKind::Write), &mut b)),
            vec![1]
        );
    }

    #[test]
    fn read_write_races_both_ways_and_reads_do_not() {
        let (mut a, mut b) = clocks();
        let mut g = Granule::default();
        acc(&mut g, cell(0, &a, 1, AccessKind::Read), &mut a);
        assert!(sites(&acc(&mut g, cell(1, &b, 2, AccessKind::Read), &mut b)).is_empty());
        assert_eq!(
            sites(&acc(&mut g, cell(1, &b, 3, AccessKind::Write), &mut b)),
            vec![1]
        );
        let mut g = Granule::default();
        acc(&mut g, cell(0, &a, 4, AccessKind::Write), &mut a);
        assert_eq!(
            sites(&acc(&mut g, cell(1, &b, 5, AccessKind::Read), &mut b)),
            vec![4]
        );
    }

    #[test]
    fn ordered_by_a_lock_is_no_race() {
        let (mut a, mut b) = clocks();
        let mut s = SyncClocks::default();
        let mut g = Granule::default();
        acc(&mut g, cell(0, &a, 1, AccessKind::Write), &mut a);
        s.release(0x99, Role::Lock, 0, &mut a);
        s.acquire(0x99, Role::Lock, &mut b);
        assert!(sites(&acc(&mut g, cell(1, &b, 2, AccessKind::Write), &mut b)).is_empty());
        b.tick(1);
        assert!(sites(&acc(&mut g, cell(1, &b, 3, AccessKind::Read), &mut b)).is_empty());
        // And the lock does not order what thread 0 does after releasing it.
        assert_eq!(
            sites(&acc(&mut g, cell(0, &a, 4, AccessKind::Write), &mut a)),
            vec![2, 3]
        );
    }

    #[test]
    fn same_thread_never_races() {
        let (mut a, _) = clocks();
        let mut g = Granule::default();
        acc(&mut g, cell(0, &a, 1, AccessKind::Write), &mut a);
        assert!(sites(&acc(&mut g, cell(0, &a, 2, AccessKind::Write), &mut a)).is_empty());
    }

    #[test]
    fn atomics_never_race_and_order_what_follows() {
        let (mut a, mut b) = clocks();
        let mut g = Granule::default();
        acc(&mut g, cell(0, &a, 1, AccessKind::AtomicWrite), &mut a);
        assert!(sites(&acc(
            &mut g,
            cell(1, &b, 2, AccessKind::AtomicWrite),
            &mut b
        ))
        .is_empty());
        assert!(sites(&acc(&mut g, cell(0, &a, 3, AccessKind::AtomicRead), &mut a)).is_empty());
        // A plain write concurrent with an atomic one is a race.
        let (mut a, mut b) = clocks();
        let mut h = Granule::default();
        acc(&mut h, cell(0, &a, 4, AccessKind::Write), &mut a);
        assert_eq!(
            sites(&acc(&mut h, cell(1, &b, 5, AccessKind::AtomicRead), &mut b)),
            vec![4]
        );
        // Message passing: data written, flag stored atomically; the flag's reader sees the data.
        let (mut a, mut b) = clocks();
        let mut data = Granule::default();
        let mut flag = Granule::default();
        acc(&mut data, cell(0, &a, 6, AccessKind::Write), &mut a);
        acc(&mut flag, cell(0, &a, 7, AccessKind::AtomicWrite), &mut a);
        acc(&mut flag, cell(1, &b, 8, AccessKind::AtomicRead), &mut b);
        assert!(sites(&acc(&mut data, cell(1, &b, 9, AccessKind::Read), &mut b)).is_empty());
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
            for c in acc(g, cell(tid, now, site, kind), now).iter() {
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
        acc(&mut g, cell(0, &a, 1, AccessKind::Write), &mut a);
        s.release(0x99, Role::Lock, 0, &mut a);
        s.acquire(0x99, Role::Lock, &mut b);
        assert!(sites(&acc(&mut g, cell(1, &b, 2, AccessKind::Write), &mut b)).is_empty());
        assert_eq!(
            sites(&acc(&mut g, cell(2, &c, 3, AccessKind::Read), &mut c)),
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
                let c = acc(&mut g, cell(0, &a, site, kind), &mut a);
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
            let c = acc(&mut g, cell(1, &b, site, kind), &mut b);
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
            let c = acc(&mut g, cell(t, now, i, kind), now);
            assert!(sites(&c).is_empty(), "access {i}");
        }
        // A plain write by a fresh thread, ordered with none of them, races with what is kept.
        let mut e = VectorClock::default();
        e.set(4, 1);
        assert!(!sites(&acc(&mut g, cell(4, &e, 99, AccessKind::Write), &mut e)).is_empty());
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
                    let r = acc(&mut g, cell(t, now, 1, AccessKind::Read), now);
                    let w = acc(&mut g, cell(t, now, 2, AccessKind::Write), now);
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
        acc(&mut g, cell(0, &a, 1, AccessKind::Read), &mut a);
        acc(&mut g, cell(0, &a, 2, AccessKind::Write), &mut a);
        for site in [1, 2, 3] {
            acc(&mut g, cell(0, &a, site, AccessKind::Read), &mut a);
            acc(&mut g, cell(0, &a, site, AccessKind::Write), &mut a);
        }
        assert_eq!(sites_of(&g), vec![2]);
        // After a sync operation (a new instant) a store from another site is remembered too.
        a.tick(0);
        acc(&mut g, cell(0, &a, 3, AccessKind::Write), &mut a);
        assert_eq!(sites_of(&g), vec![2, 3]);
        // Another thread's write races with both, and both pairs are named.
        assert_eq!(
            sites(&acc(&mut g, cell(1, &b, 4, AccessKind::Write), &mut b)),
            vec![2, 3]
        );
    }

    #[test]
    fn a_full_granule_forgets_the_accessing_threads_own_cells_first() {
        let (mut a, mut b) = clocks();
        let mut g = Granule::default();
        acc(&mut g, cell(1, &b, 1000, AccessKind::Write), &mut b);
        // Thread 0 writes from many sites, each after a sync operation: its own cells make room,
        // thread 1's write stays.
        for site in 0..3 * CELLS as SiteId {
            a.tick(0);
            let c = acc(&mut g, cell(0, &a, site, AccessKind::Write), &mut a);
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
        acc(&mut g, y0, &mut a);
        let mut x1 = cell(1, &b, 2, AccessKind::Write);
        x1.mask = 0x0f;
        assert!(sites(&acc(&mut g, x1, &mut b)).is_empty());
        let mut y1 = cell(1, &b, 3, AccessKind::Write);
        y1.mask = 0xf0;
        assert_eq!(sites(&acc(&mut g, y1, &mut b)), vec![1]);
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
        acc(&mut g, c0, &mut a);
        let mut c1 = cell(1, &b, 2, AccessKind::Write);
        c1.mask = 0b0010;
        assert!(sites(&acc(&mut g, c1, &mut b)).is_empty());
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

    #[test]
    fn an_access_goes_on_through_the_granules_after_one_that_raced_and_across_pages() {
        let (mut a, mut b) = clocks();
        let mut c = VectorClock::default();
        c.set(2, 1);
        let page = 0x7790_0000u64;
        // Granules 0 and 2 of a page, and the last of the page with the first of the next.
        access(&mut a, 0, page, 8, 1, AccessKind::Write, |_, _| {});
        access(&mut a, 0, page + 16, 8, 1, AccessKind::Write, |_, _| {});
        let end = page + GRANULE * PAGE - 8;
        access(&mut a, 0, end, 8, 2, AccessKind::Write, |_, _| {});
        access(&mut a, 0, end + 8, 8, 6, AccessKind::Write, |_, _| {});
        let mut seen = Vec::new();
        access(&mut b, 1, page, 32, 3, AccessKind::Write, |p, c| {
            seen.push((p.site, c.mask))
        });
        assert_eq!(seen, vec![(1, 0xff), (1, 0xff)]);
        // The granules between and after the racing ones were recorded too.
        assert_eq!(
            sites_seen(&mut c, 2, page + 24, AccessKind::Read),
            [(3, false)]
        );
        let mut seen = Vec::new();
        access(&mut b, 1, end - 8, 24, 4, AccessKind::Read, |p, _| {
            seen.push(p.site)
        });
        assert_eq!(seen, vec![2, 6]);
    }

    #[test]
    fn a_block_sharing_its_pages_forgets_only_its_own_granules() {
        let (mut a, mut b) = clocks();
        let page = 0x77a0_0000u64;
        let next = page + GRANULE * PAGE;
        for addr in [page, page + 64, next, next + 8] {
            access(&mut a, 0, addr, 8, 1, AccessKind::Write, |_, _| {});
        }
        // From the second granule of one page through the first of the next.
        let alloc = HeapOp::Alloc {
            addr: page + 8,
            size: GRANULE * PAGE,
        };
        lifetime(&mut b, 1, alloc, 2, |_, _| {
            panic!("an allocation races with nothing")
        });
        assert_eq!(sites_seen(&mut b, 1, page, AccessKind::Write), [(1, false)]);
        assert!(sites_seen(&mut b, 1, page + 64, AccessKind::Write).is_empty());
        assert!(sites_seen(&mut b, 1, next, AccessKind::Write).is_empty());
        assert_eq!(
            sites_seen(&mut b, 1, next + 8, AccessKind::Write),
            [(1, false)]
        );
    }

    #[test]
    fn a_block_larger_than_the_table_goes_through_the_pages_held() {
        let (mut a, mut b) = clocks();
        // A terabyte reservation: far more pages than the table holds.
        let (base, size) = (0x5000_0000_0000u64, 1u64 << 40);
        let mid = base + size / 2 + 40;
        access(&mut a, 0, mid, 4, 1, AccessKind::Write, |_, _| {});
        lifetime(&mut a, 0, HeapOp::Unmap { addr: base, size }, 5, |_, _| {});
        assert_eq!(
            sites_seen(&mut b, 1, mid, AccessKind::Read),
            vec![(1, false), (5, true)]
        );
        lifetime(&mut b, 1, HeapOp::Map { addr: base, size }, 0, |_, _| {});
        assert!(sites_seen(&mut b, 1, mid, AccessKind::Write).is_empty());
    }
}
