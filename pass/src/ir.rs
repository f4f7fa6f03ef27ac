//! IR queries every other module uses, over inkwell's handles of a live module.
//!
//! Takes functions, blocks, instructions and values of the module being processed; gives
//! iteration over them, names as Rust strings, and the few classifications inkwell lacks. Those
//! (value kinds, constant expressions, terminator successors) call llvm-sys directly, each in one
//! small `unsafe` block here, so that the rest of the pass needs none for them.

use std::ffi::{c_char, CStr};

use inkwell::basic_block::BasicBlock;
use inkwell::context::ContextRef;
use inkwell::module::Module;
use inkwell::values::{
    AsValueRef, BasicValue, BasicValueEnum, BasicValueUse, CallSiteValue, FunctionValue,
    GlobalValue, InstructionOpcode, InstructionValue, Operand, ValueKind,
};
use llvm_sys::core::*;
use llvm_sys::LLVMOpcode;

/// A C string from LLVM or the glue as a Rust string (empty for null).
pub(crate) fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null NUL-terminated string from LLVM or the glue.
    unsafe { CStr::from_ptr(p).to_string_lossy().into_owned() }
}

/// `len` bytes at `p` (null: none) as a string.
///
/// # Safety
/// `p` is null or valid for `len` bytes.
pub(crate) unsafe fn bytes_to_string(p: *const c_char, len: usize) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the caller promises `len` readable bytes at `p`.
    let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, len) };
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn function_name(f: FunctionValue<'_>) -> String {
    f.get_name().to_string_lossy().into_owned()
}

/// The file `f`'s debug info names (its directory prefixed to a relative name), if it has any.
pub fn subprogram_file(f: FunctionValue<'_>) -> Option<String> {
    let sp = f.get_subprogram()?;
    // inkwell gives a function's subprogram but not a scope's file, nor a file's names.
    // SAFETY: `sp` is live debug info; the getters return null/empty when absent, and the
    // strings are valid for the lengths they give.
    let (dir, name) = unsafe {
        let file = llvm_sys::debuginfo::LLVMDIScopeGetFile(sp.as_mut_ptr());
        if file.is_null() {
            return None;
        }
        let (mut dl, mut fl) = (0u32, 0u32);
        let dir = bytes_to_string(
            llvm_sys::debuginfo::LLVMDIFileGetDirectory(file, &mut dl),
            dl as usize,
        );
        let name = bytes_to_string(
            llvm_sys::debuginfo::LLVMDIFileGetFilename(file, &mut fl),
            fl as usize,
        );
        (dir, name)
    };
    if name.starts_with('/') || dir.is_empty() {
        Some(name)
    } else if !name.is_empty() {
        Some(format!("{}/{}", dir.trim_end_matches('/'), name))
    } else {
        None
    }
}

pub fn functions<'ctx>(m: &Module<'ctx>) -> Vec<FunctionValue<'ctx>> {
    m.get_functions().collect()
}

