//! The calls a run records under `calls=1`: each thread's stack of open calls, and how many of
//! them the trace has begun.
//!
//! Takes the pass's call hooks (`__ilgen_call_enter`/`__ilgen_call_leave`, see
//! `intercept::atomic`) with, at each entry, the point the thread's segment had reached (a
//! [`Mark`]), and, right before each sync operation, `record::sync`'s question which calls to
//! begin; gives the site and mark of each call to begin (outermost first) and, when a call
//! returns, how many begun calls end. Both modes keep the same stack, so record and replay count
//! the same markers among a thread's sync operations.
//!
//! Why lazily: a call in which no sync operation runs cannot hold an atomicity violation (its
//! accesses all lie in one segment), and most calls are such. Entering a call only pushes its site
//! and a mark of the thread's segment cache on thread-local arrays; its `TxBegin` is written right
//! before the first sync operation that runs inside it, and then its `TxEnd` when it returns. The
//! accesses the call made before that operation are still in the segment cache, after the mark:
//! the accesses before the mark are written out first, then the `TxBegin`, so the transaction
//! holds every access of the call (unless the cache filled up in between and wrote them out before
//! the begin). Calls deeper than [`MAX_DEPTH`] are counted, never begun. Off (the default) each
//! hook costs a load and a return.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::record::cache::Mark;

/// Set at start-up when the process records (or replays a run that recorded) calls.
static ON: AtomicBool = AtomicBool::new(false);

/// Open calls a thread keeps sites of; deeper ones are counted only.
pub(crate) const MAX_DEPTH: usize = 128;

struct Stack {
    /// The raw site pointer of each open call's entry, outermost first.
    sites: [Cell<usize>; MAX_DEPTH],
    /// Where each open call's accesses begin in the segment.
    marks: [Cell<Mark>; MAX_DEPTH],
    /// Open calls.
    depth: Cell<u32>,
    /// The first `begun` open calls have their `TxBegin` in the trace (begun calls are always the
    /// outermost ones: a call begins with every call it was made from).
    begun: Cell<u32>,
}

thread_local! {
    // Cells, not a RefCell: a program's signal handler may enter and leave calls on top of an
    // interrupted hook, which a borrow flag would turn into a panic.
    static STACK: Stack = const {
        Stack {
            sites: [const { Cell::new(0) }; MAX_DEPTH],
            marks: [const { Cell::new(0) }; MAX_DEPTH],
            depth: Cell::new(0),
            begun: Cell::new(0),
        }
    };
}

/// Starts recording calls (the option `calls=1`), before any thread records.
pub(crate) fn turn_on() {
    ON.store(true, Ordering::Relaxed);
}

/// A call of the function whose entry has site `site` is entered, at the point of the segment
/// `mark` gives; gives the depth before it.
#[inline]
pub(crate) fn enter(site: usize, mark: impl FnOnce() -> Mark) -> u32 {
    if !ON.load(Ordering::Relaxed) {
        return 0;
    }
    STACK.with(|s| {
        let depth = s.depth.get();
        if let Some(slot) = s.sites.get(depth as usize) {
            slot.set(site);
            s.marks[depth as usize].set(mark());
        }
        s.depth.set(depth.saturating_add(1));
        depth
    })
}

/// The calls above `depth` returned (or were left by `longjmp` or an exception: every return
/// cuts the stack back to where its call began); gives how many of them had begun, which end.
#[inline]
pub(crate) fn leave(depth: u32) -> u32 {
    if !ON.load(Ordering::Relaxed) {
        return 0;
    }
    STACK.with(|s| {
        // Deeper than the stack: its call was entered before recording started, or was already
        // cut back by a return further out.
        if depth > s.depth.get() {
            return 0;
        }
        s.depth.set(depth);
        let begun = s.begun.get();
        if begun <= depth {
            return 0;
        }
        s.begun.set(depth);
        begun - depth
    })
}

/// Before a sync operation of this thread: `begin(site, mark)` for each open call not begun yet,
/// outermost first.
#[inline]
pub(crate) fn begin_open(mut begin: impl FnMut(usize, Mark)) {
    if !ON.load(Ordering::Relaxed) {
        return;
    }
    STACK.with(|s| {
        let top = (s.depth.get() as usize).min(MAX_DEPTH);
        let from = s.begun.get() as usize;
        if from >= top {
            return;
        }
        s.begun.set(top as u32);
        for (site, mark) in s.sites[from..top].iter().zip(&s.marks[from..top]) {
            begin(site.get(), mark.get());
        }
    });
}

/// Open calls of this thread whose `TxBegin` has not run (calls deeper than [`MAX_DEPTH`] never
/// begin).
pub(crate) fn unbegun() -> u32 {
    if !ON.load(Ordering::Relaxed) {
        return 0;
    }
    STACK.with(|s| (s.depth.get().min(MAX_DEPTH as u32)).saturating_sub(s.begun.get()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Enters a call whose entry takes the mark `site + 1`.
    fn enter_at(site: usize) -> u32 {
        enter(site, || site as Mark + 1)
    }

    /// The sites of the calls begun, each with the mark its entry took.
    fn begun() -> Vec<usize> {
        let mut out = Vec::new();
        begin_open(|s, mark| {
            assert_eq!(mark, s as Mark + 1);
            out.push(s)
        });
        out
    }

    #[test]
    fn calls_begin_when_a_sync_operation_runs_inside_and_end_when_they_return() {
        turn_on();
        // Run on a thread of its own: the stack is per thread.
        std::thread::spawn(|| {
            let outer = enter_at(10);
            assert_eq!(outer, 0);
            let helper = enter_at(20);
            // A call without a sync operation inside: nothing begins, nothing ends.
            assert_eq!(leave(helper), 0);
            let inner = enter_at(30);
            assert_eq!(unbegun(), 2);
            assert_eq!(begun(), vec![10, 30]);
            assert_eq!(unbegun(), 0);
            assert_eq!(begun(), Vec::<usize>::new(), "begun once");
            let leaf = enter_at(40);
            assert_eq!(leave(leaf), 0);
            assert_eq!(leave(inner), 1);
            // A landing pad of `outer` (depth + 1) while two calls an exception left are open.
            let a = enter_at(50);
            enter_at(60);
            assert_eq!(begun(), vec![50, 60]);
            assert_eq!(leave(outer + 1), 2);
            assert_eq!(a, 1);
            assert_eq!(leave(outer), 1);
            assert_eq!(leave(outer), 0, "a second return cuts nothing");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn calls_deeper_than_the_stack_are_counted_not_begun() {
        turn_on();
        std::thread::spawn(|| {
            let depths: Vec<u32> = (0..MAX_DEPTH + 2).map(enter_at).collect();
            assert_eq!(begun().len(), MAX_DEPTH);
            assert_eq!(leave(depths[MAX_DEPTH + 1]), 0);
            assert_eq!(leave(depths[MAX_DEPTH]), 0);
            assert_eq!(leave(depths[MAX_DEPTH - 1]), 1);
            assert_eq!(leave(0), MAX_DEPTH as u32 - 1);
        })
        .join()
        .unwrap();
    }
}
