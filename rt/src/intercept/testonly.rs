//! The test-only barrier of `tests/include/ilgen_test.h`: real synchronization the trace never
//! sees.
//!
//! Takes `ilgen_test_barrier_t` (two `unsigned long`s) and a thread count; gives a reusable
//! barrier built on atomics and a futex, recording NO event, so a test can force the interleaving
//! it needs while the recorded run looks to the analysis like an unlucky schedule (TSan's test.h
//! does the same). Layout: `state[0]` is the count; `state[1]` holds the generation in its high
//! 32 bits (the futex word) and the number of arrived threads in its low 32 bits.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

#[repr(C)]
pub struct TestBarrier {
    count: AtomicU64,
    state: AtomicU64,
}

/// The generation half of `state`, the word waiters sleep on (little endian: the high half).
fn futex_word(b: &TestBarrier) -> &AtomicU32 {
    // SAFETY: `state` is 8-aligned; its upper 4 bytes are a valid, 4-aligned AtomicU32 that is
    // only accessed atomically.
    unsafe { &*((&b.state as *const AtomicU64 as *const AtomicU32).add(1)) }
}

/// # Safety
/// `b` points to an `ilgen_test_barrier_t` no thread is waiting on.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_testonly_barrier_init(b: *mut TestBarrier, count: u32) {
    // SAFETY: the caller's barrier.
    let b = unsafe { &*b };
    b.count.store(u64::from(count.max(1)), Ordering::Relaxed);
    b.state.store(0, Ordering::Release);
}

/// # Safety
/// `b` was initialized with `__ilgen_testonly_barrier_init`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_testonly_barrier_wait(b: *mut TestBarrier) {
    // SAFETY: the caller's barrier.
    let b = unsafe { &*b };
    let count = b.count.load(Ordering::Relaxed);
    let before = b.state.fetch_add(1, Ordering::AcqRel);
    let generation = (before >> 32) as u32;
    if (before & 0xffff_ffff) + 1 == count {
        // Last to arrive: next generation, nobody arrived, wake everyone.
        b.state.store(
            u64::from(generation.wrapping_add(1)) << 32,
            Ordering::Release,
        );
        // SAFETY: futex wake on a word of this barrier.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                futex_word(b).as_ptr(),
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                i32::MAX,
            );
        }
        return;
    }
    while futex_word(b).load(Ordering::Acquire) == generation {
        // SAFETY: futex wait while the word still holds this generation.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                futex_word(b).as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                generation,
                std::ptr::null::<libc::timespec>(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn four_threads_pass_together_many_times() {
        let b = Arc::new(TestBarrier {
            count: AtomicU64::new(0),
            state: AtomicU64::new(0),
        });
        // SAFETY: a fresh barrier.
        unsafe { __ilgen_testonly_barrier_init(Arc::as_ptr(&b) as *mut _, 4) };
        let phase = Arc::new(AtomicU64::new(0));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (b, phase) = (b.clone(), phase.clone());
                std::thread::spawn(move || {
                    for round in 0..200u64 {
                        phase.fetch_add(1, Ordering::SeqCst);
                        // SAFETY: initialized above.
                        unsafe { __ilgen_testonly_barrier_wait(Arc::as_ptr(&b) as *mut _) };
                        assert!(phase.load(Ordering::SeqCst) >= 4 * (round + 1));
                        // SAFETY: as above.
                        unsafe { __ilgen_testonly_barrier_wait(Arc::as_ptr(&b) as *mut _) };
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
}
