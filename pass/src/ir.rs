//! Thin, safe-to-call helpers over the LLVM C API (llvm-sys) that every other module uses.
//!
//! Takes raw `LLVMValueRef`/`LLVMBasicBlockRef` handles of a live module; gives iteration over
//! functions, blocks, instructions and uses, names as Rust strings, and classification helpers.
//! All functions are `unsafe`-free at the call site on the assumption (held by the whole crate)
//! that the handles come from the module being processed and are still alive.

use std::ffi::{c_char, CStr};

use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode;

/// A value's name (empty for unnamed values).
pub fn name(v: LLVMValueRef) -> String {
    let mut len = 0usize;
    // SAFETY: `v` is a live value; the returned pointer is valid for `len` bytes.
    unsafe {
        let p = LLVMGetValueName2(v, &mut len);
        bytes_to_string(p, len)
    }
}

pub(crate) unsafe fn bytes_to_string(p: *const c_char, len: usize) -> String {
    if p.is_null() {
        return String::new();
    }
    let bytes = std::slice::from_raw_parts(p as *const u8, len);
    String::from_utf8_lossy(bytes).into_owned()
}

pub(crate) fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null NUL-terminated string from LLVM or the glue.
    unsafe { CStr::from_ptr(p).to_string_lossy().into_owned() }
}

pub fn functions(m: LLVMModuleRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    unsafe {
        let mut f = LLVMGetFirstFunction(m);
        while !f.is_null() {
            out.push(f);
            f = LLVMGetNextFunction(f);
        }
    }
    out
}

pub fn blocks(f: LLVMValueRef) -> Vec<LLVMBasicBlockRef> {
    let mut out = Vec::new();
    unsafe {
        let mut b = LLVMGetFirstBasicBlock(f);
        while !b.is_null() {
            out.push(b);
            b = LLVMGetNextBasicBlock(b);
        }
    }
    out
}

pub fn instructions(b: LLVMBasicBlockRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    unsafe {
        let mut i = LLVMGetFirstInstruction(b);
        while !i.is_null() {
            out.push(i);
            i = LLVMGetNextInstruction(i);
        }
    }
    out
}

pub fn is_declaration(f: LLVMValueRef) -> bool {
    unsafe { LLVMIsDeclaration(f) != 0 }
}

pub fn is_available_externally(f: LLVMValueRef) -> bool {
    unsafe { LLVMGetLinkage(f) == llvm_sys::LLVMLinkage::LLVMAvailableExternallyLinkage }
}

pub fn opcode(i: LLVMValueRef) -> Option<LLVMOpcode> {
    unsafe {
        if LLVMIsAInstruction(i).is_null() {
            None
        } else {
            Some(LLVMGetInstructionOpcode(i))
        }
    }
}

/// Users of `v`, each with the operand index at which it uses `v`.
pub fn uses(v: LLVMValueRef) -> Vec<(LLVMValueRef, u32)> {
    let mut out = Vec::new();
    unsafe {
        let mut u = LLVMGetFirstUse(v);
        while !u.is_null() {
            let user = LLVMGetUser(u);
            let n = LLVMGetNumOperands(user).max(0) as u32;
            for idx in 0..n {
                if LLVMGetOperandUse(user, idx) == u {
                    out.push((user, idx));
                    break;
                }
            }
            u = LLVMGetNextUse(u);
        }
    }
    out
}

pub fn operand(i: LLVMValueRef, idx: u32) -> LLVMValueRef {
    unsafe { LLVMGetOperand(i, idx) }
}

pub fn num_operands(i: LLVMValueRef) -> u32 {
    unsafe { LLVMGetNumOperands(i).max(0) as u32 }
}

/// The function a call or invoke calls directly (a `Function`, not through a pointer), if any.
pub fn direct_callee(call: LLVMValueRef) -> Option<LLVMValueRef> {
    unsafe {
        if LLVMIsACallInst(call).is_null() && LLVMIsAInvokeInst(call).is_null() {
            return None;
        }
        let callee = LLVMGetCalledValue(call);
        if callee.is_null() || LLVMIsAFunction(callee).is_null() {
            None
        } else {
            Some(callee)
        }
    }
}

