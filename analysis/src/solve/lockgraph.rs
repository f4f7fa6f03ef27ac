//! The deadlock fast path: lock-graph cycles as patterns, each checked by a cut.
//!
//! Takes the sync-only [`Model`]; gives deadlock findings with schedules, and how many patterns
//! it could not decide (the caller then runs the exhaustive search). An edge m1 → m2 says a thread
//! requested m2 while holding m1 (a try or timed operation requests nothing: it never waits for
//! good, so it makes no edge; a lock it took is held, one it failed on is not); a cycle of edges
//! of distinct threads over distinct locks is a pattern: each thread stopped at its request, holding its first lock. The cut path brings the
//! threads there (observed order, completing critical sections that block it); every other thread
//! then runs while it can. If in the end no thread can move, that state is a deadlock of the
//! model, and the schedule leads to it.

use std::collections::{BTreeSet, HashMap};

use super::checkpoint;
use super::cut::{self, Verdict};
use crate::finding::{Finding, Schedule};
use crate::model::{At, Model, ModelOp};
use crate::state::Next;

/// Longest cycle looked for (threads in one deadlock).
const MAX_CYCLE: usize = 4;
/// Edges kept per (held lock, requested lock, thread): enough to try a few call sites.
const EDGES_PER_KEY: usize = 4;

#[derive(Clone, Copy, Debug)]
struct Edge {
    held: usize,
    requested: usize,
    /// The request: the thread stops right before it.
    at: At,
}

pub struct Outcome {
    pub findings: Vec<Finding>,
    pub undecided: u64,
}

/// Deadlocks from lock-order cycles, up to `want` of them.
pub fn deadlocks(model: &Model, want: usize) -> Outcome {
    let edges = edges(model);
    let mut out = Outcome {
        findings: Vec::new(),
        undecided: 0,
    };
    let mut by_held: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, e) in edges.iter().enumerate() {
        by_held.entry(e.held).or_default().push(i);
    }
    let mut cycles = Vec::new();
    for start in 0..edges.len() {
        let mut path = vec![start];
        extend(&edges, &by_held, &mut path, &mut cycles);
    }
    for cycle in cycles {
        if out.findings.len() >= want {
            break;
        }
        let mut cut: Vec<usize> = vec![0; model.threads.len()];
        let mut limit: Vec<usize> = model.threads.iter().map(|t| t.events.len()).collect();
        for &e in &cycle {
            let at = edges[e].at;
            cut[at.thread] = at.index;
            limit[at.thread] = at.index;
        }
        match cut::schedule(model, cut, &limit) {
            Verdict::Witness(schedule) => match settle(model, schedule) {
                Some(f) => {
                    if !out.findings.contains(&f) {
                        out.findings.push(f);
                    }
                }
                None => out.undecided += 1,
            },
            Verdict::Excluded => {}
            Verdict::Unknown => out.undecided += 1,
        }
    }
    out
}

/// A sufficient condition for no deadlock in the model, which spares the exhaustive search:
/// threads block only on mutexes, joins and starts; no thread joins while holding a lock or
/// finishes holding one; nothing was pending when the run ended; and the lock graph has no cycle.
/// Then a blocked thread waits for a lock whose holder is blocked on another lock, or for a thread
/// that is blocked: a chain that would have to close into a lock-graph cycle. (A thread stopped at
/// a try or timed operation is not blocked, [`State::escapes`], so those request no edge.)
pub fn cannot_deadlock(model: &Model) -> bool {
    let mut graph: BTreeSet<(usize, usize)> = BTreeSet::new();
    for t in &model.threads {
        let mut held: Vec<usize> = Vec::new();
        for (index, e) in t.events.iter().enumerate() {
            let (Some(op), Some(observed)) = (e.op(), t.observed_of(e)) else {
                continue;
            };
            if observed.seq == ilgen_trace::PENDING {
                return false;
            }
            match op {
                ModelOp::Lock { mutex } => {
                    if !t.acquires_by_try(index) {
                        graph.extend(held.iter().filter(|&&h| h != mutex).map(|&h| (h, mutex)));
                    }
                    held.push(mutex);
                }
                ModelOp::Unlock { mutex } => {
                    if let Some(i) = held.iter().rposition(|&h| h == mutex) {
                        held.remove(i);
                    }
                }
                ModelOp::Join { .. } if !held.is_empty() => return false,
                ModelOp::Start { .. }
                | ModelOp::End
                | ModelOp::Fork { .. }
                | ModelOp::Join { .. }
                | ModelOp::Signal { .. }
                | ModelOp::BarrierEnter { .. }
                | ModelOp::SemPost { .. }
                | ModelOp::TryFail { .. }
                | ModelOp::Exit
                | ModelOp::Nop => {}
                _ => return false,
            }
        }
        if !held.is_empty() {
            return false;
        }
    }
    acyclic(&graph)
}

