//! The checker's semantics, assertion by assertion: deadlocks of lock orders, FDR's convention
//! that a terminated process is not deadlocked, the operators' rules (external choice, interrupt,
//! sequential composition, distributed termination, hiding), the state limit and the speed on
//! tens of thousands of states.

use std::fmt::Write;
use std::time::Instant;

use ilgen_csp::{check_text, Limits, Step, Verdict};

/// The verdict of the file's only (or last) assertion.
fn verdict(text: &str) -> Verdict {
    verdict_with(text, Limits::default())
}

fn verdict_with(text: &str, limits: Limits) -> Verdict {
    let mut all = check_text(text, limits).unwrap_or_else(|e| panic!("{e}\n{text}"));
    all.pop().expect("an assertion").1
}

fn trace(v: &Verdict) -> Vec<(&str, bool)> {
    match v {
        Verdict::Fails { trace, .. } => trace
            .iter()
            .map(|Step { event, hidden }| (event.as_str(), *hidden))
            .collect(),
        other => panic!("expected a counterexample, got {other:?}"),
    }
}

fn holds(v: &Verdict) -> bool {
    matches!(v, Verdict::Holds { .. })
}

/// Two threads that take two mutexes, the second thread in `order`, forever.
fn two_locks(order: [&str; 2]) -> String {
    let [first, second] = order;
    format!(
        "\
datatype Threads = T1 | T2
datatype Mutexes = a | b
channel lock, unlock : Threads.Mutexes
P1 = lock.T1.a -> lock.T1.b -> unlock.T1.b -> unlock.T1.a -> P1
P2 = lock.T2.{first} -> lock.T2.{second} -> unlock.T2.{second} -> unlock.T2.{first} -> P2
MUTEX(m) = [] t : Threads @ lock.t.m -> unlock.t.m -> MUTEX(m)
SYSTEM = (P1 ||| P2) [| {{|lock, unlock|}} |] (MUTEX(a) ||| MUTEX(b))
assert SYSTEM :[deadlock free [F]]
"
    )
}

#[test]
fn opposite_lock_orders_deadlock_with_each_thread_holding_one_lock() {
    let v = verdict(&two_locks(["b", "a"]));
    let mut steps = trace(&v);
    steps.sort();
    assert_eq!(steps, [("lock.T1.a", false), ("lock.T2.b", false)]);
}

#[test]
fn one_lock_order_never_deadlocks() {
    assert!(holds(&verdict(&two_locks(["a", "b"]))));
}

#[test]
fn a_process_that_terminates_is_not_deadlocked() {
    let skip = "channel a, b\nP = a -> b -> SKIP\nassert P :[deadlock free [F]]\n";
    assert!(holds(&verdict(skip)));
    assert!(holds(&verdict("assert SKIP :[deadlock free [F]]\n")));
    // Distributed termination: both sides end, then the whole does.
    let both = "channel a, b\nassert (a -> SKIP ||| b -> SKIP) ; SKIP :[deadlock free [F]]\n";
    assert!(holds(&verdict(both)));
}

#[test]
fn stop_after_an_event_is_a_deadlock() {
    let v = verdict("channel a\nassert a -> STOP :[deadlock free [F]]\n");
    assert_eq!(trace(&v), [("a", false)]);
    let v = verdict("assert STOP :[deadlock free [F]]\n");
    assert_eq!(trace(&v), []);
}

#[test]
fn termination_waits_for_both_sides_of_a_parallel() {
    // `b -> STOP` never terminates, so after `a` and `b` the whole is stuck.
    let v = verdict(
        "channel a, b\nassert (a -> SKIP [| {} |] b -> STOP) ; SKIP :[deadlock free [F]]\n",
    );
    let mut steps = trace(&v);
    steps.sort();
    assert_eq!(steps, [("a", false), ("b", false)]);
}

#[test]
fn sequential_composition_starts_the_right_side_on_the_left_tick() {
    let v = verdict("channel a, b\nassert (a -> SKIP) ; (b -> STOP) :[deadlock free [F]]\n");
    assert_eq!(trace(&v), [("a", false), ("b", false)]);
}

#[test]
fn a_hidden_event_does_not_resolve_an_external_choice_a_visible_one_does() {
    // The tau of the hidden `h` leaves `c -> Q` on offer: no deadlock.
    let tau = "channel h, c\nQ = (h -> STOP) \\ {h} [] c -> Q\nassert Q :[deadlock free [F]]\n";
    assert!(holds(&verdict(tau)));
    let visible = "channel h, c\nQ = h -> STOP [] c -> Q\nassert Q :[deadlock free [F]]\n";
    assert_eq!(trace(&verdict(visible)), [("h", false)]);
}

#[test]
fn an_interrupt_takes_over_on_its_first_event_and_ends_with_the_left_tick() {
    let decls = "channel a, c\n";
    let spec_ok = "(a -> (SKIP [] c -> STOP)) [] c -> STOP";
    let imp = "(a -> SKIP) /\\ (c -> STOP)";
    assert!(holds(&verdict(&format!(
        "{decls}assert {spec_ok} [T= {imp}\n"
    ))));
    // After the tick the interrupt is gone: no `c` after `<a, ✓>`; but `<a, c>` is a trace.
    let spec = "a -> SKIP [] c -> STOP";
    let v = verdict(&format!("{decls}assert {spec} [T= {imp}\n"));
    assert_eq!(trace(&v), [("a", false), ("c", false)]);
}

#[test]
fn trace_refinement_counts_termination_as_a_visible_event() {
    let v = verdict("assert STOP [T= SKIP\n");
    assert_eq!(trace(&v), [("✓", false)]);
}

