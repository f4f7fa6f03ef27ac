//! Objects happens-before orders: the shared objects every two accesses of which by different
//! threads, at least one writing, the weakened happens-before orders; and that happens-before's
//! clocks.
//!
//! Takes the threads of a run, its model without accesses (the sync events resolved: fork, join,
//! signal and wait, barrier; see [`crate::filter`]), its atomic records (release → acquire edges
//! through each atomic location, [`crate::atomics`]), the shared objects and the lifetimes; gives
//! per object whether some two such accesses are unordered ([`unordered`]), in one walk of the
//! run that holds 16 bytes per object and no access. Also the vector clock of every segment of
//! that happens-before ([`segment_clocks`]), which the filter uses too.
//!
//! What it is for: an object happens-before orders wholly has no race-pair candidate (the filter
//! would remove every one), and the reads-from edges of its reads ([`crate::reads_from`]) ask
//! for nothing the model does not already enforce (a read's writer is ordered before it along
//! fork → start, end → join, signal → wait and barrier edges, which every order of the model
//! keeps, as do the solvers' cuts; the model has no atomics, so the reads of an object ordered
//! through an atomic's release and acquire lose the edges that would keep their writers, which
//! can only cost a replay that does not follow). So prepare leaves such objects out of the
//! model: zstd's run has 15.5 million shared objects, 17 of them left by the filter, and held
//! every access of each; a lock-free queue's items are ordered through its atomics.
//!
//! How: FastTrack's epochs (Flanagan and Freund, PLDI 2009). The threads are walked together,
//! each segment when the run's order reaches the sync event or atomic record that ends it, an
//! order the happens-before never contradicts. Per object: the epoch (thread, clock) of its last write, and
//! of its last read, or the clocks of the reads since that write when they are not ordered among
//! themselves. A read must come after the last write; a write after the last write and every
//! read since. The first access that does not marks the object; as FastTrack reports the first
//! race on each variable, an object no access marks has no unordered pair. Accesses are checked
//! as recorded, not merged per segment as the model merges them: a segment's accesses share one
//! clock, and a merged access writes if any of them does.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ilgen_trace::format::ThreadTrace;
use ilgen_trace::Event;

use crate::atomics::{self, join, key, Atomics, Point};
use crate::lifetime::{accesses, span, Lifetimes};
use crate::model::{At, Model, ModelOp, Wake};
use crate::objects::{Hint, Objects};

/// No access yet.
const NONE: u64 = u64::MAX;
/// In [`Last::read`]: the reads since the last write are not ordered among themselves; the rest
/// is the index of their clocks in [`Walk::reads`].
const CLOCKS: u64 = 1 << 63;

/// An epoch: slot `s` ([`Clocks::slot`]) at clock `c`, as `s << 32 | c`.
fn epoch(slot: usize, clock: u32) -> u64 {
    (slot as u64) << 32 | u64::from(clock)
}

/// The last accesses of one object.
#[derive(Clone, Copy)]
struct Last {
    write: u64,
    read: u64,
}

struct Walk<'a> {
    clocks: &'a Clocks,
    /// Components of a clock ([`Clocks::slots`]).
    slots: usize,
    last: Vec<Last>,
    unordered: Vec<bool>,
    /// Read clocks, `slots` components each; and the free ones.
    reads: Vec<u32>,
    free: Vec<u64>,
}

