//! Progress of a long detect, on stderr: one line per stage, then how many units of work (one per
//! surviving variable, one for deadlocks, one for atomicity violations), exhaustive-search windows
//! and candidates are done, then how many replays.
//!
//! Takes the stage boundaries, the solver's completions from [`crate::analyze_shard`] and the
//! replays' (called from any worker thread); gives output on stderr only, never on stdout, whose
//! output stays deterministic. On a terminal, an indicatif bar (one per analysis, stacked when
//! several runs are detected together) counts units, windows and candidates, then replays, with
//! the stage lines printed above it; elsewhere only with `--progress` (into a file or pipe): each
//! update is its own line, at most one per [`PIPE_EVERY`], and the first and last always appear.
//! Off (no terminal and no `--progress`, or `--quiet`), it writes nothing and costs one branch
//! per call.

use std::io::Write as _;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// How often the bar on a terminal is redrawn (windows and candidates change without a step).
pub const TERMINAL_EVERY: Duration = Duration::from_millis(100);
/// Shortest time between two solving lines into a file or pipe.
pub const PIPE_EVERY: Duration = Duration::from_secs(1);

/// Where progress goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Off,
    /// A terminal: an indicatif bar.
    Terminal,
    /// A file or pipe: whole lines.
    Lines,
}

#[derive(Default)]
struct Counts {
    jobs: AtomicUsize,
    jobs_done: AtomicUsize,
    windows_done: AtomicU64,
    candidates: AtomicUsize,
    replays: AtomicUsize,
    replays_done: AtomicUsize,
}

pub struct Progress {
    mode: Mode,
    began: Instant,
    counts: Arc<Counts>,
    /// The bar, on a terminal.
    bar: Option<ProgressBar>,
    /// When the last solving line was written (None: not yet); serializes writers of lines.
    last: Mutex<Option<Instant>>,
}

/// The bars of one process: several analyses at once (`ilgen detect DIR...`) stack their bars
/// instead of drawing over each other.
fn bars() -> &'static MultiProgress {
    static BARS: OnceLock<MultiProgress> = OnceLock::new();
    BARS.get_or_init(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()))
}

impl Progress {
    pub fn new(mode: Mode) -> Progress {
        let bar = (mode == Mode::Terminal).then(|| {
            let bar = bars().add(ProgressBar::new_spinner());
            bar.enable_steady_tick(TERMINAL_EVERY);
            bar
        });
        Progress {
            mode,
            began: Instant::now(),
            counts: Arc::default(),
            bar,
            last: Mutex::new(None),
        }
    }

    /// A reporter that writes nothing (library callers and tests).
    pub fn off() -> Progress {
        Progress::new(Mode::Off)
    }

    /// Nothing with `quiet`; a bar when stderr is a terminal; else lines when `forced`
    /// (`--progress`), nothing otherwise.
    pub fn for_stderr(forced: bool, quiet: bool) -> Progress {
        use std::io::IsTerminal as _;
        Progress::new(if quiet {
            Mode::Off
        } else if std::io::stderr().is_terminal() {
            Mode::Terminal
        } else if forced {
            Mode::Lines
        } else {
            Mode::Off
        })
    }

    /// A stage is done: one whole line, e.g. `read 3 threads`.
    pub fn stage(&self, what: &str) {
        let line = format!("{what} [{:.1}s]", self.began.elapsed().as_secs_f64());
        match (&self.bar, self.mode) {
            (Some(bar), _) => bar.println(format!("ilgen: detect: {line}")),
            (None, Mode::Lines) => self.write(&line),
            (None, _) => {}
        }
    }

    /// A stage begins (e.g. `reading <dir>`): shown only on a terminal, until the next.
    pub fn begin(&self, what: &str) {
        if let Some(bar) = &self.bar {
            bar.set_style(self.style("{spinner} ilgen: detect: {msg}... [{elapsed}]"));
            bar.set_message(what.to_owned());
        }
    }

    /// The solver starts `jobs` units of work.
    pub fn solving(&self, jobs: usize) {
        self.counts.jobs.fetch_add(jobs, Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.set_style(self.style(
                "{spinner} ilgen: detect: solving {bar:20} {pos}/{len} units, {windows} window(s) \
                 searched, {candidates} candidate(s) [{elapsed}]",
            ));
            bar.set_length(self.counts.jobs.load(Ordering::Relaxed) as u64);
            bar.set_position(self.counts.jobs_done.load(Ordering::Relaxed) as u64);
        }
        self.line(true);
    }

