//! The memory-access hooks: `__ilgen_read`, `__ilgen_write`, `__ilgen_read_write` and the atomic
//! forms, and the wait-loop markers.
//!
//! Takes each instrumented load or store (address, size in bytes, site); gives an entry in the
//! calling thread's segment cache. An atomic operation whose memory order acquires or releases
//! is recorded after its instruction (`__ilgen_atomic_leave`), under the lock of its address
//! taken before it (`__ilgen_atomic_enter`), with the records of those halves (see
//! `ilgen_trace::Atomic`). This is the hot path: a thread-local load, a flag, and a probe
//! of a preallocated table; no allocation, no lock, no system call. Hotter still, and not here:
//! the check the pass inlines before a plain load or store, which reads the thread's coverage
//! filter and calls a hook only when it does not hold the access (the slow path publishes the
//! filter to it). Ranges longer than `u32::MAX`
//! bytes (a huge `memcpy`) are split into `u32`-sized records.
//!
//! In replay mode no thread records (`thread::current` is `None`), and the access goes to the
//! happens-before race check instead (`shadow`), which reports through `report`; a plain access
//! that the shadow's fast path decided (a repeat) then goes into the thread's table for the
//! inlined check (`replay::cover`), which skips the same site's later accesses of those bytes in
//! the same instant (of all the bytes of the granule that one cell of the instant covers with its
//! kind: a byte loop's second pass then calls a hook once per granule, not per byte; and of the
//! granules next to it in the entry's 32 bytes that one cell each covers whole: a stream read
//! again calls a hook once per entry). Only a repeat: a program that touches its bytes once per instant (a stream)
//! would pay for the entries and use none.

use std::ffi::c_void;

use ilgen_trace::{abi, AccessKind, SiteId, SyncOp};

use crate::{calls, record, replay, sites, thread};

#[inline(always)]
fn access(addr: *const c_void, size: u64, site: *const c_void, kind: AccessKind) {
    // Recording, and the access extends or repeats its instruction's last range; or mode off.
    if !thread::record_fast(addr as u64, size, kind, site as usize) {
        access_slow(addr, size, site, kind);
    }
}

#[inline(never)]
fn access_slow(addr: *const c_void, size: u64, site: *const c_void, kind: AccessKind) {
    let Some(st) = thread::current() else {
        return replay_access(addr, size, site, kind);
    };
    let Some(mut inner) = st.enter() else { return };
    // From the thread's first access on, the pass's inlined checks read its coverage filter.
    inner.cache.publish_coverage();
    if size <= u64::from(u32::MAX) {
        if size != 0 {
            // Every caller's fast path just missed: its probes are not repeated.
            inner.record_missed(addr as u64, size as u32, kind, site as usize);
        }
    } else {
        split(&mut inner, addr as u64, size, kind, site as usize);
    }
}

/// The site pointer a hook was given, named by its id only when the shadow needs it, and whether
/// the access is the site's first of its thread's instant.
#[derive(Clone, Copy)]
struct RawSite(*const c_void, bool);

impl replay::shadow::Site for RawSite {
    fn id(self) -> SiteId {
        sites::id(self.0 as usize)
    }

    fn first_of_instant(self) -> bool {
        self.1
    }
}

/// The access in replay mode: checked against the shadow memory, races reported. Inlined into
/// the hook's slow path, with the shadow's fast path (an access its thread's cells of this instant
/// already cover), so that such an access costs no further call.
#[inline(always)]
fn replay_access(addr: *const c_void, size: u64, site: *const c_void, kind: AccessKind) {
    let Some(t) = replay::sync::current() else {
        return;
    };
    let Some(mut inner) = t.enter() else { return };
    let epoch = inner.cover_epoch();
    inner.settle_atomic();
    if kind.is_atomic() {
        inner.atomic_after = addr as u64 / replay::shadow::GRANULE + 1;
    }
    if let Some((at, n)) = replay_check(t, &mut inner, addr, size, site, kind) {
        if !kind.is_atomic() {
            inner.keep_covered(epoch, at, n, kind.is_write(), site as usize);
        }
    }
}

