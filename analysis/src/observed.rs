//! Deadlocks the recorded run itself ended in.
//!
//! Takes the threads of a trace whose run did not end by `exit` (killed, timed out by `ilgen run`,
//! or a signal); gives an [`Observed`] deadlock when every thread that had not ended was blocked
//! in a sync operation (its last record `PENDING`: lock, condition wait, join, `sem_wait`,
//! barrier, rwlock, spin lock) that nothing recorded could still complete: the lock is held (by a
//! blocked thread), the joined thread never ended, no signal or post came after the wait began.
//! A thread that was running or sleeping (its last record complete) could have woken the others,
//! so such a run has no observed deadlock; neither has a run with a timed wait pending (it would
//! have timed out). The report names each blocked operation and its site, the locks each thread
//! held, the lock cycle if there is one ([`wait_for_cycle`]), and every [`LostWakeup`]: a
//! condition variable signalled before its waiter waited, outside a wait loop that would have
//! re-checked a predicate.

use std::collections::BTreeMap;

use ilgen_trace::format::ThreadTrace;
use ilgen_trace::replay::{wait_for_cycle, BlockedThread, DeadlockReport, HeldLock, ThreadRef};
use ilgen_trace::{known_site, known_thread, Event, SiteId, Sync, SyncOp, ThreadId};
use serde::Serialize;

/// A deadlock of the recorded run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    pub deadlock: DeadlockReport,
    pub lost_wakeups: Vec<LostWakeup>,
}

/// A signal (or broadcast) on `cond` that came before `waiter` waited on it: the wait, not in a
/// predicate loop, waited for a wakeup that had already been sent.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostWakeup {
    pub cond: u64,
    pub waiter: ThreadId,
    pub wait_site: SiteId,
    pub signaller: ThreadId,
    pub signal_site: SiteId,
    pub broadcast: bool,
}

/// The completed sync operations of every thread, in the order the run obeyed (by `seq`).
fn in_seq_order(threads: &[ThreadTrace]) -> Vec<(ThreadId, Sync)> {
    let mut all: Vec<(ThreadId, Sync)> = threads
        .iter()
        .flat_map(|t| {
            t.events.marks().filter_map(move |(_, e)| match e {
                Event::Sync(s) if !s.is_pending() => Some((t.header.tid, s)),
                _ => None,
            })
        })
        .collect();
    all.sort_by_key(|(_, s)| s.seq);
    all
}

/// Lock address → its holders at the end of the run, each with the site that acquired it.
fn holders(order: &[(ThreadId, Sync)]) -> BTreeMap<u64, Vec<(ThreadId, SiteId)>> {
    let mut held: BTreeMap<u64, Vec<(ThreadId, SiteId)>> = BTreeMap::new();
    for &(tid, s) in order {
        let acquired = match s.op {
            SyncOp::MutexLock { mutex } | SyncOp::CondWake { mutex, .. } => Some(mutex),
            SyncOp::RwRdLock { lock } | SyncOp::RwWrLock { lock } | SyncOp::SpinLock { lock } => {
                Some(lock)
            }
            SyncOp::MutexTryLock { mutex, acquired }
            | SyncOp::MutexTimedLock { mutex, acquired } => acquired.then_some(mutex),
            SyncOp::RwTryRdLock { lock, acquired }
            | SyncOp::RwTryWrLock { lock, acquired }
            | SyncOp::SpinTryLock { lock, acquired } => acquired.then_some(lock),
            _ => None,
        };
        let released = match s.op {
            SyncOp::MutexUnlock { mutex } | SyncOp::CondWait { mutex, .. } => Some(mutex),
            SyncOp::RwUnlock { lock } | SyncOp::SpinUnlock { lock } => Some(lock),
            _ => None,
        };
        if let Some(l) = acquired {
            held.entry(l).or_default().push((tid, s.site));
        }
        if let Some(l) = released {
            if let Some(v) = held.get_mut(&l) {
                if let Some(i) = v.iter().position(|&(t, _)| t == tid) {
                    v.remove(i);
                }
            }
        }
    }
    held.retain(|_, v| !v.is_empty());
    held
}

/// Whether `cond` got a signal or broadcast after `since`; the last one before it, if any.
fn signals(order: &[(ThreadId, Sync)], cond: u64, since: u64) -> (bool, Option<(ThreadId, Sync)>) {
    let mut before = None;
    for &(tid, s) in order {
        if matches!(s.op, SyncOp::CondSignal { cond: c } | SyncOp::CondBroadcast { cond: c } if c == cond)
        {
            if s.seq > since {
                return (true, before);
            }
            before = Some((tid, s));
        }
    }
    (false, before)
}

