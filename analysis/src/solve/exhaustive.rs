//! The exhaustive solver: breadth-first search of the model's reachable states.
//!
//! Takes a [`Model`], a [`Window`] and a goal (a race on one variable, or a deadlock); gives the
//! findings it reached, each with the shortest schedule from the window's start, and whether the
//! search covered every reachable state. A state is the thread positions with every object's
//! state, kept in a visited set. Partial-order reduction: threads interleave only
//! at constraining sync events; memory accesses and no-ops run with their segment. That loses no
//! race, because a state's racing pairs are looked for in the whole current segment of each thread
//! (any access of it can be made the next event by running the ones before it), and loses no
//! deadlock, because accesses never block. This is the reference the cut-based path is tested
//! against.
//!
//! Order: a deadlock search is breadth-first. A race search is best-first, guided by a
//! [`Guide`]: states nearer to a pair of sites not found yet go first (breadth-first among
//! equals), and a state from which no such pair lies ahead is not expanded, since thread positions
//! only grow. A bounded search then spends its states where the missing pairs are (a read made
//! twice near the end of a run against a write made by every worker: c-thread-pool's
//! `thpool_wait`), and a complete one still visits every state that can show a new pair; the
//! schedules found are no longer the shortest, which replay does not need.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet, VecDeque};
use std::hash::BuildHasher as _;

use ilgen_trace::{AccessKind, SiteId};
use rustc_hash::{FxBuildHasher, FxHashMap};

use super::checkpoint;
use crate::finding::{Finding, Schedule};
use crate::model::{At, Model, ModelEvent, ModelOp, VarId};
use crate::state::{Next, State};
use crate::window::Window;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    Race { var: VarId },
    Deadlock,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Search {
    pub findings: Vec<Finding>,
    /// Every reachable state was visited (false: stopped at `want` findings or `max_states`).
    pub complete: bool,
    pub states: usize,
}

/// A step of the search tree: `thread` ran from event `from` through the constraining event
/// `stop` (`None`: it released its mutex to wait at a wait-loop exit, running no event), from the
/// state of node `parent`.
struct Node {
    parent: usize,
    thread: usize,
    from: usize,
    stop: Option<usize>,
}

const ROOT: usize = usize::MAX;

