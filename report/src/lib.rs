//! `ilgen-report`: the confirmed findings of replay as data, rendered as text, JSON or SARIF.
//!
//! Takes each candidate with its replay ([`Entry`]) and a [`Context`] (the binary's site table
//! and symbols, the recorded thread tree); gives a [`Report`]: confirmed races, deadlocks and
//! atomicity violations, deduplicated by their pair (or set) of source lines, each with the
//! accesses or blocked operations, the object, the threads' creation sites and the schedule that
//! exposed it; the counts of every verdict; every candidate that was not confirmed with the
//! reason; and the threads the program never joined before it exited. A deadlock the recorded run itself ended in
//! ([`Report::observe`], from `ilgen_analysis::observed`) is a finding too, with no replay needed.
//! Several runs of one binary ([`Report::merge`]) give one report whose findings say in which
//! runs they were predicted and which run's schedule replays them; the shards of one analysis
//! ([`shard`]) give one report equal to the unsharded one.
//! The renderers ([`text`], [`json`], [`sarif`]) only print this data; [`limits`] says what the
//! analysis left undecided.

pub mod dump;
pub mod fingerprint;
pub mod json;
pub mod limits;
pub mod merge;
pub mod sarif;
pub mod shard;
pub mod suppress;
pub mod text;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;
use std::sync::Arc;

use ilgen_trace::format::TraceDir;
use ilgen_trace::replay::{
    DeadlockReport, HeapBlock as Allocation, HeldLock, NativeFrame, Outcome, RaceAccess,
    ResultKind, StackFrame,
};
use ilgen_trace::sites::Frame;
use ilgen_trace::{known_site, Event, Meta, OpKind, RunEnd, SiteId, SyncOp, ThreadId};
use serde::{Deserialize, Serialize};

use ilgen_analysis::atomicity::Pattern;
use ilgen_analysis::candidates::{AccessName, AccessSide, Candidate};
use ilgen_analysis::observed::{observed_deadlock, Observed};
use ilgen_binary::Binary;
use ilgen_confirm::run::ReplayRun;
use ilgen_confirm::verdict::{Class, Verdict};
use ilgen_confirm::Replayed;

/// What a report takes from a recorded run: its `meta.json`, the thread tree and the deadlock the
/// run ended in. Taken from the trace before the analysis, which consumes its threads.
#[derive(Clone, Debug)]
pub struct RecordedRun {
    pub meta: Meta,
    /// Child tid → (parent tid, site of the fork that created it).
    pub forks: BTreeMap<ThreadId, (ThreadId, SiteId)>,
    /// The threads created, neither joined nor detached, when the program exited (the trace has
    /// an `exit` event): a race with one of them is a missing join.
    pub unjoined: BTreeSet<ThreadId>,
    /// The deadlock the run ended in, if it did not exit and it was asked for.
    pub observed: Option<Observed>,
}

impl RecordedRun {
    /// With `observe`, also the deadlock the run ended in.
    pub fn of(trace: &TraceDir, observe: bool) -> RecordedRun {
        let (meta, threads) = (&trace.meta, &trace.threads);
        let mut forks = BTreeMap::new();
        let mut ended_for = BTreeSet::new();
        let mut exited = false;
        for t in threads {
            // Forks, joins, detaches and the exit are all lifecycle marks.
            for (_, e) in t.events.lifecycle() {
                let Event::Sync(s) = e else { continue };
                match s.op {
                    SyncOp::Fork { child } => {
                        forks.insert(child, (t.header.tid, s.site));
                    }
                    SyncOp::Join { child } if !s.is_pending() => {
                        ended_for.insert(child);
                    }
                    SyncOp::Detach { child } => {
                        ended_for.insert(child);
                    }
                    SyncOp::Exit => exited = true,
                    _ => {}
                }
            }
        }
        let unjoined = if exited {
            forks
                .keys()
                .copied()
                .filter(|c| !ended_for.contains(c))
                .collect()
        } else {
            BTreeSet::new()
        };
        RecordedRun {
            meta: meta.clone(),
            forks,
            unjoined,
            observed: (observe && meta.end != Some(RunEnd::Exit))
                .then(|| observed_deadlock(threads))
                .flatten(),
        }
    }
}

/// What the report needs besides the replays: names for sites and addresses, the thread tree.
pub struct Context<'a> {
    pub binary: Option<&'a Binary>,
    /// Child tid → (parent tid, site of the fork that created it), from the recorded trace.
    pub forks: BTreeMap<ThreadId, (ThreadId, SiteId)>,
    /// [`RecordedRun::unjoined`].
    pub unjoined: BTreeSet<ThreadId>,
    /// Per site, its frame and the frames its function is inlined into ([`Context::push_site`]),
    /// made once: a confirmed finding's schedule has a location per step, 10^4-10^5 steps at a
    /// few hundred sites, and a source per step made memcached's report phase 1-2 GiB.
    site_frames: RefCell<HashMap<SiteId, Rc<[Location]>>>,
}

