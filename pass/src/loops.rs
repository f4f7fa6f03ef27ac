//! Wait loops: natural loops around `pthread_cond_wait`, and their enter/exit markers.
//!
//! Takes one function. [`find_wait_loops`] builds the CFG, its dominator tree
//! (`petgraph::algo::dominators::simple_fast`) and natural loops (back edge b→h where h dominates
//! b; body = h plus every block that reaches b without passing h) and gives, for each innermost
//! loop holding a condition wait, a [`WaitLoop`]. A condition wait is a call of
//! `abi::COND_WAIT_CALLS`, or of a wait helper: a function of this module that passes one of its
//! parameters to a condition wait outside any loop of its own, as xz's `mythread_cond_timedwait`
//! does (see [`waited_arg`]). [`insert_markers`] then puts
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
use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::ContextRef;
use inkwell::debug_info::DILocation;
use inkwell::values::{
    AnyValue, BasicValue, BasicValueEnum, FunctionValue, InstructionOpcode, InstructionValue,
    PointerValue,
};
use petgraph::algo::dominators::simple_fast;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::calls;
use crate::ctx::Ctx;
use crate::glue;
use crate::hooks::{self, Hook, Hooks};
use crate::ir;

/// A natural loop: header and body (header included).
#[derive(Clone, Debug)]
pub struct NaturalLoop<'ctx> {
    pub header: BasicBlock<'ctx>,
    pub body: HashSet<BasicBlock<'ctx>>,
}

/// A loop around a condition wait, with what its markers need.
#[derive(Clone, Debug)]
pub struct WaitLoop<'ctx> {
    pub header: BasicBlock<'ctx>,
    pub body: HashSet<BasicBlock<'ctx>>,
    /// Blocks that dominate the header: values defined there are available on every edge.
    pub header_dominators: HashSet<BasicBlock<'ctx>>,
    /// The wait call's condition variable argument (the first, or the one a helper waits on).
    pub cond: BasicValueEnum<'ctx>,
    /// The wait call's debug location (the helper call's): the markers' sites are read from it.
    pub dbg: Option<DILocation<'ctx>>,
}

/// The function's CFG as a petgraph graph; node `k` is the function's block `k`, so the entry
/// block is node 0.
pub(crate) struct Cfg<'ctx> {
    pub(crate) graph: DiGraph<BasicBlock<'ctx>, ()>,
}