/// Searches until `want` new findings (keys not in `seen`) or `max_states` states.
pub fn search(
    model: &Model,
    window: &Window,
    goal: Goal,
    want: usize,
    max_states: usize,
    seen: &mut HashSet<Vec<SiteId>>,
) -> Search {
    let mut out = Search {
        findings: Vec::new(),
        complete: false,
        states: 0,
    };
    if want == 0 {
        return out;
    }
    let guide = match goal {
        Goal::Race { var } => Some(Guide::new(model, window, var)),
        Goal::Deadlock => None,
    };
    // The race keys the guide still looks for, refreshed as findings add to `seen`.
    let mut open = guide.as_ref().map_or(Vec::new(), |g| g.open(seen));
    let mut reach = None;
    // Smallest distance first, then first queued: a deadlock search (all 0) is breadth-first.
    let mut distance = |state: &State, open: &[usize]| match &guide {
        Some(g) => {
            let reach = reach.get_or_insert_with(|| Reach::new(model, window));
            g.distance(model, window, state, open, reach)
        }
        None => Some(0),
    };
    let initial = checkpoint::state_at(model, &window.start);
    let scope = Scope::new(model, window, &initial);
    let mut visited = Visited::default();
    let first = visited
        .add_new(&initial, &scope)
        .expect("the first state is new");
    // Each thread's step is tried on this copy, so that a step that cannot be taken or leads to a
    // state already visited (most of them, where interleavings meet again) allocates nothing.
    let mut next = initial.clone();
    let mut current = initial.clone();
    let mut nodes: Vec<Node> = Vec::new();
    let mut queue = Queue::default();
    if let Some(d) = distance(&initial, &open) {
        queue.push(
            d,
            Queued {
                node: ROOT,
                state: first,
            },
        );
    }
    while let Some(Queued { node, state }) = queue.pop() {
        out.states += 1;
        // Decoded into buffers kept from the last one: the states visited grow as it expands.
        current.decode(&scope.moving, &window.start, visited.get(state));
        let state = &current;
        let found = match goal {
            Goal::Race { var } => races(model, &scope, state, var),
            Goal::Deadlock => deadlock(model, &scope, state).into_iter().collect(),
        };
        for (key, finding) in found {
            if seen.insert(key) {
                out.findings
                    .push(finding(schedule(model, window, &nodes, node)));
                if out.findings.len() >= want {
                    return out;
                }
                if let Some(g) = &guide {
                    open = g.open(seen);
                }
            }
        }
        if out.states >= max_states {
            return out;
        }
        for (i, &t) in scope.moving.iter().enumerate() {
            if scope.not_forked(i, state) {
                continue;
            }
            let Next::At(stop) = state.next(model, t, window.end[t]) else {
                continue;
            };
            // Copied only for a thread that can move: most of a state's threads are blocked.
            let op = op_at(model, t, stop);
            let step = if state.may_advance(model, t, stop) {
                Some(stop)
            } else if matches!(op, ModelOp::LoopExit { mutex: Some(_), .. }) {
                None
            } else {
                continue;
            };
            next.clone_from(state);
            let moved = match step {
                Some(stop) => next.advance(model, t, stop),
                None => next.release_to_wait(model, t, op),
            };
            if !moved {
                continue;
            }
            let Some(kept) = visited.add_new(&next, &scope) else {
                continue;
            };
            // Nothing new lies ahead of it, nor of any state after it.
            let Some(d) = distance(&next, &open) else {
                continue;
            };
            nodes.push(Node {
                parent: node,
                thread: t,
                from: state.pos[t],
                stop: step,
            });
            queue.push(
                d,
                Queued {
                    node: nodes.len() - 1,
                    state: kept,
                },
            );
        }
    }
    out.complete = true;
    out
}

/// A state waiting to be expanded.
struct Queued {
    node: usize,
    /// Its index in [`Visited`].
    state: usize,
}

/// The states waiting, smallest distance first, then first queued. Distances are event counts,
/// so each has a first-in first-out list of its own, and a heap holds only the distances that
/// have states: one heap of all the states (ordered by distance and a running count) was a
/// thirteenth of app_tpool's detect.
#[derive(Default)]
struct Queue {
    /// Per distance, its states in the order they were queued.
    at: Vec<VecDeque<Queued>>,
    /// The distances whose lists are not empty, each once.
    distances: BinaryHeap<Reverse<usize>>,
}

impl Queue {
    fn push(&mut self, distance: usize, queued: Queued) {
        if self.at.len() <= distance {
            self.at.resize_with(distance + 1, VecDeque::new);
        }
        if self.at[distance].is_empty() {
            self.distances.push(Reverse(distance));
        }
        self.at[distance].push_back(queued);
    }

    fn pop(&mut self) -> Option<Queued> {
        let &Reverse(distance) = self.distances.peek()?;
        let list = &mut self.at[distance];
        let queued = list.pop_front();
        if list.is_empty() {
            self.distances.pop();
        }
        queued
    }
}

/// What a search over one window moves, found once for all its states: a program that starts a
/// thread per job has thousands, of which a state the search reaches has moved a few (htslib's
/// thrash_threads2: 9,001 threads in one window), and a step, a state's words and its deadlock
/// check cost each thread.
struct Scope<'w> {
    window: &'w Window,
    /// The threads with events in the window, ascending; the others stay where it starts them.
    moving: Vec<usize>,
    /// A thread that does not move can go on past the window's end, so no state of the window is
    /// a deadlock (a window's end never looks like one).
    outside_goes_on: bool,
    /// The threads that end the process once done ([`Model::ends_process`]).
    enders: Vec<usize>,
    /// Per moving thread: the fork that creates it, when its first step in the window is its
    /// start. Most of such a program's threads are not forked yet in a state, and this says so
    /// without a look at their events.
    forked_by: Vec<Option<At>>,
}

