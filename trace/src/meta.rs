//! `meta.json`: what was run, where, and how the run ended.
//!
//! Takes a trace directory path (or a [`Meta`] to write); gives the run's metadata. Written by the
//! runtime when the process starts and rewritten when it ends, so a killed run still has one.
//! The thread tree is not here: each thread file's header names its parent and child index, so the
//! tree survives any way the process can end.
//!
//! A run that finished normally (`exit`, nothing truncated) is sealed: `meta.json` then lists every
//! thread file with its length and checksum ([`FileSum`], xxh3-64 of the file's bytes), and ends
//! with a `checksum` of its own bytes before that value ([`Meta::to_sealed_json`]). [`Meta::read`]
//! refuses a sealed `meta.json` whose bytes differ from what the runtime wrote (any byte, even
//! whitespace); the trace reader refuses a thread file whose length or checksum differ. A run that
//! did not finish (killed, truncated, ended by a signal) has neither: its files are only checked
//! for structure.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::error::{TraceError, FORMAT_VERSION};
use crate::file::read_regular;
use crate::json::parse_versioned;

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
    /// The run recorded calls (runtime option `calls=1`): its `TxBegin`/`TxEnd` markers also
    /// begin and end calls, which nest; a replay records them too, or its count of each thread's
    /// sync operations would not be the schedule's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub calls: bool,
    /// The instrumented shared objects the run loaded (linked or `dlopen`ed), in the order their
    /// ids were given: where each one's site ids are. Empty when there were none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<Module>,
    /// `None` while the process runs, and after it was killed by a signal it could not catch.
    pub end: Option<RunEnd>,
    /// Each thread file (by name) as the runtime left it when the run finished normally; absent
    /// when it did not (see the module doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<BTreeMap<String, FileSum>>,
    /// xxh3-64 (16 hex digits) of the bytes of `meta.json` before this value; present with `files`.
    /// It must stay the last field: it covers everything serialized before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
}

/// A run of this format with nothing recorded yet: no binary, no process, no end; what a
/// writer fills in field by field.
impl Default for Meta {
    fn default() -> Meta {
        Meta {
            format_version: FORMAT_VERSION,
            pid: 0,
            argv: Vec::new(),
            cwd: String::new(),
            binary: String::new(),
            build_id: String::new(),
            load_base: 0,
            started_unix_ms: 0,
            truncated: false,
            chaos_seed: None,
            calls: false,
            modules: Vec::new(),
            end: None,
            files: None,
            checksum: None,
        }
    }
}

/// An instrumented shared object of the run: its `ilgen_sites` section's unit `i` has the site
/// id `first_site + i`. A replay gives the same ids to the object with the same build id (or,
/// without one, the same path), wherever and whenever it is loaded.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Module {
    /// Absolute path it was loaded from.
    pub path: String,
    /// Its ELF build id (lowercase hex, empty if it has none), read from its mapped notes.
    pub build_id: String,
    /// Address it was loaded at in the recorded run.
    pub load_base: u64,
    pub first_site: u32,
    /// Units of its section: its ids are `first_site..first_site + units`.
    pub units: u32,
}

impl Module {
    /// The module of `modules` that is this one (`build_id` and `path` of a loaded object) with
    /// `units` units: by build id, or by path for objects without one.
    pub fn find<'a>(
        modules: &'a [Module],
        build_id: &str,
        path: &str,
        units: u32,
    ) -> Option<&'a Module> {
        modules.iter().find(|m| {
            m.units == units
                && if build_id.is_empty() {
                    m.build_id.is_empty() && m.path == path
                } else {
                    m.build_id == build_id
                }
        })
    }
}

/// A file's length and checksum: xxh3-64 of its bytes, as 16 hex digits.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct FileSum {
    pub len: u64,
    pub xxh3: String,
}

impl FileSum {
    /// The sum of `bytes`, a whole file already in memory.
    pub fn of(bytes: &[u8]) -> FileSum {
        FileSum {
            len: bytes.len() as u64,
            xxh3: hex(xxh3_64(bytes)),
        }
    }

    /// The sum of everything `reader` yields, read in pieces: the same value as [`FileSum::of`].
    pub fn read(mut reader: impl std::io::Read) -> std::io::Result<FileSum> {
        let mut hasher = Xxh3::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut len = 0u64;
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    hasher.update(&buf[..n]);
                    len += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(FileSum::of_hasher(len, &hasher))
    }

    /// The sum of the `len` bytes `hasher` was given.
    pub fn of_hasher(len: u64, hasher: &Xxh3) -> FileSum {
        FileSum {
            len,
            xxh3: hex(hasher.digest()),
        }
    }
}

fn hex(sum: u64) -> String {
    format!("{sum:016x}")
}

