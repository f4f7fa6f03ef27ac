//! Replay's reports: races, the deadlock, the divergence, and the outcome file.
//!
//! Takes findings from `shadow` (via the access hooks), `deadlock` (the watchdog) and `sync` (an
//! operation the gate did not expect); gives, for each, first [`__ilgen_report_hook`] (on the
//! thread that found it: for a race, the thread making the second access, so that a debugger
//! stopped there shows the racing line with `up`), then TSan-shaped text on stderr, then
//! `replay-outcome.json` (`ilgen_trace::replay::Outcome`) rewritten with everything found so far,
//! durably (written, synced and renamed into place before the program goes on), so that a run
//! that hangs or crashes later still leaves its races on disk: the verdict is final. A race is
//! reported once per pair of sites.
//!
//! Sites are ids into the binary's site table and threads are recorded tids: the runtime cannot
//! name source lines cheaply; `ilgen` renders the outcome with `file:line`.
//!
//! How the replay ends: a deadlock writes the outcome and exits with `EXIT_DEADLOCK`, a refused
//! schedule with `EXIT_BAD_SCHEDULE`, a program the watchdog stops after its verdict was written
//! ([`stopped`]) with `EXIT_STOPPED`; a divergence writes the outcome and, where the program can
//! go on unscheduled ([`left_schedule`]), lets it (races still ahead are real and reported),
//! else exits with `EXIT_DIVERGED`; otherwise the program's own exit runs [`at_exit`], which
//! writes the final outcome (diverged, with `EXIT_DIVERGED`, when the program left or ended
//! before the schedule and nothing was found).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::c_int;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use ilgen_trace::replay::{
    DeadlockReport, Divergence, Outcome, RaceAccess, RaceReport, ResultKind, StackFrame,
    EXIT_BAD_SCHEDULE, EXIT_DEADLOCK, EXIT_DIVERGED, EXIT_STOPPED, OUTCOME_FILE, OUTCOME_VERSION,
};
use ilgen_trace::{site_text, AccessKind, SiteId, NO_SITE};

use crate::replay;
use crate::replay::gate::Replay;
use crate::replay::shadow::Cell;

/// `kind` of [`__ilgen_report_hook`].
pub const HOOK_RACE: c_int = 1;
pub const HOOK_DEADLOCK: c_int = 2;
pub const HOOK_DIVERGED: c_int = 3;
pub const HOOK_ATOMICITY: c_int = 4;

/// Called on every report before it is printed: `break __ilgen_report_hook` in gdb stops on the
/// thread that found it. `site` and `other_site` are the two accesses' sites (race), or the first
/// blocked thread's and `NO_SITE` (deadlock), or the step's (divergence), or e2's and `NO_SITE`
/// (atomicity violation); `addr` the raced address.
#[no_mangle]
#[inline(never)]
pub extern "C" fn __ilgen_report_hook(kind: c_int, site: u32, other_site: u32, addr: u64) {
    // Keeps the call and its arguments alive in optimized builds.
    crate::arch::keep_alive(kind, site, other_site, addr);
}

/// Pairs of sites already reported, unordered.
#[derive(Default)]
pub(crate) struct PairSet(BTreeSet<(SiteId, SiteId)>);

impl PairSet {
    /// Whether `(a, b)` (or `(b, a)`) is new; remembers it.
    pub fn first(&mut self, a: SiteId, b: SiteId) -> bool {
        self.0.insert((a.min(b), a.max(b)))
    }
}

struct Findings {
    pairs: PairSet,
    races: Vec<RaceReport>,
    deadlock: Option<DeadlockReport>,
    divergence: Option<Divergence>,
}

static FINDINGS: Mutex<Findings> = Mutex::new(Findings {
    pairs: PairSet(BTreeSet::new()),
    races: Vec::new(),
    deadlock: None,
    divergence: None,
});

/// Set once the replay stops (a divergence or deadlock being reported): one report ends it.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Whether the calling thread is the one to end the replay (the first to ask).
fn stop() -> bool {
    !STOPPING.swap(true, Ordering::AcqRel)
}

