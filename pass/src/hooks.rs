//! The runtime callbacks, declared once per module.
//!
//! Takes the module; gives [`Hooks`], the declarations of every `__ilgen_*` hook of
//! [`ilgen_trace::abi`] with their function types, and [`Hooks::call`] to emit a call to one.
//! Wrapper declarations (`__ilgen_wrap_NAME`) depend on the callee's type and live in `calls.rs`.

use std::ffi::CString;

use ilgen_trace::abi;
use llvm_sys::core::*;
use llvm_sys::prelude::*;

/// One declared hook.
#[derive(Clone, Copy)]
pub struct Hook {
    pub ty: LLVMTypeRef,
    pub func: LLVMValueRef,
}

pub struct Hooks {
    pub read: Hook,
    pub write: Hook,
    pub atomic_read: Hook,
    pub atomic_write: Hook,
    pub wait_loop_enter: Hook,
    pub wait_loop_exit: Hook,
    pub printf_written: Hook,
    pub main_return: Hook,
    pub ptr_ty: LLVMTypeRef,
    pub i64_ty: LLVMTypeRef,
}

impl Hooks {
    pub fn declare(module: LLVMModuleRef) -> Hooks {
        // SAFETY: live module.
        unsafe {
            let ctx = LLVMGetModuleContext(module);
            let ptr_ty = LLVMPointerTypeInContext(ctx, 0);
            let i64_ty = LLVMInt64TypeInContext(ctx);
            let void_ty = LLVMVoidTypeInContext(ctx);
            // void (const void *addr, uint64_t size, const void *site)
            let mut access = [ptr_ty, i64_ty, ptr_ty];
            let access_ty = LLVMFunctionType(void_ty, access.as_mut_ptr(), 3, 0);
            // void (const void *cond, const void *site)
            let mut marker = [ptr_ty, ptr_ty];
            let marker_ty = LLVMFunctionType(void_ty, marker.as_mut_ptr(), 2, 0);
            // void (void *buf, uint64_t max, int64_t ret, const void *site)
            let mut written = [ptr_ty, i64_ty, i64_ty, ptr_ty];
            let written_ty = LLVMFunctionType(void_ty, written.as_mut_ptr(), 4, 0);
            // void (const void *site)
            let mut site = [ptr_ty];
            let site_ty = LLVMFunctionType(void_ty, site.as_mut_ptr(), 1, 0);
            let decl = |name: &str, ty| Hook {
                ty,
                func: get_or_declare(module, name, ty),
            };
            Hooks {
                read: decl(abi::READ, access_ty),
                write: decl(abi::WRITE, access_ty),
                atomic_read: decl(abi::ATOMIC_READ, access_ty),
                atomic_write: decl(abi::ATOMIC_WRITE, access_ty),
                wait_loop_enter: decl(abi::WAIT_LOOP_ENTER, marker_ty),
                wait_loop_exit: decl(abi::WAIT_LOOP_EXIT, marker_ty),
                printf_written: decl(abi::PRINTF_WRITTEN, written_ty),
                main_return: decl(abi::MAIN_RETURN, site_ty),
                ptr_ty,
                i64_ty,
            }
        }
    }

    /// Removes the declarations no call uses, so an untouched module stays untouched.
    pub fn remove_unused(&self) {
        for h in [
            self.read,
            self.write,
            self.atomic_read,
            self.atomic_write,
            self.wait_loop_enter,
            self.wait_loop_exit,
            self.printf_written,
            self.main_return,
        ] {
            // SAFETY: live function declarations created or found by `declare`.
            unsafe {
                if LLVMGetFirstUse(h.func).is_null() && LLVMIsDeclaration(h.func) != 0 {
                    LLVMDeleteFunction(h.func);
                }
            }
        }
    }
}

/// The function `name` of the module, declared with `ty` when absent. An existing function of
/// another type is returned as is: with opaque pointers a call may use any function type.
pub fn get_or_declare(module: LLVMModuleRef, name: &str, ty: LLVMTypeRef) -> LLVMValueRef {
    let cname = CString::new(name).expect("hook names have no NUL");
    // SAFETY: live module.
    unsafe {
        let f = LLVMGetNamedFunction(module, cname.as_ptr());
        if !f.is_null() {
            return f;
        }
        LLVMAddFunction(module, cname.as_ptr(), ty)
    }
}

/// Emits `hook(args...)` at the builder's position with the debug location `dbg` (may be null).
pub fn call(
    builder: LLVMBuilderRef,
    hook: Hook,
    args: &mut [LLVMValueRef],
    dbg: LLVMMetadataRef,
) -> LLVMValueRef {
    // SAFETY: live builder positioned in a block; args match the hook's type.
    unsafe {
        let c = LLVMBuildCall2(
            builder,
            hook.ty,
            hook.func,
            args.as_mut_ptr(),
            args.len() as u32,
            c"".as_ptr(),
        );
        set_debug_loc(c, dbg);
        c
    }
}

/// Gives `inst` the debug location `dbg` (null clears it).
pub fn set_debug_loc(inst: LLVMValueRef, dbg: LLVMMetadataRef) {
    // SAFETY: live instruction; null is accepted by the C API.
    unsafe { llvm_sys::debuginfo::LLVMInstructionSetDebugLoc(inst, dbg) }
}

pub fn debug_loc(inst: LLVMValueRef) -> LLVMMetadataRef {
    // SAFETY: live instruction.
    unsafe { llvm_sys::debuginfo::LLVMInstructionGetDebugLoc(inst) }
}
