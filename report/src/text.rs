//! The text report, shaped like ThreadSanitizer's: one block per confirmed finding between
//! `==================` lines, `WARNING: ilgen: ...`, stack-like `#0 function file:line:col`
//! lines (`#0` in the user's code when known, `#1`... the library code inlined there; a frame of
//! uninstrumented code `function (libstdc++.so.6+0xd46d0)`; each access with the locks it was
//! made holding, `holding 'm' (0x...), acquired at:` and that stack), the
//! object, the threads' creation sites, the schedule that exposed it and a `SUMMARY` line; then
//! the counts of every verdict (and of the fallback schedules replayed, confirming and not
//! replayed, when there were fallbacks; and of the candidates not replayed because an earlier one
//! at their two sites confirmed their race), and with `show_all` every unconfirmed candidate with
//! its reason and every candidate not replayed with the one that confirmed its race (a fallback
//! naming the candidate it stands in for)
//! and every thread never joined when the program exited. A finding whose thread was never joined
//! says so under the thread's creation site. A deadlock the recorded run ended in says so, with
//! its lost wakeups, and the schedule of the replay that confirmed it too, if one did.
//! A report of several runs also lists the runs, says of each finding in which runs it was
//! predicted and how to replay it against its run's trace, and names the run of each unconfirmed
//! candidate. Findings a suppressions file hid are counted by rule after the counts
//! (`ilgen: suppressed: N (by pattern race:worker)`), and with `show_all` listed one a line. An
//! atomicity violation shows where its transaction began, e1, f and e2 and its pattern.

use std::fmt::Write as _;

use ilgen_trace::{site_text, OpKind, ThreadId};

use crate::{
    Access, Atomicity, Counts, Deadlock, Finding, Held, Location, Object, Race, Report, Run,
    Schedule, ScheduleStep, ThreadInfo,
};

const RULE: &str = "==================";

pub fn render(report: &Report, show_all: bool) -> String {
    let mut out = String::new();
    // One run needs no run numbers: its report reads as before multi-run detection existed.
    let runs = (report.runs.len() > 1).then_some(report.runs.as_slice());
    for f in &report.findings {
        match f {
            Finding::Race(r) => race(&mut out, r, runs),
            Finding::Deadlock(d) => deadlock(&mut out, d, runs),
            Finding::Atomicity(a) => atomicity(&mut out, a, runs),
        }
    }
    for (i, r) in runs.unwrap_or_default().iter().enumerate() {
        let _ = write!(out, "ilgen: run {}: {}", i + 1, r.trace_dir);
        let _ = match r.chaos_seed {
            Some(seed) => writeln!(out, " (chaos seed {seed})"),
            None => writeln!(out),
        };
    }
    let c = &report.counts;
    let _ = writeln!(
        out,
        "ilgen: {} candidate(s) replayed: {} confirmed race(s), {} confirmed deadlock(s), {} \
         no error, {} infeasible, {} failed",
        c.candidates, c.confirmed_races, c.confirmed_deadlocks, c.no_error, c.infeasible, c.failed
    );
    if c.fallbacks_replayed + c.fallbacks_skipped > 0 {
        let _ = writeln!(out, "ilgen: {}", fallbacks_text(c));
    }
    if c.not_replayed > 0 {
        let _ = writeln!(
            out,
            "ilgen: {} candidate(s) not replayed: an earlier candidate at the same two sites \
             confirmed their race{}",
            c.not_replayed,
            if show_all {
                ""
            } else {
                "; --show-all lists them"
            }
        );
    }
    if c.atomicity_candidates > 0 {
        let _ = writeln!(
            out,
            "ilgen: {} atomicity violation candidate(s): {} confirmed",
            c.atomicity_candidates, c.confirmed_atomicity
        );
    }
    if c.observed_deadlocks > 0 {
        let _ = writeln!(
            out,
            "ilgen: {} deadlock(s) observed in the recorded run",
            c.observed_deadlocks
        );
    }
    let _ = writeln!(
        out,
        "ilgen: {} finding(s) confirmed (deduplicated by source lines)",
        report.findings.len()
    );
    // Always said: a suppression must never make a finding disappear without a trace.
    for (rule, n) in report.suppressed_by_rule() {
        let _ = writeln!(out, "ilgen: suppressed: {n} (by pattern {rule})");
    }
    if show_all {
        for s in &report.suppressed {
            let (what, sites) = match &s.finding {
                Finding::Race(r) => (r.title(), vec![&r.current.location, &r.previous.location]),
                Finding::Deadlock(d) => {
                    ("deadlock", d.blocked.iter().map(|b| &b.location).collect())
                }
                Finding::Atomicity(a) => (
                    "atomicity violation",
                    vec![&a.e1.location, &a.f.location, &a.e2.location],
                ),
            };
            let sites: Vec<String> = sites.into_iter().map(short).collect();
            let _ = writeln!(
                out,
                "suppressed {what} at {} by {}",
                sites.join(" and "),
                s.suppression
            );
        }
        for u in &report.unconfirmed {
            candidate_at(&mut out, runs, (u.run, u.candidate, u.fallback_of));
            let sites: Vec<String> = u.locations.iter().map(short).collect();
            let _ = writeln!(
                out,
                ": {} at {}: {}: {}",
                u.predicted,
                sites.join(" and "),
                u.verdict.text(),
                u.reason
            );
        }
        for n in &report.not_replayed {
            candidate_at(&mut out, runs, (n.run, n.candidate, n.fallback_of));
            let sites: Vec<String> = n.locations.iter().map(short).collect();
            let _ = writeln!(
                out,
                ": race at {}: not replayed: candidate {} confirmed the race at these two sites",
                sites.join(" and "),
                n.confirmed_by
            );
        }
        for t in &report.unjoined {
            never_joined(&mut out, "", t);
        }
    } else if !report.unconfirmed.is_empty() {
        let _ = writeln!(
            out,
            "ilgen: {} candidate(s) not confirmed; --show-all lists them with the reason",
            report.unconfirmed.len()
        );
    }
    out
}

