//! Replay's watchdog: program deadlocks and schedules that stop moving.
//!
//! Takes lock ownership from `replay::owners` (who holds which mutex, rwlock or spin lock, acquired
//! where) and every thread's status (`replay::thread`); gives, from one runtime thread that is not
//! a program thread and calls no hook:
//! - a deadlock report when every live thread has stayed blocked in a program sync operation
//!   (not at the schedule gate; a child being created and not listed yet counts as live and not
//!   blocked, as does a thread the state shows about to return: a free lock, a join of a child
//!   that ended) for `deadlock_ms`: each thread's operation, site and object, the
//!   threads it waits for (a lock's owners, a joined child), the locks it holds, and a wait-for
//!   cycle when there is one ([`wait_for_cycle`]);
//! - a divergence when the schedule is unfinished and its next step has not been taken for
//!   `replay_timeout_ms`, saying what the expected thread is doing instead (never created, ended,
//!   blocked in another operation, running elsewhere);
//! - the end of a program that, after a race was confirmed (the verdict is on disk), completes no
//!   sync operation for `verdict_grace_ms`: the path the race opened spins or hangs, and nothing
//!   it could still find justifies waiting for the runner's timeout.
//!
//! Both verdicts are decided from state where the state decides them: every live thread blocked
//! in an operation nothing can complete any more ([`stuck`]: a lock another thread holds, a join of a live thread, a condition wait no signal came after) is a deadlock at once;
//! a next step whose thread has ended, or is stuck while every other thread waits at the gate or
//! is stuck too, is a divergence at once. Both need the threads' statuses unchanged over two
//! watchdog ticks. Only what the state cannot decide (a thread running elsewhere, a semaphore,
//! a barrier, a reader lock) waits for the wall clock, `deadlock_ms` and `replay_timeout_ms`, as
//! a last resort: a loaded machine then delays a verdict but does not change it.
//!
//! Before either divergence, threads that wait at the gate for the end of the schedule are let
//! go (`Replay::release_waiters`): the next step may wait for one of them through an order the
//! trace does not show (a server's worker waits for its client's next request, the client for
//! another worker's reply that the schedule leaves for later). What they do is real and the race
//! detector sees it; they only make the schedule's order less strict.
//!
//! The expected thread's own CPU time counts as progress too, up to a bound: replay runs slower
//! than the recording, and a thread that computes for seconds between two sync operations is not
//! lost.
//!
//! Time the whole process spends stopped (a debugger at a breakpoint, SIGSTOP) is not counted: a
//! watchdog tick that comes back much later than it slept for restarts both clocks.
//!
//! A deadlock is checked first: threads that wait for each other inside the program are a finding
//! of the program; a thread that waits at the gate for a step that never comes is the schedule's
//! failure, and the gate's waiting never counts as blocked.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ilgen_trace::replay::{wait_for_cycle, BlockedThread, DeadlockReport, Divergence};
use ilgen_trace::{known_site, site_text, SiteId, SyncOp, ThreadId};

use crate::replay;
use crate::replay::gate::{now_ms, Replay};
use crate::replay::owners;
use crate::replay::stack::StackId;
use crate::replay::thread::{Status, ThreadInfo};

/// How many times `replay_timeout_ms` of CPU time a step's thread may use while the step waits.
const COMPUTE_ALLOWANCE: u64 = 4;

/// Condition variable → signals and broadcasts so far; thread → (condition, that count when it
/// began to wait).
static SIGNALS: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());
static WAITS: Mutex<BTreeMap<ThreadId, (u64, u64)>> = Mutex::new(BTreeMap::new());

/// `cond` was signalled or broadcast (before the real call: a waiter counts it as a possible
/// wakeup from then on).
pub(crate) fn signalled(cond: u64) {
    *SIGNALS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(cond)
        .or_default() += 1;
}

/// Thread `tid` begins to wait on `cond`.
pub(crate) fn waits(tid: ThreadId, cond: u64) {
    let n = SIGNALS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&cond)
        .copied()
        .unwrap_or(0);
    WAITS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(tid, (cond, n));
}

