//! The runtime's C ABI as the pass calls it: hook names and the calls the pass rewrites.
//!
//! Takes nothing; gives names. The pass emits calls to these symbols and `ilgen-rt` defines them,
//! so both read the names from here. C signatures (`site` is the address of the instruction's
//! unit in the `ilgen_sites` section, see [`crate::sites`]):
//! ```c
//! void __ilgen_read(const void *addr, uint64_t size, const void *site);          // also ranges
//! void __ilgen_write(const void *addr, uint64_t size, const void *site);
//! // a load and then a store of `size` bytes at `addr` (`x++`), placed before the load
//! void __ilgen_read_write(const void *addr, uint64_t size, const void *read_site,
//!                         const void *write_site);
//! void __ilgen_atomic_read(const void *addr, uint64_t size, const void *site);
//! void __ilgen_atomic_write(const void *addr, uint64_t size, const void *site);  // store, RMW, cmpxchg
//! void __ilgen_wait_loop_enter(const void *cond, const void *site);
//! void __ilgen_wait_loop_exit(const void *cond, const void *site);
//! R __ilgen_wrap_NAME(ARGS..., const void *site);   // for every NAME in WRAPPED_CALLS
//! // right after every call in FORMATTED_CALLS: `max` is its length argument, or UINT64_MAX
//! void __ilgen_printf_written(void *buf, uint64_t max, int64_t ret, const void *site);
//! ```

pub const READ: &str = "__ilgen_read";
pub const WRITE: &str = "__ilgen_write";
pub const READ_WRITE: &str = "__ilgen_read_write";
pub const ATOMIC_READ: &str = "__ilgen_atomic_read";
pub const ATOMIC_WRITE: &str = "__ilgen_atomic_write";
pub const WAIT_LOOP_ENTER: &str = "__ilgen_wait_loop_enter";
pub const WAIT_LOOP_EXIT: &str = "__ilgen_wait_loop_exit";
pub const PRINTF_WRITTEN: &str = "__ilgen_printf_written";

/// Prefix of every symbol the runtime defines; the pass never instruments such functions.
pub const RUNTIME_PREFIX: &str = "__ilgen_";
pub const WRAPPER_PREFIX: &str = "__ilgen_wrap_";

/// Calls the pass rewrites into `__ilgen_wrap_NAME(args..., site)`: the pthread API (always, as
/// sync events) and the libc memory and string functions (as the byte ranges they read and write).
pub const WRAPPED_CALLS: &[&str] = &[
    "pthread_create",
    "pthread_join",
    "pthread_exit",
    "pthread_detach",
    "pthread_mutex_lock",
    "pthread_mutex_trylock",
    "pthread_mutex_timedlock",
    "pthread_mutex_unlock",
    "pthread_rwlock_rdlock",
    "pthread_rwlock_wrlock",
    "pthread_rwlock_tryrdlock",
    "pthread_rwlock_trywrlock",
    "pthread_rwlock_unlock",
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "pthread_cond_signal",
    "pthread_cond_broadcast",
    "pthread_barrier_wait",
    "pthread_spin_lock",
    "pthread_spin_trylock",
    "pthread_spin_unlock",
    "sem_wait",
    "sem_trywait",
    "sem_post",
    "memcpy",
    "memmove",
    "memset",
    "memcmp",
    "bcmp",
    "memchr",
    "strcpy",
    "stpcpy",
    "strncpy",
    "strcat",
    "strncat",
    "strlen",
    "strnlen",
    "strcmp",
    "strncmp",
    "strchr",
    "strrchr",
    "strstr",
    "strdup",
    "strndup",
];

/// Of [`WRAPPED_CALLS`], the ones that make a loop a wait loop (their first argument is the
/// condition variable).
pub const COND_WAIT_CALLS: &[&str] = &["pthread_cond_wait", "pthread_cond_timedwait"];

/// Where a formatting function of [`FORMATTED_CALLS`] takes its destination buffer and its
/// length bound (argument indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Formatted {
    pub name: &'static str,
    pub buf: u32,
    /// `None`: unbounded, the whole output and its NUL are written.
    pub max: Option<u32>,
}

/// The `sprintf` family, which the pass leaves as it is and follows with
/// `__ilgen_printf_written(buf, max, ret, site)`: they are variadic (or take a `va_list`), and a
/// wrapper would have to forward C variadic arguments, which stable Rust cannot define. The hook
/// records the bytes the call produced, from its return value. The `_chk` forms are what
/// `_FORTIFY_SOURCE` turns them into (glibc: `__sprintf_chk(s, flag, slen, fmt, ...)`,
/// `__snprintf_chk(s, maxlen, flag, slen, fmt, ...)`, and the `__v*` forms with a `va_list`);
/// `slen` is the object's size, a check, not a bound on what is written.
pub const FORMATTED_CALLS: &[Formatted] = &[
    Formatted {
        name: "sprintf",
        buf: 0,
        max: None,
    },
    Formatted {
        name: "vsprintf",
        buf: 0,
        max: None,
    },
    Formatted {
        name: "snprintf",
        buf: 0,
        max: Some(1),
    },
    Formatted {
        name: "vsnprintf",
        buf: 0,
        max: Some(1),
    },
    Formatted {
        name: "__sprintf_chk",
        buf: 0,
        max: None,
    },
    Formatted {
        name: "__vsprintf_chk",
        buf: 0,
        max: None,
    },
    Formatted {
        name: "__snprintf_chk",
        buf: 0,
        max: Some(1),
    },
    Formatted {
        name: "__vsnprintf_chk",
        buf: 0,
        max: Some(1),
    },
];

/// The formatting function `name`, if the pass follows its calls with `__ilgen_printf_written`.
pub fn formatted(name: &str) -> Option<Formatted> {
    FORMATTED_CALLS.iter().copied().find(|f| f.name == name)
}

/// The wrapper symbol for a wrapped call.
pub fn wrapper_name(call: &str) -> String {
    format!("{WRAPPER_PREFIX}{call}")
}

/// Whether the pass rewrites calls to `name`, and so never instruments them as plain calls.
pub fn is_wrapped(name: &str) -> bool {
    WRAPPED_CALLS.contains(&name)
}
