//! Reads of a descriptor (`abi::INPUT_CALLS`): `read`, `recv`, `recvfrom`.
//!
//! Takes the program's call; gives its result. On a stream socket, a pipe or a FIFO (the inputs
//! that a new run of the peer delivers differently; a regular file reads the same in replay, a
//! datagram socket is not a stream a read can be completed from) a recording thread records the
//! outcome (`record::inputs`) and a replaying thread gets the recorded one (`replay::inputs`).
//! Any other descriptor, a `recv` with `MSG_PEEK` (which consumes nothing), and every call when the
//! runtime is off: the real call alone. Both modes classify a call alike, so a thread's n-th
//! counted read in the replay is its n-th in the recording. A replayed read that got bytes from a
//! stream (a peek too) acquires its channel, which the writes to it released (`output`).

use std::ffi::{c_int, c_void};

use ilgen_trace::inputs::Input;

use super::channel;
use crate::{record, replay, runtime};

type Site = *const c_void;

/// Whether reads of `fd` count: a FIFO (pipes are FIFOs) or a stream socket.
fn stream(fd: c_int) -> bool {
    channel::stream_inode(fd).is_some()
}

/// One read of at most `len` bytes on `fd`; `real(offset, n)` makes the real call for `n` bytes
/// into the buffer at `offset`.
fn input(fd: c_int, len: usize, peek: bool, mut real: impl FnMut(usize, usize) -> isize) -> isize {
    if runtime::replaying() {
        let served = if peek {
            None
        } else {
            replay::inputs::serve(fd, len, || stream(fd), &mut real)
        };
        let r = served.unwrap_or_else(|| real(0, len));
        if r > 0 {
            // Bytes a write put in the stream: that write happened before (`output`).
            super::sem::keeping_errno(|| {
                if let Some(c) = channel::of(fd) {
                    replay::sync::channel_read(c);
                }
            });
        }
        return r;
    }
    if peek {
        return real(0, len);
    }
    let r = real(0, len);
    if runtime::recording().is_some() {
        // SAFETY: reading this thread's errno, which the real call set.
        let errno = if r < 0 {
            unsafe { *libc::__errno_location() }
        } else {
            0
        };
        super::sem::keeping_errno(|| {
            if stream(fd) {
                record::inputs::record(Input {
                    result: r.max(-1) as i64,
                    errno,
                    fd,
                });
            }
        });
    }
    r
}

/// # Safety
/// Same contract as `read`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_read(
    fd: c_int,
    buf: *mut c_void,
    count: usize,
    _site: Site,
) -> isize {
    input(fd, count, false, |at, n| {
        // SAFETY: the program's own call, on the part of its buffer not filled yet.
        unsafe { libc::read(fd, buf.cast::<u8>().add(at).cast(), n) }
    })
}

/// # Safety
/// Same contract as `recv`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_recv(
    fd: c_int,
    buf: *mut c_void,
    len: usize,
    flags: c_int,
    _site: Site,
) -> isize {
    input(fd, len, flags & libc::MSG_PEEK != 0, |at, n| {
        // SAFETY: as in `read`.
        unsafe { libc::recv(fd, buf.cast::<u8>().add(at).cast(), n, flags) }
    })
}

/// # Safety
/// Same contract as `recvfrom`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_recvfrom(
    fd: c_int,
    buf: *mut c_void,
    len: usize,
    flags: c_int,
    addr: *mut libc::sockaddr,
    addr_len: *mut libc::socklen_t,
    _site: Site,
) -> isize {
    input(fd, len, flags & libc::MSG_PEEK != 0, |at, n| {
        // SAFETY: as in `read`.
        unsafe {
            libc::recvfrom(
                fd,
                buf.cast::<u8>().add(at).cast(),
                n,
                flags,
                addr,
                addr_len,
            )
        }
    })
}
