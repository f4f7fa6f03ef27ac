//! The per-module driver: decides what each function gets and runs the steps in order.
//!
//! Takes a module and the [`Filter`]; gives the instrumented module and a count of what it
//! inserted. Two steps:
//! - [`mark_wait_loops`]: wait-loop markers, with null sites. Clang runs it at the START of the
//!   pipeline: loop rotation (-O1 and up) turns `while (!p) wait();` into
//!   `if (!p) do wait(); while (!p);`, after which a predicate that already holds never enters
//!   the loop and markers placed on the rotated loop's edges would never run. The atomic-block
//!   markers of functions marked `ILGEN_ATOMIC` and the call markers go in at the same time,
//!   before inlining.
//! - [`run`]: per function, instrument memory accesses and follow `sprintf`-family calls with
//!   the hook that records what they wrote (if the filter says so; never the instructions cloned
//!   for a marker's argument), rewrite wrapped calls, give markers their sites; then emit the
//!   site table; last, the shadow-stack hooks of replay's reports (`stacks`). Clang runs it at the END of the pipeline, like TSan; it marks wait loops first
//!   itself when the start step did not run (`opt -passes=ilgen`).

use ilgen_trace::abi;
use inkwell::builder::BuilderError;
use inkwell::module::Module;
use inkwell::targets::TargetData;
use inkwell::values::FunctionValue;

use crate::atomic;
use crate::call_markers;
use crate::calls;
use crate::ctx::Ctx;
use crate::hooks::{self, Hooks};
use crate::instrument;
use crate::ir;
use crate::loops;
use crate::options::Filter;
use crate::printf;
use crate::sites::Sites;
use crate::stacks;

/// Counts of what the pass inserted, for tests and `-debug`-style summaries.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub accesses: usize,
    pub calls: usize,
    pub markers: usize,
    /// Shadow-stack hooks: per function that got them, its entry and its calls.
    pub stack_hooks: usize,
    pub sites: usize,
}

impl Stats {
    pub fn changed(&self) -> bool {
        self.accesses + self.calls + self.markers + self.stack_hooks > 0
    }
}

/// The names `src:` patterns match for function `f` of a module compiled from `source`: the
/// name as given, the name made absolute (clang runs in the compile's directory), and the file of
/// the function's debug info.
fn source_files(source: &str, f: FunctionValue<'_>) -> Vec<String> {
    let mut out = vec![source.to_owned()];
    if !source.starts_with('/') {
        if let Ok(cwd) = std::env::current_dir() {
            out.push(cwd.join(source).to_string_lossy().into_owned());
        }
    }
    out.extend(ir::subprogram_file(f));
    out
}

/// Named metadata marking a module this pass has instrumented.
const DONE: &str = "ilgen.instrumented";
/// Named metadata marking a module whose wait loops have their markers.
const MARKED: &str = "ilgen.wait_loops_marked";

fn has_flag(module: &Module<'_>, flag: &str) -> bool {
    module.get_global_metadata_size(flag) > 0
}

fn set_flag(module: &Module<'_>, flag: &str) {
    let node = module.get_context().metadata_node(&[]);
    // Refused only for a non-node; an empty node is one.
    let _ = module.add_global_metadata(flag, &node);
}

/// The functions the pass works on: defined here, and not the runtime's own (nor the hooks): they
/// would record themselves.
fn program_functions<'ctx>(module: &Module<'ctx>) -> Vec<FunctionValue<'ctx>> {
    ir::functions(module)
        .into_iter()
        .filter(|&f| {
            !ir::is_declaration(f) && !ir::function_name(f).starts_with(abi::RUNTIME_PREFIX)
        })
        .collect()
}

