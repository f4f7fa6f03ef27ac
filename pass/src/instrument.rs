//! Memory access instrumentation, one routine per instruction kind.
//!
//! Takes one function (already chosen by the include/exclude filter) and the module's hooks and
//! sites; inserts, before every access that may race, a call `__ilgen_read/write(addr, size, site)`
//! (or the atomic variants), with the size in bytes from the module's DataLayout; around an
//! atomic operation whose memory order acquires or releases, the two calls that record it with
//! its place in the run's order. Memory
//! intrinsics become ranges: read the source range, write the destination range.
//!
//! Accesses that cannot race are skipped, each for the reason given where it is skipped. Calls to
//! the libc/pthread functions of `abi::WRAPPED_CALLS` are not handled here: `calls.rs` rewrites
//! them into wrappers that record what they touch; nor is the `sprintf` family: `printf.rs`
//! follows those calls with a hook that records what they wrote.

use std::collections::HashSet;

use ilgen_trace::abi;
use inkwell::builder::BuilderError;
use inkwell::context::ContextRef;
use inkwell::types::{AnyType, BasicType, BasicTypeEnum};
use inkwell::values::{
    AnyValue, AsValueRef, BasicValueEnum, FunctionValue, InstructionOpcode, InstructionValue,
    IntValue,
};
use inkwell::AddressSpace;
use llvm_sys::core::{LLVMGetCmpXchgFailureOrdering, LLVMGetCmpXchgSuccessOrdering};

use crate::ctx::Ctx;
use crate::escape;
use crate::fences;
use crate::glue;
use crate::hooks::{self, Hook};
use crate::ir;
use crate::predicates;
use crate::redundant::{self, Plain};

