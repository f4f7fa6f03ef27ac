//! Candidates: the findings as data, the `candidates.json` file format and the human summary.
//!
//! Takes the solver's findings with the models their events index; gives [`CandidatesFile`],
//! written as `candidates.json` in the trace directory ([`write`], streamed, each schedule's
//! head as counts; [`read`], with the trace's threads, gives it back) and printed with `--format json`, and a text summary that names sites
//! as `file:line` when the binary is at hand. A schedule the analysis found is held as positions
//! of the run's sync operations, most of it as a cut of the observed order, and turned into steps
//! only as it is written or read ([`ScheduleOut::steps`]).
//!
//! `candidates.json` (serde JSON, one object):
//! - `format_version`: [`FORMAT_VERSION`]; readers refuse other versions.
//! - `binary`, `build_id`: the recorded executable, from `meta.json`.
//! - `stats`: counts of the analysis (prepare, with the semaphores whose initial count was inferred;
//!   filter; solve: where every race pair went), and
//!   `not_decided`: per object, the race pairs a limit left undecided (`object`, one pair's
//!   `accesses`, `pairs`, `limit`: `states` | `window`), and `not_written`: the candidates
//!   beyond `--max-candidates` (the last in the order below), counted, not written.
//! - `candidates`: in a fixed order (races by object address, then deadlocks, then the first
//!   fallback of each race candidate that has one, then the second, ...), each with `kind`:
//!   - `"race"`: `object` (`addr`, `len`: the shared byte range), `accesses` (two of `tid`,
//!     `site`, `access`: `read` | `write` | `atomic_read` | `atomic_write`; a free is a `write`),
//!     `schedule` and, for a fallback, `fallback_of`: the number of the candidate at the same two
//!     sites it stands in for (another instance of them, with its own schedule: replay tries it
//!     only if that candidate's replay, and that of every fallback of it before this one, did not
//!     confirm it; [`crate::solve::fallback`]);
//!   - `"deadlock"`: `blocked` (one step per blocked thread: the operation it waits in) and
//!     `schedule`;
//!   - `"atomicity"` (with `--atomicity`, after the deadlocks): `object`, `begin` (the step of
//!     the transaction's `tx_begin`), `accesses` (e1, f, e2), `after` (per access, the sync
//!     operations its thread had done before it: replay watches for that run), `pattern` (`read_write_read`,
//!     `read_write_write`, `write_read_write`, `write_write_read` or `write_write_write`) and
//!     `schedule`.
//! - `stats.atomicity` (with `--atomicity`): `transactions`, `predicted`, `no_schedule`,
//!   `unbracketed` ([`crate::atomicity::Counts`]).
//! - A `schedule` runs from the start of the run: for each thread a prefix of its sync
//!   operations, of which the first `prefix_steps` are the observed order before the window the
//!   candidate was found in. In the file it is `head`, then `steps`. `head` is a cut of the run's
//!   observed order, as `[tid, count]` pairs (threads with none left out): its steps are, of each
//!   thread, its first `count` sync operations, in the order the run did them (by seq; an
//!   operation that never completed right after its thread's previous one). Readers rebuild them
//!   from the trace in the same directory ([`read`] takes its threads). `steps` lists the steps
//!   after the head, each with `tid`, `op` (the name `ilgen dump` prints, one of
//!   [`ilgen_trace::OpKind`]), `object` (address, for operations on an object), `peer` (the
//!   other thread of fork and join, absent when it is no recorded thread), `site` (`null` for
//!   thread start and end), `seq` (observed seq, absent for an operation that never completed),
//!   `op_index` (the thread's n-th sync operation, 0-based: replay matches operations by it)
//!   and, for a timed operation, `timed_out` (its recorded outcome, which replay enforces); a
//!   reader refuses a step that is not the trace's. Most of a schedule is its head: listed, a
//!   long run's made each candidate cost the run, not its window (APR testlock: 260 MB).
//!   Serialized other than by [`write`], a schedule is `steps`, whole.
//!
//! Beside it, candidate i (1-based, in this order) has its schedule as replay reads it in
//! `schedule-<i>.json` ([`ilgen_trace::schedule`]), written when a replay needs it
//! ([`write_replay_schedule`]: `ilgen detect` before replaying the candidate, `ilgen replay`
//! when the file is missing).
//!
//! Versions:
//! - 1: first format.
//! - 2: a step's `site` is `null` when absent (was u32::MAX), its `peer` absent rather than
//!   u32::MAX; `op` is checked on reading.
//! - 3: `build_id` (the recorded executable's ELF build id) replaces `binary_hash`; candidates
//!   of kind `atomicity` and `stats.atomicity`.
//! - 4: a schedule is a delta on the previous candidate's (`shared`); `stats.not_written`.
//! - 5: fallback candidates (`fallback_of` on races, after every other candidate);
//!   `stats.solve.pairs_fallback`.
//! - 6: a step's `timed_out` (absent unless the operation is timed): the recorded outcome of
//!   the wake of a timed condition wait, a timed lock or a timed semaphore wait.
//! - 7: a schedule's `head` (counts per thread, read against the trace) replaces `shared`: the
//!   listed steps are only those after the head.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::fmt::Write as _;
use std::io::{BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ilgen_trace::format::{ThreadHeader, ThreadTrace};
use ilgen_trace::schedule as replay;
use ilgen_trace::{
    known_site, known_thread, AccessKind, OpKind, SiteId, SyncOp, ThreadId, PENDING,
};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::atomicity::{Counts as AtomicityCounts, Pattern, Prediction};
use crate::filter::FilterStats;
use crate::finding::{Finding, Schedule};
use crate::model::{At, Model, ModelEvent, ModelThread, Recorded, VarId};
use crate::prepare::SharedObject;
use crate::solve::{Limit, SolveStats};

pub const FORMAT_VERSION: u32 = 7;
pub const FILE_NAME: &str = "candidates.json";

/// The file in memory: the schedules the analysis found compact, those [`read`] gives whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CandidatesFile {
    pub format_version: u32,
    pub binary: String,
    pub build_id: String,
    pub stats: Stats,
    pub candidates: Vec<Candidate>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub threads: usize,
    pub sync_events: usize,
    pub accesses_read: usize,
    /// Accesses to shared objects, one per object and segment.
    pub accesses_kept: usize,
    /// Semaphores the run used, and of those the ones whose initial count was inferred (their
    /// `sem_init` or `sem_open` was not recorded): the least count the observed order needs.
    #[serde(default)]
    pub semaphores: usize,
    #[serde(default)]
    pub semaphores_inferred: usize,
    pub filter: FilterStats,
    pub solve: SolveStats,
    /// Findings the solver made that name no events of their model (never expected; counted so
    /// that none disappears unseen).
    #[serde(default)]
    pub findings_unconvertible: usize,
    /// Per variable, race pairs a limit left undecided: one pair for all, and the limit to raise.
    #[serde(default)]
    pub not_decided: Vec<NotDecided>,
    /// Candidates beyond `--max-candidates`: found, not written (and not replayed).
    #[serde(default)]
    pub not_written: usize,
    /// With `--atomicity`: transactions, and where the violations went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomicity: Option<AtomicityCounts>,
}

/// Race pairs of one object that neither a witness nor a proof decided: the search stopped at
/// `limit`. `accesses` is one of the `pairs`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct NotDecided {
    pub object: ObjectRange,
    pub accesses: [AccessSide; 2],
    pub pairs: u64,
    pub limit: Limit,
}

