//! What only a report needs of a shadow cell, kept apart from the cell: the stack and held locks
//! of its access, and where the access lay when the cell's byte mask does not say it.
//!
//! Takes, from `shadow`, the report-only part of each cell it stores ([`Detail`]); gives a 32-bit
//! index ([`keep`]) that the cell keeps instead, and the part back from the index ([`get`]), for
//! the earlier access of a race report and for nothing else, so that a granule's cells are 16
//! bytes each, kept in place, and a check reads no other memory. Parts are kept in one
//! append-only table for the whole run (a replay is one run; nothing is removed, as in `depot`),
//! 24 bytes each, in chunks that double in size and never move, so that any thread reads one while
//! others append. An index is published with the cell that names it (in a section on its granule,
//! see `shadow`), so whoever reads the cell finds the part written.
//!
//! Each thread remembers the parts it kept last ([`RECENT`] of them, by a hash of the part), so
//! the cells of one stack and lock set share an index, and so do the granules of one long access
//! ([`Place::Far`]). The table then grows with the distinct stacks, lock sets and placements of
//! the accesses stored, and with the long accesses: not with each access.

use std::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use crate::replay::owners::HoldsId;
use crate::replay::stack::StackId;

/// Where a cell's access lay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// Exactly the bytes of the cell's mask in its granule (an access within one granule, or a
    /// run of them widened into one cell).
    Mask,
    /// `size` bytes from `from` bytes after the start of the cell's granule (before it when
    /// negative): a short access over two or more granules, which shares its part with the other
    /// accesses of its stack at that offset and size.
    Near { from: i32, size: u32 },
    /// `size` bytes at `addr`: a long access (a copy, a free), one part for all its granules.
    Far { addr: u64, size: u32 },
}

/// A cell's report-only part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Detail {
    pub stack: StackId,
    pub locks: HoldsId,
    pub place: Place,
}

/// Accesses of at most this many bytes over several granules are [`Place::Near`].
pub(crate) const NEAR: u64 = 64;

/// Chunk `k` holds `1 << (FIRST + k)` parts, the indices after those of the chunks before it;
/// [`CHUNKS`] of them hold every `u32` index.
const FIRST: u32 = 10;
const CHUNKS: usize = 23;

static TABLE: [AtomicPtr<Detail>; CHUNKS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNKS];
/// The next index to give.
static NEXT: AtomicU32 = AtomicU32::new(0);

/// Parts each thread remembers (direct-mapped by a hash of the part).
const RECENT: usize = 64;

thread_local! {
    static KEPT: [std::cell::Cell<Option<(Detail, u32)>>; RECENT] =
        const { [const { std::cell::Cell::new(None) }; RECENT] };
}

/// The chunk and the position in it of index `i`.
fn locate(i: u32) -> (usize, usize) {
    let j = u64::from(i) + (1 << FIRST);
    let k = 63 - j.leading_zeros() - FIRST;
    (k as usize, (j - (1 << (FIRST + k))) as usize)
}

fn chunk_layout(k: usize) -> Layout {
    Layout::array::<Detail>(1 << (FIRST as usize + k)).expect("a chunk fits a layout")
}

/// Chunk `k`, allocated and published first if missing.
fn chunk(k: usize) -> *mut Detail {
    let p = TABLE[k].load(Ordering::Acquire);
    if !p.is_null() {
        return p;
    }
    publish(&TABLE[k], chunk_layout(k))
}

/// The index of `d`: one the calling thread kept it under lately, else a new one.
pub(crate) fn keep(d: Detail) -> u32 {
    let slot = hash(&d) % RECENT;
    if let Ok(Some((seen, i))) = KEPT.try_with(|k| k[slot].get()) {
        if seen == d {
            return i;
        }
    }
    // 2^32 parts would take 96 GiB: the run ends for want of memory long before the index wraps.
    let i = NEXT.fetch_add(1, Ordering::Relaxed);
    let (k, at) = locate(i);
    // SAFETY: `at` is inside chunk `k`, and index `i` was given to this call alone.
    unsafe { chunk(k).add(at).write(d) };
    let _ = KEPT.try_with(|k| k[slot].set(Some((d, i))));
    i
}

/// The part kept under `i` (by [`keep`], before the cell naming it was published).
pub(crate) fn get(i: u32) -> Detail {
    let (k, at) = locate(i);
    let p = TABLE[k].load(Ordering::Acquire);
    assert!(!p.is_null(), "detail {i} was never kept");
    // SAFETY: written by `keep` before the index was handed out, and never written again.
    unsafe { p.add(at).read() }
}

fn hash(d: &Detail) -> usize {
    let (a, b) = match d.place {
        Place::Mask => (0, 0),
        Place::Near { from, size } => (from as u32 as u64, u64::from(size)),
        Place::Far { addr, size } => (addr, u64::from(size)),
    };
    let h = (u64::from(d.stack) << 32 | u64::from(d.locks)) ^ a.rotate_left(17) ^ b.rotate_left(41);
    (h.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize
}

/// Allocates zeroed memory of `layout` (a non-zero size) for `slot` to point to and publishes it
/// ([`install`]); the loser of two threads frees its own. (The shadow's mid-level tables use it
/// too.)
pub(super) fn publish<T>(slot: &AtomicPtr<T>, layout: Layout) -> *mut T {
    // SAFETY: a non-zero size (both tables, and the detail table's chunks).
    let new = unsafe { alloc_zeroed(layout) }.cast::<T>();
    if new.is_null() {
        handle_alloc_error(layout);
    }
    // SAFETY: `new` was allocated above with `layout` and never published.
    install(slot, new, |new| unsafe { dealloc(new.cast(), layout) })
}

/// Publishes `new` for `slot`, null until then, by one compare-exchange; of two threads that both
/// made one, the loser gives its own to `lost`. Gives what `slot` points to.
pub(super) fn install<T>(slot: &AtomicPtr<T>, new: *mut T, lost: impl FnOnce(*mut T)) -> *mut T {
    match slot.compare_exchange(
        std::ptr::null_mut(),
        new,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => new,
        Err(won) => {
            lost(new);
            won
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_hold_consecutive_indices_without_gaps() {
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(1023), (0, 1023));
        assert_eq!(locate(1024), (1, 0));
        assert_eq!(locate(3071), (1, 2047));
        assert_eq!(locate(3072), (2, 0));
        assert_eq!(locate(u32::MAX).0, CHUNKS - 1);
    }

    #[test]
    fn a_part_kept_again_shares_its_index_and_reads_back() {
        let near = Detail {
            stack: 7,
            locks: 3,
            place: Place::Near { from: -8, size: 16 },
        };
        let far = Detail {
            place: Place::Far {
                addr: 0x5000,
                size: 4096,
            },
            ..near
        };
        let (a, b) = (keep(near), keep(far));
        assert_ne!(a, b);
        assert_eq!(keep(near), a);
        assert_eq!((get(a), get(b)), (near, far));
        // Enough distinct parts to fill a few chunks, each read back as kept.
        let many: Vec<_> = (0..5000u32)
            .map(|n| {
                let d = Detail {
                    stack: n,
                    locks: 0,
                    place: Place::Mask,
                };
                (keep(d), d)
            })
            .collect();
        assert!(many.iter().all(|&(i, d)| get(i) == d));
    }
}
