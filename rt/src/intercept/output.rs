//! Writes to a descriptor (`abi::OUTPUT_CALLS`): `write`, `send`, `sendto`.
//!
//! Takes the program's call; gives its result. In replay mode a write to a pipe, a FIFO or a
//! stream socket first releases into the stream's channel (`channel::of`), which a read that gets
//! bytes from it acquires (`input`): the kernel hands the bytes over in that order, and a program
//! may rely on it as on a lock (libuv guards its signal handlers' tree with a pipe holding one
//! byte: a read takes the lock, a write gives it back). Without the order the replay detector
//! confirmed races between two such critical sections. Coarser than the bytes: a read acquires
//! every write before it, not only the one whose bytes it got, which can hide a race, never invent
//! one (ThreadSanitizer orders descriptors alike). Recording records nothing: the prediction does
//! not know the order, so a candidate against it is replayed and found without error. `writev`,
//! `sendmsg` and writes made inside libc (`fwrite`, `printf`) are not seen.

use std::ffi::{c_int, c_void};

use super::channel;
use super::sem::keeping_errno;
use crate::{replay, runtime};

type Site = *const c_void;

/// Before the real write to `fd`: in replay mode, its release.
fn writing(fd: c_int) {
    if runtime::replaying() {
        keeping_errno(|| {
            if let Some(c) = channel::of(fd) {
                replay::sync::channel_writing(c);
            }
        });
    }
}

/// # Safety
/// Same contract as `write`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_write(
    fd: c_int,
    buf: *const c_void,
    count: usize,
    _site: Site,
) -> isize {
    writing(fd);
    // SAFETY: the program's own call.
    unsafe { libc::write(fd, buf, count) }
}

/// # Safety
/// Same contract as `send`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_send(
    fd: c_int,
    buf: *const c_void,
    len: usize,
    flags: c_int,
    _site: Site,
) -> isize {
    writing(fd);
    // SAFETY: the program's own call.
    unsafe { libc::send(fd, buf, len, flags) }
}

/// # Safety
/// Same contract as `sendto`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_sendto(
    fd: c_int,
    buf: *const c_void,
    len: usize,
    flags: c_int,
    addr: *const libc::sockaddr,
    addr_len: libc::socklen_t,
    _site: Site,
) -> isize {
    writing(fd);
    // SAFETY: the program's own call.
    unsafe { libc::sendto(fd, buf, len, flags, addr, addr_len) }
}
