//! `meta.json` of the run: written at start, rewritten when the process ends.
//!
//! Takes the trace directory; gives [`MetaFile`], which wrote the start-time `meta.json`
//! (`ilgen_trace::Meta` with `end: None`) and holds the prebuilt bytes of its two end-time
//! versions, so that a signal handler can rewrite it without allocating: `end: exit`, and
//! `end: signal` as a prefix and suffix around the signal number, formatted on the stack.
//! Each rewrite goes to `meta.json.tmp` and is renamed over `meta.json`, so a reader never sees a
//! half-written file.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use ilgen_trace::meta::META_FILE;
use ilgen_trace::{Meta, RunEnd, FORMAT_VERSION};

/// A signal number no real signal has: its digits mark where the number goes.
const SIGNAL_MARK: i32 = 987_654_321;

pub(crate) struct MetaFile {
    path: CString,
    tmp: CString,
    exit: Vec<u8>,
    signal_prefix: Vec<u8>,
    signal_suffix: Vec<u8>,
}

fn cstring(p: &Path) -> std::io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("path contains a NUL byte"))
}

/// What the process is: collected once at start-up.
fn collect(pid: u32, cwd: &Path) -> Meta {
    let argv = std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .unwrap_or_default();
    let binary = std::fs::read_link("/proc/self/exe").unwrap_or_default();
    let binary_hash = std::fs::read("/proc/self/exe")
        .map(|b| format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&b)))
        .unwrap_or_default();
    let started_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    Meta {
        format_version: FORMAT_VERSION,
        pid,
        argv,
        cwd: cwd.to_string_lossy().into_owned(),
        binary: binary.to_string_lossy().into_owned(),
        binary_hash,
        load_base: load_base(),
        started_unix_ms,
        truncated: false,
        end: None,
    }
}

/// Load address of the executable: where its program headers are mapped minus where its own
/// `PT_PHDR` entry says they are (0 for a position-dependent executable).
pub(crate) fn load_base() -> u64 {
    // SAFETY: the auxiliary vector points at the executable's mapped program headers.
    unsafe {
        let phdr = libc::getauxval(libc::AT_PHDR) as *const libc::Elf64_Phdr;
        let phnum = libc::getauxval(libc::AT_PHNUM) as usize;
        if phdr.is_null() {
            return 0;
        }
        for i in 0..phnum {
            let ph = &*phdr.add(i);
            if ph.p_type == libc::PT_PHDR {
                return (phdr as u64).wrapping_sub(ph.p_vaddr);
            }
        }
        0
    }
}

impl MetaFile {
    /// Collects the metadata, writes `dir/meta.json` and prepares the end-time versions.
    pub fn start(dir: &Path, pid: u32, cwd: &Path) -> std::io::Result<MetaFile> {
        let mut meta = collect(pid, cwd);
        let path = dir.join(META_FILE);
        let tmp = dir.join(format!("{META_FILE}.tmp"));
        std::fs::write(&tmp, meta.to_json())?;
        std::fs::rename(&tmp, &path)?;
        meta.end = Some(RunEnd::Exit);
        let exit = meta.to_json().into_bytes();
        meta.end = Some(RunEnd::Signal {
            signal: SIGNAL_MARK,
        });
        let json = meta.to_json();
        let mark = SIGNAL_MARK.to_string();
        let at = json
            .find(&mark)
            .ok_or_else(|| std::io::Error::other("signal mark missing from meta.json"))?;
        Ok(MetaFile {
            path: cstring(&path)?,
            tmp: cstring(&tmp)?,
            exit,
            signal_prefix: json.as_bytes()[..at].to_vec(),
            signal_suffix: json.as_bytes()[at + mark.len()..].to_vec(),
        })
    }

    /// Rewrites `meta.json` with `end: exit`. Async-signal-safe.
    pub fn write_exit(&self) {
        self.replace(&[&self.exit]);
    }

    /// Rewrites `meta.json` with `end: signal`. Async-signal-safe.
    pub fn write_signal(&self, signal: i32) {
        let mut digits = [0u8; 12];
        let n = format_i32(signal, &mut digits);
        self.replace(&[&self.signal_prefix, &digits[..n], &self.signal_suffix]);
    }

    fn replace(&self, parts: &[&[u8]]) {
        // SAFETY: open/write/close/rename on paths prepared at start-up.
        unsafe {
            let fd = libc::open(
                self.tmp.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
                0o644,
            );
            if fd < 0 {
                return;
            }
            let mut ok = true;
            for part in parts {
                let mut done = 0;
                while done < part.len() {
                    let n = libc::write(
                        fd,
                        part[done..].as_ptr() as *const libc::c_void,
                        part.len() - done,
                    );
                    if n <= 0 {
                        ok = false;
                        break;
                    }
                    done += n as usize;
                }
            }
            libc::close(fd);
            if ok {
                libc::rename(self.tmp.as_ptr(), self.path.as_ptr());
            }
        }
    }
}

/// Decimal digits of `v` into `out`, without allocating; returns their count.
fn format_i32(v: i32, out: &mut [u8; 12]) -> usize {
    let mut tmp = [0u8; 12];
    let mut n = 0;
    let neg = v < 0;
    let mut u = v.unsigned_abs();
    loop {
        tmp[n] = b'0' + (u % 10) as u8;
        n += 1;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    let mut len = 0;
    if neg {
        out[0] = b'-';
        len = 1;
    }
    for i in (0..n).rev() {
        out[len] = tmp[i];
        len += 1;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_then_signal_and_exit_rewrites_read_back() {
        let dir = std::env::temp_dir().join(format!("ilgen-rt-meta-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = MetaFile::start(&dir, 4242, Path::new("/somewhere")).unwrap();
        let read = Meta::read(&dir).unwrap();
        assert_eq!(read.pid, 4242);
        assert_eq!(read.end, None);
        assert_eq!(read.binary_hash.len(), 16);
        assert!(!read.argv.is_empty());
        m.write_signal(15);
        let read = Meta::read(&dir).unwrap();
        assert_eq!(read.end, Some(RunEnd::Signal { signal: 15 }));
        m.write_exit();
        assert_eq!(Meta::read(&dir).unwrap().end, Some(RunEnd::Exit));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn formats_numbers_without_allocating() {
        let mut b = [0u8; 12];
        for v in [0, 6, 15, 64, -3, i32::MAX, i32::MIN] {
            let n = format_i32(v, &mut b);
            assert_eq!(std::str::from_utf8(&b[..n]).unwrap(), v.to_string());
        }
    }
}
