//! Replaying one sync operation: the steps every wrapper shares, in replay mode, and a thread's
//! life between its `start` and its `end`.
//!
//! Mirrors `record::sync` (which calls in here when the process replays). Takes an operation, its
//! site and when it happens relative to the real call; gives the operation its turn at the
//! schedule gate (`gate`; a kind other than the schedule's ends the replay through `report`), its
//! happens-before effect (`hb`), the lock owners the deadlock report names (`deadlock`), and moves
//! the schedule on. Takes thread starts and ends too (the `pthread_create` trampoline, the first
//! hook of main and of threads the runtime did not see created, the exit key's destructor); gives
//! [`current`], the calling thread's state (`thread`), made on its first hook, whose `start` and
//! `end` take their turn like any other operation. The thread's count of sync operations (the
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
//! - blocking acquires (lock, timedlock, rdlock, wrlock, spin_lock, sem_wait, sem_timedwait)
//!   ([`pending`], [`entering`], [`complete`]): gate before the real call; the wrapper first tries
//!   the non-blocking form (`crate::record::sync::acquire`): if it succeeds the cursor moves after
//!   it, and if it would block the cursor moves before the thread enters the blocking call. So the
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
//! A timed operation (timedlock, sem_timedwait, the wake of a timed condition wait) that is a step
//! of the schedule has its recorded outcome there ([`recorded_timeout`]), and the wrappers
//! enforce it: the replay runs slower than the recording (gated threads, the race detector), so
//! the real clock would often run out where the recording was woken, and the program would take
//! another path (xz's encoder leaves its wait loop on a time-out). Timed out in the recording: no
//! real call, the operation fails at its turn (for a wait, the gate at the wake's turn lets the
//! mutex go meanwhile, as the waiting thread would). Woken or acquired in the recording: a wait
//! needs no real call either, since the gate holds its wake until the scheduled signal has been
//! taken; a lock or semaphore takes it without a time limit. An outcome that still differs (an
//! interrupted semaphore wait) ends the replay with a divergence saying so ([`complete`]).
//! Without a recorded outcome, or after the schedule, the real call decides.
//!
//! A try-lock (of a mutex, rwlock or spinlock) where the schedule has another operation of that
//! thread takes the thread outside the schedule instead of ending the replay, until it lets that
//! lock go (its unlock, or at once if the try-lock fails): those operations are real, the race
//! detector sees them, and they do not count, so the thread's next operation is the step it was
//! to make. A try-lock never waits, so this cannot hold up a scheduled thread for long; it is what
//! a timer callback run more often by the slower replay does (memcached's clock handler, once a
//! second on main, tries the hash table's maintenance lock). Any other operation the schedule
//! does not have there still ends the replay.
//!
//! The watchdog learns each thread's status here: gated while at the gate, blocked while inside a
//! blocking real call, running otherwise. A timed operation left to the real clock ends by
//! itself, so it never counts as blocked: all threads in timed waits are no deadlock. One whose
//! recorded outcome is success does count: it no longer ends by itself.

use std::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

use ilgen_trace::replay::{Divergence, StepRef, ThreadRef};
use ilgen_trace::{known_thread, AccessKind, OpKind, SiteId, SyncOp, ThreadId, NO_SITE};

use crate::real;
use crate::replay;
use crate::replay::hb::{Role, VectorClock};
use crate::replay::thread::{self, ReplayThread, Slot, Status};
use crate::{runtime, sites};

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
    if t.info.outside_schedule() {
        return None;
    }
    let index = t.info.syncs.load(Ordering::Relaxed);
    let turn = r.wait_turn(t.tid(), index, op.kind(), site, |waiting| {
        if waiting {
            replay::deadlock::start_watchdog(r);
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
    });
    let step = match turn {
        Ok(step) => step,
        Err(d) => match try_lock_object(op) {
            Some(lock) => {
                t.info.outside.store(lock, Ordering::Relaxed);
                return None;
            }
            None => {
                replay::report::left_schedule(d);
                return None;
            }
        },
    };
    if let Some(p) = step {
        r.taking(p, replay::stack::current());
    }
    step
}

/// The lock a try-lock acts on, if it is a try-lock of a mutex, rwlock or spinlock: the
/// operations that may leave the schedule.
fn try_lock_object(op: &SyncOp) -> Option<u64> {
    match *op {
        SyncOp::MutexTryLock { mutex: lock, .. }
        | SyncOp::RwTryRdLock { lock, .. }
        | SyncOp::RwTryWrLock { lock, .. }
        | SyncOp::SpinTryLock { lock, .. } => Some(lock),
        _ => None,
    }
}

