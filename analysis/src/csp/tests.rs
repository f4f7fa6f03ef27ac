//! The CSP_M back end against the native solver: the paper's Listing 1 model and its
//! counterexample, print/parse round trips, and, on random small runs, the checker's verdicts on
//! the exported model equal the native solver's (race per variable, deadlock).

use std::cell::Cell;

use ilgen_csp::{Limits, Verdict};
use proptest::prelude::*;

use super::counterexample::{self, Kind};
use super::translate::{self, Naming, Target};
use crate::filter;
use crate::finding::Finding;
use crate::model::{Model, ModelOp};
use crate::options::Options;
use crate::prepare::{self, Program};
use crate::solve;
use crate::state::State;
use crate::testkit::{
    check_random_runs, exit_inside_a_critical_section, listing1, LISTING1_M, LISTING1_X, LISTING1_Y,
};

fn listing1_names(addr: u64) -> Option<String> {
    match addr {
        LISTING1_X => Some("x".into()),
        LISTING1_Y => Some("y".into()),
        LISTING1_M => Some("m".into()),
        _ => None,
    }
}

fn var_named(program: &Program, addr: u64) -> usize {
    program
        .vars
        .iter()
        .position(|v| v.addr == addr)
        .expect("the variable is shared")
}

/// The checker's verdict on the single assertion of `exported`, after a print/parse round trip
/// (the checker reads what FDR would read).
fn check(exported: &translate::Exported) -> Verdict {
    let text = ilgen_csp::print(&exported.script);
    let parsed = ilgen_csp::parse(&text).expect("the printed model parses");
    assert_eq!(
        ilgen_csp::print(&parsed),
        text,
        "print . parse . print is the identity"
    );
    let env = ilgen_csp::typecheck::check(&parsed).expect("the model type-checks");
    let assertion = parsed.assertions().next().expect("one assertion");
    ilgen_csp::check_assertion(
        &env,
        assertion,
        Limits {
            max_states: 1_000_000,
        },
    )
    .expect("the checker runs")
}

fn events(verdict: &Verdict) -> Vec<String> {
    match verdict {
        Verdict::Fails { trace, .. } => trace.iter().map(|s| s.event.clone()).collect(),
        other => panic!("expected a counterexample, got {other:?}"),
    }
}

#[test]
fn listing1_exports_the_papers_figure_1_and_its_race_counterexample() {
    let program = prepare::prepare(listing1().traces());
    let y = var_named(&program, LISTING1_Y);
    let names = |v: usize| listing1_names(program.vars[v].addr);
    let naming = Naming {
        var: &names,
        object: &listing1_names,
    };
    let (model, _) = program.model.restrict(Some(y));
    let exported = translate::export(&model, &Target::Race { var: y }, &naming);
    let text = ilgen_csp::print(&exported.script);
    for def in [
        "THREAD_1 =",
        "THREAD_2 =",
        "MUTEX_m =",
        "FORK_2 =",
        "JOIN_2 =",
        "PROGRAM =",
    ] {
        assert!(text.contains(def), "no `{def}` in\n{text}");
    }
    assert!(text.contains("assert STOP [T="), "{text}");

    let trace = events(&check(&exported));
    let sync: Vec<&str> = trace
        .iter()
        .map(String::as_str)
        .filter(|e| !e.starts_with("write.") && !e.starts_with("read.") && *e != "race")
        .collect();
    assert_eq!(sync, ["fork.t1.t2", "start.t2", "lock.t2.m", "unlock.t2.m"]);
    let Finding::Race {
        first,
        second,
        schedule,
    } = counterexample::finding(&exported, &model, &trace, Kind::Race).expect("maps back")
    else {
        panic!("a race")
    };
    assert_eq!((first.thread, second.thread), (0, 1));
    assert_eq!(schedule.prefix, 0);
    assert!(schedule_runs(&model, &schedule.steps));

    // x is always under m: no race; and Listing 1 cannot deadlock.
    let x = var_named(&program, LISTING1_X);
    let (model_x, _) = program.model.restrict(Some(x));
    let exported_x = translate::export(&model_x, &Target::Race { var: x }, &naming);
    assert!(matches!(check(&exported_x), Verdict::Holds { .. }));
    let (sync_only, _) = program.model.restrict(None);
    let exported_d = translate::export(&sync_only, &Target::Deadlock, &naming);
    assert!(matches!(check(&exported_d), Verdict::Holds { .. }));
}

#[test]
fn the_full_export_round_trips_and_has_one_assertion_per_survivor_and_deadlock() {
    let program = prepare::prepare(listing1().traces());
    let (survivors, _) = filter::filter(&program);
    let vars = survivors.iter().map(|s| s.var).collect();
    let exported = translate::export(&program.model, &Target::All { vars }, &Naming::plain());
    let text = ilgen_csp::print(&exported.script);
    let parsed = ilgen_csp::parse(&text).expect("parses");
    assert_eq!(parsed, exported.script);
    assert_eq!(exported.script.assertions().count(), survivors.len() + 1);
}

