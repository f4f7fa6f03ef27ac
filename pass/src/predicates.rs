//! Predicate loads: the reads whose value decides a branch of a loop that waits for another
//! thread or a branch that guards a sync operation, and the stores the recorder shows them by.
//!
//! Takes one function, before any hook is inserted into it; gives the loads (and stores) whose
//! sites the pass flags `FLAG_PREDICATE` (`ilgen_trace::sites`): a predicted schedule keeps what
//! they saw (`ilgen-analysis`'s `reads_from`); those of a loop with no sync operation inside also
//! `FLAG_SPIN`; and the loads that decide what the function returns to a caller that may wait
//! for it, flagged `FLAG_DECIDES` ([`Predicates::returned`]). The walk from a load to a branch is
//! [`decides::reaches`]'s; the loops are [`loops::waiting_loops`], the guards
//! [`guards::sync_guards`].

use std::collections::HashSet;

use inkwell::values::{
    BasicValue, BasicValueEnum, FunctionValue, InstructionOpcode, InstructionValue,
};

use crate::decides::reaches;
use crate::escape;
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
    /// The loads that decide what `f` returns, when `f` is a query ([`is_query`]) or through a
    /// branch choosing it ([`guards::return_guards`]): not predicates, but deciding (the
    /// analysis keeps their writers) like an address, since the caller, maybe in another
    /// translation unit, may wait for that value.
    pub returned: HashSet<InstructionValue<'ctx>>,
}

impl<'ctx> Predicates<'ctx> {
    /// Adds predicate `load` with the store it reads back ([`own_store_before`]), to the spins
    /// too when `spin`.
    fn add(&mut self, load: InstructionValue<'ctx>, spin: bool) {
        let store = own_store_before(load);
        self.all.extend(std::iter::once(load).chain(store));
        if spin {
            self.spins.extend(std::iter::once(load).chain(store));
        }
    }
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
    let mut entry_tests = Vec::new();
    for (body, waits) in loops::waiting_loops(f) {
        if let Some(test) = loops::entry_test(f, &body) {
            entry_tests.push((test, body.clone(), waits));
        }
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
    let returning = guards::return_guards(f);
    let query = is_query(f);
    let mut out = Predicates::default();
    if branches.is_empty() && returning.is_empty() && !query {
        return out;
    }
    let loads: Vec<_> = ir::all_instructions(f)
        .into_iter()
        .filter(|&i| i.get_opcode() == InstructionOpcode::Load)
        .collect();
    for &load in &loads {
        let returned = |user: InstructionValue<'_>, idx: u32| {
            (idx == 0 && returning.contains(&user))
                || (query && user.get_opcode() == InstructionOpcode::Return)
        };
        if reaches(load, returned) {
            out.returned.insert(load);
        }
        if !reaches(load, |user, idx| idx == 0 && branches.contains(&user)) {
            continue;
        }
        out.add(
            load,
            reaches(load, |user, idx| idx == 0 && spinning.contains(&user)),
        );
    }
    // A rotated loop's test before it reads what the loop's own test reads, and is the first
    // round of the wait: the one read of it the recorder keeps when the loop spins. Only loads
    // of an address the loop tests count: an `if` around the loop on something else is no part
    // of the wait.
    for (test, body, waits) in entry_tests {
        let tested: Vec<BasicValueEnum<'_>> = out
            .all
            .iter()
            .filter(|i| i.get_opcode() == InstructionOpcode::Load)
            .filter(|i| i.get_parent().is_some_and(|b| body.contains(&b)))
            .filter_map(|&i| ir::operand(i, 0))
            .collect();
        for &load in &loads {
            let Some(ptr) = ir::operand(load, 0) else {
                continue;
            };
            if load.get_parent().is_some_and(|b| body.contains(&b))
                || !tested.iter().any(|&t| same_address(t, ptr, 0))
                || !reaches(load, |user, idx| idx == 0 && user == test)
            {
                continue;
            }
            out.add(load, waits == loops::Waits::Spins);
        }
    }
    out
}

