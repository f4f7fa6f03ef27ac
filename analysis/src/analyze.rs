//! The whole analysis of one run: prepare → filter → solve (per surviving variable, in parallel,
//! then deadlocks) → candidates; with [`Options::atomicity`], then atomicity violations.
//!
//! Takes the recorded threads and the [`Options`]; gives the per-stage [`Stats`] and the
//! [`Candidate`]s (races by object address, then deadlocks), or an [`AnalysisError`] when a CSP
//! checker could not decide. Independent variables are solved on all cores; stages and solver jobs
//! are reported to a [`Progress`].

use ilgen_trace::format::ThreadTrace;
use rayon::prelude::*;

use crate::candidates::{self, Candidate, NotDecided, Stats};
use crate::csp;
use crate::error::AnalysisError;
use crate::options::{Backend, Options};
use crate::progress::Progress;
use crate::{atomicity, filter, prepare, reads_from, solve};

/// What one job of [`analyze`] found (with findings it could not turn into candidates and the
/// pairs it left undecided), or why a CSP checker could not say.
type Job = Result<(solve::SolveStats, Vec<Candidate>, usize, Option<NotDecided>), String>;

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
            (solved.stats, found, lost, open)
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
        atomicity: None,
    };
    let mut all = Vec::new();
    let mut deadlocks = Vec::new();
    for (job, outcome) in results.into_iter().enumerate() {
        let (s, found, lost, open) = outcome.map_err(AnalysisError::Checker)?;
        stats.solve.add(&s);
        stats.findings_unconvertible += lost;
        stats.not_decided.extend(open);
        if job == 0 {
            deadlocks = found;
        } else {
            all.extend(found);
        }
    }
    // Races by object address (survivors are in that order), then deadlocks, then atomicity
    // violations (by transaction site, then e1, f and e2 sites).
    all.extend(deadlocks);
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
        all.extend(found);
    }
    Ok((stats, all))
}