/// The object and the two accesses of a race pair at model positions `first` and `second`.
pub fn race_sides(
    model: &Model,
    vars: &[SharedObject],
    first: At,
    second: At,
) -> Option<(ObjectRange, [AccessSide; 2])> {
    let (var, a) = access_side(model, first)?;
    let (_, b) = access_side(model, second)?;
    Some((object_range(vars, var)?, [a, b]))
}

/// The object and side of the access at model position `at`.
fn access_side(model: &Model, at: At) -> Option<(VarId, AccessSide)> {
    match model.threads.get(at.thread)?.events.get(at.index)? {
        ModelEvent::Access { var, kind, site } => Some((
            *var as VarId,
            AccessSide {
                tid: model.threads[at.thread].tid,
                site: *site,
                access: (*kind).into(),
            },
        )),
        ModelEvent::Sync { .. } => None,
    }
}

/// How many sync operations the thread of `at` had done before it.
fn syncs_before(model: &Model, at: At) -> u32 {
    let thread = &model.threads[at.thread];
    thread
        .events
        .range(0..at.index)
        .rev()
        .find_map(|e| thread.observed_of(e))
        .map_or(0, |o| o.op_index + 1)
}

fn object_range(vars: &[SharedObject], var: VarId) -> Option<ObjectRange> {
    let object = vars.get(var)?;
    Some(ObjectRange {
        addr: object.addr,
        len: object.len,
    })
}

