//! `ilgen detect`: the command that strings the stages together.
//!
//! Takes a trace directory and the flags; runs the analysis ([`ilgen_analysis::analyze_with`]),
//! writes `candidates.json` and one `schedule-<n>.json` per candidate into the trace directory
//! ([`ilgen_analysis::candidates`]), and then, unless `--no-replay`, replays every candidate
//! ([`ilgen_confirm::replay_all`]) and prints the report of the confirmed findings
//! ([`ilgen_report`]), led by the deadlock the recorded run itself ended in, if it did
//! ([`ilgen_analysis::observed`]); with `--no-replay` it prints the candidates' summary (or the file's JSON)
//! instead. Long analyses report their stages on stderr (on a terminal, or with `--progress`);
//! stdout stays deterministic. Gives an exit code: [`exit::FINDINGS`] when replay confirmed
//! something (with `--no-replay`: when there is a candidate), else [`exit::CLEAN`].

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use ilgen_analysis::candidates::{self, CandidatesFile, Limits, Names};
use ilgen_analysis::progress::Progress;
use ilgen_analysis::{observed, window, Backend, Checker, Options};
use ilgen_binary::Binary;
use ilgen_report::{Context, Entry, Report};
use ilgen_trace::{RunEnd, TraceDir};

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
    /// Predict orders that change what a deciding read (one that decides an address) saw; by
    /// default the native solver keeps each such read's observed writer
    #[arg(long)]
    pub no_reads_from: bool,
    /// Also predict atomicity violations of the transactions the program marks (`ilgen.h`):
    /// two accesses of one transaction and a conflicting access of another thread between them
    #[arg(long)]
    pub atomicity: bool,
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
    if args.window == 0 || args.max_per_var == 0 || args.max_states == 0 {
        return Err(CliError::Input(
            "--window, --max-per-var and --max-states must be at least 1".into(),
        ));
    }
    let dir = dump::trace_dir(args.trace_dir.as_deref())?;
    if !args.no_replay {
        crate::trust::check(&dir, args.trust_trace)?;
    }
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
        max_states: args.max_states,
        backend,
        // A binary that cannot be loaded is reported below, where names need it.
        deciding: match Binary::load(&trace.meta) {
            Ok(binary) if !args.no_reads_from => binary.deciding_sites(),
            _ => Default::default(),
        },
        atomicity: args.atomicity,
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
        let abs = ilgen_confirm::run::absolute(&dir)?;
        // A run that did not exit may have ended deadlocked: that is a finding without replay.
        let observed = (trace.meta.end != Some(RunEnd::Exit))
            .then(|| observed::observed_deadlock(&trace.threads))
            .flatten();
        let binary = if file.candidates.is_empty() {
            // Nothing to replay: the binary need not even exist any more (it only names sites).
            Binary::load(&trace.meta).ok()
        } else {
            // Replaying a rebuilt binary proves nothing: its hash must be the recorded one.
            Some(Binary::load(&trace.meta)?)
        };
        let ctx = Context::new(binary.as_ref(), &trace.threads);
        let mut report = Report::new(&ctx, &trace.meta.binary, &abs.display().to_string());
        if let Some(o) = &observed {
            report.observe(&ctx, o, trace.meta.pid);
        }
        if !file.candidates.is_empty() {
            let timeout = std::time::Duration::from_secs(args.replay_timeout);
            confirm(&trace, &abs, &ctx, &file, timeout, &mut report)?;
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
            text.push_str(&limits_text(&trace, &file, args));
        }
        print_out(&text)?;
        return Ok(if report.confirmed() {
            exit::FINDINGS
        } else {
            exit::CLEAN
        });
    }
    let text = match args.format {
        Format::Json | Format::Sarif => format!("{json}\n"),
        Format::Text => format!(
            "{}candidates written to {}\n",
            with_names(&trace, |names| candidates::summary(
                &file,
                names,
                &limits(args)
            )),
            path.display()
        ),
    };
    print_out(&text)?;
    Ok(if file.candidates.is_empty() {
        exit::CLEAN
    } else {
        exit::FINDINGS
    })
}

/// `f` given names for the recorded binary's sites and objects (ids and addresses when the
/// binary cannot be read).
fn with_names<R>(trace: &TraceDir, f: impl FnOnce(&Names) -> R) -> R {
    let binary = Binary::load_or_warn(&trace.meta, "sites are shown as ids");
    let site = |id| {
        let s = binary.as_ref()?.site(id)?;
        Some(format!("{}:{} in {}", s.file, s.line, s.function))
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
    }
}

/// What follows the text report: race pairs a limit left undecided (listed with `--show-all`,
/// else counted in one line), and with `--stats` the analysis's counts.
fn limits_text(trace: &TraceDir, file: &CandidatesFile, args: &DetectArgs) -> String {
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
    }
    out
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

/// Replays candidates `1..=n` of `file` (schedules in the absolute `dir`) on all cores; adds their
/// verdicts to `report`.
fn confirm(
    trace: &TraceDir,
    dir: &Path,
    ctx: &Context,
    file: &CandidatesFile,
    timeout: std::time::Duration,
    report: &mut Report,
) -> Result<(), CliError> {
    for (n, req) in ilgen_confirm::requests(dir, file.candidates.len())
        .iter()
        .enumerate()
    {
        eprintln!(
            "ilgen: replaying candidate {}: {}",
            n + 1,
            ilgen_confirm::run::command_line(&trace.meta, req)?
        );
    }
    let runs = ilgen_confirm::replay_all(&trace.meta, dir, file.candidates.len(), timeout)?;
    for (i, (c, r)) in file.candidates.iter().zip(runs).enumerate() {
        let verdict = ilgen_confirm::verdict::classify(&r);
        report.add(
            ctx,
            &Entry {
                number: i + 1,
                candidate: c,
                run: Some(&r),
                verdict,
            },
        );
    }
    Ok(())
}
