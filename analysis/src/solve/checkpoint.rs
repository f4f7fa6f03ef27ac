//! States kept along the run's observed order, so that running a cut's order need not start at
//! the run's start.
//!
//! Takes a model without overlay (the one whose [`Model::run_order`] the models of its variables
//! read) and gives [`Checkpoints`]: the [`State`] after every `every`-th event of that order, and
//! the first event of it the state before does not enable. A cut's order begins with the run's
//! order up to the first event the cut lacks ([`CutOrder::prefix`]), so [`resume`] takes the
//! state of the last checkpoint in that prefix and passes the events before it unrun. A
//! lock-heavy run (Apache APR's testlock: 10^6 sync operations, 10^5 variables with a witness
//! each) replayed each witness's cut from the run's start, 4·10^5 enabled-and-apply steps a
//! pair.
//!
//! The checkpoints also tell, for most cuts, what running a cut's order checked gives without
//! running it ([`tell`]): that it runs through, or the lock it sticks at and the thread that
//! holds it. Past its prefix, the threads far ahead of the one the cut stops first ran ~10^5
//! events a testlock witness, each checked though the run had done the same.

use crate::model::{At, CutOrder, Model, ModelOp};
use crate::state::State;

/// The fewest events between two checkpoints: each costs a state (a word per thread and object),
/// and below this a replay from one saves less than its copy costs.
const EVERY_AT_LEAST: usize = 4096;

/// [`Checkpoints`] are this many events apart per thread and object of the model: a state grows
/// with them, and the checkpoints of a run then take about a word per event of it, less than its
/// [`Model::run_order`].
const EVERY_PER_PART: usize = 16;

#[derive(Debug)]
pub(crate) struct Checkpoints {
    /// Events of the run's order between two checkpoints.
    every: usize,
    /// The state after the first `k * every` events of the run's order, for each k, each
    /// applied without a check (as [`State::run_observed`] does), positions at the base model's
    /// indices.
    states: Vec<State>,
    /// The position in the run's order of its first event the state before it does not enable
    /// (its length if none): a checked replay must reach it by its own steps, to stop there.
    blocked: usize,
    /// The positions in the run's order of its events whose operation [`vouched`] leaves out,
    /// ascending.
    loose: Vec<u32>,
    /// Per thread, per count of its sync events (from none to all): whether it holds no mutex
    /// and no rwlock after them in the run (up to `blocked`).
    free: Vec<Vec<bool>>,
    /// Per mutex, the positions in the run's order of its locks and of the waits' returns to it,
    /// ascending.
    locks: Vec<Vec<u32>>,
}

impl Checkpoints {
    /// The checkpoints of `base`'s run order, as far apart as its size calls for.
    pub(crate) fn of(base: &Model) -> Checkpoints {
        let o = &base.objects;
        let parts = base.threads.len() + o.rwlocks.len() + o.sems.len();
        Checkpoints::every(base, EVERY_AT_LEAST.max(EVERY_PER_PART * parts))
    }

    /// The checkpoints of `base`'s run order, `every` events apart.
    pub(super) fn every(base: &Model, every: usize) -> Checkpoints {
        let lens: Vec<usize> = base.threads.iter().map(|t| t.events.len()).collect();
        let mut state = State::initial(base);
        let mut states = Vec::new();
        let mut blocked = None;
        let mut loose = Vec::new();
        let mut free = vec![vec![true]; base.threads.len()];
        let mut locks = vec![Vec::new(); base.objects.mutexes.len()];
        let mut order = base.cut_order(&lens);
        let len = order.len();
        for position in 0..len {
            if position % every == 0 {
                states.push(state.clone());
            }
            let at = order.next().expect("the order's length");
            if let Some(op) = base.op(at) {
                if blocked.is_none() && !state.enabled(base, at.thread, op) {
                    blocked = Some(position);
                }
                state.apply(base, at.thread, op);
                let word = u32::try_from(position).expect("a model's positions fit in 32 bits");
                match op {
                    ModelOp::Lock { mutex } | ModelOp::WaitReturn { mutex, .. } => {
                        locks[mutex].push(word)
                    }
                    op if !vouched(op) => loose.push(word),
                    _ => {}
                }
            }
            state.pos[at.thread] = at.index + 1;
            let thread = at.thread;
            free[thread]
                .push(state.mutexes_of(thread).next().is_none() && !state.holds_rwlock(thread));
        }
        if len % every == 0 {
            states.push(state);
        }
        Checkpoints {
            every,
            states,
            blocked: blocked.unwrap_or(len),
            loose,
            free,
            locks,
        }
    }
}

