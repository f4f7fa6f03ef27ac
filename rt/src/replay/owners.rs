//! Who holds which lock in replay, and where each acquired it.
//!
//! Takes the acquires and releases of mutexes, rwlocks and spin locks from `replay::sync` (on the
//! acquiring or releasing thread, so each owner gets that thread's callers from `replay::stack`);
//! gives the owners of a lock (to the watchdog, `replay::deadlock`), the locks a thread holds
//! with their acquisitions (to deadlock reports), and [`held`]: the calling thread's locks now as
//! a depot id, which every remembered access keeps (`shadow`) so that a race report names the
//! locks held at both accesses, the earlier one's as they were when it ran ([`snapshot`]).
//!
//! The id is kept per thread until the thread acquires or releases a lock, so an access costs a
//! thread-local read; in record mode nothing here runs.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Mutex;

use ilgen_trace::replay::HeldLock;
use ilgen_trace::{known_site, SiteId, ThreadId};

use crate::replay;
use crate::replay::depot::Depot;
use crate::replay::stack::StackId;

/// One owner of a lock: the thread, and where it acquired the lock (site and callers).
#[derive(Clone, Copy)]
struct Owner {
    tid: ThreadId,
    site: SiteId,
    stack: StackId,
}

/// Lock address → its owners; several for a read-locked rwlock.
static OWNERS: Mutex<BTreeMap<u64, Vec<Owner>>> = Mutex::new(BTreeMap::new());

/// One lock a thread holds, and where it acquired it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Hold {
    lock: u64,
    site: SiteId,
    stack: StackId,
}

/// The sets of locks threads held when they made an access.
static HOLDS: Depot<Hold> = Depot::new();

/// An id of [`HOLDS`]; 0: no lock.
pub(crate) type HoldsId = u32;

thread_local! {
    /// The calling thread's locks as an id of [`HOLDS`], until it acquires or releases one.
    static HELD: Cell<Option<HoldsId>> = const { Cell::new(None) };
}

/// The calling thread's set of locks changed.
fn changed() {
    let _ = HELD.try_with(|h| h.set(None));
}

/// Thread `tid`, the calling thread, acquired `lock` at `site`.
pub(crate) fn acquired(lock: u64, tid: ThreadId, site: SiteId) {
    let stack = replay::stack::current();
    OWNERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(lock)
        .or_default()
        .push(Owner { tid, site, stack });
    changed();
}

/// Thread `tid`, the calling thread, released `lock`.
pub(crate) fn released(lock: u64, tid: ThreadId) {
    let mut owners = OWNERS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(v) = owners.get_mut(&lock) {
        if let Some(i) = v.iter().position(|o| o.tid == tid) {
            v.remove(i);
        }
        if v.is_empty() {
            owners.remove(&lock);
        }
    }
    changed();
}

fn holds_of(tid: ThreadId) -> Vec<Hold> {
    let owners = OWNERS.lock().unwrap_or_else(|e| e.into_inner());
    owners
        .iter()
        .flat_map(|(&lock, v)| {
            v.iter().filter(|o| o.tid == tid).map(move |o| Hold {
                lock,
                site: o.site,
                stack: o.stack,
            })
        })
        .collect()
}

/// With the owners' lock let go: naming a stack's frames may ask the loader, which may be
/// loading a library whose constructor waits for that lock.
fn named(holds: Vec<Hold>) -> Vec<HeldLock> {
    holds
        .into_iter()
        .map(|h| HeldLock {
            object: h.lock,
            site: known_site(h.site),
            stack: replay::stack::frames(h.stack),
        })
        .collect()
}

/// The locks thread `tid` holds now, each with where it acquired it.
pub(crate) fn holds(tid: ThreadId) -> Vec<HeldLock> {
    named(holds_of(tid))
}

/// The locks thread `tid`, the calling thread, holds now, as an id for [`snapshot`].
pub(crate) fn held(tid: ThreadId) -> HoldsId {
    let cached = HELD.try_with(Cell::get).ok().flatten();
    cached.unwrap_or_else(|| {
        let id = HOLDS.intern(holds_of(tid));
        let _ = HELD.try_with(|h| h.set(Some(id)));
        id
    })
}

/// The locks of `id`, each with where it was acquired.
pub(crate) fn snapshot(id: HoldsId) -> Vec<HeldLock> {
    named(HOLDS.get(id))
}

/// The threads that hold `lock` now (several for a read-locked rwlock).
pub(crate) fn of(lock: u64) -> Vec<ThreadId> {
    OWNERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&lock)
        .map(|v| v.iter().map(|o| o.tid).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_access_keeps_the_locks_held_when_it_ran() {
        std::thread::spawn(|| {
            let tid = 9_000;
            assert_eq!(held(tid), 0);
            acquired(0x100, tid, 4);
            let one = held(tid);
            acquired(0x200, tid, 5);
            let two = held(tid);
            released(0x100, tid);
            released(0x200, tid);
            assert_eq!(held(tid), 0);
            let sites =
                |id| -> Vec<_> { snapshot(id).iter().map(|h| (h.object, h.site)).collect() };
            assert_eq!(sites(one), [(0x100, Some(4))]);
            assert_eq!(sites(two), [(0x100, Some(4)), (0x200, Some(5))]);
            assert!(holds(tid).is_empty());
        })
        .join()
        .unwrap();
    }
}
