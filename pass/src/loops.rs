//! Wait loops: natural loops around `pthread_cond_wait`, and their enter/exit markers.
//!
//! Takes one function. [`find_wait_loops`] builds the CFG, its dominator tree
//! (`petgraph::algo::dominators::simple_fast`) and natural loops (back edge b→h where h dominates
//! b; body = h plus every block that reaches b without passing h) and gives, for each innermost
//! loop holding a call of `abi::COND_WAIT_CALLS`, a [`WaitLoop`]. [`insert_markers`] then puts
//! `__ilgen_wait_loop_enter(cond, site)` on every edge entering the header from outside and
//! `__ilgen_wait_loop_exit(cond, site)` on every edge leaving the body, splitting critical edges.
//!
//! Why: a condition wait is often never called because the predicate already held; the markers
//! still tell the analysis that this thread's progress depended on `cond`'s predicate, so it can
//! order the signal before the loop exit.
//!
//! The marked loop is the innermost one around the wait: an enclosing loop (a worker's main loop)
//! also contains the call but is not the loop that waits for the predicate.

use std::collections::{HashMap, HashSet};

use ilgen_trace::abi;
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode;
use petgraph::algo::dominators::simple_fast;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::calls;
use crate::ctx::Ctx;
use crate::glue;
use crate::hooks::{self, Hook, Hooks};
use crate::ir;

/// A natural loop: header and body (header included).
#[derive(Clone, Debug)]
pub struct NaturalLoop {
    pub header: LLVMBasicBlockRef,
    pub body: HashSet<LLVMBasicBlockRef>,
}

/// A loop around a condition wait, with what its markers need.
#[derive(Clone, Debug)]
pub struct WaitLoop {
    pub header: LLVMBasicBlockRef,
    pub body: HashSet<LLVMBasicBlockRef>,
    /// Blocks that dominate the header: values defined there are available on every edge.
    pub header_dominators: HashSet<LLVMBasicBlockRef>,
    /// The wait call's first argument (the condition variable).
    pub cond: LLVMValueRef,
    /// The wait call's debug location: the markers' sites are read from it later.
    pub dbg: LLVMMetadataRef,
}

/// The function's CFG as a petgraph graph, with the node of each block.
struct Cfg {
    graph: DiGraph<LLVMBasicBlockRef, ()>,
}

fn cfg(f: LLVMValueRef) -> Option<Cfg> {
    let blocks = ir::blocks(f);
    if blocks.is_empty() {
        return None;
    }
    let mut graph = DiGraph::new();
    let mut node = HashMap::new();
    for &b in &blocks {
        node.insert(b, graph.add_node(b));
    }
    for &b in &blocks {
        for s in ir::successors(b) {
            if let Some(&t) = node.get(&s) {
                graph.add_edge(node[&b], t, ());
            }
        }
    }
    Some(Cfg { graph })
}

/// Every natural loop of `f`, back edges to one header merged into one loop, plus each
/// header's dominator set.
pub fn natural_loops(f: LLVMValueRef) -> Vec<(NaturalLoop, HashSet<LLVMBasicBlockRef>)> {
    let Some(cfg) = cfg(f) else {
        return Vec::new();
    };
    // The entry block is the first block, node 0.
    let doms = simple_fast(&cfg.graph, NodeIndex::new(0));
    let mut by_header: HashMap<NodeIndex, Vec<NodeIndex>> = HashMap::new();
    for e in cfg.graph.edge_indices() {
        let Some((b, h)) = cfg.graph.edge_endpoints(e) else {
            continue;
        };
        // Unreachable blocks have no dominators and belong to no loop.
        let Some(mut b_doms) = doms.dominators(b) else {
            continue;
        };
        if b_doms.any(|d| d == h) {
            by_header.entry(h).or_default().push(b);
        }
    }
    let mut out = Vec::new();
    let mut headers: Vec<_> = by_header.keys().copied().collect();
    headers.sort(); // deterministic order, by block position
    for h in headers {
        let mut body = HashSet::from([h]);
        let mut stack = by_header[&h].clone();
        while let Some(n) = stack.pop() {
            if body.insert(n) {
                stack.extend(
                    cfg.graph
                        .neighbors_directed(n, petgraph::Direction::Incoming),
                );
            }
        }
        let header_doms = doms
            .dominators(h)
            .map(|ds| ds.map(|d| cfg.graph[d]).collect())
            .unwrap_or_default();
        let body = body.into_iter().map(|n| cfg.graph[n]).collect();
        out.push((
            NaturalLoop {
                header: cfg.graph[h],
                body,
            },
            header_doms,
        ));
    }
    out
}

