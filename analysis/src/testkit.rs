//! Test helper: write a run compactly, in the order it happened.
//!
//! Takes calls in observed order (`r.fork(0, 1).start(1).lock(1, M)`); gives the per-thread
//! [`ThreadTrace`]s the runtime would have written, seq numbers taken from the call order.
//! Also random small runs ([`random_run`]) and, in this crate's tests, the proptest runner of the
//! property tests over them ([`check_random_runs`]); and a hand-made model whose race needs a
//! step after the exit ([`exit_inside_a_critical_section`]), which no run records; and the
//! analysis options tests start from ([`options`]).

use std::collections::{BTreeSet, HashMap};

use ilgen_trace::format::{ThreadHeader, ThreadTrace};

use crate::model::{Model, ModelOp, MutexObject, Observed, SyncObjects, ThreadBuilder};
use crate::options::{Backend, Options};
use ilgen_trace::{
    Access, AccessKind, Atomic, AtomicOp, Event, SiteId, Sync, SyncOp, ThreadId, FORMAT_VERSION,
    NO_THREAD, PENDING,
};

/// The options of `ilgen detect` with its defaults but a smaller state bound, no cut of the
/// candidates and no fallbacks: tests change what they exercise with `..options()`.
pub fn options() -> Options {
    Options {
        max_per_var: 1,
        all_sites: false,
        window: 10_000,
        max_states: 100_000,
        backend: Backend::Native,
        deciding: Default::default(),
        atomicity: false,
        transactions: None,
        max_candidates: usize::MAX,
        fallbacks: 0,
    }
}

pub struct Run {
    threads: Vec<ThreadTrace>,
    seq: u64,
}

impl Run {
    /// Thread 0 is main; thread i > 0 is main's (i-1)-th child.
    pub fn new(threads: u32) -> Run {
        Run {
            threads: (0..threads)
                .map(|tid| ThreadTrace {
                    header: ThreadHeader {
                        version: FORMAT_VERSION,
                        tid,
                        parent: if tid == 0 { NO_THREAD } else { 0 },
                        child_index: tid.saturating_sub(1),
                    },
                    events: Default::default(),
                })
                .collect(),
            seq: 0,
        }
    }

    pub fn access(
        &mut self,
        t: ThreadId,
        addr: u64,
        size: u32,
        kind: AccessKind,
        site: SiteId,
    ) -> &mut Self {
        self.threads[t as usize].events.push(Event::Access(Access {
            addr,
            size,
            site,
            kind,
        }));
        self
    }

    /// A 4-byte write.
    pub fn w(&mut self, t: ThreadId, addr: u64, site: SiteId) -> &mut Self {
        self.access(t, addr, 4, AccessKind::Write, site)
    }

    /// A 4-byte read.
    pub fn r(&mut self, t: ThreadId, addr: u64, site: SiteId) -> &mut Self {
        self.access(t, addr, 4, AccessKind::Read, site)
    }

    /// A completed sync operation, next in the observed order; its site is 1000 + its seq.
    pub fn sync(&mut self, t: ThreadId, op: SyncOp) -> &mut Self {
        self.seq += 1;
        let seq = self.seq;
        self.threads[t as usize].events.push(Event::Sync(Sync {
            seq,
            site: 1000 + seq as SiteId,
            op,
        }));
        self
    }

    /// An atomic operation's acquire half: the counter's value, no number taken; its site is
    /// 2000 + that value.
    pub fn acquire(&mut self, t: ThreadId, addr: u64) -> &mut Self {
        self.atomic(t, self.seq + 1, addr, AtomicOp::Acquire)
    }

    /// An atomic operation's release half (`op` a release), numbered next in the observed order.
    pub fn release(&mut self, t: ThreadId, addr: u64, op: AtomicOp) -> &mut Self {
        self.seq += 1;
        self.atomic(t, self.seq, addr, op)
    }