/// The candidate of an atomicity violation; `None` if its events are not those of `model`.
/// `ops`: [`Ops::of`] the program's model.
pub fn atomicity(
    model: &Model,
    ops: &Arc<Ops>,
    vars: &[SharedObject],
    p: &Prediction,
) -> Option<Candidate> {
    let (var, e1) = access_side(model, p.e1)?;
    let (_, f) = access_side(model, p.f)?;
    let (_, e2) = access_side(model, p.e2)?;
    Some(Candidate::Atomicity {
        object: object_range(vars, var)?,
        begin: step(model, p.begin)?,
        accesses: [e1, f, e2],
        after: [p.e1, p.f, p.e2].map(|at| syncs_before(model, at)),
        pattern: p.pattern,
        schedule: schedule_out(model, ops, &p.schedule)?,
    })
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Candidate {
    Race {
        object: ObjectRange,
        accesses: [AccessSide; 2],
        schedule: ScheduleOut,
        /// Of a fallback: the number (1-based) of the candidate it stands in for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fallback_of: Option<usize>,
    },
    Deadlock {
        blocked: Vec<Step>,
        schedule: ScheduleOut,
    },
    /// `ilgen detect --atomicity` ([`crate::atomicity`]): accesses e1 and e2 of one transaction
    /// and f of another thread, in the order e1 f e2 the schedule reaches.
    Atomicity {
        object: ObjectRange,
        /// The transaction's `tx_begin`.
        begin: Step,
        /// e1, f, e2.
        accesses: [AccessSide; 3],
        /// Per access, the sync operations its thread had done before it: replay watches for
        /// that run of its line.
        after: [u32; 3],
        pattern: Pattern,
        schedule: ScheduleOut,
    },
}

impl Candidate {
    /// The schedule that reaches it.
    pub fn schedule(&self) -> &ScheduleOut {
        match self {
            Candidate::Race { schedule, .. }
            | Candidate::Deadlock { schedule, .. }
            | Candidate::Atomicity { schedule, .. } => schedule,
        }
    }

    fn schedule_mut(&mut self) -> &mut ScheduleOut {
        match self {
            Candidate::Race { schedule, .. }
            | Candidate::Deadlock { schedule, .. }
            | Candidate::Atomicity { schedule, .. } => schedule,
        }
    }

    /// Of a fallback: the number of the candidate it stands in for.
    pub fn fallback_of(&self) -> Option<usize> {
        match self {
            Candidate::Race { fallback_of, .. } => *fallback_of,
            Candidate::Deadlock { .. } | Candidate::Atomicity { .. } => None,
        }
    }

    /// Of a race: its two access sites, in order (whichever thread made which). What makes races
    /// the same for replay: a replay that proves a race at these sites proves every candidate at
    /// them (the report shows one finding per pair of lines), so `ilgen-confirm` replays the
    /// candidates at one pair in turn, and `--shard` keeps them in one shard.
    pub fn race_sites(&self) -> Option<[SiteId; 2]> {
        match self {
            Candidate::Race { accesses, .. } => {
                let mut pair = [accesses[0].site, accesses[1].site];
                pair.sort_unstable();
                Some(pair)
            }
            Candidate::Deadlock { .. } | Candidate::Atomicity { .. } => None,
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectRange {
    pub addr: u64,
    pub len: u64,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessSide {
    pub tid: ThreadId,
    pub site: SiteId,
    pub access: AccessName,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AccessName {
    Read,
    Write,
    AtomicRead,
    AtomicWrite,
    /// The free of a block (`free`, `delete`, a moving `realloc`): a write over all of it.
    Free,
    /// The unmapping of a mapping (`munmap`, `mremap`, a `MAP_FIXED` mapping over it):
    /// a write over all of it.
    Unmap,
    /// The destroy of a sync object (`pthread_mutex_destroy`, ...): a write of its first byte.
    Destroy,
}

impl From<AccessKind> for AccessName {
    fn from(k: AccessKind) -> Self {
        match k {
            AccessKind::Read => AccessName::Read,
            AccessKind::Write => AccessName::Write,
            AccessKind::AtomicRead => AccessName::AtomicRead,
            AccessKind::AtomicWrite => AccessName::AtomicWrite,
        }
    }
}

impl AccessName {
    pub fn text(self) -> &'static str {
        match self {
            AccessName::Read => "read",
            AccessName::Write => "write",
            AccessName::AtomicRead => "atomic read",
            AccessName::AtomicWrite => "atomic write",
            AccessName::Free => "free",
            AccessName::Unmap => "unmap",
            AccessName::Destroy => "destroy",
        }
    }
}

/// A schedule. Serialized by [`write`], its head is counts and its tail listed (see
/// [`IN_FILE`]); anywhere else, whole. One the analysis (or [`read`]) found is held compactly ([`Compact`]) and
/// its [`Step`]s made only as they are read ([`ScheduleOut::steps`]): a schedule runs from the
/// start of the run, and a thousand of a 96-thread run's, whole, took 3.6 GiB.
#[derive(Deserialize, Clone)]
#[serde(from = "WholeIn")]
pub struct ScheduleOut {
    pub prefix_steps: usize,
    held: Held,
}

#[derive(Clone)]
enum Held {
    Whole(Vec<Step>),
    Compact(Compact),
}

/// A schedule as positions of its model's sync operations: a head in the observed order, then a
/// tail. The head is, of each thread, its first `head[t]` sync operations, by [`OrderKey`]: what
/// the observed order of a cut is ([`Model::observed_order`]). Most of a schedule is such an
/// order (the cut path's all of it, the window path's up to its window), so a schedule takes 4
/// bytes a thread and 8 a step of its tail, not ~70 a step.
#[derive(Clone)]
struct Compact {
    ops: Arc<Ops>,
    head: Box<[u32]>,
    /// (thread, sync operation) of each step after the head.
    tail: Box<[(u32, u32)]>,
}

/// The recorded sync operations of a model's threads, with their tids: the model's own (by
/// `Arc`), not copies. One for a program serves the models restricted from it, which share its
/// recorded operations ([`Model::restrict`]), and their candidates: a candidate holds no copy of
/// its own, O(threads).
pub struct Ops {
    threads: Vec<(ThreadId, Recorded)>,
}

impl Ops {
    pub fn of(model: &Model) -> Arc<Ops> {
        Arc::new(Ops {
            threads: model
                .threads
                .iter()
                .map(|t| (t.tid, t.observed.clone()))
                .collect(),
        })
    }

    /// `ops` if they are `model`'s recorded operations, else `model`'s own.
    fn for_model(ops: &Arc<Ops>, model: &Model) -> Arc<Ops> {
        let same = ops.threads.len() == model.threads.len()
            && ops
                .threads
                .iter()
                .zip(&model.threads)
                .all(|((tid, o), t)| *tid == t.tid && o.same(&t.observed));
        match same {
            true => Arc::clone(ops),
            false => Ops::of(model),
        }
    }
}

/// Where a sync operation goes in an observed order: (seq, or for an operation that never
/// completed the seq of its thread's operation before it, thread, index).
type OrderKey = (u64, usize, u32);

/// The [`OrderKey`] of sync operation `sync` of `thread`, recorded with `seq`, `last` being the
/// seq of the thread's last completed operation before it (0 if none), and the `last` of its next
/// operation.
fn order_key(seq: u64, last: u64, thread: usize, sync: u32) -> (OrderKey, u64) {
    let last = if seq == PENDING { last } else { seq };
    ((last, thread, sync), last)
}

impl Compact {
    /// Of each thread its first `head[t]` operations in the observed order, then `steps`
    /// (thread, sync operation), as a head and a tail: the head goes on along `steps` while they
    /// are, of each thread, its next operations, and increasing by [`OrderKey`].
    fn of(ops: Arc<Ops>, mut head: Vec<u32>, steps: &[(u32, u32)]) -> Compact {
        // Of each thread, the seq its next operation's key starts from, and the key of its last
        // operation in the head: the head's last step has the greatest.
        let mut last = vec![0u64; ops.threads.len()];
        let mut previous = None;
        for (t, &n) in head.iter().enumerate() {
            let recorded = &ops.threads[t].1;
            // An operation that never completed is its thread's last: a walk of a step or two.
            last[t] = (0..n)
                .rev()
                .map(|sync| recorded.at(sync as usize).seq)
                .find(|&seq| seq != PENDING)
                .unwrap_or(0);
            if let Some(sync) = n.checked_sub(1) {
                previous = previous.max(Some((last[t], t, sync)));
            }
        }
        let in_head = steps
            .iter()
            .take_while(|&&(t, sync)| {
                let t = t as usize;
                if head[t] != sync {
                    return false;
                }
                let (key, l) = order_key(ops.threads[t].1.at(sync as usize).seq, last[t], t, sync);
                if previous.is_some_and(|p| p >= key) {
                    return false;
                }
                previous = Some(key);
                last[t] = l;
                head[t] += 1;
                true
            })
            .count();
        Compact {
            ops,
            head: head.into(),
            tail: steps[in_head..].into(),
        }
    }

    fn len(&self) -> usize {
        self.head.iter().map(|&n| n as usize).sum::<usize>() + self.tail.len()
    }

    /// The last `k` steps of the head, in order: the greatest [`OrderKey`]s, each thread's
    /// increasing along it, merged from the end.
    fn last_of_head(&self, k: usize) -> Vec<(u32, u32)> {
        // The key of operation `sync` of thread `t`: an operation that never completed takes
        // the seq of its thread's completed one before it (a walk of a step or two).
        let key = |t: usize, sync: u32| {
            let recorded = &self.ops.threads[t].1;
            let last = (0..=sync)
                .rev()
                .map(|s| recorded.at(s as usize).seq)
                .find(|&seq| seq != PENDING)
                .unwrap_or(0);
            (last, t, sync)
        };
        let mut heads: BinaryHeap<OrderKey> = (0..self.head.len())
            .filter_map(|t| Some(key(t, self.head[t].checked_sub(1)?)))
            .collect();
        let mut last = Vec::with_capacity(k);
        while last.len() < k {
            let Some((_, t, sync)) = heads.pop() else {
                break;
            };
            last.push((t as u32, sync));
            if let Some(before) = sync.checked_sub(1) {
                heads.push(key(t, before));
            }
        }
        last.reverse();
        last
    }

    /// Sync operation `sync` of thread `t`, as a step.
    fn step(&self, t: u32, sync: u32) -> Step {
        let (tid, observed) = &self.ops.threads[t as usize];
        step_of(*tid, observed, sync as usize)
    }
}

/// A schedule as [`read`] rebuilds it, whole, for serde.
#[derive(Deserialize)]
struct WholeIn {
    prefix_steps: usize,
    steps: Vec<Step>,
}

impl From<WholeIn> for ScheduleOut {
    fn from(w: WholeIn) -> ScheduleOut {
        ScheduleOut::whole(w.prefix_steps, w.steps)
    }
}

impl ScheduleOut {
    /// A schedule of these steps, the first `prefix_steps` of them the observed order before the
    /// window it was found in.
    pub fn whole(prefix_steps: usize, steps: Vec<Step>) -> ScheduleOut {
        ScheduleOut {
            prefix_steps,
            held: Held::Whole(steps),
        }
    }

    /// Its steps, in order, each made as it comes.
    pub fn steps(&self) -> Steps<'_> {
        let from = match &self.held {
            Held::Whole(steps) => Source::Whole(steps.iter()),
            Held::Compact(c) => {
                let mut order = Order {
                    c,
                    next: vec![0; c.head.len()],
                    last: vec![0; c.head.len()],
                    heads: BinaryHeap::with_capacity(c.head.len()),
                };
                for t in 0..c.head.len() {
                    order.push_next(t);
                }
                Source::Compact(order, c.tail.iter())
            }
        };
        Steps {
            left: self.len(),
            from,
        }
    }

    /// Its steps after the first `skip`, in order, as [`ScheduleOut::steps`] gives them: of a
    /// compact schedule, those of its head found from the head's end backwards, so that the
    /// summary's last steps of a long run's schedule do not merge the whole head (a third of
    /// APR testlock's detect).
    pub fn steps_after(&self, skip: usize) -> Box<dyn Iterator<Item = Step> + '_> {
        let Held::Compact(c) = &self.held else {
            return Box::new(self.steps().skip(skip));
        };
        let in_head = c.len() - c.tail.len();
        let from_head = c.last_of_head(in_head.saturating_sub(skip));
        let tail = &c.tail[skip.saturating_sub(in_head).min(c.tail.len())..];
        Box::new(
            from_head
                .into_iter()
                .chain(tail.iter().copied())
                .map(|(t, sync)| c.step(t, sync)),
        )
    }

    pub fn len(&self) -> usize {
        match &self.held {
            Held::Whole(steps) => steps.len(),
            Held::Compact(c) => c.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PartialEq for ScheduleOut {
    fn eq(&self, other: &ScheduleOut) -> bool {
        self.prefix_steps == other.prefix_steps
            && self.len() == other.len()
            && self.steps().eq(other.steps())
    }
}

impl Eq for ScheduleOut {}

impl std::fmt::Debug for ScheduleOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScheduleOut")
            .field("prefix_steps", &self.prefix_steps)
            .field("steps", &self.steps().collect::<Vec<_>>())
            .finish()
    }
}

/// [`ScheduleOut::steps`].
pub struct Steps<'a> {
    left: usize,
    from: Source<'a>,
}

enum Source<'a> {
    Whole(std::slice::Iter<'a, Step>),
    Compact(Order<'a>, std::slice::Iter<'a, (u32, u32)>),
}

/// A compact schedule's head, as it goes: each thread's next operation in the head, least
/// [`OrderKey`] first.
struct Order<'a> {
    c: &'a Compact,
    next: Vec<u32>,
    last: Vec<u64>,
    heads: BinaryHeap<Reverse<(OrderKey, u64)>>,
}

impl Order<'_> {
    fn push_next(&mut self, t: usize) {
        let sync = self.next[t];
        if sync < self.c.head[t] {
            let seq = self.c.ops.threads[t].1.at(sync as usize).seq;
            self.heads
                .push(Reverse(order_key(seq, self.last[t], t, sync)));
        }
    }

    fn pop(&mut self) -> Option<(u32, u32)> {
        let Reverse(((_, t, sync), last)) = self.heads.pop()?;
        self.next[t] += 1;
        self.last[t] = last;
        self.push_next(t);
        Some((t as u32, sync))
    }
}

impl Iterator for Steps<'_> {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        let step = match &mut self.from {
            Source::Whole(steps) => steps.next().cloned(),
            Source::Compact(order, tail) => {
                let (t, sync) = order.pop().or_else(|| tail.next().copied())?;
                Some(order.c.step(t, sync))
            }
        }?;
        self.left -= 1;
        Some(step)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Steps<'_> {}

