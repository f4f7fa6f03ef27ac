//! The acquire and release halves of a run's C/C++ atomic operations, as the weakened
//! happens-before orders through them.
//!
//! Takes every thread of a run (its [`ilgen_trace::Atomic`] records, found in a walk of its
//! marks) and the run's [`Lifetimes`]; gives [`Atomics`]: per thread, each record in program
//! order with its place among the thread's sync events, its key in the run's order and its
//! location (address and allocation epoch, so that memory handed out again is another location,
//! as ThreadSanitizer forgets a freed block's sync objects). [`crate::ordered::segment_clocks`]
//! turns them into edges, TSan's way: per location a clock; a release store replaces it with the
//! thread's clock, a release read-modify-write joins the thread's clock into it (the release
//! sequence goes on), an acquire joins it into the thread's.
//!
//! Each record also ends a stretch of its thread's accesses (a clock segment): the accesses
//! before a release are ordered before the acquires that read from it, those after it are not;
//! prepare keeps the model's records of one object apart across it ([`Atomics::note_model`]) so
//! that the filter can give each its own clock.

use std::collections::HashMap;

use ilgen_trace::format::ThreadTrace;
use ilgen_trace::{AtomicOp, Event};

use crate::lifetime::Lifetimes;

/// One acquire or release record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// The thread's sync events before it.
    pub after_syncs: u32,
    /// Its place in the run's order ([`key`]).
    pub key: u64,
    /// Its location, numbered densely.
    pub location: u32,
    pub op: AtomicOp,
    /// Index among the thread's model events of the first event after it (set by
    /// [`Atomics::note_model`]).
    pub model_index: u32,
}

/// The records of a run's threads.
#[derive(Clone, Debug, Default)]
pub struct Atomics {
    /// Per thread, in program order.
    pub threads: Vec<Vec<Point>>,
    /// Locations numbered.
    pub locations: usize,
}

/// The place in the run's order of a record numbered `seq`: an acquire comes before a sync
/// event or release numbered `seq` (its number is the counter's value before it, which the next
/// number taken equals), after every one numbered below.
pub fn key(seq: u64, op: Option<AtomicOp>) -> u64 {
    seq.saturating_mul(2) + u64::from(op != Some(AtomicOp::Acquire))
}

/// Joins clock `from` into `into`, component by component.
pub fn join(into: &mut [u32], from: &[u32]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(*b);
    }
}

/// What a record `op` does, TSan's way, to its thread's `clock` and to its location's
/// (`None` before the location's first release): a release store sets the location's clock to the
/// thread's, a release read-modify-write joins the thread's into it (the release sequence goes
/// on), an acquire joins it into the thread's.
pub fn apply(op: AtomicOp, location: &mut Option<Vec<u32>>, clock: &mut [u32]) {
    match (op, location.as_mut()) {
        (AtomicOp::Acquire, Some(from)) => join(clock, from),
        (AtomicOp::Acquire, None) => {}
        (AtomicOp::ReleaseRmw, Some(into)) => join(into, clock),
        (AtomicOp::ReleaseStore | AtomicOp::ReleaseRmw, _) => *location = Some(clock.to_vec()),
    }
}

impl Atomics {
    pub fn of(traces: &[ThreadTrace], lifetimes: &Lifetimes) -> Atomics {
        let mut ids: HashMap<(u64, u32), u32> = HashMap::new();
        let threads = traces
            .iter()
            .map(|t| {
                let mut syncs = 0u32;
                let mut points = Vec::new();
                for (_, e) in t.events.marks() {
                    match e {
                        Event::Sync(_) => syncs += 1,
                        Event::Atomic(a) => {
                            let epoch = lifetimes.epoch(a.addr, a.seq);
                            let next = ids.len() as u32;
                            points.push(Point {
                                after_syncs: syncs,
                                key: key(a.seq, Some(a.op)),
                                location: *ids.entry((a.addr, epoch)).or_insert(next),
                                op: a.op,
                                model_index: 0,
                            });
                        }
                        Event::Access(_) | Event::Heap(_) => {}
                    }
                }
                points
            })
            .collect();
        Atomics {
            threads,
            locations: ids.len(),
        }
    }

    /// The `n`-th record of thread `t` comes before its model event `index`.
    pub fn note_model(&mut self, t: usize, n: usize, index: usize) {
        if let Some(p) = self.threads.get_mut(t).and_then(|t| t.get_mut(n)) {
            p.model_index = u32::try_from(index).expect("a model's indices fit in 32 bits");
        }
    }

    /// Thread `t`'s records.
    pub fn of_thread(&self, t: usize) -> &[Point] {
        self.threads.get(t).map_or(&[], |p| p)
    }
}
