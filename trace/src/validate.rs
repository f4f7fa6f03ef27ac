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
use std::collections::{BinaryHeap, HashMap, HashSet};
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

/// The file thread `tid` was read from (`file_of`), or for a thread not read, the file it would
/// have begun.
fn file(trace: &TraceDir, file_of: &HashMap<ThreadId, PathBuf>, tid: ThreadId) -> PathBuf {
    file_of
        .get(&tid)
        .cloned()
        .unwrap_or_else(|| trace.path.join(thread_file_name(tid)))
}

/// Checks that the threads of `trace` make one run; `file_of` names the file each was read from.
pub fn check(trace: &TraceDir, file_of: &HashMap<ThreadId, PathBuf>) -> Result<(), TraceError> {
    let file = |tid: ThreadId| file(trace, file_of, tid);
    let fail = |path: PathBuf, reason: String| Err(TraceError::Inconsistent { path, reason });
    let by_tid: HashMap<ThreadId, &ThreadTrace> =
        trace.threads.iter().map(|t| (t.header.tid, t)).collect();
    let read: Vec<String> = trace
        .threads
        .iter()
        .map(|t| file(t.header.tid))
        .filter_map(|f| Some(f.file_name()?.to_string_lossy().into_owned()))
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
    // One walk of the sync events: the threads' in sequence-number order, which finds a number
    // two threads use, each checked on its own as the walk takes it. Only whether a child was
    // forked before depends on the threads before in file order: the forks are checked after,
    // thread by thread, before each thread's own first failure, so the first failure in file
    // order is the one reported, as a walk of each thread in turn would find it.
    let mut threads: Vec<Thread> = trace
        .threads
        .iter()
        .map(|t| Thread::new(trace, file_of, t, &by_tid))
        .collect();
    let shared = shared_seq(&mut threads);
    let mut forked_by: HashMap<ThreadId, ThreadId> = HashMap::new();
    for (t, walked) in trace.threads.iter().zip(threads) {
        let tid = t.header.tid;
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
        for child in walked.forks {
            if let Some(first) = forked_by.insert(child, tid) {
                return fail(
                    file(tid),
                    format!("thread {child} is forked again (thread {first} forked it)"),
                );
            }
        }
        if let Some((path, reason)) = walked.failure {
            return fail(path, reason);
        }
    }
    if let Some((seq, tid, other)) = shared {
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

/// One thread's sync events as the walk of [`check`] takes them, with the checks that look at
/// this thread alone: its first failure, and the children it forked before it.
struct Thread<'a> {
    trace: &'a TraceDir,
    file_of: &'a HashMap<ThreadId, PathBuf>,
    tid: ThreadId,
    by_tid: &'a HashMap<ThreadId, &'a ThreadTrace>,
    marks: crate::events::Marks<'a>,
    last_seq: Option<u64>,
    /// Open blocks (and calls, when recorded).
    open: u32,
    forks: Vec<ThreadId>,
    forked: HashSet<ThreadId>,
    failure: Option<(PathBuf, String)>,
}

impl<'a> Thread<'a> {
    fn new(
        trace: &'a TraceDir,
        file_of: &'a HashMap<ThreadId, PathBuf>,
        t: &'a ThreadTrace,
        by_tid: &'a HashMap<ThreadId, &'a ThreadTrace>,
    ) -> Thread<'a> {
        Thread {
            trace,
            file_of,
            tid: t.header.tid,
            by_tid,
            // Heap events take their numbers from the same counter, but order nothing: only
            // sync operations are checked.
            marks: t.events.marks(),
            last_seq: None,
            open: 0,
            forks: Vec::new(),
            forked: HashSet::new(),
            failure: None,
        }
    }

    /// The next sequence number the thread's sync events use, each event checked on the way;
    /// `None` at their end or at the first failure.
    fn next_seq(&mut self) -> Option<u64> {
        while self.failure.is_none() {
            let Event::Sync(s) = self.marks.next()?.1 else {
                continue;
            };
            if let Err(failure) = self.check(&s) {
                self.failure = Some(failure);
                return None;
            }
            if s.seq != PENDING {
                return Some(s.seq);
            }
        }
        None
    }

    fn check(&mut self, s: &crate::event::Sync) -> Result<(), (PathBuf, String)> {
        let (tid, trace, file_of) = (self.tid, self.trace, self.file_of);
        let file = |tid: ThreadId| file(trace, file_of, tid);
        if s.seq != PENDING {
            if self.last_seq.is_some_and(|l| s.seq <= l) {
                return Err((
                    file(tid),
                    format!(
                        "sync sequence number {} follows {} in the same thread",
                        s.seq,
                        self.last_seq.unwrap_or_default()
                    ),
                ));
            }
            self.last_seq = Some(s.seq);
        }
        match s.op {
            SyncOp::Fork { child } => {
                if !self.forked.insert(child) {
                    return Err((
                        file(tid),
                        format!("thread {child} is forked again (thread {tid} forked it)"),
                    ));
                }
                self.forks.push(child);
                match self.by_tid.get(&child) {
                    Some(c) if c.header.parent != tid => {
                        return Err((
                            file(child),
                            format!(
                                "thread {tid} forked it, its header names thread {} as parent",
                                c.header.parent
                            ),
                        ))
                    }
                    // No file: the process ended before the thread started (exit with the exit
                    // grace off or spent). A joined thread must have one (below).
                    _ => {}
                }
            }
            SyncOp::Join { child } if s.seq != PENDING && !trace.meta.truncated => {
                let ended = self.by_tid.get(&child).is_some_and(
                    |c| matches!(c.events.last(), Some(Event::Sync(e)) if e.op == SyncOp::End),
                );
                if !ended {
                    return Err((
                        file(child),
                        format!("thread {tid} joined thread {child}, whose file does not end"),
                    ));
                }
            }
            SyncOp::TxBegin | SyncOp::TxEnd => {
                let begin = s.op == SyncOp::TxBegin;
                let misplaced = if begin {
                    self.open > 0 && !trace.meta.calls
                } else {
                    self.open == 0
                };
                if misplaced {
                    return Err((
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
                    ));
                }
                self.open = if begin { self.open + 1 } else { self.open - 1 };
            }
            SyncOp::SemInit { .. } if s.seq == PENDING => {
                return Err((
                    file(tid),
                    "a sem_init record is pending, which the runtime never writes".into(),
                ));
            }
            _ => {}
        }
        Ok(())
    }
}

