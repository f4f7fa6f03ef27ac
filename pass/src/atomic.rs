//! Atomic blocks: the functions the program marks `ILGEN_ATOMIC`, and their begin/end markers.
//!
//! Takes a module at the start of the pipeline and the pass's [`Filter`]; [`marked_functions`]
//! reads the functions that `llvm.global.annotations` lists with the annotation
//! `ilgen_trace::abi::ATOMIC_ANNOTATION` (`__attribute__((annotate("ilgen_atomic")))`, what
//! `ilgen.h`'s `ILGEN_ATOMIC` expands to) and those the filter's `atomic=fun:GLOB` names, and
//! [`insert_markers`] puts `__ilgen_tx_begin(site)` at the entry of each and
//! `__ilgen_tx_end(site)` before each of its exits (`ret`, and `resume` when an exception leaves
//! it). A module that marks nothing is left alone.
//!
//! Why at the start of the pipeline: the inliner would otherwise dissolve a marked function
//! into its callers before the instrumentation at the end of the pipeline could find its entry
//! and exits; markers inserted first travel with the inlined body. Like the wait-loop markers
//! they carry a null site until [`crate::loops::assign_marker_sites`] gives them one. Nesting
//! (a marked function calling another) is left to the runtime, which records only the outermost
//! block (`rt/src/intercept/atomic.rs`).

use ilgen_trace::abi;
use inkwell::builder::BuilderError;
use inkwell::module::{Linkage, Module};
use inkwell::values::{AsValueRef, FunctionValue, InstructionOpcode, InstructionValue};
use llvm_sys::core::{
    LLVMGetAsString, LLVMGetInitializer, LLVMGetNumOperands, LLVMGetOperand,
    LLVMIsAConstantDataArray, LLVMIsAFunction, LLVMIsAGlobalVariable,
};
use llvm_sys::debuginfo::{
    LLVMDIBuilderCreateDebugLocation, LLVMDISubprogramGetLine, LLVMInstructionSetDebugLoc,
};

use crate::hooks;
use crate::ir;
use crate::loops::Markers;
use crate::options::Filter;

/// The global LLVM lists annotated functions in: an array of `{ ptr fn, ptr str, ptr file,
/// i32 line, ptr args }`.
const ANNOTATIONS: &str = "llvm.global.annotations";

/// Makes `ilgen.h`'s weak declarations of the markers strong: a weak reference would not pull
/// the runtime's definitions out of its archive, and the blocks would go unrecorded. Gives
/// whether it changed one.
pub fn strengthen_marker_declarations(module: &Module<'_>) -> bool {
    let mut changed = false;
    for name in [abi::TX_BEGIN, abi::TX_END] {
        if let Some(f) = module.get_function(name) {
            if ir::is_declaration(f) && f.get_linkage() == Linkage::ExternalWeak {
                f.set_linkage(Linkage::External);
                changed = true;
            }
        }
    }
    changed
}

/// The functions `module` defines that are annotated `ilgen_atomic` or that `filter` names atomic.
pub fn marked_functions<'ctx>(module: &Module<'ctx>, filter: &Filter) -> Vec<FunctionValue<'ctx>> {
    let mut out: Vec<FunctionValue<'ctx>> = module
        .get_functions()
        .filter(|&f| !ir::is_declaration(f) && filter.atomic(&ir::function_name(f)))
        .collect();
    let Some(list) = module.get_global(ANNOTATIONS) else {
        return out;
    };
    // inkwell reads no operands of constant aggregates; llvm-sys does.
    // SAFETY: `list` is a live global of this module; every operand read is checked for its kind
    // before use, and out-of-range indices are never asked for.
    unsafe {
        let array = LLVMGetInitializer(list.as_value_ref());
        if array.is_null() {
            return out;
        }
        for i in 0..LLVMGetNumOperands(array).max(0) as u32 {
            let entry = LLVMGetOperand(array, i);
            if entry.is_null() || LLVMGetNumOperands(entry) < 2 {
                continue;
            }
            let (func, text) = (LLVMGetOperand(entry, 0), LLVMGetOperand(entry, 1));
            if LLVMIsAFunction(func).is_null() || LLVMIsAGlobalVariable(text).is_null() {
                continue;
            }
            let init = LLVMGetInitializer(text);
            if init.is_null() || LLVMIsAConstantDataArray(init).is_null() {
                continue;
            }
            let Some(f) = module
                .get_functions()
                .find(|f| f.as_value_ref() == func)
                .filter(|&f| !ir::is_declaration(f))
            else {
                continue;
            };
            let mut len = 0;
            let name = ir::bytes_to_string(LLVMGetAsString(init, &mut len), len);
            if name.trim_end_matches('\0') == abi::ATOMIC_ANNOTATION && !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// The instruction the entry markers of `f` go before: the first of its entry block after the
/// leading allocas, which must stay first for the promotion to registers.
pub fn entry_point(f: FunctionValue<'_>) -> Option<InstructionValue<'_>> {
    ir::instructions(f.get_first_basic_block()?)
        .into_iter()
        .find(|i| i.get_opcode() != InstructionOpcode::Alloca)
}

/// Gives `marker` the line of `f`'s own declaration, the site a block that begins with the
/// function has; nothing without debug info.
pub fn locate_at_function_line<'ctx>(
    m: &Markers<'ctx>,
    f: FunctionValue<'ctx>,
    marker: InstructionValue<'ctx>,
) {
    let Some(sp) = f.get_subprogram() else {
        return;
    };
    // inkwell builds locations only through a debug-info builder of a new compile unit, llvm-sys
    // from the context alone.
    // SAFETY: live context, subprogram and instruction of this module.
    unsafe {
        let line = LLVMDISubprogramGetLine(sp.as_mut_ptr());
        let ctx = m.context.raw();
        let loc =
            LLVMDIBuilderCreateDebugLocation(ctx, line, 0, sp.as_mut_ptr(), std::ptr::null_mut());
        LLVMInstructionSetDebugLoc(marker.as_value_ref(), loc);
    }
}

/// Puts the begin marker at `f`'s entry ([`entry_point`]) and an end marker before each exit;
/// returns how many it put.
pub fn insert_markers<'ctx>(
    m: &Markers<'ctx>,
    f: FunctionValue<'ctx>,
) -> Result<usize, BuilderError> {
    let Some(first) = entry_point(f) else {
        return Ok(0);
    };
    let exits: Vec<_> = ir::all_instructions(f)
        .into_iter()
        .filter(|i| {
            matches!(
                i.get_opcode(),
                InstructionOpcode::Return | InstructionOpcode::Resume
            )
        })
        .collect();
    let null = m.hooks.ptr_ty.const_null();
    m.builder.position_before(&first);
    hooks::call(&m.builder, m.hooks.tx_begin, &[null.into()], None)?;
    if let Some(begin) = first.get_previous_instruction() {
        // The begin's site is the function's own line.
        locate_at_function_line(m, f, begin);
    }
    for exit in &exits {
        m.builder.position_before(exit);
        hooks::call(
            &m.builder,
            m.hooks.tx_end,
            &[null.into()],
            exit.get_debug_location(),
        )?;
    }
    Ok(1 + exits.len())
}
