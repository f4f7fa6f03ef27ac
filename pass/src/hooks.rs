//! The runtime callbacks, declared once per module.
//!
//! Takes the module; gives [`Hooks`], the declarations of every `__ilgen_*` hook of
//! [`ilgen_trace::abi`] with their function types, and [`call`] to emit a call to one.
//! Wrapper declarations (`__ilgen_wrap_NAME`) depend on the callee's type and live in `calls.rs`.
//! Also the thread-local coverage tables the inlined access checks read ([`tls_table`]) and
//! whether a module may read it ([`may_read_cover_table`]).

use ilgen_trace::abi;
use inkwell::builder::{Builder, BuilderError};
use inkwell::debug_info::DILocation;
use inkwell::module::Module;
use inkwell::types::{FunctionType, IntType, PointerType};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValue, FunctionValue, GlobalValue, InstructionValue, IntValue,
    ValueKind,
};
use inkwell::{AddressSpace, ThreadLocalMode};

use crate::ir;

/// One declared hook.
#[derive(Clone, Copy)]
pub struct Hook<'ctx> {
    pub ty: FunctionType<'ctx>,
    pub func: FunctionValue<'ctx>,
}

pub struct Hooks<'ctx> {
    pub read: Hook<'ctx>,
    pub write: Hook<'ctx>,
    pub read_write: Hook<'ctx>,
    pub atomic_read: Hook<'ctx>,
    pub atomic_write: Hook<'ctx>,
    pub atomic_enter: Hook<'ctx>,
    pub atomic_leave: Hook<'ctx>,
    pub wait_loop_enter: Hook<'ctx>,
    pub wait_loop_exit: Hook<'ctx>,
    pub printf_written: Hook<'ctx>,
    pub main_return: Hook<'ctx>,
    pub sem_opened: Hook<'ctx>,
    pub tx_begin: Hook<'ctx>,
    pub tx_end: Hook<'ctx>,
    pub call_enter: Hook<'ctx>,
    pub call_leave: Hook<'ctx>,
    pub func_enter: Hook<'ctx>,
    pub func_call: Hook<'ctx>,
    pub func_exit: Hook<'ctx>,
    pub func_unwound: Hook<'ctx>,
    pub ptr_ty: PointerType<'ctx>,
    pub i64_ty: IntType<'ctx>,
}

impl<'ctx> Hooks<'ctx> {
    pub fn declare(module: &Module<'ctx>) -> Hooks<'ctx> {
        let ctx = module.get_context();
        let ptr_ty = ctx.ptr_type(AddressSpace::default());
        let i64_ty = ctx.i64_type();
        let void_ty = ctx.void_type();
        // void (const void *addr, uint64_t size, const void *site)
        let access_ty = void_ty.fn_type(&[ptr_ty.into(), i64_ty.into(), ptr_ty.into()], false);
        // void (const void *addr, uint64_t size, const void *read_site, const void *write_site)
        let read_write_ty = void_ty.fn_type(
            &[ptr_ty.into(), i64_ty.into(), ptr_ty.into(), ptr_ty.into()],
            false,
        );
        // void (const void *cond, const void *site), and void (sem_t *sem, const void *site)
        let marker_ty = void_ty.fn_type(&[ptr_ty.into(), ptr_ty.into()], false);
        // void (void *buf, uint64_t max, int64_t ret, const void *site)
        let written_ty = void_ty.fn_type(
            &[ptr_ty.into(), i64_ty.into(), i64_ty.into(), ptr_ty.into()],
            false,
        );
        // void (const void *site)
        let site_ty = void_ty.fn_type(&[ptr_ty.into()], false);
        let i32_ty = ctx.i32_type();
        let decl = |name: &str, ty| Hook {
            ty,
            func: get_or_declare(module, name, ty),
        };
        Hooks {
            read: decl(abi::READ, access_ty),
            write: decl(abi::WRITE, access_ty),
            read_write: decl(abi::READ_WRITE, read_write_ty),
            atomic_read: decl(abi::ATOMIC_READ, access_ty),
            atomic_write: decl(abi::ATOMIC_WRITE, access_ty),
            // uint64_t (const void *addr, uint64_t size, const void *site, uint64_t write)
            atomic_enter: decl(
                abi::ATOMIC_ENTER,
                i64_ty.fn_type(
                    &[ptr_ty.into(), i64_ty.into(), ptr_ty.into(), i64_ty.into()],
                    false,
                ),
            ),
            // void (const void *addr, uint64_t size, const void *site, uint64_t how,
            //       uint64_t token)
            atomic_leave: decl(
                abi::ATOMIC_LEAVE,
                void_ty.fn_type(
                    &[
                        ptr_ty.into(),
                        i64_ty.into(),
                        ptr_ty.into(),
                        i64_ty.into(),
                        i64_ty.into(),
                    ],
                    false,
                ),
            ),
            wait_loop_enter: decl(abi::WAIT_LOOP_ENTER, marker_ty),
            wait_loop_exit: decl(abi::WAIT_LOOP_EXIT, marker_ty),
            printf_written: decl(abi::PRINTF_WRITTEN, written_ty),
            main_return: decl(abi::MAIN_RETURN, site_ty),
            sem_opened: decl(abi::SEM_OPENED, marker_ty),
            tx_begin: decl(abi::TX_BEGIN, site_ty),
            tx_end: decl(abi::TX_END, site_ty),
            call_enter: decl(abi::CALL_ENTER, i32_ty.fn_type(&[ptr_ty.into()], false)),
            call_leave: decl(
                abi::CALL_LEAVE,
                void_ty.fn_type(&[i32_ty.into(), ptr_ty.into()], false),
            ),
            func_enter: decl(abi::FUNC_ENTER, i32_ty.fn_type(&[ptr_ty.into()], false)),
            func_call: decl(abi::FUNC_CALL, site_ty),
            func_exit: decl(abi::FUNC_EXIT, void_ty.fn_type(&[], false)),
            func_unwound: decl(abi::FUNC_UNWOUND, void_ty.fn_type(&[i32_ty.into()], false)),
            ptr_ty,
            i64_ty,
        }
    }

    /// Removes the declarations no call uses, so an untouched module stays untouched.
    pub fn remove_unused(&self) {
        for h in [
            self.read,
            self.write,
            self.read_write,
            self.atomic_read,
            self.atomic_write,
            self.atomic_enter,
            self.atomic_leave,
            self.wait_loop_enter,
            self.wait_loop_exit,
            self.printf_written,
            self.main_return,
            self.sem_opened,
            self.tx_begin,
            self.tx_end,
            self.call_enter,
            self.call_leave,
            self.func_enter,
            self.func_call,
            self.func_exit,
            self.func_unwound,
        ] {
            let address = h.func.as_global_value().as_pointer_value();
            if address.get_first_use().is_none() && ir::is_declaration(h.func) {
                // SAFETY: an unused declaration; no handle to it is used after this.
                unsafe { h.func.delete() };
            }
        }
    }
}

/// The function `name` of the module, declared with `ty` when absent. An existing function of
/// another type is returned as is: with opaque pointers a call may use any function type.
pub fn get_or_declare<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    ty: FunctionType<'ctx>,
) -> FunctionValue<'ctx> {
    module
        .get_function(name)
        .unwrap_or_else(|| module.add_function(name, ty, None))
}

