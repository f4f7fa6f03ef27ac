//! The per-module driver: decides what each function gets and runs the steps in order.
//!
//! Takes a module and the [`Filter`]; gives the instrumented module and a count of what it
//! inserted. Two steps:
//! - [`mark_wait_loops`]: wait-loop markers, with null sites. Clang runs it at the START of the
//!   pipeline: loop rotation (-O1 and up) turns `while (!p) wait();` into
//!   `if (!p) do wait(); while (!p);`, after which a predicate that already holds never enters
//!   the loop and markers placed on the rotated loop's edges would never run.
//! - [`run`]: per function, instrument memory accesses and follow `sprintf`-family calls with
//!   the hook that records what they wrote (if the filter says so; never the instructions cloned
//!   for a marker's argument), rewrite wrapped calls, give markers their sites; then emit the
//!   site table. Clang runs it at the END of the pipeline, like TSan; it marks wait loops first
//!   itself when the start step did not run (`opt -passes=ilgen`).

use llvm_sys::core::*;
use llvm_sys::prelude::*;

use ilgen_trace::abi;

use crate::calls;
use crate::hooks::Hooks;
use crate::instrument;
use crate::ir;
use crate::loops;
use crate::options::Filter;
use crate::printf;
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

/// Counts of what the pass inserted, for tests and `-debug`-style summaries.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub accesses: usize,
    pub calls: usize,
    pub markers: usize,
    pub sites: usize,
}

impl Stats {
    pub fn changed(&self) -> bool {
        self.accesses + self.calls + self.markers > 0
    }
}

/// The names `src:` patterns match for function `f` of a module compiled from `source`: the
/// name as given, the name made absolute (clang runs in the compile's directory), and the file of
/// the function's debug info.
fn source_files(source: &str, f: LLVMValueRef) -> Vec<String> {
    let mut out = vec![source.to_owned()];
    if !source.starts_with('/') {
        if let Ok(cwd) = std::env::current_dir() {
            out.push(cwd.join(source).to_string_lossy().into_owned());
        }
    }
    // SAFETY: live function; the debug-info getters return null/empty when absent.
    unsafe {
        use llvm_sys::debuginfo::*;
        let sp = LLVMGetSubprogram(f);
        if !sp.is_null() {
            let file = LLVMDIScopeGetFile(sp);
            if !file.is_null() {
                let (mut dl, mut fl) = (0u32, 0u32);
                let dir = ir::bytes_to_string(LLVMDIFileGetDirectory(file, &mut dl), dl as usize);
                let name = ir::bytes_to_string(LLVMDIFileGetFilename(file, &mut fl), fl as usize);
                if name.starts_with('/') || dir.is_empty() {
                    out.push(name);
                } else if !name.is_empty() {
                    out.push(format!("{}/{}", dir.trim_end_matches('/'), name));
                }
            }
        }
    }
    out
}

/// Named metadata marking a module this pass has instrumented.
const DONE: &str = "ilgen.instrumented";
/// Named metadata marking a module whose wait loops have their markers.
const MARKED: &str = "ilgen.wait_loops_marked";

fn has_flag(module: LLVMModuleRef, flag: &str) -> bool {
    let name = std::ffi::CString::new(flag).expect("no NUL");
    // SAFETY: live module.
    unsafe { !LLVMGetNamedMetadata(module, name.as_ptr(), flag.len()).is_null() }
}

fn set_flag(module: LLVMModuleRef, flag: &str) {
    let name = std::ffi::CString::new(flag).expect("no NUL");
    // SAFETY: live module and context.
    unsafe {
        let llctx = LLVMGetModuleContext(module);
        let node = LLVMMDNodeInContext2(llctx, std::ptr::null_mut(), 0);
        LLVMAddNamedMetadataOperand(module, name.as_ptr(), LLVMMetadataAsValue(llctx, node));
    }
}

/// The functions the pass works on: defined here, and not the runtime's own (nor the hooks): they
/// would record themselves.
fn program_functions(module: LLVMModuleRef) -> Vec<LLVMValueRef> {
    ir::functions(module)
        .into_iter()
        .filter(|&f| !ir::is_declaration(f) && !ir::name(f).starts_with(abi::RUNTIME_PREFIX))
        .collect()
}

/// Puts enter/exit markers (with null sites) around every wait loop of `module`, once; returns
/// how many it inserted.
pub fn mark_wait_loops(module: LLVMModuleRef) -> usize {
    if has_flag(module, MARKED) {
        return 0;
    }
    // SAFETY: live module; the builder is disposed below.
    let builder = unsafe { LLVMCreateBuilderInContext(LLVMGetModuleContext(module)) };
    let m = loops::Markers {
        builder,
        hooks: Hooks::declare(module),
    };
    let mut n = 0;
    for f in program_functions(module) {
        n += loops::insert_markers(&m, f, &mut loops::find_wait_loops(f));
    }
    m.hooks.remove_unused();
    // SAFETY: created above, no longer used.
    unsafe { LLVMDisposeBuilder(builder) };
    // A module without wait loops stays untouched; marking it again later finds none either.
    if n > 0 {
        set_flag(module, MARKED);
    }
    n
}

