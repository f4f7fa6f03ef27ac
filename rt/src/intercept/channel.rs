//! Streams as channels between threads: which pipe, FIFO or stream socket a descriptor is.
//!
//! Takes a descriptor; gives its stream's inode ([`stream_inode`]: both ends of a pipe share one)
//! and, in replay mode, the channel a write to it and a read from it meet in ([`of`]): the inode,
//! or for the two ends of a `socketpair` (two inodes) the first end's, recorded by [`pair`]. A TCP
//! connection between two threads of one process is two sockets no call here ties together: it
//! orders nothing.

use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::Mutex;

/// Inode of a `socketpair`'s second end → the first end's.
static PAIRED: Mutex<Option<HashMap<u64, u64>>> = Mutex::new(None);

/// The inode of `fd` if it is a FIFO (pipes are FIFOs) or a stream socket.
pub(crate) fn stream_inode(fd: c_int) -> Option<u64> {
    // SAFETY: fstat and getsockopt into local buffers.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return None;
        }
        let stream = match st.st_mode & libc::S_IFMT {
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
        };
        stream.then_some(st.st_ino)
    }
}

/// The channel of stream `fd`, `None` if it is no stream.
pub(crate) fn of(fd: c_int) -> Option<u64> {
    let ino = stream_inode(fd)?;
    let paired = PAIRED.lock().unwrap_or_else(|e| e.into_inner());
    Some(
        paired
            .as_ref()
            .and_then(|p| p.get(&ino))
            .copied()
            .unwrap_or(ino),
    )
}

/// `a` and `b` are the two ends of one `socketpair`: one channel.
pub(crate) fn pair(a: c_int, b: c_int) {
    if let (Some(a), Some(b)) = (stream_inode(a), stream_inode(b)) {
        PAIRED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert(b, a);
    }
}
