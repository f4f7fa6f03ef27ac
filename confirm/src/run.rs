//! Running one replay: the recorded program under `mode=replay`, bounded in time.
//!
//! Takes the run's [`Meta`] (binary, argv, cwd), a schedule file and an output directory; gives a
//! [`ReplayRun`]: the process id, how it ended (status, signal or our timeout) and the
//! `replay-outcome.json` it wrote ([`Outcome`]). With [`Bounds::before`], a shell command first
//! resets what the program finds on disk (`rm -rf db`), in the recorded directory; when it fails,
//! the program is not run and the replay fails naming it. The program runs in its own process
//! group, with stdin from /dev/null and stdout/stderr into `stdout.txt`/`stderr.txt` of the output
//! directory; the whole group is killed on timeout, when the program ends, and when ilgen is
//! stopped by a signal (see [`crate::guard`]). [`run_all`] runs many replays, of one run or
//! several, as many at a time as [`Bounds`] allow (one per core by default, more while they mostly
//! wait: [`crate::pace`]).

use std::fs::File;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use ilgen_trace::replay::Outcome;
use ilgen_trace::Meta;

use crate::error::ConfirmError;
use crate::guard;
use crate::pace::{available_memory, Pace, Usage};

/// The environment variable the runtime reads its options from.
pub const OPTIONS_VAR: &str = "ILGEN_OPTIONS";

/// How replays are bounded: each one's time, how many run at a time, and what runs before each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub timeout: Duration,
    /// One per core by default. A program whose replays would collide when run together (a server
    /// on a fixed port, a lock file at a fixed path) needs 1.
    pub jobs: usize,
    /// More than `jobs` while replays mostly wait ([`Pace`]): the default, not with `--replay-jobs`.
    pub adapt: bool,
    /// `--before-replay`: a shell command run in the recorded directory before each replay, for a
    /// program whose run depends on files an earlier run left there (a database directory); its
    /// own time and usage are not the replay's, so they do not set the pace.
    pub before: Option<String>,
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
            adapt: jobs.is_none(),
            before: None,
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
    /// Not run: the `--before-replay` command failed (the outcome's error says how).
    Unprepared,
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

/// The replay of `req` as one shell command line: what [`run`] executes (after `before`, the
/// `--before-replay` command), to print before it.
pub fn command_line(
    meta: &Meta,
    req: &Request,
    before: Option<&str>,
) -> Result<String, ConfirmError> {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let (binary, args) = program(meta);
    let before = before.map_or_else(String::new, |b| format!("sh -c {} && ", quote(b)));
    let mut line = format!(
        "cd {} && {before}{OPTIONS_VAR}={} {}",
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

/// The `--before-replay` command's output, in the replay's directory.
pub const BEFORE_FILE: &str = "before-replay.txt";

/// Runs one replay (after `bounds.before`), killing its process group after `bounds.timeout`.
pub fn run(meta: &Meta, req: &Request, bounds: &Bounds) -> Result<ReplayRun, ConfirmError> {
    measured(meta, req, bounds).map(|(run, _, _)| run)
}

/// [`run`], with what the replay used when its process ended by itself (not at the timeout or a
/// stop), and its wall time.
fn measured(
    meta: &Meta,
    req: &Request,
    bounds: &Bounds,
) -> Result<(ReplayRun, Option<Usage>, Duration), ConfirmError> {
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
    let stopped = |pid| {
        guard::stopped_by().map(|sig| ReplayRun {
            pid,
            ended: Ended::Stopped(sig),
            outcome: Outcome::read(&req.out_dir).map_err(|e| e.to_string()),
            out_dir: req.out_dir.clone(),
        })
    };
    if let Some(before) = &bounds.before {
        if let Some(why) = prepare(meta, before, &req.out_dir, bounds.timeout)? {
            let run = ReplayRun {
                pid: 0,
                ended: Ended::Unprepared,
                outcome: Err(why),
                out_dir: req.out_dir.clone(),
            };
            return Ok((run, None, Duration::ZERO));
        }
    }
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
    let Some(child) = guard::spawn(&mut cmd) else {
        return stopped(0)
            .map(|run| (run, None, Duration::ZERO))
            .ok_or(ConfirmError::Stopping);
    };
    let child = child.map_err(|source| ConfirmError::Start {
        binary: binary.clone(),
        source,
    })?;
    let pid = child.id();
    let start = Instant::now();
    let (ended, usage) = wait(pid, bounds.timeout)?;
    let wall = start.elapsed();
    // Killed by the stop, not by itself: a race it wrote before still counts.
    if ended == Ended::Signaled(libc::SIGKILL) {
        if let Some(run) = stopped(pid) {
            return Ok((run, None, wall));
        }
    }
    let outcome = Outcome::read(&req.out_dir).map_err(|e| e.to_string());
    let run = ReplayRun {
        pid,
        ended,
        outcome,
        out_dir: req.out_dir.clone(),
    };
    Ok((run, usage, wall))
}

/// Runs the `--before-replay` command `before` in the recorded directory, its output into
/// [`BEFORE_FILE`] of `out_dir` (which exists), killed after `timeout`; gives why it failed, if it
/// did. Stopped by a signal, it counts as done: the program's spawn then finds ilgen stopping.
pub fn prepare(
    meta: &Meta,
    before: &str,
    out_dir: &Path,
    timeout: Duration,
) -> Result<Option<String>, ConfirmError> {
    let path = out_dir.join(BEFORE_FILE);
    let log = File::create(&path).map_err(|source| ConfirmError::Create {
        path: path.clone(),
        source,
    })?;
    let mut cmd = Command::new("sh");
    cmd.args(["-c", before])
        .current_dir(&meta.cwd)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|source| ConfirmError::Create {
            path: path.clone(),
            source,
        })?)
        .stderr(log)
        .process_group(0);
    let Some(child) = guard::spawn(&mut cmd) else {
        return Ok(None);
    };
    let child = child.map_err(|source| ConfirmError::Start {
        binary: "sh".into(),
        source,
    })?;
    let how = match wait(child.id(), timeout)?.0 {
        Ended::Exited(0) => return Ok(None),
        _ if guard::stopped_by().is_some() => return Ok(None),
        Ended::Exited(c) => format!("exited with status {c}"),
        Ended::Signaled(s) => format!("was killed by signal {s}"),
        _ => "did not end within --replay-timeout".to_owned(),
    };
    Ok(Some(format!(
        "the --before-replay command `{before}` {how}, so the program was not replayed; see {}",
        path.display()
    )))
}

