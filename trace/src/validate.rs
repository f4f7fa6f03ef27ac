//! Complete or refused: the checks that a trace directory's files make one recorded run.
//!
//! Takes a decoded [`TraceDir`]; gives `Ok` or a [`TraceError::Inconsistent`] naming the first
//! file that disagrees with the rest and how. Each thread file reads on its own (the decoder has
//! checked magic, version, record boundaries and padding); these are the checks across files and
//! records that a lost, duplicated, renamed or edited file breaks:
//! - the main thread's file exists;
//! - every `Fork` names a child whose file exists and whose header names the forking thread as
//!   parent, and no child is forked twice; every thread with a parent was forked by it;
//! - a thread's first record is its `Start` (every thread but main);
//! - a completed `Join` follows the child's `End`: the child's file ends with it;
//! - sync sequence numbers are unique in the run and increase along each thread;
//! - a semaphore's `SemInit` is never pending: the runtime writes it after its call returned;
//! - atomic-block begins and ends alternate along each thread, starting with a begin (the runtime
//!   records only the outermost block of a nest); in a run that recorded calls (`Meta::calls`),
//!   whose markers also begin and end calls, no end closes more than began.
//!
//! - a sealed run (one that finished normally: `meta.json` lists its files, see `meta`) has
//!   exactly the files it lists, each of the length and checksum listed ([`check_sealed`]).
//!
//! A run the runtime marked truncated (a thread file could not grow) or that never ended (killed
//! by SIGKILL) may lack what it had no time or room to write: a forked child's file, a `Fork`, the
//! `End` before a join. Those checks are then skipped; everything else still holds.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};

use crate::event::{Event, SyncOp, ThreadId, NO_THREAD, PENDING};
use crate::format::{thread_file_name, ThreadTrace, TraceDir, TraceError};
use crate::meta::{FileSum, Meta};