/// One access to instrument, with exactly the data its routine needs.
enum Access<'ctx> {
    Load(InstructionValue<'ctx>),
    Store(InstructionValue<'ctx>),
    AtomicRmw(InstructionValue<'ctx>),
    CmpXchg(InstructionValue<'ctx>),
    /// llvm.memcpy / llvm.memmove (and their .inline forms): dst, src, len.
    MemTransfer(InstructionValue<'ctx>),
    /// llvm.memset (and .inline): dst, len.
    MemSet(InstructionValue<'ctx>),
}

/// The stack slots of one function whose address never leaves it.
type Locals<'ctx> = HashSet<InstructionValue<'ctx>>;

/// Instruments every access of `f`; returns how many hook calls it inserted.
pub fn instrument_function<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
) -> Result<usize, BuilderError> {
    let predicates = predicates::of(f);
    ctx.sites
        .enter(predicates.all, predicates.spins, predicates.returned);
    let locals = escape::local_allocas(f);
    let fenced = fences::ordered_by_fences(f);
    let accesses = collect(&ctx.module.get_context(), f);
    let ranges = loop_ranges(ctx, f, &locals, &accesses);
    let in_range: HashSet<_> = ranges.iter().map(|r| r.inst).collect();
    // An access recorded as its loop's range neither covers nor is covered per iteration.
    let plan = redundant::plan(f, |i| {
        (!in_range.contains(&i))
            .then(|| plain_access(ctx, &locals, i))
            .flatten()
    });
    for (&store, &load) in &plan.read_first {
        ctx.sites.carry_read(load, store);
    }
    let mut n = 0;
    for r in &ranges {
        let hook = if r.inst.get_opcode() == InstructionOpcode::Store {
            ctx.hooks.write
        } else {
            ctx.hooks.read
        };
        emit_access(ctx, f, (r.inst, r.at), hook, r.start.into(), r.len)?;
        n += 1;
    }
    for a in accesses {
        n += match a {
            Access::Load(i) | Access::Store(i)
                if plan.skip.contains(&i) || in_range.contains(&i) =>
            {
                0
            }
            Access::Store(i) if plan.hoist.contains_key(&i) => {
                instrument_read_modify_write(ctx, f, &locals, plan.hoist[&i], i)?
            }
            Access::Load(i) | Access::Store(i) => {
                let fenced = fenced.get(&i).copied().unwrap_or(0);
                instrument_load_or_store(ctx, f, &locals, i, fenced)?
            }
            Access::AtomicRmw(i) | Access::CmpXchg(i) => {
                instrument_rmw(ctx, f, i, fenced.get(&i).copied().unwrap_or(0))?
            }
            Access::MemTransfer(i) => {
                let (read, write) = (ctx.hooks.read, ctx.hooks.write);
                // The source range is read, then the destination range written.
                instrument_range(ctx, f, &locals, i, 1, read, true)?
                    + instrument_range(ctx, f, &locals, i, 0, write, false)?
            }
            Access::MemSet(i) => {
                let write = ctx.hooks.write;
                instrument_range(ctx, f, &locals, i, 0, write, false)?
            }
        };
    }
    Ok(n)
}

/// The plain loads and stores of `accesses` whose bytes over a whole loop are known before the
/// loop (see `glue::loop_ranges`): each is recorded once, as one range, before its loop instead
/// of once per iteration. Nothing is lost: the loop has no instruction that may sync, so the
/// range lands in the segment that each iteration's access would have landed in, and the loop,
/// once entered, runs all its iterations, so the range holds exactly the bytes the iterations
/// touch; the recorder would have merged them into that one range anyway (a sweep's stream), with
/// the same site.
fn loop_ranges<'ctx>(
    ctx: &Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
    locals: &Locals<'ctx>,
    accesses: &[Access<'ctx>],
) -> Vec<glue::LoopRange<'ctx>> {
    let plain: Vec<_> = accesses
        .iter()
        .filter_map(|a| match *a {
            Access::Load(i) | Access::Store(i) => {
                plain_access(ctx, locals, i).map(|p| (i, p.ptr, p.size))
            }
            _ => None,
        })
        .collect();
    glue::loop_ranges(f, &plain, redundant::may_sync_raw)
}

/// Collects first, instruments after: the hook calls inserted must not be visited.
fn collect<'ctx>(context: &ContextRef<'ctx>, f: FunctionValue<'ctx>) -> Vec<Access<'ctx>> {
    let mut out = Vec::new();
    for i in ir::all_instructions(f) {
        // The pass's own clones (a wait-loop marker's argument) are not the program's.
        if ir::is_marked_not_instrumented(context, i) {
            continue;
        }
        let access = match i.get_opcode() {
            InstructionOpcode::Load => Access::Load(i),
            InstructionOpcode::Store => Access::Store(i),
            InstructionOpcode::AtomicRMW => Access::AtomicRmw(i),
            InstructionOpcode::AtomicCmpXchg => Access::CmpXchg(i),
            InstructionOpcode::Call => match mem_intrinsic(i) {
                Some(a) => a,
                None => continue,
            },
            _ => continue,
        };
        out.push(access);
    }
    out
}

fn mem_intrinsic(call: InstructionValue<'_>) -> Option<Access<'_>> {
    let name = ir::function_name(ir::direct_callee(call)?);
    // The `.element.unordered.atomic` forms are left out: they are rare (Java-style runtimes)
    // and their length counts elements of a given size.
    if name.contains(".element.") {
        return None;
    }
    if name.starts_with("llvm.memcpy.") || name.starts_with("llvm.memmove.") {
        Some(Access::MemTransfer(call))
    } else if name.starts_with("llvm.memset.") {
        Some(Access::MemSet(call))
    } else {
        None
    }
}

/// Store size of `ty` in bytes, or `None` when it has none the runtime could use.
fn store_size(ctx: &Ctx<'_, '_>, ty: &dyn AnyType<'_>) -> Option<u64> {
    // A scalable vector's size is a multiple of a run-time vscale; we cannot name it.
    let sized = match BasicTypeEnum::try_from(ty.as_any_type_enum()) {
        Ok(BasicTypeEnum::ScalableVectorType(_)) | Err(_) => false,
        Ok(t) => t.is_sized(),
    };
    if !sized {
        return None;
    }
    let size = ctx.layout.get_store_size(ty);
    (size > 0).then_some(size)
}

/// Whether `ptr` is a plain address-space-0 pointer the hooks can take.
fn is_default_address_space(ptr: BasicValueEnum<'_>) -> bool {
    matches!(ptr, BasicValueEnum::PointerValue(p)
        if p.get_type().get_address_space() == AddressSpace::default())
}

/// Whether `ptr` points into a global constant: nobody writes it, so reading it cannot race.
fn points_to_constant_global(ptr: BasicValueEnum<'_>) -> bool {
    ir::global_variable(ir::underlying_object(ptr)).is_some_and(|g| g.is_constant())
}

/// Whether `ptr` points into a counter the compiler added for coverage or profiling (gcov's
/// `__llvm_gcov_ctr*`, clang's `__profc_*` in `__llvm_prf_cnts`). Threads update them without
/// synchronization by design; they are not the program's data, and reporting them would bury the
/// real races (TSan's pass skips them for the same reason).
fn points_to_compiler_counter(ptr: BasicValueEnum<'_>) -> bool {
    let Some(base) = ir::global_variable(ir::underlying_object(ptr)) else {
        return false;
    };
    let name = base.get_name().to_string_lossy();
    let section = base
        .get_section()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.starts_with("__llvm_gcov")
        || name.starts_with("__profc_")
        || section.contains("__llvm_prf_")
}

/// Emits `hook(ptr, size, site)` before `at`, with the site and debug location of `inst` (the
/// same instruction, or the preheader's terminator for an access recorded as its loop's range).
fn emit_access<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
    (inst, at): (InstructionValue<'ctx>, InstructionValue<'ctx>),
    hook: Hook<'ctx>,
    ptr: BasicValueEnum<'ctx>,
    size: IntValue<'ctx>,
) -> Result<Option<InstructionValue<'ctx>>, BuilderError> {
    let site = ctx.sites.add_for(inst, &ir::function_name(f));
    ctx.builder.position_before(&at);
    hooks::call(
        &ctx.builder,
        hook,
        &[ptr.into(), size.into(), site.into()],
        inst.get_debug_location(),
    )
}

/// Puts the plain access hook `call` of `size` bytes behind the inlined check of the thread's
/// coverage table, where the module can read it (`ctx.cover`) and the access fits in one
/// of its granules: the hook is called only when the table does not hold the access's bytes with
/// a kind that covers it, exactly when the runtime's own check (`SegmentCache::record_fast`)
/// would record nothing either, so the trace loses no byte, kind or segment. Most accesses of a
/// long segment (a sort, a hash table) touch bytes it already recorded: they then cost a
/// thread-local load, three loads of one cache line and two branches, not a call. Replay's table
/// (read where recording's pointer is null) keeps its entries per site: `site_arg` is the call's
/// argument the check reads the site from.
fn guard<'ctx>(
    ctx: &Ctx<'_, 'ctx>,
    call: Option<InstructionValue<'ctx>>,
    size: u64,
    write: bool,
    site_arg: u32,
) {
    if !ctx.cover || !(1..=abi::COVER_GRANULE).contains(&size) {
        return;
    }
    if let Some(call) = call {
        let tables = (
            hooks::tls_table(ctx.module, abi::COVER_TLS),
            hooks::tls_table(ctx.module, abi::REPLAY_COVER_TLS),
        );
        glue::guard_access(call, tables, size, write, site_arg);
    }
}

/// Emits `hook(ptr, size, site)` before a load, store or atomic `inst` of `size` bytes; returns
/// how many hook calls that is.
fn emit_sized_access<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
    inst: InstructionValue<'ctx>,
    hook: Hook<'ctx>,
    ptr: BasicValueEnum<'ctx>,
    size: u64,
) -> Result<usize, BuilderError> {
    let bytes = ctx.hooks.i64_ty.const_int(size, false);
    let call = emit_access(ctx, f, (inst, inst), hook, ptr, bytes)?;
    // Atomic accesses are not in the table: the runtime keeps their ranges apart. A volatile
    // access, one the program wants seen, always reaches the runtime.
    let write = hook.func == ctx.hooks.write.func;
    let plain = write || hook.func == ctx.hooks.read.func;
    if plain && !inst.get_volatile().unwrap_or(true) {
        guard(ctx, call, size, write, 2);
    }
    Ok(1)
}

