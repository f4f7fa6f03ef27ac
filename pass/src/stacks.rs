//! Shadow call stacks: the function entry, call, exit and unwind hooks replay's reports need.
//!
//! Takes one function; gives it, behind one load of the runtime's `__ilgen_stacks` flag on entry
//! and an unlikely branch per hook (the glue's `ilgen_stack_hooks`), `__ilgen_func_enter(ret)` on
//! entry (`ret` its return address, a frame of the caller even when that is uninstrumented code:
//! libstdc++'s thread trampoline, libc's call of `main`), `__ilgen_func_call(site)` before every
//! call it makes (the call's own site, so a stack frame is the line of the call, with the library
//! code inlined there, as an access's site is), `__ilgen_func_exit()` before every return and
//! `__ilgen_func_unwound(depth)` after every landing pad. The runtime sets the flag only in replay
//! mode: recording pays the load and a predicted branch per hook, no call. Replay keeps each
//! thread's stack of call sites from them and reports it under each access and lock
//! (`rt/src/replay/stack.rs`).
//!
//! Calls of the runtime (hooks and wrappers) and of intrinsics get no hook: they are the
//! operations themselves, whose sites the reports already have. Inline assembly is no call.

use ilgen_trace::abi;
use inkwell::module::Module;
use inkwell::values::{AsValueRef, FunctionValue};
use inkwell::values::{InstructionOpcode, InstructionValue, PointerValue};
use llvm_sys::core::{LLVMGetCalledValue, LLVMIsAInlineAsm};

use crate::ctx::Ctx;
use crate::glue;
use crate::ir;

/// Whether `i` is a call the stack follows: a call or invoke of a program function, direct or
/// through a pointer.
fn followed_call(i: InstructionValue<'_>) -> bool {
    if !matches!(
        i.get_opcode(),
        InstructionOpcode::Call | InstructionOpcode::Invoke
    ) {
        return false;
    }
    match ir::direct_callee(i) {
        Some(f) => {
            let name = ir::function_name(f);
            !name.starts_with("llvm.") && !name.starts_with(abi::RUNTIME_PREFIX)
        }
        // SAFETY: `i` is a live call or invoke: its called operand exists.
        None => unsafe { LLVMIsAInlineAsm(LLVMGetCalledValue(i.as_value_ref())).is_null() },
    }
}

/// The runtime's flag, declared in the module once.
fn flag<'ctx>(module: &Module<'ctx>) -> PointerValue<'ctx> {
    module
        .get_global(abi::STACKS_FLAG)
        .unwrap_or_else(|| {
            module.add_global(module.get_context().i8_type(), None, abi::STACKS_FLAG)
        })
        .as_pointer_value()
}

/// Puts the shadow-stack hooks into `f`; returns how many (0 when `f` cannot take them, or calls
/// nothing, not even the runtime: no report can name a line of it, nor of anything it calls).
pub fn add_hooks<'ctx>(ctx: &mut Ctx<'_, 'ctx>, f: FunctionValue<'ctx>) -> usize {
    if !ir::all_instructions(f)
        .into_iter()
        .any(|i| ir::call_site(i).is_some())
    {
        return 0;
    }
    let name = ir::function_name(f);
    let calls: Vec<_> = ir::all_instructions(f)
        .into_iter()
        .filter(|&i| followed_call(i))
        .map(|i| (i, ctx.sites.add_for(i, &name)))
        .collect();
    let h = &ctx.hooks;
    let hooks = [h.func_enter, h.func_call, h.func_exit, h.func_unwound];
    if glue::stack_hooks(f, flag(ctx.module), hooks, &calls) {
        1 + calls.len()
    } else {
        0
    }
}
