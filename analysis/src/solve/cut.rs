//! The cut-based fast path: decide one race-pair candidate from the smallest cut around it.
//!
//! Takes a [`Model`] and two conflicting accesses of different threads ([`Cuts::race`], which
//! keeps the work one pair's cut shares with the model's other pairs); gives a [`Verdict`]:
//! a witness schedule (checked step by step against the sync semantics, so it is always right),
//! `Excluded` when no reachable state holds both accesses (exact: a thread would have to pass
//! one of them to satisfy an ordering every schedule obeys), or `Unknown` (the caller then runs
//! the exhaustive search).
//!
//! The cut is the closure of everything before the two accesses under program order,
//! fork → start, end → join, signal → wait, barrier enters → exits and the reads-from edges of
//! deciding reads ([`crate::reads_from`]). Its sync events are tried
//! in the observed order. When a lock is then held by a thread stopped inside its critical section,
//! that critical section is completed (its release joins the cut) and the order tried again:
//! the sync-preserving idea (keep the observed order of critical sections on each lock), which
//! decides races like the paper's Listing 1 without any search.
//!
//! A failed try operation in the cut needs its object busy: the cut also takes what kept it busy
//! in the run (the holder's acquisition; for a semaphore, the waits before it), so the observed
//! order has the holder's lock before the failure, and the holder's release, if the cut needs it,
//! after. Other schedules could keep the object busy with another holder, so this part of the
//! closure never excludes a pair: a cut that cannot take it gives `Unknown`.

use std::collections::{BTreeMap, VecDeque};
use std::sync::PoisonError;

use rustc_hash::FxHashMap;

use super::checkpoint::{self, Told};
use super::exclusion::{self, Sections};
use super::prefix::{need, within, Start};

use crate::finding::Schedule;
use crate::model::{
    At, Closures, CutOrder, Model, ModelEvent, ModelOp, PackedCut, SharedClosures, Wake,
};
use crate::state::State;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Witness(Schedule),
    Excluded,
    Unknown,
}

/// Why a closure failed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Closed {
    Ok,
    /// An event in the cut can never run.
    Unreachable,
}

/// The race pairs of one model, decided by cuts. The closures of single-thread cuts are kept:
/// every requirement is of one event on another, so a union of closed cuts is closed, and the
/// closure of a pair's cut is the union (per thread, the larger prefix) of the closures of its two
/// threads' cuts. A variable has thousands of pairs over a few thousand accesses: closing each
/// pair's cut from empty made the fast path cost pairs x prefix, while a thread's closures, asked
/// for in growing positions, cost one pass over the model together.
pub struct Cuts<'m> {
    model: &'m Model,
    closures: Closures,
    shared: Option<Sharing<'m>>,
    /// Pairs the replay of their cut left undecided or mutual exclusion ruled out, by [`Start`]s,
    /// with that verdict: another pair with the same
    /// starts has the same cut and the same limits, so the same verdict.
    settled: FxHashMap<(Start, Start), Verdict>,
    sections: Sections,
}

/// [`Model::same_needs`]: where to find the closures a model can share, with only the threads
/// whose needs it changes (thread, first such event).
type Sharing<'m> = (&'m Model, &'m SharedClosures, Vec<(usize, usize)>);

impl<'m> Cuts<'m> {
    pub fn new(model: &'m Model) -> Cuts<'m> {
        Cuts {
            model,
            closures: Closures::default(),
            shared: model.same_needs().map(|(syncs, kept, changed)| {
                let changed = changed
                    .into_iter()
                    .enumerate()
                    .filter(|&(_, f)| f != usize::MAX)
                    .collect();
                (syncs, kept, changed)
            }),
            settled: FxHashMap::default(),
            sections: Sections::default(),
        }
    }

    pub fn model(&self) -> &'m Model {
        self.model
    }

