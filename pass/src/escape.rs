//! Escape analysis for stack slots.
//!
//! Takes a function; gives the set of its `alloca`s whose address never leaves the function's own
//! loads and stores. Another thread can only reach a stack slot through its address, so accesses
//! to these cannot race and are not instrumented (TSan's pass makes the same call with
//! `PointerMayBeCaptured`; this is a deliberately simple, conservative version of it).
//!
//! An address stays local while it is used only as the pointer operand of a load or store, through
//! GEPs, bitcasts and addrspacecasts (recursively), by `llvm.lifetime.*` markers, or as the
//! pointer argument of `llvm.memcpy/memmove/memset` (they read or write the bytes, they do not keep
//! the address), or as an out-parameter that a pthread call fills in for the calling thread only
//! (see [`OUT_PARAMS`]). Any other use escapes: stored as a value, passed to a call, `ptrtoint`, returned,
//! merged by a phi/select, compared, used by an atomic.

use std::collections::HashSet;

use inkwell::values::{
    BasicValue, BasicValueEnum, FunctionValue, InstructionOpcode, InstructionValue,
};

use crate::ir;

/// The function's allocas that do not escape.
pub fn local_allocas(f: FunctionValue<'_>) -> HashSet<InstructionValue<'_>> {
    ir::all_instructions(f)
        .into_iter()
        .filter(|&i| i.get_opcode() == InstructionOpcode::Alloca && !escapes(i, 0))
        .collect()
}

/// Whether the address `v` (an alloca or a pointer derived from it) escapes. `depth` bounds the
/// recursion through GEP/cast chains: a chain deeper than this is treated as escaping.
fn escapes(v: InstructionValue<'_>, depth: u32) -> bool {
    if depth > 32 {
        return true;
    }
    // A constant or metadata user of an instruction does not exist in valid IR; stay safe.
    let Some(uses) = ir::uses(v) else {
        return true;
    };
    for (user, idx) in uses {
        let stays_local = match user.get_opcode() {
            InstructionOpcode::Load => true,
            // Operand 0 of a store is the stored value: storing the address publishes it.
            InstructionOpcode::Store => idx == 1,
            InstructionOpcode::GetElementPtr => idx == 0 && !escapes(user, depth + 1),
            InstructionOpcode::BitCast | InstructionOpcode::AddrSpaceCast => {
                !escapes(user, depth + 1)
            }
            InstructionOpcode::Call => is_non_capturing_intrinsic(user) || is_out_param(user, idx),
            _ => false,
        };
        if !stays_local {
            return true;
        }
    }
    false
}

/// Intrinsics that take a pointer without keeping it. Their other arguments (a length, a
/// volatile flag) are never pointers, so any use of the address by them is a pointer argument.
fn is_non_capturing_intrinsic(call: InstructionValue<'_>) -> bool {
    let Some(callee) = ir::direct_callee(call) else {
        return false;
    };
    let name = ir::function_name(callee);
    [
        "llvm.lifetime.start",
        "llvm.lifetime.end",
        "llvm.memcpy.",
        "llvm.memcpy.inline.",
        "llvm.memmove.",
        "llvm.memset.",
        "llvm.memset.inline.",
        "llvm.dbg.",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// Pthread calls whose argument `.1` is written for the calling thread and never handed to another
/// one: the new thread never sees `&t` of `pthread_create(&t, ...)`, and `pthread_join`'s result
/// slot is filled in before it returns to the joiner. Without this, every `pthread_t t` local
/// would count as shared and its later read (for the join) would show up in the trace.
/// Instrumentation runs before the call rewriting, so the names are the original ones.
const OUT_PARAMS: &[(&str, u32)] = &[("pthread_create", 0), ("pthread_join", 1)];

fn is_out_param(call: InstructionValue<'_>, operand: u32) -> bool {
    let Some(callee) = ir::direct_callee(call) else {
        return false;
    };
    let name = ir::function_name(callee);
    OUT_PARAMS
        .iter()
        .any(|&(f, arg)| f == name && arg == operand)
}

/// Whether `ptr` is (derived from) one of `locals`.
pub fn points_to_local<'ctx>(
    ptr: BasicValueEnum<'ctx>,
    locals: &HashSet<InstructionValue<'ctx>>,
) -> bool {
    ir::underlying_object(ptr)
        .as_instruction_value()
        .is_some_and(|i| locals.contains(&i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::with_module;

    #[test]
    fn loads_stores_geps_and_lifetime_stay_local_everything_else_escapes() {
        let ir_text = r#"
declare void @g(ptr)
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare void @llvm.lifetime.start.p0(i64, ptr)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
@sink = global ptr null

define i32 @f(i32 %x) {
  %local = alloca i32
  %arr = alloca [4 x i32]
  %passed = alloca i32
  %stored = alloca i32
  %casted = alloca i32
  %phi_ed = alloca i32
  %handle = alloca i64
  %arg = alloca i32
  %c = call i32 @pthread_create(ptr %handle, ptr null, ptr @g, ptr %arg)
  %h = load i64, ptr %handle
  call void @llvm.lifetime.start.p0(i64 4, ptr %local)
  store i32 %x, ptr %local
  %e = getelementptr [4 x i32], ptr %arr, i64 0, i64 1
  store i32 1, ptr %e
  call void @llvm.memset.p0.i64(ptr %arr, i8 0, i64 16, i1 false)
  call void @g(ptr %passed)
  store ptr %stored, ptr @sink
  %i = ptrtoint ptr %casted to i64
  %sel = select i1 true, ptr %phi_ed, ptr %local
  %v = load i32, ptr %sel
  %r = load i32, ptr %local
  ret i32 %r
}
"#;
        with_module(ir_text, |m| {
            let f = m.get_function("f").unwrap();
            let locals = local_allocas(f);
            let mut names: Vec<String> = locals
                .iter()
                .map(|a| a.get_name().unwrap().to_string_lossy().into_owned())
                .collect();
            names.sort();
            // %local escapes through the select even though it is also loaded directly; the
            // thread handle is written for the creator only, the thread's argument is shared.
            assert_eq!(names, vec!["arr", "handle"]);
        });
    }
}