/// Puts enter/exit markers (with null sites) around every wait loop of `module`, begin/end
/// markers around every function marked atomic (in the source, or by `filter`), and call markers
/// into every function that may synchronize (`call_markers`), once; returns how many it inserted.
pub fn mark_wait_loops(module: &Module<'_>, filter: &Filter) -> Result<usize, BuilderError> {
    if has_flag(module, MARKED) {
        return Ok(0);
    }
    let context = module.get_context();
    let m = loops::Markers {
        builder: context.create_builder(),
        hooks: Hooks::declare(module),
        context,
    };
    let mut n = 0;
    for f in program_functions(module) {
        n += loops::insert_markers(&m, f, &mut loops::find_wait_loops(f))?;
    }
    for f in atomic::marked_functions(module, filter) {
        n += atomic::insert_markers(&m, f)?;
    }
    if !filter.no_calls {
        let source = module.get_source_file_name().to_string_lossy().into_owned();
        n += call_markers::mark(&m, &program_functions(module), |f| {
            filter.instruments(&ir::function_name(f), &source_files(&source, f))
        })?;
    }
    m.hooks.remove_unused();
    // A module without wait loops stays untouched; marking it again later finds none either.
    if n > 0 {
        set_flag(module, MARKED);
    }
    Ok(n)
}

