//! Why a trace could not be read, and the format version every trace file carries.
//!
//! Takes nothing; gives [`TraceError`] (each variant names the file and says what to do) and
//! [`FORMAT_VERSION`], whose history is in `format`'s doc. Both sit below every reader in this
//! crate (`file`, `format`, `json`, `meta`, `schedule`, `replay`, `validate`), so none of them
//! imports another to name its errors.

use std::path::PathBuf;

/// The version of thread files and `meta.json` (see `format` for the changes of each).
pub const FORMAT_VERSION: u32 = 10;

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
        /// What it is instead (see [`what_it_is`]) and what to pass.
        found: String,
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
    /// A `format_version` that is no whole number (negative, fractional, text, beyond u64).
    #[error(
        "{} has format version {found}, which no ilgen writes (versions are whole numbers); pass \
         the file ilgen wrote, or record the program again",
        path.display()
    )]
    BadVersion { path: PathBuf, found: String },
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
    /// A file of a sealed trace (a run that finished normally) differs from what the runtime
    /// wrote: its length or checksum in `meta.json`, or `meta.json`'s own checksum.
    #[error(
        "{} was changed after recording ({reason}); record again",
        path.display()
    )]
    Changed { path: PathBuf, reason: String },
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

/// The error for a file of a trace directory, `path`, that lacks its `magic`: what it is
/// instead, and to record again.
pub(crate) fn without_magic(
    path: &std::path::Path,
    expected: &'static str,
    magic: &str,
    bytes: &[u8],
) -> TraceError {
    TraceError::NotATrace {
        path: path.into(),
        expected,
        found: format!(
            "{}, without the {magic} magic; a trace directory holds only files the runtime \
             wrote, record the program again",
            what_it_is(bytes)
        ),
    }
}

/// What a file that is not the expected ilgen file is, from its first bytes, so that a message
/// can say "it is an ELF file" rather than only what it is not.
pub(crate) fn what_it_is(bytes: &[u8]) -> String {
    const KNOWN: &[(&[u8], &str)] = &[
        (
            b"\x7fELF",
            "an ELF file (a program, library or object file)",
        ),
        (b"ILGENTHR", "an ilgen thread file"),
        (b"ILGENPND", "an ilgen pending segment"),
        (b"ILGENIN\0", "an ilgen inputs file"),
        (b"#!", "a script"),
        (b"\x1f\x8b", "a gzip archive"),
        (b"PK\x03\x04", "a zip archive"),
    ];
    if bytes.is_empty() {
        return "it is empty".into();
    }
    if let Some((_, what)) = KNOWN.iter().find(|(magic, _)| bytes.starts_with(magic)) {
        return format!("it is {what}");
    }
    let head = &bytes[..bytes.len().min(512)];
    let text = std::str::from_utf8(head).is_ok_and(|s| {
        s.chars()
            .all(|c| !c.is_control() || c.is_ascii_whitespace())
    });
    if text {
        return "it is text".into();
    }
    let shown: Vec<String> = head.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("it is binary data starting with {}", shown.join(" "))
}

/// Why a directory is not a trace, and what to pass instead.
pub(crate) fn not_a_dir(path: &std::path::Path) -> String {
    let what = match std::fs::symlink_metadata(path) {
        Err(_) => "it does not exist",
        Ok(m) if m.is_dir() => "it has no meta.json",
        Ok(m) if m.is_file() => "it is a file, not a directory",
        Ok(_) => "it is no directory",
    };
    format!(
        "{what}; pass a directory that an instrumented program wrote, e.g. \
         ./ilgen-out/<binary>-<pid>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_named_for_what_they_are() {
        assert_eq!(what_it_is(b""), "it is empty");
        assert_eq!(
            what_it_is(b"\x7fELF\x02\x01\x01"),
            "it is an ELF file (a program, library or object file)"
        );
        assert_eq!(
            what_it_is(b"ILGENTHR\x03\0\0\0"),
            "it is an ilgen thread file"
        );
        assert_eq!(what_it_is(b"#!/bin/sh\n"), "it is a script");
        assert_eq!(what_it_is(b"{\"a\": 1}\n\tb"), "it is text");
        assert_eq!(
            what_it_is(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
            "it is binary data starting with 00 01 02 03 04 05 06 07"
        );
    }
}
