//! Cuts: how far each thread of a model has run (a prefix per thread), and where a race pair's
//! access stops its thread.
//!
//! Takes a [`Model`] and a race pair's access ([`Start::of`]), or cuts (one event count per
//! thread); gives the access's [`Start`] and the cut operations both the cut path
//! ([`super::cut`]) and its mutual-exclusion rule ([`super::exclusion`]) work with: whether a cut
//! holds an event ([`has`]), puts one in ([`need`]), stays within limits ([`within`]), or takes
//! another's events ([`merge`]).

use crate::model::{At, Model};

/// Where a race pair's access stops its thread: after `cut` events, and never past `limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Start {
    pub thread: usize,
    pub cut: usize,
    pub limit: usize,
}

impl Start {
    /// The thread stops right after its last constraining event before the access, and must not
    /// run its next one.
    pub fn of(model: &Model, at: At) -> Start {
        let events = &model.threads[at.thread].events;
        Start {
            thread: at.thread,
            cut: (0..at.index)
                .rev()
                .find(|&i| events[i].constrains())
                .map_or(0, |i| i + 1),
            limit: model.next_stop(at.thread, at.index).unwrap_or(events.len()),
        }
    }
}

/// Whether no thread of `cut` ran past its `limit`.
pub(super) fn within(cut: &[usize], limit: &[usize]) -> bool {
    cut.iter().zip(limit).all(|(c, l)| c <= l)
}

/// Puts `at` into `cut`.
pub(super) fn need(cut: &mut [usize], at: At) {
    cut[at.thread] = cut[at.thread].max(at.index + 1);
}

/// Whether `cut` holds event `at`.
pub(super) fn has(cut: &[usize], at: At) -> bool {
    cut[at.thread] > at.index
}

/// Puts `other`'s events into `cut`: a union of closed cuts is closed.
pub(super) fn merge(cut: &mut [usize], other: &[usize]) {
    for (c, &o) in cut.iter_mut().zip(other) {
        *c = (*c).max(o);
    }
}
