//! The replay outcome file: what one replay of a schedule found.
//!
//! Takes an [`Outcome`] (runtime side, writer: `ilgen-rt` in `mode=replay`) or a directory path
//! (CLI side, reader); gives `replay-outcome.json` and back the [`Outcome`]: the result (race,
//! deadlock, no error, diverged), every race report, the deadlock, the divergence reason and
//! whether the whole schedule was followed. Reports name sites by id and threads by recorded tid
//! (with their stable identity, parent and nth child); the CLI renders `file:line` from the
//! binary's site table. [`DeadlockReport`] also describes a deadlock observed in a recorded run,
//! and [`wait_for_cycle`] finds the lock cycle of either.
//!
//! The replaying process exits with the program's own status, except:
//! [`EXIT_DIVERGED`] (the schedule could not be followed), [`EXIT_DEADLOCK`] (every live thread
//! blocked in a program sync operation) and [`EXIT_BAD_SCHEDULE`] (the schedule could not be read,
//! or was made for another binary), [`EXIT_STOPPED`] (the runtime stopped a program that stopped
//! moving after a race was confirmed). `result` in the file is authoritative: it is written,
//! durably, the moment a race or deadlock is confirmed, so a program that hangs, crashes or is
//! killed afterwards keeps its verdict; the exit status only tells which of those ended the run.
//!
//! JSON, versioned ([`OUTCOME_VERSION`]; bump on any change):
//! - 1: first format.
//! - 2: `load_base`, so the reader can name the globals of a replay run under ASLR.
//! - 3: `RaceAccess::free`: the access is the free of the block (a race on freed memory); absent
//!   values are `null`, never u32::MAX: a thread's `parent` (main), the `site` of a blocked
//!   thread, a held lock and a step (thread start and end); `op` is one of the names of
//!   [`crate::OpKind`] (the same spelling as before, now checked on reading).
//! - 4: `build_id` (the replayed executable's ELF build id) replaces `binary_hash`.
//! - 5: `RaceAccess::destroy`: the access is the destroy of a sync object (a race on a destroyed
//!   object); `watched` (when each watched access of the schedule first ran) and the result
//!   `atomicity`: they ran as e1, f, e2.
//! - 6: `stack` of a race access, a blocked thread and a held lock: the sites of the calls that
//!   led to it, innermost first (replay's shadow call stack); `locks` of a race access: the locks
//!   its thread held, each with where it was acquired.
//! - 7: `heap_block` of a race: the heap block the raced address is in, with its allocation;
//!   `created`: per thread created in the replay, its creator's shadow stack at the fork.
//! - 8: `RaceAccess::unmap`: the free is the unmapping of a mapping (`munmap`,
//!   `mremap`, a `MAP_FIXED` mapping over it), a race on unmapped memory.
//! - 9: a stack frame ([`StackFrame`]) is a site or, in code that is not instrumented, a
//!   `{"module", "offset"}` object (a shared library's function, libstdc++'s thread trampoline,
//!   libc's call of `main`); an operation that uninstrumented code made (no site) has that code's
//!   frame first, then the instrumented call that led into it. `locks` of the previous access of
//!   a race too (what its thread held when it made it, was always empty). `step_stacks` and
//!   `stacks`: the stack of each step of the schedule as the replay took it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::TraceError;
use crate::event::{AccessKind, SiteId, ThreadId};
use crate::json::read_versioned;
use crate::kind::OpKind;

pub const OUTCOME_VERSION: u32 = 9;
pub const OUTCOME_FILE: &str = "replay-outcome.json";