/// `run R candidate N (fallback of M)` of a candidate `(run, number, fallback_of)`, the run only
/// in a report of several `runs`.
fn candidate_at(
    out: &mut String,
    runs: Option<&[Run]>,
    (run, n, of): (usize, usize, Option<usize>),
) {
    if runs.is_some() {
        let _ = write!(out, "run {run} ");
    }
    let _ = write!(out, "candidate {n}");
    if let Some(of) = of {
        let _ = write!(out, " (fallback of {of})");
    }
}

/// What became of the fallback schedules: replayed, of those confirmed (a finding the first
/// schedule of their two sites did not confirm), and not replayed.
pub fn fallbacks_text(c: &Counts) -> String {
    format!(
        "fallback schedules: {} replayed, {} confirmed, {} not replayed (a replay at their two \
         sites confirmed first)",
        c.fallbacks_replayed, c.fallbacks_confirmed, c.fallbacks_skipped
    )
}

fn race(out: &mut String, r: &Race, runs: Option<&[Run]>) {
    let _ = writeln!(out, "{RULE}");
    let _ = writeln!(out, "WARNING: ilgen: {} (pid={})", r.title(), r.pid);
    access(out, &r.current, "");
    let _ = writeln!(out);
    access(out, &r.previous, "Previous ");
    let _ = writeln!(out);
    location(out, r);
    let _ = writeln!(out);
    threads(out, &r.threads);
    if let Some(all) = runs {
        provenance(out, all, r.run, &r.runs, &r.candidates);
    }
    schedule(out, &r.schedule, &r.candidates, &r.replay_dir);
    let _ = writeln!(
        out,
        "SUMMARY: ilgen: {} {}",
        r.title(),
        summary(&r.current.location)
    );
    let _ = writeln!(out, "{RULE}");
}

/// `Location is ...`: the global, else the heap block and its allocation's stack, as TSan says it.
fn location(out: &mut String, r: &Race) {
    if let Some(o) = &r.object {
        let _ = writeln!(out, "  Location is {} at {:#x}.", global(o), r.current.addr);
    } else if let Some(b) = &r.heap_block {
        let _ = writeln!(
            out,
            "  Location is heap block of size {} at {:#x} allocated by {} at:",
            b.size,
            b.address,
            thread_name(b.thread)
        );
        frames(out, "", &b.location, &b.stack);
    } else {
        let _ = writeln!(
            out,
            "  Location is not a global variable (heap, stack or thread-local) at {:#x}.",
            r.current.addr
        );
    }
}

