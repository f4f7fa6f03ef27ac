//! Findings: what a solver (native or CSP_M) gives for one model.
//!
//! Takes nothing; gives [`Finding`] (a race between two access events, or a set of blocked
//! threads) with the [`Schedule`] of sync events that reaches it, as positions ([`At`]) in the
//! model the solver worked on. [`crate::candidates`] turns them into candidates with trace
//! positions.

use crate::model::At;

/// The sync events to run, in order, from the start of the run: for each thread a prefix of its
/// sync events. The first `prefix` steps are the observed order before the window the finding was
/// searched in (none for the cut path, which works on the whole trace).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub prefix: usize,
    pub steps: Vec<At>,
}

/// A state the model reaches (events are those of the model the finding came with).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// Two threads' next events are these conflicting accesses.
    Race {
        first: At,
        second: At,
        schedule: Schedule,
    },
    /// These threads wait in these operations and no thread can move.
    Deadlock {
        blocked: Vec<At>,
        schedule: Schedule,
    },
}
