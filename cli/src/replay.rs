//! Replay: run the recorded program under a candidate's schedule and confirm or refute it.
//!
//! Takes a trace directory on which `ilgen detect` wrote `candidates.json` and
//! `schedule-<n>.json`; gives, per candidate, a [`run::ReplayRun`] (the program run with
//! `ILGEN_OPTIONS=mode=replay:schedule=...:outcome_dir=<trace>/replay-<n>`, bounded in time) and
//! its [`verdict::Verdict`], collected into a [`Report`]. `ilgen detect` replays every candidate
//! ([`confirm`]); `ilgen replay TRACE_DIR:N` replays one ([`run`]), or starts gdb on it with the
//! replay environment and a breakpoint on the runtime's report hook (`--gdb`).

pub mod run;
pub mod verdict;

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use ilgen_trace::{Meta, TraceDir};

use crate::binary::Binary;
use crate::detect::candidates::{self, CandidatesFile};
use crate::detect::Format;
use crate::error::CliError;
use crate::report::{self, Context, Entry, Report};
use crate::{dump, exit};
use run::Request;
use verdict::Class;

/// Default of `--replay-timeout`, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// The gdb breakpoint that stops where a finding is reported.
pub const REPORT_HOOK: &str = "__ilgen_report_hook";

#[derive(clap::Args, Clone, Debug)]
#[command(after_help = "\
FINDING names one candidate of `ilgen detect`: TRACE_DIR:N is candidate N (1-based, as in
`schedule-N.json` and the report's `candidate N`) of the trace in TRACE_DIR; N alone takes the
newest trace under ./ilgen-out/.

With --gdb, gdb starts on the recorded program with ILGEN_OPTIONS set for the replay and a
breakpoint on __ilgen_report_hook: `run` stops on the thread that made the second access of a race
(or found the deadlock); `bt` shows the runtime frames, `frame function NAME` or `up` reaches the
racing source line. Everything after `--` goes to gdb, after the commands ilgen gives it, e.g.
`ilgen replay t:1 --gdb -- -batch -x script.gdb`.

Exit codes: 66 the replay confirmed a race or deadlock, 0 it followed the schedule without error,
3 it could not follow the schedule (the program took another path) or ended without an outcome,
2 bad input. With --gdb: gdb's own status.")]
pub struct ReplayArgs {
    /// TRACE_DIR:N, or N for the newest trace under ./ilgen-out/
    pub finding: String,
    /// Start gdb on the replay, stopped where the finding is reported
    #[arg(long)]
    pub gdb: bool,
    /// Seconds a replay may run before its process group is killed
    #[arg(long, default_value_t = DEFAULT_TIMEOUT_SECS)]
    pub replay_timeout: u64,
    /// Output format of the report
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// With --gdb: arguments for gdb (after `--`)
    #[arg(last = true)]
    pub gdb_args: Vec<String>,
}

/// Name of candidate `number`'s replay directory under the trace directory.
pub fn replay_dir_name(number: usize) -> String {
    format!("replay-{number}")
}

/// Replays candidates `1..=n` of `file` (schedules in `dir`) on all cores; gives the report.
pub fn confirm(
    trace: &TraceDir,
    dir: &Path,
    binary: &Binary,
    file: &CandidatesFile,
    timeout: Duration,
) -> Result<Report, CliError> {
    let dir = run::absolute(dir)?;
    let reqs: Vec<Request> = (1..=file.candidates.len())
        .map(|n| Request {
            schedule: dir.join(candidates::schedule_file_name(n)),
            out_dir: dir.join(replay_dir_name(n)),
        })
        .collect();
    let runs = run::run_all(&trace.meta, &reqs, timeout);
    let ctx = Context::new(Some(binary), &trace.threads);
    let mut report = Report::new(&trace.meta.binary, &dir.display().to_string());
    for (i, (c, r)) in file.candidates.iter().zip(runs).enumerate() {
        let r = r?;
        let verdict = verdict::classify(&r);
        report.add(
            &ctx,
            &Entry {
                number: i + 1,
                candidate: c,
                run: Some(&r),
                verdict,
            },
        );
    }
    Ok(report)
}

/// Renders `report` in `format`.
pub fn render(report: &Report, format: Format, show_all: bool) -> String {
    match format {
        Format::Text => report::text::render(report, show_all),
        Format::Json => report::json::render(report),
        Format::Sarif => report::sarif::render(report),
    }
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

fn read_candidates(dir: &Path) -> Result<CandidatesFile, CliError> {
    let path = dir.join(candidates::FILE_NAME);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        CliError::Input(format!(
            "failed to read {}: {e}; run `ilgen detect {}` first",
            path.display(),
            dir.display()
        ))
    })?;
    let file: CandidatesFile = serde_json::from_str(&text)
        .map_err(|e| CliError::Input(format!("failed to read {}: {e}", path.display())))?;
    if file.format_version != candidates::FORMAT_VERSION {
        return Err(CliError::Input(format!(
            "{} has format version {}, this ilgen reads {}; run `ilgen detect` again",
            path.display(),
            file.format_version,
            candidates::FORMAT_VERSION
        )));
    }
    Ok(file)
}

