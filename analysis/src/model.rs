//! The reorder model: every order of the recorded sync operations that their semantics allow.
//!
//! Takes nothing itself (prepare builds it from a trace); gives [`Model`], a plain data structure:
//! per thread its events in program order (memory accesses to shared objects and every sync
//! operation, each resolved to the semantics it has in the model: [`ModelOp`]) and the sync
//! objects those operations act on ([`SyncObjects`]: mutexes, rwlocks, semaphores, condition
//! instances, barrier instances). It is independent of any solver: the native solver
//! ([`crate::state`], [`crate::solve`]) reads it, and a CSP_M back end can print it
//! (one process per thread, one per object). [`Model::restrict`] keeps the accesses to one
//! variable, as the paper builds one model per shared variable: such a model shares the sync-only
//! model's events and sources and holds only what the variable changes (its accesses, the
//! reads-from edges they move), so that it costs the variable's accesses, not the run's events.

use std::any::Any;
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::ops::{Index, Range};
use std::sync::{Arc, Mutex, OnceLock};

use ilgen_trace::{AccessKind, SiteId, SyncOp, ThreadId};
use rustc_hash::FxHashMap;

/// Index of a shared object in [`crate::prepare::Program::vars`].
pub type VarId = usize;

/// `before` (a sync event) must have run before `after` (a sync event) runs: an edge that keeps
/// what a deciding read of `var` saw ([`crate::reads_from`] makes them): its writer's segment
/// before its own, or, for a waiting loop's read, its own before the next writer's.
///
/// 28 bytes: a work queue's run has about one edge per hand-off, half an edge per event, and its
/// model held them in `At`s of two `usize` each (56 bytes an edge).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RfEdge {
    pub after: Pos,
    pub before: Pos,
    /// A [`VarId`].
    pub var: u32,
    /// The deciding read (an access event) the edge keeps.
    pub read: Pos,
}

impl RfEdge {
    /// The edge `before` → `after` that keeps `read` of `var`.
    pub fn new(after: At, before: At, var: VarId, read: At) -> RfEdge {
        RfEdge {
            after: after.into(),
            before: before.into(),
            var: u32::try_from(var).expect("fewer than 2^32 shared objects"),
            read: read.into(),
        }
    }
}

/// An [`At`] in 8 bytes, as the reads-from edges hold it: in the same order as the `At`, since a
/// model holds fewer than 2^32 threads and 2^32 events of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pos {
    thread: u32,
    index: u32,
}

impl Pos {
    pub fn at(self) -> At {
        At {
            thread: self.thread as usize,
            index: self.index as usize,
        }
    }
}

impl From<At> for Pos {
    fn from(at: At) -> Pos {
        let word = |x: usize| u32::try_from(x).expect("a model's indices fit in 32 bits");
        Pos {
            thread: word(at.thread),
            index: word(at.index),
        }
    }
}

/// One event of a model: thread index and index among the thread's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct At {
    pub thread: usize,
    pub index: usize,
}

#[derive(Clone, Debug)]
pub struct Model {
    pub threads: Threads,
    pub objects: Arc<SyncObjects>,
    /// Derived from `threads` by [`Model::new`]; with an `overlay`, the sync-only model's, at its
    /// indices.
    sources: Arc<Sources>,
    /// What a model of one variable changes of the sync-only model it was restricted from.
    overlay: Option<Arc<Overlay>>,
    /// Built by the first [`Model::restrict`]: a run has thousands of shared variables, and a
    /// scan of every event per variable made restricting quadratic.
    index: Derived<Shared>,
    /// Built by the first [`Model::cut_order`] of a model without overlay (a model of one
    /// variable reads its sync-only model's): the solvers ask a cut's observed order per race
    /// pair, and merging the threads anew made each pair cost the run up to its cut.
    order: Derived<RunOrder>,
    /// Built by the first [`Model::memo`] of a model without overlay, like `order`: what a solver
    /// derives from the run once (the cut path's checkpoints, `solve::checkpoint`), typed by it so
    /// that this module, which the solvers import, need not name it.
    memo: Derived<dyn Any + Send + Sync>,
}

impl PartialEq for Model {
    fn eq(&self, other: &Model) -> bool {
        self.threads == other.threads
            && self.objects == other.objects
            && self.sources() == other.sources()
    }
}

impl Eq for Model {}

/// What a model derives from itself once, on first use, and its clones share (the deadlock
/// model is the sync-only model's clone, made before its variables' models ask for anything). It
/// follows from the model, so it takes no part in equality.
#[derive(Debug)]
struct Derived<T: ?Sized>(Arc<OnceLock<Arc<T>>>);

impl<T: ?Sized> PartialEq for Derived<T> {
    fn eq(&self, _: &Derived<T>) -> bool {
        true
    }
}

impl<T: ?Sized> Eq for Derived<T> {}

impl<T: ?Sized> Clone for Derived<T> {
    fn clone(&self) -> Derived<T> {
        Derived(Arc::clone(&self.0))
    }
}

impl<T: ?Sized> Default for Derived<T> {
    fn default() -> Derived<T> {
        Derived(Arc::new(OnceLock::new()))
    }
}

/// By (thread, position), the closure of the cut where only that thread has run that many
/// events (`None`: it holds an event that can never run); without the requirements of failed try
/// operations, and with them. One map, not one per thread: a model of one variable asks for the
/// closures of a few threads of thousands.
#[derive(Debug, Default)]
pub(crate) struct Closures {
    pub(crate) plain: BTreeMap<(usize, usize), Option<PackedCut>>,
    pub(crate) busy: BTreeMap<(usize, usize), Option<PackedCut>>,
}

/// A closed cut as kept: the threads that ran all their events as runs of thread numbers, and
/// each other thread that ran some with its count. A closed cut of a run that starts threads per
/// job has every thread of the jobs done in full and the threads not yet forked at none: a word
/// per thread in every kept closure was 9,001 words each on htslib's thrash_threads2 (1.7 GB).
#[derive(Clone, Debug)]
pub(crate) struct PackedCut {
    /// `[from, to)` ranges of the threads at their model's length, sorted (a thread without
    /// events may be in one or not: it is at none either way).
    full: Box<[(u32, u32)]>,
    /// (thread, events run) of the threads that ran some but not all, by thread.
    part: Box<[(u32, u32)]>,
}

/// A [`PackedCut`] put together thread by thread, in order.
#[derive(Default)]
struct Packer {
    full: Vec<(u32, u32)>,
    part: Vec<(u32, u32)>,
}

impl Packer {
    /// Threads `from..to`, all at their length.
    fn full(&mut self, from: u32, to: u32) {
        match self.full.last_mut() {
            Some(run) if run.1 == from => run.1 = to,
            _ => self.full.push((from, to)),
        }
    }

    /// Thread `t` of `model` at `c` events. A thread at none is left out before its length is
    /// looked up: most threads of a closure early in a long run.
    fn put(&mut self, model: &Model, t: u32, c: usize) {
        if c == 0 {
            return;
        }
        if c == model.threads[t as usize].events.len() {
            self.full(t, t + 1);
        } else {
            self.part.push((t, c as u32));
        }
    }

    fn done(self) -> PackedCut {
        PackedCut {
            full: self.full.into(),
            part: self.part.into(),
        }
    }
}

impl PackedCut {
    /// `cut` (one count per thread of `model`) packed.
    pub(crate) fn pack(model: &Model, cut: &[usize]) -> PackedCut {
        let mut packer = Packer::default();
        for (t, &c) in cut.iter().enumerate() {
            packer.put(model, t as u32, c);
        }
        packer.done()
    }

    /// This cut of `syncs`, the sync-only model `model` was restricted from, in `model`: each
    /// thread with the variable's accesses among its events.
    pub(crate) fn with_accesses(&self, syncs: &Model, model: &Model) -> PackedCut {
        let accessing = &model.threads.own;
        let mut packer = Packer::default();
        let mut parts = self.part.iter().peekable();
        let part = |packer: &mut Packer, t: u32, c: u32| {
            packer.put(model, t, model.with_accesses(t as usize, c as usize));
        };
        for &(from, to) in self.full.iter() {
            while let Some(&&(t, c)) = parts.peek().filter(|p| p.0 < from) {
                part(&mut packer, t, c);
                parts.next();
            }
            // Only a thread that accesses the variable changes: it may run accesses after its
            // last sync event.
            let mut start = from;
            let first = accessing.partition_point(|o| o.0 < from);
            for &(t, _) in accessing[first..].iter().take_while(|o| o.0 < to) {
                if start < t {
                    packer.full(start, t);
                }
                let synced = syncs.threads[t as usize].events.len();
                part(&mut packer, t, synced as u32);
                start = t + 1;
            }
            if start < to {
                packer.full(start, to);
            }
        }
        for &(t, c) in parts {
            part(&mut packer, t, c);
        }
        packer.done()
    }

    /// The cut, a count per thread of `model` (the model it was packed with).
    pub(crate) fn unpack(&self, model: &Model) -> Vec<usize> {
        let mut cut = vec![0; model.threads.len()];
        self.merge_into(model, &mut cut);
        cut
    }

    /// Puts this cut's events into `cut`: a union of closed cuts is closed.
    pub(crate) fn merge_into(&self, model: &Model, cut: &mut [usize]) {
        for &(from, to) in self.full.iter() {
            let (from, to) = (from as usize, to as usize);
            for (t, c) in cut.iter_mut().enumerate().take(to).skip(from) {
                *c = model.threads[t].events.len();
            }
        }
        for &(t, c) in self.part.iter() {
            let t = t as usize;
            cut[t] = cut[t].max(c as usize);
        }
    }

    /// How many events of `thread` (of `model`) the cut holds.
    pub(crate) fn get(&self, model: &Model, thread: usize) -> usize {
        let t = thread as u32;
        let run = self.full.partition_point(|r| r.1 <= t);
        if self.full.get(run).is_some_and(|r| r.0 <= t) {
            return model.threads[thread].events.len();
        }
        self.part
            .binary_search_by_key(&t, |p| p.0)
            .map_or(0, |i| self.part[i].1 as usize)
    }
}

/// The closures of a sync-only model ([`crate::solve::cut`] fills and reads them), which the models of its variables that need what it needs
/// ([`Model::same_needs`]) share: each such model closed its cuts anew, one pass over the run's
/// prefix per variable and thread.
#[derive(Debug, Default)]
pub struct SharedClosures(pub(crate) Mutex<Closures>);

/// What the models restricted from one model share: the index of its events and its sync-only
/// model.
#[derive(Debug)]
struct Shared {
    index: EventIndex,
    /// Its reads-from edges only indexed ([`Sources::rf_index`], its `reads_from` empty): one per
    /// order of the index's edges, 28 bytes each, they said again what the index says. The models
    /// restricted from it, the deadlock model among them, work their own out from the index
    /// when asked ([`Model::sources`]).
    syncs: Model,
    /// The sync-only model's closed cuts: most variables' models need of each sync event what it
    /// does ([`Model::same_needs`]), and closing their cuts anew per variable was most of the cut
    /// solver's time.
    closures: SharedClosures,
}

/// A model of one variable (or of none: the deadlock model), against the sync-only model its
/// threads share ([`Events`]): where the variable's accesses are and the reads-from edges they
/// change.
#[derive(Debug)]
struct Overlay {
    var: Option<VarId>,
    shared: Arc<Shared>,
    /// Of each thread that accesses the variable, by thread, each access kept: its index in this
    /// model and its thread's sync events before it, by index. Not a list per thread: a run of
    /// thousands of threads has thousands of variables that few of them access.
    accesses: Box<[(u32, Kept)]>,
    /// The sync-only model's edges this variable drops, by index among them ([`RfIndex`]).
    dropped: Vec<u32>,
    /// The edges moved to their read's segment end in their place, at this model's indices,
    /// sorted.
    moved: Vec<RfEdge>,
}

/// A thread's accesses kept in a model of one variable ([`Overlay::accesses`]).
type Kept = Box<[(u32, u32)]>;

impl Overlay {
    /// The accesses kept of `thread` ([`Overlay::accesses`]'s pairs), none if it has none.
    fn accesses(&self, thread: usize) -> &[(u32, u32)] {
        self.accesses
            .binary_search_by_key(&thread, |a| a.0 as usize)
            .map_or(&[], |i| &self.accesses[i].1)
    }
}