thread_local! {
    /// Whether [`write`] runs on this thread: a schedule it writes names its head by counts,
    /// which only a reader holding the trace can expand. Serde gives a field's serializer no
    /// context.
    static IN_FILE: Cell<bool> = const { Cell::new(false) };
}

impl Serialize for ScheduleOut {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let in_file = IN_FILE.get();
        let mut out = s.serialize_struct("ScheduleOut", 2 + usize::from(in_file))?;
        out.serialize_field("prefix_steps", &self.prefix_steps)?;
        match &self.held {
            // The head's steps are not made at all: merging them was half of a long run's detect.
            Held::Compact(c) if in_file => {
                let head: Vec<(ThreadId, u32)> = c
                    .head
                    .iter()
                    .zip(&c.ops.threads)
                    .filter(|(&n, _)| n > 0)
                    .map(|(&n, (tid, _))| (*tid, n))
                    .collect();
                out.serialize_field("head", &head)?;
                let listed = c.tail.iter().map(|&(t, sync)| c.step(t, sync));
                out.serialize_field("steps", &StepsOut(RefCell::new(Some(listed))))?;
            }
            Held::Compact(_) | Held::Whole(_) => {
                if in_file {
                    out.serialize_field("head", &[(); 0])?;
                }
                out.serialize_field("steps", &StepsOut(RefCell::new(Some(self.steps()))))?;
            }
        }
        out.end()
    }
}

/// Steps serialized as a sequence as they come, none held.
struct StepsOut<I>(RefCell<Option<I>>);

impl<I: Iterator<Item = Step>> Serialize for StepsOut<I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let steps = self.0.borrow_mut().take().expect("serialized once");
        s.collect_seq(steps)
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub tid: ThreadId,
    pub op: OpKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<ThreadId>,
    pub site: Option<SiteId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    pub op_index: u32,
    /// A timed operation's recorded outcome ([`SyncOp::timed_out`]), for the wake of a timed
    /// wait, a timed lock and a timed semaphore wait only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
}

/// The candidate of one finding; `None` if its events are not those of `model` (never, for
/// findings the solver made from it). `ops`: [`Ops::of`] the model of the program `model` was
/// restricted from.
pub fn candidate(
    model: &Model,
    ops: &Arc<Ops>,
    vars: &[SharedObject],
    finding: &Finding,
) -> Option<Candidate> {
    match finding {
        Finding::Race {
            first,
            second,
            schedule,
        } => {
            let (object, accesses) = race_sides(model, vars, *first, *second)?;
            Some(Candidate::Race {
                object,
                accesses,
                schedule: schedule_out(model, ops, schedule)?,
                fallback_of: None,
            })
        }
        Finding::Deadlock { blocked, schedule } => Some(Candidate::Deadlock {
            blocked: blocked
                .iter()
                .map(|&at| step(model, at))
                .collect::<Option<_>>()?,
            schedule: schedule_out(model, ops, schedule)?,
        }),
    }
}

/// `schedule`, whose events are `model`'s, held compactly; `ops`: the recorded operations of
/// the program `model` was restricted from.
fn schedule_out(model: &Model, ops: &Arc<Ops>, schedule: &Schedule) -> Option<ScheduleOut> {
    // Each thread looked up once: a schedule's tail may be long, and a lookup per step was a
    // third of a lock-heavy run's detect.
    let threads: Vec<&ModelThread> = model.threads.iter().collect();
    // A thread's sync events are its recorded operations, all in order: the head's are its
    // first ones, counted, and the head's order is the one [`Compact`] merges them in.
    let head: Vec<u32> = threads
        .iter()
        .enumerate()
        .map(|(t, thread)| syncs_upto(thread, schedule.head.get(t).copied().unwrap_or(0)))
        .collect::<Option<_>>()?;
    let steps: Vec<(u32, u32)> = schedule
        .steps
        .iter()
        .map(|&at| {
            Some((
                at.thread as u32,
                sync_in(threads.get(at.thread)?, at.index)?,
            ))
        })
        .collect::<Option<_>>()?;
    Some(ScheduleOut {
        prefix_steps: schedule.prefix,
        held: Held::Compact(Compact::of(Ops::for_model(ops, model), head, &steps)),
    })
}

/// How many sync operations the thread's first `len` events hold: one more than the number of
/// the last of them.
fn syncs_upto(thread: &ModelThread, len: usize) -> Option<u32> {
    let events = &thread.events;
    match (0..len.min(events.len()))
        .rev()
        .find(|&i| events[i].is_sync())
    {
        Some(i) => sync_in(thread, i).map(|sync| sync + 1),
        None => Some(0),
    }
}

/// The thread's number of the sync event at `at`.
fn sync_of(model: &Model, at: At) -> Option<u32> {
    sync_in(model.threads.get(at.thread)?, at.index)
}

/// The thread's number of its sync event `index`.
fn sync_in(thread: &ModelThread, index: usize) -> Option<u32> {
    match thread.events.get(index)? {
        ModelEvent::Sync { sync, .. } if (*sync as usize) < thread.observed.len() => Some(*sync),
        _ => None,
    }
}

fn step(model: &Model, at: At) -> Option<Step> {
    let thread = model.threads.get(at.thread)?;
    Some(step_of(
        thread.tid,
        &thread.observed,
        sync_of(model, at)? as usize,
    ))
}

/// Sync operation `sync` of thread `tid`, whose recorded operations are `observed`, as a step.
fn step_of(tid: ThreadId, observed: &Recorded, sync: usize) -> Step {
    let o = observed.at(sync);
    // A wake counts as timed only after a wait that had a time limit: the thread's sync
    // operation before it (the predicate's reads may come between).
    let timed = match o.op {
        SyncOp::CondWake { .. } => sync
            .checked_sub(1)
            .is_some_and(|w| matches!(observed.at(w).op, SyncOp::CondWait { timed: true, .. })),
        _ => true,
    };
    Step {
        tid,
        op: o.op.kind(),
        object: o.op.object(),
        peer: o.op.peer_thread().and_then(known_thread),
        site: known_site(o.site),
        seq: (o.seq != PENDING).then_some(o.seq),
        op_index: o.op_index,
        timed_out: o.op.timed_out().filter(|_| timed),
    }
}

/// `candidates.json` as written: the fields of [`CandidatesFile`], its schedules as deltas.
#[derive(Serialize)]
struct WireOut<'a> {
    format_version: u32,
    binary: &'a str,
    build_id: &'a str,
    stats: &'a Stats,
    candidates: &'a [Candidate],
}

#[derive(Deserialize)]
struct Version {
    format_version: Option<u32>,
}

