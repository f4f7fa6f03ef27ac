//! `ilgen-confirm`: replay each candidate's schedule and say what the replay proved.
//!
//! Takes a trace directory on which the analysis wrote `schedule-<n>.json` files, and the run's
//! [`Meta`]; gives, per candidate, a [`run::ReplayRun`] (the program run with
//! `ILGEN_OPTIONS=mode=replay:schedule=...:outcome_dir=<trace>/replay-<n>`, bounded in time) and
//! its [`verdict::Verdict`] (confirmed race or deadlock, no error, infeasible, failed).
//! [`replay_all`] replays candidates `1..=n` of one or several traces on all cores. Turning
//! verdicts into a report is `ilgen-report`'s.

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

/// The candidates of one recorded run to replay: `1..=count`, schedules in the absolute `dir`.
pub struct Candidates<'a> {
    pub meta: &'a Meta,
    pub dir: &'a Path,
    pub count: usize,
}

/// Replays the candidates of every run in one pool, at most one replay per core at a time (runs
/// detected together share the cores rather than each taking all of them); gives each run's
/// replays in candidate order, or the first error in run and candidate order.
pub fn replay_all(
    runs: &[Candidates],
    timeout: Duration,
) -> Result<Vec<Vec<ReplayRun>>, ConfirmError> {
    let reqs: Vec<(&Meta, Request)> = runs
        .iter()
        .flat_map(|c| requests(c.dir, c.count).into_iter().map(|r| (c.meta, r)))
        .collect();
    let mut done = run::run_all(&reqs, timeout).into_iter();
    runs.iter()
        .map(|c| done.by_ref().take(c.count).collect())
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