/// Whether another thread may access the memory at `ptr`: the rules every access kind shares.
fn may_be_shared(ptr: BasicValueEnum<'_>, locals: &Locals<'_>) -> bool {
    // A stack slot whose address never leaves this function is reachable by this thread only.
    !escape::points_to_local(ptr, locals)
        // Coverage and profile counters are racy by design and not the program's data.
        && !points_to_compiler_counter(ptr)
        // Other address spaces (x86 fs/gs segments, GPU memories) are not the shared heap the
        // runtime tracks, and the hooks take address-space-0 pointers.
        && is_default_address_space(ptr)
}

/// The pointer and store size of a load's or store's hook, or `None` when it gets none.
fn access_target<'ctx>(
    ctx: &Ctx<'_, 'ctx>,
    locals: &Locals<'ctx>,
    i: InstructionValue<'ctx>,
) -> Option<(BasicValueEnum<'ctx>, u64)> {
    let (ptr, ty, read) = match i.get_opcode() {
        InstructionOpcode::Load => (ir::operand(i, 0)?, i.get_type(), true),
        InstructionOpcode::Store => {
            let value = ir::operand(i, 0)?;
            (
                ir::operand(i, 1)?,
                value.get_type().as_any_type_enum(),
                false,
            )
        }
        _ => return None,
    };
    // Constant globals are never written, so their reads conflict with nothing.
    if !may_be_shared(ptr, locals) || (read && points_to_constant_global(ptr)) {
        return None;
    }
    Some((ptr, store_size(ctx, &ty)?))
}