impl<'a> Context<'a> {
    pub fn new(binary: Option<&'a Binary>, run: &RecordedRun) -> Context<'a> {
        Context {
            binary,
            forks: run.forks.clone(),
            unjoined: run.unjoined.clone(),
            site_frames: RefCell::default(),
        }
    }

    /// Where `site` is; `None`: no instrumented instruction made the event.
    pub fn location(&self, site: Option<SiteId>) -> Location {
        match site {
            Some(id) => self.site_frames(id)[0].clone(),
            None => Location {
                site,
                source: None,
                native: None,
            },
        }
    }

    /// Site `id`'s frame, then the frames of the functions its own is inlined into, each at its
    /// inlined call (kept: see [`Context::site_frames`]'s field).
    fn site_frames(&self, id: SiteId) -> Rc<[Location]> {
        if let Some(frames) = self.site_frames.borrow().get(&id) {
            return Rc::clone(frames);
        }
        let site = self.binary.and_then(|b| b.site(id));
        let own = site.map(|s| {
            Arc::new(Source {
                inlined: s.inlined.iter().map(Source::from).collect(),
                ..Source::from(&s.frame)
            })
        });
        let frame = |source| Location {
            site: Some(id),
            source,
            native: None,
        };
        let frames: Rc<[Location]> = std::iter::once(frame(own))
            .chain(
                site.into_iter()
                    .flat_map(|s| &s.callers)
                    .map(|f| frame(Some(Arc::new(Source::from(f))))),
            )
            .collect();
        self.site_frames.borrow_mut().insert(id, Rc::clone(&frames));
        frames
    }

    /// A frame of uninstrumented code, named from its module's symbols.
    fn native(&self, f: &NativeFrame) -> Location {
        let named = self.binary.and_then(|b| b.native_function(f));
        let module = match (&f.module, self.binary) {
            (Some(m), _) => m.clone(),
            (None, Some(b)) => b.path().display().to_string(),
            (None, None) => f.module_name().to_owned(),
        };
        Location {
            site: None,
            source: None,
            native: Some(Box::new(Native {
                module,
                offset: f.offset,
                symbol: named
                    .as_ref()
                    .filter(|n| n.symbol != n.function)
                    .map(|n| n.symbol.clone()),
                function: named.map(|n| n.function),
            })),
        }
    }

    /// The linkage name of the function site `s` is compiled into: the outermost one it is
    /// inlined into.
    fn compiled_into(&self, s: SiteId) -> Option<&str> {
        let site = self.binary?.site(s)?;
        Some(&site.callers.last().unwrap_or(&site.frame).symbol)
    }

    /// Whether the return address `f`, followed by `next`, is a frame to show. Not when it is the
    /// call made at site `next` (a frame of the executable or of a shared object in the function
    /// `next` is in, or a frame of the executable no symbol names, which a stripped executable
    /// gives for every instrumented call: it says nothing `next` does not), nor the runtime's own
    /// code (its thread trampoline below a thread's function), as TSan shows none of its own
    /// frames.
    fn shown(&self, f: &NativeFrame, next: Option<&StackFrame>) -> bool {
        let Some(b) = self.binary else {
            return true;
        };
        let named = b.native_function(f);
        if let (None, Some(n)) = (&f.module, &named) {
            if ilgen_trace::abi::is_runtime_function(&n.function, &n.symbol) {
                return false;
            }
        }
        let Some(StackFrame::Site(next)) = next else {
            return true;
        };
        match named {
            Some(n) => self.compiled_into(*next) != Some(n.symbol.as_str()),
            None => f.module.is_some(),
        }
    }

    /// `site`'s frame, then the frames of the functions its own is inlined into, each at its
    /// inlined call.
    fn push_site(&self, all: &mut Vec<Location>, site: Option<SiteId>) {
        match site {
            Some(id) => all.extend(self.site_frames(id).iter().cloned()),
            None => all.push(self.location(None)),
        }
    }

    /// The frames of an operation at `site` called through `stack` (innermost first, as replay's
    /// shadow stack gives it: call sites, and where functions return to in code that is not
    /// instrumented), each site followed by the frames its function is inlined into
    /// (`ilgen_trace::sites::Site::callers`): the first frame in the user's code, then the rest
    /// as they print below it. Library frames called from that user line (a `std::lock_guard`
    /// built out of line at -O0, down to the pthread call in `gthr-default.h`; libstdc++'s
    /// `std::thread::_M_start_thread` that forked a `std::thread`) go right below it, from its
    /// call inward, as the library code inlined at a line does; then its callers. When no frame
    /// is the user's, the operation's own frame stays first. An operation made by uninstrumented
    /// code (no site) is that code's frame when the stack starts with it; a return address into
    /// an instrumented caller's call or the runtime is left out (see [`Context::shown`]), and so
    /// is what lies below `main`.
    pub fn frames(&self, site: Option<SiteId>, stack: &[StackFrame]) -> (Location, Vec<Location>) {
        let mut all: Vec<Location> = Vec::new();
        if site.is_some() || !matches!(stack.first(), Some(StackFrame::Native(_))) {
            self.push_site(&mut all, site);
        }
        // Below `main` only libc's start-up calls it: TSan leaves those frames out, as here.
        let mut below_main = site.and_then(|s| self.compiled_into(s)) == Some("main");
        for (i, f) in stack.iter().enumerate() {
            match f {
                StackFrame::Site(s) => {
                    self.push_site(&mut all, known_site(*s));
                    below_main = self.compiled_into(*s) == Some("main");
                }
                StackFrame::Native(n) if !below_main && self.shown(n, stack.get(i + 1)) => {
                    all.push(self.native(n))
                }
                StackFrame::Native(_) => {}
            }
        }
        let user = all
            .iter()
            .position(|l| l.source.as_deref().is_some_and(Source::is_users));
        if all.is_empty() {
            all.push(self.location(site));
        }
        let mut rest = all.split_off(1);
        let mut first = all.remove(0);
        if let Some(k) = user.filter(|&k| k > 0) {
            let callers = rest.split_off(k);
            let mut called: Vec<Location> = std::iter::once(first).chain(rest).collect();
            first = called.pop().expect("k frames");
            called.reverse();
            rest = called.into_iter().chain(callers).collect();
        }
        (first, rest)
    }

    /// The global at `addr` of a process that loaded the executable at `base` (`None`: the
    /// recorded run's base).
    pub fn object(&self, addr: u64, base: Option<u64>) -> Option<Object> {
        let b = self.binary?;
        let g = b.global_at(addr, base.unwrap_or(b.load_base()))?;
        Some(Object {
            name: g.name.to_owned(),
            offset: g.offset,
            size: g.size,
        })
    }

    /// Thread `tid`, created through `stack` (its creator's callers at the fork, from replay).
    fn thread(&self, tid: ThreadId, stack: &[StackFrame]) -> ThreadInfo {
        let (parent, created_at, created_stack) = match self.forks.get(&tid) {
            Some(&(p, site)) => {
                let (at, below) = self.frames(known_site(site), stack);
                (Some(p), Some(at), below)
            }
            None => (None, None, Vec::new()),
        };
        ThreadInfo {
            tid,
            parent,
            created_at,
            created_stack,
            never_joined: self.unjoined.contains(&tid),
        }
    }
}

/// A source site: its id in the binary's site table and, when the binary names it, where it is.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// `None` (JSON null) for an event no instrumented instruction made (thread start and end).
    pub site: Option<SiteId>,
    /// Shared: a finding holds many locations, most of them at a few sites and read only when
    /// printed.
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub source: Option<Arc<Source>>,
    /// A frame in code that is not instrumented (`site` is then `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native: Option<Box<Native>>,
}