impl Walk<'_> {
    /// Whether the access at `e` is ordered before an access with clock `clock`.
    fn before(e: u64, clock: &[u32]) -> bool {
        e == NONE || (e as u32) <= clock[(e >> 32) as usize]
    }

    fn access(&mut self, object: usize, thread: usize, segment: u32, write: bool) {
        if self.unordered[object] {
            return;
        }
        let n = self.slots;
        let clock = self.clocks.at(thread, segment);
        let slot = self.clocks.slot(thread);
        let me = epoch(slot, clock[slot]);
        let last = &mut self.last[object];
        let mut ordered = Self::before(last.write, clock);
        if write {
            if last.read != NONE && last.read & CLOCKS != 0 {
                let at = (last.read & !CLOCKS) as usize * n;
                let reads = &self.reads[at..at + n];
                ordered &= reads.iter().zip(clock).all(|(r, c)| r <= c);
                self.free.push(last.read & !CLOCKS);
            } else {
                ordered &= Self::before(last.read, clock);
            }
            *last = Last {
                write: me,
                read: NONE,
            };
        } else if last.read == NONE || (last.read & CLOCKS == 0 && Self::before(last.read, clock)) {
            last.read = me;
        } else if last.read & CLOCKS == 0 {
            let index = self.free.pop().unwrap_or_else(|| {
                self.reads.resize(self.reads.len() + n, 0);
                (self.reads.len() / n - 1) as u64
            });
            let at = index as usize * n;
            self.reads[at..at + n].fill(0);
            self.reads[at + (last.read >> 32) as usize] = last.read as u32;
            self.reads[at + slot] = clock[slot];
            last.read = CLOCKS | index;
        } else {
            self.reads[(last.read & !CLOCKS) as usize * n + slot] = clock[slot];
        }
        if !ordered {
            self.unordered[object] = true;
        }
    }
}

/// Per object of `objects`, whether two of its accesses by different threads, at least one
/// writing, are not ordered by the weakened happens-before of `skeleton` (the run's model
/// without accesses).
pub fn unordered(
    traces: &[ThreadTrace],
    skeleton: &Model,
    atomics: &Atomics,
    objects: &Objects,
    lifetimes: &Lifetimes,
) -> Vec<bool> {
    let clocks = segment_clocks(skeleton, atomics);
    let threads = traces.len();
    let mut walk = Walk {
        clocks: &clocks,
        slots: clocks.slots(),
        last: vec![
            Last {
                write: NONE,
                read: NONE,
            };
            objects.len()
        ],
        unordered: vec![false; objects.len()],
        reads: Vec::new(),
        free: Vec::new(),
    };
    let mut events: Vec<_> = traces.iter().map(|t| accesses(t, lifetimes)).collect();
    let mut segment = vec![0u32; threads];
    let mut hints = vec![Hint::default(); threads];
    // Each thread up to its next sync event or atomic record (`stop`), or to its end.
    let mut run = |walk: &mut Walk, t: usize, stop: bool| {
        for (event, access) in events[t].by_ref() {
            if let Some((a, epoch)) = access {
                let (lo, hi) = span(&a);
                for object in objects.touched(epoch, lo, hi, &mut hints[t]) {
                    walk.access(object, t, segment[t], a.kind.is_write());
                }
            }
            if let Event::Sync(_) | Event::Atomic(_) = event {
                segment[t] += 1;
                if stop {
                    return;
                }
            }
        }
    };
    for (t, _) in Boundaries::new(skeleton, atomics) {
        run(&mut walk, t, true);
    }
    for t in 0..threads {
        run(&mut walk, t, false);
    }
    walk.unordered
}

/// Per thread and segment (events between two sync events or atomic records), the vector clock of
/// the weakened happens-before, over slots rather than threads: a thread that a joiner of another
/// forks after that join takes the joined one's slot (a program that starts a thread per job has
/// thousands, a few alive at once: htslib's thrash_threads2 forks 9,000 in rounds of 8, and a
/// component per thread made its clocks 6 GB). Every event of a slot's earlier threads happens
/// before every event of its later ones, so one component, numbered on from the earlier thread's
/// last value, says as much as theirs. A thread's own component, at [`Clocks::slot`], is its
/// segment number plus one plus its offset in the slot (the last value of the slot's earlier
/// threads). Each thread's clocks are one flat list, `slots` components a segment.
pub struct Clocks {
    slots: usize,
    /// Per thread: its slot.
    slot_of: Vec<u32>,
    of: Vec<Vec<u32>>,
}

impl Clocks {
    pub fn at(&self, thread: usize, segment: u32) -> &[u32] {
        let from = segment as usize * self.slots;
        &self.of[thread][from..from + self.slots]
    }

    /// The component that holds `thread`'s own clock.
    pub fn slot(&self, thread: usize) -> usize {
        self.slot_of[thread] as usize
    }

    /// The number of components of a clock.
    pub fn slots(&self) -> usize {
        self.slots
    }
}

