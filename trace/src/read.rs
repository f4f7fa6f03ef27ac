//! Reading a trace directory: the thread files decoded, then checked against each other.
//!
//! Takes a directory path; gives [`TraceDir::open`]'s [`TraceDir`]: `meta.json` and every
//! `t<tid>.trace` decoded (`format`: thread `tid` and the threads that took its file over after it
//! ended), with the segment a `pending.<n>` file holds for it when the
//! thread did not end (`pending`), once the files make one run (`validate`) and each inputs file
//! (`inputs`) belongs to one of its threads. Above both, so that
//! the checks can take the decoded types and the reader can call the checks.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::not_a_dir;
use crate::event::ThreadId;
use crate::events::IN_FILE;
use crate::file::{open_regular, read_regular};
use crate::format::{open_threads, read_threads, ThreadTrace, TraceDir, TraceError};
use crate::meta::{FileSum, Meta};

impl TraceDir {
    /// Reads `dir/meta.json` and every `dir/t<tid>.trace`, checks each against the length and
    /// checksum `meta.json` lists when the run was sealed, and that they make one run
    /// ([`crate::validate`]). A trace the runtime marked truncated reads up to its cut: see
    /// [`TraceDir::warning`].
    pub fn open(dir: &Path) -> Result<TraceDir, TraceError> {
        let io = |path: &Path, source| TraceError::Io {
            path: path.into(),
            source,
        };
        if !dir.is_dir() {
            return Err(TraceError::NotATrace {
                path: dir.into(),
                expected: "an ilgen trace directory",
                found: not_a_dir(dir),
            });
        }
        let meta = Meta::read(dir)?;
        let mut files = Vec::new();
        for entry in fs::read_dir(dir).map_err(|e| io(dir, e))? {
            let entry = entry.map_err(|e| io(dir, e))?;
            let name = entry.file_name();
            if let Some(tid) = name.to_str().and_then(thread_file_tid) {
                files.push((tid, entry.path()));
            }
        }
        // Checking a file decodes every record of it: the files are checked on all cores. The
        // first error in directory order is the one reported, whichever file failed first.
        let read = on_all_cores(&files, |(tid, path)| open_checked(&meta, *tid, path))
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        let mut threads = Vec::new();
        let mut file_of: HashMap<ThreadId, PathBuf> = HashMap::new();
        for ((_, path), in_file) in files.iter().zip(read) {
            for thread in in_file {
                let tid = thread.header.tid;
                if let Some(first) = file_of.insert(tid, path.clone()) {
                    return Err(TraceError::Inconsistent {
                        path: path.clone(),
                        reason: format!("it holds thread {tid}, and so does {}", first.display()),
                    });
                }
                threads.push(thread);
            }
        }
        threads.sort_by_key(|t| t.header.tid);
        crate::pending::recover(dir, meta.files.is_some(), &mut threads)?;
        let trace = TraceDir {
            path: dir.into(),
            meta,
            threads,
        };
        crate::validate::check(&trace, &file_of)?;
        check_inputs(&trace)?;
        Ok(trace)
    }
}

/// The inputs files of `trace` (`crate::inputs`) read and each matched to its thread: replay reads
/// them, so a bad one is refused here, before a candidate is replayed.
fn check_inputs(trace: &TraceDir) -> Result<(), TraceError> {
    for file in crate::inputs::read_dir(&trace.path)? {
        let h = file.header;
        let thread = trace.threads.iter().find(|t| t.header.tid == h.tid);
        if thread
            .is_none_or(|t| (t.header.parent, t.header.child_index) != (h.parent, h.child_index))
        {
            return Err(TraceError::Inconsistent {
                path: trace.path.join(crate::inputs::inputs_file_name(h.tid)),
                reason: format!(
                    "it names thread {} (child {} of {}), which the trace has not",
                    h.tid,
                    h.child_index,
                    crate::event::known_thread(h.parent)
                        .map_or_else(|| "no thread".to_owned(), |p| format!("thread {p}"))
                ),
            });
        }
    }
    Ok(())
}

/// The thread file `path` of thread `tid` (its first thread), decoded and checked against `meta`.
fn open_checked(meta: &Meta, tid: ThreadId, path: &Path) -> Result<Vec<ThreadTrace>, TraceError> {
    let (file, size) = open_regular(path)?;
    // Decoded first: a file of another version or no thread file at all is named so.
    // A large file's records stay in it (read in pieces, summed as they are checked);
    // a small one's are read, summed and kept in memory.
    let (threads, sum) = if size >= IN_FILE {
        open_threads(path, file, size)?
    } else {
        drop(file);
        let bytes = read_regular(path)?;
        let sum = FileSum::of(&bytes);
        (read_threads(path, bytes)?, sum)
    };
    crate::validate::check_sealed(meta, path, &sum)?;
    if threads[0].header.tid != tid {
        return Err(TraceError::Inconsistent {
            path: path.into(),
            reason: format!(
                "its header says it is thread {}, its name says thread {tid}",
                threads[0].header.tid
            ),
        });
    }
    Ok(threads)
}

/// `f` of every item, in their order, computed by as many threads as there are cores (each
/// takes the next item left). Scoped threads of std rather than rayon, which the analysis crates
/// use: this crate is linked into the runtime too, which should carry no thread pool.
fn on_all_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let work = || {
            let mut mine = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else {
                    return mine;
                };
                mine.push((i, f(item)));
            }
        };
        let handles: Vec<_> = (0..workers.min(items.len()))
            .map(|_| s.spawn(work))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_unstable_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// The thread id in a thread file name `t<tid>.trace`, `None` for any other name.
pub fn thread_file_tid(name: &str) -> Option<ThreadId> {
    let digits = name.strip_prefix('t')?.strip_suffix(".trace")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}
