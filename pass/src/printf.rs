//! The `sprintf` family: the bytes each call wrote into its buffer, recorded after the call.
//!
//! Takes one function whose memory accesses are instrumented; after every direct call of a
//! function of `abi::FORMATTED_CALLS`, inserts `__ilgen_printf_written(buf, max, ret, site)`:
//! the buffer argument, the length argument (`UINT64_MAX` for the unbounded forms), the call's
//! return value sign-extended, and the call's site. The runtime turns that into one write range
//! of the bytes the call produced. The call itself stays as it is: these functions are variadic,
//! and a Rust wrapper cannot forward C variadic arguments.
//!
//! The hook comes after the call because only the return value says how much was written. Calls
//! through `invoke` are left alone: glibc declares these functions `nothrow`, so C++ calls them
//! with `call` too.

use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode, LLVMTypeKind};

use ilgen_trace::abi;

use crate::calls;
use crate::ctx::Ctx;
use crate::hooks;
use crate::ir;

/// Follows every formatting call of `f` with the hook; returns how many it inserted.
pub fn record_written(ctx: &mut Ctx, f: LLVMValueRef) -> usize {
    let mut found = Vec::new();
    for b in ir::blocks(f) {
        for i in ir::instructions(b) {
            if ir::opcode(i) != Some(LLVMOpcode::LLVMCall) {
                continue;
            }
            if let Some(fmt) = calls::library_callee(i).and_then(|n| abi::formatted(&n)) {
                found.push((i, fmt));
            }
        }
    }
    found
        .into_iter()
        .filter(|&(call, fmt)| emit(ctx, f, call, fmt))
        .count()
}

fn is_kind(v: LLVMValueRef, kind: LLVMTypeKind) -> bool {
    // SAFETY: live value.
    unsafe { LLVMGetTypeKind(LLVMTypeOf(v)) == kind }
}

/// Emits the hook after `call`, unless the call does not have the shape of its C prototype (a
/// program that declared it otherwise): then we cannot tell what it wrote.
fn emit(ctx: &mut Ctx, f: LLVMValueRef, call: LLVMValueRef, fmt: abi::Formatted) -> bool {
    let n_args = ir::num_call_args(call);
    if fmt.buf >= n_args || fmt.max.is_some_and(|m| m >= n_args) {
        return false;
    }
    let buf = ir::operand(call, fmt.buf);
    // SAFETY: live values.
    let buf_ok = is_kind(buf, LLVMTypeKind::LLVMPointerTypeKind)
        && unsafe { LLVMGetPointerAddressSpace(LLVMTypeOf(buf)) } == 0;
    let max = fmt.max.map(|m| ir::operand(call, m));
    if !buf_ok
        || !is_kind(call, LLVMTypeKind::LLVMIntegerTypeKind)
        || max.is_some_and(|m| !is_kind(m, LLVMTypeKind::LLVMIntegerTypeKind))
    {
        return false;
    }
    let site = ctx.sites.add_for(call, &ctx.function_name(f));
    let i64_ty = ctx.hooks.i64_ty;
    // SAFETY: `call` is a live call, never a terminator, so an instruction follows it; the
    // builder is positioned before that one, right after the call.
    unsafe {
        LLVMPositionBuilderBefore(ctx.builder, LLVMGetNextInstruction(call));
        let max = match max {
            // The length is a size_t.
            Some(m) => LLVMBuildIntCast2(ctx.builder, m, i64_ty, 0, c"".as_ptr()),
            None => LLVMConstAllOnes(i64_ty),
        };
        // The result is an int, negative on error.
        let ret = LLVMBuildIntCast2(ctx.builder, call, i64_ty, 1, c"".as_ptr());
        let hook = ctx.hooks.printf_written;
        hooks::call(
            ctx.builder,
            hook,
            &mut [buf, max, ret, site],
            hooks::debug_loc(call),
        );
    }
    true
}