    /// Race-pair candidate `x`, `y` (accesses of different threads).
    pub fn race(&mut self, x: At, y: At) -> Verdict {
        if x.thread == y.thread {
            return Verdict::Excluded;
        }
        let (mut a, mut b) = (Start::of(self.model, x), Start::of(self.model, y));
        if a.thread > b.thread {
            std::mem::swap(&mut a, &mut b);
        }
        if let Some(verdict) = self.settled.get(&(a, b)) {
            return verdict.clone();
        }
        let Some(required) = self.union(false, a, b) else {
            return Verdict::Excluded;
        };
        let mut limit: Vec<usize> = self.model.threads.iter().map(|t| t.events.len()).collect();
        limit[a.thread] = a.limit;
        limit[b.thread] = b.limit;
        // Then what made each failed try operation in the cut fail in the run: not required of
        // every schedule, so a cut that cannot hold it is no proof of anything.
        let verdict = match self.union(true, a, b) {
            Some(cut) => repair(self.model, cut, &limit),
            None => Verdict::Unknown,
        };
        let mut sections = std::mem::take(&mut self.sections);
        let verdict = locked_out(
            self.model,
            verdict,
            required,
            [a, b],
            &limit,
            &mut sections,
            &mut |at| {
                let model = self.model;
                self.closure(false, at.thread, at.index + 1)
                    .map(|cut| cut.unpack(model))
            },
        );
        self.sections = sections;
        if !matches!(verdict, Verdict::Witness(_)) {
            self.settled.insert((a, b), verdict.clone());
        }
        verdict
    }

    /// The closure of the cut where `a`'s and `b`'s threads have run to their starts, if it
    /// runs neither past its limit. No closed cut runs a thread past its length, so only their two
    /// threads can pass a limit: most pairs are ruled out there, without a count per thread.
    fn union(&mut self, busy: bool, a: Start, b: Start) -> Option<Vec<usize>> {
        let model = self.model;
        let within = |cut: &PackedCut| [a, b].iter().all(|s| cut.get(model, s.thread) <= s.limit);
        if !within(self.closure(busy, a.thread, a.cut)?)
            || !within(self.closure(busy, b.thread, b.cut)?)
        {
            return None;
        }
        let mut cut = self.closure(busy, a.thread, a.cut)?.unpack(model);
        self.closure(busy, b.thread, b.cut)?
            .merge_into(model, &mut cut);
        Some(cut)
    }

    /// The closure of the cut where only `thread` has run, its first `len` events: the sync-only
    /// model's shared one with this model's accesses put back where it holds no event whose needs
    /// this model changes, else this model's own.
    fn closure(&mut self, busy: bool, thread: usize, len: usize) -> Option<&PackedCut> {
        let model = self.model;
        let Cuts {
            closures, shared, ..
        } = self;
        let kept = |thread: usize, len: usize| {
            let (syncs, kept, changed) = shared.as_ref()?;
            let mut kept = kept.0.lock().unwrap_or_else(PoisonError::into_inner);
            let at = model.syncs_in(thread, len);
            // An unreachable cut there may not be one here: that takes this model's own.
            kept.get(syncs, busy, thread, at, &|_, _| None)
                .filter(|cut| changed.iter().all(|&(t, f)| cut.get(syncs, t) <= f))
                .map(|cut| cut.with_accesses(syncs, model))
        };
        closures.get(model, busy, thread, len, &kept)
    }
}

impl Closures {
    /// The closures of `model`'s cuts, with or without `busy`.
    fn of(
        &mut self,
        model: &Model,
        busy: bool,
    ) -> &mut BTreeMap<(usize, usize), Option<PackedCut>> {
        // Without failed try operations to explain, both closures are the same.
        if busy && model.any_busy() {
            &mut self.busy
        } else {
            &mut self.plain
        }
    }

