//! Replay mode: the schedule and its gate, each thread's identity and clocks, the happens-before
//! detector (vector clocks, shadow memory), shadow call stacks, deadlock watch and the reports,
//! and the recorded outcomes of reads of streams.
//!
//! Takes the intercepted operations of a replaying process and the schedule named by
//! `ILGEN_OPTIONS`; gives `replay-outcome.json` (`ilgen_trace::replay`). Mirrors `record`.

pub(crate) mod blocks;
pub(crate) mod cover;
pub(crate) mod deadlock;
pub(crate) mod debug;
pub(crate) mod depot;
pub(crate) mod gate;
pub(crate) mod hb;
pub(crate) mod inputs;
pub(crate) mod native;
pub(crate) mod owners;
pub(crate) mod report;
pub(crate) mod shadow;
pub(crate) mod stack;
pub(crate) mod sync;
pub(crate) mod thread;
