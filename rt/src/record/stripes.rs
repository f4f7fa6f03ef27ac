//! The locks that keep an atomic operation and its number together.
//!
//! Takes the address of an atomic operation that acquires or releases; gives a spin lock of the
//! stripe the address hashes to, held by the recording thread from just before the instruction
//! to just after it, while it numbers what it did (`thread::Inner::atomic_leave`). Two such
//! operations on one address are then numbered in the order they took effect: a release is
//! numbered after its store and before any load that reads it takes the counter's value, so the
//! trace says exactly which release each acquire read from (or a later one of its release
//! sequence), the spinning load that first saw a flag set included. Relaxed operations take no
//! lock: they order nothing.
//!
//! Each stripe also keeps, under its lock, the number of the last release recorded on any of its
//! addresses and whether an acquire was recorded on one since ([`last`]): a thread compares them
//! with what it saw there last to leave out the records that would order nothing new
//! (`thread::Inner::atomic_leave`).
//!
//! A stripe that has had [`BUDGET`] releases recorded is hot (a reference count, most likely):
//! from then on its operations are recorded as relaxed ones, which order nothing, and take no
//! lock ([`hot`]). Its edges are lost, which costs refuted candidates, never a race: an edge the
//! run did not have could hide one, so the acquires stop with the releases (an acquire recorded
//! after an unrecorded release would read an older release's clock).
//!
//! Only the one instruction runs under a lock, and a thread holds one lock at a time (an atomic
//! operation in a signal handler that interrupted it takes none), so no lock waits on another;
//! a waiter gives up after a while all the same ([`lock`]).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Stripes: a power of two.
const STRIPES: usize = 1024;

/// Releases recorded on a stripe before it is hot: 4 threads copying one `std::shared_ptr`
/// 10^6 times each recorded 193 MB of them.
pub(crate) const BUDGET: u32 = 1 << 16;

#[repr(align(64))]
struct Stripe {
    lock: AtomicBool,
    /// One more than the last release's number (so that 0 is none) shifted left once, the low bit set once an acquire was recorded
    /// after it. Read and written only under `lock`, which orders it: relaxed.
    last: AtomicU64,
    /// Releases recorded on it, written under `lock`; at [`BUDGET`] the stripe is hot.
    releases: AtomicU32,
}

static LOCKS: [Stripe; STRIPES] = [const {
    Stripe {
        lock: AtomicBool::new(false),
        last: AtomicU64::new(0),
        releases: AtomicU32::new(0),
    }
}; STRIPES];

/// The stripe of `addr`: the atomics of one 8-byte word share one.
#[inline]
pub(crate) fn of(addr: u64) -> usize {
    ((addr >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as usize % STRIPES
}

/// Turns a waiter yields the processor before it gives up.
const PATIENCE: u32 = 1000;

/// Takes stripe `s`, waiting while another thread holds it (for one instruction, unless it was
/// preempted there); false if it gave up after [`PATIENCE`] turns: a holder that left its
/// operation without the second hook (a signal handler that jumped out of it) must not hang the
/// others, whose operations then order nothing, as relaxed ones.
#[inline]
pub(crate) fn lock(s: usize) -> bool {
    let l = &LOCKS[s].lock;
    for turn in 0..=PATIENCE {
        if l.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            return true;
        }
        for _ in 0..64 {
            if !l.load(Ordering::Relaxed) {
                break;
            }
            std::hint::spin_loop();
        }
        if turn > 0 {
            std::thread::yield_now();
        }
    }
    false
}

/// Gives stripe `s` back.
#[inline]
pub(crate) fn unlock(s: usize) {
    LOCKS[s].lock.store(false, Ordering::Release);
}

/// Stripe `s`'s last release (one more than its number, 0 before any) and whether an acquire was recorded on
/// it since; `s` held.
#[inline]
pub(crate) fn last(s: usize) -> (u64, bool) {
    let v = LOCKS[s].last.load(Ordering::Relaxed);
    (v >> 1, v & 1 != 0)
}

/// A release numbered `seq` was recorded on stripe `s`, held.
#[inline]
pub(crate) fn note_release(s: usize, seq: u64) {
    let stripe = &LOCKS[s];
    stripe.last.store((seq + 1) << 1, Ordering::Relaxed);
    let n = stripe.releases.load(Ordering::Relaxed);
    stripe.releases.store(n + 1, Ordering::Relaxed);
}

/// Whether stripe `s` is hot: its operations are recorded as relaxed ones. Exact with `s` held;
/// without, a hint that may come late (the holder then checks again).
#[inline]
pub(crate) fn hot(s: usize) -> bool {
    LOCKS[s].releases.load(Ordering::Relaxed) >= BUDGET
}

/// An acquire was recorded on stripe `s`, held.
#[inline]
pub(crate) fn note_acquire(s: usize) {
    let last = &LOCKS[s].last;
    last.store(last.load(Ordering::Relaxed) | 1, Ordering::Relaxed);
}
