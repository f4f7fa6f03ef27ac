//! What the pass's calls land on, in both modes: the access hooks, wait-loop and atomic-block
//! markers, the libc memory and string wrappers, the heap events of the replaced malloc family and
//! of mappings, the pthread wrappers, one family per file, the process exits, the
//! file descriptors' close and creation, and the reads of and writes to streams (which pipe or
//! socket a descriptor is: `channel`).
//!
//! Takes the program's calls (`ilgen_trace::abi`); gives each one to `record` or `replay` by mode
//! (`thread::current` is `None` when the process replays), after running the real call.

pub(crate) mod atomic;
pub(crate) mod barrier;
pub(crate) mod channel;
pub(crate) mod cond;
pub(crate) mod destroy;
pub(crate) mod exit;
pub(crate) mod fd;
pub(crate) mod heap;
pub(crate) mod input;
pub(crate) mod interpose;
pub(crate) mod mapping;
pub(crate) mod memory;
pub(crate) mod mutex;
pub(crate) mod once;
pub(crate) mod output;
pub(crate) mod rwlock;
pub(crate) mod sem;
pub(crate) mod spin;
pub(crate) mod strings;
pub(crate) mod testonly;
pub(crate) mod threads;
