//! Whole-pipeline tests: hand-written runs in, candidates out.

use ilgen_trace::{OpKind, SyncOp};

use crate::candidates::{self, AccessName, Candidate, Step};
use crate::model::{At, Model, ModelEvent, RfEdge};
use crate::options::Options;
use crate::testkit::{self, listing1, options, Run, LISTING1_M, LISTING1_X, LISTING1_Y};

const X: u64 = LISTING1_X;
const Y: u64 = LISTING1_Y;
const D: u64 = 0x3000;
const M: u64 = LISTING1_M;
const M2: u64 = 0x9100;
const C: u64 = 0xc000;

fn detect(r: &Run) -> Vec<Candidate> {
    let found = crate::analyze(r.traces(), &options())
        .expect("native analysis")
        .1;
    for c in &found {
        let schedule = c.schedule();
        // Replay waits for every sync operation of a thread that is not next in the schedule:
        // each thread's steps must be its first operations, in order.
        let mut next: std::collections::HashMap<u32, u32> = Default::default();
        for s in schedule.steps() {
            let n = next.entry(s.tid).or_default();
            assert_eq!(
                s.op_index, *n,
                "thread {} skips an operation: {c:#?}",
                s.tid
            );
            *n += 1;
        }
    }
    found
}

fn ops(
    steps: impl IntoIterator<Item = Step>,
) -> Vec<(u32, &'static str, Option<u64>, Option<u32>)> {
    steps
        .into_iter()
        .map(|s| (s.tid, s.op.name(), s.object, s.peer))
        .collect()
}

#[test]
fn listing1_gives_one_race_on_y_with_the_papers_schedule() {
    let found = detect(&listing1());
    assert_eq!(found.len(), 1, "{found:#?}");
    let Candidate::Race {
        object,
        accesses,
        schedule,
        ..
    } = &found[0]
    else {
        panic!("expected a race: {found:#?}");
    };
    assert_eq!((object.addr, object.len), (Y, 4));
    let mut sides: Vec<_> = accesses.iter().map(|a| (a.tid, a.site, a.access)).collect();
    sides.sort_unstable_by_key(|s| s.0);
    assert_eq!(
        sides,
        vec![(0, 6, AccessName::Write), (1, 17, AccessName::Write)]
    );
    assert_eq!(schedule.prefix_steps, 0);
    assert_eq!(
        ops(schedule.steps()),
        vec![
            (0, "fork", None, Some(1)),
            (1, "start", None, None),
            (1, "lock", Some(M), None),
            (1, "unlock", Some(M), None),
        ]
    );
}

/// benchmarks/scenarios/s19: the worker's trylock fails while main rotates the log, and its
/// fallback counts the drop without the lock; the reporter reads the count under the lock, last.
fn trylock_fallback() -> Run {
    let try_lock = |acquired| SyncOp::MutexTryLock { mutex: M, acquired };
    let mut r = Run::new(3);
    r.fork(0, 1) // 1
        .fork(0, 2) // 2
        .lock(0, M) // 3: rotating
        .start(1) // 4
        .start(2) // 5
        .sync(1, try_lock(false)) // 6
        .w(1, D, 47)
        .w(0, X, 55)
        .unlock(0, M) // 7
        .sync(1, try_lock(true)) // 8
        .w(1, X, 43)
        .unlock(1, M) // 9
        .end(1) // 10
        .lock(2, M) // 11
        .r(2, D, 76)
        .unlock(2, M) // 12
        .end(2) // 13
        .join(0, 1)
        .join(0, 2);
    r
}

#[test]
fn a_failed_trylock_is_scheduled_inside_the_holders_critical_section() {
    let found = detect(&trylock_fallback());
    assert_eq!(found.len(), 1, "{found:#?}");
    let Candidate::Race {
        object, schedule, ..
    } = &found[0]
    else {
        panic!("expected a race: {found:#?}");
    };
    assert_eq!(object.addr, D);
    // The trylock fails only while main holds the lock: main's lock before it, its unlock (which
    // the reporter's lock needs) after it.
    assert_eq!(
        ops(schedule.steps()),
        vec![
            (0, "fork", None, Some(1)),
            (0, "fork", None, Some(2)),
            (0, "lock", Some(M), None),
            (1, "start", None, None),
            (2, "start", None, None),
            (1, "trylock", Some(M), None),
            (0, "unlock", Some(M), None),
            (2, "lock", Some(M), None),
        ]
    );
}

#[test]
fn listing1_stats_count_what_each_filter_removed() {
    let (stats, _) = crate::analyze(listing1().traces(), &options()).expect("native analysis");
    let f = stats.filter;
    assert_eq!(f.vars_shared, 2);
    assert_eq!(f.vars_removed_by_lockset, 1, "x: both writes under m");
    assert_eq!(f.vars_left, 1);
    // y: main's first write is ordered before task's by fork → start; its second is not.
    assert_eq!(
        (f.pairs_total, f.pairs_removed_by_hb, f.pairs_left),
        (3, 1, 1)
    );
}

#[test]
fn every_race_pair_left_by_the_filter_is_accounted_for() {
    // Three unordered pairs on y: main's write (site 1) against task's writes at sites 2, 2 and
    // 3, in three segments. With one candidate wanted, the first pair is witnessed and the other
    // two are not tried; with one per pair of sites, the second pair is skipped for its sites.
    let mut r = Run::new(2);
    r.fork(0, 1).start(1).w(0, Y, 1);
    r.w(1, Y, 2).lock(1, M).unlock(1, M).w(1, Y, 2).lock(1, M);
    r.unlock(1, M).w(1, Y, 3).end(1).join(0, 1);
    let counts = |options: &Options| {
        let (stats, found) = crate::analyze(r.traces(), options).expect("native analysis");
        assert_eq!(stats.filter.pairs_left, 3);
        assert!(stats.not_decided.is_empty());
        let v = stats.solve;
        (
            found.len(),
            v.pairs_witnessed,
            v.pairs_same_sites,
            v.pairs_not_tried,
        )
    };
    assert_eq!(counts(&options()), (1, 1, 0, 2));
    let all_sites = Options {
        all_sites: true,
        ..options()
    };
    assert_eq!(counts(&all_sites), (2, 2, 1, 0));
}

