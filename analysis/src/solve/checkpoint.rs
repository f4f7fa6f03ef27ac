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

use crate::model::{CutOrder, Model};
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
}

impl Checkpoints {
    /// The checkpoints of `base`'s run order, as far apart as its size calls for.
    pub(crate) fn of(base: &Model) -> Checkpoints {
        let o = &base.objects;
        let parts = base.threads.len() + o.rwlocks.len() + o.sems.len();
        Checkpoints::every(base, EVERY_AT_LEAST.max(EVERY_PER_PART * parts))
    }

    /// The checkpoints of `base`'s run order, `every` events apart.
    fn every(base: &Model, every: usize) -> Checkpoints {
        let lens: Vec<usize> = base.threads.iter().map(|t| t.events.len()).collect();
        let mut state = State::initial(base);
        let mut states = Vec::new();
        let mut blocked = None;
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
            }
            state.pos[at.thread] = at.index + 1;
        }
        if len % every == 0 {
            states.push(state);
        }
        Checkpoints {
            every,
            states,
            blocked: blocked.unwrap_or(len),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::At;
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
