//! `ilgen replay`: replay one candidate of `ilgen detect` and print its report, or debug it.
//!
//! Takes FINDING (`TRACE_DIR:N`, candidate N of the `candidates.json` that `ilgen detect` wrote
//! there); gives the report of that one replay ([`ilgen_confirm::run::run`], classified by
//! [`ilgen_confirm::verdict`], rendered by [`ilgen_report`]) and an exit code by its verdict, or,
//! with `--gdb`/`--lldb`/`--print-env`, the replay under a debugger ([`crate::debugger`]).

use std::path::{Path, PathBuf};

use ilgen_analysis::candidates::{self, Candidate};
use ilgen_binary::Binary;
use ilgen_confirm::error::ConfirmError;
use ilgen_confirm::run::{self, Request};
use ilgen_confirm::verdict::{self, Class};
use ilgen_confirm::{replay_dir_name, DEFAULT_TIMEOUT_SECS};
use ilgen_report::{Context, Entry, RecordedRun, Report, Run};
use ilgen_trace::format::ThreadTrace;

use crate::debugger::{Debugger, Session, StopAt};
use crate::error::CliError;
use crate::output::{print_out, render, Format};
use crate::{dump, exit};

#[derive(clap::Args, Clone, Debug)]
#[command(after_help = "\
FINDING names one candidate of `ilgen detect`: TRACE_DIR:N is candidate N (1-based, as in
`schedule-N.json` and the report's `candidate N`) of the trace in TRACE_DIR; N alone takes the
newest trace under ./ilgen-out/. Its schedule, TRACE_DIR/schedule-N.json, is written from
candidates.json when missing.

With --gdb, gdb starts on the recorded program with ILGEN_OPTIONS set for the replay and ilgen's
gdb commands loaded (TRACE_DIR/replay-gdb/ilgen_gdb.py): `run` stops in your code on the second
access of a race, with both accesses and the schedule step printed (with --stop-at first, before
the first access, in its thread; `continue` goes on to the second), or, for a deadlock, when the
last thread blocked, with each thread's blocked lock. Commands: `ilgen finding`, `ilgen schedule`
(the current step marked), `ilgen step-sync` (run to the next scheduled sync operation),
`ilgen threads` (gdb thread, ilgen T-id, creation site); --stop-at start stops at the schedule's
first step. --lldb does the same under lldb-19. --print-env prints the environment and
command line that reproduce the replay. Everything after `--` goes to the debugger, after the
commands ilgen gives it, e.g. `ilgen replay t:1 --gdb -- -batch -x script.gdb`.

Exit codes: 66 the replay confirmed a race, deadlock or atomicity violation (not suppressed by
--suppressions), 0 it followed the schedule without error (or every finding was suppressed),
3 it could not follow the schedule (the program took another path) or ended without an outcome,
2 bad input. With --gdb or --lldb: the debugger's own status.")]
pub struct ReplayArgs {
    /// TRACE_DIR:N, or N for the newest trace under ./ilgen-out/
    pub finding: String,
    /// Start gdb on the replay, stopped in your code where the finding is reported
    #[arg(long, conflicts_with_all = ["lldb", "print_env"])]
    pub gdb: bool,
    /// Start lldb-19 on the replay, stopped like --gdb
    #[arg(long, conflicts_with = "print_env")]
    pub lldb: bool,
    /// Print the environment and command line that reproduce the replay (for IDEs, debuggers)
    #[arg(long)]
    pub print_env: bool,
    /// With a debugger: stop before the race's first access (in its thread), or at the finding
    #[arg(long, value_enum, default_value_t = StopAt::Finding)]
    pub stop_at: StopAt,
    /// Seconds a replay may run before its process group is killed
    #[arg(long, default_value_t = DEFAULT_TIMEOUT_SECS)]
    pub replay_timeout: u64,
    /// Shell command run in the recorded directory before the replay (or before gdb or lldb
    /// starts it), as `ilgen detect --before-replay` runs it (`rm -rf db`)
    #[arg(long, value_name = "CMD")]
    pub before_replay: Option<String>,
    /// Output format of the report
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// With --gdb or --lldb: arguments for the debugger (after `--`)
    #[arg(last = true)]
    pub gdb_args: Vec<String>,
    /// Replay a trace that another user owns or that group/others can write (a trace names the
    /// program the replay runs)
    #[arg(long)]
    pub trust_trace: bool,
    /// A ThreadSanitizer-style suppressions file, as for `ilgen detect`: a matching finding is
    /// counted, not reported, and the exit is 0 [default: ILGEN_OPTIONS=suppressions=FILE]
    #[arg(long, value_name = "FILE")]
    pub suppressions: Option<PathBuf>,
}

/// `TRACE_DIR:N` or `N`.
fn parse_finding(s: &str) -> Result<(PathBuf, usize), CliError> {
    let bad = || {
        CliError::Input(format!(
            "bad FINDING `{s}`: expected TRACE_DIR:N (candidate N of `ilgen detect` on \
             TRACE_DIR) or N"
        ))
    };
    let (dir, n) = match s.rsplit_once(':') {
        Some((d, n)) if !d.is_empty() => (PathBuf::from(d), n),
        Some(_) => return Err(bad()),
        None => (dump::newest_trace(Path::new(dump::DEFAULT_OUT))?, s),
    };
    let n: usize = n.parse().map_err(|_| bad())?;
    if n == 0 {
        return Err(bad());
    }
    Ok((dir, n))
}

/// Candidate `n` of the candidates file in `dir` (if any), its build id and number of candidates;
/// `threads`: the trace's, which its schedules' heads are counts of.
fn read_candidate(
    dir: &Path,
    threads: &[ThreadTrace],
    n: usize,
) -> Result<(Option<Candidate>, String, usize), CliError> {
    let path = dir.join(candidates::FILE_NAME);
    if !path.is_file() {
        return Err(CliError::Input(format!(
            "{} is missing; run `ilgen detect {}` first",
            path.display(),
            dir.display()
        )));
    }
    candidates::read_one(&path, threads, n).map_err(CliError::Input)
}

/// Runs `ilgen replay`.
pub fn run(args: &ReplayArgs) -> Result<i32, CliError> {
    let debugger = match (args.gdb, args.lldb, args.print_env) {
        (true, _, _) => Some(Debugger::Gdb),
        (_, true, _) => Some(Debugger::Lldb),
        (_, _, true) => Some(Debugger::PrintEnv),
        _ => None,
    };
    if !args.gdb_args.is_empty() && !matches!(debugger, Some(Debugger::Gdb | Debugger::Lldb)) {
        return Err(CliError::Input(
            "arguments after `--` are for gdb or lldb; pass --gdb or --lldb".into(),
        ));
    }
    if args.stop_at != StopAt::Finding && debugger.is_none() {
        return Err(CliError::Input(
            "--stop-at is for a debugger; pass --gdb, --lldb or --print-env".into(),
        ));
    }
    let bounds = run::Bounds {
        before: args.before_replay.clone(),
        ..run::Bounds::new(args.replay_timeout, None)?
    };
    let suppressions = crate::output::suppressions(args.suppressions.as_deref())?;
    let (dir, n) = parse_finding(&args.finding)?;
    ilgen_confirm::trust::check(&dir, args.trust_trace)?;
    let trace = crate::dump::open_trace(&dir, "record a shorter run")?;
    let (candidate, build_id, count) = read_candidate(&dir, &trace.threads, n)?;
    let Some(candidate) = &candidate else {
        return Err(CliError::Input(format!(
            "{} has {count} candidate(s), no candidate {n}",
            dir.join(candidates::FILE_NAME).display(),
        )));
    };
    if build_id != trace.meta.build_id {
        return Err(CliError::Input(format!(
            "{} was made from another recording; run `ilgen detect {}` again",
            dir.join(candidates::FILE_NAME).display(),
            dir.display()
        )));
    }
    // `ilgen detect` writes a schedule only for the candidates it replays.
    let headers: Vec<_> = trace.threads.iter().map(|t| t.header).collect();
    let schedule = ilgen_confirm::schedule_file(&dir, n, candidate, &headers, &build_id, true)?;
    let schedule = run::absolute(&schedule)?;
    // A schedule the runtime would refuse is bad input, not a replay that diverged.
    let made_for = ilgen_trace::schedule::Schedule::read(&schedule)?.build_id;
    if made_for != trace.meta.build_id {
        return Err(CliError::Input(format!(
            "{} was made for another build (build id {made_for:?}, the trace's is {:?}); run \
             `ilgen detect {}` again",
            schedule.display(),
            trace.meta.build_id,
            dir.display()
        )));
    }
    let binary = Binary::load(&trace.meta)?;
    let recorded = RecordedRun::of(&trace, false);
    let ctx = Context::new(Some(&binary), &recorded);
    if let Some(debugger) = debugger {
        let out_dir = run::absolute(&dir.join("replay-gdb"))?;
        // --print-env only prints: the user runs the program, and resets its files, later.
        if let Some(before) = bounds
            .before
            .as_ref()
            .filter(|_| debugger != Debugger::PrintEnv)
        {
            std::fs::create_dir_all(&out_dir).map_err(|source| ConfirmError::Create {
                path: out_dir.clone(),
                source,
            })?;
            if let Some(why) = run::prepare(&trace.meta, before, &out_dir, bounds.timeout)? {
                return Err(CliError::Input(why));
            }
        }
        let session = Session {
            meta: &trace.meta,
            binary: &binary,
            ctx: &ctx,
            number: n,
            candidate,
            schedule: &schedule,
            out_dir: &out_dir,
        };
        session.start(debugger, args.stop_at, &args.gdb_args)?;
        return Ok(exit::CLEAN);
    }
    let req = Request {
        schedule,
        out_dir: run::absolute(&dir.join(replay_dir_name(n)))?,
    };
    eprintln!(
        "ilgen: replaying: {}",
        run::command_line(&trace.meta, &req, bounds.before.as_deref())?
    );
    let r = run::run(&trace.meta, &req, &bounds)?;
    let verdict = verdict::classify(&r);
    let class = verdict.class;
    let recorded = Run {
        trace_dir: run::absolute(&dir)?.display().to_string(),
        chaos_seed: trace.meta.chaos_seed,
    };
    let mut report = Report::new(&ctx, &trace.meta.binary, recorded);
    report.add(
        &ctx,
        &Entry {
            number: n,
            candidate,
            run: Some(&r),
            verdict,
        },
    );
    if let Some(s) = &suppressions {
        report.suppress(s);
    }
    print_out(&render(&report, args.format, true))?;
    Ok(match class {
        Class::ConfirmedRace | Class::ConfirmedDeadlock | Class::ConfirmedAtomicity
            if report.confirmed() =>
        {
            exit::FINDINGS
        }
        // Confirmed, but every finding suppressed.
        Class::ConfirmedRace | Class::ConfirmedDeadlock | Class::ConfirmedAtomicity => exit::CLEAN,
        Class::NoError => exit::CLEAN,
        Class::Infeasible | Class::Failed => exit::DIVERGED,
    })
}
