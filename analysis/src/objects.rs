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
//! Two walks over the accesses, each thread's on a core of its own, neither holding them: the
//! first merges each thread's touched and written ranges (per epoch), and where at least two
//! threads' touched ranges and one thread's written ranges overlap is a shared region; the second
//! marks every access end inside a region, in a bitmap of the regions' bytes laid end to end (one
//! more walk per further [`BATCH`] bytes). The first walk also keeps the distinct access ends
//! while they are few ([`ENDS`]): then the marks come from them and the second walk is not
//! needed (a lock loop over a few thousand shared objects touches a few thousand places 10^8
//! times). An object is then the bytes between two consecutive ends, and costs 8 bytes: the cut
//! where it begins, as an offset into the regions laid end to end (zstd's run has 15 million
//! objects).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use ilgen_trace::format::ThreadTrace;
use rayon::prelude::*;
use rustc_hash::FxHashSet;

use crate::lifetime::{accesses, span, Lifetimes, NO_EPOCH};

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
    /// Every object's start and the end of the last one, as keys ([`Region::key`]): object `i`
    /// is from cut `i` to cut `i + 1`. A region's end is the next region's start.
    cuts: Cuts,
}

/// The cuts, whichever way takes less memory.
#[derive(Clone, Debug)]
enum Cuts {
    /// A bit per key, set at the cuts, and the number of cuts before every eighth word: a cut's
    /// index is a count. zstd's regions have 25 MB for 15 million cuts: 3 MB, and an access
    /// finds its objects without a search.
    Bits {
        words: Vec<u64>,
        before: Vec<u32>,
        count: usize,
    },
    /// The keys, increasing: for regions much larger than their cuts are many.
    Sorted(Vec<u64>),
}

impl Default for Cuts {
    fn default() -> Cuts {
        Cuts::Sorted(Vec::new())
    }
}

impl Cuts {
    /// The bits of keys `0..words.len() * 64`, with the number of cuts before every eighth word.
    fn bits(words: Vec<u64>) -> Cuts {
        let mut before = Vec::with_capacity(words.len().div_ceil(8));
        let mut count = 0;
        for block in words.chunks(8) {
            before.push(u32::try_from(count).expect("fewer than 2^32 shared objects"));
            count += block.iter().map(|w| w.count_ones() as usize).sum::<usize>();
        }
        Cuts::Bits {
            words,
            before,
            count,
        }
    }

    fn len(&self) -> usize {
        match self {
            Cuts::Bits { count, .. } => *count,
            Cuts::Sorted(keys) => keys.len(),
        }
    }

    /// The index of the cut `key` (which is a cut); `hint` is where the last search ended.
    fn index(&self, key: u64, hint: &mut usize) -> usize {
        match self {
            Cuts::Bits { words, before, .. } => {
                let (w, bit) = ((key / 64) as usize, key % 64);
                let block = w / 8;
                before[block] as usize
                    + words[block * 8..w]
                        .iter()
                        .map(|x| x.count_ones() as usize)
                        .sum::<usize>()
                    + (words[w] & ((1 << bit) - 1)).count_ones() as usize
            }
            Cuts::Sorted(keys) => find(keys, key, hint),
        }
    }

    /// The key of cut `i`.
    fn key(&self, i: usize) -> u64 {
        match self {
            Cuts::Bits { words, before, .. } => {
                let block = before.partition_point(|&b| b as usize <= i) - 1;
                let mut left = i - before[block] as usize;
                for (w, &word) in words.iter().enumerate().skip(block * 8) {
                    let ones = word.count_ones() as usize;
                    if left < ones {
                        let mut word = word;
                        for _ in 0..left {
                            word &= word - 1;
                        }
                        return w as u64 * 64 + u64::from(word.trailing_zeros());
                    }
                    left -= ones;
                }
                panic!("cut {i} of fewer")
            }
            Cuts::Sorted(keys) => keys[i],
        }
    }
}

