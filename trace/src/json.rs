//! Reading the versioned JSON files of a trace directory (`meta.json`, schedules, outcomes).
//!
//! Takes a path, the version this build reads and the target type; gives the decoded value, or a
//! [`TraceError`] naming the file: not ours (no `format_version`), another version (read before
//! the rest, so a future layout still gets the version message), or corrupt.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::format::TraceError;

pub fn read_versioned<T: DeserializeOwned>(path: &Path, expected: u32) -> Result<T, TraceError> {
    let text = std::fs::read_to_string(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => TraceError::NotATrace { path: path.into() },
        _ => TraceError::Io {
            path: path.into(),
            source,
        },
    })?;
    let version = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.get("format_version").and_then(|v| v.as_u64()));
    match version {
        None => Err(TraceError::NotATrace { path: path.into() }),
        Some(v) if v != u64::from(expected) => Err(TraceError::Version {
            path: path.into(),
            found: v as u32,
            expected,
        }),
        Some(_) => serde_json::from_str(&text).map_err(|e| TraceError::Corrupt {
            path: path.into(),
            offset: 0,
            reason: e.to_string(),
        }),
    }
}