/// Whether `module`'s code may read the coverage table inline: not for a target other than
/// x86-64 Linux (the runtime defines the variable there only), nor for code that may end up in a
/// shared library (position-independent, not for an executable), which could not reach the
/// executable's variable with the initial-exec model.
pub fn may_read_cover_table(module: &Module<'_>) -> bool {
    let triple = module.get_triple();
    let triple = triple.as_str().to_string_lossy();
    let library = module.get_flag("PIC Level").is_some() && module.get_flag("PIE Level").is_none();
    triple.starts_with("x86_64") && triple.contains("linux") && !library
}

/// The thread-local pointer `name` to the calling thread's coverage table (`abi::COVER_TLS`,
/// `abi::REPLAY_COVER_TLS`), declared in `module` on first use (for a module that
/// [`may_read_cover_table`]).
pub fn tls_table<'ctx>(module: &Module<'ctx>, name: &str) -> GlobalValue<'ctx> {
    module.get_global(name).unwrap_or_else(|| {
        let ptr_ty = module.get_context().ptr_type(AddressSpace::default());
        let g = module.add_global(ptr_ty, None, name);
        g.set_thread_local_mode(Some(ThreadLocalMode::InitialExecTLSModel));
        g
    })
}

/// Emits `hook(args...)` at the builder's position with the debug location `dbg`; gives the call.
pub fn call<'ctx>(
    builder: &Builder<'ctx>,
    hook: Hook<'ctx>,
    args: &[BasicMetadataValueEnum<'ctx>],
    dbg: Option<DILocation<'ctx>>,
) -> Result<Option<InstructionValue<'ctx>>, BuilderError> {
    // Called through the declaration's address with the hook's own type, which a function of
    // the same name the program declared otherwise need not have.
    let address = hook.func.as_global_value().as_pointer_value();
    let call = ir::instruction_of(builder.build_indirect_call(hook.ty, address, args, "")?);
    if let Some(i) = call {
        i.set_debug_location(dbg);
    }
    Ok(call)
}

/// Emits `hook(args...)`, a hook that returns an integer, at the builder's position without a
/// debug location; gives the result.
pub fn call_value<'ctx>(
    builder: &Builder<'ctx>,
    hook: Hook<'ctx>,
    args: &[BasicMetadataValueEnum<'ctx>],
) -> Result<IntValue<'ctx>, BuilderError> {
    let address = hook.func.as_global_value().as_pointer_value();
    let call = builder.build_indirect_call(hook.ty, address, args, "")?;
    match call.try_as_basic_value() {
        ValueKind::Basic(v) => Ok(v.into_int_value()),
        ValueKind::Instruction(_) => unreachable!("the hook's type returns an integer"),
    }
}