impl<'w> Scope<'w> {
    /// Of a search over `window` from `initial`, the state at its start.
    fn new(model: &Model, window: &'w Window, initial: &State) -> Scope<'w> {
        let (moving, still): (Vec<usize>, Vec<usize>) =
            (0..model.threads.len()).partition(|&t| window.start[t] < window.end[t]);
        let outside_goes_on = still
            .iter()
            .any(|&t| initial.next(model, t, window.end[t]) == Next::Cut);
        let forked_by = moving
            .iter()
            .map(|&t| match initial.next(model, t, window.end[t]) {
                Next::At(stop)
                    if matches!(op_at(model, t, stop), ModelOp::Start { forked: true }) =>
                {
                    model.fork_of(t)
                }
                _ => None,
            })
            .collect();
        Scope {
            window,
            moving,
            outside_goes_on,
            enders: model.process_enders().collect(),
            forked_by,
        }
    }

    /// Whether the `i`-th moving thread waits for its fork in `state`.
    fn not_forked(&self, i: usize, state: &State) -> bool {
        let t = self.moving[i];
        state.pos[t] == self.window.start[t]
            && self.forked_by[i].is_some_and(|fork| state.pos[fork.thread] <= fork.index)
    }
}

/// Words per chunk of [`Visited`].
const CHUNK: usize = 1 << 16;

/// The states the search reached, each stored once as the words of [`State::encode`] (the queue
/// names them by index), found by their hash. Every state reached is hashed with FxHash, since
/// SipHash (the default, made to resist keys an adversary picks) buys nothing on states of our own
/// making and cost 21% of memcached's detect; each hash is computed once, so that growing the
/// table rehashes numbers, not states (with a `HashSet<State>`, hashing states and growing the set
/// took about a third of the samples of pigz's detect).
#[derive(Default)]
struct Visited {
    /// The states' words, in chunks of [`CHUNK`] (or one state's, if more) that never move: one
    /// `Vec` of millions of states spent a sixth of app_tpool's detect copying them as it
    /// doubled, and one of words, growing by `mremap`, had the kernel fault in fresh pages for
    /// every search.
    chunks: Vec<Vec<u32>>,
    /// Per state, its chunk, where its words begin in it, and how many there are: in `u32`,
    /// as `same_hash`, since every byte per state is a page the kernel faults in per search.
    spans: Vec<[u32; 3]>,
    /// The words of the state being added.
    scratch: Vec<u32>,
    /// Per state, the index of the state added before it with the same hash ([`NO_STATE`]: none).
    same_hash: Vec<u32>,
    /// Per hash, the index of the last state added with it.
    last: FxHashMap<u64, u32>,
}

/// No state, in [`Visited::same_hash`].
const NO_STATE: u32 = u32::MAX;

/// A count or index of the search in 32 bits.
fn word(x: usize) -> u32 {
    u32::try_from(x).expect("a search's states and words fit in 32 bits")
}

impl Visited {
    /// The words of state `index`.
    fn get(&self, index: usize) -> &[u32] {
        let [chunk, start, len] = self.spans[index].map(|x| x as usize);
        &self.chunks[chunk][start..start + len]
    }