    fn atomic(&mut self, t: ThreadId, seq: u64, addr: u64, op: AtomicOp) -> &mut Self {
        self.threads[t as usize].events.push(Event::Atomic(Atomic {
            seq,
            addr,
            site: 2000 + seq as SiteId,
            op,
        }));
        self
    }

    /// An operation the thread was blocked in when the run ended.
    pub fn pending(&mut self, t: ThreadId, op: SyncOp) -> &mut Self {
        self.threads[t as usize].events.push(Event::Sync(Sync {
            seq: PENDING,
            site: 999,
            op,
        }));
        self
    }

    pub fn fork(&mut self, t: ThreadId, child: ThreadId) -> &mut Self {
        self.sync(t, SyncOp::Fork { child })
    }
    pub fn start(&mut self, t: ThreadId) -> &mut Self {
        self.sync(t, SyncOp::Start)
    }
    pub fn end(&mut self, t: ThreadId) -> &mut Self {
        self.sync(t, SyncOp::End)
    }
    pub fn join(&mut self, t: ThreadId, child: ThreadId) -> &mut Self {
        self.sync(t, SyncOp::Join { child })
    }
    pub fn lock(&mut self, t: ThreadId, mutex: u64) -> &mut Self {
        self.sync(t, SyncOp::MutexLock { mutex })
    }
    pub fn unlock(&mut self, t: ThreadId, mutex: u64) -> &mut Self {
        self.sync(t, SyncOp::MutexUnlock { mutex })
    }

    pub fn traces(&self) -> Vec<ThreadTrace> {
        self.threads.clone()
    }
}

/// Listing 1's objects: x, y and the mutex m.
pub const LISTING1_X: u64 = 0x1000;
pub const LISTING1_Y: u64 = 0x2000;
pub const LISTING1_M: u64 = 0x9000;

/// A trace of thread `tid` (main's child 0 when it is not main: no parent) holding `events`.
pub fn thread(tid: ThreadId, events: Vec<Event>) -> ThreadTrace {
    ThreadTrace {
        header: ThreadHeader {
            version: FORMAT_VERSION,
            tid,
            parent: NO_THREAD,
            child_index: 0,
        },
        events: events.into(),
    }
}

/// The accesses of `model`, thread by thread.
pub fn accesses(model: &Model) -> Vec<crate::model::At> {
    (0..model.threads.len())
        .flat_map(|thread| {
            let events = &model.threads[thread].events;
            (0..events.len())
                .filter(move |&index| !events[index].is_sync())
                .map(move |index| crate::model::At { thread, index })
        })
        .collect()
}

/// Cuts of `model` to run cut orders on: each thread alone cut anywhere (the others whole, or
/// absent), then the empty cut and every prefix of the observed order.
pub fn cuts_of(model: &Model) -> Vec<Vec<usize>> {
    let lens: Vec<usize> = model.threads.iter().map(|t| t.events.len()).collect();
    let mut cuts: Vec<Vec<usize>> = Vec::new();
    for (t, &len) in lens.iter().enumerate() {
        for cut in 0..=len {
            let mut others = lens.clone();
            others[t] = cut;
            let mut alone = vec![0; lens.len()];
            alone[t] = cut;
            cuts.extend([others, alone]);
        }
    }
    let mut prefix = vec![0; lens.len()];
    cuts.push(prefix.clone());
    for at in model.observed_order(&lens) {
        prefix[at.thread] = at.index + 1;
        cuts.push(prefix.clone());
    }
    cuts
}

/// Every read of `model` deciding: odd sites a waiting loop's branch (those `3 mod 4` a spin
/// loop's), even ones an address.
pub fn every_read_deciding(model: &Model) -> ilgen_trace::sites::Deciding {
    let (predicates, addresses): (BTreeSet<_>, _) = model
        .threads
        .iter()
        .flat_map(|t| &t.events)
        .filter_map(|e| match *e {
            crate::model::ModelEvent::Access { kind, site, .. } if !kind.is_write() => Some(site),
            _ => None,
        })
        .partition(|site| site % 2 == 1);
    let spins = predicates
        .iter()
        .copied()
        .filter(|site| site % 4 == 3)
        .collect();
    ilgen_trace::sites::Deciding {
        addresses,
        predicates,
        spins,
    }
}

