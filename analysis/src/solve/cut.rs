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

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::sync::PoisonError;

use rustc_hash::FxHashMap;

use super::exclusion::{self, Sections};
use super::prefix::{merge, need, within, Start};

use crate::finding::Schedule;
use crate::model::{At, Closures, Model, ModelEvent, ModelOp, SharedClosures, Wake};
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
    /// [`Model::same_needs`]: where to find the closures this model can share.
    shared: Option<(&'m Model, &'m SharedClosures, Vec<usize>)>,
    /// Pairs the replay of their cut left undecided or mutual exclusion ruled out, by [`Start`]s,
    /// with that verdict: another pair with the same
    /// starts has the same cut and the same limits, so the same verdict.
    settled: FxHashMap<(Start, Start), Verdict>,
    sections: Sections,
}

impl<'m> Cuts<'m> {
    pub fn new(model: &'m Model) -> Cuts<'m> {
        Cuts {
            model,
            closures: Closures::default(),
            shared: model.same_needs(),
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
        let mut limit: Vec<usize> = self.model.threads.iter().map(|t| t.events.len()).collect();
        limit[a.thread] = a.limit;
        limit[b.thread] = b.limit;
        let required = match self.union(false, a, b) {
            Some(cut) if within(&cut, &limit) => cut,
            _ => return Verdict::Excluded,
        };
        // Then what made each failed try operation in the cut fail in the run: not required of
        // every schedule, so a cut that cannot hold it is no proof of anything.
        let verdict = match self.union(true, a, b) {
            Some(cut) if within(&cut, &limit) => repair(self.model, cut, &limit),
            _ => Verdict::Unknown,
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
                self.closure(false, at.thread, at.index + 1)
                    .map(<[usize]>::to_vec)
            },
        );
        self.sections = sections;
        if !matches!(verdict, Verdict::Witness(_)) {
            self.settled.insert((a, b), verdict.clone());
        }
        verdict
    }

    /// The closure of the cut where `a`'s and `b`'s threads have run to their starts.
    fn union(&mut self, busy: bool, a: Start, b: Start) -> Option<Vec<usize>> {
        let mut cut = self.closure(busy, a.thread, a.cut)?.to_vec();
        merge(&mut cut, self.closure(busy, b.thread, b.cut)?);
        Some(cut)
    }

    /// The closure of the cut where only `thread` has run, its first `len` events: the sync-only
    /// model's shared one with this model's accesses put back where it holds no event whose needs
    /// this model changes, else this model's own.
    fn closure(&mut self, busy: bool, thread: usize, len: usize) -> Option<&[usize]> {
        let model = self.model;
        let Cuts {
            closures, shared, ..
        } = self;
        if let Some((syncs, kept, changed)) = shared {
            if let Entry::Vacant(known) = closures.of(model, busy, thread).entry(len) {
                let at = model.syncs_in(thread, len);
                let mut kept = kept.0.lock().unwrap_or_else(PoisonError::into_inner);
                // An unreachable cut there may not be one here: that takes this model's own.
                if let Some(cut) = kept
                    .get(syncs, busy, thread, at)
                    .filter(|cut| cut.iter().zip(changed.iter()).all(|(c, f)| c <= f))
                {
                    let cut = cut
                        .iter()
                        .enumerate()
                        .map(|(t, &c)| model.with_accesses(t, c))
                        .collect();
                    known.insert(Some(cut));
                }
            }
        }
        closures.get(model, busy, thread, len)
    }
}

impl Closures {
    /// The closures of `thread`'s cuts in `model`, with or without `busy`.
    fn of(
        &mut self,
        model: &Model,
        busy: bool,
        thread: usize,
    ) -> &mut BTreeMap<usize, Option<Vec<usize>>> {
        // Without failed try operations to explain, both closures are the same.
        let known = if busy && model.any_busy() {
            &mut self.busy
        } else {
            &mut self.plain
        };
        if known.len() <= thread {
            known.resize_with(model.threads.len(), BTreeMap::new);
        }
        &mut known[thread]
    }

    /// The closure of the cut of `model` where only `thread` has run `len` events, grown from the
    /// closure at the nearest position before it that is known.
    fn get(&mut self, model: &Model, busy: bool, thread: usize, len: usize) -> Option<&[usize]> {
        let known = self.of(model, busy, thread);
        if !known.contains_key(&len) {
            let below = known
                .range(..len)
                .next_back()
                .map(|(_, closed)| closed.clone());
            let closed = match below {
                // Unreachable events stay in every larger cut.
                Some(None) => None,
                below => {
                    let mut cut = below
                        .flatten()
                        .unwrap_or_else(|| vec![0; model.threads.len()]);
                    // A closed cut has every event in it scanned.
                    let mut scanned = cut.clone();
                    cut[thread] = cut[thread].max(len);
                    (close(model, &mut cut, &mut scanned, busy) == Closed::Ok).then_some(cut)
                }
            };
            known.insert(len, closed);
        }
        known[&len].as_deref()
    }
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
            Ok(steps) => return Verdict::Witness(Schedule { prefix: 0, steps }),
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
    let mut progress = true;
    while progress {
        progress = false;
        for t in 0..cut.len() {
            if scanned[t] >= cut[t] {
                continue;
            }
            progress = true;
            // What the cut grows to in this thread is scanned in the next round. The order in
            // which the events' needs come does not matter: a cut that cannot close is dropped.
            let span = scanned[t]..cut[t];
            scanned[t] = cut[t];
            // The edges of the span, found once rather than per event.
            for before in model.rf_needs_in(t, span.clone()) {
                need(cut, before);
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
                            need(cut, enter);
                        }
                        continue;
                    }
                    ModelOp::TryFail { .. } if busy => {
                        for holder in model.busy_at(at).into_iter().flatten() {
                            need(cut, holder);
                        }
                        continue;
                    }
                    _ => continue,
                };
                match source {
                    Some(source) => need(cut, source),
                    None => return Closed::Unreachable,
                }
            }
        }
    }
    Closed::Ok
}

/// Runs the cut's sync events in the observed order; gives them, or where that order got stuck:
/// the thread holding the lock it waited for and the index of that thread's release of it
/// (`None`: stuck on something else).
fn replay(model: &Model, cut: &[usize]) -> Result<Vec<At>, Option<(usize, usize)>> {
    let order = model.cut_order(cut);
    let mut events = Vec::with_capacity(order.len());
    let mut state = State::initial(model);
    for at in order {
        events.push(at);
        let Some(op) = model.op(at) else {
            continue;
        };
        if !state.enabled(model, at.thread, op) {
            let holder = state.holder(op).ok_or(None)?;
            return Err(release(model, &state, holder, op).map(|r| (holder, r)));
        }
        state.apply(model, at.thread, op);
        state.pos[at.thread] = at.index + 1;
    }
    Ok(events)
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
    use std::collections::HashSet;

    use super::*;
    use crate::prepare::prepare_deciding;
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
