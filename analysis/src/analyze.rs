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
//! [`AnalysisError`] when a CSP checker could not decide. The units run on all cores; a
//! [`Keeper`] takes each unit's results as it finishes and holds no more than `max_candidates`
//! (the memory a run's candidates take is bounded by the cap, not by the run), the same ones in
//! the same order whichever core finished first; a shard solves only its own units, the same
//! candidates in the same order as the whole analysis gives for them. Stages and units are
//! reported to a [`Progress`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use ilgen_trace::event::SiteId;
use ilgen_trace::format::ThreadTrace;
use rayon::prelude::*;

use crate::atomicity::Counts as AtomicityCounts;
use crate::candidates::{self, Candidate, NotDecided, Ops, Stats};
use crate::csp;
use crate::error::AnalysisError;
use crate::lifetime::Lifetimes;
use crate::model::{ModelEvent, VarId};
use crate::objects::Objects;
use crate::options::{Backend, Options};
use crate::prepare::Program;
use crate::progress::Progress;
use crate::shard::{Key, Shard, Sites};
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
        (prepare::Keep::Unordered, Backend::Native) => screen::plain(&threads, &lifetimes),
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
    let mut mine = shard.units(units.len(), || unit_sites(&program, &survivors, &units));
    mine.sort_by_key(|&u| !matches!(units[u], Unit::Deadlocks | Unit::Atomicity));
    progress.solving(mine.len());
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
    // Each unit's results go into the keeper as it finishes: what it holds, not every unit's
    // candidates, bounds the memory (a 96-thread C++ test suite's units found tens of thousands of
    // candidates, each with a schedule of ~10^5 steps: 24 GiB before the cap cut them).
    let keeper = std::sync::Mutex::new(Keeper::new(options.max_candidates));
    let ops = Ops::of(&program.model);
    let solve_unit = |u: usize| {
        let done = match units[u] {
            Unit::Races(i) => races(&program, &ops, &survivors[i], options, progress),
            Unit::Deadlocks => deadlocks(&program, &ops, options, progress),
            Unit::Atomicity => Ok(atomicity_violations(&program, &ops, options)),
        };
        if let Ok(d) = &done {
            progress.job_done(d.found.len());
        }
        keeper
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take(u, done);
    };
    mine.into_par_iter().for_each(solve_unit);
    let keeper = keeper.into_inner().unwrap_or_else(|e| e.into_inner());
    // Report order; the first unit in it that failed is the error, whichever failed first.
    if let Some((_, e)) = keeper.failed {
        return Err(AnalysisError::Checker(e));
    }
    stats.solve = keeper.solve;
    stats.findings_unconvertible = keeper.lost;
    stats.not_decided = keeper.open.into_values().collect();
    if let Some(counts) = keeper.atomicity {
        progress.stage(&format!(
            "{} transactions, {} atomicity violation(s) with a schedule",
            counts.transactions, counts.predicted
        ));
        stats.atomicity = Some(counts);
    }
    stats.not_written = keeper.seen.saturating_sub(options.max_candidates);
    let mut all: Vec<(Key, Option<Key>, Candidate)> = keeper
        .kept
        .into_iter()
        .map(|((_, _, key), (of, c))| (key, of, c))
        .collect();
    // Under the cap, report order; over it, the order the cap cut by (the keeper's).
    if keeper.seen <= options.max_candidates {
        all.sort_by_key(|(key, _, _)| *key);
    }
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

/// Where a candidate goes when the cap cuts: (fallback rank, round, key). Round `r` holds the
/// `r`-th race candidate (from 0, in key order) of each pair of sites, deadlocks and atomicity
/// violations are in round 0, fallbacks (rank 1, 2, ...) after every candidate. So the first race
/// at a pair of sites no earlier candidate has goes before one at a pair already had: without it
/// a program whose many objects share one racing pair of lines (memcached's slab items: 113 of
/// its 257 candidates at one pair) fills the cap with that pair and never replays the others.
type Place = (usize, usize, Key);

/// The units' results as they finish, in any order, holding at most `cap` candidates: the first
/// `cap` by [`Place`] of all it was given. A candidate put out is never wanted back: a place only
/// moves back as more candidates come (one at the same pair of sites with an earlier key pushes
/// the later ones a round on), and the candidates before a put-out one never become fewer than
/// `cap` (one that moves past it is replaced, before it, by the newcomer that moved it).
struct Keeper {
    cap: usize,
    /// Candidates given, kept or not.
    seen: usize,
    kept: BTreeMap<Place, (Option<Key>, Candidate)>,
    /// Per pair of sites, the keys of its kept race candidates (rank 0).
    pairs: HashMap<[SiteId; 2], BTreeSet<Key>>,
    solve: solve::SolveStats,
    lost: usize,
    /// The race pairs left undecided, by unit (report order).
    open: BTreeMap<usize, NotDecided>,
    atomicity: Option<AtomicityCounts>,
    /// The first unit in report order that failed, and why.
    failed: Option<(usize, String)>,
}

