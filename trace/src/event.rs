//! The event vocabulary: what one thread did, as the runtime records it and the analyzer reads it.
//!
//! Takes nothing; gives the [`Event`] type (a memory [`Access`], a [`Sync`] operation or a [`Heap`]
//! lifetime event) that `ilgen-rt` writes and `ilgen` reads. Every variant carries exactly the data
//! its kind needs. New variants go at the end of each enum: the encoding numbers them in order.
//! Object identities (mutex, condition variable, ...) are the addresses the program used in this
//! run; the analyzer matches objects across runs by each thread's operation count, not by address.
//!
//! The variant order of every enum here is frozen (it is the on-disk variant index): append new
//! variants at the end, bump `format::FORMAT_VERSION`, and add their row to `tests/golden.rs`.

use serde::{Deserialize, Serialize};

/// Logical thread id of one recorded run: 0 is the main thread, the others are numbered in the
/// order the runtime saw them created. The identity that is stable across runs is the pair
/// (parent, nth child) kept in each thread file's header.
pub type ThreadId = u32;

/// Index of an instrumented instruction in the binary's site table (see [`crate::sites`]).
pub type SiteId = u32;

/// Site of an event that no instrumented instruction caused (thread start and end).
pub const NO_SITE: SiteId = u32::MAX;

/// A thread the runtime did not see created (started by uninstrumented code), or the parent of
/// the main thread.
pub const NO_THREAD: ThreadId = u32::MAX;

/// A site as the files after the trace carry it: `None` for [`NO_SITE`] (JSON `null`).
pub fn known_site(site: SiteId) -> Option<SiteId> {
    (site != NO_SITE).then_some(site)
}

/// A thread as the files after the trace carry it: `None` for [`NO_THREAD`] (JSON `null`).
pub fn known_thread(tid: ThreadId) -> Option<ThreadId> {
    (tid != NO_THREAD).then_some(tid)
}

/// How messages name a site: `site 12`, or `no site` where no instrumented instruction made the
/// event (thread start and end).
pub fn site_text(site: Option<SiteId>) -> String {
    site.map_or_else(|| "no site".to_owned(), |s| format!("site {s}"))
}

/// Sequence number of a sync operation that was requested but had not completed when the trace
/// ended: the thread was blocked in it (a deadlock) or the process was killed.
pub const PENDING: u64 = u64::MAX;

/// One recorded event of one thread.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Access(Access),
    Sync(Sync),
    Heap(Heap),
    Atomic(Atomic),
}

/// The bytes `[addr, addr + size)` were accessed at least once in the current thread segment
/// (between two sync operations). A segment holds one record per range: a write dominates reads
/// of the same range, and the site kept is the first one of the kind kept.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Access {
    pub addr: u64,
    pub size: u32,
    pub site: SiteId,
    pub kind: AccessKind,
}

/// One byte in memory, the variant's index: how the runtime's pending segment stores it
/// (`pending`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum AccessKind {
    Read,
    Write,
    /// An atomic load. Atomics never race with each other.
    AtomicRead,
    /// An atomic store, read-modify-write or compare-exchange.
    AtomicWrite,
}

impl AccessKind {
    pub fn is_write(self) -> bool {
        matches!(self, AccessKind::Write | AccessKind::AtomicWrite)
    }

    pub fn is_atomic(self) -> bool {
        matches!(self, AccessKind::AtomicRead | AccessKind::AtomicWrite)
    }

    /// Whether accesses of these kinds by two threads make a race: at least one writes, and not
    /// both are atomic (atomics never race with atomics).
    #[inline]
    pub fn conflicts_with(self, other: AccessKind) -> bool {
        (self.is_write() || other.is_write()) && !(self.is_atomic() && other.is_atomic())
    }

