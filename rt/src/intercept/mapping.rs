//! Mappings: `mmap`, `mmap64`, `munmap` and `mremap` as the pass rewrites them in the program.
//!
//! Takes the program's calls; gives the heap events of [`super::heap`]: `HeapOp::Map` after an
//! `mmap` succeeded (anonymous or of a file, private or shared), `HeapOp::Unmap` before `munmap`
//! for each part of the range that such a mapping still covers (a partial `munmap` frees only
//! that part). A mapping placed with `MAP_FIXED` over tracked ones first ends them. An `mremap`
//! of a tracked range ends it (before the call, as `munmap`) and begins the new range after it,
//! moved or not (its bytes are copied over, but any access another thread may make to the old
//! range concurrently races with the remap); with `MREMAP_DONTUNMAP` the old range lives on as a
//! new, empty mapping; a failed `mremap` restarts the old range as a new object (which may hide a
//! race across the call, never invent one). A file's mapping is an object like an anonymous one:
//! the kernel hands its address to the next mapping once it is unmapped (libuv's event loops each
//! map an io_uring ring, and a loop started after another closed gets the closed one's address;
//! without the lifetime the two loops' accesses of their rings paired as races). Two mappings of
//! one file at two addresses share bytes the trace cannot tie together: their accesses never
//! pair, as before. No mapping made outside instrumented code is an event: glibc's malloc maps
//! big blocks itself (the malloc call is the event) and the trace writer maps its files.
//!
//! Which ranges are mappings is kept here, under a lock: mapping and unmapping are system calls
//! already, so the lock adds no cost that matters.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Mutex;

use ilgen_trace::HeapOp;

use super::heap;

/// Tracked mappings: start → end (page-aligned), disjoint.
static MAPPED: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());

fn page() -> u64 {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(1) as u64
}

/// The end of `len` bytes from `addr` in whole pages, as the kernel maps and unmaps them.
fn page_end(addr: u64, len: usize) -> u64 {
    addr.saturating_add((len as u64).div_ceil(page()) * page())
}

/// Removes `[start, end)` from the tracked mappings; gives the parts it covered, ascending.
fn take(start: u64, end: u64) -> Vec<(u64, u64)> {
    let mut map = MAPPED.lock().unwrap_or_else(|e| e.into_inner());
    let overlapping: Vec<(u64, u64)> = map
        .range(..end)
        .rev()
        .take_while(|&(_, &e)| e > start)
        .map(|(&s, &e)| (s, e))
        .collect();
    let mut taken = Vec::with_capacity(overlapping.len());
    for (s, e) in overlapping.into_iter().rev() {
        map.remove(&s);
        if s < start {
            map.insert(s, start);
        }
        if e > end {
            map.insert(end, e);
        }
        taken.push((s.max(start), e.min(end)));
    }
    taken
}

/// Records `[start, end)` as mapped (`map`) or unmapped.
fn report(start: u64, end: u64, map: bool, site: *const c_void) {
    let (addr, size) = (start, end - start);
    let op = if map {
        HeapOp::Map { addr, size }
    } else {
        HeapOp::Unmap { addr, size }
    };
    heap::event(op, site as usize);
}

fn unmapped(start: u64, end: u64, site: *const c_void) {
    for (s, e) in take(start, end) {
        report(s, e, false, site);
    }
}

/// # Safety
/// Same contract as `mmap`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_mmap(
    addr: *mut c_void,
    len: usize,
    prot: libc::c_int,
    flags: libc::c_int,
    fd: libc::c_int,
    offset: libc::off_t,
    site: *const c_void,
) -> *mut c_void {
    // SAFETY: the program's own call.
    let p = unsafe { libc::mmap(addr, len, prot, flags, fd, offset) };
    if p != libc::MAP_FAILED {
        mapped(p, len, site);
    }
    p
}

/// `mmap64` is `mmap` where `off_t` has 64 bits already (every target the runtime builds for).
///
/// # Safety
/// Same contract as `mmap64`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_mmap64(
    addr: *mut c_void,
    len: usize,
    prot: libc::c_int,
    flags: libc::c_int,
    fd: libc::c_int,
    offset: libc::off64_t,
    site: *const c_void,
) -> *mut c_void {
    // SAFETY: the same contract.
    unsafe { __ilgen_wrap_mmap(addr, len, prot, flags, fd, offset, site) }
}

/// After a successful mapping of `len` bytes at `p`: whatever it replaced ended (only
/// `MAP_FIXED` can replace), and the new one begins.
fn mapped(p: *mut c_void, len: usize, site: *const c_void) {
    let (start, end) = (p as u64, page_end(p as u64, len));
    unmapped(start, end, site);
    begin(start, end, site);
}

/// Tracks `[start, end)` as a mapping and records its start.
fn begin(start: u64, end: u64, site: *const c_void) {
    MAPPED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(start, end);
    report(start, end, true, site);
}

/// # Safety
/// Same contract as `munmap`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_munmap(
    addr: *mut c_void,
    len: usize,
    site: *const c_void,
) -> libc::c_int {
    let start = addr as u64;
    // Reported before the call, so that the free is numbered before any mapping that reuses the
    // range; the arguments munmap refuses (EINVAL) free nothing.
    if len != 0 && start % page() == 0 {
        unmapped(start, page_end(start, len), site);
    }
    // SAFETY: the program's own call.
    unsafe { libc::munmap(addr, len) }
}

/// `mremap` is variadic: the pass passes `new_address` always (null when the call left it out),
/// and it is read only with `MREMAP_FIXED`, as the kernel does.
///
/// # Safety
/// Same contract as `mremap`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_mremap(
    old: *mut c_void,
    old_len: usize,
    new_len: usize,
    flags: libc::c_int,
    new_address: *mut c_void,
    site: *const c_void,
) -> *mut c_void {
    let start = old as u64;
    // Reported before the call, as munmap: the old range's end is numbered before any mapping
    // that reuses it. A zero old size duplicates a shared mapping and ends nothing (nor is the
    // duplicate an event); a misaligned address is refused (EINVAL).
    let ended = if old_len != 0 && start % page() == 0 {
        take(start, page_end(start, old_len))
    } else {
        Vec::new()
    };
    for &(s, e) in &ended {
        report(s, e, false, site);
    }
    // SAFETY: the program's own call.
    let p = unsafe { libc::mremap(old, old_len, new_len, flags, new_address) };
    if p == libc::MAP_FAILED || flags & libc::MREMAP_DONTUNMAP != 0 {
        for &(s, e) in &ended {
            begin(s, e, site);
        }
    }
    if p != libc::MAP_FAILED && !ended.is_empty() {
        // A new range placed over tracked mappings (MREMAP_FIXED) ended them.
        let (s, e) = (p as u64, page_end(p as u64, new_len));
        unmapped(s, e, site);
        begin(s, e, site);
    }
    p
}
