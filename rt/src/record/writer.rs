//! One thread's trace file, written through a shared memory mapping.
//!
//! Takes the file's path, its header bytes and events, then those of each thread the file is
//! handed over to ([`Writer::begin_section`]); gives `t<tid>.trace` in the format of
//! `ilgen_trace::format`. The whole file is mapped `MAP_SHARED` and grown in zero-filled chunks
//! (`ftruncate` then `mremap`), so writing a record is a store into memory: no system call per
//! event, and what was stored survives a SIGKILL in the page cache, followed by zeros that read as
//! the end of the records. [`Writer::close`] truncates the file to its exact length.
//!
//! Records are addressed by file offset, never by pointer, because growing may move the mapping:
//! a pending sync record (a slot, see `ilgen_trace::codec`) is completed with [`Writer::rewrite`]
//! at its offset: written again as a compact record when it is still the last one, in place
//! otherwise. The writer keeps the encoder's cursor from before its last record, so that the last
//! record can be rewritten or retracted.
//!
//! Nothing here allocates or panics once the file exists, so the signal handlers that flush a
//! thread's cache may call it. A failure to grow (disk full) marks the writer broken: that
//! thread's trace ends there, readable, and one message says so.
//!
//! The writer is invisible to the program. Its file is created `O_CREAT | O_EXCL | O_NOFOLLOW`,
//! mode 0600 (a planted file or symlink is never written through), and its descriptor is moved to
//! a high number with `O_CLOEXEC`. The program may still close that number and reuse it, so every
//! operation on the descriptor (`fallocate`, `ftruncate`, `close`) first checks with `fstat` that
//! it is still this file (device and inode) and otherwise reopens the file by its path: the
//! writer never touches a descriptor that is not provably its own. Growth checks `RLIMIT_FSIZE`
//! and reserves the blocks (`posix_fallocate`) before the mapping covers them, with SIGXFSZ
//! blocked, so a file size limit or a full disk ends the thread's trace (marked truncated in
//! `meta.json`) instead of killing the program with SIGXFSZ or SIGBUS.

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;

use ilgen_trace::codec::{slot, slot_len, Cursor, Encoder, MAX_RECORD};
use ilgen_trace::{Access, AccessKind, Event};

pub(crate) struct Writer {
    fd: libc::c_int,
    /// Device and inode of the file: what makes `fd` provably this writer's.
    id: (libc::dev_t, libc::ino_t),
    path: CString,
    base: *mut u8,
    /// Length of the file and of the mapping.
    mapped: usize,
    /// End of the records written so far.
    pos: usize,
    chunk: usize,
    encoder: Encoder,
    /// Offset of the last record and the encoder's cursor before it, if that record is one
    /// [`Writer::write`] wrote (`None` after a retraction or an access record).
    last: Option<(usize, Cursor)>,
    broken: bool,
    /// Called when the writer breaks: the trace is truncated (the creator marks `meta.json`).
    on_broken: fn(),
}

// SAFETY: a writer belongs to one thread; it is only moved, never shared.
unsafe impl Send for Writer {}

fn errno() -> i32 {
    // SAFETY: reading the calling thread's errno.
    unsafe { *libc::__errno_location() }
}

impl Writer {
    /// Creates `tmp`, maps its first chunk, writes `header` at its start and renames it to
    /// `path`: the file appears under its real name only with a header, so a process that dies
    /// at any moment leaves no file the reader would refuse. Returns the errno of the failing call.
    /// `on_broken` runs when a later failure to grow breaks the writer.
    pub fn create(
        path: &CStr,
        tmp: &CStr,
        header: &[u8],
        chunk: usize,
        on_broken: fn(),
    ) -> Result<Writer, i32> {
        let page = 4096;
        let chunk = chunk.max(page).div_ceil(page) * page;
        let first = (header.len() + MAX_RECORD).div_ceil(chunk) * chunk;
        let (fd, id, base) = create_mapped(path, tmp, header, first)?;
        Ok(Writer {
            fd,
            id,
            path: path.to_owned(),
            base,
            mapped: first,
            pos: header.len(),
            chunk,
            encoder: Encoder::default(),
            last: None,
            broken: false,
            on_broken,
        })
    }

