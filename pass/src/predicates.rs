//! Predicate loads: the reads whose value decides a branch of a loop that waits for another
//! thread or a branch that guards a sync operation, and the stores the recorder shows them by.
//!
//! Takes one function, before any hook is inserted into it; gives the loads (and stores) whose
//! sites the pass flags `FLAG_PREDICATE` (`ilgen_trace::sites`): a predicted schedule keeps what
//! they saw (`ilgen-analysis`'s `reads_from`); those of a loop with no sync operation inside also
//! `FLAG_SPIN`. The walk from a load to a branch is
//! [`decides::reaches`]'s; the loops are [`loops::waiting_loops`], the guards
//! [`guards::sync_guards`].

use std::collections::HashSet;

use inkwell::values::{
    BasicValue, BasicValueEnum, FunctionValue, InstructionOpcode, InstructionValue,
};

use crate::decides::reaches;
use crate::guards;
use crate::ir;
use crate::loops;
use crate::redundant;

/// The predicate loads and stores of one function, and which of them decide a loop with no sync
/// operation inside ([`loops::Waits::Spins`]).
#[derive(Debug, Default)]
pub struct Predicates<'ctx> {
    pub all: HashSet<InstructionValue<'ctx>>,
    pub spins: HashSet<InstructionValue<'ctx>>,
}

