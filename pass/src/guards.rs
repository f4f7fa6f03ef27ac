//! Branches that guard sync operations: `if (--working == 0) pthread_cond_signal(...)`.
//!
//! Takes one function; gives its conditional branches and switches whose controlled region (the
//! blocks reached from one of its successors before the paths meet again at the branch's
//! immediate post-dominator) calls a sync operation, directly or through a function of this
//! module that calls one. A branch that leaves a loop is no guard: it is the loop's test.
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
use inkwell::values::{FunctionValue, InstructionOpcode, InstructionValue};
use petgraph::algo::dominators::simple_fast;
use petgraph::graph::NodeIndex;
use petgraph::visit::Reversed;

use crate::calls;
use crate::ir;
use crate::loops;

/// Functions larger than this are left alone: the regions cost a walk per branch.
const MAX_BLOCKS: usize = 4000;

/// Whether `i` calls a sync operation, or a function of this module that calls one itself.
fn calls_sync(i: InstructionValue<'_>) -> bool {
    let direct = |i: InstructionValue<'_>| {
        calls::wrapped_callee(i).is_some_and(|n| abi::WRAPPED_CALLS.contains(&n.as_str()))
    };
    if direct(i) {
        return true;
    }
    ir::direct_callee(i)
        .filter(|&f| !ir::is_declaration(f))
        .is_some_and(|f| ir::all_instructions(f).into_iter().any(direct))
}

/// The branches of `f` whose controlled region calls a sync operation.
pub fn sync_guards(f: FunctionValue<'_>) -> HashSet<InstructionValue<'_>> {
    let mut out = HashSet::new();
    let Some(cfg) = loops::cfg(f) else {
        return out;
    };
    let graph = &cfg.graph;
    let n = graph.node_count();
    if n > MAX_BLOCKS {
        return out;
    }
    let syncing: HashSet<NodeIndex> = graph
        .node_indices()
        .filter(|&b| ir::instructions(graph[b]).into_iter().any(calls_sync))
        .collect();
    if syncing.is_empty() {
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
    // `loops::waiting_loops`, not for the sync operations it happens to contain.
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
        let mut stack: Vec<NodeIndex> = graph.neighbors(b).collect();
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            if syncing.contains(&x) {
                out.insert(term);
                break;
            }
            stack.extend(graph.neighbors(x));
        }
    }
    out
}
