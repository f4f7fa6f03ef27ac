//! Solve: from the model of one variable (or of sync events only) to findings with schedules.
//!
//! Takes the prepared [`Program`], a filter [`Survivor`] and the [`Options`]; gives [`Solved`]:
//! the restricted model and its findings (race or deadlock, each with its schedule of sync events),
//! the [`Fallback`]s of its race findings, and counts of how each was decided. Races go first to
//! the cut-based fast path ([`cut`]), one race-pair candidate at a time (a pair at the two sites
//! of a finding already made may become one of its fallbacks, [`fallback`]); only if it cannot
//! decide some pair and wants more findings, to the exhaustive search ([`exhaustive`]) window by
//! window. Deadlocks go first to lock-graph cycles checked by cuts ([`lockgraph`]), then, unless
//! the model's structure rules deadlocks out, to the exhaustive search window by window.

pub(crate) mod checkpoint;
pub mod cut;
mod exclusion;
pub mod exhaustive;
pub mod fallback;
pub mod lockgraph;
mod prefix;

use std::collections::HashSet;

use crate::filter::{self, Survivor};
use crate::finding::Finding;
use crate::model::{At, Model, ModelEvent, VarId};
use crate::options::Options;
use crate::prepare::Program;
use crate::window;
use exhaustive::Goal;
pub use fallback::Fallback;
use fallback::Reserves;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SolveStats {
    /// Race-pair candidates the cut path decided with a witness, ruled out, or could not decide.
    pub pairs_witnessed: u64,
    pub pairs_excluded: u64,
    pub pairs_undecided: u64,
    /// Lock-order cycles the cut path could not decide.
    pub cycles_undecided: u64,
    pub exhaustive_windows: u64,
    pub exhaustive_states: u64,
    /// Searches (one variable, or deadlocks) stopped by the state bound before covering every
    /// window.
    pub exhaustive_incomplete: u64,
    /// States a CSP checker explored (`--solver check`), and its checks stopped by the state bound.
    #[serde(default)]
    pub checker_states: u64,
    #[serde(default)]
    pub checker_gave_up: u64,
    /// Where every race pair the filter left went besides a witness or a cut's proof: not tried
    /// because its two sites already had a candidate, or because the variable already had its
    /// `--max-per-var` candidates; ruled out by a complete exhaustive search; or left undecided
    /// by a limit (the state bound, or windows the search was cut into).
    #[serde(default)]
    pub pairs_same_sites: u64,
    #[serde(default)]
    pub pairs_not_tried: u64,
    #[serde(default)]
    pub pairs_search_excluded: u64,
    #[serde(default)]
    pub pairs_state_limit: u64,
    #[serde(default)]
    pub pairs_window_limit: u64,
    /// Race pairs kept as a fallback of the candidate at their two sites ([`fallback`]).
    #[serde(default)]
    pub pairs_fallback: u64,
}

impl SolveStats {
    pub fn add(&mut self, other: &SolveStats) {
        self.pairs_witnessed += other.pairs_witnessed;
        self.pairs_excluded += other.pairs_excluded;
        self.pairs_undecided += other.pairs_undecided;
        self.cycles_undecided += other.cycles_undecided;
        self.exhaustive_windows += other.exhaustive_windows;
        self.exhaustive_states += other.exhaustive_states;
        self.exhaustive_incomplete += other.exhaustive_incomplete;
        self.checker_states += other.checker_states;
        self.checker_gave_up += other.checker_gave_up;
        self.pairs_same_sites += other.pairs_same_sites;
        self.pairs_not_tried += other.pairs_not_tried;
        self.pairs_search_excluded += other.pairs_search_excluded;
        self.pairs_state_limit += other.pairs_state_limit;
        self.pairs_window_limit += other.pairs_window_limit;
        self.pairs_fallback += other.pairs_fallback;
    }
}

pub struct Solved {
    /// The model the findings' events index.
    pub model: Model,
    pub findings: Vec<Finding>,
    /// Other witnessed pairs at the sites of race findings, by finding.
    pub fallbacks: Vec<Fallback>,
    pub stats: SolveStats,
    /// Race pairs of this variable a limit left undecided, if any.
    pub not_decided: Option<NotDecided>,
}

/// The limit that stopped the search before it decided some race pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The exhaustive search ran out of states (`--max-states`).
    States,
    /// The exhaustive search covered the run window by window (`--window`): a race whose
    /// schedule spans two windows is not seen.
    Window,
}

