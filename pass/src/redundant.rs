//! Static redundancy elimination: the loads and stores whose hook another access's hook already
//! accounts for.
//!
//! Takes one function and, for each load or store that would get a plain hook, its pointer and
//! store size; gives a [`Plan`]: the accesses left without a hook of their own, and the
//! read-modify-write pairs whose one write hook goes where the load is.
//!
//! Why a left-out hook loses nothing. The recorder keeps, per thread and segment (the accesses
//! between two sync operations), every accessed byte in a range of at least its access's kind (a
//! write dominates a read), with the first site of that kind (`rt/src/record/cache.rs`); the
//! replay checker returns at once for an access that a cell of its own thread and instant covers
//! (`rt/src/replay/shadow.rs`). An access B needs no hook when an access A
//! - to the same pointer value (so the same address whenever both run),
//! - of at least B's size,
//! - that is a write, or B is a read,
//!
//! runs on every path to B (A dominates B), and no path from A to B passes an instruction that
//! may end the segment ([`may_sync`]): then B's bytes already lie in a range of B's segment at
//! least as strong as B, which B's hook would not change (a range's kind and site change only
//! when a stronger kind arrives). The trace says the same; at most it loses a duplicate record
//! that an earlier, as strong range of the same segment covers. A segment that the recorder
//! splits early because its cache is full is still one segment for the analysis: no sync
//! operation lies between its parts. What a left-out hook can lose is B's line in a report: the
//! replay checks a site's first access of an instant even where another site's cell covers it
//! (so that a race is also named at the later line, as a detector that met the other thread's
//! access between the two would name it), and B without a hook is never checked.
//!
//! Read-modify-write (`x++`, `x += k`): a load and then a store of the same size to the same
//! pointer in one block, with nothing that may sync between, get one hook before the load,
//! `__ilgen_read_write` with both sites. The recorder keeps its write alone (it would have turned
//! the load's read range into the store's write with the store's site anyway, and the range keeps
//! its place, the load's, in the segment's first-access order); the replay checker checks the
//! read and then the write, as the two hooks did. Before the load and not at the store: the hook
//! then covers, as a write, every access to that pointer between the two.
//!
//! A store whose segment read the same pointer before it (a read that dominates it, nothing that
//! may sync between: a read-modify-write pair, or `if (p->tail) ...; p->tail = t;` across blocks)
//! also has its read recorded through its write alone: the recorder turns the read's range into
//! the store's write with the store's site. [`Plan::read_first`] names each such store's read, so
//! that the store's site can say what that read decided (`sites.rs`).
//!
//! Volatile and atomic accesses are never left out and never cover another: the runtime records
//! atomics apart and a volatile access is one the program wants seen. Atomics, fences and calls
//! not known to be free of synchronization end what an earlier access covers.

use std::collections::{HashMap, HashSet};

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::values::{BasicValueEnum, FunctionValue, InstructionOpcode, InstructionValue};
use llvm_sys::prelude::LLVMValueRef;
use petgraph::algo::dominators::simple_fast;
use petgraph::graph::NodeIndex;
use petgraph::Direction;

use crate::ir;
use crate::loops::{self, Cfg};

/// What the elimination decided for one function.
#[derive(Default, Debug)]
pub struct Plan<'ctx> {
    /// Loads and stores whose own hook is left out.
    pub skip: HashSet<InstructionValue<'ctx>>,
    /// Store → the load of its read-modify-write: one hook for both goes before the load.
    pub hoist: HashMap<InstructionValue<'ctx>, InstructionValue<'ctx>>,
    /// Store with a hook → the read of the same pointer earlier in its segment whose range the
    /// recorder turns into the store's write (every pair of `hoist` among them).
    pub read_first: HashMap<InstructionValue<'ctx>, InstructionValue<'ctx>>,
}

/// One plain load or store with a hook: its pointer, its store size, whether it writes.
#[derive(Clone, Copy, Debug)]
pub struct Plain<'ctx> {
    pub ptr: BasicValueEnum<'ctx>,
    pub size: u64,
    pub write: bool,
}

/// An earlier access of the segment that covers later ones.
#[derive(Clone, Copy)]
struct Covering<'ctx> {
    inst: InstructionValue<'ctx>,
    access: Plain<'ctx>,
    /// In the block being scanned (a read-modify-write pair stays in one block).
    here: bool,
}