fn atomicity(out: &mut String, a: &Atomicity, runs: Option<&[Run]>) {
    let _ = writeln!(out, "{RULE}");
    let _ = writeln!(out, "WARNING: ilgen: atomicity violation (pid={})", a.pid);
    let _ = writeln!(out, "  Transaction of {} began at:", thread_name(a.e1.tid));
    frame(out, &a.transaction);
    let _ = writeln!(out);
    for (role, x) in [
        ("e1, in the transaction", &a.e1),
        ("f, another thread's, between e1 and e2", &a.f),
        ("e2, in the same transaction", &a.e2),
    ] {
        let _ = writeln!(
            out,
            "  {} of size {} at {:#x} by {} ({role}):",
            capital(x.kind.text()),
            x.size,
            x.addr,
            thread_name(x.tid)
        );
        frame(out, &x.location);
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "  Pattern {}: {}.",
        a.pattern.text(),
        a.pattern.meaning()
    );
    if let Some(o) = &a.object {
        let _ = writeln!(out, "  Location is {} at {:#x}.", global(o), a.e1.addr);
    }
    let _ = writeln!(out);
    threads(out, &a.threads);
    if let Some(all) = runs {
        provenance(out, all, a.run, &a.runs, &a.candidates);
    }
    schedule(out, &a.schedule, &a.candidates, &a.replay_dir);
    let _ = writeln!(
        out,
        "SUMMARY: ilgen: atomicity violation {}",
        summary(&a.e1.location)
    );
    let _ = writeln!(out, "{RULE}");
}

fn deadlock(out: &mut String, d: &Deadlock, runs: Option<&[Run]>) {
    let _ = writeln!(out, "{RULE}");
    let what = match (d.cycle.is_empty(), d.observed) {
        (true, false) => "deadlock",
        (false, false) => "lock-order-inversion (deadlock)",
        (true, true) => "deadlock (observed in the recorded run)",
        (false, true) => "lock-order-inversion (deadlock observed in the recorded run)",
    };
    let _ = writeln!(out, "WARNING: ilgen: {what} (pid={})", d.pid);
    if !d.cycle.is_empty() {
        let mut cycle: Vec<String> = d.cycle.iter().map(|&t| thread_name(t)).collect();
        cycle.push(thread_name(d.cycle[0]));
        let _ = writeln!(
            out,
            "  Cycle of threads waiting for locks: {}",
            cycle.join(" => ")
        );
        let _ = writeln!(out);
    }
    for b in &d.blocked {
        let waits: Vec<String> = b.waits_for.iter().map(|&t| thread_name(t)).collect();
        let who = capital(&thread_name(b.tid));
        // A join waits for a thread, not an object; a blocked wake is the condition wait itself.
        if b.op == OpKind::Join && !waits.is_empty() {
            let _ = write!(out, "  {who} is blocked in join of {}", waits.join(", "));
        } else {
            let _ = write!(
                out,
                "  {who} is blocked in {} of {}",
                b.op,
                object(b.object, &b.object_name)
            );
            if !waits.is_empty() {
                let _ = write!(out, ", held by {}", waits.join(", "));
            }
        }
        let _ = writeln!(out, ":");
        frames(out, "", &b.location, &b.stack);
        holding(out, &b.holds);
        let _ = writeln!(out);
    }
    for w in &d.lost_wakeups {
        let _ = writeln!(
            out,
            "  Lost wakeup: {} {} {} before {} waited on it, and the wait does not re-check a \
             predicate in a loop: the wakeup was spent before the wait began.",
            capital(&thread_name(w.signaller)),
            if w.broadcast {
                "broadcast"
            } else {
                "signalled"
            },
            object(w.cond, &w.cond_name),
            thread_name(w.waiter)
        );
        let _ = writeln!(out, "    signal at {}", summary(&w.signal));
        let _ = writeln!(out, "    wait at {}", summary(&w.wait));
        let _ = writeln!(out);
    }
    threads(out, &d.threads);
    if let Some(all) = runs {
        provenance(out, all, d.run, &d.runs, &d.candidates);
    }
    if d.candidates.is_empty() {
        let _ = writeln!(
            out,
            "  Observed: the recorded run (pid={}) ended with these threads blocked.",
            d.pid
        );
        let _ = writeln!(out);
    } else {
        schedule(out, &d.schedule, &d.candidates, &d.replay_dir);
    }
    let first = d.blocked.first().map(|b| summary(&b.location));
    let _ = writeln!(
        out,
        "SUMMARY: ilgen: {} {}",
        if d.cycle.is_empty() {
            "deadlock"
        } else {
            "lock-order-inversion"
        },
        first.unwrap_or_default()
    );
    let _ = writeln!(out, "{RULE}");
}