/// main waits for the producer's signal (with a time limit when `timed`); the producer writes D
/// again after its signal, which races with main's read of D after the loop.
fn producer_consumer_with_wait_called(timed: bool) -> Run {
    let mut r = Run::new(2);
    r.fork(0, 1)
        .lock(0, M)
        .sync(0, SyncOp::WaitLoopEnter { cond: C })
        .r(0, X, 1)
        .sync(
            0,
            SyncOp::CondWait {
                cond: C,
                mutex: M,
                timed,
            },
        )
        .start(1)
        .w(1, D, 2)
        .lock(1, M)
        .w(1, X, 3)
        .sync(1, SyncOp::CondSignal { cond: C })
        .unlock(1, M)
        .sync(
            0,
            SyncOp::CondWake {
                cond: C,
                mutex: M,
                timed_out: false,
            },
        )
        .r(0, X, 4)
        .sync(0, SyncOp::WaitLoopExit { cond: C })
        .unlock(0, M)
        .r(0, D, 5)
        .w(1, D, 6)
        .end(1)
        .join(0, 1)
        .w(0, D, 7);
    r
}

#[test]
fn producer_consumer_with_wait_called_is_clean() {
    // The producer writes D again after signalling: that one does race with main's read.
    let found = detect(&producer_consumer_with_wait_called(false));
    assert_eq!(found.len(), 1, "{found:#?}");
    let Candidate::Race { accesses, .. } = &found[0] else {
        panic!("{found:#?}")
    };
    let mut sites: Vec<_> = accesses.iter().map(|a| a.site).collect();
    sites.sort_unstable();
    assert_eq!(sites, vec![5, 6]);
}

/// A timed wait's wake carries its recorded outcome into the schedule, which replay enforces;
/// an untimed wait's wake and every other step carry none.
#[test]
fn the_wake_of_a_timed_wait_carries_its_outcome() {
    for timed in [true, false] {
        let found = detect(&producer_consumer_with_wait_called(timed));
        assert_eq!(found.len(), 1, "{found:#?}");
        let outcomes: Vec<_> = found[0]
            .schedule()
            .steps()
            .filter_map(|s| s.timed_out.map(|t| (s.op, t)))
            .collect();
        let expected = if timed {
            vec![(OpKind::Wake, false)]
        } else {
            vec![]
        };
        assert_eq!(outcomes, expected, "timed: {timed}");
    }
}

/// Producer sets the predicate and signals before the consumer looks: only the loop markers
/// order the signal before the consumer's read of the data.
fn predicate_already_true(markers: bool) -> Run {
    let mut r = Run::new(2);
    r.fork(0, 1)
        .start(1)
        .w(1, D, 1)
        .lock(1, M)
        .w(1, X, 2)
        .sync(1, SyncOp::CondSignal { cond: C })
        .unlock(1, M)
        .lock(0, M);
    if markers {
        r.sync(0, SyncOp::WaitLoopEnter { cond: C });
    }
    r.r(0, X, 3);
    if markers {
        r.sync(0, SyncOp::WaitLoopExit { cond: C });
    }
    r.unlock(0, M).r(0, D, 4).end(1).join(0, 1);
    r
}

#[test]
fn producer_consumer_with_predicate_already_true_is_clean() {
    assert_eq!(detect(&predicate_already_true(true)), vec![]);
}

#[test]
fn without_wait_loop_markers_the_same_run_races() {
    let found = detect(&predicate_already_true(false));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(matches!(&found[0], Candidate::Race { object, .. } if object.addr == D));
}

/// A two-packet queue under M with signal C per enqueue and a closing broadcast; the consumer
/// starts after all of it, so each of its wait loops is left without a wait. The producer writes
/// packet 1's field D before its enqueue or (the bug) after it; the consumer reads D once it has
/// dequeued packet 1.
fn queue_handoff(stamp_after_enqueue: bool) -> Run {
    let (head, closed) = (X, Y);
    let mut r = Run::new(3);
    r.fork(0, 1).fork(0, 2).start(1);
    for packet in 0..2 {
        if packet == 0 && !stamp_after_enqueue {
            r.w(1, D, 1);
        }
        r.lock(1, M)
            .w(1, head, 2)
            .sync(1, SyncOp::CondSignal { cond: C })
            .unlock(1, M);
        if packet == 0 && stamp_after_enqueue {
            r.w(1, D, 3);
        }
    }
    r.lock(1, M)
        .w(1, closed, 4)
        .sync(1, SyncOp::CondBroadcast { cond: C })
        .unlock(1, M)
        .end(1)
        .start(2);
    // Two dequeues, then the exit that finds the queue closed and empty.
    for packet in 0..3 {
        r.lock(2, M)
            .sync(2, SyncOp::WaitLoopEnter { cond: C })
            .r(2, head, 5)
            .r(2, closed, 6)
            .sync(2, SyncOp::WaitLoopExit { cond: C })
            .w(2, head, 7)
            .unlock(2, M);
        if packet == 0 {
            r.r(2, D, 8);
        }
    }
    r.end(2).join(0, 1).join(0, 2);
    r
}

#[test]
fn a_dequeue_can_follow_its_own_enqueue_when_the_consumer_never_waited() {
    // The consumer's first loop exit needs only the first enqueue's signal, not the closing
    // broadcast: it may dequeue packet 1 before the producer stamps it.
    let found = detect(&queue_handoff(true));
    assert_eq!(found.len(), 1, "{found:#?}");
    let Candidate::Race {
        object,
        accesses,
        schedule,
        ..
    } = &found[0]
    else {
        panic!("{found:#?}")
    };
    assert_eq!(object.addr, D);
    let mut sites: Vec<_> = accesses.iter().map(|a| a.site).collect();
    sites.sort_unstable();
    assert_eq!(sites, vec![3, 8]);
    // The producer has signalled once, and neither enqueued packet 2 nor closed the queue.
    let signals = |op: ilgen_trace::OpKind| {
        schedule
            .steps()
            .filter(|s| s.tid == 1 && s.op == op)
            .count()
    };
    assert_eq!(
        (
            signals(ilgen_trace::OpKind::Signal),
            signals(ilgen_trace::OpKind::Broadcast)
        ),
        (1, 0)
    );
}

#[test]
fn a_payload_written_before_its_enqueue_is_clean_when_the_consumer_never_waited() {
    assert_eq!(detect(&queue_handoff(false)), vec![]);
}

#[test]
fn barrier_separated_phases_are_clean() {
    let b = 0xb000;
    let enter = SyncOp::BarrierEnter { barrier: b };
    let exit = |serial| SyncOp::BarrierExit { barrier: b, serial };
    let mut r = Run::new(3);
    r.fork(0, 1)
        .fork(0, 2)
        .start(1)
        .w(1, X, 1)
        .sync(1, enter)
        .start(2)
        .w(2, Y, 2)
        .sync(2, enter)
        .sync(2, exit(true))
        .r(2, X, 3)
        .sync(1, exit(false))
        .r(1, Y, 4)
        // Second use of the same barrier: a new instance.
        .sync(1, enter)
        .sync(2, enter)
        .sync(1, exit(true))
        .w(1, Y, 5)
        .sync(2, exit(false))
        .w(2, X, 6)
        .end(1)
        .end(2)
        .join(0, 1)
        .join(0, 2)
        .r(0, X, 7)
        .r(0, Y, 8);
    assert_eq!(detect(&r), vec![]);
}

