//! `ilgen-report`: the confirmed findings of replay as data, rendered as text, JSON or SARIF.
//!
//! Takes each candidate with its replay ([`Entry`]) and a [`Context`] (the binary's site table
//! and symbols, the recorded thread tree); gives a [`Report`]: confirmed races, deadlocks and
//! atomicity violations, deduplicated by their pair (or set) of source lines, each with the accesses or blocked
//! operations, the object, the threads' creation sites and the schedule that exposed it; the
//! counts of every verdict; every candidate that was not confirmed with the reason; and the
//! threads the program never joined before it exited. A deadlock the recorded run itself ended in
//! ([`Report::observe`], from `ilgen_analysis::observed`) is a finding too, with no replay needed.
//! The renderers ([`text`], [`json`], [`sarif`]) only print this data.

pub mod json;
pub mod sarif;
pub mod text;

use std::collections::{BTreeMap, BTreeSet};

use ilgen_trace::format::ThreadTrace;
use ilgen_trace::replay::{DeadlockReport, Outcome, RaceAccess, ResultKind};
use ilgen_trace::{known_site, Event, OpKind, SiteId, SyncOp, ThreadId};
use serde::Serialize;

use ilgen_analysis::atomicity::Pattern;
use ilgen_analysis::candidates::{AccessName, AccessSide, Candidate, Step};
use ilgen_analysis::observed::Observed;
use ilgen_binary::Binary;
use ilgen_confirm::run::ReplayRun;
use ilgen_confirm::verdict::{Class, Verdict};

/// What the report needs besides the replays: names for sites and addresses, the thread tree.
pub struct Context<'a> {
    pub binary: Option<&'a Binary>,
    /// Child tid → (parent tid, site of the fork that created it), from the recorded trace.
    pub forks: BTreeMap<ThreadId, (ThreadId, SiteId)>,
    /// The threads created, neither joined nor detached, when the program exited (the trace has
    /// an `exit` event): a race with one of them is a missing join.
    pub unjoined: BTreeSet<ThreadId>,
}

