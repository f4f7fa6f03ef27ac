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
//! void __ilgen_main_return(const void *site);        // before every return of `main`
//! void __ilgen_sem_opened(sem_t *sem, const void *site); // right after every call of `sem_open`
//! // entry and every return of a function marked `ILGEN_ATOMIC`, and `ILGEN_ATOMIC_BEGIN/END()`
//! void __ilgen_tx_begin(const void *site);
//! void __ilgen_tx_end(const void *site);
//! // entry (returns the thread's depth of open calls before it) and every return of each function
//! // that may synchronize, and after each of its landing pads (depth + 1): the calls the runtime
//! // records under `calls=1`
//! uint32_t __ilgen_call_enter(const void *site);
//! void __ilgen_call_leave(uint32_t depth, const void *site);
//! R __ilgen_wrap_NAME(ARGS..., const void *site);   // every NAME that `is_wrapped`
//! // right after every call in FORMATTED_CALLS: `max` is its length argument, or UINT64_MAX
//! void __ilgen_printf_written(void *buf, uint64_t max, int64_t ret, const void *site);
//! // the shadow call stack of replay's reports, each call only when `__ilgen_stacks` is nonzero
//! // (read once on the function's entry): on entry (with the function's return address; returns
//! // the stack depth before it), before each call (the call's site), before each return, and
//! // after each landing pad
//! extern uint8_t __ilgen_stacks;
//! uint32_t __ilgen_func_enter(const void *return_address);
//! void __ilgen_func_call(const void *site);
//! void __ilgen_func_exit(void);
//! void __ilgen_func_unwound(uint32_t depth);
//! // from a constructor of every instrumented module, with the bounds of the `ilgen_sites`
//! // section of the executable or shared object it is linked into (hidden references)
//! void __ilgen_sites_module(const void *start, const void *stop);
//! ```

/// The calling thread's coverage table (`rt/src/record/cache/coverage.rs`), a thread-local
/// pointer, null while it has none. Before a plain load or store of at most [`COVER_GRANULE`]
/// bytes the pass inlines the table's check, and calls the hook only when it does not hold the
/// access's bytes: word 0 is the epoch, word 1 a pad, then [`COVER_ENTRIES`] entries of two words
/// (tag, read bits | written bits << 32), entry `(addr / COVER_GRANULE) % COVER_ENTRIES` for a
/// granule, its tag `epoch | addr / COVER_GRANULE / COVER_ENTRIES`.
pub const COVER_TLS: &str = "__ilgen_cover";
/// A replaying thread's table (`rt/src/replay/cover.rs`), read where [`COVER_TLS`] is null: the
/// same layout, its entries per site as well: with `bits = (site << COVER_SITE_SHIFT) &
/// COVER_SITE_MASK` of the hook's site pointer (the write's for a read-modify-write), the entry
/// `(addr / COVER_GRANULE ^ (bits >> COVER_SPREAD_SHIFT) * COVER_SPREAD) % COVER_ENTRIES`, its tag
/// `epoch | addr / COVER_GRANULE / COVER_ENTRIES | bits`.
pub const REPLAY_COVER_TLS: &str = "__ilgen_rcover";
/// Bytes per coverage entry.
pub const COVER_GRANULE: u64 = 32;
/// Coverage entries per thread (a power of two).
pub const COVER_ENTRIES: usize = 1 << 18;
/// How far the site pointer is shifted left before [`COVER_SITE_MASK`] takes its bits.
pub const COVER_SITE_SHIFT: u32 = 20;
/// The site's bits in a replay tag: 20 bits of its 16-byte unit, above the granule number's (24
/// bits for an address below 2^47).
pub const COVER_SITE_MASK: u64 = ((1 << 20) - 1) << 24;
/// How far those bits are shifted right before they spread a granule's entries.
pub const COVER_SPREAD_SHIFT: u32 = 24;
/// The odd factor that spreads them (2^32 over the golden ratio).
pub const COVER_SPREAD: u64 = 0x9e37_79b1;

