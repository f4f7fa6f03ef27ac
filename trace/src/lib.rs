//! `ilgen-trace`: the one event vocabulary and the on-disk formats of ilgen.
//!
//! Takes nothing at run time; gives the types and encoders that the runtime (`ilgen-rt`, writer),
//! the pass (`ilgen-pass`, site tables and hook names) and the analyzer (`ilgen`, reader) share:
//! - [`event`]: what a thread did ([`Event`]: a memory access, a sync operation or a heap event);
//! - [`kind`]: the kind of a sync operation ([`OpKind`]), as every later stage names it;
//! - [`codec`]: the compact records of thread files, written by the runtime and read back;
//! - [`format`]: thread files and the trace directory, versioned; a thread's events held as
//!   their records ([`format::Events`]), decoded on every walk;
//! - [`validate`]: the checks that a trace directory's files make one run;
//! - `read`: [`TraceDir::open`], which decodes a trace directory (`format`) and checks it (`validate`);
//! - [`meta`]: the run's metadata file;
//! - [`inputs`]: what each read of a socket, pipe or FIFO returned, per thread (a side file);
//! - [`pending`]: a thread's current segment, which survives the process being killed;
//! - [`schedule`]: the order of sync operations a replay enforces;
//! - [`replay`]: what a replay of a schedule found (`replay-outcome.json`) and its exit statuses;
//! - [`sites`]: the site table embedded in instrumented binaries;
//! - [`abi`]: names of the runtime's hooks and of the calls the pass rewrites;
//! - [`memory`]: the `ilgen` command's allocator, which exits with a message when memory runs out.

pub mod abi;
pub mod codec;
mod error;
pub mod event;
mod events;
mod file;
pub mod format;
pub mod inputs;
mod json;
pub mod kind;
pub mod memory;
pub mod meta;
pub mod pending;
mod read;
pub mod replay;
pub mod schedule;
pub mod sites;
pub mod validate;

pub use event::{
    known_site, known_thread, site_text, Access, AccessKind, Atomic, AtomicOp, Event, Heap, HeapOp,
    SiteId, Sync, SyncOp, ThreadId, NO_SITE, NO_THREAD, PENDING,
};
pub use format::{TraceDir, TraceError, FORMAT_VERSION};
pub use kind::OpKind;
pub use meta::{Meta, RunEnd};
pub use read::thread_file_tid;