/// Where each thread's sync events and each variable's accesses are, by index, and the
/// reads-from edges grouped by the order they ask for.
#[derive(Clone, Debug, Default)]
struct EventIndex {
    /// Per thread, the indices of its sync events. In `u32`, and each list sized exactly: the
    /// index lives as long as the model, and has an entry per event of it. The sync-only
    /// model's events are picked out of the model's by them ([`Events`]).
    syncs: Vec<Arc<[u32]>>,
    /// Per variable, its accesses as (thread, index), by thread, then index.
    accesses: Vec<Vec<(u32, u32)>>,
    /// The edges indexed, [`Sources::reads_from`] of the model indexed: held once, by it and
    /// here (a copy of each edge's ends and read was most of the index).
    edges: Arc<Vec<RfEdge>>,
    /// Per distinct (`after`, `before`) of `edges`, in its order, the index of its first edge
    /// (its edges run to the next order's first): a compressor's run had 404,216 edges but 3,012
    /// distinct orders, and a model of one variable keeps an order if any of its reads still
    /// needs it. Only that, 4 bytes an order: a work queue's run has an order per hand-off, and
    /// each end's and read's place among its thread's sync events, kept with it, made 16 bytes
    /// an order and 8 an edge. They are searched for when a model asks ([`EventIndex::place`]).
    orders: Vec<u32>,
    /// Per thread, the reads of the orders as (read's index, order), by index: the orders whose
    /// reads an access of a variable is, or is in the segment of. Not the read's segment (12
    /// bytes an edge with it, the index's largest part): a read is in an access's segment if it
    /// comes before the constraining event that follows the access, found once per access.
    thread_reads: Vec<Vec<(u32, u32)>>,
    /// Per thread, for each count `k` of its sync events, the index of the first event of the
    /// segment of an event with `k` sync events before it (right after the last constraining one
    /// of them; 0 if none), 4 bytes a sync event: a read's segment was searched for backwards
    /// over its thread's non-constraining sync events (call markers), per read and per model of
    /// a variable: htslib's SAM writer spent a quarter of its detect there.
    segments: Vec<Box<[u32]>>,
}

/// Where the deciding read of an edge is, beside what the edge says of it.
#[derive(Clone, Debug)]
struct ReadPlace {
    /// Its thread's sync events before it.
    syncs_before: u32,
    /// The index of the first event of its segment (right after its thread's last constraining
    /// event before it).
    segment: u32,
}

impl EventIndex {
    fn of(threads: &Threads, edges: Arc<Vec<RfEdge>>) -> EventIndex {
        let mut counts: Vec<usize> = Vec::new();
        for e in threads.iter().flat_map(|t| &t.events) {
            if let ModelEvent::Access { var, .. } = e {
                let var = *var as VarId;
                if counts.len() <= var {
                    counts.resize(var + 1, 0);
                }
                counts[var] += 1;
            }
        }
        let mut syncs: Vec<Vec<u32>> = threads
            .iter()
            .map(|t| Vec::with_capacity(t.observed.len()))
            .collect();
        let mut index = EventIndex {
            syncs: Vec::new(),
            accesses: counts.into_iter().map(Vec::with_capacity).collect(),
            edges: Arc::default(),
            orders: Vec::new(),
            thread_reads: Vec::new(),
            segments: Vec::new(),
        };
        for (thread, t) in threads.iter().enumerate() {
            for (i, e) in t.events.iter().enumerate() {
                match e {
                    ModelEvent::Sync { .. } => syncs[thread].push(i as u32),
                    ModelEvent::Access { var, .. } => {
                        index.accesses[*var as VarId].push((thread as u32, i as u32));
                    }
                }
            }
        }
        index.segments = threads
            .iter()
            .zip(&syncs)
            .map(|(t, syncs)| {
                let mut start = 0;
                std::iter::once(0)
                    .chain(syncs.iter().map(|&i| {
                        if t.events[i as usize].constrains() {
                            start = i + 1;
                        }
                        start
                    }))
                    .collect()
            })
            .collect();
        index.syncs = syncs.into_iter().map(Arc::from).collect();
        let mut thread_reads = vec![0; threads.len()];
        for (k, e) in (0u32..).zip(edges.iter()) {
            thread_reads[e.read.at().thread] += 1;
            if k == 0 || !EventIndex::same_order(&edges[k as usize - 1], e) {
                index.orders.push(k);
            }
        }
        index.orders.shrink_to_fit();
        index.edges = edges;
        let mut reads: Vec<Vec<_>> = thread_reads.into_iter().map(Vec::with_capacity).collect();
        for o in 0..index.orders.len() {
            for e in &index.edges[index.order_edges(o)] {
                let read = e.read.at();
                reads[read.thread].push((read.index as u32, o as u32));
            }
        }
        for reads in &mut reads {
            reads.sort_unstable();
        }
        index.thread_reads = reads;
        index
    }

    fn same_order(a: &RfEdge, b: &RfEdge) -> bool {
        (a.after, a.before) == (b.after, b.before)
    }

    /// The range of order `o`'s edges in [`EventIndex::edges`].
    fn order_edges(&self, o: usize) -> Range<usize> {
        let end = self
            .orders
            .get(o + 1)
            .map_or(self.edges.len(), |&e| e as usize);
        self.orders[o] as usize..end
    }

    /// Where `read` is among its thread's events.
    fn place(&self, read: At) -> ReadPlace {
        let syncs_before = self.syncs_before(read.thread, read.index as u32);
        ReadPlace {
            syncs_before,
            segment: self.segments[read.thread][syncs_before as usize],
        }
    }

    /// The edges of order `o` with their reads' places, in their order.
    fn reads(&self, o: usize) -> impl Iterator<Item = (&RfEdge, ReadPlace)> + Clone + '_ {
        self.edges[self.order_edges(o)]
            .iter()
            .map(move |e| (e, self.place(e.read.at())))
    }

    /// The `after` and `before` of `o`'s edges.
    fn ends(&self, o: usize) -> (At, At) {
        let e = &self.edges[self.orders[o] as usize];
        (e.after.at(), e.before.at())
    }

    /// The sync events of their threads before the `after` and the `before` of `o`'s edges: a
    /// restricted model keeps them all, so an end's index there is that count plus the kept
    /// accesses before it.
    fn ends_syncs_before(&self, o: usize) -> (u32, u32) {
        let (after, before) = self.ends(o);
        (
            self.syncs_before(after.thread, after.index as u32),
            self.syncs_before(before.thread, before.index as u32),
        )
    }

    /// Per thread, the accesses of `var` (none for `None`): the variable's accesses cut at each
    /// change of thread, not searched for per thread (a run of thousands of threads has
    /// thousands of variables that few of them access).
    fn own(&self, var: Option<VarId>) -> Vec<&[(u32, u32)]> {
        let mut own = vec![&[][..]; self.syncs.len()];
        let all = var
            .and_then(|v| self.accesses.get(v))
            .map_or(&[][..], |a| a);
        for accesses in all.chunk_by(|a, b| a.0 == b.0) {
            own[accesses[0].0 as usize] = accesses;
        }
        own
    }

    /// The sync events of `thread` before its event `index`.
    fn syncs_before(&self, thread: usize, index: u32) -> u32 {
        self.syncs[thread].partition_point(|&s| s < index) as u32
    }

    /// The edge a model of `var` keeps of `o` (`own`: the variable's accesses, per thread), at
    /// that model's indices, and whether it was moved to its read's segment end; `None`: none.
    ///
    /// A model of one object lets the reads of that object see another write: its race is a
    /// change of what they see. So are the reads that come after an access of the object in
    /// their segment: the race can be taken at that access, before the read happens (`while
    /// (q.len || working)` races on `q.len` whatever `working` would then have read). Such an
    /// edge still holds from the end of the read's segment on: the race is taken inside the
    /// segment or not at all, and a thread that went on past a read that saw another pointer
    /// would go elsewhere (a worker's `p->head = t->next` read NULL where the run read the
    /// next task; it would not free the task the submitter then links to). An edge that keeps
    /// another thread's write after the read is dropped.
    ///
    /// `syncs`: the sync-only model's threads, whose k-th event is the thread's k-th sync event.
    fn edge(
        &self,
        o: usize,
        var: Option<VarId>,
        own: &[&[(u32, u32)]],
        syncs: &Threads,
    ) -> Option<(RfEdge, bool)> {
        // The kept accesses of `at`'s thread before it.
        let accesses_before =
            |at: At| own[at.thread].partition_point(|a| (a.1 as usize) < at.index);
        let kept_at = |at: At, syncs_before: u32| At {
            thread: at.thread,
            index: syncs_before as usize + accesses_before(at),
        };
        let touches = |(e, r): &(&RfEdge, ReadPlace), v: VarId| {
            let read = e.read.at();
            let before = accesses_before(read);
            e.var as VarId == v || (before > 0 && own[read.thread][before - 1].1 >= r.segment)
        };
        let (after, before) = self.ends(o);
        let syncs_before = self.ends_syncs_before(o);
        let (read, after, moved) = match var {
            None => (self.reads(o).next()?, kept_at(after, syncs_before.0), false),
            Some(v) => match self.reads(o).find(|r| !touches(r, v)) {
                Some(r) => (r, kept_at(after, syncs_before.0), false),
                None => {
                    let (r, end) = self.reads(o).find_map(|(e, r)| {
                        let thread = e.read.at().thread;
                        let (end, syncs) = self
                            .segment_end(syncs, thread, &r)
                            .filter(|_| after.thread == thread)?;
                        let end = At {
                            thread: after.thread,
                            index: end as usize,
                        };
                        Some(((e, r), kept_at(end, syncs)))
                    })?;
                    (r, end, true)
                }
            },
        };
        let (e, r) = read;
        // A read the model does not keep (the deadlock model keeps no access) stands at the
        // last event kept before it.
        let at = kept_at(e.read.at(), r.syncs_before);
        let kept = var == Some(e.var as VarId);
        let edge = RfEdge {
            after: after.into(),
            before: kept_at(before, syncs_before.1).into(),
            var: e.var,
            read: At {
                thread: at.thread,
                index: at.index - usize::from(!kept && at.index > 0),
            }
            .into(),
        };
        Some((edge, moved))
    }

    /// The constraining event that ends the segment of `thread`'s read `r` (its index, and the
    /// thread's sync events before it), if the thread has one after the read; `syncs` as
    /// [`EventIndex::edge`] takes them. Looked for only when an edge is moved there, which few
    /// are: kept per read, it was 8 bytes an edge.
    fn segment_end(&self, syncs: &Threads, thread: usize, r: &ReadPlace) -> Option<(u32, u32)> {
        let events = &syncs[thread].events;
        (r.syncs_before as usize..events.len())
            .find(|&k| events[k].constrains())
            .map(|k| (self.syncs[thread][k], k as u32))
    }

    /// Every edge a model of `var` keeps ([`EventIndex::edge`]), sorted, one per order.
    fn edges(&self, var: Option<VarId>, own: &[&[(u32, u32)]], syncs: &Threads) -> Vec<RfEdge> {
        // The edges of the orders as they are, in the order of `orders` (sorted, and the
        // restriction keeps each thread's sync events in order); an edge moved to its read's
        // segment end is out of that order, and goes in by a merge.
        let mut in_order: Vec<RfEdge> = Vec::with_capacity(self.orders.len());
        let mut moved: Vec<RfEdge> = Vec::new();
        let mut sorted = true;
        for o in 0..self.orders.len() {
            let Some((edge, is_moved)) = self.edge(o, var, own, syncs) else {
                continue;
            };
            if is_moved {
                moved.push(edge);
            } else {
                sorted &= in_order.last().is_none_or(|last| *last <= edge);
                in_order.push(edge);
            }
        }
        let mut edges = merge(in_order, sorted, moved);
        edges.dedup_by_key(|e| (e.after, e.before));
        edges
    }

    /// The orders whose edge a model of `var` may keep otherwise than the sync-only model: those
    /// with a read of `var`, or a read after an access of `var` in its segment. By order. A
    /// read of `var` is an access of it (`own`), the first of its own segment's. `syncs` as
    /// [`EventIndex::edge`] takes them.
    fn touched(&self, own: &[&[(u32, u32)]], syncs: &Threads) -> Vec<u32> {
        let mut orders: Vec<u32> = Vec::new();
        for (thread, (reads, accesses)) in self.thread_reads.iter().zip(own).enumerate() {
            let (indices, events) = (&self.syncs[thread], &syncs[thread].events);
            // The reads at or after an earlier access of its segment are those at or after a
            // later one too: each read is looked at once.
            let mut done = 0;
            for &(_, a) in accesses.iter() {
                let next = indices.partition_point(|&s| s < a);
                let end = (next..indices.len())
                    .find(|&k| events[k].constrains())
                    .map_or(u32::MAX, |k| indices[k]);
                let first = done.max(reads.partition_point(|r| r.0 < a));
                let to = first.max(reads.partition_point(|r| r.0 < end));
                orders.extend(reads[first..to].iter().map(|r| r.1));
                done = to;
            }
        }
        orders.sort_unstable();
        orders.dedup();
        orders
    }
}

