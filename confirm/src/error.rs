//! Why a replay could not be run (not why it failed to confirm: that is a [`crate::verdict`]).
//!
//! Takes nothing; gives [`ConfirmError`], each variant with the file or process concerned, printed
//! as one lowercase line.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug)]
pub enum ConfirmError {
    /// The runtime splits `ILGEN_OPTIONS` at `:` and white space: this path cannot be passed.
    PathInOptions(PathBuf),
    /// A path could not be made absolute.
    Resolve {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A replay directory or output file could not be created.
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The recorded binary could not be started.
    Start {
        binary: PathBuf,
        source: std::io::Error,
    },
    /// Waiting for a replay process failed.
    Wait { pid: u32, source: std::io::Error },
    /// A worker of [`crate::run::run_all`] ended without handing back its replay.
    WorkerLost,
    /// ilgen was stopped by a signal: no more replays start.
    Stopping,
}

impl fmt::Display for ConfirmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfirmError::PathInOptions(p) => write!(
                f,
                "cannot replay with path {}: ILGEN_OPTIONS cannot carry a path with `:` or white \
                 space; move the trace directory",
                p.display()
            ),
            ConfirmError::Resolve { path, source } => {
                write!(f, "failed to resolve {}: {source}", path.display())
            }
            ConfirmError::Create { path, source } => {
                write!(f, "failed to create {}: {source}", path.display())
            }
            ConfirmError::Start { binary, source } => write!(
                f,
                "failed to run the recorded binary {}: {source}",
                binary.display()
            ),
            ConfirmError::Wait { pid, source } => {
                write!(f, "failed to wait for replay {pid}: {source}")
            }
            ConfirmError::WorkerLost => f.write_str("a replay worker stopped without a result"),
            ConfirmError::Stopping => f.write_str("ilgen is stopping: no more replays start"),
        }
    }
}

impl std::error::Error for ConfirmError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfirmError::Resolve { source, .. }
            | ConfirmError::Create { source, .. }
            | ConfirmError::Start { source, .. }
            | ConfirmError::Wait { source, .. } => Some(source),
            ConfirmError::PathInOptions(_) | ConfirmError::WorkerLost | ConfirmError::Stopping => {
                None
            }
        }
    }
}