/// Whether thread `tid`, blocked in `op`, can never return from it whatever the threads that
/// are blocked or gated do: `Some(true)` when the state proves it, `Some(false)` when it may be
/// returning already, `None` when the state cannot tell.
pub(crate) fn stuck(tid: ThreadId, op: SyncOp, threads: &[Arc<ThreadInfo>]) -> Option<bool> {
    match op {
        SyncOp::MutexLock { mutex: lock }
        | SyncOp::RwWrLock { lock }
        | SyncOp::SpinLock { lock } => {
            // Held by another thread; a lock the thread holds itself may be recursive.
            let held_by = owners::of(lock);
            if held_by.iter().any(|&t| t != tid) {
                Some(true)
            } else if held_by.is_empty() {
                Some(false)
            } else {
                None
            }
        }
        SyncOp::Join { child } => Some(
            threads
                .iter()
                .find(|i| i.me.tid == child)
                .is_some_and(|i| i.status().0 != Status::Ended),
        ),
        SyncOp::CondWake { cond, .. } => {
            let waited = WAITS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&tid)
                .copied();
            let now = SIGNALS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&cond)
                .copied()
                .unwrap_or(0);
            (waited == Some((cond, now))).then_some(true)
        }
        _ => None,
    }
}

fn blocked_thread(info: &ThreadInfo, op: SyncOp, site: SiteId, stack: StackId) -> BlockedThread {
    let me = info.me.tid;
    let object = op.object().unwrap_or(0);
    let waits_for = match op {
        SyncOp::Join { child } => vec![child],
        _ => owners::of(object)
            .into_iter()
            .filter(|&t| t != me)
            .collect(),
    };
    BlockedThread {
        thread: info.me,
        op: op.kind(),
        site: known_site(site),
        object,
        waits_for,
        holds: owners::holds(me),
        stack: replay::stack::frames(stack),
    }
}

/// Starts the watchdog once: when the program creates its first thread or a thread first waits
/// at the gate, not at start-up. Until then the process stays single-threaded as the recorded run
/// was, and libraries that read glibc's `__libc_single_threaded` take the same path as recorded:
/// libstdc++ builds its locales (an `<iostream>`'s static init) with `pthread_once` only once
/// threads exist, and those extra once-locks before main's first fork would leave every schedule
/// at that fork. Alone, the program needs no watchdog: a thread that waits at the gate is the first
/// thing that can stop a single-threaded replay.
pub(crate) fn start_watchdog(r: &'static Replay) {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| spawn_watchdog(r));
}

fn spawn_watchdog(r: &'static Replay) {
    // Its create and the detach when the handle drops are the runtime's, not the program's.
    let spawned = crate::real::internal(|| {
        std::thread::Builder::new()
            .name("ilgen-watchdog".into())
            .spawn(move || watch(r))
            .map(drop)
    });
    if spawned.is_err() {
        crate::runtime::say("ilgen: failed to start the replay watchdog; no deadlock detection");
    }
}