#[test]
fn fork_join_handoff_is_clean() {
    let mut r = Run::new(2);
    r.w(0, D, 1)
        .fork(0, 1)
        .start(1)
        .w(1, D, 2)
        .end(1)
        .join(0, 1)
        .r(0, D, 3)
        .w(0, D, 4);
    assert_eq!(detect(&r), vec![]);
}

#[test]
fn rwlock_readers_and_a_writer_are_clean() {
    let l = 0x7000;
    let mut r = Run::new(3);
    r.fork(0, 1)
        .fork(0, 2)
        .sync(0, SyncOp::RwWrLock { lock: l })
        .w(0, D, 1)
        .sync(0, SyncOp::RwUnlock { lock: l })
        .start(1)
        .start(2)
        .sync(1, SyncOp::RwRdLock { lock: l })
        .sync(2, SyncOp::RwRdLock { lock: l })
        .r(1, D, 2)
        .r(2, D, 3)
        .sync(2, SyncOp::RwUnlock { lock: l })
        .sync(1, SyncOp::RwUnlock { lock: l })
        .end(1)
        .end(2)
        .join(0, 1)
        .join(0, 2);
    assert_eq!(detect(&r), vec![]);
}

#[test]
fn a_write_under_a_read_lock_races() {
    let l = 0x7000;
    let mut r = Run::new(2);
    r.fork(0, 1)
        .sync(0, SyncOp::RwRdLock { lock: l })
        .w(0, D, 1)
        .sync(0, SyncOp::RwUnlock { lock: l })
        .start(1)
        .sync(1, SyncOp::RwRdLock { lock: l })
        .r(1, D, 2)
        .sync(1, SyncOp::RwUnlock { lock: l })
        .end(1)
        .join(0, 1);
    assert_eq!(detect(&r).len(), 1);
}

/// Thread 1 takes m then m2, thread 2 m2 then m, recorded one after the other.
fn inversion() -> Run {
    let mut r = Run::new(3);
    r.fork(0, 1)
        .fork(0, 2)
        .start(1)
        .lock(1, M)
        .lock(1, M2)
        .unlock(1, M2)
        .unlock(1, M)
        .end(1)
        .start(2)
        .lock(2, M2)
        .lock(2, M)
        .unlock(2, M)
        .unlock(2, M2)
        .end(2)
        .join(0, 1)
        .join(0, 2);
    r
}

#[test]
fn lock_order_inversion_gives_a_deadlock_candidate() {
    let found = detect(&inversion());
    assert_eq!(found.len(), 1, "{found:#?}");
    let Candidate::Deadlock { blocked, schedule } = &found[0] else {
        panic!("{found:#?}")
    };
    let mut waits = ops(blocked.iter().cloned());
    waits.sort_unstable();
    assert_eq!(
        waits,
        vec![
            (0, "join", None, Some(1)),
            (1, "lock", Some(M2), None),
            (2, "lock", Some(M), None)
        ]
    );
    // Each thread holds its first lock at the end of the schedule.
    let steps = ops(schedule.steps());
    assert!(steps.contains(&(1, "lock", Some(M), None)), "{steps:?}");
    assert!(steps.contains(&(2, "lock", Some(M2), None)), "{steps:?}");
    assert_eq!(
        steps.len(),
        6,
        "fork, fork, start, lock, start, lock: {steps:?}"
    );
}

#[test]
fn an_inversion_whose_second_locks_are_tried_is_no_deadlock() {
    // s20's back-off: where the other thread holds the lock, the real trylock fails (and a timed
    // lock times out) instead of waiting, so neither thread is blocked there.
    for second in [
        |mutex| SyncOp::MutexTryLock {
            mutex,
            acquired: true,
        },
        |mutex| SyncOp::MutexTimedLock {
            mutex,
            acquired: true,
        },
    ] {
        let mut r = Run::new(3);
        r.fork(0, 1).fork(0, 2);
        for (t, first, then) in [(1, M, M2), (2, M2, M)] {
            r.start(t)
                .lock(t, first)
                .sync(t, second(then))
                .unlock(t, then)
                .unlock(t, first)
                .end(t);
        }
        r.join(0, 1).join(0, 2);
        assert_eq!(detect(&r), vec![], "{:?}", second(M));
    }
}

#[test]
fn a_run_that_deadlocked_is_reported_from_its_pending_operations() {
    let mut r = Run::new(3);
    r.fork(0, 1)
        .fork(0, 2)
        .start(1)
        .start(2)
        .lock(1, M)
        .lock(2, M2)
        .pending(1, SyncOp::MutexLock { mutex: M2 })
        .pending(2, SyncOp::MutexLock { mutex: M })
        .pending(0, SyncOp::Join { child: 1 });
    let found = detect(&r);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        matches!(&found[0], Candidate::Deadlock { blocked, .. } if blocked.len() == 3),
        "{found:#?}"
    );
}

#[test]
fn candidates_file_round_trips_as_json() {
    let found = detect(&listing1());
    let json = serde_json::to_string(&found).unwrap();
    assert!(json.contains(r#""kind":"race""#), "{json}");
    let back: Vec<Candidate> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, found);
}

#[test]
fn a_gate_lock_around_the_inversion_prevents_the_deadlock() {
    let g = 0x9900;
    let mut r = Run::new(3);
    r.fork(0, 1).fork(0, 2).start(1).start(2);
    for (t, first, second) in [(1, M, M2), (2, M2, M)] {
        r.lock(t, g)
            .lock(t, first)
            .lock(t, second)
            .unlock(t, second)
            .unlock(t, first)
            .unlock(t, g)
            .end(t);
    }
    r.join(0, 1).join(0, 2);
    assert_eq!(detect(&r), vec![]);
}

#[test]
fn three_threads_in_a_lock_cycle_deadlock() {
    let m3 = 0x9200;
    let mut r = Run::new(4);
    r.fork(0, 1).fork(0, 2).fork(0, 3);
    for (t, first, second) in [(1, M, M2), (2, M2, m3), (3, m3, M)] {
        r.start(t)
            .lock(t, first)
            .lock(t, second)
            .unlock(t, second)
            .unlock(t, first)
            .end(t);
    }
    r.join(0, 1).join(0, 2).join(0, 3);
    let found = detect(&r);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        matches!(&found[0], Candidate::Deadlock { blocked, .. } if blocked.len() == 4),
        "{found:#?}"
    );
}