fn findings() -> std::sync::MutexGuard<'static, Findings> {
    FINDINGS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The access of cell `c`, with the stack and the locks its thread had when it made it.
fn access(c: &Cell) -> RaceAccess {
    RaceAccess {
        thread: replay::thread::thread_ref(c.tid()),
        kind: c.kind,
        addr: c.addr,
        size: c.size,
        site: c.site,
        free: c.free,
        unmap: c.unmap,
        destroy: c.destroy,
        stack: replay::stack::frames(c.stack),
        locks: replay::owners::snapshot(c.locks),
    }
}

/// `cur` (by the calling thread) races with the earlier `prev`.
/// The schedule's watched accesses ran as e1 and f, and this thread is about to make e2 at `site`:
/// the hook (a debugger stops before e2, the other thread's write already made), then the
/// outcome, final as for a race.
pub(crate) fn atomicity(site: SiteId) {
    __ilgen_report_hook(HOOK_ATOMICITY, site, NO_SITE, 0);
    if let Some(r) = replay::gate::get() {
        write(&r.outcome_dir, &outcome(&findings(), r));
    }
}

pub(crate) fn race(prev: &Cell, cur: &Cell) {
    if !findings().pairs.first(prev.site, cur.site) {
        return;
    }
    let report = RaceReport {
        current: access(cur),
        previous: access(prev),
        heap_block: replay::blocks::containing(cur.addr),
    };
    let text = race_text(&report);
    findings().races.push(report);
    __ilgen_report_hook(HOOK_RACE, cur.site, prev.site, cur.addr);
    crate::runtime::say(&text);
    write_current();
}

