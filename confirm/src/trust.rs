//! Whether a trace may make ilgen run a program: a trace is like a script.
//!
//! Takes a trace directory and `--trust-trace`; gives `Ok` when only the user (or root) could have
//! written it, else a [`ConfirmError`] naming the directory or file and what to do. `ilgen detect`
//! and `ilgen replay` execute the program and argv that `meta.json` names, so whoever can write a trace
//! chooses what they run: the directory and every file in it must be owned by the user or root
//! and writable by neither group nor others. Symlinks are not followed here; the reader refuses
//! them.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::error::ConfirmError;

/// Refuses `dir` unless it and its entries are the user's alone, or `trusted`.
pub fn check(dir: &Path, trusted: bool) -> Result<(), ConfirmError> {
    if trusted {
        return Ok(());
    }
    let io = |path: &Path, source| ConfirmError::Read {
        path: path.to_path_buf(),
        source,
    };
    // SAFETY: geteuid never fails.
    let me = unsafe { libc::geteuid() };
    let mut paths = vec![dir.to_path_buf()];
    for entry in std::fs::read_dir(dir).map_err(|e| io(dir, e))? {
        paths.push(entry.map_err(|e| io(dir, e))?.path());
    }
    for path in paths {
        let md = std::fs::symlink_metadata(&path).map_err(|e| io(&path, e))?;
        if md.file_type().is_symlink() {
            continue;
        }
        let why = if md.mode() & 0o022 != 0 {
            format!(
                "is writable by group or others (mode {:o})",
                md.mode() & 0o777
            )
        } else if md.uid() != me && md.uid() != 0 {
            format!("belongs to another user (uid {})", md.uid())
        } else {
            continue;
        };
        return Err(ConfirmError::Untrusted { path, why });
    }
    Ok(())
}