/// A frame in code that is not instrumented: where in which module, and the function there.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Native {
    /// The path of the module: a shared library as the loader opened it, or the executable.
    pub module: String,
    /// The return address, in the module's link-time addresses.
    pub offset: u64,
    /// Demangled; `None` when no symbol of the module holds the address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// The linkage name, when it differs from `function`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
}

impl Native {
    /// `std::thread::_M_start_thread(...) (libstdc++.so.6+0xd46d0)`, as TSan names such a frame.
    pub fn text(&self) -> String {
        let module = self.module.rsplit('/').next().unwrap_or(&self.module);
        format!(
            "{} ({module}+{:#x})",
            self.function.as_deref().unwrap_or("<unnamed>"),
            self.offset
        )
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Source {
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// Demangled (`Account::deposit(long)`).
    pub function: String,
    /// The linkage name, when it differs from `function` (`_ZN7Account7depositEl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// The library frames inlined at this line, from its call inward: the operation itself is in
    /// the last one (see `ilgen_trace::sites`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inlined: Vec<Source>,
}

impl Source {
    /// Whether this is the user's code: in a file of theirs, and no compiler-made function at
    /// line 0 (a static-init `_GLOBAL__sub_I_<file>` under a library's uninstrumented code, whose
    /// frame would name the user's file for what the library did). A user's function at line 0
    /// is theirs: -O2 merges two stores of an `if`/`else` into one of no line.
    fn is_users(&self) -> bool {
        let compiler_made = ["_GLOBAL__", "__cxx_global_"]
            .iter()
            .any(|p| self.function.starts_with(p));
        ilgen_trace::sites::is_user_file(&self.file) && (self.line > 0 || !compiler_made)
    }

    /// `file:line:column` (`file:line` without `column`) as sanitizers print it: a line or
    /// column of 0 (not known) left out.
    pub fn position(&self, column: bool) -> String {
        match (self.line, self.column) {
            (0, _) => self.file.clone(),
            (line, c) if c == 0 || !column => format!("{}:{line}", self.file),
            (line, c) => format!("{}:{line}:{c}", self.file),
        }
    }
}

impl From<&Frame> for Source {
    fn from(f: &Frame) -> Source {
        Source {
            file: f.file.clone(),
            line: f.line,
            column: f.column,
            function: f.function.clone(),
            symbol: (f.symbol != f.function).then(|| f.symbol.clone()),
            inlined: Vec::new(),
        }
    }
}

impl Location {
    /// What deduplication compares: file and line when known, else the site id (a frame of
    /// uninstrumented code: its function and module).
    fn key(&self) -> (String, Option<u32>) {
        match (&self.source, &self.native) {
            (Some(s), _) => (s.file.clone(), Some(s.line)),
            (None, Some(n)) => (n.text(), None),
            (None, None) => (String::new(), self.site),
        }
    }
}

/// A global variable.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Object {
    pub name: String,
    pub offset: u64,
    pub size: u64,
}

/// The heap block a race's address is in, and where it was allocated.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct HeapBlock {
    /// Its first byte, in the replay that found the race.
    pub address: u64,
    pub size: u64,
    /// The allocating thread.
    pub thread: ThreadId,
    /// The allocation call: the first frame in the user's code ([`Context::frames`]).
    pub location: Location,
    /// The frames below `location`; empty when replay kept no stack.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<Location>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ThreadInfo {
    pub tid: ThreadId,
    /// `None` for the main thread (and threads the trace does not show created).
    pub parent: Option<ThreadId>,
    pub created_at: Option<Location>,
    /// The frames below `created_at` ([`Context::frames`]); empty when replay kept no stack.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created_stack: Vec<Location>,
    /// Created, and neither joined nor detached when the program exited.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub never_joined: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub tid: ThreadId,
    pub kind: AccessName,
    pub addr: u64,
    pub size: u32,
    pub location: Location,
    /// The frames below `location` ([`Context::frames`]); empty when replay kept no stack.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<Location>,
    /// The locks its thread held when it made the access (known for both accesses of a race).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locks: Vec<Held>,
}

