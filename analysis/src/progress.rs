//! Progress of a long analysis, on stderr: one line per stage, then how many solver jobs (one per
//! surviving variable, one for deadlocks) and exhaustive-search windows are done.
//!
//! Takes the stage boundaries and the solver's completions from [`crate::analyze_with`] (called
//! from any worker thread); gives lines on stderr only, never on stdout, whose output stays
//! deterministic. On a terminal the solving line is rewritten in place at most
//! [`TERMINAL_EVERY`]; elsewhere (`--progress` into a file or pipe) each update is its own line,
//! at most one per [`PIPE_EVERY`], and the first and last always appear. A disabled reporter does
//! nothing and costs one branch per call.

use std::io::Write as _;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Shortest time between two rewrites of the line on a terminal.
pub const TERMINAL_EVERY: Duration = Duration::from_millis(100);
/// Shortest time between two solving lines into a file or pipe.
pub const PIPE_EVERY: Duration = Duration::from_secs(1);

/// Where progress goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Off,
    /// A terminal: the solving line is rewritten in place with `\r`.
    Terminal,
    /// A file or pipe: whole lines.
    Lines,
}

pub struct Progress {
    mode: Mode,
    began: Instant,
    jobs: AtomicUsize,
    jobs_done: AtomicUsize,
    windows_done: AtomicU64,
    candidates: AtomicUsize,
    /// When the last solving line was written (None: not yet); serializes writers.
    last: Mutex<Option<Instant>>,
}

impl Progress {
    pub fn new(mode: Mode) -> Progress {
        Progress {
            mode,
            began: Instant::now(),
            jobs: AtomicUsize::new(0),
            jobs_done: AtomicUsize::new(0),
            windows_done: AtomicU64::new(0),
            candidates: AtomicUsize::new(0),
            last: Mutex::new(None),
        }
    }

    /// A reporter that writes nothing (library callers and tests).
    pub fn off() -> Progress {
        Progress::new(Mode::Off)
    }

    /// `--progress` forces lines; otherwise progress is shown only when stderr is a terminal.
    pub fn for_stderr(forced: bool) -> Progress {
        use std::io::IsTerminal as _;
        Progress::new(if std::io::stderr().is_terminal() {
            Mode::Terminal
        } else if forced {
            Mode::Lines
        } else {
            Mode::Off
        })
    }

    /// A stage is done: one whole line, e.g. `read 3 threads`.
    pub fn stage(&self, what: &str) {
        if self.mode == Mode::Off {
            return;
        }
        self.write(
            &format!("{what} [{:.1}s]", self.began.elapsed().as_secs_f64()),
            true,
        );
    }

    /// A stage begins (e.g. `reading <dir>`): shown only on a terminal, where the line that ends
    /// the stage replaces it.
    pub fn begin(&self, what: &str) {
        if self.mode == Mode::Terminal {
            self.write(&format!("{what}..."), false);
        }
    }

    /// The solver starts `jobs` jobs (variables plus the deadlock job).
    pub fn solving(&self, jobs: usize) {
        self.jobs.store(jobs, Ordering::Relaxed);
        self.update(true, false);
    }

    /// One window of an exhaustive search is done.
    pub fn window_done(&self) {
        self.windows_done.fetch_add(1, Ordering::Relaxed);
        self.update(false, false);
    }

    /// One solver job is done, with `found` candidates.
    pub fn job_done(&self, found: usize) {
        self.candidates.fetch_add(found, Ordering::Relaxed);
        let done = self.jobs_done.fetch_add(1, Ordering::Relaxed) + 1;
        let all = done == self.jobs.load(Ordering::Relaxed);
        self.update(all, all);
    }

    /// The last line.
    pub fn finish(&self) {
        self.stage("done");
    }

    /// The solving line; `force` writes it however recent the last one is, `whole` ends it (the
    /// last one stays on a terminal).
    fn update(&self, force: bool, whole: bool) {
        if self.mode == Mode::Off {
            return;
        }
        let every = match self.mode {
            Mode::Terminal => TERMINAL_EVERY,
            _ => PIPE_EVERY,
        };
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        let now = Instant::now();
        if !force && last.is_some_and(|t| now.duration_since(t) < every) {
            return;
        }
        *last = Some(now);
        let line = format!(
            "solving: {}/{} jobs (shared variables and deadlocks), {} window(s) searched, {} \
             candidate(s) [{:.1}s]",
            self.jobs_done.load(Ordering::Relaxed),
            self.jobs.load(Ordering::Relaxed),
            self.windows_done.load(Ordering::Relaxed),
            self.candidates.load(Ordering::Relaxed),
            self.began.elapsed().as_secs_f64()
        );
        self.write_locked(&line, whole || self.mode == Mode::Lines);
    }

    fn write(&self, text: &str, whole: bool) {
        // Holding the lock keeps a stage line from cutting into a solving line being written.
        if let Ok(_guard) = self.last.lock() {
            self.write_locked(text, whole);
        }
    }

    fn write_locked(&self, text: &str, whole: bool) {
        let mut err = std::io::stderr().lock();
        // Progress is best effort: a closed stderr must not fail the analysis.
        let _ = match (self.mode, whole) {
            (Mode::Terminal, true) => writeln!(err, "\r\x1b[Kilgen: detect: {text}"),
            (Mode::Terminal, false) => write!(err, "\r\x1b[Kilgen: detect: {text}"),
            _ => writeln!(err, "ilgen: detect: {text}"),
        };
        let _ = err.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_jobs_windows_and_candidates_from_many_threads() {
        let p = Progress::off();
        p.solving(9);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..3 {
                        p.window_done();
                        p.job_done(1);
                    }
                });
            }
        });
        assert_eq!(p.jobs_done.load(Ordering::Relaxed), 9);
        assert_eq!(p.windows_done.load(Ordering::Relaxed), 9);
        assert_eq!(p.candidates.load(Ordering::Relaxed), 9);
        // Off writes nothing and never takes the lock.
        assert!(p.last.lock().unwrap().is_none());
    }
}
