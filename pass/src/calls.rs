//! Call rewriting: pthread and libc memory/string calls into the runtime's wrappers.
//!
//! Takes one function; rewrites every direct `call`/`invoke` of a function named in
//! `abi::WRAPPED_CALLS` into a call of `abi::wrapper_name(name)` with the same arguments plus a
//! trailing `ptr site`, and the same return type; in `main`, puts the end-of-process hook before
//! every `ret`; after every `sem_open` (variadic, so not wrapped), puts the hook that records the
//! count of the semaphore it returned. Gives the map from each replaced call to its
//! replacement, for the wait-loop markers that refer to values by handle.
//!
//! Rewriting in the pass, rather than interposing symbols at link time, works alike for static and
//! dynamic links and sees calls that libstdc++ makes from inline functions (std::mutex).

use std::collections::HashMap;

use ilgen_trace::abi;
use inkwell::builder::BuilderError;
use inkwell::types::{AnyTypeEnum, BasicMetadataTypeEnum, BasicType};
use inkwell::values::{
    BasicValue, BasicValueEnum, FunctionValue, InstructionOpcode, InstructionValue, PointerValue,
};

use crate::ctx::Ctx;
use crate::hooks;
use crate::ir;

/// Rewrites the wrapped calls of `f`; returns old call → new call. With `memory` false (the
/// function is excluded from memory instrumentation) only synchronization calls are rewritten:
/// the libc memory and string wrappers record byte ranges, which are memory accesses.
pub fn rewrite_calls<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
    memory: bool,
) -> Result<HashMap<InstructionValue<'ctx>, InstructionValue<'ctx>>, BuilderError> {
    let mut replaced = HashMap::new();
    for call in collect(f) {
        if !memory && !wrapped_callee(call).is_some_and(|n| is_sync(&n)) {
            continue;
        }
        if let Some(new) = rewrite(ctx, f, call)? {
            replaced.insert(call, new);
        }
    }
    Ok(replaced)
}

/// The wrapped calls of `f`, collected before any is replaced.
fn collect(f: FunctionValue<'_>) -> Vec<InstructionValue<'_>> {
    ir::all_instructions(f)
        .into_iter()
        .filter(|&i| wrapped_callee(i).is_some())
        .collect()
}

/// Whether a wrapped call is a synchronization operation (pthread or semaphore API, process
/// exit, a descriptor's close or creation), a read whose outcome replay gives back or a write
/// that orders it, which is always rewritten: a missed lock or join would make every later
/// finding wrong, and a read counted in one run and not the other would hand every later read
/// another's outcome.
pub fn is_sync(name: &str) -> bool {
    name.starts_with("pthread_")
        || name.starts_with("sem_")
        || abi::EXIT_CALLS.contains(&name)
        || abi::FD_CALLS.contains(&name)
        || abi::INPUT_CALLS.contains(&name)
        || abi::OUTPUT_CALLS.contains(&name)
}

/// Puts `__ilgen_main_return(site)` before every `ret` of `f` if it is `main`: the return from
/// `main` ends the process like `exit()`, whose calls [`rewrite_calls`] rewrites. Returns how many
/// calls it inserted.
pub fn mark_main_return<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
) -> Result<usize, BuilderError> {
    if ir::function_name(f) != "main" {
        return Ok(0);
    }
    let rets: Vec<_> = ir::all_instructions(f)
        .into_iter()
        .filter(|i| i.get_opcode() == InstructionOpcode::Return)
        .collect();
    for &ret in &rets {
        let site = ctx.sites.add_for(ret, "main");
        ctx.builder.position_before(&ret);
        hooks::call(
            &ctx.builder,
            ctx.hooks.main_return,
            &[site.into()],
            ret.get_debug_location(),
        )?;
    }
    Ok(rets.len())
}

/// Puts `__ilgen_sem_opened(sem, site)` right after every `call` of `sem_open` in `f` whose result
/// is a pointer: the semaphore's count is part of its synchronization, so this runs in every
/// function, like the rewriting of the other semaphore calls. `sem_open` is never called through
/// `invoke` (glibc declares it `nothrow`). Returns how many hooks it inserted.
pub fn mark_sem_open<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
) -> Result<usize, BuilderError> {
    let opens: Vec<_> = library_calls(f)
        .into_iter()
        .filter(|(i, name)| {
            name == abi::SEM_OPEN && matches!(i.get_type(), AnyTypeEnum::PointerType(_))
        })
        .map(|(i, _)| i)
        .collect();
    let mut n = 0;
    for call in opens {
        let (Ok(sem), Some(next)) = (PointerValue::try_from(call), call.get_next_instruction())
        else {
            continue;
        };
        let site = ctx.sites.add_for(call, &ir::function_name(f));
        ctx.builder.position_before(&next);
        hooks::call(
            &ctx.builder,
            ctx.hooks.sem_opened,
            &[sem.into(), site.into()],
            call.get_debug_location(),
        )?;
        n += 1;
    }
    Ok(n)
}

