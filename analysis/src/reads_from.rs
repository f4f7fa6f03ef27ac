//! Reads keep their writers: the ordering edges that keep each deciding read's observed writer.
//!
//! Takes the full [`Model`] of a run and the sites of deciding reads (loads whose value decides
//! an address or a predicate: [`Deciding`], flagged by the pass); gives [`RfEdge`]s, each "sync
//! event `before` runs before sync event `after`".
//!
//! Why: the model has no data values. It would let a worker's dequeue critical section run before
//! the enqueue whose job it dequeued in the run; the real worker would then read another queue
//! head (an address) and go elsewhere, and a replay of such a schedule diverges. A predicted order
//! is worth replaying only if every read that decides an address still sees the write it saw
//! (the "correct reorderings" of WCP, SyncP and M2 keep reads-from the same way).
//!
//! At segment granularity, which is what the trace has: a deciding read `r` of object `v` by
//! thread `T` lies in the segment that starts at `T`'s sync event `s`; a write of `v` by thread
//! `W != T` lies in the segment that ends at `W`'s sync event `f` (segments as the solvers see them:
//! between events that [constrain](crate::model::ModelEvent::constrains) the schedule). The observed writer of `r` is
//! the write with the largest `seq(f) < seq(s)` (none: `r` read an initial value, or a write whose
//! order with `r` the run did not fix, which is a race itself), unless `T` wrote `v` itself after
//! that `f` (then `r` read `T`'s own write). The edge `f → s` is stronger than "w before r" (it asks
//! `W` to finish its segment), but the run obeyed it (`seq(f) < seq(s)`), and every back end can
//! enforce it like fork → start. Nor may the read meet a later pop of what it walked: each other
//! thread's first writing segment that began after `r`'s segment ended (at `e`) and read `v` to
//! decide by it too (a pop reads the head it replaces) still begins after `e`. Without it a
//! worker's walk of a list could still reach a node the writer unlinked and recycled after the
//! walk in the run, and the walk's reads against the recycling writes were candidates no replay
//! could show (app_pzip: 3-11 a recording). Only such writes: a later plain store may move before
//! the read where it wrote what the read saw anyway (on a memcached trace, keeping every later
//! write after its read left 41 of 129 candidates and dropped pairs replays had confirmed, one
//! of them TSan's too; keeping pops only, 47, and that pair stays). A model of object `v` lets
//! the reads of `v` itself see another
//! write (its race is exactly a change of what those reads see), but what their thread does after
//! the read's segment still waits for the writer ([`crate::model::Model::restrict`]).
//!
//! A predicate read (a waiting loop's condition, a branch guarding a sync operation) keeps more,
//! since its value may be the sum of many writes (a counter every worker bumps, the reader too):
//! every other thread's latest writing segment ends before `s`, whether or not `T` wrote `v`
//! since.
//!
//! A write at a deciding site is a read first: the pass flags a store whose segment read the same
//! pointer before it (`if (p->tail) p->tail->next = t; ...; p->tail = t;`, or `x++`) with what
//! that read decided, since the recorder keeps the segment's write alone. Its own write, in its
//! own segment, came after the read and is not what the read saw.
//!
//! A spin's read (a predicate of a loop with no sync operation inside, [`Deciding::spins`]) is the
//! first of many: the loop ran to its exit within `r`'s segment, and the recorder kept only the
//! first round's read. The round that left saw more, so every other thread's latest writing
//! segment that ended before `e` also stays before `e`; and a writing segment still open at `e`
//! (begun before it, ended after: the write the loop waited for, its unlock recorded late) keeps
//! its start before `e`, since its write follows that start with no sync operation between.
//!
//! A segment's later deciding reads of an object, with the same flags as its first one, give that
//! first one's edges again and are left out: the reorder models keep an order for its first read
//! of those that do not touch their variable ([`crate::model::Model::restrict`]), and a later read
//! of the same object in the same segment touches every variable the first one touches. A
//! lock-free hash table's lookups read its slots many times a segment, and each read gave an edge
//! per other thread that wrote them (moodycamel's `core_thread_local`, 5,601 threads: 503,957
//! deciding reads in 24,754 pairs of object and segment; the edge list passed 7.5 GB).

use std::collections::{BTreeSet, HashMap, HashSet};

use ilgen_trace::sites::Deciding;
use ilgen_trace::PENDING;

