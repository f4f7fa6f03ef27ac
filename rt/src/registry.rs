//! The process's threads as the runtime knows them: live threads and `pthread_t` handles.
//!
//! Takes thread starts and ends, and the handles `pthread_create` returned; gives the logical id
//! of a `pthread_t` (for join and detach) and the list of live threads to ask for a flush at exit.
//! This is the slow path, behind one spin lock. The lock records its owner, so that a signal
//! handler that interrupted the owner gives up at once instead of deadlocking, and other signal
//! paths only try it for a bounded time.

use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use ilgen_trace::{ThreadId, NO_THREAD};

use crate::thread::ThreadState;

struct Live {
    tid: ThreadId,
    pthread: libc::pthread_t,
    state: *const ThreadState,
}

#[derive(Default)]
pub(crate) struct Threads {
    live: Vec<Live>,
    /// `pthread_t` of a thread created through the wrapper, until it is joined or detached.
    handles: BTreeMap<libc::pthread_t, ThreadId>,
}

struct SpinLock {
    /// 0, or `pthread_self()` of the holder.
    owner: AtomicUsize,
    data: UnsafeCell<Threads>,
}

// SAFETY: `data` is only reached through `Guard`, which the lock hands to one thread at a time.
unsafe impl Sync for SpinLock {}

static THREADS: SpinLock = SpinLock {
    owner: AtomicUsize::new(0),
    data: UnsafeCell::new(Threads {
        live: Vec::new(),
        handles: BTreeMap::new(),
    }),
};

pub(crate) struct Guard(());

impl std::ops::Deref for Guard {
    type Target = Threads;
    fn deref(&self) -> &Threads {
        // SAFETY: the guard holds the lock.
        unsafe { &*THREADS.data.get() }
    }
}

impl std::ops::DerefMut for Guard {
    fn deref_mut(&mut self) -> &mut Threads {
        // SAFETY: the guard holds the lock.
        unsafe { &mut *THREADS.data.get() }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        THREADS.owner.store(0, Ordering::Release);
    }
}

fn me() -> usize {
    // SAFETY: pthread_self never fails.
    unsafe { libc::pthread_self() as usize }
}

fn try_once(me: usize) -> bool {
    THREADS
        .owner
        .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

/// Takes the lock, waiting as long as needed (normal thread context).
pub(crate) fn lock() -> Guard {
    let me = me();
    while !try_once(me) {
        std::thread::yield_now();
    }
    Guard(())
}

/// Takes the lock within about `attempts` yields; `None` if this thread already holds it
/// (a signal interrupted it) or it stays busy.
pub(crate) fn try_lock(attempts: u32) -> Option<Guard> {
    let me = me();
    for _ in 0..attempts {
        if try_once(me) {
            return Some(Guard(()));
        }
        if THREADS.owner.load(Ordering::Relaxed) == me {
            return None;
        }
        // SAFETY: sched_yield is async-signal-safe.
        unsafe { libc::sched_yield() };
    }
    None
}

impl Threads {
    pub fn add_live(&mut self, tid: ThreadId, pthread: libc::pthread_t, state: *const ThreadState) {
        self.live.push(Live {
            tid,
            pthread,
            state,
        });
    }

    pub fn remove_live(&mut self, tid: ThreadId) {
        self.live.retain(|l| l.tid != tid);
    }

    /// Every live thread but the caller: its handle and its state (valid while the lock is held:
    /// a thread leaves the registry before it frees its state).
    pub fn others(
        &self,
        me: libc::pthread_t,
    ) -> impl Iterator<Item = (libc::pthread_t, *const ThreadState)> + '_ {
        self.live
            .iter()
            .filter(move |l| l.pthread != me)
            .map(|l| (l.pthread, l.state))
    }

    /// Remembers that `pthread` is thread `tid` (a reused `pthread_t` replaces the old entry).
    pub fn add_handle(&mut self, pthread: libc::pthread_t, tid: ThreadId) {
        self.handles.insert(pthread, tid);
    }

    /// The logical id of `pthread`: a handle, else a live thread (one created by uninstrumented
    /// code), else [`NO_THREAD`].
    pub fn tid_of(&self, pthread: libc::pthread_t) -> ThreadId {
        self.handles
            .get(&pthread)
            .copied()
            .or_else(|| {
                self.live
                    .iter()
                    .find(|l| l.pthread == pthread)
                    .map(|l| l.tid)
            })
            .unwrap_or(NO_THREAD)
    }

    /// Forgets `pthread` after a join or detach: the C library may reuse the value.
    pub fn remove_handle(&mut self, pthread: libc::pthread_t) {
        self.handles.remove(&pthread);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_then_live_threads_name_a_pthread() {
        let mut t = Threads::default();
        t.add_live(0, 100, std::ptr::null());
        t.add_live(5, 500, std::ptr::null());
        t.add_handle(300, 3);
        assert_eq!(t.tid_of(300), 3);
        assert_eq!(t.tid_of(500), 5);
        assert_eq!(t.tid_of(999), NO_THREAD);
        t.add_handle(300, 7);
        assert_eq!(
            t.tid_of(300),
            7,
            "a reused pthread_t names the newer thread"
        );
        t.remove_handle(300);
        assert_eq!(t.tid_of(300), NO_THREAD);
        assert_eq!(t.others(100).map(|(p, _)| p).collect::<Vec<_>>(), vec![500]);
        t.remove_live(5);
        assert_eq!(t.others(100).count(), 0);
    }

    #[test]
    fn the_holder_cannot_take_the_lock_again() {
        let g = lock();
        assert!(try_lock(10).is_none());
        drop(g);
        assert!(try_lock(10).is_some());
    }
}