/// The state of `model` after the events of `order` up to its last checkpoint in its prefix (in
/// `checked`, also before the run's first event that is not enabled), passed without being
/// given; `order` goes on after them.
pub(crate) fn resume(model: &Model, order: &mut CutOrder, checked: bool) -> State {
    resume_from(&model.memo(Checkpoints::of), order, checked)
}

/// The state after each thread ran `pos[t]` events, their sync events in the observed order
/// (the prefix of a window, or a cut).
pub(crate) fn state_at(model: &Model, pos: &[usize]) -> State {
    let mut order = model.cut_order(pos);
    let mut state = resume(model, &mut order, false);
    state.run_observed(model, order);
    state.pos = pos.to_vec();
    state
}

fn resume_from(checkpoints: &Checkpoints, order: &mut CutOrder, checked: bool) -> State {
    let mut upto = order.prefix();
    if checked {
        upto = upto.min(checkpoints.blocked);
    }
    let k = upto / checkpoints.every;
    let mut state = checkpoints.states[k].clone();
    // At this model's indices: those of each thread's last event passed (a thread with none
    // stands at 0 in both).
    order.skip(k * checkpoints.every, &mut state.pos);
    state
}

/// Whether `op`, run in a cut's order past its prefix, is enabled wherever the run's order
/// enabled it, unless a thread the cut stopped before it holds the lock it takes. A thread's
/// holds follow from its own operations, so in the cut's order each thread holds what it held in
/// the run's order at the same place, or, stopped, what it held at its stop. A lock, read or
/// write lock, and a wait's return to its mutex are then enabled unless a stopped thread still
/// holds it; an unlock and a wait's release of its mutex by the holder's own hold. Fork, end and
/// signal need their event not passed yet (their thread's own, or the instance's signal), and
/// the exit not passed, which the cut's order passes no sooner than the run's; start, join and a
/// wait's return by a signal need the fork, end or signal passed, which the closed cut holds
/// before them (no replay loses a signal: only the search's steps do). The others are left to
/// the replay: a failed try needs a holder the cut may lack, a semaphore the posts of a thread
/// stopped, a barrier its count, a wait-loop exit takes its mutex or keeps it, and the replay
/// names no holder where it takes it.
fn vouched(op: ModelOp) -> bool {
    matches!(
        op,
        ModelOp::Lock { .. }
            | ModelOp::Unlock { .. }
            | ModelOp::WaitRelease { .. }
            | ModelOp::WaitReturn { .. }
            | ModelOp::ReadLock { .. }
            | ModelOp::WriteLock { .. }
            | ModelOp::RwUnlock { .. }
            | ModelOp::Fork { .. }
            | ModelOp::Start { .. }
            | ModelOp::End
            | ModelOp::Join { .. }
            | ModelOp::Signal { .. }
            | ModelOp::Nop
    )
}

/// What running a cut's order, checked, gives after its first events, as [`tell`] knows it.
#[derive(Debug)]
pub(crate) enum Told {
    /// Every event is enabled.
    Through,
    /// The first event not enabled is a lock of `mutex`, or a wait's return to it, that
    /// `holder` holds there; `state` is right about `holder`'s position and holds (and nothing
    /// else): what to find its release from.
    Stuck {
        holder: usize,
        mutex: usize,
        state: State,
    },
}

/// What running `order` (the order of the closed cut `cut`, none of it given yet) checked, event
/// by event, gives, where the checkpoints know it: how many of its first events must still be
/// run checked (up to its last one [`vouched`] does not hold for), and what the rest gives if
/// those run through. `None` where the run's order does not enable every event up to the cut's
/// last one, or a thread the cut stops holds an rwlock there (which of its holders the replay
/// names depends on the order they took it).
///
/// Once those first events ran through, each thread holds what [`vouched`] says, so the first
/// event not enabled is the first lock (or wait's return) the cut holds, past a stopped
/// thread's stop, of a mutex that thread holds there. Each thread's holds at its stop are found from the checkpoint before
/// its stop, its own operations run on from there alone.
pub(crate) fn tell(model: &Model, order: &CutOrder, cut: &[usize]) -> Option<(usize, Told)> {
    tell_from(&model.memo(Checkpoints::of), model, order, cut)
}

