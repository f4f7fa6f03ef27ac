//! Branches that guard sync operations (`if (--working == 0) pthread_cond_signal(...)`) or
//! choose what their function returns (`if (!buf->finished) return OK;`).
//!
//! Takes one function; gives its conditional branches and switches whose controlled region (the
//! blocks reached from one of its successors before the paths meet again at the branch's
//! immediate post-dominator) calls a sync operation, directly or through a function of this
//! module that calls one ([`sync_guards`]); and those whose region chooses between returned
//! values ([`return_guards`]). A branch that leaves a loop is neither: it is the loop's test.
//!
//! Why: a predicted schedule is a list of sync operations per thread. A read whose value decides
//! whether a thread signals, posts or unlocks decides that list; a schedule that changes what it
//! saw asks the thread for an operation it will not do, and the replay diverges before the race.
//! Such reads are loop-like predicates for the analysis ([`crate::predicates::of`]).
//!
//! Post-dominators come from `petgraph`'s dominators on the reversed CFG with one virtual exit
//! after every block without successors; a branch whose block cannot reach an exit (inside an
//! endless loop) has none, and its region is then what its successors reach without coming back
//! to it.

use std::collections::HashSet;

use ilgen_trace::abi;
use inkwell::basic_block::BasicBlock;
use inkwell::values::{
    BasicValue, BasicValueEnum, FunctionValue, InstructionOpcode, InstructionValue, PhiValue,
};
use petgraph::algo::dominators::simple_fast;
use petgraph::graph::NodeIndex;
use petgraph::visit::Reversed;

use crate::calls;
use crate::ir;
use crate::loops;

/// Functions larger than this are left alone: the regions cost a walk per branch.
const MAX_BLOCKS: usize = 4000;

/// Whether `i` calls a sync operation (a pthread call, or a libstdc++ member that makes one), or
/// a function of this module that calls one itself.
fn calls_sync(i: InstructionValue<'_>) -> bool {
    let direct = |i: InstructionValue<'_>| {
        calls::wrapped_callee(i).is_some_and(|n| abi::WRAPPED_CALLS.contains(&n.as_str()))
            || calls::library_callee(i).is_some_and(|n| abi::CXX_SYNC_CALLS.contains(&n.as_str()))
    };
    if direct(i) {
        return true;
    }
    ir::direct_callee(i)
        .filter(|&f| !ir::is_declaration(f))
        .is_some_and(|f| ir::all_instructions(f).into_iter().any(direct))
}

/// The conditional branches (and switches) of `f` that do not leave a loop and whose controlled
/// region `chosen` accepts: the blocks the branch's successors reach before the paths meet again
/// at its immediate post-dominator (not in the region, nor is the branch's own block). None when
/// `f` has too many blocks.
fn branches_whose_region<'ctx>(
    f: FunctionValue<'ctx>,
    chosen: impl Fn(InstructionValue<'ctx>, &HashSet<BasicBlock<'ctx>>) -> bool,
) -> HashSet<InstructionValue<'ctx>> {
    let mut out = HashSet::new();
    let Some(cfg) = loops::cfg(f) else {
        return out;
    };
    let graph = &cfg.graph;
    let n = graph.node_count();
    if n > MAX_BLOCKS {
        return out;
    }
    // Post-dominators: a copy of the CFG with a virtual exit, walked backwards from it.
    let mut with_exit = graph.clone();
    let exit = with_exit.add_node(graph[NodeIndex::new(0)]);
    for b in graph.node_indices() {
        if graph.neighbors(b).next().is_none() {
            with_exit.add_edge(b, exit, ());
        }
    }
    let post = simple_fast(Reversed(&with_exit), exit);
    // A loop's exit test guards the whole loop body; whether the loop's reads decide is for
    // `loops::waiting_loops`, not for what the loop happens to contain.
    let loops = loops::natural_loops(f);
    let exits_a_loop = |b: BasicBlock<'_>| {
        loops.iter().any(|(l, _)| {
            l.body.contains(&b) && ir::successors(b).iter().any(|s| !l.body.contains(s))
        })
    };
    for b in graph.node_indices() {
        let Some(term) = graph[b].get_terminator() else {
            continue;
        };
        let conditional = match term.get_opcode() {
            InstructionOpcode::Br => term.get_num_operands() == 3,
            InstructionOpcode::Switch => true,
            _ => false,
        };
        if !conditional || exits_a_loop(graph[b]) {
            continue;
        }
        let meet = post.immediate_dominator(b).unwrap_or(b);
        let mut seen = HashSet::from([b, meet]);
        let mut blocks = HashSet::new();
        let mut stack: Vec<NodeIndex> = graph.neighbors(b).collect();
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            blocks.insert(graph[x]);
            stack.extend(graph.neighbors(x));
        }
        if chosen(term, &blocks) {
            out.insert(term);
        }
    }
    out
}

