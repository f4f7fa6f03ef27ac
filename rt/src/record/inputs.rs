//! Recording what each read of a stream returned: the thread's `t<tid>.inputs` side file.
//!
//! Takes the outcome of a read the wrapper (`intercept::input`) found to be on a stream socket, a
//! pipe or a FIFO; gives one record of `ilgen_trace::inputs` appended to the calling thread's file,
//! created with its header on the thread's first such read. Each record is written before the read
//! returns to the program, by path (open, write, close): the runtime holds no descriptor the
//! program could close or reuse between two reads, and a process killed at any moment leaves every
//! outcome it returned on disk. A file that cannot be written stops this thread's records (one
//! message): what is on disk is still a correct prefix, and replay leaves the reads after it to
//! the real descriptor.

use std::cell::Cell;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

use ilgen_trace::inputs::{encode, encode_header, inputs_file_name, Input, InputsHeader};

use crate::runtime::{self, say};
use crate::thread;

#[derive(Clone, Copy, PartialEq, Eq)]
enum File {
    None,
    Open,
    Broken,
}

thread_local! {
    static FILE: Cell<File> = const { Cell::new(File::None) };
}

/// Appends `input` to the calling thread's inputs file (recording threads only).
pub(crate) fn record(input: Input) {
    let (Some(rt), Some(st)) = (runtime::recording(), thread::current()) else {
        return;
    };
    let state = FILE.with(|f| f.get());
    if state == File::Broken {
        return;
    }
    let Some(inner) = st.enter() else {
        return;
    };
    let header = InputsHeader {
        tid: inner.tid,
        parent: inner.parent,
        child_index: inner.child_index,
    };
    drop(inner);
    let path = rt.dir.join(inputs_file_name(header.tid));
    let Ok(c_path) = CString::new(path.as_os_str().as_bytes()) else {
        return;
    };
    let mut bytes = Vec::with_capacity(40);
    let flags = if state == File::None {
        bytes.extend(encode_header(&header));
        libc::O_CREAT | libc::O_EXCL
    } else {
        libc::O_APPEND
    };
    bytes.extend(encode(&input));
    // SAFETY: open, write and close of the runtime's own file, by a path it owns.
    let ok = unsafe {
        let fd = libc::open(
            c_path.as_ptr(),
            libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | flags,
            0o600,
        );
        let ok =
            fd >= 0 && libc::write(fd, bytes.as_ptr().cast(), bytes.len()) == bytes.len() as isize;
        if fd >= 0 {
            libc::close(fd);
        }
        ok
    };
    if ok {
        FILE.with(|f| f.set(File::Open));
    } else {
        FILE.with(|f| f.set(File::Broken));
        say(&format!(
            "ilgen: failed to write {}: {}; replay leaves this thread's later reads to the peer",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
}