/// A sync sequence number that two threads use: (seq, the later thread, the earlier one), of a
/// merge of the threads' numbers (each thread's increase, or the thread fails); every thread
/// walked to its end or its first failure.
fn shared_seq(threads: &mut [Thread]) -> Option<(u64, ThreadId, ThreadId)> {
    // The next number of each thread, smallest first.
    let mut next: BinaryHeap<Reverse<(u64, usize)>> = threads
        .iter_mut()
        .enumerate()
        .filter_map(|(i, t)| Some(Reverse((t.next_seq()?, i))))
        .collect();
    let mut last: Option<(u64, usize)> = None;
    let mut shared = None;
    while let Some(Reverse((seq, i))) = next.pop() {
        if let Some((_, other)) = last.filter(|&(s, _)| s == seq) {
            let (a, b) = (other.min(i), other.max(i));
            shared = Some((seq, threads[b].tid, threads[a].tid));
            break;
        }
        last = Some((seq, i));
        if let Some(n) = threads[i].next_seq() {
            next.push(Reverse((n, i)));
        }
    }
    // The rest of each thread is still checked: a failure there comes first.
    for t in threads.iter_mut() {
        while t.next_seq().is_some() {}
    }
    shared
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
        // Thread 1's end takes the number of main's second join (17).
        let mut events = trace.threads[1].events.to_vec();
        let Some(Event::Sync(end)) = events.last_mut() else {
            panic!("thread 1 ends with its end");
        };
        end.seq = 17;
        trace.threads[1].events = events.into();
        let err = check(&trace, &HashMap::new()).unwrap_err().to_string();
        assert!(
            err.contains("t1.trace") && err.contains("number 17 is also used by thread 0"),
            "{err}"
        );
    }

    #[test]
    fn a_thread_s_own_failure_comes_before_a_shared_number_and_the_first_file_s_first() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/Inputs/small");
        let trace = TraceDir::open(&dir).expect("the input trace reads");
        // A block that ends outside any (pending: its number checks nothing).
        let stray = Event::Sync(Sync {
            seq: PENDING,
            site: 1,
            op: SyncOp::TxEnd,
        });
        // Thread 1's end takes main's number 17, and a block ends outside any just before it:
        // thread 1's own failure, found after the shared number.
        let mut shared = trace.clone();
        let mut events = shared.threads[1].events.to_vec();
        let Some(Event::Sync(end)) = events.last_mut() else {
            panic!("thread 1 ends with its end");
        };
        end.seq = 17;
        events.insert(events.len() - 1, stray);
        shared.threads[1].events = events.into();
        let err = check(&shared, &HashMap::new()).unwrap_err().to_string();
        assert!(
            err.contains("t1.trace") && err.contains("outside any block"),
            "{err}"
        );
        // Main's failure at its last event comes before thread 1's at its first.
        let mut both = trace.clone();
        both.threads[0].events.push(stray);
        let mut events = both.threads[1].events.to_vec();
        events.insert(1, stray);
        both.threads[1].events = events.into();
        let err = check(&both, &HashMap::new()).unwrap_err().to_string();
        assert!(
            err.contains("t0.trace") && err.contains("outside any block"),
            "{err}"
        );
    }

    #[test]
    fn a_pending_sem_init_is_refused() {
        let init = SyncOp::SemInit { sem: 8, count: 2 };
        assert!(check(&small_with(init, 1 << 40), &HashMap::new()).is_ok());
        let err = check(&small_with(init, PENDING), &HashMap::new())
            .unwrap_err()
            .to_string();
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
        let err = check(&trace, &HashMap::new()).unwrap_err().to_string();
        assert!(err.contains("inside another one"), "{err}");
        trace.meta.calls = true;
        assert_eq!(
            check(&trace, &HashMap::new()).map_err(|e| e.to_string()),
            Ok(())
        );
        let stray = SyncOp::TxEnd;
        trace.threads[0].events.push(Event::Sync(Sync {
            seq: 44 << 40,
            site: 1,
            op: stray,
        }));
        let err = check(&trace, &HashMap::new()).unwrap_err().to_string();
        assert!(err.contains("outside any block"), "{err}");
    }
}