/// Writes `file` to `out` in the `candidates.json` format, without holding the text in memory.
pub fn write(file: &CandidatesFile, out: impl std::io::Write) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(out);
    IN_FILE.set(true);
    let written = serde_json::to_writer_pretty(
        &mut out,
        &WireOut {
            format_version: FORMAT_VERSION,
            binary: &file.binary,
            build_id: &file.build_id,
            stats: &file.stats,
            candidates: &file.candidates,
        },
    );
    IN_FILE.set(false);
    written?;
    writeln!(out)?;
    out.flush()
}

/// Reads the `candidates.json` at `path`, whose run's threads are `threads` (the trace beside it:
/// its schedules' heads are theirs); the error names the file and what to do (a file of another
/// format version, or a schedule the threads did not run, is refused: detect must run again).
pub fn read(path: &Path, threads: &[ThreadTrace]) -> Result<CandidatesFile, String> {
    let mut candidates = Vec::new();
    let (binary, build_id, stats, _) = read_each(path, threads, None, |_, c| candidates.push(c))?;
    Ok(CandidatesFile {
        format_version: FORMAT_VERSION,
        binary,
        build_id,
        stats,
        candidates,
    })
}

/// Candidate `number` (1-based, if the file has it) of the `candidates.json` at `path` (as
/// [`read`] reads it), the file's build id and how many candidates it has. The others are read
/// and checked but not kept.
pub fn read_one(
    path: &Path,
    threads: &[ThreadTrace],
    number: usize,
) -> Result<(Option<Candidate>, String, usize), String> {
    let mut found = None;
    // Number 0 is no candidate: it asks for an index none has.
    let index = number.checked_sub(1).unwrap_or(usize::MAX);
    let (_, build_id, _, count) = read_each(path, threads, Some(index), |_, c| found = Some(c))?;
    Ok((found, build_id, count))
}

/// Reads the file at `path`, of the run of `threads`, and gives each candidate (or only the one at
/// index `only`), in order, to `each` as it comes; returns the file's binary, build id, stats and
/// number of candidates.
fn read_each(
    path: &Path,
    threads: &[ThreadTrace],
    only: Option<usize>,
    each: impl FnMut(usize, Candidate),
) -> Result<(String, String, Stats, usize), String> {
    let open = || {
        std::fs::File::open(path)
            .map(BufReader::new)
            .map_err(|e| format!("failed to read {}: {e}", path.display()))
    };
    let bad = |e: serde_json::Error| {
        format!(
            "{} is not a candidates file ({e}); run `ilgen detect` again",
            path.display()
        )
    };
    let version: Version = serde_json::from_reader(open()?).map_err(bad)?;
    if version.format_version != Some(FORMAT_VERSION) {
        return Err(format!(
            "{} has format version {}, this ilgen reads {FORMAT_VERSION}; run `ilgen detect` \
             again",
            path.display(),
            version
                .format_version
                .map_or_else(|| "none".to_owned(), |v| v.to_string()),
        ));
    }
    let ops = Ops::of(&crate::prepare::skeleton(threads));
    let mut reader = Reader {
        path,
        thread_of: ops
            .threads
            .iter()
            .enumerate()
            .map(|(t, (tid, _))| (*tid, t))
            .collect(),
        ops,
        only,
        each,
        refused: None,
        count: 0,
    };
    let wire = serde::de::DeserializeSeed::deserialize(
        &mut reader,
        &mut serde_json::Deserializer::from_reader(open()?),
    );
    if let Some(refused) = reader.refused {
        return Err(refused);
    }
    let (binary, build_id, stats) = wire.map_err(bad)?;
    Ok((binary, build_id, stats, reader.count))
}

/// The serde visitor of [`read_each`]: the file's fields, and its candidates one at a time, each
/// schedule checked against the run's recorded operations and held by them.
struct Reader<'p, F> {
    path: &'p Path,
    ops: Arc<Ops>,
    /// The index in `ops` of each thread.
    thread_of: HashMap<ThreadId, usize>,
    /// The index of the one candidate wanted.
    only: Option<usize>,
    each: F,
    /// Why a candidate that is JSON of the right shape was refused: the error to give.
    refused: Option<String>,
    count: usize,
}

impl<'de, F: FnMut(usize, Candidate)> serde::de::DeserializeSeed<'de> for &mut Reader<'_, F> {
    type Value = (String, String, Stats);

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: FnMut(usize, Candidate)> serde::de::Visitor<'de> for &mut Reader<'_, F> {
    type Value = (String, String, Stats);

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a candidates file")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        use serde::de::Error;
        let (mut binary, mut build_id, mut stats) = (None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "binary" => binary = Some(map.next_value()?),
                "build_id" => build_id = Some(map.next_value()?),
                "stats" => stats = Some(map.next_value()?),
                "candidates" => map.next_value_seed(Candidates(&mut *self))?,
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok((
            binary.ok_or_else(|| A::Error::missing_field("binary"))?,
            build_id.ok_or_else(|| A::Error::missing_field("build_id"))?,
            stats.ok_or_else(|| A::Error::missing_field("stats"))?,
        ))
    }
}

/// A schedule as the file holds it.
#[derive(Deserialize)]
struct HeadedIn {
    prefix_steps: usize,
    head: Vec<(ThreadId, u32)>,
    steps: Vec<Step>,
}

impl<F> Reader<'_, F> {
    /// `h` held by the run's operations; why not if it names operations the run did not do.
    fn schedule(&self, h: HeadedIn) -> Result<ScheduleOut, String> {
        let thread_of = |tid| {
            self.thread_of
                .get(&tid)
                .copied()
                .ok_or_else(|| format!("names thread {tid}, which the trace does not have"))
        };
        let mut head = vec![0; self.ops.threads.len()];
        for (tid, n) in h.head {
            let t = thread_of(tid)?;
            let did = self.ops.threads[t].1.len();
            if n as usize > did {
                return Err(format!(
                    "has {n} sync operations of thread {tid} in its head, which did {did}"
                ));
            }
            head[t] = n;
        }
        let tail = h
            .steps
            .iter()
            .map(|s| {
                let t = thread_of(s.tid)?;
                let (tid, recorded) = &self.ops.threads[t];
                let sync = s.op_index as usize;
                match sync < recorded.len() && step_of(*tid, recorded, sync) == *s {
                    true => Ok((t as u32, s.op_index)),
                    false => Err(format!(
                        "lists {} as sync operation {sync} of thread {tid}, which the trace \
                         does not have",
                        s.op.name()
                    )),
                }
            })
            .collect::<Result<_, String>>()?;
        Ok(ScheduleOut {
            prefix_steps: h.prefix_steps,
            held: Held::Compact(Compact {
                ops: Arc::clone(&self.ops),
                head: head.into(),
                tail,
            }),
        })
    }
}

/// The `candidates` array of a [`Reader`].
struct Candidates<'r, 'p, F>(&'r mut Reader<'p, F>);