/// [`tell`] by these checkpoints (of `model`'s base model).
pub(super) fn tell_from(
    checkpoints: &Checkpoints,
    model: &Model,
    order: &CutOrder,
    cut: &[usize],
) -> Option<(usize, Told)> {
    let (from, to) = (order.prefix(), order.reach());
    if to > checkpoints.blocked {
        return None;
    }
    let loose = &checkpoints.loose[..checkpoints.loose.partition_point(|&p| (p as usize) < to)];
    let checks = match loose.last() {
        Some(&last) if last as usize >= from => order.before(last as usize + 1),
        _ => 0,
    };
    let mut stops = vec![usize::MAX; cut.len()];
    let mut holding = Vec::new();
    for (thread, k, stop) in order.lagging() {
        stops[thread] = stop;
        if !checkpoints.free[thread][k] {
            holding.push(thread);
        }
    }
    // The first lock the cut holds that a stopped thread keeps from running, and that thread.
    let mut stuck: Option<(usize, usize, usize, State)> = None;
    for thread in holding {
        let stop = stops[thread];
        let mut state = checkpoints.states[stop / checkpoints.every].clone();
        state.only_holds_of(thread);
        // The checkpoint's positions are the base model's: a sync-only model's counts.
        let start = model.with_accesses(thread, state.pos[thread]);
        for index in start..cut[thread] {
            if let Some(op) = model.op(At { thread, index }) {
                state.apply(model, thread, op);
            }
        }
        state.pos[thread] = cut[thread];
        if state.holds_rwlock(thread) {
            return None;
        }
        for mutex in state.mutexes_of(thread) {
            let locks = &checkpoints.locks[mutex];
            let after = locks.partition_point(|&p| (p as usize) < stop);
            let first = locks[after..]
                .iter()
                .map(|&p| p as usize)
                .take_while(|&p| p < to && stuck.as_ref().is_none_or(|s| p < s.0))
                .find(|&p| p < stops[order.thread_at(p)]);
            if let Some(p) = first {
                stuck = Some((p, thread, mutex, state.clone()));
            }
        }
    }
    let told = match stuck {
        None => Told::Through,
        Some((_, holder, mutex, state)) => Told::Stuck {
            holder,
            mutex,
            state,
        },
    };
    Some((checks, told))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prepare::prepare_deciding;
    use crate::testkit::{check_random_runs, cuts_of};

    /// `order` run from its start, checked as the cut path's replay does: the events run and the
    /// state, or where the first event not enabled stopped it.
    fn run(
        model: &Model,
        order: CutOrder,
        mut state: State,
        mut events: Vec<At>,
    ) -> (Vec<At>, State) {
        for at in order {
            events.push(at);
            let Some(op) = model.op(at) else {
                continue;
            };
            if !state.enabled(model, at.thread, op) {
                break;
            }
            state.apply(model, at.thread, op);
            state.pos[at.thread] = at.index + 1;
        }
        (events, state)
    }

    /// Of random runs with every read deciding, the sync-only model and every variable's, with
    /// checkpoints every 1 to 4 events: for each cut of [`cuts_of`], the order resumed from the
    /// last checkpoint in its prefix runs to the events and the state the order run from the
    /// start does, checked or not (as [`state_at`]).
    #[test]
    fn a_cut_resumed_from_a_checkpoint_runs_as_from_the_start_on_random_runs() {
        let resumed = std::cell::Cell::new(0u64);
        check_random_runs(0x6a09_e667_f3bc_c908, 200, |run_| {
            let program = prepare_deciding(run_);
            let (syncs, _) = program.model.restrict(None);
            let models = std::iter::once(syncs)
                .chain((0..program.vars.len()).map(|v| program.model.restrict(Some(v)).0));
            let base = program.model.restrict(None).0;
            let checkpoints: Vec<Checkpoints> =
                (1..=4).map(|k| Checkpoints::every(&base, k)).collect();
            for model in models {
                for cut in &cuts_of(&model) {
                    let whole = run(
                        &model,
                        model.cut_order(cut),
                        State::initial(&model),
                        Vec::new(),
                    );
                    let mut unchecked = State::initial(&model);
                    unchecked.run_observed(&model, model.cut_order(cut));
                    for c in &checkpoints {
                        let mut order = model.cut_order(cut);
                        let state = resume_from(c, &mut order, true);
                        // The events passed are the order's first ones: those it no longer gives.
                        let passed = model.cut_order(cut).len() - order.len();
                        let events = model.cut_order(cut).take(passed).collect();
                        resumed.set(resumed.get() + passed as u64);
                        proptest::prop_assert_eq!(
                            run(&model, order, state, events),
                            whole.clone(),
                            "cut {:?}, every {}",
                            cut,
                            c.every
                        );
                        let mut order = model.cut_order(cut);
                        let mut state = resume_from(c, &mut order, false);
                        state.run_observed(&model, order);
                        proptest::prop_assert_eq!(
                            &state,
                            &unchecked,
                            "cut {:?}, every {}",
                            cut,
                            c.every
                        );
                    }
                }
            }
            Ok(())
        });
        assert!(
            resumed.get() > 100_000,
            "only {} events passed",
            resumed.get()
        );
    }
}
