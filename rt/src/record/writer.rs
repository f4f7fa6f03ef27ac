//! One thread's trace file, written through a shared memory mapping.
//!
//! Takes the file's path, its header bytes and events; gives `t<tid>.trace` in the format of
//! `ilgen_trace::format`. The whole file is mapped `MAP_SHARED` and grown in zero-filled chunks
//! (`ftruncate` then `mremap`), so writing a record is a store into memory: no system call per
//! event, and what was stored survives a SIGKILL in the page cache, followed by zeros that read as
//! the end of the records. [`Writer::close`] truncates the file to its exact length.
//!
//! Records are addressed by file offset, never by pointer, because growing may move the mapping:
//! a pending sync record is completed in place with [`Writer::rewrite`] at its offset.
//!
//! Nothing here allocates or panics once the file exists, so the signal handlers that flush a
//! thread's cache may call it. A failure to grow (disk full) marks the writer broken: that
//! thread's trace ends there, readable, and one message says so.

use std::ffi::CStr;
use std::ptr;

use ilgen_trace::format::{encode_access, encode_record, MAX_RECORD};
use ilgen_trace::{Access, Event};

pub(crate) struct Writer {
    fd: libc::c_int,
    base: *mut u8,
    /// Length of the file and of the mapping.
    mapped: usize,
    /// End of the records written so far.
    pos: usize,
    chunk: usize,
    broken: bool,
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
    pub fn create(path: &CStr, tmp: &CStr, header: &[u8], chunk: usize) -> Result<Writer, i32> {
        let page = 4096;
        let chunk = chunk.max(page).div_ceil(page) * page;
        let first = (header.len() + MAX_RECORD).div_ceil(chunk) * chunk;
        // SAFETY: plain system calls on a file this function owns.
        unsafe {
            let fd = libc::open(
                tmp.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
                0o644,
            );
            if fd < 0 {
                return Err(errno());
            }
            if libc::ftruncate(fd, first as libc::off_t) != 0 {
                let e = errno();
                libc::close(fd);
                return Err(e);
            }
            let base = libc::mmap(
                ptr::null_mut(),
                first,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            );
            if base == libc::MAP_FAILED {
                let e = errno();
                libc::close(fd);
                return Err(e);
            }
            let base = base as *mut u8;
            ptr::copy_nonoverlapping(header.as_ptr(), base, header.len());
            if libc::rename(tmp.as_ptr(), path.as_ptr()) != 0 {
                let e = errno();
                libc::munmap(base as *mut libc::c_void, first);
                libc::close(fd);
                libc::unlink(tmp.as_ptr());
                return Err(e);
            }
            Ok(Writer {
                fd,
                base,
                mapped: first,
                pos: header.len(),
                chunk,
                broken: false,
            })
        }
    }

    /// Bytes written so far, header included.
    #[cfg(test)]
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
        // SAFETY: the mapping covers exactly `mapped` bytes of `fd`, which this writer owns.
        unsafe {
            if libc::ftruncate(self.fd, grown as libc::off_t) != 0 {
                self.fail(b"ilgen: failed to grow a thread trace file (disk full?); that thread's trace ends here\n");
                return false;
            }
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
        // SAFETY: `reserve` guarantees MAX_RECORD mapped bytes at `pos`, owned by this writer.
        let out = unsafe { std::slice::from_raw_parts_mut(self.base.add(at), MAX_RECORD) };
        self.pos += encode_record(event, out);
        Some(at)
    }

    /// Appends one access record: [`Writer::write`] without the generic encoder.
    #[inline]
    pub fn write_access(&mut self, access: &Access) {
        if !self.reserve() {
            return;
        }
        // SAFETY: `reserve` guarantees MAX_RECORD mapped bytes at `pos`, owned by this writer.
        let out = unsafe { std::slice::from_raw_parts_mut(self.base.add(self.pos), MAX_RECORD) };
        self.pos += encode_access(access, out);
    }

