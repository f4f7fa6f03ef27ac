//! Object lifetimes: which allocation of an address range each access and each free belongs to.
//!
//! Takes every [`ThreadTrace`] of a run; gives, per thread and event, the memory access the event
//! makes and the allocation epoch of its bytes ([`accesses`], a walk of the thread in program
//! order): 0 for memory no recorded lifetime covers (globals, the main thread's stack, memory
//! allocated before the runtime started and never freed), otherwise the epoch of one lifetime. A lifetime is a block from its allocation (`alloc`, a thread's `stack`,
//! a `map`) to its free (a `free` or `unmap` of its address; the next `stack` at the
//! same address for a stack; never), numbered from 1 in allocation order. A free of a block whose
//! allocation was not recorded starts its lifetime at the beginning of the run. An `unmap` may end
//! only part of a mapping: the bytes it covers are free, and a later `map` of them is new.
//!
//! An access belongs to the latest lifetime of its address allocated before the access's segment
//! ended (the next sequence number of its thread: a sync or heap event); since the runtime numbers
//! a block's free before the allocation that reuses it, the accesses of a freed job and of the new
//! job malloc hands the same memory to fall into different epochs and are never paired. A free
//! belongs to the lifetime it ends. Allocation creates no ordering: epochs only separate objects.
//!
//! Sync objects that the run destroys (`pthread_mutex_destroy`, `sem_destroy`, ...) have
//! lifetimes too, over their first byte: each operation on such an object is an access of that
//! byte ([`Lifetimes::sync_access`]: an atomic read, the destroy a write), and a destroy ends the
//! object, so the operations after it (a re-initialised object at the same address) are another
//! epoch. An operation belongs to the latest such lifetime begun before its own sequence number,
//! a destroy to the one it ends. Objects never destroyed get no accesses: their operations
//! cannot race with anything.

use std::collections::HashMap;

use ilgen_trace::format::{Events, ThreadTrace};
use ilgen_trace::{Access, AccessKind, Event, HeapOp, Sync, PENDING};

/// Epoch of memory that no recorded lifetime covers.
pub const NO_EPOCH: u32 = 0;

#[derive(Clone, Copy, Debug)]
struct Life {
    alloc: u64,
    epoch: u32,
}

/// Every lifetime, split into disjoint address pieces: piece `i` is `[bounds[i], bounds[i + 1])`
/// and holds the lifetimes covering it, by allocation sequence number.
#[derive(Debug, Default)]
pub struct Lifetimes {
    bounds: Vec<u64>,
    lives: Vec<Vec<Life>>,
    /// Per address of a sync object the run destroys, the lifetimes its destroys begin (numbered
    /// after every block's): a destroy is the allocation of the next object there.
    renewed: HashMap<u64, Vec<Life>>,
}

struct Block {
    addr: u64,
    end: u64,
    alloc: u64,
}