pub(crate) fn cfg(f: FunctionValue<'_>) -> Option<Cfg<'_>> {
    let blocks = f.get_basic_blocks();
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

/// A natural loop with its header's dominator set.
type LoopWithDominators<'ctx> = (NaturalLoop<'ctx>, HashSet<BasicBlock<'ctx>>);

/// Every natural loop of `f`, back edges to one header merged into one loop, plus each
/// header's dominator set.
pub fn natural_loops(f: FunctionValue<'_>) -> Vec<LoopWithDominators<'_>> {
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
pub fn find_wait_loops(f: FunctionValue<'_>) -> Vec<WaitLoop<'_>> {
    let loops = natural_loops(f);
    // A wait outside any loop (an `if`, a bug in the program) gets no markers; only calls inside
    // loops are worth looking into as helpers.
    let looping: HashSet<BasicBlock<'_>> = loops
        .iter()
        .flat_map(|(l, _)| l.body.iter().copied())
        .collect();
    let mut helpers = HashMap::new();
    let waits: Vec<(InstructionValue<'_>, u32)> = ir::all_instructions(f)
        .into_iter()
        .filter(|i| i.get_parent().is_some_and(|b| looping.contains(&b)))
        .filter_map(|i| Some((i, waited_arg(i, HELPER_DEPTH, &mut helpers)?)))
        .collect();
    let mut out: Vec<WaitLoop<'_>> = Vec::new();
    let mut taken: HashSet<BasicBlock<'_>> = HashSet::new();
    for (w, arg) in waits {
        let Some(block) = w.get_parent() else {
            continue;
        };
        let Some((l, doms)) = loops
            .iter()
            .filter(|(l, _)| l.body.contains(&block))
            .min_by_key(|(l, _)| l.body.len())
        else {
            continue;
        };
        if !taken.insert(l.header) {
            continue;
        }
        let Some(cond) = ir::operand(w, arg) else {
            continue;
        };
        out.push(WaitLoop {
            header: l.header,
            body: l.body.clone(),
            header_dominators: doms.clone(),
            cond,
            dbg: w.get_debug_location(),
        });
    }
    out
}

/// How deep a chain of wait helpers may go: a helper calling a condition wait (`depth` 1), or a
/// helper calling such a helper (2).
const HELPER_DEPTH: u32 = 2;

/// Which helpers (with the depth they were looked into at) wait on which parameter.
type Helpers<'ctx> = HashMap<(FunctionValue<'ctx>, u32), Option<u32>>;

/// The index of the argument of `call` that is the condition variable it waits on: 0 for a call
/// of `abi::COND_WAIT_CALLS` (or of its runtime wrapper, which a function instrumented earlier
/// in the module calls by then) and of `abi::CXX_COND_WAIT` (its `this`), or the parameter a wait helper at most `depth` helpers deep
/// waits on ([`helper_cond_param`]).
fn waited_arg<'ctx>(
    call: InstructionValue<'ctx>,
    depth: u32,
    helpers: &mut Helpers<'ctx>,
) -> Option<u32> {
    let callee = ir::direct_callee(call)?;
    let arg = if let Some(name) = calls::library_callee(call) {
        let pthread = abi::COND_WAIT_CALLS
            .iter()
            .any(|w| name == *w || name == abi::wrapper_name(w));
        (pthread || name == abi::CXX_COND_WAIT).then_some(0)?
    } else if depth == 0 || ir::is_declaration(callee) {
        return None;
    } else if let Some(&known) = helpers.get(&(callee, depth)) {
        known?
    } else {
        let param = helper_cond_param(callee, depth, helpers);
        helpers.insert((callee, depth), param);
        param?
    };
    (arg < ir::num_call_args(call)).then_some(arg)
}

/// The parameter `helper` waits on, when it is a wait helper: its every condition wait (at most
/// `depth - 1` helpers further down) waits on that one parameter, and none is in a loop of its
/// own. A helper looping around its wait has its own wait loop, and a caller's loop around it is
/// an enclosing loop (a worker's main loop around `queue_pop`); a helper waiting on a condition
/// it does not take as parameter gives its callers nothing to name in their markers.
fn helper_cond_param<'ctx>(
    helper: FunctionValue<'ctx>,
    depth: u32,
    helpers: &mut Helpers<'ctx>,
) -> Option<u32> {
    let mut param = None;
    let mut blocks = HashSet::new();
    for i in ir::all_instructions(helper) {
        let Some(arg) = waited_arg(i, depth - 1, helpers) else {
            continue;
        };
        let p = parameter_index(helper, ir::operand(i, arg)?)?;
        if param.is_some_and(|q| q != p) {
            return None;
        }
        param = Some(p);
        blocks.extend(i.get_parent());
    }
    let param = param?;
    let looping = natural_loops(helper)
        .iter()
        .any(|(l, _)| blocks.iter().any(|b| l.body.contains(b)));
    (!looping).then_some(param)
}

/// The index of `f`'s parameter whose address `v` is: the parameter itself, or a load of the
/// stack slot the parameter alone was stored to (the markers are placed before `mem2reg`, even at
/// -O2), maybe through a zero-offset GEP (xz's `&cond->cond`, the first field).
fn parameter_index(f: FunctionValue<'_>, v: BasicValueEnum<'_>) -> Option<u32> {
    let v = same_address(v);
    let value = match v.as_instruction_value() {
        Some(load) if load.get_opcode() == InstructionOpcode::Load => {
            let slot = ir::operand(load, 0)?
                .as_instruction_value()
                .filter(|s| s.get_opcode() == InstructionOpcode::Alloca)?;
            let mut stored = None;
            for (user, idx) in ir::uses(slot)? {
                match user.get_opcode() {
                    InstructionOpcode::Load => {}
                    // The slot as the stored-to address (operand 1), once.
                    InstructionOpcode::Store if idx == 1 && stored.is_none() => {
                        stored = ir::operand(user, 0);
                    }
                    _ => return None,
                }
            }
            stored?
        }
        _ => v,
    };
    let value = same_address(value);
    let index = f.get_param_iter().position(|p| p == value)?;
    u32::try_from(index).ok()
}

/// The pointer `v` is the same address as, through bitcasts and GEPs whose indices are all zero.
fn same_address(mut v: BasicValueEnum<'_>) -> BasicValueEnum<'_> {
    while let Some(i) = v.as_instruction_value() {
        let zero_gep = i.get_opcode() == InstructionOpcode::GetElementPtr
            && (1..i.get_num_operands()).all(|k| {
                matches!(ir::operand(i, k), Some(BasicValueEnum::IntValue(n))
                    if n.get_zero_extended_constant() == Some(0))
            });
        if !zero_gep && i.get_opcode() != InstructionOpcode::BitCast {
            break;
        }
        let Some(base) = ir::operand(i, 0) else {
            break;
        };
        v = base;
    }
    v
}

/// Calls that only pass time: a loop that makes them waits for something.
const YIELD_CALLS: &[&str] = &[
    "sched_yield",
    "pthread_yield",
    "thrd_yield",
    "sleep",
    "usleep",
    "nanosleep",
    "clock_nanosleep",
    "thrd_sleep",
];

/// The locks around a polled predicate.
const LOCK_CALLS: &[&str] = &[
    "pthread_mutex_lock",
    "pthread_mutex_trylock",
    "pthread_mutex_unlock",
    "pthread_spin_lock",
    "pthread_spin_trylock",
    "pthread_spin_unlock",
];

/// How a waiting loop waits, which decides where the recorder sees its reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waits {
    /// Around a condition wait, or polling under a lock: each round is a segment of its own,
    /// whose first read of the condition is the one the recorder keeps.
    Synced,
    /// With no sync operation inside (a spin, or a loop that only yields or sleeps): every round
    /// is in one segment, and the recorder keeps the first round's read, not the one that left.
    Spins,
}

/// The bodies of `f`'s loops that wait for another thread, with how each waits: each wait loop
/// ([`find_wait_loops`]), and each innermost spin or polling loop ([`polls`]), inner loops that
/// only pass time not counted.
pub fn waiting_loops(f: FunctionValue<'_>) -> Vec<(HashSet<BasicBlock<'_>>, Waits)> {
    let loops: Vec<NaturalLoop<'_>> = natural_loops(f).into_iter().map(|(l, _)| l).collect();
    let mut out: Vec<_> = find_wait_loops(f)
        .into_iter()
        .map(|w| (w.body, Waits::Synced))
        .collect();
    for l in &loops {
        // An inner loop that only passes time (C++'s `sleep_for` inlined: `nanosleep` retried
        // while it fails with EINTR) is part of the wait, not work of the loop around it.
        let innermost = loops.iter().all(|m| {
            m.header == l.header || !l.body.contains(&m.header) || only_passes_time(&m.body)
        });
        if innermost && !out.iter().any(|(body, _)| *body == l.body) {
            if let Some(waits) = polls(&l.body) {
                out.push((l.body.clone(), waits));
            }
        }
    }
    out
}

/// The branch before loop `body` that decides whether the loop is entered at all, when there is
/// one: loop rotation (clang at -O1 and up) turns `while (c) wait();` into `if (c) do wait();
/// while (c);`, so the thread's first test of the condition is a copy outside the loop. It is the
/// conditional branch of the block that leads to the loop's one header, directly or through
/// blocks with one way in and one way out (a preheader).
pub fn entry_test<'ctx>(
    f: FunctionValue<'ctx>,
    body: &HashSet<BasicBlock<'ctx>>,
) -> Option<InstructionValue<'ctx>> {
    let mut preds: HashMap<BasicBlock<'ctx>, Vec<BasicBlock<'ctx>>> = HashMap::new();
    for b in f.get_basic_blocks() {
        for s in ir::successors(b) {
            preds.entry(s).or_default().push(b);
        }
    }
    let outside = |b: &BasicBlock<'ctx>| -> Vec<BasicBlock<'ctx>> {
        preds
            .get(b)
            .map(|ps| ps.iter().copied().filter(|p| !body.contains(p)).collect())
            .unwrap_or_default()
    };
    let mut entries = body.iter().filter_map(|h| match outside(h)[..] {
        [] => None,
        [p] => Some(Some(p)),
        _ => Some(None),
    });
    let (Some(Some(mut at)), None) = (entries.next(), entries.next()) else {
        return None;
    };
    // A few preheader-like blocks at most: further up is the loop's context, not its test.
    for _ in 0..4 {
        let term = at.get_terminator()?;
        if term.get_opcode() == InstructionOpcode::Br && term.get_num_operands() == 3 {
            return Some(term);
        }
        match (ir::successors(at).len(), &preds.get(&at).map(Vec::as_slice)) {
            (1, Some([p])) => at = *p,
            _ => return None,
        }
    }
    None
}

/// Calls that read no shared state and change none: where `errno` is (the EINTR check of a
/// sleep's retry loop).
const HARMLESS_CALLS: &[&str] = &["__errno_location"];

/// The calls of loop `body` other than intrinsics and runtime hooks, by callee name; `None` if
/// one of them is indirect.
fn called_names(body: &HashSet<BasicBlock<'_>>) -> Option<Vec<String>> {
    let mut names = Vec::new();
    for i in body.iter().flat_map(|&b| ir::instructions(b)) {
        if !matches!(
            i.get_opcode(),
            InstructionOpcode::Call | InstructionOpcode::Invoke
        ) {
            continue;
        }
        let name = ir::direct_callee(i).map(ir::function_name)?;
        if !name.starts_with("llvm.")
            && !name.starts_with(abi::RUNTIME_PREFIX)
            && !HARMLESS_CALLS.contains(&name.as_str())
        {
            names.push(name);
        }
    }
    Some(names)
}

/// Whether loop `body` does nothing but pass time: it calls [`YIELD_CALLS`] and nothing else.
fn only_passes_time(body: &HashSet<BasicBlock<'_>>) -> bool {
    called_names(body).is_some_and(|names| {
        !names.is_empty() && names.iter().all(|n| YIELD_CALLS.contains(&n.as_str()))
    })
}

/// Whether loop `body` spins or polls, and how: it calls nothing but intrinsics and runtime hooks
/// (a spin loop), or passes time ([`YIELD_CALLS`]) and otherwise takes only [`LOCK_CALLS`] (a
/// polling loop, synced when it locks). A loop that locks without ever yielding walks shared data
/// under the lock (a bounded pass over a journal); its reads are data, and any other call may do
/// the thread's work.
fn polls(body: &HashSet<BasicBlock<'_>>) -> Option<Waits> {
    let mut yields = false;
    let mut locks = false;
    for name in called_names(body)? {
        if YIELD_CALLS.contains(&name.as_str()) {
            yields = true;
        } else if LOCK_CALLS.contains(&name.as_str()) {
            locks = true;
        } else {
            return None;
        }
    }
    match (yields, locks) {
        (_, false) => Some(Waits::Spins),
        (true, true) => Some(Waits::Synced),
        (false, true) => None,
    }
}

/// What marker insertion needs: a builder, the hook declarations, and the context the
/// not-instrumented tag lives in.
pub struct Markers<'ctx> {
    pub builder: Builder<'ctx>,
    pub hooks: Hooks<'ctx>,
    pub context: ContextRef<'ctx>,
}