impl<'a> Context<'a> {
    pub fn new(binary: Option<&'a Binary>, threads: &[ThreadTrace]) -> Context<'a> {
        let mut forks = BTreeMap::new();
        let mut ended_for = BTreeSet::new();
        let mut exited = false;
        for t in threads {
            for e in &t.events {
                let Event::Sync(s) = e else { continue };
                match s.op {
                    SyncOp::Fork { child } => {
                        forks.insert(child, (t.header.tid, s.site));
                    }
                    SyncOp::Join { child } if !s.is_pending() => {
                        ended_for.insert(child);
                    }
                    SyncOp::Detach { child } => {
                        ended_for.insert(child);
                    }
                    SyncOp::Exit => exited = true,
                    _ => {}
                }
            }
        }
        let unjoined = if exited {
            forks
                .keys()
                .copied()
                .filter(|c| !ended_for.contains(c))
                .collect()
        } else {
            BTreeSet::new()
        };
        Context {
            binary,
            forks,
            unjoined,
        }
    }

    /// Where `site` is; `None`: no instrumented instruction made the event.
    pub fn location(&self, site: Option<SiteId>) -> Location {
        let source = site
            .and_then(|site| self.binary?.site(site))
            .map(|s| Source {
                file: s.file.clone(),
                line: s.line,
                column: s.column,
                function: s.function.clone(),
            });
        Location { site, source }
    }

    /// The global at `addr` of a process that loaded the executable at `base` (`None`: the
    /// recorded run's base).
    pub fn object(&self, addr: u64, base: Option<u64>) -> Option<Object> {
        let b = self.binary?;
        let g = b.global_at(addr, base.unwrap_or(b.load_base()))?;
        Some(Object {
            name: g.name.to_owned(),
            offset: g.offset,
            size: g.size,
        })
    }

    fn thread(&self, tid: ThreadId) -> ThreadInfo {
        let (parent, created_at) = match self.forks.get(&tid) {
            Some(&(p, site)) => (Some(p), Some(self.location(known_site(site)))),
            None => (None, None),
        };
        ThreadInfo {
            tid,
            parent,
            created_at,
            never_joined: self.unjoined.contains(&tid),
        }
    }
}

/// A source site: its id in the binary's site table and, when the binary names it, where it is.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// `None` (JSON null) for an event no instrumented instruction made (thread start and end).
    pub site: Option<SiteId>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Source {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub function: String,
}

impl Location {
    /// What deduplication compares: file and line when known, else the site id.
    fn key(&self) -> (String, Option<u32>) {
        match &self.source {
            Some(s) => (s.file.clone(), Some(s.line)),
            None => (String::new(), self.site),
        }
    }
}

/// A global variable.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Object {
    pub name: String,
    pub offset: u64,
    pub size: u64,
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct ThreadInfo {
    pub tid: ThreadId,
    /// `None` for the main thread (and threads the trace does not show created).
    pub parent: Option<ThreadId>,
    pub created_at: Option<Location>,
    /// Created, and neither joined nor detached when the program exited.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub never_joined: bool,
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub tid: ThreadId,
    pub kind: AccessName,
    pub addr: u64,
    pub size: u32,
    pub location: Location,
}

/// One step of the schedule that exposed a finding.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct ScheduleStep {
    pub tid: ThreadId,
    pub op: OpKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<ThreadId>,
    /// Recorded address of the object operated on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_name: Option<Object>,
    pub location: Location,
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Race {
    /// Candidates (1-based) whose replay found it.
    pub candidates: Vec<usize>,
    /// Process id of the replay that found it first.
    pub pid: u32,
    pub replay_dir: String,
    /// The later access (its thread found the race) and the earlier one.
    pub current: Access,
    pub previous: Access,
    pub object: Option<Object>,
    pub threads: Vec<ThreadInfo>,
    pub schedule: Vec<ScheduleStep>,
}

impl Race {
    /// One access is the free of the block: a use (or another free) races with the free.
    pub fn on_freed_memory(&self) -> bool {
        [self.current.kind, self.previous.kind].contains(&AccessName::Free)
    }

    /// What the report calls it, after `WARNING: ilgen:` and `SUMMARY: ilgen:`.
    pub fn title(&self) -> &'static str {
        if self.on_freed_memory() {
            "data race on freed memory"
        } else {
            "data race"
        }
    }
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    /// Candidates whose replay confirmed it (may be empty for an observed one).
    pub candidates: Vec<usize>,
    /// The recorded run itself ended in it (killed or timed out while deadlocked): `pid` is the
    /// recorded run's, `replay_dir` is empty unless a replay confirmed it too, and the schedule is
    /// that replay's (empty without one).
    pub observed: bool,
    pub pid: u32,
    pub replay_dir: String,
    pub blocked: Vec<Blocked>,
    /// Wait-for cycle of locks (each thread waits for a lock the next holds); empty when the
    /// threads wait on objects without owners.
    pub cycle: Vec<ThreadId>,
    pub threads: Vec<ThreadInfo>,
    pub schedule: Vec<ScheduleStep>,
    /// Of an observed deadlock: condition variables signalled before their waiter waited.
    pub lost_wakeups: Vec<LostWakeup>,
}

/// A signal (or broadcast) that came before the wait it was meant for, the wait not in a loop
/// re-checking a predicate: the waiter waits for a wakeup already spent.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct LostWakeup {
    pub cond: u64,
    pub cond_name: Option<Object>,
    pub waiter: ThreadId,
    pub wait: Location,
    pub signaller: ThreadId,
    pub signal: Location,
    pub broadcast: bool,
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    pub tid: ThreadId,
    pub op: OpKind,
    pub object: u64,
    pub object_name: Option<Object>,
    pub location: Location,
    pub waits_for: Vec<ThreadId>,
    pub holds: Vec<Held>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub object: u64,
    pub object_name: Option<Object>,
    pub location: Location,
}