/// A load or store that would get a plain hook, as the redundancy elimination sees it; `None`
/// for every other instruction, and for volatile and atomic accesses, which it must leave alone.
fn plain_access<'ctx>(
    ctx: &Ctx<'_, 'ctx>,
    locals: &Locals<'ctx>,
    i: InstructionValue<'ctx>,
) -> Option<Plain<'ctx>> {
    let write = i.get_opcode() == InstructionOpcode::Store;
    let context = ctx.module.get_context();
    if ir::is_marked_not_instrumented(&context, i)
        || ir::is_atomic(i)
        || i.get_volatile().unwrap_or(true)
    {
        return None;
    }
    let (ptr, size) = access_target(ctx, locals, i)?;
    Some(Plain { ptr, size, write })
}

/// A load or store; an atomic one with the bits `fenced` its fences give it (`fences`).
fn instrument_load_or_store<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
    locals: &Locals<'ctx>,
    inst: InstructionValue<'ctx>,
    fenced: u64,
) -> Result<usize, BuilderError> {
    let Some((ptr, size)) = access_target(ctx, locals, inst) else {
        return Ok(0);
    };
    let write = inst.get_opcode() == InstructionOpcode::Store;
    if ir::is_atomic(inst) {
        return instrument_atomic(ctx, f, inst, ptr, size, write, fenced);
    }
    let hook = if write {
        ctx.hooks.write
    } else {
        ctx.hooks.read
    };
    emit_sized_access(ctx, f, inst, hook, ptr, size)
}

