//! The checker: decides a script's assertions by exploring its transition system.
//!
//! Takes a type-checked [`Env`] and an [`Assertion`]; gives a [`Verdict`]: the assertion holds,
//! fails with a shortest counterexample (breadth-first search), or the search gave up at the
//! state limit. The two assertions are decided as FDR decides them:
//!
//! - `assert SPEC [T= IMP`: fails iff `IMP` can perform, after a trace `SPEC` has, a visible event
//!   (or a tick) that `SPEC` cannot perform after it. For `SPEC = STOP` that is any visible event.
//!   The counterexample is every step to that event and the event itself; hidden events are in
//!   it, marked hidden, so that a caller can project it onto the events it cares about.
//! - `assert P :[deadlock free [F]]`: fails iff `P` can reach a state with no transition at all
//!   (stable, refusing every event, unable to tick). A state that can only tick (`SKIP`) and the
//!   terminated state after a tick are not deadlocks: successful termination is not deadlock in
//!   Roscoe's definition (deadlock freedom is refinement of `DF = (|~| a : Events @ a -> DF) |~|
//!   SKIP`), which is how FDR 3 and 4 check `:[deadlock free]`. (The FDR manual's own wording
//!   could not be consulted here; the convention is Roscoe's.) Divergence is no deadlock in the
//!   failures model.

use std::hash::Hash;

use crate::ast::Assertion;
pub use crate::check_error::CheckError;
use crate::lts::{FastMap, Label, Lts, StateId};
use crate::typecheck::{self, Env};

/// How far the search may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// States explored before the checker gives up.
    pub max_states: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_states: 1_000_000,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Holds {
        states: usize,
    },
    /// `trace` leads from the initial state to the violation.
    Fails {
        trace: Vec<Step>,
        states: usize,
    },
    /// The state limit was reached before the search was complete.
    GaveUp {
        states: usize,
    },
}

/// One event of a counterexample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The event's dotted name (`fork.T0.T1`); `✓` for termination.
    pub event: String,
    /// Whether the event was hidden (a tau) at that point of the process.
    pub hidden: bool,
}

/// The name FDR gives a tick in traces.
pub(crate) const TICK: &str = "✓";

pub fn check_assertion(env: &Env, a: &Assertion, limits: Limits) -> Result<Verdict, CheckError> {
    typecheck::check_assertion(env, a).map_err(CheckError::Type)?;
    match a {
        Assertion::TraceRefines { spec, imp } => {
            let mut lts = Lts::new(env, &[spec, imp])?;
            let spec = lts.root(0)?;
            let imp = lts.root(1)?;
            traces_refine(&mut lts, spec, imp, limits)
        }
        Assertion::DeadlockFree { process } => {
            let mut lts = Lts::new(env, &[process])?;
            let root = lts.root(0)?;
            deadlock_free(&mut lts, root, limits)
        }
    }
}

/// Breadth-first search with a parent link per state, for shortest counterexamples.
struct Search<S> {
    index: FastMap<S, u32>,
    /// Each state found, the state it was found from and the label of that transition.
    found: Vec<(S, u32, Label)>,
    next: usize,
    max: usize,
}

impl<S: Copy + Eq + Hash> Search<S> {
    fn new(root: S, max: usize) -> Self {
        Search {
            index: FastMap::from_iter([(root, 0)]),
            found: vec![(root, 0, Label::Tau(None))],
            next: 0,
            max,
        }
    }

    fn states(&self) -> usize {
        self.found.len()
    }

    /// The next state to expand, and its number.
    fn pop(&mut self) -> Option<(u32, S)> {
        let (s, ..) = *self.found.get(self.next)?;
        self.next += 1;
        Some(((self.next - 1) as u32, s))
    }

    /// Records `s`, reached from state number `from` by `label`; `false` when that would pass
    /// the state limit.
    fn offer(&mut self, s: S, from: u32, label: Label) -> bool {
        if self.index.contains_key(&s) {
            return true;
        }
        if self.found.len() >= self.max {
            return false;
        }
        self.index.insert(s, self.found.len() as u32);
        self.found.push((s, from, label));
        true
    }

    /// The labels from the root to state number `to`.
    fn labels(&self, mut to: u32) -> Vec<Label> {
        let mut labels = Vec::new();
        while to != 0 {
            let (_, from, label) = self.found[to as usize];
            labels.push(label);
            to = from;
        }
        labels.reverse();
        labels
    }
}

