//! `ilgen detect`: the command that strings the stages together.
//!
//! Takes one or more trace directories (runs of one binary) and the flags; runs the analysis of
//! each, in parallel ([`ilgen_analysis::analyze_with`]), writes `candidates.json` and one
//! `schedule-<n>.json` per candidate into each trace directory ([`ilgen_analysis::candidates`]),
//! and then, unless `--no-replay`, replays every candidate against its own run
//! ([`ilgen_confirm::replay_all`]) and prints one report of the confirmed findings of all runs
//! ([`ilgen_report::Report::merge`]), led by the deadlock a recorded run itself ended in, if one
//! did ([`ilgen_analysis::observed`]); with `--no-replay` (one trace) it prints the candidates'
//! summary (or the file's JSON) instead. A suppressions file (`--suppressions`, or
//! `ILGEN_OPTIONS=suppressions=FILE`) hides the confirmed findings it matches
//! ([`ilgen_report::Report::suppress`]): counted in the report, not in the exit code. Long analyses report their stages on stderr (on a terminal, or with `--progress`);
//! stdout stays deterministic. Gives an exit code: [`exit::FINDINGS`] when replay confirmed
//! something (with `--no-replay`: when there is a candidate), else [`exit::CLEAN`].

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use ilgen_analysis::candidates::{self, CandidatesFile, Limits, Names};
use ilgen_analysis::progress::Progress;
use ilgen_analysis::{observed, window, Backend, Checker, Options};
use ilgen_binary::{Binary, BinaryError};
use ilgen_confirm::run::ReplayRun;
use ilgen_report::suppress::Suppressions;
use ilgen_report::{Context, Counts, Entry, Report, Run};
use ilgen_trace::format::ThreadTrace;
use ilgen_trace::{Event, RunEnd, SiteId, SyncOp, TraceDir};
use rayon::prelude::*;

use crate::dump;
use crate::error::CliError;
use crate::exit;
use crate::output::{print_out, render, Format};

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
    /// Output format (json: with --no-replay the candidates file, else the report)
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Show progress on stderr even when it is not a terminal (on a terminal it always is)
    #[arg(long)]
    pub progress: bool,
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
    /// Also predict atomicity violations of the transactions the program marks (`ilgen.h`):
    /// two accesses of one transaction and a conflicting access of another thread between them
    #[arg(long)]
    pub atomicity: bool,
    /// Check only the recorded transactions whose function (where their `tx_begin` is: the
    /// marked function, or the one holding ILGEN_ATOMIC_BEGIN) matches GLOB; repeatable; implies
    /// --atomicity. It selects among what the run recorded: a function not marked when compiling
    /// is no transaction (mark by name then: ILGEN_PASS_OPTIONS=atomic=fun:GLOB)
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

/// Default of `--max-candidates`: bounds the analysis's memory, the candidates file, the schedule
/// files and the replays (each replay runs the program once).
const MAX_CANDIDATES: usize = 1000;

/// States ilgen's CSP checker may explore per assertion (`--solver check`): it has no partial-order
/// reduction, so it needs more than the native search for the same model.
const CHECKER_STATES: usize = 2_000_000;

/// One recorded run, analysed: its trace, the candidates written into its directory.
struct Predicted {
    dir: PathBuf,
    trace: TraceDir,
    file: CandidatesFile,
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
    if args.replay_timeout == 0 {
        return Err(CliError::Input(
            "--replay-timeout must be at least 1".into(),
        ));
    }
    if args.window == 0 || args.max_per_var == 0 || args.max_states == 0 || args.max_candidates == 0
    {
        return Err(CliError::Input(
            "--window, --max-per-var, --max-states and --max-candidates must be at least 1".into(),
        ));
    }
    let suppressions = crate::output::suppressions(args.suppressions.as_deref())?;
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
        one_binary(&dirs)?;
    }
    if !args.no_replay {
        for dir in &dirs {
            crate::trust::check(dir, args.trust_trace)?;
        }
    }
    let runs = dirs
        .par_iter()
        .map(|dir| predict(dir, args))
        .collect::<Result<Vec<_>, _>>()?;
    match runs.as_slice() {
        [one] if args.no_replay => candidates_only(one, args),
        _ => confirm(&runs, args, suppressions.as_ref()),
    }
}

