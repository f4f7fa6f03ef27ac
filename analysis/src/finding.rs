//! Findings: what a solver (native or CSP_M) gives for one model.
//!
//! Takes nothing; gives [`Finding`] (a race between two access events, or a set of blocked
//! threads) with the [`Schedule`] of sync events that reaches it, as positions ([`At`]) in the
//! model the solver worked on. [`crate::candidates`] turns them into candidates with trace
//! positions.

use crate::model::{At, CutOrder, Model};

/// The sync events to run, in order, from the start of the run: for each thread a prefix of its
/// sync events. They begin with those of a cut, `head`, in the observed order
/// ([`Model::cut_order`]), named by its count of events per thread rather than listed: the cut
/// path's witness is such an order all through, the window path's up to its window, and a listed
/// step per event of a lock-heavy run's order made each witness cost the run, not its window.
/// The steps after it are listed in `steps`. The first `prefix` steps are the observed order
/// before the window the finding was searched in (none for the cut path, which works on the
/// whole trace).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub prefix: usize,
    /// Per thread, the events of the model it has run when the listed steps begin (at the
    /// model's indices; empty: none).
    pub head: Vec<usize>,
    /// The steps after the head's.
    pub steps: Vec<At>,
}

impl Schedule {
    /// A schedule of these steps, listed from the run's start.
    pub fn listed(prefix: usize, steps: Vec<At>) -> Schedule {
        Schedule {
            prefix,
            head: Vec::new(),
            steps,
        }
    }

    /// The head's steps, in order.
    pub fn head<'m>(&self, model: &'m Model) -> CutOrder<'m> {
        model.cut_order(&self.head)
    }

    /// Every step, in order: the head's, then the listed ones.
    pub fn all<'a>(&'a self, model: &'a Model) -> impl Iterator<Item = At> + 'a {
        self.head(model).chain(self.steps.iter().copied())
    }
}

/// A state the model reaches (events are those of the model the finding came with).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// Two threads' next events are these conflicting accesses.
    Race {
        first: At,
        second: At,
        schedule: Schedule,
    },
    /// These threads wait in these operations and no thread can move.
    Deadlock {
        blocked: Vec<At>,
        schedule: Schedule,
    },
}