/// An atomicity violation replay confirmed: accesses e1 and e2 of one transaction, and f of
/// another thread between them, each in the segment the candidate predicted.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Atomicity {
    pub candidates: Vec<usize>,
    pub pid: u32,
    pub replay_dir: String,
    pub pattern: Pattern,
    /// Where the transaction began: its function's line, or its `ILGEN_ATOMIC_BEGIN()`.
    pub transaction: Location,
    pub e1: Access,
    pub f: Access,
    pub e2: Access,
    pub object: Option<Object>,
    pub threads: Vec<ThreadInfo>,
    pub schedule: Vec<ScheduleStep>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    Race(Race),
    Deadlock(Deadlock),
    Atomicity(Atomicity),
}

/// A candidate that replay did not confirm.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Unconfirmed {
    pub candidate: usize,
    /// `race`, `deadlock` or `atomicity_violation`: what the candidate predicted.
    pub predicted: &'static str,
    pub verdict: Class,
    pub reason: String,
    /// The predicted accesses' (or blocked operations') sites.
    pub locations: Vec<Location>,
}

#[derive(Serialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub candidates: usize,
    pub confirmed_races: usize,
    pub confirmed_deadlocks: usize,
    /// Atomicity violations among the candidates, and how many replay confirmed.
    pub atomicity_candidates: usize,
    pub confirmed_atomicity: usize,
    pub no_error: usize,
    pub infeasible: usize,
    pub failed: usize,
    /// Deadlocks the recorded run itself ended in (0 or 1).
    pub observed_deadlocks: usize,
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub binary: String,
    pub trace_dir: String,
    pub counts: Counts,
    /// Confirmed, deduplicated, in candidate order.
    pub findings: Vec<Finding>,
    /// Every candidate that was not confirmed, in candidate order.
    pub unconfirmed: Vec<Unconfirmed>,
    /// The threads never joined when the program exited ([`Context::unjoined`]), by tid.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unjoined: Vec<ThreadInfo>,
}

/// One candidate and what its replay gave.
pub struct Entry<'a> {
    /// 1-based, as `schedule-<n>.json`.
    pub number: usize,
    pub candidate: &'a Candidate,
    pub run: Option<&'a ReplayRun>,
    pub verdict: Verdict,
}

impl Report {
    pub fn new(ctx: &Context, binary: &str, trace_dir: &str) -> Report {
        Report {
            binary: binary.to_owned(),
            trace_dir: trace_dir.to_owned(),
            counts: Counts::default(),
            findings: Vec::new(),
            unconfirmed: Vec::new(),
            unjoined: ctx.unjoined.iter().map(|&t| ctx.thread(t)).collect(),
        }
    }

    pub fn confirmed(&self) -> bool {
        !self.findings.is_empty()
    }

    /// Adds the deadlock the recorded run (process `pid`) ended in; call it before [`Report::add`],
    /// so that a replay confirming the same deadlock joins it.
    pub fn observe(&mut self, ctx: &Context, o: &Observed, pid: u32) {
        self.counts.observed_deadlocks += 1;
        let d = &o.deadlock;
        let name = |addr| ctx.object(addr, None);
        self.findings.push(Finding::Deadlock(Deadlock {
            candidates: Vec::new(),
            observed: true,
            pid,
            replay_dir: String::new(),
            blocked: blocked(ctx, d, None),
            cycle: d.cycle.clone(),
            threads: threads(ctx, d.threads.iter().map(|b| b.thread.tid)),
            schedule: Vec::new(),
            lost_wakeups: o
                .lost_wakeups
                .iter()
                .map(|w| LostWakeup {
                    cond: w.cond,
                    cond_name: name(w.cond),
                    waiter: w.waiter,
                    wait: ctx.location(known_site(w.wait_site)),
                    signaller: w.signaller,
                    signal: ctx.location(known_site(w.signal_site)),
                    broadcast: w.broadcast,
                })
                .collect(),
        }));
    }