/// The candidates file of `r`'s analysis, as `ilgen detect` would write it.
fn candidates_file(r: &Run, options: &Options) -> crate::CandidatesFile {
    let (stats, candidates) = crate::analyze(r.traces(), options).expect("native analysis");
    crate::CandidatesFile {
        format_version: crate::candidates::FORMAT_VERSION,
        binary: "a".into(),
        build_id: "0".into(),
        stats,
        candidates,
    }
}

#[test]
fn summary_names_sites_and_objects_through_the_binary() {
    use crate::candidates::{write_summary, Limits, Names};
    let file = candidates_file(&listing1(), &options());
    let site = |id| (id == 6).then(|| "listing1.c:6 in main".to_string());
    let object = |addr| (addr == Y).then(|| "y".to_string());
    let mut text = Vec::new();
    write_summary(
        &mut text,
        &file,
        &Names {
            site: &site,
            object: &object,
        },
        &Limits {
            max_states: 10,
            window: 10,
            max_candidates: 10,
        },
    )
    .expect("written to memory");
    let text = String::from_utf8(text).expect("UTF-8");
    assert!(
        text.contains("1 candidate(s): 1 race(s), 0 deadlock(s)"),
        "{text}"
    );
    assert!(text.contains("data race on y (0x2000) (4 bytes)"), "{text}");
    assert!(
        text.contains("write by thread 0 at listing1.c:6 in main (site 6)"),
        "{text}"
    );
    assert!(text.contains("write by thread 1 at site 17"), "{text}");
    assert!(text.contains("thread 0: fork thread 1"), "{text}");
}

#[test]
#[ignore = "scale check, run with: cargo test --release -p ilgen-analysis --lib scale -- --ignored --nocapture"]
fn scale_eight_threads_forty_thousand_sync_events() {
    const STAT: u64 = 0x5000;
    let locks = [0x9000, 0x9040, 0x9080, 0x90c0];
    let mut r = Run::new(8);
    for t in 1..8 {
        r.fork(0, t).start(t);
    }
    for i in 0..3000u32 {
        for t in 1..8u32 {
            let k = ((i + t) % 4) as usize;
            r.lock(t, locks[k])
                .w(t, 0x100 + 64 * k as u64, 10 + k as u32)
                .unlock(t, locks[k])
                .w(t, 0x10000 * u64::from(t) + u64::from(i % 64) * 8, 20);
            if i % 150 == t {
                r.w(t, STAT, 30 + t);
            }
        }
    }
    for t in 1..8 {
        r.end(t).join(0, t);
    }
    let start = std::time::Instant::now();
    let (stats, found) =
        crate::analyze(r.traces(), &options_with_states(200_000)).expect("native analysis");
    eprintln!(
        "{:?}\n{stats:#?}\n{} candidates",
        start.elapsed(),
        found.len()
    );
    assert_eq!(found.len(), 1, "one race on STAT");
}

fn options_with_states(max_states: usize) -> Options {
    Options {
        max_states,
        backend: crate::options::Backend::Native,
        deciding: Default::default(),
        atomicity: false,
        transactions: None,
        ..options()
    }
}

#[test]
fn threads_left_waiting_when_main_returns_are_no_deadlock() {
    let mut r = Run::new(2);
    r.fork(0, 1)
        .start(1)
        .lock(1, M)
        .sync(
            1,
            SyncOp::CondWait {
                cond: C,
                mutex: M,
                timed: false,
            },
        )
        .w(0, D, 1)
        .pending(
            1,
            SyncOp::CondWake {
                cond: C,
                mutex: M,
                timed_out: false,
            },
        );
    assert_eq!(detect(&r), vec![]);
    // The same worker blocked while main waits to join it is one.
    r.pending(0, SyncOp::Join { child: 1 });
    let found = detect(&r);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(matches!(&found[0], Candidate::Deadlock { blocked, .. } if blocked.len() == 2));
}

/// Races on X (one site pair) and on D (four site pairs, all written with `all_sites`).
fn races_on_two_objects() -> Run {
    let mut r = Run::new(2);
    r.fork(0, 1)
        .w(0, X, 5)
        .w(0, D, 1)
        .lock(0, M)
        .unlock(0, M)
        .w(0, D, 2)
        .start(1)
        .w(1, X, 6)
        .w(1, D, 3)
        .lock(1, M2)
        .unlock(1, M2)
        .w(1, D, 4)
        .end(1)
        .join(0, 1);
    r
}

#[test]
fn candidates_are_bounded_per_variable_unless_all_sites() {
    // Two unordered writes by main and two by the child: four site pairs on D; one on X.
    let r = races_on_two_objects();
    let count = |max_per_var, all_sites| {
        let o = Options {
            max_per_var,
            all_sites,
            ..options()
        };
        let found = crate::analyze(r.traces(), &o).expect("native analysis").1;
        let mut pairs: Vec<Vec<u32>> = found
            .iter()
            .map(|c| match c {
                Candidate::Race { accesses, .. } => {
                    let mut s: Vec<u32> = accesses.iter().map(|a| a.site).collect();
                    s.sort_unstable();
                    s
                }
                Candidate::Deadlock { .. } | Candidate::Atomicity { .. } => panic!("{c:?}"),
            })
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        assert_eq!(pairs.len(), found.len(), "one candidate per site pair");
        found.len()
    };
    assert_eq!(count(1, false), 2);
    assert_eq!(count(3, false), 4);
    assert_eq!(count(1, true), 5);
}

#[test]
fn max_candidates_keeps_the_first_in_order_and_counts_the_rest() {
    let r = races_on_two_objects();
    let all_sites = Options {
        all_sites: true,
        ..options()
    };
    let (stats, all) = crate::analyze(r.traces(), &all_sites).expect("native analysis");
    assert_eq!((all.len(), stats.not_written), (5, 0), "{all:#?}");
    let capped = Options {
        max_candidates: 3,
        ..all_sites
    };
    let (stats, first) = crate::analyze(r.traces(), &capped).expect("native analysis");
    assert_eq!(first, all[..3]);
    assert_eq!(stats.not_written, 2);
    let limits = crate::candidates::Limits {
        max_states: 10,
        window: 10,
        max_candidates: 3,
    };
    assert_eq!(
        crate::candidates::not_written_text(&stats, &limits),
        "ilgen: 2 more candidates not written, raise --max-candidates (now 3)\n"
    );
}

