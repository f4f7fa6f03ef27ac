//! Candidates: the findings as data, the `candidates.json` file format and the human summary.
//!
//! Takes the solver's findings with the models their events index; gives [`CandidatesFile`],
//! written as `candidates.json` in the trace directory and printed with `--format json`, and a text
//! summary that names sites as `file:line` when the binary is at hand.
//!
//! `candidates.json` (serde JSON, one object):
//! - `format_version`: [`FORMAT_VERSION`]; readers refuse other versions.
//! - `binary`, `binary_hash`: the recorded executable, from `meta.json`.
//! - `stats`: counts of the analysis (prepare, filter, solve).
//! - `candidates`: in a fixed order (races by object address, then deadlocks), each with `kind`:
//!   - `"race"`: `object` (`addr`, `len`: the shared byte range), `accesses` (two of `tid`,
//!     `site`, `access`: `read` | `write` | `atomic_read` | `atomic_write`) and `schedule`;
//!   - `"deadlock"`: `blocked` (one step per blocked thread: the operation it waits in) and
//!     `schedule`.
//! - A `schedule` is `steps` from the start of the run, for each thread a prefix of its sync
//!   operations, of which the first `prefix_steps` are the observed order before the window the
//!   candidate was found in; each step has `tid`, `op` (the name `ilgen dump` prints),
//!   `object` (address, for operations on an object), `peer` (the other thread of fork and join),
//!   `site`, `seq` (observed seq, absent for an operation that never completed) and `op_index`
//!   (the thread's n-th sync operation, 0-based: replay matches operations by it).
//!
//! Beside it, candidate i (1-based, in this order) has its schedule as replay reads it in
//! `schedule-<i>.json` ([`ilgen_trace::schedule`]).
//!
//! Versions: 1, first format.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use ilgen_trace::format::ThreadHeader;
use ilgen_trace::schedule as replay;
use ilgen_trace::{AccessKind, SiteId, ThreadId, PENDING};
use serde::{Deserialize, Serialize};

use crate::filter::FilterStats;
use crate::finding::{Finding, Schedule};
use crate::model::{At, Model, ModelEvent};
use crate::prepare::SharedObject;
use crate::solve::SolveStats;