/// Number of argument operands of a call or invoke (operands minus callee and, for invoke, the
/// two destination blocks).
pub fn num_call_args(call: LLVMValueRef) -> u32 {
    unsafe { LLVMGetNumArgOperands(call) }
}

pub fn successors(b: LLVMBasicBlockRef) -> Vec<LLVMBasicBlockRef> {
    unsafe {
        let term = LLVMGetBasicBlockTerminator(b);
        if term.is_null() {
            return Vec::new();
        }
        (0..LLVMGetNumSuccessors(term))
            .map(|i| LLVMGetSuccessor(term, i))
            .collect()
    }
}

pub fn terminator(b: LLVMBasicBlockRef) -> LLVMValueRef {
    unsafe { LLVMGetBasicBlockTerminator(b) }
}

pub fn block_of(i: LLVMValueRef) -> LLVMBasicBlockRef {
    unsafe { LLVMGetInstructionParent(i) }
}

/// Strips GEPs and casts (instructions and constant expressions) down to the base object.
pub fn underlying_object(mut v: LLVMValueRef) -> LLVMValueRef {
    // Bounded: a malformed cycle of constant expressions cannot exist, but be defensive.
    for _ in 0..64 {
        unsafe {
            let is_inst = !LLVMIsAInstruction(v).is_null();
            let is_cexpr = !LLVMIsAConstantExpr(v).is_null();
            if !is_inst && !is_cexpr {
                return v;
            }
            let op = if is_inst {
                LLVMGetInstructionOpcode(v)
            } else {
                LLVMGetConstOpcode(v)
            };
            match op {
                LLVMOpcode::LLVMGetElementPtr
                | LLVMOpcode::LLVMBitCast
                | LLVMOpcode::LLVMAddrSpaceCast => v = LLVMGetOperand(v, 0),
                _ => return v,
            }
        }
    }
    v
}

pub fn is_alloca(v: LLVMValueRef) -> bool {
    unsafe { !LLVMIsAAllocaInst(v).is_null() }
}

pub fn is_global_variable(v: LLVMValueRef) -> bool {
    unsafe { !LLVMIsAGlobalVariable(v).is_null() }
}

pub fn is_constant(v: LLVMValueRef) -> bool {
    unsafe { !LLVMIsAConstant(v).is_null() }
}

pub fn is_argument(v: LLVMValueRef) -> bool {
    unsafe { !LLVMIsAArgument(v).is_null() }
}

pub fn is_instruction(v: LLVMValueRef) -> bool {
    unsafe { !LLVMIsAInstruction(v).is_null() }
}

/// Metadata kind tagging an instruction the pass added that must never be instrumented.
const SKIP: &str = "ilgen.skip";

fn skip_kind(v: LLVMValueRef) -> u32 {
    // SAFETY: live value; the kind name is NUL-free.
    unsafe {
        let ctx = LLVMGetTypeContext(LLVMTypeOf(v));
        LLVMGetMDKindIDInContext(ctx, SKIP.as_ptr() as *const c_char, SKIP.len() as u32)
    }
}

/// Tags `inst` (added by the pass) so that instrumentation leaves it alone. LLVM drops unknown
/// metadata when it merges two instructions, so a clone later merged with the program's own load
/// loses the tag and is instrumented as the program's access it now is.
pub fn mark_not_instrumented(inst: LLVMValueRef) {
    // SAFETY: live instruction and context.
    unsafe {
        let ctx = LLVMGetTypeContext(LLVMTypeOf(inst));
        let node = LLVMMDNodeInContext2(ctx, std::ptr::null_mut(), 0);
        LLVMSetMetadata(inst, skip_kind(inst), LLVMMetadataAsValue(ctx, node));
    }
}

pub fn is_marked_not_instrumented(inst: LLVMValueRef) -> bool {
    // SAFETY: live instruction.
    unsafe { !LLVMGetMetadata(inst, skip_kind(inst)).is_null() }
}
