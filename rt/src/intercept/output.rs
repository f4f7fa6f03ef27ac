//! Writes to a descriptor (`abi::OUTPUT_CALLS`): `write`, `send`, `sendto`.
//!
//! Takes the program's call; gives its result. A write of bytes to a pipe, a FIFO or a stream
//! socket (`channel::of`) is a sync operation, `SyncOp::ChannelWrite`: it releases as many units
//! into the stream's channel as it asked to write, and a read that got bytes from the channel
//! (`input`) takes as many. The kernel hands the bytes over in that order, and a program may rely
//! on it as on a lock (libuv guards its signal handlers' tree with a pipe holding one byte: a read
//! takes the lock, a write gives it back); the analysis orders a read after the writes whose
//! bytes it got, as a `sem_wait` after the posts, and the replay gates the write as a step and
//! releases the channel's clock before the real call. Numbered before the real call, so before
//! the read that gets the bytes; retracted if the call wrote nothing. A short write (a
//! non-blocking descriptor, a signal) still counts what it asked for: the analysis then allows a
//! read earlier than the kernel would, never later, which can cost a replay, never a race.
//! Any other descriptor, an empty write and every call when the runtime is off: the real call
//! alone. `writev`, `sendmsg` and writes made inside libc (`fwrite`, `printf`) are not seen.

use std::ffi::{c_int, c_void};

use ilgen_trace::SyncOp;

use super::channel;
use super::sem::keeping_errno;
use crate::{record, runtime};

type Site = *const c_void;

/// The write of `count` bytes to `fd` that `real` makes, recorded or gated when `fd` is a stream.
fn output(fd: c_int, count: usize, site: Site, real: impl FnOnce() -> isize) -> isize {
    let mut channel = None;
    if count > 0 && (runtime::recording().is_some() || runtime::replaying()) {
        keeping_errno(|| channel = channel::of(fd));
    }
    let Some(channel) = channel else {
        return real();
    };
    let op = SyncOp::ChannelWrite {
        channel,
        bytes: u32::try_from(count).unwrap_or(u32::MAX),
    };
    record::sync::release_if(site, op, real, |&r| r > 0)
}

/// # Safety
/// Same contract as `write`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_write(
    fd: c_int,
    buf: *const c_void,
    count: usize,
    site: Site,
) -> isize {
    // SAFETY: the program's own call.
    output(fd, count, site, || unsafe { libc::write(fd, buf, count) })
}

/// # Safety
/// Same contract as `send`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_send(
    fd: c_int,
    buf: *const c_void,
    len: usize,
    flags: c_int,
    site: Site,
) -> isize {
    // SAFETY: the program's own call.
    output(fd, len, site, || unsafe { libc::send(fd, buf, len, flags) })
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
    site: Site,
) -> isize {
    // SAFETY: the program's own call.
    output(fd, len, site, || unsafe {
        libc::sendto(fd, buf, len, flags, addr, addr_len)
    })
}