/// Which halves of its memory order atomic `inst` has, with the bits `fenced` its fences give it,
/// as `abi::ATOMIC_ACQUIRES` and `abi::ATOMIC_RELEASES` bits: (when it succeeds, when it fails).
/// Only a compare-exchange can fail; it has two orders, and a failed one writes nothing, so it
/// never releases. A load only acquires and a store only releases, seq_cst ones too.
fn halves(inst: InstructionValue<'_>, fenced: u64) -> (u64, u64) {
    use inkwell::AtomicOrdering::{Acquire, AcquireRelease, Release, SequentiallyConsistent};
    let bits = |o, load: bool, store: bool| {
        let acquire = load && matches!(o, Acquire | AcquireRelease | SequentiallyConsistent);
        let release = store && matches!(o, Release | AcquireRelease | SequentiallyConsistent);
        (u64::from(acquire) * abi::ATOMIC_ACQUIRES) | (u64::from(release) * abi::ATOMIC_RELEASES)
    };
    if inst.get_opcode() == InstructionOpcode::AtomicCmpXchg {
        // SAFETY: `inst` is a cmpxchg instruction, which both calls take.
        let (success, failure) = unsafe {
            let v = inst.as_value_ref();
            (
                LLVMGetCmpXchgSuccessOrdering(v).into(),
                LLVMGetCmpXchgFailureOrdering(v).into(),
            )
        };
        let failed = bits(failure, true, false) | (fenced & abi::ATOMIC_ACQUIRES);
        return (bits(success, true, true) | fenced, failed);
    }
    let (load, store) = match inst.get_opcode() {
        InstructionOpcode::Load => (true, false),
        InstructionOpcode::Store => (false, true),
        _ => (true, true),
    };
    let both = inst
        .get_atomic_ordering()
        .map_or(0, |o| bits(o, load, store))
        | fenced;
    (both, both)
}

/// An atomic load, store, atomicrmw or cmpxchg (`write`: all but the load) of `size` bytes at
/// `ptr`. Relaxed, it orders nothing: the access hook alone. Else
/// `token = __ilgen_atomic_enter(ptr, size, site, write)` before it and
/// `__ilgen_atomic_leave(ptr, size, site, how, token)` after it, `how` its `abi::ATOMIC_*` bits:
/// a cmpxchg's from its result, as its success or its failure order says (the usual lock
/// acquisition, `acquire` on success and `relaxed` on failure, acquires when it took the lock).
/// `fenced`: the bits its fences give it (`fences`), a relaxed operation's too.
fn instrument_atomic<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
    inst: InstructionValue<'ctx>,
    ptr: BasicValueEnum<'ctx>,
    size: u64,
    write: bool,
    fenced: u64,
) -> Result<usize, BuilderError> {
    let (success, failure) = halves(inst, fenced);
    let Some(next) = inst
        .get_next_instruction()
        .filter(|_| success | failure != 0)
    else {
        let hook = if write {
            ctx.hooks.atomic_write
        } else {
            ctx.hooks.atomic_read
        };
        return emit_sized_access(ctx, f, inst, hook, ptr, size);
    };
    let site = ctx.sites.add_for(inst, &ir::function_name(f));
    let i64_ty = ctx.hooks.i64_ty;
    let bytes = i64_ty.const_int(size, false);
    let written = i64_ty.const_int(u64::from(write), false);
    ctx.builder.position_before(&inst);
    let token = hooks::call_value(
        &ctx.builder,
        ctx.hooks.atomic_enter,
        &[ptr.into(), bytes.into(), site.into(), written.into()],
    )?;
    let rmw = matches!(
        inst.get_opcode(),
        InstructionOpcode::AtomicRMW | InstructionOpcode::AtomicCmpXchg
    );
    let fixed = (u64::from(rmw) * abi::ATOMIC_RMW) | (u64::from(write) * abi::ATOMIC_WRITES);
    ctx.builder.position_before(&next);
    let how = if success == failure {
        i64_ty.const_int(fixed | success, false)
    } else {
        let pair = inst.as_any_value_enum().into_struct_value();
        let ok = ctx
            .builder
            .build_extract_value(pair, 1, "")?
            .into_int_value();
        let succeeded = i64_ty.const_int(fixed | success, false);
        let failed = i64_ty.const_int(fixed | failure, false);
        ctx.builder
            .build_select(ok, succeeded, failed, "")?
            .into_int_value()
    };
    hooks::call(
        &ctx.builder,
        ctx.hooks.atomic_leave,
        &[
            ptr.into(),
            bytes.into(),
            site.into(),
            how.into(),
            token.into(),
        ],
        inst.get_debug_location(),
    )?;
    Ok(2)
}

