//! Rust declarations of the C++ glue's extern "C" functions (src/glue.cpp), wrapped safely.
//!
//! Takes live LLVM handles; gives the IR utilities the C API lacks.

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
pub fn split_critical_edge(term: LLVMValueRef, index: u32) -> Option<LLVMBasicBlockRef> {
    // SAFETY: `term` is a live terminator; the glue checks the index.
    let b = unsafe { ilgen_split_critical_edge(term, index) };
    (!b.is_null()).then_some(b)
}

pub fn append_to_compiler_used(module: LLVMModuleRef, global: LLVMValueRef) {
    // SAFETY: live module and global.
    unsafe { ilgen_append_to_compiler_used(module, global) }
}