/// The schedule that exposed a finding, as a report holds it: its last steps. A schedule has a
/// step per sync operation of the run (10^5 on a server), one finding's a few hundred kilobytes
/// of JSON each time it is shown; the steps that explain a finding are its last, and `ilgen
/// replay` runs the whole schedule from the candidate's `schedule-<n>.json`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    /// How many steps the whole schedule has.
    #[serde(rename = "schedule_steps")]
    pub steps: usize,
    /// Its last steps, at most [`SHOWN_STEPS`]: steps `steps - last.len() + 1` to `steps`.
    #[serde(rename = "schedule")]
    pub last: Vec<ScheduleStep>,
    /// Where the replay left this schedule, when it could not follow it to the end (`step S of
    /// T: why`): the threads ran unscheduled from there, so a replay retraces what came after
    /// only as far as the program does the same again.
    #[serde(
        rename = "left_schedule",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub left: Option<String>,
}

/// Steps of a finding's schedule a report keeps: as many as the candidates' summary lists.
pub const SHOWN_STEPS: usize = ilgen_analysis::candidates::SUMMARY_STEPS;

impl Schedule {
    /// The number (1-based) of the first step in `last`.
    pub fn first_shown(&self) -> usize {
        self.steps - self.last.len() + 1
    }
}

/// One step of the schedule that exposed a finding.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ScheduleStep {
    pub tid: ThreadId,
    pub op: OpKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<ThreadId>,
    /// Recorded address of the object operated on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_name: Option<Object>,
    pub location: Location,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Race {
    /// Stable across runs and rebuilds of unchanged code ([`Finding::fingerprint`]).
    pub fingerprint: String,
    /// The run (1-based, of [`Report::runs`]) whose candidates, replay and schedule these are.
    pub run: usize,
    /// Every run whose detect predicted it (a candidate at its lines, confirmed or not), ascending.
    pub runs: Vec<usize>,
    /// Candidates (1-based) of run `run` whose replay found it.
    pub candidates: Vec<usize>,
    /// Process id of the replay that found it first.
    pub pid: u32,
    pub replay_dir: String,
    /// The later access (its thread found the race) and the earlier one.
    pub current: Access,
    pub previous: Access,
    pub object: Option<Object>,
    /// The heap block of the address (none for a global, a stack or a mapping).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_block: Option<HeapBlock>,
    pub threads: Vec<ThreadInfo>,
    #[serde(flatten)]
    pub schedule: Schedule,
}

impl Race {
    /// One access is the free of the block: a use (or another free) races with the free.
    pub fn on_freed_memory(&self) -> bool {
        [self.current.kind, self.previous.kind].contains(&AccessName::Free)
    }

    /// What the report calls it, after `WARNING: ilgen:` and `SUMMARY: ilgen:`.
    pub fn title(&self) -> &'static str {
        let kinds = [self.current.kind, self.previous.kind];
        if kinds.contains(&AccessName::Unmap) {
            "data race on unmapped memory"
        } else if self.on_freed_memory() {
            "data race on freed memory"
        } else if kinds.contains(&AccessName::Destroy) {
            "data race on destroyed sync object"
        } else {
            "data race"
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    /// Stable across runs and rebuilds of unchanged code ([`Finding::fingerprint`]).
    pub fingerprint: String,
    /// The run whose candidates, replay and schedule these are (or that observed it).
    pub run: usize,
    /// Every run that predicted or observed it, ascending.
    pub runs: Vec<usize>,
    /// Candidates of run `run` whose replay confirmed it (may be empty for an observed one).
    pub candidates: Vec<usize>,
    /// The recorded run itself ended in it (killed or timed out while deadlocked): `pid` is the
    /// recorded run's, `replay_dir` is empty unless a replay confirmed it too, and the schedule is
    /// that replay's (empty without one).
    pub observed: bool,
    pub pid: u32,
    pub replay_dir: String,
    pub blocked: Vec<Blocked>,
    /// Wait-for cycle of locks (each thread waits for a lock the next holds); empty when the
    /// threads wait on objects without owners.
    pub cycle: Vec<ThreadId>,
    pub threads: Vec<ThreadInfo>,
    #[serde(flatten)]
    pub schedule: Schedule,
    /// Of an observed deadlock: condition variables signalled before their waiter waited.
    pub lost_wakeups: Vec<LostWakeup>,
}

/// A signal (or broadcast) that came before the wait it was meant for, the wait not in a loop
/// re-checking a predicate: the waiter waits for a wakeup already spent.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct LostWakeup {
    pub cond: u64,
    pub cond_name: Option<Object>,
    pub waiter: ThreadId,
    pub wait: Location,
    pub signaller: ThreadId,
    pub signal: Location,
    pub broadcast: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    pub tid: ThreadId,
    pub op: OpKind,
    pub object: u64,
    pub object_name: Option<Object>,
    pub location: Location,
    /// The frames below `location` ([`Context::frames`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<Location>,
    pub waits_for: Vec<ThreadId>,
    pub holds: Vec<Held>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub object: u64,
    pub object_name: Option<Object>,
    /// Where it was acquired.
    pub location: Location,
    /// The frames below `location` ([`Context::frames`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<Location>,
}

