//! The per-module driver: decides what each function gets and runs the steps in order.
//!
//! Takes a module and the [`Filter`]; gives the instrumented module and a count of what it
//! inserted. Per function: find wait loops (on the untouched CFG and calls), instrument memory
//! accesses (if the filter says so), rewrite wrapped calls, then insert the wait-loop markers
//! (last, so neither their calls nor the instructions cloned for their argument are ever
//! instrumented). Finally the site table is emitted.

use llvm_sys::core::*;
use llvm_sys::prelude::*;

use ilgen_trace::abi;

use crate::calls;
use crate::hooks::Hooks;
use crate::instrument;
use crate::ir;
use crate::loops;
use crate::options::Filter;
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

/// Instruments `module`, unless it already was (the plugin named twice on a command line, or an
/// LTO link of instrumented modules): instrumenting twice would record every access twice.
pub fn run(module: LLVMModuleRef, filter: &Filter) -> Stats {
    let done = std::ffi::CString::new(DONE).expect("no NUL");
    // SAFETY: live module.
    if unsafe { !LLVMGetNamedMetadata(module, done.as_ptr(), DONE.len()).is_null() } {
        return Stats::default();
    }
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
    let functions = ir::functions(module);
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
        // The runtime's own functions (and the hooks just declared) are never instrumented: they
        // would record themselves.
        if ir::is_declaration(f) || name.starts_with(abi::RUNTIME_PREFIX) {
            continue;
        }
        let mut wait_loops = loops::find_wait_loops(f);
        let memory = filter.instruments(&name, &source_files(&ctx.source, f));
        if memory {
            stats.accesses += instrument::instrument_function(&mut ctx, f);
        }
        let replaced = calls::rewrite_calls(&mut ctx, f, memory);
        stats.calls += replaced.len();
        stats.markers += loops::insert_markers(&mut ctx, f, &mut wait_loops, &replaced);
    }
    stats.sites = ctx.sites.len();
    ctx.hooks.remove_unused();
    ctx.sites.finish();
    // SAFETY: created above, no longer used; live module and context.
    unsafe {
        LLVMDisposeBuilder(builder);
        if stats.changed() {
            let llctx = LLVMGetModuleContext(module);
            let node = LLVMMDNodeInContext2(llctx, std::ptr::null_mut(), 0);
            LLVMAddNamedMetadataOperand(module, done.as_ptr(), LLVMMetadataAsValue(llctx, node));
        }
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