    /// Adds one candidate's verdict: its findings (merged with equal ones already there) or an
    /// [`Unconfirmed`] entry.
    pub fn add(&mut self, ctx: &Context, entry: &Entry) {
        let c = &mut self.counts;
        c.candidates += 1;
        match entry.verdict.class {
            Class::ConfirmedRace => c.confirmed_races += 1,
            Class::ConfirmedDeadlock => c.confirmed_deadlocks += 1,
            Class::ConfirmedAtomicity => c.confirmed_atomicity += 1,
            Class::NoError => c.no_error += 1,
            Class::Infeasible => c.infeasible += 1,
            Class::Failed => c.failed += 1,
        }
        if let Candidate::Atomicity { .. } = entry.candidate {
            c.atomicity_candidates += 1;
        }
        let outcome = entry.run.and_then(|r| r.outcome.as_ref().ok());
        let (
            Some(run),
            Some(o),
            Class::ConfirmedRace | Class::ConfirmedDeadlock | Class::ConfirmedAtomicity,
        ) = (entry.run, outcome, entry.verdict.class)
        else {
            self.unconfirmed.push(unconfirmed(ctx, entry));
            return;
        };
        for f in findings(ctx, entry, run, o) {
            match self.findings.iter_mut().find(|g| key(g) == key(&f)) {
                Some(Finding::Race(r)) => push_new(&mut r.candidates, entry.number),
                Some(Finding::Atomicity(a)) => push_new(&mut a.candidates, entry.number),
                Some(Finding::Deadlock(d)) => {
                    if d.candidates.is_empty() {
                        // The observed deadlock, now also replayed: show the replay's schedule.
                        if let Finding::Deadlock(r) = &f {
                            d.replay_dir.clone_from(&r.replay_dir);
                            d.schedule.clone_from(&r.schedule);
                        }
                    }
                    push_new(&mut d.candidates, entry.number)
                }
                None => self.findings.push(f),
            }
        }
    }
}

fn push_new(v: &mut Vec<usize>, n: usize) {
    if !v.contains(&n) {
        v.push(n);
    }
}

/// What makes two findings the same: the unordered pair of access lines of a race, the set of
/// blocked lines of a deadlock.
fn key(f: &Finding) -> (u8, BTreeSet<(String, Option<u32>)>) {
    match f {
        Finding::Race(r) => (
            0,
            [r.current.location.key(), r.previous.location.key()].into(),
        ),
        Finding::Deadlock(d) => (1, d.blocked.iter().map(|b| b.location.key()).collect()),
        Finding::Atomicity(a) => (
            2,
            [
                &a.transaction,
                &a.e1.location,
                &a.f.location,
                &a.e2.location,
            ]
            .map(Location::key)
            .into(),
        ),
    }
}

