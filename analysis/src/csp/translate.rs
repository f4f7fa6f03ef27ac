//! The reorder model as a CSP_M script: the paper's Figures 1-3, extended to every primitive.
//!
//! Takes a [`Model`] (the whole trace as one window), what to check ([`Target`]) and how to name
//! objects; gives an [`Exported`] script (datatypes, channels, one process per thread, one per
//! sync object, PROGRAM, the RACE monitor and the assertions) together with, per thread, the model
//! events its process performs in order, so that a counterexample trace can be mapped back to a
//! schedule ([`super::counterexample`]).
//!
//! The script means exactly what the native solver computes: each sync object is a finite
//! automaton enumerated from the transitions of [`crate::semantics`], the ones the native
//! [`crate::state`] runs, so the CSP side never restates them. Names follow the paper: threads
//! `t1..tn` (ilgen's T0 is `t1`), `THREAD_1`, `MUTEX_m`, `FORK_2`, `JOIN_2`, `PROGRAM`, `RACE(v)`.
//!
//! How the native model's corner cases are written:
//! - main (T0) returning ends the process, and so does a thread whose last operation is
//!   `exit()` (`Model::ends_process`), so such a process ends in `EXITED = exited -> EXITED`:
//!   threads still blocked then are no deadlock. The exit itself (`exit.ti`, [`ModelOp::Exit`])
//!   is ratified by `PROCESS`, which takes part in every sync event and allows none after it
//!   ([`crate::semantics::process`]): after exit, no thread takes a step, as in the native model. A thread whose last operation never completed in
//!   the run goes on beyond the trace (`RUNNING_i = running.ti -> RUNNING_i`). Other threads end in
//!   SKIP. So FDR's deadlock check (and ours) never mistakes termination for deadlock: the
//!   PROGRAM never terminates at all.
//! - A wait-loop exit whose signal has not come yet may release the loop's mutex to wait
//!   (`release.ti.c.m`) and leave later (`loopexit.ti.c.m`), as [`State::release_to_wait`]
//!   allows.
//! - A bare `pthread_cond_wait` (no wait loop around it) enters with `bwait.ti.m.c`, which its
//!   condition instance sees: a signal before it is lost to it.
//!
//! [`State::release_to_wait`]: crate::state::State::release_to_wait

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use ilgen_csp::ast::{Assertion, Expr, Field, Item, Proc, Script, SetExpr};
use ilgen_trace::AccessKind;

use crate::model::{Model, ModelEvent, ModelOp, TryTarget, VarId, Wake};
use crate::semantics::{
    self, BarrierOp, CondOp, Creation, CreationOp, MutexOp, ProcessOp, RwLock, RwOp, SemOp,
    Termination, TerminationOp,
};

/// What a script is built to decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Races on these variables (one RACE assertion each) and deadlocks, on the model as given.
    All { vars: Vec<VarId> },
    /// Races on one variable: the model should be restricted to it.
    Race { var: VarId },
    /// Deadlocks: the model should hold sync events only.
    Deadlock,
}

/// How objects are called in the script (symbols from the binary's debug info, when at hand).
pub struct Naming<'a> {
    pub var: &'a dyn Fn(VarId) -> Option<String>,
    /// A mutex, rwlock, semaphore or barrier by address.
    pub object: &'a dyn Fn(u64) -> Option<String>,
}

impl Naming<'_> {
    /// Generic names only: what the solver uses, where no human reads the script.
    pub fn plain() -> Naming<'static> {
        Naming {
            var: &|_| None,
            object: &|_| None,
        }
    }
}

pub struct Exported {
    pub script: Script,
    /// Per thread of the model: the indices of the events its process performs, in order (an
    /// event that may happen in two ways, a wait-loop exit, is listed once).
    pub performs: Vec<Vec<usize>>,
    /// `t1..tn`, by thread index.
    pub thread_names: Vec<String>,
}

/// Channels that are no thread's event, or not a model event: the mapping back skips them.
pub const RACE: &str = "race";
pub const EXITED: &str = "exited";
/// The process main ends in: `EXITED = exited -> EXITED`.
const EXITED_PROC: &str = "EXITED";
pub const RUNNING: &str = "running";
pub const RELEASE: &str = "release";
/// A thread at a try operation whose recorded outcome cannot happen now would take the other
/// branch: it is never blocked there (`diverted.ti` loops), as [`State::escapes`] rules.
///
/// [`State::escapes`]: crate::state::State::escapes
pub const DIVERTED: &str = "diverted";

/// The accesses a monitor tells apart, with the channel of each: atomics never race with atomics.
const ACCESS_CHANNELS: [(AccessKind, &str); 4] = [
    (AccessKind::Read, "read"),
    (AccessKind::Write, "write"),
    (AccessKind::AtomicRead, "aread"),
    (AccessKind::AtomicWrite, "awrite"),
];

/// Whether the event named `event` (`lock.t2.m`) is a sync event, not an access or the monitor's
/// `race`: what a counterexample projects to, as the paper shows schedules.
pub fn is_sync_event(event: &str) -> bool {
    let channel = event.split('.').next().unwrap_or_default();
    channel != RACE && !ACCESS_CHANNELS.iter().any(|(_, c)| *c == channel)
}

fn access_channel(kind: AccessKind) -> &'static str {
    ACCESS_CHANNELS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or("write", |(_, c)| c)
}