/// The wait loops of `f`, one per innermost loop holding a condition wait. When one loop holds
/// several waits, the first (in block order) provides the condition variable.
pub fn find_wait_loops(f: LLVMValueRef) -> Vec<WaitLoop> {
    let waits: Vec<LLVMValueRef> = ir::blocks(f)
        .into_iter()
        .flat_map(ir::instructions)
        .filter(|&i| {
            calls::wrapped_callee(i).is_some_and(|n| abi::COND_WAIT_CALLS.contains(&n.as_str()))
        })
        .collect();
    if waits.is_empty() {
        return Vec::new();
    }
    let loops = natural_loops(f);
    let mut out: Vec<WaitLoop> = Vec::new();
    let mut taken: HashSet<LLVMBasicBlockRef> = HashSet::new();
    for w in waits {
        let block = ir::block_of(w);
        // A wait outside any loop (an `if`, a bug in the program) gets no markers.
        let Some((l, doms)) = loops
            .iter()
            .filter(|(l, _)| l.body.contains(&block))
            .min_by_key(|(l, _)| l.body.len())
        else {
            continue;
        };
        if !taken.insert(l.header) || ir::num_call_args(w) == 0 {
            continue;
        }
        out.push(WaitLoop {
            header: l.header,
            body: l.body.clone(),
            header_dominators: doms.clone(),
            cond: ir::operand(w, 0),
            dbg: hooks::debug_loc(w),
        });
    }
    out
}

/// What marker insertion needs: a builder and the hook declarations.
pub struct Markers {
    pub builder: LLVMBuilderRef,
    pub hooks: Hooks,
}

/// Gives every marker call of `f` that still has the null placeholder its site, from the
/// marker's debug location; returns how many it gave.
pub fn assign_marker_sites(ctx: &mut Ctx, f: LLVMValueRef) -> usize {
    let markers = [
        ctx.hooks.wait_loop_enter.func,
        ctx.hooks.wait_loop_exit.func,
    ];
    let mut n = 0;
    for i in ir::blocks(f).into_iter().flat_map(ir::instructions) {
        if ir::opcode(i) != Some(LLVMOpcode::LLVMCall)
            || !ir::direct_callee(i).is_some_and(|c| markers.contains(&c))
        {
            continue;
        }
        let site_arg = ir::operand(i, 1);
        // SAFETY: live value.
        if unsafe { LLVMIsNull(site_arg) } == 0 {
            continue;
        }
        let site = ctx.sites.add_for(i, &ctx.function_name(f));
        // SAFETY: live call; operand 1 is the site, a pointer like the new value.
        unsafe { LLVMSetOperand(i, 1, site) };
        n += 1;
    }
    n
}

/// Where a marker for one edge goes.
enum Place {
    /// Before the source block's terminator (single successor).
    BeforeTerminator(LLVMBasicBlockRef),
    /// Before this instruction, the first insertion point of the target (single predecessor edge).
    TargetStart(LLVMValueRef),
    /// In a new block on the split edge.
    NewBlock(LLVMBasicBlockRef),
}

/// Inserts the markers of every wait loop of `f`; returns how many it inserted. Each marker's
/// site argument is a null placeholder and its debug location the wait call's: the site is
/// assigned by [`assign_marker_sites`] in the pass that owns the site table, which may run much
/// later (clang inserts markers at the start of the pipeline, before loop rotation moves the
/// loop's first predicate test out of the loop, and instruments at its end).
pub fn insert_markers(m: &Markers, f: LLVMValueRef, loops: &mut [WaitLoop]) -> usize {
    let mut n = 0;
    for k in 0..loops.len() {
        // Edges as (terminator, successor index), gathered before any split.
        let mut edges: Vec<(LLVMValueRef, u32, LLVMBasicBlockRef, Hook)> = Vec::new();
        for b in ir::blocks(f) {
            let term = ir::terminator(b);
            if term.is_null() {
                continue;
            }
            let inside = loops[k].body.contains(&b);
            for (idx, s) in ir::successors(b).into_iter().enumerate() {
                if !inside && s == loops[k].header {
                    edges.push((term, idx as u32, s, m.hooks.wait_loop_enter));
                } else if inside && !loops[k].body.contains(&s) {
                    edges.push((term, idx as u32, s, m.hooks.wait_loop_exit));
                }
            }
        }
        for (term, idx, target, hook) in edges {
            // An earlier split with merged identical edges may already have moved this edge.
            // SAFETY: live terminator.
            if unsafe { LLVMGetSuccessor(term, idx) } != target {
                continue;
            }
            let Some(place) = place_for_edge(f, term, idx, target, loops) else {
                // Edges into EH pads cannot be split; such an exit (an exception thrown out of
                // the wait loop) goes unmarked.
                continue;
            };
            position(m.builder, &place);
            let cond = rematerialize_cond(m, &loops[k]);
            // SAFETY: live type.
            let site = unsafe { LLVMConstPointerNull(m.hooks.ptr_ty) };
            hooks::call(m.builder, hook, &mut [cond, site], loops[k].dbg);
            n += 1;
        }
    }
    n
}

