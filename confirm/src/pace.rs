//! How many replays run at a time, from what the finished ones used.
//!
//! Takes [`Bounds`](crate::run::Bounds)' job count and, as replays end, each one's wall time and
//! [`Usage`] (the CPU time of the program and what it waited for, peak RSS) and the memory the
//! machine has available; gives the number of replays that may run at once ([`Pace::limit`]).
//!
//! One replay per core keeps replays of a busy program off each other's cores. A program that
//! mostly sleeps (a thread pool's example waiting seconds between jobs, a server idling between
//! requests) replays in its own wall time however few cores it uses, and one per core made
//! `detect` of such a program take the sum of those sleeps divided by the cores (CTPL's example:
//! 41 replays of about 8 s each, 191 s). So after each replay the pace is set from the replays
//! so far: as many per core as their CPU share leaves room for (a program busy 1/8 of its time
//! gets 8 per core), at most [`MOST_PER_JOB`] times the job count, and no more than half the
//! available memory holds at the largest peak RSS seen. It never drops below the job count, the
//! pace before any replay ended; an explicit `--replay-jobs N` is a fixed pace.

use std::time::Duration;

/// At most this many replays per job (per core by default) when replays mostly wait.
pub const MOST_PER_JOB: usize = 8;

/// What one replay used beside its wall time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    /// User and system time of the program and of its children it waited for.
    pub cpu: Duration,
    pub peak_rss_bytes: u64,
}

/// The running tally of finished replays' usage.
#[derive(Clone, Debug)]
pub struct Pace {
    jobs: usize,
    most: usize,
    wall: Duration,
    cpu: Duration,
    peak_rss_bytes: u64,
}

impl Pace {
    /// `jobs` at a time until replays end; with `adapt`, up to [`MOST_PER_JOB`] times as many.
    pub fn new(jobs: usize, adapt: bool) -> Pace {
        let jobs = jobs.max(1);
        Pace {
            jobs,
            most: if adapt { jobs * MOST_PER_JOB } else { jobs },
            wall: Duration::ZERO,
            cpu: Duration::ZERO,
            peak_rss_bytes: 0,
        }
    }

    /// The most replays that ever run at once.
    pub fn most(&self) -> usize {
        self.most
    }

    /// A replay ended after `wall`; `usage` `None` when unknown (killed at the timeout, or it
    /// never started): counted as busy all along, so an unknown never raises the pace.
    pub fn ended(&mut self, wall: Duration, usage: Option<Usage>) {
        self.wall += wall;
        match usage {
            Some(u) => {
                self.cpu += u.cpu;
                self.peak_rss_bytes = self.peak_rss_bytes.max(u.peak_rss_bytes);
            }
            None => self.cpu += wall,
        }
    }

    /// Replays that may run at once now, given the memory available (bytes; `None`: unknown).
    pub fn limit(&self, available: Option<u64>) -> usize {
        if self.most == self.jobs || self.wall.is_zero() {
            return self.jobs;
        }
        let share = (self.cpu.as_secs_f64() / self.wall.as_secs_f64()).max(1e-9);
        let by_cpu = (self.jobs as f64 / share).floor().min(self.most as f64) as usize;
        let by_memory = match available {
            Some(bytes) if self.peak_rss_bytes > 0 => bytes / 2 / self.peak_rss_bytes,
            Some(_) => u64::MAX,
            None => self.jobs as u64,
        };
        by_cpu
            .min(usize::try_from(by_memory).unwrap_or(usize::MAX))
            .clamp(self.jobs, self.most)
    }
}

/// `MemAvailable` of /proc/meminfo in bytes.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn usage(cpu_ms: u64, rss: u64) -> Option<Usage> {
        Some(Usage {
            cpu: Duration::from_millis(cpu_ms),
            peak_rss_bytes: rss,
        })
    }

    fn ended(pace: &mut Pace, wall_ms: u64, u: Option<Usage>) {
        pace.ended(Duration::from_millis(wall_ms), u);
    }

    #[test]
    fn the_job_count_until_a_replay_ends_and_always_when_fixed() {
        let pace = Pace::new(2, true);
        assert_eq!((pace.limit(Some(64 * GIB)), pace.most()), (2, 16));
        let mut fixed = Pace::new(3, false);
        ended(&mut fixed, 8000, usage(10, 1 << 20));
        assert_eq!((fixed.limit(Some(64 * GIB)), fixed.most()), (3, 3));
    }

    #[test]
    fn sleeping_replays_run_more_at_once_up_to_the_most() {
        let mut pace = Pace::new(2, true);
        // Busy a quarter of the time: 4 per job.
        ended(&mut pace, 8000, usage(2000, 1 << 20));
        assert_eq!(pace.limit(Some(64 * GIB)), 8);
        // Nearly idle: capped at 8 per job.
        ended(&mut pace, 80_000, usage(10, 1 << 20));
        assert_eq!(pace.limit(Some(64 * GIB)), 16);
    }

    #[test]
    fn busy_replays_keep_one_per_job() {
        let mut pace = Pace::new(2, true);
        // Two threads busy all along: a share of 2.
        ended(&mut pace, 1000, usage(2000, 1 << 20));
        assert_eq!(pace.limit(Some(64 * GIB)), 2);
    }

    #[test]
    fn memory_bounds_the_pace_but_never_below_the_job_count() {
        let mut pace = Pace::new(2, true);
        ended(&mut pace, 10_000, usage(10, 2 * GIB));
        // Half of 20 GiB holds 5 replays of 2 GiB.
        assert_eq!(pace.limit(Some(20 * GIB)), 5);
        assert_eq!(pace.limit(Some(GIB)), 2);
        // Memory unknown: no more than the job count.
        assert_eq!(pace.limit(None), 2);
    }

    #[test]
    fn a_replay_of_unknown_usage_counts_as_busy() {
        let mut pace = Pace::new(2, true);
        ended(&mut pace, 30_000, None);
        assert_eq!(pace.limit(Some(64 * GIB)), 2);
        ended(&mut pace, 30_000, usage(0, 1 << 20));
        // Busy half of the time in all: 2 per job.
        assert_eq!(pace.limit(Some(64 * GIB)), 4);
    }

    #[test]
    fn available_memory_is_read_from_proc() {
        assert!(available_memory().is_some_and(|b| b > 0));
    }
}