/// The type of each field of each sync channel, in declaration order. Access channels and the
/// plain events are declared apart.
const SYNC_CHANNELS: &[(&str, &[&str])] = &[
    ("start", &["Threads"]),
    ("end", &["Threads"]),
    ("fork", &["Threads", "Threads"]),
    ("join", &["Threads", "Threads"]),
    ("lock", &["Threads", "Mutexes"]),
    ("unlock", &["Threads", "Mutexes"]),
    ("trylock", &["Threads", "Mutexes"]),
    ("wait", &["Threads", "Mutexes"]),
    ("bwait", &["Threads", "Mutexes", "Conds"]),
    ("wake", &["Threads", "Mutexes", "Conds"]),
    ("timedout", &["Threads", "Mutexes"]),
    ("signal", &["Threads", "Conds"]),
    ("loopexit", &["Threads", "Conds", "Mutexes"]),
    (RELEASE, &["Threads", "Conds", "Mutexes"]),
    ("leave", &["Threads", "Conds"]),
    ("rdlock", &["Threads", "RwLocks"]),
    ("wrlock", &["Threads", "RwLocks"]),
    ("rwunlock", &["Threads", "RwLocks"]),
    ("tryrdlock", &["Threads", "RwLocks"]),
    ("trywrlock", &["Threads", "RwLocks"]),
    ("semwait", &["Threads", "Sems"]),
    ("sempost", &["Threads", "Sems"]),
    ("trywait", &["Threads", "Sems"]),
    // A wait or post of other than one unit: a read or write of a stream between threads.
    ("semtake", &["Threads", "Sems", "Units"]),
    ("semgive", &["Threads", "Sems", "Units"]),
    ("benter", &["Threads", "Barriers"]),
    ("bexit", &["Threads", "Barriers"]),
    (EXIT, &["Threads"]),
];

/// The exit that ends the process ([`ModelOp::Exit`]): no object ratifies it, [`PROCESS`] does.
const EXIT: &str = "exit";
/// The process as a whole: it takes every sync event until `exit`, then none
/// ([`semantics::process`]).
const PROCESS: &str = "PROCESS";

/// Channels both a mutex and a condition instance take part in.
const MUTEX_COND_CHANNELS: [&str; 4] = ["bwait", "wake", "loopexit", RELEASE];

/// One event of the script: a channel and its fields (constructor names).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Ev {
    channel: &'static str,
    fields: Vec<String>,
}

impl Ev {
    fn new(channel: &'static str, fields: &[&str]) -> Ev {
        Ev {
            channel,
            fields: fields.iter().map(|f| f.to_string()).collect(),
        }
    }

    fn prefix(&self, then: Proc) -> Proc {
        Proc::Prefix {
            event: Expr::Name(self.channel.into()),
            fields: self
                .fields
                .iter()
                .map(|f| Field::Dot(Expr::Name(f.clone())))
                .collect(),
            then: Box::new(then),
        }
    }
}

/// Which sync object an event belongs to (a mutex-and-condition event belongs to both).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Obj {
    Mutex(usize),
    Cond(usize),
    Rw(usize),
    Sem(usize),
    Barrier(usize),
    /// Thread creation: fork and start of this thread.
    Fork(usize),
    /// Thread end and the joins of this thread.
    Join(usize),
}

/// A step of a thread process before it is written out.
enum Step {
    Event(Ev),
    /// A wait-loop exit that may first release its mutex.
    LoopExit {
        exit: Ev,
        release: Ev,
    },
    /// A try or timed operation: it happens with its recorded outcome (a failure while its
    /// object is busy, an acquisition while it is free); until then the thread may divert (and so
    /// is never blocked here).
    Try {
        event: Ev,
        divert: Ev,
    },
    /// The thread blocks for good here (a wait nothing can wake).
    Block,
}

impl Step {
    /// Every event the thread may perform at this step.
    fn events(&self) -> Vec<&Ev> {
        match self {
            Step::Event(e) => vec![e],
            Step::LoopExit { exit, release } => vec![exit, release],
            Step::Try { event, divert } => vec![event, divert],
            Step::Block => vec![],
        }
    }

    /// The step as a process: `here` is the step itself (where a diversion comes back to), `next`
    /// what follows it.
    fn process(&self, here: Proc, next: Proc) -> Proc {
        match self {
            Step::Event(e) => e.prefix(next),
            Step::LoopExit { exit, release } => Proc::ExtChoice(
                Box::new(exit.prefix(next.clone())),
                Box::new(release.prefix(exit.prefix(next))),
            ),
            Step::Try { event, divert } => {
                Proc::ExtChoice(Box::new(event.prefix(next)), Box::new(divert.prefix(here)))
            }
            Step::Block => Proc::Stop,
        }
    }
}

struct Names {
    threads: Vec<String>,
    mutexes: Vec<String>,
    rwlocks: Vec<String>,
    sems: Vec<String>,
    /// Each count of units other than one that a semaphore wait or post moves, by count.
    units: BTreeMap<u32, String>,
    conds: Vec<String>,
    barriers: Vec<String>,
    vars: BTreeMap<VarId, String>,
}

/// The names the script defines itself: a derived name must be none of these, nor a CSP_M word
/// ([`ilgen_csp::typecheck::is_taken_by_csp`]).
const OWN_NAMES: &[&str] = &[
    "PROGRAM", "PROCESS", "RACE", "RACE_ERR", "EXITED", "Threads", "Mutexes", "Conds", "RwLocks",
    "Sems", "Units", "Barriers", "Vars", "read", "write", "aread", "awrite", RACE, EXITED, RUNNING,
    DIVERTED,
];

/// The prefixes of the process names the script derives (`MUTEX_m`, `FORK_2`, ...).
const PROCESS_PREFIXES: &[&str] = &[
    "THREAD_", "RUNNING_", "PROCESS_", "MUTEX_", "COND_", "RWLOCK_", "SEM_", "BARRIER_", "FORK_",
    "JOIN_",
];

/// A CSP_M identifier from a symbol ("stats+8" becomes "stats_8"), unique among `taken`.
fn ident(raw: &str, fallback: &str, taken: &mut BTreeSet<String>) -> String {
    let mut s: String = raw
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    s = s.trim_matches('_').to_string();
    if s.is_empty() || !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        s = fallback.to_string();
    }
    let reserved = |s: &str| {
        OWN_NAMES.contains(&s)
            || ilgen_csp::typecheck::is_taken_by_csp(s)
            || SYNC_CHANNELS.iter().any(|(c, _)| *c == s)
            || PROCESS_PREFIXES.iter().any(|p| s.starts_with(p))
    };
    let mut name = s.clone();
    let mut n = 1;
    while reserved(&name) || taken.contains(&name) {
        n += 1;
        name = format!("{s}_{n}");
    }
    taken.insert(name.clone());
    name
}