#[test]
fn a_cut_keeps_each_pair_of_sites_before_a_second_candidate_of_one() {
    // Objects 0x100, 0x200 and 0x300 race at one pair of sites (1, 2), 0x400 at another (3, 4):
    // report order gives three candidates of the first pair before the second's.
    let mut r = Run::new(2);
    r.fork(0, 1);
    for addr in [0x100, 0x200, 0x300] {
        r.w(0, addr, 1);
    }
    r.w(0, 0x400, 3).start(1);
    for addr in [0x100, 0x200, 0x300] {
        r.w(1, addr, 2);
    }
    r.w(1, 0x400, 4).end(1).join(0, 1);
    let sites = |o: &Options| {
        let (stats, found) = crate::analyze(r.traces(), o).expect("native analysis");
        let pairs: Vec<[u32; 2]> = found
            .iter()
            .map(|c| match c {
                Candidate::Race { accesses, .. } => [accesses[0].site, accesses[1].site],
                Candidate::Deadlock { .. } | Candidate::Atomicity { .. } => panic!("{c:?}"),
            })
            .map(|mut p| {
                p.sort_unstable();
                p
            })
            .collect();
        (pairs, stats.not_written)
    };
    assert_eq!(
        sites(&options()),
        (vec![[1, 2], [1, 2], [1, 2], [3, 4]], 0),
        "uncut: report order"
    );
    let capped = Options {
        max_candidates: 2,
        ..options()
    };
    assert_eq!(sites(&capped), (vec![[1, 2], [3, 4]], 2));
}