/// The operation counts (a record would be written) and, if it is a step, the schedule moves
/// on; outside the schedule it does not count (and the thread is back on it if the operation
/// let the lock go). Gives whether it counted.
fn count(t: &ReplayThread, step: Option<usize>) -> bool {
    if t.info.outside_schedule() {
        if t.info.outside_ends.swap(false, Ordering::Relaxed) {
            t.info.outside.store(0, Ordering::Relaxed);
        }
        return false;
    }
    t.info.syncs.fetch_add(1, Ordering::Relaxed);
    if let (Some(p), Some(r)) = (step, replay::gate::get()) {
        r.advance(p);
    }
    true
}

/// Outside the schedule, `op` lets go of the lock that took the thread out (an unlock of it, or
/// the try-lock that would have taken it failing): the thread is back on the schedule after it.
fn back_on_schedule(t: &ReplayThread, op: &SyncOp) {
    let outside = t.info.outside.load(Ordering::Relaxed);
    if outside == 0 {
        return;
    }
    let lets_go = match *op {
        SyncOp::MutexUnlock { mutex: lock }
        | SyncOp::RwUnlock { lock }
        | SyncOp::SpinUnlock { lock } => lock == outside,
        _ => try_lock_object(op) == Some(outside) && op.acquired() == Some(false),
    };
    if lets_go {
        t.info.outside_ends.store(true, Ordering::Relaxed);
    }
}

/// The happens-before effect of `op` on the calling thread and the object, and lock ownership.
fn apply(t: &ReplayThread, op: &SyncOp, site: SiteId) {
    back_on_schedule(t, op);
    let tid = t.tid();
    // Interrupted inside the runtime by a program signal handler: no clock to update safely.
    let Some(mut inner) = t.enter() else { return };
    inner.settle_atomic();
    let clock = &mut inner.clock;
    // The use of the object before its effect (a release must not order it before a destroy
    // it races with): an atomic read, a destroy a write (`SyncOp::object_access`).
    match op.object_access() {
        Some((object, AccessKind::Write)) => {
            replay::shadow::destroy(clock, tid, object, site, replay::report::race);
        }
        Some((object, kind)) => {
            replay::shadow::access(clock, tid, object, 1, site, kind, replay::report::race);
        }
        None => {}
    }
    let acquired = op.acquired().unwrap_or(true);
    match *op {
        SyncOp::MutexUnlock { mutex: lock }
        | SyncOp::RwUnlock { lock }
        | SyncOp::SpinUnlock { lock }
        | SyncOp::CondWait { mutex: lock, .. } => {
            if let SyncOp::CondWait { cond, .. } = *op {
                replay::deadlock::waits(tid, cond);
            }
            replay::owners::released(lock, tid);
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
        SyncOp::ChannelWrite { channel, .. } => {
            replay::hb::with_clocks(|c| c.release(channel, Role::Channel, tid, clock))
        }
        SyncOp::ChannelRead { channel, .. } => {
            replay::hb::with_clocks(|c| c.acquire(channel, Role::Channel, clock))
        }
        SyncOp::Fork { child } => {
            replay::thread::forked(child);
            replay::hb::with_clocks(|c| c.fork(tid, child, clock))
        }
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
                replay::owners::acquired(lock, tid, site);
                replay::hb::with_clocks(|c| c.acquire(lock, Role::Lock, clock));
            }
        }
        SyncOp::CondWake { cond, mutex, .. } => {
            replay::owners::acquired(mutex, tid, site);
            replay::hb::with_clocks(|c| {
                c.acquire(mutex, Role::Lock, clock);
                c.acquire(cond, Role::Cond, clock);
            });
        }
        SyncOp::SemWait { sem }
        | SyncOp::SemTryWait { sem, .. }
        | SyncOp::SemTimedWait { sem, .. } => {
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
        | SyncOp::SemInit { .. }
        | SyncOp::SemDestroy { .. }
        | SyncOp::MutexDestroy { .. }
        | SyncOp::CondDestroy { .. }
        | SyncOp::RwDestroy { .. }
        | SyncOp::BarrierDestroy { .. }
        | SyncOp::TxBegin
        | SyncOp::TxEnd
        | SyncOp::Exit => {}
    }
}

/// The calling thread closes descriptor `fd`: a release into its number, which the next call
/// that creates `fd` acquires ([`fd_created`]). Not a step of the schedule (nothing is recorded):
/// only the race detector's order.
pub(crate) fn fd_closing(fd: c_int) {
    kernel_order(fd as u64, Role::Fd, true);
}

/// The calling thread got descriptor `fd` from a call that creates one.
pub(crate) fn fd_created(fd: c_int) {
    kernel_order(fd as u64, Role::Fd, false);
}