/// Whether `f` is a query: it returns a value, writes no memory but its own stack slots and
/// calls nothing but intrinsics that write nothing. Its one effect is the value it returns, so a
/// caller that calls it at all decides something by that value (`lzma_outq_is_readable` of a
/// waiting loop in another file): its loads that reach the returned value are deciding. A
/// function with effects is not taken: the status a `withdraw` returns is often ignored, and
/// keeping the writer of the balance it read and returns would hide its lost update.
fn is_query(f: FunctionValue<'_>) -> bool {
    if f.get_type().get_return_type().is_none() {
        return false;
    }
    let locals = escape::local_allocas(f);
    let local = |p: Option<BasicValueEnum<'_>>| {
        p.map(ir::underlying_object)
            .and_then(|o| o.as_instruction_value())
            .is_some_and(|o| locals.contains(&o))
    };
    ir::all_instructions(f)
        .into_iter()
        .all(|i| match i.get_opcode() {
            InstructionOpcode::Store => local(ir::operand(i, 1)),
            InstructionOpcode::AtomicRMW
            | InstructionOpcode::AtomicCmpXchg
            | InstructionOpcode::Fence => false,
            InstructionOpcode::Call | InstructionOpcode::Invoke => ir::direct_callee(i)
                .is_some_and(|c| {
                    let name = ir::function_name(c);
                    name.starts_with("llvm.") && !name.starts_with("llvm.mem")
                }),
            _ => true,
        })
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
    fn a_rotated_spins_test_before_the_loop_is_its_first_round() {
        // clang -O1's `while (atomic_load(&done) != 4) usleep(1000);`: the test is copied
        // before the loop, and only that copy's read is recorded when the loop spins.
        let text = r#"
@done = global i32 0
@other = global i32 0
declare i32 @usleep(i32)
define void @rotated() {
entry:
  %first = load atomic i32, ptr @done monotonic, align 4
  %o = load i32, ptr @other
  %ready = icmp eq i32 %first, 4
  %go = icmp ne i32 %o, 0
  %both = and i1 %ready, %go
  br i1 %both, label %out, label %pre
pre:
  br label %head
head:
  %s = call i32 @usleep(i32 1000)
  %again = load atomic i32, ptr @done monotonic, align 4
  %now = icmp eq i32 %again, 4
  br i1 %now, label %out, label %head
out:
  ret void
}
define void @guarded() {
entry:
  %o = load i32, ptr @other
  %go = icmp ne i32 %o, 0
  br i1 %go, label %head, label %out
head:
  %s = call i32 @usleep(i32 1000)
  %again = load atomic i32, ptr @done monotonic, align 4
  %now = icmp eq i32 %again, 4
  br i1 %now, label %out, label %head
out:
  ret void
}
"#;
        let both = vec!["again".to_string(), "first".to_string()];
        assert_eq!(predicate_names(text, "rotated"), (both.clone(), both));
        // An `if` around the loop on another object is not the loop's test.
        let again = vec!["again".to_string()];
        assert_eq!(predicate_names(text, "guarded"), (again.clone(), again));
    }

    #[test]
    fn a_spin_around_a_sleeps_retry_loop_is_a_spin() {
        // libstdc++'s `sleep_for` inlined: `nanosleep` retried while errno is EINTR.
        let text = r#"
declare i32 @nanosleep(ptr, ptr)
declare ptr @__errno_location()
declare void @work()
define void @sleeps(ptr %count, ptr %ts) {
entry:
  br label %head
head:
  %c = load atomic i32, ptr %count monotonic, align 4
  %done = icmp eq i32 %c, 2
  br i1 %done, label %out, label %nap
nap:
  %r = call i32 @nanosleep(ptr %ts, ptr %ts)
  %failed = icmp eq i32 %r, -1
  br i1 %failed, label %eintr, label %head
eintr:
  %e = call ptr @__errno_location()
  %errno = load i32, ptr %e
  %again = icmp eq i32 %errno, 4
  br i1 %again, label %nap, label %head
out:
  ret void
}
define void @works(ptr %count) {
entry:
  br label %head
head:
  %c = load atomic i32, ptr %count monotonic, align 4
  %done = icmp eq i32 %c, 2
  br i1 %done, label %out, label %inner
inner:
  call void @work()
  %e = call ptr @__errno_location()
  %errno = load i32, ptr %e
  %again = icmp eq i32 %errno, 4
  br i1 %again, label %inner, label %head
out:
  ret void
}
"#;
        let (all, spins) = predicate_names(text, "sleeps");
        assert!(spins.contains(&"c".to_string()), "{spins:?}");
        assert!(all.contains(&"c".to_string()), "{all:?}");
        // An inner loop that works is work: the loop around it waits for nothing.
        assert!(!predicate_names(text, "works").1.contains(&"c".to_string()));
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

    /// The names of `f`'s loads that decide what it returns, sorted.
    fn returned_names(ir_text: &str, f: &str) -> Vec<String> {
        with_module(ir_text, |m| {
            let mut names: Vec<String> = of(m.get_function(f).unwrap())
                .returned
                .iter()
                .filter_map(|i| i.get_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            names.sort();
            names
        })
    }

    #[test]
    fn a_branch_choosing_the_returned_value_decides_and_one_returning_alike_does_not() {
        let text = r#"
declare void @copy(ptr, i32)
define i32 @read(ptr %buf, ptr %extra, ptr %out) {
entry:
  %pos = load i32, ptr %buf
  call void @copy(ptr %buf, i32 %pos)
  %f = getelementptr i8, ptr %buf, i64 4
  %finished = load i32, ptr %f
  %no = icmp eq i32 %finished, 0
  br i1 %no, label %done, label %more
more:
  %x = load i32, ptr %extra
  store i32 %x, ptr %out
  br label %done
done:
  %r = phi i32 [ 0, %entry ], [ 1, %more ]
  ret i32 %r
}
define i32 @same(ptr %buf, ptr %out) {
entry:
  %v = load i32, ptr %buf
  %no = icmp eq i32 %v, 0
  br i1 %no, label %early, label %late
early:
  ret i32 0
late:
  store i32 %v, ptr %out
  ret i32 0
}
define void @nothing(ptr %buf, ptr %out) {
entry:
  %v = load i32, ptr %buf
  %no = icmp eq i32 %v, 0
  br i1 %no, label %early, label %late
early:
  ret void
late:
  store i32 1, ptr %out
  ret void
}
"#;
        // `finished` picks 0 or 1; `pos` only bounds a copy, `x` is only stored.
        assert_eq!(returned_names(text, "read"), vec!["finished"]);
        // Deciding, not a predicate: no loop waits on it and no sync operation hangs on it.
        assert!(predicate_names(text, "read").0.is_empty());
        assert!(returned_names(text, "same").is_empty());
        assert!(returned_names(text, "nothing").is_empty());
    }

    #[test]
    fn minus_o0_chooses_the_returned_value_by_the_slot_it_stores() {
        let text = r#"
define i32 @read(ptr %buf) {
entry:
  %retval = alloca i32
  %f = getelementptr i8, ptr %buf, i64 4
  %finished = load i32, ptr %f
  %no = icmp eq i32 %finished, 0
  br i1 %no, label %early, label %late
early:
  store i32 0, ptr %retval
  br label %return
late:
  %pos = load i32, ptr %buf
  store i32 0, ptr %buf
  store i32 %pos, ptr %retval
  br label %return
return:
  %back = load i32, ptr %retval
  ret i32 %back
}
define i32 @set_before(ptr %buf) {
entry:
  %r = alloca i32
  store i32 0, ptr %r
  %v = load i32, ptr %buf
  %c = icmp ne i32 %v, 0
  br i1 %c, label %then, label %end
then:
  store i32 1, ptr %r
  br label %end
end:
  %back = load i32, ptr %r
  ret i32 %back
}
"#;
        assert_eq!(returned_names(text, "read"), vec!["finished"]);
        // The value stored in the branch's own block stays unless the branch stores another
        // (`set_before` is a query too: `back`, the reloaded slot, is returned, and a stack slot
        // is never instrumented).
        assert_eq!(returned_names(text, "set_before"), vec!["back", "v"]);
    }

    #[test]
    fn what_a_query_returns_decides_and_what_a_function_with_effects_returns_does_not() {
        let text = r#"
declare void @use(i32)
define i32 @ready(ptr %q) {
  %slot = alloca ptr
  store ptr %q, ptr %slot
  %p = load ptr, ptr %slot
  %f = getelementptr i8, ptr %p, i64 4
  %finished = load i32, ptr %f
  %pos = load i32, ptr %p
  %some = icmp ne i32 %pos, 0
  %r = zext i1 %some to i32
  %any = or i32 %r, %finished
  ret i32 %any
}
define i32 @withdraw(ptr %balance, i32 %amount) {
  %seen = load i32, ptr %balance
  %left = sub i32 %seen, %amount
  store i32 %left, ptr %balance
  %ok = icmp sge i32 %seen, %amount
  %r = zext i1 %ok to i32
  ret i32 %r
}
define i32 @logged(ptr %q) {
  %v = load i32, ptr %q
  call void @use(i32 %v)
  ret i32 %v
}
"#;
        // `ready` writes only its own stack slot: both reads make up its value (`p`, the
        // reloaded argument, is an address: `decides.rs`).
        assert_eq!(returned_names(text, "ready"), vec!["finished", "pos"]);
        assert!(returned_names(text, "withdraw").is_empty());
        assert!(returned_names(text, "logged").is_empty());
    }
}