/// Instruments `module`, unless it already was (the plugin named twice on a command line, or an
/// LTO link of instrumented modules): instrumenting twice would record every access twice.
pub fn run(module: LLVMModuleRef, filter: &Filter) -> Stats {
    if has_flag(module, DONE) {
        return Stats::default();
    }
    mark_wait_loops(module);
    // SAFETY: live module; the builder is disposed below.
    let (builder, source) = unsafe {
        let ctx = LLVMGetModuleContext(module);
        let mut len = 0usize;
        let src = LLVMGetSourceFileName(module, &mut len);
        (
            LLVMCreateBuilderInContext(ctx),
            ir::bytes_to_string(src, len),
        )
    };
    let functions = program_functions(module);
    let mut ctx = Ctx {
        module,
        builder,
        hooks: Hooks::declare(module),
        sites: Sites::new(module),
        source,
    };
    let mut stats = Stats::default();
    for f in functions {
        let name = ir::name(f);
        let memory = filter.instruments(&name, &source_files(&ctx.source, f));
        if memory {
            stats.accesses += instrument::instrument_function(&mut ctx, f);
            stats.calls += printf::record_written(&mut ctx, f);
        }
        stats.calls += calls::rewrite_calls(&mut ctx, f, memory).len();
        stats.calls += calls::mark_main_return(&mut ctx, f);
        stats.markers += loops::assign_marker_sites(&mut ctx, f);
    }
    stats.sites = ctx.sites.len();
    ctx.hooks.remove_unused();
    ctx.sites.finish();
    // SAFETY: created above, no longer used.
    unsafe { LLVMDisposeBuilder(builder) };
    if stats.changed() {
        set_flag(module, DONE);
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{verify, with_module};

    fn print(m: LLVMModuleRef) -> String {
        // SAFETY: live module; the string is disposed after copying.
        unsafe {
            let s = LLVMPrintModuleToString(m);
            let out = ir::cstr(s);
            LLVMDisposeMessage(s);
            out
        }
    }

    #[test]
    fn whole_pass_on_awkward_ir_verifies() {
        // Unreachable blocks, a switch with two cases to the exit, an exception edge out of a
        // wait loop into a landing pad, an indirect call, a wait outside any loop.
        let text = r#"
@c = global [48 x i8] zeroinitializer
@m = global [40 x i8] zeroinitializer
@x = global i32 0
declare i32 @pthread_cond_wait(ptr, ptr)
declare i32 @pthread_mutex_lock(ptr)
declare i32 @__gxx_personality_v0(...)

define void @sw(i32 %k, ptr %fp) personality ptr @__gxx_personality_v0 {
entry:
  %w0 = call i32 @pthread_cond_wait(ptr @c, ptr @m)
  br label %header
header:
  %v = load i32, ptr @x
  switch i32 %v, label %body [ i32 1, label %exit
                               i32 2, label %exit ]
body:
  %w = invoke i32 @pthread_cond_wait(ptr @c, ptr @m) to label %header unwind label %lp
exit:
  call void %fp()
  ret void
lp:
  %l = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %l
dead:
  store i32 1, ptr @x
  br label %dead
}
"#;
        with_module(text, |m| {
            let stats = run(m, &Filter::default());
            verify(m);
            let out = print(m);
            // The load and the unreachable store; both waits rewritten, the indirect call not.
            assert_eq!(stats.accesses, 2, "{out}");
            assert_eq!(stats.calls, 2, "{out}");
            // One enter; exits: the switch edge(s) to %exit and the unwind edge to %lp.
            assert_eq!(stats.markers, 3, "{out}");
            assert!(out.contains("section \"ilgen_sites\""), "{out}");
            assert!(!out.contains("placeholder"), "{out}");
        });
    }

    #[test]
    fn main_returns_and_exits_are_sync_even_in_an_excluded_main() {
        // Two returns and one exit() call in main; `leave` is not main: its return is left alone.
        let text = r#"
@x = global i32 0
declare void @exit(i32)
define void @leave() {
  store i32 1, ptr @x
  ret void
}
define i32 @main(i32 %c) {
entry:
  switch i32 %c, label %one [ i32 0, label %zero
                              i32 2, label %bye ]
zero:
  ret i32 0
one:
  ret i32 1
bye:
  call void @exit(i32 3)
  unreachable
}
"#;
        with_module(text, |m| {
            let filter = Filter::from_sources("fun:*", "", None);
            let stats = run(m, &filter);
            verify(m);
            let out = print(m);
            assert_eq!(stats.accesses, 0, "{out}");
            assert_eq!(stats.calls, 3, "{out}");
            assert_eq!(
                out.matches("call void @__ilgen_main_return(").count(),
                2,
                "{out}"
            );
            assert!(
                out.contains("call void @__ilgen_wrap_exit(i32 3, ptr"),
                "{out}"
            );
        });
    }

    #[test]
    fn untouched_module_stays_untouched() {
        let text = "define i32 @f(i32 %x) {\n  ret i32 %x\n}\n";
        with_module(text, |m| {
            let before = print(m);
            let stats = run(m, &Filter::default());
            assert!(!stats.changed());
            assert_eq!(print(m), before);
        });
    }
}
