//! Shadow call stacks in replay mode, and the depot that names each stack by one number.
//!
//! Takes the pass's function hooks (`__ilgen_func_enter`, `_call`, `_exit`, `_unwound`, see
//! `ilgen_trace::abi`), which the program calls only while [`__ilgen_stacks`] is set, that is in
//! replay mode ([`turn_on`]), and the interposed pthread calls of uninstrumented code
//! ([`interposing`]); gives [`current`], the calling thread's callers as a [`StackId`]: the site
//! of the call in each function between the thread's start and the current one, innermost first
//! (the current function's own line is the site of the access or operation being reported, which
//! the caller has), each preceded by where the function returns to when that is not an
//! instrumented call (see below). [`frames`] turns an id back into those frames.
//!
//! Per thread, one slot per active instrumented function holds the site of the call it is making
//! (set before each call) and its return address (given on entry); entry pushes a slot, return
//! pops it, a landing pad cuts the stack back to its function's slot (the frames an exception
//! unwound returned through no `ret`). A return address is kept as a frame of its own: when the
//! caller is instrumented it is the caller's call site again (`ilgen` drops it: it names the same
//! function as the site after it), when not it is the only trace of that code (libstdc++'s thread
//! trampoline below a `std::thread`'s function, libc's call of `main`, a library calling back),
//! which `ilgen` names from the module's symbols. Uninstrumented code between two instrumented
//! functions other than the direct caller is not seen.
//!
//! An operation that uninstrumented code makes through an interposed call (libstdc++'s
//! `pthread_create` for a `std::thread`, its condition waits) has no site: while the thread is
//! inside one at the depth it entered it, [`current`] is the stack of that call: the return
//! address into the code that called it (`native`, found when the call came in), then the site
//! of the instrumented call that led into that code (the top function's, which an instrumented
//! operation's own site replaces), then the callers as usual.
//!
//! Why a depot and not a stack per remembered access: the shadow memory keeps up to eight accesses
//! per 8 bytes, and the report needs the stack of the earlier access of a pair long after it ran.
//! A stack id is four bytes in the shadow cell; each distinct stack is stored once. Each slot
//! keeps the id of the stack with it on top once asked for, which holds while the slot lives
//! (the slots below it change only while they are on top, and the top function's own call site
//! is not in its stack), so an access costs a thread-local read, also after a call returns. And
//! each slot keeps the id of its last callee's stack, which a callee entered again from the same
//! call site and return address takes at once: a function called in a loop (a `qsort`
//! comparator, a helper per element) is not interned once per call.

use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, Ordering};

use ilgen_trace::replay::StackFrame;
use ilgen_trace::{SiteId, NO_SITE};

use crate::replay::depot::Depot;
use crate::replay::native;
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

fn on() -> bool {
    __ilgen_stacks.load(Ordering::Relaxed) != 0
}

/// A frame as the runtime keeps it: a site, or a code address of this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Frame {
    Site(SiteId),
    Code(usize),
}

static STACKS: Depot<Frame> = Depot::new();

/// The frames of stack `id`, innermost caller first; a code address no loaded object holds is
/// left out.
pub(crate) fn frames(id: StackId) -> Vec<StackFrame> {
    STACKS
        .get(id)
        .into_iter()
        .filter_map(|f| match f {
            Frame::Site(s) => Some(StackFrame::Site(s)),
            Frame::Code(pc) => native::frame(pc).map(StackFrame::Native),
        })
        .collect()
}

/// One active instrumented function.
#[derive(Clone, Copy)]
struct Slot {
    /// The site of the call it is making.
    site: SiteId,
    /// Where it returns to (0: unknown).
    from: usize,
    /// The id of the callers while it is on top, once asked for.
    id: Option<StackId>,
    /// Its last callee's: where that returned to, this slot's call site then, and the id.
    callee: Option<(usize, SiteId, StackId)>,
}

/// The thread is inside an interposed call, made with `depth` instrumented functions active.
#[derive(Clone, Copy)]
struct Interposed {
    depth: usize,
    /// The return address into the code that made the call, when known.
    caller: Option<usize>,
    /// Its stack, once asked for.
    id: Option<StackId>,
}

/// One thread's shadow stack.
#[derive(Default)]
struct Shadow {
    /// Per active instrumented function, outermost first.
    slots: Vec<Slot>,
    interposed: Option<Interposed>,
}

