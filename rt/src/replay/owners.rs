//! Who holds which lock in replay, and where each acquired it.
//!
//! Takes the acquires and releases of mutexes, rwlocks and spin locks from `replay::sync` (on the
//! acquiring thread, so each owner gets that thread's callers from `replay::stack`); gives the
//! owners of a lock (to the watchdog, `replay::deadlock`) and the locks a thread holds with their
//! acquisitions (to deadlock and race reports).

use std::collections::BTreeMap;
use std::sync::Mutex;

use ilgen_trace::replay::HeldLock;
use ilgen_trace::{known_site, SiteId, ThreadId};

use crate::replay;
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

/// Thread `tid`, the calling thread, acquired `lock` at `site`.
pub(crate) fn acquired(lock: u64, tid: ThreadId, site: SiteId) {
    let stack = replay::stack::current();
    OWNERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(lock)
        .or_default()
        .push(Owner { tid, site, stack });
}

/// Thread `tid` released `lock`.
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
}

/// The locks thread `tid` holds now, each with where it acquired it.
pub(crate) fn holds(tid: ThreadId) -> Vec<HeldLock> {
    let owners = OWNERS.lock().unwrap_or_else(|e| e.into_inner());
    owners
        .iter()
        .flat_map(|(&lock, v)| {
            v.iter().filter(|o| o.tid == tid).map(move |o| HeldLock {
                object: lock,
                site: known_site(o.site),
                stack: replay::stack::frames(o.stack),
            })
        })
        .collect()
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