    /// The writer's descriptor, after checking it still is its file; reopens the file by path
    /// when the program closed the number (and maybe reused it). `None`: the file is gone.
    fn own_fd(&mut self) -> Option<libc::c_int> {
        if file_id(self.fd) == Some(self.id) {
            return Some(self.fd);
        }
        // SAFETY: opening the writer's own path; the descriptor is checked before it is kept.
        unsafe {
            let fd = libc::open(
                self.path.as_ptr(),
                libc::O_RDWR | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            );
            if fd < 0 {
                return None;
            }
            if file_id(fd) != Some(self.id) {
                libc::close(fd);
                return None;
            }
            self.fd = move_high(fd);
        }
        Some(self.fd)
    }

    /// Bytes written so far, header included.
    pub fn len(&self) -> usize {
        self.pos
    }

    /// Whether records can still be written (not closed, not broken).
    pub fn is_open(&self) -> bool {
        !self.base.is_null() && !self.broken
    }

    /// Makes room for one more record; false when the file cannot grow.
    #[inline]
    fn reserve(&mut self) -> bool {
        if self.pos + MAX_RECORD <= self.mapped && self.is_open() {
            return true;
        }
        self.grow()
    }

    #[inline(never)]
    fn grow(&mut self) -> bool {
        if !self.is_open() {
            return false;
        }
        let grown = self.mapped + self.chunk;
        let Some(fd) = self.own_fd() else {
            self.fail(b"ilgen: a thread trace file was removed; that thread's trace ends here\n");
            return false;
        };
        if reserve_space(fd, self.mapped, self.chunk).is_err() {
            self.fail(b"ilgen: failed to grow a thread trace file (file size limit or disk full); that thread's trace ends here\n");
            return false;
        }
        // SAFETY: the mapping covers exactly `mapped` bytes of the file, which now has `grown`.
        unsafe {
            let moved = libc::mremap(
                self.base as *mut libc::c_void,
                self.mapped,
                grown,
                libc::MREMAP_MAYMOVE,
            );
            if moved == libc::MAP_FAILED {
                self.fail(b"ilgen: failed to map a grown thread trace file; that thread's trace ends here\n");
                return false;
            }
            self.base = moved as *mut u8;
        }
        self.mapped = grown;
        true
    }

    fn fail(&mut self, message: &[u8]) {
        self.broken = true;
        (self.on_broken)();
        // SAFETY: write(2) of a static message; async-signal-safe.
        unsafe {
            libc::write(2, message.as_ptr() as *const libc::c_void, message.len());
        }
    }

    /// Appends one record; returns its offset, or `None` if the writer is closed or broken.
    pub fn write(&mut self, event: &Event) -> Option<usize> {
        if !self.reserve() {
            return None;
        }
        let at = self.pos;
        self.last = Some((at, self.encoder.cursor()));
        // SAFETY: `reserve` guarantees MAX_RECORD mapped bytes at `pos`, owned by this writer.
        let out = unsafe { std::slice::from_raw_parts_mut(self.base.add(at), MAX_RECORD) };
        self.pos += self.encoder.event(event, out);
        Some(at)
    }

    /// Appends one access record: [`Writer::write`] without the generic encoder.
    #[inline]
    pub fn write_access(&mut self, access: &Access) {
        if !self.reserve() {
            return;
        }
        // Only the offsets `write` returned are ever rewritten or retracted, so an access record
        // needs no way back; and copying the cursor here, right after the previous record's
        // encoding stored its fields, stalled on store forwarding (a third of this function's
        // time on lbzip2).
        self.last = None;
        // SAFETY: `reserve` guarantees MAX_RECORD mapped bytes at `pos`, owned by this writer.
        let out = unsafe { std::slice::from_raw_parts_mut(self.base.add(self.pos), MAX_RECORD) };
        self.pos += self.encoder.access(access, out);
    }

    /// A window record (see `ilgen_trace::codec`): the accesses of `kind` at `site` to byte
    /// `addr + i` for each bit `i` of `mask`. Like an access record, it needs no way back.
    pub fn write_window(&mut self, addr: u64, mask: u64, kind: AccessKind, site: u32) {
        if !self.reserve() {
            return;
        }
        self.last = None;
        // SAFETY: as in `write_access`.
        let out = unsafe { std::slice::from_raw_parts_mut(self.base.add(self.pos), MAX_RECORD) };
        self.pos += self.encoder.window(addr, mask, kind, site, out);
    }

