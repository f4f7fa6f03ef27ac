//! `ilgen` as a library: the commands the `ilgen` binary runs, over the pipeline's crates.
//!
//! Takes parsed command-line arguments; gives each command's output and an exit code of [`exit`].
//! The work is done by the library crates, in the order data flows: `ilgen-trace` (reading the
//! trace) → `ilgen-analysis` (candidate schedules) → `ilgen-confirm` (replaying them) →
//! `ilgen-report` (the confirmed findings as text, JSON, SARIF); `ilgen-binary` names sites and
//! objects for all of them. This crate only strings them together and maps their errors to exit
//! codes ([`error`]).

pub mod cc;
pub mod debugger;
pub mod detect;
pub mod dump;
pub mod error;
pub mod exit;
pub mod export_csp;
pub mod merge;
pub mod output;
pub mod replay;
pub mod run;
