//! ilgen's LLVM pass plugin: instruments a C/C++ module for recording.
//!
//! Takes a module from clang (`-fpass-plugin=libilgen_pass.so`, run at the end of the optimizer
//! pipeline, at every -O level) or from `opt -load-pass-plugin=libilgen_pass.so -passes=ilgen`;
//! gives it back with
//! - a `__ilgen_read/write` (or atomic) call before every memory access that may race,
//!   an atomic operation that a thread fence of its function orders carrying the fence's
//!   acquire or release (`fences.rs`),
//! - every pthread/libc call of `ilgen_trace::abi::WRAPPED_CALLS` turned into its
//!   `__ilgen_wrap_*` wrapper with a trailing site argument,
//! - a `__ilgen_printf_written` call after every `sprintf`-family call of
//!   `ilgen_trace::abi::FORMATTED_CALLS` (the bytes it wrote),
//! - `__ilgen_wait_loop_enter/exit` markers around each loop that waits on a condition variable,
//! - `__ilgen_tx_begin/end` markers at the entry and exits of each function marked `ILGEN_ATOMIC`
//!   (annotation `ilgen_atomic`; `ilgen.h`),
//! - `__ilgen_call_enter/leave` at the entry, exits and landing pads of each function that may
//!   synchronize (the calls a run records under `ILGEN_OPTIONS=calls=1`),
//! - a `__ilgen_main_return` call before every return of `main` (the end of the process),
//! - a `__ilgen_sem_opened` call after every `sem_open` (the semaphore's count),
//! - one site table blob in section `ilgen_sites`.
//!
//! This file holds the entry points only. Registration is C++ (`glue.cpp`): the plugin interface
//! is a C++ API, and a Rust cdylib exports only Rust `#[no_mangle]` symbols, so
//! `llvmGetPassPluginInfo` is defined here and forwards to the glue.
//!
//! The IR work goes through inkwell; llvm-sys is called directly only where inkwell has no API,
//! each place saying so.

#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::c_char;
use std::mem::ManuallyDrop;

use inkwell::builder::BuilderError;
use inkwell::module::Module;
use llvm_sys::prelude::LLVMModuleRef;

mod atomic;
mod call_markers;
mod calls;
mod ctx;
mod decides;
mod driver;
mod escape;
mod fences;
mod glue;
mod guards;
mod hooks;
mod instrument;
mod ir;
mod loops;
mod options;
mod predicates;
mod printf;
mod redundant;
mod sites;
mod stacks;
#[cfg(test)]
mod testing;

pub use driver::Stats;
pub use options::Filter;

/// The symbol LLVM looks up in a pass plugin.
///
/// # Safety
/// Called by LLVM's plugin loader only.
#[no_mangle]
pub unsafe extern "C" fn llvmGetPassPluginInfo() -> glue::PassPluginLibraryInfo {
    glue::ilgen_plugin_info()
}

/// Called by the glue's pass with clang's module and the `-mllvm` option strings.
///
/// # Safety
/// `module` must be a live module; the strings null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn ilgen_run_on_module(
    module: LLVMModuleRef,
    exclude: *const c_char,
    include: *const c_char,
) -> i32 {
    // ManuallyDrop: the module belongs to clang; inkwell's Drop would dispose of it.
    // SAFETY: the glue passes the live module it is running on.
    let module = ManuallyDrop::new(unsafe { Module::new(module) });
    let env = std::env::var(options::ENV).ok();
    let filter = Filter::from_sources(&ir::cstr(exclude), &ir::cstr(include), env.as_deref());
    for e in &filter.errors {
        // A compiler plugin has no error channel but stderr; a bad pattern is ignored, not fatal.
        eprintln!("ilgen-pass: {e}");
    }
    // A panic must not unwind into C++; on one, leave the module as it is now and say so.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&module, &filter))) {
        Ok(Ok(stats)) => stats.changed() as i32,
        Ok(Err(e)) => {
            eprintln!("ilgen-pass: {e}; module left partly instrumented");
            1
        }
        Err(_) => {
            eprintln!("ilgen-pass: internal error; module left partly instrumented");
            1
        }
    }
}

/// Called by the glue's pipeline-start pass: wait-loop markers before loop rotation.
///
/// # Safety
/// `module` must be a live module.
#[no_mangle]
pub unsafe extern "C" fn ilgen_mark_wait_loops(module: LLVMModuleRef) -> i32 {
    // ManuallyDrop: the module belongs to clang, as in `ilgen_run_on_module`.
    // SAFETY: the glue passes the live module it is running on.
    let module = ManuallyDrop::new(unsafe { Module::new(module) });
    // The glue passes no `-mllvm` strings here; `atomic=` lives in the environment only. A bad
    // pattern is reported by `ilgen_run_on_module`, which reads the same variable.
    let env = std::env::var(options::ENV).ok();
    let filter = Filter::from_sources("", "", env.as_deref());
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        driver::mark_wait_loops(&module, &filter)
    })) {
        Ok(Ok(n)) => (n > 0) as i32,
        Ok(Err(e)) => {
            eprintln!("ilgen-pass: {e} while marking wait loops");
            1
        }
        Err(_) => {
            eprintln!("ilgen-pass: internal error while marking wait loops");
            1
        }
    }
}

/// Instruments `module` with `filter` deciding memory instrumentation; fails only when inkwell's
/// builder refuses an instruction (an LLVM bug, not the program's).
pub fn run(module: &Module<'_>, filter: &Filter) -> Result<Stats, BuilderError> {
    driver::run(module, filter)
}
