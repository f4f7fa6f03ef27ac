//! Happens-before for replay: vector clocks, epochs, and the clocks of sync objects.
//!
//! Takes the program's sync operations as `replay::sync` applies them (release into an object,
//! acquire from it, fork, start, end, join); gives each thread's [`VectorClock`] and the
//! [`Epoch`] of its current instant, which `shadow` compares against. Threads are indexed by their
//! recorded tid (small and dense: the schedule's tids, then fresh ones above them).
//!
//! Only program sync operations change clocks. The replay gate, the watchdog and the runtime's own
//! locks never call in here, so the detector sees no edge the replay machinery made (the paper's
//! replayer "ignores all happens-before edges due to the replayer internal machinery").
//!
//! Approximations, all on the side of more order (a missed race, never an invented one): an object
//! clock only grows (a release joins into it), so a reader of a rwlock acquires earlier readers'
//! releases too; a signal releases into the condition variable and any later wake acquires it;
//! a barrier's clock keeps its earlier generations.

use std::collections::HashMap;
use std::sync::Mutex;

use ilgen_trace::ThreadId;

/// One thread's logical time: `(tid, clock)` packed into a `u64` (tid in the high half), the
/// FastTrack epoch that a shadow cell stores instead of a whole vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Epoch(pub u64);

impl Epoch {
    pub fn new(tid: ThreadId, clock: u32) -> Epoch {
        Epoch((u64::from(tid) << 32) | u64::from(clock))
    }

    pub fn tid(self) -> ThreadId {
        (self.0 >> 32) as ThreadId
    }

    pub fn clock(self) -> u32 {
        self.0 as u32
    }

    /// The instant this epoch names happened before the present of a thread with clock `now`.
    #[inline]
    pub fn before(self, now: &VectorClock) -> bool {
        self.clock() <= now.get(self.tid())
    }
}

/// A vector clock: entry `t` is the last instant of thread `t` known to have happened before.
/// Missing entries are 0; the vector grows as threads appear.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VectorClock(Vec<u32>);

impl VectorClock {
    pub fn get(&self, tid: ThreadId) -> u32 {
        self.0.get(tid as usize).copied().unwrap_or(0)
    }

    pub fn set(&mut self, tid: ThreadId, clock: u32) {
        let i = tid as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, 0);
        }
        self.0[i] = clock;
    }

    /// Advances thread `tid`'s own entry: the next instant, after a release.
    pub fn tick(&mut self, tid: ThreadId) {
        let c = self.get(tid);
        self.set(tid, c.wrapping_add(1));
    }

    /// Entry-wise maximum: everything `other` knows now happened before.
    pub fn join(&mut self, other: &VectorClock) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a = (*a).max(*b);
        }
    }

    /// Every entry of `self` is at most the one of `other`.
    #[cfg(test)]
    pub fn leq(&self, other: &VectorClock) -> bool {
        self.0
            .iter()
            .enumerate()
            .all(|(t, &c)| c <= other.get(t as ThreadId))
    }

    pub fn epoch(&self, tid: ThreadId) -> Epoch {
        Epoch::new(tid, self.get(tid))
    }
}

/// The clocks that live outside threads: one per sync object (by address and role), the clock a
/// parent handed to each child at fork, and each ended thread's last clock for its joiner.
#[derive(Default)]
pub(crate) struct SyncClocks {
    objects: HashMap<(u64, Role), VectorClock>,
    forks: HashMap<ThreadId, VectorClock>,
    ends: HashMap<ThreadId, VectorClock>,
}

/// What an object's clock orders, so that one address used in two roles (a lock inside a struct
/// that is also a barrier's first member, say) keeps two clocks. Atomic locations keep theirs in
/// the shadow memory (`shadow`), next to their accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Role {
    Lock,
    Cond,
    Barrier,
    Sem,
    /// A file descriptor number (the object is the number): closed, then created again.
    Fd,
    /// A pipe, FIFO or stream socket pair (the object is its inode, `intercept::output`): written,
    /// then read.
    Channel,
}

