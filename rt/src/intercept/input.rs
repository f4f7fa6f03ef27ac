//! Reads of a descriptor (`abi::INPUT_CALLS`): `read`, `recv`, `recvfrom`.
//!
//! Takes the program's call; gives its result. On a stream socket, a pipe or a FIFO (the inputs
//! that a new run of the peer delivers differently; a regular file reads the same in replay, a
//! datagram socket is not a stream a read can be completed from) a recording thread records the
//! outcome (`record::inputs`) and a replaying thread gets the recorded one (`replay::inputs`).
//! A read that got bytes is also a sync operation, `SyncOp::ChannelRead`, recorded after the real
//! call: it took that many units from the stream's channel, which the writes gave (`output`), so
//! the analysis orders it after writes of at least as many bytes. The replay knows from the
//! recorded outcome, before the real call, that the read is a step: it takes its turn first, and
//! acquires the channel's clock once the bytes are in.
//! Any other descriptor, a `recv` with `MSG_PEEK` (which consumes nothing: no outcome, no step),
//! and every call when the runtime is off: the real call alone, except that a replayed peek that
//! got bytes still acquires the channel. Both modes classify a call alike, so a thread's n-th
//! counted read in the replay is its n-th in the recording.

use std::ffi::{c_int, c_void};

use ilgen_trace::inputs::Input;
use ilgen_trace::{OpKind, SyncOp};

use super::channel;
use super::sem::keeping_errno;
use crate::{record, replay, runtime};

type Site = *const c_void;

/// Whether reads of `fd` count: a FIFO (pipes are FIFOs) or a stream socket, as the recording
/// decided it (`channel::of`, whose kept verdicts the replay must share).
fn stream(fd: c_int) -> bool {
    channel::of(fd).is_some()
}

/// The read of `bytes` bytes from `channel`, as a sync operation.
fn got(channel: u64, bytes: isize) -> SyncOp {
    SyncOp::ChannelRead {
        channel,
        bytes: u32::try_from(bytes).unwrap_or(u32::MAX),
    }
}

/// Whether `bytes` bytes can be read from `fd` without waiting.
fn ready(fd: c_int, bytes: u32) -> bool {
    let mut n: c_int = 0;
    // SAFETY: FIONREAD into a local int; pipes and stream sockets answer it.
    let asked = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) } == 0;
    asked && u32::try_from(n).is_ok_and(|n| n >= bytes)
}

/// One read of at most `len` bytes on `fd` at `site`; `real(offset, n)` makes the real call for
/// `n` bytes into the buffer at `offset`.
fn input(
    fd: c_int,
    len: usize,
    peek: bool,
    site: Site,
    mut real: impl FnMut(usize, usize) -> isize,
) -> isize {
    if runtime::replaying() {
        // A read the recording got bytes with: a step, its turn before the real call. Without a
        // recorded outcome (its inputs file lost), the schedule says whether it is one.
        let mut step = None;
        if !peek {
            keeping_errno(|| {
                let bytes = match replay::inputs::upcoming_result() {
                    Some(r) => isize::try_from(r).ok().filter(|&r| r > 0),
                    None => replay::sync::next_step_is(OpKind::ChannelRead).then_some(1),
                };
                step = bytes.and_then(|bytes| {
                    let c = channel::of(fd)?;
                    let op = got(c, bytes);
                    let ready = ready(fd, u32::try_from(bytes).unwrap_or(u32::MAX));
                    Some((replay::sync::channel_reading(site, op, ready)?, op))
                });
            });
        }
        let served = if peek {
            None
        } else {
            replay::inputs::serve(fd, len, || stream(fd), &mut real)
        };
        let r = served.unwrap_or_else(|| real(0, len));
        keeping_errno(|| match step {
            Some((tok, op)) => replay::sync::channel_got(tok, op),
            // Bytes a write put in the stream: that write happened before (`output`).
            None if r > 0 => {
                if let Some(c) = channel::of(fd) {
                    replay::sync::channel_peeked(c);
                }
            }
            None => {}
        });
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
        keeping_errno(|| {
            if let Some(c) = channel::of(fd) {
                record::inputs::record(Input {
                    result: r.max(-1) as i64,
                    errno,
                    fd,
                });
                if r > 0 {
                    record::sync::now(site, got(c, r));
                }
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
    site: Site,
) -> isize {
    input(fd, count, false, site, |at, n| {
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
    site: Site,
) -> isize {
    input(fd, len, flags & libc::MSG_PEEK != 0, site, |at, n| {
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
    site: Site,
) -> isize {
    input(fd, len, flags & libc::MSG_PEEK != 0, site, |at, n| {
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