use crate::model::{At, Model, ModelEvent, RfEdge, VarId};

/// A completed sync event's index and seq, if there is one.
fn completed(model: &Model, thread: usize, index: usize) -> Option<(usize, u64)> {
    let seq = model.threads[thread].observed_at(index)?.seq;
    (seq != PENDING).then_some((index, seq))
}

/// A deciding read, at segment granularity.
struct Read {
    /// The access event.
    at: At,
    var: VarId,
    /// The sync event that starts its segment, and that event's seq.
    start: (usize, u64),
    /// The sync event that ends its segment, and that event's seq.
    end: Option<(usize, u64)>,
    predicate: bool,
    /// A predicate of a loop with no sync operation inside: the loop ended in this segment.
    spin: bool,
    /// Recorded as its segment's later write of the object (a write at a deciding site).
    write: bool,
}

/// One thread's segments that wrote one object, in its program order (so by seq).
#[derive(Default)]
struct Writes {
    /// The seq and event ending each writing segment (a segment whose end never completed is
    /// left out: it is ordered before nothing).
    ends: Vec<(u64, At)>,
    /// The seq and event starting each writing segment (the thread's first segment has none).
    starts: Vec<(u64, At)>,
}

/// The edges that keep what every deciding read saw.
pub fn edges(model: &Model, deciding: &Deciding) -> Vec<RfEdge> {
    edges_of(model, deciding, false)
}

