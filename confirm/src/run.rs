//! Running one replay: the recorded program under `mode=replay`, bounded in time.
//!
//! Takes the run's [`Meta`] (binary, argv, cwd), a schedule file and an output directory; gives a
//! [`ReplayRun`]: the process id, how it ended (status, signal or our timeout) and the
//! `replay-outcome.json` it wrote ([`Outcome`]). The program runs in its own process group, with
//! stdin from /dev/null and stdout/stderr into `stdout.txt`/`stderr.txt` of the output directory;
//! the whole group is killed on timeout, when the program ends, and when ilgen is stopped by a
//! signal (see [`crate::guard`]). [`run_all`] runs many replays, of one run or several, as many
//! at a time as [`Bounds`] allow (one per core by default).

use std::fs::File;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use ilgen_trace::replay::Outcome;
use ilgen_trace::Meta;
use rayon::prelude::*;

use crate::error::ConfirmError;
use crate::guard;

/// The environment variable the runtime reads its options from.
pub const OPTIONS_VAR: &str = "ILGEN_OPTIONS";

/// How replays are bounded: each one's time, and how many run at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub timeout: Duration,
    /// One per core by default. A program whose replays would collide when run together (a server
    /// on a fixed port, a lock file at a fixed path) needs 1.
    pub jobs: usize,
}

impl Bounds {
    /// From `--replay-timeout` (seconds) and `--replay-jobs` (`None`: one per core); 0 for either
    /// is an error naming the flag.
    pub fn new(timeout_secs: u64, jobs: Option<usize>) -> Result<Bounds, ConfirmError> {
        if timeout_secs == 0 {
            return Err(ConfirmError::Flag("--replay-timeout"));
        }
        if jobs == Some(0) {
            return Err(ConfirmError::Flag("--replay-jobs"));
        }
        Ok(Bounds {
            timeout: Duration::from_secs(timeout_secs),
            jobs: jobs.unwrap_or_else(cores),
        })
    }
}

/// One replay to run: schedule file in, outcome directory out.
#[derive(Clone, Debug)]
pub struct Request {
    pub schedule: PathBuf,
    pub out_dir: PathBuf,
}

/// How the replayed process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Signaled(i32),
    /// Still running after the timeout: its process group was killed.
    TimedOut,
    /// Not run, or killed while it ran, because ilgen was stopped by this signal
    /// ([`guard::keep_report`]).
    Stopped(i32),
}

#[derive(Clone, Debug)]
pub struct ReplayRun {
    pub pid: u32,
    pub ended: Ended,
    /// `None` when the process left no readable outcome; the reason says why.
    pub outcome: Result<Outcome, String>,
    pub out_dir: PathBuf,
}

/// The `ILGEN_OPTIONS` value that replays `schedule` of the run `meta` with its outcome in
/// `out_dir`, recording calls as the run did (`calls=1`: their markers are among each thread's
/// sync operations the schedule counts). The runtime splits options at `:` and white space, so
/// neither path may contain them.
pub fn options(meta: &Meta, schedule: &Path, out_dir: &Path) -> Result<String, ConfirmError> {
    for p in [schedule, out_dir] {
        let s = p.to_string_lossy();
        if s.contains(':') || s.chars().any(char::is_whitespace) {
            return Err(ConfirmError::PathInOptions(p.to_path_buf()));
        }
    }
    Ok(format!(
        "mode=replay:schedule={}:outcome_dir={}{}",
        schedule.display(),
        out_dir.display(),
        if meta.calls { ":calls=1" } else { "" }
    ))
}

/// Absolute form of `p` (relative to the current directory), so that it survives the replay's
/// change to the recorded working directory.
pub fn absolute(p: &Path) -> Result<PathBuf, ConfirmError> {
    std::path::absolute(p).map_err(|source| ConfirmError::Resolve {
        path: p.to_path_buf(),
        source,
    })
}

/// The recorded command (binary, `argv[1..]`, in the recorded directory, same `argv[0]`).
pub fn program(meta: &Meta) -> (PathBuf, Vec<String>) {
    let binary = Path::new(&meta.cwd).join(&meta.binary);
    (binary, meta.argv.iter().skip(1).cloned().collect())
}

/// The replay of `req` as one shell command line: what [`run`] executes, to print before it.
pub fn command_line(meta: &Meta, req: &Request) -> Result<String, ConfirmError> {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let (binary, args) = program(meta);
    let mut line = format!(
        "cd {} && {OPTIONS_VAR}={} {}",
        quote(&meta.cwd),
        quote(&options(meta, &req.schedule, &req.out_dir)?),
        quote(&binary.to_string_lossy())
    );
    for a in &args {
        line.push(' ');
        line.push_str(&quote(a));
    }
    if let Some(argv0) = meta.argv.first() {
        line.push_str(&format!(" (argv[0] {})", quote(argv0)));
    }
    Ok(line)
}