/// Where a restricted model's events are in the model it was restricted from
/// ([`Model::restrict`]).
#[derive(Clone, Debug)]
pub struct Origin<'a> {
    /// Per thread, the indices of its sync events there.
    syncs: &'a [Arc<[u32]>],
    /// Per thread, the accesses kept, as (thread, index) there.
    own: Vec<&'a [(u32, u32)]>,
}

impl Origin<'_> {
    /// The restricted model's event for event `at` of the model restricted from, if it kept it.
    pub fn local(&self, at: At) -> Option<At> {
        let syncs = self.syncs.get(at.thread)?;
        let own = self.own.get(at.thread)?;
        let i = u32::try_from(at.index).ok()?;
        let syncs_before = syncs.partition_point(|&s| s < i);
        let own_before = own.partition_point(|a| a.1 < i);
        let kept =
            syncs.get(syncs_before) == Some(&i) || own.get(own_before).is_some_and(|a| a.1 == i);
        kept.then_some(At {
            thread: at.thread,
            index: syncs_before + own_before,
        })
    }

    /// The indices there of the events of `thread` kept, in order.
    #[cfg(test)]
    pub fn kept(&self, thread: usize) -> Vec<usize> {
        let own = self.own[thread].iter().map(|a| a.1);
        let mut kept: Vec<usize> = self.syncs[thread]
            .iter()
            .copied()
            .chain(own)
            .map(|i| i as usize)
            .collect();
        kept.sort_unstable();
        kept
    }
}

/// Where each event others wait for is, per thread, condition instance and barrier instance:
/// how the solvers tell from thread positions alone whether a thread was forked or ended, an
/// instance signalled, a barrier entered, or the process exited.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sources {
    pub fork_of: Vec<Option<At>>,
    pub end_of: Vec<Option<At>>,
    /// In [`Pos`], 12 bytes each, not 24: a run has an instance per signal or broadcast.
    pub signal_of: Vec<Option<Pos>>,
    pub enters_of: Vec<Vec<At>>,
    /// The [`ModelOp::Exit`] that ends the process, if the run had one.
    pub exit_of: Option<At>,
    /// Per condition instance that wakes some: the waits it wakes that no wait loop encloses, as
    /// (thread, index of the wait's [`ModelOp::WaitRelease`]). Such a wait has no predicate to
    /// re-check: a signal that comes before the wait is entered is lost to it (a missed signal).
    /// Few instances do: a list per instance was 24 bytes a signal.
    pub bare_waits_of: BTreeMap<usize, Vec<(usize, usize)>>,
    /// Per [`ModelOp::TryFail`] whose object the observed order shows busy when it ran: the
    /// events that made it so. A mutex or rwlock: the acquisition of one other holder (the
    /// writer if there is one). A semaphore: every wait on it before (with them all, the count
    /// cannot be above the observed zero). The cut path runs these before the failure, as the run
    /// did; other orders may keep the object busy otherwise. A failure missing here was not busy
    /// in the observed order (see [`Model::unexplained_try_failures`]).
    pub busy_of: BTreeMap<At, Vec<At>>,
    /// Ordering edges that keep what each deciding read saw, sorted by the event that waits
    /// ([`crate::reads_from`]); set by [`Model::set_reads_from`], empty unless the binary marked
    /// deciding reads. Shared with the index of the models restricted from this one.
    pub reads_from: Arc<Vec<RfEdge>>,
    /// `reads_from` indexed for [`Model::rf_needs`], built when first asked: the solvers ask the
    /// sync-only model's, and the full model's, 12 bytes an edge and 4 an event, only the
    /// atomicity analysis. The sync-only model's is built with it, from edges it does not keep.
    rf_index: Derived<RfIndex>,
}

/// [`Sources::reads_from`] as [`Model::rf_needs`] reads it.
#[derive(Debug)]
struct RfIndex {
    /// Per thread, per event index (and one past its last event): where the edges whose `after`
    /// is at or past that event begin; empty without edges. The exhaustive search asks
    /// [`Model::rf_needs`] for every step it tries, and a binary search of the edges there was a
    /// quarter of app_tpool's detect.
    rf_from: Vec<Vec<u32>>,
    /// The `before` of each edge: what [`Model::rf_needs`] reads of them, under a third of an
    /// edge's size (the cut solver's scans read them by the million).
    befores: Vec<Pos>,
}

impl RfIndex {
    /// The index of `edges`, sorted, between the events of `threads`.
    fn of(edges: &[RfEdge], threads: &Threads) -> RfIndex {
        let ends = edges.iter().map(|e| (e.after, e.before));
        RfIndex::of_sorted(ends, edges.len(), threads).expect("a model's edges are sorted")
    }

    /// The index of the edges whose (`after`, `before`) `ends` gives, about `capacity` of them,
    /// between the events of `threads`; `None` if they do not come sorted. The sync-only model's
    /// come from the event index one by one: a list of them, kept only while its index was
    /// built, was the solve phase's peak (workqueue 10^7: 160 of 716 MB).
    fn of_sorted(
        ends: impl Iterator<Item = (Pos, Pos)>,
        capacity: usize,
        threads: &Threads,
    ) -> Option<RfIndex> {
        let mut ends = ends.peekable();
        let mut befores: Vec<Pos> = Vec::with_capacity(capacity);
        let mut last = None;
        let mut sorted = true;
        let mut rf_from: Vec<Vec<u32>> = Vec::new();
        if ends.peek().is_some() {
            rf_from = threads
                .iter()
                .map(|t| Vec::with_capacity(t.events.len() + 1))
                .collect();
        }
        for (thread, from) in rf_from.iter_mut().enumerate() {
            for index in 0..=threads[thread].events.len() {
                let at = Pos::from(At { thread, index });
                while let Some(end) = ends.next_if(|e| e.0 < at) {
                    sorted &= last.is_none_or(|l| l <= end);
                    last = Some(end);
                    befores.push(end.1);
                }
                from.push(befores.len() as u32);
            }
        }
        // Edges past every event (given by hand) are numbered on, in no event's range.
        for end in ends {
            sorted &= last.is_none_or(|l| l <= end);
            last = Some(end);
            befores.push(end.1);
        }
        befores.shrink_to_fit();
        sorted.then_some(RfIndex { rf_from, befores })
    }

    /// The `after` of edge `i`: its thread is the one whose edges run past it, its index the
    /// last whose edges begin at or before it.
    fn after(&self, i: u32) -> At {
        let thread = self
            .rf_from
            .partition_point(|f| f.last().is_some_and(|&end| end <= i));
        let index = self.rf_from[thread].partition_point(|&f| f <= i) - 1;
        At { thread, index }
    }

    /// The first edge `after` → `before`, if there is one.
    fn find(&self, after: At, before: Pos) -> Option<u32> {
        let from = self.rf_from.get(after.thread)?;
        let edges = *from.get(after.index)? as usize..*from.get(after.index + 1)? as usize;
        let i = edges.start + self.befores[edges.clone()].partition_point(|&b| b < before);
        (i < edges.end && self.befores[i] == before).then_some(i as u32)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelThread {
    pub tid: ThreadId,
    pub events: Events,
    /// What the trace recorded of each sync event, in program order ([`ModelEvent::Sync`]'s
    /// `sync`): apart from the events, so that an event stays small, and shared by the models
    /// [restricted](Model::restrict) from this one, which keep every sync event.
    pub observed: Recorded,
}

/// A model's threads by index: its own, or for a model of one variable the sync-only model's,
/// shared, with those of the threads that access the variable in their place. A copy of every
/// thread per variable was most of the work on a run of 9,001 threads and 17,725 variables
/// (htslib's thrash_threads2), each thread's handles to what the sync-only model's holds taken
/// and given back.
#[derive(Clone, Debug)]
pub struct Threads {
    all: Arc<[ModelThread]>,
    /// (thread, its events with the variable's accesses) of the threads that access it, by
    /// thread, in place of theirs in `all`.
    own: Box<[(u32, ModelThread)]>,
}

impl Threads {
    pub fn len(&self) -> usize {
        self.all.len()
    }

    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    #[inline]
    pub fn get(&self, thread: usize) -> Option<&ModelThread> {
        if !self.own.is_empty() {
            if let Ok(i) = self.own.binary_search_by_key(&thread, |o| o.0 as usize) {
                return Some(&self.own[i].1);
            }
        }
        self.all.get(thread)
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &ModelThread> + ExactSizeIterator {
        (0..self.len()).map(|t| &self[t])
    }

    pub fn to_vec(&self) -> Vec<ModelThread> {
        self.iter().cloned().collect()
    }

    /// These threads with `own` (by thread) in the place of theirs.
    fn with(&self, own: Vec<(u32, ModelThread)>) -> Threads {
        Threads {
            all: Arc::clone(&self.all),
            own: own.into(),
        }
    }
}

impl std::ops::Index<usize> for Threads {
    type Output = ModelThread;

    #[inline]
    fn index(&self, thread: usize) -> &ModelThread {
        self.get(thread).expect("a thread of the model")
    }
}

impl<'a> IntoIterator for &'a Threads {
    type Item = &'a ModelThread;
    type IntoIter = Box<dyn DoubleEndedIterator<Item = &'a ModelThread> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl From<Vec<ModelThread>> for Threads {
    fn from(threads: Vec<ModelThread>) -> Threads {
        Threads {
            all: threads.into(),
            own: Box::default(),
        }
    }
}

impl FromIterator<ModelThread> for Threads {
    fn from_iter<I: IntoIterator<Item = ModelThread>>(threads: I) -> Threads {
        threads.into_iter().collect::<Vec<_>>().into()
    }
}

impl PartialEq for Threads {
    fn eq(&self, other: &Threads) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Threads {}

/// A thread's events in program order. The sync-only model's are the whole model's sync
/// events, picked out of its events by index, not copied (a copy was 16 bytes a sync event); a
/// model of one variable shares those and holds the variable's accesses apart, each at its index
/// among them all.
#[derive(Clone, Debug, Default)]
pub struct Events {
    base: Arc<[ModelEvent]>,
    /// The indices in `base` of the events, in order, when they are some of them; `None`: all.
    pick: Option<Arc<[u32]>>,
    /// (index, event) of the events between those of `base`, by index.
    extra: Box<[(u32, ModelEvent)]>,
}

impl Events {
    pub fn len(&self) -> usize {
        self.base_len() + self.extra.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn base_len(&self) -> usize {
        self.pick.as_ref().map_or(self.base.len(), |p| p.len())
    }

    #[inline]
    fn base_get(&self, index: usize) -> Option<&ModelEvent> {
        match &self.pick {
            None => self.base.get(index),
            Some(pick) => self.base.get(*pick.get(index)? as usize),
        }
    }

    #[inline]
    pub fn get(&self, index: usize) -> Option<&ModelEvent> {
        if self.extra.is_empty() {
            return self.base_get(index);
        }
        let before = self.extra.partition_point(|e| (e.0 as usize) < index);
        match self.extra.get(before) {
            Some((at, e)) if *at as usize == index => Some(e),
            _ => self.base_get(index - before),
        }
    }

    /// Event `index`, to change: the events shared with other models are copied first.
    pub fn get_mut(&mut self, index: usize) -> Option<&mut ModelEvent> {
        let before = self.extra.partition_point(|e| (e.0 as usize) < index);
        if self
            .extra
            .get(before)
            .is_some_and(|e| e.0 as usize == index)
        {
            return Some(&mut self.extra[before].1);
        }
        if self.pick.is_some() || Arc::get_mut(&mut self.base).is_none() {
            self.base = (0..self.base_len())
                .map(|i| self.base_get(i).copied())
                .collect::<Option<_>>()?;
            self.pick = None;
        }
        Arc::get_mut(&mut self.base)?.get_mut(index - before)
    }

    /// The events at `indices` (sorted), sharing these events where they are one list.
    fn picked(&self, indices: &Arc<[u32]>) -> Events {
        match (&self.pick, self.extra.is_empty()) {
            (None, true) => Events {
                base: Arc::clone(&self.base),
                pick: Some(Arc::clone(indices)),
                extra: Box::default(),
            },
            _ => indices
                .iter()
                .map(|&i| self[i as usize])
                .collect::<Vec<_>>()
                .into(),
        }
    }

    pub fn last(&self) -> Option<&ModelEvent> {
        self.get(self.len().checked_sub(1)?)
    }

    pub fn iter(&self) -> EventsIter<'_> {
        self.range(0..self.len())
    }

    /// The events of `range`, in order.
    pub fn range(&self, range: Range<usize>) -> EventsIter<'_> {
        EventsIter {
            events: self,
            range,
        }
    }
}

impl From<Vec<ModelEvent>> for Events {
    fn from(events: Vec<ModelEvent>) -> Events {
        Events {
            base: events.into(),
            pick: None,
            extra: Box::default(),
        }
    }
}

impl Index<usize> for Events {
    type Output = ModelEvent;

    #[inline]
    fn index(&self, index: usize) -> &ModelEvent {
        match self.get(index) {
            Some(e) => e,
            None => panic!("event {index} of a thread of {} events", self.len()),
        }
    }
}

impl PartialEq for Events {
    fn eq(&self, other: &Events) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Events {}

impl<'a> IntoIterator for &'a Events {
    type Item = &'a ModelEvent;
    type IntoIter = EventsIter<'a>;

    fn into_iter(self) -> EventsIter<'a> {
        self.iter()
    }
}

/// [`Events::iter`], [`Events::range`].
#[derive(Clone, Debug)]
pub struct EventsIter<'a> {
    events: &'a Events,
    range: Range<usize>,
}

impl<'a> Iterator for EventsIter<'a> {
    type Item = &'a ModelEvent;

    fn next(&mut self) -> Option<&'a ModelEvent> {
        let i = self.range.next()?;
        Some(&self.events[i])
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}

impl DoubleEndedIterator for EventsIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let i = self.range.next_back()?;
        Some(&self.events[i])
    }
}

