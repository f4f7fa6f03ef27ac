//! `ilgen detect`: the command that strings the stages together.
//!
//! Takes one or more trace directories (runs of one binary) and the flags; runs the analysis of
//! each, in parallel ([`ilgen_analysis::analyze_with`]), writes `candidates.json` into each trace
//! directory ([`ilgen_analysis::candidates`]), and then, unless `--no-replay`, replays each
//! candidate (those at a pair of sites in turn, until one confirms their race) on its run, its `schedule-<n>.json` written beside
//! ([`ilgen_confirm::replay_all`]) and prints one report of the confirmed findings of all runs
//! ([`ilgen_report::Report::merge`]), led by the deadlock a recorded run itself ended in, if one
//! did ([`ilgen_analysis::observed`]); with `--no-replay` (one trace) it prints the candidates'
//! summary (or the file's JSON) instead. A suppressions file (`--suppressions`, or
//! `ILGEN_OPTIONS=suppressions=FILE`) hides the confirmed findings it matches
//! ([`ilgen_report::Report::suppress`]): counted in the report, not in the exit code. Long
//! analyses report their stages on stderr (on a terminal, or with `--progress`); stdout stays
//! deterministic. With `--shard I/N` it does one shard of one trace's analysis
//! ([`ilgen_analysis::analyze_shard`]) in `DIR/shard-I-of-N/` and prints the shard's JSON report
//! for `ilgen merge`. Gives an exit code: [`exit::FINDINGS`] when replay confirmed
//! something (with `--no-replay`: when there is a candidate), else [`exit::CLEAN`].

#[cfg(test)]
mod tests;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use ilgen_analysis::candidates::{self, CandidatesFile, Limits};
use ilgen_analysis::progress::Progress;
use ilgen_analysis::shard::{Key, Shard};
use ilgen_analysis::{window, Backend, Checker, Options, Transactions};
use ilgen_binary::{transactions, Binary};
use ilgen_report::limits::{self, with_names};
use ilgen_report::shard::ShardInfo;
use ilgen_report::suppress::Suppressions;
use ilgen_report::{RecordedRun, Report};
use ilgen_trace::format::ThreadHeader;
use rayon::prelude::*;

use crate::dump;
use crate::error::CliError;
use crate::exit;
use crate::output::{print_out, print_with, render, Format};