/// `  Predicted in runs 1, 3 (of 5); replayed with run 1's schedule: ilgen replay DIR:N`.
fn provenance(out: &mut String, all: &[Run], run: usize, runs: &[usize], candidates: &[usize]) {
    let numbers: Vec<String> = runs.iter().map(|n| n.to_string()).collect();
    let _ = write!(
        out,
        "  Predicted in run{} {} (of {}); ",
        if runs.len() == 1 { "" } else { "s" },
        numbers.join(", "),
        all.len()
    );
    let dir = run
        .checked_sub(1)
        .and_then(|i| all.get(i))
        .map_or("?", |r| r.trace_dir.as_str());
    let _ = match candidates.first() {
        Some(n) => writeln!(
            out,
            "replayed with run {run}'s schedule: ilgen replay {dir}:{n}"
        ),
        None => writeln!(out, "observed in run {run} ({dir})"),
    };
    let _ = writeln!(out);
}

fn access(out: &mut String, a: &Access, previous: &str) {
    let kind = a.kind.text();
    let kind = if previous.is_empty() {
        capital(kind)
    } else {
        kind.to_owned()
    };
    let _ = writeln!(
        out,
        "  {previous}{kind} of size {} at {:#x} by {}:",
        a.size,
        a.addr,
        thread_name(a.tid)
    );
    frames(out, "", &a.location, &a.stack);
    holding(out, &a.locks);
}

fn frame(out: &mut String, l: &Location) {
    frames(out, "", l, &[])
}

/// `    #0 function /abs/file.c:21:4`, then `#1`, `#2`, ... for the library frames inlined at that
/// line, from its call inward, then the same for each frame of `stack` (its callers), numbered
/// on; a frame of uninstrumented code is `function (module+0xoffset)`, one the binary does not
/// name its site id.
fn frames(out: &mut String, indent: &str, l: &Location, stack: &[Location]) {
    let mut n = 0;
    for l in std::iter::once(l).chain(stack) {
        if let Some(native) = &l.native {
            let _ = writeln!(out, "{indent}    #{n} {}", native.text());
            n += 1;
            continue;
        }
        match &l.source {
            Some(s) => {
                for f in std::iter::once(s.as_ref()).chain(&s.inlined) {
                    let _ = writeln!(out, "{indent}    #{n} {} {}", f.function, f.position(true));
                    n += 1;
                }
            }
            None => {
                let _ = match l.site {
                    Some(site) => writeln!(out, "{indent}    #{n} site {site}"),
                    None => writeln!(out, "{indent}    #{n} <uninstrumented code>"),
                };
                n += 1;
            }
        }
    }
}

/// `    holding 'm' (0x...), acquired at:` and where, for each lock held.
fn holding(out: &mut String, holds: &[Held]) {
    for h in holds {
        let _ = writeln!(
            out,
            "    holding {}, acquired at:",
            object(h.object, &h.object_name)
        );
        frames(out, "  ", &h.location, &h.stack);
    }
}

fn threads(out: &mut String, threads: &[ThreadInfo]) {
    for t in threads {
        let (Some(parent), Some(at)) = (t.parent, &t.created_at) else {
            continue;
        };
        let _ = writeln!(
            out,
            "  Thread T{} (tid={}) created by {} at:",
            t.tid,
            t.tid,
            thread_name(parent)
        );
        frames(out, "", at, &t.created_stack);
        if t.never_joined {
            never_joined(out, "  ", t);
        }
        let _ = writeln!(out);
    }
}

/// `thread T3 was never joined (created at file.c:30)`.
fn never_joined(out: &mut String, indent: &str, t: &ThreadInfo) {
    let _ = match &t.created_at {
        Some(at) => writeln!(
            out,
            "{indent}thread T{} was never joined (created at {})",
            t.tid,
            short(at)
        ),
        None => writeln!(out, "{indent}thread T{} was never joined", t.tid),
    };
}