/// Gives every marker call of `f` (wait loops, the atomic blocks of [`crate::atomic`] and of
/// `ILGEN_ATOMIC_BEGIN/END()`, and the calls of [`crate::call_markers`], whose sites are flagged
/// as calls') that still has the null placeholder its site, from the marker's debug location;
/// returns how many it gave.
pub fn assign_marker_sites<'ctx>(ctx: &mut Ctx<'_, 'ctx>, f: FunctionValue<'ctx>) -> usize {
    let calls = [ctx.hooks.call_enter.func, ctx.hooks.call_leave.func];
    let markers = [
        ctx.hooks.wait_loop_enter.func,
        ctx.hooks.wait_loop_exit.func,
        ctx.hooks.tx_begin.func,
        ctx.hooks.tx_end.func,
        calls[0],
        calls[1],
    ];
    let mut n = 0;
    for i in ir::all_instructions(f) {
        if i.get_opcode() != InstructionOpcode::Call
            || !ir::direct_callee(i).is_some_and(|c| markers.contains(&c))
        {
            continue;
        }
        // The site is every marker's last argument.
        let last = ir::num_call_args(i).saturating_sub(1);
        if !matches!(ir::operand(i, last), Some(BasicValueEnum::PointerValue(p)) if p.is_null()) {
            continue;
        }
        let call = ir::direct_callee(i).is_some_and(|c| calls.contains(&c));
        let site = ctx.sites.add_marker(i, &ir::function_name(f), call);
        // The site operand is a pointer like the new value.
        i.set_operand(last, site);
        n += 1;
    }
    n
}