#[test]
fn candidates_file_stores_heads_as_counts_and_reads_them_back_by_the_trace() {
    use crate::candidates::{read, read_one, write};
    let all_sites = Options {
        all_sites: true,
        ..options()
    };
    let run = races_on_two_objects();
    let threads = run.traces();
    let file = candidates_file(&run, &all_sites);
    let dir = std::env::temp_dir().join(format!("ilgen-candidates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("candidates.json");
    write(&file, std::fs::File::create(&path).unwrap()).unwrap();
    assert_eq!(read(&path, &threads).unwrap(), file);
    // One candidate alone, as `ilgen replay` reads it; none past the last.
    let count = file.candidates.len();
    assert!(count >= 3, "{count} candidates");
    for (i, c) in file.candidates.iter().enumerate() {
        let one = read_one(&path, &threads, i + 1).unwrap();
        assert_eq!(one, (Some(c.clone()), file.build_id.clone(), count));
    }
    assert_eq!(read_one(&path, &threads, count + 1).unwrap().0, None);
    assert_eq!(read_one(&path, &threads, 0).unwrap().0, None);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // Each schedule is its head's counts and the steps after them, every one of its steps.
    let mut headed = 0;
    for (i, (c, w)) in file
        .candidates
        .iter()
        .zip(json["candidates"].as_array().unwrap())
        .enumerate()
    {
        let counted: u64 = w["schedule"]["head"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| pair[1].as_u64().unwrap())
            .sum();
        let listed = w["schedule"]["steps"].as_array().unwrap().len();
        assert_eq!(
            counted as usize + listed,
            c.schedule().len(),
            "candidate {}",
            i + 1
        );
        headed += usize::from(counted > 0);
    }
    assert!(headed > 0, "no schedule with a head");
    // A step the trace does not have is refused, naming the file and the candidate.
    let mut wrong = json.clone();
    let schedule = &mut wrong["candidates"][0]["schedule"];
    schedule["head"] = serde_json::json!([]);
    schedule["steps"] = serde_json::json!([{ "tid": 1, "op": "lock", "object": 1,
        "site": 1, "op_index": 9999 }]);
    std::fs::write(&path, wrong.to_string()).unwrap();
    assert_eq!(
        read(&path, &threads).unwrap_err(),
        format!(
            "{}: the schedule of candidate 1 lists lock as sync operation 9999 of thread 1, \
             which the trace does not have; run `ilgen detect` again",
            path.display()
        )
    );
    // A file of an earlier format is refused with the advice to detect again.
    let mut old = json.clone();
    let version = crate::candidates::FORMAT_VERSION;
    old["format_version"] = (version - 1).into();
    std::fs::write(&path, old.to_string()).unwrap();
    assert_eq!(
        read(&path, &threads).unwrap_err(),
        format!(
            "{} has format version {}, this ilgen reads {version}; run `ilgen detect` again",
            path.display(),
            version - 1
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_wait_abandoned_by_cancellation_blocks_nobody() {
    // As the runtime recorded a waiter cancelled in pthread_cond_wait: its wake stays pending,
    // yet the thread ends and main joins it.
    let mut r = Run::new(2);
    r.fork(0, 1)
        .start(1)
        .lock(1, M)
        .sync(
            1,
            SyncOp::CondWait {
                cond: C,
                mutex: M,
                timed: false,
            },
        )
        .pending(
            1,
            SyncOp::CondWake {
                cond: C,
                mutex: M,
                timed_out: false,
            },
        )
        .end(1)
        .join(0, 1);
    assert_eq!(detect(&r), vec![]);
}

#[test]
fn an_unjoined_worker_races_with_main_before_the_exit() {
    // The worker ran in the exit grace: its steps were recorded before main's exit.
    let mut r = Run::new(2);
    r.fork(0, 1)
        .r(0, D, 1)
        .start(1)
        .lock(1, M)
        .w(1, D, 2)
        .unlock(1, M)
        .end(1)
        .sync(0, SyncOp::Exit);
    let exit = crate::prepare::prepare(r.traces()).model.sources().exit_of;
    assert_eq!(
        exit.map(|at| at.thread),
        Some(0),
        "the run's last step ends the process"
    );
    let found = detect(&r);
    let [Candidate::Race {
        accesses, schedule, ..
    }] = &found[..]
    else {
        panic!("{found:#?}")
    };
    assert_eq!(
        accesses.iter().map(|a| a.site).collect::<Vec<_>>(),
        vec![1, 2]
    );
    // Fork, start, then the worker's lock: main's exit is not needed, and nothing follows it.
    let steps = ops(schedule.steps());
    assert_eq!(steps.len(), 3, "{steps:?}");
    assert_eq!(steps[2], (1, "lock", Some(M), None));
}

#[test]
fn an_exit_whose_handler_wakes_a_thread_does_not_end_the_model() {
    // An exit handler signals a waiting logger and reads its count without joining it: the
    // logger's write needs the signal, recorded after the exit, so that exit ended nothing.
    let mut r = Run::new(2);
    let wait = SyncOp::CondWait {
        cond: C,
        mutex: M,
        timed: false,
    };
    let wake = SyncOp::CondWake {
        cond: C,
        mutex: M,
        timed_out: false,
    };
    r.fork(0, 1)
        .start(1)
        .lock(1, M)
        .sync(1, wait)
        .sync(0, SyncOp::Exit)
        .lock(0, M)
        .sync(0, SyncOp::CondSignal { cond: C })
        .unlock(0, M)
        .r(0, D, 1)
        .sync(1, wake)
        .unlock(1, M)
        .w(1, D, 2)
        .end(1);
    assert_eq!(
        crate::prepare::prepare(r.traces()).model.sources().exit_of,
        None
    );
    let found = detect(&r);
    let [Candidate::Race { accesses, .. }] = &found[..] else {
        panic!("{found:#?}")
    };
    assert_eq!(
        accesses.iter().map(|a| a.site).collect::<Vec<_>>(),
        vec![1, 2]
    );
}

/// Main writes D at site 1 before and after a critical section on M, and at site 3 after
/// another; the child reads M's protected state, then writes D at site 2 under M2. Both writes
/// at site 1 race with the child's: two instances of the site pair (1, 2), with other schedules
/// (main's critical section before the child's, or not).
fn two_instances_of_one_site_pair() -> Run {
    let mut r = Run::new(2);
    r.fork(0, 1)
        .w(0, D, 1)
        .lock(0, M)
        .unlock(0, M)
        .start(1)
        .lock(1, M)
        .unlock(1, M)
        .lock(1, M2)
        .w(1, D, 2)
        .unlock(1, M2)
        .end(1)
        .w(0, D, 1)
        .lock(0, M)
        .unlock(0, M)
        .w(0, D, 3)
        .join(0, 1);
    r
}

#[test]
fn a_second_instance_of_a_site_pair_is_kept_as_fallback_outside_max_per_var() {
    let r = two_instances_of_one_site_pair();
    let run = |max_per_var, fallbacks| {
        let o = Options {
            max_per_var,
            fallbacks,
            ..options()
        };
        let (stats, found) = crate::analyze(r.traces(), &o).expect("native analysis");
        let summary: Vec<(Vec<u32>, Option<usize>)> = found
            .iter()
            .map(|c| {
                let Candidate::Race { accesses, .. } = c else {
                    panic!("{c:?}")
                };
                (accesses.iter().map(|a| a.site).collect(), c.fallback_of())
            })
            .collect();
        (stats.solve, found, summary)
    };
    // One candidate wanted: (1, 2) is it; its second instance is its fallback, though the
    // variable has its one candidate; (3, 2) is not tried.
    let (stats, found, summary) = run(1, 2);
    assert_eq!(summary, vec![(vec![1, 2], None), (vec![1, 2], Some(1))]);
    assert_eq!(
        (
            stats.pairs_witnessed,
            stats.pairs_fallback,
            stats.pairs_not_tried
        ),
        (1, 1, 1)
    );
    // The fallback's schedule has main's critical section on M before the child's, the first's
    // has none of main's.
    let main_steps = |c: &Candidate| c.schedule().steps().filter(|s| s.tid == 0).count();
    assert_eq!((main_steps(&found[0]), main_steps(&found[1])), (1, 3));
    // Two wanted: the fallback does not take the place of (3, 2), and comes after it.
    let (stats, _, summary) = run(2, 2);
    assert_eq!(
        summary,
        vec![
            (vec![1, 2], None),
            (vec![3, 2], None),
            (vec![1, 2], Some(1))
        ]
    );
    assert_eq!((stats.pairs_witnessed, stats.pairs_fallback), (2, 1));
    // Without fallbacks the second instance only counts as a pair whose sites had a candidate.
    let (stats, _, summary) = run(2, 0);
    assert_eq!(summary, vec![(vec![1, 2], None), (vec![3, 2], None)]);
    assert_eq!((stats.pairs_fallback, stats.pairs_same_sites), (0, 1));
}

#[test]
fn a_fallback_names_its_candidate_in_the_file_and_a_file_that_names_none_is_refused() {
    use crate::candidates::{read, write};
    let o = Options {
        fallbacks: 2,
        ..options()
    };
    let run = two_instances_of_one_site_pair();
    let threads = run.traces();
    let file = candidates_file(&run, &o);
    let dir = std::env::temp_dir().join(format!("ilgen-fallbacks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("candidates.json");
    write(&file, std::fs::File::create(&path).unwrap()).unwrap();
    assert_eq!(read(&path, &threads).unwrap(), file);
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(json["candidates"][0].get("fallback_of"), None);
    assert_eq!(json["candidates"][1]["fallback_of"], 1);
    // A fallback of itself (or of a later candidate) stands in for nothing.
    json["candidates"][1]["fallback_of"] = 2.into();
    std::fs::write(&path, json.to_string()).unwrap();
    assert_eq!(
        read(&path, &threads).unwrap_err(),
        format!(
            "{}: candidate 2 is a fallback of candidate 2, which is no earlier race candidate; \
             run `ilgen detect` again",
            path.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A random run in which threads mostly hand objects over along happens-before (main before its
/// forks and after its joins, condition signals to waits), with some unordered and some locked
/// accesses: most of its objects are ordered wholly. Every decision is the next byte of `tape`.
fn handoff_run(tape: &[u8]) -> Run {
    use ilgen_trace::AccessKind;
    let mut tape = tape.iter().copied();
    let mut below = |n: u8| {
        tape.next()
            .map_or(0, |v| (u16::from(v) * u16::from(n) / 256) as u8)
    };
    let n = 2 + u32::from(below(3));
    let mut r = Run::new(n);
    const OBJECTS: [u64; 4] = [0x100, 0x200, 0x204, 0x300];
    let kinds = [
        AccessKind::Read,
        AccessKind::Write,
        AccessKind::AtomicRead,
        AccessKind::AtomicWrite,
    ];
    let access = |r: &mut Run, t: u32, below: &mut dyn FnMut(u8) -> u8| {
        let object = OBJECTS[usize::from(below(4))];
        // Now and then two objects at once (a sweep), or a lock around it.
        let size = if below(6) == 0 { 8 } else { 4 };
        let kind = kinds[usize::from(below(4))];
        let site = 1 + u32::from(below(6));
        if below(5) == 0 {
            r.lock(t, M)
                .access(t, object, size, kind, site)
                .unlock(t, M);
        } else {
            r.access(t, object, size, kind, site);
        }
    };
    for _ in 0..below(4) {
        access(&mut r, 0, &mut below);
    }
    for c in 1..n {
        r.fork(0, c).start(c);
    }
    for _ in 0..2 + below(8) {
        let (a, b) = (u32::from(below(n as u8)), u32::from(below(n as u8)));
        if below(3) == 0 || a == b {
            access(&mut r, a, &mut below);
            continue;
        }
        // b waits until a has done its part and signalled.
        r.lock(b, M2)
            .sync(b, SyncOp::WaitLoopEnter { cond: C })
            .sync(
                b,
                SyncOp::CondWait {
                    cond: C,
                    mutex: M2,
                    timed: false,
                },
            );
        for _ in 0..1 + below(3) {
            access(&mut r, a, &mut below);
        }
        r.lock(a, M2)
            .sync(a, SyncOp::CondSignal { cond: C })
            .unlock(a, M2)
            .sync(
                b,
                SyncOp::CondWake {
                    cond: C,
                    mutex: M2,
                    timed_out: false,
                },
            )
            .sync(b, SyncOp::WaitLoopExit { cond: C })
            .unlock(b, M2);
        for _ in 0..below(3) {
            access(&mut r, b, &mut below);
        }
    }
    for c in 1..n {
        r.end(c).join(0, c);
    }
    for _ in 0..below(4) {
        access(&mut r, 0, &mut below);
    }
    r
}

/// Whether leaving out of the model the objects happens-before orders wholly changes the counts
/// or the candidates of `run`, with every read deciding; gives whether some object was left out,
/// whether its reads had reads-from edges, and whether the run has candidates.
fn same_without_the_ordered_objects(
    run: &Run,
) -> Result<(bool, bool, bool), proptest::test_runner::TestCaseError> {
    use proptest::prelude::*;

    use crate::prepare::{prepare_keeping, Keep};
    use crate::{candidates, filter, reads_from, solve};

    let mut deciding = None;
    let [all, unordered] = [Keep::All, Keep::Unordered].map(|keep| {
        let mut program = prepare_keeping(run.traces(), keep);
        let deciding =
            deciding.get_or_insert_with(|| crate::testkit::every_read_deciding(&program.model));
        let edges = reads_from::edges(&program.model, deciding);
        let edge_count = edges.len();
        program.model.set_reads_from(edges);
        let (survivors, stats) = filter::filter(&program);
        let mut solved: Vec<solve::Solved> = survivors
            .iter()
            .map(|s| solve::races_with(&program, s, &options(), &|| {}))
            .collect();
        solved.push(solve::deadlocks_with(&program, &options(), &|| {}));
        let ops = candidates::Ops::of(&program.model);
        let found: Vec<Candidate> = solved
            .iter()
            .flat_map(|s| {
                let vars = &program.vars;
                s.findings
                    .iter()
                    .filter_map(|f| candidates::candidate(&s.model, &ops, vars, f))
            })
            .collect();
        let counts = (stats, program.accesses_read, program.accesses_kept);
        (counts, found, program.ordered.vars, edge_count)
    });
    prop_assert_eq!(&all.0, &unordered.0);
    prop_assert_eq!(&all.1, &unordered.1);
    Ok((unordered.2 > 0, unordered.3 < all.3, !all.1.is_empty()))
}

/// Leaving out of the model the objects happens-before orders wholly ([`crate::ordered`]) changes
/// no count and no candidate, also when every read decides (the reads-from edges of the objects
/// left out ask for nothing the model does not enforce).
#[test]
fn leaving_out_the_objects_happens_before_orders_changes_no_count_and_no_candidate() {
    use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestRunner};
    use std::cell::Cell;

    // Runs where an object was left out, where reads of one had reads-from edges, and where
    // one was left out of a run with candidates.
    let [left_out, edges_left_out, found] = [Cell::new(0), Cell::new(0), Cell::new(0)];
    let count = |(left, edges, candidates): (bool, bool, bool)| {
        left_out.set(left_out.get() + usize::from(left));
        edges_left_out.set(edges_left_out.get() + usize::from(edges));
        found.set(found.get() + usize::from(left && candidates));
    };
    crate::testkit::check_random_runs(0x0bd3_7ed0_5eed, 500, |run| {
        same_without_the_ordered_objects(run).map(count)
    });
    let config = Config {
        cases: 1000,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0x0bd3_7ed0_5eed),
        max_shrink_iters: 4096,
        ..Config::default()
    };
    let tapes = proptest::collection::vec(proptest::num::u8::ANY, 128);
    let result = TestRunner::new(config).run(&tapes, |tape| {
        same_without_the_ordered_objects(&handoff_run(&tape)).map(count)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // 704, 566 and 456 of the 1500 runs.
    assert!(left_out.get() > 500, "{}", left_out.get());
    assert!(edges_left_out.get() > 400, "{}", edges_left_out.get());
    assert!(found.get() > 300, "{}", found.get());
}

/// Of random runs, the whole model, the deadlock model and every variable's (indices shifted
/// past its accesses), and cuts of them: every prefix of the observed order (read off along
/// the run's order) and each thread alone cut anywhere (the others whole, or absent: the
/// threads merged). A cut's order read off the run's order is the threads' merge, and a
/// model of one variable's is read off its sync-only model's order, built once.
#[test]
fn a_cut_order_read_off_the_run_order_is_the_threads_merged() {
    use proptest::prelude::*;
    crate::testkit::check_random_runs(0x3c6e_f372_fe94_f82b, 300, |run| {
        let program = crate::prepare::prepare(run.traces());
        let restricted = std::iter::once(None)
            .chain((0..program.vars.len()).map(Some))
            .map(|var| program.model.restrict(var).0);
        for model in std::iter::once(program.model.clone()).chain(restricted) {
            for cut in &crate::testkit::cuts_of(&model) {
                let merged: Vec<crate::model::At> = model.observed_order(cut).collect();
                let read_off = model.cut_order(cut);
                prop_assert_eq!(read_off.len(), merged.len(), "cut {:?}", cut);
                prop_assert_eq!(&read_off.collect::<Vec<_>>(), &merged, "cut {:?}", cut);
            }
        }
        let (deadlocks, _) = program.model.restrict(None);
        for var in 0..program.vars.len() {
            let (model, _) = program.model.restrict(Some(var));
            prop_assert!(std::ptr::eq(model.run_order(), deadlocks.run_order()));
        }
        Ok(())
    });
}

/// Of random runs with every read deciding, each variable's model, every pair of its accesses of
/// two threads: the verdict of the cut solver, whose models that need what the sync-only model
/// needs share its closures (warmed by the variables before, in both orders), is the verdict of
/// the pair's cut closed alone in that model. Models that change no sync event's needs and
/// models that do must both come up.
#[test]
fn closures_shared_with_the_sync_only_model_decide_as_a_cut_closed_alone() {
    use crate::solve::cut::{race_alone, Cuts};
    use proptest::prelude::*;
    let (same, changes) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    crate::testkit::check_random_runs(0x5be0_cd19_137e_2179, 300, |run| {
        let program = crate::prepare::prepare_deciding(run);
        let vars: Vec<usize> = (0..program.vars.len()).collect();
        for var in vars.iter().rev().chain(&vars) {
            let (model, _) = program.model.restrict(Some(*var));
            let (_, _, changed) = model.same_needs().expect("a model of one variable");
            if changed.iter().all(|&f| f == usize::MAX) {
                same.set(same.get() + 1);
            } else {
                changes.set(changes.get() + 1);
            }
            let accesses = crate::testkit::accesses(&model);
            let mut cuts = Cuts::new(&model);
            for &x in &accesses {
                for &y in accesses.iter().filter(|y| y.thread != x.thread) {
                    prop_assert_eq!(
                        cuts.race(x, y),
                        race_alone(&model, x, y),
                        "var {}: pair {:?}",
                        var,
                        (x, y)
                    );
                }
            }
        }
        Ok(())
    });
    assert!(
        same.get() > 0 && changes.get() > 0,
        "same needs {same:?}, changed {changes:?}"
    );
}

/// Every model's edges and what each of its events waits for: the whole model's, the
/// deadlock model's and every variable's.
fn every_models_needs(program: &crate::prepare::Program) -> Vec<(Vec<RfEdge>, Vec<Vec<At>>)> {
    let needs = |m: &Model| {
        let mut all = Vec::new();
        for (thread, t) in m.threads.iter().enumerate() {
            for index in 0..t.events.len() {
                let mut needs: Vec<At> = m.rf_needs(At { thread, index }).collect();
                needs.sort_unstable();
                needs.dedup();
                all.push(needs);
            }
        }
        all
    };
    let full = &program.model;
    let mut models = vec![(Vec::new(), needs(full))];
    for var in std::iter::once(None).chain((0..program.vars.len()).map(Some)) {
        let (m, _) = full.restrict(var);
        models.push((m.sources().reads_from.to_vec(), needs(&m)));
    }
    models
}

/// Of random runs whose reads all decide (and writes too, as stores that read first): the
/// edges of a segment's first reads give every model (the whole one, the deadlock model,
/// every variable's) the edges and the needs of every event that all reads' edges give.
#[test]
fn the_first_reads_edges_give_every_model_what_every_reads_edges_give() {
    use crate::prepare::prepare;
    use proptest::prelude::*;
    use std::cell::Cell;

    let (fewer, runs) = (Cell::new(0), Cell::new(0));
    let check = |run: &crate::testkit::Run| {
        for writes_decide in [false, true] {
            let [mut plain, mut compact] = [prepare(run.traces()), prepare(run.traces())];
            let mut deciding = crate::testkit::every_read_deciding(&plain.model);
            if writes_decide {
                let writes = plain.model.threads.iter().flat_map(|t| &t.events);
                deciding.addresses.extend(writes.filter_map(|e| match *e {
                    ModelEvent::Access { kind, site, .. } if kind.is_write() => Some(site),
                    _ => None,
                }));
            }
            let every = crate::reads_from::edges_of(&plain.model, &deciding, true);
            let first = crate::reads_from::edges(&compact.model, &deciding);
            prop_assert!(first.iter().all(|e| every.binary_search(e).is_ok()));
            fewer.set(fewer.get() + usize::from(first.len() < every.len()));
            runs.set(runs.get() + 1);
            plain.model.set_reads_from(every);
            compact.model.set_reads_from(first);
            let [plain, compact] = [&plain, &compact].map(every_models_needs);
            prop_assert_eq!(plain, compact);
        }
        Ok(())
    };
    // Plain accesses; and atomic operations, which stand in the model as no-ops that end no
    // segment, between accesses of one object.
    crate::testkit::check_random_runs(0x5e9_3e47_f125, 500, check);
    crate::testkit::check_runs_of(
        crate::testkit::random_atomic_run,
        0x5e9_3e47_f125,
        4000,
        check,
    );
    // 227 of the 9,000 runs have fewer edges.
    assert!(fewer.get() > 150, "{} of {}", fewer.get(), runs.get());
}

/// A schedule written as its head's counts and the steps after them reads back, by the
/// run's recorded operations, as every step it has (what format 6 listed whole): the listed
/// ones are its steps after the head, and the candidates read are those written, on random
/// runs.
#[test]
fn a_written_head_expands_to_the_schedule_s_steps_on_random_runs() {
    let options = Options {
        window: 3,
        max_per_var: 3,
        fallbacks: 2,
        ..options()
    };
    let dir = std::env::temp_dir().join(format!("ilgen-heads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(candidates::FILE_NAME);
    // Schedules with a head, and of those with steps listed after it.
    let [headed, both] = [std::cell::Cell::new(0), std::cell::Cell::new(0)];
    testkit::check_random_runs(0x004e_adc0_de7f_11e5, 1000, |run| {
        let (stats, candidates) = crate::analyze(run.traces(), &options).expect("native");
        let file = candidates::CandidatesFile {
            format_version: candidates::FORMAT_VERSION,
            binary: "a".into(),
            build_id: "0".into(),
            stats,
            candidates,
        };
        candidates::write(&file, std::fs::File::create(&path).unwrap()).unwrap();
        let back = candidates::read(&path, &run.traces()).unwrap();
        let json: serde_json::Value =
            serde_json::from_reader(std::io::BufReader::new(std::fs::File::open(&path).unwrap()))
                .unwrap();
        for (i, (c, b)) in file.candidates.iter().zip(&back.candidates).enumerate() {
            let whole: Vec<Step> = c.schedule().steps().collect();
            proptest::prop_assert_eq!(&b.schedule().steps().collect::<Vec<_>>(), &whole);
            let written = &json["candidates"][i]["schedule"];
            let counted: u64 = written["head"]
                .as_array()
                .unwrap()
                .iter()
                .map(|pair| pair[1].as_u64().unwrap())
                .sum();
            let listed: Vec<Step> = serde_json::from_value(written["steps"].clone()).unwrap();
            proptest::prop_assert_eq!(&listed[..], &whole[counted as usize..]);
            headed.set(headed.get() + usize::from(counted > 0));
            both.set(both.get() + usize::from(counted > 0 && !listed.is_empty()));
        }
        proptest::prop_assert_eq!(back, file);
        Ok(())
    });
    std::fs::remove_dir_all(&dir).unwrap();
    // 1,691 schedules with a head, 43 of them with steps after it.
    assert!(
        headed.get() > 1000 && both.get() > 30,
        "{} schedules with a head, {} of them with steps after it",
        headed.get(),
        both.get()
    );
}
