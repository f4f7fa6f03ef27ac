//! Reading the versioned JSON files of a trace directory (`meta.json`, schedules, outcomes).
//!
//! Takes a path, what the file should be, the version this build reads and the target type; gives
//! the decoded value, or a [`TraceError`] naming the file: not a regular file, not ours (not JSON,
//! saying what it is instead; no `format_version`), a `format_version` that is no whole number,
//! another version (read before the rest, so a future layout still gets the
//! version message), or corrupt.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::{what_it_is, TraceError};
use crate::file::read_regular;

/// Reads `path`, which should be `what` (e.g. "an ilgen schedule"), of version `expected`.
pub fn read_versioned<T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    expected: u32,
) -> Result<T, TraceError> {
    parse_versioned(path, &read_regular(path)?, what, expected)
}

/// [`read_versioned`] of bytes already read from `path`.
pub fn parse_versioned<T: DeserializeOwned>(
    path: &Path,
    bytes: &[u8],
    what: &'static str,
    expected: u32,
) -> Result<T, TraceError> {
    let value = serde_json::from_slice::<serde_json::Value>(bytes).ok();
    let not_ours = |found: &str| TraceError::NotATrace {
        path: path.into(),
        expected: what,
        found: format!("{found}; pass the file ilgen wrote, or record the program again"),
    };
    let Some(value) = value else {
        let what = what_it_is(bytes);
        // Text that does not parse is broken JSON; anything else is named for what it is.
        return Err(not_ours(&if what == "it is text" {
            "it is not JSON".to_owned()
        } else {
            format!("{what}, not JSON")
        }));
    };
    let version = value
        .get("format_version")
        .map(|v| v.as_u64().ok_or_else(|| v.to_string()));
    match version {
        None => Err(not_ours("it has no format_version field")),
        Some(Err(found)) => Err(TraceError::BadVersion {
            path: path.into(),
            found,
        }),
        Some(Ok(v)) if v != u64::from(expected) => Err(TraceError::Version {
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
