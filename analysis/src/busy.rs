//! What made each failed try fail: the last step of building a [`Model`].
//!
//! Takes a model's threads and sync objects; gives the [`Model`] with
//! [`Sources::busy_of`](crate::model::Sources::busy_of) filled by running the sync events in the
//! observed order through the native rules ([`State`]). It sits above [`crate::model`] and
//! [`crate::state`] so that the model's vocabulary does not depend on the rules that move through
//! it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::model::{At, Model, ModelOp, ModelThread, SyncObjects, TryTarget};
use crate::state::State;

/// The object (as a write try would name it: every holder counts) that `op` may take.
fn acquires(op: ModelOp) -> Option<TryTarget> {
    match op {
        ModelOp::Lock { mutex }
        | ModelOp::WaitReturn { mutex, .. }
        | ModelOp::LoopExit {
            mutex: Some(mutex), ..
        } => Some(TryTarget::Mutex(mutex)),
        ModelOp::ReadLock { rw } | ModelOp::WriteLock { rw } => Some(TryTarget::RwWrite(rw)),
        _ => None,
    }
}

/// The key [`Model::busy_of`] remembers holds under: a read try and a write try of one rwlock
/// look at the same holders.
fn held(target: TryTarget) -> TryTarget {
    match target {
        TryTarget::RwRead(rw) => TryTarget::RwWrite(rw),
        other => other,
    }
}

impl Model {
    pub fn new(threads: Vec<ModelThread>, objects: impl Into<Arc<SyncObjects>>) -> Model {
        let mut model = Model::derive(threads, objects);
        let busy_of = model.busy_of();
        model.set_busy_of(busy_of);
        model
    }

    /// [`Sources::busy_of`](crate::model::Sources::busy_of): runs the sync events in the
    /// observed order by the native rules ([`State`]), remembering the event by which each
    /// current holder took its object.
    fn busy_of(&self) -> BTreeMap<At, Vec<At>> {
        let mut out = BTreeMap::new();
        let tries = self
            .threads
            .iter()
            .flat_map(|t| &t.events)
            .any(|e| matches!(e.op(), Some(ModelOp::TryFail { .. })));
        if !tries {
            return out;
        }
        let mut state = State::initial(self);
        // (object a try targets, holder) -> the event that began the holder's hold.
        let mut taken: HashMap<(TryTarget, usize), At> = HashMap::new();
        let mut sem_waits: Vec<Vec<At>> = vec![Vec::new(); self.objects.sems.len()];
        let lens: Vec<usize> = self.threads.iter().map(|t| t.events.len()).collect();
        for at in self.observed_order(&lens) {
            let Some(op) = self.op(at) else { continue };
            let t = at.thread;
            match op {
                ModelOp::TryFail {
                    target: TryTarget::Sem(sem),
                } if state.busy(t, TryTarget::Sem(sem)) => {
                    out.insert(at, sem_waits[sem].clone());
                }
                ModelOp::TryFail { target } if state.busy(t, target) => {
                    let holder = state.holders(target).into_iter().filter(|&h| h != t);
                    let taken_by = |h| taken.get(&(held(target), h)).copied();
                    if let Some(a) = holder.filter_map(taken_by).next() {
                        out.insert(at, vec![a]);
                    }
                }
                ModelOp::SemWait { sem, .. } => sem_waits[sem].push(at),
                _ => {}
            }
            let object = acquires(op);
            let before = object.is_some_and(|o| state.holders(o).contains(&t));
            state.apply(self, t, op);
            if let Some(o) = object.filter(|&o| !before && state.holders(o).contains(&t)) {
                taken.insert((o, t), at);
            }
        }
        out
    }
}
