//! Test support: parses LLVM IR text into a module and hands it to a test.

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;

/// Parses `ir_text` and runs `f` on the module; panics with LLVM's message on a parse error.
pub fn with_module<R>(ir_text: &str, f: impl FnOnce(&Module<'_>) -> R) -> R {
    let ctx = Context::create();
    let buf = MemoryBuffer::create_from_memory_range_copy(ir_text.as_bytes(), "test");
    let module = ctx
        .create_module_from_ir(buf)
        .unwrap_or_else(|e| panic!("bad test IR: {}", e.to_string()));
    f(&module)
}

/// Verifies the module, panicking with LLVM's report when it is broken.
pub fn verify(m: &Module<'_>) {
    if let Err(msg) = m.verify() {
        panic!("module does not verify: {}", msg.to_string());
    }
}
