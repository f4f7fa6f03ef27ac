//! `ilgen-rt`: the runtime linked into instrumented programs (`libilgen_rt.a`).
//!
//! Takes the calls the pass inserted (`ilgen_trace::abi`: access hooks, wait-loop markers and
//! `__ilgen_wrap_*` wrappers) and `ILGEN_OPTIONS`; gives one trace directory per run
//! (`ilgen_trace::format`): `meta.json` and one `t<tid>.trace` per thread, holding, per segment
//! between two sync operations, one record per accessed range, and every sync operation with its
//! global sequence number; a normal exit seals the trace from the ELF destructor here
//! (`record::finish`). In replay mode (`mode=replay:schedule=PATH`) it writes no trace: it
//! enforces the schedule's order of sync operations, detects races (happens-before, online) and
//! deadlocks, and writes `replay-outcome.json` (`ilgen_trace::replay`).
//!
//! The layout mirrors the two modes, as rr mirrors record and replay; what both share is at the top.
//! Shared:
//! - `runtime`: the mode, the recording configuration, the sequence counter; below every layer;
//! - `start`: the start-up (from the ELF constructor here or the first hook), above every layer;
//! - `options`: the `ILGEN_OPTIONS` table;
//! - `thread`: thread identity, the thread-local state, the in-runtime flag;
//! - `alloc`: the runtime's own allocator (glibc's, past the replaced malloc family of `heap.c`);
//! - `calls`: each thread's stack of open calls, which `calls=1` records;
//! - `arch`: the architecture-specific parts (the thread-local state pointer, the report hook's registers);
//! - `exe`: the executable's load base and ELF build id, from its mapped program headers;
//! - `registry`: live threads and `pthread_t` handles (slow path);
//! - `real`: the real pthread functions the wrappers and both modes call, and `internal` (the
//!   runtime's own pthread calls, unrecorded);
//! - `sites`: site pointer → site id (with the C shim `sites.c`; `build.rs` also generates the
//!   resolvers of the real pthread functions);
//! - `intercept/`: what the pass's calls land on: `memory` (access hooks, wait-loop markers),
//!   `atomic` (atomic-block markers, the call hooks of `calls=1`),
//!   `strings` (libc memory and string wrappers as byte ranges), `heap` (allocations and frees
//!   that `heap.c`, the replaced malloc family, reports; thread stacks), `threads`, `mutex`,
//!   `rwlock`, `cond`, `barrier`, `spin`, `sem`, `once` (the pthread wrappers, one family per
//!   file), `exit` (`exit`, `quick_exit`, the return from `main`: the exit grace and `Exit`),
//!   `interpose` (the `__wrap_*` entry points of the pthread calls of uninstrumented code such as
//!   libstdc++) and `testonly` (the unrecorded test barrier of `tests/include/ilgen_test.h`).
//!
//! `record/`, from the hook to the file:
//! - `sync`: how every wrapper records a sync operation (now, pending, complete);
//! - `cache`: the per-thread segment cache;
//! - `writer`: the mmap'd thread file;
//! - `meta`: `meta.json`;
//! - `finish`: exit (with the exit grace), fatal signals and fork.
//!
//! `replay/` plugs in where record mode finds no recording thread (`thread::current` is `None`):
//! `record::sync` hands each operation to `replay::sync`, the access hooks hand each access to
//! `replay::shadow`. Its modules, state below the logic that calls across:
//! - `depot`: the interned lists (stacks, held locks) remembered accesses name by id;
//! - `native`: code that is not instrumented: a code address as module and offset, the caller of
//!   an interposed call;
//! - `stack`: each thread's shadow call stack;
//! - `owners`: who holds which lock, and the locks each access was made under;
//! - `hb`: vector clocks and sync-object clocks;
//! - `cover`: each thread's coverage table for the pass's inlined check (a site's repeated
//!   access of its instant skips the hook), and its invalidation;
//! - `shadow`: shadow memory and the race check;
//! - `debug`: the symbols a debugger reads and breaks on;
//! - `gate`: the schedule (`start` checked it against this binary), its cursor and the gate;
//! - `thread`: each thread's state (identity mapped through the schedule, clock, status);
//! - `report`: the report hook, the text reports and `replay-outcome.json`;
//! - `deadlock`: the watchdog (deadlocks, steps that never come);
//! - `sync`: gate, happens-before and cursor for every sync operation, and each thread's life
//!   (its state made on its first hook, its `start` and `end`).

mod alloc;
mod arch;
mod calls;
mod exe;
mod intercept;
mod options;
mod real;
mod record;
mod registry;
mod replay;
mod runtime;
mod sites;
mod start;
mod thread;

/// The ELF constructor: starts the runtime and the main thread before `main`. In this crate's one
/// object file (one codegen unit), so that linking any hook links it too.
#[cfg_attr(test, allow(dead_code))]
extern "C" fn constructor() {
    if runtime::recording().is_some() {
        thread::current();
    } else if runtime::replaying() {
        replay::sync::current();
    }
}

// Not in unit tests: the test harness must not start recording itself.
#[cfg(not(test))]
#[used]
#[link_section = ".init_array"]
static CONSTRUCTOR: extern "C" fn() = constructor;

/// The ELF destructor: runs at `exit()` after every `atexit` handler and static destructor of the
/// program, where a normal exit's trace is sealed (`record::finish::seal`).
#[cfg_attr(test, allow(dead_code))]
extern "C" fn destructor() {
    record::finish::seal();
}

#[cfg(not(test))]
#[used]
#[link_section = ".fini_array"]
static DESTRUCTOR: extern "C" fn() = destructor;
