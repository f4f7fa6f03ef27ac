//! `ilgen-confirm`: replay each candidate's schedule and say what the replay proved.
//!
//! Takes a trace directory, the run's [`Meta`], thread headers and candidates; writes each
//! replayed candidate's `schedule-<n>.json` there and gives, per candidate, a [`run::ReplayRun`] (the program run with
//! `ILGEN_OPTIONS=mode=replay:schedule=...:outcome_dir=<trace>/replay-<n>`, bounded in time) and
//! its [`verdict::Verdict`] (confirmed race or deadlock, no error, infeasible, failed).
//! [`trust::check`] refuses a trace someone else could have written (it names the program a replay
//! runs). [`replay_all`] replays the candidates of one or several traces on all cores (or as many
//! at a time as `--replay-jobs` says), the race candidates at one pair of sites (on any object,
//! fallbacks last) in turn: the first in candidate order in round 0 with every other candidate,
//! the next in the next round only if no replay of that pair so far confirmed its race (its own
//! race, not another one it ran into: [`verdict::confirms`]). The report shows one finding per
//! pair of lines, so a candidate after the one that confirmed its pair would only add its number
//! to that finding; it is not replayed ([`Replayed::Covered`]). Turning verdicts into a report is
//! `ilgen-report`'s.

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
use ilgen_trace::{Meta, SiteId};

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

/// What became of one candidate in [`replay_all`].
#[derive(Debug)]
pub enum Replayed {
    Run(Box<ReplayRun>),
    /// Not replayed: the replay of this candidate (its number, 1-based, in the same run), earlier
    /// at the same two sites, confirmed their race first.
    Covered(usize),
}

impl Replayed {
    /// Its replay, if it had one.
    pub fn run(&self) -> Option<&ReplayRun> {
        match self {
            Replayed::Run(r) => Some(r),
            Replayed::Covered(_) => None,
        }
    }
}

/// Replays the candidates of every run in one pool, at the pace `bounds` give (runs detected
/// together share it rather than each taking as much), in rounds: round 0 replays every
/// candidate that is no race, and the first race candidate at each pair of sites; round r the
/// next one at each pair that no replay so far confirmed. Gives each run's candidates in order,
/// replayed or covered by the one that confirmed their pair, or the first error in run and
/// candidate order of its round. With `announce`, prints each replay's command line on stderr
/// before its round. Calls `done` after each candidate (replayed or not, for progress).
pub fn replay_all(
    runs: &[Candidates],
    bounds: &Bounds,
    announce: bool,
    done: &(dyn Fn() + Sync),
) -> Result<Vec<Vec<Replayed>>, ConfirmError> {
    let next: Vec<Vec<Option<usize>>> = runs
        .iter()
        .map(|c| next_at_same_sites(c.candidates))
        .collect();
    let mut replayed: Vec<Vec<Option<Replayed>>> = runs
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
            if verdict::confirms(&runs[r].candidates[i], &replay) {
                let mut later = next[r][i];
                while let Some(j) = later {
                    replayed[r][j] = Some(Replayed::Covered(i + 1));
                    done();
                    later = next[r][j];
                }
            } else {
                again.extend(next[r][i].map(|j| (r, j)));
            }
            replayed[r][i] = Some(Replayed::Run(Box::new(replay)));
        }
        round = again;
    }
    Ok(replayed
        .into_iter()
        .map(|run| {
            run.into_iter()
                .map(|c| c.expect("each candidate is replayed or after one that confirmed"))
                .collect()
        })
        .collect())
}

/// Per candidate, the one replayed after it if its replay does not confirm its race: the next
/// race candidate at the same two sites (in either order of the accesses), in candidate order.
/// A fallback is at its candidate's two sites and comes after every candidate, so it is tried
/// after its candidate and the other objects' candidates at that pair.
fn next_at_same_sites(candidates: &[Candidate]) -> Vec<Option<usize>> {
    let mut next = vec![None; candidates.len()];
    let mut last: HashMap<[SiteId; 2], usize> = HashMap::new();
    for (i, c) in candidates.iter().enumerate() {
        if let Some(l) = c.race_sites().and_then(|pair| last.insert(pair, i)) {
            next[l] = Some(i);
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

    fn race(sites: [SiteId; 2], fallback_of: Option<usize>) -> Candidate {
        let side = |tid, site| AccessSide {
            tid,
            site,
            access: AccessName::Write,
        };
        Candidate::Race {
            object: ObjectRange { addr: 0x10, len: 4 },
            accesses: [side(0, sites[0]), side(1, sites[1])],
            schedule: ScheduleOut::whole(0, Vec::new()),
            fallback_of,
        }
    }

    #[test]
    fn each_race_chains_to_the_next_at_its_two_sites_in_either_order() {
        // Objects' candidates 1, 3 and 4 at sites 1 and 2 (4 the other way round), 2 at 3 and
        // 4, 5 at 1 and 3; 6 a fallback of 1, 7 of 2.
        let candidates = [
            race([1, 2], None),
            race([3, 4], None),
            race([1, 2], None),
            race([2, 1], None),
            race([1, 3], None),
            race([1, 2], Some(1)),
            race([3, 4], Some(2)),
        ];
        assert_eq!(
            next_at_same_sites(&candidates),
            [Some(2), Some(6), Some(3), Some(5), None, None, None]
        );
    }
}