/// Chooses where the marker of edge (term's block → successor idx) goes, splitting the edge if
/// it is critical. A new block joins every loop holding both ends of the edge.
fn place_for_edge(
    f: LLVMValueRef,
    term: LLVMValueRef,
    idx: u32,
    target: LLVMBasicBlockRef,
    loops: &mut [WaitLoop],
) -> Option<Place> {
    let source = ir::block_of(term);
    // SAFETY: live terminator.
    if unsafe { LLVMGetNumSuccessors(term) } == 1 {
        return Some(Place::BeforeTerminator(source));
    }
    let preds: usize = ir::blocks(f)
        .into_iter()
        .map(|b| {
            ir::successors(b)
                .into_iter()
                .filter(|&s| s == target)
                .count()
        })
        .sum();
    if preds == 1 {
        return first_insertion_point(target).map(Place::TargetStart);
    }
    let new = glue::split_critical_edge(term, idx)?;
    for l in loops.iter_mut() {
        if l.body.contains(&source) && l.body.contains(&target) {
            l.body.insert(new);
        }
    }
    Some(Place::NewBlock(new))
}

/// Positions `builder` at `place`.
fn position(builder: LLVMBuilderRef, place: &Place) {
    // SAFETY: live blocks; every block has a terminator.
    unsafe {
        match *place {
            Place::BeforeTerminator(b) | Place::NewBlock(b) => {
                LLVMPositionBuilderBefore(builder, ir::terminator(b));
            }
            Place::TargetStart(first) => LLVMPositionBuilderBefore(builder, first),
        }
    }
}

/// The first instruction of `b` after its PHIs and EH pad (`landingpad` and friends must stay
/// first), or `None` when the block has no such point (a lone `catchswitch`, an empty block).
fn first_insertion_point(b: LLVMBasicBlockRef) -> Option<LLVMValueRef> {
    let insts = ir::instructions(b);
    let mut k = 0;
    while k < insts.len() && ir::opcode(insts[k]) == Some(LLVMOpcode::LLVMPHI) {
        k += 1;
    }
    if k < insts.len()
        && matches!(
            ir::opcode(insts[k]),
            Some(
                LLVMOpcode::LLVMLandingPad | LLVMOpcode::LLVMCleanupPad | LLVMOpcode::LLVMCatchPad
            )
        )
    {
        k += 1;
    }
    let first = *insts.get(k)?;
    (ir::opcode(first) != Some(LLVMOpcode::LLVMCatchSwitch)).then_some(first)
}

/// The condition variable's address at the builder's position, or a null pointer when it cannot
/// be computed there.
fn rematerialize_cond(m: &Markers, l: &WaitLoop) -> LLVMValueRef {
    let mut memo = HashMap::new();
    let v = remat(m, l, l.cond, &mut memo, 0);
    // SAFETY: live types and values.
    unsafe {
        match v {
            Some(v) if LLVMTypeOf(v) == m.hooks.ptr_ty => v,
            _ => LLVMConstPointerNull(m.hooks.ptr_ty),
        }
    }
}

