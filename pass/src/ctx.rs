//! The state every instrumentation step shares for one module.
//!
//! Takes the module's builder, hook declarations and site table (made by the driver); gives the
//! steps (`instrument`, `printf`, `calls`, `loops`) one value to work through, so that they depend
//! on this module and not on the driver that calls them.

use llvm_sys::prelude::*;

use crate::hooks::Hooks;
use crate::ir;
use crate::sites::Sites;

/// What every step shares for one module.
pub struct Ctx {
    pub module: LLVMModuleRef,
    pub builder: LLVMBuilderRef,
    pub hooks: Hooks,
    pub sites: Sites,
    pub source: String,
}

impl Ctx {
    pub fn function_name(&self, f: LLVMValueRef) -> String {
        ir::name(f)
    }
}