impl ExactSizeIterator for EventsIter<'_> {}

/// 16 bytes: a model holds one per sync operation and per access kept, and each unit of work
/// solved in parallel a copy of the sync events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelEvent {
    /// The thread accessed shared object `var` (a [`VarId`]) in this segment (one record per
    /// object and segment: the dominant kind, the first site of that kind).
    Access {
        var: u32,
        kind: AccessKind,
        site: SiteId,
    },
    /// The thread's `sync`-th sync operation (its [`Observed::op_index`], the index into
    /// [`ModelThread::observed`]).
    Sync { op: PackedOp, sync: u32 },
}

/// A [`ModelOp`] in 12 bytes, as a [`ModelEvent`] holds it: which operation, and its object
/// indices as `u32` ([`PackedOp::get`] gives it back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedOp {
    kind: OpKind,
    a: u32,
    b: u32,
}

/// [`ModelOp`]'s variants, with the variant of a [`Wake`], of a [`TryTarget`] and whether a loop
/// exit names a mutex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpKind {
    Start,
    End,
    Fork,
    Join,
    Lock,
    Unlock,
    ReadLock,
    WriteLock,
    RwUnlock,
    WaitRelease,
    WaitReturnSignal,
    WaitReturnUnsignalled,
    WaitReturnNever,
    Signal,
    LoopExit,
    LoopExitWithMutex,
    BarrierEnter,
    BarrierExit,
    SemWait,
    SemPost,
    TryMutex,
    TryRwRead,
    TryRwWrite,
    TrySem,
    Exit,
    Nop,
}

impl From<ModelOp> for PackedOp {
    fn from(op: ModelOp) -> PackedOp {
        // Every object of the model is named by some event of it, and a model holds fewer than
        // 2^32 events of a thread.
        let i = |x: usize| u32::try_from(x).expect("fewer than 2^32 objects of a kind");
        let (kind, a, b) = match op {
            ModelOp::Start { forked } => (OpKind::Start, u32::from(forked), 0),
            ModelOp::End => (OpKind::End, 0, 0),
            ModelOp::Fork { child } => (OpKind::Fork, i(child), 0),
            ModelOp::Join { child } => (OpKind::Join, i(child), 0),
            ModelOp::Lock { mutex } => (OpKind::Lock, i(mutex), 0),
            ModelOp::Unlock { mutex } => (OpKind::Unlock, i(mutex), 0),
            ModelOp::ReadLock { rw } => (OpKind::ReadLock, i(rw), 0),
            ModelOp::WriteLock { rw } => (OpKind::WriteLock, i(rw), 0),
            ModelOp::RwUnlock { rw } => (OpKind::RwUnlock, i(rw), 0),
            ModelOp::WaitRelease { mutex } => (OpKind::WaitRelease, i(mutex), 0),
            ModelOp::WaitReturn { mutex, wake } => match wake {
                Wake::Signal(cond) => (OpKind::WaitReturnSignal, i(mutex), i(cond)),
                Wake::Unsignalled => (OpKind::WaitReturnUnsignalled, i(mutex), 0),
                Wake::Never => (OpKind::WaitReturnNever, i(mutex), 0),
            },
            ModelOp::Signal { cond } => (OpKind::Signal, i(cond), 0),
            ModelOp::LoopExit { cond, mutex } => match mutex {
                Some(m) => (OpKind::LoopExitWithMutex, i(cond), i(m)),
                None => (OpKind::LoopExit, i(cond), 0),
            },
            ModelOp::BarrierEnter { barrier } => (OpKind::BarrierEnter, i(barrier), 0),
            ModelOp::BarrierExit { barrier } => (OpKind::BarrierExit, i(barrier), 0),
            ModelOp::SemWait { sem, units } => (OpKind::SemWait, i(sem), units),
            ModelOp::SemPost { sem, units } => (OpKind::SemPost, i(sem), units),
            ModelOp::TryFail { target } => match target {
                TryTarget::Mutex(m) => (OpKind::TryMutex, i(m), 0),
                TryTarget::RwRead(rw) => (OpKind::TryRwRead, i(rw), 0),
                TryTarget::RwWrite(rw) => (OpKind::TryRwWrite, i(rw), 0),
                TryTarget::Sem(sem) => (OpKind::TrySem, i(sem), 0),
            },
            ModelOp::Exit => (OpKind::Exit, 0, 0),
            ModelOp::Nop => (OpKind::Nop, 0, 0),
        };
        PackedOp { kind, a, b }
    }
}

impl PackedOp {
    #[inline]
    pub fn get(self) -> ModelOp {
        let (a, b) = (self.a as usize, self.b as usize);
        match self.kind {
            OpKind::Start => ModelOp::Start { forked: a != 0 },
            OpKind::End => ModelOp::End,
            OpKind::Fork => ModelOp::Fork { child: a },
            OpKind::Join => ModelOp::Join { child: a },
            OpKind::Lock => ModelOp::Lock { mutex: a },
            OpKind::Unlock => ModelOp::Unlock { mutex: a },
            OpKind::ReadLock => ModelOp::ReadLock { rw: a },
            OpKind::WriteLock => ModelOp::WriteLock { rw: a },
            OpKind::RwUnlock => ModelOp::RwUnlock { rw: a },
            OpKind::WaitRelease => ModelOp::WaitRelease { mutex: a },
            OpKind::WaitReturnSignal => ModelOp::WaitReturn {
                mutex: a,
                wake: Wake::Signal(b),
            },
            OpKind::WaitReturnUnsignalled => ModelOp::WaitReturn {
                mutex: a,
                wake: Wake::Unsignalled,
            },
            OpKind::WaitReturnNever => ModelOp::WaitReturn {
                mutex: a,
                wake: Wake::Never,
            },
            OpKind::Signal => ModelOp::Signal { cond: a },
            OpKind::LoopExit => ModelOp::LoopExit {
                cond: a,
                mutex: None,
            },
            OpKind::LoopExitWithMutex => ModelOp::LoopExit {
                cond: a,
                mutex: Some(b),
            },
            OpKind::BarrierEnter => ModelOp::BarrierEnter { barrier: a },
            OpKind::BarrierExit => ModelOp::BarrierExit { barrier: a },
            OpKind::SemWait => ModelOp::SemWait {
                sem: a,
                units: self.b,
            },
            OpKind::SemPost => ModelOp::SemPost {
                sem: a,
                units: self.b,
            },
            OpKind::TryMutex => ModelOp::TryFail {
                target: TryTarget::Mutex(a),
            },
            OpKind::TryRwRead => ModelOp::TryFail {
                target: TryTarget::RwRead(a),
            },
            OpKind::TryRwWrite => ModelOp::TryFail {
                target: TryTarget::RwWrite(a),
            },
            OpKind::TrySem => ModelOp::TryFail {
                target: TryTarget::Sem(a),
            },
            OpKind::Exit => ModelOp::Exit,
            OpKind::Nop => ModelOp::Nop,
        }
    }
}

/// A [`ModelThread`] built event by event, in program order.
pub struct ThreadBuilder {
    tid: ThreadId,
    pub(crate) events: Vec<ModelEvent>,
    records: Vec<Record>,
    highs: Vec<(u32, u32)>,
    /// Each distinct (site, operation)'s index in `ops`.
    ids: FxHashMap<(SiteId, SyncOp), u32>,
    ops: Vec<(SiteId, SyncOp)>,
}

impl ThreadBuilder {
    pub fn new(tid: ThreadId) -> ThreadBuilder {
        ThreadBuilder::with_capacity(tid, 0, 0)
    }

    /// Room for `events` events, `syncs` of them sync events: reserved once rather than doubled
    /// as they come (up to twice the thread's size in address space while it is built).
    pub fn with_capacity(tid: ThreadId, events: usize, syncs: usize) -> ThreadBuilder {
        ThreadBuilder {
            tid,
            events: Vec::with_capacity(events),
            records: Vec::with_capacity(syncs),
            highs: Vec::new(),
            ids: FxHashMap::default(),
            ops: Vec::new(),
        }
    }

    pub fn access(&mut self, var: VarId, kind: AccessKind, site: SiteId) -> &mut ThreadBuilder {
        // A shared object has an access of its own in the model, and a thread of the model
        // fewer than 2^32 events.
        let var = u32::try_from(var).expect("fewer than 2^32 shared objects");
        self.events.push(ModelEvent::Access { var, kind, site });
        self
    }

    /// The next sync operation, recorded as `observed` (its `op_index` is its number among the
    /// thread's, whatever it says).
    pub fn sync(&mut self, op: ModelOp, observed: Observed) -> &mut ThreadBuilder {
        let sync = self.records.len() as u32;
        self.events.push(ModelEvent::Sync {
            op: op.into(),
            sync,
        });
        let ops = &mut self.ops;
        let key = (observed.site, observed.op);
        let id = *self.ids.entry(key).or_insert_with(|| {
            ops.push(key);
            u32::try_from(ops.len() - 1).expect("fewer than 2^32 distinct operations")
        });
        let high = (observed.seq >> 32) as u32;
        if self.highs.last().map_or(0, |h| h.1) != high {
            self.highs.push((sync, high));
        }
        self.records.push(Record {
            seq: observed.seq as u32,
            op: id,
        });
        self
    }

    pub fn build(self) -> ModelThread {
        ModelThread {
            tid: self.tid,
            events: self.events.into(),
            observed: Recorded {
                records: self.records.into(),
                highs: self.highs.into(),
                ops: self.ops.into(),
            },
        }
    }
}

/// What the trace recorded of a sync operation: the schedule names it by these. A value made
/// from its thread's [`Recorded`] when asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observed {
    /// Process-wide order of the run ([`ilgen_trace::PENDING`] if it never completed).
    pub seq: u64,
    /// This is the thread's `op_index`-th sync operation (0-based): replay matches by it.
    pub op_index: u32,
    pub site: SiteId,
    pub op: SyncOp,
}

/// A thread's recorded sync operations ([`Observed`]) in program order, shared by the models
/// [restricted](Model::restrict) from the one that holds them. 8 bytes an operation: its site
/// and operation are an index into the thread's distinct ones (a run repeats a few calls on a
/// few locks and condition variables), since a `SyncOp`, with up to two addresses, is 24 bytes
/// alone, each one's number among its thread's is its place here, and its seq's high word is
/// kept apart, once per change (a run of fewer than 2^32 records has none but a never-completed
/// operation's [`ilgen_trace::PENDING`]).
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    records: Arc<[Record]>,
    /// (first operation, high word) of each stretch of operations whose seqs share a high word
    /// other than the one before (0 before the first).
    highs: Arc<[(u32, u32)]>,
    ops: Arc<[(SiteId, SyncOp)]>,
}

