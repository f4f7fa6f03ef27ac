//! `ilgen run`: record runs of an instrumented program, with a time limit and perturbation.
//!
//! Takes the program and its arguments, an optional `--timeout`, trace directory, number of runs
//! and `--chaos` seed; gives the recorded trace directories (each path printed on stderr, so the
//! program's own output stays clean) and the last run's exit status as its own: 124 when the time
//! limit stopped it (as timeout(1) does), 128+N when signal N ended it, 126/127 when it could not
//! be started. Several runs (`--runs N`) stop early at the first one that failed (a signal ended
//! it, or the time limit): that trace is the one to look at. With `--chaos[=SEED]` run i is
//! perturbed with seed SEED+i (`ILGEN_OPTIONS=chaos=...`, recorded in meta.json), so the runs take
//! different orders and a race that only some order reveals is predicted from one of them.
//!
//! On timeout the program gets SIGTERM, which the runtime handles by flushing every thread's
//! trace and recording how the run ended; a program that does not end within [`KILL_GRACE`]
//! gets SIGKILL, after which every sync operation is still on disk (each thread file is a shared
//! mapping). While the program runs, `ilgen` ignores SIGINT and SIGQUIT as `system(3)` does: a
//! Ctrl-C reaches the program (same process group), which records its end, and `ilgen` still
//! prints where the trace is.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::error::CliError;
use crate::exit;

/// How long a program stopped by the time limit has after SIGTERM before SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// How often the wait for a timed program looks at it.
const POLL: Duration = Duration::from_millis(10);

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Stop the program after SECS seconds (SIGTERM, then SIGKILL 2 s later); exit 124
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Trace directory (with --runs: DIR/run-<i>); default: ilgen-out/<program>-<pid>
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Record this many runs, stopping at the first that fails (signal or time limit)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Perturb each run's schedule (PCT-style seeded priorities and delays); run i uses SEED+i
    #[arg(long, value_name = "SEED", num_args = 0..=1, require_equals = true, default_missing_value = "1")]
    pub chaos: Option<u64>,
    /// The instrumented program and its arguments (after `--`)
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, num_args = 1..)]
    pub command: Vec<OsString>,
}

pub fn run(args: &RunArgs) -> Result<i32, CliError> {
    let timeout = match args.timeout {
        Some(s) if !(s.is_finite() && s > 0.0) => {
            return Err(CliError::Input(format!(
                "--timeout {s}: give a positive number of seconds"
            )))
        }
        Some(s) => Some(Duration::from_secs_f64(s)),
        None => None,
    };
    let program = PathBuf::from(&args.command[0]);
    let mut status = exit::CLEAN;
    for i in 0..args.runs {
        let pattern = match (&args.out, args.runs) {
            (Some(dir), 1) => dir.clone(),
            (Some(dir), _) => dir.join(format!("run-{i}")),
            (None, _) => default_dir(&program),
        };
        let chaos = args.chaos.map(|seed| seed.wrapping_add(i as u64));
        let (code, failed) = record_once(args, &program, &pattern, chaos, timeout)?;
        status = code;
        if failed && i + 1 < args.runs {
            eprintln!(
                "ilgen: run {} of {} failed (status {code}): stopping here",
                i + 1,
                args.runs
            );
            break;
        }
    }
    Ok(status)
}