impl<'de, F: FnMut(usize, Candidate)> serde::de::DeserializeSeed<'de> for Candidates<'_, '_, F> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(usize, Candidate)> serde::de::Visitor<'de> for Candidates<'_, '_, F> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of candidates")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        use serde::de::Error;
        let r = self.0;
        let path = r.path.display();
        // Which candidates so far are races that are no fallback (what a fallback may stand in
        // for).
        let mut races: Vec<bool> = Vec::new();
        while let Some(mut v) = seq.next_element::<Value>()? {
            let i = races.len();
            let headed: HeadedIn =
                serde_json::from_value(v["schedule"].take()).map_err(A::Error::custom)?;
            let schedule = match r.schedule(headed) {
                Ok(schedule) => schedule,
                Err(why) => {
                    r.refused = Some(format!(
                        "{path}: the schedule of candidate {} {why}; run `ilgen detect` again",
                        i + 1
                    ));
                    return Err(A::Error::custom("refused"));
                }
            };
            v["schedule"] = serde_json::json!({ "prefix_steps": 0, "steps": [] });
            let mut candidate: Candidate = serde_json::from_value(v).map_err(A::Error::custom)?;
            *candidate.schedule_mut() = schedule;
            if let Some(n) = candidate.fallback_of() {
                if !(n >= 1 && races.get(n - 1) == Some(&true)) {
                    r.refused = Some(format!(
                        "{path}: candidate {} is a fallback of candidate {n}, which is no \
                         earlier race candidate; run `ilgen detect` again",
                        i + 1
                    ));
                    return Err(A::Error::custom("refused"));
                }
            }
            races.push(matches!(
                candidate,
                Candidate::Race {
                    fallback_of: None,
                    ..
                }
            ));
            if r.only.is_none_or(|only| only == i) {
                (r.each)(i, candidate);
            }
        }
        r.count = races.len();
        Ok(())
    }
}

/// File name of candidate `number`'s (1-based) schedule for replay.
pub fn schedule_file_name(number: usize) -> String {
    format!("schedule-{number}.json")
}

/// Writes `file` as `dir/candidates.json`, creating `dir`; the error names the path that failed.
/// The schedules are written one by one as replays need them ([`write_replay_schedule`]): those of a
/// long run's kept candidates, each from the start of the run, made gigabytes that a
/// `--no-replay` analysis never reads.
pub fn write_dir(dir: &Path, file: &CandidatesFile) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    let path = dir.join(FILE_NAME);
    std::fs::File::create(&path)
        .and_then(|f| write(file, f))
        .map_err(|e| format!("failed to write {}: {e}", path.display()))
}

/// Writes candidate `number`'s (1-based) schedule as replay reads it ([`replay_schedule`]) to
/// `dir/schedule-<number>.json` and gives that path.
pub fn write_replay_schedule(
    dir: &Path,
    number: usize,
    candidate: &Candidate,
    headers: &[ThreadHeader],
    build_id: &str,
) -> std::io::Result<PathBuf> {
    let path = dir.join(schedule_file_name(number));
    let schedule = replay_schedule(candidate, headers, build_id);
    std::fs::write(&path, format!("{}\n", schedule.to_json()))?;
    Ok(path)
}

/// The candidate's schedule as replay reads it: threads by their stable identity, steps by each
/// thread's n-th sync operation.
pub fn replay_schedule(
    candidate: &Candidate,
    headers: &[ThreadHeader],
    build_id: &str,
) -> replay::Schedule {
    let steps: Vec<Step> = candidate.schedule().steps().collect();
    let tids: BTreeSet<ThreadId> = steps.iter().map(|s| s.tid).collect();
    replay::Schedule {
        format_version: replay::SCHEDULE_VERSION,
        build_id: build_id.to_owned(),
        threads: headers
            .iter()
            .filter(|h| tids.contains(&h.tid))
            .map(|h| replay::ScheduleThread {
                tid: h.tid,
                parent: known_thread(h.parent),
                child_index: h.child_index,
            })
            .collect(),
        steps: steps
            .into_iter()
            .map(|s| replay::Step {
                tid: s.tid,
                index: s.op_index,
                op: s.op,
                site: s.site,
                timed_out: s.timed_out,
            })
            .collect(),
        watch: match candidate {
            Candidate::Atomicity {
                accesses, after, ..
            } => accesses
                .iter()
                .zip(after)
                .map(|(a, &after)| replay::Watch {
                    tid: a.tid,
                    site: a.site,
                    after,
                })
                .collect(),
            Candidate::Race { .. } | Candidate::Deadlock { .. } => Vec::new(),
        },
    }
}

/// How the summary names sites and addresses (the binary's names when it is at hand).
pub struct Names<'a> {
    pub site: &'a dyn Fn(SiteId) -> Option<String>,
    pub object: &'a dyn Fn(u64) -> Option<String>,
}

impl Names<'_> {
    fn site(&self, id: SiteId) -> String {
        match (self.site)(id) {
            Some(name) => format!("{name} (site {id})"),
            None => format!("site {id}"),
        }
    }

    fn object(&self, addr: u64) -> String {
        match (self.object)(addr) {
            Some(name) => format!("{name} ({addr:#x})"),
            None => format!("{addr:#x}"),
        }
    }
}

/// Writes the human summary to `to`: counts, then each candidate with its sites and the end of
/// its schedule ([`write_schedule`]), one candidate at a time: a thousand schedules of a
/// 96-thread run, as text, took 5 GiB.
pub fn write_summary(
    to: &mut impl std::io::Write,
    file: &CandidatesFile,
    names: &Names,
    limits: &Limits,
) -> std::io::Result<()> {
    let count = |kind: fn(&Candidate) -> bool| file.candidates.iter().filter(|c| kind(c)).count();
    let races = count(|c| {
        matches!(
            c,
            Candidate::Race {
                fallback_of: None,
                ..
            }
        )
    });
    let deadlocks = count(|c| matches!(c, Candidate::Deadlock { .. }));
    let violations = count(|c| matches!(c, Candidate::Atomicity { .. }));
    let fallbacks = count(|c| c.fallback_of().is_some());
    let mut out = String::new();
    let _ = write!(
        out,
        "ilgen: {} candidate(s): {races} race(s), {deadlocks} deadlock(s)",
        file.candidates.len(),
    );
    if file.stats.atomicity.is_some() {
        let _ = write!(out, ", {violations} atomicity violation(s)");
    }
    if fallbacks > 0 {
        let _ = write!(out, ", {fallbacks} fallback(s) of race candidates");
    }
    out.push('\n');
    out.push_str(&stats_text(&file.stats));
    out.push_str(&not_written_text(&file.stats, limits));
    out.push_str(&not_decided_text(&file.stats, names, limits));
    for (i, c) in file.candidates.iter().enumerate() {
        to.write_all(out.as_bytes())?;
        out.clear();
        let _ = writeln!(out);
        match c {
            Candidate::Race {
                object,
                accesses,
                schedule,
                fallback_of,
            } => {
                let _ = write!(
                    out,
                    "candidate {}: data race on {} ({} bytes)",
                    i + 1,
                    names.object(object.addr),
                    object.len
                );
                let _ = match fallback_of {
                    Some(n) => writeln!(out, ", fallback of candidate {n}"),
                    None => writeln!(out),
                };
                for a in accesses {
                    write_access(&mut out, "", a, names);
                }
                write_schedule(&mut out, schedule, names);
            }
            Candidate::Deadlock { blocked, schedule } => {
                let _ = writeln!(out, "candidate {}: deadlock", i + 1);
                for b in blocked {
                    let _ = writeln!(out, "  thread {} blocked in {}", b.tid, step_text(b, names));
                }
                write_schedule(&mut out, schedule, names);
            }
            Candidate::Atomicity {
                object,
                begin,
                accesses,
                pattern,
                schedule,
                ..
            } => {
                let _ = writeln!(
                    out,
                    "candidate {}: atomicity violation on {} ({} bytes), {} ({})",
                    i + 1,
                    names.object(object.addr),
                    object.len,
                    pattern.text(),
                    pattern.meaning()
                );
                let _ = writeln!(
                    out,
                    "  transaction of thread {} begun at {}",
                    begin.tid,
                    begin
                        .site
                        .map_or_else(|| "no site".to_owned(), |s| names.site(s))
                );
                for (role, a) in ["e1 ", "f  ", "e2 "].iter().zip(accesses) {
                    write_access(&mut out, role, a, names);
                }
                write_schedule(&mut out, schedule, names);
            }
        }
    }
    to.write_all(out.as_bytes())
}

