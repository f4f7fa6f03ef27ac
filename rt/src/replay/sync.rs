//! Replaying one sync operation: the steps every wrapper shares, in replay mode.
//!
//! Mirrors `record::sync` (which calls in here when the process replays). Takes an operation, its
//! site and when it happens relative to the real call; gives the operation its turn at the
//! schedule gate (`replay`), its happens-before effect (`hb`), the lock owners the deadlock report
//! names (`deadlock`), and moves the schedule on. The thread's count of sync operations (the
//! schedule's `index`) advances exactly where record mode writes a record, and goes back where
//! record mode retracts one.
//!
//! When the gate is passed and when the cursor moves, per kind of operation:
//! - releasing operations that do not block (unlock, rwunlock, spin_unlock, signal, broadcast,
//!   post) ([`release`], [`released`]): gate, release (the clock), the real call, then the cursor
//!   moves, so that the next step finds the real release done (a trylock would fail otherwise);
//! - releasing operations whose real call blocks or starts a thread (barrier enter, the release
//!   half of a condition wait, fork), detach, end and wait-loop markers, recorded before the real
//!   call ([`now`]): gate, release, cursor moves, then the real call (after it would be too late:
//!   a waiter's real call returns only once the steps after it have run);
//! - try operations (trylock, tryrdlock, trywrlock, spin_trylock, sem_trywait), recorded after the
//!   real call ([`turn`] before it, [`now_in`] after): gate before the real call, so that the
//!   outcome is decided in the schedule's order; acquire if it succeeded, cursor moves;
//! - blocking acquires (lock, timedlock, rdlock, wrlock, spin_lock, sem_wait) ([`pending`],
//!   [`entering`], [`complete`]): gate before the real call; the wrapper first tries the
//!   non-blocking form (`crate::record::sync::acquire`): if it succeeds the cursor moves after it,
//!   and if it would block the cursor moves before the thread enters the blocking call. So the
//!   next step never races an acquire still in flight for the same lock, and the last steps of a
//!   deadlocking schedule (two locks that never return) are all reached. A join moves the cursor
//!   when it returns (no other thread competes for the child's end);
//! - wake-like operations, whose real call must be entered before the steps that release them:
//!   a condition wake (the signal would otherwise be lost) and a barrier exit (the other threads'
//!   enters would wait for it). The real call runs at once; when it returns the thread waits for
//!   the wake's turn, letting its mutex go while it waits (it is still inside
//!   `pthread_cond_wait`, as far as the program can tell) and taking it back after; then it
//!   acquires and the cursor moves.
//!
//! The watchdog learns each thread's status here: gated while at the gate, blocked while inside a
//! blocking real call, running otherwise. A timed operation (timedlock, a timed condition wait)
//! ends by itself, so it never counts as blocked: all threads in timed waits are no deadlock.

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use ilgen_trace::{SiteId, SyncOp, NO_SITE};

use crate::intercept::real;
use crate::replay;
use crate::replay::hb::Role;
use crate::replay::thread::{ReplayThread, Status};
use crate::sites;

/// A replayed operation between its two halves.
pub(crate) struct Token {
    thread: &'static ReplayThread,
    site: SiteId,
    /// Gated before the real call, cursor not moved yet.
    step: Option<usize>,
    /// Counted (and the cursor moved) before the real call: it blocks.
    counted: bool,
    /// A wake-like operation: gated after the real call.
    wake: bool,
}

fn is_wake(op: &SyncOp) -> bool {
    matches!(op, SyncOp::CondWake { .. } | SyncOp::BarrierExit { .. })
}

/// Waits for the turn of the calling thread's next operation; `unlock` is a mutex to let go of
/// while waiting (a condition wake's).
fn gate(t: &ReplayThread, op: &SyncOp, site: SiteId, unlock: Option<u64>) -> Option<usize> {
    let r = replay::gate::get()?;
    let index = t.info.syncs.load(Ordering::Relaxed);
    r.wait_turn(t.tid(), index, op.kind(), site, |waiting| {
        if waiting {
            t.info.set(Status::Gated { index });
            if let Some(m) = unlock {
                // SAFETY: the program's mutex, which this thread holds (its wait returned).
                unsafe { real::pthread_mutex_unlock(m as *mut libc::pthread_mutex_t) };
            }
        } else {
            if let Some(m) = unlock {
                // SAFETY: as above; taken back before the program sees the wait return.
                unsafe { real::pthread_mutex_lock(m as *mut libc::pthread_mutex_t) };
            }
            t.info.set(Status::Running);
        }
    })
}