pub const FORMAT_VERSION: u32 = 1;
pub const FILE_NAME: &str = "candidates.json";

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct CandidatesFile {
    pub format_version: u32,
    pub binary: String,
    pub binary_hash: String,
    pub stats: Stats,
    pub candidates: Vec<Candidate>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub threads: usize,
    pub sync_events: usize,
    pub accesses_read: usize,
    /// Accesses to shared objects, one per object and segment.
    pub accesses_kept: usize,
    pub filter: FilterStats,
    pub solve: SolveStats,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Candidate {
    Race {
        object: ObjectRange,
        accesses: [AccessSide; 2],
        schedule: ScheduleOut,
    },
    Deadlock {
        blocked: Vec<Step>,
        schedule: ScheduleOut,
    },
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectRange {
    pub addr: u64,
    pub len: u64,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessSide {
    pub tid: ThreadId,
    pub site: SiteId,
    pub access: AccessName,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AccessName {
    Read,
    Write,
    AtomicRead,
    AtomicWrite,
}

impl From<AccessKind> for AccessName {
    fn from(k: AccessKind) -> Self {
        match k {
            AccessKind::Read => AccessName::Read,
            AccessKind::Write => AccessName::Write,
            AccessKind::AtomicRead => AccessName::AtomicRead,
            AccessKind::AtomicWrite => AccessName::AtomicWrite,
        }
    }
}

impl AccessName {
    pub fn text(self) -> &'static str {
        match self {
            AccessName::Read => "read",
            AccessName::Write => "write",
            AccessName::AtomicRead => "atomic read",
            AccessName::AtomicWrite => "atomic write",
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ScheduleOut {
    pub prefix_steps: usize,
    pub steps: Vec<Step>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub tid: ThreadId,
    pub op: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<ThreadId>,
    pub site: SiteId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    pub op_index: u32,
}

/// The candidate of one finding; `None` if its events are not those of `model` (never, for
/// findings the solver made from it).
pub fn candidate(model: &Model, vars: &[SharedObject], finding: &Finding) -> Option<Candidate> {
    match finding {
        Finding::Race {
            first,
            second,
            schedule,
        } => {
            let side = |at: At| match model.threads.get(at.thread)?.events.get(at.index)? {
                ModelEvent::Access { var, kind, site } => Some((
                    *var,
                    AccessSide {
                        tid: model.threads[at.thread].tid,
                        site: *site,
                        access: (*kind).into(),
                    },
                )),
                ModelEvent::Sync { .. } => None,
            };
            let (var, a) = side(*first)?;
            let (_, b) = side(*second)?;
            let object = vars.get(var)?;
            Some(Candidate::Race {
                object: ObjectRange {
                    addr: object.addr,
                    len: object.len,
                },
                accesses: [a, b],
                schedule: schedule_out(model, schedule)?,
            })
        }
        Finding::Deadlock { blocked, schedule } => Some(Candidate::Deadlock {
            blocked: blocked
                .iter()
                .map(|&at| step(model, at))
                .collect::<Option<_>>()?,
            schedule: schedule_out(model, schedule)?,
        }),
    }
}

fn schedule_out(model: &Model, schedule: &Schedule) -> Option<ScheduleOut> {
    Some(ScheduleOut {
        prefix_steps: schedule.prefix,
        steps: schedule
            .steps
            .iter()
            .map(|&at| step(model, at))
            .collect::<Option<_>>()?,
    })
}

fn step(model: &Model, at: At) -> Option<Step> {
    let thread = model.threads.get(at.thread)?;
    let o = thread.events.get(at.index)?.observed()?;
    Some(Step {
        tid: thread.tid,
        op: o.op.name().to_owned(),
        object: o.op.object(),
        peer: o.op.peer_thread(),
        site: o.site,
        seq: (o.seq != PENDING).then_some(o.seq),
        op_index: o.op_index,
    })
}

/// File name of candidate `number`'s (1-based) schedule for replay.
pub fn schedule_file_name(number: usize) -> String {
    format!("schedule-{number}.json")
}

/// The candidate's schedule as replay reads it: threads by their stable identity, steps by each
/// thread's n-th sync operation.
pub fn replay_schedule(
    candidate: &Candidate,
    headers: &[ThreadHeader],
    binary_hash: &str,
) -> replay::Schedule {
    let schedule = match candidate {
        Candidate::Race { schedule, .. } | Candidate::Deadlock { schedule, .. } => schedule,
    };
    let tids: BTreeSet<ThreadId> = schedule.steps.iter().map(|s| s.tid).collect();
    replay::Schedule {
        format_version: replay::SCHEDULE_VERSION,
        binary_hash: binary_hash.to_owned(),
        threads: headers
            .iter()
            .filter(|h| tids.contains(&h.tid))
            .map(|h| replay::ScheduleThread {
                tid: h.tid,
                parent: h.parent,
                child_index: h.child_index,
            })
            .collect(),
        steps: schedule
            .steps
            .iter()
            .map(|s| replay::Step {
                tid: s.tid,
                index: s.op_index,
                op: s.op.clone(),
                site: s.site,
            })
            .collect(),
    }
}

/// How the summary names sites and addresses (the binary's names when it is at hand).
pub struct Names<'a> {
    pub site: &'a dyn Fn(SiteId) -> Option<String>,
    pub object: &'a dyn Fn(u64) -> Option<String>,
}

impl Names<'_> {
    fn site(&self, id: SiteId) -> String {
        match (self.site)(id) {
            Some(name) => format!("{name} (site {id})"),
            None => format!("site {id}"),
        }
    }

    fn object(&self, addr: u64) -> String {
        match (self.object)(addr) {
            Some(name) => format!("{name} ({addr:#x})"),
            None => format!("{addr:#x}"),
        }
    }
}

/// The human summary: counts, then each candidate with its sites and schedule.
pub fn summary(file: &CandidatesFile, names: &Names) -> String {
    let s = &file.stats;
    let f = &s.filter;
    let races = file
        .candidates
        .iter()
        .filter(|c| matches!(c, Candidate::Race { .. }))
        .count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ilgen: {} candidate(s): {races} race(s), {} deadlock(s)",
        file.candidates.len(),
        file.candidates.len() - races
    );
    let _ = writeln!(
        out,
        "  trace: {} threads, {} sync events, {} accesses ({} kept on shared objects)",
        s.threads, s.sync_events, s.accesses_read, s.accesses_kept
    );
    let _ = writeln!(
        out,
        "  shared objects: {} ({} without a conflicting pair, {} removed by happens-before, {} by \
         lockset, {} left)",
        f.vars_shared,
        f.vars_without_pair,
        f.vars_removed_by_hb,
        f.vars_removed_by_lockset,
        f.vars_left
    );
    let _ = writeln!(
        out,
        "  race pairs: {} ({} removed by happens-before, {} by lockset, {} left)",
        f.pairs_total, f.pairs_removed_by_hb, f.pairs_removed_by_lockset, f.pairs_left
    );
    let _ = writeln!(
        out,
        "  solver: race pairs by cuts: {} witnessed, {} ruled out, {} undecided; lock cycles \
         undecided: {}; exhaustive: {} window(s), {} states, {} search(es) stopped at the state \
         bound",
        s.solve.pairs_witnessed,
        s.solve.pairs_excluded,
        s.solve.pairs_undecided,
        s.solve.cycles_undecided,
        s.solve.exhaustive_windows,
        s.solve.exhaustive_states,
        s.solve.exhaustive_incomplete
    );
    for (i, c) in file.candidates.iter().enumerate() {
        let _ = writeln!(out);
        match c {
            Candidate::Race {
                object,
                accesses,
                schedule,
            } => {
                let _ = writeln!(
                    out,
                    "candidate {}: data race on {} ({} bytes)",
                    i + 1,
                    names.object(object.addr),
                    object.len
                );
                for a in accesses {
                    let _ = writeln!(
                        out,
                        "  {} by thread {} at {}",
                        a.access.text(),
                        a.tid,
                        names.site(a.site)
                    );
                }
                write_schedule(&mut out, schedule, names);
            }
            Candidate::Deadlock { blocked, schedule } => {
                let _ = writeln!(out, "candidate {}: deadlock", i + 1);
                for b in blocked {
                    let _ = writeln!(out, "  thread {} blocked in {}", b.tid, step_text(b, names));
                }
                write_schedule(&mut out, schedule, names);
            }
        }
    }
    out
}

fn write_schedule(out: &mut String, schedule: &ScheduleOut, names: &Names) {
    if schedule.prefix_steps > 0 {
        let _ = writeln!(
            out,
            "  schedule (after {} steps in the observed order):",
            schedule.prefix_steps
        );
    } else {
        let _ = writeln!(out, "  schedule:");
    }
    for s in schedule.steps.iter().skip(schedule.prefix_steps) {
        let _ = writeln!(out, "    thread {}: {}", s.tid, step_text(s, names));
    }
}

/// One step as the summary prints it: the operation, its peer thread, object and site.
pub fn step_text(s: &Step, names: &Names) -> String {
    let mut text = s.op.clone();
    if let Some(peer) = s.peer {
        let _ = write!(text, " thread {peer}");
    }
    if let Some(obj) = s.object {
        let _ = write!(text, " {}", names.object(obj));
    }
    if s.site != ilgen_trace::NO_SITE {
        let _ = write!(text, " at {}", names.site(s.site));
    }
    text
}