#[derive(clap::Args, Clone, Debug)]
pub struct DetectArgs {
    /// Trace directories of recorded runs of one binary (e.g. `ilgen run --runs N`'s), detected
    /// together into one report [default: the newest under ./ilgen-out/]
    pub trace_dirs: Vec<PathBuf>,
    /// Stop at candidate schedules, without replaying them
    #[arg(long)]
    pub no_replay: bool,
    /// Also list the candidates replay did not confirm, with the reason, and the race pairs a
    /// limit left undecided, with the limit to raise
    #[arg(long)]
    pub show_all: bool,
    /// After the report, print the analysis's counts: where every race pair went (text format)
    #[arg(long)]
    pub stats: bool,
    /// Seconds each replay may run before its process group is killed
    #[arg(long, default_value_t = ilgen_confirm::DEFAULT_TIMEOUT_SECS)]
    pub replay_timeout: u64,
    /// Replays run at once [default: one per core, more while they mostly wait]; 1 when replays of
    /// the program would collide (a server on a fixed port, a lock file at a fixed path)
    #[arg(long, value_name = "N")]
    pub replay_jobs: Option<usize>,
    /// Shell command run in the recorded directory before each replay (its failure fails that
    /// replay), to reset files a run leaves behind (`rm -rf db`); with --replay-jobs 1 when
    /// replays share them
    #[arg(long, value_name = "CMD")]
    pub before_replay: Option<String>,
    /// Sync events per window of the exhaustive search
    #[arg(long, default_value_t = window::DEFAULT_SIZE)]
    pub window: usize,
    /// States the exhaustive search may visit per variable (and for deadlocks)
    #[arg(long, default_value_t = MAX_STATES)]
    pub max_states: usize,
    /// Candidates per shared variable (and deadlocks in all)
    #[arg(long, default_value_t = 1)]
    pub max_per_var: usize,
    /// Candidates written (and replayed) per run, the first in the file's order; the others are
    /// counted
    #[arg(long, default_value_t = MAX_CANDIDATES)]
    pub max_candidates: usize,
    /// One candidate per distinct pair of source sites, with no count bound
    #[arg(long)]
    pub all_sites: bool,
    /// Per race candidate, other instances of its two sites replayed in turn if it is not confirmed
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub fallbacks: usize,
    /// Output format (json: with --no-replay the candidates file, else the report)
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Show progress on stderr even when it is not a terminal (on a terminal it always is)
    #[arg(long)]
    pub progress: bool,
    /// No progress and no replay command lines on stderr, even on a terminal
    #[arg(long, short, conflicts_with = "progress")]
    pub quiet: bool,
    /// Who decides the reorder model (check and fdr take the whole trace as one model)
    #[arg(long, value_enum, default_value_t = Solver::Native)]
    pub solver: Solver,
    /// Replay a trace that another user owns or that group/others can write (a trace names the
    /// program replays run)
    #[arg(long)]
    pub trust_trace: bool,
    /// A ThreadSanitizer-style suppressions file (race:PATTERN, deadlock:PATTERN,
    /// called_from_lib:PATTERN): matching confirmed findings are not reported, only counted
    /// [default: ILGEN_OPTIONS=suppressions=FILE]
    #[arg(long, value_name = "FILE")]
    pub suppressions: Option<PathBuf>,
    /// Predict orders that change what a deciding read (one that decides an address) saw; by
    /// default the native solver keeps each such read's observed writer
    #[arg(long)]
    pub no_reads_from: bool,
    /// Also predict atomicity violations of the transactions the program marks (`ilgen.h`), or
    /// of --atomic's: two accesses of one transaction and a conflicting access of another thread
    /// between them
    #[arg(long)]
    pub atomicity: bool,
    /// Do shard I of N of the analysis of one trace (a deterministic share of its variables,
    /// deadlocks and atomicity violations), replay its candidates and print its JSON report for
    /// `ilgen merge`; its files go to `DIR/shard-I-of-N/`
    #[arg(long, value_name = "I/N", value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// Check the functions matching GLOB as the transactions (demangled names; repeatable;
    /// implies --atomicity): each block marked in or on such a function (ILGEN_ATOMIC,
    /// ILGEN_ATOMIC_BEGIN) and, if the run was recorded with ILGEN_OPTIONS=calls=1, each call of
    /// such a function that synchronizes; none inside another transaction, nor a thread's
    /// outermost call (its start routine, main). `ILGEN_OPTIONS=calls=1 ./prog; ilgen detect
    /// --atomic '*'`: each call a thread's start routine makes, as the paper took methods
    #[arg(long = "atomic", value_name = "GLOB")]
    pub atomic: Vec<String>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    /// ilgen's solver: cut-based fast path, then an exhaustive search over windows
    Native,
    /// ilgen's CSP checker on the exported CSP_M model: the paper's pipeline, without FDR
    Check,
    /// FDR's `refines` on the exported CSP_M model (FDR must be on PATH)
    Fdr,
}

/// Default of `--max-states`: states the exhaustive search may visit for one variable (or for
/// deadlocks) before it gives up; bounds time and memory (each state is kept for the visited set).
const MAX_STATES: usize = 200_000;

/// Default of `--max-candidates`: bounds the analysis's memory (no more candidates are held), the candidates file, the schedule
/// files and the replays (each replay runs the program once).
const MAX_CANDIDATES: usize = 1000;

/// States ilgen's CSP checker may explore per assertion (`--solver check`): it has no partial-order
/// reduction, so it needs more than the native search for the same model.
const CHECKER_STATES: usize = 2_000_000;