#[test]
fn counterexamples_name_hidden_events() {
    let text = "\
datatype V = v1 | v2
channel c : V
channel done
P = c?x -> c!x -> done -> STOP
assert STOP [T= (P [| {|c|} |] c.v2 -> c.v2 -> STOP) \\ {|c|}
";
    let v = verdict(text);
    assert_eq!(trace(&v), [("c.v2", true), ("c.v2", true), ("done", false)]);
}

#[test]
fn inputs_range_over_their_set_and_the_channels_type() {
    let text = "\
datatype V = v1 | v2 | v3
channel c : V.V
channel bad
P = c?x : diff(V, {v1})?y -> (c.x.y -> STOP [] bad -> STOP)
Q = c.v1.v1 -> STOP
assert STOP [T= (P [| {|c|} |] Q) \\ {|c|}
";
    // `x` cannot be v1, so P and Q never agree on the first event and `bad` is unreachable.
    assert!(holds(&verdict(text)));
}

#[test]
fn unguarded_recursion_is_an_error() {
    let err = check_text(
        "channel a\nP = P [] a -> STOP\nassert P :[deadlock free [F]]\n",
        Limits::default(),
    )
    .expect_err("P unfolds into itself");
    assert_eq!(
        err.to_string(),
        "3:1: `P` calls itself before performing any event (unguarded recursion)"
    );
}

/// `n` independent toggles: 2^n states.
fn toggles(n: usize) -> String {
    let names: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
    format!(
        "\
datatype S = {}
channel on, off : S
T(s) = on.s -> off.s -> T(s)
assert (||| s : S @ T(s)) :[deadlock free [F]]
",
        names.join(" | ")
    )
}

#[test]
fn the_state_limit_gives_up_instead_of_running_on() {
    let v = verdict_with(&toggles(20), Limits { max_states: 1_000 });
    assert_eq!(v, Verdict::GaveUp { states: 1_000 });
}

#[test]
fn tens_of_thousands_of_states_in_well_under_a_second() {
    let start = Instant::now();
    let v = verdict(&toggles(15));
    let elapsed = start.elapsed();
    assert_eq!(v, Verdict::Holds { states: 1 << 15 });
    // Timing is only meaningful for optimised builds; the bound leaves room for a loaded machine
    // (unloaded, this takes about a tenth of it).
    if !cfg!(debug_assertions) {
        assert!(elapsed.as_millis() < 1_000, "{elapsed:?}");
    }
}

/// A model shaped like ilgen's: `threads` threads that each take mutexes in turn and write
/// variables (all of them `v0`, unlocked, between sections), and the race monitor of the paper's
/// Figure 3, which offers every event in every state.
fn monitored(threads: usize, var: &str) -> String {
    let (vars, mutexes, sections) = (60, 4, 6);
    let list = |prefix: &str, n: usize| {
        (0..n)
            .map(|i| format!("{prefix}{i}"))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    let mut text = format!(
        "datatype Threads = {}\ndatatype Vars = {}\ndatatype Mutexes = {}\n\
         channel lock, unlock : Threads.Mutexes\nchannel read, write : Threads.Vars\n\
         channel race\n",
        list("t", threads),
        list("v", vars),
        list("m", mutexes)
    );
    for i in 0..threads {
        let mut body = String::new();
        for s in 0..sections {
            let (m, v) = ((i + s) % mutexes, (i * 7 + s) % vars);
            let _ = write!(
                body,
                "lock.t{i}.m{m} -> write.t{i}.v{v} -> unlock.t{i}.m{m} -> write.t{i}.v0 -> "
            );
        }
        let _ = writeln!(text, "THREAD_{i} = {body}SKIP");
    }
    let all: Vec<String> = (0..threads).map(|i| format!("THREAD_{i}")).collect();
    let _ = write!(
        text,
        "\
MUTEX(m) = [] t : Threads @ lock.t.m -> unlock.t.m -> MUTEX(m)
PROGRAM = ({}) [| {{|lock, unlock|}} |] (||| m : Mutexes @ MUTEX(m))
RACE(v) = RACE_ERR(v) /\\ ([] e : diff(Events, {{|race|}}) @ e -> RACE(v))
RACE_ERR(v) = write?ta!v -> write?tb : diff(Threads, {{ta}})!v -> race -> SKIP
  [] read?ta!v -> write?tb : diff(Threads, {{ta}})!v -> race -> SKIP
assert STOP [T= (PROGRAM [| diff(Events, {{|race|}}) |] RACE({var})) \\ diff(Events, {{|race|}})
",
        all.join(" ||| ")
    );
    text
}

#[test]
fn a_monitor_of_every_event_does_not_cost_its_alphabet_per_state() {
    // v1 is written by thread 0 only: every interleaving is explored.
    let start = Instant::now();
    let v = verdict(&monitored(3, "v1"));
    let elapsed = start.elapsed();
    let Verdict::Holds { states } = v else {
        panic!("{v:?}");
    };
    assert!(states > 10_000, "{states}");
    if !cfg!(debug_assertions) {
        assert!(
            elapsed.as_millis() < 1_000,
            "{states} states in {elapsed:?}"
        );
    }
    // v0 is written by every thread outside its sections: a race, the two writes last.
    let v = verdict(&monitored(3, "v0"));
    let steps = trace(&v);
    assert_eq!(steps.last(), Some(&("race", false)));
    let writes: Vec<&str> = steps.iter().rev().skip(1).take(2).map(|s| s.0).collect();
    assert!(
        writes
            .iter()
            .all(|w| w.starts_with("write.") && w.ends_with(".v0")),
        "{steps:?}"
    );
    assert_ne!(writes[0].split('.').nth(1), writes[1].split('.').nth(1));
}
