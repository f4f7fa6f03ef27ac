//! The cut-based fast path: decide one race-pair candidate from the smallest cut around it.
//!
//! Takes a [`Model`] and two conflicting accesses of different threads; gives a [`Verdict`]:
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

use crate::finding::Schedule;
use crate::model::{At, Model, ModelEvent, ModelOp, Wake};
use crate::state::State;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Witness(Schedule),
    Excluded,
    Unknown,
}

/// Why a closure failed.
enum Closed {
    Ok,
    /// A thread had to run past its limit, or an event in the cut can never run.
    Unreachable,
}

/// Race-pair candidate `x`, `y` (accesses of different threads).
pub fn race(model: &Model, x: At, y: At) -> Verdict {
    if x.thread == y.thread {
        return Verdict::Excluded;
    }
    let n = model.threads.len();
    let mut cut = vec![0; n];
    let mut limit: Vec<usize> = model.threads.iter().map(|t| t.events.len()).collect();
    for at in [x, y] {
        let events = &model.threads[at.thread].events;
        // The thread stops right after its last constraining event before the access, and must not
        // run its next one.
        cut[at.thread] = (0..at.index)
            .rev()
            .find(|&i| events[i].constrains())
            .map_or(0, |i| i + 1);
        limit[at.thread] = model.next_stop(at.thread, at.index).unwrap_or(events.len());
    }
    schedule(model, cut, &limit)
}

/// Whether the threads can be brought to `cut` (each has run that many events) without running
/// any thread past its `limit`, and in which order.
pub fn schedule(model: &Model, mut cut: Vec<usize>, limit: &[usize]) -> Verdict {
    let n = model.threads.len();
    if let Closed::Unreachable = close(model, &mut cut, &mut vec![0; n], limit, false) {
        return Verdict::Excluded;
    }
    // Then what made each failed try operation in the cut fail in the run: not required of every
    // schedule, so a cut that cannot hold it is no proof of anything.
    let mut scanned = vec![0; n];
    if let Closed::Unreachable = close(model, &mut cut, &mut scanned, limit, true) {
        return Verdict::Unknown;
    }
    // Each repair completes one critical section; more repairs than events cannot be needed.
    let total: usize = model.threads.iter().map(|t| t.events.len()).sum();
    for _ in 0..=total {
        match replay(model, &cut) {
            Ok(steps) => return Verdict::Witness(Schedule { prefix: 0, steps }),
            Err(None) => return Verdict::Unknown,
            Err(Some((holder, release))) => {
                cut[holder] = cut[holder].max(release + 1);
                if let Closed::Unreachable = close(model, &mut cut, &mut scanned, limit, true) {
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
fn close(
    model: &Model,
    cut: &mut [usize],
    scanned: &mut [usize],
    limit: &[usize],
    busy: bool,
) -> Closed {
    let sources = model.sources();
    let mut progress = true;
    while progress {
        progress = false;
        for t in 0..cut.len() {
            while scanned[t] < cut[t] {
                let index = scanned[t];
                scanned[t] += 1;
                progress = true;
                let Some(op) = model.threads[t].events[index].op() else {
                    continue;
                };
                for at in model.rf_needs(At { thread: t, index }) {
                    cut[at.thread] = cut[at.thread].max(at.index + 1);
                }
                let needs: Vec<At> = match op {
                    ModelOp::Start { forked: true } => match sources.fork_of[t] {
                        Some(at) => vec![at],
                        None => return Closed::Unreachable,
                    },
                    ModelOp::Join { child } => match sources.end_of[child] {
                        Some(at) => vec![at],
                        None => return Closed::Unreachable,
                    },
                    ModelOp::WaitReturn {
                        wake: Wake::Signal(cond),
                        ..
                    }
                    | ModelOp::LoopExit { cond, .. } => match sources.signal_of[cond] {
                        Some(at) => vec![at],
                        None => return Closed::Unreachable,
                    },
                    ModelOp::WaitReturn {
                        wake: Wake::Never, ..
                    } => return Closed::Unreachable,
                    ModelOp::BarrierExit { barrier } => {
                        if !model.objects.barriers[barrier].released {
                            return Closed::Unreachable;
                        }
                        sources.enters_of[barrier].clone()
                    }
                    ModelOp::TryFail { .. } if busy => sources
                        .busy_of
                        .get(&At { thread: t, index })
                        .cloned()
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                for at in needs {
                    cut[at.thread] = cut[at.thread].max(at.index + 1);
                }
            }
        }
    }
    if cut.iter().zip(limit).any(|(c, l)| c > l) {
        Closed::Unreachable
    } else {
        Closed::Ok
    }
}

/// Runs the cut's sync events in the observed order; gives them, or where that order got stuck:
/// the thread holding the lock it waited for and the index of that thread's release of it
/// (`None`: stuck on something else).
fn replay(model: &Model, cut: &[usize]) -> Result<Vec<At>, Option<(usize, usize)>> {
    let events: Vec<At> = model.observed_order(cut).collect();
    let mut state = State::initial(model);
    for &at in &events {
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