impl Keeper {
    fn new(cap: usize) -> Keeper {
        Keeper {
            cap,
            seen: 0,
            kept: BTreeMap::new(),
            pairs: HashMap::new(),
            solve: solve::SolveStats::default(),
            lost: 0,
            open: BTreeMap::new(),
            atomicity: None,
            failed: None,
        }
    }

    /// Takes unit `u`'s result.
    fn take(&mut self, u: usize, done: Result<Done, String>) {
        let done = match done {
            Ok(d) => d,
            Err(e) => {
                if self.failed.as_ref().is_none_or(|(f, _)| u < *f) {
                    self.failed = Some((u, e));
                }
                return;
            }
        };
        self.solve.add(&done.stats);
        self.lost += done.lost;
        if let Some(open) = done.open {
            self.open.insert(u, open);
        }
        if done.atomicity.is_some() {
            self.atomicity = done.atomicity;
        }
        for (k, c) in done.found.into_iter().enumerate() {
            self.add((0, u, k), None, c);
        }
        // Fallbacks come by candidate, each candidate's in rank order; `ranked[r - 1]`: those of
        // rank r so far.
        let (mut ranked, mut rank, mut last) = (Vec::<usize>::new(), 0, None);
        for (of, c) in done.fallbacks {
            rank = if last == Some(of) { rank + 1 } else { 1 };
            last = Some(of);
            if ranked.len() < rank {
                ranked.push(0);
            }
            self.add((rank, u, ranked[rank - 1]), Some((0, u, of)), c);
            ranked[rank - 1] += 1;
        }
    }

    fn add(&mut self, key: Key, of: Option<Key>, c: Candidate) {
        self.seen += 1;
        let place = match site_pair(key, &c) {
            Some(pair) => {
                let keys = self.pairs.entry(pair).or_default();
                // The kept ones after it at its pair move a round on.
                let later: Vec<Key> = keys.range(key..).copied().collect();
                let round = keys.len() - later.len();
                for (i, &k) in later.iter().enumerate().rev() {
                    let moved = self.kept.remove(&(0, round + i, k)).expect("kept");
                    self.kept.insert((0, round + i + 1, k), moved);
                }
                keys.insert(key);
                (0, round, key)
            }
            None => (key.0, 0, key),
        };
        self.kept.insert(place, (of, c));
        if self.kept.len() > self.cap {
            let ((_, _, key), (_, c)) = self.kept.pop_last().expect("over the cap");
            if let Some(keys) = site_pair(key, &c).and_then(|p| self.pairs.get_mut(&p)) {
                keys.remove(&key);
            }
        }
    }
}

/// The pair of sites (in order) of a race candidate that is no fallback: what its round counts.
fn site_pair(key: Key, c: &Candidate) -> Option<[SiteId; 2]> {
    c.race_sites().filter(|_| key.0 == 0)
}

/// Per unit, the pairs of sites its race candidates can be at: those of the race pairs the
/// filter left on its variable (a candidate or fallback of the native or CSP solver is one of
/// them), or any pair of its variable's access sites when the filter did not store them all.
fn unit_sites(program: &Program, survivors: &[filter::Survivor], units: &[Unit]) -> Vec<Sites> {
    let model = &program.model;
    let unstored: HashMap<VarId, usize> = (survivors.iter().enumerate())
        .filter(|(_, s)| s.truncated)
        .map(|(i, s)| (s.var, i))
        .collect();
    let mut any: Vec<BTreeSet<SiteId>> = vec![BTreeSet::new(); survivors.len()];
    if !unstored.is_empty() {
        for e in model.threads.iter().flat_map(|t| &t.events) {
            if let ModelEvent::Access { var, site, .. } = e {
                if let Some(&i) = unstored.get(&(*var as VarId)) {
                    any[i].insert(*site);
                }
            }
        }
    }
    units
        .iter()
        .map(|u| match *u {
            Unit::Races(i) if survivors[i].truncated => {
                Sites::Any(std::mem::take(&mut any[i]).into_iter().collect())
            }
            Unit::Races(i) => {
                let mut pairs: Vec<[SiteId; 2]> = (survivors[i].pairs.iter())
                    .filter_map(|&p| filter::sites(model, p))
                    .map(|(a, b)| [a.min(b), a.max(b)])
                    .collect();
                pairs.sort_unstable();
                pairs.dedup();
                Sites::Pairs(pairs)
            }
            Unit::Deadlocks | Unit::Atomicity => Sites::Pairs(Vec::new()),
        })
        .collect()
}

/// The races of one surviving variable.
fn races(
    program: &Program,
    ops: &Arc<Ops>,
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
    Ok(done(program, ops, solved))
}