/// The calling thread got bytes from the stream `channel` by a read that is no step of the
/// schedule (a peek, a read the recording has no outcome for): the acquire that a
/// `SyncOp::ChannelRead` step makes ([`channel_reading`]), for the race detector only.
pub(crate) fn channel_peeked(channel: u64) {
    kernel_order(channel, Role::Channel, false);
}

/// Whether the calling thread's next operation is a step of the schedule of kind `kind`.
pub(crate) fn next_step_is(kind: OpKind) -> bool {
    let (Some(t), Some(r)) = (current(), replay::gate::get()) else {
        return false;
    };
    !t.info.outside_schedule()
        && r.plan
            .step_kind(t.tid(), t.info.syncs.load(Ordering::Relaxed))
            == Some(kind)
}

/// Before the real call of a read of a stream that got bytes in the recording (`op`, a
/// `SyncOp::ChannelRead`): its turn. If the bytes are not all there yet (`ready` false) it counts
/// at once and the schedule moves on while it waits, so that the writes after it in the schedule
/// can run (as a blocking acquire's does, [`entering`]); else after the read, in [`channel_got`].
pub(crate) fn channel_reading(site: *const c_void, op: SyncOp, ready: bool) -> Option<Token> {
    let t = current()?;
    let site = sites::id(site as usize);
    let step = gate(t, &op, site, None);
    let mut tok = Token {
        thread: t,
        site,
        step,
        counted: false,
        wake: false,
    };
    if !ready {
        entering(&mut tok);
    }
    Some(tok)
}

/// After that read: its acquire of the channel, which the writes released.
pub(crate) fn channel_got(tok: Token, op: SyncOp) {
    apply(tok.thread, &op, tok.site);
    if !tok.counted {
        count(tok.thread, tok.step);
    }
}

/// An order the kernel imposes on `object` in `role`: the calling thread releases into it or
/// acquires it.
fn kernel_order(object: u64, role: Role, release: bool) {
    let Some(t) = current() else {
        return;
    };
    let tid = t.tid();
    let Some(mut inner) = t.enter() else { return };
    inner.settle_atomic();
    replay::hb::with_clocks(|c| {
        if release {
            c.release(object, role, tid, &mut inner.clock)
        } else {
            c.acquire(object, role, &mut inner.clock)
        }
    });
}

/// An operation recorded at once ([`crate::record::sync::now`]).
pub(crate) fn now(site: *const c_void, op: SyncOp) {
    let Some(t) = current() else {
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
    let t = current()?;
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
    let t = current()?;
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
    let t = current()?;
    let site = sites::id(site as usize);
    let wake = is_wake(&op);
    let step = if wake {
        // Gated after the real call returns.
        None
    } else {
        gate(t, &op, site, None)
    };
    let timed = match op {
        SyncOp::MutexTimedLock { .. } | SyncOp::SemTimedWait { .. } => true,
        SyncOp::CondWake { .. } => t.info.timed_wait.load(Ordering::Relaxed),
        _ => false,
    } && recorded(t) != Some(false);
    if !timed {
        t.info.set(Status::Blocked {
            op,
            site,
            stack: replay::stack::current(),
        });
    }
    Some(Token {
        thread: t,
        site,
        step,
        counted: false,
        wake,
    })
}

/// The recorded outcome of the calling thread's next operation, if it is a step with one.
fn recorded(t: &ReplayThread) -> Option<bool> {
    let r = replay::gate::get()?;
    if t.info.outside_schedule() {
        return None;
    }
    r.plan
        .recorded_timeout(t.tid(), t.info.syncs.load(Ordering::Relaxed))
}

/// The recorded outcome of the pending timed operation `tok`, which the replay enforces:
/// `Some(true)` when it timed out in the recording. `None`: the real call decides.
pub(crate) fn recorded_timeout(tok: &Token) -> Option<bool> {
    recorded(tok.thread)
}

/// The operation would block: it counts now, and the schedule moves on while it waits.
pub(crate) fn entering(tok: &mut Token) {
    if !tok.wake && !tok.counted {
        tok.counted = count(tok.thread, tok.step);
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
        check_outcome(step, &op, tok.site);
        apply(t, &op, tok.site);
        count(t, step);
    } else {
        check_outcome(tok.step, &op, tok.site);
        apply(t, &op, tok.site);
        if !tok.counted {
            count(t, tok.step);
        }
    }
}

/// Ends the replay if step `step`'s timed operation `op` came out otherwise than recorded: the
/// program goes on from another outcome, and the next step would only report another kind.
fn check_outcome(step: Option<usize>, op: &SyncOp, site: SiteId) {
    let (Some(p), Some(r)) = (step, replay::gate::get()) else {
        return;
    };
    let (Some(recorded), Some(now)) = (r.plan.steps[p].timed_out, op.timed_out()) else {
        return;
    };
    if recorded == now {
        return;
    }
    let (what, success) = match op {
        SyncOp::CondWake { .. } => ("timed wait", "was signalled"),
        SyncOp::MutexTimedLock { .. } => ("timed lock", "acquired the lock"),
        _ => ("timed semaphore wait", "took the semaphore"),
    };
    let said = |timed_out| if timed_out { "timed out" } else { success };
    let expected = r.plan.step_ref(p);
    replay::report::diverged(Divergence {
        step: Some(p as u32),
        reason: format!(
            "step {p}: T{}'s {what} #{} {} in the replay but {} in the recording",
            expected.tid,
            expected.index,
            said(now),
            said(recorded)
        ),
        got: Some(StepRef {
            site: ilgen_trace::known_site(site),
            ..expected.clone()
        }),
        expected: Some(expected),
    });
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
    if let Some(t) = current() {
        uncount(t);
    }
}

fn uncount(t: &ReplayThread) {
    if t.info.outside_schedule() {
        return;
    }
    let _ = t
        .info
        .syncs
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
}

/// The calling thread's replay state, made (and started through the gate) for main and for
/// threads of uninstrumented code on their first hook; `None` when not replaying or after the
/// thread ended.
#[inline]
pub(crate) fn current() -> Option<&'static ReplayThread> {
    match thread::slot() {
        Slot::Live(t) => Some(t),
        Slot::Done => None,
        Slot::Unset => current_slow(),
    }
}