/// The loads of `f` whose value decides a branch inside a loop that waits for another thread
/// ([`loops::waiting_loops`]: a wait loop, a spin loop or a polling loop) or a branch that guards
/// a sync operation ([`guards::sync_guards`]), with the stores they read back.
///
/// Why these branches and not every branch: a waiting loop leaves only when another thread's
/// write lets it, and what each of its reads saw (not yet / now) is what the run's order of the
/// two threads was; a schedule that changes it sends the thread round the loop once more (or out
/// of it early), which no replay can follow. A guard decides which sync operations the thread
/// does, which is what a schedule lists. Reads deciding other branches stay data (see `decides.rs`
/// doc). Every branch in a waiting loop counts, not only the exiting ones: `while (a || b)`
/// leaves through the branch on `b` only, yet `a` decided to go there. The loads of a loop that
/// spins are told apart: the recorder keeps the read of its first round, and the analysis infers
/// what the round that left saw.
pub fn of(f: FunctionValue<'_>) -> Predicates<'_> {
    let mut branches = guards::sync_guards(f);
    let mut spinning = HashSet::new();
    for (body, waits) in loops::waiting_loops(f) {
        let exits =
            body.iter()
                .flat_map(|&b| ir::instructions(b))
                .filter(|i| match i.get_opcode() {
                    InstructionOpcode::Br => i.get_num_operands() == 3,
                    InstructionOpcode::Switch => true,
                    _ => false,
                });
        for branch in exits {
            branches.insert(branch);
            if waits == loops::Waits::Spins {
                spinning.insert(branch);
            }
        }
    }
    let mut out = Predicates::default();
    if branches.is_empty() {
        return out;
    }
    for load in ir::all_instructions(f)
        .into_iter()
        .filter(|&i| i.get_opcode() == InstructionOpcode::Load)
    {
        if !reaches(load, |user, idx| idx == 0 && branches.contains(&user)) {
            continue;
        }
        let store = own_store_before(load);
        out.all.extend(std::iter::once(load).chain(store));
        if reaches(load, |user, idx| idx == 0 && spinning.contains(&user)) {
            out.spins.extend(std::iter::once(load).chain(store));
        }
    }
    out
}

/// The store that `load` reads back: the last store before it in its block to the same address
/// with nothing that may sync between (`--n; if (n == 0)` of a volatile or `-O0` counter). The
/// recorder keeps that segment's write alone, so the trace shows the predicate only through the
/// store, which therefore is a predicate site too.
fn own_store_before(load: InstructionValue<'_>) -> Option<InstructionValue<'_>> {
    let ptr = ir::operand(load, 0)?;
    let mut at = load.get_previous_instruction();
    while let Some(i) = at {
        if redundant::may_sync(i) {
            return None;
        }
        if i.get_opcode() == InstructionOpcode::Store
            && ir::operand(i, 1).is_some_and(|p| same_address(p, ptr, 0))
        {
            return Some(i);
        }
        at = i.get_previous_instruction();
    }
    None
}

/// Whether pointers `a` and `b` are the same address in one block: one value, or GEPs of
/// the same operands, or loads of one stack slot (`-O0` reloads a pointer for every use).
fn same_address<'ctx>(a: BasicValueEnum<'ctx>, b: BasicValueEnum<'ctx>, depth: usize) -> bool {
    if a == b {
        return true;
    }
    let (Some(x), Some(y)) = (a.as_instruction_value(), b.as_instruction_value()) else {
        return false;
    };
    if depth > 4 || x.get_opcode() != y.get_opcode() || x.get_num_operands() != y.get_num_operands()
    {
        return false;
    }
    match x.get_opcode() {
        InstructionOpcode::GetElementPtr => {
            (0..x.get_num_operands()).all(|k| match (ir::operand(x, k), ir::operand(y, k)) {
                (Some(p), Some(q)) => same_address(p, q, depth + 1),
                _ => false,
            })
        }
        InstructionOpcode::Load => {
            let slot = |l: InstructionValue<'ctx>| {
                ir::operand(l, 0)
                    .and_then(|p| p.as_instruction_value())
                    .filter(|p| p.get_opcode() == InstructionOpcode::Alloca)
            };
            !x.get_volatile().unwrap_or(true) && slot(x).is_some() && slot(x) == slot(y)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::with_module;

    /// The names (`%name`) of `f`'s predicate loads and stores, sorted; and of those that
    /// decide a spin.
    fn predicate_names(ir_text: &str, f: &str) -> (Vec<String>, Vec<String>) {
        with_module(ir_text, |m| {
            let p = of(m.get_function(f).unwrap());
            let names = |set: &HashSet<InstructionValue<'_>>| {
                let mut names: Vec<String> = set
                    .iter()
                    .map(|i| {
                        let name = i.get_name().map(|n| n.to_string_lossy().into_owned());
                        name.unwrap_or_else(|| format!("{:?}", i.get_opcode()))
                    })
                    .collect();
                names.sort();
                names
            };
            (names(&p.all), names(&p.spins))
        })
    }

    #[test]
    fn a_spin_loops_condition_is_a_predicate_and_a_working_or_walking_loops_is_not() {
        let text = r#"
declare void @work()
declare i32 @sched_yield()
define void @spin(ptr %alive, i32 %n) {
entry:
  br label %head
head:
  %a = load volatile i32, ptr %alive
  %y = call i32 @sched_yield()
  %done = icmp eq i32 %a, %n
  br i1 %done, label %out, label %head
out:
  ret void
}
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
define void @walk(ptr %len, ptr %m) {
entry:
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %next, %head ]
  %l = call i32 @pthread_mutex_lock(ptr %m)
  %u = call i32 @pthread_mutex_unlock(ptr %m)
  %n = load i32, ptr %len
  %next = add i32 %i, 1
  %more = icmp slt i32 %next, %n
  br i1 %more, label %head, label %out
out:
  ret void
}
define void @busy(ptr %flag) {
entry:
  br label %head
head:
  %f = load i32, ptr %flag
  call void @work()
  %go = icmp ne i32 %f, 0
  br i1 %go, label %head, label %out
out:
  ret void
}
"#;
        assert_eq!(
            predicate_names(text, "spin"),
            (vec!["a".into()], vec!["a".into()])
        );
        assert!(predicate_names(text, "busy").0.is_empty());
        // Locking without yielding: a bounded pass over shared data, not a wait.
        assert!(predicate_names(text, "walk").0.is_empty());
    }

    #[test]
    fn a_loop_polling_under_a_lock_is_no_spin() {
        let text = r#"
declare i32 @usleep(i32)
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
define void @poll(ptr %ready, ptr %m) {
entry:
  br label %head
head:
  %l = call i32 @pthread_mutex_lock(ptr %m)
  %r = load i32, ptr %ready
  %u = call i32 @pthread_mutex_unlock(ptr %m)
  %s = call i32 @usleep(i32 100)
  %go = icmp eq i32 %r, 0
  br i1 %go, label %head, label %out
out:
  ret void
}
"#;
        // Each round is a segment of its own: the recorder keeps the read that left.
        assert_eq!(predicate_names(text, "poll"), (vec!["r".into()], vec![]));
    }

    #[test]
    fn a_guard_of_a_signal_is_a_predicate_with_the_store_it_reads_back() {
        let text = r#"
declare i32 @pthread_cond_signal(ptr)
define void @idle(ptr %working, ptr %cond, ptr %other) {
entry:
  %w = load volatile i32, ptr %working
  %dec = sub i32 %w, 1
  store volatile i32 %dec, ptr %working
  %again = load volatile i32, ptr %working
  %o = load i32, ptr %other
  %last = icmp eq i32 %again, 0
  br i1 %last, label %signal, label %out
signal:
  %r = call i32 @pthread_cond_signal(ptr %cond)
  br label %out
out:
  %s = add i32 %o, 1
  store i32 %s, ptr %other
  ret void
}
"#;
        // The reloaded count decides, and the store it reads back carries it; the first load
        // only feeds the store, and `other` decides nothing.
        assert_eq!(
            predicate_names(text, "idle"),
            (vec!["Store".into(), "again".into()], vec![])
        );
    }
}