/// One recorded operation of [`Recorded`]: its seq's low word and the index of its site and
/// operation in `ops`.
#[derive(Clone, Copy, Debug)]
struct Record {
    seq: u32,
    op: u32,
}

const _: () = assert!(std::mem::size_of::<Record>() == 8);

impl Recorded {
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The thread's `sync`-th operation.
    #[inline]
    pub fn get(&self, sync: usize) -> Option<Observed> {
        let r = self.records.get(sync)?;
        Some(Observed {
            seq: self.seq_of(sync, r),
            op_index: sync as u32,
            site: self.ops[r.op as usize].0,
            op: self.ops[r.op as usize].1,
        })
    }

    /// The thread's `sync`-th operation, which it has.
    #[inline]
    pub fn at(&self, sync: usize) -> Observed {
        match self.get(sync) {
            Some(o) => o,
            None => panic!("operation {sync} of a thread of {}", self.len()),
        }
    }

    /// The seq of the thread's `sync`-th operation, without the rest.
    #[inline]
    pub fn seq(&self, sync: usize) -> Option<u64> {
        Some(self.seq_of(sync, self.records.get(sync)?))
    }

    /// The seq of `r`, the thread's `sync`-th operation.
    #[inline]
    fn seq_of(&self, sync: usize, r: &Record) -> u64 {
        let high = match self.highs.partition_point(|h| h.0 as usize <= sync) {
            0 => 0,
            k => self.highs[k - 1].1,
        };
        u64::from(r.seq) | (u64::from(high) << 32)
    }

    /// How many operations come before the first whose seq is not below `bound`, the seqs being
    /// ordered up to there.
    pub fn seqs_below(&self, bound: u64) -> usize {
        let (mut below, mut len) = (0, self.len());
        while len > 0 {
            let half = len / 2;
            if self.seq(below + half) < Some(bound) {
                below += half + 1;
                len -= half + 1;
            } else {
                len = half;
            }
        }
        below
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Observed> + ExactSizeIterator + '_ {
        (0..self.len()).map(|sync| self.at(sync))
    }

    /// Whether `other` is these operations themselves, not an equal copy.
    pub fn same(&self, other: &Recorded) -> bool {
        Arc::ptr_eq(&self.records, &other.records)
    }
}

impl PartialEq for Recorded {
    fn eq(&self, other: &Recorded) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Recorded {}

/// A sync operation's meaning in the model. Thread and object fields are indices into
/// [`Model::threads`] and the vectors of [`SyncObjects`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelOp {
    /// `forked`: some recorded thread forks this one, so it starts only after that fork.
    Start {
        forked: bool,
    },
    End,
    Fork {
        child: usize,
    },
    /// Enabled once `child` has executed its `End`.
    Join {
        child: usize,
    },
    /// Mutex and spin lock acquisitions, successful try and timed locks included.
    Lock {
        mutex: usize,
    },
    /// Only the holder unlocks; a recursive mutex is free when its count drops to zero.
    Unlock {
        mutex: usize,
    },
    ReadLock {
        rw: usize,
    },
    WriteLock {
        rw: usize,
    },
    RwUnlock {
        rw: usize,
    },
    /// `pthread_cond_wait` entered: releases `mutex`.
    WaitRelease {
        mutex: usize,
    },
    /// The wait returned: needs its wake-up and takes `mutex` again.
    WaitReturn {
        mutex: usize,
        wake: Wake,
    },
    /// A signal or broadcast: the release of condition instance `cond`.
    Signal {
        cond: usize,
    },
    /// A wait loop was left, in the run without calling the wait: the awaited predicate held.
    /// In the model it is left once instance `cond` was signalled; until then the thread would
    /// have called the wait, so it may release `mutex` (the condition variable's mutex, when some
    /// wait on it names it) and take it back to leave.
    LoopExit {
        cond: usize,
        mutex: Option<usize>,
    },
    BarrierEnter {
        barrier: usize,
    },
    /// Enabled once every party of the instance has entered.
    BarrierExit {
        barrier: usize,
    },
    /// Takes `units` of semaphore `sem`: one for a `sem_wait`, the bytes it got for a read of a
    /// stream between threads (`SyncOp::ChannelRead`, a semaphore of its own).
    SemWait {
        sem: usize,
        units: u32,
    },
    /// Gives `units`: one for a `sem_post`, the bytes it wrote for a write to a stream.
    SemPost {
        sem: usize,
        units: u32,
    },
    /// A try operation that failed (trylock, spin trylock, tryrdlock, trywrlock, sem_trywait):
    /// it neither blocks nor acquires, and leaves every object as it is, but it can happen only
    /// while its object is busy ([`TryTarget`] says when). Where it cannot, the real operation would
    /// have succeeded and the thread gone another way: a thread stopped at it is not blocked (no
    /// deadlock), the model just does not follow it further.
    TryFail {
        target: TryTarget,
    },
    /// The exit that ended the process (`exit()`, `quick_exit()`, `_exit()`, `_Exit()`, the return
    /// from `main`), the last operation the run completed: other threads' steps may come before it
    /// in any order, none after it. An exit the run shows others going on after (exit handlers that
    /// ran while other threads still took steps, or took steps themselves) is a [`ModelOp::Nop`].
    Exit,
    /// Constrains nothing in the model: a failed try operation the observed order does not show
    /// busy (its object taken by uninstrumented code, or released just before the failed attempt
    /// was recorded), one that failed on a lock its own thread held, a timed lock that timed out,
    /// detach, wait-loop entry, a wait-loop exit no signal is known for, an unlock of a lock the
    /// thread did not hold (taken by uninstrumented code), a join of an unrecorded thread, an
    /// operation left pending while the thread went on (cancelled in it).
    Nop,
}

/// What a failed try operation tried, and so when it fails ([`ModelOp::TryFail`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TryTarget {
    /// `pthread_mutex_trylock`, `pthread_spin_trylock`: fails while another thread holds the mutex.
    Mutex(usize),
    /// `pthread_rwlock_tryrdlock`: fails while another thread holds the rwlock for writing.
    RwRead(usize),
    /// `pthread_rwlock_trywrlock`: fails while another thread holds the rwlock, for writing or
    /// for reading.
    RwWrite(usize),
    /// `sem_trywait`: fails while the semaphore's count is zero.
    Sem(usize),
}

/// What released a condition wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// The signal or broadcast of this condition instance.
    Signal(usize),
    /// It returned without a signal (timed out or spurious): nothing to wait for.
    Unsignalled,
    /// It never returned in the run (PENDING) and no signal is known that could release it.
    Never,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncObjects {
    pub mutexes: Vec<MutexObject>,
    /// Addresses of the rwlocks.
    pub rwlocks: Vec<u64>,
    pub sems: Vec<SemObject>,
    /// Address of each condition instance (one per signal or broadcast).
    pub conds: Vec<u64>,
    pub barriers: Vec<BarrierObject>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MutexObject {
    pub addr: u64,
    /// Some thread locked it while holding it, so the run's mutex is recursive.
    pub recursive: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SemObject {
    pub addr: u64,
    /// The count the model starts from: the recorded one, or the smallest the observed run needs.
    pub initial: u32,
    /// The count `sem_init` or `sem_open` gave it in the run, if that was recorded.
    pub recorded: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierObject {
    pub addr: u64,
    /// Threads that entered this instance.
    pub parties: u32,
    /// Some thread left it in the run; if none did, its exits never happen in the model either.
    pub released: bool,
}

impl ModelEvent {
    /// Whether the solver must interleave at this event: accesses and [`ModelOp::Nop`] run along
    /// with their thread's segment.
    pub fn constrains(&self) -> bool {
        matches!(self, ModelEvent::Sync { op, .. } if op.kind != OpKind::Nop)
    }

    /// The operation of a sync event.
    #[inline]
    pub fn op(&self) -> Option<ModelOp> {
        match self {
            ModelEvent::Sync { op, .. } => Some(op.get()),
            ModelEvent::Access { .. } => None,
        }
    }

    pub fn is_sync(&self) -> bool {
        matches!(self, ModelEvent::Sync { .. })
    }
}

impl ModelThread {
    /// Whether event `index` is a try or timed operation that took its object in the run: where
    /// the object is not free, the real call fails or times out instead of waiting for good, so a
    /// thread stopped before it is not blocked, and it requests no lock of the lock graph.
    pub fn acquires_by_try(&self, index: usize) -> bool {
        self.observed_at(index).and_then(|o| o.op.acquired()) == Some(true)
    }

    /// What the trace recorded of event `index`, a sync event.
    pub fn observed_at(&self, index: usize) -> Option<Observed> {
        match self.events.get(index)? {
            ModelEvent::Sync { sync, .. } => self.observed.get(*sync as usize),
            ModelEvent::Access { .. } => None,
        }
    }

    /// The seq of event `index`, a sync event: [`ModelThread::observed_at`] without the rest.
    pub fn seq_at(&self, index: usize) -> Option<u64> {
        match self.events.get(index)? {
            ModelEvent::Sync { sync, .. } => self.observed.seq(*sync as usize),
            ModelEvent::Access { .. } => None,
        }
    }

    /// The recorded operation of event `e` of this thread, a sync event.
    pub fn observed_of(&self, e: &ModelEvent) -> Option<Observed> {
        match e {
            ModelEvent::Sync { sync, .. } => self.observed.get(*sync as usize),
            ModelEvent::Access { .. } => None,
        }
    }
}

/// [`Model::observed_order`], as it goes.
pub struct ObservedOrder<'a> {
    model: &'a Model,
    /// Per thread: where its events stop, the next event to look at, the seq of its last
    /// completed operation so far.
    end: Vec<usize>,
    next: Vec<usize>,
    last: Vec<u64>,
    /// Each thread's next sync event, by (seq or the seq before it, thread, index), least first.
    heads: BinaryHeap<Reverse<(u64, usize, usize)>>,
}

impl ObservedOrder<'_> {
    fn push_next(&mut self, thread: usize) {
        let t = &self.model.threads[thread];
        while self.next[thread] < self.end[thread] {
            let index = self.next[thread];
            self.next[thread] += 1;
            if let Some(seq) = t.seq_at(index) {
                if seq != ilgen_trace::PENDING {
                    self.last[thread] = seq;
                }
                self.heads.push(Reverse((self.last[thread], thread, index)));
                return;
            }
        }
    }
}

impl Iterator for ObservedOrder<'_> {
    type Item = At;

    fn next(&mut self) -> Option<At> {
        let Reverse((_, thread, index)) = self.heads.pop()?;
        self.push_next(thread);
        Some(At { thread, index })
    }
}

/// The sync events of a model without overlay in the observed order ([`Model::observed_order`]
/// of the whole run), found once: the observed order of a cut is the events of this one in the
/// cut, so a cut reads it off ([`Model::cut_order`]) rather than merging the threads again. 8
/// bytes a sync event of a sync-only model, whose thread's k-th event is its k-th sync event:
/// an event's index is not kept, a cut counts its thread's events as it goes along the order.
#[derive(Debug)]
pub(crate) struct RunOrder {
    /// The thread of every sync event, in the observed order.
    threads: Vec<u32>,
    /// Per thread, the position in `threads` of each of its sync events.
    positions: Vec<Vec<u32>>,
    /// Per thread, the index of each of its sync events; empty for a model of sync events only.
    indices: Vec<Vec<u32>>,
}

impl RunOrder {
    fn of(model: &Model) -> RunOrder {
        let lens: Vec<usize> = model.threads.iter().map(|t| t.events.len()).collect();
        let word = |x: usize| u32::try_from(x).expect("a model's indices fit in 32 bits");
        let syncs_only = model
            .threads
            .iter()
            .all(|t| t.events.len() == t.observed.len());
        // Sized first: the order's iterator has no length, and a vector grown by doubling as it
        // came held up to twice its 4 bytes a sync event.
        let mut threads: Vec<u32> =
            Vec::with_capacity(model.threads.iter().map(|t| t.observed.len()).sum());
        let mut positions: Vec<Vec<u32>> = model
            .threads
            .iter()
            .map(|t| Vec::with_capacity(t.observed.len()))
            .collect();
        let mut indices: Vec<Vec<u32>> = match syncs_only {
            true => Vec::new(),
            false => positions.clone(),
        };
        for at in model.observed_order(&lens) {
            positions[at.thread].push(word(threads.len()));
            threads.push(word(at.thread));
            if let Some(list) = indices.get_mut(at.thread) {
                list.push(word(at.index));
            }
        }
        RunOrder {
            threads,
            positions,
            indices,
        }
    }