    /// The closure of the cut of `model` where only `thread` has run `len` events: `kept`'s
    /// where it has one (a closure kept elsewhere that holds here), else grown from the closure
    /// at the nearest position before it that is known, or else from the closure of the fork
    /// that starts the thread, itself found so. That closure is in this one: closing anew from
    /// the empty cut made each thread of a run that starts threads per job look at all the jobs
    /// before it.
    fn get(
        &mut self,
        model: &Model,
        busy: bool,
        thread: usize,
        len: usize,
        kept: &dyn Fn(usize, usize) -> Option<PackedCut>,
    ) -> Option<&PackedCut> {
        if !self.of(model, busy).contains_key(&(thread, len)) {
            let closed = match kept(thread, len) {
                Some(cut) => Some(cut),
                None => {
                    let nearest = self
                        .of(model, busy)
                        .range((thread, 0)..(thread, len))
                        .next_back();
                    let below = match nearest {
                        Some((_, closed)) => Some(closed.as_ref().map(|cut| cut.unpack(model))),
                        None => started(model, thread, len).map(|fork| {
                            self.get(model, busy, fork.thread, fork.index + 1, kept)
                                .map(|cut| cut.unpack(model))
                        }),
                    };
                    grown(model, busy, thread, len, below)
                }
            };
            self.of(model, busy).insert((thread, len), closed);
        }
        self.of(model, busy)[&(thread, len)].as_ref()
    }
}

/// The fork that starts `thread`, if a cut of its first `len` events holds its start and a fork
/// of another thread starts it.
fn started(model: &Model, thread: usize, len: usize) -> Option<At> {
    if len == 0 || model.op(At { thread, index: 0 }) != Some(ModelOp::Start { forked: true }) {
        return None;
    }
    // A thread forked by itself closes from empty (and finds the cycle unreachable).
    model.fork_of(thread).filter(|fork| fork.thread != thread)
}

/// The closure of the cut of `model` where only `thread` has run `len` events, grown from
/// `below`, a closed cut in it (`Some(None)`: unreachable, and so is every larger cut; `None`:
/// from empty).
fn grown(
    model: &Model,
    busy: bool,
    thread: usize,
    len: usize,
    below: Option<Option<Vec<usize>>>,
) -> Option<PackedCut> {
    let mut cut = match below {
        Some(None) => return None,
        below => below
            .flatten()
            .unwrap_or_else(|| vec![0; model.threads.len()]),
    };
    // A closed cut has every event in it scanned.
    let mut scanned = cut.clone();
    cut[thread] = cut[thread].max(len);
    (close(model, &mut cut, &mut scanned, busy) == Closed::Ok).then(|| PackedCut::pack(model, &cut))
}

/// [`Cuts::race`] with nothing kept: the pair's cut closed from empty, the reference the kept
/// closures are tested against.
#[cfg(test)]
pub(crate) fn race_alone(model: &Model, x: At, y: At) -> Verdict {
    let Some((starts, limit, required)) = alone(model, x, y) else {
        return Verdict::Excluded;
    };
    let mut cut = vec![0; model.threads.len()];
    for start in starts {
        cut[start.thread] = start.cut;
    }
    locked_out(
        model,
        schedule(model, cut, &limit),
        required,
        starts,
        &limit,
        &mut Sections::default(),
        &mut |at| closure_alone(model, at),
    )
}

/// Whether [`exclusion::excluded`] alone rules out the pair `x`, `y` whose required cut does
/// not (false where it does).
#[cfg(test)]
pub(crate) fn excluded_alone(model: &Model, x: At, y: At) -> bool {
    let Some((starts, limit, required)) = alone(model, x, y) else {
        return false;
    };
    exclusion::excluded(
        model,
        required,
        starts,
        &limit,
        &mut Sections::default(),
        &mut |at| closure_alone(model, at),
    )
}

/// The starts of the pair `x`, `y` (accesses of different threads), the threads' limits and its
/// required closed cut; `None` if that cut rules the pair out.
#[cfg(test)]
fn alone(model: &Model, x: At, y: At) -> Option<([Start; 2], Vec<usize>, Vec<usize>)> {
    if x.thread == y.thread {
        return None;
    }
    let n = model.threads.len();
    let mut cut = vec![0; n];
    let mut limit: Vec<usize> = model.threads.iter().map(|t| t.events.len()).collect();
    let starts = [x, y].map(|at| Start::of(model, at));
    for start in starts {
        cut[start.thread] = start.cut;
        limit[start.thread] = start.limit;
    }
    let closed = close(model, &mut cut, &mut vec![0; n], false) == Closed::Ok;
    (closed && within(&cut, &limit)).then_some((starts, limit, cut))
}

