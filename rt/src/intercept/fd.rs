//! File descriptors: `close` and the calls that create a descriptor (`abi::FD_CALLS`).
//!
//! Takes the program's calls; makes the real call and, in replay mode, gives the race detector the
//! order the kernel imposes: a `close(fd)` releases into the descriptor number, and a call that
//! returns that number (an `accept`, `socket`, `pipe`, `dup`, ... after the close) acquires it.
//! A program that keeps per-descriptor state (`conns[fd]`) and serves a new connection on another
//! thread than the one that closed the old connection at the same number touches that state from
//! both threads with no pthread operation between them; without this order replay would confirm
//! those accesses as a race that no execution can have. Nothing is recorded: the prediction does
//! not know the order, so such a candidate is replayed and found without error, never confirmed.
//! Descriptors closed or created outside instrumented code (`fclose` inside libc) are not seen.
//! A `socketpair` also makes its two ends one channel (`channel::pair`), as a pipe's are, in both
//! modes: the recording names a write's and a read's channel as the replay does.

use std::ffi::{c_int, c_uint, c_void};

use super::channel;
use super::sem::keeping_errno;
use crate::{replay, runtime};

type Site = *const c_void;

/// The descriptors `fds` were created (those not negative).
fn created(fds: &[c_int]) {
    keeping_errno(|| {
        for &fd in fds.iter().filter(|&&fd| fd >= 0) {
            channel::forget(fd);
            replay::sync::fd_created(fd);
        }
    });
}

/// # Safety
/// Same contract as `close`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_close(fd: c_int, _site: Site) -> c_int {
    // Before the call: once it returns, another thread's call may get the number.
    if fd >= 0 {
        channel::forget(fd);
        replay::sync::fd_closing(fd);
    }
    // SAFETY: the program's own call.
    unsafe { libc::close(fd) }
}

/// # Safety
/// Same contract as `accept`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_accept(
    fd: c_int,
    addr: *mut libc::sockaddr,
    len: *mut libc::socklen_t,
    _site: Site,
) -> c_int {
    // SAFETY: the program's own call.
    let r = unsafe { libc::accept(fd, addr, len) };
    created(&[r]);
    r
}

/// # Safety
/// Same contract as `accept4`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_accept4(
    fd: c_int,
    addr: *mut libc::sockaddr,
    len: *mut libc::socklen_t,
    flags: c_int,
    _site: Site,
) -> c_int {
    // SAFETY: the program's own call.
    let r = unsafe { libc::accept4(fd, addr, len, flags) };
    created(&[r]);
    r
}

/// # Safety
/// Same contract as `socket`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_socket(
    domain: c_int,
    ty: c_int,
    protocol: c_int,
    _site: Site,
) -> c_int {
    // SAFETY: the program's own call.
    let r = unsafe { libc::socket(domain, ty, protocol) };
    created(&[r]);
    r
}

/// # Safety
/// Same contract as `socketpair`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_socketpair(
    domain: c_int,
    ty: c_int,
    protocol: c_int,
    sv: *mut c_int,
    _site: Site,
) -> c_int {
    // SAFETY: the program's own call.
    let r = unsafe { libc::socketpair(domain, ty, protocol, sv) };
    if r == 0 {
        // SAFETY: socketpair filled both.
        let ends = unsafe { std::slice::from_raw_parts(sv, 2) };
        created(ends);
        if runtime::recording().is_some() || runtime::replaying() {
            keeping_errno(|| channel::pair(ends[0], ends[1]));
        }
    }
    r
}

/// # Safety
/// Same contract as `pipe`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pipe(fds: *mut c_int, _site: Site) -> c_int {
    // SAFETY: the program's own call.
    let r = unsafe { libc::pipe(fds) };
    if r == 0 {
        // SAFETY: pipe filled both.
        created(unsafe { std::slice::from_raw_parts(fds, 2) });
    }
    r
}

/// # Safety
/// Same contract as `pipe2`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_pipe2(fds: *mut c_int, flags: c_int, _site: Site) -> c_int {
    // SAFETY: the program's own call.
    let r = unsafe { libc::pipe2(fds, flags) };
    if r == 0 {
        // SAFETY: pipe2 filled both.
        created(unsafe { std::slice::from_raw_parts(fds, 2) });
    }
    r
}

/// # Safety
/// Same contract as `dup`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_dup(fd: c_int, _site: Site) -> c_int {
    // SAFETY: the program's own call.
    let r = unsafe { libc::dup(fd) };
    created(&[r]);
    r
}

/// `dup2` closes `new` first when it is open: a close and a creation at once.
///
/// # Safety
/// Same contract as `dup2`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_dup2(old: c_int, new: c_int, _site: Site) -> c_int {
    if new >= 0 && new != old {
        replay::sync::fd_closing(new);
    }
    // SAFETY: the program's own call.
    let r = unsafe { libc::dup2(old, new) };
    created(&[r]);
    r
}

/// # Safety
/// Same contract as `dup3`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_dup3(
    old: c_int,
    new: c_int,
    flags: c_int,
    _site: Site,
) -> c_int {
    if new >= 0 && new != old {
        replay::sync::fd_closing(new);
    }
    // SAFETY: the program's own call.
    let r = unsafe { libc::dup3(old, new, flags) };
    created(&[r]);
    r
}

/// # Safety
/// Same contract as `creat`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_creat(
    path: *const libc::c_char,
    mode: libc::mode_t,
    _site: Site,
) -> c_int {
    // SAFETY: the program's own call.
    let r = unsafe { libc::creat(path, mode) };
    created(&[r]);
    r
}

/// # Safety
/// Same contract as `eventfd`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_eventfd(init: c_uint, flags: c_int, _site: Site) -> c_int {
    // SAFETY: the program's own call.
    let r = unsafe { libc::eventfd(init, flags) };
    created(&[r]);
    r
}

/// # Safety
/// Same contract as `epoll_create`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_epoll_create(size: c_int, _site: Site) -> c_int {
    // SAFETY: the program's own call.
    let r = unsafe { libc::epoll_create(size) };
    created(&[r]);
    r
}

/// # Safety
/// Same contract as `epoll_create1`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_epoll_create1(flags: c_int, _site: Site) -> c_int {
    // SAFETY: the program's own call.
    let r = unsafe { libc::epoll_create1(flags) };
    created(&[r]);
    r
}
