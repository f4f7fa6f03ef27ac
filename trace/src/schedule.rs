//! The schedule file: the order of sync operations a replay enforces.
//!
//! Takes a candidate found by `ilgen detect` (CLI side, writer) or the path in the runtime's
//! `schedule` option (runtime side, reader); gives a [`Schedule`]: which thread performs its n-th
//! sync operation at each step. Threads are named by their recorded tid, and [`ScheduleThread`]
//! gives the identity that is stable across runs (parent, nth child), so the replaying runtime
//! can map the threads it sees created onto recorded tids. A step names a thread's n-th `Sync`
//! event of its trace file (0-based, every `Sync` record counts: start, markers, both halves of a
//! condition wait), never an address: heap addresses move between runs.
//!
//! The schedule covers only a prefix of the run (up to the racing or deadlocked state). A thread
//! that reaches a sync operation not in the schedule while the schedule is not finished waits
//! until it is; after the last step every thread runs free.
//!
//! JSON, versioned (bump [`SCHEDULE_VERSION`] on any change; `tests/golden.rs` pins the text):
//! - 1: first format.
//! - 2: a thread's `parent` and a step's `site` are `null` when absent (were u32::MAX); `op` is
//!   one of the names of [`crate::OpKind`] (the same spelling as before, now checked on reading).
//! - 3: `build_id` (the recorded executable's ELF build id) replaces `binary_hash`; `watch`,
//!   the accesses the replay of an atomicity candidate looks for (absent: none).
//! - 4: a step's `timed_out`: the recorded outcome of a timed operation (the wake of a timed
//!   condition wait, a timed lock, a timed semaphore wait), which the replay enforces: a slower
//!   replay must not let the real clock run out where the recording was woken, or the reverse.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::TraceError;
use crate::event::{SiteId, ThreadId};
use crate::json::read_versioned;
use crate::kind::OpKind;

pub const SCHEDULE_VERSION: u32 = 4;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub format_version: u32,
    /// `Meta::build_id` of the recorded run: a schedule is refused by any other binary.
    pub build_id: String,
    /// Every thread the steps name, with its stable identity.
    pub threads: Vec<ScheduleThread>,
    pub steps: Vec<Step>,
    /// Accesses whose order the replay reports ([`crate::replay::Outcome::watched`]): e1, f
    /// and e2 of an atomicity candidate; empty (absent) for races and deadlocks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub watch: Vec<Watch>,
}

/// An access the replay watches for: thread `tid` runs site `site` having done exactly `after`
/// of its sync operations, so the run of that line in the segment the candidate names, not an
/// earlier or later one.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watch {
    pub tid: ThreadId,
    pub site: SiteId,
    pub after: u32,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduleThread {
    pub tid: ThreadId,
    /// `None` for the main thread and threads created by uninstrumented code.
    pub parent: Option<ThreadId>,
    pub child_index: u32,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub tid: ThreadId,
    /// The thread's n-th sync operation (0-based count of its `Sync` records).
    pub index: u32,
    /// The operation expected there: another kind is a divergence.
    pub op: OpKind,
    /// Where it was recorded, for messages; `None` for an operation no instrumented instruction
    /// made (thread start and end).
    pub site: Option<SiteId>,
    /// For a timed operation, whether it timed out in the recording (a wake not signalled, a
    /// lock or semaphore not acquired); absent for every other operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
}

impl Schedule {
    pub fn read(path: &Path) -> Result<Schedule, TraceError> {
        read_versioned(path, "an ilgen schedule", SCHEDULE_VERSION)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("schedule serializes")
    }
}