pub const READ: &str = "__ilgen_read";
pub const WRITE: &str = "__ilgen_write";
pub const READ_WRITE: &str = "__ilgen_read_write";
pub const ATOMIC_READ: &str = "__ilgen_atomic_read";
pub const ATOMIC_WRITE: &str = "__ilgen_atomic_write";
/// `(addr, size, site, write) -> token` before an atomic operation whose memory order acquires or
/// releases (acquire, release, acq_rel, seq_cst; `write` 0 for a load), in place of the two above:
/// the runtime holds the address's lock until [`ATOMIC_LEAVE`], given the token, runs after it.
pub const ATOMIC_ENTER: &str = "__ilgen_atomic_enter";
/// `(addr, size, site, how, token)` after such an operation: `how` is a set of the `ATOMIC_*`
/// bits below.
pub const ATOMIC_LEAVE: &str = "__ilgen_atomic_leave";
/// The operation acquired (a load or read-modify-write with an acquiring order; a compare-exchange
/// as the order of its outcome says: its success order when it succeeded, else its failure order).
pub const ATOMIC_ACQUIRES: u64 = 1;
/// The operation released (a store or read-modify-write with a releasing order; a
/// compare-exchange only if it succeeded).
pub const ATOMIC_RELEASES: u64 = 2;
/// The operation read and wrote at once: its release continues the location's release sequence.
pub const ATOMIC_RMW: u64 = 4;
/// The operation writes (all but a load).
pub const ATOMIC_WRITES: u64 = 8;
pub const WAIT_LOOP_ENTER: &str = "__ilgen_wait_loop_enter";
pub const WAIT_LOOP_EXIT: &str = "__ilgen_wait_loop_exit";
pub const PRINTF_WRITTEN: &str = "__ilgen_printf_written";
pub const MAIN_RETURN: &str = "__ilgen_main_return";
/// After `sem_open`, which is variadic and so cannot be wrapped (see [`FORMATTED_CALLS`]): the
/// runtime records the count of the semaphore it returned.
pub const SEM_OPENED: &str = "__ilgen_sem_opened";
pub const SEM_OPEN: &str = "sem_open";
pub const TX_BEGIN: &str = "__ilgen_tx_begin";
pub const TX_END: &str = "__ilgen_tx_end";
pub const CALL_ENTER: &str = "__ilgen_call_enter";
pub const CALL_LEAVE: &str = "__ilgen_call_leave";
pub const STACKS_FLAG: &str = "__ilgen_stacks";
pub const FUNC_ENTER: &str = "__ilgen_func_enter";
pub const FUNC_CALL: &str = "__ilgen_func_call";
pub const FUNC_EXIT: &str = "__ilgen_func_exit";
pub const FUNC_UNWOUND: &str = "__ilgen_func_unwound";
pub const SITES_MODULE: &str = "__ilgen_sites_module";
/// The annotation (`__attribute__((annotate(...)))`, listed in `llvm.global.annotations`) that
/// marks a function as an atomic block.
pub const ATOMIC_ANNOTATION: &str = "ilgen_atomic";

/// Prefix of every symbol the runtime defines; the pass never instruments such functions.
pub const RUNTIME_PREFIX: &str = "__ilgen_";
/// How the demangled names of the runtime's Rust functions begin: a frame of the runtime's own
/// code in a replay's stack (its thread trampoline, below a thread's function) is never shown.
pub const RUNTIME_CRATE: &str = "ilgen_rt::";

/// Whether the function `symbol` (demangled: `function`) is the runtime's: its C entry points and
/// its Rust functions, or a generic one instantiated for them (`<... ilgen_rt::...>`).
pub fn is_runtime_function(function: &str, symbol: &str) -> bool {
    symbol.starts_with(RUNTIME_PREFIX) || function.contains(RUNTIME_CRATE)
}
pub const WRAPPER_PREFIX: &str = "__ilgen_wrap_";