/// One recorded run, analysed: what the report needs of its trace, the candidates in its directory.
struct Predicted {
    dir: PathBuf,
    /// Where the candidates, schedules and replays go: `dir`, or a shard's own directory in it.
    out: PathBuf,
    run: RecordedRun,
    headers: Vec<ThreadHeader>,
    file: CandidatesFile,
    /// Each candidate's place in the unsharded analysis.
    keys: Vec<Key>,
}

/// Runs `ilgen detect`; gives [`exit::FINDINGS`] when there is a candidate (`--no-replay`) or a
/// confirmed finding, else [`exit::CLEAN`].
pub fn run(args: &DetectArgs) -> Result<i32, CliError> {
    if args.no_replay && args.format == Format::Sarif {
        return Err(CliError::Input(
            "--format sarif reports confirmed findings; drop --no-replay (or use --format json)"
                .into(),
        ));
    }
    let bounds = ilgen_confirm::run::Bounds {
        before: args.before_replay.clone(),
        ..ilgen_confirm::run::Bounds::new(args.replay_timeout, args.replay_jobs)?
    };
    if args.window == 0 || args.max_per_var == 0 || args.max_states == 0 || args.max_candidates == 0
    {
        return Err(CliError::Input(
            "--window, --max-per-var, --max-states and --max-candidates must be at least 1".into(),
        ));
    }
    let one_dir = args.trace_dirs.len() <= 1 && args.suppressions.is_none();
    if args.shard.is_some() && (args.no_replay || args.format != Format::Json || !one_dir) {
        return Err(CliError::Input(
            "--shard replays the candidates of one trace directory and prints the shard's JSON \
             report for `ilgen merge`: give one directory and --format json, without --no-replay \
             or --suppressions (give that to `ilgen merge`)"
                .into(),
        ));
    }
    // A shard's report is not the final one: `ilgen merge` applies the suppressions.
    let suppressions = match args.shard {
        Some(_) => None,
        None => crate::output::suppressions(args.suppressions.as_deref())?,
    };
    let dirs = match args.trace_dirs.as_slice() {
        [] => vec![dump::trace_dir(None)?],
        given => given.to_vec(),
    };
    if dirs.len() > 1 {
        if args.no_replay {
            return Err(CliError::Input(
                "--no-replay takes one trace directory; run `ilgen detect --no-replay DIR` on \
                 each"
                    .into(),
            ));
        }
        ilgen_report::merge::one_binary(&dirs).map_err(|e| CliError::Input(e.to_string()))?;
    }
    if !args.no_replay {
        for dir in &dirs {
            ilgen_confirm::trust::check(dir, args.trust_trace)?;
        }
    }
    let runs = dirs
        .par_iter()
        .map(|dir| predict(dir, args))
        .collect::<Result<Vec<_>, _>>()?;
    match runs.as_slice() {
        [one] if args.no_replay => candidates_only(one, args),
        _ => confirm(&runs, args, &bounds, suppressions.as_ref()),
    }
}

