//! Call markers: the hooks through which a run recorded with `ILGEN_OPTIONS=calls=1` has its
//! calls, so that `ilgen detect --atomic GLOB` can make any function that synchronizes a
//! transaction (the runtime side is `rt/src/calls.rs`).
//!
//! Takes a module's functions at the start of the pipeline (after `atomic.rs`'s markers) and
//! which of them the pass's filter lets through; gives each one that [`may_synchronize`]
//! `%d = __ilgen_call_enter(site)` after its leading allocas (the site's line the function's own,
//! as an atomic block's begin), `__ilgen_call_leave(%d, site)` before each `ret` and `resume`,
//! and `__ilgen_call_leave(%d + 1, site)` after each `landingpad` (the calls an exception left
//! end there, the function's own goes on). Sites are null placeholders that
//! `loops::assign_marker_sites` fills in at the end, flagged `FLAG_CALL`.
//!
//! Which functions: only those that may synchronize, because a call in which no sync operation
//! runs holds no atomicity violation, while a marker costs a call even when the runtime records
//! none (the default), and in a hot leaf function would keep the loop around it from being
//! vectorized. Not the functions of library headers (libstdc++'s `std::thread` and `std::mutex`
//! machinery, whose frames would sit between a thread's start and its user code), nor those
//! `exclude=` leaves uninstrumented or all with `calls=0`, nor naked functions, functions with a
//! `musttail` call (no call may go between it and its `ret`) or with funclet EH pads.
//!
//! Why at the start of the pipeline: as for the atomic blocks, the inliner would otherwise
//! dissolve a function into its callers before its entry and exits could be found; markers
//! inserted first travel with the inlined body, so a call is recorded by the function's name
//! whatever was inlined.

use std::collections::HashSet;

use ilgen_trace::abi;
use ilgen_trace::sites::is_user_file;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::builder::BuilderError;
use inkwell::values::{AsValueRef, FunctionValue, InstructionOpcode, InstructionValue};
use llvm_sys::core::{LLVMGetCalledValue, LLVMGetTailCallKind, LLVMIsAInlineAsm};
use llvm_sys::LLVMTailCallKind;

use crate::atomic;
use crate::hooks;
use crate::ir;
use crate::loops::Markers;
use crate::redundant;

/// Whether a call of `callee`, which this module does not define, may synchronize: anything but
/// an intrinsic, a `nosync` function, one that reads no memory (`redundant::reads_no_memory`:
/// `exp`, `log`, `sqrt`...), or one of the libc memory, string, heap, mapping and
/// formatting functions the runtime wraps as accesses or heap events, or a math function LLVM
/// leaves unannotated (`redundant::is_math_without_attributes`). The runtime's own hooks
/// (atomic-block and wait-loop markers) are sync operations.
fn external_may_sync(call: InstructionValue<'_>, callee: FunctionValue<'_>) -> bool {
    let name = ir::function_name(callee);
    if name.starts_with(abi::RUNTIME_PREFIX) {
        return true;
    }
    let nosync = Attribute::get_named_enum_kind_id("nosync");
    let sync_call = name.starts_with("pthread_")
        || name.starts_with("sem_")
        || abi::EXIT_CALLS.contains(&name.as_str());
    !(name.starts_with("llvm.")
        || callee
            .get_enum_attribute(AttributeLoc::Function, nosync)
            .is_some()
        || (abi::is_wrapped(&name) && !sync_call)
        || abi::formatted(&name).is_some()
        || redundant::reads_no_memory(callee)
        || redundant::is_math_without_attributes(call, callee))
}

/// Of `functions` (this module's definitions), those that may synchronize: they call a function
/// defined elsewhere that [`external_may_sync`], a function through a pointer, or one of them that
/// may synchronize.
pub fn may_synchronize<'ctx>(functions: &[FunctionValue<'ctx>]) -> HashSet<FunctionValue<'ctx>> {
    let defined: HashSet<FunctionValue<'ctx>> = functions.iter().copied().collect();
    let mut callees: Vec<(FunctionValue<'ctx>, Vec<FunctionValue<'ctx>>)> = Vec::new();
    let mut out = HashSet::new();
    for &f in functions {
        let mut inner = Vec::new();
        let mut syncs = false;
        for i in ir::all_instructions(f) {
            if !matches!(
                i.get_opcode(),
                InstructionOpcode::Call | InstructionOpcode::Invoke | InstructionOpcode::CallBr
            ) {
                continue;
            }
            match ir::direct_callee(i) {
                Some(c) if defined.contains(&c) => inner.push(c),
                Some(c) => syncs |= external_may_sync(i, c),
                None => {
                    // SAFETY: `i` is a live call: its called operand exists.
                    let asm = unsafe { LLVMIsAInlineAsm(LLVMGetCalledValue(i.as_value_ref())) };
                    syncs |= asm.is_null();
                }
            }
        }
        if syncs {
            out.insert(f);
        } else {
            callees.push((f, inner));
        }
    }
    // Callers of a function that may synchronize may too, to the fixpoint.
    loop {
        let before = out.len();
        callees.retain(|(f, inner)| {
            let syncs = inner.iter().any(|c| out.contains(c));
            if syncs {
                out.insert(*f);
            }
            !syncs
        });
        if out.len() == before {
            return out;
        }
    }
}