    /// Adds `state` (of a search over `scope`) unless an equal one is there; gives the new one's
    /// index.
    fn add_new(&mut self, state: &State, scope: &Scope) -> Option<usize> {
        self.scratch.clear();
        state.encode(&scope.moving, &scope.window.start, &mut self.scratch);
        let hash = FxBuildHasher.hash_one(&self.scratch);
        let mut at = self.last.get(&hash).copied().unwrap_or(NO_STATE);
        while at != NO_STATE {
            if self.get(at as usize) == self.scratch {
                return None;
            }
            at = self.same_hash[at as usize];
        }
        let words = self.scratch.len();
        if self
            .chunks
            .last()
            .is_none_or(|c| c.capacity() - c.len() < words)
        {
            self.chunks.push(Vec::with_capacity(CHUNK.max(words)));
        }
        let chunk = self.chunks.len() - 1;
        let start = self.chunks[chunk].len();
        self.chunks[chunk].extend_from_slice(&self.scratch);
        let index = self.spans.len();
        self.spans.push([word(chunk), word(start), word(words)]);
        let before = self.last.insert(hash, word(index));
        self.same_hash.push(before.unwrap_or(NO_STATE));
        Some(index)
    }
}

/// Where a race search's variable is accessed: per thread and per site and kind of access, the
/// event indices, and which two of those conflict.
struct Guide {
    /// The distinct (site, kind) of the variable's accesses in the window.
    tags: Vec<(SiteId, AccessKind)>,
    /// `at[thread][tag]`: the indices of the thread's accesses with that tag, ascending.
    at: Vec<Vec<Vec<usize>>>,
    /// Conflicting tag pairs, with the key of the race they would show.
    pairs: Vec<(usize, usize, Vec<SiteId>)>,
}

impl Guide {
    fn new(model: &Model, window: &Window, var: VarId) -> Guide {
        let mut tags: Vec<(SiteId, AccessKind)> = Vec::new();
        let mut at: Vec<Vec<Vec<usize>>> = vec![Vec::new(); model.threads.len()];
        for (t, thread) in model.threads.iter().enumerate() {
            let span = window.start[t]..window.end[t].min(thread.events.len());
            for index in span {
                let ModelEvent::Access { var: v, kind, site } = thread.events[index] else {
                    continue;
                };
                if v as VarId != var {
                    continue;
                }
                let tag = match tags.iter().position(|&x| x == (site, kind)) {
                    Some(tag) => tag,
                    None => {
                        tags.push((site, kind));
                        tags.len() - 1
                    }
                };
                if at[t].len() <= tag {
                    at[t].resize(tag + 1, Vec::new());
                }
                at[t][tag].push(index);
            }
        }
        let mut pairs = Vec::new();
        for (a, &(sa, ka)) in tags.iter().enumerate() {
            for (b, &(sb, kb)) in tags.iter().enumerate().skip(a) {
                if ka.conflicts_with(kb) {
                    let mut key = vec![sa, sb];
                    key.sort_unstable();
                    pairs.push((a, b, key));
                }
            }
        }
        Guide { tags, at, pairs }
    }

    /// The indices in `pairs` of those whose key is not in `seen`.
    fn open(&self, seen: &HashSet<Vec<SiteId>>) -> Vec<usize> {
        (0..self.pairs.len())
            .filter(|&p| !seen.contains(&self.pairs[p].2))
            .collect()
    }

    /// How far `state` is from showing a race of one of the `open` tag pairs: over those and two
    /// distinct threads, the least number of events the two must still run for each to have its
    /// access in its current segment. `None`: no such race lies ahead.
    fn distance(
        &self,
        model: &Model,
        window: &Window,
        state: &State,
        open: &[usize],
        reach: &mut Reach,
    ) -> Option<usize> {
        if open.is_empty() {
            return None;
        }
        // Per tag, the two nearest threads: (distance, thread).
        let mut nearest = std::mem::take(&mut reach.nearest);
        nearest.clear();
        nearest.resize(self.tags.len(), [(usize::MAX, usize::MAX); 2]);
        for t in 0..self.at.len() {
            // A thread that makes none of the accesses is near none of them.
            if self.at[t].is_empty() {
                continue;
            }
            for (tag, &d) in self.row(model, window, state, t, reach).iter().enumerate() {
                let best = &mut nearest[tag];
                if d < best[0].0 {
                    best[1] = best[0];
                    best[0] = (d, t);
                } else if d < best[1].0 {
                    best[1] = (d, t);
                }
            }
        }
        // A plain loop that stops at 0: an app's variable can have hundreds of open pairs, and
        // the iterator chain this was (a closure call per pair) took half of the distance's time.
        let mut least = usize::MAX;
        for &p in open {
            let (a, b, _) = &self.pairs[p];
            let (x, y) = (nearest[*a], nearest[*b]);
            for (p, q) in [(x[0], y[0]), (x[0], y[1]), (x[1], y[0])] {
                if p.1 != q.1 && p.0 != usize::MAX && q.0 != usize::MAX {
                    least = least.min(p.0 + q.0);
                }
            }
            if least == 0 {
                break;
            }
        }
        reach.nearest = nearest;
        (least != usize::MAX).then_some(least)
    }