impl Names {
    fn new(model: &Model, vars: &[VarId], naming: &Naming) -> Names {
        let mut taken = BTreeSet::new();
        let threads = model
            .threads
            .iter()
            .map(|t| ident(&format!("t{}", t.tid + 1), "t", &mut taken))
            .collect();
        let o = &model.objects;
        let mut objects = |addrs: Vec<u64>, stem: &str| -> Vec<String> {
            addrs
                .iter()
                .enumerate()
                .map(|(i, &a)| {
                    let fallback = format!("{stem}{}", i + 1);
                    let raw = (naming.object)(a).unwrap_or_else(|| fallback.clone());
                    ident(&raw, &fallback, &mut taken)
                })
                .collect()
        };
        let mutexes = objects(o.mutexes.iter().map(|m| m.addr).collect(), "m");
        let rwlocks = objects(o.rwlocks.clone(), "rw");
        let sems = objects(o.sems.iter().map(|s| s.addr).collect(), "sem");
        let counts: BTreeSet<u32> = model
            .threads
            .iter()
            .flat_map(|t| &t.events)
            .filter_map(|e| match e.op()? {
                ModelOp::SemWait { units, .. } | ModelOp::SemPost { units, .. } => Some(units),
                _ => None,
            })
            .filter(|&u| u != 1)
            .collect();
        let units = counts
            .into_iter()
            .map(|u| (u, ident(&format!("u{u}"), "u", &mut taken)))
            .collect();
        // Condition and barrier instances: one per use, so numbered rather than named.
        let conds = (1..=o.conds.len())
            .map(|i| ident(&format!("c{i}"), "c", &mut taken))
            .collect();
        let barriers = (1..=o.barriers.len())
            .map(|i| ident(&format!("b{i}"), "b", &mut taken))
            .collect();
        let vars = vars
            .iter()
            .map(|&v| {
                let fallback = format!("v{}", v + 1);
                let raw = (naming.var)(v).unwrap_or_else(|| fallback.clone());
                (v, ident(&raw, &fallback, &mut taken))
            })
            .collect();
        Names {
            threads,
            mutexes,
            rwlocks,
            sems,
            units,
            conds,
            barriers,
            vars,
        }
    }
}

/// The condition instance a bare wait (index `release` of `thread`) is woken by.
fn bare_wait_cond(model: &Model, thread: usize, release: usize) -> Option<usize> {
    model
        .sources()
        .bare_waits_of
        .iter()
        .find(|(_, list)| list.contains(&(thread, release)))
        .map(|(&cond, _)| cond)
}

/// Per thread: its steps, each with the index of the model event it performs.
fn thread_steps(model: &Model, names: &Names) -> Vec<Vec<(usize, Step)>> {
    model
        .threads
        .iter()
        .enumerate()
        .map(|(t, thread)| {
            let me = names.threads[t].as_str();
            let mut steps = Vec::new();
            for (i, e) in thread.events.iter().enumerate() {
                let step = match *e {
                    ModelEvent::Access { var, kind, .. } => match names.vars.get(&(var as VarId)) {
                        Some(v) => Step::Event(Ev::new(access_channel(kind), &[me, v])),
                        // Accesses to variables the script does not check are left out.
                        None => continue,
                    },
                    ModelEvent::Sync { op, .. } => match sync_step(model, names, t, i, op.get()) {
                        Some(step) => step,
                        None => continue,
                    },
                };
                steps.push((i, step));
            }
            steps
        })
        .collect()
}

fn sync_step(model: &Model, names: &Names, t: usize, i: usize, op: ModelOp) -> Option<Step> {
    let me = names.threads[t].as_str();
    let th = |c: usize| names.threads[c].as_str();
    let m = |x: usize| names.mutexes[x].as_str();
    let c = |x: usize| names.conds[x].as_str();
    let ev = match op {
        // A thread no recorded thread forks (main) starts unconstrained: like a no-op, its start is
        // scheduled with its next event, and the model reads as the paper's.
        ModelOp::Start { forked: false } => return None,
        ModelOp::Start { forked: true } => Ev::new("start", &[me]),
        ModelOp::End => Ev::new("end", &[me]),
        ModelOp::Fork { child } => Ev::new("fork", &[me, th(child)]),
        ModelOp::Join { child } => Ev::new("join", &[me, th(child)]),
        ModelOp::Lock { mutex } => Ev::new("lock", &[me, m(mutex)]),
        ModelOp::Unlock { mutex } => Ev::new("unlock", &[me, m(mutex)]),
        ModelOp::ReadLock { rw } => Ev::new("rdlock", &[me, &names.rwlocks[rw]]),
        ModelOp::WriteLock { rw } => Ev::new("wrlock", &[me, &names.rwlocks[rw]]),
        ModelOp::RwUnlock { rw } => Ev::new("rwunlock", &[me, &names.rwlocks[rw]]),
        ModelOp::WaitRelease { mutex } => match bare_wait_cond(model, t, i) {
            Some(cond) => Ev::new("bwait", &[me, m(mutex), c(cond)]),
            None => Ev::new("wait", &[me, m(mutex)]),
        },
        ModelOp::WaitReturn { mutex, wake } => match wake {
            Wake::Signal(cond) => Ev::new("wake", &[me, m(mutex), c(cond)]),
            Wake::Unsignalled => Ev::new("timedout", &[me, m(mutex)]),
            Wake::Never => return Some(Step::Block),
        },
        ModelOp::Signal { cond } => Ev::new("signal", &[me, c(cond)]),
        ModelOp::LoopExit {
            cond,
            mutex: Some(mutex),
        } => {
            return Some(Step::LoopExit {
                exit: Ev::new("loopexit", &[me, c(cond), m(mutex)]),
                release: Ev::new(RELEASE, &[me, c(cond), m(mutex)]),
            })
        }
        ModelOp::LoopExit { cond, mutex: None } => Ev::new("leave", &[me, c(cond)]),
        ModelOp::BarrierEnter { barrier } => Ev::new("benter", &[me, &names.barriers[barrier]]),
        ModelOp::BarrierExit { barrier } => Ev::new("bexit", &[me, &names.barriers[barrier]]),
        ModelOp::Exit => Ev::new(EXIT, &[me]),
        ModelOp::SemWait { sem, units: 1 } => Ev::new("semwait", &[me, &names.sems[sem]]),
        ModelOp::SemPost { sem, units: 1 } => Ev::new("sempost", &[me, &names.sems[sem]]),
        ModelOp::SemWait { sem, units } => {
            Ev::new("semtake", &[me, &names.sems[sem], &names.units[&units]])
        }
        ModelOp::SemPost { sem, units } => {
            Ev::new("semgive", &[me, &names.sems[sem], &names.units[&units]])
        }
        ModelOp::TryFail { target } => {
            let fail = match target {
                TryTarget::Mutex(x) => Ev::new("trylock", &[me, m(x)]),
                TryTarget::RwRead(rw) => Ev::new("tryrdlock", &[me, &names.rwlocks[rw]]),
                TryTarget::RwWrite(rw) => Ev::new("trywrlock", &[me, &names.rwlocks[rw]]),
                TryTarget::Sem(sem) => Ev::new("trywait", &[me, &names.sems[sem]]),
            };
            return Some(Step::Try {
                event: fail,
                divert: Ev::new(DIVERTED, &[me]),
            });
        }
        // Constrains nothing: the thread runs it with its segment.
        ModelOp::Nop => return None,
    };
    Some(if model.threads[t].acquires_by_try(i) {
        Step::Try {
            event: ev,
            divert: Ev::new(DIVERTED, &[me]),
        }
    } else {
        Step::Event(ev)
    })
}

