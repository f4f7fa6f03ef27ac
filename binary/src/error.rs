//! Why the recorded executable could not be used.
//!
//! Takes nothing; gives [`BinaryError`], each variant with the executable's path, printed as one
//! lowercase line that says what to do.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum BinaryError {
    /// The file could not be read.
    #[error("failed to read the recorded binary {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file's ELF build id is not the one the runtime read from the recorded process.
    #[error(
        "{} is not the binary that was recorded (its build id is {found}, the trace says \
         {recorded:?}): it was rebuilt or replaced since; record the program again",
        path.display()
    )]
    OtherBuild {
        path: PathBuf,
        found: String,
        recorded: String,
    },
    /// The file has no ELF build id, so nothing tells it from a rebuilt one.
    #[error(
        "{} has no ELF build id, so ilgen cannot check that it is the binary that was recorded; \
         rebuild it with `ilgen cc` (without -Wl,--build-id=none) and record it again",
        path.display()
    )]
    NoBuildId { path: PathBuf },
    /// The file is no executable ilgen can read, or lacks (or has a bad) site table.
    #[error("{}: {what}", path.display())]
    Unreadable { path: PathBuf, what: String },
}
