//! Replay's watchdog: program deadlocks and schedules that stop moving.
//!
//! Takes lock ownership from `replay::sync` (who holds which mutex, rwlock or spin lock, acquired
//! where) and every thread's status (`replay::thread`); gives, from one runtime thread that is not
//! a program thread and calls no hook:
//! - a deadlock report when every live thread has stayed blocked in a program sync operation
//!   (not at the schedule gate) for `deadlock_ms`: each thread's operation, site and object, the
//!   threads it waits for (a lock's owners, a joined child), the locks it holds, and a wait-for
//!   cycle when there is one ([`find_cycle`]);
//! - a divergence when the schedule is unfinished and its next step has not been taken for
//!   `replay_timeout_ms`, saying what the expected thread is doing instead (never created, ended,
//!   blocked in another operation, running elsewhere).
//!
//! Time the whole process spends stopped (a debugger at a breakpoint, SIGSTOP) is not counted: a
//! watchdog tick that comes back much later than it slept for restarts both clocks.
//!
//! A deadlock is checked first: threads that wait for each other inside the program are a finding
//! of the program; a thread that waits at the gate for a step that never comes is the schedule's
//! failure, and the gate's waiting never counts as blocked.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use ilgen_trace::replay::{BlockedThread, DeadlockReport, Divergence, HeldLock};
use ilgen_trace::{known_site, site_text, SiteId, SyncOp, ThreadId};

use crate::replay;
use crate::replay::gate::{now_ms, Replay};
use crate::replay::thread::{Status, ThreadInfo};

/// Lock address → (owner, site of the acquire); several owners for a read-locked rwlock.
static OWNERS: Mutex<BTreeMap<u64, Vec<(ThreadId, SiteId)>>> = Mutex::new(BTreeMap::new());

pub(crate) fn acquired(lock: u64, tid: ThreadId, site: SiteId) {
    OWNERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(lock)
        .or_default()
        .push((tid, site));
}

pub(crate) fn released(lock: u64, tid: ThreadId) {
    let mut owners = OWNERS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(v) = owners.get_mut(&lock) {
        if let Some(i) = v.iter().position(|&(t, _)| t == tid) {
            v.remove(i);
        }
        if v.is_empty() {
            owners.remove(&lock);
        }
    }
}

/// A wait-for cycle among `edges` (thread → threads it waits for), starting at its lowest tid;
/// empty when there is none.
pub(crate) fn find_cycle(edges: &[(ThreadId, Vec<ThreadId>)]) -> Vec<ThreadId> {
    let next = |t: ThreadId| -> &[ThreadId] {
        edges
            .iter()
            .find(|(u, _)| *u == t)
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[])
    };
    // Depth-first from each thread in tid order, with the current path on a stack.
    let mut starts: Vec<ThreadId> = edges.iter().map(|(t, _)| *t).collect();
    starts.sort_unstable();
    for &s in &starts {
        let mut path = vec![s];
        let mut choice = vec![0usize];
        while let Some(&top) = path.last() {
            let i = *choice.last().unwrap_or(&0);
            let succ = next(top);
            if i >= succ.len() {
                path.pop();
                choice.pop();
                continue;
            }
            *choice.last_mut().expect("choice follows path") += 1;
            let n = succ[i];
            if let Some(at) = path.iter().position(|&p| p == n) {
                let mut cycle = path[at..].to_vec();
                let min = cycle
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, t)| **t)
                    .map(|(i, _)| i);
                cycle.rotate_left(min.unwrap_or(0));
                return cycle;
            }
            if path.len() <= edges.len() {
                path.push(n);
                choice.push(0);
            }
        }
    }
    Vec::new()
}

fn blocked_thread(info: &ThreadInfo, op: SyncOp, site: SiteId) -> BlockedThread {
    let owners = OWNERS.lock().unwrap_or_else(|e| e.into_inner());
    let me = info.me.tid;
    let object = op.object().unwrap_or(0);
    let waits_for = match op {
        SyncOp::Join { child } => vec![child],
        _ => owners
            .get(&object)
            .map(|v| v.iter().map(|&(t, _)| t).filter(|&t| t != me).collect())
            .unwrap_or_default(),
    };
    let holds = owners
        .iter()
        .flat_map(|(&lock, v)| {
            v.iter()
                .filter(|&&(t, _)| t == me)
                .map(move |&(_, site)| HeldLock {
                    object: lock,
                    site: known_site(site),
                })
        })
        .collect();
    BlockedThread {
        thread: info.me,
        op: op.kind(),
        site: known_site(site),
        object,
        waits_for,
        holds,
    }
}