/// Prefixes per definition: keeps each right-nested chain shallow for parsers and readers.
const CHAIN: usize = 48;

/// A thread's process: its events as prefix chains, split into `THREAD_i_k` definitions at each
/// branching step (wait-loop exit, failed try) and every [`CHAIN`] events, then its ending.
fn thread_defs(model: &Model, t: usize, steps: &[(usize, Step)]) -> Vec<Item> {
    let tid = model.threads[t].tid;
    let base = format!("THREAD_{}", tid + 1);
    let part = |k: usize| {
        if k == 0 {
            base.clone()
        } else {
            format!("{base}_{k}")
        }
    };
    let mut defs = Vec::new();
    let mut k = 0;
    let mut chain: Vec<&Ev> = Vec::new();
    let close = |chain: &mut Vec<&Ev>, tail: Proc| -> Proc {
        chain.drain(..).rev().fold(tail, |then, e| e.prefix(then))
    };
    let mut tail = ending(model, t).process(tid);
    let mut iter = steps.iter().peekable();
    while let Some((_, step)) = iter.next() {
        match step {
            Step::Event(e) => {
                chain.push(e);
                if chain.len() >= CHAIN && iter.peek().is_some() {
                    defs.push(def(part(k), close(&mut chain, call(&part(k + 1)))));
                    k += 1;
                }
            }
            Step::LoopExit { .. } | Step::Try { .. } => {
                defs.push(def(part(k), close(&mut chain, call(&part(k + 1)))));
                k += 1;
                let body = step.process(call(&part(k)), call(&part(k + 1)));
                defs.push(def(part(k), body));
                k += 1;
            }
            Step::Block => {
                tail = Proc::Stop;
                break;
            }
        }
    }
    defs.push(def(part(k), close(&mut chain, tail)));
    defs
}

/// How a thread's process ends once it ran all its events (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    /// It terminates.
    Skip,
    /// It is main: the process exits (`EXITED`).
    Exited,
    /// It was blocked when the run ended and may go on beyond the trace (`RUNNING_i`).
    Running,
}

impl Ending {
    fn process(self, tid: u32) -> Proc {
        match self {
            Ending::Skip => Proc::Skip,
            Ending::Exited => call(EXITED_PROC),
            Ending::Running => call(&running_proc(tid)),
        }
    }
}

fn running_proc(tid: u32) -> String {
    format!("RUNNING_{}", tid + 1)
}

fn ending(model: &Model, t: usize) -> Ending {
    let last_stop = model.threads[t]
        .events
        .iter()
        .rposition(ModelEvent::constrains);
    if last_stop.is_some_and(|s| model.ran_pending(t, s + 1)) {
        Ending::Running
    } else if model.ends_process(t) {
        Ending::Exited
    } else {
        Ending::Skip
    }
}

fn def(name: String, body: Proc) -> Item {
    Item::Def {
        name,
        params: vec![],
        body,
    }
}

/// A finite automaton written as one definition per state: `NAME` for the initial state,
/// `NAME_1`, `NAME_2`, ... for the others in breadth-first order; a state with no move is STOP.
/// `step` gives the state after an alphabet entry (thread, event, operation), if it is allowed.
fn automaton<S: Clone + Eq + std::hash::Hash>(
    name: &str,
    initial: S,
    alphabet: &Alphabet,
    step: impl Fn(&S, usize, &Ev, ModelOp) -> Option<S>,
) -> Vec<Item> {
    let state_name = |i: usize| {
        if i == 0 {
            name.to_string()
        } else {
            format!("{name}_{i}")
        }
    };
    let mut index: HashMap<S, usize> = HashMap::from([(initial.clone(), 0)]);
    let mut queue = VecDeque::from([initial]);
    let mut defs = Vec::new();
    while let Some(s) = queue.pop_front() {
        let mut moves = Vec::new();
        for (t, e, op) in alphabet {
            let Some(next) = step(&s, *t, e, *op) else {
                continue;
            };
            let n = match index.get(&next) {
                Some(&n) => n,
                None => {
                    let n = index.len();
                    index.insert(next.clone(), n);
                    queue.push_back(next);
                    n
                }
            };
            moves.push(e.prefix(call(&state_name(n))));
        }
        let body = join_all(moves, Proc::ExtChoice).unwrap_or(Proc::Stop);
        defs.push(def(state_name(defs.len()), body));
    }
    defs
}

