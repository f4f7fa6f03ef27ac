//! Reads keep their writers: the ordering edges that keep each deciding read's observed writer.
//!
//! Takes the full [`Model`] of a run and the sites of deciding reads (loads whose value decides
//! an address: `ilgen_trace::sites::FLAG_DECIDES`, set by the pass); gives
//! [`RfEdge`]s, each "the writer's sync event `f` runs before the reader's sync event `s`".
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
//! enforce it like fork → start. A model of object `v` drops the edges of reads of `v` itself: its
//! race is exactly a change of what those reads see ([`crate::model::Model::restrict`]).

use std::collections::{BTreeSet, HashMap};

use ilgen_trace::{AccessKind, SiteId, PENDING};

use crate::model::{At, Model, ModelEvent, RfEdge, VarId};

/// A completed sync event's index and seq, if there is one.
fn completed(model: &Model, thread: usize, index: usize) -> Option<(usize, u64)> {
    let seq = model.threads[thread].events[index].observed()?.seq;
    (seq != PENDING).then_some((index, seq))
}

/// The edges that keep the observed writer of every read at a `deciding` site.
pub fn edges(model: &Model, deciding: &BTreeSet<SiteId>) -> Vec<RfEdge> {
    if deciding.is_empty() {
        return Vec::new();
    }
    // Per object: (seq of the sync event ending the writing segment, writer, that event), sorted.
    let mut writes: HashMap<VarId, Vec<(u64, At)>> = HashMap::new();
    // Per object and thread: seqs of the sync events that start segments where the thread wrote it.
    let mut own_writes: HashMap<(VarId, usize), Vec<u64>> = HashMap::new();
    // (reader thread, its event index, object, seq and index of the segment's starting event)
    let mut reads = Vec::new();
    for (t, thread) in model.threads.iter().enumerate() {
        let events = &thread.events;
        let mut start: Option<(usize, u64)> = None;
        let mut pending_writes: Vec<VarId> = Vec::new();
        for (i, e) in events.iter().enumerate() {
            match *e {
                ModelEvent::Access { var, kind, site } => {
                    if kind.is_write() {
                        pending_writes.push(var);
                        own_writes
                            .entry((var, t))
                            .or_default()
                            .push(start.map_or(0, |(_, seq)| seq));
                    }
                    let read = matches!(kind, AccessKind::Read | AccessKind::AtomicRead);
                    if read && deciding.contains(&site) {
                        if let Some((s, seq)) = start {
                            reads.push((t, var, s, seq));
                        }
                    }
                }
                // A no-op runs along with its thread's segment: segments, for the solvers and here,
                // are delimited by the events that constrain the schedule.
                ModelEvent::Sync { .. } if !e.constrains() => {}
                ModelEvent::Sync { observed, .. } => {
                    if observed.seq != PENDING {
                        for var in pending_writes.drain(..) {
                            writes.entry(var).or_default().push((
                                observed.seq,
                                At {
                                    thread: t,
                                    index: i,
                                },
                            ));
                        }
                    } else {
                        // A write before an operation that never completed ends no segment the
                        // run ordered before anything.
                        pending_writes.clear();
                    }
                    start = completed(model, t, i);
                }
            }
        }
    }
    for list in writes.values_mut() {
        list.sort_unstable();
    }
    let mut out = BTreeSet::new();
    for (t, var, s, s_seq) in reads {
        let Some(list) = writes.get(&var) else {
            continue;
        };
        // The latest write of another thread whose segment ended before the read's began.
        let before = list.partition_point(|&(seq, _)| seq < s_seq);
        let Some(&(w_seq, writer)) = list[..before].iter().rev().find(|(_, w)| w.thread != t)
        else {
            continue;
        };
        let own_later = own_writes
            .get(&(var, t))
            .is_some_and(|starts| starts.iter().any(|&st| st > w_seq && st <= s_seq));
        if !own_later {
            out.insert(RfEdge {
                reader: At {
                    thread: t,
                    index: s,
                },
                writer,
                var,
            });
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ModelOp, ModelThread, MutexObject, Observed, SyncObjects};
    use ilgen_trace::{SyncOp, NO_SITE};

    fn sync(seq: u64, op: ModelOp) -> ModelEvent {
        ModelEvent::Sync {
            op,
            observed: Observed {
                seq,
                op_index: 0,
                site: NO_SITE,
                op: SyncOp::MutexLock { mutex: 1 },
            },
        }
    }

    fn access(var: VarId, kind: AccessKind, site: SiteId) -> ModelEvent {
        ModelEvent::Access { var, kind, site }
    }

    /// Main enqueues (writes the queue head, var 0) in a critical section; the worker dequeues
    /// (reads the head at a deciding site 9) in a later one.
    fn queue(head_read_site: SiteId) -> Model {
        let lock = ModelOp::Lock { mutex: 0 };
        let unlock = ModelOp::Unlock { mutex: 0 };
        let main = vec![
            sync(0, lock),
            access(0, AccessKind::Write, 1),
            sync(1, unlock),
        ];
        let worker = vec![
            sync(2, lock),
            access(0, AccessKind::Read, head_read_site),
            sync(3, unlock),
        ];
        Model::derive(
            vec![
                ModelThread {
                    tid: 0,
                    events: main,
                },
                ModelThread {
                    tid: 1,
                    events: worker,
                },
            ],
            SyncObjects {
                mutexes: vec![MutexObject {
                    addr: 1,
                    recursive: false,
                }],
                rwlocks: vec![],
                sems: vec![],
                conds: vec![],
                barriers: vec![],
            },
        )
    }

    #[test]
    fn a_deciding_read_keeps_its_writer_segment_before_it() {
        let deciding = BTreeSet::from([9]);
        assert_eq!(
            edges(&queue(9), &deciding),
            vec![RfEdge {
                reader: At {
                    thread: 1,
                    index: 0
                },
                writer: At {
                    thread: 0,
                    index: 2
                },
                var: 0,
            }]
        );
    }

    #[test]
    fn a_plain_read_keeps_nothing() {
        assert!(edges(&queue(8), &BTreeSet::from([9])).is_empty());
        assert!(edges(&queue(9), &BTreeSet::new()).is_empty());
    }
}
