//! `ilgen detect`: from one recorded run to candidate schedules of data races and deadlocks.
//!
//! Takes a trace directory; gives `candidates.json` and one `schedule-<n>.json` per candidate in
//! it (see [`candidates`]), a summary on
//! stdout (or the file's JSON with `--format json`) and an exit code. The stages, one module each:
//! [`prepare`] (trace → shared objects and the full [`model`]) → [`filter`] (weakened
//! happens-before and locksets) → [`solve`] (per surviving variable, cut-based fast path, else
//! exhaustive search over [`window`]s; deadlocks on the sync-only model) → [`candidates`]; both
//! solvers move through the model by the sync semantics of [`state`]. Independent variables are
//! solved on all cores. Long analyses report their stages and solver jobs on stderr ([`progress`]:
//! on a terminal, or with `--progress`); stdout stays deterministic.
//!
//! Without `--no-replay` every candidate is then replayed ([`crate::replay::confirm`]) and the
//! output is the report of the confirmed findings ([`crate::report`]) instead of the summary;
//! the exit code is [`exit::FINDINGS`] when replay confirmed something, else [`exit::CLEAN`].

pub mod candidates;
pub mod filter;
pub mod model;
pub mod prepare;
pub mod progress;
pub mod solve;
pub mod state;
pub mod window;

#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use ilgen_trace::format::ThreadTrace;

use crate::binary::Binary;
use crate::csp;
use crate::dump;
use crate::error::CliError;
use crate::exit;
use crate::replay;
use candidates::{Candidate, CandidatesFile, Names, Stats};
use progress::Progress;
use solve::{Backend, Options};

#[derive(clap::Args, Clone, Debug)]
pub struct DetectArgs {
    /// Trace directory of the recorded run [default: the newest under ./ilgen-out/]
    pub trace_dir: Option<PathBuf>,
    /// Stop at candidate schedules, without replaying them
    #[arg(long)]
    pub no_replay: bool,
    /// Also list the candidates replay did not confirm, with the reason
    #[arg(long)]
    pub show_all: bool,
    /// Seconds each replay may run before its process group is killed
    #[arg(long, default_value_t = crate::replay::DEFAULT_TIMEOUT_SECS)]
    pub replay_timeout: u64,
    /// Sync events per window of the exhaustive search
    #[arg(long, default_value_t = window::DEFAULT_SIZE)]
    pub window: usize,
    /// Candidates per shared variable (and deadlocks in all)
    #[arg(long, default_value_t = 1)]
    pub max_per_var: usize,
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

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    /// SARIF 2.1.0 (confirmed findings; not with --no-replay)
    Sarif,
}

/// States the exhaustive search may visit for one variable (or for deadlocks) before it gives up:
/// bounds time and memory (each state is kept for the visited set).
const MAX_STATES: usize = 200_000;