/// The operation counts (a record would be written) and, if it is a step, the schedule moves on.
fn count(t: &ReplayThread, step: Option<usize>) {
    t.info.syncs.fetch_add(1, Ordering::Relaxed);
    if let (Some(p), Some(r)) = (step, replay::gate::get()) {
        r.advance(p);
    }
}

/// The happens-before effect of `op` on the calling thread and the object, and lock ownership.
fn apply(t: &ReplayThread, op: &SyncOp, site: SiteId) {
    let tid = t.tid();
    // Interrupted inside the runtime by a program signal handler: no clock to update safely.
    let Some(mut inner) = t.enter() else { return };
    inner.settle_atomic();
    let clock = &mut inner.clock;
    let acquired = op.acquired().unwrap_or(true);
    match *op {
        SyncOp::MutexUnlock { mutex: lock }
        | SyncOp::RwUnlock { lock }
        | SyncOp::SpinUnlock { lock }
        | SyncOp::CondWait { mutex: lock, .. } => {
            if let SyncOp::CondWait { cond, .. } = *op {
                replay::deadlock::waits(tid, cond);
            }
            replay::deadlock::released(lock, tid);
            replay::hb::with_clocks(|c| c.release(lock, Role::Lock, tid, clock));
        }
        SyncOp::CondSignal { cond } | SyncOp::CondBroadcast { cond } => {
            replay::deadlock::signalled(cond);
            replay::hb::with_clocks(|c| c.release(cond, Role::Cond, tid, clock));
        }
        SyncOp::BarrierEnter { barrier } => {
            replay::hb::with_clocks(|c| c.release(barrier, Role::Barrier, tid, clock));
        }
        SyncOp::SemPost { sem } => {
            replay::hb::with_clocks(|c| c.release(sem, Role::Sem, tid, clock))
        }
        SyncOp::Fork { child } => replay::hb::with_clocks(|c| c.fork(tid, child, clock)),
        SyncOp::End => replay::hb::with_clocks(|c| c.end(tid, clock)),
        SyncOp::MutexLock { mutex: lock }
        | SyncOp::MutexTryLock { mutex: lock, .. }
        | SyncOp::MutexTimedLock { mutex: lock, .. }
        | SyncOp::RwRdLock { lock }
        | SyncOp::RwWrLock { lock }
        | SyncOp::RwTryRdLock { lock, .. }
        | SyncOp::RwTryWrLock { lock, .. }
        | SyncOp::SpinLock { lock }
        | SyncOp::SpinTryLock { lock, .. } => {
            if acquired {
                replay::deadlock::acquired(lock, tid, site);
                replay::hb::with_clocks(|c| c.acquire(lock, Role::Lock, clock));
            }
        }
        SyncOp::CondWake { cond, mutex, .. } => {
            replay::deadlock::acquired(mutex, tid, site);
            replay::hb::with_clocks(|c| {
                c.acquire(mutex, Role::Lock, clock);
                c.acquire(cond, Role::Cond, clock);
            });
        }
        SyncOp::SemWait { sem } | SyncOp::SemTryWait { sem, .. } => {
            if acquired {
                replay::hb::with_clocks(|c| c.acquire(sem, Role::Sem, clock));
            }
        }
        SyncOp::BarrierExit { barrier, .. } => {
            replay::hb::with_clocks(|c| c.acquire(barrier, Role::Barrier, clock));
        }
        SyncOp::Join { child } => replay::hb::with_clocks(|c| c.join_thread(child, clock)),
        SyncOp::Start
        | SyncOp::Detach { .. }
        | SyncOp::WaitLoopEnter { .. }
        | SyncOp::WaitLoopExit { .. }
        | SyncOp::TxBegin
        | SyncOp::TxEnd
        | SyncOp::Exit => {}
    }
}