/// Waits for the process group leader `pid` to end, killing its group after `timeout`; gives how
/// it ended and, when it ended by itself, what it used. Children it left in its group end with it.
fn wait(pid: u32, timeout: Duration) -> Result<(Ended, Option<Usage>), ConfirmError> {
    let start = Instant::now();
    let (ended, usage) = loop {
        match reap(pid, false) {
            Ok(Some((status, usage))) => break (ended(status), Some(usage)),
            Ok(None) if start.elapsed() >= timeout => {
                guard::kill(pid);
                let _ = reap(pid, true);
                break (Ended::TimedOut, None);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                guard::kill(pid);
                return Err(ConfirmError::Wait { pid, source: e });
            }
        }
    };
    guard::kill(pid);
    Ok((ended, usage))
}

/// Waits for `pid` (`block`: until it ends), giving its status and what it used (from its
/// resource usage); `None` while it runs.
fn reap(pid: u32, block: bool) -> std::io::Result<Option<(ExitStatus, Usage)>> {
    use std::os::unix::process::ExitStatusExt as _;
    let mut status: libc::c_int = 0;
    // SAFETY: all-zero is a valid rusage, which wait4 fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let flags = if block { 0 } else { libc::WNOHANG };
    loop {
        // SAFETY: wait4 of our own child, writing into the two locals above.
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, flags, &mut usage) };
        match r {
            0 => return Ok(None),
            r if r > 0 => break,
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    let used = Usage {
        cpu: time(usage.ru_utime) + time(usage.ru_stime),
        // ru_maxrss is in KiB on Linux.
        peak_rss_bytes: (usage.ru_maxrss.max(0) as u64) * 1024,
    };
    Ok(Some((ExitStatus::from_raw(status), used)))
}

fn ended(status: ExitStatus) -> Ended {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => Ended::Exited(code),
        (None, Some(sig)) => Ended::Signaled(sig),
        (None, None) => Ended::Exited(-1),
    }
}

/// Runs every request, each of the run whose [`Meta`] it comes with, at the [`Pace`] `bounds`
/// give (`bounds.jobs` at a time, more while replays mostly wait), calling `done` after each;
/// results in the requests' order.
pub fn run_all(
    reqs: &[(&Meta, Request)],
    bounds: &Bounds,
    done: &(dyn Fn() + Sync),
) -> Vec<Result<ReplayRun, ConfirmError>> {
    struct Queue {
        pace: Pace,
        next: usize,
        running: usize,
    }
    let queue = Mutex::new(Queue {
        pace: Pace::new(bounds.jobs, bounds.adapt),
        next: 0,
        running: 0,
    });
    let turn = Condvar::new();
    let lock = || queue.lock().unwrap_or_else(PoisonError::into_inner);
    // Takes requests while the pace allows; gives (index, result) of those it ran.
    let worker = || {
        let mut ran = Vec::new();
        loop {
            let i = {
                let mut q = lock();
                loop {
                    if q.next >= reqs.len() {
                        return ran;
                    }
                    if q.running < q.pace.limit(available_memory()) {
                        break;
                    }
                    q = turn.wait(q).unwrap_or_else(PoisonError::into_inner);
                }
                q.next += 1;
                q.running += 1;
                q.next - 1
            };
            let (meta, req) = &reqs[i];
            let r = measured(meta, req, bounds);
            done();
            {
                let mut q = lock();
                q.running -= 1;
                match &r {
                    Ok((_, usage, wall)) => q.pace.ended(*wall, *usage),
                    Err(_) => q.pace.ended(Duration::ZERO, None),
                }
            }
            turn.notify_all();
            ran.push((i, r.map(|(run, _, _)| run)));
        }
    };
    let threads = lock().pace.most().min(reqs.len());
    let ran: Vec<(usize, Result<ReplayRun, ConfirmError>)> = std::thread::scope(|s| {
        // A thread per replay that may run at once; with none to be had, this one runs them all.
        let handles: Vec<_> = (0..threads)
            .map_while(|_| std::thread::Builder::new().spawn_scoped(s, worker).ok())
            .collect();
        let mut ran = if handles.is_empty() {
            worker()
        } else {
            Vec::new()
        };
        for h in handles {
            match h.join() {
                Ok(r) => ran.extend(r),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        ran
    });
    // Every request was taken once, by a worker that gave its result back.
    let mut ran = ran;
    ran.sort_by_key(|&(i, _)| i);
    ran.into_iter().map(|(_, r)| r).collect()
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_refuse_zero_naming_the_flag_and_default_to_one_job_per_core_adapting() {
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
        assert_eq!(
            (b.timeout, b.jobs, b.adapt),
            (Duration::from_secs(5), 1, false)
        );
        let b = Bounds::new(5, None).unwrap();
        assert_eq!((b.jobs, b.adapt), (cores(), true));
    }
}