/// Race pairs of one variable no proof and no witness decided, because of `limit`: `pair` (in the
/// model's positions) stands for all `pairs` of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotDecided {
    pub pair: (At, At),
    pub pairs: u64,
    pub limit: Limit,
}

/// How far [`search_windows`] got.
struct Coverage {
    windows: usize,
    /// Every window was searched to the end (no state bound hit).
    complete: bool,
}

/// Races on one variable that survived the filter.
pub fn races(program: &Program, survivor: &Survivor, options: &Options) -> Solved {
    races_with(program, survivor, options, &|| {})
}

/// [`races`], calling `window_done` after each window of the exhaustive search (for progress).
pub fn races_with(
    program: &Program,
    survivor: &Survivor,
    options: &Options,
    window_done: &(dyn Fn() + Sync),
) -> Solved {
    let (model, origin) = program.model.restrict(Some(survivor.var));
    let want = options.want();
    let mut stats = SolveStats::default();
    let mut findings = Vec::new();
    let mut seen = HashSet::new();
    let mut reserves = Reserves::new(options.fallbacks);
    let mut undecided = survivor.truncated;
    let mut cut_undecided = Vec::new();
    let mut cuts = cut::Cuts::new(&model);
    let local = |at: At| origin.local(at);
    for (i, &(x, y)) in survivor.pairs.iter().enumerate() {
        // Fallbacks do not count toward `want`: with it reached, pairs are looked at for them.
        let full = findings.len() >= want;
        if full && !reserves.wanting() {
            stats.pairs_not_tried += (survivor.pairs.len() - i) as u64;
            break;
        }
        let (Some(x), Some(y)) = (local(x), local(y)) else {
            continue;
        };
        let Some((sx, sy)) = filter::sites(&model, (x, y)) else {
            continue;
        };
        let mut key = vec![sx, sy];
        key.sort_unstable();
        // Another pair at the same two sites already has a candidate: this one is at most its
        // fallback.
        if reserves.offer(&mut cuts, &key, (x, y)) {
            continue;
        }
        if full {
            stats.pairs_not_tried += 1;
            continue;
        }
        match cuts.race(x, y) {
            cut::Verdict::Witness(schedule) => {
                stats.pairs_witnessed += 1;
                reserves.open(key.clone(), findings.len(), (x, y));
                seen.insert(key);
                findings.push(Finding::Race {
                    first: x,
                    second: y,
                    schedule,
                });
            }
            cut::Verdict::Excluded => stats.pairs_excluded += 1,
            cut::Verdict::Unknown => {
                stats.pairs_undecided += 1;
                undecided = true;
                cut_undecided.push((x, y, key));
            }
        }
    }
    let (fallbacks, same_sites) = reserves.finish(&mut cuts);
    stats.pairs_same_sites += same_sites;
    stats.pairs_fallback += fallbacks.len() as u64;
    let mut not_decided = None;
    if undecided && findings.len() < want {
        let goal = Goal::Race { var: survivor.var };
        let coverage = search_windows(
            &model,
            goal,
            options,
            &mut seen,
            &mut findings,
            &mut stats,
            window_done,
        );
        // The pairs the filter did not store went to this search too.
        let unstored = survivor.pairs_left - survivor.pairs.len() as u64;
        let open: Vec<(At, At)> = cut_undecided
            .into_iter()
            .filter(|(_, _, key)| !seen.contains(key))
            .map(|(x, y, _)| (x, y))
            .collect();
        let count = open.len() as u64 + unstored;
        let limit = if findings.len() >= want {
            stats.pairs_not_tried += count;
            None
        } else if !coverage.complete {
            stats.pairs_state_limit += count;
            Some(Limit::States)
        } else if coverage.windows > 1 {
            stats.pairs_window_limit += count;
            Some(Limit::Window)
        } else {
            stats.pairs_search_excluded += count;
            None
        };
        let first = open.first().copied().or_else(|| {
            let (x, y) = *survivor.pairs.first()?;
            Some((local(x)?, local(y)?))
        });
        not_decided = limit.zip(first).map(|(limit, pair)| NotDecided {
            pair,
            pairs: count,
            limit,
        });
    }
    Solved {
        model,
        findings,
        fallbacks,
        stats,
        not_decided,
    }
}

/// Deadlocks of the sync-only model.
pub fn deadlocks(program: &Program, options: &Options) -> Solved {
    deadlocks_with(program, options, &|| {})
}

