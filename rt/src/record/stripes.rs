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
//! Only the one instruction runs under a lock, and a thread holds one lock at a time (an atomic
//! operation in a signal handler that interrupted it takes none), so no lock waits on another;
//! a waiter gives up after a while all the same ([`lock`]).

use std::sync::atomic::{AtomicBool, Ordering};

/// Stripes: a power of two.
const STRIPES: usize = 1024;

#[repr(align(64))]
struct Stripe(AtomicBool);

static LOCKS: [Stripe; STRIPES] = [const { Stripe(AtomicBool::new(false)) }; STRIPES];

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
    let l = &LOCKS[s].0;
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
    LOCKS[s].0.store(false, Ordering::Release);
}
