//! Rust declarations of the C++ glue's extern "C" functions (src/glue.cpp), wrapped safely.
//!
//! Takes live inkwell handles; gives the IR utilities neither inkwell nor the C API has.

use std::ffi::c_char;

use ilgen_trace::abi;
use inkwell::basic_block::BasicBlock;
use inkwell::module::Module;
use inkwell::types::AsTypeRef;
use inkwell::values::{
    AsValueRef, BasicValueEnum, FunctionValue, GlobalValue, InstructionValue, IntValue,
    PointerValue,
};
use llvm_sys::prelude::*;

use crate::hooks::Hook;
use crate::ir;

/// One load or store the instrumentation would hook, for [`loop_ranges`].
#[repr(C)]
struct LoopAccess {
    inst: LLVMValueRef,
    ptr: LLVMValueRef,
    size: u64,
}

/// `len` bytes from `start`: what one access touches over its whole loop, both values computed
/// before `at`, the loop preheader's terminator.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawLoopRange {
    inst: LLVMValueRef,
    start: LLVMValueRef,
    len: LLVMValueRef,
    at: LLVMValueRef,
}

/// One frame of an inlined-at chain as the glue gives it: strings owned by the module.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawFrame {
    file: *const c_char,
    file_len: usize,
    dir: *const c_char,
    dir_len: usize,
    function: *const c_char,
    function_len: usize,
    line: u32,
    column: u32,
}

extern "C" {
    fn ilgen_loop_ranges(
        function: LLVMValueRef,
        accesses: *const LoopAccess,
        n: usize,
        may_sync: extern "C" fn(LLVMValueRef) -> i32,
        out: *mut RawLoopRange,
    ) -> usize;
    fn ilgen_split_critical_edge(term: LLVMValueRef, index: u32) -> LLVMBasicBlockRef;
    fn ilgen_append_to_compiler_used(module: LLVMModuleRef, global: LLVMValueRef);
    fn ilgen_add_section_ctor(module: LLVMModuleRef, hook: *const c_char, section: *const c_char);
    fn ilgen_debug_frames(inst: LLVMValueRef, out: *mut RawFrame, cap: usize) -> usize;
    fn ilgen_stack_hooks(
        f: LLVMValueRef,
        flag: LLVMValueRef,
        enter_ty: LLVMTypeRef,
        enter: LLVMValueRef,
        call_ty: LLVMTypeRef,
        call: LLVMValueRef,
        leave_ty: LLVMTypeRef,
        leave: LLVMValueRef,
        unwound_ty: LLVMTypeRef,
        unwound: LLVMValueRef,
        calls: *const LLVMValueRef,
        sites: *const LLVMValueRef,
        n: u32,
    ) -> i32;
    fn ilgen_guard_access(
        call: LLVMValueRef,
        cover: LLVMValueRef,
        replay: LLVMValueRef,
        size: u64,
        write: i32,
        granule: u64,
        entries: u64,
        site_arg: u32,
        site_shift: u32,
        site_mask: u64,
        spread_shift: u32,
        spread: u64,
    );
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

/// The shadow-stack hooks of one function (see `stacks.rs`): the runtime's `enter`, `call`,
/// `leave` and `unwound` hooks, behind the i8 global `flag`; `calls` the calls to hook, each with
/// its site. False when the function cannot take them (funclet EH pads, a musttail call).
pub fn stack_hooks<'ctx>(
    f: FunctionValue<'ctx>,
    flag: PointerValue<'ctx>,
    hooks: [Hook<'ctx>; 4],
    calls: &[(InstructionValue<'ctx>, PointerValue<'ctx>)],
) -> bool {
    let (insts, sites): (Vec<LLVMValueRef>, Vec<LLVMValueRef>) = calls
        .iter()
        .map(|(i, s)| (i.as_value_ref(), s.as_value_ref()))
        .unzip();
    let [enter, call, leave, unwound] = hooks;
    let hook = |h: Hook<'ctx>| (h.ty.as_type_ref(), h.func.as_value_ref());
    let ((et, e), (ct, c), (lt, l), (ut, u)) =
        (hook(enter), hook(call), hook(leave), hook(unwound));
    // SAFETY: `f`, `flag`, the hooks and every call and site are live values of one module; the
    // two arrays have `calls.len()` entries each.
    unsafe {
        ilgen_stack_hooks(
            f.as_value_ref(),
            flag.as_value_ref(),
            et,
            e,
            ct,
            c,
            lt,
            l,
            ut,
            u,
            insts.as_ptr(),
            sites.as_ptr(),
            calls.len() as u32,
        ) != 0
    }
}

/// Puts the hook call `call` (a plain access of `size` bytes, at most `abi::COVER_GRANULE`, at
/// its first argument, its site at argument `site_arg`) behind the inlined checks of the
/// thread-local coverage tables `cover` (`abi::COVER_TLS`, recording's) and `replay`
/// (`abi::REPLAY_COVER_TLS`, read only while the first is null): the call runs only when the
/// thread's table does not hold the access (in replay, at that site).
pub fn guard_access(
    call: InstructionValue<'_>,
    (cover, replay): (GlobalValue<'_>, GlobalValue<'_>),
    size: u64,
    write: bool,
    site_arg: u32,
) {
    debug_assert!((1..=abi::COVER_GRANULE).contains(&size));
    // SAFETY: `call` is a live call of the function being instrumented, followed by the access
    // it hooks, with a pointer argument `site_arg`; `cover` and `replay` thread-local globals of
    // its module.
    unsafe {
        ilgen_guard_access(
            call.as_value_ref(),
            cover.as_value_ref(),
            replay.as_value_ref(),
            size,
            write as i32,
            abi::COVER_GRANULE,
            abi::COVER_ENTRIES as u64,
            site_arg,
            abi::COVER_SITE_SHIFT,
            abi::COVER_SITE_MASK,
            abi::COVER_SPREAD_SHIFT,
            abi::COVER_SPREAD,
        )
    }
}

pub fn append_to_compiler_used(module: &Module<'_>, global: GlobalValue<'_>) {
    // SAFETY: live module and one of its globals.
    unsafe { ilgen_append_to_compiler_used(module.as_mut_ptr(), global.as_value_ref()) }
}

/// Adds a constructor calling `hook(__start_SECTION, __stop_SECTION)` of the object `module` is
/// linked into (once per module).
pub fn add_section_ctor(module: &Module<'_>, hook: &str, section: &str) {
    let (hook, section) = (cstr(hook), cstr(section));
    // SAFETY: live module, NUL-ended names that outlive the call.
    unsafe { ilgen_add_section_ctor(module.as_mut_ptr(), hook.as_ptr(), section.as_ptr()) }
}

fn cstr(s: &str) -> std::ffi::CString {
    std::ffi::CString::new(s).expect("a symbol name has no NUL")
}

/// One frame of an instruction's inlined-at chain: where, and in which function (its linkage
/// name, or its name when it has none; empty when the location has no subprogram).
#[derive(Default)]
pub struct DebugFrame {
    pub file: String,
    pub dir: String,
    pub function: String,
    pub line: u32,
    pub column: u32,
}

/// The inlined-at chain of `inst`'s debug location, innermost frame first; empty without one.
pub fn debug_frames(inst: InstructionValue<'_>) -> Vec<DebugFrame> {
    let empty = RawFrame {
        file: std::ptr::null(),
        file_len: 0,
        dir: std::ptr::null(),
        dir_len: 0,
        function: std::ptr::null(),
        function_len: 0,
        line: 0,
        column: 0,
    };
    let mut raw = vec![empty; 8];
    loop {
        // SAFETY: `inst` is a live instruction; the glue writes at most `raw.len()` frames and
        // returns the chain's full length.
        let n = unsafe { ilgen_debug_frames(inst.as_value_ref(), raw.as_mut_ptr(), raw.len()) };
        if n <= raw.len() {
            raw.truncate(n);
            break;
        }
        raw = vec![empty; n];
    }
    raw.iter()
        // SAFETY: each pointer is null or valid for its length (strings of the live module).
        .map(|r| unsafe {
            DebugFrame {
                file: ir::bytes_to_string(r.file, r.file_len),
                dir: ir::bytes_to_string(r.dir, r.dir_len),
                function: ir::bytes_to_string(r.function, r.function_len),
                line: r.line,
                column: r.column,
            }
        })
        .collect()
}

/// The bytes one loop access touches over all iterations of its loop (see `ilgen_loop_ranges`
/// in glue.cpp for when ScalarEvolution can say).
pub struct LoopRange<'ctx> {
    pub inst: InstructionValue<'ctx>,
    pub start: PointerValue<'ctx>,
    pub len: IntValue<'ctx>,
    pub at: InstructionValue<'ctx>,
}