/// [`deadlocks`], calling `window_done` after each window of the exhaustive search.
pub fn deadlocks_with(
    program: &Program,
    options: &Options,
    window_done: &(dyn Fn() + Sync),
) -> Solved {
    let (model, _) = program.model.restrict(None);
    let mut stats = SolveStats::default();
    let cycles = lockgraph::deadlocks(&model, options.want());
    stats.cycles_undecided = cycles.undecided;
    let mut seen: HashSet<Vec<ilgen_trace::SiteId>> = cycles
        .findings
        .iter()
        .map(|f| blocked_sites(&model, f))
        .collect();
    let mut findings = cycles.findings;
    if !lockgraph::cannot_deadlock(&model) {
        search_windows(
            &model,
            Goal::Deadlock,
            options,
            &mut seen,
            &mut findings,
            &mut stats,
            window_done,
        );
    }
    Solved {
        model,
        findings,
        fallbacks: Vec::new(),
        stats,
        not_decided: None,
    }
}

fn search_windows(
    model: &Model,
    goal: Goal,
    options: &Options,
    seen: &mut HashSet<Vec<ilgen_trace::SiteId>>,
    findings: &mut Vec<Finding>,
    stats: &mut SolveStats,
    window_done: &(dyn Fn() + Sync),
) -> Coverage {
    let want = options.want();
    let mut budget = options.max_states;
    let windows = window::split(model, options.window);
    let mut coverage = Coverage {
        windows: windows.len(),
        complete: true,
    };
    for w in windows {
        if findings.len() >= want {
            break;
        }
        if let Goal::Race { var } = goal {
            if threads_accessing(model, &w, var) < 2 {
                continue;
            }
        }
        let s = exhaustive::search(model, &w, goal, want - findings.len(), budget, seen);
        window_done();
        stats.exhaustive_windows += 1;
        stats.exhaustive_states += s.states as u64;
        budget = budget.saturating_sub(s.states);
        findings.extend(s.findings);
        if !s.complete && budget == 0 {
            stats.exhaustive_incomplete += 1;
            coverage.complete = false;
            break;
        }
    }
    coverage
}

/// The sites a deadlock's threads block at: two deadlocks with the same are one candidate.
fn blocked_sites(model: &Model, finding: &Finding) -> Vec<ilgen_trace::SiteId> {
    let Finding::Deadlock { blocked, .. } = finding else {
        return Vec::new();
    };
    let mut sites: Vec<_> = blocked
        .iter()
        .filter_map(|at| model.threads[at.thread].observed_at(at.index))
        .map(|o| o.site)
        .collect();
    sites.sort_unstable();
    sites
}

fn threads_accessing(model: &Model, w: &window::Window, var: VarId) -> usize {
    model
        .threads
        .iter()
        .enumerate()
        .filter(|(t, thread)| {
            thread
                .events
                .range(w.start[*t]..w.end[*t])
                .any(|e| matches!(e, ModelEvent::Access { var: v, .. } if *v as VarId == var))
        })
        .count()
}

#[cfg(test)]
mod tests {
    //! Property tests: on random small runs, the cut path agrees with the exhaustive search
    //! wherever it answers, and the driver (cut path, then exhaustive) always does.

    use std::cell::{Cell, RefCell};
    use std::collections::HashSet;

    use proptest::prelude::*;

    use super::*;
    use crate::filter::filter;
    use crate::finding::Schedule;
    use crate::model::{Origin, RfEdge};
    use crate::prepare::prepare;
    use crate::testkit::{check_random_runs, options};

    /// Each thread's steps are its first sync events, in program order (replay needs no more).
    fn assert_prefixes(model: &Model, schedule: &Schedule) {
        let mut next = vec![0; model.threads.len()];
        for at in schedule.all(model) {
            let events = &model.threads[at.thread].events;
            let expected = (next[at.thread]..events.len()).find(|&i| events[i].is_sync());
            assert_eq!(Some(at.index), expected, "{schedule:?}");
            next[at.thread] = at.index + 1;
        }
    }

    fn exhaustive_race(program: &Program, var: VarId) -> bool {
        let (model, _) = program.model.restrict(Some(var));
        let s = exhaustive::search(
            &model,
            &window::whole(&model),
            Goal::Race { var },
            1,
            usize::MAX,
            &mut HashSet::new(),
        );
        assert!(s.complete || !s.findings.is_empty());
        !s.findings.is_empty()
    }

