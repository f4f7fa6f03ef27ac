//! The real pthread functions that every wrapper calls instead of the plain symbol, which the
//! link routes back to the wrappers.
//!
//! Takes the calls of `ilgen_trace::abi::INTERPOSED_CALLS`; gives `real::NAME(args)`, resolved
//! on first use by the generated C shim (`rt/build.rs`): `__real_NAME` in a `--wrap` link, the
//! next definition after the executable (`dlsym(RTLD_NEXT)`) in a dynamic one. Also gives
//! [`with_interposed_calls`], the one list of their signatures, from which `interpose.rs` makes
//! the entry points, and [`internal`], under which the runtime's own pthread calls (its watchdog
//! thread) reach the real functions unrecorded. Imports no wrapper and nothing of either mode, so
//! that the wrappers and both modes can import it.

use std::cell::Cell;
use std::ffi::c_void;

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

/// Whether the calling thread is inside [`internal`].
pub(crate) fn is_internal() -> bool {
    INTERNAL.with(|c| c.get())
}

/// What `pthread_create` runs.
pub(crate) type StartRoutine = unsafe extern "C-unwind" fn(*mut c_void) -> *mut c_void;

/// What `pthread_once` runs.
pub(crate) type InitRoutine = unsafe extern "C-unwind" fn();

/// Gives `$callback!` every interposed call as `NAME, fn(ARG: TYPE, ...) -> RET;`.
macro_rules! with_interposed_calls {
    ($callback:ident) => {
        $callback! {
            pthread_create, fn(
                thread: *mut libc::pthread_t,
                attr: *const libc::pthread_attr_t,
                start: Option<StartRoutine>,
                arg: *mut c_void
            ) -> libc::c_int;
            pthread_join, fn(
                thread: libc::pthread_t,
                retval: *mut *mut c_void
            ) -> libc::c_int;
            pthread_detach, fn(
                thread: libc::pthread_t
            ) -> libc::c_int;
            pthread_mutex_lock, fn(
                m: *mut libc::pthread_mutex_t
            ) -> libc::c_int;
            pthread_mutex_unlock, fn(
                m: *mut libc::pthread_mutex_t
            ) -> libc::c_int;
            pthread_mutex_destroy, fn(
                m: *mut libc::pthread_mutex_t
            ) -> libc::c_int;
            pthread_rwlock_rdlock, fn(
                l: *mut libc::pthread_rwlock_t
            ) -> libc::c_int;
            pthread_rwlock_wrlock, fn(
                l: *mut libc::pthread_rwlock_t
            ) -> libc::c_int;
            pthread_rwlock_unlock, fn(
                l: *mut libc::pthread_rwlock_t
            ) -> libc::c_int;
            pthread_cond_wait, fn(
                c: *mut libc::pthread_cond_t,
                m: *mut libc::pthread_mutex_t
            ) -> libc::c_int;
            pthread_cond_signal, fn(
                c: *mut libc::pthread_cond_t
            ) -> libc::c_int;
            pthread_cond_broadcast, fn(
                c: *mut libc::pthread_cond_t
            ) -> libc::c_int;
            pthread_cond_destroy, fn(
                c: *mut libc::pthread_cond_t
            ) -> libc::c_int;
            pthread_once, fn(
                control: *mut libc::pthread_once_t,
                init: Option<InitRoutine>
            ) -> libc::c_int;
        }
    };
}
pub(crate) use with_interposed_calls;

/// `real::NAME(args)` for each call; the first call of each resolves it.
macro_rules! real_functions {
    ($($name:ident, fn($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
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
    };
}

with_interposed_calls!(real_functions);

#[cfg(test)]
mod tests {
    #[test]
    fn every_interposed_call_is_listed() {
        let source = include_str!("real.rs");
        for name in ilgen_trace::abi::INTERPOSED_CALLS {
            assert!(
                source.contains(&format!("            {name}, fn(")),
                "{name} is in abi::INTERPOSED_CALLS but not in with_interposed_calls"
            );
        }
    }
}
