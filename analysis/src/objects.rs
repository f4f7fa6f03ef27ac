//! Shared objects: byte ranges of one allocation epoch that two or more threads touched, at least
//! one of them writing, split at every access's ends.
//!
//! Takes every thread of a run and its [`Lifetimes`]; gives [`Objects`]: the run's shared objects,
//! ordered by epoch, then address, each by its index ([`Objects::get`]) and the indices an access
//! touches ([`Objects::touched`], consecutive). Within one object every byte is touched by the
//! same accesses, so two accesses meet on an object only if they share a byte. Adjacent pieces are
//! never glued, even when an access spans them: the runtime merges a segment's adjacent accesses
//! of one instruction into one record (an array sweep is one range), so a reader sweeping a whole
//! array must not join the disjoint elements that other threads write into one object, where they
//! would pair with each other though they share no byte. An access spanning several objects
//! touches each of them.
//!
//! Two walks over the accesses, neither holding them: the first merges each thread's touched and
//! written ranges (per epoch), and where at least two threads' touched ranges and one thread's
//! written ranges overlap is a shared region; the second collects every access end inside a
//! region. An object is then the bytes between two consecutive ends, and costs 8 bytes: the cut
//! where it begins, as an offset into the regions laid end to end (zstd's run has 15 million
//! objects).

use std::ops::Range;

use ilgen_trace::format::ThreadTrace;

use crate::lifetime::{accesses, span, Lifetimes};

/// A shared object: the bytes `[addr, addr + len)` during one allocation epoch
/// ([`crate::lifetime`]; [`crate::lifetime::NO_EPOCH`] outside recorded lifetimes). Objects are
/// ordered by epoch, then address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedObject {
    pub addr: u64,
    pub len: u64,
    pub epoch: u32,
}

/// Bytes `[lo, hi)` of `epoch` where every byte is shared; `base` is the offset of `lo` in the
/// regions laid end to end.
#[derive(Clone, Copy, Debug)]
struct Region {
    epoch: u32,
    lo: u64,
    hi: u64,
    base: u64,
}

impl Region {
    fn key(&self, addr: u64) -> u64 {
        self.base.saturating_add(addr - self.lo)
    }
}

/// The shared objects of a run (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct Objects {
    /// Disjoint, by epoch and address.
    regions: Vec<Region>,
    /// Every object's start and the end of the last one, as keys ([`Region::key`]), increasing:
    /// object `i` is `[cuts[i], cuts[i + 1])`. A region's end is the next region's start.
    cuts: Vec<u64>,
}

/// A list that keeps its distinct items, sorting them when it has grown to twice their number,
/// so that what a thread touches in every segment is held once, not once per segment.
struct Distinct<T> {
    items: Vec<T>,
    sorted: usize,
}

impl<T: Ord + Copy> Distinct<T> {
    fn new() -> Distinct<T> {
        Distinct {
            items: Vec::new(),
            sorted: 0,
        }
    }

    fn push(&mut self, item: T, compact: impl Fn(&mut Vec<T>)) {
        self.items.push(item);
        if self.items.len() >= (2 * self.sorted).max(1 << 16) {
            compact(&mut self.items);
            self.sorted = self.items.len();
        }
    }
}

/// Sorted, disjoint union of half-open ranges of each epoch (touching ranges merged).
fn merge(ranges: &mut Vec<(u32, u64, u64)>) {
    ranges.sort_unstable();
    let mut out = 0;
    for i in 0..ranges.len() {
        let (epoch, lo, hi) = ranges[i];
        if out > 0 && epoch == ranges[out - 1].0 && lo <= ranges[out - 1].2 {
            ranges[out - 1].2 = ranges[out - 1].2.max(hi);
        } else {
            ranges[out] = (epoch, lo, hi);
            out += 1;
        }
    }
    ranges.truncate(out);
}

fn dedup(keys: &mut Vec<u64>) {
    keys.sort_unstable();
    keys.dedup();
}

impl Objects {
    pub fn of(traces: &[ThreadTrace], lifetimes: &Lifetimes) -> Objects {
        let regions = regions(traces, lifetimes);
        let mut objects = Objects {
            regions,
            cuts: Vec::new(),
        };
        let mut cuts = Distinct::new();
        for r in &objects.regions {
            cuts.push(r.base, dedup);
            cuts.push(r.key(r.hi), dedup);
        }
        for t in traces {
            for (_, access) in accesses(t, lifetimes) {
                let Some((a, epoch)) = access else { continue };
                let (lo, hi) = span(&a);
                if lo >= hi {
                    continue;
                }
                for end in [lo, hi] {
                    if let Some(r) = objects.inside(epoch, end) {
                        cuts.push(r.key(end), dedup);
                    }
                }
            }
        }
        dedup(&mut cuts.items);
        cuts.items.shrink_to_fit();
        objects.cuts = cuts.items;
        objects
    }

    /// The region `addr` of `epoch` lies strictly inside (not at its start).
    fn inside(&self, epoch: u32, addr: u64) -> Option<&Region> {
        let i = self
            .regions
            .partition_point(|r| (r.epoch, r.hi) <= (epoch, addr));
        self.regions
            .get(i)
            .filter(|r| r.epoch == epoch && r.lo < addr)
    }