fn watch(r: &'static Replay) {
    let o = &r.options;
    let tick = u64::from(o.deadlock_ms.min(o.replay_timeout_ms) / 5).clamp(2, 50);
    // The blocked threads' (tid, status generation) when all were first seen blocked, and when.
    let mut stable: Option<(Vec<(ThreadId, u64)>, u64)> = None;
    // Threads seen and sync operations they completed, when that count last changed.
    let mut moving: Option<((usize, u64), u64)> = None;
    // The cursor and every thread's (tid, status generation) at the last tick: a state seen
    // twice in a row is settled.
    let mut last_state: Option<(usize, Vec<(ThreadId, u64)>)> = None;
    // The cursor the schedule waits at, and the CPU time (µs) of the thread whose step it is
    // when first seen there and at the last tick.
    let mut computing: Option<(usize, u64, u64)> = None;
    let mut last_tick = now_ms();
    loop {
        std::thread::sleep(Duration::from_millis(tick));
        let woke = now_ms();
        if woke.saturating_sub(last_tick) > 10 * tick + 500 {
            // The process was stopped: nothing could move meanwhile.
            r.touch();
            stable = None;
            moving = None;
        }
        last_tick = woke;
        let threads = replay::thread::all();
        let live: Vec<(&ThreadInfo, Status, u64)> = threads
            .iter()
            .map(|i| {
                let (s, g) = i.status();
                (&**i, s, g)
            })
            .filter(|(_, s, _)| *s != Status::Ended)
            .collect();
        // A thread the state shows about to return (a free lock, a join of a child that ended
        // and is exiting) is not blocked: on a loaded machine it may stay so for deadlock_ms.
        let all_blocked = !live.is_empty()
            && !replay::thread::children_coming()
            && live.iter().all(|(i, s, _)| match *s {
                Status::Blocked { op, .. } => stuck(i.me.tid, op, &threads) != Some(false),
                _ => false,
            });
        let now = now_ms();
        let state = (
            r.cursor(),
            live.iter()
                .map(|(i, _, g)| (i.me.tid, *g))
                .collect::<Vec<_>>(),
        );
        let settled = last_state.as_ref() == Some(&state);
        last_state = Some(state);
        let proven = |i: &ThreadInfo, s: &Status| match *s {
            Status::Blocked { op, .. } => stuck(i.me.tid, op, &threads) == Some(true),
            _ => false,
        };
        if all_blocked {
            let sig: Vec<(ThreadId, u64)> = live.iter().map(|(i, _, g)| (i.me.tid, *g)).collect();
            match &stable {
                Some((s, since)) if *s == sig => {
                    let by_state = settled && live.iter().all(|(i, s, _)| proven(i, s));
                    if by_state || now.saturating_sub(*since) >= u64::from(o.deadlock_ms) {
                        replay::report::deadlock(deadlock_report(&live));
                    }
                }
                _ => stable = Some((sig, now)),
            }
        } else {
            stable = None;
        }
        if !r.finished() {
            let step = r.plan.step_ref(r.cursor());
            let expected = step.tid;
            let next = live.iter().find(|(i, _, _)| i.me.tid == expected);
            let ended = next.is_none() && threads.iter().any(|i| i.me.tid == expected);
            let others_wait = live.iter().all(|(i, s, _)| {
                i.me.tid == expected || matches!(s, Status::Gated { .. }) || proven(i, s)
            });
            // At the gate before an earlier operation of its own, the thread waits for a step
            // that comes after the one it has to take.
            let next_stuck = next.is_some_and(|(i, s, _)| match *s {
                Status::Gated { index } => index < step.index,
                _ => proven(i, s),
            });
            // Threads at the gate for the end of the schedule (their next operation is no step)
            // may be what the next step waits for through an order the trace does not show (a
            // pipe, a socket, the client process of a server): before the schedule is given up
            // as lost, once it is stuck or has not moved for a quarter of the timeout, they run.
            let waiting_for_end = live.iter().any(|(i, s, _)| {
                i.me.tid != expected
                    && matches!(*s, Status::Gated { index } if !r.plan.is_step(i.me.tid, index))
            });
            let stalled =
                now.saturating_sub(r.last_progress_ms()) >= u64::from(o.replay_timeout_ms) / 4;
            // Not while a thread created where the runtime did not see it (no parent, not main)
            // lives: nothing orders it after its creator, and running others free beside it
            // would report races with it that no execution has.
            let orphan =
                replay::thread::orphan_lives(live.iter().map(|(i, _, _)| *i), r.plan.main_tid());
            let release = waiting_for_end
                && !orphan
                && !r.waiters_released()
                && (stalled || (settled && next_stuck && others_wait));
            if release {
                r.release_waiters();
            } else if settled && (ended || (next_stuck && others_wait)) {
                replay::report::left_schedule(divergence(r, &threads, "cannot be taken"));
            }
            // A thread computing toward its step (a compressor's block, slowed by the race
            // detector) makes progress no sync operation shows: while its CPU time grows the
            // step's clock restarts, for up to COMPUTE_ALLOWANCE times the timeout of its CPU
            // time (not wall time: a loaded machine gives it less), so a thread that spins for a
            // step that never comes still diverges.
            let cpu = next.and_then(|(i, s, _)| match s {
                Status::Running => i.cpu_us(),
                _ => None,
            });
            let cursor = r.cursor();
            match (computing, cpu) {
                (Some((p, first, last)), Some(cpu)) if p == cursor => {
                    let allowance = COMPUTE_ALLOWANCE * u64::from(o.replay_timeout_ms) * 1000;
                    if cpu > last && cpu - first < allowance {
                        r.touch();
                    }
                    computing = Some((p, first, cpu));
                }
                (_, Some(cpu)) => computing = Some((cursor, cpu, cpu)),
                (_, None) => computing = None,
            }
            if now.saturating_sub(r.last_progress_ms()) >= u64::from(o.replay_timeout_ms) {
                let within = format!("was not taken within {} ms", o.replay_timeout_ms);
                replay::report::left_schedule(divergence(r, &threads, &within));
            }
        }
        if o.verdict_grace_ms > 0 && replay::report::has_verdict() {
            let done: u64 = threads
                .iter()
                .map(|i| u64::from(i.syncs.load(std::sync::atomic::Ordering::Relaxed)))
                .sum();
            let count = (threads.len(), done);
            match moving {
                Some((c, since)) if c == count => {
                    let quiet = now.saturating_sub(since);
                    if quiet >= u64::from(o.verdict_grace_ms) {
                        replay::report::stopped(quiet);
                    }
                }
                _ => moving = Some((count, now)),
            }
        }
    }
}