fn kind_text(a: &RaceAccess) -> &'static str {
    if a.unmap {
        return "unmap";
    }
    if a.free {
        return "free";
    }
    if a.destroy {
        return "destroy";
    }
    match a.kind {
        AccessKind::Read => "read",
        AccessKind::Write => "write",
        AccessKind::AtomicRead => "atomic read",
        AccessKind::AtomicWrite => "atomic write",
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The race as TSan prints one, with site ids for stack frames.
pub(crate) fn race_text(r: &RaceReport) -> String {
    let (c, p) = (&r.current, &r.previous);
    let mut s = String::from("==================\n");
    let what = if r.on_unmapped_memory() {
        "data race on unmapped memory"
    } else if r.on_freed_memory() {
        "data race on freed memory"
    } else if r.on_destroyed_object() {
        "data race on destroyed sync object"
    } else {
        "data race"
    };
    let _ = writeln!(s, "WARNING: ilgen: {what} (pid={})", std::process::id());
    for (a, previous) in [(c, ""), (p, "Previous ")] {
        let kind = if previous.is_empty() {
            capitalized(kind_text(a))
        } else {
            kind_text(a).to_owned()
        };
        let _ = writeln!(
            s,
            "  {previous}{kind} of size {} at {:#x} by thread T{}:",
            a.size, a.addr, a.thread.tid
        );
        // The sites only: `ilgen` names the frames of uninstrumented code (and leaves out the
        // runtime's own).
        let sites = a.stack.iter().filter(|f| matches!(f, StackFrame::Site(_)));
        let _ = writeln!(s, "    #0 site {}", a.site);
        for (i, f) in sites.enumerate() {
            let _ = writeln!(s, "    #{} {f}", i + 1);
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "SUMMARY: ilgen: {what} site {} (T{}) vs site {} (T{})",
        c.site, c.thread.tid, p.site, p.thread.tid
    );
    s.push_str("==================");
    s
}

/// The deadlock as TSan would print one, with site ids.
pub(crate) fn deadlock_text(d: &DeadlockReport) -> String {
    let mut s = String::from("==================\n");
    let what = if d.cycle.is_empty() {
        "deadlock (every thread blocked)"
    } else {
        "deadlock (lock cycle)"
    };
    let _ = writeln!(s, "WARNING: ilgen: {what} (pid={})", std::process::id());
    for t in &d.threads {
        let _ = write!(
            s,
            "  Thread T{} is blocked in {} of {:#x} at {}",
            t.thread.tid,
            t.op,
            t.object,
            site_text(t.site)
        );
        if !t.waits_for.is_empty() {
            let w: Vec<String> = t.waits_for.iter().map(|w| format!("T{w}")).collect();
            let _ = write!(s, ", waiting for {}", w.join(", "));
        }
        s.push('\n');
        for h in &t.holds {
            let _ = writeln!(
                s,
                "    T{} holds {:#x}, acquired at {}",
                t.thread.tid,
                h.object,
                site_text(h.site)
            );
        }
    }
    if !d.cycle.is_empty() {
        let mut c: Vec<String> = d.cycle.iter().map(|t| format!("T{t}")).collect();
        c.push(c[0].clone());
        let _ = writeln!(s, "  Cycle: {}", c.join(" -> "));
    }
    let sites: Vec<String> = d
        .threads
        .iter()
        .map(|t| format!("T{} {} at {}", t.thread.tid, t.op, site_text(t.site)))
        .collect();
    let _ = writeln!(s, "\nSUMMARY: ilgen: deadlock {}", sites.join(", "));
    s.push_str("==================");
    s
}

fn outcome(f: &Findings, r: &Replay) -> Outcome {
    let total = r.plan.steps.len();
    let done = r.cursor().min(total);
    let watched = r.plan.watched();
    let (step_stacks, stacks) = step_stacks(r);
    let result = if f.deadlock.is_some() {
        ResultKind::Deadlock
    } else if !f.races.is_empty() {
        ResultKind::Race
    } else if ilgen_trace::replay::watched_in_order(&watched) {
        ResultKind::Atomicity
    } else if f.divergence.is_some() || done < total {
        ResultKind::Diverged
    } else {
        ResultKind::NoError
    };
    Outcome {
        format_version: OUTCOME_VERSION,
        build_id: r.build_id.clone(),
        schedule: r.schedule_path.clone(),
        load_base: crate::exe::load_base(),
        result,
        schedule_followed: done == total && f.divergence.is_none(),
        steps_done: done as u32,
        steps_total: total as u32,
        races: f.races.clone(),
        deadlock: f.deadlock.clone(),
        divergence: f.divergence.clone(),
        watched,
        created: replay::thread::creation_stacks(),
        step_stacks,
        stacks,
    }
}

/// The stack of each step taken, as `Outcome::step_stacks` and `Outcome::stacks` have them.
fn step_stacks(r: &Replay) -> (Vec<Option<u32>>, Vec<Vec<StackFrame>>) {
    let mut index: BTreeMap<replay::stack::StackId, u32> = BTreeMap::new();
    let mut stacks = Vec::new();
    let per_step = (0..r.plan.steps.len())
        .map(|p| {
            let id = r.step_stack(p)?;
            Some(*index.entry(id).or_insert_with(|| {
                stacks.push(replay::stack::frames(id));
                stacks.len() as u32 - 1
            }))
        })
        .collect::<Vec<_>>();
    if stacks.is_empty() {
        return (Vec::new(), stacks);
    }
    (per_step, stacks)
}

/// Writes `dir/replay-outcome.json` through a temporary file, synced before and after the rename,
/// so a reader never sees half of it and a crash or kill right after loses nothing.
fn write(dir: &Path, o: &Outcome) {
    use std::io::Write as _;
    let path = dir.join(OUTCOME_FILE);
    let tmp = dir.join(format!("{OUTCOME_FILE}.{}.tmp", std::process::id()));
    let done = std::fs::create_dir_all(dir)
        .and_then(|_| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all((o.to_json() + "\n").as_bytes())?;
            f.sync_all()
        })
        .and_then(|_| std::fs::rename(&tmp, &path))
        .and_then(|_| std::fs::File::open(dir)?.sync_all());
    if let Err(e) = done {
        crate::runtime::say(&format!("ilgen: failed to write {}: {e}", path.display()));
    }
}

/// Rewrites the outcome with what is known now (under the findings lock: one writer at a time).
fn write_current() {
    let Some(r) = replay::gate::get() else { return };
    let f = findings();
    write(&r.outcome_dir, &outcome(&f, r));
}

/// Whether the outcome on disk is final: a race was confirmed, or the replay left its schedule
/// ([`left_schedule`]).
pub(crate) fn has_verdict() -> bool {
    let f = findings();
    !f.races.is_empty() || f.divergence.is_some()
}

/// The program completed no sync operation for `quiet_ms` after its verdict was written
/// ([`has_verdict`]): the outcome, already final, is written once more and the process ends with
/// `EXIT_STOPPED` (the runner then kills the rest of its process group).
pub(crate) fn stopped(quiet_ms: u64) -> ! {
    let Some(r) = replay::gate::get() else {
        exit(EXIT_STOPPED)
    };
    if !stop() {
        park();
    }
    let why = if findings().races.is_empty() {
        "it left the schedule"
    } else {
        "a race was confirmed"
    };
    crate::runtime::say(&format!(
        "ilgen: replay stopped: {why} and the program completed no sync operation for \
         {quiet_ms} ms since (exit status {EXIT_STOPPED})"
    ));
    let f = findings();
    write(&r.outcome_dir, &outcome(&f, r));
    exit(EXIT_STOPPED)
}

/// Ends the process with `status`, after the program's buffered output.
fn exit(status: i32) -> ! {
    // SAFETY: flushing every stdio stream, then leaving without running the program's exit code
    // (other threads are still running it, or blocked forever).
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(status)
    }
}