/// Intrinsics that never synchronize (debug info, lifetime markers, hints, memory intrinsics:
/// the last ones are accesses, recorded as ranges, not sync operations).
const SYNC_FREE_INTRINSICS: &[&str] = &[
    "llvm.dbg.",
    "llvm.lifetime.",
    "llvm.assume",
    "llvm.expect",
    "llvm.memcpy.",
    "llvm.memmove.",
    "llvm.memset.",
];

/// Past this many blocks between a dominator and a block, the block inherits nothing: the path
/// check is a backward search, and such a function gains little from it.
const MAX_REGION: usize = 256;

/// The plan for `f`; `plain` gives the pointer and size of a load or store that would get a plain
/// (not atomic) hook, `None` for every other instruction.
pub fn plan<'ctx>(
    f: FunctionValue<'ctx>,
    plain: impl Fn(InstructionValue<'ctx>) -> Option<Plain<'ctx>>,
) -> Plan<'ctx> {
    let mut plan = Plan::default();
    let Some(cfg) = loops::cfg(f) else {
        return plan;
    };
    let graph = &cfg.graph;
    let doms = simple_fast(graph, NodeIndex::new(0));
    let syncs: Vec<bool> = graph
        .node_indices()
        .map(|n| ir::instructions(graph[n]).into_iter().any(may_sync))
        .collect();
    let mut children: HashMap<NodeIndex, Vec<NodeIndex>> = HashMap::new();
    for n in graph.node_indices() {
        if let Some(d) = doms.immediate_dominator(n) {
            children.entry(d).or_default().push(n);
        }
    }
    // Dominator-tree order: a block's immediate dominator is scanned before it. Unreachable
    // blocks are in no tree and keep every hook.
    let mut out: HashMap<NodeIndex, Vec<Covering<'ctx>>> = HashMap::new();
    let mut stack = vec![NodeIndex::new(0)];
    while let Some(n) = stack.pop() {
        let inherited = match doms.immediate_dominator(n) {
            Some(d) if sync_free_between(&cfg, &syncs, d, n) => out[&d]
                .iter()
                .map(|c| Covering { here: false, ..*c })
                .collect(),
            _ => Vec::new(),
        };
        let covering = scan_block(graph[n], inherited, &plain, &mut plan);
        out.insert(n, covering);
        stack.extend(children.remove(&n).unwrap_or_default());
    }
    plan
}

/// Whether every path from the end of block `d` to the start of block `n` (which `d` dominates)
/// avoids the blocks that may sync. A path that comes back to `n` without passing `d` runs `n`'s
/// own instructions in between, so it counts as one that may sync.
fn sync_free_between(cfg: &Cfg<'_>, syncs: &[bool], d: NodeIndex, n: NodeIndex) -> bool {
    let mut seen = HashSet::new();
    let mut todo: Vec<NodeIndex> = cfg
        .graph
        .neighbors_directed(n, Direction::Incoming)
        .collect();
    while let Some(p) = todo.pop() {
        if p == d || !seen.insert(p) {
            continue;
        }
        if p == n || syncs[p.index()] || seen.len() > MAX_REGION {
            return false;
        }
        todo.extend(cfg.graph.neighbors_directed(p, Direction::Incoming));
    }
    true
}

/// Scans block `b` with the accesses that cover its start; records its decisions in `plan` and
/// gives the accesses that cover its end.
fn scan_block<'ctx>(
    b: inkwell::basic_block::BasicBlock<'ctx>,
    mut covering: Vec<Covering<'ctx>>,
    plain: &impl Fn(InstructionValue<'ctx>) -> Option<Plain<'ctx>>,
    plan: &mut Plan<'ctx>,
) -> Vec<Covering<'ctx>> {
    for inst in ir::instructions(b) {
        if may_sync(inst) {
            // A new segment may start here: nothing before covers what follows.
            covering.clear();
            continue;
        }
        let Some(a) = plain(inst) else { continue };
        if covering.iter().any(|c| covers(&c.access, &a)) {
            plan.skip.insert(inst);
            continue;
        }
        if a.write {
            let read = covering
                .iter()
                .find(|c| !c.access.write && c.access.ptr == a.ptr);
            if let Some(c) = read {
                plan.read_first.insert(inst, c.inst);
            }
            // The store of a read-modify-write: one hook for both goes to the load, which then
            // covers as a write from there on.
            let load = covering.iter_mut().find(|c| {
                c.here && !c.access.write && c.access.ptr == a.ptr && c.access.size == a.size
            });
            if let Some(c) = load {
                plan.skip.insert(c.inst);
                plan.hoist.insert(inst, c.inst);
                c.access = a;
                continue;
            }
        }
        covering.push(Covering {
            inst,
            access: a,
            here: true,
        });
    }
    covering
}

