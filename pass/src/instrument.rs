//! Memory access instrumentation, one routine per instruction kind.
//!
//! Takes one function (already chosen by the include/exclude filter) and the module's hooks and
//! sites; inserts, before every access that may race, a call `__ilgen_read/write(addr, size, site)`
//! (or the atomic variants), with the size in bytes from the module's DataLayout. Memory
//! intrinsics become ranges: read the source range, write the destination range.
//!
//! Accesses that cannot race are skipped, each for the reason given where it is skipped. Calls to
//! the libc/pthread functions of `abi::WRAPPED_CALLS` are not handled here: `calls.rs` rewrites
//! them into wrappers that record what they touch; nor is the `sprintf` family: `printf.rs`
//! follows those calls with a hook that records what they wrote.

use std::collections::HashSet;

use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::target::{LLVMGetModuleDataLayout, LLVMStoreSizeOfType};
use llvm_sys::{LLVMAtomicOrdering, LLVMOpcode, LLVMTypeKind};

use crate::ctx::Ctx;
use crate::escape;
use crate::hooks::{self, Hook};
use crate::ir;

/// One access to instrument, with exactly the data its routine needs.
enum Access {
    Load(LLVMValueRef),
    Store(LLVMValueRef),
    AtomicRmw(LLVMValueRef),
    CmpXchg(LLVMValueRef),
    /// llvm.memcpy / llvm.memmove (and their .inline forms): dst, src, len.
    MemTransfer(LLVMValueRef),
    /// llvm.memset (and .inline): dst, len.
    MemSet(LLVMValueRef),
}

/// Instruments every access of `f`; returns how many hook calls it inserted.
pub fn instrument_function(ctx: &mut Ctx, f: LLVMValueRef) -> usize {
    let locals = escape::local_allocas(f);
    let accesses = collect(f);
    let mut n = 0;
    for a in accesses {
        n += match a {
            Access::Load(i) => instrument_load(ctx, f, &locals, i),
            Access::Store(i) => instrument_store(ctx, f, &locals, i),
            Access::AtomicRmw(i) | Access::CmpXchg(i) => instrument_rmw(ctx, f, i),
            Access::MemTransfer(i) => instrument_mem_transfer(ctx, f, &locals, i),
            Access::MemSet(i) => instrument_mem_set(ctx, f, &locals, i),
        };
    }
    n
}

/// Collects first, instruments after: the hook calls inserted must not be visited.
fn collect(f: LLVMValueRef) -> Vec<Access> {
    let mut out = Vec::new();
    for b in ir::blocks(f) {
        for i in ir::instructions(b) {
            // The pass's own clones (a wait-loop marker's argument) are not the program's.
            if ir::is_marked_not_instrumented(i) {
                continue;
            }
            let access = match ir::opcode(i) {
                Some(LLVMOpcode::LLVMLoad) => Access::Load(i),
                Some(LLVMOpcode::LLVMStore) => Access::Store(i),
                Some(LLVMOpcode::LLVMAtomicRMW) => Access::AtomicRmw(i),
                Some(LLVMOpcode::LLVMAtomicCmpXchg) => Access::CmpXchg(i),
                Some(LLVMOpcode::LLVMCall) => match mem_intrinsic(i) {
                    Some(a) => a,
                    None => continue,
                },
                _ => continue,
            };
            out.push(access);
        }
    }
    out
}

