//! Reading the versioned JSON files of a trace directory (`meta.json`, schedules, outcomes).
//!
//! Takes a path, what the file should be, the version this build reads and the target type; gives
//! the decoded value, or a [`TraceError`] naming the file: not a regular file, not ours (not JSON,
//! no `format_version`), another version (read before the rest, so a future layout still gets the
//! version message), or corrupt.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::TraceError;
use crate::file::read_regular;

/// Reads `path`, which should be `what` (e.g. "an ilgen schedule"), of version `expected`.
pub fn read_versioned<T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    expected: u32,
) -> Result<T, TraceError> {
    let bytes = read_regular(path)?;
    let value = serde_json::from_slice::<serde_json::Value>(&bytes).ok();
    let not_ours = |found| TraceError::NotATrace {
        path: path.into(),
        expected: what,
        found,
    };
    let Some(value) = value else {
        return Err(not_ours(
            "it is not JSON; pass the file ilgen wrote, or record the program again",
        ));
    };
    match value.get("format_version").and_then(|v| v.as_u64()) {
        None => Err(not_ours(
            "it has no format_version field; pass the file ilgen wrote, or record the program \
             again",
        )),
        Some(v) if v != u64::from(expected) => Err(TraceError::Version {
            path: path.into(),
            found: v,
            expected,
        }),
        Some(_) => serde_json::from_value(value).map_err(|e| TraceError::Corrupt {
            path: path.into(),
            offset: 0,
            reason: e.to_string(),
        }),
    }
}