    /// Per tag, how many events thread `t` must still run from where `state` has it for its next
    /// access with that tag to be in its current segment (`usize::MAX`: it makes none), computed
    /// the first time the search has the thread there.
    fn row<'r>(
        &self,
        model: &Model,
        window: &Window,
        state: &State,
        t: usize,
        reach: &'r mut Reach,
    ) -> &'r [usize] {
        let tags = self.tags.len();
        let slot = 2 * (state.pos[t] - window.start[t]) + usize::from(state.waiting(t));
        let mut row = reach.row_at[t][slot];
        if row == NOT_YET {
            row = u32::try_from(reach.rows.len() / tags.max(1))
                .expect("a search's rows fit in 32 bits");
            reach.row_at[t][slot] = row;
            let segment = segment(model, window, state, t);
            let at = &self.at[t];
            reach.rows.extend((0..tags).map(|tag| {
                let Some(indices) = at.get(tag) else {
                    return usize::MAX;
                };
                let i = indices.partition_point(|&x| x < segment.start);
                match indices.get(i) {
                    None => usize::MAX,
                    Some(&next) if next < segment.end => 0,
                    Some(&next) => next - segment.start,
                }
            }));
        }
        let start = row as usize * tags;
        &reach.rows[start..start + tags]
    }
}

/// No row yet, in [`Reach::row_at`].
const NOT_YET: u32 = u32::MAX;

/// What a race search's [`Guide`] keeps between states: a thread's distances to the tags
/// depend only on its position and whether it waits, and a search reaches each thread at few of
/// those, each in many states (the scan to the segment's end and a binary search per tag, done
/// afresh for every state, were a sixth of app_tpool's detect).
struct Reach {
    /// Per thread, per position from the window's start (times two, plus one if it waits): the
    /// row's number in `rows`, or [`NOT_YET`].
    row_at: Vec<Vec<u32>>,
    /// The rows, one distance per tag each.
    rows: Vec<usize>,
    /// Per tag, the two nearest threads, rebuilt for each state.
    nearest: Vec<[(usize, usize); 2]>,
}

impl Reach {
    /// Room for every position the search can have each thread at: from the window's start to
    /// the end of the part of the thread it may run.
    fn new(model: &Model, window: &Window) -> Reach {
        let row_at = model
            .threads
            .iter()
            .enumerate()
            .map(|(t, thread)| {
                let end = window.end[t].min(thread.events.len());
                vec![NOT_YET; 2 * (end.saturating_sub(window.start[t]) + 1)]
            })
            .collect();
        Reach {
            row_at,
            rows: Vec::new(),
            nearest: Vec::new(),
        }
    }
}

/// A finding waiting for its schedule.
type Pending = Box<dyn FnOnce(Schedule) -> Finding>;

/// The observed order up to the window's start, then the sync events to node `node`.
fn schedule(model: &Model, window: &Window, nodes: &[Node], mut node: usize) -> Schedule {
    let mut steps = Vec::new();
    while node != ROOT {
        let n = &nodes[node];
        let through = n.stop.map_or(n.from, |s| s + 1);
        for index in (n.from..through).rev() {
            if model.threads[n.thread].events[index].is_sync() {
                steps.push(At {
                    thread: n.thread,
                    index,
                });
            }
        }
        node = n.parent;
    }
    steps.reverse();
    Schedule {
        prefix: model.cut_order(&window.start).len(),
        head: window.start.clone(),
        steps,
    }
}