/// Refuses traces of different binaries (or one trace twice): their findings cannot be merged,
/// and one directory's candidate files would be written twice at once.
fn one_binary(dirs: &[PathBuf]) -> Result<(), CliError> {
    let mut seen: Vec<(PathBuf, &Path, ilgen_trace::Meta)> = Vec::new();
    for dir in dirs {
        let meta = ilgen_trace::Meta::read(dir)?;
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
        if let Some((_, first, _)) = seen.iter().find(|(r, _, _)| *r == real) {
            return Err(CliError::Input(format!(
                "{} and {} are the same trace directory; give each run once",
                first.display(),
                dir.display()
            )));
        }
        if let Some((_, first, m)) = seen.first() {
            if m.build_id != meta.build_id {
                return Err(CliError::Input(format!(
                    "{} and {} were recorded from different binaries ({} and {}, or the same \
                     path rebuilt); detect runs of one binary together, or each trace alone",
                    first.display(),
                    dir.display(),
                    m.binary,
                    meta.binary
                )));
            }
        }
        seen.push((real, dir, meta));
    }
    Ok(())
}

/// With `--atomic` GLOBs: the sites of the recorded `tx_begin`s whose function matches one of
/// them (a GLOB that matches none is warned about); without: `None`, every transaction.
fn selected_transactions(
    threads: &[ThreadTrace],
    binary: &Result<Binary, BinaryError>,
    globs: &[String],
) -> Result<Option<BTreeSet<SiteId>>, CliError> {
    if globs.is_empty() {
        return Ok(None);
    }
    let binary = binary.as_ref().map_err(|e| {
        CliError::Input(format!(
            "--atomic selects transactions by function name, which needs the recorded binary: {e}"
        ))
    })?;
    let patterns = globs
        .iter()
        .map(|g| {
            glob::Pattern::new(g).map_err(|e| {
                CliError::Input(format!(
                    "--atomic `{g}` is not a glob ({e}): use *, ? and [...] on function names"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let begins: BTreeMap<SiteId, &str> = threads
        .iter()
        .flat_map(|t| &t.events)
        .filter_map(|e| match e {
            Event::Sync(s) if s.op == SyncOp::TxBegin => Some(s.site),
            _ => None,
        })
        .filter_map(|site| Some((site, binary.site(site)?.frame.function.as_str())))
        .collect();
    for (g, p) in globs.iter().zip(&patterns) {
        if !begins.values().any(|f| p.matches(f)) {
            let names: BTreeSet<&str> = begins.values().copied().collect();
            let names: Vec<&str> = names.into_iter().collect();
            eprintln!(
                "ilgen: warning: --atomic `{g}` matches none of the recorded transactions ({})",
                names.join(", ")
            );
        }
    }
    Ok(Some(
        begins
            .into_iter()
            .filter(|(_, f)| patterns.iter().any(|p| p.matches(f)))
            .map(|(site, _)| site)
            .collect(),
    ))
}

/// Reads the trace in `dir`, predicts its candidates and writes them (`candidates.json`, one
/// `schedule-<n>.json` each) into `dir`.
fn predict(dir: &Path, args: &DetectArgs) -> Result<Predicted, CliError> {
    let progress = Progress::for_stderr(args.progress);
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
    let transactions = selected_transactions(&trace.threads, &binary, &args.atomic)?;
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
        atomicity: args.atomicity || !args.atomic.is_empty(),
        transactions,
        max_candidates: args.max_candidates,
    };
    let (stats, candidates) = ilgen_analysis::analyze_with(&trace.threads, &options, &progress)?;
    progress.finish();
    let file = CandidatesFile {
        format_version: candidates::FORMAT_VERSION,
        binary: trace.meta.binary.clone(),
        build_id: trace.meta.build_id.clone(),
        stats,
        candidates,
    };
    let failed = |path: &Path, e: std::io::Error| {
        CliError::Input(format!("failed to write {}: {e}", path.display()))
    };
    let path = dir.join(candidates::FILE_NAME);
    std::fs::File::create(&path)
        .and_then(|f| candidates::write(&file, f))
        .map_err(|e| failed(&path, e))?;
    // On stderr, so that a report on stdout stays as it was; the summary has it too.
    eprint!(
        "{}",
        candidates::not_written_text(&file.stats, &limits(args))
    );
    remove_old_schedules(dir);
    ilgen_confirm::remove_old_replays(dir);
    let headers: Vec<_> = trace.threads.iter().map(|t| t.header).collect();
    for (i, c) in file.candidates.iter().enumerate() {
        let schedule = candidates::replay_schedule(c, &headers, &file.build_id);
        let path = dir.join(candidates::schedule_file_name(i + 1));
        std::fs::write(&path, format!("{}\n", schedule.to_json())).map_err(|e| failed(&path, e))?;
    }
    Ok(Predicted {
        dir: dir.to_path_buf(),
        trace,
        file,
    })
}

/// `--no-replay`: prints the candidates' summary (or the file's JSON).
fn candidates_only(p: &Predicted, args: &DetectArgs) -> Result<i32, CliError> {
    let text = match args.format {
        Format::Json | Format::Sarif => {
            let path = p.dir.join(candidates::FILE_NAME);
            std::fs::read_to_string(&path)
                .map_err(|e| CliError::Input(format!("failed to read {}: {e}", path.display())))?
        }
        Format::Text => format!(
            "{}candidates written to {}\n",
            with_names(&p.trace, |names| candidates::summary(
                &p.file,
                names,
                &limits(args)
            )),
            p.dir.join(candidates::FILE_NAME).display()
        ),
    };
    print_out(&text)?;
    Ok(if p.file.candidates.is_empty() {
        exit::CLEAN
    } else {
        exit::FINDINGS
    })
}

/// Replays the candidates of every run (sharing the cores) and prints one report of them all,
/// less what `suppressions` hide.
fn confirm(
    runs: &[Predicted],
    args: &DetectArgs,
    suppressions: Option<&Suppressions>,
) -> Result<i32, CliError> {
    let progress = Progress::for_stderr(args.progress);
    let count: usize = runs.iter().map(|p| p.file.candidates.len()).sum();
    progress.begin(&format!("replaying {count} candidate(s)"));
    let mut absolute = Vec::new();
    for p in runs {
        let abs = ilgen_confirm::run::absolute(&p.dir)?;
        for (n, req) in ilgen_confirm::requests(&abs, p.file.candidates.len())
            .iter()
            .enumerate()
        {
            // The command line names the schedule, so its trace directory too.
            eprintln!(
                "ilgen: replaying candidate {}: {}",
                n + 1,
                ilgen_confirm::run::command_line(&p.trace.meta, req)?
            );
        }
        absolute.push(abs);
    }
    let mut binaries = Vec::new();
    for p in runs {
        binaries.push(if p.file.candidates.is_empty() {
            // Nothing to replay: the binary need not even exist any more (it only names sites).
            Binary::load(&p.trace.meta).ok()
        } else {
            // Replaying a rebuilt binary proves nothing: its build id must be the recorded one.
            Some(Binary::load(&p.trace.meta)?)
        });
    }
    let jobs: Vec<ilgen_confirm::Candidates> = runs
        .iter()
        .zip(&absolute)
        .map(|(p, abs)| ilgen_confirm::Candidates {
            meta: &p.trace.meta,
            dir: abs,
            count: p.file.candidates.len(),
        })
        .collect();
    let timeout = std::time::Duration::from_secs(args.replay_timeout);
    let replays = ilgen_confirm::replay_all(&jobs, timeout)?;
    let mut parts = Vec::new();
    let mut limits = String::new();
    for (i, ((p, abs), (binary, replays))) in runs
        .iter()
        .zip(&absolute)
        .zip(binaries.iter().zip(replays))
        .enumerate()
    {
        let part = report(p, abs, binary.as_ref(), &replays);
        let text = limits_text(&p.trace, &p.file, &part.counts, args);
        parts.push(part);
        if runs.len() > 1 && !text.is_empty() {
            limits.push_str(&format!("ilgen: run {}: {}:\n", i + 1, p.dir.display()));
        }
        limits.push_str(&text);
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
    let mut text = render(&report, args.format, args.show_all);
    if args.format == Format::Text {
        text.push_str(&limits);
    }
    print_out(&text)?;
    Ok(if report.confirmed() {
        exit::FINDINGS
    } else {
        exit::CLEAN
    })
}

/// The report of one run: the deadlock it ended in, if it did, and its candidates' verdicts.
fn report(p: &Predicted, abs: &Path, binary: Option<&Binary>, replays: &[ReplayRun]) -> Report {
    let meta = &p.trace.meta;
    let ctx = Context::new(binary, &p.trace.threads);
    let run = Run {
        trace_dir: abs.display().to_string(),
        chaos_seed: meta.chaos_seed,
    };
    let mut report = Report::new(&ctx, &meta.binary, run);
    // A run that did not exit may have ended deadlocked: that is a finding without replay.
    let observed = (meta.end != Some(RunEnd::Exit))
        .then(|| observed::observed_deadlock(&p.trace.threads))
        .flatten();
    if let Some(o) = &observed {
        report.observe(&ctx, o, meta.pid);
    }
    for (i, (c, r)) in p.file.candidates.iter().zip(replays).enumerate() {
        report.add(
            &ctx,
            &Entry {
                number: i + 1,
                candidate: c,
                run: Some(r),
                verdict: ilgen_confirm::verdict::classify(r),
            },
        );
    }
    report
}

/// `f` given names for the recorded binary's sites and objects (ids and addresses when the
/// binary cannot be read).
fn with_names<R>(trace: &TraceDir, f: impl FnOnce(&Names) -> R) -> R {
    let binary = Binary::load_or_warn(&trace.meta, "sites are shown as ids");
    let site = |id| {
        let s = binary.as_ref()?.site(id)?;
        Some(format!(
            "{}:{} in {}",
            s.frame.file, s.frame.line, s.frame.function
        ))
    };
    let object = |addr| binary.as_ref()?.object_name(addr);
    f(&Names {
        site: &site,
        object: &object,
    })
}

fn limits(args: &DetectArgs) -> Limits {
    Limits {
        max_states: args.max_states,
        window: args.window,
        max_candidates: args.max_candidates,
    }
}

/// What follows the text report of one run: race pairs a limit left undecided (listed with
/// `--show-all`, else counted in one line), and with `--stats` the analysis's counts and the
/// run's replay divergence rate (`replayed`: its candidates' verdicts).
fn limits_text(
    trace: &TraceDir,
    file: &CandidatesFile,
    replayed: &Counts,
    args: &DetectArgs,
) -> String {
    let mut out = String::new();
    let open = &file.stats.not_decided;
    if args.show_all && !open.is_empty() {
        out.push_str(&with_names(trace, |names| {
            candidates::not_decided_text(&file.stats, names, &limits(args))
        }));
    } else if !open.is_empty() {
        let pairs: u64 = open.iter().map(|n| n.pairs).sum();
        out.push_str(&format!(
            "ilgen: {pairs} race pair(s) on {} object(s) not decided (a limit stopped the \
             search); --show-all lists them with the limit to raise\n",
            open.len()
        ));
    }
    if args.stats {
        out.push_str("ilgen: analysis:\n");
        out.push_str(&candidates::stats_text(&file.stats));
        out.push_str(&divergence_text(replayed));
    }
    out
}

/// The replay divergence rate of one run: replays whose schedule could not be followed (verdict
/// infeasible) of the replays run, one per candidate.
fn divergence_text(c: &Counts) -> String {
    if c.candidates == 0 {
        return "ilgen: replay: no candidate to replay\n".into();
    }
    format!(
        "ilgen: replay: {} of {} replay(s) diverged (divergence rate {:.0}%)\n",
        c.infeasible,
        c.candidates,
        100.0 * c.infeasible as f64 / c.candidates as f64
    )
}

/// Removes the schedule files an earlier `ilgen detect` wrote, so that none outlives its candidate.
fn remove_old_schedules(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let numbered = name
            .strip_prefix("schedule-")
            .and_then(|n| n.strip_suffix(".json"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if numbered {
            // A file that cannot be removed is overwritten or left; neither loses a finding.
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