/// One recorded run into `pattern` (`%p`: the pid); gives its status and whether it failed
/// (a signal or the time limit ended it, or it could not be started).
fn record_once(
    args: &RunArgs,
    program: &Path,
    pattern: &Path,
    chaos: Option<u64>,
    timeout: Option<Duration>,
) -> Result<(i32, bool), CliError> {
    let pattern_text = pattern
        .to_str()
        .filter(|p| !p.contains([':', ' ', '\t', '\n']));
    let Some(pattern_text) = pattern_text else {
        return Err(CliError::Input(format!(
            "trace directory {}: ILGEN_OPTIONS cannot carry a path with ':' or spaces; \
             choose another with --out",
            pattern.display()
        )));
    };
    let mut options = std::env::var("ILGEN_OPTIONS").unwrap_or_default();
    // Later keys win in the runtime's parser: these override inherited ones.
    let mut add = |kv: String| {
        if !options.is_empty() {
            options.push(':');
        }
        options.push_str(&kv);
    };
    add(format!("trace_dir={pattern_text}"));
    if let Some(seed) = chaos {
        add(format!("chaos={seed}"));
    }

    let mut child = match Command::new(program)
        .args(&args.command[1..])
        .env("ILGEN_OPTIONS", &options)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("ilgen: error: cannot start {}: {e}", program.display());
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                exit::NOT_FOUND
            } else {
                exit::CANNOT_RUN
            };
            return Ok((code, true));
        }
    };
    // After the spawn: an ignored disposition would be inherited through exec.
    let _ignored = IgnoreInterrupts::new();
    let trace = PathBuf::from(pattern_text.replace("%p", &child.id().to_string()));
    let (status, timed_out) = wait(&mut child, timeout)
        .map_err(|e| CliError::Input(format!("waiting for {}: {e}", program.display())))?;

    if trace.join(ilgen_trace::meta::META_FILE).is_file() {
        eprintln!("ilgen: trace: {}", trace.display());
    } else {
        eprintln!(
            "ilgen: warning: no trace at {}: was {} built with `ilgen cc`?",
            trace.display(),
            program.display()
        );
    }
    if timed_out {
        eprintln!("ilgen: stopped {} after the time limit", program.display());
        return Ok((exit::TIMEOUT, true));
    }
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => (code, false),
        (None, Some(sig)) => (128 + sig, true),
        (None, None) => (exit::CANNOT_RUN, true),
    })
}

/// `ilgen-out/<basename>-%p`: what the runtime would choose, with the pid left to it.
fn default_dir(program: &Path) -> PathBuf {
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "prog".to_owned());
    Path::new("ilgen-out").join(format!("{name}-%p"))
}

/// Waits for `child`, stopping it when `timeout` passes; says whether the limit stopped it.
fn wait(
    child: &mut Child,
    timeout: Option<Duration>,
) -> std::io::Result<(std::process::ExitStatus, bool)> {
    let Some(limit) = timeout else {
        return Ok((child.wait()?, false));
    };
    if let Some(status) = wait_for(child, limit)? {
        return Ok((status, false));
    }
    signal(child, libc::SIGTERM);
    if let Some(status) = wait_for(child, KILL_GRACE)? {
        return Ok((status, true));
    }
    signal(child, libc::SIGKILL);
    Ok((child.wait()?, true))
}

/// `child`'s status if it ends within `limit`.
fn wait_for(
    child: &mut Child,
    limit: Duration,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        std::thread::sleep(POLL.min(limit.saturating_sub(start.elapsed())));
    }
    Ok(None)
}

fn signal(child: &Child, sig: libc::c_int) {
    // The pid is our own unreaped child: it cannot have been reused by another process.
    // SAFETY: kill(2) on a pid we own; no memory is passed.
    unsafe {
        libc::kill(child.id() as libc::pid_t, sig);
    }
}

/// SIGINT and SIGQUIT ignored for its lifetime, restored on drop (what `system(3)` does while
/// its child runs).
struct IgnoreInterrupts {
    old: [libc::sighandler_t; 2],
}

const INTERRUPTS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGQUIT];

impl IgnoreInterrupts {
    fn new() -> IgnoreInterrupts {
        // SAFETY: installs SIG_IGN, which runs no code in this process.
        let old = INTERRUPTS.map(|s| unsafe { libc::signal(s, libc::SIG_IGN) });
        IgnoreInterrupts { old }
    }
}

impl Drop for IgnoreInterrupts {
    fn drop(&mut self) {
        for (s, old) in INTERRUPTS.iter().zip(self.old) {
            // SAFETY: puts back the disposition this process had before `new`.
            unsafe {
                libc::signal(*s, old);
            }
        }
    }
}