/// Calls the pass rewrites into `__ilgen_wrap_NAME(args..., site)`: the pthread API and the
/// process exits of [`EXIT_CALLS`] (always, as sync events) and the libc memory and string
/// functions (as the byte ranges they read and write); so are [`HEAP_CALLS`] and
/// [`NEW_DELETE_CALLS`] (to give their heap events a site).
pub const WRAPPED_CALLS: &[&str] = &[
    "exit",
    "quick_exit",
    "_exit",
    "_Exit",
    "pthread_create",
    "pthread_join",
    "pthread_exit",
    "pthread_detach",
    "pthread_once",
    "pthread_mutex_lock",
    "pthread_mutex_trylock",
    "pthread_mutex_timedlock",
    "pthread_mutex_clocklock",
    "pthread_mutex_unlock",
    "pthread_mutex_destroy",
    "pthread_rwlock_rdlock",
    "pthread_rwlock_wrlock",
    "pthread_rwlock_tryrdlock",
    "pthread_rwlock_trywrlock",
    "pthread_rwlock_timedrdlock",
    "pthread_rwlock_timedwrlock",
    "pthread_rwlock_clockrdlock",
    "pthread_rwlock_clockwrlock",
    "pthread_rwlock_unlock",
    "pthread_rwlock_destroy",
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "pthread_cond_clockwait",
    "pthread_cond_signal",
    "pthread_cond_broadcast",
    "pthread_cond_destroy",
    "pthread_barrier_wait",
    "pthread_barrier_destroy",
    "pthread_spin_lock",
    "pthread_spin_trylock",
    "pthread_spin_unlock",
    "pthread_once",
    "sem_init",
    "sem_destroy",
    "sem_wait",
    "sem_timedwait",
    "sem_clockwait",
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

/// Of [`WRAPPED_CALLS`], the pthread calls that code the pass never saw makes too: libstdc++'s
/// `std::thread`, `std::condition_variable` (its destructor too) and `std::call_once` call them
/// from the library's own code (`nm -D --undefined-only libstdc++.so.6`). The runtime defines `__wrap_NAME(ARGS...)` for
/// each, the same as `__ilgen_wrap_NAME(ARGS..., NULL)`, and reaches the real function through
/// `__real_NAME` or, failing that, `dlsym(RTLD_NEXT)`. `ilgen cc` routes the calls there: a
/// static link with `--wrap=NAME` (which reaches archive members such as libstdc++.a's), a dynamic
/// one with `--defsym=NAME=__wrap_NAME` (the executable's definition wins over libc.so's).
pub const INTERPOSED_CALLS: &[&str] = &[
    "pthread_create",
    "pthread_join",
    "pthread_detach",
    "pthread_mutex_lock",
    "pthread_mutex_unlock",
    "pthread_mutex_destroy",
    "pthread_rwlock_rdlock",
    "pthread_rwlock_wrlock",
    "pthread_rwlock_unlock",
    "pthread_cond_wait",
    "pthread_cond_signal",
    "pthread_cond_broadcast",
    "pthread_cond_destroy",
    "pthread_once",
];

/// Prefix of the runtime's definition of an interposed call (the linker's `--wrap` convention).
pub const INTERPOSER_PREFIX: &str = "__wrap_";

/// Of [`WRAPPED_CALLS`], the ones that end the process and are recorded as `SyncOp::Exit`.
/// `_exit` and `_Exit` run no exit handler, the runtime's neither: their wrappers do its part
/// themselves before the real call.
pub const EXIT_CALLS: &[&str] = &["exit", "quick_exit", "_exit", "_Exit"];

/// The malloc family, which the runtime replaces (`rt/src/heap.c`): every allocation of the
/// process, libc's own included, becomes a heap event. A `-static` link reaches the replacement
/// through `-Wl,--wrap=NAME` for each of these (libc.a defines them strongly); `ilgen cc` adds it.
/// The pass's wrappers of these calls (and of operator new/delete) only pass the site on.
pub const HEAP_CALLS: &[&str] = &[
    "malloc",
    "calloc",
    "realloc",
    "reallocarray",
    "memalign",
    "aligned_alloc",
    "posix_memalign",
    "valloc",
    "pvalloc",
    "free",
];

/// C++'s operator new and delete, all variants (array, sized, aligned, nothrow): wrapped for the
/// site only, since libstdc++ implements them on the malloc family.
pub const NEW_DELETE_CALLS: &[&str] = &[
    "_Znwm",
    "_Znam",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvm",
    "_ZdaPvm",
    "_ZdlPvRKSt9nothrow_t",
    "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_t",
    "_ZdaPvSt11align_val_t",
    "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
];

/// Mappings: the runtime's wrappers make the real call and report a mapping (anonymous or of a
/// file) as an allocation, its `munmap` as a free. Only calls the pass rewrote are seen:
/// the mappings glibc's malloc makes for big blocks (already heap events) and the runtime's own
/// (trace files) are not. `mremap` ends the old range and begins the new one.
pub const MAP_CALLS: &[&str] = &["mmap", "mmap64", "munmap", "mremap"];

/// File descriptors: closing one and creating one (which may reuse the closed number). Replay's
/// race detector orders a `close(fd)` before the next call that returns the same `fd`, as the
/// kernel does: a program that finds per-connection state by descriptor number (memcached's
/// `conns[fd]`) hands that state from the thread that closed the old connection to the one that
/// serves the new, with no pthread operation in between. The variadic `open`/`openat`/`fcntl`
/// are not among them.
pub const FD_CALLS: &[&str] = &[
    "close",
    "accept",
    "accept4",
    "socket",
    "socketpair",
    "pipe",
    "pipe2",
    "dup",
    "dup2",
    "dup3",
    "creat",
    "eventfd",
    "epoll_create",
    "epoll_create1",
];

/// Reads of a descriptor: on a stream socket, a pipe or a FIFO the runtime records each one's
/// outcome (`crate::inputs`) and a replay gives it back, so that a request split differently by a
/// new run of the client (or a nonblocking read that now finds data) does not send the reader down
/// another path. `readv` and `recvmsg` (scattered buffers) and the fortified `__read_chk` are not
/// among them.
pub const INPUT_CALLS: &[&str] = &["read", "recv", "recvfrom"];

/// Writes to a descriptor: replay's race detector orders a write to a pipe, FIFO or stream socket
/// before a read that gets bytes from it, as the kernel does (a pipe holding one byte is libuv's
/// lock around its signal handlers). Nothing is recorded. `writev` and `sendmsg` are not among them.
pub const OUTPUT_CALLS: &[&str] = &["write", "send", "sendto"];

/// The variadic calls among the wrapped ones, with the number of parameters of their wrapper: the
/// pass passes the call's arguments and null pointers for the trailing ones it left out (their
/// variadic arguments are pointers), then the site. `mremap`'s is `new_address`, read only with
/// `MREMAP_FIXED`.
pub const VARIADIC_CALLS: &[(&str, usize)] = &[("mremap", 5)];

/// The number of parameters of the wrapper of `name` if it is a variadic call of
/// [`VARIADIC_CALLS`].
pub fn variadic_arity(name: &str) -> Option<usize> {
    VARIADIC_CALLS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, arity)| arity)
}