/// The deadlocks of the sync-only model.
fn deadlocks(
    program: &Program,
    ops: &Arc<Ops>,
    options: &Options,
    progress: &Progress,
) -> Result<Done, String> {
    let solved = match &options.backend {
        Backend::Native => solve::deadlocks_with(program, options, &|| progress.window_done()),
        Backend::Csp(checker) => csp::solve::deadlocks(program, checker)?,
    };
    Ok(done(program, ops, solved))
}

/// A solver's findings as candidates, with their fallbacks, and the pairs it left undecided as
/// names.
fn done(program: &Program, ops: &Arc<Ops>, solved: solve::Solved) -> Done {
    let candidate = |f| candidates::candidate(&solved.model, ops, &program.vars, f);
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
fn atomicity_violations(program: &Program, ops: &Arc<Ops>, options: &Options) -> Done {
    let (predictions, counts) = atomicity::predict(
        program,
        options.window,
        options.transactions.as_ref().unwrap_or(&Default::default()),
    );
    let found: Vec<Candidate> = predictions
        .iter()
        .filter_map(|p| candidates::atomicity(&program.model, ops, &program.vars, p))
        .collect();
    Done {
        lost: predictions.len() - found.len(),
        found,
        atomicity: Some(counts),
        ..Done::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidates::{AccessName, AccessSide, ObjectRange, ScheduleOut};

    fn race(addr: u64, sites: [SiteId; 2]) -> Candidate {
        let side = |tid, site| AccessSide {
            tid,
            site,
            access: AccessName::Write,
        };
        Candidate::Race {
            object: ObjectRange { addr, len: 4 },
            accesses: [side(0, sites[0]), side(1, sites[1])],
            schedule: ScheduleOut::whole(0, Vec::new()),
            fallback_of: None,
        }
    }

    /// Unit `u`'s result: races at these pairs of sites, and fallbacks of its first candidate.
    fn unit(pairs: &[[SiteId; 2]], fallbacks: usize) -> Done {
        let found: Vec<Candidate> = pairs.iter().map(|&p| race(0x10, p)).collect();
        Done {
            fallbacks: (0..fallbacks).map(|_| (0, race(0x20, pairs[0]))).collect(),
            found,
            ..Done::default()
        }
    }

    /// The places of what a keeper of `cap` holds after taking `units` in the order `order`.
    fn kept(units: &[(&[[SiteId; 2]], usize)], order: &[usize], cap: usize) -> Vec<Place> {
        let mut k = Keeper::new(cap);
        for &u in order {
            k.take(u, Ok(unit(units[u].0, units[u].1)));
        }
        assert_eq!(
            k.seen,
            units.iter().map(|(p, f)| p.len() + f).sum::<usize>()
        );
        k.kept.into_keys().collect()
    }

    #[test]
    fn the_keeper_keeps_the_first_by_place_whatever_order_units_finish_in() {
        // Pair [1, 2] in every unit, [3, 4] and [5, 6] once each, two fallbacks in unit 0.
        let units: [(&[[SiteId; 2]], usize); 4] = [
            (&[[1, 2], [3, 4]], 2),
            (&[[2, 1]], 0),
            (&[[1, 2], [5, 6]], 0),
            (&[[1, 2]], 0),
        ];
        // Report order: (0,0,0) [1,2], (0,0,1) [3,4], (0,1,0) [1,2], (0,2,0) [1,2], (0,2,1)
        // [5,6], (0,3,0) [1,2], then fallbacks (1,0,0) and (2,0,0). By place: round 0 is
        // [1,2]'s first and [3,4] and [5,6]; then [1,2]'s second, third, fourth; then fallbacks.
        let everything = [
            (0, 0, (0, 0, 0)),
            (0, 0, (0, 0, 1)),
            (0, 0, (0, 2, 1)),
            (0, 1, (0, 1, 0)),
            (0, 2, (0, 2, 0)),
            (0, 3, (0, 3, 0)),
            (1, 0, (1, 0, 0)),
            (2, 0, (2, 0, 0)),
        ];
        let orders = [
            [0, 1, 2, 3],
            [3, 2, 1, 0],
            [2, 0, 3, 1],
            [1, 3, 0, 2],
            [3, 1, 2, 0],
        ];
        for cap in 1..=everything.len() + 1 {
            let want = &everything[..cap.min(everything.len())];
            for order in &orders {
                assert_eq!(kept(&units, order, cap), want, "cap {cap}, order {order:?}");
            }
        }
    }

    #[test]
    fn the_first_unit_in_report_order_that_failed_is_the_error() {
        let mut k = Keeper::new(10);
        k.take(5, Err("five".into()));
        k.take(2, Err("two".into()));
        k.take(0, Ok(unit(&[[1, 2]], 0)));
        k.take(3, Err("three".into()));
        assert_eq!(k.failed, Some((2, "two".into())));
    }
}