impl Lifetimes {
    pub fn of(traces: &[ThreadTrace]) -> Lifetimes {
        // The heap events, and the destroys of sync objects: the marks of the threads' lifecycles.
        let mut heap: Vec<(u64, HeapOp)> = Vec::new();
        let mut destroys: Vec<(u64, u64)> = Vec::new();
        for (_, e) in traces.iter().flat_map(|t| t.events.lifecycle()) {
            match e {
                Event::Heap(h) => heap.push((h.seq, h.op)),
                Event::Sync(s) => match s.op.object_access() {
                    Some((addr, AccessKind::Write)) if !s.is_pending() => {
                        destroys.push((s.seq, addr))
                    }
                    _ => {}
                },
                Event::Access(_) | Event::Atomic(_) => {}
            }
        }
        heap.sort_by_key(|&(seq, _)| seq);
        let mut blocks: Vec<Block> = Vec::new();
        // Blocks alive, by start address.
        let mut live: HashMap<u64, usize> = HashMap::new();
        let mut unseen_frees: Vec<Block> = Vec::new();
        for (seq, op) in heap {
            let (addr, size) = op.block();
            let end = addr.saturating_add(size.max(1));
            match op {
                HeapOp::Alloc { .. } | HeapOp::Stack { .. } | HeapOp::Map { .. } => {
                    live.insert(addr, blocks.len());
                    blocks.push(Block {
                        addr,
                        end,
                        alloc: seq,
                    });
                }
                HeapOp::Free { .. } | HeapOp::Unmap { .. } => {
                    // An unmap of part of a mapping ends no block at its address: it starts a
                    // lifetime of its own from the beginning of the run, older than the mapping's,
                    // which so still owns those bytes until it ends.
                    if live.remove(&addr).is_none() {
                        unseen_frees.push(Block {
                            addr,
                            end,
                            alloc: 0,
                        });
                    }
                }
            }
        }
        // Lifetimes that began before the run's first event come first.
        unseen_frees.append(&mut blocks);
        let blocks = unseen_frees;
        let mut bounds: Vec<u64> = blocks.iter().flat_map(|b| [b.addr, b.end]).collect();
        bounds.sort_unstable();
        bounds.dedup();
        let mut lives: Vec<Vec<Life>> = vec![Vec::new(); bounds.len()];
        for (i, b) in blocks.iter().enumerate() {
            let life = Life {
                alloc: b.alloc,
                epoch: i as u32 + 1,
            };
            let mut piece = bounds.partition_point(|&x| x < b.addr);
            while piece + 1 < bounds.len() && bounds[piece] < b.end {
                lives[piece].push(life);
                piece += 1;
            }
        }
        destroys.sort_unstable();
        let mut renewed: HashMap<u64, Vec<Life>> = HashMap::new();
        for (i, &(seq, addr)) in destroys.iter().enumerate() {
            renewed.entry(addr).or_default().push(Life {
                alloc: seq,
                epoch: (blocks.len() + i) as u32 + 1,
            });
        }
        Lifetimes {
            bounds,
            lives,
            renewed,
        }
    }

    /// The operation as an access of its object's first byte, if the run destroys the object (see
    /// the module doc): at the operation's site, an atomic read, or a write for the destroy.
    pub fn sync_access(&self, s: &Sync) -> Option<Access> {
        let (addr, kind) = s.op.object_access()?;
        self.renewed.contains_key(&addr).then_some(Access {
            addr,
            size: 1,
            site: s.site,
            kind,
        })
    }

    /// The epoch of the bytes at `addr` for an event whose segment ended at sequence number `hi`.
    pub fn epoch(&self, addr: u64, hi: u64) -> u32 {
        self.epoch_near(addr, || hi, &mut 0)
    }

    /// [`Lifetimes::epoch`], looking at piece `*hint` first (a thread's accesses stay in one
    /// block for a while), which then holds the piece of `addr`.
    /// `hi` is asked for only when some lifetime covers `addr`: most accesses are to globals.
    fn epoch_near(&self, addr: u64, hi: impl FnOnce() -> u64, hint: &mut usize) -> u32 {
        let bounds = &self.bounds;
        let h = *hint;
        // Piece 0 and the last one are open-ended: the hint holds there too (globals lie below
        // the heap, and every access to one would search again).
        let hinted = h <= bounds.len()
            && (h == 0 || bounds[h - 1] <= addr)
            && (h == bounds.len() || addr < bounds[h]);
        let piece = if hinted {
            h
        } else {
            bounds.partition_point(|&x| x <= addr)
        };
        *hint = piece;
        if piece == 0 || piece == bounds.len() {
            return NO_EPOCH;
        }
        // The latest lifetime allocated before `hi`; lifetimes are held by allocation.
        let lives = &self.lives[piece - 1];
        if lives.is_empty() {
            return NO_EPOCH;
        }
        let hi = hi();
        match lives.partition_point(|l| l.alloc < hi) {
            0 => NO_EPOCH,
            k => lives[k - 1].epoch,
        }
    }

    /// The epoch of the sync object at `addr` for its operation numbered `seq`: before the
    /// object's first destroy, that of the memory it lies in (so that a free of the block holding
    /// it races with its uses like any access); after one, the lifetime that destroy began.
    fn sync_epoch(&self, addr: u64, seq: u64) -> u32 {
        self.renewed
            .get(&addr)
            .and_then(|lives| lives.iter().rev().find(|l| l.alloc < seq))
            .map_or_else(|| self.epoch(addr, seq), |l| l.epoch)
    }
}

