//! `ilgen-rt`: the runtime linked into instrumented programs (`libilgen_rt.a`).
//!
//! Takes the calls the pass inserted (`ilgen_trace::abi`: access hooks, wait-loop markers and
//! `__ilgen_wrap_*` wrappers) and `ILGEN_OPTIONS`; gives one trace directory per run
//! (`ilgen_trace::format`): `meta.json` and one `t<tid>.trace` per thread, holding, per segment
//! between two sync operations, one record per accessed range, and every sync operation with its
//! global sequence number. In replay mode (`mode=replay:schedule=PATH`) it writes no trace: it
//! enforces the schedule's order of sync operations, detects races (happens-before, online) and
//! deadlocks, and writes `replay-outcome.json` (`ilgen_trace::replay`).
//!
//! Modules, from the hook to the file:
//! - `runtime`: initialization (ELF constructor or first hook), options, the sequence counter;
//! - `options`: the `ILGEN_OPTIONS` table;
//! - `thread`: thread identity, the thread-local state, the in-runtime flag;
//! - `registry`: live threads and `pthread_t` handles (slow path);
//! - `memory`: the access hooks (hot path) and wait-loop markers;
//! - `strings`: libc memory and string wrappers, as byte ranges;
//! - `sync_record`: how every wrapper records a sync operation (now, pending, complete);
//! - `sync_threads`, `sync_mutex`, `sync_rwlock`, `sync_cond`, `sync_barrier`, `sync_spin`,
//!   `sync_sem`: the pthread wrappers, one family per file;
//! - `cache`: the per-thread segment cache;
//! - `writer`: the mmap'd thread file;
//! - `meta`: `meta.json`;
//! - `sites`: site pointer → site id (with the C shim `sites.c`);
//! - `finish`: exit, fatal signals and fork;
//! - `testonly`: the unrecorded test barrier of `tests/include/ilgen_test.h`.
//!
//! Replay mode plugs in where record mode finds no recording thread (`thread::current` is `None`):
//! `sync_record` hands each operation to `sync_replay`, the access hooks hand each access to
//! `shadow`. Its modules, mirroring record mode's:
//! - `replay`: the schedule, checked against this binary, and the gate;
//! - `replay_thread`: thread identity mapped through the schedule, clocks, status;
//! - `sync_replay`: gate, happens-before and cursor for every sync operation;
//! - `hb`: vector clocks and sync-object clocks;
//! - `shadow`: shadow memory and the race check;
//! - `deadlock`: lock owners and the watchdog (deadlocks, steps that never come);
//! - `report`: the report hook, the text reports and `replay-outcome.json`.

mod cache;
mod deadlock;
mod finish;
mod hb;
mod memory;
mod meta;
mod options;
mod registry;
mod replay;
mod replay_thread;
mod report;
mod runtime;
mod shadow;
mod sites;
mod strings;
mod sync_barrier;
mod sync_cond;
mod sync_mutex;
mod sync_record;
mod sync_replay;
mod sync_rwlock;
mod sync_sem;
mod sync_spin;
mod sync_threads;
mod testonly;
mod thread;
mod writer;