pub(crate) fn spawn_watchdog(r: &'static Replay) {
    // Its create and the detach when the handle drops are the runtime's, not the program's.
    let spawned = crate::intercept::interpose::internal(|| {
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
    let mut last_tick = now_ms();
    loop {
        std::thread::sleep(Duration::from_millis(tick));
        let woke = now_ms();
        if woke.saturating_sub(last_tick) > 10 * tick + 500 {
            // The process was stopped: nothing could move meanwhile.
            r.touch();
            stable = None;
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
        let all_blocked = !live.is_empty()
            && live
                .iter()
                .all(|(_, s, _)| matches!(s, Status::Blocked { .. }));
        let now = now_ms();
        if all_blocked {
            let sig: Vec<(ThreadId, u64)> = live.iter().map(|(i, _, g)| (i.me.tid, *g)).collect();
            match &stable {
                Some((s, since)) if *s == sig => {
                    if now.saturating_sub(*since) >= u64::from(o.deadlock_ms) {
                        replay::report::deadlock(deadlock_report(&live));
                    }
                }
                _ => stable = Some((sig, now)),
            }
        } else {
            stable = None;
        }
        if !r.finished()
            && now.saturating_sub(r.last_progress_ms()) >= u64::from(o.replay_timeout_ms)
        {
            replay::report::diverged(timeout(r, &threads));
        }
    }
}

fn deadlock_report(live: &[(&ThreadInfo, Status, u64)]) -> DeadlockReport {
    let mut threads: Vec<BlockedThread> = live
        .iter()
        .filter_map(|(i, s, _)| match *s {
            Status::Blocked { op, site } => Some(blocked_thread(i, op, site)),
            _ => None,
        })
        .collect();
    threads.sort_by_key(|t| t.thread.tid);
    let edges: Vec<(ThreadId, Vec<ThreadId>)> = threads
        .iter()
        .map(|t| (t.thread.tid, t.waits_for.clone()))
        .collect();
    DeadlockReport {
        cycle: find_cycle(&edges),
        threads,
    }
}

fn timeout(r: &Replay, threads: &[std::sync::Arc<ThreadInfo>]) -> Divergence {
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
        Some((Status::Blocked { op, site }, _)) => {
            format!("is blocked in {} at site {site}", op.name())
        }
        Some((Status::Gated { index }, _)) => {
            format!("waits at the gate before its operation #{index}")
        }
        Some((Status::Running, n)) => format!(
            "did {n} sync operations and has not reached the next (another branch, or blocked \
             outside sync operations)"
        ),
    };
    Divergence {
        step: Some(p as u32),
        reason: format!(
            "step {p} (T{} operation #{} {} at {}) was not taken within {} ms: T{} {doing}",
            expected.tid,
            expected.index,
            expected.op,
            site_text(expected.site),
            r.options.replay_timeout_ms,
            expected.tid
        ),
        expected: Some(expected),
        got: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_threads_waiting_for_each_other_are_a_cycle() {
        let edges = vec![(1, vec![0]), (0, vec![1])];
        assert_eq!(find_cycle(&edges), vec![0, 1]);
    }

    #[test]
    fn a_chain_is_no_cycle_and_a_longer_cycle_is_found() {
        assert!(find_cycle(&[(0, vec![1]), (1, vec![2]), (2, vec![])]).is_empty());
        assert!(find_cycle(&[(0, vec![]), (1, vec![])]).is_empty());
        let edges = vec![(5, vec![7]), (7, vec![3]), (3, vec![5]), (9, vec![3])];
        assert_eq!(find_cycle(&edges), vec![3, 5, 7]);
    }

    #[test]
    fn owners_follow_acquire_and_release() {
        // An address no other test uses: the owner table is process-wide.
        let lock = 0xdead_0000u64;
        acquired(lock, 1, 10);
        acquired(lock, 2, 11);
        released(lock, 1);
        let t = ThreadInfo::for_test(3);
        let b = blocked_thread(&t, SyncOp::MutexLock { mutex: lock }, 12);
        assert_eq!(b.waits_for, vec![2]);
        assert_eq!(b.op, ilgen_trace::OpKind::Lock);
        released(lock, 2);
        let b = blocked_thread(&t, SyncOp::MutexLock { mutex: lock }, 12);
        assert!(b.waits_for.is_empty());
    }
}