    /// The reads-from edges a model of `var` keeps ([`Model::restrict`]), from their definition:
    /// of each order of `full`'s edges, the first edge of a read of another variable whose
    /// segment has no access of `var` before it (`None`: the first edge); failing that, the
    /// first edge waiting in its read's thread, moved to the constraining event that ends the
    /// read's segment; at the indices of the kept events (`origin`), sorted, one per order; a
    /// read not kept stands at the last kept event before it.
    fn kept_edges(full: &Model, var: Option<VarId>, origin: &Origin) -> Vec<RfEdge> {
        let accessed = |read: At, v: VarId| {
            full.threads[read.thread]
                .events
                .range(0..read.index)
                .rev()
                .take_while(|e| !e.constrains())
                .any(|e| matches!(e, ModelEvent::Access { var, .. } if *var as VarId == v))
        };
        let local = |at: At| At {
            thread: at.thread,
            index: origin
                .kept(at.thread)
                .partition_point(|&i| i <= at.index)
                .saturating_sub(1),
        };
        let segment_end = |read: At| {
            (read.index..full.threads[read.thread].events.len())
                .find(|&i| full.threads[read.thread].events[i].constrains())
                .map(|index| At {
                    thread: read.thread,
                    index,
                })
        };
        let edges = &full.sources().reads_from;
        let mut kept: Vec<RfEdge> = edges
            .chunk_by(|a, b| (a.after, a.before) == (b.after, b.before))
            .filter_map(|order| {
                let (e, after) = match var {
                    None => (order.first()?, order.first()?.after.at()),
                    Some(v) => match order
                        .iter()
                        .find(|e| e.var as VarId != v && !accessed(e.read.at(), v))
                    {
                        Some(e) => (e, e.after.at()),
                        None => order.iter().find_map(|e| {
                            let read = e.read.at();
                            let end =
                                segment_end(read).filter(|_| e.after.at().thread == read.thread)?;
                            Some((e, end))
                        })?,
                    },
                };
                let (before, read) = (local(e.before.at()), local(e.read.at()));
                Some(RfEdge::new(local(after), before, e.var as VarId, read))
            })
            .collect();
        kept.sort_unstable();
        kept.dedup_by_key(|e| (e.after, e.before));
        kept
    }

    #[test]
    fn cut_path_agrees_with_exhaustive_search_on_random_runs() {
        cut_path_agrees_on_random_runs(false);
    }

    /// The same with every read deciding: the reads-from edges bind both solvers alike.
    #[test]
    fn cut_path_agrees_with_exhaustive_search_with_reads_from() {
        cut_path_agrees_on_random_runs(true);
    }

    /// How often each outcome came up over all cases: the generator must exercise them all.
    #[derive(Default)]
    struct Coverage {
        decided: usize,
        undecided: usize,
        racy: usize,
        clean: usize,
        windowed: usize,
        /// Cut-path witnesses whose schedule runs a failed try operation.
        through_try: usize,
        with_edges: usize,
    }

