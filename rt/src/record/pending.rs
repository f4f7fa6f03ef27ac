//! The pool of pending slots: where each thread's segment cache lives, so a killed process loses
//! nothing recorded.
//!
//! Takes a thread start (its id) and end; gives the thread a [`Slot`], one slot of a `pending.<n>`
//! file of the trace directory mapped `MAP_SHARED` (layout in `ilgen_trace::pending`), and takes
//! it back when the [`Slot`] drops. Files are made once per process, not per thread: a new file
//! only when every slot of the earlier ones is taken, so a thread start costs a lock and two
//! stores, where a file per thread cost milliseconds (create, reserve, remove) on a busy disk.
//! A slot given back is marked free (`NO_THREAD`) after its segment was written out (its count is
//! 0), and the next thread overwrites its header, so a reader never sees the old owner's ranges
//! under the new owner's id. A sealed exit removes the files ([`Pool::remove_files`]).
//!
//! Each file holds [`FILE_BYTES`] of slots (at least one, at most [`MAX_SLOTS`]): 15 at the default
//! 4096 ranges per thread, reserved on disk like a thread file's chunk so a full disk
//! fails here, with a message, and not as SIGBUS in the middle of the program.

use std::cell::UnsafeCell;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

use ilgen_trace::pending::{self, HEADER, LEN_AT};
use ilgen_trace::{ThreadId, NO_THREAD};

use crate::record::writer;

/// Bytes of slots a pending file aims at.
const FILE_BYTES: usize = 2 << 20;
/// Slots per file at most.
const MAX_SLOTS: usize = 16;

/// The pending files of one process and their free slots, behind a spin lock (thread start and
/// end only, never a signal handler).
pub(crate) struct Pool {
    lock: AtomicBool,
    /// Files made so far, `pending.0` up to `pending.<files - 1>`.
    files: AtomicUsize,
    state: UnsafeCell<State>,
}

struct State {
    /// Addresses of free slots, the next one to take last.
    free: Vec<usize>,
    /// A file could not be made: the message was given, no further file is tried.
    failed: bool,
}

// SAFETY: `state` is only reached with `lock` held.
unsafe impl Sync for Pool {}

/// A thread's slot: its header (owner, count) and then its ranges. Given back on drop.
pub(crate) struct Slot {
    base: *mut u8,
    pool: &'static Pool,
}

impl Slot {
    /// The slot's first byte: its header, [`pending::SLOT_HEADER`] bytes before its ranges; the
    /// count at [`LEN_AT`]. 8-aligned.
    pub fn base(&self) -> *mut u8 {
        self.base
    }

    /// Names thread `tid` the slot's owner: a thread that took over the state (cache and slot)
    /// of one that ended, whose segment was written out.
    pub fn assign(&self, tid: ThreadId) {
        owner(self.base).store(tid, Ordering::Release);
    }
}

/// The slot's owner field, 4-aligned at its start.
fn owner(base: *mut u8) -> &'static AtomicU32 {
    // SAFETY: `base` is a slot of a mapping that is never unmapped.
    unsafe { &*base.cast::<AtomicU32>() }
}

impl Drop for Slot {
    fn drop(&mut self) {
        // SAFETY: the slot's 4-aligned count field; its owner is done with it.
        let len = unsafe { &*self.base.add(LEN_AT).cast::<AtomicU32>() };
        len.store(0, Ordering::Release);
        owner(self.base).store(NO_THREAD, Ordering::Release);
        self.pool.locked(|s| s.free.push(self.base as usize));
    }
}

/// Slots per file for slots of `capacity` ranges.
fn slots_per_file(capacity: usize) -> usize {
    (FILE_BYTES / pending::slot_bytes(capacity)).clamp(1, MAX_SLOTS)
}

impl Pool {
    pub const fn new() -> Pool {
        Pool {
            lock: AtomicBool::new(false),
            files: AtomicUsize::new(0),
            state: UnsafeCell::new(State {
                free: Vec::new(),
                failed: false,
            }),
        }
    }

