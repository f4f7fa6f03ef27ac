//! `ilgen-analysis`: from one recorded run to candidate schedules of data races and deadlocks.
//!
//! Takes the threads of a trace ([`ilgen_trace::TraceDir`]) and [`Options`]; gives [`Candidate`]s
//! with per-stage [`Stats`] ([`analyze`](fn@analyze)), written as `candidates.json` and one
//! replayable `schedule-<n>.json` each ([`candidates`]). The stages, one module each, in the order
//! data flows: [`screen`] (whether the run needs a model at all) → [`prepare`] (trace → shared
//! objects ([`objects`]) and the [`model`] of those happens-before (through C/C++ atomics too,
//! [`atomics`]) does not order wholly ([`ordered`])) → [`filter`] (weakened
//! happens-before and locksets) → [`solve`] (per surviving variable: cut-based fast path, else
//! exhaustive search over [`window`]s; deadlocks on the sync-only model) or [`csp`] (the same model
//! as CSP_M, decided by a CSP checker) → [`finding`] → [`candidates`]. Every solver moves through
//! the model by the sync semantics of [`semantics`] (the native one through [`state`]). Apart from
//! predictions, [`observed`] finds the deadlock the recorded run itself ended in. Nothing here runs
//! the program: replay is `ilgen-confirm`'s. A [`shard`] of the analysis solves a deterministic
//! part of its units of work ([`analyze_shard`](fn@analyze_shard)), for many machines.

pub mod analyze;
pub mod atomicity;
pub mod atomics;
pub mod busy;
pub mod candidates;
pub mod csp;
pub mod error;
pub mod filter;
pub mod finding;
pub mod lifetime;
pub mod model;
pub mod objects;
pub mod observed;
pub mod options;
pub mod ordered;
pub mod prepare;
pub mod progress;
pub mod reads_from;
pub mod screen;
pub mod semantics;
pub mod shard;
pub mod solve;
pub mod state;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
#[cfg(test)]
mod tests;
pub mod window;

pub use analyze::{analyze, analyze_shard, analyze_with};
pub use candidates::{Candidate, CandidatesFile, Stats};
pub use error::AnalysisError;
pub use options::{Backend, Checker, Options, Transactions};
