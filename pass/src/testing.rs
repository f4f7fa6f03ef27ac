//! Test support: parses LLVM IR text into a module and hands its raw handle to a test.

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use llvm_sys::prelude::LLVMModuleRef;

/// Parses `ir_text` and runs `f` on the module; panics with LLVM's message on a parse error.
pub fn with_module<R>(ir_text: &str, f: impl FnOnce(LLVMModuleRef) -> R) -> R {
    let ctx = Context::create();
    let buf = MemoryBuffer::create_from_memory_range_copy(ir_text.as_bytes(), "test");
    let module = ctx
        .create_module_from_ir(buf)
        .unwrap_or_else(|e| panic!("bad test IR: {}", e.to_string()));
    f(module.as_mut_ptr())
}

/// Verifies the module, panicking with LLVM's report when it is broken.
pub fn verify(m: LLVMModuleRef) {
    use llvm_sys::analysis::{LLVMVerifierFailureAction, LLVMVerifyModule};
    let mut msg = std::ptr::null_mut();
    // SAFETY: live module; the message is owned by us and leaked in the (failing) test.
    let broken = unsafe {
        LLVMVerifyModule(
            m,
            LLVMVerifierFailureAction::LLVMReturnStatusAction,
            &mut msg,
        )
    };
    if broken != 0 {
        panic!("module does not verify: {}", crate::ir::cstr(msg));
    }
}