/// The branches of `f` whose controlled region calls a sync operation.
pub fn sync_guards(f: FunctionValue<'_>) -> HashSet<InstructionValue<'_>> {
    let calls_sync_in = |b: &BasicBlock<'_>| ir::instructions(*b).into_iter().any(calls_sync);
    if !f.get_basic_blocks().iter().any(calls_sync_in) {
        return HashSet::new();
    }
    branches_whose_region(f, |_, blocks| blocks.iter().any(calls_sync_in))
}

/// The branches of `f` that choose what it returns: `if (!buf->finished) return OK;` before the
/// code that returns the buffer's end. A caller in another translation unit may wait for that
/// value, so the reads deciding such a branch decide what the caller does
/// ([`crate::predicates::of`] gives them as deciding).
///
/// A branch chooses the returned value when the values given in its region or its own block are
/// not all one: two `ret`s of different values in the region, two different values of a `phi`
/// that feeds a `ret` (coming from the region, or straight from the branch), or two different
/// values stored to the stack slot that `-O0` returns from. A value set in an earlier block
/// against another set in the region is not seen: the rule stays narrow, since every read it
/// flags keeps its writer.
pub fn return_guards(f: FunctionValue<'_>) -> HashSet<InstructionValue<'_>> {
    let choices = returned_choices(f);
    if choices.len() < 2 {
        return HashSet::new();
    }
    branches_whose_region(f, |branch, blocks| {
        let own = branch.get_parent();
        let mut values = choices
            .iter()
            .filter(|(_, b)| blocks.contains(b) || Some(*b) == own)
            .map(|&(v, _)| v);
        values
            .next()
            .is_some_and(|first| values.any(|v| v != first))
    })
}

/// Where `f`'s returned value is chosen: each value a `ret`, a `phi` feeding one (through other
/// `phi`s), or a store to the returned stack slot gives, with the block that gives it (a `phi`'s
/// incoming block).
fn returned_choices(f: FunctionValue<'_>) -> Vec<(BasicValueEnum<'_>, BasicBlock<'_>)> {
    let mut out = Vec::new();
    let mut phis = Vec::new();
    for i in ir::all_instructions(f) {
        if i.get_opcode() != InstructionOpcode::Return {
            continue;
        }
        let (Some(v), Some(block)) = (ir::operand(i, 0), i.get_parent()) else {
            continue;
        };
        out.push((v, block));
        phis.extend(v.as_instruction_value());
    }
    let mut seen = HashSet::new();
    while let Some(v) = phis.pop() {
        if !seen.insert(v) {
            continue;
        }
        match v.get_opcode() {
            InstructionOpcode::Phi => {
                let Ok(phi) = PhiValue::try_from(v) else {
                    continue;
                };
                for (x, block) in phi.get_incomings() {
                    out.push((x, block));
                    phis.extend(x.as_instruction_value());
                }
            }
            // `-O0` returns a reload of the slot every `return` stored to.
            InstructionOpcode::Load => {
                let Some(slot) = ir::operand(v, 0)
                    .and_then(|p| p.as_instruction_value())
                    .filter(|s| s.get_opcode() == InstructionOpcode::Alloca)
                else {
                    continue;
                };
                for (user, idx) in ir::uses(slot).unwrap_or_default() {
                    if user.get_opcode() != InstructionOpcode::Store || idx != 1 {
                        continue;
                    }
                    if let (Some(x), Some(block)) = (ir::operand(user, 0), user.get_parent()) {
                        out.push((x, block));
                    }
                }
            }
            _ => {}
        }
    }
    out
}