/// States ilgen's CSP checker may explore per assertion (`--solver check`): it has no partial-order
/// reduction, so it needs more than the native search for the same model.
const CHECKER_STATES: usize = 2_000_000;

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
    if args.window == 0 || args.max_per_var == 0 {
        return Err(CliError::Input(
            "--window and --max-per-var must be at least 1".into(),
        ));
    }
    let dir = dump::trace_dir(args.trace_dir.as_deref())?;
    let progress = Progress::for_stderr(args.progress);
    progress.begin(&format!("reading {}", dir.display()));
    let trace = crate::dump::open_trace(&dir)?;
    let events: usize = trace.threads.iter().map(|t| t.events.len()).sum();
    progress.stage(&format!(
        "read {} threads, {events} events from {}",
        trace.threads.len(),
        dir.display()
    ));
    let backend = match args.solver {
        Solver::Native => Backend::Native,
        Solver::Check => Backend::Csp(csp::solve::Checker::Builtin {
            max_states: CHECKER_STATES,
        }),
        Solver::Fdr => Backend::Csp(csp::solve::Checker::Fdr {
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
    let options = Options {
        max_per_var: args.max_per_var,
        all_sites: args.all_sites,
        window: args.window,
        max_states: MAX_STATES,
        backend,
    };
    let (stats, candidates) = analyze_with(&trace.threads, &options, &progress)?;
    let file = CandidatesFile {
        format_version: candidates::FORMAT_VERSION,
        binary: trace.meta.binary.clone(),
        binary_hash: trace.meta.binary_hash.clone(),
        stats,
        candidates,
    };
    let json = serde_json::to_string_pretty(&file)
        .map_err(|e| CliError::Input(format!("failed to encode the candidates: {e}")))?;
    let path = dir.join(candidates::FILE_NAME);
    let write = |path: &Path, text: String| {
        std::fs::write(path, text)
            .map_err(|e| CliError::Input(format!("failed to write {}: {e}", path.display())))
    };
    if args.no_replay {
        progress.finish();
    }
    write(&path, format!("{json}\n"))?;
    remove_old_schedules(&dir);
    replay::remove_old_replays(&dir);
    let headers: Vec<_> = trace.threads.iter().map(|t| t.header).collect();
    for (i, c) in file.candidates.iter().enumerate() {
        let schedule = candidates::replay_schedule(c, &headers, &file.binary_hash);
        let name = candidates::schedule_file_name(i + 1);
        write(&dir.join(name), format!("{}\n", schedule.to_json()))?;
    }
    if !args.no_replay {
        progress.begin(&format!("replaying {} candidate(s)", file.candidates.len()));
        let report = if file.candidates.is_empty() {
            // Nothing to replay: the binary need not even exist any more.
            let dir = replay::run::absolute(&dir)?;
            crate::report::Report::new(&trace.meta.binary, &dir.display().to_string())
        } else {
            // Replaying a rebuilt binary proves nothing: its hash must be the recorded one.
            let binary = Binary::load(&trace.meta)?;
            let timeout = std::time::Duration::from_secs(args.replay_timeout);
            replay::confirm(&trace, &dir, &binary, &file, timeout)?
        };
        let c = &report.counts;
        progress.stage(&format!(
            "replayed {} candidate(s): {} confirmed",
            c.candidates,
            c.confirmed_races + c.confirmed_deadlocks
        ));
        progress.finish();
        print_out(&replay::render(&report, args.format, args.show_all))?;
        return Ok(if report.confirmed() {
            exit::FINDINGS
        } else {
            exit::CLEAN
        });
    }
    let text = match args.format {
        Format::Json | Format::Sarif => format!("{json}\n"),
        Format::Text => {
            let binary = Binary::load_or_warn(&trace.meta, "sites are shown as ids");
            let site = |id| {
                let s = binary.as_ref()?.site(id)?;
                Some(format!("{}:{} in {}", s.file, s.line, s.function))
            };
            let object = |addr| binary.as_ref()?.object_name(addr);
            let names = Names {
                site: &site,
                object: &object,
            };
            format!(
                "{}candidates written to {}\n",
                candidates::summary(&file, &names),
                path.display()
            )
        }
    };
    print_out(&text)?;
    Ok(if file.candidates.is_empty() {
        exit::CLEAN
    } else {
        exit::FINDINGS
    })
}

/// Writes the summary to stdout. A reader that closed the pipe early (`ilgen detect | head`) is
/// no error: the candidates are on disk and the exit code still says whether there are any.
pub fn print_out(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::Input(format!("failed to write the summary: {e}"))),
    }
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

/// What one job of [`analyze`] found, or why a CSP checker could not say.
type Job = Result<(solve::SolveStats, Vec<Candidate>), String>;

/// The whole analysis of one run: races per surviving variable (in parallel), then deadlocks.
pub fn analyze(
    threads: &[ThreadTrace],
    options: &Options,
) -> Result<(Stats, Vec<Candidate>), CliError> {
    analyze_with(threads, options, &Progress::off())
}

/// [`analyze`], reporting its stages and solver jobs to `progress`.
pub fn analyze_with(
    threads: &[ThreadTrace],
    options: &Options,
    progress: &Progress,
) -> Result<(Stats, Vec<Candidate>), CliError> {
    progress.begin("preparing the model");
    let program = prepare::prepare(threads);
    progress.stage(&format!(
        "prepared {} shared objects, {} accesses kept",
        program.vars.len(),
        program.accesses_kept
    ));
    let (survivors, filter_stats) = filter::filter(&program);
    progress.stage(&format!(
        "filtered: {} of {} shared objects left, {} race pairs",
        filter_stats.vars_left, filter_stats.vars_shared, filter_stats.pairs_left
    ));
    // Job 0 is deadlocks (often the longest, so it starts first); job i > 0 is the races of
    // survivor i - 1.
    let jobs = survivors.len() + 1;
    progress.solving(jobs);
    let window_done = || progress.window_done();
    let results: Vec<Mutex<Option<Job>>> = (0..jobs).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let job = next.fetch_add(1, Ordering::Relaxed);
                if job >= jobs {
                    break;
                }
                let solved = match (&options.backend, job.checked_sub(1)) {
                    (Backend::Native, Some(i)) => Ok(solve::races_with(
                        &program,
                        &survivors[i],
                        options,
                        &window_done,
                    )),
                    (Backend::Native, None) => {
                        Ok(solve::deadlocks_with(&program, options, &window_done))
                    }
                    (Backend::Csp(checker), Some(i)) => {
                        csp::solve::races(&program, &survivors[i], checker)
                    }
                    (Backend::Csp(checker), None) => csp::solve::deadlocks(&program, checker),
                };
                let outcome = solved.map(|solved| {
                    let found: Vec<Candidate> = solved
                        .findings
                        .iter()
                        .filter_map(|f| candidates::candidate(&solved.model, &program.vars, f))
                        .collect();
                    progress.job_done(found.len());
                    (solved.stats, found)
                });
                if let Ok(mut slot) = results[job].lock() {
                    *slot = Some(outcome);
                }
            });
        }
    });
    let mut stats = Stats {
        threads: threads.len(),
        sync_events: program
            .model
            .threads
            .iter()
            .flat_map(|t| &t.events)
            .filter(|e| e.observed().is_some())
            .count(),
        accesses_read: program.accesses_read,
        accesses_kept: program.accesses_kept,
        filter: filter_stats,
        solve: solve::SolveStats::default(),
    };
    let mut all = Vec::new();
    let mut deadlocks = Vec::new();
    for (job, slot) in results.into_iter().enumerate() {
        let outcome = slot.into_inner().ok().flatten();
        if let Some(Err(e)) = outcome {
            return Err(CliError::Input(e));
        }
        if let Some(Ok((s, found))) = outcome {
            stats.solve.add(&s);
            if job == 0 {
                deadlocks = found;
            } else {
                all.extend(found);
            }
        }
    }
    // Races by object address (survivors are in that order), then deadlocks.
    all.extend(deadlocks);
    Ok((stats, all))
}