/// The paper's Listing 1, recorded with main locking first.
pub fn listing1() -> Run {
    let mut r = Run::new(2);
    r.w(0, LISTING1_Y, 4)
        .fork(0, 1)
        .w(0, LISTING1_Y, 6)
        .start(1)
        .lock(0, LISTING1_M)
        .w(0, LISTING1_X, 8)
        .unlock(0, LISTING1_M)
        .lock(1, LISTING1_M)
        .w(1, LISTING1_X, 15)
        .unlock(1, LISTING1_M)
        .w(1, LISTING1_Y, 17)
        .end(1)
        .join(0, 1);
    r
}

/// Bytes on a tape: enough for every decision of the largest [`random_run`] (under 170 seen).
pub const TAPE: usize = 256;

/// The decisions of [`random_run`], read off a tape of bytes in order: byte v picks option
/// v * n / 256 of n (no decision has more than 12 options), and every decision past the end of
/// the tape is 0, the first option. The pick grows with the byte, so shrinking the tape (each byte
/// toward 0, by bisection) shrinks the run: fewer threads, fewer operations, plain accesses, the
/// first runnable thread scheduled.
struct Choices<'a> {
    tape: &'a [u8],
}

impl Choices<'_> {
    fn below(&mut self, n: u64) -> u64 {
        match self.tape.split_first() {
            Some((&v, rest)) => {
                self.tape = rest;
                u64::from(v) * n / 256
            }
            None => 0,
        }
    }
}

/// Checks `property` on `cases` random runs whose tapes come from a fixed `seed`: every run of
/// the test sees the same cases. A failing run is shrunk to a smallest failing one, and the
/// panic gives the property's message for it and its tape.
#[cfg(test)]
pub fn check_random_runs(
    seed: u64,
    cases: u32,
    property: impl Fn(&Run) -> Result<(), proptest::test_runner::TestCaseError>,
) {
    check_runs_of(random_run, seed, cases, property)
}

/// [`check_random_runs`] over the runs `make` makes of the tapes.
#[cfg(test)]
pub fn check_runs_of(
    make: fn(&[u8]) -> Run,
    seed: u64,
    cases: u32,
    property: impl Fn(&Run) -> Result<(), proptest::test_runner::TestCaseError>,
) {
    use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestRunner};
    let config = Config {
        cases,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(seed),
        // Enough to bisect every byte of the tape a few times over (the default, 4 per case, is
        // not), so that a failure ends at a small run.
        max_shrink_iters: 16 * TAPE as u32,
        ..Config::default()
    };
    let tapes = proptest::collection::vec(proptest::num::u8::ANY, TAPE);
    if let Err(e) = TestRunner::new(config).run(&tapes, |tape| property(&make(&tape))) {
        panic!("{e}");
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Access(u64, AccessKind),
    Lock(u64),
    Unlock(u64),
    Post(u64),
    Wait(u64),
    /// `sem_trywait`: takes the semaphore if its count is positive, else fails.
    TryWait(u64),
    /// `if (trylock(m) == 0) { access; unlock(m) } else access`: the fallback path of a failed
    /// trylock touches the variable without the lock.
    TryAccess(u64, u64, AccessKind),
    Fork(u32),
    Join(u32),
    End,
    /// Under [`GATE`]: set the predicate, signal (or broadcast) [`COND`].
    Signal {
        broadcast: bool,
    },
    /// Under [`GATE`]: the wait loop `while (!pred) wait(COND, GATE)`.
    Await,
    /// An atomic operation on a location of [`FLAGS`] that releases (`Some(op)`) or acquires.
    Atomic(u64, Option<AtomicOp>),
}