/// Whether the thread's last wait-loop marker for `cond` opened a loop it had not left.
fn in_wait_loop(t: &ThreadTrace, cond: u64) -> bool {
    let mut inside = false;
    for (_, e) in t.events.marks() {
        match e {
            Event::Sync(Sync {
                op: SyncOp::WaitLoopEnter { cond: c },
                ..
            }) if c == cond || c == 0 => inside = true,
            Event::Sync(Sync {
                op: SyncOp::WaitLoopExit { cond: c },
                ..
            }) if c == cond || c == 0 => inside = false,
            _ => {}
        }
    }
    inside
}

/// The deadlock the run ended in, if it ended in one (see the module doc).
pub fn observed_deadlock(threads: &[ThreadTrace]) -> Option<Observed> {
    // Each thread that did not end, with its last two sync operations: every last one must be
    // pending, which is known before the run's order is built (a run that ended well holds no
    // list of its sync operations).
    let mut ended = std::collections::BTreeSet::new();
    let mut stuck = Vec::new();
    for t in threads {
        let (mut before, mut last) = (None, None);
        for (_, e) in t.events.marks() {
            if let Event::Sync(s) = e {
                (before, last) = (last, Some(s));
                if s.op == SyncOp::End {
                    ended.insert(t.header.tid);
                }
            }
        }
        if ended.contains(&t.header.tid) {
            continue;
        }
        let last: Sync = last?;
        if !last.is_pending() {
            return None;
        }
        stuck.push((t, before, last));
    }
    let order = in_seq_order(threads);
    let held = holders(&order);
    let mut blocked = Vec::new();
    let mut lost_wakeups = Vec::new();
    for (t, before, last) in stuck {
        let tid = t.header.tid;
        let since = before.map_or(0, |s| s.seq);
        let owners = |l: u64| held.get(&l).filter(|v| !v.is_empty());
        let waits_for: Vec<ThreadId> = match last.op {
            SyncOp::MutexLock { mutex: l }
            | SyncOp::RwRdLock { lock: l }
            | SyncOp::RwWrLock { lock: l }
            | SyncOp::SpinLock { lock: l } => {
                // A free lock would have been taken.
                let v = owners(l)?;
                v.iter().map(|&(o, _)| o).filter(|&o| o != tid).collect()
            }
            SyncOp::Join { child } => vec![child],
            SyncOp::CondWake { cond, .. } => {
                let Some(Sync {
                    op: SyncOp::CondWait { timed: false, .. },
                    site: wait_site,
                    ..
                }) = before
                else {
                    return None;
                };
                let (later, earlier) = signals(&order, cond, since);
                if later {
                    return None;
                }
                if let Some((signaller, s)) = earlier.filter(|_| !in_wait_loop(t, cond)) {
                    lost_wakeups.push(LostWakeup {
                        cond,
                        waiter: tid,
                        wait_site,
                        signaller,
                        signal_site: s.site,
                        broadcast: matches!(s.op, SyncOp::CondBroadcast { .. }),
                    });
                }
                Vec::new()
            }
            SyncOp::SemWait { sem } => {
                let posted = order.iter().any(|(_, s)| {
                    s.seq > since && matches!(s.op, SyncOp::SemPost { sem: p } if p == sem)
                });
                if posted {
                    return None;
                }
                Vec::new()
            }
            SyncOp::BarrierExit { .. } => Vec::new(),
            // Timed operations time out; nothing else blocks.
            _ => return None,
        };
        if let SyncOp::Join { child } = last.op {
            if ended.contains(&child) {
                return None;
            }
        }
        let holds = held
            .iter()
            .flat_map(|(&object, v)| {
                v.iter()
                    .filter(|&&(o, _)| o == tid)
                    .map(move |&(_, site)| HeldLock {
                        object,
                        site: known_site(site),
                        stack: Vec::new(),
                    })
            })
            .collect();
        blocked.push(BlockedThread {
            thread: ThreadRef {
                tid,
                parent: known_thread(t.header.parent),
                child_index: t.header.child_index,
            },
            op: last.op.kind(),
            site: known_site(last.site),
            object: last.op.object().unwrap_or(0),
            waits_for,
            holds,
            stack: Vec::new(),
        });
    }
    if blocked.is_empty() {
        return None;
    }
    blocked.sort_by_key(|b| b.thread.tid);
    let edges: Vec<(ThreadId, Vec<ThreadId>)> = blocked
        .iter()
        .map(|b| (b.thread.tid, b.waits_for.clone()))
        .collect();
    Some(Observed {
        deadlock: DeadlockReport {
            cycle: wait_for_cycle(&edges),
            threads: blocked,
        },
        lost_wakeups,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Run;
    use ilgen_trace::OpKind;

    const A: u64 = 0xa0;
    const B: u64 = 0xb0;
    const C: u64 = 0xc0;

    fn lost_wakeup(in_loop: bool) -> Run {
        let mut r = Run::new(2);
        r.fork(0, 1)
            .lock(0, A)
            .sync(0, SyncOp::CondSignal { cond: C });
        r.unlock(0, A).pending(0, SyncOp::Join { child: 1 });
        r.start(1).lock(1, A);
        if in_loop {
            r.sync(1, SyncOp::WaitLoopEnter { cond: C });
        }
        r.sync(
            1,
            SyncOp::CondWait {
                cond: C,
                mutex: A,
                timed: false,
            },
        )
        .pending(
            1,
            SyncOp::CondWake {
                cond: C,
                mutex: A,
                timed_out: false,
            },
        );
        r
    }

    #[test]
    fn a_signal_before_the_wait_is_a_lost_wakeup_and_both_threads_are_blocked() {
        let o = observed_deadlock(&lost_wakeup(false).traces()).expect("deadlock");
        let ops: Vec<(ThreadId, OpKind, Vec<ThreadId>)> = o
            .deadlock
            .threads
            .iter()
            .map(|b| (b.thread.tid, b.op, b.waits_for.clone()))
            .collect();
        assert_eq!(
            ops,
            vec![(0, OpKind::Join, vec![1]), (1, OpKind::Wake, vec![])]
        );
        assert!(o.deadlock.cycle.is_empty());
        // Seqs: fork 1, lock 2, signal 3 (site 1003), ..., the wait 7 (site 1007).
        assert_eq!(
            o.lost_wakeups,
            vec![LostWakeup {
                cond: C,
                waiter: 1,
                wait_site: 1007,
                signaller: 0,
                signal_site: 1003,
                broadcast: false,
            }]
        );
        // In a wait loop the wait re-checks a predicate: still blocked, but no lost wakeup.
        let o = observed_deadlock(&lost_wakeup(true).traces()).expect("deadlock");
        assert!(o.lost_wakeups.is_empty());
    }

    #[test]
    fn a_lock_cycle_is_found_with_what_each_thread_holds() {
        let mut r = Run::new(2);
        r.fork(0, 1).lock(0, A).start(1).lock(1, B);
        r.pending(0, SyncOp::MutexLock { mutex: B })
            .pending(1, SyncOp::MutexLock { mutex: A });
        let o = observed_deadlock(&r.traces()).expect("deadlock");
        assert_eq!(o.deadlock.cycle, vec![0, 1]);
        let holds: Vec<Vec<u64>> = o
            .deadlock
            .threads
            .iter()
            .map(|b| b.holds.iter().map(|h| h.object).collect())
            .collect();
        assert_eq!(holds, vec![vec![A], vec![B]]);
    }

    #[test]
    fn a_running_thread_a_free_lock_or_a_later_signal_is_no_deadlock() {
        // T1 was sleeping (its last record complete): it could still have released A.
        let mut r = Run::new(2);
        r.fork(0, 1).start(1).lock(1, A);
        r.pending(0, SyncOp::MutexLock { mutex: A });
        assert_eq!(observed_deadlock(&r.traces()), None);
        // Killed while about to take a lock nobody held.
        let mut r = Run::new(1);
        r.lock(0, A)
            .unlock(0, A)
            .pending(0, SyncOp::MutexLock { mutex: A });
        assert_eq!(observed_deadlock(&r.traces()), None);
        // The signal came after the wait: the waiter was about to wake.
        let signalled_late = |signal: bool| {
            let mut r = Run::new(3);
            r.fork(0, 1)
                .fork(0, 2)
                .pending(0, SyncOp::Join { child: 1 });
            r.start(1).lock(1, A).sync(
                1,
                SyncOp::CondWait {
                    cond: C,
                    mutex: A,
                    timed: false,
                },
            );
            r.pending(
                1,
                SyncOp::CondWake {
                    cond: C,
                    mutex: A,
                    timed_out: false,
                },
            );
            r.start(2);
            if signal {
                r.sync(2, SyncOp::CondSignal { cond: C });
            }
            r.pending(2, SyncOp::Join { child: 1 });
            observed_deadlock(&r.traces())
        };
        assert_eq!(signalled_late(true), None);
        assert!(signalled_late(false).is_some_and(|o| o.lost_wakeups.is_empty()));
        // The joined thread ended.
        let mut r = Run::new(2);
        r.fork(0, 1)
            .start(1)
            .end(1)
            .pending(0, SyncOp::Join { child: 1 });
        assert_eq!(observed_deadlock(&r.traces()), None);
    }
}