fn mem_intrinsic(call: LLVMValueRef) -> Option<Access> {
    let name = ir::name(ir::direct_callee(call)?);
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

fn is_atomic(i: LLVMValueRef) -> bool {
    // SAFETY: `i` is a live load or store.
    unsafe { LLVMGetOrdering(i) != LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic }
}

/// Store size of `ty` in bytes, or `None` when it has none the runtime could use.
fn store_size(ctx: &Ctx, ty: LLVMTypeRef) -> Option<u64> {
    // SAFETY: live type and module.
    unsafe {
        // A scalable vector's size is a multiple of a run-time vscale; we cannot name it.
        if LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMScalableVectorTypeKind
            || LLVMTypeIsSized(ty) == 0
        {
            return None;
        }
        let size = LLVMStoreSizeOfType(LLVMGetModuleDataLayout(ctx.module), ty);
        (size > 0).then_some(size)
    }
}

/// Whether `ptr` is a plain address-space-0 pointer the hooks can take.
fn is_default_address_space(ptr: LLVMValueRef) -> bool {
    // SAFETY: live value.
    unsafe {
        let ty = LLVMTypeOf(ptr);
        LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMPointerTypeKind
            && LLVMGetPointerAddressSpace(ty) == 0
    }
}

/// Whether `ptr` points into a global constant: nobody writes it, so reading it cannot race.
fn points_to_constant_global(ptr: LLVMValueRef) -> bool {
    let base = ir::underlying_object(ptr);
    // SAFETY: live value, checked to be a global variable first.
    ir::is_global_variable(base) && unsafe { LLVMIsGlobalConstant(base) != 0 }
}

/// Whether `ptr` points into a counter the compiler added for coverage or profiling (gcov's
/// `__llvm_gcov_ctr*`, clang's `__profc_*` in `__llvm_prf_cnts`). Threads update them without
/// synchronization by design; they are not the program's data, and reporting them would bury the
/// real races (TSan's pass skips them for the same reason).
fn points_to_compiler_counter(ptr: LLVMValueRef) -> bool {
    let base = ir::underlying_object(ptr);
    if !ir::is_global_variable(base) {
        return false;
    }
    let name = ir::name(base);
    // SAFETY: live global; the section string is owned by LLVM (null when none).
    let section = ir::cstr(unsafe { LLVMGetSection(base) });
    name.starts_with("__llvm_gcov")
        || name.starts_with("__profc_")
        || section.contains("__llvm_prf_")
}

/// Emits `hook(ptr, size, site)` before `inst`.
fn emit_access(
    ctx: &mut Ctx,
    f: LLVMValueRef,
    inst: LLVMValueRef,
    hook: Hook,
    ptr: LLVMValueRef,
    size: LLVMValueRef,
) {
    let site = ctx.sites.add_for(inst, &ctx.function_name(f));
    // SAFETY: live builder and instruction.
    unsafe { LLVMPositionBuilderBefore(ctx.builder, inst) };
    hooks::call(
        ctx.builder,
        hook,
        &mut [ptr, size, site],
        hooks::debug_loc(inst),
    );
}

/// Whether another thread may access the memory at `ptr`: the rules every access kind shares.
fn may_be_shared(ptr: LLVMValueRef, locals: &HashSet<LLVMValueRef>) -> bool {
    // A stack slot whose address never leaves this function is reachable by this thread only.
    !escape::points_to_local(ptr, locals)
        // Coverage and profile counters are racy by design and not the program's data.
        && !points_to_compiler_counter(ptr)
        // Other address spaces (x86 fs/gs segments, GPU memories) are not the shared heap the
        // runtime tracks, and the hooks take address-space-0 pointers.
        && is_default_address_space(ptr)
}

fn const_size(ctx: &Ctx, size: u64) -> LLVMValueRef {
    // SAFETY: live type.
    unsafe { LLVMConstInt(ctx.hooks.i64_ty, size, 0) }
}

fn instrument_load(
    ctx: &mut Ctx,
    f: LLVMValueRef,
    locals: &HashSet<LLVMValueRef>,
    load: LLVMValueRef,
) -> usize {
    let ptr = ir::operand(load, 0);
    // Constant globals are never written, so their reads conflict with nothing.
    if !may_be_shared(ptr, locals) || points_to_constant_global(ptr) {
        return 0;
    }
    // SAFETY: live instruction.
    let Some(size) = store_size(ctx, unsafe { LLVMTypeOf(load) }) else {
        return 0;
    };
    let hook = if is_atomic(load) {
        ctx.hooks.atomic_read
    } else {
        ctx.hooks.read
    };
    let size = const_size(ctx, size);
    emit_access(ctx, f, load, hook, ptr, size);
    1
}

fn instrument_store(
    ctx: &mut Ctx,
    f: LLVMValueRef,
    locals: &HashSet<LLVMValueRef>,
    store: LLVMValueRef,
) -> usize {
    let value = ir::operand(store, 0);
    let ptr = ir::operand(store, 1);
    if !may_be_shared(ptr, locals) {
        return 0;
    }
    // SAFETY: live value.
    let Some(size) = store_size(ctx, unsafe { LLVMTypeOf(value) }) else {
        return 0;
    };
    let hook = if is_atomic(store) {
        ctx.hooks.atomic_write
    } else {
        ctx.hooks.write
    };
    let size = const_size(ctx, size);
    emit_access(ctx, f, store, hook, ptr, size);
    1
}

/// atomicrmw and cmpxchg: both read and write, reported as one atomic write of the value's size.
fn instrument_rmw(ctx: &mut Ctx, f: LLVMValueRef, inst: LLVMValueRef) -> usize {
    let ptr = ir::operand(inst, 0);
    // An atomic's address escapes by our analysis, so the local rule never applies; the counter
    // rule does (`-fprofile-update=atomic` counters are atomicrmw).
    if !may_be_shared(ptr, &HashSet::new()) {
        return 0;
    }
    // Operand 1 is the value (atomicrmw) or the expected value (cmpxchg): the accessed type.
    // SAFETY: live value.
    let Some(size) = store_size(ctx, unsafe { LLVMTypeOf(ir::operand(inst, 1)) }) else {
        return 0;
    };
    let size = const_size(ctx, size);
    let hook = ctx.hooks.atomic_write;
    emit_access(ctx, f, inst, hook, ptr, size);
    1
}

/// The length operand of a memory intrinsic, as the hooks' i64.
fn length_i64(ctx: &Ctx, call: LLVMValueRef) -> LLVMValueRef {
    let len = ir::operand(call, 2);
    // SAFETY: live builder positioned before `call`; lengths are unsigned.
    unsafe {
        LLVMPositionBuilderBefore(ctx.builder, call);
        LLVMBuildIntCast2(ctx.builder, len, ctx.hooks.i64_ty, 0, c"".as_ptr())
    }
}

fn instrument_mem_transfer(
    ctx: &mut Ctx,
    f: LLVMValueRef,
    locals: &HashSet<LLVMValueRef>,
    call: LLVMValueRef,
) -> usize {
    let dst = ir::operand(call, 0);
    let src = ir::operand(call, 1);
    let mut n = 0;
    // Per side, as for loads and stores: a constant source is never written.
    let read_src = may_be_shared(src, locals) && !points_to_constant_global(src);
    let write_dst = may_be_shared(dst, locals);
    if read_src {
        let len = length_i64(ctx, call);
        let hook = ctx.hooks.read;
        emit_access(ctx, f, call, hook, src, len);
        n += 1;
    }
    if write_dst {
        let len = length_i64(ctx, call);
        let hook = ctx.hooks.write;
        emit_access(ctx, f, call, hook, dst, len);
        n += 1;
    }
    n
}

fn instrument_mem_set(
    ctx: &mut Ctx,
    f: LLVMValueRef,
    locals: &HashSet<LLVMValueRef>,
    call: LLVMValueRef,
) -> usize {
    let dst = ir::operand(call, 0);
    if !may_be_shared(dst, locals) {
        return 0;
    }
    let len = length_i64(ctx, call);
    let hook = ctx.hooks.write;
    emit_access(ctx, f, call, hook, dst, len);
    1
}
