//! Rust declarations of the C++ glue's extern "C" functions (src/glue.cpp), wrapped safely.
//!
//! Takes live inkwell handles; gives the IR utilities neither inkwell nor the C API has.

use inkwell::basic_block::BasicBlock;
use inkwell::module::Module;
use inkwell::values::{AsValueRef, GlobalValue, InstructionValue};
use llvm_sys::prelude::*;

extern "C" {
    fn ilgen_split_critical_edge(term: LLVMValueRef, index: u32) -> LLVMBasicBlockRef;
    fn ilgen_append_to_compiler_used(module: LLVMModuleRef, global: LLVMValueRef);
    pub(crate) fn ilgen_plugin_info() -> PassPluginLibraryInfo;
}

/// `llvm::PassPluginLibraryInfo`, returned by value through the C ABI.
#[repr(C)]
pub struct PassPluginLibraryInfo {
    pub api_version: u32,
    pub plugin_name: *const std::ffi::c_char,
    pub plugin_version: *const std::ffi::c_char,
    pub register_pass_builder_callbacks: Option<unsafe extern "C" fn(*mut std::ffi::c_void)>,
}

/// Splits the edge from `term`'s block to its successor `index`; the new block, or `None` when
/// LLVM cannot split it (edges into EH pads).
pub fn split_critical_edge<'ctx>(
    term: InstructionValue<'ctx>,
    index: u32,
) -> Option<BasicBlock<'ctx>> {
    // SAFETY: `term` is a live instruction (the glue checks that it is a terminator and the
    // index); the glue returns a new block of the same function, or null (None).
    unsafe { BasicBlock::new(ilgen_split_critical_edge(term.as_value_ref(), index)) }
}

pub fn append_to_compiler_used(module: &Module<'_>, global: GlobalValue<'_>) {
    // SAFETY: live module and one of its globals.
    unsafe { ilgen_append_to_compiler_used(module.as_mut_ptr(), global.as_value_ref()) }
}