/// The events of the thread processes per sync object, in a fixed order: the automata's alphabets.
/// Each entry: the thread, the event, and the model operation it stands for.
type Alphabet = Vec<(usize, Ev, ModelOp)>;

fn alphabets(model: &Model, steps: &[Vec<(usize, Step)>]) -> BTreeMap<Obj, Alphabet> {
    let mut out: BTreeMap<Obj, Alphabet> = BTreeMap::new();
    for (t, list) in steps.iter().enumerate() {
        for (i, step) in list {
            let Some(op) = model.threads[t].events[*i].op() else {
                continue;
            };
            // A diversion is the thread's own move: no object ratifies it.
            for e in step.events().into_iter().filter(|e| e.channel != DIVERTED) {
                for obj in objects_of(model, t, *i, op) {
                    let list = out.entry(obj).or_default();
                    if !list.iter().any(|(u, f, _)| *u == t && f == e) {
                        list.push((t, e.clone(), op));
                    }
                }
            }
        }
    }
    for list in out.values_mut() {
        list.sort_by(|a, b| (&a.1, a.0).cmp(&(&b.1, b.0)));
    }
    out
}

/// The sync objects event `index` of `thread` (operation `op`) takes part in.
fn objects_of(model: &Model, thread: usize, index: usize, op: ModelOp) -> Vec<Obj> {
    match op {
        ModelOp::Start { .. } => vec![Obj::Fork(thread)],
        ModelOp::Fork { child } => vec![Obj::Fork(child)],
        ModelOp::End => vec![Obj::Join(thread)],
        ModelOp::Join { child } => vec![Obj::Join(child)],
        ModelOp::Lock { mutex } | ModelOp::Unlock { mutex } => vec![Obj::Mutex(mutex)],
        ModelOp::WaitRelease { mutex } => {
            let mut v = vec![Obj::Mutex(mutex)];
            v.extend(bare_wait_cond(model, thread, index).map(Obj::Cond));
            v
        }
        ModelOp::WaitReturn { mutex, wake } => match wake {
            Wake::Signal(c) => vec![Obj::Mutex(mutex), Obj::Cond(c)],
            Wake::Unsignalled | Wake::Never => vec![Obj::Mutex(mutex)],
        },
        ModelOp::Signal { cond } => vec![Obj::Cond(cond)],
        ModelOp::LoopExit { cond, mutex } => {
            let mut v = vec![Obj::Cond(cond)];
            v.extend(mutex.map(Obj::Mutex));
            v
        }
        ModelOp::ReadLock { rw } | ModelOp::WriteLock { rw } | ModelOp::RwUnlock { rw } => {
            vec![Obj::Rw(rw)]
        }
        ModelOp::SemWait { sem, .. } | ModelOp::SemPost { sem, .. } => vec![Obj::Sem(sem)],
        ModelOp::BarrierEnter { barrier } | ModelOp::BarrierExit { barrier } => {
            vec![Obj::Barrier(barrier)]
        }
        ModelOp::TryFail { target } => vec![match target {
            TryTarget::Mutex(m) => Obj::Mutex(m),
            TryTarget::RwRead(rw) | TryTarget::RwWrite(rw) => Obj::Rw(rw),
            TryTarget::Sem(sem) => Obj::Sem(sem),
        }],
        ModelOp::Exit | ModelOp::Nop => vec![],
    }
}

/// What an operation does to a thread's nesting of one object ([`nesting`]).
enum Nest {
    In,
    Out,
    /// Released whatever the depth (a condition wait).
    Reset,
}

/// The deepest a thread nests one object along its own events (at least 1): a bound on the
/// recursion of a mutex or the read locks of an rwlock that keeps automata finite.
fn nesting(model: &Model, thread: usize, nest: impl Fn(ModelOp) -> Option<Nest>) -> u32 {
    let (mut depth, mut max) = (0u32, 1u32);
    for e in &model.threads[thread].events {
        if let Some(op) = e.op() {
            match nest(op) {
                Some(Nest::In) => depth += 1,
                Some(Nest::Out) => depth = depth.saturating_sub(1),
                Some(Nest::Reset) => depth = 0,
                None => continue,
            }
            max = max.max(depth);
        }
    }
    max
}