/// An operation recorded at once ([`crate::record::sync::now`]).
pub(crate) fn now(site: *const c_void, op: SyncOp) {
    let Some(t) = replay::thread::current() else {
        return;
    };
    let site = sites::id(site as usize);
    if let SyncOp::CondWait { timed, .. } = op {
        t.info.timed_wait.store(timed, Ordering::Relaxed);
    }
    let step = gate(t, &op, site, None);
    apply(t, &op, site);
    count(t, step);
}

/// Before the real call of a releasing operation that does not block: its turn and its release.
pub(crate) fn release(site: *const c_void, op: SyncOp) -> Option<Token> {
    let t = replay::thread::current()?;
    let site = sites::id(site as usize);
    let step = gate(t, &op, site, None);
    apply(t, &op, site);
    Some(Token {
        thread: t,
        site,
        step,
        counted: false,
        wake: false,
    })
}

/// After that real call: it counts (unless it failed and record mode retracts it), and the
/// schedule moves on.
pub(crate) fn released(tok: Token, happened: bool) {
    if happened {
        count(tok.thread, tok.step);
    }
}

/// Before the real call of a try operation: its turn.
pub(crate) fn turn(site: *const c_void, op: SyncOp) -> Option<Token> {
    let t = replay::thread::current()?;
    let site = sites::id(site as usize);
    let step = gate(t, &op, site, None);
    Some(Token {
        thread: t,
        site,
        step,
        counted: false,
        wake: false,
    })
}

/// After the real call of a try operation, with its outcome.
pub(crate) fn now_in(tok: Token, op: SyncOp) {
    apply(tok.thread, &op, tok.site);
    count(tok.thread, tok.step);
}

/// Before the real call of a blocking operation.
pub(crate) fn pending(site: *const c_void, op: SyncOp) -> Option<Token> {
    let t = replay::thread::current()?;
    let site = sites::id(site as usize);
    let wake = is_wake(&op);
    let step = if wake {
        // Gated after the real call returns.
        None
    } else {
        gate(t, &op, site, None)
    };
    let timed = match op {
        SyncOp::MutexTimedLock { .. } => true,
        SyncOp::CondWake { .. } => t.info.timed_wait.load(Ordering::Relaxed),
        _ => false,
    };
    if !timed {
        t.info.set(Status::Blocked { op, site });
    }
    Some(Token {
        thread: t,
        site,
        step,
        counted: false,
        wake,
    })
}

/// The operation would block: it counts now, and the schedule moves on while it waits.
pub(crate) fn entering(tok: &mut Token) {
    if !tok.wake && !tok.counted {
        tok.counted = true;
        count(tok.thread, tok.step);
    }
}

/// After the real call of a blocking operation returned with `op`'s outcome.
pub(crate) fn complete(tok: Token, op: SyncOp) {
    let t = tok.thread;
    t.info.set(Status::Running);
    if tok.wake {
        let mutex = match op {
            SyncOp::CondWake { mutex, .. } => Some(mutex),
            _ => None,
        };
        let step = gate(t, &op, tok.site, mutex);
        apply(t, &op, tok.site);
        count(t, step);
    } else {
        apply(t, &op, tok.site);
        if !tok.counted {
            count(t, tok.step);
        }
    }
}

/// The real call of a blocking operation failed: record mode retracts its record, so the
/// operation does not count.
pub(crate) fn fail(tok: Token) {
    tok.thread.info.set(Status::Running);
    if tok.counted {
        uncount(tok.thread);
    }
}

/// A releasing operation's real call failed after it was counted ([`crate::record::sync::retract`]).
pub(crate) fn retract() {
    if let Some(t) = replay::thread::current() {
        uncount(t);
    }
}

fn uncount(t: &ReplayThread) {
    let _ = t
        .info
        .syncs
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
}

/// A thread's first operation, `start` (not main).
pub(crate) fn thread_start(t: &ReplayThread) {
    let step = gate(t, &SyncOp::Start, NO_SITE, None);
    count(t, step);
}

/// A thread's last operation, `end` (not main): its clock is left for the joiner.
pub(crate) fn thread_end(t: &ReplayThread, site: SiteId) {
    let step = gate(t, &SyncOp::End, site, None);
    apply(t, &SyncOp::End, site);
    count(t, step);
}