/// The closed cut of event `at` alone, from empty; `None` if it can never run.
#[cfg(test)]
fn closure_alone(model: &Model, at: At) -> Option<Vec<usize>> {
    let n = model.threads.len();
    let mut cut = vec![0; n];
    need(&mut cut, at);
    (close(model, &mut cut, &mut vec![0; n], false) == Closed::Ok).then_some(cut)
}

/// `verdict`, or `Excluded` where it is `Unknown` and the pair's threads, stopped at `starts`,
/// hold a mutex that rules the pair out ([`exclusion::excluded`], which takes `sections` and
/// `closure`); `required` is the pair's closed cut without the failed try operations'
/// requirements.
fn locked_out(
    model: &Model,
    verdict: Verdict,
    required: Vec<usize>,
    starts: [Start; 2],
    limit: &[usize],
    sections: &mut Sections,
    closure: &mut dyn FnMut(At) -> Option<Vec<usize>>,
) -> Verdict {
    if verdict == Verdict::Unknown
        && exclusion::excluded(model, required, starts, limit, sections, closure)
    {
        return Verdict::Excluded;
    }
    verdict
}

/// Whether the threads can be brought to `cut` (each has run that many events) without running
/// any thread past its `limit`, and in which order.
pub fn schedule(model: &Model, mut cut: Vec<usize>, limit: &[usize]) -> Verdict {
    let n = model.threads.len();
    if close(model, &mut cut, &mut vec![0; n], false) == Closed::Unreachable || !within(&cut, limit)
    {
        return Verdict::Excluded;
    }
    // Then what made each failed try operation in the cut fail in the run: not required of every
    // schedule, so a cut that cannot hold it is no proof of anything.
    if close(model, &mut cut, &mut vec![0; n], true) == Closed::Unreachable || !within(&cut, limit)
    {
        return Verdict::Unknown;
    }
    repair(model, cut, limit)
}

/// Runs `cut` (closed, with the requirements of failed try operations) in the observed order,
/// completing the critical section of each thread that holds a lock another one is stuck on,
/// until it runs through.
fn repair(model: &Model, mut cut: Vec<usize>, limit: &[usize]) -> Verdict {
    let mut scanned = cut.clone();
    // Each repair completes one critical section; more repairs than events cannot be needed.
    let total: usize = model.threads.iter().map(|t| t.events.len()).sum();
    for _ in 0..=total {
        match replay(model, &cut) {
            Ok(()) => {
                return Verdict::Witness(Schedule {
                    prefix: 0,
                    head: cut,
                    steps: Vec::new(),
                })
            }
            Err(None) => return Verdict::Unknown,
            Err(Some((holder, release))) => {
                cut[holder] = cut[holder].max(release + 1);
                if close(model, &mut cut, &mut scanned, true) == Closed::Unreachable
                    || !within(&cut, limit)
                {
                    return Verdict::Unknown;
                }
            }
        }
    }
    Verdict::Unknown
}