/// Instruments `module`, unless it already was (the plugin named twice on a command line, or an
/// LTO link of instrumented modules): instrumenting twice would record every access twice.
pub fn run(module: &Module<'_>, filter: &Filter) -> Result<Stats, BuilderError> {
    if has_flag(module, DONE) {
        return Ok(Stats::default());
    }
    mark_wait_loops(module, filter)?;
    let strengthened = atomic::strengthen_marker_declarations(module);
    let functions = program_functions(module);
    let mut ctx = Ctx {
        module,
        builder: module.get_context().create_builder(),
        hooks: Hooks::declare(module),
        sites: Sites::new(module),
        layout: TargetData::create(&module.get_data_layout().as_str().to_string_lossy()),
        source: module.get_source_file_name().to_string_lossy().into_owned(),
        cover: !filter.no_cover && hooks::may_read_cover_table(module),
    };
    let mut stats = Stats::default();
    for f in functions {
        let name = ir::function_name(f);
        let memory = filter.instruments(&name, &source_files(&ctx.source, f));
        if memory {
            stats.accesses += instrument::instrument_function(&mut ctx, f)?;
            stats.calls += printf::record_written(&mut ctx, f)?;
        }
        stats.calls += calls::rewrite_calls(&mut ctx, f, memory)?.len();
        stats.calls += calls::mark_main_return(&mut ctx, f)?;
        stats.calls += calls::mark_sem_open(&mut ctx, f)?;
        stats.markers += loops::assign_marker_sites(&mut ctx, f);
        // Last: the calls the steps above made to the runtime get no stack hook.
        if memory && !filter.no_stacks {
            stats.stack_hooks += stacks::add_hooks(&mut ctx, f);
        }
    }
    stats.sites = ctx.sites.len();
    ctx.hooks.remove_unused();
    ctx.sites.finish(module);
    if stats.changed() || strengthened {
        set_flag(module, DONE);
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use ilgen_trace::sites::{Frame, SiteTable, UNIT};
    use inkwell::values::AsValueRef;
    use llvm_sys::core::{LLVMConstIntGetZExtValue, LLVMGetOperand, LLVMIsAConstantExpr};

    use super::*;
    use crate::sites::BLOB;
    use crate::testing::{verify, with_module};

    fn print(m: &Module<'_>) -> String {
        m.print_to_string().to_string()
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
            let stats = run(m, &Filter::default()).unwrap();
            verify(m);
            let out = print(m);
            // The load and the unreachable store; both waits rewritten, the indirect call not.
            assert_eq!(stats.accesses, 2, "{out}");
            assert_eq!(stats.calls, 2, "{out}");
            // One enter; exits: the switch edge(s) to %exit and the unwind edge to %lp. Then the
            // call markers: the entry, the `ret`, the `resume` and the landing pad.
            assert_eq!(stats.markers, 3 + 4, "{out}");
            assert!(out.contains("section \"ilgen_sites\""), "{out}");
            assert!(!out.contains("placeholder"), "{out}");
            // The constructor that registers the linked object's section: hidden references,
            // so that a shared object's resolve to its own section.
            for bound in ["__start_ilgen_sites", "__stop_ilgen_sites"] {
                assert!(
                    out.contains(&format!("@{bound} = extern_weak hidden global i8")),
                    "{out}"
                );
            }
            assert!(
                out.contains(
                    "call void @__ilgen_sites_module(ptr @__start_ilgen_sites, ptr @__stop_ilgen_sites)"
                ),
                "{out}"
            );
            assert!(
                out.contains("@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 0, ptr @ilgen.sites.ctor, ptr null }]"),
                "{out}"
            );
        });
    }

    #[test]
    fn main_returns_and_exits_are_sync_even_in_an_excluded_main() {
        // Two returns and calls of exit(), _exit() and _Exit() in main; `leave` is not main: its
        // return is left alone.
        let text = r#"
@x = global i32 0
declare void @exit(i32)
declare void @_exit(i32)
declare void @_Exit(i32)
define void @leave() {
  store i32 1, ptr @x
  ret void
}
define i32 @main(i32 %c) {
entry:
  switch i32 %c, label %one [ i32 0, label %zero
                              i32 2, label %bye
                              i32 4, label %now
                              i32 5, label %now_c ]
zero:
  ret i32 0
one:
  ret i32 1
bye:
  call void @exit(i32 3)
  unreachable
now:
  call void @_exit(i32 4)
  unreachable
now_c:
  call void @_Exit(i32 5)
  unreachable
}
"#;
        with_module(text, |m| {
            let filter = Filter::from_sources("fun:*", "", None);
            let stats = run(m, &filter).unwrap();
            verify(m);
            let out = print(m);
            assert_eq!(stats.accesses, 0, "{out}");
            assert_eq!(stats.calls, 5, "{out}");
            assert_eq!(
                out.matches("call void @__ilgen_main_return(").count(),
                2,
                "{out}"
            );
            for call in [
                "@__ilgen_wrap_exit(i32 3, ptr",
                "@__ilgen_wrap__exit(i32 4, ptr",
                "@__ilgen_wrap__Exit(i32 5, ptr",
            ] {
                assert!(out.contains(&format!("call void {call}")), "{out}");
            }
        });
    }

    #[test]
    fn untouched_module_stays_untouched() {
        let text = "define i32 @f(i32 %x) {\n  ret i32 %x\n}\n";
        with_module(text, |m| {
            let before = print(m);
            let stats = run(m, &Filter::default()).unwrap();
            assert!(!stats.changed());
            assert_eq!(print(m), before);
        });
    }

    /// The blob the pass emitted, and the site offset each hook call passes, in call order.
    fn blob_and_offsets(m: &Module<'_>) -> (Vec<u8>, Vec<u64>) {
        let g = m.get_global(BLOB).expect("the pass emitted a blob");
        let init = g.get_initializer().unwrap().into_array_value();
        let blob = init.as_const_string().unwrap().to_vec();
        let mut offsets = Vec::new();
        for f in ir::functions(m) {
            for i in ir::all_instructions(f) {
                if ir::direct_callee(i).is_none() {
                    continue;
                }
                // The shadow-stack hooks without a site argument.
                let Some(last) = ir::num_call_args(i).checked_sub(1) else {
                    continue;
                };
                let site = ir::operand(i, last).unwrap();
                // inkwell has no API for a constant expression's operands.
                // SAFETY: `site` is live; its operands are read only once it is known to be a
                // constant expression, a GEP (global, offset) as the pass builds sites.
                unsafe {
                    let site = site.as_value_ref();
                    if LLVMIsAConstantExpr(site).is_null() {
                        continue;
                    }
                    assert_eq!(
                        LLVMGetOperand(site, 0),
                        g.as_value_ref(),
                        "site points into the blob"
                    );
                    offsets.push(LLVMConstIntGetZExtValue(LLVMGetOperand(site, 1)));
                }
            }
        }
        (blob, offsets)
    }

    #[test]
    fn emitted_blob_parses_and_offsets_name_the_right_sites() {
        // `task`: `lock_guard` (std_mutex.h) inlined at acct.cpp:14 in Account::deposit, itself
        // inlined into task at acct.cpp:24; `__gthread_mutex_lock` (gthr-default.h) inlined into
        // the guard; the store after it is the user's own line 15 of deposit, inlined into task.
        let text = r#"
@g = global i32 0
declare i32 @pthread_mutex_lock(ptr)

define void @f() !dbg !5 {
  store i32 1, ptr @g, !dbg !8
  %r = call i32 @pthread_mutex_lock(ptr @g), !dbg !9
  ret void
}

define void @nodebug() {
  store i32 2, ptr @g
  ret void
}

define void @_Z4taskv() !dbg !21 {
  %r = call i32 @pthread_mutex_lock(ptr @g), !dbg !30
  store i32 1, ptr @g, !dbg !31
  ret void
}

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: !1, producer: "t", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "a.c", directory: "/src")
!2 = !DIFile(filename: "/abs/b.h", directory: "/src")
!3 = !{i32 7, !"Dwarf Version", i32 5}
!4 = !{i32 2, !"Debug Info Version", i32 3}
!5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 1, type: !6, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{null}
!8 = !DILocation(line: 3, column: 7, scope: !5)
!9 = !DILocation(line: 4, column: 2, scope: !10)
!10 = !DILexicalBlockFile(scope: !5, file: !2, discriminator: 0)
!20 = !DIFile(filename: "acct.cpp", directory: "/src")
!21 = distinct !DISubprogram(name: "task", linkageName: "_Z4taskv", scope: !20, file: !20, line: 22, type: !6, spFlags: DISPFlagDefinition, unit: !0)
!22 = distinct !DISubprogram(name: "deposit", linkageName: "_ZN7Account7depositEl", scope: !20, file: !20, line: 12, type: !6, spFlags: DISPFlagDefinition, unit: !0)
!23 = !DIFile(filename: "/usr/include/c++/12/bits/std_mutex.h", directory: "/src")
!24 = distinct !DISubprogram(name: "lock_guard", linkageName: "_ZNSt10lock_guardISt5mutexEC2ERS0_", scope: !23, file: !23, line: 249, type: !6, spFlags: DISPFlagDefinition, unit: !0)
!25 = !DIFile(filename: "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/x86_64-linux-gnu/c++/12/bits/gthr-default.h", directory: "/src")
!26 = distinct !DISubprogram(name: "__gthread_mutex_lock", linkageName: "_ZL20__gthread_mutex_lockP15pthread_mutex_t", scope: !25, file: !25, line: 745, type: !6, spFlags: DISPFlagDefinition, unit: !0)
!27 = distinct !DILocation(line: 24, column: 8, scope: !21)
!28 = distinct !DILocation(line: 14, column: 33, scope: !22, inlinedAt: !27)
!29 = distinct !DILocation(line: 250, column: 19, scope: !24, inlinedAt: !28)
!30 = !DILocation(line: 749, column: 12, scope: !26, inlinedAt: !29)
!31 = !DILocation(line: 15, column: 13, scope: !22, inlinedAt: !27)
"#;
        with_module(text, |m| {
            // The call markers of `f` and `task` would add sites of their own.
            run(m, &Filter::from_sources("", "", Some("calls=0"))).unwrap();
            verify(m);
            let (blob, offsets) = blob_and_offsets(m);
            assert_eq!(blob.len() % UNIT, 0);
            let table = SiteTable::parse(&blob, str::to_owned).unwrap();
            assert_eq!(table.len(), 5);
            let sites: Vec<_> = offsets
                .iter()
                .map(|&o| table.get((o as usize / UNIT) as _).unwrap())
                .collect();
            let at_frame = |s: &Frame| (s.file.clone(), s.line, s.column, s.symbol.clone());
            let at = |file: &str, line, column, symbol: &str| {
                (file.to_owned(), line, column, symbol.to_owned())
            };
            let frames: Vec<_> = sites.iter().map(|s| at_frame(&s.frame)).collect();
            assert_eq!(
                frames,
                vec![
                    at("/src/a.c", 3, 7, "f"),
                    at("/abs/b.h", 4, 2, "f"),
                    at("<unknown>", 0, 0, "nodebug"),
                    // The lock's site: the user's line the header code was inlined at.
                    at("/src/acct.cpp", 14, 33, "_ZN7Account7depositEl"),
                    at("/src/acct.cpp", 15, 13, "_ZN7Account7depositEl"),
                ]
            );
            let gthr = "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/x86_64-linux-gnu/c++/12/bits/gthr-default.h";
            assert_eq!(
                sites[3].inlined.iter().map(at_frame).collect::<Vec<_>>(),
                vec![
                    at(
                        "/usr/include/c++/12/bits/std_mutex.h",
                        250,
                        19,
                        "_ZNSt10lock_guardISt5mutexEC2ERS0_"
                    ),
                    at(gthr, 749, 12, "_ZL20__gthread_mutex_lockP15pthread_mutex_t"),
                ]
            );
            assert!(sites
                .iter()
                .enumerate()
                .all(|(i, s)| (i == 3) != s.inlined.is_empty()));
            // Both of deposit's sites are in task, where deposit is inlined at line 24.
            let task = vec![at("/src/acct.cpp", 24, 8, "_Z4taskv")];
            for (i, s) in sites.iter().enumerate() {
                let callers: Vec<_> = s.callers.iter().map(at_frame).collect();
                assert_eq!(callers, if i >= 3 { task.clone() } else { vec![] });
            }
        });
    }

    #[test]
    fn marked_function_gets_begin_and_an_end_per_exit_others_nothing() {
        let text = r#"
@x = global i32 0
@.str = private constant [13 x i8] c"ilgen_atomic\00", section "llvm.metadata"
@.other = private constant [6 x i8] c"other\00", section "llvm.metadata"
@llvm.global.annotations = appending global [2 x { ptr, ptr, ptr, i32, ptr }] [
  { ptr, ptr, ptr, i32, ptr } { ptr @f, ptr @.str, ptr null, i32 1, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @g, ptr @.other, ptr null, i32 2, ptr null }
], section "llvm.metadata"

define void @f(i1 %c) {
entry:
  %a = alloca i32
  br i1 %c, label %one, label %two
one:
  store i32 1, ptr @x
  ret void
two:
  ret void
}

define void @g() {
  store i32 2, ptr @x
  ret void
}
"#;
        with_module(text, |m| {
            // A marked block is a sync operation: `f` would get call markers too.
            let stats = run(m, &Filter::from_sources("", "", Some("calls=0"))).unwrap();
            verify(m);
            let out = m.print_to_string().to_string();
            assert_eq!(stats.markers, 3, "{out}");
            let f = &out[out.find("define void @f").unwrap()..out.find("define void @g").unwrap()];
            assert_eq!(
                f.matches("call void @__ilgen_tx_begin(ptr getelementptr")
                    .count(),
                1
            );
            assert_eq!(
                f.matches("call void @__ilgen_tx_end(ptr getelementptr")
                    .count(),
                2
            );
            // The begin comes after the alloca, which must stay first.
            assert!(f.find("alloca").unwrap() < f.find("__ilgen_tx_begin").unwrap());
            let g = &out[out.find("define void @g").unwrap()..out.find("declare").unwrap()];
            assert!(!g.contains("__ilgen_tx_"), "{g}");
        });
    }
}