/// Runs `ilgen replay`.
pub fn run(args: &ReplayArgs) -> Result<i32, CliError> {
    if !args.gdb_args.is_empty() && !args.gdb {
        return Err(CliError::Input(
            "arguments after `--` are for gdb; pass --gdb".into(),
        ));
    }
    if args.replay_timeout == 0 {
        return Err(CliError::Input(
            "--replay-timeout must be at least 1".into(),
        ));
    }
    let (dir, n) = parse_finding(&args.finding)?;
    let trace = crate::dump::open_trace(&dir)?;
    let file = read_candidates(&dir)?;
    let Some(candidate) = file.candidates.get(n - 1) else {
        return Err(CliError::Input(format!(
            "{} has {} candidate(s), no candidate {n}",
            dir.join(candidates::FILE_NAME).display(),
            file.candidates.len()
        )));
    };
    let schedule = run::absolute(&dir.join(candidates::schedule_file_name(n)))?;
    if !schedule.is_file() {
        return Err(CliError::Input(format!(
            "{} is missing; run `ilgen detect {}` again",
            schedule.display(),
            dir.display()
        )));
    }
    // A schedule the runtime would refuse is bad input, not a replay that diverged.
    ilgen_trace::schedule::Schedule::read(&schedule)?;
    if file.binary_hash != trace.meta.binary_hash {
        return Err(CliError::Input(format!(
            "{} was made from another recording; run `ilgen detect {}` again",
            dir.join(candidates::FILE_NAME).display(),
            dir.display()
        )));
    }
    let binary = Binary::load(&trace.meta)?;
    if args.gdb {
        let out_dir = run::absolute(&dir.join("replay-gdb"))?;
        return Err(gdb(&trace.meta, &schedule, &out_dir, &args.gdb_args));
    }
    let req = Request {
        schedule,
        out_dir: run::absolute(&dir.join(replay_dir_name(n)))?,
    };
    let r = run::run(&trace.meta, &req, Duration::from_secs(args.replay_timeout))?;
    let verdict = verdict::classify(&r);
    let class = verdict.class;
    let ctx = Context::new(Some(&binary), &trace.threads);
    let mut report = Report::new(
        &trace.meta.binary,
        &run::absolute(&dir)?.display().to_string(),
    );
    report.add(
        &ctx,
        &Entry {
            number: n,
            candidate,
            run: Some(&r),
            verdict,
        },
    );
    crate::detect::print_out(&render(&report, args.format, true))?;
    Ok(match class {
        Class::ConfirmedRace | Class::ConfirmedDeadlock => exit::FINDINGS,
        Class::NoError => exit::CLEAN,
        Class::Infeasible | Class::Failed => exit::DIVERGED,
    })
}

/// Replaces this process with gdb on the replay; returns only the error of starting it.
fn gdb(meta: &Meta, schedule: &Path, out_dir: &Path, extra: &[String]) -> CliError {
    let options = match run::options(schedule, out_dir) {
        // A user stopped at a breakpoint must not turn the replay into a divergence.
        Ok(o) => format!("{o}:replay_timeout_ms=3600000"),
        Err(e) => return e,
    };
    if let Err(e) = std::fs::create_dir_all(out_dir) {
        return CliError::Input(format!("failed to create {}: {e}", out_dir.display()));
    }
    let (binary, args) = run::program(meta);
    let e = Command::new("gdb")
        .current_dir(&meta.cwd)
        .arg("-q")
        .arg("-ex")
        .arg(format!("set environment {}={options}", run::OPTIONS_VAR))
        .arg("-ex")
        .arg(format!("break {REPORT_HOOK}"))
        .arg("-ex")
        .arg("run")
        .args(extra)
        .arg("--args")
        .arg(&binary)
        .args(&args)
        .exec();
    CliError::Input(format!("failed to start gdb: {e}; is gdb installed?"))
}