fn schedule(out: &mut String, schedule: &Schedule, candidates: &[usize], dir: &str) {
    let numbers: Vec<String> = candidates.iter().map(|n| n.to_string()).collect();
    let _ = writeln!(
        out,
        "  Schedule that exposed it (candidate {}, replayed in {dir}):",
        numbers.join(", ")
    );
    // The steps that matter are the last before the finding (the report keeps only those);
    // `ilgen replay` runs them all.
    let first = schedule.first_shown();
    if first > 1 {
        let _ = writeln!(
            out,
            "    1-{}. (steps not listed; `ilgen replay` runs them)",
            first - 1
        );
    }
    let steps = &schedule.last;
    let mut i = 0;
    while i < steps.len() {
        let run = steps[i..]
            .iter()
            .take_while(|s| s.peer.is_none() && same_place(s, &steps[i]))
            .count();
        if run >= FOLD {
            let mut ops: Vec<String> = Vec::new();
            for s in &steps[i..i + run] {
                let op = s.op.to_string();
                if !ops.contains(&op) {
                    ops.push(op);
                }
            }
            let what = format!(
                "T{} {}{}",
                steps[i].tid,
                ops.join("/"),
                object_text(&steps[i])
            );
            let _ = writeln!(
                out,
                "    {}-{}. {what}{} ({run} steps)",
                first + i,
                first + i + run - 1,
                at_text(&steps[i].location)
            );
            i += run;
            continue;
        }
        let s = &steps[i];
        let mut what = format!("T{} {}", s.tid, s.op);
        if let Some(p) = s.peer {
            let _ = write!(what, " T{p}");
        }
        let _ = writeln!(
            out,
            "    {}. {what}{}{}",
            first + i,
            object_text(s),
            at_text(&s.location)
        );
        i += 1;
    }
    if let Some(left) = &schedule.left {
        let _ = writeln!(
            out,
            "  The replay left this schedule at {left}; the threads ran unscheduled from there."
        );
    }
    let _ = writeln!(out);
}

/// Steps one thread takes in a row on one object at one place (libstdc++'s start-up once-locks,
/// a loop's lock and unlock) fold into one line once they are this many: the reader needs where
/// the thread was and for how many steps, not each turn.
const FOLD: usize = 4;

fn same_place(a: &ScheduleStep, b: &ScheduleStep) -> bool {
    a.tid == b.tid && a.object == b.object && a.location == b.location
}

/// ` 'name'`, ` 'name'+8` or ` 0x... (recorded address)`: schedule objects carry the recorded
/// run's addresses, so they are named, never mixed with the replay's.
fn object_text(s: &ScheduleStep) -> String {
    match (&s.object_name, s.object) {
        (Some(o), _) if o.offset == 0 => format!(" '{}'", o.name),
        (Some(o), _) => format!(" '{}'+{}", o.name, o.offset),
        (None, Some(addr)) => format!(" {addr:#x} (recorded address)"),
        (None, None) => String::new(),
    }
}

/// ` at file.c:30`, or nothing for a step with no place.
fn at_text(l: &Location) -> String {
    match (&l.source, &l.native) {
        (None, None) => String::new(),
        _ => format!(" at {}", short(l)),
    }
}

fn thread_name(tid: ThreadId) -> String {
    if tid == 0 {
        "main thread".into()
    } else {
        format!("thread T{tid}")
    }
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn global(o: &Object) -> String {
    if o.offset == 0 {
        format!("global '{}' of size {}", o.name, o.size)
    } else {
        format!(
            "{} bytes inside global '{}' of size {}",
            o.offset, o.name, o.size
        )
    }
}

fn object(addr: u64, name: &Option<Object>) -> String {
    match name {
        Some(o) if o.offset == 0 => format!("'{}' ({addr:#x})", o.name),
        Some(o) => format!("'{}'+{} ({addr:#x})", o.name, o.offset),
        None => format!("{addr:#x}"),
    }
}

/// `/abs/file.c:30 in main`, as TSan's SUMMARY line.
fn summary(l: &Location) -> String {
    match (&l.source, &l.native) {
        (Some(s), _) => format!("{} in {}", s.position(false), s.function),
        (None, Some(n)) => n.text(),
        (None, None) => site_text(l.site),
    }
}

/// `file.c:30` for the one-line listings.
fn short(l: &Location) -> String {
    match (&l.source, &l.native) {
        (Some(s), _) => s.position(false),
        (None, Some(n)) => n.text(),
        (None, None) => site_text(l.site),
    }
}