/// The automaton of one sync object: its states are those the transitions of
/// [`crate::semantics`] reach from the initial one over the object's alphabet. An alphabet
/// entry names the model operation; the event tells a wait-loop exit's release from the exit.
fn object_defs(model: &Model, obj: Obj, alphabet: &Alphabet, names: &Names) -> Vec<Item> {
    let child = |c: usize| model.threads[c].tid + 1;
    match obj {
        Obj::Mutex(m) => {
            let recursive = model.objects.mutexes[m].recursive;
            let depth: Vec<u32> = (0..model.threads.len())
                .map(|t| {
                    nesting(model, t, |op| match op {
                        ModelOp::Lock { mutex } if mutex == m => Some(Nest::In),
                        ModelOp::Unlock { mutex } if mutex == m => Some(Nest::Out),
                        ModelOp::WaitRelease { mutex } if mutex == m => Some(Nest::Reset),
                        _ => None,
                    })
                })
                .collect();
            let name = format!("MUTEX_{}", names.mutexes[m]);
            automaton(&name, None, alphabet, |&s, t, e, op| {
                let op = match op {
                    ModelOp::Lock { .. } => MutexOp::Lock,
                    ModelOp::Unlock { .. } => MutexOp::Unlock,
                    ModelOp::WaitRelease { .. } => MutexOp::WaitRelease,
                    ModelOp::WaitReturn { .. } => MutexOp::WaitReturn,
                    ModelOp::LoopExit { .. } if e.channel == RELEASE => MutexOp::LoopRelease,
                    ModelOp::LoopExit { .. } => MutexOp::LoopExit,
                    ModelOp::TryFail { .. } => MutexOp::TryFail,
                    _ => return None,
                };
                semantics::mutex(s, t, op, recursive, depth[t])
            })
        }
        Obj::Cond(c) => {
            let bare: BTreeSet<usize> = model
                .sources()
                .bare_waits_of
                .get(&c)
                .into_iter()
                .flatten()
                .map(|&(t, _)| t)
                .collect();
            // (signalled, bare waiters that entered their wait before it / lost the signal)
            let name = format!("COND_{}", names.conds[c]);
            automaton(
                &name,
                (false, BTreeSet::<usize>::new()),
                alphabet,
                |(sig, set), t, e, op| {
                    let op = match op {
                        ModelOp::Signal { .. } => CondOp::Signal,
                        ModelOp::WaitRelease { .. } => CondOp::Enter,
                        ModelOp::WaitReturn { .. } => CondOp::Wake,
                        ModelOp::LoopExit { .. } if e.channel == RELEASE => CondOp::LoopRelease,
                        ModelOp::LoopExit { .. } => CondOp::LoopExit,
                        _ => return None,
                    };
                    let lost = *sig && set.contains(&t);
                    semantics::condition(*sig, lost, op).then(|| match op {
                        CondOp::Signal => {
                            let entered = bare.iter().map(|&w| (w, set.contains(&w)));
                            (true, semantics::lost_to(entered).collect())
                        }
                        CondOp::Enter if !sig => {
                            let mut entered = set.clone();
                            entered.insert(t);
                            (false, entered)
                        }
                        _ => (*sig, set.clone()),
                    })
                },
            )
        }
        Obj::Rw(r) => {
            let depth: Vec<u32> = (0..model.threads.len())
                .map(|t| {
                    nesting(model, t, |op| match op {
                        ModelOp::ReadLock { rw } if rw == r => Some(Nest::In),
                        ModelOp::RwUnlock { rw } if rw == r => Some(Nest::Out),
                        _ => None,
                    })
                })
                .collect();
            let name = format!("RWLOCK_{}", names.rwlocks[r]);
            automaton(&name, RwLock::default(), alphabet, |s, t, _, op| {
                let op = match op {
                    ModelOp::ReadLock { .. } => RwOp::Read,
                    ModelOp::WriteLock { .. } => RwOp::Write,
                    ModelOp::RwUnlock { .. } => RwOp::Unlock,
                    ModelOp::TryFail {
                        target: TryTarget::RwRead(_),
                    } => RwOp::TryReadFail,
                    ModelOp::TryFail {
                        target: TryTarget::RwWrite(_),
                    } => RwOp::TryWriteFail,
                    _ => return None,
                };
                s.allows(t, op, depth[t]).then(|| {
                    let mut next = s.clone();
                    next.apply(t, op);
                    // Which thread took a read lock first matters to no transition: one state.
                    next.readers.sort_unstable();
                    next
                })
            })
        }
        Obj::Sem(s) => {
            let initial = model.objects.sems[s].initial;
            let posts = model
                .threads
                .iter()
                .flat_map(|t| &t.events)
                .filter_map(|e| match e.op() {
                    Some(ModelOp::SemPost { sem, units }) if sem == s => Some(units),
                    _ => None,
                })
                .fold(0u32, u32::saturating_add);
            let cap = initial.saturating_add(posts);
            let name = format!("SEM_{}", names.sems[s]);
            automaton(&name, initial, alphabet, |&n, _, _, op| {
                let op = match op {
                    ModelOp::SemWait { units, .. } => SemOp::Wait(units),
                    ModelOp::SemPost { units, .. } => SemOp::Post(units),
                    ModelOp::TryFail { .. } => SemOp::TryWaitFail,
                    _ => return None,
                };
                semantics::semaphore(n, op, cap)
            })
        }
        Obj::Barrier(b) => {
            let barrier = model.objects.barriers[b];
            let enterers = alphabet
                .iter()
                .filter(|(_, _, op)| matches!(op, ModelOp::BarrierEnter { .. }))
                .count() as u32;
            let name = format!("BARRIER_{}", names.barriers[b]);
            automaton(&name, 0u32, alphabet, |&k, _, _, op| {
                let op = match op {
                    ModelOp::BarrierEnter { .. } => BarrierOp::Enter,
                    ModelOp::BarrierExit { .. } => BarrierOp::Exit,
                    _ => return None,
                };
                semantics::barrier(k, op, barrier.parties, barrier.released, enterers)
            })
        }
        Obj::Fork(c) => {
            // A thread no recorded thread forks starts freely.
            let name = format!("FORK_{}", child(c));
            automaton(&name, Creation::default(), alphabet, |&s, _, _, op| {
                let op = match op {
                    ModelOp::Fork { .. } => CreationOp::Fork,
                    ModelOp::Start { forked } => CreationOp::Start { forked },
                    _ => return None,
                };
                semantics::creation(s, op)
            })
        }
        Obj::Join(c) => {
            let joins = alphabet
                .iter()
                .filter(|(_, _, op)| matches!(op, ModelOp::Join { .. }))
                .count();
            let name = format!("JOIN_{}", child(c));
            // Each join of the model happens once.
            automaton(&name, Termination::default(), alphabet, |&s, _, _, op| {
                let op = match op {
                    ModelOp::End => TerminationOp::End,
                    ModelOp::Join { .. } => TerminationOp::Join,
                    _ => return None,
                };
                semantics::termination(s, op, joins)
            })
        }
    }
}