/// Whether the sync events of `steps` can run in that order under the native rules. Schedules do
/// not list a thread's release of its mutex to wait at a wait-loop exit (replay needs no step for
/// it: the real thread waits): a step blocked by such a holder may have it released first.
fn schedule_runs(model: &Model, steps: &[crate::model::At]) -> bool {
    let mut state = State::initial(model);
    steps.iter().all(|at| {
        if !model.threads[at.thread].events[at.index].constrains() {
            return true;
        }
        if state.advance(model, at.thread, at.index) {
            return true;
        }
        for t in 0..model.threads.len() {
            if let Some(stop) = model.next_stop(t, state.pos[t]) {
                let op = model.op(crate::model::At {
                    thread: t,
                    index: stop,
                });
                if let Some(op) = op {
                    state.release_to_wait(model, t, op);
                }
            }
        }
        state.advance(model, at.thread, at.index)
    })
}

fn native_options() -> Options {
    Options {
        window: usize::MAX,
        max_states: usize::MAX,
        ..crate::testkit::options()
    }
}

/// The checker's finding for `target` on `model`, checked to be reachable by the native rules.
fn checker_finding(model: &Model, target: Target, kind: Kind) -> Option<Finding> {
    let exported = translate::export(model, &target, &Naming::plain());
    match check(&exported) {
        Verdict::Holds { .. } => None,
        Verdict::GaveUp { states } => panic!("gave up after {states} states"),
        verdict @ Verdict::Fails { .. } => {
            let finding = counterexample::finding(&exported, model, &events(&verdict), kind)
                .expect("the counterexample maps back");
            let (Finding::Race { schedule, .. } | Finding::Deadlock { schedule, .. }) = &finding;
            assert!(schedule_runs(model, &schedule.steps), "{finding:?}");
            Some(finding)
        }
    }
}

#[test]
fn checker_verdicts_equal_the_native_solvers_on_random_runs() {
    let (races, clean, deadlocks) = (Cell::new(0), Cell::new(0), Cell::new(0));
    check_random_runs(0x2545_f491_4f6c_dd1d, 400, |run| {
        let program = prepare::prepare(run.traces());
        let (survivors, _) = filter::filter(&program);
        for var in 0..program.vars.len() {
            let native = survivors.iter().find(|s| s.var == var).is_some_and(|s| {
                !solve::races(&program, s, &native_options())
                    .findings
                    .is_empty()
            });
            let (model, _) = program.model.restrict(Some(var));
            let csp = checker_finding(&model, Target::Race { var }, Kind::Race).is_some();
            prop_assert_eq!(
                csp,
                native,
                "variable {}: checker vs native\n{:#?}",
                var,
                run.traces()
            );
            let count = if native { &races } else { &clean };
            count.set(count.get() + 1);
        }
        let native = !solve::deadlocks(&program, &native_options())
            .findings
            .is_empty();
        let (model, _) = program.model.restrict(None);
        let csp = checker_finding(&model, Target::Deadlock, Kind::Deadlock).is_some();
        prop_assert_eq!(
            csp,
            native,
            "deadlock, checker vs native\n{:#?}",
            run.traces()
        );
        deadlocks.set(deadlocks.get() + usize::from(native));
        Ok(())
    });
    let (races, clean, deadlocks) = (races.get(), clean.get(), deadlocks.get());
    // The generator must exercise both verdicts of both questions.
    assert!(
        races > 50 && clean > 50 && deadlocks > 10,
        "{races} {clean} {deadlocks}"
    );
}

#[test]
fn the_checker_finds_no_race_that_needs_a_step_after_the_exit() {
    let race = |exit| {
        let model = exit_inside_a_critical_section(exit);
        checker_finding(&model, Target::Race { var: 0 }, Kind::Race).is_some()
    };
    // Main's write comes after its unlock, which comes after the exit.
    assert!(!race(ModelOp::Exit));
    assert!(race(ModelOp::Nop), "without the exit it races");
}

#[test]
fn a_failed_rwlock_try_happens_in_the_checker_while_another_thread_writes() {
    // T1's tryrdlock failed while T0 held the rwlock for writing; past it, T1 writes x unlocked
    // while T0 writes x under the lock. The checker must let the try fail where the native
    // rules do (both derive from crate::semantics), or T1 never reaches its write.
    const RW: u64 = 0x7000;
    const X: u64 = 0x7100;
    let mut run = crate::testkit::Run::new(2);
    run.fork(0, 1)
        .sync(0, ilgen_trace::SyncOp::RwWrLock { lock: RW })
        .start(1)
        .sync(
            1,
            ilgen_trace::SyncOp::RwTryRdLock {
                lock: RW,
                acquired: false,
            },
        )
        .w(1, X, 1)
        .w(0, X, 2)
        .sync(0, ilgen_trace::SyncOp::RwUnlock { lock: RW })
        .end(1)
        .join(0, 1);
    let program = prepare::prepare(run.traces());
    let var = var_named(&program, X);
    let (survivors, _) = filter::filter(&program);
    let survivor = survivors.iter().find(|s| s.var == var).expect("x survives");
    let native = solve::races(&program, survivor, &native_options()).findings;
    assert_eq!(native.len(), 1, "{native:?}");
    let (model, _) = program.model.restrict(Some(var));
    let Some(Finding::Race { first, second, .. }) =
        checker_finding(&model, Target::Race { var }, Kind::Race)
    else {
        panic!("the checker finds the race on x")
    };
    let mut threads = [first.thread, second.thread];
    threads.sort_unstable();
    assert_eq!(threads, [0, 1]);
}
