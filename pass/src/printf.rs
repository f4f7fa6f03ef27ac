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

use ilgen_trace::abi;
use inkwell::builder::BuilderError;
use inkwell::types::AnyTypeEnum;
use inkwell::values::{BasicValueEnum, FunctionValue, InstructionValue, IntValue};
use inkwell::AddressSpace;

use crate::calls;
use crate::ctx::Ctx;
use crate::hooks;
use crate::ir;

/// Follows every formatting call of `f` with the hook; returns how many it inserted.
pub fn record_written<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
) -> Result<usize, BuilderError> {
    let found: Vec<_> = calls::library_calls(f)
        .into_iter()
        .filter_map(|(i, name)| Some((i, abi::formatted(&name)?)))
        .collect();
    let mut n = 0;
    for (call, fmt) in found {
        n += emit(ctx, f, call, fmt)? as usize;
    }
    Ok(n)
}

/// Emits the hook after `call`, unless the call does not have the shape of its C prototype (a
/// program that declared it otherwise): then we cannot tell what it wrote.
fn emit<'ctx>(
    ctx: &mut Ctx<'_, 'ctx>,
    f: FunctionValue<'ctx>,
    call: InstructionValue<'ctx>,
    fmt: abi::Formatted,
) -> Result<bool, BuilderError> {
    let n_args = ir::num_call_args(call);
    if fmt.buf >= n_args || fmt.max.is_some_and(|m| m >= n_args) {
        return Ok(false);
    }
    let buf = match ir::operand(call, fmt.buf) {
        Some(BasicValueEnum::PointerValue(p))
            if p.get_type().get_address_space() == AddressSpace::default() =>
        {
            p
        }
        _ => return Ok(false),
    };
    let max = match fmt.max.map(|m| ir::operand(call, m)) {
        None => None,
        Some(Some(BasicValueEnum::IntValue(m))) => Some(m),
        Some(_) => return Ok(false),
    };
    if !matches!(call.get_type(), AnyTypeEnum::IntType(_)) {
        return Ok(false);
    }
    let (Ok(result), Some(next)) = (IntValue::try_from(call), call.get_next_instruction()) else {
        return Ok(false);
    };
    let site = ctx.sites.add_for(call, &ir::function_name(f));
    let i64_ty = ctx.hooks.i64_ty;
    // `call` is never a terminator, so an instruction follows it; the hook goes right before it.
    ctx.builder.position_before(&next);
    let max = match max {
        // The length is a size_t.
        Some(m) => ctx.builder.build_int_cast_sign_flag(m, i64_ty, false, "")?,
        None => i64_ty.const_all_ones(),
    };
    // The result is an int, negative on error.
    let ret = ctx
        .builder
        .build_int_cast_sign_flag(result, i64_ty, true, "")?;
    hooks::call(
        &ctx.builder,
        ctx.hooks.printf_written,
        &[buf.into(), max.into(), ret.into(), site.into()],
        call.get_debug_location(),
    )?;
    Ok(true)
}
