//! Why a replay could not be run (not why it failed to confirm: that is a [`crate::verdict`]).
//!
//! Takes nothing; gives [`ConfirmError`], each variant with the file or process concerned, printed
//! as one lowercase line.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    /// The runtime splits `ILGEN_OPTIONS` at `:` and white space: this path cannot be passed.
    #[error(
        "cannot replay with path {}: ILGEN_OPTIONS cannot carry a path with `:` or white space; \
         move the trace directory",
        .0.display()
    )]
    PathInOptions(PathBuf),
    /// A path could not be made absolute.
    #[error("failed to resolve {}: {source}", path.display())]
    Resolve {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A replay directory or output file could not be created.
    #[error("failed to create {}: {source}", path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The recorded binary could not be started.
    #[error("failed to run the recorded binary {}: {source}", binary.display())]
    Start {
        binary: PathBuf,
        source: std::io::Error,
    },
    /// Waiting for a replay process failed.
    #[error("failed to wait for replay {pid}: {source}")]
    Wait { pid: u32, source: std::io::Error },
    /// A trace directory or file could not be read.
    #[error("failed to read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A trace that someone else could have written: it names the program a replay runs.
    #[error(
        "{} {why}: whoever can write a trace chooses the program ilgen replays; record the \
         program again yourself, or pass --trust-trace if you trust who wrote it",
        path.display()
    )]
    Untrusted { path: PathBuf, why: String },
    /// A replay flag out of range (`--replay-timeout 0`, `--replay-jobs 0`).
    #[error("{0} must be at least 1")]
    Flag(&'static str),
    /// ilgen was stopped by a signal: no more replays start.
    #[error("ilgen is stopping: no more replays start")]
    Stopping,
}