    /// Replaces the record at `at` with `event`, which must encode to the same length (a pending
    /// sync record and its completion do: fixed-int encoding). Anything else is ignored.
    pub fn rewrite(&mut self, at: usize, event: &Event) {
        if !self.is_open() || at >= self.pos {
            return;
        }
        let mut buf = [0u8; MAX_RECORD];
        let n = encode_record(event, &mut buf);
        // SAFETY: `at < pos <= mapped`; the length byte at `at` was written by `write`.
        unsafe {
            let old = *self.base.add(at) as usize + 1;
            if old == n && at + n <= self.pos {
                ptr::copy_nonoverlapping(buf.as_ptr(), self.base.add(at), n);
            }
        }
    }

    /// Removes the record at `at` if it is the last one (a fork whose `pthread_create` failed, a
    /// lock call that returned an error). Returns whether it did.
    pub fn retract(&mut self, at: usize) -> bool {
        if !self.is_open() || at >= self.pos {
            return false;
        }
        // SAFETY: as in `rewrite`.
        unsafe {
            let len = *self.base.add(at) as usize + 1;
            if at + len != self.pos {
                return false;
            }
            ptr::write_bytes(self.base.add(at), 0, len);
        }
        self.pos = at;
        true
    }

    /// Truncates the file to the records written, unmaps and closes it. Later writes are ignored.
    pub fn close(&mut self) {
        if self.base.is_null() {
            return;
        }
        // SAFETY: releasing what `create` acquired, once.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.mapped);
            libc::ftruncate(self.fd, self.pos as libc::off_t);
            libc::close(self.fd);
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
        // SAFETY: as in `close`.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.mapped);
            libc::close(self.fd);
        }
        self.base = ptr::null_mut();
        self.mapped = 0;
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ilgen_trace::format::{decode_thread, encode_header, ThreadHeader};
    use ilgen_trace::{AccessKind, Sync, SyncOp, FORMAT_VERSION, PENDING};
    use std::ffi::CString;
    use std::path::PathBuf;

    /// A fresh file path in a directory of its own, removed when the guard drops.
    struct Temp(PathBuf);

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn temp(name: &str) -> (Temp, PathBuf, CString, CString) {
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
        let mut w = Writer::create(&c, &tmp, &header(), 4096).unwrap();
        let events: Vec<Event> = (0..2000).map(access).collect();
        for (i, e) in events.iter().enumerate() {
            match e {
                // Half through the hand-written access encoder: the same bytes.
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
        let t = decode_thread(&path, &bytes).unwrap();
        assert_eq!(
            (t.header.tid, t.header.parent, t.header.child_index),
            (2, 0, 1)
        );
        assert_eq!(t.events, events);
    }

    #[test]
    fn killed_writer_leaves_a_readable_zero_padded_file() {
        let (_dir, path, c, tmp) = temp("killed.trace");
        let mut w = Writer::create(&c, &tmp, &header(), 4096).unwrap();
        let lock = |seq| {
            Event::Sync(Sync {
                seq,
                site: 3,
                op: SyncOp::MutexLock { mutex: 0x42 },
            })
        };
        w.write(&access(0)).unwrap();
        let pending = w.write(&lock(PENDING)).unwrap();
        // The process dies here: no close, no truncation; the reader sees the mapping's contents.
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() % 4096, 0, "still padded to a chunk");
        let t = decode_thread(&path, &bytes).unwrap();
        assert_eq!(t.events, vec![access(0), lock(PENDING)]);
        // Completing in place and writing on.
        w.rewrite(pending, &lock(7));
        w.write(&access(1)).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let t = decode_thread(&path, &bytes).unwrap();
        assert_eq!(t.events, vec![access(0), lock(7), access(1)]);
        std::mem::forget(w);
    }

    #[test]
    fn retract_removes_only_the_last_record() {
        let (_dir, path, c, tmp) = temp("retract.trace");
        let mut w = Writer::create(&c, &tmp, &header(), 4096).unwrap();
        let a = w.write(&access(0)).unwrap();
        let b = w.write(&access(1)).unwrap();
        assert!(!w.retract(a));
        assert!(w.retract(b));
        w.write(&access(2)).unwrap();
        w.close();
        let t = decode_thread(&path, &std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(t.events, vec![access(0), access(2)]);
        assert!(
            w.write(&access(3)).is_none(),
            "closed writers ignore writes"
        );
    }
}