    /// Completes the pending record at `at` with `event` (the same operation with its seq and
    /// outcome): written again in its compact form if it is the last record, else in place, as a
    /// slot of the same length. Anything else is ignored.
    pub fn rewrite(&mut self, at: usize, event: &Event) {
        if !self.is_open() || at >= self.pos {
            return;
        }
        if self.retract(at) {
            self.write(event);
            return;
        }
        let mut buf = [0u8; MAX_RECORD];
        let n = slot(event, &mut buf);
        // SAFETY: `at < pos <= mapped`; a record written by `write` starts at `at`.
        let old = slot_len(unsafe { std::slice::from_raw_parts(self.base.add(at), self.pos - at) });
        if old == Some(n) {
            // SAFETY: the slot's `n` bytes at `at` are this writer's.
            unsafe { ptr::copy_nonoverlapping(buf.as_ptr(), self.base.add(at), n) };
        }
    }

    /// Removes the record at `at` if it is the last one (a fork whose `pthread_create` failed, a
    /// lock call that returned an error). Returns whether it did.
    pub fn retract(&mut self, at: usize) -> bool {
        if !self.is_open() {
            return false;
        }
        let Some((last, cursor)) = self.last.filter(|l| l.0 == at) else {
            return false;
        };
        // SAFETY: `[last, pos)` is the last record, inside the mapping.
        unsafe { ptr::write_bytes(self.base.add(last), 0, self.pos - last) };
        self.pos = last;
        self.encoder.rewind(cursor);
        self.last = None;
        true
    }

    /// Hands the file over to another thread: a section record with `head` (that thread's file
    /// start: magic and header), after which its records follow, their deltas from zero (see
    /// `ilgen_trace::codec`). False when the file cannot take it (closed, broken, cannot grow).
    pub fn begin_section(&mut self, head: &[u8]) -> bool {
        if !self.reserve() {
            return false;
        }
        self.last = None;
        // SAFETY: as in `write_access`.
        let out = unsafe { std::slice::from_raw_parts_mut(self.base.add(self.pos), MAX_RECORD) };
        self.pos += self.encoder.section(head, out);
        true
    }

    /// Truncates the file to the records written, unmaps and closes it. Later writes are ignored.
    pub fn close(&mut self) {
        if self.base.is_null() {
            return;
        }
        // SAFETY: releasing what `create` acquired, once; the descriptor is checked to be ours.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.mapped);
            if let Some(fd) = self.own_fd() {
                libc::ftruncate(fd, self.pos as libc::off_t);
                libc::close(fd);
            }
        }
        self.base = ptr::null_mut();
        self.mapped = 0;
    }

    /// Unmaps and closes without truncating: for a forked child, whose mapping is the parent's
    /// file.
    pub fn abandon(&mut self) {
        if self.base.is_null() {
            return;
        }
        // SAFETY: as in `close`; the descriptor is closed only if it still is the file.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.mapped);
            if file_id(self.fd) == Some(self.id) {
                libc::close(self.fd);
            }
        }
        self.base = ptr::null_mut();
        self.mapped = 0;
    }
}

/// The C strings of `path` and of the temporary name it is created under (`<path>.tmp`), or
/// EINVAL for a path with a NUL byte.
pub(crate) fn c_paths(path: &Path) -> Result<(CString, CString), i32> {
    let mut tmp = path.as_os_str().as_bytes().to_vec();
    tmp.extend_from_slice(b".tmp");
    match (CString::new(path.as_os_str().as_bytes()), CString::new(tmp)) {
        (Ok(c), Ok(tmp)) => Ok((c, tmp)),
        _ => Err(libc::EINVAL),
    }
}

/// Creates `tmp` for the runtime alone ([`open_new`]) with `len` bytes reserved, maps it shared,
/// writes `header` at its start and renames it to `path`: the file appears under its real name
/// only with a header. Returns its descriptor, device and inode, and mapping; or the errno of the
/// failing call, leaving nothing behind.
pub(crate) fn create_mapped(
    path: &CStr,
    tmp: &CStr,
    header: &[u8],
    len: usize,
) -> Result<(libc::c_int, (libc::dev_t, libc::ino_t), *mut u8), i32> {
    // SAFETY: plain system calls on a file this function creates.
    unsafe {
        let fd = open_new(tmp)?;
        let undo = |e: i32| {
            libc::close(fd);
            libc::unlink(tmp.as_ptr());
            Err(e)
        };
        let Some(id) = file_id(fd) else {
            return undo(errno());
        };
        if let Err(e) = reserve_space(fd, 0, len) {
            return undo(e);
        }
        let base = libc::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        );
        if base == libc::MAP_FAILED {
            return undo(errno());
        }
        let base = base as *mut u8;
        ptr::copy_nonoverlapping(header.as_ptr(), base, header.len().min(len));
        if libc::rename(tmp.as_ptr(), path.as_ptr()) != 0 {
            libc::munmap(base as *mut libc::c_void, len);
            return undo(errno());
        }
        Ok((fd, id, base))
    }
}