/// Runs one replay, killing its process group after `timeout`.
pub fn run(meta: &Meta, req: &Request, timeout: Duration) -> Result<ReplayRun, ConfirmError> {
    let options = options(meta, &req.schedule, &req.out_dir)?;
    std::fs::create_dir_all(&req.out_dir).map_err(|source| ConfirmError::Create {
        path: req.out_dir.clone(),
        source,
    })?;
    // An outcome of an earlier replay must not pass for this one's.
    let _ = std::fs::remove_file(req.out_dir.join(ilgen_trace::replay::OUTCOME_FILE));
    let output = |name: &str| {
        let path = req.out_dir.join(name);
        File::create(&path).map_err(|source| ConfirmError::Create { path, source })
    };
    let (binary, args) = program(meta);
    let mut cmd = Command::new(&binary);
    cmd.args(&args)
        .current_dir(&meta.cwd)
        .env(OPTIONS_VAR, options)
        .stdin(Stdio::null())
        .stdout(output("stdout.txt")?)
        .stderr(output("stderr.txt")?)
        .process_group(0);
    if let Some(argv0) = meta.argv.first() {
        cmd.arg0(argv0);
    }
    let stopped = |pid| {
        guard::stopped_by().map(|sig| ReplayRun {
            pid,
            ended: Ended::Stopped(sig),
            outcome: Outcome::read(&req.out_dir).map_err(|e| e.to_string()),
            out_dir: req.out_dir.clone(),
        })
    };
    let Some(child) = guard::spawn(&mut cmd) else {
        return stopped(0).ok_or(ConfirmError::Stopping);
    };
    let mut child = child.map_err(|source| ConfirmError::Start {
        binary: binary.clone(),
        source,
    })?;
    let pid = child.id();
    let start = Instant::now();
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => break ended(status),
            Ok(None) if start.elapsed() >= timeout => {
                guard::kill(pid);
                let _ = child.wait();
                break Ended::TimedOut;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                guard::kill(pid);
                return Err(ConfirmError::Wait { pid, source: e });
            }
        }
    };
    // Children the program left behind in its group end with it.
    guard::kill(pid);
    // Killed by the stop, not by itself: a race it wrote before still counts.
    if ended == Ended::Signaled(libc::SIGKILL) {
        if let Some(run) = stopped(pid) {
            return Ok(run);
        }
    }
    let outcome = Outcome::read(&req.out_dir).map_err(|e| e.to_string());
    Ok(ReplayRun {
        pid,
        ended,
        outcome,
        out_dir: req.out_dir.clone(),
    })
}

fn ended(status: ExitStatus) -> Ended {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => Ended::Exited(code),
        (None, Some(sig)) => Ended::Signaled(sig),
        (None, None) => Ended::Exited(-1),
    }
}

/// Runs every request, each of the run whose [`Meta`] it comes with, at most `bounds.jobs` at a
/// time, calling `done` after each; results in the requests' order.
pub fn run_all(
    reqs: &[(&Meta, Request)],
    bounds: Bounds,
    done: &(dyn Fn() + Sync),
) -> Vec<Result<ReplayRun, ConfirmError>> {
    let one = |(meta, req): &(&Meta, Request)| {
        let r = run(meta, req, bounds.timeout);
        done();
        r
    };
    // A pool of its own, one thread per job (by default one per core, so that replays never share
    // a core with each other), whatever else uses rayon's global pool. Without one, the global pool
    // serves, unless replays must not overlap: then one after another on this thread.
    match rayon::ThreadPoolBuilder::new()
        .num_threads(bounds.jobs.min(reqs.len()).max(1))
        .build()
    {
        Ok(pool) => pool.install(|| reqs.par_iter().map(one).collect()),
        Err(_) if bounds.jobs > 1 => reqs.par_iter().map(one).collect(),
        Err(_) => reqs.iter().map(one).collect(),
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_refuse_zero_naming_the_flag_and_default_to_one_job_per_core() {
        let flag = |r: Result<Bounds, ConfirmError>| r.unwrap_err().to_string();
        assert_eq!(
            flag(Bounds::new(0, None)),
            "--replay-timeout must be at least 1"
        );
        assert_eq!(
            flag(Bounds::new(5, Some(0))),
            "--replay-jobs must be at least 1"
        );
        let b = Bounds::new(5, Some(1)).unwrap();
        assert_eq!((b.timeout, b.jobs), (Duration::from_secs(5), 1));
        assert_eq!(Bounds::new(5, None).unwrap().jobs, cores());
    }
}