/// Checks the sum of the thread file at `path` (of the bytes the reader has already read)
/// against the length and checksum a sealed `meta.json` lists for it; nothing to check when the
/// run was not sealed.
pub fn check_sealed(meta: &Meta, path: &Path, sum: &FileSum) -> Result<(), TraceError> {
    let Some(files) = &meta.files else {
        return Ok(());
    };
    let changed = |reason: String| {
        Err(TraceError::Changed {
            path: path.into(),
            reason,
        })
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let Some(listed) = files.get(name.as_ref()) else {
        return changed("meta.json does not list it".into());
    };
    if sum.len != listed.len {
        return changed(format!(
            "it has {} bytes, meta.json lists {}",
            sum.len, listed.len
        ));
    }
    if sum != listed {
        return changed("checksum mismatch".into());
    }
    Ok(())
}

/// Checks that the threads of `trace` make one run.
pub fn check(trace: &TraceDir) -> Result<(), TraceError> {
    let file = |tid: ThreadId| trace.path.join(thread_file_name(tid));
    let fail = |path: PathBuf, reason: String| Err(TraceError::Inconsistent { path, reason });
    let by_tid: HashMap<ThreadId, &ThreadTrace> =
        trace.threads.iter().map(|t| (t.header.tid, t)).collect();
    let read: Vec<String> = trace
        .threads
        .iter()
        .map(|t| thread_file_name(t.header.tid))
        .collect();
    for name in trace.meta.files.iter().flat_map(|f| f.keys()) {
        if !read.contains(name) {
            return Err(TraceError::Changed {
                path: trace.path.join(name),
                reason: "it is missing, meta.json lists it".into(),
            });
        }
    }
    if !trace.meta.truncated && !by_tid.contains_key(&0) {
        return fail(file(0), "the main thread's file is missing".into());
    }
    let mut forked_by: HashMap<ThreadId, ThreadId> = HashMap::new();
    for t in &trace.threads {
        let tid = t.header.tid;
        // Heap events take their numbers from the same counter, but order nothing: only sync
        // operations are checked.
        let syncs = t.events.marks().filter_map(|(_, e)| match e {
            Event::Sync(s) => Some(s),
            Event::Access(_) | Event::Heap(_) => None,
        });
        if tid != 0 {
            if let Some(first) = t.events.first() {
                if !matches!(first, Event::Sync(s) if s.op == SyncOp::Start) {
                    return fail(
                        file(tid),
                        "its first record is not the thread's start".into(),
                    );
                }
            }
        }
        let mut last_seq = None;
        // Open blocks (and calls, when recorded).
        let mut open = 0u32;
        for s in syncs {
            if s.seq != PENDING {
                if last_seq.is_some_and(|l| s.seq <= l) {
                    return fail(
                        file(tid),
                        format!(
                            "sync sequence number {} follows {} in the same thread",
                            s.seq,
                            last_seq.unwrap_or_default()
                        ),
                    );
                }
                last_seq = Some(s.seq);
            }
            match s.op {
                SyncOp::Fork { child } => {
                    if let Some(first) = forked_by.insert(child, tid) {
                        return fail(
                            file(tid),
                            format!("thread {child} is forked again (thread {first} forked it)"),
                        );
                    }
                    match by_tid.get(&child) {
                        Some(c) if c.header.parent != tid => {
                            return fail(
                                file(child),
                                format!(
                                    "thread {tid} forked it, its header names thread {} as parent",
                                    c.header.parent
                                ),
                            )
                        }
                        // No file: the process ended before the thread started (exit with the
                        // exit grace off or spent). A joined thread must have one (below).
                        _ => {}
                    }
                }
                SyncOp::Join { child } if s.seq != PENDING && !trace.meta.truncated => {
                    let ended = by_tid.get(&child).is_some_and(
                        |c| matches!(c.events.last(), Some(Event::Sync(e)) if e.op == SyncOp::End),
                    );
                    if !ended {
                        return fail(
                            file(child),
                            format!("thread {tid} joined thread {child}, whose file does not end"),
                        );
                    }
                }
                SyncOp::TxBegin | SyncOp::TxEnd => {
                    let begin = s.op == SyncOp::TxBegin;
                    let misplaced = if begin {
                        open > 0 && !trace.meta.calls
                    } else {
                        open == 0
                    };
                    if misplaced {
                        return fail(
                            file(tid),
                            format!(
                                "atomic block {} (sync sequence number {}) {}",
                                if begin { "begins" } else { "ends" },
                                s.seq,
                                if begin {
                                    "inside another one"
                                } else {
                                    "outside any block"
                                }
                            ),
                        );
                    }
                    open = if begin { open + 1 } else { open - 1 };
                }
                SyncOp::SemInit { .. } if s.seq == PENDING => {
                    return fail(
                        file(tid),
                        "a sem_init record is pending, which the runtime never writes".into(),
                    );
                }
                _ => {}
            }
        }
    }
    if let Some((seq, tid, other)) = shared_seq(&trace.threads) {
        return fail(
            file(tid),
            format!("sync sequence number {seq} is also used by thread {other}"),
        );
    }
    if !trace.meta.truncated {
        for t in &trace.threads {
            let (tid, parent) = (t.header.tid, t.header.parent);
            if tid != 0 && parent != NO_THREAD && forked_by.get(&tid) != Some(&parent) {
                return fail(
                    file(tid),
                    format!("its header names thread {parent} as parent, which never forked it"),
                );
            }
        }
    }
    Ok(())
}

/// A sync sequence number that two threads use: (seq, the later thread, the earlier one).
/// Each thread's numbers increase (checked before), so one merge of the threads' lists finds it
/// without holding every number of the run.
fn shared_seq(threads: &[ThreadTrace]) -> Option<(u64, ThreadId, ThreadId)> {
    let mut lists: Vec<_> = threads
        .iter()
        .map(|t| {
            t.events.marks().filter_map(|(_, e)| match e {
                Event::Sync(s) if s.seq != PENDING => Some(s.seq),
                _ => None,
            })
        })
        .collect();
    // The next number of each thread, smallest first.
    let mut next: BinaryHeap<Reverse<(u64, usize)>> = lists
        .iter_mut()
        .enumerate()
        .filter_map(|(i, l)| Some(Reverse((l.next()?, i))))
        .collect();
    let mut last: Option<(u64, usize)> = None;
    while let Some(Reverse((seq, i))) = next.pop() {
        if let Some((_, other)) = last.filter(|&(s, _)| s == seq) {
            let (a, b) = (other.min(i), other.max(i));
            return Some((seq, threads[b].header.tid, threads[a].header.tid));
        }
        last = Some((seq, i));
        if let Some(n) = lists[i].next() {
            next.push(Reverse((n, i)));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::event::Sync;

    /// The real three-thread run of `tests/Inputs/small`, with `op` at seq `seq` added to main.
    fn small_with(op: SyncOp, seq: u64) -> TraceDir {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/Inputs/small");
        let mut trace = TraceDir::open(&dir).expect("the input trace reads");
        trace.threads[0]
            .events
            .push(Event::Sync(Sync { seq, site: 1, op }));
        trace
    }

    #[test]
    fn a_sequence_number_of_two_threads_is_refused() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/Inputs/small");
        let mut trace = TraceDir::open(&dir).expect("the input trace reads");
        // Thread 1's end takes the number of main's second join (13).
        let mut events = trace.threads[1].events.to_vec();
        let Some(Event::Sync(end)) = events.last_mut() else {
            panic!("thread 1 ends with its end");
        };
        end.seq = 13;
        trace.threads[1].events = events.into();
        let err = check(&trace).unwrap_err().to_string();
        assert!(
            err.contains("t1.trace") && err.contains("number 13 is also used by thread 0"),
            "{err}"
        );
    }

    #[test]
    fn a_pending_sem_init_is_refused() {
        let init = SyncOp::SemInit { sem: 8, count: 2 };
        assert!(check(&small_with(init, 1 << 40)).is_ok());
        let err = check(&small_with(init, PENDING)).unwrap_err().to_string();
        assert!(
            err.contains("t0.trace") && err.contains("sem_init record is pending"),
            "{err}"
        );
    }

    #[test]
    fn blocks_alternate_and_recorded_calls_nest() {
        let mut trace = small_with(SyncOp::TxBegin, 1 << 40);
        for (seq, op) in [
            (41, SyncOp::TxBegin),
            (42, SyncOp::TxEnd),
            (43, SyncOp::TxEnd),
        ] {
            let site = 1;
            trace.threads[0].events.push(Event::Sync(Sync {
                seq: seq << 40 | 1,
                site,
                op,
            }));
        }
        let err = check(&trace).unwrap_err().to_string();
        assert!(err.contains("inside another one"), "{err}");
        trace.meta.calls = true;
        assert_eq!(check(&trace).map_err(|e| e.to_string()), Ok(()));
        let stray = SyncOp::TxEnd;
        trace.threads[0].events.push(Event::Sync(Sync {
            seq: 44 << 40,
            site: 1,
            op: stray,
        }));
        let err = check(&trace).unwrap_err().to_string();
        assert!(err.contains("outside any block"), "{err}");
    }
}
