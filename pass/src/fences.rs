//! Fences: which relaxed atomic operations of a function a fence makes acquire or release.
//!
//! Takes one function; gives, for each atomic load, store, atomicrmw or cmpxchg that a thread
//! fence orders, the `abi::ATOMIC_ACQUIRES` / `abi::ATOMIC_RELEASES` bits it gets on top of its
//! own memory order (`instrument::instrument_atomic` records them as it records its own).
//!
//! In C11/C++11 a release fence followed by an atomic store synchronizes with an atomic load that
//! reads that store and is followed by an acquire fence, whatever the two operations' orders
//! (`relaxed` in the idiom: `data = x; fence(release); flag.store(1, relaxed)` against
//! `if (flag.load(relaxed)) { fence(acquire); use(data); }`). Lock-free queues and free lists
//! order their slots this way (moodycamel's ConcurrentQueue marks a block empty with release
//! stores that its owner reads with relaxed loads and one acquire fence). ThreadSanitizer does not
//! model such fences and reports the slots as races; without this, the prediction here would
//! propose each such pair and its replay, whose atomics all synchronize, would refute it.
//!
//! So an atomic read from which an acquire fence of the same function can be reached (before it in
//! its block, or in a block with a path to it) acquires, and an atomic write reachable from a
//! release fence releases, as if each carried the fence's order. That orders a little more than
//! the fence does (what lies between the operation and its fence, and paths that bypass the
//! fence), which can hide only pairs whose replay would be ordered by the same atomics anyway.
//! Fences of one thread's own (`syncscope("singlethread")`: `atomic_signal_fence`) order nothing
//! between threads and are ignored. The pass sees the fence as an instruction where the fence
//! function is inlined: C's `atomic_thread_fence` always, C++'s `std::atomic_thread_fence` with
//! optimization on (at -O0 it is a call, and the operation inside `std::atomic`'s own call).

use std::collections::{HashMap, HashSet};

use ilgen_trace::abi;
use inkwell::basic_block::BasicBlock;
use inkwell::values::{AsValueRef, FunctionValue, InstructionOpcode, InstructionValue};
use inkwell::AtomicOrdering::{Acquire, AcquireRelease, Release, SequentiallyConsistent};
use llvm_sys::core::LLVMIsAtomicSingleThread;

use crate::ir;

/// The bits each fenced atomic operation of `f` gets from its fences (absent: none).
pub fn ordered_by_fences(f: FunctionValue<'_>) -> HashMap<InstructionValue<'_>, u64> {
    let mut bits: HashMap<InstructionValue<'_>, u64> = HashMap::new();
    let blocks = f.get_basic_blocks();
    let fences: Vec<_> = blocks
        .iter()
        .flat_map(|&b| ir::instructions(b).into_iter().map(move |i| (b, i)))
        .filter(|&(_, i)| i.get_opcode() == InstructionOpcode::Fence && !single_thread(i))
        .collect();
    if fences.is_empty() {
        return bits;
    }
    let mut predecessors: HashMap<BasicBlock<'_>, Vec<BasicBlock<'_>>> = HashMap::new();
    for &b in &blocks {
        for s in ir::successors(b) {
            predecessors.entry(s).or_default().push(b);
        }
    }
    for (block, fence) in fences {
        let Ok(order) = fence.get_atomic_ordering() else {
            continue;
        };
        let here = ir::instructions(block);
        let at = here.iter().position(|&i| i == fence).unwrap_or(0);
        if matches!(order, Acquire | AcquireRelease | SequentiallyConsistent) {
            let before = reached(block, |b| predecessors.get(&b).cloned().unwrap_or_default());
            let ops = here[..at].iter().copied().chain(in_blocks(&before));
            mark(&mut bits, ops.filter(|&i| reads(i)), abi::ATOMIC_ACQUIRES);
        }
        if matches!(order, Release | AcquireRelease | SequentiallyConsistent) {
            let after = reached(block, ir::successors);
            let ops = here[at + 1..].iter().copied().chain(in_blocks(&after));
            mark(&mut bits, ops.filter(|&i| writes(i)), abi::ATOMIC_RELEASES);
        }
    }
    bits
}

/// `syncscope("singlethread")`: a signal fence.
fn single_thread(fence: InstructionValue<'_>) -> bool {
    // SAFETY: `fence` is a fence instruction, which the call takes.
    unsafe { LLVMIsAtomicSingleThread(fence.as_value_ref()) != 0 }
}

/// The blocks reached from `start` by one or more `next` steps (`start` itself only through a
/// cycle).
fn reached<'ctx>(
    start: BasicBlock<'ctx>,
    next: impl Fn(BasicBlock<'ctx>) -> Vec<BasicBlock<'ctx>>,
) -> HashSet<BasicBlock<'ctx>> {
    let mut seen = HashSet::new();
    let mut work = next(start);
    while let Some(b) = work.pop() {
        if seen.insert(b) {
            work.extend(next(b));
        }
    }
    seen
}

fn in_blocks<'a, 'ctx>(
    blocks: &'a HashSet<BasicBlock<'ctx>>,
) -> impl Iterator<Item = InstructionValue<'ctx>> + 'a {
    blocks.iter().flat_map(|&b| ir::instructions(b))
}

fn mark<'ctx>(
    bits: &mut HashMap<InstructionValue<'ctx>, u64>,
    ops: impl Iterator<Item = InstructionValue<'ctx>>,
    bit: u64,
) {
    for i in ops {
        *bits.entry(i).or_default() |= bit;
    }
}

/// An atomic operation that reads: a load, atomicrmw or cmpxchg.
fn reads(i: InstructionValue<'_>) -> bool {
    match i.get_opcode() {
        InstructionOpcode::Load => ir::is_atomic(i),
        InstructionOpcode::AtomicRMW | InstructionOpcode::AtomicCmpXchg => true,
        _ => false,
    }
}

/// An atomic operation that writes: a store, atomicrmw or cmpxchg.
fn writes(i: InstructionValue<'_>) -> bool {
    match i.get_opcode() {
        InstructionOpcode::Store => ir::is_atomic(i),
        InstructionOpcode::AtomicRMW | InstructionOpcode::AtomicCmpXchg => true,
        _ => false,
    }
}