impl SyncClocks {
    /// The thread releases `object`: the object's clock learns the thread's present; the thread
    /// moves to its next instant, so that later accesses are not covered by this release.
    pub fn release(&mut self, object: u64, role: Role, tid: ThreadId, now: &mut VectorClock) {
        self.objects.entry((object, role)).or_default().join(now);
        now.tick(tid);
    }

    /// The thread acquires `object`: it learns everything released into it so far.
    pub fn acquire(&mut self, object: u64, role: Role, now: &mut VectorClock) {
        if let Some(c) = self.objects.get(&(object, role)) {
            now.join(c);
        }
    }

    pub fn fork(&mut self, parent: ThreadId, child: ThreadId, now: &mut VectorClock) {
        self.forks.insert(child, now.clone());
        now.tick(parent);
    }

    /// The clock a thread starts with: its parent's at the fork, and its own first instant.
    pub fn start(&mut self, tid: ThreadId) -> VectorClock {
        let mut c = self.forks.remove(&tid).unwrap_or_default();
        c.set(tid, 1);
        c
    }

    pub fn end(&mut self, tid: ThreadId, now: &VectorClock) {
        self.ends.insert(tid, now.clone());
    }

    pub fn join_thread(&mut self, child: ThreadId, now: &mut VectorClock) {
        if let Some(c) = self.ends.get(&child) {
            now.join(c);
        }
    }
}

/// The process's sync clocks, behind one lock: sync operations are rare next to accesses.
pub(crate) static CLOCKS: Mutex<Option<SyncClocks>> = Mutex::new(None);

/// Runs `f` on the process's sync clocks.
pub(crate) fn with_clocks<R>(f: impl FnOnce(&mut SyncClocks) -> R) -> R {
    let mut g = CLOCKS.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(SyncClocks::default))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_is_entrywise_max_and_grows() {
        let mut a = VectorClock::default();
        a.set(0, 3);
        let mut b = VectorClock::default();
        b.set(0, 1);
        b.set(2, 5);
        a.join(&b);
        assert_eq!((a.get(0), a.get(1), a.get(2)), (3, 0, 5));
        assert!(b.leq(&a));
        assert!(!a.leq(&b));
    }

    #[test]
    fn epochs_pack_tid_and_clock() {
        let e = Epoch::new(7, 42);
        assert_eq!((e.tid(), e.clock()), (7, 42));
        let mut now = VectorClock::default();
        now.set(7, 41);
        assert!(!e.before(&now));
        now.set(7, 42);
        assert!(e.before(&now));
    }

    #[test]
    fn release_acquire_orders_and_ticks() {
        let mut s = SyncClocks::default();
        let mut t0 = VectorClock::default();
        t0.set(0, 1);
        let before = t0.epoch(0);
        s.release(0x10, Role::Lock, 0, &mut t0);
        let after = t0.epoch(0);
        let mut t1 = s.start(1);
        assert!(!before.before(&t1));
        s.acquire(0x10, Role::Lock, &mut t1);
        assert!(
            before.before(&t1),
            "released instant is known to the acquirer"
        );
        assert!(!after.before(&t1), "the releaser's next instant is not");
        s.acquire(0x10, Role::Cond, &mut VectorClock::default());
    }

    #[test]
    fn fork_start_end_join() {
        let mut s = SyncClocks::default();
        let mut main = VectorClock::default();
        main.set(0, 1);
        let pre_fork = main.epoch(0);
        s.fork(0, 1, &mut main);
        let mut child = s.start(1);
        assert!(pre_fork.before(&child));
        assert!(
            !main.epoch(0).before(&child),
            "after the fork main runs concurrently"
        );
        child.tick(1);
        let child_last = child.epoch(1);
        s.end(1, &child);
        assert!(!child_last.before(&main));
        s.join_thread(1, &mut main);
        assert!(child_last.before(&main));
    }
}