/// Exit status of a replay whose schedule could not be followed.
pub const EXIT_DIVERGED: i32 = 86;
/// Exit status of a replay that ended in a deadlock of the program.
pub const EXIT_DEADLOCK: i32 = 87;
/// Exit status of a replay that refused its schedule (unreadable, another binary, no `schedule`).
pub const EXIT_BAD_SCHEDULE: i32 = 88;
/// Exit status of a replay the runtime ended after a confirmed race, the program having completed
/// no sync operation for `verdict_grace_ms` (it spun, slept or hung on the path the race opened).
pub const EXIT_STOPPED: i32 = 89;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub format_version: u32,
    /// ELF build id of the replayed executable, as the runtime read it (as `Meta::build_id`).
    pub build_id: String,
    /// The schedule file that was replayed.
    pub schedule: String,
    /// Address the executable was loaded at in this replay (as `Meta::load_base`): race
    /// addresses minus it are addresses in the executable's symbol table.
    pub load_base: u64,
    pub result: ResultKind,
    /// Every step of the schedule was reached in order.
    pub schedule_followed: bool,
    pub steps_done: u32,
    pub steps_total: u32,
    /// In the order they were found, one per pair of sites.
    pub races: Vec<RaceReport>,
    pub deadlock: Option<DeadlockReport>,
    pub divergence: Option<Divergence>,
    /// Per watched access of the schedule ([`crate::schedule::Watch`]), in its order: when it
    /// first ran, as its rank among the watched accesses that ran (1 first), `None` if it never
    /// did. Absent when the schedule watches nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub watched: Vec<Option<u32>>,
    /// Per thread created in the replay (recorded tid), the calls that led its creator to the
    /// fork, innermost first (libstdc++'s `std::thread::_M_start_thread`, `std::thread`'s
    /// constructor, then the user's line).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub created: BTreeMap<ThreadId, Vec<StackFrame>>,
    /// Per step of the schedule, in order: the stack of the thread that took it, as an index into
    /// `stacks`; `None` for a step not taken. Empty when no step was taken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_stacks: Vec<Option<u32>>,
    /// The distinct stacks `step_stacks` names (a loop's steps share one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stacks: Vec<Vec<StackFrame>>,
}

/// One frame of a replay's stack, innermost first: the site of a call in instrumented code, or a
/// return address in code that is not (which has no site).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[serde(untagged)]
pub enum StackFrame {
    Site(SiteId),
    Native(NativeFrame),
}

/// `site 7`, or `libstdc++.so.6+0xd46d0` (`<executable>+0x...` in the executable): what the
/// runtime prints before `ilgen` names the frames.
impl std::fmt::Display for StackFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StackFrame::Site(s) => write!(f, "site {s}"),
            StackFrame::Native(n) => write!(f, "{}+{:#x}", n.module_name(), n.offset),
        }
    }
}

impl NativeFrame {
    /// The module's file name without its directory (`libstdc++.so.6`); `<executable>` for the
    /// executable.
    pub fn module_name(&self) -> &str {
        match &self.module {
            Some(m) => m.rsplit('/').next().unwrap_or(m),
            None => "<executable>",
        }
    }
}

/// A code address outside instrumented code, as the module it is in and where in it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub struct NativeFrame {
    /// The shared object's path as the loader opened it; `None` for the executable.
    pub module: Option<String>,
    /// The address in the module's own (link-time) addresses, as its symbol table has them: the
    /// run-time address minus where the loader put the module.
    pub offset: u64,
}

/// Whether the watched accesses ([`Outcome::watched`]) all ran, in the schedule's order (e1, f,
/// e2 of an atomicity candidate).
pub fn watched_in_order(watched: &[Option<u32>]) -> bool {
    !watched.is_empty()
        && watched
            .iter()
            .enumerate()
            .all(|(i, &rank)| rank == Some(i as u32 + 1))
}

/// What the replay proved. When several things happened the first in this order wins:
/// deadlock, race, atomicity, diverged, no error (the lists in [`Outcome`] keep everything).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ResultKind {
    Race,
    Deadlock,
    NoError,
    Diverged,
    /// The watched accesses ran in the schedule's order: an atomicity violation.
    Atomicity,
}

/// A thread as the replay knows it: its recorded tid (the schedule's), and its stable identity.
/// A thread the schedule does not name gets a tid above every scheduled one.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadRef {
    pub tid: ThreadId,
    /// `None` for main and threads created by uninstrumented code.
    pub parent: Option<ThreadId>,
    pub child_index: u32,
}

/// One of the two accesses of a race.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct RaceAccess {
    pub thread: ThreadRef,
    pub kind: AccessKind,
    pub addr: u64,
    pub size: u32,
    pub site: SiteId,
    /// The access is the free (`free`, `delete`, a moving `realloc`) of the block `[addr, addr +
    /// size)`, a write over all of it: the race is a race on freed memory.
    pub free: bool,
    /// With `free`: the block was unmapped (`munmap`, `mremap`, a `MAP_FIXED` mapping put over
    /// it), not freed: the race is a race on unmapped memory.
    pub unmap: bool,
    /// The access is the destroy of the sync object at `addr` (`pthread_mutex_destroy`,
    /// `sem_destroy`, ...), a write of its first byte that every other operation on it reads: the
    /// race is a race on a destroyed object.
    pub destroy: bool,
    /// The calls that led to `site`, innermost first.
    pub stack: Vec<StackFrame>,
    /// The locks its thread held when it made the access.
    pub locks: Vec<HeldLock>,
}

