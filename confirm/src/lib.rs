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
/// replays in candidate order, or the first error in run and candidate order. Calls `done` after
/// each replay (for progress).
pub fn replay_all(
    runs: &[Candidates],
    timeout: Duration,
    done: &(dyn Fn() + Sync),
) -> Result<Vec<Vec<ReplayRun>>, ConfirmError> {
    let reqs: Vec<(&Meta, Request)> = runs
        .iter()
        .flat_map(|c| requests(c.dir, c.count).into_iter().map(|r| (c.meta, r)))
        .collect();
    let mut finished = run::run_all(&reqs, timeout, done).into_iter();
    runs.iter()
        .map(|c| finished.by_ref().take(c.count).collect())
        .collect()
}

/// Prints on stderr the command line of each replay [`replay_all`] will run: it names the
/// schedule, so its trace directory too.
pub fn announce(runs: &[Candidates]) -> Result<(), ConfirmError> {
    for c in runs {
        for (n, req) in requests(c.dir, c.count).iter().enumerate() {
            let command = run::command_line(c.meta, req)?;
            eprintln!("ilgen: replaying candidate {}: {command}", n + 1);
        }
    }
    Ok(())
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

/// Removes the schedule files and replay directories an earlier `ilgen detect` left in `dir`, so
/// that none outlives its candidate. What cannot be removed is overwritten or left; neither loses
/// a finding.
pub fn remove_old_outputs(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let numbered =
        |n: Option<&str>| n.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if numbered(name.strip_prefix("replay-")) {
            let _ = std::fs::remove_dir_all(entry.path());
        } else if numbered(
            name.strip_prefix("schedule-")
                .and_then(|n| n.strip_suffix(".json")),
        ) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