/// An atomicity violation replay confirmed: accesses e1 and e2 of one transaction, and f of
/// another thread between them, each in the segment the candidate predicted.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Atomicity {
    /// The run whose candidates, replay and schedule these are.
    pub run: usize,
    /// Every run whose detect predicted it, ascending.
    pub runs: Vec<usize>,
    /// Stable across runs and rebuilds of unchanged code ([`Finding::fingerprint`]).
    pub fingerprint: String,
    /// Candidates of run `run` whose replay confirmed it.
    pub candidates: Vec<usize>,
    pub pid: u32,
    pub replay_dir: String,
    pub pattern: Pattern,
    /// Where the transaction began: its function's line, or its `ILGEN_ATOMIC_BEGIN()`.
    pub transaction: Location,
    pub e1: Access,
    pub f: Access,
    pub e2: Access,
    pub object: Option<Object>,
    pub threads: Vec<ThreadInfo>,
    #[serde(flatten)]
    pub schedule: Schedule,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    Race(Race),
    Deadlock(Deadlock),
    Atomicity(Atomicity),
}

/// A candidate that replay did not confirm.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Unconfirmed {
    /// The run whose candidate it is.
    pub run: usize,
    pub candidate: usize,
    pub predicted: Predicted,
    /// Of a fallback: the candidate it stands in for (which did not confirm either).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_of: Option<usize>,
    pub verdict: Class,
    pub reason: String,
    /// The predicted accesses' (or blocked operations') sites; for an atomicity violation, where
    /// its transaction began, then e1, f and e2.
    pub locations: Vec<Location>,
}

/// A candidate not replayed: the replay of an earlier candidate at its two sites (another
/// object's, or the candidate a fallback stands in for) confirmed their race, which the report
/// shows once per pair of lines.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct NotReplayed {
    /// The run whose candidate it is.
    pub run: usize,
    pub candidate: usize,
    /// Of a fallback: the candidate it stands in for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_of: Option<usize>,
    /// The candidate (of the same run) whose replay confirmed the race at its two sites.
    pub confirmed_by: usize,
    /// The predicted accesses' sites.
    pub locations: Vec<Location>,
}

/// What a candidate predicted; JSON `race`, `deadlock` or `atomicity_violation`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Predicted {
    Race,
    Deadlock,
    AtomicityViolation,
}

impl std::fmt::Display for Predicted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Predicted::Race => "race",
            Predicted::Deadlock => "deadlock",
            Predicted::AtomicityViolation => "atomicity_violation",
        })
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub candidates: usize,
    pub confirmed_races: usize,
    pub confirmed_deadlocks: usize,
    /// Atomicity violations among the candidates, and how many replay confirmed.
    pub atomicity_candidates: usize,
    pub confirmed_atomicity: usize,
    pub no_error: usize,
    pub infeasible: usize,
    pub failed: usize,
    /// Deadlocks the recorded run itself ended in (0 or 1).
    pub observed_deadlocks: usize,
    /// Fallbacks of race candidates replayed (because no replay before confirmed the race at
    /// their two sites: counted in `candidates` too), those of them replay confirmed, and those
    /// not replayed (a replay before confirmed it: not in `candidates`).
    pub fallbacks_replayed: usize,
    pub fallbacks_confirmed: usize,
    pub fallbacks_skipped: usize,
    /// Race candidates not replayed, fallbacks among them: the replay of an earlier one at their
    /// two sites confirmed their race ([`Report::not_replayed`]); not in `candidates`.
    pub not_replayed: usize,
}

/// One recorded run a report covers; `ilgen detect DIR...` numbers them from 1 in argument order.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub trace_dir: String,
    /// The `chaos=SEED` the run was perturbed with (`None`: not perturbed).
    pub chaos_seed: Option<u64>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub binary: String,
    pub runs: Vec<Run>,
    /// Summed over the runs.
    pub counts: Counts,
    /// Confirmed, deduplicated, in run and candidate order.
    pub findings: Vec<Finding>,
    /// Every candidate that was not confirmed, in candidate order.
    pub unconfirmed: Vec<Unconfirmed>,
    /// Every candidate not replayed (an earlier one at its two sites confirmed), in candidate
    /// order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_replayed: Vec<NotReplayed>,
    /// The threads never joined when the program exited ([`Context::unjoined`]), by tid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unjoined: Vec<ThreadInfo>,
    /// Confirmed findings a suppression hid ([`Report::suppress`]): not in `findings`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suppressed: Vec<Suppressed>,
}

/// A finding a suppression hid ([`Report::suppress`]), and the rule that did.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Suppressed {
    /// The rule as written in the file (`race:^worker$`).
    pub suppression: String,
    pub finding: Finding,
}

impl Finding {
    /// Its stable id, computed by the recipe of [`fingerprint`] from its current fields.
    pub fn fingerprint(&self) -> String {
        let side = |l: &Location, what: String| {
            let named = l
                .source
                .as_deref()
                .map(|s| (s.file.as_str(), s.function.as_str(), s.line));
            (fingerprint::side(named, l.site), what)
        };
        match self {
            Finding::Race(r) => fingerprint::hash(
                "race",
                [&r.current, &r.previous]
                    .iter()
                    .map(|a| side(&a.location, a.kind.text().to_owned()))
                    .collect(),
            ),
            Finding::Deadlock(d) => fingerprint::hash(
                "deadlock",
                d.blocked
                    .iter()
                    .map(|b| side(&b.location, b.op.to_string()))
                    .collect(),
            ),
            Finding::Atomicity(a) => fingerprint::hash(
                "atomicity",
                std::iter::once(side(&a.transaction, OpKind::TxBegin.to_string()))
                    .chain(
                        [&a.e1, &a.f, &a.e2]
                            .iter()
                            .map(|x| side(&x.location, x.kind.text().to_owned())),
                    )
                    .collect(),
            ),
        }
    }
}

