//! `ilgen detect`: the command that strings the stages together.
//!
//! Takes a trace directory and the flags; runs the analysis ([`ilgen_analysis::analyze_with`]),
//! writes `candidates.json` and one `schedule-<n>.json` per candidate into the trace directory
//! ([`ilgen_analysis::candidates`]), and then, unless `--no-replay`, replays every candidate
//! ([`ilgen_confirm::replay_all`]) and prints the report of the confirmed findings
//! ([`ilgen_report`]); with `--no-replay` it prints the candidates' summary (or the file's JSON)
//! instead. Long analyses report their stages on stderr (on a terminal, or with `--progress`);
//! stdout stays deterministic. Gives an exit code: [`exit::FINDINGS`] when replay confirmed
//! something (with `--no-replay`: when there is a candidate), else [`exit::CLEAN`].

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use ilgen_analysis::candidates::{self, CandidatesFile, Names};
use ilgen_analysis::progress::Progress;
use ilgen_analysis::{window, Backend, Checker, Options};
use ilgen_binary::Binary;
use ilgen_report::{Context, Entry, Report};
use ilgen_trace::TraceDir;

use crate::dump;
use crate::error::CliError;
use crate::exit;
use crate::output::{print_out, render, Format};

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
    #[arg(long, default_value_t = ilgen_confirm::DEFAULT_TIMEOUT_SECS)]
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
    /// Predict orders that change what a deciding read (control flow, an address) saw; by
    /// default the native solver keeps each such read's observed writer
    #[arg(long)]
    pub no_reads_from: bool,
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
    let trace = TraceDir::open(&dir)?;
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
    let options = Options {
        max_per_var: args.max_per_var,
        all_sites: args.all_sites,
        window: args.window,
        max_states: MAX_STATES,
        backend,
        // A binary that cannot be loaded is reported below, where names need it.
        deciding: match Binary::load(&trace.meta) {
            Ok(binary) if !args.no_reads_from => binary.deciding_sites(),
            _ => Default::default(),
        },
    };
    let (stats, candidates) = ilgen_analysis::analyze_with(&trace.threads, &options, &progress)?;
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
    ilgen_confirm::remove_old_replays(&dir);
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
            let dir = ilgen_confirm::run::absolute(&dir)?;
            Report::new(&trace.meta.binary, &dir.display().to_string())
        } else {
            // Replaying a rebuilt binary proves nothing: its hash must be the recorded one.
            let binary = Binary::load(&trace.meta)?;
            let timeout = std::time::Duration::from_secs(args.replay_timeout);
            confirm(&trace, &dir, &binary, &file, timeout)?
        };
        let c = &report.counts;
        progress.stage(&format!(
            "replayed {} candidate(s): {} confirmed",
            c.candidates,
            c.confirmed_races + c.confirmed_deadlocks
        ));
        progress.finish();
        print_out(&render(&report, args.format, args.show_all))?;
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

/// Replays candidates `1..=n` of `file` (schedules in `dir`) on all cores; gives the report.
fn confirm(
    trace: &TraceDir,
    dir: &Path,
    binary: &Binary,
    file: &CandidatesFile,
    timeout: std::time::Duration,
) -> Result<Report, CliError> {
    let dir = ilgen_confirm::run::absolute(dir)?;
    let runs = ilgen_confirm::replay_all(&trace.meta, &dir, file.candidates.len(), timeout)?;
    let ctx = Context::new(Some(binary), &trace.threads);
    let mut report = Report::new(&trace.meta.binary, &dir.display().to_string());
    for (i, (c, r)) in file.candidates.iter().zip(runs).enumerate() {
        let verdict = ilgen_confirm::verdict::classify(&r);
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
