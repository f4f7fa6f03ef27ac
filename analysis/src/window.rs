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

use crate::model::Model;

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
    let mut seqs: Vec<u64> = model
        .threads
        .iter()
        .flat_map(|t| t.events.iter().filter_map(|e| t.observed_of(e)))
        .map(|o| o.seq)
        .filter(|&s| s != ilgen_trace::PENDING)
        .collect();
    seqs.sort_unstable();
    let size = size.max(1);
    if seqs.len() <= size {
        return vec![whole(model)];
    }
    let bounds: Vec<u64> = seqs.iter().step_by(size).skip(1).copied().collect();
    // Per thread, the (seq, index) of its sync events: ascending in both, as seqs increase along
    // a thread, so each window bound is a binary search, not a walk over the thread.
    let synced: Vec<Vec<(u64, usize)>> = model
        .threads
        .iter()
        .map(|t| {
            (0..t.events.len())
                .filter_map(|i| t.observed_at(i).map(|o| (o.seq, i)))
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
fn between(model: &Model, synced: &[Vec<(u64, usize)>], lo: u64, hi: Option<u64>) -> Window {
    let mut start = Vec::with_capacity(model.threads.len());
    let mut end = Vec::with_capacity(model.threads.len());
    for (thread, synced) in model.threads.iter().zip(synced) {
        // After the thread's last sync event before the window.
        let before = synced.partition_point(|&(seq, _)| seq < lo);
        let s = before.checked_sub(1).map_or(0, |k| synced[k].1 + 1);
        // At its first sync event from the window's end on.
        let e = match hi {
            Some(hi) => synced
                .get(synced.partition_point(|&(seq, _)| seq < hi))
                .map_or(thread.events.len(), |&(_, i)| i),
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