/// `f` with its fingerprint filled in.
fn stamp(mut f: Finding) -> Finding {
    let print = f.fingerprint();
    match &mut f {
        Finding::Race(r) => r.fingerprint = print,
        Finding::Deadlock(d) => d.fingerprint = print,
        Finding::Atomicity(a) => a.fingerprint = print,
    }
    f
}

/// One candidate and what its replay gave.
pub struct Entry<'a> {
    /// 1-based, as `schedule-<n>.json`.
    pub number: usize,
    pub candidate: &'a Candidate,
    pub run: Option<&'a ReplayRun>,
    pub verdict: Verdict,
}

impl Report {
    /// The report of one run, as run 1 (several are joined by [`Report::merge`]).
    pub fn new(ctx: &Context, binary: &str, run: Run) -> Report {
        Report {
            binary: binary.to_owned(),
            runs: vec![run],
            counts: Counts::default(),
            findings: Vec::new(),
            unconfirmed: Vec::new(),
            not_replayed: Vec::new(),
            unjoined: ctx.unjoined.iter().map(|&t| ctx.thread(t, &[])).collect(),
            suppressed: Vec::new(),
        }
    }

    /// The report of one recorded run, as run 1 in `trace_dir`: the deadlock the run itself ended
    /// in, if `recorded` has it, then the verdict of each candidate (numbered from one) by its
    /// replay in `replays`, or the candidate that confirmed its race instead.
    pub fn of_run(
        binary: Option<&Binary>,
        recorded: &RecordedRun,
        trace_dir: &str,
        candidates: &[Candidate],
        replays: &[Replayed],
    ) -> Report {
        let ctx = Context::new(binary, recorded);
        let meta = &recorded.meta;
        let run = Run {
            trace_dir: trace_dir.to_owned(),
            chaos_seed: meta.chaos_seed,
        };
        let mut report = Report::new(&ctx, &meta.binary, run);
        // A run that did not exit may have ended deadlocked: that is a finding without replay.
        if let Some(o) = &recorded.observed {
            report.observe(&ctx, o, meta.pid);
        }
        for (i, (candidate, r)) in candidates.iter().zip(replays).enumerate() {
            let r = match r {
                Replayed::Run(r) => r,
                Replayed::Covered(by) => {
                    let c = &mut report.counts;
                    c.not_replayed += 1;
                    c.fallbacks_skipped += usize::from(candidate.fallback_of().is_some());
                    report.not_replayed.push(NotReplayed {
                        run: 1,
                        candidate: i + 1,
                        fallback_of: candidate.fallback_of(),
                        confirmed_by: *by,
                        locations: predicted(&ctx, candidate).1,
                    });
                    continue;
                }
            };
            report.add(
                &ctx,
                &Entry {
                    number: i + 1,
                    candidate,
                    run: Some(r),
                    verdict: ilgen_confirm::verdict::classify(r),
                },
            );
        }
        report
    }

    pub fn confirmed(&self) -> bool {
        !self.findings.is_empty()
    }

    /// Adds the deadlock the recorded run (process `pid`) ended in; call it before [`Report::add`],
    /// so that a replay confirming the same deadlock joins it.
    pub fn observe(&mut self, ctx: &Context, o: &Observed, pid: u32) {
        self.counts.observed_deadlocks += 1;
        let d = &o.deadlock;
        let name = |addr| ctx.object(addr, None);
        self.findings.push(stamp(Finding::Deadlock(Deadlock {
            fingerprint: String::new(),
            run: 1,
            runs: vec![1],
            candidates: Vec::new(),
            observed: true,
            pid,
            replay_dir: String::new(),
            blocked: blocked(ctx, d, None),
            cycle: d.cycle.clone(),
            threads: threads(ctx, None, d.threads.iter().map(|b| b.thread.tid)),
            schedule: Schedule::default(),
            lost_wakeups: o
                .lost_wakeups
                .iter()
                .map(|w| LostWakeup {
                    cond: w.cond,
                    cond_name: name(w.cond),
                    waiter: w.waiter,
                    wait: ctx.location(known_site(w.wait_site)),
                    signaller: w.signaller,
                    signal: ctx.location(known_site(w.signal_site)),
                    broadcast: w.broadcast,
                })
                .collect(),
        })));
    }