/// [`PROCESS`]: its states are those [`semantics::process`] reaches, `PROCESS` before the exit and
/// `PROCESS_1` after it; `steps` are the sync events other than the exit.
fn process_defs(steps: &[&str]) -> Vec<Item> {
    let state = |exited: bool| {
        if exited {
            format!("{PROCESS}_1")
        } else {
            PROCESS.to_string()
        }
    };
    [false, true]
        .into_iter()
        .map(|exited| {
            let step = semantics::process(exited, ProcessOp::Step).map(|next| Proc::RepExtChoice {
                var: "ev_".into(),
                set: productions(steps),
                body: Box::new(Proc::Prefix {
                    event: name("ev_"),
                    fields: vec![],
                    then: Box::new(call(&state(next))),
                }),
            });
            let exit = semantics::process(exited, ProcessOp::Exit).map(|next| Proc::Prefix {
                event: name(EXIT),
                fields: vec![Field::In {
                    var: "t_".into(),
                    set: None,
                }],
                then: Box::new(call(&state(next))),
            });
            let moves = step.into_iter().chain(exit).collect();
            def(
                state(exited),
                join_all(moves, Proc::ExtChoice).unwrap_or(Proc::Stop),
            )
        })
        .collect()
}

fn call(name: &str) -> Proc {
    Proc::Call {
        name: name.into(),
        args: vec![],
    }
}

fn name(s: &str) -> Expr {
    Expr::Name(s.into())
}

fn productions(channels: &[&str]) -> SetExpr {
    SetExpr::Productions(channels.iter().map(|c| name(c)).collect())
}

/// Joins processes with `op`, left to right; `None` for none.
fn join_all(procs: Vec<Proc>, op: impl Fn(Box<Proc>, Box<Proc>) -> Proc) -> Option<Proc> {
    procs
        .into_iter()
        .reduce(|a, b| op(Box::new(a), Box::new(b)))
}

/// `diff(Events, {| race |})`: everything but the monitor's verdict.
fn all_but_race() -> SetExpr {
    SetExpr::Diff(Box::new(SetExpr::Events), Box::new(productions(&[RACE])))
}

/// RACE(v) and RACE_ERR(v) of the paper's Figure 3, with atomic accesses told apart. The
/// binders end in `_`, which no name derived by [`ident`] does, so they never shadow a constructor.
fn race_defs() -> Vec<Item> {
    let other = |t: &str| {
        Some(SetExpr::Diff(
            Box::new(SetExpr::Type("Threads".into())),
            Box::new(SetExpr::Enum(vec![name(t)])),
        ))
    };
    let access = |channel: &str, var: &str, set: Option<SetExpr>, then: Proc| Proc::Prefix {
        event: name(channel),
        fields: vec![
            Field::In {
                var: var.into(),
                set,
            },
            Field::Out(name("v_")),
        ],
        then: Box::new(then),
    };
    let race_then_skip = Proc::Prefix {
        event: name(RACE),
        fields: vec![],
        then: Box::new(Proc::Skip),
    };
    let err = ACCESS_CHANNELS
        .iter()
        .map(|&(k1, c1)| {
            let seconds = ACCESS_CHANNELS
                .iter()
                .filter(|&&(k2, _)| k1.conflicts_with(k2))
                .map(|&(_, c2)| access(c2, "tb_", other("ta_"), race_then_skip.clone()))
                .collect();
            let second = join_all(seconds, Proc::ExtChoice).unwrap_or(Proc::Stop);
            access(c1, "ta_", None, second)
        })
        .collect();
    let race_v = Proc::Call {
        name: "RACE".into(),
        args: vec![name("v_")],
    };
    let reset = Proc::RepExtChoice {
        var: "ev_".into(),
        set: all_but_race(),
        body: Box::new(Proc::Prefix {
            event: name("ev_"),
            fields: vec![],
            then: Box::new(race_v),
        }),
    };
    let race_err_v = Proc::Call {
        name: "RACE_ERR".into(),
        args: vec![name("v_")],
    };
    vec![
        Item::Comment(
            "A race on v: two threads' conflicting accesses to v with nothing in between (the paper's Figure 3)."
                .into(),
        ),
        Item::Def {
            name: "RACE".into(),
            params: vec!["v_".into()],
            body: Proc::Interrupt(Box::new(race_err_v), Box::new(reset)),
        },
        Item::Def {
            name: "RACE_ERR".into(),
            params: vec!["v_".into()],
            body: join_all(err, Proc::ExtChoice).unwrap_or(Proc::Stop),
        },
    ]
}

/// The race assertion of variable `var`: `STOP [T= (PROGRAM [| .. |] RACE(var)) \ ..`.
fn race_assertion(var: &str) -> Assertion {
    let monitored = Proc::Parallel {
        left: Box::new(call("PROGRAM")),
        sync: all_but_race(),
        right: Box::new(Proc::Call {
            name: "RACE".into(),
            args: vec![name(var)],
        }),
    };
    Assertion::TraceRefines {
        spec: Proc::Stop,
        imp: Proc::Hide(Box::new(monitored), all_but_race()),
    }
}

fn deadlock_assertion() -> Assertion {
    Assertion::DeadlockFree {
        process: call("PROGRAM"),
    }
}