    /// The kind a segment keeps when both `self` and `other` touched the same range: a write
    /// dominates a read, and a plain access dominates an atomic one (it is the one that can race).
    pub fn dominant(self, other: AccessKind) -> AccessKind {
        let write = self.is_write() || other.is_write();
        let atomic = self.is_atomic() && other.is_atomic();
        match (write, atomic) {
            (false, false) => AccessKind::Read,
            (true, false) => AccessKind::Write,
            (false, true) => AccessKind::AtomicRead,
            (true, true) => AccessKind::AtomicWrite,
        }
    }
}

/// A block of memory began or ended its life: the malloc family, `operator new`/`delete`, a
/// thread's stack, or a mapping, anonymous or of a file (`mmap`/`munmap` called by instrumented
/// code; the mappings libc and the runtime make for themselves are no event).
/// Memory handed out again is a new object, whose accesses never pair with the old one's; a free
/// (or unmap) is a write over the whole block. Not a sync operation: no schedule step, no
/// happens-before edge (the allocator's own locks order nothing the program relies on). `seq`
/// comes from the sync operations' counter, taken after the real allocation and before the real
/// free, so that a block's free is always numbered before the allocation that reuses it. The
/// thread's segment cache is written out before the record, so the accesses before it in the file
/// are exactly those made before it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Heap {
    pub seq: u64,
    pub site: SiteId,
    pub op: HeapOp,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeapOp {
    /// `[addr, addr + size)` was allocated (`size` as requested).
    Alloc { addr: u64, size: u64 },
    /// The block at `addr` is freed; `size` is its usable size (`malloc_usable_size`).
    Free { addr: u64, size: u64 },
    /// The calling thread starts on the stack `[addr, addr + size)` (its TLS block included),
    /// which glibc may have cached from a thread that ended: a new object.
    Stack { addr: u64, size: u64 },
    /// `[addr, addr + size)` was mapped (`mmap`, anonymous or of a file, private or shared),
    /// `size` in whole pages.
    Map { addr: u64, size: u64 },
    /// `[addr, addr + size)` of a mapping is unmapped (`munmap`, a `MAP_FIXED`
    /// mapping put over it, or `mremap`), `size` in whole pages; it may be part of a mapping.
    Unmap { addr: u64, size: u64 },
}

impl HeapOp {
    /// Short lowercase name, as `ilgen dump` prints it.
    pub fn name(&self) -> &'static str {
        match self {
            HeapOp::Alloc { .. } => "alloc",
            HeapOp::Free { .. } => "free",
            HeapOp::Stack { .. } => "stack",
            HeapOp::Map { .. } => "map",
            HeapOp::Unmap { .. } => "unmap",
        }
    }

    /// The block: `(addr, size)`.
    pub fn block(&self) -> (u64, u64) {
        match *self {
            HeapOp::Alloc { addr, size }
            | HeapOp::Free { addr, size }
            | HeapOp::Stack { addr, size }
            | HeapOp::Map { addr, size }
            | HeapOp::Unmap { addr, size } => (addr, size),
        }
    }
}

/// The acquire or the release half of an atomic operation on `addr` (a load, store,
/// read-modify-write or successful compare-exchange whose C/C++ memory order has that half:
/// acquire, release, acq_rel, seq_cst; a relaxed operation has neither and is an access only).
/// The operation's memory access is an [`Access`] of its own (`AtomicRead`/`AtomicWrite`), right
/// after an acquire record and before a release record. The thread's segment cache is written
/// out before the record, so the accesses before it in the file are exactly those made before
/// that half: an acquire orders the accesses after it, a release those before it. Not a sync
/// operation: no schedule step and no segment of the model.
///
/// `seq` places it in the run's order against the release records of other threads: a release
/// takes the next number of the sync counter, an acquire the counter's value without taking a
/// number (so spinning loads do not move the counter), both after the instruction while the
/// runtime holds a lock of its address that it took before it. The releases an acquire could
/// have read from are then exactly those of its address numbered below its `seq`, in the order
/// they took effect.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Atomic {
    pub seq: u64,
    pub addr: u64,
    pub site: SiteId,
    pub op: AtomicOp,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// The load (or the read of a read-modify-write) takes the location's clock.
    Acquire,
    /// A store: the location's clock becomes the thread's (it heads a new release sequence).
    ReleaseStore,
    /// A read-modify-write: the thread's clock joins the location's (a release sequence goes on
    /// through it).
    ReleaseRmw,
}

