//! Reads of a descriptor (`abi::INPUT_CALLS`): `read`, `recv`, `recvfrom`.
//!
//! Takes the program's call; gives its result. On a stream socket, a pipe or a FIFO (the inputs
//! that a new run of the peer delivers differently; a regular file reads the same in replay, a
//! datagram socket is not a stream a read can be completed from) a recording thread records the
//! outcome (`record::inputs`) and a replaying thread gets the recorded one (`replay::inputs`).
//! Any other descriptor, a `recv` with `MSG_PEEK` (which consumes nothing), and every call when the
//! runtime is off: the real call alone. Both modes classify a call alike, so a thread's n-th
//! counted read in the replay is its n-th in the recording.

use std::ffi::{c_int, c_void};

use ilgen_trace::inputs::Input;

use crate::{record, replay, runtime};

type Site = *const c_void;

/// Whether reads of `fd` count: a FIFO (pipes are FIFOs) or a stream socket.
fn stream(fd: c_int) -> bool {
    // SAFETY: fstat and getsockopt into local buffers.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return false;
        }
        match st.st_mode & libc::S_IFMT {
            libc::S_IFIFO => true,
            libc::S_IFSOCK => {
                let mut ty: c_int = 0;
                let mut len = std::mem::size_of::<c_int>() as libc::socklen_t;
                libc::getsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    libc::SO_TYPE,
                    (&mut ty as *mut c_int).cast(),
                    &mut len,
                ) == 0
                    && ty == libc::SOCK_STREAM
            }
            _ => false,
        }
    }
}

/// One read of at most `len` bytes on `fd`; `real(offset, n)` makes the real call for `n` bytes
/// into the buffer at `offset`.
fn input(fd: c_int, len: usize, peek: bool, mut real: impl FnMut(usize, usize) -> isize) -> isize {
    if peek {
        return real(0, len);
    }
    if runtime::replaying() {
        if let Some(r) = replay::inputs::serve(fd, len, || stream(fd), &mut real) {
            return r;
        }
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