/// Of [`WRAPPED_CALLS`], the ones that make a loop a wait loop (their first argument is the
/// condition variable).
pub const COND_WAIT_CALLS: &[&str] = &[
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "pthread_cond_clockwait",
];

/// libstdc++'s out-of-line members (mangled) that make a sync operation inside the library,
/// through the [`INTERPOSED_CALLS`]: `std::condition_variable`'s notify, wait and destructor,
/// `std::thread`'s start, join and detach. The pass never sees the pthread call inside, but a
/// branch over a call of one of these decides a thread's sync operations as one over the pthread
/// call does (`if (++done == total) cv.notify_all();`: a schedule that changes what `done` read
/// asks for a broadcast the thread will not make).
pub const CXX_SYNC_CALLS: &[&str] = &[
    "_ZNSt18condition_variable10notify_allEv",
    "_ZNSt18condition_variable10notify_oneEv",
    CXX_COND_WAIT,
    "_ZNSt18condition_variableD1Ev",
    "_ZNSt18condition_variableD2Ev",
    "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
    "_ZNSt6thread15_M_start_threadESt10shared_ptrINS_10_Impl_baseEEPFvvE",
    "_ZNSt6thread15_M_start_threadESt10shared_ptrINS_10_Impl_baseEE",
    "_ZNSt6thread4joinEv",
    "_ZNSt6thread6detachEv",
];

