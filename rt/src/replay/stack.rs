//! Shadow call stacks in replay mode, and the depot that names each stack by one number.
//!
//! Takes the pass's function hooks (`__ilgen_func_enter`, `_call`, `_exit`, `_unwound`, see
//! `ilgen_trace::abi`), which the program calls only while [`__ilgen_stacks`] is set, that is in
//! replay mode ([`turn_on`]); gives [`current`], the calling thread's callers as a [`StackId`]:
//! the site of the call in each function between the thread's start and the current one,
//! innermost first (the current function's own line is the site of the access or operation being
//! reported, which the caller has). [`frames`] turns an id back into those sites.
//!
//! Per thread, one slot per active instrumented function holds the site of the call it is making
//! (set before each call); entry pushes a slot, return pops it, a landing pad cuts the stack back
//! to its function's slot (the frames an exception unwound returned through no `ret`). Frames of
//! uninstrumented code (libstdc++'s thread trampoline, a library calling back) are not seen: the
//! stack goes from the instrumented caller to the instrumented callee.
//!
//! Why a depot and not a stack per remembered access: the shadow memory keeps up to four accesses
//! per 8 bytes, and the report needs the stack of the earlier access of a pair long after it ran.
//! A stack id is four bytes in the shadow cell; each distinct stack is stored once. The calling
//! thread's id is kept until its stack changes, so an access costs a thread-local read.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

use ilgen_trace::{SiteId, NO_SITE};

use crate::sites;

/// A stack in the depot; 0 is the empty stack.
pub(crate) type StackId = u32;

/// Read by every instrumented function on entry: nonzero, it calls the hooks below.
#[no_mangle]
pub static __ilgen_stacks: AtomicU8 = AtomicU8::new(0);

/// Starts the shadow stacks (replay mode): functions entered from now on call the hooks.
pub(crate) fn turn_on() {
    __ilgen_stacks.store(1, Ordering::Release);
}

#[derive(Default)]
struct Depot {
    ids: HashMap<Vec<SiteId>, StackId>,
    stacks: Vec<Vec<SiteId>>,
}

static DEPOT: Mutex<Option<Depot>> = Mutex::new(None);

fn intern(callers: Vec<SiteId>) -> StackId {
    if callers.is_empty() {
        return 0;
    }
    let mut guard = DEPOT.lock().unwrap_or_else(|e| e.into_inner());
    let d = guard.get_or_insert_with(Depot::default);
    if let Some(&id) = d.ids.get(&callers) {
        return id;
    }
    d.stacks.push(callers.clone());
    let id = d.stacks.len() as StackId;
    d.ids.insert(callers, id);
    id
}

/// The sites of stack `id`, innermost caller first.
pub(crate) fn frames(id: StackId) -> Vec<SiteId> {
    if id == 0 {
        return Vec::new();
    }
    let guard = DEPOT.lock().unwrap_or_else(|e| e.into_inner());
    guard
        .as_ref()
        .and_then(|d| d.stacks.get(id as usize - 1).cloned())
        .unwrap_or_default()
}

/// One thread's shadow stack.
#[derive(Default)]
struct Shadow {
    /// Per active instrumented function, outermost first: the site of the call it is making.
    slots: Vec<SiteId>,
    /// The depot id of the callers as they are now, once asked for.
    id: Option<StackId>,
}

impl Shadow {
    fn callers(&self) -> Vec<SiteId> {
        let n = self.slots.len().saturating_sub(1);
        self.slots[..n]
            .iter()
            .rev()
            .copied()
            .filter(|&s| s != NO_SITE)
            .collect()
    }
}

thread_local! {
    static SHADOW: RefCell<Shadow> = RefCell::new(Shadow::default());
}

/// Runs `f` on the calling thread's stack; nothing when a hook of a signal handler interrupted
/// another on this thread, or the thread is being torn down.
fn with<R>(f: impl FnOnce(&mut Shadow) -> R) -> Option<R> {
    SHADOW
        .try_with(|s| s.try_borrow_mut().ok().map(|mut s| f(&mut s)))
        .ok()
        .flatten()
}

/// The calling thread's callers (see the module doc).
pub(crate) fn current() -> StackId {
    with(|s| {
        if let Some(id) = s.id {
            return id;
        }
        let id = intern(s.callers());
        s.id = Some(id);
        id
    })
    .unwrap_or(0)
}

/// Entry of an instrumented function: returns the depth before it, for [`__ilgen_func_unwound`].
#[no_mangle]
pub extern "C" fn __ilgen_func_enter() -> u32 {
    with(|s| {
        let depth = s.slots.len() as u32;
        s.slots.push(NO_SITE);
        s.id = None;
        depth
    })
    .unwrap_or(0)
}

/// The function about to call from `site`.
///
/// # Safety
/// `site` is only compared and converted to a site id, never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_func_call(site: *const c_void) {
    let site = sites::id(site as usize);
    with(|s| {
        if let Some(top) = s.slots.last_mut() {
            if *top != site {
                *top = site;
                s.id = None;
            }
        }
    });
}

/// Return of an instrumented function. A function entered before the stacks were turned on
/// finds its caller's slot, or none: it pops what is there, which the caller's next hook sets.
#[no_mangle]
pub extern "C" fn __ilgen_func_exit() {
    with(|s| {
        s.slots.pop();
        s.id = None;
    });
}

/// A landing pad of the function entered at `depth`: the frames above its own are gone.
#[no_mangle]
pub extern "C" fn __ilgen_func_unwound(depth: u32) {
    with(|s| {
        let keep = depth as usize + 1;
        if s.slots.len() > keep {
            s.slots.truncate(keep);
            s.id = None;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `__ilgen_func_call` by site id (unit tests have no site table to point into).
    fn call(id: SiteId) {
        with(|s| {
            *s.slots.last_mut().unwrap() = id;
            s.id = None;
        });
    }

    #[test]
    fn callers_are_the_call_sites_of_the_enclosing_functions_innermost_first() {
        std::thread::spawn(|| {
            assert_eq!(current(), 0);
            let main = __ilgen_func_enter();
            assert_eq!(main, 0);
            call(10);
            let f = __ilgen_func_enter();
            assert_eq!(f, 1);
            assert_eq!(frames(current()), vec![10]);
            call(20);
            __ilgen_func_enter();
            call(30);
            assert_eq!(frames(current()), vec![20, 10]);
            let id = current();
            assert_eq!(current(), id, "unchanged stack, same id");
            __ilgen_func_exit();
            assert_eq!(frames(current()), vec![10]);
            // An exception thrown two frames down, caught in f: f's slot stays.
            call(21);
            __ilgen_func_enter();
            call(31);
            __ilgen_func_enter();
            __ilgen_func_unwound(f);
            assert_eq!(frames(current()), vec![10]);
            __ilgen_func_exit();
            __ilgen_func_exit();
            assert_eq!(current(), 0);
            __ilgen_func_exit();
            assert_eq!(current(), 0, "more exits than entries leave it empty");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn equal_stacks_of_two_threads_share_an_id() {
        let one = || {
            std::thread::spawn(|| {
                __ilgen_func_enter();
                call(7);
                __ilgen_func_enter();
                call(8);
                __ilgen_func_enter();
                current()
            })
            .join()
            .unwrap()
        };
        let (a, b) = (one(), one());
        assert_eq!(a, b);
        assert_eq!(frames(a), vec![8, 7]);
    }
}