impl RaceReport {
    /// One of the two accesses frees the block: a use (or a second free) races with the free.
    pub fn on_freed_memory(&self) -> bool {
        self.current.free || self.previous.free
    }

    /// One of the two accesses unmaps the block: a use races with the `munmap`.
    pub fn on_unmapped_memory(&self) -> bool {
        self.current.unmap || self.previous.unmap
    }

    /// One of the two accesses destroys the sync object: a use races with the destroy.
    pub fn on_destroyed_object(&self) -> bool {
        self.current.destroy || self.previous.destroy
    }
}

/// Two conflicting accesses that no happens-before edge orders. `current` is the later one: the
/// thread that performed it is the one that called the report hook.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct RaceReport {
    pub current: RaceAccess,
    pub previous: RaceAccess,
    /// The heap block the current access's address is in (the last allocation covering it,
    /// freed since for a race on freed memory); `None` for memory the replaced malloc family did
    /// not allocate (globals, stacks, mappings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_block: Option<HeapBlock>,
}

/// An allocation of the replayed run.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct HeapBlock {
    pub addr: u64,
    pub size: u64,
    /// The allocating thread.
    pub thread: ThreadRef,
    /// The call of the allocating function; `None` when libc allocated by itself.
    pub site: Option<SiteId>,
    /// The calls that led to `site`, innermost first.
    pub stack: Vec<StackFrame>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct DeadlockReport {
    /// Every live thread, each blocked in a program sync operation.
    pub threads: Vec<BlockedThread>,
    /// Recorded tids of a wait-for cycle (each waits for a lock the next one holds, the last for
    /// one the first holds); empty when the threads wait on objects without owners (condition
    /// variables, semaphores, barriers).
    pub cycle: Vec<ThreadId>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct BlockedThread {
    pub thread: ThreadRef,
    /// The operation it is blocked in.
    pub op: OpKind,
    /// `None` when no instrumented instruction made it (the thread's end).
    pub site: Option<SiteId>,
    /// The mutex, lock, condition variable, semaphore or barrier (0 for a join).
    pub object: u64,
    /// Threads that hold `object` (its owner for a lock; the child for a join).
    pub waits_for: Vec<ThreadId>,
    /// Locks this thread holds, with the site that acquired each.
    pub holds: Vec<HeldLock>,
    /// The calls that led to `site`, innermost first (empty for a deadlock the recorded run
    /// observed: recording keeps no stacks).
    pub stack: Vec<StackFrame>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct HeldLock {
    pub object: u64,
    pub site: Option<SiteId>,
    /// The calls that led to `site`, innermost first (as [`BlockedThread::stack`]).
    pub stack: Vec<StackFrame>,
}

/// Why the schedule could not be followed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// Index of the step that could not be taken; `None` when the schedule was refused.
    pub step: Option<u32>,
    /// The step as the schedule has it.
    pub expected: Option<StepRef>,
    /// What the thread did instead, when it did another operation.
    pub got: Option<StepRef>,
    /// One lowercase sentence, as printed on stderr.
    pub reason: String,
}

/// One thread's n-th sync operation.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct StepRef {
    pub tid: ThreadId,
    pub index: u32,
    pub op: OpKind,
    pub site: Option<SiteId>,
}

/// A wait-for cycle among `edges` (thread → threads it waits for), starting at its lowest tid;
/// empty when there is none.
pub fn wait_for_cycle(edges: &[(ThreadId, Vec<ThreadId>)]) -> Vec<ThreadId> {
    let next = |t: ThreadId| -> &[ThreadId] {
        edges
            .iter()
            .find(|(u, _)| *u == t)
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[])
    };
    // Depth-first from each thread in tid order, with the current path on a stack.
    let mut starts: Vec<ThreadId> = edges.iter().map(|(t, _)| *t).collect();
    starts.sort_unstable();
    for &s in &starts {
        let mut path = vec![s];
        let mut choice = vec![0usize];
        while let Some(&top) = path.last() {
            let i = *choice.last().unwrap_or(&0);
            let succ = next(top);
            if i >= succ.len() {
                path.pop();
                choice.pop();
                continue;
            }
            *choice.last_mut().expect("choice follows path") += 1;
            let n = succ[i];
            if let Some(at) = path.iter().position(|&p| p == n) {
                let mut cycle = path[at..].to_vec();
                let min = cycle
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, t)| **t)
                    .map(|(i, _)| i);
                cycle.rotate_left(min.unwrap_or(0));
                return cycle;
            }
            if path.len() <= edges.len() {
                path.push(n);
                choice.push(0);
            }
        }
    }
    Vec::new()
}