/// The direct `call`s (not invokes) of library functions in `f`, with the callee's name, collected
/// before the caller inserts anything.
pub fn library_calls(f: FunctionValue<'_>) -> Vec<(InstructionValue<'_>, String)> {
    ir::all_instructions(f)
        .into_iter()
        .filter(|i| i.get_opcode() == InstructionOpcode::Call)
        .filter_map(|i| Some((i, library_callee(i)?)))
        .collect()
}

/// The callee's name if `inst` is a direct call or invoke of a wrapped function.
pub fn wrapped_callee(inst: InstructionValue<'_>) -> Option<String> {
    library_callee(inst).filter(|n| abi::is_wrapped(n))
}

/// The callee's name if `inst` is a direct call or invoke of a function the program does not
/// define (a library function).
pub fn library_callee(inst: InstructionValue<'_>) -> Option<String> {
    let callee = ir::direct_callee(inst)?;
    // A program that defines its own `strlen` (or a static helper of that name) means its own
    // function: the wrapper would call libc's instead. Its body is instrumented like any other.
    // An `available_externally` body (a gnu_inline header copy) still names the library's symbol.
    if !ir::is_declaration(callee) && !ir::is_available_externally(callee) {
        return None;
    }
    Some(ir::function_name(callee))
}

/// Replaces `call` by a call of its wrapper; the new call, or `None` when `call` is left alone.
fn rewrite<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
    call: InstructionValue<'ctx>,
) -> Result<Option<InstructionValue<'ctx>>, BuilderError> {
    let (Some(name), Some(site_call)) = (wrapped_callee(call), ir::call_site(call)) else {
        return Ok(None);
    };
    let fn_ty = site_call.get_called_fn_type();
    let Some(mut args) = (0..site_call.count_arguments())
        .map(|i| ir::operand(call, i))
        .collect::<Option<Vec<BasicValueEnum<'ctx>>>>()
    else {
        return Ok(None);
    };
    let mut params = fn_ty.get_param_types();
    if fn_ty.is_var_arg() {
        // Only the variadic calls of abi::VARIADIC_CALLS have a wrapper of fixed arity, whose
        // trailing parameters are pointers; any other variadic call type is a mismatched
        // prototype we cannot forward faithfully, so leave it alone.
        let Some(arity) = abi::variadic_arity(&name) else {
            return Ok(None);
        };
        if args.len() > arity
            || args
                .iter()
                .skip(params.len())
                .any(|a| !a.is_pointer_value())
        {
            return Ok(None);
        }
        params.resize(arity, BasicMetadataTypeEnum::from(ctx.hooks.ptr_ty));
        args.resize(arity, ctx.hooks.ptr_ty.const_null().into());
    }
    params.push(BasicMetadataTypeEnum::from(ctx.hooks.ptr_ty));
    let wrapper_ty = match fn_ty.get_return_type() {
        Some(ret) => ret.fn_type(&params, false),
        None => ctx.module.get_context().void_type().fn_type(&params, false),
    };
    let wrapper = hooks::get_or_declare(ctx.module, &abi::wrapper_name(&name), wrapper_ty);
    args.push(
        ctx.sites
            .add_for(call, &ir::function_name(f))
            .as_basic_value_enum(),
    );

    ctx.builder.position_before(&call);
    let address = wrapper.as_global_value().as_pointer_value();
    let new = if call.get_opcode() == InstructionOpcode::Invoke {
        // An invoke's operands end with the normal destination, the unwind one, the callee.
        let n = call.get_num_operands();
        let (Some(normal), Some(unwind)) = (
            ir::block_operand(call, n - 3),
            ir::block_operand(call, n - 2),
        ) else {
            return Ok(None);
        };
        ctx.builder
            .build_indirect_invoke(wrapper_ty, address, &args, normal, unwind, "")?
    } else {
        let args: Vec<_> = args.into_iter().map(Into::into).collect();
        ctx.builder
            .build_indirect_call(wrapper_ty, address, &args, "")?
    };
    new.set_call_convention(site_call.get_call_convention());
    let Some(new_inst) = ir::instruction_of(new) else {
        return Ok(None);
    };
    new_inst.set_debug_location(call.get_debug_location());
    let old_name = call
        .get_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if fn_ty.get_return_type().is_some() {
        call.replace_all_uses_with(&new_inst);
    }
    call.erase_from_basic_block();
    if !old_name.is_empty() {
        // A void call has no name to move; only a named (non-void) one reaches here.
        let _ = new_inst.set_name(&old_name);
    }
    Ok(Some(new_inst))
}
