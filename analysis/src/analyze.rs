//! The whole analysis of one run: prepare → filter → solve (per surviving variable, in parallel,
//! then deadlocks) → candidates; with [`Options::atomicity`], then atomicity violations.
//!
//! Takes the recorded threads and the [`Options`]; gives the per-stage [`Stats`] and the first
//! `max_candidates` [`Candidate`]s (races by object address, then deadlocks; the others counted),
//! or an [`AnalysisError`] when a CSP checker could not decide. Independent variables are solved on all cores; stages and solver jobs
//! are reported to a [`Progress`].

use std::collections::BTreeMap;
use std::sync::Mutex;

use ilgen_trace::format::ThreadTrace;
use rayon::prelude::*;

use crate::candidates::{self, Candidate, NotDecided, Stats};
use crate::csp;
use crate::error::AnalysisError;
use crate::options::{Backend, Options};
use crate::progress::Progress;
use crate::{atomicity, filter, prepare, reads_from, solve};

/// What one job of [`analyze`] gave beside its candidates (the findings it could not turn into
/// candidates and the pairs it left undecided), or why a CSP checker could not say.
type Job = Result<(solve::SolveStats, usize, Option<NotDecided>), String>;

/// The first `cap` candidates in the output order, of the jobs done so far, by order key; the
/// rest counted. Jobs finish in any order, so a later job's candidates give way to an earlier's.
struct Kept {
    by_key: BTreeMap<usize, Vec<Candidate>>,
    count: usize,
    cap: usize,
    dropped: usize,
}

impl Kept {
    fn add(&mut self, key: usize, found: Vec<Candidate>) {
        self.count += found.len();
        self.by_key.insert(key, found);
        while self.count > self.cap {
            let Some(mut last) = self.by_key.last_entry() else {
                break;
            };
            let drop = (self.count - self.cap).min(last.get().len());
            let keep = last.get().len() - drop;
            last.get_mut().truncate(keep);
            if keep == 0 {
                last.remove();
            }
            self.count -= drop;
            self.dropped += drop;
        }
    }
}

/// The whole analysis of one run: races per surviving variable (in parallel), then deadlocks.
pub fn analyze(
    threads: &[ThreadTrace],
    options: &Options,
) -> Result<(Stats, Vec<Candidate>), AnalysisError> {
    analyze_with(threads, options, &Progress::off())
}

/// [`analyze`], reporting its stages and solver jobs to `progress`.
pub fn analyze_with(
    threads: &[ThreadTrace],
    options: &Options,
    progress: &Progress,
) -> Result<(Stats, Vec<Candidate>), AnalysisError> {
    progress.begin("preparing the model");
    let mut program = prepare::prepare(threads);
    if matches!(options.backend, Backend::Native) {
        let edges = reads_from::edges(&program.model, &options.deciding);
        program.model.set_reads_from(edges);
    }
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
    let kept = Mutex::new(Kept {
        by_key: BTreeMap::new(),
        count: 0,
        cap: options.max_candidates,
        dropped: 0,
    });
    let window_done = || progress.window_done();
    let solve_job = |job: usize| -> Job {
        let solved = match (&options.backend, job.checked_sub(1)) {
            (Backend::Native, Some(i)) => Ok(solve::races_with(
                &program,
                &survivors[i],
                options,
                &window_done,
            )),
            (Backend::Native, None) => Ok(solve::deadlocks_with(&program, options, &window_done)),
            (Backend::Csp(checker), Some(i)) => csp::solve::races(&program, &survivors[i], checker),
            (Backend::Csp(checker), None) => csp::solve::deadlocks(&program, checker),
        };
        solved.map(|solved| {
            let found: Vec<Candidate> = solved
                .findings
                .iter()
                .filter_map(|f| candidates::candidate(&solved.model, &program.vars, f))
                .collect();
            progress.job_done(found.len());
            let lost = solved.findings.len() - found.len();
            // Races by object address (survivors are in that order), then deadlocks.
            let key = if job == 0 { jobs } else { job };
            kept.lock()
                .unwrap_or_else(|e| e.into_inner())
                .add(key, found);
            let open = solved.not_decided.and_then(|n| {
                let (object, accesses) =
                    candidates::race_sides(&solved.model, &program.vars, n.pair.0, n.pair.1)?;
                Some(NotDecided {
                    object,
                    accesses,
                    pairs: n.pairs,
                    limit: n.limit,
                })
            });
            (solved.stats, lost, open)
        })
    };
    // rayon's pool takes the jobs in index order across all cores and gives the results back in
    // that order, so the output does not depend on which core finished first.
    let results: Vec<Job> = (0..jobs).into_par_iter().map(solve_job).collect();
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
        semaphores: program.model.objects.sems.len(),
        semaphores_inferred: program
            .model
            .objects
            .sems
            .iter()
            .filter(|s| s.recorded.is_none())
            .count(),
        filter: filter_stats,
        solve: solve::SolveStats::default(),
        findings_unconvertible: 0,
        not_decided: Vec::new(),
        not_written: 0,
        atomicity: None,
    };
    for outcome in results {
        let (s, lost, open) = outcome.map_err(AnalysisError::Checker)?;
        stats.solve.add(&s);
        stats.findings_unconvertible += lost;
        stats.not_decided.extend(open);
    }
    let kept = kept.into_inner().unwrap_or_else(|e| e.into_inner());
    stats.not_written = kept.dropped;
    let mut all: Vec<Candidate> = kept.by_key.into_values().flatten().collect();
    if options.atomicity {
        progress.begin("predicting atomicity violations");
        let (predictions, counts) =
            atomicity::predict(&program, options.window, options.transactions.as_ref());
        let found: Vec<Candidate> = predictions
            .iter()
            .filter_map(|p| candidates::atomicity(&program.model, &program.vars, p))
            .collect();
        stats.findings_unconvertible += predictions.len() - found.len();
        progress.stage(&format!(
            "{} transactions, {} atomicity violation(s) with a schedule",
            counts.transactions, counts.predicted
        ));
        stats.atomicity = Some(counts);
        // After the races and deadlocks, by transaction site, then e1, f and e2 sites.
        all.extend(found);
        stats.not_written += all.len().saturating_sub(options.max_candidates);
        all.truncate(options.max_candidates);
    }
    Ok((stats, all))
}