/// Creates `path` for the runtime alone: exclusively, never through a symlink, mode 0600, at a
/// high descriptor number. Returns the descriptor or the errno.
pub(crate) fn open_new(path: &CStr) -> Result<libc::c_int, i32> {
    // SAFETY: open(2) of a caller's path.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o600,
        )
    };
    if fd < 0 {
        return Err(errno());
    }
    Ok(move_high(fd))
}

/// Device and inode of the file open at `fd`, `None` when `fd` is not open.
fn file_id(fd: libc::c_int) -> Option<(libc::dev_t, libc::ino_t)> {
    // SAFETY: fstat into a zeroed buffer; async-signal-safe.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::fstat(fd, &mut st) == 0).then_some((st.st_dev, st.st_ino))
    }
}

/// Moves `fd` to a number above those programs use (900, or below the descriptor limit when it is
/// lower), close-on-exec; keeps `fd` where it is when no such number is free.
fn move_high(fd: libc::c_int) -> libc::c_int {
    // SAFETY: getrlimit/fcntl/close on a descriptor the caller just opened.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur.min(1024) as libc::c_int
        } else {
            256
        };
        let floor = (max - 124).clamp(3, 900);
        let high = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, floor);
        if high < 0 {
            return fd;
        }
        libc::close(fd);
        high
    }
}

