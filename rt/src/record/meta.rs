//! `meta.json` of the run: written at start, rewritten when the process ends.
//!
//! Takes the trace directory; gives [`MetaFile`], which wrote the start-time `meta.json`
//! (`ilgen_trace::Meta` with `end: None`) and holds the prebuilt bytes of its two end-time
//! versions, so that a signal handler can rewrite it without allocating: `end: exit`, and
//! `end: signal` as a prefix and suffix around the signal number, formatted on the stack.
//! Each rewrite goes to `meta.json.tmp` and is renamed over `meta.json`, so a reader never sees a
//! half-written file. The temp file is created `O_EXCL | O_NOFOLLOW`, mode 0600, after unlinking
//! whatever had its name (a planted file or symlink is removed, never written through), and is
//! left there between rewrites with its blocks allocated: on a full disk, the rewrite that marks
//! the trace truncated still has room.
//!
//! A normal exit whose thread files are all closed writes the sealed version instead
//! ([`MetaFile::write_sealed`]): the exit version plus every thread file's length and checksum,
//! read back from the directory, and `meta.json`'s own checksum (`ilgen_trace::meta`). It is
//! built then, allocating: an exit handler may. The spare temp file is removed after it.
//!
//! Every version is prebuilt with `"truncated": false`; once a thread file could not grow
//! ([`MetaFile::mark_truncated`]), the same bytes are written with `"truncated": true ` (same
//! length) in its place, and `meta.json` is rewritten at once in its current state. So is it when
//! an instrumented shared object gets its site ids after the start (a `dlopen`,
//! [`MetaFile::set_modules`]): its versions are built again, allocating, in the loader's call of
//! the object's constructor, and the old ones stay for a signal handler that may be reading them.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use std::collections::BTreeMap;
use std::os::unix::fs::OpenOptionsExt;

use ilgen_trace::meta::{FileSum, Module, META_FILE};
use ilgen_trace::thread_file_tid;
use ilgen_trace::{Meta, RunEnd, FORMAT_VERSION};

/// A signal number no real signal has: its digits mark where the number goes.
const SIGNAL_MARK: i32 = 987_654_321;

pub(crate) struct MetaFile {
    path: CString,
    tmp: CString,
    /// The current [`Versions`]: replaced (and the old ones leaked, since a signal handler may be
    /// reading them) when a shared object gets its site ids after the start.
    versions: AtomicPtr<Versions>,
}

/// The prebuilt bytes of `meta.json`'s versions for one content of it.
struct Versions {
    running: Vec<u8>,
    exit: Vec<u8>,
    /// The exit version before it is sealed.
    finished: Meta,
    signal_prefix: Vec<u8>,
    signal_suffix: Vec<u8>,
    /// Bytes of the longest version (a signal number has at most 11 characters).
    reserve: usize,
}

impl Versions {
    /// The versions of `meta` (its `end` is ignored).
    fn of(mut meta: Meta) -> std::io::Result<Versions> {
        meta.end = None;
        let running = meta.to_json().into_bytes();
        meta.end = Some(RunEnd::Exit);
        let exit = meta.to_json().into_bytes();
        let finished = meta.clone();
        meta.end = Some(RunEnd::Signal {
            signal: SIGNAL_MARK,
        });
        let json = meta.to_json();
        let mark = SIGNAL_MARK.to_string();
        let at = json
            .find(&mark)
            .ok_or_else(|| std::io::Error::other("signal mark missing from meta.json"))?;
        Ok(Versions {
            reserve: running.len().max(exit.len()).max(json.len()) + 11,
            running,
            exit,
            finished,
            signal_prefix: json.as_bytes()[..at].to_vec(),
            signal_suffix: json.as_bytes()[at + mark.len()..].to_vec(),
        })
    }
}

/// Held while `meta.json` is rewritten.
static LOCK: AtomicBool = AtomicBool::new(false);

const FLAG_FALSE: &[u8] = b"\"truncated\": false";
const FLAG_TRUE: &[u8] = b"\"truncated\": true ";

/// Some thread's trace was cut: every later rewrite says so.
static TRUNCATED: AtomicBool = AtomicBool::new(false);
/// What `meta.json` says now: [`RUNNING`], [`EXITED`] or the signal number that ended the run.
static STATE: AtomicI32 = AtomicI32::new(RUNNING);
const RUNNING: i32 = -1;
const EXITED: i32 = -2;

fn cstring(p: &Path) -> std::io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("path contains a NUL byte"))
}

/// What the process is: collected once at start-up.
fn collect(pid: u32, cwd: &Path, chaos_seed: Option<u64>, calls: bool) -> Meta {
    let argv = std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .unwrap_or_default();
    let binary = std::fs::read_link("/proc/self/exe").unwrap_or_default();
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
        build_id: crate::exe::build_id(),
        load_base: crate::exe::load_base(),
        started_unix_ms,
        truncated: false,
        chaos_seed,
        calls,
        modules: crate::sites::modules(),
        end: None,
        files: None,
        checksum: None,
    }
}