/// The limits the analysis ran with, for the advice on what to raise.
pub struct Limits {
    pub max_states: usize,
    pub window: usize,
    pub max_candidates: usize,
}

/// The line saying how many candidates the cap left out (none when it left out none).
pub fn not_written_text(s: &Stats, limits: &Limits) -> String {
    if s.not_written == 0 {
        return String::new();
    }
    format!(
        "ilgen: {} more candidates not written, raise --max-candidates (now {})\n",
        s.not_written, limits.max_candidates
    )
}

/// One line per pair of source sites (with their kinds of access) whose race pairs a limit left
/// undecided, naming the limit to raise and the objects: one when it is one object, else how
/// many (a pair of lines run on many objects, each one its own, was as many identical lines:
/// memcached's crawler, 65).
pub fn not_decided_text(s: &Stats, names: &Names, limits: &Limits) -> String {
    let mut out = String::new();
    // Per group, in the order of its first object: that one, the pairs and the objects.
    let mut groups: Vec<(&NotDecided, u64, usize)> = Vec::new();
    for n in &s.not_decided {
        let same = |g: &NotDecided| {
            let side = |x: &AccessSide| (x.site, x.access);
            let mut p = n.accesses.map(|x| side(&x));
            let mut q = g.accesses.map(|x| side(&x));
            p.sort_unstable_by_key(|&(site, _)| site);
            q.sort_unstable_by_key(|&(site, _)| site);
            p == q && g.limit == n.limit
        };
        match groups.iter_mut().find(|(g, _, _)| same(g)) {
            Some((_, pairs, objects)) => {
                *pairs += n.pairs;
                *objects += 1;
            }
            None => groups.push((n, n.pairs, 1)),
        }
    }
    for (n, pairs, objects) in groups {
        let [a, b] = &n.accesses;
        let why = match n.limit {
            Limit::States => format!(
                "the exhaustive search stopped at the state limit; raise --max-states (now {})",
                limits.max_states
            ),
            Limit::Window => format!(
                "the exhaustive search covers one window of sync events at a time; raise \
                 --window (now {})",
                limits.window
            ),
        };
        let on = match objects {
            1 => names.object(n.object.addr),
            _ => format!(
                "{objects} objects ({} and {} more)",
                names.object(n.object.addr),
                objects - 1
            ),
        };
        let _ = writeln!(
            out,
            "not decided: {pairs} race pair(s) on {on}, e.g. {} by thread {} at {} and {} by \
             thread {} at {}: {why}",
            a.access.text(),
            a.tid,
            names.site(a.site),
            b.access.text(),
            b.tid,
            names.site(b.site)
        );
    }
    out
}

/// The analysis's counts: what the trace held, and where every race pair went.
pub fn stats_text(s: &Stats) -> String {
    let f = &s.filter;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  trace: {} threads, {} sync events, {} accesses ({} kept on shared objects)",
        s.threads, s.sync_events, s.accesses_read, s.accesses_kept
    );
    if s.semaphores > 0 {
        let _ = writeln!(
            out,
            "  semaphores: {} ({} with the recorded initial count, {} inferred as the least the \
             run needs: initialised outside instrumented code)",
            s.semaphores,
            s.semaphores - s.semaphores_inferred,
            s.semaphores_inferred
        );
    }
    let _ = writeln!(
        out,
        "  shared objects: {} ({} without a conflicting pair, {} removed by happens-before, {} by \
         lockset, {} left)",
        f.vars_shared,
        f.vars_without_pair,
        f.vars_removed_by_hb,
        f.vars_removed_by_lockset,
        f.vars_left
    );
    let _ = writeln!(
        out,
        "  race pairs: {} ({} removed by happens-before, {} by lockset, {} left)",
        f.pairs_total, f.pairs_removed_by_hb, f.pairs_removed_by_lockset, f.pairs_left
    );
    let _ = writeln!(
        out,
        "  solver: race pairs by cuts: {} witnessed, {} ruled out, {} undecided; lock cycles \
         undecided: {}; exhaustive: {} window(s), {} states, {} search(es) stopped at the state \
         bound",
        s.solve.pairs_witnessed,
        s.solve.pairs_excluded,
        s.solve.pairs_undecided,
        s.solve.cycles_undecided,
        s.solve.exhaustive_windows,
        s.solve.exhaustive_states,
        s.solve.exhaustive_incomplete
    );
    let v = &s.solve;
    out.push_str("  race pairs left without a candidate, by reason:\n");
    for (n, why) in [
        (f.pairs_removed_by_hb, "ordered by happens-before (filter)"),
        (f.pairs_removed_by_lockset, "a common lock (filter)"),
        (v.pairs_excluded, "ruled out by a cut"),
        (
            v.pairs_search_excluded,
            "ruled out by the exhaustive search",
        ),
        (
            v.pairs_same_sites,
            "their two sites already had a candidate",
        ),
        (
            v.pairs_not_tried,
            "not tried: the object had its --max-per-var candidates",
        ),
        (
            v.pairs_state_limit,
            "not decided: state limit (--max-states)",
        ),
        (v.pairs_window_limit, "not decided: window limit (--window)"),
    ] {
        let _ = writeln!(out, "    {why}: {n}");
    }
    let _ = writeln!(
        out,
        "  fallbacks: {} race pair(s) kept as fallbacks of the candidate at their two sites",
        v.pairs_fallback
    );
    let _ = writeln!(
        out,
        "  findings without events of their model: {}",
        s.findings_unconvertible
    );
    if let Some(a) = &s.atomicity {
        let _ = writeln!(
            out,
            "  atomicity: {} transactions; distinct violations: {} with a schedule, {} that no \
             schedule reaches (other sync operations order them), {} with f in its thread's \
             first or last segment (no sync operation brackets it)",
            a.transactions, a.predicted, a.no_schedule, a.unbracketed
        );
    }
    out
}

/// `  read by thread 1 at file.c:12 in f (site 3)`, after `role`.
fn write_access(out: &mut String, role: &str, a: &AccessSide, names: &Names) {
    let _ = writeln!(
        out,
        "  {role}{} by thread {} at {}",
        a.access.text(),
        a.tid,
        names.site(a.site)
    );
}

/// The schedule's steps after its observed-order prefix, at most the last [`SUMMARY_STEPS`] of
/// them: the steps before a race that matter are its last; the schedule file has them all.
fn write_schedule(out: &mut String, schedule: &ScheduleOut, names: &Names) {
    let hidden = schedule
        .len()
        .saturating_sub(SUMMARY_STEPS)
        .max(schedule.prefix_steps);
    if hidden > schedule.prefix_steps {
        let _ = writeln!(
            out,
            "  schedule (its last {} steps, after {hidden}; `ilgen replay` runs them all):",
            schedule.len() - hidden
        );
    } else if schedule.prefix_steps > 0 {
        let _ = writeln!(
            out,
            "  schedule (after {} steps in the observed order):",
            schedule.prefix_steps
        );
    } else {
        let _ = writeln!(out, "  schedule:");
    }
    for s in schedule.steps_after(hidden) {
        let _ = writeln!(out, "    thread {}: {}", s.tid, step_text(&s, names));
    }
}

/// Steps of a schedule the summary lists at most.
pub const SUMMARY_STEPS: usize = 200;

