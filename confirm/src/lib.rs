//! `ilgen-confirm`: replay each candidate's schedule and say what the replay proved.
//!
//! Takes a trace directory, the run's [`Meta`], thread headers and candidates; writes each
//! replayed candidate's `schedule-<n>.json` there and gives, per candidate, a [`run::ReplayRun`] (the program run with
//! `ILGEN_OPTIONS=mode=replay:schedule=...:outcome_dir=<trace>/replay-<n>`, bounded in time) and
//! its [`verdict::Verdict`] (confirmed race or deadlock, no error, infeasible, failed).
//! [`trust::check`] refuses a trace someone else could have written (it names the program a replay
//! runs). [`replay_all`] replays the candidates of one or several traces on all cores (or as many
//! at a time as `--replay-jobs` says): first every candidate that is no fallback, then, round by
//! round, the next fallback of each candidate that no replay confirmed yet (its own race, not
//! another one it ran into: [`verdict::confirms`]); a fallback whose candidate was confirmed
//! before its turn is not replayed. Turning verdicts into a report is `ilgen-report`'s.

pub mod error;
pub mod guard;
pub mod pace;
pub mod run;
pub mod trust;
pub mod verdict;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ilgen_analysis::candidates::{self, Candidate};
use ilgen_trace::format::ThreadHeader;
use ilgen_trace::Meta;

pub use error::ConfirmError;
use run::{Bounds, ReplayRun, Request};

/// Default of `--replay-timeout`, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// Name of candidate `number`'s replay directory under the trace directory.
pub fn replay_dir_name(number: usize) -> String {
    format!("replay-{number}")
}

/// The candidates of one recorded run to replay, their schedules to be written into the absolute
/// `dir` (threads named by the run's `headers`).
pub struct Candidates<'a> {
    pub meta: &'a Meta,
    pub headers: &'a [ThreadHeader],
    pub dir: PathBuf,
    pub candidates: &'a [Candidate],
}

/// Replays the candidates of every run in one pool, at the pace `bounds` give (runs detected
/// together share it rather than each taking as much), in rounds: round 0
/// replays every candidate that is no fallback, round r the r-th fallback of each candidate whose
/// replays so far all failed to confirm it. Gives each run's replays in candidate order (`None`:
/// a fallback not replayed, its candidate confirmed first), or the first error in run and
/// candidate order of its round. With `announce`, prints each replay's command line on stderr
/// before its round. Calls `done` after each candidate (replayed or not, for progress).
pub fn replay_all(
    runs: &[Candidates],
    bounds: &Bounds,
    announce: bool,
    done: &(dyn Fn() + Sync),
) -> Result<Vec<Vec<Option<ReplayRun>>>, ConfirmError> {
    let next: Vec<Vec<Option<usize>>> = runs.iter().map(|c| next_fallbacks(c.candidates)).collect();
    let mut replays: Vec<Vec<Option<ReplayRun>>> = runs
        .iter()
        .map(|c| (0..c.candidates.len()).map(|_| None).collect())
        .collect();
    // (run, candidate index) of the round, in run and candidate order: first, those that come
    // after no other.
    let mut round: Vec<(usize, usize)> = Vec::new();
    for (r, next) in next.iter().enumerate() {
        let mut after = vec![false; next.len()];
        for &j in next.iter().flatten() {
            after[j] = true;
        }
        round.extend((0..next.len()).filter(|&i| !after[i]).map(|i| (r, i)));
    }
    while !round.is_empty() {
        let reqs = round
            .iter()
            .map(|&(r, i)| {
                let c = &runs[r];
                let (candidate, id) = (&c.candidates[i], &c.meta.build_id);
                let schedule = schedule_file(&c.dir, i + 1, candidate, c.headers, id, false)?;
                let out_dir = c.dir.join(replay_dir_name(i + 1));
                Ok((c.meta, Request { schedule, out_dir }))
            })
            .collect::<Result<Vec<(&Meta, Request)>, ConfirmError>>()?;
        if announce {
            for (&(_, i), (meta, req)) in round.iter().zip(&reqs) {
                let command = run::command_line(meta, req, bounds.before.as_deref())?;
                eprintln!("ilgen: replaying candidate {}: {command}", i + 1);
            }
        }
        let finished = run::run_all(&reqs, bounds, done);
        let mut again = Vec::new();
        for (&(r, i), replay) in round.iter().zip(finished) {
            let replay = replay?;
            if !verdict::confirms(&runs[r].candidates[i], &replay) {
                again.extend(next[r][i].map(|j| (r, j)));
            }
            replays[r][i] = Some(replay);
        }
        round = again;
    }
    for _ in replays.iter().flatten().filter(|r| r.is_none()) {
        done();
    }
    Ok(replays)
}

/// Per candidate, the index of the fallback replayed after it if its replay does not confirm:
/// a candidate's first fallback, a fallback's next one. A fallback that names no earlier
/// candidate of its own is replayed with the candidates.
fn next_fallbacks(candidates: &[Candidate]) -> Vec<Option<usize>> {
    let mut next = vec![None; candidates.len()];
    // Per candidate (by index), the last of its chain so far.
    let mut last: HashMap<usize, usize> = HashMap::new();
    for (i, c) in candidates.iter().enumerate() {
        let of = c.fallback_of().and_then(|n| n.checked_sub(1));
        match of.and_then(|of| Some((of, *last.get(&of)?))) {
            Some((of, l)) => {
                next[l] = Some(i);
                last.insert(of, i);
            }
            None => {
                last.insert(i, i);
            }
        }
    }
    next
}

/// Writes candidate `number`'s (1-based) schedule into `dir` (unless `keep` and the file is
/// there) and gives its path.
pub fn schedule_file(
    dir: &Path,
    number: usize,
    candidate: &Candidate,
    headers: &[ThreadHeader],
    build_id: &str,
    keep: bool,
) -> Result<PathBuf, ConfirmError> {
    let path = dir.join(candidates::schedule_file_name(number));
    if !(keep && path.exists()) {
        candidates::write_replay_schedule(dir, number, candidate, headers, build_id).map_err(
            |source| ConfirmError::Create {
                path: path.clone(),
                source,
            },
        )?;
    }
    Ok(path)
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

#[cfg(test)]
mod tests {
    use ilgen_analysis::candidates::{AccessName, AccessSide, ObjectRange, ScheduleOut};

    use super::*;

    fn race(fallback_of: Option<usize>) -> Candidate {
        let side = |tid| AccessSide {
            tid,
            site: 1,
            access: AccessName::Write,
        };
        Candidate::Race {
            object: ObjectRange { addr: 0x10, len: 4 },
            accesses: [side(0), side(1)],
            schedule: ScheduleOut::whole(0, Vec::new()),
            fallback_of,
        }
    }

    #[test]
    fn each_candidate_chains_to_its_fallbacks_in_order_and_a_stray_one_stands_alone() {
        // 1 and 2 are candidates; 3 and 5 fall back for 1, 4 for 2; 6 names itself, 7 a
        // candidate that does not exist.
        let candidates = [
            race(None),
            race(None),
            race(Some(1)),
            race(Some(2)),
            race(Some(1)),
            race(Some(6)),
            race(Some(0)),
        ];
        assert_eq!(
            next_fallbacks(&candidates),
            [Some(2), Some(3), Some(4), None, None, None, None]
        );
    }
}
