//! Record mode: the segment cache, the mmap'd thread files, `meta.json`, how a sync operation is
//! written (and handed to replay mode's gate when the process replays), the end of the process,
//! the outcomes of reads of streams (`inputs`), and the schedule perturbation of `chaos=SEED`.
//!
//! Takes the intercepted operations of a recording thread; gives the trace directory
//! (`ilgen_trace::format`). Mirrors `replay`, as rr mirrors its recorder and replayer.

pub(crate) mod altstack;
pub(crate) mod cache;
pub(crate) mod chaos;
pub(crate) mod finish;
pub(crate) mod inputs;
pub(crate) mod meta;
pub(crate) mod pending;
pub(crate) mod stripes;
pub(crate) mod sync;
pub(crate) mod writer;