/// Whether `f` is in a library header (its debug info names a file under the system's
/// directories); without debug info it is the user's.
fn in_library(f: FunctionValue<'_>) -> bool {
    ir::subprogram_file(f).is_some_and(|file| !is_user_file(&file))
}

/// Whether `f` can take the markers: not naked, no `musttail` call (which must stay right before
/// its `ret`) and no funclet EH pads (Windows exceptions, whose pads take no call of ours).
fn can_take_markers(f: FunctionValue<'_>) -> bool {
    let naked = Attribute::get_named_enum_kind_id("naked");
    f.get_enum_attribute(AttributeLoc::Function, naked)
        .is_none()
        && !ir::all_instructions(f)
            .into_iter()
            .any(|i| match i.get_opcode() {
                InstructionOpcode::Call => {
                    // SAFETY: `i` is a live call instruction.
                    let kind = unsafe { LLVMGetTailCallKind(i.as_value_ref()) };
                    kind == LLVMTailCallKind::LLVMTailCallKindMustTail
                }
                InstructionOpcode::CatchSwitch
                | InstructionOpcode::CatchPad
                | InstructionOpcode::CleanupPad => true,
                _ => false,
            })
}

/// Puts the call markers into `f`; returns how many it put.
pub fn insert_markers<'ctx>(
    m: &Markers<'ctx>,
    f: FunctionValue<'ctx>,
) -> Result<usize, BuilderError> {
    let Some(first) = atomic::entry_point(f) else {
        return Ok(0);
    };
    let all = ir::all_instructions(f);
    let exits: Vec<InstructionValue<'ctx>> = all
        .iter()
        .copied()
        .filter(|i| {
            matches!(
                i.get_opcode(),
                InstructionOpcode::Return | InstructionOpcode::Resume
            )
        })
        .collect();
    let pads: Vec<InstructionValue<'ctx>> = all
        .into_iter()
        .filter(|i| i.get_opcode() == InstructionOpcode::LandingPad)
        .collect();
    let null = m.hooks.ptr_ty.const_null();
    m.builder.position_before(&first);
    let depth = hooks::call_value(&m.builder, m.hooks.call_enter, &[null.into()])?;
    if let Some(enter) = first.get_previous_instruction() {
        atomic::locate_at_function_line(m, f, enter);
    }
    for exit in &exits {
        m.builder.position_before(exit);
        hooks::call(
            &m.builder,
            m.hooks.call_leave,
            &[depth.into(), null.into()],
            exit.get_debug_location(),
        )?;
    }
    for pad in &pads {
        let Some(next) = pad.get_next_instruction() else {
            continue;
        };
        m.builder.position_before(&next);
        let own = m
            .builder
            .build_int_add(depth, depth.get_type().const_int(1, false), "")?;
        hooks::call(
            &m.builder,
            m.hooks.call_leave,
            &[own.into(), null.into()],
            pad.get_debug_location(),
        )?;
    }
    Ok(1 + exits.len() + pads.len())
}

