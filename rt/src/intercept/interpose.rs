//! The `__wrap_NAME` entry points through which the program's libraries (libstdc++'s
//! `std::thread`, `std::call_once`, `std::condition_variable` and its destructor) reach the same wrappers as the
//! pass's calls.
//!
//! Takes the calls of `ilgen_trace::abi::INTERPOSED_CALLS` from uninstrumented code (`ilgen cc`
//! routes them here with `--wrap` or `--defsym`); gives each to `__ilgen_wrap_NAME(..., NULL)`,
//! recorded with no site; in replay, reports name the call by its caller's frame instead. The real
//! functions the wrappers call are in `real.rs`.
//!
//! The runtime's own threads (the replay watchdog) are made inside `real::internal`: their create
//! and detach go straight to the real functions, unrecorded and outside the schedule.

use std::ffi::c_void;

use crate::intercept::{cond, destroy, mutex, once, rwlock, threads};
use crate::real::{self, is_internal, with_interposed_calls, InitRoutine, StartRoutine};

/// `wrapper!(NAME(args))` calls the wrapper of NAME on `args`.
macro_rules! wrapper {
    (pthread_create($($a:tt)*)) => { threads::__ilgen_wrap_pthread_create($($a)*) };
    (pthread_join($($a:tt)*)) => { threads::__ilgen_wrap_pthread_join($($a)*) };
    (pthread_detach($($a:tt)*)) => { threads::__ilgen_wrap_pthread_detach($($a)*) };
    (pthread_mutex_lock($($a:tt)*)) => { mutex::__ilgen_wrap_pthread_mutex_lock($($a)*) };
    (pthread_mutex_unlock($($a:tt)*)) => { mutex::__ilgen_wrap_pthread_mutex_unlock($($a)*) };
    (pthread_mutex_destroy($($a:tt)*)) => { destroy::__ilgen_wrap_pthread_mutex_destroy($($a)*) };
    (pthread_rwlock_rdlock($($a:tt)*)) => { rwlock::__ilgen_wrap_pthread_rwlock_rdlock($($a)*) };
    (pthread_rwlock_wrlock($($a:tt)*)) => { rwlock::__ilgen_wrap_pthread_rwlock_wrlock($($a)*) };
    (pthread_rwlock_unlock($($a:tt)*)) => { rwlock::__ilgen_wrap_pthread_rwlock_unlock($($a)*) };
    (pthread_cond_wait($($a:tt)*)) => { cond::__ilgen_wrap_pthread_cond_wait($($a)*) };
    (pthread_cond_signal($($a:tt)*)) => { cond::__ilgen_wrap_pthread_cond_signal($($a)*) };
    (pthread_cond_broadcast($($a:tt)*)) => { cond::__ilgen_wrap_pthread_cond_broadcast($($a)*) };
    (pthread_cond_destroy($($a:tt)*)) => { destroy::__ilgen_wrap_pthread_cond_destroy($($a)*) };
    (pthread_once($($a:tt)*)) => { once::__ilgen_wrap_pthread_once($($a)*) };
}

/// For each call, `__wrap_NAME(args)`: the wrapper with a null site, or the real function inside
/// `real::internal`. In replay, the thread's stack is the interposed call's meanwhile
/// (`replay::stack::interposing`: the caller in uninstrumented code is found from this entry
/// point's frame, except for an unlock).
macro_rules! entry_points {
    ($($name:ident, fn($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(
        /// # Safety
        /// Same contract as the C function of this name.
        #[export_name = concat!("__wrap_", stringify!($name))]
        pub unsafe extern "C-unwind" fn $name($($arg: $ty),*) -> $ret {
            if is_internal() {
                // SAFETY: the runtime's own call.
                return unsafe { real::$name($($arg),*) };
            }
            // Not for an unlock: it may be the unwinder's own (see `interposing`).
            let walk = !stringify!($name).ends_with("unlock");
            let _inside = crate::replay::stack::interposing($name as *const () as usize, walk);
            // SAFETY: the caller's call, with no site.
            unsafe { wrapper!($name($($arg,)* std::ptr::null())) }
        }
        )*
    };
}

/// The entry points of uninstrumented callers.
mod entry {
    use super::*;
    with_interposed_calls!(entry_points);
}