impl Shadow {
    /// The frames below the top function's own line, innermost first; with `top_call`, the top
    /// function's call site first (an operation made by the code it called).
    fn callers(&self, top_call: bool) -> Vec<Frame> {
        let n = self.slots.len();
        let mut out = Vec::with_capacity(2 * n);
        for (k, slot) in self.slots.iter().enumerate().rev() {
            if (top_call || k + 1 < n) && slot.site != NO_SITE {
                out.push(Frame::Site(slot.site));
            }
            if slot.from != 0 {
                out.push(Frame::Code(slot.from));
            }
        }
        out
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
        if let Some(i) = s.interposed.filter(|i| i.depth == s.slots.len()) {
            if let Some(id) = i.id {
                return id;
            }
            let caller = i.caller.map(Frame::Code);
            let id = STACKS.intern(caller.into_iter().chain(s.callers(true)).collect());
            s.interposed = Some(Interposed { id: Some(id), ..i });
            return id;
        }
        let n = s.slots.len();
        if let Some(id) = s.slots.last().and_then(|top| top.id) {
            return id;
        }
        let id = STACKS.intern(s.callers(false));
        if let Some(top) = s.slots.last_mut() {
            top.id = Some(id);
            let from = top.from;
            if let Some(caller) = n.checked_sub(2).map(|k| &mut s.slots[k]) {
                caller.callee = Some((from, caller.site, id));
            }
        }
        id
    })
    .unwrap_or(0)
}

/// While alive, the calling thread is inside an interposed call of uninstrumented code
/// ([`interposing`]).
pub(crate) struct Interposing(Option<Option<Interposed>>);

/// The calling thread enters the interposed call whose entry point is the function at `entry`;
/// nothing unless the stacks are on (replay mode). With `walk`, its caller is found now, before
/// the call does anything (`native::caller_of`); without, its stack starts at the instrumented
/// call that led into the code that made it. The walk needs the unwinder's own lock, which the
/// thread holds when the call is that lock's unlock (libgcc's `object_mutex`, which a static
/// program's start-up takes to register its frames): the caller decides.
pub(crate) fn interposing(entry: usize, walk: bool) -> Interposing {
    if !on() {
        return Interposing(None);
    }
    let caller = if walk { native::caller_of(entry) } else { None };
    Interposing(with(|s| {
        let depth = s.slots.len();
        s.interposed.replace(Interposed {
            depth,
            caller,
            id: None,
        })
    }))
}

impl Drop for Interposing {
    fn drop(&mut self) {
        if let Some(outer) = self.0 {
            with(|s| s.interposed = outer);
        }
    }
}

/// Entry of an instrumented function that returns to `ret`: returns the depth before it, for
/// [`__ilgen_func_unwound`].
#[no_mangle]
pub extern "C" fn __ilgen_func_enter(ret: *const c_void) -> u32 {
    with(|s| {
        let depth = s.slots.len() as u32;
        let from = ret as usize;
        let id = s.slots.last().and_then(|caller| match caller.callee {
            Some((f, site, id)) if f == from && site == caller.site => Some(id),
            _ => None,
        });
        s.slots.push(Slot {
            site: NO_SITE,
            from,
            id,
            callee: None,
        });
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
        // Not in the stack of its own slot (see `Shadow::callers`): that slot's id holds.
        if let Some(top) = s.slots.last_mut() {
            top.site = site;
        }
    });
}

/// Return of an instrumented function. A function entered before the stacks were turned on
/// finds its caller's slot, or none: it pops what is there, which the caller's next hook sets.
#[no_mangle]
pub extern "C" fn __ilgen_func_exit() {
    with(|s| {
        s.slots.pop();
    });
}

