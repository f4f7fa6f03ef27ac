//! From a counterexample trace of the CSP_M model back to an ilgen finding.
//!
//! Takes the [`Exported`] script's bookkeeping, the model, and a trace of event names as a checker
//! (ilgen's own or FDR) prints them (`lock.t2.m`, hidden events included); gives the native
//! [`Finding`]: the schedule of sync events up to the erroneous state and the racing accesses or the
//! blocked threads. Each thread process performs its events in program order, so the n-th event of
//! thread `ti` in the trace is the n-th entry of `performs[i]`.

use std::collections::HashMap;

use super::translate::{Exported, DIVERTED, EXITED, RACE, RELEASE, RUNNING};
use crate::finding::{Finding, Schedule};
use crate::model::{At, Model, ModelEvent};

/// What the trace leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The trace ends with `race`: its last two accesses are the racing pair.
    Race,
    /// The trace ends in a state where no thread can move.
    Deadlock,
}

/// Maps `trace` to a finding, or says why it does not fit the model (a checker bug or a file that
/// was edited by hand).
pub fn finding(
    exported: &Exported,
    model: &Model,
    trace: &[String],
    kind: Kind,
) -> Result<Finding, String> {
    let thread_of: HashMap<&str, usize> = exported
        .thread_names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let n = model.threads.len();
    let mut cursor = vec![0usize; n];
    // Per thread, how many of its model events the schedule has passed.
    let mut pos = vec![0usize; n];
    let mut steps = Vec::new();
    let mut accesses: Vec<At> = Vec::new();
    let mut raced = false;
    for event in trace {
        let mut parts = event.split('.');
        let channel = parts.next().unwrap_or_default();
        if channel == RACE {
            raced = true;
            break;
        }
        if [EXITED, RUNNING, RELEASE, DIVERTED].contains(&channel) {
            continue;
        }
        let who = parts.next().unwrap_or_default();
        let &t = thread_of
            .get(who)
            .ok_or_else(|| format!("event `{event}` names no thread of the model"))?;
        let &index = exported.performs[t]
            .get(cursor[t])
            .ok_or_else(|| format!("event `{event}` goes past the end of thread {who}"))?;
        cursor[t] += 1;
        match model.threads[t].events[index] {
            ModelEvent::Access { .. } => accesses.push(At { thread: t, index }),
            ModelEvent::Sync { .. } => {
                // The sync events the thread passed on the way, no-ops included, as the native
                // schedules list them.
                for i in pos[t]..=index {
                    if model.threads[t].events[i].is_sync() {
                        steps.push(At {
                            thread: t,
                            index: i,
                        });
                    }
                }
                pos[t] = index + 1;
            }
        }
    }
    let schedule = Schedule::listed(0, steps);
    match kind {
        Kind::Race => {
            if !raced {
                return Err("the race counterexample does not end with `race`".into());
            }
            let [.., a, b] = accesses[..] else {
                return Err("the race counterexample has fewer than two accesses".into());
            };
            let (first, second) = if a.thread <= b.thread { (a, b) } else { (b, a) };
            Ok(Finding::Race {
                first,
                second,
                schedule,
            })
        }
        Kind::Deadlock => {
            let blocked: Vec<At> = (0..n)
                .filter_map(|t| {
                    let index = model.next_stop(t, pos[t])?;
                    Some(At { thread: t, index })
                })
                .collect();
            if blocked.is_empty() {
                return Err("the deadlock counterexample leaves no thread blocked".into());
            }
            Ok(Finding::Deadlock { blocked, schedule })
        }
    }
}
