//! The memory-access hooks: `__ilgen_read`, `__ilgen_write`, `__ilgen_read_write` and the atomic
//! forms, and the wait-loop markers.
//!
//! Takes each instrumented load or store (address, size in bytes, site); gives an entry in the
//! calling thread's segment cache. This is the hot path: a thread-local load, a flag, and a probe
//! of a preallocated table; no allocation, no lock, no system call. Hotter still, and not here:
//! the check the pass inlines before a plain load or store, which reads the thread's coverage
//! filter and calls a hook only when it does not hold the access (the slow path publishes the
//! filter to it). Ranges longer than `u32::MAX`
//! bytes (a huge `memcpy`) are split into `u32`-sized records.
//!
//! In replay mode no thread records (`thread::current` is `None`), and the access goes to the
//! happens-before race check instead (`shadow`), which reports through `report`.

use std::ffi::c_void;

use ilgen_trace::{AccessKind, SiteId, SyncOp};

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
    let tid = t.tid();
    let Some(mut inner) = t.enter() else { return };
    inner.settle_atomic();
    if kind.is_atomic() {
        inner.atomic_after = addr as u64 / replay::shadow::GRANULE + 1;
    }
    if let Some(r) = replay::gate::watching() {
        watch(r, t, sites::id(site as usize));
    }
    let first = inner.first_of_site(tid, site as usize);
    replay::shadow::access(
        &mut inner.clock,
        tid,
        addr as u64,
        size,
        RawSite(site, first),
        kind,
        replay::report::race,
    );
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
        replay_access(addr, size, read_site, AccessKind::Read);
        replay_access(addr, size, write_site, AccessKind::Write);
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