pub fn instructions(b: BasicBlock<'_>) -> Vec<InstructionValue<'_>> {
    b.get_instructions().collect()
}

/// Every instruction of `f`, in block order.
pub fn all_instructions(f: FunctionValue<'_>) -> Vec<InstructionValue<'_>> {
    f.get_basic_block_iter().flat_map(instructions).collect()
}

/// Whether a load or store is atomic (any ordering but not-atomic).
pub fn is_atomic(i: InstructionValue<'_>) -> bool {
    i.get_atomic_ordering()
        .is_ok_and(|o| o != inkwell::AtomicOrdering::NotAtomic)
}

pub fn is_declaration(f: FunctionValue<'_>) -> bool {
    f.as_global_value().is_declaration()
}

pub fn is_available_externally(f: FunctionValue<'_>) -> bool {
    f.get_linkage() == inkwell::module::Linkage::AvailableExternally
}

/// Operand `idx` of `i` when it is a value (not a block). Callers ask only for operands that
/// are values by the instruction's kind (a load's pointer, a library call's argument): inkwell
/// cannot wrap an intrinsic's `metadata` argument.
pub fn operand(i: InstructionValue<'_>, idx: u32) -> Option<BasicValueEnum<'_>> {
    match i.get_operand(idx)? {
        Operand::Value(v) => Some(v),
        Operand::Block(_) => None,
    }
}

/// Operand `idx` of `i` when it is a basic block (a branch target).
pub fn block_operand(i: InstructionValue<'_>, idx: u32) -> Option<BasicBlock<'_>> {
    match i.get_operand(idx)? {
        Operand::Block(b) => Some(b),
        Operand::Value(_) => None,
    }
}

/// The instruction a use belongs to, with the operand index at which it uses the value.
fn user_of<'ctx>(u: BasicValueUse<'ctx>) -> Option<(InstructionValue<'ctx>, u32)> {
    let user = match u.get_user() {
        inkwell::values::AnyValueEnum::InstructionValue(i) => i,
        any => BasicValueEnum::try_from(any).ok()?.as_instruction_value()?,
    };
    let idx = (0..user.get_num_operands()).find(|&k| user.get_operand_use(k) == Some(u))?;
    Some((user, idx))
}

/// Users of `v`, each with the operand index at which it uses `v`; `None` when some user is not
/// an instruction (a constant expression), which valid IR has not for an instruction's result.
pub fn uses(v: InstructionValue<'_>) -> Option<Vec<(InstructionValue<'_>, u32)>> {
    let mut out = Vec::new();
    let mut u = v.get_first_use();
    while let Some(use_) = u {
        out.push(user_of(use_)?);
        u = use_.get_next_use();
    }
    Some(out)
}

/// The function a call or invoke calls directly (a `Function`, not through a pointer), if any.
pub fn direct_callee(call: InstructionValue<'_>) -> Option<FunctionValue<'_>> {
    if !matches!(
        call.get_opcode(),
        InstructionOpcode::Call | InstructionOpcode::Invoke
    ) {
        return None;
    }
    // inkwell's `get_called_fn_value` drops a callee whose type differs from the call's (an
    // unprototyped C declaration), which the pass must still see; so the called value is read
    // here. SAFETY: `call` is a live call or invoke; `FunctionValue::new` checks for a function.
    unsafe {
        let callee = LLVMGetCalledValue(call.as_value_ref());
        if callee.is_null() || LLVMIsAFunction(callee).is_null() {
            return None;
        }
        FunctionValue::new(callee)
    }
}

/// A call or invoke as a call site. inkwell's `TryFrom` takes calls only.
pub fn call_site(i: InstructionValue<'_>) -> Option<CallSiteValue<'_>> {
    if !matches!(
        i.get_opcode(),
        InstructionOpcode::Call | InstructionOpcode::Invoke
    ) {
        return None;
    }
    // SAFETY: an invoke is a `CallBase` like a call, and every call-site query the pass makes
    // (argument count, called type, calling convention) is one of `CallBase`.
    Some(unsafe { CallSiteValue::new(i.as_value_ref()) })
}

/// Number of argument operands of a call or invoke (operands minus callee and, for invoke, the
/// two destination blocks).
pub fn num_call_args(call: InstructionValue<'_>) -> u32 {
    call_site(call).map_or(0, |c| c.count_arguments())
}

/// The instruction a builder call made.
pub fn instruction_of(call: CallSiteValue<'_>) -> Option<InstructionValue<'_>> {
    match call.try_as_basic_value() {
        ValueKind::Instruction(i) => Some(i),
        ValueKind::Basic(v) => v.as_instruction_value(),
    }
}

/// The successors of `b`'s terminator, in successor order.
pub fn successors(b: BasicBlock<'_>) -> Vec<BasicBlock<'_>> {
    let Some(term) = b.get_terminator() else {
        return Vec::new();
    };
    (0..num_successors(term))
        .filter_map(|i| successor(term, i))
        .collect()
}

/// inkwell gives a terminator's blocks only as operands, whose order is not the successor order
/// (`br i1 %c, label %t, label %f` stores %f before %t); the edge indices the glue splits by are
/// successor indices.
pub fn num_successors(term: InstructionValue<'_>) -> u32 {
    // SAFETY: `term` is a live terminator.
    unsafe { LLVMGetNumSuccessors(term.as_value_ref()) }
}

pub fn successor(term: InstructionValue<'_>, idx: u32) -> Option<BasicBlock<'_>> {
    // SAFETY: `term` is a live terminator and `idx` below its successor count; `BasicBlock::new`
    // takes the block LLVM returns (null gives None).
    unsafe { BasicBlock::new(LLVMGetSuccessor(term.as_value_ref(), idx)) }
}

/// Strips GEPs and casts (instructions and constant expressions) down to the base object.
pub fn underlying_object(mut v: BasicValueEnum<'_>) -> BasicValueEnum<'_> {
    // Bounded: a malformed cycle of constant expressions cannot exist, but be defensive.
    for _ in 0..64 {
        let next = match v.as_instruction_value() {
            Some(i) => match i.get_opcode() {
                InstructionOpcode::GetElementPtr
                | InstructionOpcode::BitCast
                | InstructionOpcode::AddrSpaceCast => operand(i, 0),
                _ => None,
            },
            None => const_expr_base(v),
        };
        match next {
            Some(n) => v = n,
            None => return v,
        }
    }
    v
}

/// The pointer operand of a GEP or pointer-cast constant expression. inkwell has no API for
/// constant expressions' opcodes and operands.
fn const_expr_base(v: BasicValueEnum<'_>) -> Option<BasicValueEnum<'_>> {
    // SAFETY: `v` is a live value, checked to be a constant expression before its opcode and
    // operand 0 (the pointer of a GEP or cast, a basic value) are read.
    unsafe {
        let raw = v.as_value_ref();
        if LLVMIsAConstantExpr(raw).is_null() {
            return None;
        }
        match LLVMGetConstOpcode(raw) {
            LLVMOpcode::LLVMGetElementPtr
            | LLVMOpcode::LLVMBitCast
            | LLVMOpcode::LLVMAddrSpaceCast => Some(BasicValueEnum::new(LLVMGetOperand(raw, 0))),
            _ => None,
        }
    }
}

/// `v` as a global variable (not a function, not an alias). inkwell has no value-kind test.
pub fn global_variable(v: BasicValueEnum<'_>) -> Option<GlobalValue<'_>> {
    // SAFETY: live value, checked to be a global variable before inkwell wraps it.
    unsafe {
        let raw = v.as_value_ref();
        (!LLVMIsAGlobalVariable(raw).is_null()).then(|| GlobalValue::new(raw))
    }
}

/// Whether `v` is a function's argument. inkwell has no value-kind test.
pub fn is_argument(v: BasicValueEnum<'_>) -> bool {
    // SAFETY: live value.
    unsafe { !LLVMIsAArgument(v.as_value_ref()).is_null() }
}

/// Metadata kind tagging an instruction the pass added that must never be instrumented.
const SKIP: &str = "ilgen.skip";

/// Tags `inst` (added by the pass) so that instrumentation leaves it alone. LLVM drops unknown
/// metadata when it merges two instructions, so a clone later merged with the program's own load
/// loses the tag and is instrumented as the program's access it now is.
pub fn mark_not_instrumented<'ctx>(context: &ContextRef<'ctx>, inst: InstructionValue<'ctx>) {
    let node = context.metadata_node(&[]);
    // An empty node is a node; set_metadata refuses only non-nodes.
    let _ = inst.set_metadata(node, context.get_kind_id(SKIP));
}

pub fn is_marked_not_instrumented(context: &ContextRef<'_>, inst: InstructionValue<'_>) -> bool {
    inst.get_metadata(context.get_kind_id(SKIP)).is_some()
}