/// Inserts the markers of every wait loop of `f`; returns how many it inserted. Each marker's
/// site argument is a null placeholder and its debug location the wait call's: the site is
/// assigned by [`assign_marker_sites`] in the pass that owns the site table, which may run much
/// later (clang inserts markers at the start of the pipeline, before loop rotation moves the
/// loop's first predicate test out of the loop, and instruments at its end).
pub fn insert_markers<'ctx>(
    m: &Markers<'ctx>,
    f: FunctionValue<'ctx>,
    loops: &mut [WaitLoop<'ctx>],
) -> Result<usize, BuilderError> {
    let mut n = 0;
    for k in 0..loops.len() {
        // Edges as (terminator, successor index), gathered before any split.
        let mut edges: Vec<(InstructionValue<'ctx>, u32, BasicBlock<'ctx>, Hook<'ctx>)> =
            Vec::new();
        for b in f.get_basic_blocks() {
            let Some(term) = b.get_terminator() else {
                continue;
            };
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
            if ir::successor(term, idx) != Some(target) {
                continue;
            }
            let Some(before) = place_for_edge(f, term, idx, target, loops) else {
                // Edges into EH pads cannot be split; such an exit (an exception thrown out of
                // the wait loop) goes unmarked.
                continue;
            };
            m.builder.position_before(&before);
            let cond = rematerialize_cond(m, &loops[k]);
            let site = m.hooks.ptr_ty.const_null();
            hooks::call(&m.builder, hook, &[cond.into(), site.into()], loops[k].dbg)?;
            n += 1;
        }
    }
    Ok(n)
}

/// The instruction before which the marker of edge (term's block → successor idx) goes: the
/// source's terminator (single successor), the target's first insertion point (single
/// predecessor edge), or the terminator of a new block on the split edge. A new block joins
/// every loop holding both ends of the edge.
fn place_for_edge<'ctx>(
    f: FunctionValue<'ctx>,
    term: InstructionValue<'ctx>,
    idx: u32,
    target: BasicBlock<'ctx>,
    loops: &mut [WaitLoop<'ctx>],
) -> Option<InstructionValue<'ctx>> {
    let source = term.get_parent()?;
    if ir::num_successors(term) == 1 {
        return Some(term);
    }
    let preds: usize = f
        .get_basic_block_iter()
        .map(|b| {
            ir::successors(b)
                .into_iter()
                .filter(|&s| s == target)
                .count()
        })
        .sum();
    if preds == 1 {
        return first_insertion_point(target);
    }
    let new = glue::split_critical_edge(term, idx)?;
    for l in loops.iter_mut() {
        if l.body.contains(&source) && l.body.contains(&target) {
            l.body.insert(new);
        }
    }
    new.get_terminator()
}