/// Length and checksum of every thread file in `dir`, read from disk; `None` if one cannot be read.
fn sum_thread_files(dir: &Path) -> Option<BTreeMap<String, FileSum>> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).ok()? {
        let name = entry.ok()?.file_name().into_string().ok();
        let Some(name) = name.filter(|n| thread_file_tid(n).is_some()) else {
            continue;
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(dir.join(&name))
            .ok()?;
        files.insert(name, FileSum::read(file).ok()?);
    }
    Some(files)
}

impl MetaFile {
    /// Collects the metadata, writes `dir/meta.json` and prepares the end-time versions.
    pub fn start(
        dir: &Path,
        pid: u32,
        cwd: &Path,
        chaos_seed: Option<u64>,
        calls: bool,
    ) -> std::io::Result<MetaFile> {
        let versions = Versions::of(collect(pid, cwd, chaos_seed, calls))?;
        let file = MetaFile {
            path: cstring(&dir.join(META_FILE))?,
            tmp: cstring(&dir.join(format!("{META_FILE}.tmp")))?,
            versions: AtomicPtr::new(Box::into_raw(Box::new(versions))),
        };
        if !file.replace(&[&file.versions().running]) {
            return Err(std::io::Error::last_os_error());
        }
        Ok(file)
    }

    fn versions(&self) -> &Versions {
        // SAFETY: the pointer always holds a leaked, never freed `Versions`.
        unsafe { &*self.versions.load(Ordering::Acquire) }
    }

    /// The shared objects with site ids are now `modules`: every version names them, and
    /// `meta.json` is rewritten at once in its current state.
    pub fn set_modules(&self, modules: Vec<Module>) {
        static CHANGING: Mutex<()> = Mutex::new(());
        let _one = CHANGING.lock().unwrap_or_else(|e| e.into_inner());
        let meta = Meta {
            modules,
            ..self.versions().finished.clone()
        };
        let Ok(versions) = Versions::of(meta) else {
            return;
        };
        self.versions
            .store(Box::into_raw(Box::new(versions)), Ordering::Release);
        self.rewrite();
    }

    pub fn write_exit(&self) {
        STATE.store(EXITED, Ordering::Release);
        self.replace(&[&self.versions().exit]);
    }

    /// Rewrites `meta.json` sealed: `end: exit` with the length and checksum of every thread file
    /// in `dir`, which must all be closed. Falls back to [`MetaFile::write_exit`] when the trace
    /// is truncated or a file cannot be read. Not async-signal-safe: it allocates.
    pub fn write_sealed(&self, dir: &Path) {
        let files = sum_thread_files(dir);
        let Some(files) = files.filter(|_| !TRUNCATED.load(Ordering::Acquire)) else {
            return self.write_exit();
        };
        STATE.store(EXITED, Ordering::Release);
        let sealed = Meta {
            files: Some(files),
            ..self.versions().finished.clone()
        }
        .to_sealed_json();
        if self.replace(&[sealed.as_bytes()]) {
            // The run's last rewrite: no rewrite is left for the spare to make room for, and a
            // trace directory should hold the trace alone.
            // SAFETY: unlink of the runtime's own temp path.
            unsafe { libc::unlink(self.tmp.as_ptr()) };
        } else {
            self.write_exit();
        }
    }

    /// Rewrites `meta.json` with `end: signal`. Async-signal-safe.
    pub fn write_signal(&self, signal: i32) {
        STATE.store(signal, Ordering::Release);
        let mut digits = [0u8; 12];
        let n = format_i32(signal, &mut digits);
        let v = self.versions();
        self.replace(&[&v.signal_prefix, &digits[..n], &v.signal_suffix]);
    }

    /// Marks the trace truncated and rewrites `meta.json` as it stands. Async-signal-safe.
    pub fn mark_truncated(&self) {
        if TRUNCATED.swap(true, Ordering::AcqRel) {
            return;
        }
        self.rewrite();
    }

    /// Writes `meta.json` again in its current state.
    fn rewrite(&self) {
        match STATE.load(Ordering::Acquire) {
            RUNNING => {
                self.replace(&[&self.versions().running]);
            }
            EXITED => {
                self.replace(&[&self.versions().exit]);
            }
            signal => self.write_signal(signal),
        }
    }