/// The counterexample's steps: every event, hidden or not; internal steps that were no event
/// (a tick made internal) are left out.
fn steps(lts: &Lts, labels: &[Label]) -> Vec<Step> {
    labels
        .iter()
        .filter_map(|label| match *label {
            Label::Tau(None) => None,
            Label::Tau(Some(e)) => Some(Step {
                event: lts.event_name(e),
                hidden: true,
            }),
            Label::Event(e) => Some(Step {
                event: lts.event_name(e),
                hidden: false,
            }),
            Label::Tick => Some(Step {
                event: TICK.to_string(),
                hidden: false,
            }),
        })
        .collect()
}

fn deadlock_free(lts: &mut Lts, root: StateId, limits: Limits) -> Result<Verdict, CheckError> {
    let mut search = Search::new(root, limits.max_states);
    while let Some((n, s)) = search.pop() {
        let moves = lts.transitions(s)?;
        if moves.is_empty() && !lts.is_terminated(s) {
            return Ok(Verdict::Fails {
                trace: steps(lts, &search.labels(n)),
                states: search.states(),
            });
        }
        for k in 0..moves.len() {
            let t = lts.nth(moves, k);
            if !search.offer(t.to, n, t.label) {
                return Ok(Verdict::GaveUp {
                    states: search.states(),
                });
            }
        }
    }
    Ok(Verdict::Holds {
        states: search.states(),
    })
}

/// The specification's side of a trace refinement check: after each trace, the set of states
/// it can be in (closed under its internal steps).
struct Spec {
    sets: FastMap<Vec<StateId>, u32>,
    members: Vec<Vec<StateId>>,
    after: FastMap<(u32, Label), Option<u32>>,
}

impl Spec {
    fn new() -> Self {
        Spec {
            sets: FastMap::default(),
            members: Vec::new(),
            after: FastMap::default(),
        }
    }

    /// The set of `states` and all states they reach by internal steps.
    fn closure(&mut self, lts: &mut Lts, mut states: Vec<StateId>) -> Result<u32, CheckError> {
        let mut i = 0;
        while i < states.len() {
            let moves = lts.transitions(states[i])?;
            for t in (0..moves.len()).map(|k| lts.nth(moves, k)) {
                if matches!(t.label, Label::Tau(_)) && !states.contains(&t.to) {
                    states.push(t.to);
                }
            }
            i += 1;
        }
        states.sort_unstable();
        let next = self.members.len() as u32;
        let id = *self.sets.entry(states.clone()).or_insert(next);
        if id == next {
            self.members.push(states);
        }
        Ok(id)
    }

    /// Where the specification can be after `label` from `set`; `None` if it cannot perform it.
    fn after(&mut self, lts: &mut Lts, set: u32, label: Label) -> Result<Option<u32>, CheckError> {
        if let Some(&known) = self.after.get(&(set, label)) {
            return Ok(known);
        }
        let mut next = Vec::new();
        for &s in &self.members[set as usize].clone() {
            let moves = lts.transitions(s)?;
            for t in (0..moves.len()).map(|k| lts.nth(moves, k)) {
                if t.label == label && !next.contains(&t.to) {
                    next.push(t.to);
                }
            }
        }
        let result = if next.is_empty() {
            None
        } else {
            Some(self.closure(lts, next)?)
        };
        self.after.insert((set, label), result);
        Ok(result)
    }
}

fn traces_refine(
    lts: &mut Lts,
    spec_root: StateId,
    imp_root: StateId,
    limits: Limits,
) -> Result<Verdict, CheckError> {
    let mut spec = Spec::new();
    let start = spec.closure(lts, vec![spec_root])?;
    let mut search = Search::new((imp_root, start), limits.max_states);
    while let Some((n, (imp, set))) = search.pop() {
        let moves = lts.transitions(imp)?;
        for k in 0..moves.len() {
            let t = lts.nth(moves, k);
            let next_set = match t.label {
                Label::Tau(_) => set,
                visible => match spec.after(lts, set, visible)? {
                    Some(next) => next,
                    None => {
                        let mut labels = search.labels(n);
                        labels.push(visible);
                        return Ok(Verdict::Fails {
                            trace: steps(lts, &labels),
                            states: search.states(),
                        });
                    }
                },
            };
            if !search.offer((t.to, next_set), n, t.label) {
                return Ok(Verdict::GaveUp {
                    states: search.states(),
                });
            }
        }
    }
    Ok(Verdict::Holds {
        states: search.states(),
    })
}