/// The accesses of `thread`'s current segment: from its position to its next constraining event
/// (or the window's end); none while it waits at a wait-loop exit (they were made before the
/// wait released the mutex).
fn segment(model: &Model, window: &Window, state: &State, thread: usize) -> std::ops::Range<usize> {
    let from = state.pos[thread];
    if state.waiting(thread) {
        return from..from;
    }
    let to = model
        .next_stop(thread, from)
        .unwrap_or(usize::MAX)
        .min(window.end[thread])
        .min(model.threads[thread].events.len());
    from..to.max(from)
}

/// Conflicting accesses to `var` in the current segments of two threads, keyed by their sites.
fn races(model: &Model, scope: &Scope, state: &State, var: VarId) -> Vec<(Vec<SiteId>, Pending)> {
    let accesses = |t: usize| {
        segment(model, scope.window, state, t).filter_map(move |index| {
            match model.threads[t].events[index] {
                ModelEvent::Access { var: v, kind, site } if v as VarId == var => {
                    Some((At { thread: t, index }, kind, site))
                }
                _ => None,
            }
        })
    };
    let mut out: Vec<(Vec<SiteId>, Pending)> = Vec::new();
    // A thread that does not move has no segment in the window.
    for (i, &a) in scope.moving.iter().enumerate() {
        for (x, kx, sx) in accesses(a) {
            for &b in &scope.moving[i + 1..] {
                for (y, ky, sy) in accesses(b) {
                    if kx.conflicts_with(ky) {
                        let mut key = vec![sx, sy];
                        key.sort_unstable();
                        out.push((
                            key,
                            Box::new(move |schedule| Finding::Race {
                                first: x,
                                second: y,
                                schedule,
                            }),
                        ));
                    }
                }
            }
        }
    }
    out
}

/// Live threads of which none can move, keyed by the sites of the operations they block in. A
/// thread at a try operation is never one of them: where the recorded outcome cannot happen, the
/// real operation has the other and the thread goes on beyond the model ([`State::escapes`]).
fn deadlock(model: &Model, scope: &Scope, state: &State) -> Option<(Vec<SiteId>, Pending)> {
    if scope.outside_goes_on || model.process_ended(scope.enders.iter().copied(), &state.pos) {
        return None;
    }
    // The threads that do not move are done (or go on: then there is no deadlock).
    let mut blocked = Vec::new();
    for &t in &scope.moving {
        match state.next(model, t, scope.window.end[t]) {
            Next::Finished => {}
            Next::Cut => return None,
            Next::At(stop) => {
                let op = op_at(model, t, stop);
                if state.enabled(model, t, op) || state.escapes(model, t, stop, op) {
                    return None;
                }
                blocked.push(At {
                    thread: t,
                    index: stop,
                });
            }
        }
    }
    if blocked.is_empty() {
        return None;
    }
    let mut key: Vec<SiteId> = blocked
        .iter()
        .filter_map(|at| model.threads[at.thread].observed_at(at.index))
        .map(|o| o.site)
        .collect();
    key.sort_unstable();
    Some((
        key,
        Box::new(move |schedule| Finding::Deadlock { blocked, schedule }),
    ))
}

