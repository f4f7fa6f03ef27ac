//! Calls made outside instrumented code: the real pthread functions, and the `__wrap_NAME` entry
//! points through which the program's libraries (libstdc++'s `std::thread`, `std::call_once`,
//! `std::condition_variable`) reach the same wrappers as the pass's calls.
//!
//! Takes the calls of `ilgen_trace::abi::INTERPOSED_CALLS` from uninstrumented code (`ilgen cc`
//! routes them here with `--wrap` or `--defsym`); gives each to `__ilgen_wrap_NAME(..., NULL)`,
//! recorded with no site. [`real`] holds the functions every wrapper calls instead of the plain
//! symbol, which the link routes back here: `__real_NAME` in a `--wrap` link, the next definition
//! after the executable (`dlsym(RTLD_NEXT)`) in a dynamic one, resolved once by the generated C
//! shim (`rt/build.rs`).
//!
//! The runtime's own threads (the replay watchdog) are made inside [`internal`]: their create and
//! detach go straight to the real functions, unrecorded and outside the schedule.

use std::cell::Cell;
use std::ffi::c_void;

use crate::intercept::threads::StartRoutine;
use crate::intercept::{cond, mutex, once, rwlock, threads};

thread_local! {
    static INTERNAL: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (which creates or ends runtime threads) with its pthread calls unrecorded.
pub(crate) fn internal<R>(f: impl FnOnce() -> R) -> R {
    let before = INTERNAL.with(|c| c.replace(true));
    let r = f();
    INTERNAL.with(|c| c.set(before));
    r
}

fn is_internal() -> bool {
    INTERNAL.with(|c| c.get())
}

/// For each call: `real::NAME(args)` and `__wrap_NAME(args)` (the latter calling `$wrapper`
/// with a null site, or the real function inside [`internal`]).
macro_rules! interposed {
    ($($name:ident => $wrapper:path, fn($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        /// The real functions; the first call of each resolves it.
        pub(crate) mod real {
            #[allow(unused_imports)]
            use super::*;
            $(
            /// # Safety
            /// Same contract as the C function of this name.
            pub(crate) unsafe fn $name($($arg: $ty),*) -> $ret {
                use std::sync::atomic::{AtomicUsize, Ordering};
                static RESOLVED: AtomicUsize = AtomicUsize::new(0);
                extern "C" {
                    #[link_name = concat!("__ilgen_rt_real_", stringify!($name))]
                    fn resolve() -> usize;
                }
                let mut p = RESOLVED.load(Ordering::Relaxed);
                if p == 0 {
                    // SAFETY: the generated resolver takes nothing and never fails: its last
                    // resort is the plain symbol.
                    p = unsafe { resolve() };
                    RESOLVED.store(p, Ordering::Relaxed);
                }
                // SAFETY: `p` is the address of the C function of this name, whose type this is.
                let f: unsafe extern "C-unwind" fn($($ty),*) -> $ret =
                    unsafe { std::mem::transmute::<usize, _>(p) };
                // SAFETY: per this function's contract.
                unsafe { f($($arg),*) }
            }
            )*
        }

        /// The entry points of uninstrumented callers.
        mod entry {
            #[allow(unused_imports)]
            use super::*;
            $(
            /// # Safety
            /// Same contract as the C function of this name.
            #[export_name = concat!("__wrap_", stringify!($name))]
            pub unsafe extern "C-unwind" fn $name($($arg: $ty),*) -> $ret {
                if is_internal() {
                    // SAFETY: the runtime's own call.
                    return unsafe { real::$name($($arg),*) };
                }
                // SAFETY: the caller's call, with no site.
                unsafe { $wrapper($($arg,)* std::ptr::null()) }
            }
            )*
        }
    };
}

interposed! {
    pthread_create => threads::__ilgen_wrap_pthread_create, fn(
        thread: *mut libc::pthread_t,
        attr: *const libc::pthread_attr_t,
        start: Option<StartRoutine>,
        arg: *mut c_void
    ) -> libc::c_int;
    pthread_join => threads::__ilgen_wrap_pthread_join, fn(
        thread: libc::pthread_t,
        retval: *mut *mut c_void
    ) -> libc::c_int;
    pthread_detach => threads::__ilgen_wrap_pthread_detach, fn(
        thread: libc::pthread_t
    ) -> libc::c_int;
    pthread_mutex_lock => mutex::__ilgen_wrap_pthread_mutex_lock, fn(
        m: *mut libc::pthread_mutex_t
    ) -> libc::c_int;
    pthread_mutex_unlock => mutex::__ilgen_wrap_pthread_mutex_unlock, fn(
        m: *mut libc::pthread_mutex_t
    ) -> libc::c_int;
    pthread_rwlock_rdlock => rwlock::__ilgen_wrap_pthread_rwlock_rdlock, fn(
        l: *mut libc::pthread_rwlock_t
    ) -> libc::c_int;
    pthread_rwlock_wrlock => rwlock::__ilgen_wrap_pthread_rwlock_wrlock, fn(
        l: *mut libc::pthread_rwlock_t
    ) -> libc::c_int;
    pthread_rwlock_unlock => rwlock::__ilgen_wrap_pthread_rwlock_unlock, fn(
        l: *mut libc::pthread_rwlock_t
    ) -> libc::c_int;
    pthread_cond_wait => cond::__ilgen_wrap_pthread_cond_wait, fn(
        c: *mut libc::pthread_cond_t,
        m: *mut libc::pthread_mutex_t
    ) -> libc::c_int;
    pthread_cond_signal => cond::__ilgen_wrap_pthread_cond_signal, fn(
        c: *mut libc::pthread_cond_t
    ) -> libc::c_int;
    pthread_cond_broadcast => cond::__ilgen_wrap_pthread_cond_broadcast, fn(
        c: *mut libc::pthread_cond_t
    ) -> libc::c_int;
    pthread_once => once::__ilgen_wrap_pthread_once, fn(
        control: *mut libc::pthread_once_t,
        init: Option<once::InitRoutine>
    ) -> libc::c_int;
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_interposed_call_has_an_entry_point() {
        let source = include_str!("interpose.rs");
        for name in ilgen_trace::abi::INTERPOSED_CALLS {
            assert!(
                source.contains(&format!("    {name} => ")),
                "{name} is in abi::INTERPOSED_CALLS but has no entry here"
            );
        }
    }
}