/// The first instruction of `b` after its PHIs and EH pad (`landingpad` and friends must stay
/// first), or `None` when the block has no such point (a lone `catchswitch`, an empty block).
fn first_insertion_point(b: BasicBlock<'_>) -> Option<InstructionValue<'_>> {
    let insts = ir::instructions(b);
    let mut k = 0;
    while k < insts.len() && insts[k].get_opcode() == InstructionOpcode::Phi {
        k += 1;
    }
    if k < insts.len()
        && matches!(
            insts[k].get_opcode(),
            InstructionOpcode::LandingPad
                | InstructionOpcode::CleanupPad
                | InstructionOpcode::CatchPad
        )
    {
        k += 1;
    }
    let first = *insts.get(k)?;
    (first.get_opcode() != InstructionOpcode::CatchSwitch).then_some(first)
}

/// The condition variable's address at the builder's position, or a null pointer when it cannot
/// be computed there.
fn rematerialize_cond<'ctx>(m: &Markers<'ctx>, l: &WaitLoop<'ctx>) -> PointerValue<'ctx> {
    let mut memo = HashMap::new();
    match remat(m, l, l.cond, &mut memo, 0) {
        Some(BasicValueEnum::PointerValue(p)) if p.get_type() == m.hooks.ptr_ty => p,
        _ => m.hooks.ptr_ty.const_null(),
    }
}

/// `v` at the builder's position: used directly when it is available on every path there (a
/// constant, an argument, an instruction in a block dominating the header), rebuilt by cloning
/// when it is a load, GEP or cast inside the loop (at -O0 clang recomputes `&q->cond` in the loop
/// from loads of stack slots). Anything else (a PHI, a call) gives `None`.
fn remat<'ctx>(
    m: &Markers<'ctx>,
    l: &WaitLoop<'ctx>,
    v: BasicValueEnum<'ctx>,
    memo: &mut HashMap<InstructionValue<'ctx>, BasicValueEnum<'ctx>>,
    depth: u32,
) -> Option<BasicValueEnum<'ctx>> {
    if v.is_const() || ir::is_argument(v) {
        return Some(v);
    }
    let inst = v.as_instruction_value()?;
    if depth > 16 {
        return None;
    }
    let block = inst.get_parent()?;
    if !l.body.contains(&block) {
        return l.header_dominators.contains(&block).then_some(v);
    }
    if let Some(&c) = memo.get(&inst) {
        return Some(c);
    }
    let op = inst.get_opcode();
    let clonable = matches!(
        op,
        InstructionOpcode::Load | InstructionOpcode::GetElementPtr
    ) || is_cast(op);
    if !clonable {
        return None;
    }
    let operands = (0..inst.get_num_operands())
        .map(|i| ir::operand(inst, i).and_then(|o| remat(m, l, o, memo, depth + 1)))
        .collect::<Option<Vec<_>>>()?;
    // The clone gets operands of the same types, and goes in at the builder's position, after the
    // clones of its operands.
    let c = inst.explicit_clone();
    for (i, o) in operands.into_iter().enumerate() {
        c.set_operand(i as u32, o);
    }
    m.builder.insert_instruction(&c, None);
    // The clone is the marker's argument, not an access of the program.
    ir::mark_not_instrumented(&m.context, c);
    let value = BasicValueEnum::try_from(c.as_any_value_enum()).ok()?;
    memo.insert(inst, value);
    Some(value)
}

