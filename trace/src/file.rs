//! Opening the files of a trace directory: regular files only.
//!
//! Takes a path; gives its bytes or the opened file, or a [`TraceError`] naming the file. The file is opened with
//! `O_NOFOLLOW | O_NONBLOCK` and checked with `fstat` before a byte is read, so a symlink (to
//! `/dev/zero`, say), a FIFO or a device planted in a trace directory is refused at once instead
//! of hanging or exhausting the reader; memory for the bytes is reserved fallibly, so a file too
//! large for memory is an error too, not an abort. Gives too the little-endian fields that the
//! fixed layouts (the pending file, the inputs files, the site table) are read with.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::error::TraceError;

/// Reads `path`, which must be a regular file (not a symlink to one).
pub fn read_regular(path: &Path) -> Result<Vec<u8>, TraceError> {
    let (mut file, size) = open_regular(path)?;
    let mut bytes = Vec::new();
    crate::memory::fallibly(|| bytes.try_reserve_exact(size as usize)).map_err(|_| {
        TraceError::TooLarge {
            path: path.into(),
            size,
        }
    })?;
    file.read_to_end(&mut bytes)
        .map_err(|source| TraceError::Io {
            path: path.into(),
            source,
        })?;
    Ok(bytes)
}

/// Opens `path`, which must be a regular file (not a symlink to one), and gives its size.
pub fn open_regular(path: &Path) -> Result<(std::fs::File, u64), TraceError> {
    let io = |source| TraceError::Io {
        path: path.into(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => TraceError::NotRegular {
                path: path.into(),
                kind: "a symbolic link",
            },
            _ => io(e),
        })?;
    let meta = file.metadata().map_err(io)?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let kind = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        };
        return Err(TraceError::NotRegular {
            path: path.into(),
            kind,
        });
    }
    Ok((file, meta.len()))
}

/// The little-endian `u32` at byte `at` of `bytes` (which the caller has checked is long enough).
pub(crate) fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

/// The little-endian `u64` at byte `at` of `bytes` (which the caller has checked is long enough).
pub(crate) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("ilgen-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn symlinks_fifos_and_devices_are_refused_by_name() {
        let d = dir("kinds");
        let link = d.join("t1.trace");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let err = read_regular(&link).unwrap_err();
        assert!(
            err.to_string().contains("t1.trace is a symbolic link"),
            "{err}"
        );
        let fifo = d.join("t2.trace");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a fresh path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_regular(&fifo).unwrap_err();
        assert!(err.to_string().contains("t2.trace is a FIFO"), "{err}");
        let err = read_regular(Path::new("/dev/null")).unwrap_err();
        assert!(err.to_string().contains("/dev/null is a device"), "{err}");
        std::fs::write(d.join("ok"), b"bytes").unwrap();
        assert_eq!(read_regular(&d.join("ok")).unwrap(), b"bytes");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