    fn len(&self) -> usize {
        self.threads.len()
    }

    /// The index of `thread`'s `k`-th sync event.
    #[inline]
    fn index(&self, thread: usize, k: usize) -> u32 {
        match self.indices.get(thread) {
            Some(list) => list[k],
            None => k as u32,
        }
    }

    /// How many of `thread`'s sync events lie before its event `index`.
    fn syncs_before(&self, thread: usize, index: usize) -> usize {
        match self.indices.get(thread) {
            Some(list) => list.partition_point(|&i| (i as usize) < index),
            None => index.min(self.positions[thread].len()),
        }
    }
}

/// [`Model::cut_order`], as it goes: the order's events up to the first one the cut lacks, then
/// the cut's events after it.
pub struct CutOrder<'a> {
    run: &'a RunOrder,
    /// The next position of the run's order to look at, and where the prefix ends.
    next: usize,
    prefix: usize,
    /// Per thread, how many of its sync events the cut holds.
    end: Vec<usize>,
    /// One past the position in the run's order of the cut's last event.
    last: usize,
    tail: Tail,
    /// Events not given yet.
    left: usize,
    /// With an overlay, per thread, the variable's accesses passed so far: the events come in
    /// program order per thread, so their indices here are found as they come.
    passed: Vec<usize>,
    /// With an overlay, per thread, its accesses kept ([`Overlay::accesses`]), looked up once:
    /// a lookup per event was a quarter of the order's cost.
    accesses: Vec<&'a [(u32, u32)]>,
    /// Per thread, its sync events among the order's before `next`.
    seen: Vec<usize>,
}

/// How a [`CutOrder`] finds the cut's events after its prefix.
enum Tail {
    /// The run's order goes on, each event given if its thread's index is below this one's
    /// (at the base model's indices): where the cut lacks few of the events up to its last.
    Scan { below: Vec<usize> },
    /// Per thread, its next sync event to give; each thread's next event by (position,
    /// thread), least first: where the cut lacks most.
    Merge {
        syncs: Vec<usize>,
        heads: BinaryHeap<Reverse<(u32, u32)>>,
    },
}

impl CutOrder<'_> {
    /// How many of the first events given are the run's order's first: those before the first
    /// event the cut lacks.
    pub fn prefix(&self) -> usize {
        self.prefix
    }

    /// One past the position in the run's order of the cut's last event: the cut lacks none of
    /// the events of the order before [`CutOrder::prefix`], some of those up to this one.
    pub(crate) fn reach(&self) -> usize {
        self.last
    }

    /// The threads whose first sync event the cut lacks comes before [`CutOrder::reach`], each
    /// with how many of its sync events the cut holds and that event's position in the run's
    /// order: the threads the cut stops while others run on.
    pub(crate) fn lagging(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        let run = self.run;
        (0..self.end.len()).filter_map(move |t| {
            let next = *run.positions[t].get(self.end[t])? as usize;
            (next < self.last).then_some((t, self.end[t], next))
        })
    }

    /// The thread of the event at `position` of the run's order.
    pub(crate) fn thread_at(&self, position: usize) -> usize {
        self.run.threads[position] as usize
    }

    /// How many of the order's events lie before `position` of the run's order.
    pub(crate) fn before(&self, position: usize) -> usize {
        let run = self.run;
        (0..self.end.len())
            .map(|t| {
                let k = run.positions[t].partition_point(|&p| (p as usize) < position);
                k.min(self.end[t])
            })
            .sum()
    }

    /// Passes the order's first `k` events, all in its prefix and none given yet, without
    /// giving them: sets `pos[t]` past each thread's last one passed (at this model's indices),
    /// leaving the others. Each thread's count is looked up, not walked: a run-long prefix walked
    /// per cut was most of a lock-heavy run's cut path.
    pub fn skip(&mut self, k: usize, pos: &mut [usize]) {
        assert!(
            self.next == 0 && k <= self.prefix,
            "a skip within the prefix"
        );
        let run = self.run;
        for (t, p) in pos.iter_mut().enumerate() {
            let seen = run.positions[t].partition_point(|&at| (at as usize) < k);
            self.seen[t] = seen;
            if seen > 0 {
                *p = self.here(t, run.index(t, seen - 1) as usize).index + 1;
            }
        }
        self.next = k;
        self.left -= k;
    }

    /// The base model's event `thread`, `index` at this model's index.
    fn here(&mut self, thread: usize, index: usize) -> At {
        let Some(&accesses) = self.accesses.get(thread) else {
            return At { thread, index };
        };
        let passed = &mut self.passed[thread];
        while accesses.get(*passed).is_some_and(|a| a.1 as usize <= index) {
            *passed += 1;
        }
        At {
            thread,
            index: index + *passed,
        }
    }
}