/// Puts call markers into each of `functions` (this module's definitions) that `chosen` lets
/// through and that may synchronize; returns how many it put.
pub fn mark<'ctx>(
    m: &Markers<'ctx>,
    functions: &[FunctionValue<'ctx>],
    chosen: impl Fn(FunctionValue<'ctx>) -> bool,
) -> Result<usize, BuilderError> {
    let syncing = may_synchronize(functions);
    let mut n = 0;
    for &f in functions {
        if syncing.contains(&f) && chosen(f) && !in_library(f) && can_take_markers(f) {
            n += insert_markers(m, f)?;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::Hooks;
    use crate::testing::{verify, with_module};

    /// The text of function `name` in the printed module.
    fn body<'a>(out: &'a str, name: &str) -> &'a str {
        let from = out.find(&format!("@{name}(")).unwrap();
        let to = out[from..].find("\n}\n").unwrap();
        &out[from..from + to]
    }

    #[test]
    fn functions_that_may_synchronize_get_markers_others_none() {
        let text = r#"
@m = global [40 x i8] zeroinitializer
@x = global i32 0
declare i32 @pthread_mutex_lock(ptr)
declare ptr @memcpy(ptr, ptr, i64)
declare void @elsewhere()
declare i32 @__gxx_personality_v0(...)
declare double @exp(double) memory(write)
declare double @constant(double) memory(none)
declare double @reads(double) memory(read)
declare double @writes_args(ptr) memory(argmem: write)
declare double @erfc(double)
declare i64 @llrintf(float)
declare double @erfcx(double)
declare double @hypot(double, double) nobuiltin

define double @math(double %x) {
  %e = call double @exp(double %x)
  %c = call double @constant(double %e)
  %w = call double @writes_args(ptr @x)
  ret double %c
}
define double @unannotated_math(double %x, float %y) {
  %e = call double @erfc(double %x)
  %r = call i64 @llrintf(float %y)
  ret double %e
}
define double @not_math(double %x) {
  %e = call double @erfcx(double %x)
  ret double %e
}
define double @math_nobuiltin_call(double %x) {
  %e = call double @erfc(double %x) nobuiltin
  ret double %e
}
define double @math_nobuiltin_declaration(double %x) {
  %e = call double @hypot(double %x, double %x)
  ret double %e
}
define double @reader(double %x) {
  %r = call double @reads(double %x)
  ret double %r
}
define i32 @leaf() {
  %v = load i32, ptr @x
  ret i32 %v
}
define void @copies(ptr %a, ptr %b) {
  %r = call ptr @memcpy(ptr %a, ptr %b, i64 4)
  %v = call i32 @leaf()
  ret void
}
define void @locks() {
  %a = alloca i32
  %r = call i32 @pthread_mutex_lock(ptr @m)
  ret void
}
define void @calls_locks(i1 %c) {
  br i1 %c, label %one, label %two
one:
  call void @locks()
  ret void
two:
  ret void
}
define void @through_pointer(ptr %f) {
  call void %f()
  ret void
}
define void @catches() personality ptr @__gxx_personality_v0 {
  invoke void @elsewhere() to label %done unwind label %lp
done:
  ret void
lp:
  %l = landingpad { ptr, i32 } cleanup
  call void @leaf()
  ret void
}
define void @header() !dbg !5 {
  call void @locks()
  ret void
}

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3}
!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: !1, producer: "t", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "a.cc", directory: "/src")
!2 = !DIFile(filename: "/usr/include/c++/12/bits/std_thread.h", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!5 = distinct !DISubprogram(name: "header", scope: !2, file: !2, line: 9, spFlags: DISPFlagDefinition, unit: !0)
"#;
        with_module(text, |m| {
            let context = m.get_context();
            let markers = Markers {
                builder: context.create_builder(),
                hooks: Hooks::declare(m),
                context,
            };
            let functions: Vec<_> = ir::functions(m)
                .into_iter()
                .filter(|&f| !ir::is_declaration(f) && !ir::function_name(f).starts_with("__"))
                .collect();
            mark(&markers, &functions, |_| true).unwrap();
            verify(m);
            let out = m.print_to_string().to_string();
            let count = |name: &str, hook: &str| body(&out, name).matches(hook).count();
            // `math`'s callees read no memory (`exp` writes `errno` only); `reader`'s may read.
            // `erfc` and `llrintf` are libm's, which LLVM leaves unannotated; `erfcx` is no C
            // library function, and `nobuiltin` on a call or declaration says the name may be
            // the program's own.
            for name in ["leaf", "copies", "header", "math", "unannotated_math"] {
                assert_eq!(count(name, "@__ilgen_call_"), 0, "{name}: {out}");
            }
            // Entry and exits; `calls_locks` only through the function it calls.
            for (name, leaves) in [
                ("locks", 1),
                ("calls_locks", 2),
                ("through_pointer", 1),
                ("catches", 2 + 1),
                ("reader", 1),
                ("not_math", 1),
                ("math_nobuiltin_call", 1),
                ("math_nobuiltin_declaration", 1),
            ] {
                assert_eq!(count(name, "@__ilgen_call_enter("), 1, "{name}: {out}");
                assert_eq!(count(name, "@__ilgen_call_leave("), leaves, "{name}: {out}");
            }
            let locks = body(&out, "locks");
            // After the alloca, and each leave gets what the enter gave.
            assert!(locks.find("alloca").unwrap() < locks.find("@__ilgen_call_enter(").unwrap());
            let depth = locks
                .split_once(" = call i32 @__ilgen_call_enter(")
                .unwrap()
                .0
                .rsplit_once('%')
                .unwrap()
                .1;
            assert!(
                locks.contains(&format!("@__ilgen_call_leave(i32 %{depth},")),
                "{locks}"
            );
            // The landing pad keeps the function's own call open: depth + 1.
            let catches = body(&out, "catches");
            let pad = &catches[catches.find("landingpad").unwrap()..];
            assert!(pad.contains("= add i32 %"), "{catches}");
        });
    }
}