/// One thread's touched (or written) ranges, per epoch: a range that overlaps or touches the last
/// one grows it (a sweep is one range), one inside the ranges merged so far is dropped, and the
/// list is merged again whenever it has doubled, so that what a thread touches in every segment
/// is held once.
#[derive(Default)]
struct Ranges {
    items: Vec<(u32, u64, u64)>,
    /// The first `merged` items are sorted and disjoint.
    merged: usize,
}

impl Ranges {
    fn add(&mut self, epoch: u32, lo: u64, hi: u64) {
        if let Some(last) = self.items.last_mut() {
            if last.0 == epoch && lo <= last.2 && last.1 <= hi {
                last.1 = last.1.min(lo);
                last.2 = last.2.max(hi);
                return;
            }
        }
        let merged = &self.items[..self.merged];
        let i = merged.partition_point(|r| (r.0, r.2) < (epoch, hi));
        if merged.get(i).is_some_and(|r| r.0 == epoch && r.1 <= lo) {
            return;
        }
        self.items.push((epoch, lo, hi));
        if self.items.len() >= (2 * self.merged).max(1 << 16) {
            merge(&mut self.items);
            self.merged = self.items.len();
        }
    }

    fn merged(mut self) -> Vec<(u32, u64, u64)> {
        merge(&mut self.items);
        self.items
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

/// Bytes of the regions whose cuts one walk collects: in a bitmap of 128 MiB, a bit per byte.
const BATCH: u64 = 1 << 30;

/// Distinct access ends the first walk keeps, over all threads (16 bytes each, 4 MiB): a run
/// whose threads each touch fewer than their share of them needs no second walk.
const ENDS: usize = 1 << 18;

/// The distinct ends, by epoch, of one thread's accesses, while there are at most a given number.
struct Ends {
    seen: Option<FxHashSet<(u32, u64)>>,
    cap: usize,
    /// The last access's: a loop touches the same places again and again.
    last: (u32, u64, u64),
}

impl Ends {
    fn new(cap: usize) -> Ends {
        Ends {
            seen: Some(FxHashSet::default()),
            cap,
            last: (NO_EPOCH, 0, 0),
        }
    }

    fn add(&mut self, epoch: u32, lo: u64, hi: u64) {
        let Some(seen) = &mut self.seen else { return };
        if (epoch, lo, hi) == self.last {
            return;
        }
        self.last = (epoch, lo, hi);
        seen.insert((epoch, lo));
        seen.insert((epoch, hi));
        if seen.len() > self.cap {
            self.seen = None;
        }
    }
}

impl Objects {
    pub fn of(traces: &[ThreadTrace], lifetimes: &Lifetimes) -> Objects {
        Objects::in_batches(traces, lifetimes, BATCH, ENDS)
    }

    /// [`Objects::of`], collecting the cuts of `batch` bytes of the regions a walk, or from the
    /// ends of the first walk when no thread's accesses have more than its share of `ends`
    /// distinct ones.
    fn in_batches(
        traces: &[ThreadTrace],
        lifetimes: &Lifetimes,
        batch: u64,
        ends: usize,
    ) -> Objects {
        let (regions, ends) = regions(traces, lifetimes, ends);
        let mut objects = Objects {
            regions,
            cuts: Cuts::default(),
        };
        let Some(last) = objects.regions.last() else {
            return objects;
        };
        // Keys run from 0 to the last region's end; each walk collects a batch of them.
        let end = last.key(last.hi);
        let mut keys = Vec::new();
        let mut from = 0;
        while from <= end {
            let to = from.saturating_add(batch).min(end + 1);
            // The threads are walked on all cores, into one bitmap: a bit once set stays set,
            // whichever thread set it.
            let shared: Vec<AtomicU64> = (0..(to - from).div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect();
            let cut = |key: u64| {
                if (from..to).contains(&key) {
                    let (k, bit) = (key - from, 1 << ((key - from) % 64));
                    let word = &shared[(k / 64) as usize];
                    // A sweep ends at the same places again and again: no write once set.
                    if word.load(Ordering::Relaxed) & bit == 0 {
                        word.fetch_or(bit, Ordering::Relaxed);
                    }
                }
            };
            for r in &objects.regions {
                cut(r.base);
                cut(r.key(r.hi));
            }
            let mut hint = 0;
            match &ends {
                Some(ends) => {
                    for &(epoch, end) in ends {
                        if let Some(r) = objects.inside(epoch, end, &mut hint) {
                            cut(r.key(end));
                        }
                    }
                }
                None => traces.par_iter().for_each(|t| {
                    let mut hint = 0;
                    for (_, access) in accesses(t, lifetimes) {
                        let Some((a, epoch)) = access else { continue };
                        let (lo, hi) = span(&a);
                        if lo >= hi {
                            continue;
                        }
                        for end in [lo, hi] {
                            if let Some(r) = objects.inside(epoch, end, &mut hint) {
                                cut(r.key(end));
                            }
                        }
                    }
                }),
            }
            let words: Vec<u64> = shared.into_iter().map(AtomicU64::into_inner).collect();
            // One batch whose bits take no more than its keys would: kept as they are.
            let count: usize = words.iter().map(|w| w.count_ones() as usize).sum();
            if from == 0 && to == end + 1 && words.len() <= count {
                objects.cuts = Cuts::bits(words);
                return objects;
            }
            for (w, &word) in words.iter().enumerate() {
                let mut word = word;
                while word != 0 {
                    keys.push(from + w as u64 * 64 + u64::from(word.trailing_zeros()));
                    word &= word - 1;
                }
            }
            from = to;
        }
        keys.shrink_to_fit();
        objects.cuts = Cuts::Sorted(keys);
        objects
    }

    /// The index of the first region that ends after `addr` of `epoch`, looking at `*hint` first.
    fn region(&self, epoch: u32, addr: u64, hint: &mut usize) -> usize {
        let regions = &self.regions;
        let h = *hint;
        let after = |i: usize| (regions[i].epoch, regions[i].hi) > (epoch, addr);
        let i = if h < regions.len() && after(h) && (h == 0 || !after(h - 1)) {
            h
        } else {
            regions.partition_point(|r| (r.epoch, r.hi) <= (epoch, addr))
        };
        *hint = i;
        i
    }

    /// The region `addr` of `epoch` lies strictly inside (not at its start).
    fn inside(&self, epoch: u32, addr: u64, hint: &mut usize) -> Option<&Region> {
        let i = self.region(epoch, addr, hint);
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
        let key = self.cuts.key(i);
        let r = &self.regions[self.regions.partition_point(|r| r.base <= key) - 1];
        SharedObject {
            addr: r.lo + (key - r.base),
            len: self.cuts.key(i + 1) - key,
            epoch: r.epoch,
        }
    }

    /// Every object, in order.
    pub fn all(&self) -> Vec<SharedObject> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    /// The objects the bytes `[lo, hi)` of `epoch` touch; `hint` is where the last search ended
    /// (a walk touches nearby objects one after another).
    pub fn touched(&self, epoch: u32, lo: u64, hi: u64, hint: &mut Hint) -> Range<usize> {
        let first = self.region(epoch, lo, &mut hint.region);
        let Some(a) = self
            .regions
            .get(first)
            .filter(|r| r.epoch == epoch && r.lo < hi)
        else {
            return 0..0;
        };
        // Most accesses lie in one region.
        let last = if hi <= a.hi {
            first
        } else {
            self.regions
                .partition_point(|r| (r.epoch, r.lo) < (epoch, hi))
                - 1
        };
        let b = &self.regions[last];
        // Both are cuts: an access end inside a region is one, and so is every region end.
        let from = self.cuts.index(a.key(lo.max(a.lo)), &mut hint.cut);
        let to = self.cuts.index(b.key(hi.min(b.hi)), &mut hint.cut);
        from..to
    }
}

/// Where a walk's last search of [`Objects::touched`] ended.
#[derive(Clone, Copy, Debug, Default)]
pub struct Hint {
    region: usize,
    cut: usize,
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
/// written ranges overlap, per epoch, adjacent pieces joined; with every access's ends, sorted,
/// if no thread has more than its share of `ends` distinct ones.
fn regions(
    traces: &[ThreadTrace],
    lifetimes: &Lifetimes,
    ends: usize,
) -> (Vec<Region>, Option<Vec<(u32, u64)>>) {
    // Sweep over boundaries, per epoch: +1/-1 for each thread's merged touched ranges and written
    // ranges. Merging per thread first makes "open touched ranges" count distinct threads.
    // Each thread's ranges are its own: the threads are walked on all cores.
    let merged: Vec<_> = traces
        .par_iter()
        .map(|t| {
            let (mut any, mut written) = (Ranges::default(), Ranges::default());
            let mut seen = Ends::new(ends / traces.len());
            for (_, access) in accesses(t, lifetimes) {
                let Some((a, epoch)) = access else { continue };
                let (lo, hi) = span(&a);
                if lo < hi {
                    seen.add(epoch, lo, hi);
                    any.add(epoch, lo, hi);
                    if a.kind.is_write() {
                        written.add(epoch, lo, hi);
                    }
                }
            }
            (any.merged(), written.merged(), seen.seen)
        })
        .collect();
    let mut bounds: Vec<(u32, u64, i32, i32)> = Vec::new();
    let mut all_ends = Some(FxHashSet::default());
    for (any, written, seen) in merged {
        all_ends = all_ends.zip(seen).map(|(mut all, seen)| {
            all.extend(seen);
            all
        });
        for (epoch, lo, hi) in any {
            bounds.push((epoch, lo, 1, 0));
            bounds.push((epoch, hi, -1, 0));
        }
        for (epoch, lo, hi) in written {
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
    let ends = all_ends.map(|all| {
        let mut ends: Vec<(u32, u64)> = all.into_iter().collect();
        ends.sort_unstable();
        ends
    });
    (regions, ends)
}

#[cfg(test)]
mod tests {
    use ilgen_trace::format::ThreadTrace;
    use ilgen_trace::{Access, AccessKind, Event, Heap, HeapOp, Sync, SyncOp};
    use proptest::prelude::*;

    use super::*;

    /// The objects by their definition: every access end is a boundary, and a piece between two
    /// boundaries of one epoch is an object where two threads' accesses meet, one writing.
    fn naive(traces: &[ThreadTrace], lifetimes: &Lifetimes) -> Vec<SharedObject> {
        let mut ends: Vec<(u32, u64)> = Vec::new();
        let mut touches: Vec<(usize, u32, u64, u64, bool)> = Vec::new();
        for (t, trace) in traces.iter().enumerate() {
            for (_, access) in accesses(trace, lifetimes) {
                let Some((a, epoch)) = access else { continue };
                let (lo, hi) = span(&a);
                if lo < hi {
                    ends.extend([(epoch, lo), (epoch, hi)]);
                    touches.push((t, epoch, lo, hi, a.kind.is_write()));
                }
            }
        }
        ends.sort_unstable();
        ends.dedup();
        ends.windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .filter_map(|w| {
                let (epoch, lo, hi) = (w[0].0, w[0].1, w[1].1);
                let meet = touches
                    .iter()
                    .filter(|&&(_, e, l, h, _)| e == epoch && l < hi && lo < h);
                let mut threads: Vec<usize> = meet.clone().map(|x| x.0).collect();
                threads.sort_unstable();
                threads.dedup();
                (threads.len() >= 2 && meet.clone().any(|x| x.4)).then_some(SharedObject {
                    addr: lo,
                    len: hi - lo,
                    epoch,
                })
            })
            .collect()
    }

    /// A thread's events from (op, addr, size): op 0-3 an access of that kind, 4 an unlock (a
    /// segment ends), 5 an allocation and 6 a free of the block at 0x1000.
    fn thread(tid: u32, ops: &[(u8, u64, u32)], seq: &mut u64) -> ThreadTrace {
        let kinds = [
            AccessKind::Read,
            AccessKind::Write,
            AccessKind::AtomicRead,
            AccessKind::AtomicWrite,
        ];
        let events = ops
            .iter()
            .map(|&(op, addr, size)| {
                *seq += 1;
                let block = (0x1000, 0x40);
                match op {
                    0..=3 => Event::Access(Access {
                        addr: 0x1000 + addr,
                        size,
                        site: 1,
                        kind: kinds[usize::from(op)],
                    }),
                    4 => Event::Sync(Sync {
                        seq: *seq,
                        site: 2,
                        op: SyncOp::MutexUnlock { mutex: 0x10 },
                    }),
                    _ => Event::Heap(Heap {
                        seq: *seq,
                        site: 3,
                        op: match op {
                            5 => HeapOp::Alloc {
                                addr: block.0,
                                size: block.1,
                            },
                            _ => HeapOp::Free {
                                addr: block.0,
                                size: block.1,
                            },
                        },
                    }),
                }
            })
            .collect::<Vec<_>>();
        crate::testkit::thread(tid, events)
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 1000,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Objects by cuts in a bitmap (in batches of 7 bytes too), and the objects each access
        /// touches, as the definition gives them.
        #[test]
        fn objects_and_what_each_access_touches_are_as_defined(
            threads in proptest::collection::vec(
                proptest::collection::vec((0u8..7, 0u64..0x50, 0u32..12), 0..24),
                1..4,
            ),
        ) {
            let mut seq = 0;
            let traces: Vec<ThreadTrace> = threads
                .iter()
                .enumerate()
                .map(|(t, ops)| thread(t as u32, ops, &mut seq))
                .collect();
            let lifetimes = Lifetimes::of(&traces);
            let want = naive(&traces, &lifetimes);
            for (batch, ends) in [(BATCH, ENDS), (BATCH, 0), (7, ENDS), (7, 12)] {
                let objects = Objects::in_batches(&traces, &lifetimes, batch, ends);
                prop_assert_eq!(&objects.all(), &want);
                for trace in &traces {
                    let mut hint = Hint::default();
                    for (_, access) in accesses(trace, &lifetimes) {
                        let Some((a, epoch)) = access else { continue };
                        let (lo, hi) = span(&a);
                        // An empty access (the runtime records none) touches nothing.
                        let touched: Vec<usize> = (0..want.len())
                            .filter(|_| lo < hi)
                            .filter(|&i| {
                                let o = want[i];
                                o.epoch == epoch && o.addr < hi && lo < o.addr + o.len
                            })
                            .collect();
                        let got: Vec<usize> = objects.touched(epoch, lo, hi, &mut hint).collect();
                        prop_assert_eq!(got, touched);
                    }
                }
            }
        }
    }

    #[test]
    fn cuts_as_bits_and_as_keys_give_the_same_indices() {
        // Every third key up to 1000, then sparse ones, over many blocks of eight words.
        let keys: Vec<u64> = (0..1000)
            .step_by(3)
            .chain((1000..9000).step_by(997))
            .collect();
        let mut words = vec![0u64; 9000 / 64 + 1];
        for &k in &keys {
            words[(k / 64) as usize] |= 1 << (k % 64);
        }
        let (bits, sorted) = (Cuts::bits(words), Cuts::Sorted(keys.clone()));
        assert_eq!((bits.len(), sorted.len()), (keys.len(), keys.len()));
        let mut hint = 0;
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!((bits.index(k, &mut 0), sorted.index(k, &mut hint)), (i, i));
            assert_eq!((bits.key(i), sorted.key(i)), (k, k));
        }
    }

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