/// Thread `t`'s segments: one more than it has boundaries (sync events and atomic records).
fn segments(model: &Model, atomics: &Atomics, t: usize) -> usize {
    model.threads[t].observed.len() + atomics.of_thread(t).len() + 1
}

/// Each thread's slot and its offset there (the last value of the slot's thread before it), found
/// in the run's order: a completed join frees the joined thread's slot for the joiner's next fork.
fn slots(model: &Model, atomics: &Atomics) -> (usize, Vec<u32>, Vec<u32>) {
    let n = model.threads.len();
    const NO_SLOT: u32 = u32::MAX;
    let mut slot_of = vec![NO_SLOT; n];
    let mut offset = vec![0u32; n];
    // Per slot, the last value its threads so far use.
    let mut used: Vec<u32> = Vec::new();
    // Per thread, the slots of the threads it joined that no fork took since.
    let mut freed: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut take = |t: usize, slot: Option<u32>, slot_of: &mut [u32], used: &mut Vec<u32>| {
        let slot = slot.unwrap_or_else(|| {
            used.push(0);
            (used.len() - 1) as u32
        });
        slot_of[t] = slot;
        offset[t] = used[slot as usize];
        used[slot as usize] += segments(model, atomics, t) as u32;
    };
    for (t, boundary) in Boundaries::new(model, atomics) {
        if slot_of[t] == NO_SLOT {
            // Main, or a thread whose fork the model does not have.
            take(t, None, &mut slot_of, &mut used);
        }
        let Boundary::Sync(at) = boundary else {
            continue;
        };
        let completed = model.threads[t]
            .observed_at(at.index)
            .is_some_and(|o| o.seq != ilgen_trace::PENDING);
        match model.op(at) {
            Some(ModelOp::Fork { child }) if slot_of[child] == NO_SLOT => {
                take(child, freed[t].pop(), &mut slot_of, &mut used)
            }
            Some(ModelOp::Join { child }) if completed && slot_of[child] != NO_SLOT => {
                freed[t].push(slot_of[child])
            }
            _ => {}
        }
    }
    // Threads with no boundary at all.
    for t in 0..n {
        if slot_of[t] == NO_SLOT {
            take(t, None, &mut slot_of, &mut used);
        }
    }
    (used.len(), slot_of, offset)
}

/// What ends a segment: a sync event of the model, or an atomic record.
#[derive(Clone, Copy)]
enum Boundary {
    Sync(At),
    Atomic(Point),
}

/// Every thread's boundaries, each thread's in program order, the threads merged by their place
/// in the run's order ([`crate::atomics::key`]); a pending sync event takes the place of its
/// thread's last completed one, as [`Model::observed_order`] does.
struct Boundaries<'a> {
    model: &'a Model,
    atomics: &'a Atomics,
    /// Per thread: the next model event to look at, sync events passed, atomic records passed,
    /// and the key of the last boundary.
    next: Vec<(usize, u32, usize, u64)>,
    heads: BinaryHeap<Reverse<(u64, usize)>>,
    /// Per thread, the boundary its head in `heads` stands for.
    pending: Vec<Option<Boundary>>,
}

impl<'a> Boundaries<'a> {
    fn new(model: &'a Model, atomics: &'a Atomics) -> Boundaries<'a> {
        let n = model.threads.len();
        let mut b = Boundaries {
            model,
            atomics,
            next: vec![(0, 0, 0, 0); n],
            heads: BinaryHeap::with_capacity(n),
            pending: vec![None; n],
        };
        for t in 0..n {
            b.push_next(t);
        }
        b
    }

    fn push_next(&mut self, t: usize) {
        let (index, syncs, points, last) = &mut self.next[t];
        let own = self.atomics.of_thread(t);
        let boundary = match own.get(*points).filter(|p| p.after_syncs == *syncs) {
            Some(&p) => {
                *points += 1;
                *last = p.key;
                Boundary::Atomic(p)
            }
            None => {
                let thread = &self.model.threads[t];
                let events = &thread.events;
                let mut rest = events.range(*index..events.len());
                let Some(offset) = rest.position(|e| e.is_sync()) else {
                    return;
                };
                let at = At {
                    thread: t,
                    index: *index + offset,
                };
                *index = at.index + 1;
                *syncs += 1;
                if let Some(seq) = thread.seq_at(at.index) {
                    if seq != ilgen_trace::PENDING {
                        *last = key(seq, None);
                    }
                }
                Boundary::Sync(at)
            }
        };
        self.pending[t] = Some(boundary);
        self.heads.push(Reverse((*last, t)));
    }
}