/// The event as a memory access: an access, a free (a write over its whole block, at its site;
/// a block larger than an access record holds is clipped), or an operation on a sync object the
/// run destroys ([`Lifetimes::sync_access`]).
pub fn memory_access(event: &Event, lifetimes: &Lifetimes) -> Option<Access> {
    match event {
        Event::Access(a) => Some(*a),
        Event::Heap(h) => match h.op {
            HeapOp::Free { addr, size } | HeapOp::Unmap { addr, size } => Some(Access {
                addr,
                size: size.min(u64::from(u32::MAX)) as u32,
                site: h.site,
                kind: AccessKind::Write,
            }),
            HeapOp::Alloc { .. } | HeapOp::Stack { .. } | HeapOp::Map { .. } => None,
        },
        Event::Sync(s) => lifetimes.sync_access(s),
        // Its operation's access is a record of its own.
        Event::Atomic(_) => None,
    }
}

/// The bytes an access touches: `[addr, addr + size)`.
pub fn span(a: &Access) -> (u64, u64) {
    (a.addr, a.addr.saturating_add(u64::from(a.size)))
}

/// One thread's events in program order, each with the memory access it makes
/// ([`memory_access`]) and the epoch of that access's bytes (see the module doc). Decodes the
/// thread's records as it goes; the sequence number that ends an access's segment comes from
/// the thread's marks, its sync, heap and atomic events.
pub fn accesses<'a>(trace: &'a ThreadTrace, lifetimes: &'a Lifetimes) -> Walk<'a> {
    Walk {
        events: trace.events.iter(),
        hi: None,
        piece: 0,
        lifetimes,
    }
}

/// The walk of [`accesses`].
pub struct Walk<'a> {
    events: <&'a Events as IntoIterator>::IntoIter,
    /// The sequence number that ends the current segment, once an access needed it.
    hi: Option<u64>,
    /// The piece of the lifetimes the last access was in.
    piece: usize,
    lifetimes: &'a Lifetimes,
}

impl Iterator for Walk<'_> {
    type Item = (Event, Option<(Access, u32)>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let event = self.events.next()?;
        let access = match &event {
            Event::Access(a) => {
                // The segment ends at the next sync or heap event (never: still open).
                let (events, hi) = (&self.events, &mut self.hi);
                let hi = || {
                    *hi.get_or_insert_with(|| match events.next_mark() {
                        Some(Event::Sync(s)) => s.seq,
                        Some(Event::Heap(h)) => h.seq,
                        Some(Event::Atomic(a)) => a.seq,
                        Some(Event::Access(_)) | None => PENDING,
                    })
                };
                Some((*a, self.lifetimes.epoch_near(a.addr, hi, &mut self.piece)))
            }
            Event::Heap(h) => {
                self.hi = None;
                memory_access(&event, self.lifetimes)
                    .map(|a| (a, self.lifetimes.epoch(a.addr, h.seq)))
            }
            Event::Sync(s) => {
                self.hi = None;
                self.lifetimes
                    .sync_access(s)
                    .map(|a| (a, self.lifetimes.sync_epoch(a.addr, s.seq)))
            }
            Event::Atomic(_) => {
                self.hi = None;
                None
            }
        };
        Some((event, access))
    }
}

#[cfg(test)]
mod tests {
    use ilgen_trace::{Access, AccessKind, Heap, Sync, SyncOp};

    use super::*;
    use crate::testkit::thread;

    /// Per event of `trace`, the epoch of the access it makes, [`NO_EPOCH`] if it makes none.
    fn event_epochs(trace: &ThreadTrace, lifetimes: &Lifetimes) -> Vec<u32> {
        accesses(trace, lifetimes)
            .map(|(_, a)| a.map_or(NO_EPOCH, |(_, epoch)| epoch))
            .collect()
    }

    fn heap(seq: u64, op: HeapOp) -> Event {
        Event::Heap(Heap { seq, site: 1, op })
    }

