//! `ilgen-confirm`: replay each candidate's schedule and say what the replay proved.
//!
//! Takes a trace directory on which the analysis wrote `schedule-<n>.json` files, and the run's
//! [`Meta`]; gives, per candidate, a [`run::ReplayRun`] (the program run with
//! `ILGEN_OPTIONS=mode=replay:schedule=...:outcome_dir=<trace>/replay-<n>`, bounded in time) and
//! its [`verdict::Verdict`] (confirmed race or deadlock, no error, infeasible, failed).
//! [`replay_all`] replays candidates `1..=n` on all cores. Turning verdicts into a report is
//! `ilgen-report`'s.

pub mod error;
pub mod guard;
pub mod run;
pub mod verdict;

use std::path::Path;
use std::time::Duration;

use ilgen_analysis::candidates;
use ilgen_trace::Meta;

pub use error::ConfirmError;
use run::{ReplayRun, Request};

/// Default of `--replay-timeout`, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// Name of candidate `number`'s replay directory under the trace directory.
pub fn replay_dir_name(number: usize) -> String {
    format!("replay-{number}")
}

/// Replays candidates `1..=count` (schedules in the absolute directory `dir`) on all cores; gives
/// their runs in candidate order, or the first error in that order.
pub fn replay_all(
    meta: &Meta,
    dir: &Path,
    count: usize,
    timeout: Duration,
) -> Result<Vec<ReplayRun>, ConfirmError> {
    run::run_all(meta, &requests(dir, count), timeout)
        .into_iter()
        .collect()
}

/// The replays of candidates `1..=count`: schedule and outcome directory of each.
pub fn requests(dir: &Path, count: usize) -> Vec<Request> {
    (1..=count)
        .map(|n| Request {
            schedule: dir.join(candidates::schedule_file_name(n)),
            out_dir: dir.join(replay_dir_name(n)),
        })
        .collect()
}

/// Removes the replay directories an earlier `ilgen detect` left.
pub fn remove_old_replays(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let numbered = name
            .to_string_lossy()
            .strip_prefix("replay-")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if numbered {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