fn deadlock_report(live: &[(&ThreadInfo, Status, u64)]) -> DeadlockReport {
    let mut threads: Vec<BlockedThread> = live
        .iter()
        .filter_map(|(i, s, _)| match *s {
            Status::Blocked { op, site, stack } => Some(blocked_thread(i, op, site, stack)),
            _ => None,
        })
        .collect();
    threads.sort_by_key(|t| t.thread.tid);
    let edges: Vec<(ThreadId, Vec<ThreadId>)> = threads
        .iter()
        .map(|t| (t.thread.tid, t.waits_for.clone()))
        .collect();
    DeadlockReport {
        cycle: wait_for_cycle(&edges),
        threads,
    }
}

/// The divergence at the schedule's next step, which `why` ("cannot be taken", "was not taken
/// within N ms"), with what its thread is doing instead.
fn divergence(r: &Replay, threads: &[Arc<ThreadInfo>], why: &str) -> Divergence {
    let p = r.cursor();
    let expected = r.plan.step_ref(p);
    let info = threads.iter().find(|i| i.me.tid == expected.tid);
    let doing = match info.map(|i| {
        (
            i.status().0,
            i.syncs.load(std::sync::atomic::Ordering::Relaxed),
        )
    }) {
        None => "was never created".to_owned(),
        Some((Status::Ended, _)) => "ended".to_owned(),
        Some((Status::Blocked { op, site, .. }, _)) => {
            format!("is blocked in {} at site {site}", op.name())
        }
        Some((Status::Gated { index }, _)) => {
            format!("waits at the gate before its operation #{index}")
        }
        Some((Status::Input { fd, nth, want }, _)) => format!(
            "waits in its read #{nth} on fd {fd} for the peer ({want} bytes in the recording)"
        ),
        Some((Status::Running, n)) => format!(
            "did {n} sync operations and has not reached the next (another branch, or blocked \
             outside sync operations)"
        ),
    };
    Divergence {
        step: Some(p as u32),
        reason: format!(
            "step {p} (T{} operation #{} {} at {}) {why}: T{} {doing}",
            expected.tid,
            expected.index,
            expected.op,
            site_text(expected.site),
            expected.tid
        ),
        expected: Some(expected),
        got: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::owners::{acquired, released};

    #[test]
    fn the_state_proves_a_held_lock_or_an_unsignalled_wait_stuck_and_no_more() {
        // Addresses and tids no other test uses: the tables are process-wide.
        let (lock, cond, me) = (0xdead_1000u64, 0xdead_2000u64, 5);
        let lock_op = SyncOp::MutexLock { mutex: lock };
        assert_eq!(stuck(me, lock_op, &[]), Some(false), "a free lock is taken");
        acquired(lock, 6, 1);
        assert_eq!(stuck(me, lock_op, &[]), Some(true));
        released(lock, 6);
        acquired(lock, me, 1);
        assert_eq!(
            stuck(me, lock_op, &[]),
            None,
            "its own lock may be recursive"
        );
        released(lock, me);
        let wake = SyncOp::CondWake {
            cond,
            mutex: lock,
            timed_out: false,
        };
        waits(me, cond);
        assert_eq!(stuck(me, wake, &[]), Some(true));
        signalled(cond);
        assert_eq!(stuck(me, wake, &[]), None, "the signal may be waking it");
        assert_eq!(stuck(me, SyncOp::SemWait { sem: 1 }, &[]), None);
    }

    #[test]
    fn owners_follow_acquire_and_release() {
        // An address no other test uses: the owner table is process-wide.
        let lock = 0xdead_0000u64;
        acquired(lock, 1, 10);
        acquired(lock, 2, 11);
        released(lock, 1);
        let t = ThreadInfo::for_test(3);
        let b = blocked_thread(&t, SyncOp::MutexLock { mutex: lock }, 12, 0);
        assert_eq!(b.waits_for, vec![2]);
        assert_eq!(b.op, ilgen_trace::OpKind::Lock);
        released(lock, 2);
        let b = blocked_thread(&t, SyncOp::MutexLock { mutex: lock }, 12, 0);
        assert!(b.waits_for.is_empty());
    }
}