/// `__ilgen_read_write(ptr, size, load's site, store's site)` before `load`, for the pair that
/// `redundant.rs` found: plain, of one size, to one pointer, nothing that may sync between.
fn instrument_read_modify_write<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
    locals: &Locals<'ctx>,
    load: InstructionValue<'ctx>,
    store: InstructionValue<'ctx>,
) -> Result<usize, BuilderError> {
    let Some((ptr, size)) = access_target(ctx, locals, store) else {
        return Ok(0);
    };
    let name = ir::function_name(f);
    let read_site = ctx.sites.add_for(load, &name);
    let write_site = ctx.sites.add_for(store, &name);
    let bytes = ctx.hooks.i64_ty.const_int(size, false);
    ctx.builder.position_before(&load);
    let call = hooks::call(
        &ctx.builder,
        ctx.hooks.read_write,
        &[
            ptr.into(),
            bytes.into(),
            read_site.into(),
            write_site.into(),
        ],
        load.get_debug_location(),
    )?;
    // The runtime records the pair as its write alone; replay keeps it by its write's site
    // (argument 3), which no other hook names.
    guard(ctx, call, size, true, 3);
    Ok(1)
}

/// atomicrmw and cmpxchg: both read and write, reported as one atomic write of the value's size
/// (`fenced`: the bits its fences give it).
fn instrument_rmw<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
    inst: InstructionValue<'ctx>,
    fenced: u64,
) -> Result<usize, BuilderError> {
    // Operand 1 is the value (atomicrmw) or the expected value (cmpxchg): the accessed type.
    let (Some(ptr), Some(value)) = (ir::operand(inst, 0), ir::operand(inst, 1)) else {
        return Ok(0);
    };
    // An atomic's address escapes by our analysis, so the local rule never applies; the counter
    // rule does (`-fprofile-update=atomic` counters are atomicrmw).
    if !may_be_shared(ptr, &HashSet::new()) {
        return Ok(0);
    }
    let Some(size) = store_size(ctx, &value.get_type()) else {
        return Ok(0);
    };
    instrument_atomic(ctx, f, inst, ptr, size, true, fenced)
}

/// The length operand of a memory intrinsic, as the hooks' i64 (lengths are unsigned).
fn length_i64<'ctx>(
    ctx: &Ctx<'_, 'ctx>,
    call: InstructionValue<'ctx>,
    len: IntValue<'ctx>,
) -> Result<IntValue<'ctx>, BuilderError> {
    ctx.builder.position_before(&call);
    ctx.builder
        .build_int_cast_sign_flag(len, ctx.hooks.i64_ty, false, "")
}

/// Emits `hook(ptr, len, site)` before memory intrinsic `call` for its pointer operand `idx`
/// and length operand 2, as for loads and stores: when the memory may be shared and, for a
/// `read`, is not a constant (a constant source is never written).
fn instrument_range<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
    locals: &Locals<'ctx>,
    call: InstructionValue<'ctx>,
    idx: u32,
    hook: Hook<'ctx>,
    read: bool,
) -> Result<usize, BuilderError> {
    let (Some(ptr), Some(BasicValueEnum::IntValue(len))) =
        (ir::operand(call, idx), ir::operand(call, 2))
    else {
        return Ok(0);
    };
    if !may_be_shared(ptr, locals) || (read && points_to_constant_global(ptr)) {
        return Ok(0);
    }
    let len = length_i64(ctx, call, len)?;
    emit_access(ctx, f, (call, call), hook, ptr, len)?;
    Ok(1)
}