    fn cut_path_agrees_on_random_runs(reads_from: bool) {
        let options = Options {
            max_states: usize::MAX,
            ..options()
        };
        let is_try = |model: &Model, at: &At| {
            matches!(model.op(*at), Some(crate::model::ModelOp::TryFail { .. }))
        };
        let coverage = RefCell::new(Coverage::default());
        check_random_runs(0x9e37_79b9_7f4a_7c15, 1500, |run| {
            let mut c = coverage.borrow_mut();
            let mut program = prepare(run.traces());
            if reads_from {
                let deciding = crate::testkit::every_read_deciding(&program.model);
                let edges = crate::reads_from::edges(&program.model, &deciding);
                c.with_edges += usize::from(!edges.is_empty());
                program.model.set_reads_from(edges);
            }
            let (survivors, _) = filter(&program);
            let (sync_only, origin) = program.model.restrict(None);
            prop_assert_eq!(
                &sync_only.sources().reads_from[..],
                &kept_edges(&program.model, None, &origin)[..],
                "the deadlock model keeps other reads-from edges"
            );
            for var in 0..program.vars.len() {
                let reference = exhaustive_race(&program, var);
                if reference {
                    c.racy += 1;
                } else {
                    c.clean += 1;
                }
                let Some(survivor) = survivors.iter().find(|s| s.var == var) else {
                    prop_assert!(!reference, "filter removed racy var {}", var);
                    continue;
                };
                // The cut path alone, pair by pair.
                let (model, origin) = program.model.restrict(Some(var));
                prop_assert_eq!(
                    &model.sources().reads_from[..],
                    &kept_edges(&program.model, Some(var), &origin)[..],
                    "restrict keeps other reads-from edges"
                );
                if !reads_from {
                    let rebuilt = Model::new(model.threads.to_vec(), model.objects.clone());
                    prop_assert_eq!(
                        model.sources(),
                        rebuilt.sources(),
                        "restrict derives other sources"
                    );
                }
                let local = |at: At| origin.local(at).unwrap();
                let pairs: Vec<(At, At)> = survivor
                    .pairs
                    .iter()
                    .map(|&(x, y)| (local(x), local(y)))
                    .collect();
                let verdicts: Vec<cut::Verdict> = pairs
                    .iter()
                    .map(|&(x, y)| cut::race_alone(&model, x, y))
                    .collect();
                // The closures one model's pairs share give each pair what its own would, asked
                // in any order and again.
                let mut cuts = cut::Cuts::new(&model);
                for (i, &(x, y)) in pairs
                    .iter()
                    .enumerate()
                    .rev()
                    .chain(pairs.iter().enumerate())
                {
                    prop_assert_eq!(
                        &cuts.race(x, y),
                        &verdicts[i],
                        "var {}: pair {:?} with kept closures\n{:#?}",
                        var,
                        (x, y),
                        run.traces()
                    );
                }
                for v in &verdicts {
                    if let cut::Verdict::Witness(schedule) = v {
                        assert_prefixes(&model, schedule);
                        c.through_try +=
                            usize::from(schedule.all(&model).any(|at| is_try(&model, &at)));
                    }
                }
                let witness = verdicts
                    .iter()
                    .any(|v| matches!(v, cut::Verdict::Witness(_)));
                let all_excluded = verdicts.iter().all(|v| *v == cut::Verdict::Excluded);
                if witness || all_excluded {
                    c.decided += 1;
                    prop_assert_eq!(
                        witness,
                        reference,
                        "var {}: cut path says {}\n{:#?}",
                        var,
                        witness,
                        run.traces()
                    );
                } else {
                    c.undecided += 1;
                }
                // The driver: cut path, then exhaustive search.
                let solved = races(&program, survivor, &options);
                for f in &solved.findings {
                    if let Finding::Race { schedule, .. } = f {
                        assert_prefixes(&solved.model, schedule);
                    }
                }
                prop_assert_eq!(
                    !solved.findings.is_empty(),
                    reference,
                    "var {}: driver disagrees\n{:#?}",
                    var,
                    run.traces()
                );
                // Small windows may miss races, never invent one.
                for w in window::split(&model, 3) {
                    let s = exhaustive::search(
                        &model,
                        &w,
                        Goal::Race { var },
                        1,
                        usize::MAX,
                        &mut HashSet::new(),
                    );
                    prop_assert!(
                        s.findings.is_empty() || reference,
                        "var {}: window {:?} invented a race\n{:#?}",
                        var,
                        w,
                        run.traces()
                    );
                    for f in &s.findings {
                        if let Finding::Race { schedule, .. } = f {
                            assert_prefixes(&model, schedule);
                        }
                    }
                    c.windowed += usize::from(!s.findings.is_empty());
                }
            }
            Ok(())
        });
        let Coverage {
            decided,
            undecided,
            racy,
            clean,
            windowed,
            through_try,
            with_edges,
        } = coverage.into_inner();
        eprintln!(
            "reads_from {reads_from}: racy {racy} clean {clean} windowed {windowed} through_try \
             {through_try} decided {decided} undecided {undecided} with_edges {with_edges}"
        );
        assert!(
            !reads_from || with_edges > 500,
            "only {with_edges} runs with edges"
        );
        assert!(
            racy > 500 && clean > 500,
            "racy {racy}, clean {clean}: weak cases"
        );
        assert!(
            windowed > 200,
            "only {windowed} races found in windows: weak cases"
        );
        assert!(
            through_try > 200,
            "only {through_try} witnesses through a failed try operation: weak cases"
        );
        // The fast path must decide most variables on its own to be worth its name.
        assert!(
            decided > 4 * undecided,
            "decided {decided}, undecided {undecided}"
        );
    }