/// A read-modify-write in replay mode: its read checked, then its write, as two hooks would, in
/// one entry of the thread; when neither site makes its first access of the instant and nothing
/// watches, both decided at once on the shadow's fast path (most of a loop's `x[i] -= ...`).
#[inline(always)]
fn replay_read_write(
    addr: *const c_void,
    size: u64,
    read_site: *const c_void,
    write_site: *const c_void,
) {
    let Some(t) = replay::sync::current() else {
        return;
    };
    let Some(mut inner) = t.enter() else { return };
    let epoch = inner.cover_epoch();
    inner.settle_atomic();
    if t.watch.is_some() {
        replay_check(t, &mut inner, addr, size, read_site, AccessKind::Read);
        replay_check(t, &mut inner, addr, size, write_site, AccessKind::Write);
        return;
    }
    let tid = t.tid();
    // In the order two hooks would take them: the read's slot first.
    let first_read = inner.first_of_site(tid, read_site as usize);
    let first_write = inner.first_of_site(tid, write_site as usize);
    if !first_read
        && !first_write
        && replay::shadow::read_write_decided(&inner.clock, tid, addr as u64, size)
    {
        // Its inlined check reads the write's site, which only this hook names.
        inner.keep_covered(epoch, addr as u64, size, true, write_site as usize);
        return;
    }
    let read = RawSite(read_site, first_read);
    shadow_check(&mut inner, tid, addr, size, read, AccessKind::Read);
    let write = RawSite(write_site, first_write);
    shadow_check(&mut inner, tid, addr, size, write, AccessKind::Write);
}

/// The access of the entered thread `t` at `site`: watched first (the debugger's stop, the
/// schedule's watched accesses), then checked against the shadow; when its fast path decided it,
/// the bytes the coverage table may keep for the site (`replay::shadow::access`).
#[inline(always)]
fn replay_check(
    t: &replay::thread::ReplayThread,
    inner: &mut replay::thread::Inner,
    addr: *const c_void,
    size: u64,
    site: *const c_void,
    kind: AccessKind,
) -> Option<(u64, u64)> {
    let tid = t.tid();
    if let Some(r) = t.watch {
        watch(r, t, sites::id(site as usize));
    }
    let first = inner.first_of_site(tid, site as usize);
    shadow_check(inner, tid, addr, size, RawSite(site, first), kind)
}

/// The shadow's check of one access of the entered thread `tid`, its races reported; what
/// `replay::shadow::access` gives.
#[inline(always)]
fn shadow_check(
    inner: &mut replay::thread::Inner,
    tid: ilgen_trace::ThreadId,
    addr: *const c_void,
    size: u64,
    site: RawSite,
    kind: AccessKind,
) -> Option<(u64, u64)> {
    replay::shadow::access(
        &mut inner.clock,
        tid,
        addr as u64,
        size,
        site,
        kind,
        replay::report::race,
    )
}

/// The access of thread `t` at `site` for a replay that watches accesses: the debugger's stop,
/// and the schedule's watched accesses.
#[cold]
#[inline(never)]
fn watch(r: &replay::gate::Replay, t: &replay::thread::ReplayThread, site: SiteId) {
    let tid = t.tid();
    replay::debug::access(tid, site, r.options.stop_at);
    let syncs = t.info.syncs.load(std::sync::atomic::Ordering::Acquire);
    if r.plan.saw(tid, site, syncs, calls::unbegun()) {
        replay::report::atomicity(site);
    }
}

#[cold]
fn split(inner: &mut thread::Inner, mut addr: u64, mut size: u64, kind: AccessKind, site: usize) {
    while size > 0 {
        let n = size.min(u64::from(u32::MAX));
        inner.record_missed(addr, n as u32, kind, site);
        addr = addr.wrapping_add(n);
        size -= n;
    }
}

/// Records a plain read of `[addr, addr + size)` (also used by the string wrappers).
pub(crate) fn read_range(addr: *const c_void, size: usize, site: *const c_void) {
    access(addr, size as u64, site, AccessKind::Read);
}

/// Records a plain write of `[addr, addr + size)`.
pub(crate) fn write_range(addr: *const c_void, size: usize, site: *const c_void) {
    access(addr, size as u64, site, AccessKind::Write);
}

/// # Safety
/// Callable from any thread at any time; `addr` is only recorded, never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_read(addr: *const c_void, size: u64, site: *const c_void) {
    access(addr, size, site, AccessKind::Read);
}

/// # Safety
/// As [`__ilgen_read`].
#[no_mangle]
pub unsafe extern "C" fn __ilgen_write(addr: *const c_void, size: u64, site: *const c_void) {
    access(addr, size, site, AccessKind::Write);
}

