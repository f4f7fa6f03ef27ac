//! The heap blocks of a replay, so that a race on heap memory names its block.
//!
//! Takes every lifetime event of a followed thread ([`note`]: thread, operation, site, from
//! `intercept::heap`); gives [`containing`]: the last allocation covering an address, with its
//! size, allocating thread, site and shadow stack, as ThreadSanitizer's "Location is heap block"
//! shows it. A free keeps its block, so that a race on freed memory still names where the memory
//! came from; a later allocation, stack, mapping or unmapping of the same bytes ends it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use ilgen_trace::replay::HeapBlock;
use ilgen_trace::{known_site, HeapOp, SiteId, ThreadId};

use crate::replay;
use crate::replay::stack::StackId;

struct Block {
    size: u64,
    tid: ThreadId,
    site: SiteId,
    stack: StackId,
}

/// Start address → block; blocks never overlap.
static BLOCKS: Mutex<BTreeMap<u64, Block>> = Mutex::new(BTreeMap::new());

/// Applies lifetime event `op` of thread `tid` at `site`.
pub(crate) fn note(tid: ThreadId, op: HeapOp, site: SiteId) {
    let (addr, size) = op.block();
    if size == 0 || matches!(op, HeapOp::Free { .. }) {
        return;
    }
    let end = addr.saturating_add(size);
    let mut blocks = BLOCKS.lock().unwrap_or_else(|e| e.into_inner());
    let over: Vec<u64> = blocks
        .range(..end)
        .rev()
        .take_while(|(&a, b)| a.saturating_add(b.size) > addr)
        .map(|(&a, _)| a)
        .collect();
    for a in over {
        blocks.remove(&a);
    }
    if let HeapOp::Alloc { .. } = op {
        let stack = replay::stack::current();
        blocks.insert(
            addr,
            Block {
                size,
                tid,
                site,
                stack,
            },
        );
    }
}

/// The last allocation covering `addr`, if the replaced malloc family made one.
pub(crate) fn containing(addr: u64) -> Option<HeapBlock> {
    let blocks = BLOCKS.lock().unwrap_or_else(|e| e.into_inner());
    let (&start, b) = blocks.range(..=addr).next_back()?;
    (addr < start.saturating_add(b.size)).then(|| HeapBlock {
        addr: start,
        size: b.size,
        thread: replay::thread::thread_ref(b.tid),
        site: known_site(b.site),
        stack: replay::stack::frames(b.stack),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_of(addr: u64) -> Option<(u64, u64, ThreadId, Option<SiteId>)> {
        containing(addr).map(|b| (b.addr, b.size, b.thread.tid, b.site))
    }

    #[test]
    fn the_last_allocation_covering_an_address_names_it_even_freed() {
        let base = 0x5151_0000u64;
        note(
            2,
            HeapOp::Alloc {
                addr: base,
                size: 40,
            },
            7,
        );
        assert_eq!(block_of(base + 24), Some((base, 40, 2, Some(7))));
        assert_eq!(block_of(base + 40), None);
        assert_eq!(block_of(base - 1), None);
        // Freed, it still names where the memory came from.
        note(
            2,
            HeapOp::Free {
                addr: base,
                size: 40,
            },
            8,
        );
        assert_eq!(block_of(base + 24), Some((base, 40, 2, Some(7))));
        // A new block over part of it replaces it.
        note(
            3,
            HeapOp::Alloc {
                addr: base + 16,
                size: 24,
            },
            9,
        );
        assert_eq!(block_of(base + 24), Some((base + 16, 24, 3, Some(9))));
        assert_eq!(block_of(base + 8), None);
        // A thread's stack over the same bytes is no heap block.
        note(
            3,
            HeapOp::Stack {
                addr: base,
                size: 64,
            },
            0,
        );
        assert_eq!(block_of(base + 24), None);
    }
}
