//! Reading a trace directory: the thread files decoded, then checked against each other.
//!
//! Takes a directory path; gives [`TraceDir::open`]'s [`TraceDir`]: `meta.json` and every
//! `t<tid>.trace` decoded (`format`), with the segment a `pending.<n>` file holds for it when the
//! thread did not end (`pending`), once the files make one run (`validate`). Above both, so that
//! the checks can take the decoded types and the reader can call the checks.

use std::fs;
use std::path::Path;

use crate::error::not_a_dir;
use crate::event::ThreadId;
use crate::events::IN_FILE;
use crate::file::{open_regular, read_regular};
use crate::format::{open_thread, read_thread, TraceDir, TraceError};
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
        let mut threads = Vec::new();
        for entry in fs::read_dir(dir).map_err(|e| io(dir, e))? {
            let entry = entry.map_err(|e| io(dir, e))?;
            let name = entry.file_name();
            let Some(tid) = name.to_str().and_then(thread_file_tid) else {
                continue;
            };
            let path = entry.path();
            let (file, size) = open_regular(&path)?;
            // Decoded first: a file of another version or no thread file at all is named so.
            // A large file's records stay in it (read in pieces, summed as they are checked);
            // a small one's are read, summed and kept in memory.
            let (thread, sum) = if size >= IN_FILE {
                open_thread(&path, file, size)?
            } else {
                drop(file);
                let bytes = read_regular(&path)?;
                let sum = FileSum::of(&bytes);
                (read_thread(&path, bytes)?, sum)
            };
            crate::validate::check_sealed(&meta, &path, &sum)?;
            if thread.header.tid != tid {
                return Err(TraceError::Inconsistent {
                    path,
                    reason: format!(
                        "its header says it is thread {}, its name says thread {tid}",
                        thread.header.tid
                    ),
                });
            }
            threads.push(thread);
        }
        threads.sort_by_key(|t| t.header.tid);
        crate::pending::recover(dir, meta.files.is_some(), &mut threads)?;
        let trace = TraceDir {
            path: dir.into(),
            meta,
            threads,
        };
        crate::validate::check(&trace)?;
        Ok(trace)
    }
}

/// The thread id in a thread file name `t<tid>.trace`, `None` for any other name.
pub fn thread_file_tid(name: &str) -> Option<ThreadId> {
    let digits = name.strip_prefix('t')?.strip_suffix(".trace")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}