/// Grows `cut` until every event in it has its required predecessors in it (`scanned`: how much of
/// each thread was already looked at); with `busy`, also the events that kept the object of each
/// failed try operation busy in the run ([`crate::model::Sources::busy_of`]).
fn close(model: &Model, cut: &mut [usize], scanned: &mut [usize], busy: bool) -> Closed {
    let mut pending = Pending::of(cut, scanned);
    while let Some(t) = pending.next() {
        if scanned[t] >= cut[t] {
            continue;
        }
        // The order in which the events' needs come does not matter: a cut that cannot close
        // is dropped.
        let span = scanned[t]..cut[t];
        scanned[t] = cut[t];
        // The edges of the span, found once rather than per event.
        for before in model.rf_needs_in(t, span.clone()) {
            pending.need(cut, before);
        }
        for (index, e) in span.clone().zip(model.threads[t].events.range(span)) {
            let at = At { thread: t, index };
            let Some(op) = e.op() else {
                continue;
            };
            let source = match op {
                ModelOp::Start { forked: true } => model.fork_of(t),
                ModelOp::Join { child } => model.end_of(child),
                ModelOp::WaitReturn {
                    wake: Wake::Signal(cond),
                    ..
                }
                | ModelOp::LoopExit { cond, .. } => model.signal_of(cond),
                ModelOp::WaitReturn {
                    wake: Wake::Never, ..
                } => None,
                ModelOp::BarrierExit { barrier } => {
                    if !model.objects.barriers[barrier].released {
                        return Closed::Unreachable;
                    }
                    for enter in model.enters_of(barrier) {
                        pending.need(cut, enter);
                    }
                    continue;
                }
                ModelOp::TryFail { .. } if busy => {
                    for holder in model.busy_at(at).into_iter().flatten() {
                        pending.need(cut, holder);
                    }
                    continue;
                }
                _ => continue,
            };
            match source {
                Some(source) => pending.need(cut, source),
                None => return Closed::Unreachable,
            }
        }
    }
    Closed::Ok
}

/// The threads [`close`] has events of the cut to scan in, first come first scanned: a pass over
/// every thread per round cost a run of thousands of short threads more than the events it
/// scanned. A thread waits in the queue while the events needed of it pile up, so that it is
/// scanned in one span, as a round did.
struct Pending {
    queued: Vec<bool>,
    queue: VecDeque<usize>,
}

impl Pending {
    fn of(cut: &[usize], scanned: &[usize]) -> Pending {
        let queue: VecDeque<usize> = (0..cut.len()).filter(|&t| scanned[t] < cut[t]).collect();
        let mut queued = vec![false; cut.len()];
        for &t in &queue {
            queued[t] = true;
        }
        Pending { queued, queue }
    }

    fn next(&mut self) -> Option<usize> {
        let t = self.queue.pop_front()?;
        self.queued[t] = false;
        Some(t)
    }

    /// Puts `at` into `cut`, and its thread in the queue.
    fn need(&mut self, cut: &mut [usize], at: At) {
        need(cut, at);
        if !std::mem::replace(&mut self.queued[at.thread], true) {
            self.queue.push_back(at.thread);
        }
    }
}

/// Runs the cut's sync events in the observed order; gives whether they run through, or where
/// that order got stuck: the thread holding the lock it waited for and the index of that thread's
/// release of it (`None`: stuck on something else). What runs through is the witness, named by
/// the cut: its events are not listed. Only the events the checkpoints cannot tell of are run
/// ([`checkpoint::tell`]).
fn replay(model: &Model, cut: &[usize]) -> Result<(), Option<(usize, usize)>> {
    let order = model.cut_order(cut);
    let Some((checks, told)) = checkpoint::tell(model, &order, cut) else {
        return run_checked(model, order, usize::MAX);
    };
    run_checked(model, order, checks)?;
    match told {
        Told::Through => Ok(()),
        // The mutex's holder keeps a wait's return to it from running as it keeps a lock.
        Told::Stuck {
            holder,
            mutex,
            state,
        } => Err(stuck(model, &state, holder, ModelOp::Lock { mutex })),
    }
}

/// [`replay`] of the first `checks` events of `order` (a cut's, none given yet), each after the
/// last checkpoint in its prefix run and checked.
fn run_checked(
    model: &Model,
    mut order: CutOrder,
    checks: usize,
) -> Result<(), Option<(usize, usize)>> {
    let len = order.len();
    let mut state = checkpoint::resume(model, &mut order, true);
    let passed = len - order.len();
    for at in order.take(checks.saturating_sub(passed)) {
        let Some(op) = model.op(at) else {
            continue;
        };
        if !state.enabled(model, at.thread, op) {
            let holder = state.holder(op).ok_or(None)?;
            return Err(stuck(model, &state, holder, op));
        }
        state.apply(model, at.thread, op);
        state.pos[at.thread] = at.index + 1;
    }
    Ok(())
}

