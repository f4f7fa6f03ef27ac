//! The process's threads as the runtime knows them: live threads and `pthread_t` handles.
//!
//! Takes thread starts and ends, and the handles `pthread_create` returned; gives the logical id
//! of a `pthread_t` (for join and detach), the list of live threads to ask for a flush at exit,
//! and the states ended threads left for new ones (`retire`, `take_spare`).
//! It keeps each live thread's state as a pointer of type `S` that it never follows: the one
//! registry of the process is `thread::THREADS`, over `thread::ThreadState`.
//! This is the slow path, behind one spin lock. The lock records its owner, so that a signal
//! handler that interrupted the owner gives up at once instead of deadlocking, and other signal
//! paths only try it for a bounded time.

use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use ilgen_trace::{ThreadId, NO_THREAD};

struct Live<S> {
    tid: ThreadId,
    pthread: libc::pthread_t,
    state: *const S,
}

pub(crate) struct Threads<S> {
    live: Vec<Live<S>>,
    /// States of threads that ended, for threads that start later to take over.
    spare: Vec<*const S>,
    /// `pthread_t` of a thread created through the wrapper, until it is joined or detached.
    handles: BTreeMap<libc::pthread_t, ThreadId>,
}

/// The threads behind a spin lock.
pub(crate) struct Registry<S> {
    /// 0, or `pthread_self()` of the holder.
    owner: AtomicUsize,
    data: UnsafeCell<Threads<S>>,
}

// SAFETY: `data` is only reached through `Guard`, which the lock hands to one thread at a time;
// the state pointers it holds are never followed here.
unsafe impl<S> Sync for Registry<S> {}

pub(crate) struct Guard<'a, S>(&'a Registry<S>);

impl<S> std::ops::Deref for Guard<'_, S> {
    type Target = Threads<S>;
    fn deref(&self) -> &Threads<S> {
        // SAFETY: the guard holds the lock.
        unsafe { &*self.0.data.get() }
    }
}

impl<S> std::ops::DerefMut for Guard<'_, S> {
    fn deref_mut(&mut self) -> &mut Threads<S> {
        // SAFETY: the guard holds the lock.
        unsafe { &mut *self.0.data.get() }
    }
}

impl<S> Drop for Guard<'_, S> {
    fn drop(&mut self) {
        self.0.owner.store(0, Ordering::Release);
    }
}

fn me() -> usize {
    // SAFETY: pthread_self never fails.
    unsafe { libc::pthread_self() as usize }
}

impl<S> Registry<S> {
    pub const fn new() -> Registry<S> {
        Registry {
            owner: AtomicUsize::new(0),
            data: UnsafeCell::new(Threads {
                live: Vec::new(),
                spare: Vec::new(),
                handles: BTreeMap::new(),
            }),
        }
    }

    fn try_once(&self, me: usize) -> bool {
        self.owner
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Takes the lock, waiting as long as needed (normal thread context).
    pub fn lock(&self) -> Guard<'_, S> {
        let me = me();
        while !self.try_once(me) {
            std::thread::yield_now();
        }
        Guard(self)
    }

    /// Takes the lock within about `attempts` yields; `None` if this thread already holds it
    /// (a signal interrupted it) or it stays busy.
    pub fn try_lock(&self, attempts: u32) -> Option<Guard<'_, S>> {
        let me = me();
        for _ in 0..attempts {
            if self.try_once(me) {
                return Some(Guard(self));
            }
            if self.owner.load(Ordering::Relaxed) == me {
                return None;
            }
            // SAFETY: sched_yield is async-signal-safe.
            unsafe { libc::sched_yield() };
        }
        None
    }
}

impl<S> Threads<S> {
    pub fn add_live(&mut self, tid: ThreadId, pthread: libc::pthread_t, state: *const S) {
        self.live.push(Live {
            tid,
            pthread,
            state,
        });
    }

    pub fn remove_live(&mut self, tid: ThreadId) {
        self.live.retain(|l| l.tid != tid);
    }

    /// Thread `tid` ended: its state leaves the live threads for the spare ones.
    pub fn retire(&mut self, tid: ThreadId, state: *const S) {
        self.remove_live(tid);
        self.spare.push(state);
    }

    /// A spare state, which the caller now owns.
    pub fn take_spare(&mut self) -> Option<*const S> {
        self.spare.pop()
    }

    /// The spare states (valid while the lock is held: only their taker frees them).
    pub fn spares(&self) -> impl Iterator<Item = *const S> + '_ {
        self.spare.iter().copied()
    }

    /// Every live thread but the caller: its handle and its state (valid while the lock is held:
    /// a thread leaves the registry before it frees its state).
    pub fn others(
        &self,
        me: libc::pthread_t,
    ) -> impl Iterator<Item = (libc::pthread_t, *const S)> + '_ {
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
        let registry = Registry::<u8>::new();
        let mut t = registry.lock();
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
        let state = 7u8;
        t.add_live(6, 600, &state);
        t.retire(6, &state);
        assert_eq!(t.others(100).count(), 0, "a retired thread is not live");
        assert_eq!(t.spares().collect::<Vec<_>>(), [&state as *const u8]);
        assert_eq!(t.take_spare(), Some(&state as *const u8));
        assert_eq!(t.take_spare(), None);
    }

    #[test]
    fn the_holder_cannot_take_the_lock_again() {
        let registry = Registry::<u8>::new();
        let g = registry.lock();
        assert!(registry.try_lock(10).is_none());
        drop(g);
        assert!(registry.try_lock(10).is_some());
    }
}