    /// Adds one candidate's verdict: its findings (merged with equal ones already there) or an
    /// [`Unconfirmed`] entry.
    pub fn add(&mut self, ctx: &Context, entry: &Entry) {
        let c = &mut self.counts;
        c.candidates += 1;
        match entry.verdict.class {
            Class::ConfirmedRace => c.confirmed_races += 1,
            Class::ConfirmedDeadlock => c.confirmed_deadlocks += 1,
            Class::ConfirmedAtomicity => c.confirmed_atomicity += 1,
            Class::NoError => c.no_error += 1,
            Class::Infeasible => c.infeasible += 1,
            Class::Failed => c.failed += 1,
        }
        if let Candidate::Atomicity { .. } = entry.candidate {
            c.atomicity_candidates += 1;
        }
        let confirmed = matches!(
            entry.verdict.class,
            Class::ConfirmedRace | Class::ConfirmedDeadlock | Class::ConfirmedAtomicity
        );
        if entry.candidate.fallback_of().is_some() {
            c.fallbacks_replayed += 1;
            c.fallbacks_confirmed += usize::from(confirmed);
        }
        let outcome = entry.run.and_then(|r| r.outcome.as_ref().ok());
        let (
            Some(run),
            Some(o),
            Class::ConfirmedRace | Class::ConfirmedDeadlock | Class::ConfirmedAtomicity,
        ) = (entry.run, outcome, entry.verdict.class)
        else {
            self.unconfirmed.push(unconfirmed(ctx, entry));
            return;
        };
        for f in findings(ctx, entry, run, o) {
            match self.findings.iter_mut().find(|g| key(g) == key(&f)) {
                Some(Finding::Race(r)) => push_new(&mut r.candidates, entry.number),
                Some(Finding::Atomicity(a)) => push_new(&mut a.candidates, entry.number),
                Some(Finding::Deadlock(d)) => {
                    if d.candidates.is_empty() {
                        // The observed deadlock, now also replayed: show the replay's schedule.
                        if let Finding::Deadlock(r) = &f {
                            d.replay_dir.clone_from(&r.replay_dir);
                            d.schedule.clone_from(&r.schedule);
                        }
                    }
                    push_new(&mut d.candidates, entry.number)
                }
                None => self.findings.push(f),
            }
        }
    }
}

fn heap_block(ctx: &Context, b: &Allocation) -> HeapBlock {
    let (location, stack) = ctx.frames(b.site, &b.stack);
    HeapBlock {
        address: b.addr,
        size: b.size,
        thread: b.thread.tid,
        location,
        stack,
    }
}

fn push_new(v: &mut Vec<usize>, n: usize) {
    if !v.contains(&n) {
        v.push(n);
    }
}

/// What makes two findings the same: the kind (as [`Unconfirmed::predicted`] names it) and the
/// unordered pair of access lines of a race, the set of blocked lines of a deadlock, the set of
/// the transaction's first line and the e1, f and e2 lines of an atomicity violation (the lines
/// of [`Unconfirmed::locations`], so that a run that predicted it without confirming it counts).
type Key = (Predicted, BTreeSet<(String, Option<u32>)>);

fn key(f: &Finding) -> Key {
    match f {
        Finding::Race(r) => (
            Predicted::Race,
            [r.current.location.key(), r.previous.location.key()].into(),
        ),
        Finding::Deadlock(d) => (
            Predicted::Deadlock,
            d.blocked.iter().map(|b| b.location.key()).collect(),
        ),
        Finding::Atomicity(a) => (
            Predicted::AtomicityViolation,
            [
                &a.transaction,
                &a.e1.location,
                &a.f.location,
                &a.e2.location,
            ]
            .map(Location::key)
            .into(),
        ),
    }
}

fn findings(ctx: &Context, entry: &Entry, run: &ReplayRun, o: &Outcome) -> Vec<Finding> {
    let schedule = schedule(ctx, entry.candidate, o);
    let replay_dir = run.out_dir.display().to_string();
    let mut out = Vec::new();
    for r in &o.races {
        let access = |a: &RaceAccess| {
            let (location, stack) = ctx.frames(known_site(a.site), &a.stack);
            Access {
                tid: a.thread.tid,
                kind: if a.unmap {
                    AccessName::Unmap
                } else if a.free {
                    AccessName::Free
                } else if a.destroy {
                    AccessName::Destroy
                } else {
                    a.kind.into()
                },
                addr: a.addr,
                size: a.size,
                location,
                stack,
                locks: held(ctx, &a.locks, Some(o.load_base)),
            }
        };
        out.push(stamp(Finding::Race(Race {
            fingerprint: String::new(),
            run: 1,
            runs: vec![1],
            candidates: vec![entry.number],
            pid: run.pid,
            replay_dir: replay_dir.clone(),
            current: access(&r.current),
            previous: access(&r.previous),
            object: ctx.object(r.current.addr, Some(o.load_base)),
            heap_block: r.heap_block.as_ref().map(|b| heap_block(ctx, b)),
            threads: threads(ctx, Some(o), [r.current.thread.tid, r.previous.thread.tid]),
            schedule: schedule.clone(),
        })));
    }
    if let (
        ResultKind::Atomicity,
        Candidate::Atomicity {
            object,
            begin,
            accesses,
            pattern,
            ..
        },
    ) = (o.result, entry.candidate)
    {
        // The candidate's addresses are the recorded run's: its object is named from there.
        let access = |a: &AccessSide| Access {
            tid: a.tid,
            kind: a.access,
            addr: object.addr,
            size: object.len as u32,
            location: ctx.location(known_site(a.site)),
            stack: Vec::new(),
            locks: Vec::new(),
        };
        out.push(stamp(Finding::Atomicity(Atomicity {
            fingerprint: String::new(),
            run: 1,
            runs: vec![1],
            candidates: vec![entry.number],
            pid: run.pid,
            replay_dir: replay_dir.clone(),
            pattern: *pattern,
            transaction: ctx.location(begin.site),
            e1: access(&accesses[0]),
            f: access(&accesses[1]),
            e2: access(&accesses[2]),
            object: ctx.object(object.addr, None),
            threads: threads(ctx, Some(o), accesses.iter().map(|a| a.tid)),
            schedule: schedule.clone(),
        })));
    }
    if let Some(d) = &o.deadlock {
        out.push(stamp(Finding::Deadlock(Deadlock {
            fingerprint: String::new(),
            run: 1,
            runs: vec![1],
            candidates: vec![entry.number],
            observed: false,
            pid: run.pid,
            replay_dir,
            blocked: blocked(ctx, d, Some(o.load_base)),
            cycle: d.cycle.clone(),
            threads: threads(ctx, Some(o), d.threads.iter().map(|b| b.thread.tid)),
            schedule,
            lost_wakeups: Vec::new(),
        })));
    }
    out
}