impl Iterator for CutOrder<'_> {
    type Item = At;

    fn next(&mut self) -> Option<At> {
        if self.left == 0 {
            return None;
        }
        let run = self.run;
        // The order's next event, and its thread's sync events before it.
        let mut step = |next: &mut usize| {
            let thread = run.threads[*next] as usize;
            *next += 1;
            self.seen[thread] += 1;
            (thread, run.index(thread, self.seen[thread] - 1))
        };
        let (thread, index) = match &mut self.tail {
            _ if self.next < self.prefix => step(&mut self.next),
            Tail::Scan { below } => loop {
                let (thread, index) = step(&mut self.next);
                if (index as usize) < below[thread] {
                    break (thread, index);
                }
            },
            Tail::Merge { syncs, heads } => {
                let Reverse((_, thread)) = heads.pop()?;
                let t = thread as usize;
                syncs[t] += 1;
                if syncs[t] < self.end[t] {
                    heads.push(Reverse((run.positions[t][syncs[t]], thread)));
                }
                (t, run.index(t, syncs[t] - 1))
            }
        };
        self.left -= 1;
        Some(self.here(thread, index as usize))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for CutOrder<'_> {}

impl Model {
    /// The model with every source but [`Sources::busy_of`].
    pub(crate) fn derive(threads: Vec<ModelThread>, objects: impl Into<Arc<SyncObjects>>) -> Model {
        let objects = objects.into();
        let mut s = Sources {
            fork_of: vec![None; threads.len()],
            end_of: vec![None; threads.len()],
            signal_of: vec![None; objects.conds.len()],
            enters_of: vec![Vec::new(); objects.barriers.len()],
            exit_of: None,
            bare_waits_of: BTreeMap::new(),
            busy_of: BTreeMap::new(),
            reads_from: Arc::default(),
            rf_index: Derived::default(),
        };
        for (thread, t) in threads.iter().enumerate() {
            // Wait loops open around this point (their condition variables; 0: unknown), and the
            // index of the wait last entered outside any of them.
            let mut open_loops: Vec<u64> = Vec::new();
            let mut bare_release = None;
            for (index, e) in t.events.iter().enumerate() {
                let at = At { thread, index };
                let ModelEvent::Sync { op, sync } = e else {
                    continue;
                };
                let observed = t.observed.at(*sync as usize);
                match observed.op {
                    SyncOp::WaitLoopEnter { cond } => open_loops.push(cond),
                    SyncOp::WaitLoopExit { cond } => {
                        if let Some(i) = open_loops.iter().rposition(|&c| c == cond) {
                            open_loops.remove(i);
                        }
                    }
                    _ => {}
                }
                match op.get() {
                    ModelOp::WaitRelease { .. } => {
                        let cond = observed.op.object();
                        let looped = open_loops.iter().any(|&c| c == 0 || Some(c) == cond);
                        bare_release = (!looped).then_some(index);
                    }
                    ModelOp::WaitReturn {
                        wake: Wake::Signal(cond),
                        ..
                    } => {
                        if let Some(release) = bare_release.take() {
                            if cond < objects.conds.len() {
                                let list = s.bare_waits_of.entry(cond).or_default();
                                list.push((thread, release));
                            }
                        }
                    }
                    // Indices come from prepare; `get_mut` keeps a hand-made model from panicking.
                    ModelOp::Fork { child } => {
                        if let Some(slot) = s.fork_of.get_mut(child) {
                            *slot = Some(at);
                        }
                    }
                    ModelOp::End => s.end_of[thread] = Some(at),
                    ModelOp::Exit => s.exit_of = Some(at),
                    ModelOp::Signal { cond } => {
                        if let Some(slot) = s.signal_of.get_mut(cond) {
                            *slot = Some(at.into());
                        }
                    }
                    ModelOp::BarrierEnter { barrier } => {
                        if let Some(list) = s.enters_of.get_mut(barrier) {
                            list.push(at);
                        }
                    }
                    _ => {}
                }
            }
        }
        Model {
            threads: threads.into(),
            objects,
            sources: Arc::new(s),
            overlay: None,
            index: Derived::default(),
            order: Derived::default(),
            memo: Derived::default(),
        }
    }

    /// The [`ModelOp::TryFail`] events whose object the observed order does not show busy: the
    /// run's failure is not explained by the recorded operations.
    pub fn unexplained_try_failures(&self) -> Vec<At> {
        let mut out = Vec::new();
        for (thread, t) in self.threads.iter().enumerate() {
            for (index, e) in t.events.iter().enumerate() {
                let at = At { thread, index };
                if matches!(e.op(), Some(ModelOp::TryFail { .. })) && self.busy_at(at).is_none() {
                    out.push(at);
                }
            }
        }
        out
    }

    /// The sources at this model's indices. A model of one variable works them out anew: the
    /// solvers ask the accessors below ([`Model::signal_of`]...), which do not.
    pub fn sources(&self) -> Cow<'_, Sources> {
        let Some(o) = &self.overlay else {
            return Cow::Borrowed(&self.sources);
        };
        let s = &self.sources;
        let here = |at: &At| self.here(*at);
        let index = &o.shared.index;
        let reads_from = index.edges(o.var, &index.own(o.var), &o.shared.syncs.threads);
        Cow::Owned(
            Sources {
                fork_of: s.fork_of.iter().map(|a| a.as_ref().map(here)).collect(),
                end_of: s.end_of.iter().map(|a| a.as_ref().map(here)).collect(),
                signal_of: s
                    .signal_of
                    .iter()
                    .map(|a| a.map(|p| here(&p.at()).into()))
                    .collect(),
                enters_of: s
                    .enters_of
                    .iter()
                    .map(|e| e.iter().map(here).collect())
                    .collect(),
                exit_of: s.exit_of.as_ref().map(here),
                bare_waits_of: s
                    .bare_waits_of
                    .iter()
                    .map(|(&cond, w)| {
                        let waits = w
                            .iter()
                            .map(|&(thread, index)| (thread, here(&At { thread, index }).index));
                        (cond, waits.collect())
                    })
                    .collect(),
                busy_of: s
                    .busy_of
                    .iter()
                    .map(|(at, busy)| (here(at), busy.iter().map(here).collect()))
                    .collect(),
                rf_index: Derived::default(),
                reads_from: Arc::default(),
            }
            .with_reads_from(reads_from),
        )
    }

    /// For a model of one variable: the sync-only model, the closed cuts kept for it, and per
    /// thread the first sync event (there) whose needs this model changes (the `after` of an edge
    /// it drops or moves; `usize::MAX`: none). A closed cut there that holds none of those events
    /// is closed here with the accesses among its events, and is the least one: its events need
    /// here what they need there.
    pub(crate) fn same_needs(&self) -> Option<(&Model, &SharedClosures, Vec<usize>)> {
        let o = self.overlay.as_ref()?;
        let syncs = &o.shared.syncs;
        let mut changed = vec![usize::MAX; self.threads.len()];
        let rf = syncs.rf_index();
        let dropped = o.dropped.iter().map(|&i| rf.after(i));
        let moved = o.moved.iter().map(|e| e.after.at()).map(|after| At {
            thread: after.thread,
            index: self.syncs_in(after.thread, after.index),
        });
        for after in dropped.chain(moved) {
            changed[after.thread] = changed[after.thread].min(after.index);
        }
        Some((syncs, &o.shared.closures, changed))
    }

    /// How many of the first `len` events of `thread` are sync events.
    pub(crate) fn syncs_in(&self, thread: usize, len: usize) -> usize {
        match &self.overlay {
            None => len,
            Some(o) => len - o.accesses(thread).partition_point(|a| (a.0 as usize) < len),
        }
    }

    /// How many events of `thread` run with its first `syncs` sync events: the accesses before
    /// the last of them too, not those after it.
    pub(crate) fn with_accesses(&self, thread: usize, syncs: usize) -> usize {
        match &self.overlay {
            None => syncs,
            Some(o) => {
                syncs
                    + o.accesses(thread)
                        .partition_point(|a| (a.1 as usize) < syncs)
            }
        }
    }

    /// The fork that starts `thread`, if some recorded thread forks it.
    pub fn fork_of(&self, thread: usize) -> Option<At> {
        self.here_of(self.sources.fork_of.get(thread))
    }

    /// The end of `thread`, if it ran to it.
    pub fn end_of(&self, thread: usize) -> Option<At> {
        self.here_of(self.sources.end_of.get(thread))
    }

    /// The signal or broadcast of condition instance `cond`.
    pub fn signal_of(&self, cond: usize) -> Option<At> {
        let at = (*self.sources.signal_of.get(cond)?)?;
        Some(self.here(at.at()))
    }

    /// The exit that ends the process, if the run had one.
    pub fn exit_of(&self) -> Option<At> {
        self.here_of(Some(&self.sources.exit_of))
    }

    /// The entries of barrier instance `barrier`.
    pub fn enters_of(&self, barrier: usize) -> impl Iterator<Item = At> + '_ {
        let enters = self.sources.enters_of.get(barrier);
        enters.into_iter().flatten().map(|&at| self.here(at))
    }

    /// The bare waits condition instance `cond` wakes ([`Sources::bare_waits_of`]), if it wakes
    /// some.
    pub fn bare_waits_of(&self, cond: usize) -> Option<impl Iterator<Item = (usize, usize)> + '_> {
        let waits = self.sources.bare_waits_of.get(&cond)?;
        Some(
            waits
                .iter()
                .map(|&(thread, index)| (thread, self.here(At { thread, index }).index)),
        )
    }

    /// What kept the object of the failed try `at` busy in the observed order
    /// ([`Sources::busy_of`]), if that order shows it busy.
    pub fn busy_at(&self, at: At) -> Option<impl Iterator<Item = At> + '_> {
        let busy = self.sources.busy_of.get(&self.there(at)?)?;
        Some(busy.iter().map(|&b| self.here(b)))
    }

    /// Whether the observed order shows some failed try operation's object busy.
    pub fn any_busy(&self) -> bool {
        !self.sources.busy_of.is_empty()
    }

    fn here_of(&self, at: Option<&Option<At>>) -> Option<At> {
        Some(self.here((*at?)?))
    }

    /// Event `at` of the sources (of the sync-only model, for a model of one variable) at this
    /// model's index: after the variable's accesses before it.
    fn here(&self, at: At) -> At {
        match &self.overlay {
            None => at,
            Some(o) => At {
                thread: at.thread,
                index: at.index
                    + o.accesses(at.thread)
                        .partition_point(|a| a.1 as usize <= at.index),
            },
        }
    }

    /// This model's event `at` at the index the sources give it (`None`: an access of the
    /// variable, which the sync-only model has not).
    fn there(&self, at: At) -> Option<At> {
        let Some(o) = &self.overlay else {
            return Some(at);
        };
        if at.thread >= self.threads.len() {
            return None;
        }
        let accesses = o.accesses(at.thread);
        let before = accesses.partition_point(|a| (a.0 as usize) < at.index);
        if accesses
            .get(before)
            .is_some_and(|a| a.0 as usize == at.index)
        {
            return None;
        }
        Some(At {
            thread: at.thread,
            index: at.index - before,
        })
    }

    /// Sets [`Sources::reads_from`].
    pub fn set_reads_from(&mut self, mut edges: Vec<RfEdge>) {
        edges.sort_unstable();
        let s = self.sources_mut();
        *s = std::mem::take(s).with_reads_from(edges);
    }

    /// The sources to change: of this model alone, at its indices, and any restriction of it
    /// built before forgotten.
    fn sources_mut(&mut self) -> &mut Sources {
        if self.overlay.is_some() {
            self.sources = Arc::new(self.sources().into_owned());
            self.overlay = None;
        }
        self.index = Derived::default();
        self.order = Derived::default();
        Arc::make_mut(&mut self.sources)
    }

    /// The sync events that must have run before the sync event `at` runs, to keep what the
    /// deciding reads saw ([`Sources::reads_from`]).
    pub fn rf_needs(&self, at: At) -> impl Iterator<Item = At> + '_ {
        self.rf_needs_in(at.thread, at.index..at.index + 1)
    }

    /// [`Model::rf_needs`] of the events `range` of `thread`, together: a scan of a thread's
    /// events finds their edges once. A model of one variable asks the sync-only model's edges,
    /// less those the variable drops, and its moved ones.
    pub fn rf_needs_in(&self, thread: usize, range: Range<usize>) -> impl Iterator<Item = At> + '_ {
        let (from, to, dropped, moved): (usize, usize, &[u32], &[RfEdge]) = match &self.overlay {
            None => (range.start, range.end, &[], &[]),
            Some(o) => {
                // The sync-only model's events of the range: less the accesses before each end.
                let accesses = o.accesses(thread);
                let before = |i: usize| accesses.partition_point(|a| (a.0 as usize) < i);
                let at = |index| Pos::from(At { thread, index });
                let first = o.moved.partition_point(|e| e.after < at(range.start));
                let len = o.moved[first..].partition_point(|e| e.after < at(range.end));
                (
                    range.start - before(range.start),
                    range.end - before(range.end),
                    &o.dropped,
                    &o.moved[first..first + len],
                )
            }
        };
        let rf = self.rf_index();
        let edges = rf
            .rf_from
            .get(thread)
            .and_then(|f| Some(*f.get(from)? as usize..*f.get(to)? as usize))
            .unwrap_or(0..0);
        // The dropped edges of the range, passed as the edges come.
        let start = edges.start;
        let mut dropped = &dropped[dropped.partition_point(|&d| (d as usize) < start)..];
        rf.befores[edges]
            .iter()
            .zip(start as u32..)
            .filter(move |&(_, i)| {
                while dropped.first().is_some_and(|&d| d < i) {
                    dropped = &dropped[1..];
                }
                dropped.first() != Some(&i)
            })
            .map(move |(before, _)| self.here(before.at()))
            .chain(moved.iter().map(|e| e.before.at()))
    }

    /// [`Sources::rf_index`], built on first use from the edges of the sources.
    fn rf_index(&self) -> &RfIndex {
        let base = match &self.overlay {
            Some(o) => &o.shared.syncs.threads,
            None => &self.threads,
        };
        let sources = &self.sources;
        sources
            .rf_index
            .0
            .get_or_init(|| Arc::new(RfIndex::of(&sources.reads_from, base)))
    }

    /// Sets [`Sources::busy_of`], which [`Model::new`] derives by running the observed order.
    pub(crate) fn set_busy_of(&mut self, busy_of: BTreeMap<At, Vec<At>>) {
        self.sources_mut().busy_of = busy_of;
    }

    /// What the models restricted from this one share, built by the first restriction.
    fn shared(&self) -> &Arc<Shared> {
        self.index.0.get_or_init(|| {
            let sources = self.sources();
            let index = EventIndex::of(&self.threads, Arc::clone(&sources.reads_from));
            let syncs = self.sync_only(&index, &sources);
            Arc::new(Shared {
                index,
                syncs,
                closures: SharedClosures::default(),
            })
        })
    }

    /// The model of the sync events alone, from `index` and `sources` of this model.
    fn sync_only(&self, index: &EventIndex, sources: &Sources) -> Model {
        let threads = self
            .threads
            .iter()
            .zip(&index.syncs)
            .map(|(t, syncs)| ModelThread {
                tid: t.tid,
                events: t.events.picked(syncs),
                observed: t.observed.clone(),
            })
            .collect();
        let mut model = Model::derive(threads, Arc::clone(&self.objects));
        // Every sync event is kept: what made a failed try fail is the same, at its new index.
        let local = |at: &At| {
            let index = index.syncs[at.thread]
                .binary_search(&u32::try_from(at.index).ok()?)
                .ok()?;
            Some(At {
                thread: at.thread,
                index,
            })
        };
        let busy_of = sources
            .busy_of
            .iter()
            .filter_map(|(at, busy)| {
                Some((local(at)?, busy.iter().map(local).collect::<Option<_>>()?))
            })
            .collect();
        // Its edges as the index gives them, one per order (less those equal to the one before);
        // edges given by hand may come unsorted ([`EventIndex::edges`] sorts them).
        let own = index.own(None);
        let mut last = None;
        let ends = (0..index.orders.len())
            .filter_map(|o| index.edge(o, None, &own, &model.threads))
            .map(|(e, _)| (e.after, e.before))
            .filter(|&end| last.replace(end) != Some(end));
        let rf =
            RfIndex::of_sorted(ends, index.orders.len(), &model.threads).unwrap_or_else(|| {
                RfIndex::of(&index.edges(None, &own, &model.threads), &model.threads)
            });
        let s = Arc::make_mut(&mut model.sources);
        s.busy_of = busy_of;
        s.rf_index = Derived(Arc::new(OnceLock::from(Arc::new(rf))));
        model
    }

    /// The model of one variable: its accesses and every sync event (`None`: sync events only, the
    /// deadlock model), and where its events are in `self`. It shares the sync-only model's
    /// events and sources, and works out only the reads-from edges its variable changes (the
    /// deadlock model none).
    pub fn restrict(&self, var: Option<VarId>) -> (Model, Origin<'_>) {
        let shared = self.shared();
        let index = &shared.index;
        let own = index.own(var);
        let origin = Origin {
            syncs: &index.syncs,
            own: own.clone(),
        };
        let accesses: Box<[(u32, Kept)]> = own
            .iter()
            .enumerate()
            .filter(|(_, own)| !own.is_empty())
            .map(|(thread, own)| {
                let kept = own
                    .iter()
                    .zip(0u32..)
                    .map(|(&(_, i), before)| {
                        let syncs = index.syncs_before(thread, i);
                        (syncs + before, syncs)
                    })
                    .collect();
                (thread as u32, kept)
            })
            .collect();
        let syncs = &shared.syncs.threads;
        let threads = syncs.with(
            accesses
                .iter()
                .map(|(thread, kept)| {
                    let thread = *thread as usize;
                    let t = &syncs[thread];
                    let events = Events {
                        base: Arc::clone(&t.events.base),
                        pick: t.events.pick.clone(),
                        extra: kept
                            .iter()
                            .zip(own[thread])
                            .map(|(&(at, _), &(_, i))| {
                                (at, self.threads[thread].events[i as usize])
                            })
                            .collect(),
                    };
                    let t = ModelThread {
                        tid: t.tid,
                        events,
                        observed: t.observed.clone(),
                    };
                    (thread as u32, t)
                })
                .collect(),
        );
        // Of the orders the variable's accesses touch, those that keep no read of another
        // variable lose their edge, moved to the end of a read's segment if one can be.
        let sync_edges = shared.syncs.rf_index();
        let mut dropped = Vec::new();
        let mut moved = Vec::new();
        for o in index.touched(&own, &shared.syncs.threads) {
            let edge = index.edge(o as usize, var, &own, &shared.syncs.threads);
            if matches!(edge, Some((_, false))) {
                continue;
            }
            let (after, before) = index.ends(o as usize);
            let syncs_before = index.ends_syncs_before(o as usize);
            let after = At {
                thread: after.thread,
                index: syncs_before.0 as usize,
            };
            let before = At {
                thread: before.thread,
                index: syncs_before.1 as usize,
            };
            dropped.extend(sync_edges.find(after, before.into()));
            moved.extend(edge.map(|(e, _)| e));
        }
        dropped.sort_unstable();
        moved.sort_unstable();
        let model = Model {
            threads,
            objects: Arc::clone(&self.objects),
            sources: Arc::clone(&shared.syncs.sources),
            overlay: Some(Arc::new(Overlay {
                var,
                shared: Arc::clone(shared),
                accesses,
                dropped,
                moved,
            })),
            index: Derived::default(),
            order: Derived::default(),
            memo: Derived::default(),
        };
        (model, origin)
    }

    /// The sync events before `upto[t]` of each thread, in the observed order: by seq, and an
    /// operation that never completed right after its thread's previous one, so that program
    /// order always holds. Each thread's events are in that order already (seqs increase along a
    /// thread), so this merges the threads rather than sorting the run.
    pub fn observed_order(&self, upto: &[usize]) -> ObservedOrder<'_> {
        let mut order = ObservedOrder {
            model: self,
            end: (0..self.threads.len())
                .map(|t| {
                    upto.get(t)
                        .map_or(0, |&u| u.min(self.threads[t].events.len()))
                })
                .collect(),
            next: vec![0; self.threads.len()],
            last: vec![0; self.threads.len()],
            heads: BinaryHeap::with_capacity(self.threads.len()),
        };
        for thread in 0..self.threads.len() {
            order.push_next(thread);
        }
        order
    }

    /// The observed order of every sync event of the model whose events this one's sync events
    /// are (a model of one variable's sync-only model, another model itself), built on first use.
    pub(crate) fn run_order(&self) -> &RunOrder {
        let base = match &self.overlay {
            Some(o) => &o.shared.syncs,
            None => self,
        };
        base.order.0.get_or_init(|| Arc::new(RunOrder::of(base)))
    }

    /// What `build` derives from the model without overlay this one reads (itself, or its
    /// sync-only model), built on its first use and shared by every model that reads it. One user
    /// type: the slot holds the first one built.
    pub(crate) fn memo<T: Any + Send + Sync>(&self, build: impl FnOnce(&Model) -> T) -> Arc<T> {
        let base = match &self.overlay {
            Some(o) => &o.shared.syncs,
            None => self,
        };
        let any = base.memo.0.get_or_init(|| Arc::new(build(base)));
        Arc::clone(any)
            .downcast()
            .unwrap_or_else(|_| unreachable!("a model's memo has one type"))
    }

    /// [`Model::observed_order`] of `upto` read off [`Model::run_order`]: a prefix of it, then
    /// the cut's events after that prefix, found by going on along it where the cut lacks few of
    /// the events up to its last, else by merging the threads. A solver asks it per cut.
    pub fn cut_order(&self, upto: &[usize]) -> CutOrder<'_> {
        let run = self.run_order();
        let n = self.threads.len();
        // Where each thread's cut ends at the base model's indices, and its sync events before.
        let below: Vec<usize> = (0..n)
            .map(|t| {
                let upto = upto
                    .get(t)
                    .map_or(0, |&u| u.min(self.threads[t].events.len()));
                match &self.overlay {
                    None => upto,
                    Some(o) => upto - o.accesses(t).partition_point(|a| (a.0 as usize) < upto),
                }
            })
            .collect();
        let end: Vec<usize> = (0..n).map(|t| run.syncs_before(t, below[t])).collect();
        let prefix = (0..n)
            .filter_map(|t| run.positions[t].get(end[t]))
            .min()
            .map_or(run.len(), |&p| p as usize);
        let left: usize = end.iter().sum();
        // Going on along the order passes the events the cut lacks before its last one: worth
        // it while they are fewer than the cut's events after the prefix, each of which a merge
        // would push and pop.
        let last = (0..n)
            .filter_map(|t| {
                end[t]
                    .checked_sub(1)
                    .map(|k| run.positions[t][k] as usize + 1)
            })
            .max()
            .unwrap_or(0);
        let tail = if last.saturating_sub(prefix) <= 2 * (left - prefix) {
            Tail::Scan { below }
        } else {
            // Each thread's events before the prefix's end are in the prefix: the merge starts
            // after them.
            let syncs: Vec<usize> = (0..n)
                .map(|t| run.positions[t][..end[t]].partition_point(|&p| (p as usize) < prefix))
                .collect();
            let heads = (0..n)
                .filter(|&t| syncs[t] < end[t])
                .map(|t| Reverse((run.positions[t][syncs[t]], t as u32)))
                .collect();
            Tail::Merge { syncs, heads }
        };
        CutOrder {
            run,
            next: 0,
            prefix,
            end,
            last,
            tail,
            left,
            passed: match &self.overlay {
                Some(_) => vec![0; n],
                None => Vec::new(),
            },
            accesses: match &self.overlay {
                Some(o) => (0..n).map(|t| o.accesses(t)).collect(),
                None => Vec::new(),
            },
            seen: vec![0; n],
        }
    }

    /// The operation of event `at`, for a sync event.
    pub fn op(&self, at: At) -> Option<ModelOp> {
        self.threads.get(at.thread)?.events.get(at.index)?.op()
    }

    /// Whether a state whose thread positions are `pos` can be a deadlock at all: not once a
    /// thread that ends the process ([`Model::ends_process`]) has run all its events, since the
    /// process then exits with every thread still blocked (threads left waiting at exit are not a
    /// deadlock).
    pub fn process_alive(&self, pos: &[usize]) -> bool {
        !self.process_ended(self.process_enders(), pos)
    }

    /// The threads that end the process once done ([`Model::ends_process`]), ascending.
    pub fn process_enders(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.threads.len()).filter(|&t| self.ends_process(t))
    }

    /// Whether one of the `enders` ([`Model::process_enders`]) has run all its events at `pos`:
    /// [`Model::process_alive`]'s opposite, for a caller that finds the enders once.
    pub fn process_ended(&self, enders: impl IntoIterator<Item = usize>, pos: &[usize]) -> bool {
        enders.into_iter().any(|t| {
            self.next_stop_from(&self.threads[t], pos[t]).is_none() && !self.ran_pending(t, pos[t])
        })
    }

    /// Whether thread `t` ends the process once it has run all its events: main (its return is
    /// an exit), or a thread whose last event is an `exit()` (or `quick_exit()`, `_exit()`...).
    pub fn ends_process(&self, t: usize) -> bool {
        let thread = &self.threads[t];
        thread.tid == 0
            || thread
                .events
                .last()
                .and_then(|e| thread.observed_of(e))
                .is_some_and(|o| o.op == SyncOp::Exit)
    }

    fn next_stop_from(&self, thread: &ModelThread, pos: usize) -> Option<usize> {
        (pos..thread.events.len()).find(|&i| thread.events[i].constrains())
    }

    /// Whether the thread's first `pos` events include an operation that never completed in the run.
    pub fn ran_pending(&self, thread: usize, pos: usize) -> bool {
        let t = &self.threads[thread];
        t.events
            .range(0..pos)
            .rev()
            .find_map(|e| t.observed_of(e))
            .is_some_and(|o| o.seq == ilgen_trace::PENDING)
    }

    /// Index of the thread's next event that [constrains](ModelEvent::constrains) the schedule,
    /// at or after `pos`.
    pub fn next_stop(&self, thread: usize, pos: usize) -> Option<usize> {
        self.next_stop_from(&self.threads[thread], pos)
    }
}