/// Another thread is ending the replay: this one waits for the process to go.
fn park() -> ! {
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// The schedule cannot be followed past `d`: the divergence is on disk at once (the verdict, if
/// nothing else is found), and the program goes on unscheduled, every thread free as after the
/// last step, so that races still ahead (a server's shutdown, a worker's last block) are met by
/// the detector as in any run; at exit the outcome holds them and the divergence. Ends the
/// replay instead ([`diverged`]) while a thread the runtime did not see created lives.
pub(crate) fn left_schedule(d: Divergence) {
    let Some(r) = replay::gate::get() else {
        exit(EXIT_DIVERGED)
    };
    let threads = replay::thread::all();
    if replay::thread::orphan_lives(threads.iter().map(|t| &**t), r.plan.main_tid()) {
        diverged(d);
    }
    let mut f = findings();
    if f.divergence.is_some() {
        return;
    }
    let site = d.expected.as_ref().and_then(|s| s.site).unwrap_or(NO_SITE);
    __ilgen_report_hook(HOOK_DIVERGED, site, u32::MAX, 0);
    crate::runtime::say(&format!(
        "ilgen: replay left the schedule: {}; the program goes on unscheduled",
        d.reason
    ));
    f.divergence = Some(d);
    write(&r.outcome_dir, &outcome(&f, r));
    drop(f);
    r.abandon();
}

pub(crate) fn diverged(d: Divergence) -> ! {
    let Some(r) = replay::gate::get() else {
        exit(EXIT_DIVERGED)
    };
    if !stop() {
        park();
    }
    let site = d.expected.as_ref().and_then(|s| s.site).unwrap_or(NO_SITE);
    __ilgen_report_hook(HOOK_DIVERGED, site, u32::MAX, 0);
    crate::runtime::say(&format!(
        "ilgen: replay diverged: {} (exit status {EXIT_DIVERGED})",
        d.reason
    ));
    let mut f = findings();
    f.divergence = Some(d);
    write(&r.outcome_dir, &outcome(&f, r));
    exit(EXIT_DIVERGED)
}

pub(crate) fn deadlock(d: DeadlockReport) -> ! {
    let Some(r) = replay::gate::get() else {
        exit(EXIT_DEADLOCK)
    };
    if !stop() {
        park();
    }
    let site = d.threads.first().and_then(|t| t.site).unwrap_or(NO_SITE);
    __ilgen_report_hook(HOOK_DEADLOCK, site, u32::MAX, 0);
    crate::runtime::say(&deadlock_text(&d));
    let mut f = findings();
    f.deadlock = Some(d);
    write(&r.outcome_dir, &outcome(&f, r));
    exit(EXIT_DEADLOCK)
}

/// The schedule cannot be replayed: one message, an outcome saying why (when `dir` can take it),
/// and `EXIT_BAD_SCHEDULE` before the program runs.
pub(crate) fn refused(dir: &Path, build_id: &str, schedule: &str, why: &str) -> ! {
    crate::runtime::say(&format!("ilgen: {why} (exit status {EXIT_BAD_SCHEDULE})"));
    let o = Outcome {
        format_version: OUTCOME_VERSION,
        build_id: build_id.to_owned(),
        schedule: schedule.to_owned(),
        load_base: crate::exe::load_base(),
        result: ResultKind::Diverged,
        schedule_followed: false,
        steps_done: 0,
        steps_total: 0,
        races: Vec::new(),
        deadlock: None,
        divergence: Some(Divergence {
            step: None,
            expected: None,
            got: None,
            reason: why.to_owned(),
        }),
        watched: Vec::new(),
        created: Default::default(),
        step_stacks: Vec::new(),
        stacks: Vec::new(),
    };
    if !schedule.is_empty() {
        write(dir, &o);
    }
    exit(EXIT_BAD_SCHEDULE)
}

/// The program is exiting: the final outcome. A schedule the program ended before finishing,
/// with nothing found, is a divergence.
pub(crate) fn at_exit() {
    let Some(r) = replay::gate::get() else { return };
    if !stop() {
        return;
    }
    let mut f = findings();
    let total = r.plan.steps.len();
    let p = r.cursor();
    if p < total && f.divergence.is_none() {
        let expected = r.plan.step_ref(p);
        f.divergence = Some(Divergence {
            step: Some(p as u32),
            reason: format!(
                "the program exited before step {p} (T{} operation #{} {} at {}) was taken",
                expected.tid,
                expected.index,
                expected.op,
                site_text(expected.site)
            ),
            expected: Some(expected),
            got: None,
        });
    }
    let o = outcome(&f, r);
    write(&r.outcome_dir, &o);
    if o.result == ResultKind::Diverged {
        let reason = f
            .divergence
            .as_ref()
            .map(|d| d.reason.clone())
            .unwrap_or_default();
        drop(f);
        __ilgen_report_hook(HOOK_DIVERGED, u32::MAX, u32::MAX, 0);
        crate::runtime::say(&format!(
            "ilgen: replay diverged: {reason} (exit status {EXIT_DIVERGED})"
        ));
        exit(EXIT_DIVERGED);
    }
    if r.options.verbosity >= 1 {
        crate::runtime::say(&format!(
            "ilgen: replay outcome written to {}",
            r.outcome_dir.join(OUTCOME_FILE).display()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ilgen_trace::replay::{BlockedThread, HeldLock, ThreadRef};
    use ilgen_trace::OpKind;
    use ilgen_trace::ThreadId;

    #[test]
    fn each_pair_of_sites_is_reported_once_in_either_order() {
        let mut p = PairSet::default();
        assert!(p.first(3, 9));
        assert!(!p.first(3, 9));
        assert!(!p.first(9, 3));
        assert!(p.first(3, 3));
        assert!(p.first(3, 4));
    }

    fn t(tid: ThreadId) -> ThreadRef {
        ThreadRef {
            tid,
            parent: Some(0),
            child_index: 0,
        }
    }

    #[test]
    fn race_text_is_tsan_shaped() {
        let r = RaceReport {
            current: RaceAccess {
                thread: t(1),
                kind: AccessKind::Write,
                addr: 0x10,
                size: 4,
                site: 7,
                free: false,
                unmap: false,
                destroy: false,
                stack: vec![
                    StackFrame::Site(12),
                    StackFrame::Native(ilgen_trace::replay::NativeFrame {
                        module: Some("/lib/libstdc++.so.6".into()),
                        offset: 0xd44a3,
                    }),
                ],
                locks: Vec::new(),
            },
            previous: RaceAccess {
                thread: t(0),
                kind: AccessKind::Read,
                addr: 0x10,
                size: 4,
                site: 3,
                free: false,
                unmap: false,
                destroy: false,
                stack: Vec::new(),
                locks: Vec::new(),
            },
            heap_block: None,
        };
        let s = race_text(&r);
        assert!(s.contains("WARNING: ilgen: data race (pid="), "{s}");
        assert!(
            s.contains(
                "  Write of size 4 at 0x10 by thread T1:\n    #0 site 7\n    #1 site 12\n\n"
            ),
            "{s}"
        );
        assert!(s.contains("  Previous read of size 4 at 0x10 by thread T0:\n    #0 site 3"));
        assert!(s.contains("SUMMARY: ilgen: data race site 7 (T1) vs site 3 (T0)"));
        let freed = RaceReport {
            previous: RaceAccess {
                free: true,
                unmap: false,
                destroy: false,
                kind: AccessKind::Write,
                size: 32,
                ..r.previous.clone()
            },
            ..r.clone()
        };
        let s = race_text(&freed);
        assert!(
            s.contains("WARNING: ilgen: data race on freed memory (pid="),
            "{s}"
        );
        assert!(
            s.contains("  Previous free of size 32 at 0x10 by thread T0:"),
            "{s}"
        );
        assert!(
            s.contains("SUMMARY: ilgen: data race on freed memory site 7"),
            "{s}"
        );
        let unmapped = RaceReport {
            previous: RaceAccess {
                unmap: true,
                size: 4096,
                ..freed.previous.clone()
            },
            ..r.clone()
        };
        let s = race_text(&unmapped);
        assert!(
            s.contains("WARNING: ilgen: data race on unmapped memory (pid="),
            "{s}"
        );
        assert!(
            s.contains("  Previous unmap of size 4096 at 0x10 by thread T0:"),
            "{s}"
        );
        let destroyed = RaceReport {
            previous: RaceAccess {
                destroy: true,
                kind: AccessKind::Write,
                size: 1,
                ..r.previous.clone()
            },
            ..r.clone()
        };
        let s = race_text(&destroyed);
        assert!(
            s.contains("WARNING: ilgen: data race on destroyed sync object (pid="),
            "{s}"
        );
        assert!(
            s.contains("  Previous destroy of size 1 at 0x10 by thread T0:"),
            "{s}"
        );
    }

    #[test]
    fn deadlock_text_names_sites_and_cycle() {
        let b = |tid, site, w: ThreadId, held| BlockedThread {
            thread: t(tid),
            op: OpKind::Lock,
            site: Some(site),
            object: 0x100 + u64::from(tid),
            waits_for: vec![w],
            holds: vec![HeldLock {
                object: 0x200,
                site: Some(held),
                stack: Vec::new(),
            }],
            stack: Vec::new(),
        };
        let d = DeadlockReport {
            threads: vec![b(0, 5, 1, 4), b(1, 9, 0, 8)],
            cycle: vec![0, 1],
        };
        let s = deadlock_text(&d);
        assert!(s.contains("deadlock (lock cycle)"), "{s}");
        assert!(s.contains("Thread T0 is blocked in lock of 0x100 at site 5, waiting for T1"));
        assert!(s.contains("T1 holds 0x200, acquired at site 8"));
        assert!(s.contains("Cycle: T0 -> T1 -> T0"));
        assert!(s.contains("SUMMARY: ilgen: deadlock T0 lock at site 5, T1 lock at site 9"));
    }
}