/// Kahn's algorithm: every node can be removed in dependency order.
pub fn acyclic(graph: &BTreeSet<(usize, usize)>) -> bool {
    let mut indegree: HashMap<usize, usize> = HashMap::new();
    let mut out: HashMap<usize, Vec<usize>> = HashMap::new();
    for &(a, b) in graph {
        indegree.entry(a).or_default();
        *indegree.entry(b).or_default() += 1;
        out.entry(a).or_default().push(b);
    }
    let mut ready: Vec<usize> = indegree
        .iter()
        .filter(|(_, &d)| d == 0)
        .map(|(&n, _)| n)
        .collect();
    let mut removed = 0;
    while let Some(n) = ready.pop() {
        removed += 1;
        for &m in out.get(&n).into_iter().flatten() {
            if let Some(d) = indegree.get_mut(&m) {
                *d -= 1;
                if *d == 0 {
                    ready.push(m);
                }
            }
        }
    }
    removed == indegree.len()
}

/// Edges of the lock graph, at most [`EDGES_PER_KEY`] per held lock, requested lock and thread.
fn edges(model: &Model) -> Vec<Edge> {
    let mut out = Vec::new();
    let mut count: HashMap<(usize, usize, usize), usize> = HashMap::new();
    for (thread, t) in model.threads.iter().enumerate() {
        let mut held: Vec<usize> = Vec::new();
        for (index, e) in t.events.iter().enumerate() {
            let Some(op) = e.op() else {
                continue;
            };
            match op {
                ModelOp::Lock { mutex } if t.acquires_by_try(index) => held.push(mutex),
                ModelOp::Lock { mutex } => {
                    for &h in held.iter().filter(|&&h| h != mutex) {
                        let n = count.entry((h, mutex, thread)).or_default();
                        if *n < EDGES_PER_KEY {
                            *n += 1;
                            out.push(Edge {
                                held: h,
                                requested: mutex,
                                at: At { thread, index },
                            });
                        }
                    }
                    held.push(mutex);
                }
                ModelOp::WaitReturn { mutex, .. } => held.push(mutex),
                ModelOp::Unlock { mutex } => {
                    if let Some(i) = held.iter().rposition(|&h| h == mutex) {
                        held.remove(i);
                    }
                }
                ModelOp::WaitRelease { mutex } => held.retain(|&h| h != mutex),
                _ => {}
            }
        }
    }
    out
}

/// Cycles through `path`'s edges: distinct threads and locks, closed back to the first held lock.
/// Each cycle is found once, from its edge of lowest index.
fn extend(
    edges: &[Edge],
    by_held: &HashMap<usize, Vec<usize>>,
    path: &mut Vec<usize>,
    cycles: &mut Vec<Vec<usize>>,
) {
    let first = edges[path[0]];
    let last = edges[*path.last().unwrap_or(&path[0])];
    for &next in by_held.get(&last.requested).into_iter().flatten() {
        let e = edges[next];
        if next <= path[0]
            || path
                .iter()
                .any(|&p| edges[p].at.thread == e.at.thread || edges[p].held == e.held)
        {
            continue;
        }
        path.push(next);
        if e.requested == first.held {
            cycles.push(path.clone());
        } else if path.len() < MAX_CYCLE {
            extend(edges, by_held, path, cycles);
        }
        path.pop();
    }
}

/// Runs the schedule, then every thread that can move until none can; a deadlock if then some
/// thread is blocked and every other is finished.
fn settle(model: &Model, mut schedule: Schedule) -> Option<Finding> {
    // The head from the checkpoint before it, as the run's order: its steps were checked.
    let mut state = checkpoint::state_at(model, &schedule.head);
    for &at in &schedule.steps {
        let op = model.threads[at.thread].events[at.index].op()?;
        state.apply(model, at.thread, op);
        state.pos[at.thread] = at.index + 1;
    }
    loop {
        let mut moved = false;
        for t in 0..model.threads.len() {
            let len = model.threads[t].events.len();
            while let Next::At(stop) = state.next(model, t, len) {
                let from = state.pos[t];
                if !state.advance(model, t, stop) {
                    break;
                }
                moved = true;
                schedule.steps.extend(
                    (from..=stop)
                        .filter(|&index| model.threads[t].events[index].is_sync())
                        .map(|index| At { thread: t, index }),
                );
            }
        }
        if !moved {
            break;
        }
    }
    if !model.process_alive(&state.pos) {
        return None;
    }
    let mut blocked = Vec::new();
    for t in 0..model.threads.len() {
        match state.next(model, t, model.threads[t].events.len()) {
            Next::Finished => {}
            Next::Cut => return None,
            Next::At(index) => {
                let op = model.threads[t].events[index].op()?;
                if state.escapes(model, t, index, op) {
                    return None;
                }
                blocked.push(At { thread: t, index });
            }
        }
    }
    (!blocked.is_empty()).then_some(Finding::Deadlock { blocked, schedule })
}
