//! What one replay proved about its candidate.
//!
//! Takes a [`ReplayRun`]; gives a [`Verdict`]: a confirmed race or deadlock (the online
//! happens-before detector saw it in a real execution), a confirmed atomicity violation (the
//! watched accesses e1, f, e2 ran in that order, each in its predicted segment), no error (the schedule was followed and
//! nothing happened), infeasible (the program took another path: the schedule diverged) or failed
//! (no outcome: timeout, crash, refused schedule), each with its reason in words. A race,
//! deadlock or divergence the runtime wrote is final: a hang, crash or timeout after it changes
//! nothing. And
//! [`confirms`]: whether the replay proved its own candidate, which decides if the other
//! candidates at its two sites are still worth replaying.

use ilgen_analysis::candidates::Candidate;
use ilgen_trace::replay::{ResultKind, EXIT_BAD_SCHEDULE};
use serde::{Deserialize, Serialize};

use crate::run::{Ended, ReplayRun};

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    ConfirmedRace,
    ConfirmedDeadlock,
    ConfirmedAtomicity,
    NoError,
    Infeasible,
    Failed,
}

impl Class {
    pub fn text(self) -> &'static str {
        match self {
            Class::ConfirmedRace => "confirmed race",
            Class::ConfirmedDeadlock => "confirmed deadlock",
            Class::ConfirmedAtomicity => "confirmed atomicity violation",
            Class::NoError => "no error",
            Class::Infeasible => "infeasible",
            Class::Failed => "replay failed",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub class: Class,
    /// Why, in one lowercase sentence (empty for confirmed findings).
    pub reason: String,
}

/// Whether `run` proved `candidate` itself. A race candidate needs a race at its own two sites: a
/// replay may run into another race first (one on the way, while the schedule still holds the
/// threads) and then diverge or stall before its own, and the other candidates at those two sites
/// (on other objects, its fallbacks) may still reach it. Any confirmed verdict proves the other
/// kinds.
pub fn confirms(candidate: &Candidate, run: &ReplayRun) -> bool {
    let class = classify(run).class;
    match candidate.race_sites() {
        Some(own) => {
            class == Class::ConfirmedRace
                && run.outcome.as_ref().is_ok_and(|o| {
                    o.races.iter().any(|r| {
                        let mut found = [r.current.site, r.previous.site];
                        found.sort_unstable();
                        found == own
                    })
                })
        }
        None => matches!(
            class,
            Class::ConfirmedRace | Class::ConfirmedDeadlock | Class::ConfirmedAtomicity
        ),
    }
}

pub fn classify(run: &ReplayRun) -> Verdict {
    let v = |class, reason: String| Verdict { class, reason };
    // A divergence on disk is final too: the runtime lets the program go on unscheduled after
    // it only to meet races still ahead.
    let found = run.outcome.as_ref().is_ok_and(|o| {
        matches!(
            o.result,
            ResultKind::Race | ResultKind::Deadlock | ResultKind::Diverged
        )
    });
    match run.ended {
        Ended::TimedOut if !found => {
            return v(
                Class::Failed,
                "the replay did not end within --replay-timeout; its process group was killed"
                    .into(),
            )
        }
        Ended::Stopped(sig) if !found => {
            let how = if run.pid == 0 {
                "not replayed"
            } else {
                "cut short"
            };
            return v(
                Class::Failed,
                format!("{how}: ilgen was stopped by signal {sig}"),
            );
        }
        _ => {}
    }
    let o = match &run.outcome {
        Ok(o) => o,
        Err(e) if run.ended == Ended::Unprepared => return v(Class::Failed, e.clone()),
        Err(e) => {
            let how = match run.ended {
                Ended::Exited(EXIT_BAD_SCHEDULE) => "the runtime refused the schedule".to_owned(),
                Ended::Exited(c) => format!("the program exited with status {c}"),
                Ended::Signaled(s) => format!("the program was killed by signal {s}"),
                Ended::TimedOut | Ended::Stopped(_) | Ended::Unprepared => {
                    unreachable!("handled above")
                }
            };
            return v(
                Class::Failed,
                format!(
                    "{how} without a replay outcome ({e}); see {}/stderr.txt",
                    run.out_dir.display()
                ),
            );
        }
    };
    match o.result {
        ResultKind::Race => v(Class::ConfirmedRace, String::new()),
        ResultKind::Deadlock => v(Class::ConfirmedDeadlock, String::new()),
        ResultKind::Atomicity => v(Class::ConfirmedAtomicity, String::new()),
        ResultKind::NoError if !o.watched.is_empty() => v(
            Class::NoError,
            format!(
                "the schedule was followed ({}/{} steps) but e1, f and e2 did not run in that \
                 order in their segments (ranks {:?})",
                o.steps_done, o.steps_total, o.watched
            ),
        ),
        ResultKind::NoError => v(
            Class::NoError,
            format!(
                "the schedule was followed ({}/{} steps) and no race or deadlock happened",
                o.steps_done, o.steps_total
            ),
        ),
        ResultKind::Diverged => {
            let why = match &o.divergence {
                Some(d) => d.reason.clone(),
                None => format!(
                    "the program ended after {} of {} schedule steps",
                    o.steps_done, o.steps_total
                ),
            };
            v(
                Class::Infeasible,
                format!("the schedule could not be followed: {why}"),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use ilgen_analysis::candidates::{AccessName, AccessSide, ObjectRange, ScheduleOut};
    use ilgen_trace::replay::{
        Divergence, Outcome, RaceAccess, RaceReport, ThreadRef, EXIT_DIVERGED, OUTCOME_VERSION,
    };
    use ilgen_trace::{AccessKind, SiteId};

    use super::*;

    fn run(ended: Ended, result: Option<ResultKind>) -> ReplayRun {
        ReplayRun {
            pid: 1,
            ended,
            outcome: result
                .map(|result| Outcome {
                    format_version: OUTCOME_VERSION,
                    build_id: "0".into(),
                    schedule: "s".into(),
                    load_base: 0,
                    result,
                    schedule_followed: result != ResultKind::Diverged,
                    steps_done: 2,
                    steps_total: 3,
                    races: vec![],
                    deadlock: None,
                    divergence: (result == ResultKind::Diverged).then(|| Divergence {
                        step: Some(2),
                        expected: None,
                        got: None,
                        reason: "step 2 went elsewhere".into(),
                    }),
                    watched: match result {
                        ResultKind::Atomicity => vec![Some(1), Some(2), Some(3)],
                        _ => Vec::new(),
                    },
                    created: Default::default(),
                    step_stacks: Vec::new(),
                    stacks: Vec::new(),
                })
                .ok_or_else(|| "no outcome".to_owned()),
            out_dir: "/r".into(),
        }
    }

    #[test]
    fn a_race_candidate_is_confirmed_only_by_a_race_at_its_own_two_sites() {
        let side = |tid, site| AccessSide {
            tid,
            site,
            access: AccessName::Write,
        };
        let candidate = Candidate::Race {
            object: ObjectRange { addr: 0x10, len: 4 },
            accesses: [side(0, 7), side(1, 9)],
            schedule: ScheduleOut::whole(0, Vec::new()),
            fallback_of: None,
        };
        let found = |pairs: &[(SiteId, SiteId)]| {
            let access = |tid, site| RaceAccess {
                thread: ThreadRef {
                    tid,
                    parent: None,
                    child_index: 0,
                },
                kind: AccessKind::Write,
                addr: 0x10,
                size: 4,
                site,
                free: false,
                unmap: false,
                destroy: false,
                stack: vec![],
                locks: vec![],
            };
            let mut r = run(Ended::Exited(EXIT_DIVERGED), Some(ResultKind::Race));
            if let Ok(o) = &mut r.outcome {
                o.races = pairs
                    .iter()
                    .map(|&(current, previous)| RaceReport {
                        current: access(1, current),
                        previous: access(0, previous),
                        heap_block: None,
                    })
                    .collect();
            }
            confirms(&candidate, &r)
        };
        // Another race on the way, then a divergence: the fallbacks may still reach it.
        assert!(!found(&[(3, 4)]));
        assert!(found(&[(3, 4), (9, 7)]));
        assert!(found(&[(7, 9)]));
        // A deadlock's replay is proven by anything it confirmed.
        let deadlock = Candidate::Deadlock {
            blocked: Vec::new(),
            schedule: ScheduleOut::whole(0, Vec::new()),
        };
        assert!(confirms(
            &deadlock,
            &run(Ended::Exited(87), Some(ResultKind::Deadlock))
        ));
        assert!(!confirms(
            &deadlock,
            &run(Ended::Exited(0), Some(ResultKind::NoError))
        ));
    }

    #[test]
    fn the_outcome_decides_and_a_missing_one_is_a_failure_with_the_reason() {
        let c = |e, r| classify(&run(e, r));
        assert_eq!(
            c(Ended::Exited(0), Some(ResultKind::Race)).class,
            Class::ConfirmedRace
        );
        assert_eq!(
            c(Ended::Exited(87), Some(ResultKind::Deadlock)).class,
            Class::ConfirmedDeadlock
        );
        assert_eq!(
            c(Ended::Exited(0), Some(ResultKind::NoError)).class,
            Class::NoError
        );
        assert_eq!(
            c(Ended::Exited(0), Some(ResultKind::Atomicity)).class,
            Class::ConfirmedAtomicity
        );
        // Watched accesses out of order: followed, but nothing proven.
        let mut r = run(Ended::Exited(0), Some(ResultKind::NoError));
        if let Ok(o) = &mut r.outcome {
            o.watched = vec![Some(2), Some(1), None];
        }
        let v = classify(&r);
        assert_eq!(v.class, Class::NoError);
        assert!(
            v.reason.contains("did not run in that order"),
            "{}",
            v.reason
        );
        let v = c(Ended::Exited(86), Some(ResultKind::Diverged));
        assert_eq!(v.class, Class::Infeasible);
        assert!(v.reason.ends_with("step 2 went elsewhere"), "{}", v.reason);
        let v = c(Ended::Exited(EXIT_BAD_SCHEDULE), None);
        assert_eq!(v.class, Class::Failed);
        assert!(v.reason.contains("refused the schedule"), "{}", v.reason);
        let v = c(Ended::Signaled(11), None);
        assert!(v.reason.contains("signal 11"), "{}", v.reason);
        // A failed --before-replay command: its reason as run.rs wrote it, nothing added.
        let v = c(Ended::Unprepared, None);
        assert_eq!((v.class, v.reason.as_str()), (Class::Failed, "no outcome"));
        // A timeout is a failure unless the runtime had already reached its verdict.
        let v = c(Ended::TimedOut, Some(ResultKind::NoError));
        assert_eq!(v.class, Class::Failed);
        assert!(v.reason.contains("--replay-timeout"), "{}", v.reason);
        assert_eq!(c(Ended::TimedOut, None).class, Class::Failed);
        let cut = c(Ended::Stopped(15), None);
        assert_eq!(
            (cut.class, cut.reason.as_str()),
            (Class::Failed, "cut short: ilgen was stopped by signal 15")
        );
        assert_eq!(
            c(Ended::Stopped(15), Some(ResultKind::Race)).class,
            Class::ConfirmedRace
        );
        assert_eq!(
            c(Ended::TimedOut, Some(ResultKind::Race)).class,
            Class::ConfirmedRace
        );
        assert_eq!(
            c(Ended::Signaled(11), Some(ResultKind::Deadlock)).class,
            Class::ConfirmedDeadlock
        );
        assert_eq!(
            c(
                Ended::Exited(ilgen_trace::replay::EXIT_STOPPED),
                Some(ResultKind::Race)
            )
            .class,
            Class::ConfirmedRace
        );
    }
}