    pub fn len(&self) -> usize {
        self.cuts.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Object `i`.
    pub fn get(&self, i: usize) -> SharedObject {
        let key = self.cuts[i];
        let r = &self.regions[self.regions.partition_point(|r| r.base <= key) - 1];
        SharedObject {
            addr: r.lo + (key - r.base),
            len: self.cuts[i + 1] - key,
            epoch: r.epoch,
        }
    }

    /// Every object, in order.
    pub fn all(&self) -> Vec<SharedObject> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    /// The objects the bytes `[lo, hi)` of `epoch` touch; `hint` is where the last search ended
    /// (walks touch nearby objects one after another).
    pub fn touched(&self, epoch: u32, lo: u64, hi: u64, hint: &mut usize) -> Range<usize> {
        let first = self
            .regions
            .partition_point(|r| (r.epoch, r.hi) <= (epoch, lo));
        let end = self
            .regions
            .partition_point(|r| (r.epoch, r.lo) < (epoch, hi));
        if first >= end {
            return 0..0;
        }
        let (a, b) = (&self.regions[first], &self.regions[end - 1]);
        // Both are cuts: an access end inside a region is one, and so is every region end.
        let from = find(&self.cuts, a.key(lo.max(a.lo)), hint);
        let to = find(&self.cuts, b.key(hi.min(b.hi)), hint);
        from..to
    }
}

/// The index of the first of `sorted` not below `key`, searched outward from `*hint`, which it
/// then holds.
fn find(sorted: &[u64], key: u64, hint: &mut usize) -> usize {
    let at = (*hint).min(sorted.len());
    let (mut lo, mut hi);
    if at < sorted.len() && sorted[at] < key {
        // Forward: gallop until past the key.
        let mut step = 1;
        lo = at + 1;
        hi = at + 1;
        while hi < sorted.len() && sorted[hi] < key {
            lo = hi + 1;
            hi = hi.saturating_add(step).min(sorted.len());
            step *= 2;
        }
    } else {
        // Backward: the key is at `at` or before.
        let mut step = 1;
        hi = at;
        lo = at;
        while lo > 0 && sorted[lo - 1] >= key {
            hi = lo - 1;
            lo = lo.saturating_sub(step);
            step *= 2;
        }
    }
    let i = lo + sorted[lo..hi].partition_point(|&c| c < key);
    *hint = i;
    i
}

/// The shared regions: where at least two threads' merged touched ranges and one thread's merged
/// written ranges overlap, per epoch, adjacent pieces joined.
fn regions(traces: &[ThreadTrace], lifetimes: &Lifetimes) -> Vec<Region> {
    // Sweep over boundaries, per epoch: +1/-1 for each thread's merged touched ranges and written
    // ranges. Merging per thread first makes "open touched ranges" count distinct threads.
    let mut bounds: Vec<(u32, u64, i32, i32)> = Vec::new();
    for t in traces {
        let (mut any, mut written) = (Distinct::new(), Distinct::new());
        for (_, access) in accesses(t, lifetimes) {
            let Some((a, epoch)) = access else { continue };
            let (lo, hi) = span(&a);
            if lo < hi {
                any.push((epoch, lo, hi), merge);
                if a.kind.is_write() {
                    written.push((epoch, lo, hi), merge);
                }
            }
        }
        merge(&mut any.items);
        merge(&mut written.items);
        for &(epoch, lo, hi) in &any.items {
            bounds.push((epoch, lo, 1, 0));
            bounds.push((epoch, hi, -1, 0));
        }
        for &(epoch, lo, hi) in &written.items {
            bounds.push((epoch, lo, 0, 1));
            bounds.push((epoch, hi, 0, -1));
        }
    }
    bounds.sort_unstable();
    let mut regions: Vec<Region> = Vec::new();
    let (mut threads, mut writers) = (0i32, 0i32);
    let mut i = 0;
    while i < bounds.len() {
        let (epoch, addr) = (bounds[i].0, bounds[i].1);
        while i < bounds.len() && (bounds[i].0, bounds[i].1) == (epoch, addr) {
            threads += bounds[i].2;
            writers += bounds[i].3;
            i += 1;
        }
        // Every epoch's counts return to zero at its last boundary.
        let Some(&(next_epoch, next, _, _)) = bounds.get(i) else {
            break;
        };
        if next_epoch == epoch && threads >= 2 && writers >= 1 {
            match regions.last_mut() {
                Some(r) if r.epoch == epoch && r.hi == addr => r.hi = next,
                _ => regions.push(Region {
                    epoch,
                    lo: addr,
                    hi: next,
                    base: 0,
                }),
            }
        }
    }
    // The regions' bytes together are fewer than the accesses' (each region lies in their
    // union), which are fewer than 2^64 for any trace of fewer than 2^32 records.
    let mut base = 0u64;
    for r in &mut regions {
        r.base = base;
        base = base.saturating_add(r.hi - r.lo);
    }
    regions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_searches_outward_from_the_hint() {
        let sorted: Vec<u64> = (0..100).map(|i| 3 * i).collect();
        for hint in [0, 1, 17, 50, 99, 100, 1000] {
            for key in [0, 1, 3, 4, 150, 297, 298, 400] {
                let mut h = hint;
                let got = find(&sorted, key, &mut h);
                assert_eq!(got, sorted.partition_point(|&c| c < key), "{hint} {key}");
                assert_eq!(h, got);
            }
        }
        assert_eq!(find(&[], 5, &mut 3), 0);
    }

    #[test]
    fn merge_joins_overlapping_and_touching_ranges_of_one_epoch() {
        let mut r = vec![
            (1, 10, 20),
            (0, 5, 6),
            (1, 20, 25),
            (1, 30, 31),
            (1, 12, 14),
        ];
        merge(&mut r);
        assert_eq!(r, vec![(0, 5, 6), (1, 10, 25), (1, 30, 31)]);
    }
}