/// One step as the summary prints it: the operation, its peer thread, object and site.
pub fn step_text(s: &Step, names: &Names) -> String {
    let mut text = s.op.name().to_owned();
    if let Some(peer) = s.peer {
        let _ = write!(text, " thread {peer}");
    }
    if let Some(obj) = s.object {
        let _ = write!(text, " {}", names.object(obj));
    }
    if let Some(site) = s.site {
        let _ = write!(text, " at {}", names.site(site));
    }
    text
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::options::Options;
    use crate::prepare::{prepare_keeping, Keep};
    use crate::testkit::{check_random_runs, options};
    use crate::{filter, solve};

    /// Race pairs left undecided at one pair of sites on many objects are one line naming how many
    /// objects; another pair of sites, or the same under another limit, has its own.
    #[test]
    fn undecided_pairs_at_one_pair_of_sites_are_one_line() {
        let side = |tid, site, access| AccessSide { tid, site, access };
        let undecided = |addr, first: SiteId, second: SiteId, limit| NotDecided {
            object: ObjectRange { addr, len: 8 },
            accesses: [
                side(1, first, AccessName::Write),
                side(2, second, AccessName::Read),
            ],
            pairs: 2,
            limit,
        };
        let stats = Stats {
            not_decided: vec![
                undecided(0x100, 7, 9, Limit::States),
                undecided(0x200, 7, 9, Limit::States),
                undecided(0x300, 5, 9, Limit::States),
                undecided(0x400, 7, 9, Limit::Window),
                undecided(0x500, 7, 9, Limit::States),
            ],
            ..Stats::default()
        };
        let names = Names {
            site: &|site| Some(format!("a.c:{site}")),
            object: &|addr| Some(format!("obj{addr:x}")),
        };
        let limits = Limits {
            max_states: 10,
            window: 4,
            max_candidates: 1,
        };
        let text = not_decided_text(&stats, &names, &limits);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[0].starts_with(
                "not decided: 6 race pair(s) on 3 objects (obj100 (0x100) and 2 more), e.g. write"
            ),
            "{text}"
        );
        assert!(
            lines[1].starts_with("not decided: 2 race pair(s) on obj300"),
            "{text}"
        );
        assert!(lines[2].ends_with("raise --window (now 4)"), "{text}");
    }

    /// A schedule held compactly gives the steps of its events one by one, in its order: the
    /// observed order of its head and its tail, whatever the solver (cut, window, lock graph)
    /// made of it.
    #[test]
    fn a_compact_schedule_gives_the_steps_of_its_events() {
        let options = Options {
            window: 3,
            max_per_var: 3,
            fallbacks: 2,
            ..options()
        };
        // Schedules, those with a tail, those with a head and a tail.
        let [all, tailed, both] = [Cell::new(0), Cell::new(0), Cell::new(0)];
        check_random_runs(0x5c4e_d14e, 1000, |run| {
            let program = prepare_keeping(run.traces(), Keep::All);
            let ops = Ops::of(&program.model);
            // Another program's: a schedule does not take them.
            let others = Ops::of(&prepare_keeping(run.traces(), Keep::All).model);
            let (survivors, _) = filter::filter(&program);
            let mut solved: Vec<solve::Solved> = survivors
                .iter()
                .map(|s| solve::races_with(&program, s, &options, &|| {}))
                .collect();
            solved.push(solve::deadlocks_with(&program, &options, &|| {}));
            for s in &solved {
                let schedules = s
                    .findings
                    .iter()
                    .chain(s.fallbacks.iter().map(|f| &f.finding));
                for f in schedules {
                    let (Finding::Race { schedule, .. } | Finding::Deadlock { schedule, .. }) = f;
                    let whole: Vec<Step> = schedule
                        .all(&s.model)
                        .map(|at| step(&s.model, at).expect("a sync event"))
                        .collect();
                    let out = schedule_out(&s.model, &ops, schedule).expect("sync events");
                    let Held::Compact(c) = &out.held else {
                        panic!("held whole")
                    };
                    // The program's operations, not a copy.
                    proptest::prop_assert!(Arc::ptr_eq(&c.ops, &ops));
                    all.set(all.get() + 1);
                    tailed.set(tailed.get() + usize::from(!c.tail.is_empty()));
                    both.set(
                        both.get()
                            + usize::from(!c.tail.is_empty() && c.head.iter().any(|&n| n > 0)),
                    );
                    proptest::prop_assert_eq!(out.len(), whole.len());
                    proptest::prop_assert_eq!(&out.steps().collect::<Vec<_>>(), &whole);
                    // From any step on, the head's end found backwards.
                    for skip in 0..=whole.len() + 1 {
                        proptest::prop_assert_eq!(
                            &out.steps_after(skip).collect::<Vec<_>>()[..],
                            whole.get(skip..).unwrap_or(&[])
                        );
                    }
                    let out = schedule_out(&s.model, &others, schedule).expect("sync events");
                    proptest::prop_assert_eq!(out.steps().collect::<Vec<_>>(), whole);
                }
            }
            Ok(())
        });
        // 1,681 schedules, 61 of them with a tail after a head.
        assert!(
            all.get() > 1000 && both.get() > 30,
            "{} schedules, {} with a tail, {} with both",
            all.get(),
            tailed.get(),
            both.get()
        );
    }

    /// A schedule that names its head by a cut gives the steps that head's observed order and
    /// its listed steps are, none lost, none moved, and is held as the same head and tail as the
    /// same steps all listed: of random runs, every variable's model and the sync-only one, each
    /// cut of [`cuts_of`] as a head, with no steps listed after it and with each thread's next
    /// sync event (threads in reverse, so that the tail leaves the observed order).
    #[test]
    fn a_schedule_headed_by_a_cut_is_the_same_steps_listed_on_random_runs() {
        let [heads, tails] = [Cell::new(0), Cell::new(0)];
        check_random_runs(0x3c6e_f372_fe94_f82b, 300, |run| {
            let program = prepare_keeping(run.traces(), Keep::All);
            let ops = Ops::of(&program.model);
            let models = std::iter::once(program.model.restrict(None).0)
                .chain((0..program.vars.len()).map(|v| program.model.restrict(Some(v)).0));
            for model in models {
                for cut in crate::testkit::cuts_of(&model) {
                    let next: Vec<At> = (0..model.threads.len())
                        .rev()
                        .filter_map(|t| {
                            let events = &model.threads[t].events;
                            (cut[t]..events.len())
                                .find(|&i| events[i].is_sync())
                                .map(|index| At { thread: t, index })
                        })
                        .collect();
                    for listed in [Vec::new(), next] {
                        // The reference: the threads merged anew, not the run's order read off.
                        let mut all: Vec<At> = model.observed_order(&cut).collect();
                        let prefix = all.len();
                        all.extend(&listed);
                        let headed = Schedule {
                            prefix,
                            head: cut.clone(),
                            steps: listed,
                        };
                        proptest::prop_assert_eq!(&headed.all(&model).collect::<Vec<_>>(), &all);
                        let out = schedule_out(&model, &ops, &headed).expect("sync events");
                        let whole = schedule_out(&model, &ops, &Schedule::listed(prefix, all))
                            .expect("sync events");
                        let (Held::Compact(c), Held::Compact(w)) = (&out.held, &whole.held) else {
                            panic!("held whole")
                        };
                        proptest::prop_assert_eq!((&c.head, &c.tail), (&w.head, &w.tail));
                        proptest::prop_assert_eq!(
                            out.steps().collect::<Vec<_>>(),
                            whole.steps().collect::<Vec<_>>()
                        );
                        proptest::prop_assert_eq!(out.prefix_steps, whole.prefix_steps);
                        heads.set(heads.get() + usize::from(prefix > 0));
                        tails.set(tails.get() + usize::from(!c.tail.is_empty()));
                    }
                }
            }
            Ok(())
        });
        assert!(
            heads.get() > 10_000 && tails.get() > 1000,
            "{} schedules with a head, {} with a tail",
            heads.get(),
            tails.get()
        );
    }
}
