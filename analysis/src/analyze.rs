//! The whole analysis of one run: prepare → filter → solve (the races of each surviving variable,
//! the deadlocks and, with [`Options::atomicity`], the atomicity violations: units of work solved
//! in parallel) → candidates; a run the [`screen`] clears (plain synchronization, no race pair
//! left) skips them all, with the same counts and no candidate.
//!
//! Takes the recorded threads, the [`Options`] and the [`Shard`] to do; gives the per-stage
//! [`Stats`] and the first `max_candidates` [`Candidate`]s (races by object address, then
//! deadlocks, then atomicity violations, then the first fallback of each race that has one, then
//! the second, ...: a fallback never displaces a candidate; when the cap cuts, a race at a pair of
//! sites no earlier candidate has goes before one at a pair already had; the others counted),
//! each with its [`Key`], or an
//! [`AnalysisError`] when a CSP checker could not decide. The units run on all cores and their results are put back in report order, so the
//! output does not depend on which core finished first; a shard solves only its own units, the
//! same candidates in the same order as the whole analysis gives for them. Stages and units are
//! reported to a [`Progress`].

use std::collections::HashMap;

use ilgen_trace::event::SiteId;
use ilgen_trace::format::ThreadTrace;
use rayon::prelude::*;

use crate::atomicity::Counts as AtomicityCounts;
use crate::candidates::{self, Candidate, NotDecided, Stats};
use crate::csp;
use crate::error::AnalysisError;
use crate::lifetime::Lifetimes;
use crate::objects::Objects;
use crate::options::{Backend, Options};
use crate::prepare::Program;
use crate::progress::Progress;
use crate::shard::{Key, Shard};
use crate::{atomicity, filter, prepare, reads_from, screen, solve};

/// One unit of work, in report order: the races of survivor `i`, the deadlocks, the atomicity
/// violations.
#[derive(Clone, Copy)]
enum Unit {
    Races(usize),
    Deadlocks,
    Atomicity,
}

/// What one unit found: its candidates, their fallbacks (each with the index in `found` of the
/// candidate it stands in for), the findings it could not turn into candidates, the race pairs it
/// left undecided, the atomicity counts (of the atomicity unit).
#[derive(Default)]
struct Done {
    stats: solve::SolveStats,
    found: Vec<Candidate>,
    fallbacks: Vec<(usize, Candidate)>,
    lost: usize,
    open: Option<NotDecided>,
    atomicity: Option<AtomicityCounts>,
}

/// The whole analysis of one run.
pub fn analyze(
    threads: Vec<ThreadTrace>,
    options: &Options,
) -> Result<(Stats, Vec<Candidate>), AnalysisError> {
    analyze_with(threads, options, &Progress::off())
}

/// [`analyze`], reporting its stages and units to `progress`.
pub fn analyze_with(
    threads: Vec<ThreadTrace>,
    options: &Options,
    progress: &Progress,
) -> Result<(Stats, Vec<Candidate>), AnalysisError> {
    analyze_shard(threads, options, progress, Shard::WHOLE).map(|(stats, found, _)| (stats, found))
}

