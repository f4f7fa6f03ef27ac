//! Heap and object lifetimes: allocations and frees reported by the replaced malloc family
//! (`heap.c`), and the stack of each thread the runtime starts.
//!
//! Takes `__ilgen_heap(op, addr, size, site)` from `heap.c` (after the real allocation, before the
//! real free) and [`thread_stack`] from the thread trampoline; gives, in record mode, an
//! `Event::Heap` in the calling thread's file after its segment cache is written out (so the
//! accesses before the record are those made before the event), numbered from the sync counter;
//! in replay mode, `replay::blocks::note` (the blocks a race report names) and
//! `replay::shadow::lifetime` (an allocation or a stack forgets the block's shadow, a free is
//! checked and recorded as a write over it). Neither is a schedule step.
//!
//! Never initializes the runtime and never creates thread state: an allocation made before
//! initialization, or by a thread the runtime does not follow (yet), or while this thread is
//! inside the runtime (its own allocations), is not an event.

use std::ffi::c_void;

use ilgen_trace::{Event, Heap, HeapOp};

use crate::{replay, runtime, sites, thread};

extern "C" {
    /// Turns this thread's heap events off (1) or back on (0); returns the previous setting.
    fn __ilgen_heap_quiet(on: libc::c_int) -> libc::c_int;
}

const ALLOC: libc::c_int = 0;
const FREE: libc::c_int = 1;

/// Reports one allocation (`op` 0) or free (`op` 1) of `[addr, addr + size)` at `site` (NULL for
/// an allocation libc made by itself), whose block spans `span` bytes (its usable size): the
/// trace records `size`, the replay shadow forgets or frees all of `span`.
///
/// # Safety
/// Called by `heap.c` only; `addr` is recorded, never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_heap(
    op: libc::c_int,
    addr: *mut c_void,
    size: usize,
    span: usize,
    site: *const c_void,
) {
    let (addr, size, span) = (addr as u64, size as u64, span as u64);
    let (op, shadow_op) = match op {
        ALLOC => (
            HeapOp::Alloc { addr, size },
            HeapOp::Alloc { addr, size: span },
        ),
        FREE => (
            HeapOp::Free { addr, size },
            HeapOp::Free { addr, size: span },
        ),
        _ => return,
    };
    event_as(op, shadow_op, site as usize);
}

/// Runs `f` (a libc call on the runtime's behalf) with this thread's heap events off.
pub(crate) fn quiet<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: flips a thread-local flag of heap.c.
    let was = unsafe { __ilgen_heap_quiet(1) };
    let r = f();
    // SAFETY: as above.
    unsafe { __ilgen_heap_quiet(was) };
    r
}

/// The calling thread starts on a stack that may have been another thread's (glibc caches the
/// stacks of ended threads): a new object.
pub(crate) fn thread_stack() {
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    let (mut addr, mut size) = (std::ptr::null_mut::<c_void>(), 0usize);
    // SAFETY: the attribute object is initialized by pthread_getattr_np and destroyed after use;
    // what it allocates is the runtime's, not the program's.
    let ok = quiet(|| unsafe {
        let mut ok = libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) == 0;
        if ok {
            ok = libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size) == 0;
            libc::pthread_attr_destroy(attr.as_mut_ptr());
        }
        ok
    });
    if ok {
        event(
            HeapOp::Stack {
                addr: addr as u64,
                size: size as u64,
            },
            0,
        );
    }
}

/// Records `op` at `site` for the calling thread (record mode), or applies it to the shadow
/// (replay mode); nothing on a thread the runtime does not follow or while it is inside the runtime.
pub(crate) fn event(op: HeapOp, site: usize) {
    event_as(op, op, site)
}

/// [`event`], with `shadow_op` (the same operation over the block's whole span) for replay.
fn event_as(op: HeapOp, shadow_op: HeapOp, site: usize) {
    if let Some(st) = thread::current_if_live() {
        let Some(mut inner) = st.enter() else { return };
        inner.flush();
        let seq = runtime::next_seq();
        inner.writer.write(&Event::Heap(Heap {
            seq,
            site: sites::id(site),
            op,
        }));
        return;
    }
    let Some(t) = replay::thread::current_if_live() else {
        return;
    };
    let tid = t.tid();
    let Some(mut inner) = t.enter() else { return };
    inner.settle_atomic();
    let site = sites::id(site);
    // Reports name the block as asked for; the shadow forgets or frees its whole span.
    replay::blocks::note(tid, op, site);
    replay::shadow::lifetime(&mut inner.clock, tid, shadow_op, site, replay::report::race);
}