/// Extends the file at `fd` from `from` to `from + len` bytes with its blocks allocated, so that
/// stores into the mapping never fault for want of space. Checks `RLIMIT_FSIZE` first and keeps
/// SIGXFSZ blocked meanwhile (discarding one the call raised): a limit is an error, not a signal.
fn reserve_space(fd: libc::c_int, from: usize, len: usize) -> Result<(), i32> {
    // SAFETY: getrlimit, signal-mask calls and fallocate on the writer's descriptor; all
    // async-signal-safe.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_FSIZE, &mut lim) == 0
            && lim.rlim_cur != libc::RLIM_INFINITY
            && (from + len) as u64 > lim.rlim_cur
        {
            return Err(libc::EFBIG);
        }
        let mut xfsz: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut xfsz);
        libc::sigaddset(&mut xfsz, libc::SIGXFSZ);
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &xfsz, &mut old);
        let mut pending: libc::sigset_t = std::mem::zeroed();
        libc::sigpending(&mut pending);
        let was_pending = libc::sigismember(&pending, libc::SIGXFSZ) == 1;
        let rc = libc::posix_fallocate(fd, from as libc::off_t, len as libc::off_t);
        libc::sigpending(&mut pending);
        if !was_pending && libc::sigismember(&pending, libc::SIGXFSZ) == 1 {
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            libc::sigtimedwait(&xfsz, ptr::null_mut(), &zero);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, ptr::null_mut());
        if rc != 0 {
            return Err(rc);
        }
    }
    Ok(())
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ilgen_trace::codec::Encoder;
    use ilgen_trace::format::{decode_threads, encode_header, ThreadHeader};
    use ilgen_trace::{AccessKind, Sync, SyncOp, FORMAT_VERSION, PENDING};
    use std::ffi::CString;
    use std::path::PathBuf;

    /// A fresh file path in a directory of its own, removed when the guard drops.
    pub(crate) struct Temp(PathBuf);

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    pub(crate) fn temp(name: &str) -> (Temp, PathBuf, CString, CString) {
        let dir = std::env::temp_dir().join(format!("ilgen-rt-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        let c = CString::new(path.to_str().unwrap()).unwrap();
        let tmp = CString::new(format!("{}.tmp", path.to_str().unwrap())).unwrap();
        (Temp(dir), path, c, tmp)
    }

    fn header() -> Vec<u8> {
        encode_header(&ThreadHeader {
            version: FORMAT_VERSION,
            tid: 2,
            parent: 0,
            child_index: 1,
        })
    }

    fn access(i: u64) -> Event {
        Event::Access(Access {
            addr: 0x1000 + i * 8,
            size: 8,
            site: i as u32,
            kind: AccessKind::Write,
        })
    }

    #[test]
    fn writes_grow_past_a_chunk_and_close_to_exact_length() {
        let (_dir, path, c, tmp) = temp("grow.trace");
        let mut w = Writer::create(&c, &tmp, &header(), 4096, || {}).unwrap();
        let events: Vec<Event> = (0..6000).map(access).collect();
        for (i, e) in events.iter().enumerate() {
            match e {
                // Half through the access encoder, half through the generic one.
                Event::Access(a) if i % 2 == 1 => w.write_access(a),
                _ => {
                    w.write(e).unwrap();
                }
            }
        }
        assert!(w.len() > 3 * 4096, "grew past several chunks");
        let len = w.len();
        w.close();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), len);
        let t = decode_threads(&path, &bytes).unwrap().remove(0);
        assert_eq!(
            (t.header.tid, t.header.parent, t.header.child_index),
            (2, 0, 1)
        );
        assert_eq!(t.events, events);
    }

    /// A lock of mutex 0x42 at site 3 with sequence number `seq`.
    fn lock(seq: u64) -> Event {
        Event::Sync(Sync {
            seq,
            site: 3,
            op: SyncOp::MutexLock { mutex: 0x42 },
        })
    }

    #[test]
    fn killed_writer_leaves_a_readable_zero_padded_file() {
        let (_dir, path, c, tmp) = temp("killed.trace");
        let mut w = Writer::create(&c, &tmp, &header(), 4096, || {}).unwrap();
        w.write(&access(0)).unwrap();
        let pending = w.write(&lock(PENDING)).unwrap();
        // The process dies here: no close, no truncation; the reader sees the mapping's contents.
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() % 4096, 0, "still padded to a chunk");
        let t = decode_threads(&path, &bytes).unwrap().remove(0);
        assert_eq!(t.events, vec![access(0), lock(PENDING)]);
        // Completing in place and writing on.
        w.rewrite(pending, &lock(7));
        w.write(&access(1)).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let t = decode_threads(&path, &bytes).unwrap().remove(0);
        assert_eq!(t.events, vec![access(0), lock(7), access(1)]);
        std::mem::forget(w);
    }

    #[test]
    fn a_pending_record_is_compacted_when_last_and_completed_in_place_otherwise() {
        let (_dir, path, c, tmp) = temp("pending.trace");
        let mut w = Writer::create(&c, &tmp, &header(), 4096, || {}).unwrap();
        let lock = |seq, mutex| {
            Event::Sync(Sync {
                seq,
                site: 3,
                op: SyncOp::MutexLock { mutex },
            })
        };
        let a = w.write(&lock(PENDING, 0x42)).unwrap();
        let slot_end = w.len();
        w.rewrite(a, &lock(1, 0x42));
        assert!(
            w.len() < slot_end,
            "the last record is written again, compact"
        );
        let b = w.write(&lock(PENDING, 0x82)).unwrap();
        // A signal handler's access while the thread blocks: the slot is no longer last.
        w.write(&access(0)).unwrap();
        let len = w.len();
        w.rewrite(b, &lock(9, 0x82));
        assert_eq!(w.len(), len, "completed in place");
        w.write(&lock(10, 0x42)).unwrap();
        w.close();
        let t = decode_threads(&path, &std::fs::read(&path).unwrap())
            .unwrap()
            .remove(0);
        assert_eq!(
            t.events,
            vec![lock(1, 0x42), lock(9, 0x82), access(0), lock(10, 0x42)]
        );
    }

    #[test]
    fn a_descriptor_number_the_program_reused_is_never_touched() {
        let (dir, path, c, tmp) = temp("reused.trace");
        let mut w = Writer::create(&c, &tmp, &header(), 4096, || {}).unwrap();
        // SAFETY: inspecting and closing the writer's descriptor as a program would.
        let flags = unsafe { libc::fcntl(w.fd, libc::F_GETFD) };
        assert!(w.fd >= 3 + 124 || w.fd >= 900, "fd {} is not high", w.fd);
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
        w.write(&access(0)).unwrap();
        // The program closes every descriptor and opens its own file, which gets the number.
        let theirs = dir.0.join("theirs.txt");
        std::fs::write(&theirs, b"the program's data").unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&theirs)
            .unwrap();
        let number = w.fd;
        // SAFETY: replacing the writer's descriptor number with the program's file.
        unsafe {
            libc::close(number);
            assert_eq!(
                libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&file), number),
                number
            );
        }
        let events: Vec<Event> = (0..600).map(access).collect();
        for e in &events[1..] {
            w.write(e).unwrap();
        }
        let len = w.len();
        w.close();
        assert_eq!(std::fs::read(&theirs).unwrap(), b"the program's data");
        // The program's descriptor is still open at its number, and still its file.
        let md = std::os::unix::fs::MetadataExt::ino(&file.metadata().unwrap());
        assert_eq!(file_id(number).map(|(_, ino)| ino), Some(md));
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), len);
        assert_eq!(decode_threads(&path, &bytes).unwrap()[0].events, events);
        drop(file);
    }

    #[test]
    fn files_are_private_and_a_planted_temp_symlink_is_not_followed() {
        let (dir, path, c, tmp) = temp("planted.trace");
        let victim = dir.0.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        std::os::unix::fs::symlink(&victim, tmp.to_str().unwrap()).unwrap();
        assert_eq!(
            Writer::create(&c, &tmp, &header(), 4096, || {}).err(),
            Some(libc::EEXIST)
        );
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        std::fs::remove_file(tmp.to_str().unwrap()).unwrap();
        let mut w = Writer::create(&c, &tmp, &header(), 4096, || {}).unwrap();
        w.close();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_file_handed_over_holds_each_thread_after_its_section() {
        let (_dir, path, c, tmp) = temp("sections.trace");
        let mut w = Writer::create(&c, &tmp, &header(), 4096, || {}).unwrap();
        let first: Vec<Event> = (0..3000).map(access).collect();
        for e in &first {
            w.write(e).unwrap();
        }
        let end = w.write(&lock(5)).unwrap();
        let next = encode_header(&ThreadHeader {
            version: FORMAT_VERSION,
            tid: 7,
            parent: 2,
            child_index: 0,
        });
        assert!(w.begin_section(&next));
        assert!(
            !w.retract(end),
            "the last thread's records are not this one's"
        );
        // The next thread's first record takes its deltas from zero: bytes as in a file of its own.
        let at = w.len();
        w.write(&lock(6)).unwrap();
        let alone = Encoder::default().all(&[lock(6)]);
        w.close();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[at..], &alone[..]);
        let threads = decode_threads(&path, &bytes).unwrap();
        let mut expected = first;
        expected.push(lock(5));
        assert_eq!(threads.len(), 2);
        assert_eq!(
            (threads[0].header.tid, threads[0].events.to_vec()),
            (2, expected)
        );
        assert_eq!((threads[1].header.tid, threads[1].header.parent), (7, 2));
        assert_eq!(threads[1].events, vec![lock(6)]);
        assert!(!w.begin_section(&next), "a closed file takes no thread");
    }

    #[test]
    fn retract_removes_only_the_last_record() {
        let (_dir, path, c, tmp) = temp("retract.trace");
        let mut w = Writer::create(&c, &tmp, &header(), 4096, || {}).unwrap();
        let a = w.write(&access(0)).unwrap();
        let b = w.write(&access(1)).unwrap();
        assert!(!w.retract(a));
        assert!(w.retract(b));
        w.write(&access(2)).unwrap();
        w.close();
        let t = decode_threads(&path, &std::fs::read(&path).unwrap())
            .unwrap()
            .remove(0);
        assert_eq!(t.events, vec![access(0), access(2)]);
        assert!(
            w.write(&access(3)).is_none(),
            "closed writers ignore writes"
        );
    }

    #[test]
    fn an_access_record_after_a_sync_record_keeps_it_from_being_taken_back() {
        let (_dir, path, c, tmp) = temp("after_access.trace");
        let mut w = Writer::create(&c, &tmp, &header(), 4096, || {}).unwrap();
        let at = w.write(&lock(PENDING)).unwrap();
        let Event::Access(a) = access(5) else {
            unreachable!()
        };
        w.write_access(&a);
        assert!(!w.retract(at), "the sync record is no longer last");
        let len = w.len();
        w.rewrite(at, &lock(4));
        assert_eq!(w.len(), len, "completed in place");
        w.write(&lock(6)).unwrap();
        w.close();
        let t = decode_threads(&path, &std::fs::read(&path).unwrap())
            .unwrap()
            .remove(0);
        assert_eq!(t.events, vec![lock(4), access(5), lock(6)]);
    }
}
