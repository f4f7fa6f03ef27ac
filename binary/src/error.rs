//! Why the recorded executable could not be used.
//!
//! Takes nothing; gives [`BinaryError`], each variant with the executable's path, printed as one
//! lowercase line that says what to do.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug)]
pub enum BinaryError {
    /// The file could not be read.
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file's xxh3 hash is not the one the trace recorded.
    Rebuilt {
        path: PathBuf,
        hash: u64,
        recorded: String,
    },
    /// The file is no executable ilgen can read, or lacks (or has a bad) site table.
    Unreadable { path: PathBuf, what: String },
}

impl fmt::Display for BinaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BinaryError::Read { path, source } => write!(
                f,
                "failed to read the recorded binary {}: {source}",
                path.display()
            ),
            BinaryError::Rebuilt {
                path,
                hash,
                recorded,
            } => write!(
                f,
                "{} is not the binary that was recorded (its hash is {hash:016x}, the trace says \
                 {recorded}); it was rebuilt or replaced since, record the program again",
                path.display()
            ),
            BinaryError::Unreadable { path, what } => write!(f, "{}: {what}", path.display()),
        }
    }
}

impl std::error::Error for BinaryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BinaryError::Read { source, .. } => Some(source),
            _ => None,
        }
    }
}