/// The units of `shard` of the analysis, with each candidate's [`Key`]. The threads are dropped
/// once the model is built from them: it holds all the analysis needs.
pub fn analyze_shard(
    threads: Vec<ThreadTrace>,
    options: &Options,
    progress: &Progress,
    shard: Shard,
) -> Result<(Stats, Vec<Candidate>, Vec<Key>), AnalysisError> {
    progress.begin("preparing the model");
    let thread_count = threads.len();
    // The atomicity analysis looks at every object; the races only at those happens-before does
    // not order wholly.
    let keep = match options.atomicity {
        true => prepare::Keep::All,
        false => prepare::Keep::Unordered,
    };
    let lifetimes = Lifetimes::of(&threads);
    let objects = Objects::of(&threads, &lifetimes);
    // A run the screen clears needs no model: no unit finds anything in it.
    let plain = match (keep, &options.backend) {
        (prepare::Keep::Unordered, Backend::Native) => screen::plain(&threads),
        _ => None,
    };
    if let Some(clean) = plain.and_then(|p| screen::screen(&threads, &p, &lifetimes, &objects)) {
        progress.stage(&format!(
            "screened {} shared objects: no race pair left, no deadlock possible",
            clean.filter.vars_shared
        ));
        let stats = Stats {
            threads: thread_count,
            sync_events: clean.sync_events,
            accesses_read: clean.accesses_read,
            accesses_kept: clean.accesses_kept,
            semaphores: 0,
            semaphores_inferred: 0,
            filter: clean.filter,
            solve: solve::SolveStats::default(),
            findings_unconvertible: 0,
            not_decided: Vec::new(),
            not_written: 0,
            atomicity: None,
        };
        return Ok((stats, Vec::new(), Vec::new()));
    }
    let mut program = prepare::prepare_from(threads, keep, &lifetimes, &objects);
    drop((lifetimes, objects));
    if matches!(options.backend, Backend::Native) {
        let edges = reads_from::edges(&program.model, &options.deciding);
        program.model.set_reads_from(edges);
    }
    progress.stage(&format!(
        "prepared {} shared objects, {} accesses kept",
        program.shared(),
        program.accesses_kept
    ));
    let (survivors, filter_stats) = filter::filter(&program);
    progress.stage(&format!(
        "filtered: {} of {} shared objects left, {} race pairs",
        filter_stats.vars_left, filter_stats.vars_shared, filter_stats.pairs_left
    ));
    let mut units: Vec<Unit> = (0..survivors.len()).map(Unit::Races).collect();
    units.push(Unit::Deadlocks);
    if options.atomicity {
        units.push(Unit::Atomicity);
    }
    // The shard's units, the longest first (deadlocks and atomicity span the whole trace), so
    // that no core is left with a long unit at the end.
    let mut mine: Vec<usize> = (0..units.len()).filter(|&u| shard.takes(u)).collect();
    mine.sort_by_key(|&u| !matches!(units[u], Unit::Deadlocks | Unit::Atomicity));
    progress.solving(mine.len());
    let solve_unit = |u: usize| {
        let done = match units[u] {
            Unit::Races(i) => races(&program, &survivors[i], options, progress),
            Unit::Deadlocks => deadlocks(&program, options, progress),
            Unit::Atomicity => Ok(atomicity_violations(&program, options)),
        };
        if let Ok(d) = &done {
            progress.job_done(d.found.len());
        }
        (u, done)
    };
    let mut results: Vec<(usize, Result<Done, String>)> =
        mine.into_par_iter().map(solve_unit).collect();
    // Report order; the first unit in it that failed is the error, whichever failed first.
    results.sort_by_key(|(u, _)| *u);
    let mut stats = Stats {
        threads: thread_count,
        sync_events: program.sync_events(),
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
    // Each candidate with its key and, for a fallback, the key of the candidate it stands in for.
    let mut all: Vec<(Key, Option<Key>, Candidate)> = Vec::new();
    for (u, done) in results {
        let done = done.map_err(AnalysisError::Checker)?;
        stats.solve.add(&done.stats);
        stats.findings_unconvertible += done.lost;
        stats.not_decided.extend(done.open);
        if let Some(counts) = done.atomicity {
            progress.stage(&format!(
                "{} transactions, {} atomicity violation(s) with a schedule",
                counts.transactions, counts.predicted
            ));
            stats.atomicity = Some(counts);
        }
        all.extend(
            done.found
                .into_iter()
                .enumerate()
                .map(|(k, c)| ((0, u, k), None, c)),
        );
        // Fallbacks come by candidate, each candidate's in rank order; `ranked[r - 1]`: those of
        // rank r so far.
        let (mut ranked, mut rank, mut last) = (Vec::<usize>::new(), 0, None);
        for (of, c) in done.fallbacks {
            rank = if last == Some(of) { rank + 1 } else { 1 };
            last = Some(of);
            if ranked.len() < rank {
                ranked.push(0);
            }
            all.push(((rank, u, ranked[rank - 1]), Some((0, u, of)), c));
            ranked[rank - 1] += 1;
        }
    }
    all.sort_by_key(|(key, _, _)| *key);
    if all.len() > options.max_candidates {
        new_site_pairs_first(&mut all);
    }
    // The cap counts the candidates in report order; in a shard it applies to the shard's own
    // candidates, so the merged report of N shards may hold up to N times `max_candidates`.
    stats.not_written = all.len().saturating_sub(options.max_candidates);
    all.truncate(options.max_candidates);
    let keys: Vec<Key> = all.iter().map(|(key, _, _)| *key).collect();
    let number_of: HashMap<Key, usize> =
        keys.iter().enumerate().map(|(i, &k)| (k, i + 1)).collect();
    let mut found = Vec::with_capacity(all.len());
    for (_, of, mut c) in all {
        // A fallback's candidate sorts before it, so the cap kept it.
        let number = of.and_then(|of| number_of.get(&of).copied());
        if let Candidate::Race { fallback_of, .. } = &mut c {
            *fallback_of = number;
        }
        found.push(c);
    }
    Ok((stats, found, keys))
}

/// Reorders candidates in report order (fallbacks last) for a cap that will cut them: the first
/// race candidate of each pair of sites, then the second of each, and so on, each round in report
/// order, deadlocks and atomicity violations in the first; fallbacks stay last. Without it a
/// program whose many objects share one racing pair of lines (memcached's slab items: 113 of its
/// 257 candidates at one pair) fills the cap with that pair and never replays the others.
fn new_site_pairs_first(all: &mut Vec<(Key, Option<Key>, Candidate)>) {
    let mut seen: HashMap<[SiteId; 2], usize> = HashMap::new();
    let rounds: Vec<(usize, usize)> = all
        .iter()
        .map(|(key, _, c)| match c {
            Candidate::Race { accesses, .. } if key.0 == 0 => {
                let mut pair = [accesses[0].site, accesses[1].site];
                pair.sort_unstable();
                let n = seen.entry(pair).or_default();
                *n += 1;
                (0, *n - 1)
            }
            _ => (key.0, 0),
        })
        .collect();
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by_key(|&i| rounds[i]);
    let mut taken: Vec<Option<_>> = std::mem::take(all).into_iter().map(Some).collect();
    all.extend(order.into_iter().filter_map(|i| taken[i].take()));
}

/// The races of one surviving variable.
fn races(
    program: &Program,
    survivor: &filter::Survivor,
    options: &Options,
    progress: &Progress,
) -> Result<Done, String> {
    let solved = match &options.backend {
        Backend::Native => {
            solve::races_with(program, survivor, options, &|| progress.window_done())
        }
        Backend::Csp(checker) => csp::solve::races(program, survivor, checker)?,
    };
    Ok(done(program, solved))
}

/// The deadlocks of the sync-only model.
fn deadlocks(program: &Program, options: &Options, progress: &Progress) -> Result<Done, String> {
    let solved = match &options.backend {
        Backend::Native => solve::deadlocks_with(program, options, &|| progress.window_done()),
        Backend::Csp(checker) => csp::solve::deadlocks(program, checker)?,
    };
    Ok(done(program, solved))
}

/// A solver's findings as candidates, with their fallbacks, and the pairs it left undecided as
/// names.
fn done(program: &Program, solved: solve::Solved) -> Done {
    let candidate = |f| candidates::candidate(&solved.model, &program.vars, f);
    let mut found = Vec::new();
    // Per finding, its index in `found`.
    let index: Vec<Option<usize>> = solved
        .findings
        .iter()
        .map(|f| {
            found.push(candidate(f)?);
            Some(found.len() - 1)
        })
        .collect();
    let fallbacks: Vec<(usize, Candidate)> = solved
        .fallbacks
        .iter()
        .filter_map(|f| Some((index[f.of]?, candidate(&f.finding)?)))
        .collect();
    let lost = solved.findings.len() - found.len() + solved.fallbacks.len() - fallbacks.len();
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
    Done {
        stats: solved.stats,
        found,
        fallbacks,
        lost,
        open,
        atomicity: None,
    }
}

/// The atomicity violations of the marked transactions (by transaction site, then e1, f and e2
/// sites).
fn atomicity_violations(program: &Program, options: &Options) -> Done {
    let (predictions, counts) = atomicity::predict(
        program,
        options.window,
        options.transactions.as_ref().unwrap_or(&Default::default()),
    );
    let found: Vec<Candidate> = predictions
        .iter()
        .filter_map(|p| candidates::atomicity(&program.model, &program.vars, p))
        .collect();
    Done {
        lost: predictions.len() - found.len(),
        found,
        atomicity: Some(counts),
        ..Done::default()
    }
}