#[cold]
fn current_slow() -> Option<&'static ReplayThread> {
    let Some(r) = replay::gate::replaying() else {
        if runtime::settled() {
            thread::set_done();
        }
        return None;
    };
    let is_main = is_main();
    let me = if is_main {
        ThreadRef {
            tid: r.plan.main_tid(),
            parent: None,
            child_index: 0,
        }
    } else {
        ThreadRef {
            tid: thread::fresh_tid(r),
            parent: None,
            child_index: thread::next_orphan(),
        }
    };
    let mut clock = VectorClock::default();
    clock.set(me.tid, 1);
    let t = thread::register(me, clock);
    if !is_main {
        // A thread of uninstrumented code: its first record is a start, as in record mode.
        thread_start(t);
    }
    Some(t)
}

/// The calling thread is about to create a child: its (parent tid, child index, child tid).
pub(crate) fn new_child() -> Option<(ThreadId, u32, ThreadId)> {
    let r = replay::gate::get()?;
    let t = current()?;
    replay::deadlock::start_watchdog(r);
    let mut inner = t.enter()?;
    let index = inner.children;
    inner.children += 1;
    let tid = r
        .plan
        .child_tid(t.tid(), index)
        .unwrap_or_else(|| thread::fresh_tid(r));
    thread::child_coming();
    Some((t.tid(), index, tid))
}

/// Starts the calling thread, created by the wrapper as (parent, child_index) with tid `tid`:
/// its clock is the one its parent left at the fork; then its `start` goes through the gate.
pub(crate) fn start(tid: ThreadId, parent: ThreadId, child_index: u32) {
    if replay::gate::replaying().is_none() {
        return;
    }
    let clock = replay::hb::with_clocks(|c| c.start(tid));
    let t = thread::register(
        ThreadRef {
            tid,
            parent: known_thread(parent),
            child_index,
        },
        clock,
    );
    thread::child_arrived();
    thread_start(t);
}

/// A thread's first operation, `start` (not main).
fn thread_start(t: &ReplayThread) {
    let step = gate(t, &SyncOp::Start, NO_SITE, None);
    count(t, step);
}

/// The calling thread ends (its start routine returned, `pthread_exit`, or the key destructor):
/// its `end` goes through the gate and its clock is left for the joiner. Main has no `end`.
pub(crate) fn end(site: SiteId) {
    let Some(t) = thread::current_if_live() else {
        return;
    };
    if !is_main() {
        let step = gate(t, &SyncOp::End, site, None);
        apply(t, &SyncOp::End, site);
        count(t, step);
    }
    thread::finish(t);
}

fn is_main() -> bool {
    // SAFETY: plain system calls.
    unsafe { libc::gettid() == libc::getpid() }
}

/// Creates the key that ends a thread leaving through code the runtime does not see (at
/// start-up, before any thread replays); false when the system refuses.
pub(crate) fn create_exit_key() -> bool {
    thread::create_exit_key(on_exit)
}

/// Thread-key destructor: the thread exits without the runtime having ended it.
unsafe extern "C" fn on_exit(_value: *mut libc::c_void) {
    end(NO_SITE);
}