/// [`edges`], with the edges of every deciding read when `every_read` (the reference the tests
/// hold the first reads' edges to), else of a segment's first read of each object and flags.
pub(crate) fn edges_of(model: &Model, deciding: &Deciding, every_read: bool) -> Vec<RfEdge> {
    if deciding.is_empty() {
        return Vec::new();
    }
    let mut writes: HashMap<(VarId, usize), Writes> = HashMap::new();
    let mut writers: HashMap<VarId, BTreeSet<usize>> = HashMap::new();
    let mut reads: Vec<Read> = Vec::new();
    for (t, thread) in model.threads.iter().enumerate() {
        let events = &thread.events;
        let mut start: Option<(usize, u64)> = None;
        let mut pending_writes: Vec<VarId> = Vec::new();
        let mut open_reads: Vec<usize> = Vec::new();
        // The current segment's deciding reads so far, by object and flags.
        let mut segment_reads: HashSet<(VarId, bool, bool, bool)> = HashSet::new();
        for (i, e) in events.iter().enumerate() {
            match *e {
                ModelEvent::Access { var, kind, site } => {
                    let var = var as VarId;
                    if kind.is_write() {
                        pending_writes.push(var);
                        writers.entry(var).or_default().insert(t);
                        if let Some((index, seq)) = start {
                            let w = writes.entry((var, t)).or_default();
                            if w.starts.last().map(|&(s, _)| s) != Some(seq) {
                                w.starts.push((seq, At { thread: t, index }));
                            }
                        }
                    }
                    let predicate = deciding.predicates.contains(&site);
                    let spin = deciding.spins.contains(&site);
                    // A write at a deciding site is a store whose segment read the object first
                    // and decided by it: the recorder kept its write alone.
                    let first = |seen: &mut HashSet<_>| {
                        seen.insert((var, predicate, spin, kind.is_write())) || every_read
                    };
                    if predicate || deciding.addresses.contains(&site) {
                        if let Some(start) = start.filter(|_| first(&mut segment_reads)) {
                            open_reads.push(reads.len());
                            reads.push(Read {
                                at: At {
                                    thread: t,
                                    index: i,
                                },
                                var,
                                start,
                                end: None,
                                predicate,
                                spin,
                                write: kind.is_write(),
                            });
                        }
                    }
                }
                // A no-op runs along with its thread's segment: segments, for the solvers and here,
                // are delimited by the events that constrain the schedule.
                ModelEvent::Sync { .. } if !e.constrains() => {}
                ModelEvent::Sync { .. } => {
                    let now = completed(model, t, i);
                    for r in open_reads.drain(..) {
                        reads[r].end = now;
                    }
                    match now {
                        Some((_, seq)) => {
                            for var in pending_writes.drain(..) {
                                let ends = &mut writes.entry((var, t)).or_default().ends;
                                if ends.last().map(|&(s, _)| s) != Some(seq) {
                                    ends.push((
                                        seq,
                                        At {
                                            thread: t,
                                            index: i,
                                        },
                                    ));
                                }
                            }
                        }
                        // A write before an operation that never completed ends no segment the
                        // run ordered before anything.
                        None => pending_writes.clear(),
                    }
                    start = now;
                    segment_reads.clear();
                }
            }
        }
    }
    // The segments that read an object to decide by it, per (object, thread, start seq).
    let deciding_segments: BTreeSet<(VarId, usize, u64)> = reads
        .iter()
        .map(|r| (r.var, r.at.thread, r.start.1))
        .collect();
    // Collected, then sorted and deduplicated: a set of them, as they came, took two and a half
    // times their 28 bytes (a work queue's run: 520,000 edges, 41 of its 96 MB peak at 10^6).
    let mut out = Vec::new();
    for r in &reads {
        let thread = r.at.thread;
        let reader = At {
            thread,
            index: r.start.0,
        };
        let others = writers
            .get(&r.var)
            .into_iter()
            .flatten()
            .filter(move |&&w| w != thread);
        // Per other thread: its latest write whose segment ended before `bound`.
        let writes = &writes;
        let latest_before = |bound: u64| {
            others.clone().filter_map(move |&w| {
                let ends = &writes.get(&(r.var, w))?.ends;
                let before = ends.partition_point(|&(seq, _)| seq < bound);
                before.checked_sub(1).map(|k| ends[k])
            })
        };
        // The read's segment began after them.
        let latest = latest_before(r.start.1);
        let kept: Vec<(u64, At)> = if r.predicate {
            // What a waiting loop saw may be the sum of every write before it (a counter each
            // worker bumped): every other thread's latest one stays before the read, even when
            // the reader wrote the object since. Its own `working++` added to theirs, it did not
            // replace it, and without their bump a worker's `--working == 0` is true where the
            // run saw it false, and the replay signals where the run did not.
            latest.collect()
        } else {
            // The one write whose value the address came from, unless the reader's own thread
            // wrote the object after that writer's segment (in the read's segment or before it):
            // the read then saw its own write. The starts are in seq order, so the first one
            // after the writer's is the one to look at (a search, not a scan: a thread writes one
            // object in as many segments as the run is long). A read recorded as its segment's
            // write came before that write: only earlier segments' writes count.
            let own_starts = writes.get(&(r.var, thread)).map(|w| &w.starts[..]);
            let own_later = |w_seq: u64| {
                own_starts.is_some_and(|starts| {
                    let next = starts.partition_point(|&(st, _)| st <= w_seq);
                    starts
                        .get(next)
                        .is_some_and(|&(st, _)| st < r.start.1 || (st == r.start.1 && !r.write))
                })
            };
            latest
                .max()
                .filter(|&(w_seq, _)| !own_later(w_seq))
                .into_iter()
                .collect()
        };
        for (_, writer) in kept {
            out.push(RfEdge::new(reader, writer, r.var, r.at));
        }
        let Some((end, end_seq)) = r.end else {
            continue;
        };
        if r.predicate && r.spin {
            // A spin loop ran from this read to its exit within the segment, and the read that
            // left it saw every other thread's latest write whose segment ended before this one
            // did: the thread's next event stays after them (`while (alive != n) {}` and then
            // the work, which no replay reaches while a bump is missing). A writing segment still
            // open when the loop left (the bump under a lock whose unlock was recorded after main
            // went on) may hold the write that let it leave: its start stays before the read's
            // end, and the write, which follows that start with no sync operation between, can
            // happen while the loop spins. Without it a schedule left that bump out and its
            // replay spun for good.
            let spun = At { thread, index: end };
            for &w in others.clone() {
                let Some(wr) = writes.get(&(r.var, w)) else {
                    continue;
                };
                let ended = wr.ends.partition_point(|&(seq, _)| seq < end_seq);
                let last_end = ended.checked_sub(1).map(|k| wr.ends[k]);
                if let Some((_, writer)) = last_end {
                    out.push(RfEdge::new(spun, writer, r.var, r.at));
                }
                let started = wr.starts.partition_point(|&(seq, _)| seq < end_seq);
                if let Some(&(start_seq, start)) = started.checked_sub(1).map(|k| &wr.starts[k]) {
                    if last_end.is_none_or(|(seq, _)| seq < start_seq) {
                        out.push(RfEdge::new(spun, start, r.var, r.at));
                    }
                }
            }
        }
        // And the read must not see the next write either: a waiting loop's "not yet" stays "not
        // yet" (each other thread's first write whose segment began after the read's ended stays
        // after it), and a list walk must not meet the later unlinking of what it walked (that
        // write, if its segment read the object to decide by it too, as a pop reads the head it
        // replaces).
        for &w in others {
            let Some(starts) = writes.get(&(r.var, w)).map(|w| &w.starts) else {
                continue;
            };
            let after = starts.partition_point(|&(seq, _)| seq <= end_seq);
            let next = starts
                .get(after)
                .filter(|&&(seq, _)| r.predicate || deciding_segments.contains(&(r.var, w, seq)));
            if let Some(&(_, next)) = next {
                out.push(RfEdge::new(next, At { thread, index: end }, r.var, r.at));
            }
        }
    }
    drop(reads);
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ModelOp, MutexObject, Observed, SyncObjects, ThreadBuilder};
    use ilgen_trace::{AccessKind, SiteId, SyncOp, NO_SITE};

    /// An event of a hand-made thread.
    enum Step {
        Sync(u64, ModelOp),
        Access(VarId, AccessKind, SiteId),
    }

    fn sync(seq: u64, op: ModelOp) -> Step {
        Step::Sync(seq, op)
    }

    fn access(var: VarId, kind: AccessKind, site: SiteId) -> Step {
        Step::Access(var, kind, site)
    }

    fn addresses(sites: &[SiteId]) -> Deciding {
        Deciding {
            addresses: sites.iter().copied().collect(),
            predicates: BTreeSet::new(),
            spins: BTreeSet::new(),
        }
    }

    fn at(thread: usize, index: usize) -> At {
        At { thread, index }
    }

    /// A model of `threads`, with two mutexes.
    fn model(threads: Vec<Vec<Step>>) -> Model {
        Model::derive(
            threads
                .into_iter()
                .enumerate()
                .map(|(tid, steps)| {
                    let mut thread = ThreadBuilder::new(tid as ilgen_trace::ThreadId);
                    for step in steps {
                        match step {
                            Step::Sync(seq, op) => thread.sync(
                                op,
                                Observed {
                                    seq,
                                    op_index: 0,
                                    site: NO_SITE,
                                    op: SyncOp::MutexLock { mutex: 1 },
                                },
                            ),
                            Step::Access(var, kind, site) => thread.access(var, kind, site),
                        };
                    }
                    thread.build()
                })
                .collect(),
            SyncObjects {
                mutexes: (1..=2)
                    .map(|addr| MutexObject {
                        addr,
                        recursive: false,
                    })
                    .collect(),
                rwlocks: vec![],
                sems: vec![],
                conds: vec![],
                barriers: vec![],
            },
        )
    }

    /// A critical section of mutex `m` from seq `seq`, accessing var 0 at `site`.
    fn section(m: usize, seq: u64, kind: AccessKind, site: SiteId) -> Vec<Step> {
        vec![
            sync(seq, ModelOp::Lock { mutex: m }),
            access(0, kind, site),
            sync(seq + 1, ModelOp::Unlock { mutex: m }),
        ]
    }

    /// Main enqueues (writes the queue head, var 0) in a critical section; the worker dequeues
    /// (reads the head at a deciding site 9) in a later one.
    fn queue(head_read_site: SiteId) -> Model {
        model(vec![
            section(0, 0, AccessKind::Write, 1),
            section(0, 2, AccessKind::Read, head_read_site),
        ])
    }

    #[test]
    fn a_deciding_read_keeps_its_writer_segment_before_it() {
        assert_eq!(
            edges(&queue(9), &addresses(&[9])),
            vec![RfEdge::new(at(1, 0), at(0, 2), 0, at(1, 1))]
        );
    }

    #[test]
    fn a_write_at_a_deciding_site_is_a_read_first_that_keeps_its_writer() {
        // The worker's `if (tail) ...; tail = n;` (site 9): the recorder kept its write alone.
        // Its own write, in the same segment, came after the read and is not what it saw.
        let m = model(vec![
            section(0, 0, AccessKind::Write, 1),
            section(0, 2, AccessKind::Write, 9),
        ]);
        assert_eq!(
            edges(&m, &addresses(&[9])),
            vec![RfEdge::new(at(1, 0), at(0, 2), 0, at(1, 1))]
        );
        assert!(edges(&m, &addresses(&[8])).is_empty());
    }

    /// Two workers bump a counter (var 0) under mutex 0; main reads it in a waiting loop's
    /// predicate (site 9) under mutex 1; a third worker bumps it after main's read.
    fn counter() -> Model {
        model(vec![
            section(1, 4, AccessKind::Read, 9),
            section(0, 0, AccessKind::Write, 1),
            section(0, 2, AccessKind::Write, 1),
            section(0, 6, AccessKind::Write, 1),
        ])
    }

    #[test]
    fn a_predicate_keeps_every_earlier_writer_before_it_and_the_next_one_after() {
        let deciding = Deciding {
            addresses: BTreeSet::new(),
            predicates: BTreeSet::from([9]),
            spins: BTreeSet::new(),
        };
        assert_eq!(
            edges(&counter(), &deciding),
            vec![
                // Both earlier bumps stay before main's section...
                RfEdge::new(at(0, 0), at(1, 2), 0, at(0, 1)),
                RfEdge::new(at(0, 0), at(2, 2), 0, at(0, 1)),
                // ...and the later one after it.
                RfEdge::new(at(3, 0), at(0, 2), 0, at(0, 1)),
            ]
        );
        // As an address, the read keeps only the latest writer: the later bump read nothing.
        assert_eq!(
            edges(&counter(), &addresses(&[9])),
            vec![RfEdge::new(at(0, 0), at(2, 2), 0, at(0, 1))]
        );
    }

    #[test]
    fn a_walk_keeps_the_later_pop_of_what_it_walked_after_it() {
        // Main pushes (writes the head, var 0); a worker walks the list (reads the head at the
        // deciding site 9); then the writer pops (reads the head at site 9 and writes it, one
        // segment). The walk keeps the push before it and the pop after it.
        let m = model(vec![
            section(0, 0, AccessKind::Write, 1),
            section(0, 2, AccessKind::Read, 9),
            vec![
                sync(4, ModelOp::Lock { mutex: 0 }),
                access(0, AccessKind::Read, 9),
                access(0, AccessKind::Write, 2),
                sync(5, ModelOp::Unlock { mutex: 0 }),
            ],
        ]);
        let walk_keeps = |e: &RfEdge| e.read.at() == at(1, 1);
        assert_eq!(
            edges(&m, &addresses(&[9]))
                .into_iter()
                .filter(walk_keeps)
                .collect::<Vec<_>>(),
            vec![
                RfEdge::new(at(1, 0), at(0, 2), 0, at(1, 1)),
                RfEdge::new(at(2, 0), at(1, 2), 0, at(1, 1)),
            ]
        );
    }

    /// Two workers bump `working` (var 0, site 1) under mutex 0; worker 0, after its own bump,
    /// reads it at site 9 in a later section (`if (!working) signal`).
    fn own_bump() -> Model {
        let mut w0 = section(0, 2, AccessKind::Write, 1);
        w0.extend(section(0, 4, AccessKind::Read, 9));
        model(vec![w0, section(0, 0, AccessKind::Write, 1)])
    }

    #[test]
    fn a_predicate_keeps_the_other_writer_though_its_own_thread_wrote_since() {
        let deciding = Deciding {
            addresses: BTreeSet::new(),
            predicates: BTreeSet::from([9]),
            spins: BTreeSet::new(),
        };
        // Worker 1's bump stays before worker 0's test: without it `working` would be 0 there.
        assert_eq!(
            edges(&own_bump(), &deciding),
            vec![RfEdge::new(at(0, 3), at(1, 2), 0, at(0, 4))]
        );
        // An address read saw its own thread's later write: it keeps nothing.
        assert!(edges(&own_bump(), &addresses(&[9])).is_empty());
    }

    /// Main reads `alive` (var 0) at site 11 in one segment during which two workers bump it
    /// under mutex 0: `while (alive != 2) {}` between two of main's sync events.
    fn spin() -> Model {
        model(vec![
            vec![
                sync(0, ModelOp::Lock { mutex: 1 }),
                access(0, AccessKind::Read, 11),
                sync(5, ModelOp::Unlock { mutex: 1 }),
            ],
            section(0, 1, AccessKind::Write, 1),
            section(0, 3, AccessKind::Write, 1),
        ])
    }

    #[test]
    fn a_spin_keeps_the_writes_its_segment_saw_before_its_next_event() {
        let mut deciding = Deciding {
            addresses: BTreeSet::new(),
            predicates: BTreeSet::from([11]),
            spins: BTreeSet::new(),
        };
        // As a wait loop's read it saw only the first value: nothing was written before it.
        assert!(edges(&spin(), &deciding).is_empty());
        // The spin left its loop in that segment: both bumps stay before main's next event.
        deciding.spins.insert(11);
        assert_eq!(
            edges(&spin(), &deciding),
            vec![
                RfEdge::new(at(0, 2), at(1, 2), 0, at(0, 1)),
                RfEdge::new(at(0, 2), at(2, 2), 0, at(0, 1)),
            ]
        );
    }

    /// The spin saw the second bump while its section was still open: that section's lock
    /// (seq 4) came before main's next event (seq 5), its unlock (seq 6) after.
    #[test]
    fn a_spin_keeps_the_start_of_a_writing_section_still_open_when_it_left() {
        let m = model(vec![
            vec![
                sync(0, ModelOp::Lock { mutex: 1 }),
                access(0, AccessKind::Read, 11),
                sync(5, ModelOp::Unlock { mutex: 1 }),
            ],
            section(0, 1, AccessKind::Write, 1),
            vec![
                sync(4, ModelOp::Lock { mutex: 0 }),
                access(0, AccessKind::Write, 1),
                sync(6, ModelOp::Unlock { mutex: 0 }),
            ],
        ]);
        let deciding = Deciding {
            addresses: BTreeSet::new(),
            predicates: BTreeSet::from([11]),
            spins: BTreeSet::from([11]),
        };
        assert_eq!(
            edges(&m, &deciding),
            vec![
                RfEdge::new(at(0, 2), at(1, 2), 0, at(0, 1)),
                RfEdge::new(at(0, 2), at(2, 0), 0, at(0, 1)),
            ]
        );
    }

    #[test]
    fn a_plain_read_keeps_nothing() {
        assert!(edges(&queue(8), &addresses(&[9])).is_empty());
        assert!(edges(&queue(9), &Deciding::default()).is_empty());
    }

    #[test]
    fn a_model_of_an_object_read_first_in_the_segment_moves_the_later_reads_edges_to_its_end() {
        // Main reads var 1, then the predicate (var 0): `while (q.len || working)`.
        let mut main = section(1, 4, AccessKind::Read, 9);
        main.insert(1, access(1, AccessKind::Read, 5));
        let mut m = model(vec![
            main,
            section(0, 0, AccessKind::Write, 1),
            section(0, 2, AccessKind::Write, 1),
        ]);
        let deciding = Deciding {
            addresses: BTreeSet::new(),
            predicates: BTreeSet::from([9]),
            spins: BTreeSet::new(),
        };
        m.set_reads_from(edges(&m, &deciding));
        assert_eq!(m.sources().reads_from.len(), 2);
        // The race on var 1 is taken before the predicate is read; what main does after its
        // segment (the unlock, its event 2 in that model) still waits for the writers.
        let (on_1, _) = m.restrict(Some(1));
        let moved = &on_1.sources().reads_from;
        assert_eq!(moved.len(), 2);
        assert!(moved.iter().all(|e| e.after.at() == at(0, 2)));
        // The deadlock model keeps them.
        assert_eq!(m.restrict(None).0.sources().reads_from.len(), 2);
    }

    #[test]
    fn a_segments_later_reads_of_an_object_add_no_edge() {
        // The worker reads the head (site 9) three times in one critical section, and its
        // last read decides as a predicate (site 7): that one keeps its own edge.
        let mut worker = section(0, 2, AccessKind::Read, 9);
        worker.insert(2, access(0, AccessKind::Read, 9));
        worker.insert(3, access(0, AccessKind::Read, 9));
        worker.insert(4, access(0, AccessKind::Read, 7));
        let m = model(vec![section(0, 0, AccessKind::Write, 1), worker]);
        let deciding = Deciding {
            addresses: BTreeSet::from([9]),
            predicates: BTreeSet::from([7]),
            spins: BTreeSet::new(),
        };
        let keeps = |read| RfEdge::new(at(1, 0), at(0, 2), 0, at(1, read));
        assert_eq!(edges(&m, &deciding), vec![keeps(1), keeps(4)]);
        assert_eq!(
            edges_of(&m, &deciding, true),
            vec![keeps(1), keeps(2), keeps(3), keeps(4)]
        );
    }
}