/// Where a thread of the simulated run is with respect to a condition wait.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    /// Called the wait; not woken yet.
    Waiting,
    /// Woken; takes the gate back when it is free.
    Woken,
}

const VARS: [u64; 2] = [0x100, 0x200];
const LOCKS: [u64; 2] = [0x900, 0x910];
const SEM: u64 = 0x800;
const GATE: u64 = 0x920;
const COND: u64 = 0xc00;
const PRED: u64 = 0x300;
const FLAGS: [u64; 2] = [0x400, 0x408];

/// A random program of 2-4 threads (locks, trylocks with an unlocked fallback, semaphores with
/// trywait, condition waits), run under a random scheduler that obeys the locks;
/// threads still blocked when nothing can move end with a pending operation, and main, if it
/// returned, with its exit. Every random decision is the next value of `tape` (see [`Choices`]).
pub fn random_run(tape: &[u8]) -> Run {
    run_of(tape, false)
}

/// A random program of 2-4 threads whose operations are accesses, locks and atomic operations
/// that acquire or release on one of two locations ([`FLAGS`]), run as [`random_run`] runs its.
pub fn random_atomic_run(tape: &[u8]) -> Run {
    run_of(tape, true)
}

fn run_of(tape: &[u8], atomics: bool) -> Run {
    let rng = &mut Choices { tape };
    let n = 2 + rng.below(3) as u32;
    let mut scripts: Vec<Vec<Op>> = Vec::new();
    for t in 0..n {
        let mut ops = Vec::new();
        let mut held: Vec<u64> = Vec::new();
        if t == 0 {
            for c in 1..n {
                ops.push(Op::Fork(c));
            }
        }
        for _ in 0..2 + rng.below(6) {
            match rng.below(12) {
                0..=4 => {
                    let kind = match rng.below(6) {
                        0..=1 => AccessKind::Read,
                        2..=4 => AccessKind::Write,
                        _ => AccessKind::AtomicWrite,
                    };
                    let v = rng.below(2) as usize;
                    // Mostly under the variable's own lock, so that clean variables occur.
                    let guard = LOCKS[v];
                    if rng.below(10) < 7 && !held.contains(&guard) {
                        if rng.below(4) == 0 {
                            ops.push(Op::TryAccess(guard, VARS[v], kind));
                        } else {
                            ops.push(Op::Lock(guard));
                            ops.push(Op::Access(VARS[v], kind));
                            ops.push(Op::Unlock(guard));
                        }
                    } else {
                        ops.push(Op::Access(VARS[v], kind));
                    }
                }
                5 | 6 => {
                    let m = LOCKS[rng.below(2) as usize];
                    if !held.contains(&m) {
                        held.push(m);
                        ops.push(Op::Lock(m));
                    }
                }
                7 | 8 => {
                    if let Some(m) = held.pop() {
                        ops.push(Op::Unlock(m));
                    }
                }
                9..=11 if atomics => {
                    let op = [
                        Some(AtomicOp::ReleaseStore),
                        Some(AtomicOp::ReleaseRmw),
                        None,
                    ][rng.below(3) as usize];
                    ops.push(Op::Atomic(FLAGS[rng.below(2) as usize], op));
                }
                9 => ops.push(match rng.below(5) {
                    0 | 1 => Op::Post(SEM),
                    2 | 3 => Op::Wait(SEM),
                    _ => Op::TryWait(SEM),
                }),
                10 => {
                    let broadcast = rng.below(3) == 0;
                    ops.extend([
                        Op::Lock(GATE),
                        Op::Access(PRED, AccessKind::Write),
                        Op::Signal { broadcast },
                        Op::Unlock(GATE),
                    ]);
                }
                _ => ops.extend([Op::Lock(GATE), Op::Await, Op::Unlock(GATE)]),
            }
        }
        while let Some(m) = held.pop() {
            ops.push(Op::Unlock(m));
        }
        if t == 0 {
            for c in 1..n {
                if rng.below(4) != 0 {
                    ops.push(Op::Join(c));
                }
            }
        } else {
            ops.push(Op::End);
        }
        scripts.push(ops);
    }
    let mut run = Run::new(n);
    let mut pc = vec![0usize; n as usize];
    let mut started = vec![false; n as usize];
    started[0] = true;
    let mut ended = vec![false; n as usize];
    let mut owner: HashMap<u64, u32> = Default::default();
    let mut sem = 1u32;
    let mut site = 0;
    let mut pred = false;
    let mut phase = vec![Phase::Running; n as usize];
    loop {
        let can = |t: usize, pc: &[usize], owner: &HashMap<u64, u32>| match (
            phase[t],
            scripts[t].get(pc[t]),
        ) {
            (Phase::Waiting, _) => false,
            (Phase::Woken, _) => !owner.contains_key(&GATE),
            (_, None) => false,
            (_, Some(Op::Lock(m))) => !owner.contains_key(m),
            (_, Some(Op::Join(c))) => ended[*c as usize],
            (_, Some(Op::Wait(_))) => sem > 0,
            (_, Some(_)) => true,
        };
        let runnable: Vec<usize> = (0..n as usize)
            .filter(|&t| started[t] && can(t, &pc, &owner))
            .collect();
        if runnable.is_empty() {
            // Main returned: the runtime records its exit once the others are blocked or ended.
            if pc[0] == scripts[0].len() && phase[0] == Phase::Running {
                run.sync(0, SyncOp::Exit);
            }
            for t in 0..n as usize {
                let op = match scripts[t].get(pc[t]) {
                    _ if phase[t] != Phase::Running => SyncOp::CondWake {
                        cond: COND,
                        mutex: GATE,
                        timed_out: false,
                    },
                    Some(Op::Lock(m)) => SyncOp::MutexLock { mutex: *m },
                    Some(Op::Join(c)) => SyncOp::Join { child: *c },
                    Some(Op::Wait(s)) => SyncOp::SemWait { sem: *s },
                    _ => continue,
                };
                if started[t] {
                    run.pending(t as u32, op);
                }
            }
            return run;
        }
        let t = runnable[rng.below(runnable.len() as u64) as usize];
        let tid = t as u32;
        if phase[t] == Phase::Woken {
            phase[t] = Phase::Running;
            owner.insert(GATE, tid);
            site += 1;
            run.sync(
                tid,
                SyncOp::CondWake {
                    cond: COND,
                    mutex: GATE,
                    timed_out: false,
                },
            )
            .access(tid, PRED, 4, AccessKind::Read, site)
            .sync(tid, SyncOp::WaitLoopExit { cond: COND });
            pc[t] += 1;
            continue;
        }
        let op = scripts[t][pc[t]];
        pc[t] += 1;
        match op {
            Op::Signal { broadcast } => {
                pred = true;
                run.sync(
                    tid,
                    if broadcast {
                        SyncOp::CondBroadcast { cond: COND }
                    } else {
                        SyncOp::CondSignal { cond: COND }
                    },
                );
                for p in phase.iter_mut().filter(|p| **p == Phase::Waiting) {
                    *p = Phase::Woken;
                    if !broadcast {
                        break;
                    }
                }
            }
            Op::Await => {
                site += 1;
                run.sync(tid, SyncOp::WaitLoopEnter { cond: COND }).access(
                    tid,
                    PRED,
                    4,
                    AccessKind::Read,
                    site,
                );
                if pred {
                    run.sync(tid, SyncOp::WaitLoopExit { cond: COND });
                } else {
                    owner.remove(&GATE);
                    run.sync(
                        tid,
                        SyncOp::CondWait {
                            cond: COND,
                            mutex: GATE,
                            timed: false,
                        },
                    );
                    phase[t] = Phase::Waiting;
                    pc[t] -= 1;
                }
            }
            Op::Access(addr, kind) => {
                site += 1;
                run.access(tid, addr, 4, kind, site);
            }
            Op::Atomic(addr, op) => {
                site += 1;
                match op {
                    Some(op) => run
                        .access(tid, addr, 8, AccessKind::AtomicWrite, site)
                        .release(tid, addr, op),
                    None => run
                        .access(tid, addr, 8, AccessKind::AtomicRead, site)
                        .acquire(tid, addr),
                };
            }
            Op::Lock(m) => {
                owner.insert(m, tid);
                run.lock(tid, m);
            }
            Op::Unlock(m) => {
                owner.remove(&m);
                run.unlock(tid, m);
            }
            Op::Post(s) => {
                sem += 1;
                run.sync(tid, SyncOp::SemPost { sem: s });
            }
            Op::Wait(s) => {
                sem -= 1;
                run.sync(tid, SyncOp::SemWait { sem: s });
            }
            Op::TryWait(s) => {
                let acquired = sem > 0;
                if acquired {
                    sem -= 1;
                }
                run.sync(tid, SyncOp::SemTryWait { sem: s, acquired });
            }
            Op::TryAccess(m, addr, kind) => {
                // Another thread holds it, or it is free: the script never tries a lock it holds.
                let acquired = !owner.contains_key(&m);
                run.sync(tid, SyncOp::MutexTryLock { mutex: m, acquired });
                let then = if acquired {
                    owner.insert(m, tid);
                    vec![Op::Access(addr, kind), Op::Unlock(m)]
                } else {
                    vec![Op::Access(addr, kind)]
                };
                let at = pc[t];
                scripts[t].splice(at..at, then);
            }
            Op::Fork(c) => {
                run.fork(tid, c);
                run.start(c);
                started[c as usize] = true;
            }
            Op::Join(c) => {
                run.join(tid, c);
            }
            Op::End => {
                ended[t] = true;
                run.end(tid);
            }
        }
    }
}