/// Reads the trace in `dir`, predicts its candidates and writes them (`candidates.json`) into
/// `dir`.
fn predict(dir: &Path, args: &DetectArgs) -> Result<Predicted, CliError> {
    let progress = Progress::for_stderr(args.progress, args.quiet);
    progress.begin(&format!("reading {}", dir.display()));
    let trace = crate::dump::open_trace(
        dir,
        "lower --window or --max-states, or record a shorter run",
    )?;
    let events: usize = trace.threads.iter().map(|t| t.events.len()).sum();
    progress.stage(&format!(
        "read {} threads, {events} events from {}",
        trace.threads.len(),
        dir.display()
    ));
    let backend = match args.solver {
        Solver::Native => Backend::Native,
        Solver::Check => Backend::Csp(Checker::Builtin {
            max_states: CHECKER_STATES,
        }),
        Solver::Fdr => Backend::Csp(Checker::Fdr {
            refines: ilgen_csp::fdr::find().ok_or_else(|| {
                CliError::Input(
                    "--solver fdr needs FDR's `refines` on PATH, and none was found: install FDR \
                     4 and put its bin directory on PATH, or use --solver native (or check), or \
                     write the model with `ilgen export-csp`"
                        .into(),
                )
            })?,
            dir: dir.join("csp"),
        }),
    };
    let binary = Binary::load(&trace.meta);
    let atomicity = args.atomicity || !args.atomic.is_empty();
    let transactions = transactions::selected(&trace, &binary, &args.atomic, atomicity)
        .map_err(CliError::Input)?
        .map(|s| Transactions {
            calls: s.calls,
            selected: s.selected,
        });
    let options = Options {
        max_per_var: args.max_per_var,
        all_sites: args.all_sites,
        window: args.window,
        max_states: args.max_states,
        backend,
        // A binary that cannot be loaded is reported below, where names need it.
        deciding: match &binary {
            Ok(binary) if !args.no_reads_from => binary.deciding_sites(),
            _ => Default::default(),
        },
        atomicity,
        transactions,
        max_candidates: args.max_candidates,
        fallbacks: args.fallbacks,
    };
    let shard = args.shard.unwrap_or(Shard::WHOLE);
    let headers: Vec<_> = trace.threads.iter().map(|t| t.header).collect();
    // Shard 1 of a sharded analysis reports the deadlock the run ended in (when it replays).
    let run = RecordedRun::of(&trace, !args.no_replay && shard.index == 1);
    let (stats, candidates, keys) =
        ilgen_analysis::analyze_shard(trace.threads, &options, &progress, shard)?;
    progress.finish();
    let out = match args.shard {
        Some(s) => dir.join(format!("shard-{}-of-{}", s.index, s.count)),
        None => dir.to_path_buf(),
    };
    let file = CandidatesFile {
        format_version: candidates::FORMAT_VERSION,
        binary: trace.meta.binary.clone(),
        build_id: trace.meta.build_id.clone(),
        stats,
        candidates,
    };
    ilgen_confirm::remove_old_outputs(&out);
    candidates::write_dir(&out, &file).map_err(CliError::Input)?;
    // On stderr, so that a report on stdout stays as it was; the summary has it too.
    eprint!(
        "{}",
        candidates::not_written_text(&file.stats, &limits(args))
    );
    Ok(Predicted {
        dir: dir.to_path_buf(),
        out,
        run,
        headers,
        file,
        keys,
    })
}

/// `--no-replay`: prints the candidates' summary (or the file's JSON).
fn candidates_only(p: &Predicted, args: &DetectArgs) -> Result<i32, CliError> {
    let path = p.out.join(candidates::FILE_NAME);
    match args.format {
        Format::Json | Format::Sarif => {
            let mut file = std::fs::File::open(&path)
                .map_err(|e| CliError::Input(format!("failed to read {}: {e}", path.display())))?;
            print_with(|out| std::io::copy(&mut file, out).map(drop))?;
        }
        Format::Text => with_names(&p.run.meta, |names| {
            print_with(|out| {
                candidates::write_summary(out, &p.file, names, &limits(args))?;
                writeln!(out, "candidates written to {}", path.display())
            })
        })?,
    }
    Ok(if p.file.candidates.is_empty() {
        exit::CLEAN
    } else {
        exit::FINDINGS
    })
}

