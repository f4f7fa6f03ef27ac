//! `ilgen` as a library: the offline pipeline the `ilgen` binary drives.
//!
//! Takes trace directories and instrumented binaries; gives dumps, reports and exit codes.

pub mod binary;
pub mod cc;
pub mod csp;
pub mod detect;
pub mod dump;
pub mod error;
pub mod exit;
pub mod replay;
pub mod report;
pub mod run;