/// Thread 1 starts, both threads run critical sections on 0x900, then race on 0x100 (the comments
/// give each sync event's seq): a run that windows of 4 or 8 sync events split.
pub fn sections_then_race() -> Run {
    const D: u64 = 0x100;
    const M: u64 = 0x900;
    let mut r = Run::new(2);
    r.fork(0, 1) // 1
        .start(1) // 2
        .lock(0, M) // 3
        .unlock(0, M) // 4
        .lock(1, M) // 5
        .unlock(1, M) // 6
        .lock(0, M) // 7
        .unlock(0, M) // 8
        .w(0, D, 1)
        .lock(1, M) // 9
        .unlock(1, M) // 10
        .w(1, D, 2);
    r
}

/// Main locks m, then `exit` (the process's exit, or a no-op), then unlocks m and writes v;
/// the other thread writes v under m.
pub fn exit_inside_a_critical_section(exit: ModelOp) -> Model {
    let (lock, unlock) = (ModelOp::Lock { mutex: 0 }, ModelOp::Unlock { mutex: 0 });
    let mut seq = 0;
    let mut observed = || {
        seq += 1;
        Observed {
            seq,
            op_index: 0,
            site: 100 + seq as SiteId,
            op: SyncOp::Start,
        }
    };
    let mut main = ThreadBuilder::new(0);
    main.sync(lock, observed())
        .sync(exit, observed())
        .sync(unlock, observed())
        .access(0, AccessKind::Write, 7);
    let mut other = ThreadBuilder::new(1);
    other
        .sync(lock, observed())
        .access(0, AccessKind::Write, 7)
        .sync(unlock, observed());
    Model::new(
        vec![main.build(), other.build()],
        SyncObjects {
            mutexes: vec![MutexObject {
                addr: 1,
                recursive: false,
            }],
            ..SyncObjects::default()
        },
    )
}