/// Whether an earlier access `a` of the same segment makes `b`'s hook redundant.
fn covers(a: &Plain<'_>, b: &Plain<'_>) -> bool {
    a.ptr == b.ptr && a.size >= b.size && (a.write || !b.write)
}

/// Whether `i` may end a segment or order this thread with another: a call not known to be free
/// of synchronization (an indirect call could be `pthread_mutex_lock`), an atomic access or a
/// fence (the replay checker orders threads by atomics).
pub fn may_sync(i: InstructionValue<'_>) -> bool {
    match i.get_opcode() {
        InstructionOpcode::Call | InstructionOpcode::Invoke | InstructionOpcode::CallBr => {
            !is_sync_free_call(i)
        }
        InstructionOpcode::Fence
        | InstructionOpcode::AtomicRMW
        | InstructionOpcode::AtomicCmpXchg => true,
        InstructionOpcode::Load | InstructionOpcode::Store => ir::is_atomic(i),
        _ => false,
    }
}

/// [`may_sync`] for the glue's loop search (`glue::loop_ranges`), which calls it from C++.
pub extern "C" fn may_sync_raw(i: LLVMValueRef) -> i32 {
    // SAFETY: the glue passes live instructions of the function being instrumented.
    may_sync(unsafe { InstructionValue::new(i) }) as i32
}

/// A direct call of a sync-free intrinsic, of a function LLVM knows to be `nosync` (it does not
/// communicate with another thread: no lock, no atomic, no call that may sync), of one that
/// reads no memory, or of a math function LLVM leaves unannotated.
fn is_sync_free_call(call: InstructionValue<'_>) -> bool {
    let Some(callee) = ir::direct_callee(call) else {
        return false;
    };
    let name = ir::function_name(callee);
    let nosync = Attribute::get_named_enum_kind_id("nosync");
    SYNC_FREE_INTRINSICS.iter().any(|p| name.starts_with(p))
        || callee
            .get_enum_attribute(AttributeLoc::Function, nosync)
            .is_some()
        || reads_no_memory(callee)
        || is_math_without_attributes(call, callee)
}

/// The C library's math functions that LLVM 19's `inferattrs` knows nothing of, so leaves
/// without the `memory(write)` it gives `exp` or `log` (`reads_no_memory`): by their `double`
/// names; the `float` and `long double` forms add `f` and `l`. Those whose arguments are all
/// numbers: none writes through a pointer, each at most sets `errno` (`lgamma` also `signgam`),
/// and none calls back into the program or takes a lock, so a call of one cannot synchronize.
/// Without this, `erfc` or `llrint` in a hot loop (app_nbody's pair force) costs a call marker
/// pair per call and keeps every access around it hooked.
const MATH_WITHOUT_ATTRIBUTES: &[&str] = &[
    "erfc",
    "exp10",
    "fdim",
    "hypot",
    "ilogb",
    "ldexp",
    "lgamma",
    "llrint",
    "llround",
    "lrint",
    "lround",
    "nextafter",
    "nexttoward",
    "scalbln",
    "scalbn",
    "tgamma",
];

/// Whether `call` calls the C library's own function of [`MATH_WITHOUT_ATTRIBUTES`]: a
/// declaration of that name (a definition in this module is the program's own), with `nobuiltin`
/// neither on it nor on the call (`-fno-builtin` says the name may be the program's).
pub fn is_math_without_attributes(call: InstructionValue<'_>, callee: FunctionValue<'_>) -> bool {
    let nobuiltin = Attribute::get_named_enum_kind_id("nobuiltin");
    if !ir::is_declaration(callee)
        || callee
            .get_enum_attribute(AttributeLoc::Function, nobuiltin)
            .is_some()
        || ir::call_site(call).is_some_and(|c| {
            c.get_enum_attribute(AttributeLoc::Function, nobuiltin)
                .is_some()
        })
    {
        return false;
    }
    let name = ir::function_name(callee);
    let base = name
        .strip_suffix(['f', 'l'])
        .filter(|b| MATH_WITHOUT_ATTRIBUTES.contains(b));
    MATH_WITHOUT_ATTRIBUTES.contains(&name.as_str()) || base.is_some()
}

