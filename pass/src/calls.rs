//! Call rewriting: pthread and libc memory/string calls into the runtime's wrappers.
//!
//! Takes one function; rewrites every direct `call`/`invoke` of a function named in
//! `abi::WRAPPED_CALLS` into a call of `abi::wrapper_name(name)` with the same arguments plus a
//! trailing `ptr site`, and the same return type; in `main`, puts the end-of-process hook before
//! every `ret`. Gives the map from each replaced call to its
//! replacement, for the wait-loop markers that refer to values by handle.
//!
//! Rewriting in the pass, rather than interposing symbols at link time, works alike for static and
//! dynamic links and sees calls that libstdc++ makes from inline functions (std::mutex).

use std::collections::HashMap;
use std::ffi::CString;

use ilgen_trace::abi;
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode;

use crate::driver::Ctx;
use crate::hooks;
use crate::ir;

/// Rewrites the wrapped calls of `f`; returns old call → new call. With `memory` false (the
/// function is excluded from memory instrumentation) only synchronization calls are rewritten:
/// the libc memory and string wrappers record byte ranges, which are memory accesses.
pub fn rewrite_calls(
    ctx: &mut Ctx,
    f: LLVMValueRef,
    memory: bool,
) -> HashMap<LLVMValueRef, LLVMValueRef> {
    let mut replaced = HashMap::new();
    for call in collect(f) {
        if !memory && !wrapped_callee(call).is_some_and(|n| is_sync(&n)) {
            continue;
        }
        if let Some(new) = rewrite(ctx, f, call) {
            replaced.insert(call, new);
        }
    }
    replaced
}

/// The wrapped calls of `f`, collected before any is replaced.
fn collect(f: LLVMValueRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    for b in ir::blocks(f) {
        for i in ir::instructions(b) {
            if wrapped_callee(i).is_some() {
                out.push(i);
            }
        }
    }
    out
}

/// Whether a wrapped call is a synchronization operation (pthread or semaphore API, process
/// exit), which is always rewritten: a missed lock or join would make every later finding wrong.
pub fn is_sync(name: &str) -> bool {
    name.starts_with("pthread_") || name.starts_with("sem_") || abi::EXIT_CALLS.contains(&name)
}

/// Puts `__ilgen_main_return(site)` before every `ret` of `f` if it is `main`: the return from
/// `main` ends the process like `exit()`, whose calls [`rewrite_calls`] rewrites. Returns how many
/// calls it inserted.
pub fn mark_main_return(ctx: &mut Ctx, f: LLVMValueRef) -> usize {
    if ir::name(f) != "main" {
        return 0;
    }
    let rets: Vec<LLVMValueRef> = ir::blocks(f)
        .into_iter()
        .flat_map(ir::instructions)
        .filter(|&i| ir::opcode(i) == Some(LLVMOpcode::LLVMRet))
        .collect();
    for &ret in &rets {
        let site = ctx.sites.add_for(ret, "main");
        // SAFETY: `ret` is a live instruction of `f`.
        unsafe { LLVMPositionBuilderBefore(ctx.builder, ret) };
        hooks::call(
            ctx.builder,
            ctx.hooks.main_return,
            &mut [site],
            hooks::debug_loc(ret),
        );
    }
    rets.len()
}

/// The callee's name if `inst` is a direct call or invoke of a wrapped function.
pub fn wrapped_callee(inst: LLVMValueRef) -> Option<String> {
    library_callee(inst).filter(|n| abi::is_wrapped(n))
}

/// The callee's name if `inst` is a direct call or invoke of a function the program does not
/// define (a library function).
pub fn library_callee(inst: LLVMValueRef) -> Option<String> {
    if !matches!(
        ir::opcode(inst),
        Some(LLVMOpcode::LLVMCall | LLVMOpcode::LLVMInvoke)
    ) {
        return None;
    }
    let callee = ir::direct_callee(inst)?;
    // A program that defines its own `strlen` (or a static helper of that name) means its own
    // function: the wrapper would call libc's instead. Its body is instrumented like any other.
    // An `available_externally` body (a gnu_inline header copy) still names the library's symbol.
    if !ir::is_declaration(callee) && !ir::is_available_externally(callee) {
        return None;
    }
    Some(ir::name(callee))
}

fn rewrite(ctx: &mut Ctx, f: LLVMValueRef, call: LLVMValueRef) -> Option<LLVMValueRef> {
    let name = wrapped_callee(call)?;
    // SAFETY: `call` is a live call or invoke of a declared function; the builder is positioned
    // before it and the old instruction is erased only after all its uses moved to the new one.
    unsafe {
        let fn_ty = LLVMGetCalledFunctionType(call);
        // None of the wrapped functions is variadic; a variadic call type means a mismatched
        // prototype we cannot forward faithfully, so leave it alone.
        if LLVMIsFunctionVarArg(fn_ty) != 0 {
            return None;
        }
        let n_params = LLVMCountParamTypes(fn_ty) as usize;
        let mut params = vec![std::ptr::null_mut(); n_params];
        LLVMGetParamTypes(fn_ty, params.as_mut_ptr());
        params.push(ctx.hooks.ptr_ty);
        let ret = LLVMGetReturnType(fn_ty);
        let wrapper_ty = LLVMFunctionType(ret, params.as_mut_ptr(), params.len() as u32, 0);
        let wrapper = hooks::get_or_declare(ctx.module, &abi::wrapper_name(&name), wrapper_ty);

        let n_args = ir::num_call_args(call);
        let mut args: Vec<LLVMValueRef> = (0..n_args).map(|i| ir::operand(call, i)).collect();
        args.push(ctx.sites.add_for(call, &ctx.function_name(f)));

        LLVMPositionBuilderBefore(ctx.builder, call);
        let new = if ir::opcode(call) == Some(LLVMOpcode::LLVMInvoke) {
            LLVMBuildInvoke2(
                ctx.builder,
                wrapper_ty,
                wrapper,
                args.as_mut_ptr(),
                args.len() as u32,
                LLVMGetNormalDest(call),
                LLVMGetUnwindDest(call),
                c"".as_ptr(),
            )
        } else {
            LLVMBuildCall2(
                ctx.builder,
                wrapper_ty,
                wrapper,
                args.as_mut_ptr(),
                args.len() as u32,
                c"".as_ptr(),
            )
        };
        LLVMSetInstructionCallConv(new, LLVMGetInstructionCallConv(call));
        hooks::set_debug_loc(new, hooks::debug_loc(call));
        let old_name = CString::new(ir::name(call)).unwrap_or_default();
        if LLVMGetTypeKind(ret) != llvm_sys::LLVMTypeKind::LLVMVoidTypeKind {
            LLVMReplaceAllUsesWith(call, new);
        }
        LLVMInstructionEraseFromParent(call);
        if !old_name.as_bytes().is_empty() {
            LLVMSetValueName2(new, old_name.as_ptr(), old_name.as_bytes().len());
        }
        Some(new)
    }
}
