//! The paper's Figure 1 model of Listing 1 with Figure 3's race monitor (Carril & Tichy 2015,
//! section 2.2), written as CSP_M: the race on `y` is found with the paper's schedule, `x` (always
//! under `m`) has none, and the program "deadlocks" only once both threads are done, since the
//! figure's FORK_2 and JOIN_2 end in STOP and MUTEX_m never ends, so PROGRAM cannot terminate.

use ilgen_csp::{check_text, Limits, Verdict};

/// Figure 1 and Figure 3 for variable `var`. The paper's `end.t1.t2` in JOIN_2 is `end.T2` here:
/// `end` carries one thread, as THREAD_2 uses it; the monitor's reset variable is `e`, since
/// `x` is a variable of the program.
fn model(var: &str) -> String {
    format!(
        "\
datatype Threads = T1 | T2
datatype Mutexes = m
datatype Objects = x | y
channel fork, join : Threads.Threads
channel start, end : Threads
channel lock, unlock : Threads.Mutexes
channel read, write : Threads.Objects
channel race

THREAD_1 = fork.T1.T2 -> write.T1.y -> lock.T1.m -> write.T1.x -> unlock.T1.m -> join.T1.T2 -> SKIP
THREAD_2 = start.T2 -> lock.T2.m -> write.T2.x -> unlock.T2.m -> write.T2.y -> end.T2 -> SKIP
MUTEX_m = lock.T1.m -> unlock.T1.m -> MUTEX_m
  [] lock.T2.m -> unlock.T2.m -> MUTEX_m
FORK_2 = fork.T1.T2 -> start.T2 -> STOP
JOIN_2 = end.T2 -> join.T1.T2 -> STOP
PROGRAM = (THREAD_1 ||| THREAD_2)
  [| {{|lock, unlock, fork, start, join, end|}} |]
  (MUTEX_m ||| FORK_2 ||| JOIN_2)

RACE(v) = RACE_ERR(v) /\\ ([] e : {{|read, write, lock, unlock, fork, start, join, end|}} @ e -> RACE(v))
RACE_ERR(v) = read?ta!v -> write?tb : diff(Threads, {{ta}})!v -> race -> SKIP
  [] write?ta!v -> read?tb : diff(Threads, {{ta}})!v -> race -> SKIP
  [] write?ta!v -> write?tb : diff(Threads, {{ta}})!v -> race -> SKIP

assert STOP [T= (PROGRAM [| {{|read, write, lock, unlock, fork, start, join, end|}} |] RACE({var}))
  \\ diff(Events, {{|race|}})
assert PROGRAM :[deadlock free [F]]
"
    )
}

const SYNC: [&str; 6] = ["fork", "start", "lock", "unlock", "join", "end"];

#[test]
fn the_race_on_y_is_found_with_the_papers_schedule() {
    let verdicts = check_text(&model("y"), Limits::default()).expect("the model checks");
    let Verdict::Fails { trace, .. } = &verdicts[0].1 else {
        panic!("expected a race on y, got {:?}", verdicts[0].1);
    };
    let last = trace.last().expect("a counterexample");
    assert_eq!((last.event.as_str(), last.hidden), ("race", false));
    assert!(
        trace[..trace.len() - 1].iter().all(|s| s.hidden),
        "{trace:?}"
    );
    let schedule: Vec<&str> = trace
        .iter()
        .map(|s| s.event.as_str())
        .filter(|e| SYNC.contains(&e.split('.').next().unwrap_or_default()))
        .collect();
    assert_eq!(
        schedule,
        ["fork.T1.T2", "start.T2", "lock.T2.m", "unlock.T2.m"]
    );
    // The two racing writes are the last accesses, one per thread.
    let accesses: Vec<&str> = trace
        .iter()
        .map(|s| s.event.as_str())
        .filter(|e| e.starts_with("write.") && e.ends_with(".y"))
        .collect();
    assert_eq!(accesses.len(), 2);
    assert_ne!(accesses[0], accesses[1]);
}

#[test]
fn x_is_always_under_m_so_no_race() {
    let verdicts = check_text(&model("x"), Limits::default()).expect("the model checks");
    assert!(
        matches!(verdicts[0].1, Verdict::Holds { .. }),
        "{:?}",
        verdicts[0].1
    );
}

#[test]
fn figure_1_stops_only_after_both_threads_ran_all_their_events() {
    let verdicts = check_text(&model("x"), Limits::default()).expect("the model checks");
    let Verdict::Fails { trace, .. } = &verdicts[1].1 else {
        panic!(
            "PROGRAM cannot terminate, so it ends in a deadlock: {:?}",
            verdicts[1].1
        );
    };
    assert_eq!(trace.len(), 12, "{trace:?}");
    assert!(trace.iter().all(|s| !s.hidden));
    for done in ["join.T1.T2", "end.T2"] {
        assert!(trace.iter().any(|s| s.event == done), "{trace:?}");
    }
}