fn is_cast(op: InstructionOpcode) -> bool {
    use InstructionOpcode::*;
    matches!(
        op,
        Trunc
            | ZExt
            | SExt
            | FPToUI
            | FPToSI
            | UIToFP
            | SIToFP
            | FPTrunc
            | FPExt
            | PtrToInt
            | IntToPtr
            | BitCast
            | AddrSpaceCast
    )
}

#[cfg(test)]
mod tests {
    use inkwell::module::Module;

    use super::*;
    use crate::testing::with_module;

    fn function<'ctx>(m: &Module<'ctx>, name: &str) -> FunctionValue<'ctx> {
        m.get_function(name).unwrap()
    }

    fn names(set: &HashSet<BasicBlock<'_>>) -> Vec<String> {
        let mut v: Vec<String> = set
            .iter()
            .map(|b| b.get_name().to_string_lossy().into_owned())
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
            assert_eq!(w[0].cond.get_name().to_str(), Ok("c"));
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

    const HELPERS: &str = r#"
@g = global [48 x i8] zeroinitializer
@m = global [40 x i8] zeroinitializer
declare i32 @pthread_cond_timedwait(ptr, ptr, ptr)
declare i32 @pthread_cond_wait(ptr, ptr)
declare i32 @external_wait(ptr, ptr)

; xz's mythread_cond_timedwait at -O0: the condition is the first field of the parameter that
; comes back from its stack slot.
define internal i32 @timed(ptr %m, ptr %c, ptr %t) {
  %c.addr = alloca ptr
  store ptr %c, ptr %c.addr
  %c1 = load ptr, ptr %c.addr
  %cc = getelementptr inbounds { [48 x i8], i32 }, ptr %c1, i32 0, i32 0
  %r = call i32 @pthread_cond_timedwait(ptr %cc, ptr %m, ptr %t)
  ret i32 %r
}
; Two helpers deep.
define internal i32 @outer(ptr %c, ptr %m) {
  %r = call i32 @timed(ptr %m, ptr %c, ptr null)
  ret i32 %r
}
; Waits on a condition it creates itself, or on one it does not take as parameter.
define internal i32 @own(ptr %m) {
  %c = alloca [48 x i8]
  %r = call i32 @pthread_cond_wait(ptr %c, ptr %m)
  ret i32 %r
}
define internal i32 @global(ptr %c, ptr %m) {
  %r = call i32 @pthread_cond_wait(ptr @g, ptr %m)
  ret i32 %r
}
; Waits on a field of its parameter at an offset the caller's marker would have to rebuild.
define internal i32 @field(ptr %c, ptr %m) {
  %f = getelementptr i8, ptr %c, i64 8
  %r = call i32 @pthread_cond_wait(ptr %f, ptr %m)
  ret i32 %r
}
; Loops around its own wait: a caller's loop around it is not the waiting loop.
define internal void @pop(ptr %c, ptr %m, ptr %ready) {
entry:
  br label %head
head:
  %v = load i32, ptr %ready
  %z = icmp eq i32 %v, 0
  br i1 %z, label %wait, label %done
wait:
  %r = call i32 @pthread_cond_wait(ptr %c, ptr %m)
  br label %head
done:
  ret void
}

define void @loops(ptr %q, ptr %ready) {
entry:
  %qc = getelementptr i8, ptr %q, i64 40
  br label %h1
h1:
  %a = call i32 @timed(ptr @m, ptr %qc, ptr null)
  %s1 = icmp eq i32 %a, 0
  br i1 %s1, label %h1, label %h2
h2:
  %b = call i32 @outer(ptr %q, ptr @m)
  %s2 = icmp eq i32 %b, 0
  br i1 %s2, label %h2, label %h3
h3:
  %d = call i32 @own(ptr @m)
  %s3 = icmp eq i32 %d, 0
  br i1 %s3, label %h3, label %h4
h4:
  %e = call i32 @global(ptr %q, ptr @m)
  %s4 = icmp eq i32 %e, 0
  br i1 %s4, label %h4, label %h5
h5:
  %f = call i32 @external_wait(ptr %q, ptr @m)
  %s5 = icmp eq i32 %f, 0
  br i1 %s5, label %h5, label %h7
h7:
  %g = call i32 @field(ptr %q, ptr @m)
  %s7 = icmp eq i32 %g, 0
  br i1 %s7, label %h7, label %h6
h6:
  call void @pop(ptr %q, ptr @m, ptr %ready)
  br label %h6
}
"#;

    #[test]
    fn a_loop_around_a_wait_helper_waits_on_the_argument_it_passes() {
        with_module(HELPERS, |m| {
            let w = find_wait_loops(function(m, "loops"));
            let found: Vec<(Vec<String>, String)> = w
                .iter()
                .map(|l| (names(&l.body), l.cond.get_name().to_string_lossy().into()))
                .collect();
            // %h3 (own condition), %h4 (a global, not a parameter), %h5 (no body here), %h7 (a
            // field at an offset) and %h6 (the helper loops itself) are no wait loops.
            assert_eq!(
                found,
                vec![
                    (vec!["h1".into()], "qc".into()),
                    (vec!["h2".into()], "q".into())
                ]
            );
            // The helper's own loop is its wait loop.
            assert_eq!(find_wait_loops(function(m, "pop")).len(), 1);
        });
    }
}