    fn sync(seq: u64) -> Event {
        Event::Sync(Sync {
            seq,
            site: 2,
            op: SyncOp::MutexUnlock { mutex: 0x10 },
        })
    }

    fn write(addr: u64) -> Event {
        Event::Access(Access {
            addr,
            size: 4,
            site: 3,
            kind: AccessKind::Write,
        })
    }

    #[test]
    fn a_reused_block_is_a_new_epoch_for_every_thread() {
        let (addr, size) = (0x5000, 64);
        // T0 allocates, writes and frees a job; T1 gets the same memory from malloc and writes it.
        let t0 = thread(
            0,
            vec![
                heap(1, HeapOp::Alloc { addr, size }),
                write(addr + 8),
                sync(2),
                write(addr + 8),
                heap(3, HeapOp::Free { addr, size }),
                write(0x9000),
            ],
        );
        let t1 = thread(
            1,
            vec![
                sync(4),
                heap(5, HeapOp::Alloc { addr, size: 32 }),
                write(addr + 8),
                sync(6),
            ],
        );
        let traces = [t0, t1];
        let lifetimes = Lifetimes::of(&traces);
        assert_eq!(event_epochs(&traces[0], &lifetimes), vec![0, 1, 0, 1, 1, 0]);
        assert_eq!(event_epochs(&traces[1], &lifetimes), vec![0, 0, 2, 0]);
        // Beyond the second, smaller block only the first lifetime ever covered the bytes.
        assert_eq!(lifetimes.epoch(addr + 40, u64::MAX), 1);
        assert_eq!(lifetimes.epoch(addr + size, u64::MAX), NO_EPOCH);
    }

    #[test]
    fn a_free_without_its_allocation_starts_at_the_beginning_and_stacks_replace_stacks() {
        let stack = HeapOp::Stack {
            addr: 0x7000,
            size: 0x100,
        };
        let t0 = thread(
            0,
            vec![
                write(0x100),
                heap(
                    4,
                    HeapOp::Free {
                        addr: 0x100,
                        size: 8,
                    },
                ),
            ],
        );
        let t1 = thread(1, vec![heap(1, stack), write(0x7010), sync(2)]);
        let t2 = thread(2, vec![heap(3, stack), write(0x7010), sync(5)]);
        let traces = [t0, t1, t2];
        let lifetimes = Lifetimes::of(&traces);
        assert_eq!(event_epochs(&traces[0], &lifetimes), vec![1, 1]);
        assert_eq!(event_epochs(&traces[1], &lifetimes)[1], 2);
        assert_eq!(event_epochs(&traces[2], &lifetimes)[1], 3);
    }

    #[test]
    fn a_partial_unmap_ends_only_its_pages() {
        let (map, page) = (0x10000, 0x1000);
        // T0 maps four pages, writes two of them and unmaps the second page; T1 maps that page
        // again (the kernel's reuse) and writes both the new page and the fourth, still T0's.
        let t0 = thread(
            0,
            vec![
                heap(
                    1,
                    HeapOp::Map {
                        addr: map,
                        size: 4 * page,
                    },
                ),
                write(map + page),
                write(map + 3 * page),
                heap(
                    2,
                    HeapOp::Unmap {
                        addr: map + page,
                        size: page,
                    },
                ),
                sync(3),
            ],
        );
        let t1 = thread(
            1,
            vec![
                sync(4),
                heap(
                    5,
                    HeapOp::Map {
                        addr: map + page,
                        size: page,
                    },
                ),
                write(map + page),
                write(map + 3 * page),
                sync(6),
            ],
        );
        let traces = [t0, t1];
        let lifetimes = Lifetimes::of(&traces);
        // Epoch 1 is the unmapped page's own (no mapping starts at its address), 2 the first
        // mapping, 3 the second: the unmap belongs to the mapping it cuts.
        assert_eq!(event_epochs(&traces[0], &lifetimes), vec![0, 2, 2, 2, 0]);
        assert_eq!(event_epochs(&traces[1], &lifetimes), vec![0, 0, 3, 2, 0]);
    }
}