fn findings(ctx: &Context, entry: &Entry, run: &ReplayRun, o: &Outcome) -> Vec<Finding> {
    let schedule = schedule(ctx, entry.candidate);
    let replay_dir = run.out_dir.display().to_string();
    let mut out = Vec::new();
    for r in &o.races {
        let access = |a: &RaceAccess| Access {
            tid: a.thread.tid,
            kind: if a.free {
                AccessName::Free
            } else {
                a.kind.into()
            },
            addr: a.addr,
            size: a.size,
            location: ctx.location(known_site(a.site)),
        };
        out.push(Finding::Race(Race {
            candidates: vec![entry.number],
            pid: run.pid,
            replay_dir: replay_dir.clone(),
            current: access(&r.current),
            previous: access(&r.previous),
            object: ctx.object(r.current.addr, Some(o.load_base)),
            threads: threads(ctx, [r.current.thread.tid, r.previous.thread.tid]),
            schedule: schedule.clone(),
        }));
    }
    if let (
        ResultKind::Atomicity,
        Candidate::Atomicity {
            object,
            begin,
            accesses,
            pattern,
            ..
        },
    ) = (o.result, entry.candidate)
    {
        // The candidate's addresses are the recorded run's: its object is named from there.
        let access = |a: &AccessSide| Access {
            tid: a.tid,
            kind: a.access,
            addr: object.addr,
            size: object.len as u32,
            location: ctx.location(known_site(a.site)),
        };
        out.push(Finding::Atomicity(Atomicity {
            candidates: vec![entry.number],
            pid: run.pid,
            replay_dir: replay_dir.clone(),
            pattern: *pattern,
            transaction: ctx.location(begin.site),
            e1: access(&accesses[0]),
            f: access(&accesses[1]),
            e2: access(&accesses[2]),
            object: ctx.object(object.addr, None),
            threads: threads(ctx, accesses.iter().map(|a| a.tid)),
            schedule: schedule.clone(),
        }));
    }
    if let Some(d) = &o.deadlock {
        out.push(Finding::Deadlock(Deadlock {
            candidates: vec![entry.number],
            observed: false,
            pid: run.pid,
            replay_dir,
            blocked: blocked(ctx, d, Some(o.load_base)),
            cycle: d.cycle.clone(),
            threads: threads(ctx, d.threads.iter().map(|b| b.thread.tid)),
            schedule,
            lost_wakeups: Vec::new(),
        }));
    }
    out
}

/// The blocked threads of a deadlock of a process that loaded the executable at `base` (`None`:
/// the recorded run).
fn blocked(ctx: &Context, d: &DeadlockReport, base: Option<u64>) -> Vec<Blocked> {
    let name = |addr| ctx.object(addr, base);
    d.threads
        .iter()
        .map(|b| Blocked {
            tid: b.thread.tid,
            // The runtime names a condition wait's second half "wake"; a thread stuck there is,
            // to the programmer, stuck in pthread_cond_wait.
            op: if b.op == OpKind::Wake {
                OpKind::Wait
            } else {
                b.op
            },
            object: b.object,
            object_name: name(b.object),
            location: ctx.location(b.site),
            waits_for: b.waits_for.clone(),
            holds: b
                .holds
                .iter()
                .map(|h| Held {
                    object: h.object,
                    object_name: name(h.object),
                    location: ctx.location(h.site),
                })
                .collect(),
        })
        .collect()
}

/// The threads of a finding, each once, by tid.
fn threads(ctx: &Context, tids: impl IntoIterator<Item = ThreadId>) -> Vec<ThreadInfo> {
    let tids: BTreeSet<ThreadId> = tids.into_iter().collect();
    tids.into_iter().map(|t| ctx.thread(t)).collect()
}

fn schedule(ctx: &Context, c: &Candidate) -> Vec<ScheduleStep> {
    c.schedule().steps.iter().map(|s| step(ctx, s)).collect()
}

fn step(ctx: &Context, s: &Step) -> ScheduleStep {
    ScheduleStep {
        tid: s.tid,
        op: s.op,
        peer: s.peer,
        object: s.object,
        object_name: s.object.and_then(|a| ctx.object(a, None)),
        location: ctx.location(s.site),
    }
}

fn unconfirmed(ctx: &Context, entry: &Entry) -> Unconfirmed {
    let (predicted, locations) = match entry.candidate {
        Candidate::Race { accesses, .. } => (
            "race",
            accesses
                .iter()
                .map(|a| ctx.location(known_site(a.site)))
                .collect(),
        ),
        Candidate::Deadlock { blocked, .. } => (
            "deadlock",
            blocked.iter().map(|b| ctx.location(b.site)).collect(),
        ),
        Candidate::Atomicity { accesses, .. } => (
            "atomicity_violation",
            accesses
                .iter()
                .map(|a| ctx.location(known_site(a.site)))
                .collect(),
        ),
    };
    let reason = match entry.verdict.class {
        // Confirmed by its class but without an outcome to show: cannot happen, say so.
        Class::ConfirmedRace | Class::ConfirmedDeadlock | Class::ConfirmedAtomicity => {
            "the replay left no outcome".into()
        }
        _ => entry.verdict.reason.clone(),
    };
    Unconfirmed {
        candidate: entry.number,
        predicted,
        verdict: entry.verdict.class,
        reason,
        locations,
    }
}