    #[test]
    fn a_thread_at_a_trylock_that_cannot_fail_is_not_deadlocked() {
        use crate::testkit::Run;
        use ilgen_trace::SyncOp;
        let (a, b) = (0x900, 0x910);
        // Thread 1 holds a and fails to take b, which thread 0 holds. Once thread 0 released b
        // first, thread 1's trylock would succeed: thread 0 waiting for a is no deadlock.
        let mut r = Run::new(2);
        r.fork(0, 1)
            .start(1)
            .lock(0, b)
            .lock(1, a)
            .sync(
                1,
                SyncOp::MutexTryLock {
                    mutex: b,
                    acquired: false,
                },
            )
            .unlock(1, a)
            .end(1)
            .unlock(0, b)
            .lock(0, a)
            .unlock(0, a)
            .join(0, 1);
        let program = prepare(r.traces());
        let (model, _) = program.model.restrict(None);
        assert!(model.threads[1]
            .events
            .iter()
            .any(|e| matches!(e.op(), Some(crate::model::ModelOp::TryFail { .. }))));
        let s = exhaustive::search(
            &model,
            &window::whole(&model),
            Goal::Deadlock,
            usize::MAX,
            usize::MAX,
            &mut HashSet::new(),
        );
        assert!(s.complete && s.findings.is_empty(), "{:?}", s.findings);
        assert!(lockgraph::cannot_deadlock(&model));
        assert!(lockgraph::deadlocks(&model, usize::MAX).findings.is_empty());
    }

    #[test]
    fn progress_hears_of_every_window_the_solvers_search() {
        use std::sync::atomic::{AtomicU64, Ordering};
        let options = Options {
            max_per_var: usize::MAX,
            window: 3,
            max_states: usize::MAX,
            ..options()
        };
        let searched = Cell::new(0);
        check_random_runs(0x5851_f42d_4c95_7f2d, 300, |run| {
            let program = prepare(run.traces());
            let (survivors, _) = filter(&program);
            let heard = AtomicU64::new(0);
            let tick = || {
                heard.fetch_add(1, Ordering::Relaxed);
            };
            let mut stats = SolveStats::default();
            for s in &survivors {
                stats.add(&races_with(&program, s, &options, &tick).stats);
            }
            stats.add(&deadlocks_with(&program, &options, &tick).stats);
            prop_assert_eq!(
                heard.load(Ordering::Relaxed),
                stats.exhaustive_windows,
                "{:#?}",
                run.traces()
            );
            searched.set(searched.get() + stats.exhaustive_windows);
            Ok(())
        });
        let searched = searched.get();
        assert!(
            searched > 100,
            "only {searched} windows searched: weak cases"
        );
    }

    #[test]
    fn lock_cycle_deadlocks_and_deadlock_freedom_agree_with_exhaustive_search() {
        let (found, safe) = (Cell::new(0), Cell::new(0));
        check_random_runs(0x2545_f491_4f6c_dd1d, 1000, |run| {
            let program = prepare(run.traces());
            let (model, _) = program.model.restrict(None);
            let cycles = lockgraph::deadlocks(&model, usize::MAX);
            let reference = exhaustive::search(
                &model,
                &window::whole(&model),
                Goal::Deadlock,
                usize::MAX,
                usize::MAX,
                &mut HashSet::new(),
            );
            prop_assert!(reference.complete);
            let keys: HashSet<Vec<ilgen_trace::SiteId>> = reference
                .findings
                .iter()
                .map(|f| blocked_sites(&model, f))
                .collect();
            if lockgraph::cannot_deadlock(&model) {
                safe.set(safe.get() + 1);
                prop_assert!(
                    reference.findings.is_empty(),
                    "called deadlock-free\n{:#?}",
                    run.traces()
                );
            }
            for f in &cycles.findings {
                found.set(found.get() + 1);
                if let Finding::Deadlock { schedule, .. } = f {
                    assert_prefixes(&model, schedule);
                }
                prop_assert!(
                    keys.contains(&blocked_sites(&model, f)),
                    "{:?} is no deadlock the exhaustive search reaches\n{:#?}",
                    f,
                    run.traces()
                );
            }
            Ok(())
        });
        let (found, safe) = (found.get(), safe.get());
        assert!(found > 20, "only {found} lock-cycle deadlocks: weak cases");
        assert!(
            safe > 100,
            "only {safe} runs shown deadlock-free: weak cases"
        );
    }
}
