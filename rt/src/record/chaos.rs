//! Schedule perturbation while recording (`ILGEN_OPTIONS=chaos=SEED`): so that several recorded
//! runs show different orders, and a race only predictable from some order gets recorded in one.
//!
//! Takes each recording thread's start and every sync operation before its real call; gives
//! delays. The scheme follows PCT (Burckhardt et al., ASPLOS 2010) as far as a runtime without a
//! scheduler of its own can: every thread gets a random priority, and before each of its first
//! `chaos_ops` sync operations it sleeps in inverse proportion to it (the highest priority runs
//! on almost at once, the lowest waits `chaos_delay_us`), so the sync operations of
//! higher-priority threads tend to come first; at `chaos_depth - 1` of those operations, chosen
//! at random, the thread's priority drops below every undropped thread's (PCT's change points,
//! here per thread). Every decision is a function of the seed and of the thread's identity that
//! is stable across runs (parent, nth child) and its operation count, never of timing: the same
//! seed makes the same decisions in every run (the order that results still depends on the
//! machine, as with any scheduler outside the kernel's).

use std::cell::Cell;

use ilgen_trace::ThreadId;

use crate::options::Options;
use crate::runtime;

/// The calling thread's perturbation state: priority, sync operations seen, priority drops.
#[derive(Clone, Copy)]
struct ChaosThread {
    parent: ThreadId,
    child_index: u32,
    /// Identity hash mixed with the seed: the source of every decision of this thread.
    key: u64,
    /// In `[0, 1)`: the fraction of `chaos_delay_us` this thread waits before an operation.
    lowness: f64,
    ops: u32,
    drops: u32,
}

thread_local! {
    static CHAOS: Cell<Option<ChaosThread>> = const { Cell::new(None) };
}

/// SplitMix64's finalizer: a well-mixed 64-bit hash of `x`.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The thread (`parent`, `child_index`) starts: draws its priority, then waits its turn as
/// before any operation (a thread start is a scheduling point too).
pub(crate) fn thread_started(options: &Options, parent: ThreadId, child_index: u32) {
    if options.chaos == 0 {
        return;
    }
    let key = mix(mix(options.chaos) ^ ((parent as u64) << 32 | child_index as u64));
    let lowness = (mix(key) >> 11) as f64 / (1u64 << 53) as f64;
    CHAOS.with(|c| {
        c.set(Some(ChaosThread {
            parent,
            child_index,
            key,
            lowness,
            ops: 0,
            drops: 0,
        }))
    });
    before_sync(options);
}

/// Before a sync operation of the calling thread: waits as its priority says, after lowering
/// it if this operation is one of its change points.
pub(crate) fn before_sync(options: &Options) {
    let Some(mut t) = CHAOS.with(|c| c.get()) else {
        return;
    };
    if t.ops >= options.chaos_ops {
        return;
    }
    let change_points = options.chaos_depth.saturating_sub(1) as u64;
    if (0..change_points)
        .any(|j| mix(t.key ^ mix(j + 1)) % options.chaos_ops as u64 == t.ops as u64)
    {
        t.drops += 1;
    }
    t.ops += 1;
    CHAOS.with(|c| c.set(Some(t)));
    let units = t.lowness + t.drops as f64;
    let micros = (units * options.chaos_delay_us as f64) as u64;
    if options.verbosity >= 2 {
        // The decisions, one line each: the same seed prints the same lines per thread.
        let parent = match t.parent {
            ilgen_trace::NO_THREAD => "none".to_owned(),
            p => format!("T{p}"),
        };
        runtime::say(&format!(
            "ilgen: chaos: thread {parent}/{} op {} drops {} delay {micros} us",
            t.child_index,
            t.ops - 1,
            t.drops
        ));
    }
    if micros == 0 {
        std::thread::yield_now();
        return;
    }
    let ts = libc::timespec {
        tv_sec: (micros / 1_000_000) as libc::time_t,
        tv_nsec: ((micros % 1_000_000) * 1000) as libc::c_long,
    };
    // nanosleep rather than std::thread::sleep: no allocation, and an interrupted sleep (a
    // signal of the program) just ends the delay early.
    // SAFETY: `ts` is a valid timespec on the stack; the remainder pointer may be null.
    unsafe {
        libc::nanosleep(&ts, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(seed: u64) -> Options {
        let (o, errors) = Options::parse(&format!(
            "chaos={seed}:chaos_delay_us=0:chaos_ops=50:chaos_depth=3"
        ));
        assert!(errors.is_empty(), "{errors:?}");
        o
    }

    /// Runs one thread's decisions for `ops` operations: its lowness and drop count after each.
    fn decisions(seed: u64, parent: ThreadId, child: u32, ops: usize) -> Vec<(u64, u32)> {
        std::thread::scope(|s| {
            s.spawn(|| {
                let o = options(seed);
                thread_started(&o, parent, child);
                (0..ops)
                    .map(|_| {
                        before_sync(&o);
                        let t = CHAOS.with(|c| c.get()).unwrap();
                        (t.lowness.to_bits(), t.drops)
                    })
                    .collect()
            })
            .join()
            .unwrap()
        })
    }

    #[test]
    fn same_seed_same_decisions_other_seed_others() {
        let a = decisions(7, 0, 1, 60);
        assert_eq!(a, decisions(7, 0, 1, 60));
        assert_ne!(a, decisions(8, 0, 1, 60));
        assert_ne!(
            a,
            decisions(7, 0, 2, 60),
            "threads draw their own priorities"
        );
    }

    #[test]
    fn priority_drops_at_most_depth_minus_one_times_within_chaos_ops() {
        for seed in 1..50 {
            let d = decisions(seed, 0, 0, 60);
            let drops = d.last().unwrap().1;
            assert!(drops <= 2, "seed {seed}: {drops} drops");
            assert_eq!(d[49].1, drops, "no decision after chaos_ops operations");
        }
    }

    #[test]
    fn off_by_default() {
        let (o, _) = Options::parse("");
        assert_eq!(o.chaos, 0);
        std::thread::scope(|s| {
            s.spawn(|| {
                thread_started(&o, 0, 0);
                assert!(CHAOS.with(|c| c.get()).is_none());
            });
        });
    }
}