#[cfg(test)]
mod tests {
    use ilgen_trace::replay::{
        Outcome, RaceAccess, RaceReport, ResultKind, ThreadRef, OUTCOME_VERSION,
    };
    use ilgen_trace::AccessKind;

    use super::*;
    use ilgen_analysis::candidates::{AccessSide, ObjectRange, ScheduleOut};
    use ilgen_confirm::run::Ended;

    fn candidate(sites: [SiteId; 2]) -> Candidate {
        let side = |tid, site| AccessSide {
            tid,
            site,
            access: AccessName::Write,
        };
        Candidate::Race {
            object: ObjectRange { addr: 0x10, len: 4 },
            accesses: [side(0, sites[0]), side(1, sites[1])],
            schedule: ScheduleOut {
                prefix_steps: 0,
                steps: vec![
                    Step {
                        tid: 0,
                        op: OpKind::Fork,
                        object: None,
                        peer: Some(1),
                        site: Some(9),
                        seq: Some(0),
                        op_index: 0,
                    },
                    // No instrumented instruction starts a thread: its location has no site.
                    Step {
                        tid: 1,
                        op: OpKind::Start,
                        object: None,
                        peer: None,
                        site: None,
                        seq: Some(1),
                        op_index: 0,
                    },
                ],
            },
        }
    }

    fn run(result: ResultKind, races: &[(SiteId, SiteId)]) -> ReplayRun {
        let access = |tid, site| RaceAccess {
            thread: ThreadRef {
                tid,
                parent: Some(0),
                child_index: 0,
            },
            kind: AccessKind::Write,
            addr: 0x10,
            size: 4,
            site,
            free: false,
        };
        ReplayRun {
            pid: 42,
            ended: Ended::Exited(0),
            outcome: Ok(Outcome {
                format_version: OUTCOME_VERSION,
                binary_hash: "0".into(),
                schedule: "s".into(),
                load_base: 0,
                result,
                schedule_followed: true,
                steps_done: 1,
                steps_total: 1,
                races: races
                    .iter()
                    .map(|&(a, b)| RaceReport {
                        current: access(1, a),
                        previous: access(0, b),
                    })
                    .collect(),
                deadlock: None,
                divergence: None,
                watched: Vec::new(),
            }),
            out_dir: "/t/replay-1".into(),
        }
    }

    fn add(report: &mut Report, ctx: &Context, n: usize, c: &Candidate, r: &ReplayRun) {
        let verdict = ilgen_confirm::verdict::classify(r);
        report.add(
            ctx,
            &Entry {
                number: n,
                candidate: c,
                run: Some(r),
                verdict,
            },
        );
    }

