//! Windows: bounded slices of a long trace for the exhaustive search.
//!
//! Takes a [`Model`] and a window size N; gives [`Window`]s, each the part of every thread between
//! two seq bounds, covering N sync events of the run. Before a window the threads run in the
//! observed order: that prefix fixes every object's state at the window's start (mutex holders,
//! semaphore counts, signalled instances), and a candidate found in the window starts with it
//! (`prefix_steps` in the candidate file).
//!
//! False negatives this brings: the exhaustive search never brings together two accesses of
//! different windows, nor reorders a window's operations with those of its prefix, nor finds a
//! deadlock whose threads block in different windows. The cut-based fast path runs on the whole
//! trace, so these are missed only for pairs it cannot decide on its own.
//! A thread whose next operation lies beyond the window counts as able to move, so a window's end
//! never looks like a deadlock.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ilgen_trace::PENDING;

use crate::model::{Model, ModelThread};

/// Default number of sync events per window.
pub const DEFAULT_SIZE: usize = 10_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// Sync events with a smaller seq run first, in the observed order.
    pub first_seq: u64,
    /// Per thread: events before this index are the prefix.
    pub start: Vec<usize>,
    /// Per thread: the search may run events before this index.
    pub end: Vec<usize>,
}

/// The whole trace as one window.
pub fn whole(model: &Model) -> Window {
    Window {
        first_seq: 0,
        start: vec![0; model.threads.len()],
        end: model.threads.iter().map(|t| t.events.len()).collect(),
    }
}

/// Consecutive windows of `size` completed sync events each (at least one window; the last also
/// holds the operations still pending when the run ended).
pub fn split(model: &Model, size: usize) -> Vec<Window> {
    let size = size.max(1);
    let completed = |t: &ModelThread| t.observed.iter().filter(|o| o.seq != PENDING).count();
    if model.threads.iter().map(completed).sum::<usize>() <= size {
        return vec![whole(model)];
    }
    // Every `size`-th completed seq of the run, the first one left out: the threads' seqs merged
    // (each thread's increase along it), not collected and sorted, which cost 24 bytes a sync
    // event of a 10^7-event run while its model was held.
    let mut heads: BinaryHeap<Reverse<(u64, usize, usize)>> = BinaryHeap::new();
    let push = |heads: &mut BinaryHeap<_>, thread: usize, from: usize| {
        let observed = &model.threads[thread].observed;
        let seq = |k: usize| observed.seq(k).expect("in range");
        if let Some(k) = (from..observed.len()).find(|&k| seq(k) != PENDING) {
            heads.push(Reverse((seq(k), thread, k)));
        }
    };
    for thread in 0..model.threads.len() {
        push(&mut heads, thread, 0);
    }
    let mut bounds = Vec::new();
    let mut n = 0;
    while let Some(Reverse((seq, thread, k))) = heads.pop() {
        if n > 0 && n % size == 0 {
            bounds.push(seq);
        }
        n += 1;
        push(&mut heads, thread, k + 1);
    }
    // Per thread, the index of each of its sync events: their seqs ascend with them, as seqs
    // increase along a thread, so each window bound is a binary search, not a walk over the
    // thread.
    let synced: Vec<Vec<u32>> = model
        .threads
        .iter()
        .map(|t| {
            (0u32..)
                .zip(&t.events)
                .filter(|(_, e)| e.is_sync())
                .map(|(i, _)| i)
                .collect()
        })
        .collect();
    let mut windows = Vec::with_capacity(bounds.len() + 1);
    let mut lo = 0;
    for &hi in &bounds {
        windows.push(between(model, &synced, lo, Some(hi)));
        lo = hi;
    }
    windows.push(between(model, &synced, lo, None));
    windows
}

/// The window of sync events with `lo <= seq < hi` (no upper bound: through the trace's end);
/// `synced` as [`split`] makes it.
fn between(model: &Model, synced: &[Vec<u32>], lo: u64, hi: Option<u64>) -> Window {
    let mut start = Vec::with_capacity(model.threads.len());
    let mut end = Vec::with_capacity(model.threads.len());
    for (thread, synced) in model.threads.iter().zip(synced) {
        // The thread's k-th sync event is its k-th observed operation.
        let below = |bound: u64| thread.observed.seqs_below(bound);
        // After the thread's last sync event before the window.
        let s = below(lo)
            .checked_sub(1)
            .map_or(0, |k| synced[k] as usize + 1);
        // At its first sync event from the window's end on.
        let e = match hi {
            Some(hi) => synced
                .get(below(hi))
                .map_or(thread.events.len(), |&i| i as usize),
            None => thread.events.len(),
        };
        start.push(s);
        end.push(e);
    }
    Window {
        first_seq: lo,
        start,
        end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prepare::prepare;
    use crate::testkit::sections_then_race;

    #[test]
    fn windows_split_by_seq_and_start_where_the_prefix_left_each_thread() {
        let p = prepare(sections_then_race().traces());
        let w = split(&p.model, 4);
        assert_eq!(w.len(), 3);
        assert_eq!(
            w.iter().map(|w| w.first_seq).collect::<Vec<_>>(),
            vec![0, 5, 9]
        );
        // Window 2 (seq 5..9): thread 0 after its unlock (seq 4), thread 1 after its start.
        assert_eq!(w[1].start, vec![3, 1]);
        // It ends before seq 9: all of thread 0 (its write after seq 8 included), thread 1
        // before its lock at seq 9.
        assert_eq!(w[1].end, vec![6, 3]);
        assert_eq!(w[2].start, vec![5, 3]);
        assert_eq!(w[2].end, vec![6, 6]);
        assert_eq!(split(&p.model, 100), vec![whole(&p.model)]);
    }
}