    fn locked<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        while self
            .lock
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::thread::yield_now();
        }
        // SAFETY: the lock is held.
        let r = f(unsafe { &mut *self.state.get() });
        self.lock.store(false, Ordering::Release);
        r
    }

    /// A free slot for thread `tid`, in a new file of `dir` when none is free. `capacity` (ranges
    /// per slot) and `sites` (the site section's address) are the same at every call of a
    /// process. `Err` carries the message to give, once per process; then `Ok(None)` from then on.
    pub fn take(
        &'static self,
        dir: &Path,
        capacity: usize,
        sites: usize,
        tid: ThreadId,
    ) -> Result<Option<Slot>, String> {
        let base = self.locked(|s| {
            if s.free.is_empty() && !s.failed {
                if let Err(message) = self.add_file(s, dir, capacity, sites) {
                    s.failed = true;
                    return Err(message);
                }
            }
            Ok(s.free.pop())
        })?;
        Ok(base.map(|base| {
            let slot = Slot {
                base: base as *mut u8,
                pool: self,
            };
            slot.assign(tid);
            slot
        }))
    }

    /// Makes the next pending file and adds its slots to the free ones.
    fn add_file(
        &self,
        s: &mut State,
        dir: &Path,
        capacity: usize,
        sites: usize,
    ) -> Result<(), String> {
        let n = self.files.load(Ordering::Relaxed);
        let path = dir.join(pending::file_name(n));
        let slots = slots_per_file(capacity);
        let stride = pending::slot_bytes(capacity);
        let bytes = (HEADER + slots * stride).div_ceil(4096) * 4096;
        let header = pending::encode_header(slots as u32, sites as u64, capacity as u32);
        let (fd, _, base) = writer::c_paths(&path)
            .and_then(|(c, tmp)| writer::create_mapped(&c, &tmp, &header, bytes))
            .map_err(|errno| {
                format!(
                    "ilgen: failed to create {}: {}; threads' last accesses are lost if the \
                     process is killed",
                    path.display(),
                    std::io::Error::from_raw_os_error(errno)
                )
            })?;
        // SAFETY: the mapping stays without the descriptor, for the life of the process.
        unsafe { libc::close(fd) };
        self.files.store(n + 1, Ordering::Relaxed);
        for slot in (0..slots).rev() {
            // SAFETY: inside the mapping of `bytes` bytes.
            let slot = unsafe { base.add(HEADER + slot * stride) };
            owner(slot).store(NO_THREAD, Ordering::Relaxed);
            s.free.push(slot as usize);
        }
        Ok(())
    }

    /// Removes the pending files from `dir` (every segment is in its thread file). The mappings
    /// stay, so a thread still holding a slot writes into a file nobody reads.
    pub fn remove_files(&self, dir: &Path) {
        for n in 0..self.files.load(Ordering::Relaxed) {
            let _ = std::fs::remove_file(dir.join(pending::file_name(n)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_taken_from_one_file_and_given_back() {
        let (_dir, path, _, _) = crate::record::writer::tests::temp("pool");
        let dir = path.parent().unwrap();
        let pool: &'static Pool = Box::leak(Box::new(Pool::new()));
        let a = pool.take(dir, 16, 0x1000, 1).unwrap().unwrap();
        let b = pool.take(dir, 16, 0x1000, 2).unwrap().unwrap();
        assert_eq!(pool.files.load(Ordering::Relaxed), 1);
        assert_eq!(
            b.base() as usize - a.base() as usize,
            pending::slot_bytes(16)
        );
        let read = || std::fs::read(dir.join("pending.0")).unwrap();
        let owner_at = |bytes: &[u8], slot: usize| {
            let at = HEADER + slot * pending::slot_bytes(16);
            u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
        };
        let bytes = read();
        assert_eq!((owner_at(&bytes, 0), owner_at(&bytes, 1)), (1, 2));
        assert_eq!(owner_at(&bytes, 2), NO_THREAD);
        let freed = a.base();
        drop(a);
        assert_eq!(owner_at(&read(), 0), NO_THREAD);
        let c = pool.take(dir, 16, 0x1000, 3).unwrap().unwrap();
        assert_eq!(c.base(), freed, "a slot given back is taken again");
        assert_eq!(owner_at(&read(), 0), 3);
        let rest: Vec<_> = (0..slots_per_file(16) - 2)
            .map(|i| pool.take(dir, 16, 0x1000, 10 + i as u32).unwrap().unwrap())
            .collect();
        assert_eq!(
            pool.files.load(Ordering::Relaxed),
            1,
            "the first file is full"
        );
        let d = pool.take(dir, 16, 0x1000, 99).unwrap().unwrap();
        assert_eq!(
            pool.files.load(Ordering::Relaxed),
            2,
            "a second file when it is"
        );
        pool.remove_files(dir);
        assert!(!dir.join("pending.0").exists() && !dir.join("pending.1").exists());
        drop((b, c, d, rest));
    }

    #[test]
    fn files_hold_a_bounded_number_of_slots() {
        assert_eq!(slots_per_file(4096), 12);
        assert_eq!(slots_per_file(16), MAX_SLOTS);
        assert_eq!(slots_per_file(1 << 22), 1);
    }
}