/// A landing pad of the function entered at `depth`: the frames above its own are gone.
#[no_mangle]
pub extern "C" fn __ilgen_func_unwound(depth: u32) {
    with(|s| {
        let keep = depth as usize + 1;
        s.slots.truncate(keep);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `__ilgen_func_call` by site id (unit tests have no site table to point into).
    fn call(id: SiteId) {
        with(|s| s.slots.last_mut().unwrap().site = id);
    }

    /// `__ilgen_func_enter` of a function whose return address is unknown.
    fn enter() -> u32 {
        __ilgen_func_enter(std::ptr::null())
    }

    fn sites(s: &[SiteId]) -> Vec<StackFrame> {
        s.iter().map(|&s| StackFrame::Site(s)).collect()
    }

    #[test]
    fn callers_are_the_call_sites_of_the_enclosing_functions_innermost_first() {
        std::thread::spawn(|| {
            assert_eq!(current(), 0);
            let main = enter();
            assert_eq!(main, 0);
            call(10);
            let f = enter();
            assert_eq!(f, 1);
            assert_eq!(frames(current()), sites(&[10]));
            call(20);
            enter();
            call(30);
            assert_eq!(frames(current()), sites(&[20, 10]));
            let id = current();
            assert_eq!(current(), id, "unchanged stack, same id");
            __ilgen_func_exit();
            assert_eq!(frames(current()), sites(&[10]));
            // An exception thrown two frames down, caught in f: f's slot stays.
            call(21);
            enter();
            call(31);
            enter();
            __ilgen_func_unwound(f);
            assert_eq!(frames(current()), sites(&[10]));
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
    fn a_callee_entered_again_takes_its_stack_only_from_the_same_call() {
        std::thread::spawn(|| {
            enter();
            call(10);
            let f = |ret: usize| {
                __ilgen_func_enter(ret as *const c_void);
                let id = current();
                __ilgen_func_exit();
                id
            };
            let first = f(0);
            assert_eq!(frames(first), sites(&[10]));
            assert_eq!(f(0), first, "the same call: the same stack");
            call(11);
            assert_eq!(frames(f(0)), sites(&[11]), "another call site");
            let elsewhere = f(libc::getpid as *const () as usize);
            assert_ne!(elsewhere, first, "another return address");
            assert_eq!(frames(f(0)), sites(&[11]));
            // The caller's own stack, asked for before and after its callees ran.
            assert_eq!(current(), 0);
            __ilgen_func_exit();
        })
        .join()
        .unwrap();
    }

    #[test]
    fn equal_stacks_of_two_threads_share_an_id() {
        let one = || {
            std::thread::spawn(|| {
                enter();
                call(7);
                enter();
                call(8);
                enter();
                current()
            })
            .join()
            .unwrap()
        };
        let (a, b) = (one(), one());
        assert_eq!(a, b);
        assert_eq!(frames(a), sites(&[8, 7]));
    }

    /// A code address of this executable, as `frames` gives it.
    fn code(pc: usize) -> StackFrame {
        StackFrame::Native(native::frame(pc).expect("in the test executable"))
    }

    #[test]
    fn return_addresses_follow_the_function_they_return_from() {
        std::thread::spawn(|| {
            // `main`, returning into libc; `f`, returning into `main`'s call.
            let (libc_start, main_call) = (
                libc::getpid as *const () as usize,
                code as *const () as usize,
            );
            __ilgen_func_enter(libc_start as *const c_void);
            call(10);
            __ilgen_func_enter(main_call as *const c_void);
            let libc_frame = StackFrame::Native(native::frame(libc_start).expect("in libc"));
            assert_eq!(
                frames(current()),
                vec![code(main_call), StackFrame::Site(10), libc_frame]
            );
        })
        .join()
        .unwrap();
    }

    #[inline(never)]
    extern "C" fn entry() -> StackId {
        let _inside = interposing(entry as *const () as usize, true);
        std::hint::black_box(current())
    }

    #[inline(never)]
    fn uninstrumented() -> (StackId, usize) {
        (entry(), uninstrumented as *const () as usize)
    }

    #[test]
    fn an_interposed_call_is_named_by_its_caller_then_the_call_into_it() {
        std::thread::spawn(|| {
            turn_on();
            enter();
            call(10);
            enter();
            call(20);
            let plain = current();
            let (inside, caller_fn) = uninstrumented();
            let f = frames(inside);
            assert_eq!(f[1..], sites(&[20, 10]), "{f:?}");
            let StackFrame::Native(n) = &f[0] else {
                panic!("{f:?}")
            };
            let start = native::frame(caller_fn).expect("in the test executable");
            assert!(n.module.is_none() && n.offset > start.offset, "{f:?}");
            assert_eq!(current(), plain, "outside the call: the plain stack again");
            // Instrumented code the interposed call runs (a `pthread_once` routine) has its own.
            let _inside = interposing(entry as *const () as usize, false);
            assert_eq!(frames(current()), sites(&[20, 10]), "no walk: no caller");
            enter();
            call(30);
            enter();
            assert_eq!(frames(current()), sites(&[30, 20, 10]));
        })
        .join()
        .unwrap();
    }
}