/// Whether `callee`'s `memory` attribute says it reads no memory: a `const` function, or one of
/// the C library's math functions, which LLVM's `inferattrs` (run by the glue before both passes)
/// gives `memory(write)`: they write `errno` only. Such a call cannot synchronize: every
/// operation that orders threads reads memory (a lock, a wait, an acquire), and LLVM counts a
/// release store or a fence as reading too, so it infers no function that holds one write-only.
/// The runtime's sync wrappers (`pthread_*`, `sem_*`) are never declared so; `pthread_self` and
/// `pthread_equal` are `const`, and the runtime records neither.
pub fn reads_no_memory(callee: FunctionValue<'_>) -> bool {
    // LLVM 19's encoding: two bits (read = 1, write = 2) for each of argument memory,
    // inaccessible memory and the rest.
    const READS: u64 = 0b01_01_01;
    let memory = Attribute::get_named_enum_kind_id("memory");
    callee
        .get_enum_attribute(AttributeLoc::Function, memory)
        .is_some_and(|a| a.get_enum_value() & READS == 0)
}

#[cfg(test)]
mod tests {
    use inkwell::values::AnyValue;

    use super::*;
    use crate::testing::with_module;

    /// The names of `f`'s skipped accesses, its hoisted (store, load) pairs and its (store, read
    /// first) pairs, with every load and store taken as 4-byte plain accesses unless volatile or
    /// atomic.
    type Pairs = Vec<(String, String)>;
    fn decide(text: &str) -> (Vec<String>, Pairs, Pairs) {
        with_module(text, |m| {
            let f = m.get_function("f").unwrap();
            let name = |i: InstructionValue<'_>| {
                i.get_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| i.print_to_string().to_string().trim().to_owned())
            };
            let p = plan(f, |i| {
                let (ptr, write) = match i.get_opcode() {
                    InstructionOpcode::Load => (ir::operand(i, 0)?, false),
                    InstructionOpcode::Store => (ir::operand(i, 1)?, true),
                    _ => return None,
                };
                let plain = !ir::is_atomic(i) && !i.get_volatile().unwrap_or(true);
                plain.then_some(Plain {
                    ptr,
                    size: 4,
                    write,
                })
            });
            let mut skip: Vec<String> = p.skip.iter().map(|&i| name(i)).collect();
            skip.sort();
            let pairs = |m: &HashMap<InstructionValue<'_>, InstructionValue<'_>>| {
                let mut v: Pairs = m.iter().map(|(&s, &l)| (name(s), name(l))).collect();
                v.sort();
                v
            };
            (skip, pairs(&p.hoist), pairs(&p.read_first))
        })
    }

    #[test]
    fn a_dominating_block_covers_across_sync_free_paths_only() {
        // %b is covered by %a on both paths from %entry. %c is not, though %join dominates
        // %loop: the back edge brings %loop's own call between one %c and the next. Nor is %d,
        // after that call.
        let text = r#"
@x = global i32 0
declare void @g()
define void @f(i1 %k) {
entry:
  %a = load i32, ptr @x
  br i1 %k, label %left, label %join
left:
  br label %join
join:
  %b = load i32, ptr @x
  br label %loop
loop:
  %c = load i32, ptr @x
  call void @g()
  br i1 %k, label %loop, label %exit
exit:
  %d = load i32, ptr @x
  ret void
}
"#;
        let (skip, hoist, read_first) = decide(text);
        assert_eq!(skip, vec!["b"]);
        assert!(hoist.is_empty());
        assert!(read_first.is_empty());
    }

    #[test]
    fn a_read_modify_write_is_one_hoisted_write_and_covers_what_follows() {
        let text = r#"
@x = global i32 0
define void @f() {
  %v = load i32, ptr @x
  %w = add i32 %v, 1
  store i32 %w, ptr @x
  %again = load i32, ptr @x
  ret void
}
"#;
        let (skip, hoist, read_first) = decide(text);
        assert_eq!(skip, vec!["again", "v"]);
        assert_eq!(hoist.len(), 1);
        assert_eq!(hoist[0].1, "v");
        assert_eq!(read_first, hoist);
    }

    #[test]
    fn a_store_after_a_read_of_its_pointer_in_another_block_reads_first() {
        // `if (tail) tail->next = n; else head = n; tail = n;`: the store to @tail in %join
        // follows the read %t of @tail in %entry on every path, with nothing that may sync.
        let text = r#"
@tail = global ptr null
@head = global ptr null
define void @f(ptr %n) {
entry:
  %t = load ptr, ptr @tail
  %null = icmp eq ptr %t, null
  br i1 %null, label %empty, label %link
empty:
  store ptr %n, ptr @head
  br label %join
link:
  store ptr %n, ptr %t
  br label %join
join:
  store ptr %n, ptr @tail
  ret void
}
"#;
        let (skip, hoist, read_first) = decide(text);
        assert!(skip.is_empty());
        assert!(hoist.is_empty());
        assert_eq!(read_first.len(), 1);
        assert!(read_first[0].0.contains("ptr @tail"));
        assert_eq!(read_first[0].1, "t");
    }

    #[test]
    fn a_store_after_a_call_that_may_sync_or_to_another_pointer_does_not_read_first() {
        // %t's segment may end at @g before the store to @tail, in the same block or across
        // one; the store to @head has a pointer of its own.
        let text = r#"
@tail = global ptr null
@head = global ptr null
declare void @g()
define void @f(ptr %n, i1 %k) {
entry:
  %t = load ptr, ptr @tail
  store ptr %n, ptr @head
  call void @g()
  store ptr %n, ptr @tail
  %u = load ptr, ptr @tail
  br i1 %k, label %call, label %join
call:
  call void @g()
  br label %join
join:
  store ptr %u, ptr @tail
  ret void
}
"#;
        let (_, hoist, read_first) = decide(text);
        assert!(hoist.is_empty());
        assert!(read_first.is_empty());
    }

    #[test]
    fn a_call_that_reads_no_memory_keeps_the_segment_one_that_reads_may_not() {
        // %b reads @x again after `exp` (write-only: `errno`) and a `const` function: covered by
        // %a. %d reads it after a function that may read memory, and so may wait: not covered.
        let text = r#"
@x = global i32 0
declare double @exp(double) memory(write)
declare double @constant(double) memory(none)
declare double @reads(double) memory(read)
define void @f(double %v) {
  %a = load i32, ptr @x
  %e = call double @exp(double %v)
  %c = call double @constant(double %e)
  %b = load i32, ptr @x
  %r = call double @reads(double %c)
  %d = load i32, ptr @x
  ret void
}
"#;
        let (skip, _, _) = decide(text);
        assert_eq!(skip, ["b"]);
    }

    #[test]
    fn a_math_call_llvm_leaves_unannotated_keeps_the_segment_unless_it_may_be_the_programs() {
        // `erfc` and `lgammal` carry no attribute (inferattrs does not know them): %b and %c are
        // covered by %a. After `erfc` called `nobuiltin` and after this module's own `scalbn`
        // (which may lock), not.
        let text = r#"
@x = global i32 0
@m = global [40 x i8] zeroinitializer
declare double @erfc(double)
declare x86_fp80 @lgammal(x86_fp80)
declare i32 @pthread_mutex_lock(ptr)
define double @scalbn(double %v, i32 %e) {
  %r = call i32 @pthread_mutex_lock(ptr @m)
  ret double %v
}
define void @f(double %v) {
  %a = load i32, ptr @x
  %e = call double @erfc(double %v)
  %b = load i32, ptr @x
  %l = call x86_fp80 @lgammal(x86_fp80 0xK3FFF8000000000000000)
  %c = load i32, ptr @x
  %n = call double @erfc(double %v) nobuiltin
  %d = load i32, ptr @x
  %s = call double @scalbn(double %v, i32 1)
  %g = load i32, ptr @x
  ret void
}
"#;
        let (skip, _, _) = decide(text);
        assert_eq!(skip, ["b", "c"]);
    }
}