/// The replay's answer where `holder`'s hold keeps `blocked` from running: `holder` and its
/// [`release`], if it has one.
fn stuck(model: &Model, state: &State, holder: usize, blocked: ModelOp) -> Option<(usize, usize)> {
    release(model, state, holder, blocked).map(|r| (holder, r))
}

/// The index of `holder`'s event after which it no longer keeps `blocked` from running.
fn release(model: &Model, state: &State, holder: usize, blocked: ModelOp) -> Option<usize> {
    let mut s = state.clone();
    let events = &model.threads[holder].events;
    (s.pos[holder]..events.len()).find(|&i| match events[i] {
        ModelEvent::Sync { op, .. } => {
            s.apply(model, holder, op.get());
            s.holder(blocked) != Some(holder)
        }
        ModelEvent::Access { .. } => false,
    })
}

/// The rule of [`exclusion`], through the cut path.
#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::collections::HashSet;

    use super::*;
    use crate::prepare::prepare_deciding;
    use crate::solve::checkpoint::Checkpoints;
    use crate::state::{Next, State};
    use crate::testkit::{accesses, check_random_runs, Run};

    const LEFT: u64 = 0x100;
    const V: u64 = 0x200;
    const L: u64 = 0x900;

    /// A latch: the worker (thread 1) writes the count and `v` under `L`; the waiter (thread 2)
    /// reads the count under `L`, then writes `v`. The run had the worker first.
    fn latch() -> Run {
        let mut r = Run::new(3);
        r.fork(0, 1)
            .fork(0, 2)
            .start(1)
            .start(2)
            .lock(1, L)
            .w(1, LEFT, 2)
            .w(1, V, 4)
            .unlock(1, L)
            .lock(2, L)
            .r(2, LEFT, 5)
            .unlock(2, L)
            .w(2, V, 6);
        r
    }

    /// The model of `v` of `run`, with every read deciding or none.
    fn model_of(run: &Run, deciding: bool) -> Model {
        let program = if deciding {
            prepare_deciding(run)
        } else {
            crate::prepare::prepare(run.traces())
        };
        let var = program
            .vars
            .iter()
            .position(|v| v.addr == V)
            .expect("v is shared");
        program.model.restrict(Some(var)).0
    }

    /// The accesses to `v` of threads 1 and 2.
    fn writes_of_v(model: &Model) -> (At, At) {
        let of = |thread: usize| At {
            thread,
            index: (0..model.threads[thread].events.len())
                .rev()
                .find(|&i| !model.threads[thread].events[i].is_sync())
                .expect("an access"),
        };
        (of(1), of(2))
    }

    #[test]
    fn a_section_the_waiter_read_from_orders_the_pair() {
        let model = model_of(&latch(), true);
        let (x, y) = writes_of_v(&model);
        assert_eq!(race_alone(&model, x, y), Verdict::Excluded);
        assert!(!reachable_pairs(&model).contains(&(x, y)));
    }

    /// Without the count read deciding, the waiter may go first: the pair is reachable, and not
    /// ruled out (the observed order's repair cannot show it either: it runs the worker first).
    #[test]
    fn without_the_read_the_section_orders_nothing() {
        let model = model_of(&latch(), false);
        let (x, y) = writes_of_v(&model);
        assert!(reachable_pairs(&model).contains(&(x, y)));
        assert_eq!(race_alone(&model, x, y), Verdict::Unknown);
    }

    /// Of random runs with every read deciding, each variable's model: every pair of accesses of
    /// two threads that [`excluded`] rules out is in no reachable state.
    #[test]
    fn pairs_ruled_out_are_unreachable_on_random_runs() {
        let ruled_out = std::cell::Cell::new(0);
        check_random_runs(0x2545_f491_4f6c_dd1d, 300, |run| {
            let program = prepare_deciding(run);
            for var in 0..program.vars.len() {
                let (model, _) = program.model.restrict(Some(var));
                let reachable = reachable_pairs(&model);
                let accesses = accesses(&model);
                for &x in &accesses {
                    for &y in accesses.iter().filter(|y| y.thread != x.thread) {
                        if excluded_alone(&model, x, y) {
                            ruled_out.set(ruled_out.get() + 1);
                            proptest::prop_assert!(
                                !reachable.contains(&(x, y)),
                                "var {}: pair {:?} is reachable",
                                var,
                                (x, y)
                            );
                        }
                    }
                }
            }
            Ok(())
        });
        eprintln!("{} pairs ruled out", ruled_out.get());
        assert!(ruled_out.get() > 100, "only {ruled_out:?} pairs ruled out");
    }

    /// Of random runs with every read deciding, each variable's model: the closure kept for each
    /// thread and length that ends at a sync event, with and without the failed tries' needs,
    /// asked for from the last length down (each grown from the fork's closure or from empty, or
    /// the sync-only model's with the accesses put back) and then up (each grown from the one
    /// below), is the cut closed alone from empty; the packed form of that cut gives each
    /// thread's count; and the sync-only model's closed cut, packed and put into the variable's
    /// model, is that cut with each thread's accesses put back.
    #[test]
    fn kept_closures_are_the_cuts_closed_alone_on_random_runs() {
        let forked = std::cell::Cell::new(0);
        check_random_runs(0x9b05_688c_2b3e_6c1f, 300, |run| {
            let program = prepare_deciding(run);
            for var in 0..program.vars.len() {
                let (model, _) = program.model.restrict(Some(var));
                let n = model.threads.len();
                let mut cuts = Cuts::new(&model);
                for thread in 0..n {
                    // The solver asks for cuts that end at a sync event (a race pair's thread
                    // stops right after one): where the sync-only model's closure holds.
                    let events = &model.threads[thread].events;
                    let lens: Vec<usize> = (0..=events.len())
                        .filter(|&len| len == 0 || events[len - 1].is_sync())
                        .collect();
                    for &len in lens.iter().rev().chain(&lens) {
                        forked.set(forked.get() + started(&model, thread, len).is_some() as u32);
                        for busy in [false, true] {
                            let kept = cuts.closure(busy, thread, len).map(|c| c.unpack(&model));
                            let mut cut = vec![0; n];
                            cut[thread] = len;
                            let closed = close(&model, &mut cut, &mut vec![0; n], busy);
                            let alone = (closed == Closed::Ok).then_some(cut);
                            proptest::prop_assert_eq!(
                                &kept,
                                &alone,
                                "var {}: thread {} len {} busy {}",
                                var,
                                thread,
                                len,
                                busy
                            );
                            if let Some(cut) = alone {
                                let packed = PackedCut::pack(&model, &cut);
                                let counts: Vec<usize> =
                                    (0..n).map(|t| packed.get(&model, t)).collect();
                                proptest::prop_assert_eq!(counts, cut);
                            }
                            // The sync-only model's closed cut of the same sync events, with
                            // the accesses put back thread by thread.
                            let (syncs, _, _) =
                                model.same_needs().expect("a model of one variable");
                            let mut cut = vec![0; n];
                            cut[thread] = model.syncs_in(thread, len);
                            if close(syncs, &mut cut, &mut vec![0; n], busy) == Closed::Ok {
                                let here: Vec<usize> =
                                    (0..n).map(|t| model.with_accesses(t, cut[t])).collect();
                                let packed = PackedCut::pack(syncs, &cut);
                                proptest::prop_assert_eq!(
                                    packed.with_accesses(syncs, &model).unpack(&model),
                                    here
                                );
                            }
                        }
                    }
                }
            }
            Ok(())
        });
        assert!(
            forked.get() > 1000,
            "only {forked:?} closures of forked threads"
        );
    }

    /// Of random runs with every read deciding, the sync-only model and every variable's: every
    /// cut of [`cuts_of`](crate::testkit::cuts_of), closed as the repair closes it, replayed with
    /// what the checkpoints (every 1 to 4 events) tell of it gives what running its whole order
    /// checked gives: it runs through, or it sticks at a lock of the same holder, released at the
    /// same event.
    #[test]
    fn a_cut_replayed_with_what_the_checkpoints_tell_is_its_checked_run_on_random_runs() {
        let (through, stuck_, untold) = (Cell::new(0u32), Cell::new(0u32), Cell::new(0u32));
        let skipped = Cell::new(0usize);
        check_random_runs(0x3c6e_f372_fe94_f82b, 300, |run| {
            let program = prepare_deciding(run);
            let models = std::iter::once(program.model.restrict(None).0)
                .chain((0..program.vars.len()).map(|v| program.model.restrict(Some(v)).0));
            let base = program.model.restrict(None).0;
            let checkpoints: Vec<Checkpoints> =
                (1..=4).map(|k| Checkpoints::every(&base, k)).collect();
            for model in models {
                let n = model.threads.len();
                for (mut cut, c) in crate::testkit::cuts_of(&model)
                    .into_iter()
                    .flat_map(|cut| checkpoints.iter().map(move |c| (cut.clone(), c)))
                {
                    if close(&model, &mut cut, &mut vec![0; n], true) == Closed::Unreachable {
                        continue;
                    }
                    let order = model.cut_order(&cut);
                    let len = order.len();
                    let whole = run_checked(&model, model.cut_order(&cut), usize::MAX);
                    let Some((checks, told)) = checkpoint::tell_from(c, &model, &order, &cut)
                    else {
                        untold.set(untold.get() + 1);
                        continue;
                    };
                    skipped.set(skipped.get() + len.saturating_sub(checks));
                    let replayed = run_checked(&model, order, checks).and_then(|()| match told {
                        Told::Through => {
                            through.set(through.get() + 1);
                            Ok(())
                        }
                        Told::Stuck {
                            holder,
                            mutex,
                            state,
                        } => {
                            stuck_.set(stuck_.get() + 1);
                            Err(stuck(&model, &state, holder, ModelOp::Lock { mutex }))
                        }
                    });
                    proptest::prop_assert_eq!(replayed, whole, "cut {:?}", cut);
                }
            }
            Ok(())
        });
        eprintln!(
            "told: {through:?} through, {stuck_:?} stuck, {skipped:?} events not run; \
             {untold:?} untold"
        );
        assert!(
            through.get() > untold.get() && stuck_.get() > 300,
            "told {through:?} through, {stuck_:?} stuck; {untold:?} untold"
        );
    }

    /// Every pair of accesses (both orders) that some state reachable in `model` has in the
    /// current segments of their two threads: the exhaustive search's race test, over all states.
    fn reachable_pairs(model: &Model) -> HashSet<(At, At)> {
        let n = model.threads.len();
        let mut seen: HashSet<State> = HashSet::new();
        let mut out = HashSet::new();
        let mut stack = vec![State::initial(model)];
        while let Some(state) = stack.pop() {
            if seen.contains(&state) {
                continue;
            }
            let segment = |t: usize| {
                let from = state.pos[t];
                let to = if state.waiting(t) {
                    from
                } else {
                    model
                        .next_stop(t, from)
                        .unwrap_or(model.threads[t].events.len())
                };
                (from..to)
                    .filter(move |&i| !model.threads[t].events[i].is_sync())
                    .map(move |index| At { thread: t, index })
            };
            for a in 0..n {
                for b in (0..n).filter(|&b| b != a) {
                    for x in segment(a) {
                        out.extend(segment(b).map(|y| (x, y)));
                    }
                }
            }
            for t in 0..n {
                let Next::At(stop) = state.next(model, t, usize::MAX) else {
                    continue;
                };
                let mut next = state.clone();
                let op = model.threads[t].events[stop].op().expect("a sync event");
                let moved = if state.may_advance(model, t, stop) {
                    next.advance(model, t, stop)
                } else {
                    matches!(op, ModelOp::LoopExit { mutex: Some(_), .. })
                        && next.release_to_wait(model, t, op)
                };
                if moved {
                    stack.push(next);
                }
            }
            seen.insert(state);
        }
        out
    }
}
