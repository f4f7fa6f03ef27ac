//! The `ilgen` command: parses the command line, runs a subcommand, maps its error to an exit code.
//!
//! Takes the process arguments; gives the subcommand's output and one of the exit codes of
//! [`ilgen::exit`], with a single `ilgen: error: ...` line on stderr when it fails.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use ilgen::cc::{self, Lang};
use ilgen::detect::{self, DetectArgs};
use ilgen::error::CliError;
use ilgen::export_csp::{self as export, ExportArgs};
use ilgen::merge::{self, MergeArgs};
use ilgen::replay::{self, ReplayArgs};
use ilgen::run::{self as record_run, RunArgs};
use ilgen::{dump, exit};

/// The exit-code table of `--help`, built from the constants so that it cannot drift from them.
fn exit_codes() -> String {
    format!(
        "Exit codes:\n  \
         {:<3} clean: nothing confirmed (detect: no candidate, or replay confirmed none; \
         replay: the schedule was followed without error), or the command did what it was \
         asked\n  \
         {:<3} findings: detect confirmed a race or deadlock by replay (with --no-replay: a \
         candidate was predicted); replay confirmed its finding\n  \
         {:<3} usage or input error: bad flags, an unreadable, truncated, foreign or \
         wrong-version trace, a missing plugin or runtime\n  \
         {:<3} `ilgen replay` only: the schedule could not be followed (the program took another \
         path) or the replay ended without an outcome (timeout, crash); `ilgen detect` counts \
         such candidates as infeasible or failed and exits by its confirmed findings\n\n\
         `ilgen cc` and `ilgen c++` exit with clang's own status; `ilgen run` with the \
         program's ({} when its --timeout stopped it, 128+N when signal N ended it, {}/{} when \
         it could not be started).",
        exit::CLEAN,
        exit::FINDINGS,
        exit::INPUT_ERROR,
        exit::DIVERGED,
        exit::TIMEOUT,
        exit::CANNOT_RUN,
        exit::NOT_FOUND
    )
}

#[derive(Parser)]
#[command(
    name = "ilgen",
    version,
    about = "Record one run of a C/C++ pthreads program; predict its data races and deadlocks",
    after_help = exit_codes()
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile and link C like clang-19, instrumented for recording (a drop-in `CC`)
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Cc {
        /// clang arguments, passed through untouched
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<OsString>,
    },
    /// Compile and link C++ like clang++-19, instrumented for recording (a drop-in `CXX`)
    #[command(name = "c++", disable_help_flag = true, disable_version_flag = true)]
    Cxx {
        /// clang++ arguments, passed through untouched
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<OsString>,
    },
    /// Record one run of an instrumented program (`ilgen run [--timeout S] -- prog args`),
    /// print its trace directory and exit with the program's status (124 on timeout)
    Run(RunArgs),
    /// Print a recorded trace as text, one event per line
    Dump {
        /// Trace directory; default: the newest directory under ./ilgen-out/
        trace_dir: Option<PathBuf>,
    },
    /// Predict schedules of a recorded run (or of several runs of one binary, into one report)
    /// that lead to a data race or a deadlock, replay each to confirm it, and report the
    /// confirmed ones
    Detect(DetectArgs),
    /// Merge the JSON reports of the shards of one analysis (`ilgen detect --shard I/N`) into the
    /// report of the whole
    Merge(MergeArgs),
    /// Replay one candidate of `ilgen detect` and print its report, or debug it with --gdb
    Replay(ReplayArgs),
    /// Write the reorder model of a recorded run as CSP_M for the FDR refinement checker
    ExportCsp(ExportArgs),
}

/// Running out of memory is exit 2 with a message, never an abort (`ilgen_trace::memory`).
#[global_allocator]
static ALLOCATOR: ilgen_trace::memory::ExitOnExhaustion = ilgen_trace::memory::ExitOnExhaustion;

fn main() -> ExitCode {
    ilgen_trace::memory::one_arena();
    // The compiler wrappers take their arguments from the raw command line rather than from
    // clap: clap would swallow a `--` that clang must see, and every byte must reach clang as is.
    let raw: Vec<OsString> = std::env::args_os().collect();
    let lang = match raw.get(1).and_then(|a| a.to_str()) {
        Some("cc") => Some(Lang::C),
        Some("c++") => Some(Lang::Cxx),
        _ => None,
    };
    let result = match lang {
        Some(lang) => Err(cc::run(lang, &raw[2..])),
        None => match Cli::parse().command {
            Command::Cc { args } => Err(cc::run(Lang::C, &args)),
            Command::Cxx { args } => Err(cc::run(Lang::Cxx, &args)),
            Command::Run(args) => record_run::run(&args),
            Command::Dump { trace_dir } => dump::run(trace_dir.as_deref()).map(|()| exit::CLEAN),
            // Before any thread starts: replays must not outlive a stopped ilgen.
            Command::Detect(args) => {
                ilgen_confirm::guard::install();
                detect::run(&args)
            }
            Command::Merge(args) => merge::run(&args),
            Command::Replay(args) => {
                ilgen_confirm::guard::install();
                replay::run(&args)
            }
            Command::ExportCsp(args) => export::run(&args),
        },
    };
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => report(e),
    }
}

fn report(e: CliError) -> ExitCode {
    eprintln!("ilgen: error: {e}");
    ExitCode::from(e.exit_code() as u8)
}