    /// Writes `parts` (with the truncation flag set if due) to the temp file and renames it over
    /// `meta.json`; returns whether it did. The temp file is the spare [`MetaFile::spare`] left
    /// with its blocks allocated, so that the rewrite that says the disk is full still finds room.
    fn replace(&self, parts: &[&[u8]]) -> bool {
        // One rewrite at a time (an exit racing a thread whose file could not grow); bounded, as
        // a signal handler may have interrupted the holder on this very thread.
        let mut tries = 0;
        while LOCK.swap(true, Ordering::Acquire) {
            tries += 1;
            if tries > 1_000_000 {
                return false;
            }
            // SAFETY: sched_yield is async-signal-safe.
            unsafe { libc::sched_yield() };
        }
        // SAFETY: open/write/close/rename on paths prepared at start-up; the spare is opened
        // without following symlinks, and recreated exclusively when it is not there.
        let done = unsafe {
            let mut fd = libc::open(
                self.tmp.as_ptr(),
                libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            );
            if fd < 0 {
                libc::unlink(self.tmp.as_ptr());
                fd = super::writer::open_new(&self.tmp).unwrap_or(-1);
            }
            fd >= 0 && {
                let truncated = TRUNCATED.load(Ordering::Acquire);
                let mut ok = true;
                let mut len = 0;
                for part in parts {
                    let flag = part.windows(FLAG_FALSE.len()).position(|w| w == FLAG_FALSE);
                    ok &= match flag {
                        Some(at) if truncated => {
                            write_all(fd, &part[..at])
                                && write_all(fd, FLAG_TRUE)
                                && write_all(fd, &part[at + FLAG_FALSE.len()..])
                        }
                        _ => write_all(fd, part),
                    };
                    len += part.len();
                }
                ok &= libc::ftruncate(fd, len as libc::off_t) == 0;
                libc::close(fd);
                ok && libc::rename(self.tmp.as_ptr(), self.path.as_ptr()) == 0
            }
        };
        self.spare();
        LOCK.store(false, Ordering::Release);
        done
    }

    /// Leaves `meta.json.tmp` with room for the longest version of `meta.json`: the next
    /// rewrite then needs no new blocks (see [`MetaFile::replace`]).
    fn spare(&self) {
        // SAFETY: unlink and exclusive creation of the runtime's own temp path.
        unsafe {
            libc::unlink(self.tmp.as_ptr());
            if let Ok(fd) = super::writer::open_new(&self.tmp) {
                libc::posix_fallocate(fd, 0, self.versions().reserve as libc::off_t);
                libc::close(fd);
            }
        }
    }
}

/// Writes all of `bytes` to `fd`; false on any failure. Async-signal-safe.
fn write_all(fd: libc::c_int, bytes: &[u8]) -> bool {
    let mut done = 0;
    while done < bytes.len() {
        // SAFETY: write(2) from a live slice.
        let n = unsafe {
            libc::write(
                fd,
                bytes[done..].as_ptr() as *const libc::c_void,
                bytes.len() - done,
            )
        };
        if n <= 0 {
            return false;
        }
        done += n as usize;
    }
    true
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
        let m = MetaFile::start(&dir, 4242, Path::new("/somewhere"), None, false).unwrap();
        let read = Meta::read(&dir).unwrap();
        assert_eq!(read.pid, 4242);
        assert_eq!(read.end, None);
        assert_eq!(read.build_id, crate::exe::build_id());
        assert!(!read.argv.is_empty());
        m.write_signal(15);
        let read = Meta::read(&dir).unwrap();
        assert_eq!(read.end, Some(RunEnd::Signal { signal: 15 }));
        m.write_exit();
        assert_eq!(Meta::read(&dir).unwrap().end, Some(RunEnd::Exit));
        assert!(!Meta::read(&dir).unwrap().truncated);
        m.mark_truncated();
        let read = Meta::read(&dir).unwrap();
        assert_eq!((read.end, read.truncated), (Some(RunEnd::Exit), true));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_module_given_ids_later_is_in_the_versions_from_then_on() {
        let dir = std::env::temp_dir().join(format!("ilgen-rt-modules-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = MetaFile::start(&dir, 7, Path::new("/"), None, false).unwrap();
        assert_eq!(Meta::read(&dir).unwrap().modules, vec![]);
        let lib = Module {
            path: "/lib/libx.so".into(),
            build_id: "abcd".into(),
            load_base: 0x7f00_0000_0000,
            first_site: 12,
            units: 30,
        };
        m.set_modules(vec![lib.clone()]);
        assert_eq!(Meta::read(&dir).unwrap().modules, vec![lib.clone()]);
        // STATE and TRUNCATED are the process's: the other tests' runs may set them, so only
        // this file's modules are checked.
        m.write_exit();
        assert_eq!(Meta::read(&dir).unwrap().modules, vec![lib]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_planted_temp_symlink_is_replaced_not_followed() {
        let dir = std::env::temp_dir().join(format!("ilgen-rt-planted-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("meta.json.tmp")).unwrap();
        MetaFile::start(&dir, 1, Path::new("/"), None, false).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(Meta::read(&dir).unwrap().pid, 1);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join(META_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
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