impl Outcome {
    pub fn read(dir: &Path) -> Result<Outcome, TraceError> {
        read_versioned(
            &dir.join(OUTCOME_FILE),
            "an ilgen replay outcome",
            OUTCOME_VERSION,
        )
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("outcome serializes")
    }

    /// The stack of the thread that took step `p`, if it was taken.
    pub fn step_stack(&self, p: usize) -> Option<&[StackFrame]> {
        let i = (*self.step_stacks.get(p)?)?;
        self.stacks.get(i as usize).map(Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_threads_waiting_for_each_other_are_a_cycle() {
        let edges = vec![(1, vec![0]), (0, vec![1])];
        assert_eq!(wait_for_cycle(&edges), vec![0, 1]);
    }

    #[test]
    fn a_chain_is_no_cycle_and_a_longer_cycle_is_found() {
        assert!(wait_for_cycle(&[(0, vec![1]), (1, vec![2]), (2, vec![])]).is_empty());
        assert!(wait_for_cycle(&[(0, vec![]), (1, vec![])]).is_empty());
        let edges = vec![(5, vec![7]), (7, vec![3]), (3, vec![5]), (9, vec![3])];
        assert_eq!(wait_for_cycle(&edges), vec![3, 5, 7]);
    }

    fn sites(s: &[SiteId]) -> Vec<StackFrame> {
        s.iter().map(|&s| StackFrame::Site(s)).collect()
    }

    #[test]
    fn outcome_round_trips_with_snake_case_result() {
        let libc = StackFrame::Native(NativeFrame {
            module: Some("/lib/libc.so.6".into()),
            offset: 0x2724a,
        });
        let t = ThreadRef {
            tid: 1,
            parent: Some(0),
            child_index: 0,
        };
        let a = RaceAccess {
            thread: t,
            kind: AccessKind::Write,
            addr: 0x1000,
            size: 4,
            site: 7,
            free: true,
            unmap: false,
            destroy: false,
            stack: vec![StackFrame::Site(3), StackFrame::Site(2), libc.clone()],
            locks: vec![HeldLock {
                object: 0x40,
                site: Some(5),
                stack: sites(&[9]),
            }],
        };
        let o = Outcome {
            format_version: OUTCOME_VERSION,
            build_id: "00".into(),
            schedule: "s.json".into(),
            load_base: 0x5555_0000,
            result: ResultKind::NoError,
            schedule_followed: true,
            steps_done: 4,
            steps_total: 4,
            races: vec![RaceReport {
                current: a.clone(),
                previous: a,
                heap_block: Some(HeapBlock {
                    addr: 0x1000,
                    size: 24,
                    thread: t,
                    site: Some(4),
                    stack: sites(&[1]),
                }),
            }],
            deadlock: Some(DeadlockReport {
                threads: vec![BlockedThread {
                    thread: ThreadRef { parent: None, ..t },
                    op: OpKind::Join,
                    site: None,
                    object: 0,
                    waits_for: vec![1],
                    holds: vec![],
                    stack: sites(&[4]),
                }],
                cycle: vec![],
            }),
            divergence: None,
            watched: vec![Some(1), None],
            created: [(1, sites(&[6, 2]))].into(),
            step_stacks: vec![Some(0), None, Some(0), Some(1)],
            stacks: vec![Vec::new(), vec![StackFrame::Site(8), libc]],
        };
        assert_eq!(o.step_stack(1), None);
        assert_eq!(o.step_stack(3), Some(&o.stacks[1][..]));
        assert_eq!(o.step_stack(9), None);
        let json = o.to_json();
        assert!(json.contains(r#""result": "no_error""#), "{json}");
        // Absent values are null, never a sentinel number.
        assert!(json.contains(r#""parent": null"#), "{json}");
        assert!(json.contains(r#""op": "join","#), "{json}");
        assert!(json.contains(r#""site": null"#), "{json}");
        assert!(!json.contains("4294967295"), "{json}");
        // A native frame is an object among the site numbers.
        assert!(json.contains(r#""module": "/lib/libc.so.6","#), "{json}");
        assert_eq!(serde_json::from_str::<Outcome>(&json).unwrap(), o);
        let dir = std::env::temp_dir().join(format!("ilgen-outcome-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(OUTCOME_FILE), json).unwrap();
        assert_eq!(Outcome::read(&dir).unwrap(), o);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