    #[test]
    fn equal_site_pairs_are_one_finding_and_the_rest_keep_their_reason() {
        let ctx = Context {
            binary: None,
            forks: [(1, (0, 9))].into(),
            unjoined: [1].into(),
        };
        let mut report = Report::new(&ctx, "/bin/a", "/t");
        let c = candidate([5, 6]);
        add(&mut report, &ctx, 1, &c, &run(ResultKind::Race, &[(6, 5)]));
        // The same pair the other way round, from another candidate: merged.
        add(&mut report, &ctx, 2, &c, &run(ResultKind::Race, &[(5, 6)]));
        add(&mut report, &ctx, 3, &c, &run(ResultKind::NoError, &[]));
        assert_eq!(report.findings.len(), 1);
        let Finding::Race(r) = &report.findings[0] else {
            panic!("a race")
        };
        assert_eq!(r.candidates, vec![1, 2]);
        assert_eq!(
            r.threads[1].created_at.as_ref().map(|l| l.site),
            Some(Some(9))
        );
        assert!(r.threads[1].never_joined && !r.threads[0].never_joined);
        assert_eq!(
            report.unjoined.iter().map(|t| t.tid).collect::<Vec<_>>(),
            [1]
        );
        assert_eq!(report.counts.confirmed_races, 2);
        assert_eq!(report.counts.no_error, 1);
        assert_eq!(report.unconfirmed[0].candidate, 3);
        assert_eq!(report.unconfirmed[0].verdict, Class::NoError);

        // The renderings, whole: snapshots in src/snapshots/ (a mismatch fails the test; review a
        // change with `cargo insta review` or by reading the .snap.new file insta writes).
        insta::assert_snapshot!("text_all", text::render(&report, true));
        insta::assert_snapshot!("text_confirmed", text::render(&report, false));
        insta::assert_snapshot!("sarif", sarif::render(&report));
        insta::assert_snapshot!("json", json::render(&report));
    }

    #[test]
    fn an_observed_deadlock_is_a_finding_a_replay_of_the_same_lines_joins() {
        use ilgen_analysis::observed::LostWakeup;
        use ilgen_trace::replay::{BlockedThread, DeadlockReport};
        let ctx = Context {
            binary: None,
            forks: [(1, (0, 9))].into(),
            unjoined: Default::default(),
        };
        let blocked = |tid, op: OpKind, site| BlockedThread {
            thread: ThreadRef {
                tid,
                parent: Some(0),
                child_index: 0,
            },
            op,
            site: Some(site),
            object: 0xc0,
            waits_for: vec![],
            holds: vec![],
        };
        let d = DeadlockReport {
            threads: vec![blocked(0, OpKind::Join, 20), blocked(1, OpKind::Wake, 8)],
            cycle: vec![],
        };
        let o = Observed {
            deadlock: d.clone(),
            lost_wakeups: vec![LostWakeup {
                cond: 0xc0,
                waiter: 1,
                wait_site: 8,
                signaller: 0,
                signal_site: 16,
                broadcast: false,
            }],
        };
        let mut report = Report::new(&ctx, "/bin/a", "/t");
        report.observe(&ctx, &o, 7);
        assert!(report.confirmed());
        let text = text::render(&report, false);
        assert!(
            text.contains("WARNING: ilgen: deadlock (observed in the recorded run) (pid=7)"),
            "{text}"
        );
        assert!(text.contains("  Thread T1 is blocked in wait of 0xc0:\n    #0 site 8\n"));
        assert!(text.contains("Main thread signalled 0xc0 before thread T1 waited on it"));
        assert!(
            text.contains("    signal at site 16\n    wait at site 8\n"),
            "{text}"
        );
        assert!(text.contains("Observed: the recorded run (pid=7) ended with these threads"));
        assert!(text.contains("ilgen: 1 deadlock(s) observed in the recorded run\n"));

        // A replay that confirms the same blocked lines joins the observed finding.
        let mut r = run(ResultKind::Deadlock, &[]);
        if let Ok(out) = &mut r.outcome {
            out.deadlock = Some(d);
        }
        add(&mut report, &ctx, 1, &candidate([5, 6]), &r);
        assert_eq!(report.findings.len(), 1);
        let Finding::Deadlock(f) = &report.findings[0] else {
            panic!("a deadlock")
        };
        assert!(f.observed);
        assert_eq!(f.candidates, vec![1]);
        assert_eq!(f.replay_dir, "/t/replay-1");
        assert_eq!(f.blocked[1].op, OpKind::Wait);
        let json: serde_json::Value = serde_json::from_str(&json::render(&report)).unwrap();
        assert_eq!(json["counts"]["observed_deadlocks"], 1);
        assert_eq!(json["findings"][0]["observed"], true);
        assert_eq!(json["findings"][0]["lost_wakeups"][0]["signal"]["site"], 16);
    }
}