/// A read-modify-write (`x++`): the load of `size` bytes at `addr` and the store that follows it
/// with nothing that may sync between (the pass checks that), one hook before the load.
/// Recording keeps the write alone: the segment's range of those bytes takes the write's kind and
/// site either way. Replay checks the read, then the write, as the two hooks did, so that a race
/// on `x++` is still reported on its read first.
///
/// # Safety
/// As [`__ilgen_read`].
#[no_mangle]
pub unsafe extern "C" fn __ilgen_read_write(
    addr: *const c_void,
    size: u64,
    read_site: *const c_void,
    write_site: *const c_void,
) {
    if !thread::record_fast(addr as u64, size, AccessKind::Write, write_site as usize) {
        read_write_slow(addr, size, read_site, write_site);
    }
}

#[inline(never)]
fn read_write_slow(
    addr: *const c_void,
    size: u64,
    read_site: *const c_void,
    write_site: *const c_void,
) {
    if thread::current().is_some() {
        access_slow(addr, size, write_site, AccessKind::Write);
    } else {
        replay_read_write(addr, size, read_site, write_site);
    }
}

/// # Safety
/// As [`__ilgen_read`].
#[no_mangle]
pub unsafe extern "C" fn __ilgen_atomic_read(addr: *const c_void, size: u64, site: *const c_void) {
    access(addr, size, site, AccessKind::AtomicRead);
}

/// # Safety
/// As [`__ilgen_read`].
#[no_mangle]
pub unsafe extern "C" fn __ilgen_atomic_write(addr: *const c_void, size: u64, site: *const c_void) {
    access(addr, size, site, AccessKind::AtomicWrite);
}

/// Before an atomic operation whose memory order acquires or releases (`write` 0 for a load):
/// takes the lock of its address (`record::stripes`) and gives its token, 0 when it took none (a
/// signal handler's operation inside another's, a hot stripe, a lock that stayed taken, or
/// nothing is recorded). In replay, the access is checked here, as `__ilgen_atomic_read`/`_write`
/// check it.
///
/// # Safety
/// As [`__ilgen_read`].
#[no_mangle]
pub unsafe extern "C" fn __ilgen_atomic_enter(
    addr: *const c_void,
    size: u64,
    site: *const c_void,
    write: u64,
) -> u64 {
    let Some(st) = thread::current() else {
        let kind = match write {
            0 => AccessKind::AtomicRead,
            _ => AccessKind::AtomicWrite,
        };
        replay_access(addr, size, site, kind);
        return 0;
    };
    let Some(mut inner) = st.enter() else {
        return 0;
    };
    let stripe = record::stripes::of(addr as u64);
    if inner.atomic_held || record::stripes::hot(stripe) {
        return 0;
    }
    inner.atomic_held = true;
    drop(inner);
    // Outside the runtime: a thread flushing the others at exit never waits for this one.
    if record::stripes::lock(stripe) {
        return stripe as u64 + 1;
    }
    if let Some(mut inner) = st.enter() {
        inner.atomic_held = false;
    }
    0
}

/// After that operation: records it (`how`: the `abi::ATOMIC_*` bits) and gives the lock of
/// `token` back. Without a token, the access alone is recorded, as a relaxed one's.
///
/// # Safety
/// As [`__ilgen_read`].
#[no_mangle]
pub unsafe extern "C" fn __ilgen_atomic_leave(
    addr: *const c_void,
    size: u64,
    site: *const c_void,
    how: u64,
    token: u64,
) {
    let kind = match how & abi::ATOMIC_WRITES {
        0 => AccessKind::AtomicRead,
        _ => AccessKind::AtomicWrite,
    };
    if let Some(mut inner) = thread::current_if_live().and_then(|st| st.enter()) {
        let (addr, size, site) = (addr as u64, size as u32, site as usize);
        match token {
            0 => inner.record(addr, size, kind, site),
            _ => {
                inner.atomic_leave(addr, size, kind, site, how, token as usize - 1);
                inner.atomic_held = false;
            }
        }
    }
    if token != 0 {
        record::stripes::unlock(token as usize - 1);
    }
}

/// About to enter a loop around `pthread_cond_wait(cond, ..)`. A sync event: it ends a segment.
///
/// # Safety
/// Callable from any thread; `cond` is only recorded.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wait_loop_enter(cond: *const c_void, site: *const c_void) {
    record::sync::now(site, SyncOp::WaitLoopEnter { cond: cond as u64 });
}

/// Left such a loop: the awaited predicate held.
///
/// # Safety
/// As [`__ilgen_wait_loop_enter`].
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wait_loop_exit(cond: *const c_void, site: *const c_void) {
    record::sync::now(site, SyncOp::WaitLoopExit { cond: cond as u64 });
}