/// What a sealed `meta.json` ends with: its checksum's key, the value, then this.
const CHECKSUM_KEY: &str = ",\n  \"checksum\": \"";
const SEALED_END: &str = "\"\n}";

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
        let bytes = read_regular(&path)?;
        let meta: Meta = parse_versioned(&path, &bytes, "ilgen run metadata", FORMAT_VERSION)?;
        meta.check_seal(&path, &bytes)?;
        Ok(meta)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("meta serializes")
    }

    /// The JSON of a finished run: [`Meta::to_json`] with `checksum` set to the xxh3-64 of every
    /// byte before its value (whatever `checksum` held before is replaced).
    pub fn to_sealed_json(&self) -> String {
        let unsealed = Meta {
            checksum: None,
            ..self.clone()
        }
        .to_json();
        let mut out = unsealed[..unsealed.len() - "\n}".len()].to_owned();
        out.push_str(CHECKSUM_KEY);
        out.push_str(&hex(xxh3_64(out.as_bytes())));
        out.push_str(SEALED_END);
        out
    }

    /// A sealed `meta.json` (one with `checksum`) must be byte for byte what the runtime wrote; one
    /// without it must not list files (only a sealed one does).
    fn check_seal(&self, path: &Path, bytes: &[u8]) -> Result<(), TraceError> {
        let changed = |reason: &str| TraceError::Changed {
            path: path.into(),
            reason: reason.into(),
        };
        let Some(sum) = &self.checksum else {
            return match self.files {
                Some(_) => Err(changed(
                    "it lists thread files but has no checksum of its own",
                )),
                None => Ok(()),
            };
        };
        let body = bytes
            .strip_suffix(SEALED_END.as_bytes())
            .and_then(|b| b.strip_suffix(sum.as_bytes()))
            .filter(|b| b.ends_with(CHECKSUM_KEY.as_bytes()));
        match body {
            Some(body) if hex(xxh3_64(body)) == *sum && self.files.is_some() => Ok(()),
            _ => Err(changed("checksum mismatch")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(pid: u32, end: RunEnd) -> Meta {
        Meta {
            format_version: FORMAT_VERSION,
            pid,
            argv: vec!["./a".into()],
            cwd: "/".into(),
            binary: "/a".into(),
            build_id: "c0ffee".into(),
            load_base: 0x5555_0000,
            started_unix_ms: 0,
            truncated: false,
            chaos_seed: Some(7),
            calls: false,
            modules: Vec::new(),
            end: Some(end),
            files: None,
            checksum: None,
        }
    }

    #[test]
    fn a_module_is_found_by_build_id_or_without_one_by_path() {
        let module = |path: &str, build_id: &str, first_site, units| Module {
            path: path.into(),
            build_id: build_id.into(),
            load_base: 0x7f00_0000_0000,
            first_site,
            units,
        };
        let recorded = [
            module("/a/liba.so", "aa", 10, 5),
            module("/a/libb.so", "", 15, 3),
            module("/a/libc.so", "cc", 18, 4),
        ];
        let first = |build_id, path, units| {
            Module::find(&recorded, build_id, path, units).map(|m| m.first_site)
        };
        // Moved or loaded by another name: the build id decides.
        assert_eq!(first("aa", "/elsewhere/liba.so.1", 5), Some(10));
        assert_eq!(first("cc", "/a/libc.so", 4), Some(18));
        assert_eq!(first("", "/a/libb.so", 3), Some(15));
        // Rebuilt (another id, or another size), or unknown without an id.
        assert_eq!(first("ab", "/a/liba.so", 5), None);
        assert_eq!(first("aa", "/a/liba.so", 6), None);
        assert_eq!(first("", "/a/liba.so", 5), None);
        assert_eq!(first("", "/a/libd.so", 3), None);
    }

    #[test]
    fn end_is_tagged_json() {
        let m = sample(1, RunEnd::Signal { signal: 15 });
        let json = m.to_json();
        assert!(json.contains(r#""kind": "signal""#), "{json}");
        assert_eq!(serde_json::from_str::<Meta>(&json).unwrap(), m);
    }

    #[test]
    fn a_sealed_meta_reads_back_and_any_changed_byte_is_refused() {
        let dir = std::env::temp_dir().join(format!("ilgen-meta-seal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(META_FILE);
        let meta = Meta {
            files: Some([("t0.trace".into(), FileSum::of(b"x"))].into()),
            ..sample(12, RunEnd::Exit)
        };
        let sealed = meta.to_sealed_json();
        std::fs::write(&path, &sealed).unwrap();
        let read = Meta::read(&dir).unwrap();
        assert_eq!(read.files, meta.files);
        assert_eq!(read.checksum.as_deref().map(str::len), Some(16));
        // A digit, a space turned into a tab (still JSON, same meaning), the checksum's own digit.
        for at in [sealed.find("12").unwrap() + 1, 1, sealed.len() - 5] {
            let mut bytes = sealed.clone().into_bytes();
            bytes[at] = if bytes[at] == b'\n' {
                b'\t'
            } else {
                bytes[at] ^ 1
            };
            std::fs::write(&path, &bytes).unwrap();
            let err = Meta::read(&dir).unwrap_err().to_string();
            assert!(
                err.ends_with(
                    "meta.json was changed after recording (checksum mismatch); record again"
                ),
                "byte {at}: {err}"
            );
        }
        // Files listed without a checksum of its own: only an edit makes that.
        std::fs::write(&path, meta.to_json()).unwrap();
        let err = Meta::read(&dir).unwrap_err().to_string();
        assert!(
            err.contains("lists thread files but has no checksum"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_sum_read_in_pieces_is_the_sum_of_the_bytes() {
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let pieces = FileSum::read(std::io::Cursor::new(&bytes)).unwrap();
        assert_eq!(pieces, FileSum::of(&bytes));
        assert_eq!(pieces.len, 3_000_000);
        assert_ne!(FileSum::of(&bytes[1..]).xxh3, pieces.xxh3);
    }
}
