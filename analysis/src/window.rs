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
    // Window k holds the sync events with `bounds[k] <= seq < bounds[k + 1]` (the last: through
    // the trace's end).
    let bounds: Vec<u64> = std::iter::once(0)
        .chain(seqs.iter().step_by(size).skip(1).copied())
        .collect();
    let mut windows: Vec<Window> = bounds
        .iter()
        .map(|&first_seq| Window {
            first_seq,
            start: Vec::with_capacity(model.threads.len()),
            end: Vec::with_capacity(model.threads.len()),
        })
        .collect();
    for thread in &model.threads {
        // A thread's completed seqs increase along it (a pending one comes last, above every
        // bound), so one pass finds every window's start and end: the start is just after the
        // thread's last sync event below the window's bound, the end at its first one at or
        // above the next window's bound.
        let seq_at = |i: usize| thread.observed_at(i).map(|o| o.seq);
        let len = thread.events.len();
        let (mut next, mut start) = (0, 0);
        for k in 0..windows.len() {
            let lo = bounds[k];
            while next < len && seq_at(next).is_none_or(|seq| seq < lo) {
                if seq_at(next).is_some() {
                    start = next + 1;
                }
                next += 1;
            }
            windows[k].start.push(start);
            let end = match bounds.get(k + 1) {
                Some(&hi) => (next..len)
                    .find(|&i| seq_at(i).is_some_and(|seq| seq >= hi))
                    .unwrap_or(len),
                None => len,
            };
            windows[k].end.push(end);
        }
    }
    windows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prepare::prepare;
    use crate::testkit::{sections_then_race, Run};

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

    #[test]
    fn each_window_is_the_slice_its_seq_bounds_say() {
        // Three threads taking turns, with accesses between their operations.
        let mut r = Run::new(3);
        r.fork(0, 1).fork(0, 2).start(1).start(2);
        for i in 0..12u64 {
            let t = (i % 3) as u32;
            r.lock(t, 0x900)
                .w(t, 0x100 + i, 1)
                .unlock(t, 0x900)
                .r(t, 0x200, 2);
        }
        r.end(1).end(2).join(0, 1).join(0, 2);
        let p = prepare(r.traces());
        let m = &p.model;
        for size in 1..12 {
            let windows = split(m, size);
            assert!(windows.len() > 1, "{size}");
            for (k, w) in windows.iter().enumerate() {
                let hi = windows.get(k + 1).map(|n| n.first_seq);
                for (t, thread) in m.threads.iter().enumerate() {
                    let seq = |i: usize| thread.observed_at(i).map(|o| o.seq);
                    // The prefix: through the last sync event below the bound; the end: the
                    // first one at or above the next bound.
                    let start = (0..thread.events.len())
                        .rev()
                        .find(|&i| seq(i).is_some_and(|s| s < w.first_seq))
                        .map_or(0, |i| i + 1);
                    let end = hi.map_or(thread.events.len(), |hi| {
                        (start..thread.events.len())
                            .find(|&i| seq(i).is_some_and(|s| s >= hi))
                            .unwrap_or(thread.events.len())
                    });
                    assert_eq!((w.start[t], w.end[t]), (start, end), "{size} {k} {t}");
                }
            }
        }
    }
}
