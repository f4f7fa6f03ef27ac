//! `meta.json`: what was run, where, and how the run ended.
//!
//! Takes a trace directory path (or a [`Meta`] to write); gives the run's metadata. Written by the
//! runtime when the process starts and rewritten when it ends, so a killed run still has one.
//! The thread tree is not here: each thread file's header names its parent and child index, so the
//! tree survives any way the process can end.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{TraceError, FORMAT_VERSION};
use crate::json::read_versioned;

pub const META_FILE: &str = "meta.json";

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    pub format_version: u32,
    pub pid: u32,
    pub argv: Vec<String>,
    pub cwd: String,
    /// Absolute path of the executable that ran (its site table names the source lines).
    pub binary: String,
    /// The executable's ELF build id (lowercase hex, empty if it has none), as the runtime read it
    /// from the running process's own program headers: it tells a rebuilt binary from the
    /// recorded one, and replays run only a binary that has it.
    pub build_id: String,
    /// Address the executable was loaded at (0 when not position independent): subtract it from a
    /// recorded address to look the address up in the executable's symbol table.
    pub load_base: u64,
    pub started_unix_ms: u64,
    /// The runtime could not grow a thread file (file size limit, disk full, quota): that thread's
    /// records end early, and the trace is analysed up to the cut with a warning.
    #[serde(default)]
    pub truncated: bool,
    /// The `chaos=SEED` the run was perturbed with (`None`: not perturbed); the same seed makes
    /// the same perturbation decisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chaos_seed: Option<u64>,
    /// `None` while the process runs, and after it was killed by a signal it could not catch.
    pub end: Option<RunEnd>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunEnd {
    /// `exit()` or a return from `main`.
    Exit,
    /// A fatal or terminating signal the runtime caught (it then re-raised it).
    Signal { signal: i32 },
}

impl Meta {
    pub fn read(dir: &Path) -> Result<Meta, TraceError> {
        let path = dir.join(META_FILE);
        // A directory without meta.json is not a trace directory: name the directory.
        if std::fs::symlink_metadata(&path).is_err() {
            return Err(TraceError::NotATrace {
                path: dir.into(),
                expected: "an ilgen trace directory",
                found: crate::error::not_a_dir(dir),
            });
        }
        read_versioned(&path, "ilgen run metadata", FORMAT_VERSION)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("meta serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_is_tagged_json() {
        let m = Meta {
            format_version: FORMAT_VERSION,
            pid: 1,
            argv: vec!["./a".into()],
            cwd: "/".into(),
            binary: "/a".into(),
            build_id: "c0ffee".into(),
            load_base: 0x5555_0000,
            started_unix_ms: 0,
            truncated: false,
            chaos_seed: Some(7),
            end: Some(RunEnd::Signal { signal: 15 }),
        };
        let json = m.to_json();
        assert!(json.contains(r#""kind": "signal""#), "{json}");
        assert_eq!(serde_json::from_str::<Meta>(&json).unwrap(), m);
    }
}