/// `v` at the builder's position: used directly when it is available on every path there (a
/// constant, an argument, an instruction in a block dominating the header), rebuilt by cloning
/// when it is a load, GEP or cast inside the loop (at -O0 clang recomputes `&q->cond` in the loop
/// from loads of stack slots). Anything else (a PHI, a call) gives `None`.
fn remat(
    m: &Markers,
    l: &WaitLoop,
    v: LLVMValueRef,
    memo: &mut HashMap<LLVMValueRef, LLVMValueRef>,
    depth: u32,
) -> Option<LLVMValueRef> {
    if ir::is_constant(v) || ir::is_argument(v) {
        return Some(v);
    }
    if !ir::is_instruction(v) || depth > 16 {
        return None;
    }
    let block = ir::block_of(v);
    if !l.body.contains(&block) {
        return l.header_dominators.contains(&block).then_some(v);
    }
    if let Some(&c) = memo.get(&v) {
        return Some(c);
    }
    let op = ir::opcode(v)?;
    let clonable =
        matches!(op, LLVMOpcode::LLVMLoad | LLVMOpcode::LLVMGetElementPtr) || is_cast(op);
    if !clonable {
        return None;
    }
    let mut operands = Vec::new();
    for i in 0..ir::num_operands(v) {
        operands.push(remat(m, l, ir::operand(v, i), memo, depth + 1)?);
    }
    // SAFETY: cloning a live instruction and giving it operands of the same types, then inserting
    // it at the builder's position (after the clones of its operands).
    unsafe {
        let c = LLVMInstructionClone(v);
        for (i, o) in operands.into_iter().enumerate() {
            LLVMSetOperand(c, i as u32, o);
        }
        LLVMInsertIntoBuilder(m.builder, c);
        // The clone is the marker's argument, not an access of the program.
        ir::mark_not_instrumented(c);
        memo.insert(v, c);
        Some(c)
    }
}

fn is_cast(op: LLVMOpcode) -> bool {
    use LLVMOpcode::*;
    matches!(
        op,
        LLVMTrunc
            | LLVMZExt
            | LLVMSExt
            | LLVMFPToUI
            | LLVMFPToSI
            | LLVMUIToFP
            | LLVMSIToFP
            | LLVMFPTrunc
            | LLVMFPExt
            | LLVMPtrToInt
            | LLVMIntToPtr
            | LLVMBitCast
            | LLVMAddrSpaceCast
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::with_module;

    fn function(m: LLVMModuleRef, name: &str) -> LLVMValueRef {
        ir::functions(m)
            .into_iter()
            .find(|&f| ir::name(f) == name)
            .unwrap()
    }

    fn names(set: &HashSet<LLVMBasicBlockRef>) -> Vec<String> {
        let mut v: Vec<String> = set
            .iter()
            .map(|&b| ir::name(unsafe { LLVMBasicBlockAsValue(b) }))
            .collect();
        v.sort();
        v
    }

    const NESTED: &str = r#"
@c = global [48 x i8] zeroinitializer
@m = global [40 x i8] zeroinitializer
declare i32 @pthread_cond_wait(ptr, ptr)

define void @f(i1 %a, i1 %b) {
entry:
  br label %outer
outer:
  br label %inner
inner:
  br i1 %a, label %wait, label %latch
wait:
  %w = call i32 @pthread_cond_wait(ptr @c, ptr @m)
  br label %inner
latch:
  br i1 %b, label %outer, label %exit
exit:
  ret void
dead:
  br label %dead
}
"#;

    #[test]
    fn natural_loops_nested_and_unreachable() {
        with_module(NESTED, |m| {
            let loops = natural_loops(function(m, "f"));
            let bodies: Vec<Vec<String>> = loops.iter().map(|(l, _)| names(&l.body)).collect();
            // The unreachable self-loop %dead is not a loop of the CFG from the entry.
            assert_eq!(
                bodies,
                vec![
                    vec!["inner", "latch", "outer", "wait"],
                    vec!["inner", "wait"],
                ]
            );
            let (_, doms) = &loops[1];
            assert_eq!(names(doms), vec!["entry", "inner", "outer"]);
        });
    }

    #[test]
    fn wait_loop_is_the_innermost_loop_around_the_wait() {
        with_module(NESTED, |m| {
            let w = find_wait_loops(function(m, "f"));
            assert_eq!(w.len(), 1);
            assert_eq!(names(&w[0].body), vec!["inner", "wait"]);
            assert_eq!(ir::name(w[0].cond), "c");
        });
    }

    #[test]
    fn wait_outside_a_loop_is_not_a_wait_loop() {
        let text = r#"
declare i32 @pthread_cond_wait(ptr, ptr)
define void @g(ptr %c, ptr %m) {
  %w = call i32 @pthread_cond_wait(ptr %c, ptr %m)
  ret void
}
"#;
        with_module(text, |m| {
            assert!(find_wait_loops(function(m, "g")).is_empty())
        });
    }
}