/// Replays the candidates of every run (sharing the `bounds`) and prints one report of them all,
/// less what `suppressions` hide.
fn confirm(
    runs: &[Predicted],
    args: &DetectArgs,
    bounds: &ilgen_confirm::run::Bounds,
    suppressions: Option<&Suppressions>,
) -> Result<i32, CliError> {
    let progress = Progress::for_stderr(args.progress, args.quiet);
    let mut binaries = Vec::new();
    for p in runs {
        binaries.push(if p.file.candidates.is_empty() {
            // Nothing to replay: the binary need not even exist any more (it only names sites).
            Binary::load(&p.run.meta).ok()
        } else {
            // Replaying a rebuilt binary proves nothing: its build id must be the recorded one.
            Some(Binary::load(&p.run.meta)?)
        });
    }
    let jobs = runs
        .iter()
        .map(|p| {
            ilgen_confirm::run::absolute(&p.out).map(|dir| ilgen_confirm::Candidates {
                meta: &p.run.meta,
                headers: &p.headers,
                dir,
                candidates: &p.file.candidates,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    progress.replaying(jobs.iter().map(|j| j.candidates.len()).sum());
    let done = || progress.replay_done();
    ilgen_confirm::guard::keep_report();
    let replays = ilgen_confirm::replay_all(&jobs, bounds, !args.quiet, &done)?;
    let cut_short = replays
        .iter()
        .flatten()
        .filter_map(ilgen_confirm::Replayed::run)
        .filter(|r| matches!(r.ended, ilgen_confirm::run::Ended::Stopped(_)))
        .count();
    let mut parts = Vec::new();
    let mut notes = String::new();
    for (i, (p, (binary, replays))) in runs.iter().zip(binaries.iter().zip(replays)).enumerate() {
        let trace_dir = ilgen_confirm::run::absolute(&p.dir)?;
        let part = Report::of_run(
            binary.as_ref(),
            &p.run,
            &trace_dir.display().to_string(),
            &p.file.candidates,
            &replays,
        );
        let text = limits::text(
            &p.run.meta,
            &p.file,
            &part.counts,
            &limits(args),
            args.show_all,
            args.stats,
        );
        parts.push(part);
        if runs.len() > 1 && !text.is_empty() {
            notes.push_str(&format!("ilgen: run {}: {}:\n", i + 1, p.dir.display()));
        }
        notes.push_str(&text);
    }
    let mut report = Report::merge(parts);
    if let Some(s) = suppressions {
        report.suppress(s);
    }
    let c = &report.counts;
    progress.stage(&format!(
        "replayed {} candidate(s): {} confirmed",
        c.candidates,
        c.confirmed_races + c.confirmed_deadlocks
    ));
    progress.finish();
    let mut text = match (args.shard, runs) {
        (Some(shard), [p]) => {
            ilgen_report::json::render_shard(&report, &shard_info(shard, p, args)?)
        }
        _ => render(&report, args.format, args.show_all),
    };
    if args.format == Format::Text {
        text.push_str(&notes);
    }
    print_out(&text)?;
    let stopped = ilgen_confirm::guard::stopped_by();
    if let Some(sig) = stopped {
        eprintln!(
            "ilgen: stopped by {}: {cut_short} replay(s) cut short or not run; the report has what \
             the others proved",
            ilgen_report::dump::signal_name(sig).map_or_else(|| format!("signal {sig}"), str::to_owned)
        );
    }
    Ok(match stopped {
        _ if report.confirmed() => exit::FINDINGS,
        Some(sig) => exit::stopped(sig),
        None => exit::CLEAN,
    })
}

/// What a shard's report says about it, for `ilgen merge` to check and renumber by.
fn shard_info(shard: Shard, p: &Predicted, a: &DetectArgs) -> Result<ShardInfo, CliError> {
    // The options the candidates depend on: every shard of one analysis must have the same.
    let mut analysis = format!(
        "--solver {:?} --window {} --max-states {} --max-per-var {} --max-candidates {} \
         --fallbacks {}",
        a.solver, a.window, a.max_states, a.max_per_var, a.max_candidates, a.fallbacks
    );
    let flags = [
        (a.all_sites, "--all-sites"),
        (a.no_reads_from, "--no-reads-from"),
        (a.atomicity, "--atomicity"),
    ];
    let on = flags
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, f)| f.to_string());
    for flag in on.chain(a.atomic.iter().map(|g| format!("--atomic {g}"))) {
        analysis.push(' ');
        analysis.push_str(&flag);
    }
    ShardInfo::new(shard, &p.dir, &p.file.build_id, analysis, p.keys.clone())
        .map_err(|e| CliError::Input(e.to_string()))
}

fn limits(args: &DetectArgs) -> Limits {
    Limits {
        max_states: args.max_states,
        window: args.window,
        max_candidates: args.max_candidates,
    }
}
