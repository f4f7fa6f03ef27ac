//! Streams as channels between threads: which pipe, FIFO or stream socket a descriptor is.
//!
//! Takes a descriptor; gives, when recording and replaying alike, the channel a write to it and a
//! read from it meet in ([`of`]): its stream's inode (both ends of a pipe share one), or for the
//! two ends of a `socketpair` (two inodes) the first end's, recorded by [`pair`] (the first 64
//! socketpairs of a run). A TCP connection between two threads of one process is two
//! sockets no call here ties together: it orders nothing.
//!
//! A descriptor found to be no stream is remembered as such ([`of`] asks the kernel once, not at
//! every write: an `fstat` per `write` tripled the cost of recording small writes) until the
//! runtime sees its number closed or created again ([`forget`], from `fd.rs`). A number closed
//! and reused as a stream where the runtime does not see it (inside libc or an uninstrumented
//! library) keeps its verdict: that stream orders nothing, in record and replay alike.

use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, Ordering};

/// Room for this many `socketpair`s; a later one's ends stay two channels (a write at one end
/// orders no read at the other).
const PAIRS: usize = 64;

/// Per slot, the inodes of a `socketpair`'s first end (0: the slot is free) and second end.
/// Lock-free: a signal handler writing to a socket (the self-pipe trick) looks here, and may have
/// interrupted its own thread in the middle of a lookup or an insertion.
static SECOND: [AtomicU64; PAIRS] = [const { AtomicU64::new(0) }; PAIRS];
static FIRST: [AtomicU64; PAIRS] = [const { AtomicU64::new(0) }; PAIRS];

/// Descriptor numbers below this keep a "no stream" verdict, a bit each.
const KEPT: usize = 4096;
static NO_STREAM: [AtomicU64; KEPT / 64] = [const { AtomicU64::new(0) }; KEPT / 64];
/// Counts [`forget`]s: a verdict taken while one ran is dropped.
static FORGOTTEN: AtomicU64 = AtomicU64::new(0);

/// The word and bit of `fd`'s verdict, if it has one.
fn verdict_bit(fd: c_int) -> Option<(&'static AtomicU64, u64)> {
    let fd = usize::try_from(fd).ok().filter(|&fd| fd < KEPT)?;
    Some((&NO_STREAM[fd / 64], 1 << (fd % 64)))
}

/// Number `fd` is being closed or was created: what [`of`] knew of it no longer holds.
pub(crate) fn forget(fd: c_int) {
    FORGOTTEN.fetch_add(1, Ordering::SeqCst);
    if let Some((word, bit)) = verdict_bit(fd) {
        word.fetch_and(!bit, Ordering::SeqCst);
    }
}

/// The inode of `fd` if it is a FIFO (pipes are FIFOs) or a stream socket.
fn stream_inode(fd: c_int) -> Option<u64> {
    inspect(fd).flatten()
}

/// As [`stream_inode`], `None` when `fd` is no open descriptor.
fn inspect(fd: c_int) -> Option<Option<u64>> {
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
        Some(stream.then_some(st.st_ino))
    }
}

/// The channel of stream `fd`, `None` if it is no stream.
pub(crate) fn of(fd: c_int) -> Option<u64> {
    let bit = verdict_bit(fd);
    if bit.is_some_and(|(word, bit)| word.load(Ordering::SeqCst) & bit != 0) {
        return None;
    }
    let before = FORGOTTEN.load(Ordering::SeqCst);
    let kind = inspect(fd);
    if let (Some(None), Some((word, bit))) = (kind, bit) {
        word.fetch_or(bit, Ordering::SeqCst);
        // A close or creation of any number since the look may have been this one's.
        if FORGOTTEN.load(Ordering::SeqCst) != before {
            word.fetch_and(!bit, Ordering::SeqCst);
        }
    }
    let ino = kind.flatten()?;
    let paired = (0..PAIRS)
        .find(|&i| SECOND[i].load(Ordering::Acquire) == ino)
        .map(|i| FIRST[i].load(Ordering::Acquire))
        .filter(|&first| first != 0);
    Some(paired.unwrap_or(ino))
}

/// `a` and `b` are the two ends of one `socketpair`: one channel.
pub(crate) fn pair(a: c_int, b: c_int) {
    let (Some(a), Some(b)) = (stream_inode(a), stream_inode(b)) else {
        return;
    };
    // The first end's inode goes in before the slot is claimed, so a lookup that finds the
    // second end's never reads a half-made pair as another one's.
    for i in 0..PAIRS {
        if FIRST[i]
            .compare_exchange(0, a, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            SECOND[i].store(b, Ordering::Release);
            return;
        }
    }
}