/// `std::condition_variable::wait(std::unique_lock<std::mutex>&)`: a wait on its `this`, which
/// begins with the `pthread_cond_t` the library waits on (so a loop around it waits on the same
/// address the recorded wait names).
pub const CXX_COND_WAIT: &str = "_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE";

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

/// The linker flags that route the calls of [`INTERPOSED_CALLS`] made outside instrumented code
/// to the runtime: `static_link` is whether the executable is linked `-static`. `-u` keeps the
/// runtime's and the C library's archive members in even when only a library later on the line
/// calls them.
pub fn interpose_link_flags(static_link: bool) -> Vec<String> {
    let mut flags = Vec::with_capacity(INTERPOSED_CALLS.len() * 3);
    for name in INTERPOSED_CALLS {
        let wrap = format!("{INTERPOSER_PREFIX}{name}");
        if static_link {
            flags.push(format!("-Wl,--wrap={name}"));
            flags.push(format!("-Wl,-u,{name}"));
        } else {
            flags.push(format!("-Wl,--defsym={name}={wrap}"));
        }
        flags.push(format!("-Wl,-u,{wrap}"));
    }
    flags
}

/// Whether the pass rewrites calls to `name` (of [`WRAPPED_CALLS`], [`HEAP_CALLS`],
/// [`NEW_DELETE_CALLS`], [`MAP_CALLS`], [`FD_CALLS`], [`INPUT_CALLS`] or [`OUTPUT_CALLS`]), and
/// so never instruments
/// them as plain calls.
pub fn is_wrapped(name: &str) -> bool {
    [
        WRAPPED_CALLS,
        HEAP_CALLS,
        NEW_DELETE_CALLS,
        MAP_CALLS,
        FD_CALLS,
        INPUT_CALLS,
        OUTPUT_CALLS,
    ]
    .iter()
    .any(|list| list.contains(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variadic_calls_are_wrapped_calls_too() {
        for &(name, _) in VARIADIC_CALLS {
            assert!(is_wrapped(name), "{name} has no __ilgen_wrap_ form");
        }
        assert_eq!(variadic_arity("mremap"), Some(5));
        assert_eq!(variadic_arity("mmap"), None);
    }

    #[test]
    fn interposed_calls_are_wrapped_calls_too() {
        for name in INTERPOSED_CALLS {
            assert!(is_wrapped(name), "{name} has no __ilgen_wrap_ form");
        }
    }

    #[test]
    fn link_flags_wrap_static_links_and_define_the_symbol_in_dynamic_ones() {
        let st = interpose_link_flags(true);
        assert_eq!(
            st[..3],
            [
                "-Wl,--wrap=pthread_create",
                "-Wl,-u,pthread_create",
                "-Wl,-u,__wrap_pthread_create"
            ]
        );
        let dy = interpose_link_flags(false);
        assert_eq!(
            dy[..2],
            [
                "-Wl,--defsym=pthread_create=__wrap_pthread_create",
                "-Wl,-u,__wrap_pthread_create"
            ]
        );
        assert_eq!(st.len(), 3 * INTERPOSED_CALLS.len());
        assert_eq!(dy.len(), 2 * INTERPOSED_CALLS.len());
    }
}