    /// One window of an exhaustive search is done.
    pub fn window_done(&self) {
        self.counts.windows_done.fetch_add(1, Ordering::Relaxed);
        self.line(false);
    }

    /// One unit is done, with `found` candidates.
    pub fn job_done(&self, found: usize) {
        let c = &self.counts;
        c.candidates.fetch_add(found, Ordering::Relaxed);
        let done = c.jobs_done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        self.line(done == c.jobs.load(Ordering::Relaxed));
    }

    /// Replay of `count` candidates starts.
    pub fn replaying(&self, count: usize) {
        self.counts.replays.store(count, Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.set_style(self.style(
                "{spinner} ilgen: detect: replaying {bar:20} {pos}/{len} candidate(s) [{elapsed}]",
            ));
            bar.set_length(count as u64);
            bar.set_position(0);
        }
        self.line(true);
    }

    /// One replay is done.
    pub fn replay_done(&self) {
        let c = &self.counts;
        let done = c.replays_done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        self.line(done == c.replays.load(Ordering::Relaxed));
    }

    /// The last line; a terminal's bar goes away.
    pub fn finish(&self) {
        self.stage("done");
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    /// A style with the `{windows}` and `{candidates}` counts, read when the bar is drawn.
    fn style(&self, template: &str) -> ProgressStyle {
        let count = |read: fn(&Counts) -> u64| {
            let counts = Arc::clone(&self.counts);
            move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{}", read(&counts));
            }
        };
        ProgressStyle::with_template(template)
            .expect("progress templates are constants")
            .with_key("windows", count(|c| c.windows_done.load(Ordering::Relaxed)))
            .with_key(
                "candidates",
                count(|c| c.candidates.load(Ordering::Relaxed) as u64),
            )
    }

    /// In lines mode, the current counts as one line; `force` writes it however recent the last
    /// one is.
    fn line(&self, force: bool) {
        if self.mode != Mode::Lines {
            return;
        }
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        let now = Instant::now();
        if !force && last.is_some_and(|t| now.duration_since(t) < PIPE_EVERY) {
            return;
        }
        *last = Some(now);
        let c = &self.counts;
        let load = |a: &AtomicUsize| a.load(Ordering::Relaxed);
        let line = match load(&c.replays) {
            0 => format!(
                "solving: {}/{} jobs (shared variables and deadlocks), {} window(s) searched, {} \
                 candidate(s) [{:.1}s]",
                load(&c.jobs_done),
                load(&c.jobs),
                c.windows_done.load(Ordering::Relaxed),
                load(&c.candidates),
                self.began.elapsed().as_secs_f64()
            ),
            n => format!(
                "replaying: {}/{n} candidate(s) [{:.1}s]",
                load(&c.replays_done),
                self.began.elapsed().as_secs_f64()
            ),
        };
        write_line(&line);
    }

    fn write(&self, text: &str) {
        // Holding the lock keeps a stage line from cutting into a solving line being written.
        if let Ok(_guard) = self.last.lock() {
            write_line(text);
        }
    }
}

fn write_line(text: &str) {
    // Progress is best effort: a closed stderr must not fail the analysis.
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "ilgen: detect: {text}");
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_units_windows_candidates_and_replays_from_many_threads() {
        let p = Progress::off();
        p.solving(9);
        p.replaying(3);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..3 {
                        p.window_done();
                        p.job_done(1);
                    }
                    p.replay_done();
                });
            }
        });
        let c = &p.counts;
        assert_eq!(c.jobs_done.load(Ordering::Relaxed), 9);
        assert_eq!(c.windows_done.load(Ordering::Relaxed), 9);
        assert_eq!(c.candidates.load(Ordering::Relaxed), 9);
        assert_eq!(c.replays_done.load(Ordering::Relaxed), 3);
        // Off writes nothing, never takes the lock and has no bar.
        assert!(p.last.lock().unwrap().is_none());
        assert!(p.bar.is_none());
    }
}