/// The script of `model` for `target` (see the module doc).
pub fn export(model: &Model, target: &Target, naming: &Naming) -> Exported {
    let vars: Vec<VarId> = match target {
        Target::All { vars } => vars.clone(),
        Target::Race { var } => vec![*var],
        Target::Deadlock => vec![],
    };
    let names = Names::new(model, &vars, naming);
    let steps = thread_steps(model, &names);
    let alphabets = alphabets(model, &steps);
    let mut items = Vec::new();

    // Declarations: only the types and channels this model uses.
    let used: BTreeSet<&'static str> = steps
        .iter()
        .flatten()
        .flat_map(|(_, step)| step.events())
        .map(|e| e.channel)
        .collect();
    let units: Vec<String> = names.units.values().cloned().collect();
    let types: [(&str, &[String]); 8] = [
        ("Threads", &names.threads),
        ("Mutexes", &names.mutexes),
        ("Conds", &names.conds),
        ("RwLocks", &names.rwlocks),
        ("Sems", &names.sems),
        ("Units", &units),
        ("Barriers", &names.barriers),
        ("Vars", &[]),
    ];
    let var_names: Vec<(VarId, String)> = names.vars.iter().map(|(v, n)| (*v, n.clone())).collect();
    for (ty, ctors) in types {
        let ctors: Vec<String> = if ty == "Vars" {
            var_names.iter().map(|(_, n)| n.clone()).collect()
        } else {
            ctors.to_vec()
        };
        if !ctors.is_empty() {
            items.push(Item::Datatype {
                name: ty.into(),
                ctors,
            });
        }
    }
    let sync_channels: Vec<&'static str> = SYNC_CHANNELS
        .iter()
        .filter(|(c, _)| used.contains(c))
        .map(|(c, _)| *c)
        .collect();
    for &(c, fields) in SYNC_CHANNELS {
        if used.contains(c) {
            items.push(Item::Channel {
                names: vec![c.into()],
                fields: fields.iter().map(|f| f.to_string()).collect(),
            });
        }
    }
    if !var_names.is_empty() {
        items.push(Item::Channel {
            names: ACCESS_CHANNELS.iter().map(|(_, c)| c.to_string()).collect(),
            fields: vec!["Threads".into(), "Vars".into()],
        });
        items.push(Item::Channel {
            names: vec![RACE.into()],
            fields: vec![],
        });
    }
    let endings: Vec<Ending> = (0..model.threads.len()).map(|t| ending(model, t)).collect();
    let exits = endings.contains(&Ending::Exited);
    if exits {
        items.push(Item::Channel {
            names: vec![EXITED.into()],
            fields: vec![],
        });
    }
    let running: Vec<usize> = (0..model.threads.len())
        .filter(|&t| endings[t] == Ending::Running)
        .collect();
    let free_channels = [
        (!running.is_empty(), RUNNING),
        (used.contains(DIVERTED), DIVERTED),
    ];
    for (_, channel) in free_channels.into_iter().filter(|(on, _)| *on) {
        items.push(Item::Channel {
            names: vec![channel.into()],
            fields: vec!["Threads".into()],
        });
    }

    // Thread processes.
    items.push(Item::Comment(
        "One process per thread: its events in program order.".into(),
    ));
    let mut performs = Vec::with_capacity(model.threads.len());
    for (t, list) in steps.iter().enumerate() {
        items.extend(thread_defs(model, t, list));
        performs.push(
            list.iter()
                .take_while(|(_, s)| !matches!(s, Step::Block))
                .map(|(i, _)| *i)
                .collect(),
        );
    }
    if exits {
        items.push(Item::Comment(
            "main returned: the process exits, and threads still blocked are no deadlock.".into(),
        ));
        items.push(def(
            EXITED_PROC.into(),
            Proc::Prefix {
                event: name(EXITED),
                fields: vec![],
                then: Box::new(call(EXITED_PROC)),
            },
        ));
    }
    for &t in &running {
        let n = running_proc(model.threads[t].tid);
        items.push(Item::Comment(format!(
            "{} was still blocked when the run ended: it may go on beyond the trace.",
            names.threads[t]
        )));
        let ev = Ev::new(RUNNING, &[&names.threads[t]]);
        items.push(def(n.clone(), ev.prefix(call(&n))));
    }

    // Sync processes.
    items.push(Item::Comment(
        "One process per sync object: what its semantics allows next.".into(),
    ));
    let (mut mutexes, mut conds, mut others) = (Vec::new(), Vec::new(), Vec::new());
    for (obj, alphabet) in &alphabets {
        let defs = object_defs(model, *obj, alphabet, &names);
        let Some(Item::Def { name: first, .. }) = defs.first() else {
            continue;
        };
        let first = call(first);
        match obj {
            Obj::Mutex(_) => mutexes.push(first),
            Obj::Cond(_) => conds.push(first),
            _ => others.push(first),
        }
        items.extend(defs);
    }
    let shared: Vec<&str> = MUTEX_COND_CHANNELS
        .iter()
        .copied()
        .filter(|c| used.contains(c))
        .collect();
    let mutexes = join_all(mutexes, Proc::Interleave);
    let conds = join_all(conds, Proc::Interleave);
    let mutex_cond = match (mutexes, conds) {
        (Some(m), Some(c)) if !shared.is_empty() => Some(Proc::Parallel {
            left: Box::new(m),
            sync: productions(&shared),
            right: Box::new(c),
        }),
        (m, c) => join_all(m.into_iter().chain(c).collect(), Proc::Interleave),
    };
    let sync = join_all(
        mutex_cond.into_iter().chain(others).collect(),
        Proc::Interleave,
    );
    let threads = join_all(
        (0..model.threads.len())
            .map(|t| call(&format!("THREAD_{}", model.threads[t].tid + 1)))
            .collect(),
        Proc::Interleave,
    )
    .unwrap_or(Proc::Skip);
    let (exits, steps): (Vec<&str>, Vec<&str>) = sync_channels.iter().partition(|&&c| c == EXIT);
    let program = match sync {
        Some(sync) if !steps.is_empty() => Proc::Parallel {
            left: Box::new(threads),
            sync: productions(&steps),
            right: Box::new(sync),
        },
        _ => threads,
    };
    let program = if exits.is_empty() {
        program
    } else {
        items.push(Item::Comment(
            "The process: once it exited, no thread takes another step.".into(),
        ));
        items.extend(process_defs(&steps));
        Proc::Parallel {
            left: Box::new(program),
            sync: productions(&sync_channels),
            right: Box::new(call(PROCESS)),
        }
    };
    items.push(Item::Comment(
        "The threads interleave; every sync event is ratified by its object's process.".into(),
    ));
    items.push(def("PROGRAM".into(), program));

    // Monitors and assertions.
    if !var_names.is_empty() {
        items.extend(race_defs());
        for (_, v) in &var_names {
            items.push(Item::Assert(race_assertion(v)));
        }
    }
    if matches!(target, Target::All { .. } | Target::Deadlock) {
        items.push(Item::Assert(deadlock_assertion()));
    }
    Exported {
        script: Script { items },
        performs,
        thread_names: names.threads,
    }
}
