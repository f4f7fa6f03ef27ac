//! Why a trace could not be read, and the format version every trace file carries.
//!
//! Takes nothing; gives [`TraceError`] (each variant names the file and says what to do) and
//! [`FORMAT_VERSION`], whose history is in `format`'s doc. Both sit below every reader in this
//! crate (`file`, `format`, `json`, `meta`, `schedule`, `replay`, `validate`), so none of them
//! imports another to name its errors.

use std::path::PathBuf;

/// The version of thread files and `meta.json` (see `format` for the changes of each).
pub const FORMAT_VERSION: u32 = 3;

/// Why a trace could not be read. Each names the file and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("failed to read trace at {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file or directory is not the ilgen file the caller expected.
    #[error("{} is not {expected}: {found}", path.display())]
    NotATrace {
        path: PathBuf,
        /// What was expected, e.g. "an ilgen trace directory".
        expected: &'static str,
        /// What is wrong with it and what to pass instead.
        found: &'static str,
    },
    #[error(
        "{} has format version {found}, {} version {expected} that this ilgen reads; {}",
        path.display(),
        version_advice(*found, *expected).0,
        version_advice(*found, *expected).1
    )]
    Version {
        path: PathBuf,
        found: u64,
        expected: u32,
    },
    #[error(
        "{} is truncated at byte {offset} (a record runs past the end of the file); the trace \
         was cut after it was written, record the program again",
        path.display()
    )]
    Truncated { path: PathBuf, offset: usize },
    #[error(
        "{} is corrupt at byte {offset}: {reason}; record the program again",
        path.display()
    )]
    Corrupt {
        path: PathBuf,
        offset: usize,
        reason: String,
    },
    /// A symlink, FIFO, device or directory where a regular file belongs.
    #[error(
        "{} is {kind}, not a regular file; a trace directory holds only files the runtime wrote: \
         remove it or record the program again",
        path.display()
    )]
    NotRegular { path: PathBuf, kind: &'static str },
    /// The file is larger than the memory the reader can reserve for it.
    #[error(
        "{} ({size} bytes) does not fit in memory; record a shorter run (or exclude code with \
         the pass's exclude option)",
        path.display()
    )]
    TooLarge { path: PathBuf, size: u64 },
    /// Every file reads, but together they do not make one run (see [`crate::validate`]).
    #[error(
        "{} is inconsistent with the rest of its trace: {reason}; the trace was altered after it \
         was written, record the program again",
        path.display()
    )]
    Inconsistent { path: PathBuf, reason: String },
}

/// Whether a trace of format version `found` is newer or older than the `expected` one this ilgen
/// reads, and what to do about it.
fn version_advice(found: u64, expected: u32) -> (&'static str, &'static str) {
    if found > u64::from(expected) {
        (
            "newer than",
            "read it with the ilgen that wrote it, or record the program again with this one",
        )
    } else {
        ("older than", "record the program again with this ilgen")
    }
}

/// Why a directory is not a trace, and what to pass instead.
pub(crate) const NOT_A_TRACE_DIR: &str =
    "it has no meta.json; pass a directory that an instrumented program wrote, e.g. \
     ./ilgen-out/<binary>-<pid>";