/// The blocked threads of a deadlock of a process that loaded the executable at `base` (`None`:
/// the recorded run).
fn blocked(ctx: &Context, d: &DeadlockReport, base: Option<u64>) -> Vec<Blocked> {
    let name = |addr| ctx.object(addr, base);
    d.threads
        .iter()
        .map(|b| {
            let (location, stack) = ctx.frames(b.site, &b.stack);
            Blocked {
                tid: b.thread.tid,
                // The runtime names a condition wait's second half "wake"; a thread stuck there
                // is, to the programmer, stuck in pthread_cond_wait.
                op: if b.op == OpKind::Wake {
                    OpKind::Wait
                } else {
                    b.op
                },
                object: b.object,
                object_name: name(b.object),
                location,
                stack,
                waits_for: b.waits_for.clone(),
                holds: held(ctx, &b.holds, base),
            }
        })
        .collect()
}

/// Locks held, named, each with where it was acquired, in a process that loaded the executable
/// at `base` (`None`: the recorded run).
fn held(ctx: &Context, holds: &[HeldLock], base: Option<u64>) -> Vec<Held> {
    holds
        .iter()
        .map(|h| {
            let (location, stack) = ctx.frames(h.site, &h.stack);
            Held {
                object: h.object,
                object_name: ctx.object(h.object, base),
                location,
                stack,
            }
        })
        .collect()
}

/// The threads of a finding, each once, by tid.
/// Threads `tids`, with the stacks that created them in the replay of `created` (none for a
/// deadlock the recorded run ended in).
fn threads(
    ctx: &Context,
    created: Option<&Outcome>,
    tids: impl IntoIterator<Item = ThreadId>,
) -> Vec<ThreadInfo> {
    let tids: BTreeSet<ThreadId> = tids.into_iter().collect();
    let stack = |t| {
        created
            .and_then(|o| o.created.get(&t))
            .map_or(&[][..], Vec::as_slice)
    };
    tids.into_iter().map(|t| ctx.thread(t, stack(t))).collect()
}

/// `c`'s schedule as its replay `o` followed it: its last [`SHOWN_STEPS`] steps, each at the
/// user's line the replay took it from (the first frame of its stack in the user's code, as
/// [`Context::frames`] puts first: at -O0 a lock's `std::lock_guard` line, not
/// `gthr-default.h`), and where the replay left it.
fn schedule(ctx: &Context, c: &Candidate, o: &Outcome) -> Schedule {
    let steps = c.schedule().len();
    let hidden = steps.saturating_sub(SHOWN_STEPS);
    let last = c
        .schedule()
        .steps()
        .enumerate()
        .skip(hidden)
        .map(|(p, s)| ScheduleStep {
            tid: s.tid,
            op: s.op,
            peer: s.peer,
            object: s.object,
            object_name: s.object.and_then(|a| ctx.object(a, None)),
            location: match o.step_stack(p) {
                Some(stack) => ctx.frames(s.site, stack).0,
                None => ctx.location(s.site),
            },
        })
        .collect();
    let left = o
        .divergence
        .as_ref()
        .map(|d| format!("step {} of {} ({})", o.steps_done, o.steps_total, d.reason));
    Schedule { steps, last, left }
}

/// What `c` predicted, and where: the sites of [`Unconfirmed::locations`].
fn predicted(ctx: &Context, c: &Candidate) -> (Predicted, Vec<Location>) {
    match c {
        Candidate::Race { accesses, .. } => (
            Predicted::Race,
            accesses
                .iter()
                .map(|a| ctx.location(known_site(a.site)))
                .collect(),
        ),
        Candidate::Deadlock { blocked, .. } => (
            Predicted::Deadlock,
            blocked.iter().map(|b| ctx.location(b.site)).collect(),
        ),
        Candidate::Atomicity {
            begin, accesses, ..
        } => (
            Predicted::AtomicityViolation,
            std::iter::once(ctx.location(begin.site))
                .chain(accesses.iter().map(|a| ctx.location(known_site(a.site))))
                .collect(),
        ),
    }
}

fn unconfirmed(ctx: &Context, entry: &Entry) -> Unconfirmed {
    let (predicted, locations) = predicted(ctx, entry.candidate);
    let reason = match entry.verdict.class {
        // Confirmed by its class but without an outcome to show: cannot happen, say so.
        Class::ConfirmedRace | Class::ConfirmedDeadlock | Class::ConfirmedAtomicity => {
            "the replay left no outcome".into()
        }
        _ => entry.verdict.reason.clone(),
    };
    Unconfirmed {
        run: 1,
        candidate: entry.number,
        predicted,
        fallback_of: entry.candidate.fallback_of(),
        verdict: entry.verdict.class,
        reason,
        locations,
    }
}

#[cfg(test)]
mod tests;