impl AtomicOp {
    /// Short lowercase name, as `ilgen dump` prints it.
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Acquire => "acquire",
            AtomicOp::ReleaseStore => "release_store",
            AtomicOp::ReleaseRmw => "release_rmw",
        }
    }
}

/// One synchronization operation. `seq` is a process-wide counter taken once per operation:
/// before the real call for operations that release (unlock, signal, post, fork, end, barrier
/// enter, the release half of a condition wait), after it for those that acquire (lock, join,
/// wait return, barrier exit), so that sorting by `seq` gives an order the run really obeyed.
/// A blocking operation is written as [`PENDING`] before the real call and completed in place
/// after it, so a thread blocked forever still shows what it was waiting for.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sync {
    pub seq: u64,
    pub site: SiteId,
    pub op: SyncOp,
}

impl Sync {
    pub fn is_pending(&self) -> bool {
        self.seq == PENDING
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SyncOp {
    /// First event of every thread but main.
    Start,
    /// Last event of every thread but main (return from its start routine or `pthread_exit`).
    End,
    Fork {
        child: ThreadId,
    },
    Join {
        child: ThreadId,
    },
    Detach {
        child: ThreadId,
    },
    MutexLock {
        mutex: u64,
    },
    MutexTryLock {
        mutex: u64,
        acquired: bool,
    },
    MutexTimedLock {
        mutex: u64,
        acquired: bool,
    },
    MutexUnlock {
        mutex: u64,
    },
    RwRdLock {
        lock: u64,
    },
    RwWrLock {
        lock: u64,
    },
    RwTryRdLock {
        lock: u64,
        acquired: bool,
    },
    RwTryWrLock {
        lock: u64,
        acquired: bool,
    },
    RwUnlock {
        lock: u64,
    },
    /// `pthread_cond_wait`/`timedwait` entered: `mutex` is released here.
    CondWait {
        cond: u64,
        mutex: u64,
        timed: bool,
    },
    /// The wait returned with `mutex` held again (woken, timed out, or spuriously).
    CondWake {
        cond: u64,
        mutex: u64,
        timed_out: bool,
    },
    CondSignal {
        cond: u64,
    },
    CondBroadcast {
        cond: u64,
    },
    BarrierEnter {
        barrier: u64,
    },
    BarrierExit {
        barrier: u64,
        serial: bool,
    },
    SpinLock {
        lock: u64,
    },
    SpinTryLock {
        lock: u64,
        acquired: bool,
    },
    SpinUnlock {
        lock: u64,
    },
    SemWait {
        sem: u64,
    },
    SemTryWait {
        sem: u64,
        acquired: bool,
    },
    SemPost {
        sem: u64,
    },
    /// About to enter a loop that calls `pthread_cond_wait` on `cond` (0 when the pass could not
    /// compute the condition variable outside the loop).
    WaitLoopEnter {
        cond: u64,
    },
    /// Left such a loop: the awaited predicate held, whether or not a wait was called.
    WaitLoopExit {
        cond: u64,
    },
    /// The process is ending on this thread: `exit()`, `quick_exit()`, `_exit()`, `_Exit()` or the
    /// return from `main` (the site is the call or the `return`). Written after the exit grace, so
    /// the steps that other threads took during it come before it in `seq`. Nothing is recorded
    /// for an `_exit` in uninstrumented code or a fatal signal, nor for an exit from a thread that
    /// already ended (the last thread leaving after main called `pthread_exit`).
    Exit,
    /// A semaphore got its count: `sem_init` succeeded with `count`, or `sem_open` returned `sem`
    /// holding `count` (read with `sem_getvalue` right after the call: O_CREAT's value for a
    /// semaphore it created, the current count for one that existed). Written after the call.
    SemInit {
        sem: u64,
        count: u32,
    },
    /// `sem_timedwait` or `sem_clockwait`: pending across the real call, completed with whether
    /// it took the semaphore (false: it timed out or was interrupted).
    SemTimedWait {
        sem: u64,
        acquired: bool,
    },
    /// `sem_destroy`, written before the call (retracted if it fails): the semaphore's life ends,
    /// and a later `SemInit` at the same address starts another one.
    SemDestroy {
        sem: u64,
    },
    /// `pthread_mutex_destroy`, written before the call (retracted if it fails): a write of the
    /// mutex, which races with any use of it that no order puts before it.
    MutexDestroy {
        mutex: u64,
    },
    /// `pthread_cond_destroy`, as [`SyncOp::MutexDestroy`].
    CondDestroy {
        cond: u64,
    },
    /// `pthread_rwlock_destroy`, as [`SyncOp::MutexDestroy`].
    RwDestroy {
        lock: u64,
    },
    /// `pthread_barrier_destroy`, as [`SyncOp::MutexDestroy`].
    BarrierDestroy {
        barrier: u64,
    },
    /// The thread entered an atomic block (a function marked `ILGEN_ATOMIC`, or
    /// `ILGEN_ATOMIC_BEGIN()`); only the outermost block of a nest is recorded, so these begins
    /// and ends alternate along a thread. Under the runtime option `calls=1` it also marks the
    /// start of a recorded call (its site flagged [`crate::sites::FLAG_CALL`]): a call of a
    /// function that may synchronize, recorded when a sync operation runs inside it (the accesses
    /// it made before its first one lie before its begin); calls nest, and a call left by
    /// `longjmp` or an exception ends at the next end of a call it was made from. A marker: it
    /// ends a segment and orders nothing.
    TxBegin,
    /// The thread left its outermost atomic block, or a recorded call returned.
    TxEnd,
    /// `bytes` bytes went into the stream `channel` (`write`, `send`, `sendto` on a pipe, a FIFO
    /// or a stream socket): a release of that many units, as a `sem_post` is of one. Numbered
    /// before the real call, so before any read that got them; `bytes` is what the call wrote.
    /// `channel` is the stream's inode, a `socketpair`'s two ends the first end's: not an
    /// address, and no use of memory.
    ChannelWrite {
        channel: u64,
        bytes: u32,
    },
    /// A read (`read`, `recv`, `recvfrom`, not a peek) got `bytes` bytes (at least one) from the
    /// stream `channel`: it waits for that many units, as a `sem_wait` for one. Numbered after
    /// the real call. A read that got nothing (end of file, an error) is no record.
    ChannelRead {
        channel: u64,
        bytes: u32,
    },
}

impl SyncOp {
    /// Short lowercase name, as `ilgen dump` prints it ([`crate::OpKind::name`]).
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// The synchronization object the operation acts on, if it is one (threads are not).
    pub fn object(&self) -> Option<u64> {
        match *self {
            SyncOp::Start
            | SyncOp::End
            | SyncOp::Exit
            | SyncOp::TxBegin
            | SyncOp::TxEnd
            | SyncOp::Fork { .. }
            | SyncOp::Join { .. }
            | SyncOp::Detach { .. } => None,
            SyncOp::MutexLock { mutex }
            | SyncOp::MutexTryLock { mutex, .. }
            | SyncOp::MutexTimedLock { mutex, .. }
            | SyncOp::MutexUnlock { mutex }
            | SyncOp::MutexDestroy { mutex } => Some(mutex),
            SyncOp::RwRdLock { lock }
            | SyncOp::RwDestroy { lock }
            | SyncOp::RwWrLock { lock }
            | SyncOp::RwTryRdLock { lock, .. }
            | SyncOp::RwTryWrLock { lock, .. }
            | SyncOp::RwUnlock { lock }
            | SyncOp::SpinLock { lock }
            | SyncOp::SpinTryLock { lock, .. }
            | SyncOp::SpinUnlock { lock } => Some(lock),
            SyncOp::CondWait { cond, .. }
            | SyncOp::CondWake { cond, .. }
            | SyncOp::CondSignal { cond }
            | SyncOp::CondBroadcast { cond }
            | SyncOp::WaitLoopEnter { cond }
            | SyncOp::WaitLoopExit { cond }
            | SyncOp::CondDestroy { cond } => Some(cond),
            SyncOp::BarrierEnter { barrier }
            | SyncOp::BarrierExit { barrier, .. }
            | SyncOp::BarrierDestroy { barrier } => Some(barrier),
            SyncOp::SemWait { sem }
            | SyncOp::SemTryWait { sem, .. }
            | SyncOp::SemPost { sem }
            | SyncOp::SemInit { sem, .. }
            | SyncOp::SemTimedWait { sem, .. }
            | SyncOp::SemDestroy { sem } => Some(sem),
            SyncOp::ChannelWrite { channel, .. } | SyncOp::ChannelRead { channel, .. } => {
                Some(channel)
            }
        }
    }

    /// What the operation does to the memory of its object, as ThreadSanitizer models it: a
    /// destroy writes the object's first byte, every other use reads it atomically (uses never
    /// race with each other, a destroy races with any use no order puts before it); an init and
    /// the wait-loop markers (no call on the object) touch nothing, and nor does a barrier's exit:
    /// glibc's `pthread_barrier_destroy` waits for every thread of the last round to leave its
    /// wait, so any thread whose wait returned may destroy the barrier (the round's serial thread
    /// does, in libuv's `barrier_serial_thread`); the threads still leaving are no use of it. A
    /// channel is an inode, not memory.
    pub fn object_access(&self) -> Option<(u64, AccessKind)> {
        match self {
            SyncOp::SemInit { .. }
            | SyncOp::ChannelWrite { .. }
            | SyncOp::ChannelRead { .. }
            | SyncOp::WaitLoopEnter { .. }
            | SyncOp::WaitLoopExit { .. }
            | SyncOp::BarrierExit { .. } => None,
            SyncOp::SemDestroy { .. }
            | SyncOp::MutexDestroy { .. }
            | SyncOp::CondDestroy { .. }
            | SyncOp::RwDestroy { .. }
            | SyncOp::BarrierDestroy { .. } => self.object().map(|o| (o, AccessKind::Write)),
            _ => self.object().map(|o| (o, AccessKind::AtomicRead)),
        }
    }

    /// The other thread of a thread operation.
    pub fn peer_thread(&self) -> Option<ThreadId> {
        match *self {
            SyncOp::Fork { child } | SyncOp::Join { child } | SyncOp::Detach { child } => {
                Some(child)
            }
            _ => None,
        }
    }

    /// The outcome of a try/timed operation, `None` for operations that always succeed.
    pub fn acquired(&self) -> Option<bool> {
        match *self {
            SyncOp::MutexTryLock { acquired, .. }
            | SyncOp::MutexTimedLock { acquired, .. }
            | SyncOp::RwTryRdLock { acquired, .. }
            | SyncOp::RwTryWrLock { acquired, .. }
            | SyncOp::SpinTryLock { acquired, .. }
            | SyncOp::SemTryWait { acquired, .. }
            | SyncOp::SemTimedWait { acquired, .. } => Some(acquired),
            _ => None,
        }
    }

    /// Whether a timed operation ran out of time: a wake not signalled, a timed lock or
    /// semaphore wait that took nothing. `None` for operations without a time limit (a wake
    /// answers for its wait, which may have had none).
    pub fn timed_out(&self) -> Option<bool> {
        match *self {
            SyncOp::CondWake { timed_out, .. } => Some(timed_out),
            SyncOp::MutexTimedLock { acquired, .. } | SyncOp::SemTimedWait { acquired, .. } => {
                Some(!acquired)
            }
            _ => None,
        }
    }
}