/// The operation of a constraining event ([`ModelOp::Nop`] for anything else).
fn op_at(model: &Model, thread: usize, index: usize) -> ModelOp {
    match model.threads[thread].events[index] {
        ModelEvent::Sync { op, .. } => op.get(),
        ModelEvent::Access { .. } => ModelOp::Nop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prepare::prepare;
    use crate::testkit::{exit_inside_a_critical_section, sections_then_race, Run};
    use crate::window::{split, whole};

    #[test]
    fn a_race_that_needs_a_step_after_the_exit_is_not_found() {
        let races = |exit| {
            let model = exit_inside_a_critical_section(exit);
            let s = search(
                &model,
                &whole(&model),
                Goal::Race { var: 0 },
                1,
                1000,
                &mut HashSet::new(),
            );
            s.findings.len()
        };
        // Main's write comes after its unlock, which comes after the exit.
        assert_eq!(races(ModelOp::Exit), 0);
        assert_eq!(races(ModelOp::Nop), 1, "without the exit it races");
    }

    /// Threads 1 and 2 each run `k` critical sections on a mutex of their own, as main does,
    /// then write one variable: a race only at the end of both, behind (k + 1)^3 interleavings.
    fn race_behind_independent_sections(k: usize) -> Model {
        const D: u64 = 0x100;
        let mut r = Run::new(3);
        r.fork(0, 1).start(1).fork(0, 2).start(2);
        for _ in 0..k {
            for t in 0..3 {
                let m = 0x900 + 0x10 * u64::from(t);
                r.lock(t, m).unlock(t, m);
            }
        }
        r.w(1, D, 1).w(2, D, 2);
        prepare(r.traces()).model.restrict(Some(0)).0
    }

    #[test]
    fn a_race_search_goes_to_the_pair_first() {
        let model = race_behind_independent_sections(20);
        let s = search(
            &model,
            &whole(&model),
            Goal::Race { var: 0 },
            1,
            1000,
            &mut HashSet::new(),
        );
        let [Finding::Race { first, second, .. }] = &s.findings[..] else {
            panic!("{s:?}")
        };
        assert_eq!((first.thread, second.thread), (1, 2));
        // Breadth-first, the pair lies past every state with fewer than 80 steps of threads 1
        // and 2: tens of thousands.
        assert!(s.states < 1000, "{}", s.states);
    }

    #[test]
    fn a_race_search_with_every_pair_found_expands_nothing() {
        let model = race_behind_independent_sections(20);
        let mut seen = HashSet::from([vec![1, 2]]);
        let s = search(
            &model,
            &whole(&model),
            Goal::Race { var: 0 },
            1,
            1000,
            &mut seen,
        );
        assert!(
            s.complete && s.findings.is_empty() && s.states == 0,
            "{s:?}"
        );
    }

    #[test]
    fn the_queue_gives_the_nearest_state_first_then_the_first_queued() {
        let mut queue = Queue::default();
        let push =
            |queue: &mut Queue, distance, node| queue.push(distance, Queued { node, state: node });
        for (distance, node) in [(2, 0), (0, 1), (2, 2), (1, 3), (0, 4)] {
            push(&mut queue, distance, node);
        }
        let mut popped = vec![queue.pop().unwrap().node];
        // A nearer state queued later still goes before the farther ones.
        push(&mut queue, 0, 5);
        popped.extend(std::iter::from_fn(|| queue.pop()).map(|q| q.node));
        assert_eq!(popped, [1, 4, 5, 3, 0, 2]);
    }

    #[test]
    fn a_window_search_starts_from_the_observed_prefix() {
        let p = prepare(sections_then_race().traces());
        let (model, _) = p.model.restrict(Some(0));
        let w = split(&model, 8);
        assert_eq!(w.len(), 2);
        let s = search(
            &model,
            &w[1],
            Goal::Race { var: 0 },
            1,
            1000,
            &mut HashSet::new(),
        );
        let [Finding::Race { schedule, .. }] = &s.findings[..] else {
            panic!("{s:?}")
        };
        // The observed order before seq 9, then the window's steps: thread 0 is about to write
        // when the window starts; thread 1 runs its last section.
        let seqs: Vec<u64> = schedule
            .all(&model)
            .map(|at| model.threads[at.thread].observed_at(at.index).unwrap().seq)
            .collect();
        assert_eq!(schedule.prefix, 8);
        assert_eq!(seqs, (1..=10).collect::<Vec<u64>>());
    }
}