impl Iterator for Boundaries<'_> {
    type Item = (usize, Boundary);

    fn next(&mut self) -> Option<(usize, Boundary)> {
        let Reverse((_, t)) = self.heads.pop()?;
        let boundary = self.pending[t].take()?;
        self.push_next(t);
        Some((t, boundary))
    }
}

/// Walks the sync events and atomic records in the run's order (it obeyed it, so every release
/// comes before the acquire it orders) and records each segment's clock.
pub fn segment_clocks(model: &Model, atomics: &Atomics) -> Clocks {
    let n = model.threads.len();
    let (slots, slot_of, offset) = slots(model, atomics);
    let mut current: Vec<Vec<u32>> = (0..n)
        .map(|t| {
            let mut c = vec![0; slots];
            c[slot_of[t] as usize] = offset[t] + 1;
            c
        })
        .collect();
    // A clock per segment: one more than the thread has boundaries.
    let mut out: Vec<Vec<u32>> = current
        .iter()
        .enumerate()
        .map(|(t, c)| {
            let mut clocks = Vec::with_capacity(segments(model, atomics, t) * slots);
            clocks.extend_from_slice(c);
            clocks
        })
        .collect();
    let mut forked: Vec<Option<Vec<u32>>> = vec![None; n];
    let mut ended: Vec<Option<Vec<u32>>> = vec![None; n];
    let mut signalled: Vec<Option<Vec<u32>>> = vec![None; model.objects.conds.len()];
    let mut entered: Vec<Vec<u32>> = vec![vec![0; slots]; model.objects.barriers.len()];
    let mut located: Vec<Option<Vec<u32>>> = vec![None; atomics.locations];
    for (t, boundary) in Boundaries::new(model, atomics) {
        match boundary {
            Boundary::Sync(at) => sync_edges(
                model,
                at,
                &mut current[t],
                (&mut forked, &mut ended, &mut signalled, &mut entered),
            ),
            Boundary::Atomic(p) => {
                atomics::apply(p.op, &mut located[p.location as usize], &mut current[t])
            }
        }
        current[t][slot_of[t] as usize] += 1;
        out[t].extend_from_slice(&current[t]);
    }
    Clocks {
        slots,
        slot_of,
        of: out,
    }
}

/// What one slot of each kind of edge holds: the clock each fork, end, signal instance and
/// barrier instance left.
type Edges<'a> = (
    &'a mut [Option<Vec<u32>>],
    &'a mut [Option<Vec<u32>>],
    &'a mut [Option<Vec<u32>>],
    &'a mut [Vec<u32>],
);

/// The sync event at `at`: joins into its thread's `current` clock what the event it waits for
/// left, and leaves what later events wait for.
fn sync_edges(
    model: &Model,
    at: At,
    current: &mut [u32],
    (forked, ended, signalled, entered): Edges,
) {
    let t = at.thread;
    let (Some(op), Some(observed)) = (model.op(at), model.threads[t].observed_at(at.index)) else {
        return;
    };
    let completed = observed.seq != ilgen_trace::PENDING;
    let from = match op {
        ModelOp::Start { .. } => forked[t].as_ref(),
        ModelOp::Join { child } => ended[child].as_ref(),
        ModelOp::WaitReturn {
            wake: Wake::Signal(c),
            ..
        }
        | ModelOp::LoopExit { cond: c, .. } => signalled[c].as_ref(),
        ModelOp::BarrierExit { barrier } => Some(&entered[barrier]),
        _ => None,
    };
    if let Some(from) = from.filter(|_| completed) {
        join(current, from);
    }
    match op {
        ModelOp::Fork { child } => forked[child] = Some(current.to_vec()),
        ModelOp::End => ended[t] = Some(current.to_vec()),
        ModelOp::Signal { cond } => signalled[cond] = Some(current.to_vec()),
        ModelOp::BarrierEnter { barrier } => join(&mut entered[barrier], current),
        _ => {}
    }
}