impl Sources {
    /// These sources with `edges`, sorted, as [`Sources::reads_from`]: the list itself, cut to
    /// its length, not a copy (a slice in an `Arc` is one: moodycamel's `core_thread_local` has
    /// 27.5 million edges, 771 MB, and held them twice while it copied them).
    fn with_reads_from(self, mut edges: Vec<RfEdge>) -> Sources {
        edges.shrink_to_fit();
        Sources {
            reads_from: Arc::new(edges),
            rf_index: Derived::default(),
            ..self
        }
    }
}

/// The edges of `in_order` and `moved`, sorted. `in_order` comes sorted from the orders of a
/// model's own edges (`sorted` says it did); only the few moved edges are sorted and merged in.
fn merge(mut in_order: Vec<RfEdge>, sorted: bool, mut moved: Vec<RfEdge>) -> Vec<RfEdge> {
    // Edges given by hand ([`Model::set_reads_from`] takes any) between events of one thread
    // that the restriction maps to one index may come out of order: sorted whole, as before.
    if !sorted {
        in_order.append(&mut moved);
        in_order.sort_unstable();
        return in_order;
    }
    if moved.is_empty() {
        return in_order;
    }
    moved.sort_unstable();
    // Whole runs of `in_order` copied between the moved edges: a pass comparing every edge with
    // the next moved one cost as much as the sort it replaced.
    let mut all = Vec::with_capacity(in_order.len() + moved.len());
    let mut from = 0;
    for m in moved {
        let to = from + in_order[from..].partition_point(|e| *e <= m);
        all.extend_from_slice(&in_order[from..to]);
        all.push(m);
        from = to;
    }
    all.extend_from_slice(&in_order[from..]);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_moved_edges_gives_the_sorted_list() {
        let at = |thread, index| At { thread, index };
        let edge = |after: usize, before: usize, read: usize| {
            RfEdge::new(at(after % 3, after), at(1, before), 0, at(0, read))
        };
        let mut in_order: Vec<RfEdge> = (0..40).map(|i| edge(i * 2, i, i)).collect();
        in_order.sort_unstable();
        // Before the first, between two, equal to one, after the last, unsorted among themselves.
        let moved = vec![
            edge(81, 0, 0),
            edge(0, 0, 0),
            edge(7, 3, 1),
            edge(14, 7, 7),
            edge(0, 0, 0),
        ];
        for (list, sorted) in [
            (in_order.clone(), true),
            (in_order.iter().rev().copied().collect(), false),
        ] {
            let mut want: Vec<RfEdge> = list.iter().chain(&moved).copied().collect();
            want.sort_unstable();
            assert_eq!(merge(list, sorted, moved.clone()), want);
        }
    }

    /// Seqs past 32 bits, and a never-completed operation's, come back whole, and a bound
    /// finds its place among them.
    #[test]
    fn seqs_past_32_bits_come_back_whole() {
        let seqs = [
            5,
            (1 << 32) + 2,
            (1 << 32) + 9,
            3 << 32,
            3 << 32 | 1,
            ilgen_trace::PENDING,
        ];
        let mut thread = ThreadBuilder::new(0);
        for seq in seqs {
            let observed = Observed {
                seq,
                op_index: 0,
                site: 1,
                op: SyncOp::End,
            };
            thread.sync(ModelOp::Nop, observed);
        }
        let recorded = thread.build().observed;
        assert_eq!(recorded.iter().map(|o| o.seq).collect::<Vec<_>>(), seqs);
        let below: Vec<usize> = [0, 5, 6, (1 << 32) + 9, 3 << 32 | 1, u64::MAX]
            .iter()
            .map(|&bound| recorded.seqs_below(bound))
            .collect();
        assert_eq!(below, [0, 0, 1, 2, 4, 5]);
    }

    #[test]
    fn an_event_is_16_bytes() {
        assert_eq!(std::mem::size_of::<ModelEvent>(), 16);
    }

    #[test]
    fn every_operation_packs_and_unpacks_to_itself() {
        let ops = [
            ModelOp::Start { forked: true },
            ModelOp::Start { forked: false },
            ModelOp::End,
            ModelOp::Fork { child: 3 },
            ModelOp::Join { child: 3 },
            ModelOp::Lock { mutex: 7 },
            ModelOp::Unlock { mutex: 7 },
            ModelOp::ReadLock { rw: 2 },
            ModelOp::WriteLock { rw: 2 },
            ModelOp::RwUnlock { rw: 2 },
            ModelOp::WaitRelease { mutex: 1 },
            ModelOp::WaitReturn {
                mutex: 1,
                wake: Wake::Signal(9),
            },
            ModelOp::WaitReturn {
                mutex: 1,
                wake: Wake::Unsignalled,
            },
            ModelOp::WaitReturn {
                mutex: 1,
                wake: Wake::Never,
            },
            ModelOp::Signal { cond: 9 },
            ModelOp::LoopExit {
                cond: 9,
                mutex: Some(1),
            },
            ModelOp::LoopExit {
                cond: 9,
                mutex: None,
            },
            ModelOp::BarrierEnter { barrier: 4 },
            ModelOp::BarrierExit { barrier: 4 },
            ModelOp::SemWait { sem: 5, units: 1 },
            ModelOp::SemPost { sem: 5, units: 1 },
            ModelOp::TryFail {
                target: TryTarget::Mutex(7),
            },
            ModelOp::TryFail {
                target: TryTarget::RwRead(2),
            },
            ModelOp::TryFail {
                target: TryTarget::RwWrite(2),
            },
            ModelOp::TryFail {
                target: TryTarget::Sem(5),
            },
            ModelOp::Exit,
            ModelOp::Nop,
        ];
        for op in ops {
            assert_eq!(PackedOp::from(op).get(), op);
        }
    }
}