/// For the accesses of `f` given as (instruction, pointer, store size), those whose whole loop's
/// bytes ScalarEvolution computes before the loop, with no instruction of the loop that
/// `may_sync` says may synchronize. The computations go into the loops' preheaders.
pub fn loop_ranges<'ctx>(
    f: FunctionValue<'ctx>,
    accesses: &[(InstructionValue<'ctx>, BasicValueEnum<'ctx>, u64)],
    may_sync: extern "C" fn(LLVMValueRef) -> i32,
) -> Vec<LoopRange<'ctx>> {
    let raw: Vec<LoopAccess> = accesses
        .iter()
        .map(|&(inst, ptr, size)| LoopAccess {
            inst: inst.as_value_ref(),
            ptr: ptr.as_value_ref(),
            size,
        })
        .collect();
    let empty = RawLoopRange {
        inst: std::ptr::null_mut(),
        start: std::ptr::null_mut(),
        len: std::ptr::null_mut(),
        at: std::ptr::null_mut(),
    };
    let mut out = vec![empty; raw.len()];
    // SAFETY: `f` and every access are live values of one function; `out` has room for one
    // range per access, as the glue requires; it writes the first `n` entries.
    let n = unsafe {
        ilgen_loop_ranges(
            f.as_value_ref(),
            raw.as_ptr(),
            raw.len(),
            may_sync,
            out.as_mut_ptr(),
        )
    };
    out.truncate(n);
    out.into_iter()
        // SAFETY: the glue returns the access it was given, a pointer-typed start, an i64
        // length and the preheader's terminator, all live values of `f`.
        .map(|r| unsafe {
            LoopRange {
                inst: InstructionValue::new(r.inst),
                start: PointerValue::new(r.start),
                len: IntValue::new(r.len),
                at: InstructionValue::new(r.at),
            }
        })
        .collect()
}
