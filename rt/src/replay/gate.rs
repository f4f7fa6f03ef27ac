//! Replay mode: the schedule gate.
//!
//! Takes the schedule that `start` read and checked against this binary, and each thread's sync
//! operations as `replay::sync` presents them (recorded tid, the thread's own 0-based count of
//! sync records, the operation's kind); gives [`Replay`]: the schedule and the gate,
//! which holds each operation until the schedule says it is that thread's turn for it, and the
//! stack each step was taken with (which the report's schedule names the user's line from).
//!
//! Threads are mapped as the schedule names them: main is the schedule thread whose parent is
//! absent (`null`); the n-th child created by the thread mapped to recorded tid P is the schedule
//! thread (parent P, child_index n). A thread the schedule does not name gets a fresh tid above
//! every scheduled one (see [`Plan::child_tid`]).
//!
//! The gate, for the thread's operation number `index` of kind `op` ([`Plan::verdict`]):
//! - the schedule has step p = (tid, index): its kind must be `op` and its site (when both are
//!   known) the operation's, or the replay diverges at once (but for a try-lock, which
//!   `replay::sync` lets run outside the schedule);
//!   the thread waits until the cursor (steps taken so far) is p, and the cursor moves past p when
//!   `replay::sync` says the step is taken;
//! - no step for it and the schedule is unfinished: it waits until the schedule is finished, or
//!   until the watchdog finds the schedule stopped and lets such threads go
//!   ([`Replay::release_waiters`]);
//! - after the last step: it runs free.
//!
//! The gate's own locks and condition variable are the runtime's, not the program's: the
//! happens-before detector never sees them (see `hb`). A step that is not taken within
//! `replay_timeout_ms` is detected by the watchdog (`deadlock`), not here.
//!
//! A forked child stops replaying (its parent's other threads, which the schedule names, do not
//! exist in it): a `pthread_atfork` child handler (installed by `start`) turns the runtime off,
//! and the child writes no outcome.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

use ilgen_trace::replay::{Divergence, StepRef};
use ilgen_trace::schedule::{Schedule, ScheduleThread, Step, Watch};
use ilgen_trace::{known_site, site_text, OpKind, SiteId, ThreadId};

use crate::options::Options;
use crate::replay::stack::StackId;
use crate::runtime;

static REPLAY: OnceLock<Replay> = OnceLock::new();

/// The replay runtime if the process replays, initializing the process on first use.
#[inline]
pub(crate) fn replaying() -> Option<&'static Replay> {
    if runtime::replaying() {
        get()
    } else {
        None
    }
}

/// The schedule as a lookup: which step each (thread, index) is, and how threads map.
#[derive(Debug)]
pub(crate) struct Plan {
    pub steps: Vec<Step>,
    at: HashMap<(ThreadId, u32), usize>,
    threads: Vec<ScheduleThread>,
    /// First tid of the threads the schedule does not name.
    pub first_fresh: ThreadId,
    /// The schedule's watched accesses, each with its rank once it ran (0: not yet).
    watch: Vec<(Watch, AtomicU32)>,
    /// Watched accesses that ran so far.
    ranks: AtomicU32,
}

/// What the gate does with one operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// It is step `p`: wait until the cursor is `p`.
    Turn(usize),
    /// Not in the schedule, which is unfinished: wait until it is finished.
    AfterSchedule,
    /// The schedule is finished (or the step is behind the cursor): run.
    Free,
    /// Step `p` is this thread's operation at this index, of another kind.
    Mismatch(usize),
}

impl Plan {
    /// Checks that the steps name known threads and no (thread, index) twice.
    pub fn new(schedule: &Schedule) -> Result<Plan, String> {
        let mut at = HashMap::new();
        for (p, s) in schedule.steps.iter().enumerate() {
            if !schedule.threads.iter().any(|t| t.tid == s.tid) {
                return Err(format!(
                    "step {p} names thread T{} missing from `threads`",
                    s.tid
                ));
            }
            if at.insert((s.tid, s.index), p).is_some() {
                return Err(format!(
                    "step {p} repeats thread T{} operation #{}",
                    s.tid, s.index
                ));
            }
        }
        let first_fresh = schedule
            .threads
            .iter()
            .map(|t| t.tid.saturating_add(1))
            .max()
            .unwrap_or(1)
            .max(1);
        Ok(Plan {
            steps: schedule.steps.clone(),
            at,
            threads: schedule.threads.clone(),
            first_fresh,
            watch: schedule
                .watch
                .iter()
                .map(|&w| (w, AtomicU32::new(0)))
                .collect(),
            ranks: AtomicU32::new(0),
        })
    }

    /// Thread `tid` runs `site` having done `syncs` sync operations, inside `unbegun` recorded
    /// calls whose `TxBegin` has not run: ranks the watched access it is, the first time. The
    /// recorded trace puts a call's accesses after its `TxBegin`, which runs only at the call's
    /// first sync operation, so such an access was counted after `syncs` plus however many of
    /// those calls were still open then; any of these counts matches. (Another run of the line
    /// in the same stretch, in a call that returned without a sync operation, may take the rank
    /// first: it ran earlier, so at worst the order comes out wrong and nothing is confirmed.)
    /// Accesses of one candidate are ordered by the schedule's steps between them, so the ranks
    /// follow the order they ran in. True when this access completes them in their order (e2
    /// after e1 and f: the violation is confirmed).
    #[inline]
    pub fn saw(&self, tid: ThreadId, site: SiteId, syncs: u32, unbegun: u32) -> bool {
        let mut completed = false;
        for (w, rank) in &self.watch {
            if (w.tid, w.site) == (tid, site)
                && w.after.checked_sub(syncs).is_some_and(|d| d <= unbegun)
                && rank.load(Ordering::Acquire) == 0
            {
                let next = self.ranks.fetch_add(1, Ordering::AcqRel) + 1;
                let _ = rank.compare_exchange(0, next, Ordering::AcqRel, Ordering::Acquire);
                completed = next as usize == self.watch.len()
                    && ilgen_trace::replay::watched_in_order(&self.watched());
            }
        }
        completed
    }

    /// Per watched access, its rank if it ran.
    pub fn watched(&self) -> Vec<Option<u32>> {
        self.watch
            .iter()
            .map(|(_, rank)| Some(rank.load(Ordering::Acquire)).filter(|&r| r != 0))
            .collect()
    }

    /// The recorded tid of main: the scheduled thread without a parent (the lowest such tid,
    /// since threads of uninstrumented code have none either), else 0.
    pub fn main_tid(&self) -> ThreadId {
        self.threads
            .iter()
            .filter(|t| t.parent.is_none())
            .map(|t| t.tid)
            .min()
            .unwrap_or(0)
    }

    /// The recorded tid of the `index`-th child of `parent`, if the schedule names it.
    pub fn child_tid(&self, parent: ThreadId, index: u32) -> Option<ThreadId> {
        self.threads
            .iter()
            .find(|t| t.parent == Some(parent) && t.child_index == index)
            .map(|t| t.tid)
    }

    /// `site`: where the operation is made, `None` when unknown (thread start and end); a step
    /// recorded at another site is a mismatch too (the same binary gives a call site the same id
    /// in every run, inlined copies included, so this is another operation of the same kind),
    /// unless both sites are one statement (the optimizer's copies of one unlock in two paths:
    /// the operation is the same for every thread and the race detector).
    pub fn verdict(
        &self,
        tid: ThreadId,
        index: u32,
        op: OpKind,
        site: Option<SiteId>,
        cursor: usize,
    ) -> Verdict {
        let other_site = |p: usize| {
            matches!((self.steps[p].site, site), (Some(a), Some(b))
                if a != b && !crate::sites::same_statement(a, b))
        };
        match self.at.get(&(tid, index)) {
            Some(&p) if self.steps[p].op != op || other_site(p) => Verdict::Mismatch(p),
            Some(&p) if p >= cursor => Verdict::Turn(p),
            _ if cursor < self.steps.len() => Verdict::AfterSchedule,
            _ => Verdict::Free,
        }
    }

    /// Whether thread `tid`'s operation `index` is a step of the schedule.
    pub fn is_step(&self, tid: ThreadId, index: u32) -> bool {
        self.at.contains_key(&(tid, index))
    }

    /// The kind of thread `tid`'s operation `index`, if it is a step.
    pub fn step_kind(&self, tid: ThreadId, index: u32) -> Option<OpKind> {
        self.at.get(&(tid, index)).map(|&p| self.steps[p].op)
    }

    /// The recorded outcome of thread `tid`'s timed operation `index`, if it is a step that has
    /// one: `Some(true)` when it timed out.
    pub fn recorded_timeout(&self, tid: ThreadId, index: u32) -> Option<bool> {
        self.at
            .get(&(tid, index))
            .and_then(|&p| self.steps[p].timed_out)
    }

    pub fn step_ref(&self, p: usize) -> StepRef {
        let s = &self.steps[p];
        StepRef {
            tid: s.tid,
            index: s.index,
            op: s.op,
            site: s.site,
        }
    }
}

pub(crate) struct Replay {
    pub options: Options,
    pub plan: Plan,
    pub schedule_path: String,
    pub build_id: String,
    pub outcome_dir: PathBuf,
    /// The replaying process (a forked child is another one).
    pub pid: u32,
    /// Steps taken; `cursor_fast` mirrors it for readers that do not wait.
    cursor: Mutex<usize>,
    cursor_fast: AtomicUsize,
    moved: Condvar,
    /// When the cursor last moved (or the replay started), in ms of CLOCK_MONOTONIC.
    last_progress_ms: AtomicU64,
    /// The threads that wait for the end of the schedule may run: the schedule stopped moving
    /// ([`Replay::release_waiters`]); cleared when the cursor moves.
    released: AtomicBool,
    /// The schedule was given up where it could not be followed ([`Replay::abandon`]): every
    /// thread runs free, as after its last step.
    abandoned: AtomicBool,
    /// Per step, the stack of the thread that took it ([`NOT_TAKEN`] before).
    stacks: Box<[AtomicU32]>,
}

/// The stack of a step not taken (no stack id is this large: ids count distinct stacks).
const NOT_TAKEN: u32 = u32::MAX;

/// The replay runtime, once the process is replaying.
pub(crate) fn get() -> Option<&'static Replay> {
    REPLAY.get()
}

/// Milliseconds of CLOCK_MONOTONIC.
pub(crate) fn now_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime into a local.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// Makes `replay` the process's replay runtime; `None` when there already is one.
pub(crate) fn install(replay: Replay) -> Option<&'static Replay> {
    REPLAY.set(replay).ok()?;
    REPLAY.get()
}

/// The replay runtime when it watches accesses (the schedule's watched ones, or the `stop_at`
/// option's); each thread keeps it when it starts (`ReplayThread::watch`), so that an access hook
/// of a replay that watches none reads one word of its own for it.
pub(crate) fn watching() -> Option<&'static Replay> {
    get().filter(|r| !r.plan.watch.is_empty() || r.options.stop_at.is_some())
}

impl Replay {
    /// The runtime of a replay of `plan`, at its first step.
    pub fn new(options: Options, plan: Plan, build_id: String, outcome_dir: PathBuf) -> Replay {
        Replay {
            schedule_path: options.schedule.clone(),
            options,
            build_id,
            outcome_dir,
            pid: std::process::id(),
            cursor: Mutex::new(0),
            cursor_fast: AtomicUsize::new(0),
            moved: Condvar::new(),
            last_progress_ms: AtomicU64::new(now_ms()),
            released: AtomicBool::new(false),
            abandoned: AtomicBool::new(false),
            stacks: (0..plan.steps.len())
                .map(|_| AtomicU32::new(NOT_TAKEN))
                .collect(),
            plan,
        }
    }

    /// Step `p` is being taken by a thread whose stack is `stack`.
    pub fn taking(&self, p: usize, stack: StackId) {
        if let Some(s) = self.stacks.get(p) {
            s.store(stack, Ordering::Relaxed);
        }
    }

    /// The stack of the thread that took step `p`, if one did.
    pub fn step_stack(&self, p: usize) -> Option<StackId> {
        let id = self.stacks.get(p)?.load(Ordering::Relaxed);
        (id != NOT_TAKEN).then_some(id)
    }

    pub fn cursor(&self) -> usize {
        self.cursor_fast.load(Ordering::Acquire)
    }

    /// Every step taken, or the schedule given up ([`Replay::abandon`]).
    pub fn finished(&self) -> bool {
        self.cursor() >= self.plan.steps.len() || self.abandoned()
    }

    pub fn last_progress_ms(&self) -> u64 {
        self.last_progress_ms.load(Ordering::Relaxed)
    }

    /// Waits until thread `tid` may perform its operation `index` of kind `op` (at `site`);
    /// returns the step it is, if any. `on_wait(true)` is called before the thread has to wait
    /// and `on_wait(false)` after (a condition wake lets its mutex go meanwhile). A kind other
    /// than the schedule's is the divergence given back (the caller ends the replay with it).
    pub fn wait_turn(
        &self,
        tid: ThreadId,
        index: u32,
        op: OpKind,
        site: SiteId,
        mut on_wait: impl FnMut(bool),
    ) -> Result<Option<usize>, Divergence> {
        let mut cursor = self.cursor.lock().unwrap_or_else(|e| e.into_inner());
        if self.abandoned() {
            return Ok(None);
        }
        let verdict = self.plan.verdict(tid, index, op, known_site(site), *cursor);
        let target = match verdict {
            Verdict::Free => return Ok(None),
            Verdict::Mismatch(p) => {
                let expected = self.plan.step_ref(p);
                // The same kind at another site names both sites; another kind, the one made.
                let (wanted, made) = if expected.op == op {
                    (
                        format!("{} at {}", expected.op, site_text(expected.site)),
                        format!("{op} at {}", site_text(known_site(site))),
                    )
                } else {
                    (
                        expected.op.to_string(),
                        format!("{op} ({})", site_text(known_site(site))),
                    )
                };
                let reason = format!(
                    "step {p} expects T{} operation #{} to be {wanted}, but it is {made}",
                    expected.tid, expected.index
                );
                return Err(Divergence {
                    step: Some(p as u32),
                    reason,
                    expected: Some(expected),
                    got: Some(StepRef {
                        tid,
                        index,
                        op,
                        site: known_site(site),
                    }),
                });
            }
            Verdict::Turn(p) => p,
            Verdict::AfterSchedule => self.plan.steps.len(),
        };
        if *cursor != target {
            drop(cursor);
            on_wait(true);
            cursor = self.cursor.lock().unwrap_or_else(|e| e.into_inner());
            while *cursor != target {
                if *cursor > target || self.abandoned() {
                    // Another thread took the step ahead of this one: only a schedule repeating a
                    // step could do it, and `Plan::new` refuses those. Run free.
                    break;
                }
                // Never the thread of the next step itself: it is behind its own step.
                if verdict == Verdict::AfterSchedule
                    && self.released.load(Ordering::Acquire)
                    && self.plan.steps.get(*cursor).is_some_and(|s| s.tid != tid)
                {
                    break;
                }
                cursor = self
                    .moved
                    .wait_timeout(cursor, Duration::from_millis(50))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            drop(cursor);
            on_wait(false);
        }
        Ok(match verdict {
            Verdict::Turn(p) if !self.abandoned() => Some(p),
            _ => None,
        })
    }

    /// Whether the schedule was given up ([`Replay::abandon`]).
    pub fn abandoned(&self) -> bool {
        self.abandoned.load(Ordering::Acquire)
    }

    /// Gives the schedule up: no step is taken any more and every thread, those waiting at the
    /// gate included, runs free from here, as after the last step. The cursor stays where the
    /// schedule stopped.
    pub fn abandon(&self) {
        let _cursor = self.cursor.lock().unwrap_or_else(|e| e.into_inner());
        self.abandoned.store(true, Ordering::Release);
        self.moved.notify_all();
    }

    /// Lets the threads that wait for the end of the schedule run, until the cursor moves: the
    /// schedule stopped moving, and what its next step waits for may be one of theirs that the
    /// trace cannot show (a server's worker waits for a client's request, and the client for
    /// another worker's reply that the schedule leaves for after its end).
    pub fn release_waiters(&self) {
        let _cursor = self.cursor.lock().unwrap_or_else(|e| e.into_inner());
        self.released.store(true, Ordering::Release);
        self.moved.notify_all();
    }

    /// Whether [`Replay::release_waiters`] let them go since the cursor last moved.
    pub fn waiters_released(&self) -> bool {
        self.released.load(Ordering::Acquire)
    }

    /// Restarts the no-progress clock (after the process was stopped).
    pub fn touch(&self) {
        self.last_progress_ms.store(now_ms(), Ordering::Relaxed);
    }

    /// Step `p` is taken: the next one may go.
    pub fn advance(&self, p: usize) {
        let mut cursor = self.cursor.lock().unwrap_or_else(|e| e.into_inner());
        if *cursor == p {
            *cursor = p + 1;
            self.cursor_fast.store(p + 1, Ordering::Release);
            self.last_progress_ms.store(now_ms(), Ordering::Relaxed);
            self.released.store(false, Ordering::Release);
            // Under the lock: a debugger stopped in the step hook sees no later step taken.
            crate::replay::debug::step_taken(p);
            self.moved.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ilgen_trace::schedule::SCHEDULE_VERSION;

    fn listing1() -> Schedule {
        let step = |tid, index, op| Step {
            tid,
            index,
            op,
            site: Some(0),
            timed_out: None,
        };
        Schedule {
            watch: Vec::new(),
            format_version: SCHEDULE_VERSION,
            build_id: "x".into(),
            threads: vec![
                ScheduleThread {
                    tid: 0,
                    parent: None,
                    child_index: 0,
                },
                ScheduleThread {
                    tid: 1,
                    parent: Some(0),
                    child_index: 0,
                },
            ],
            steps: vec![
                step(0, 0, OpKind::Fork),
                step(1, 0, OpKind::Start),
                step(1, 1, OpKind::Lock),
                step(1, 2, OpKind::Unlock),
            ],
        }
    }

    #[test]
    fn threads_map_by_parent_and_child_index() {
        let plan = Plan::new(&listing1()).unwrap();
        assert_eq!(plan.main_tid(), 0);
        assert_eq!(plan.child_tid(0, 0), Some(1));
        assert_eq!(plan.child_tid(0, 1), None);
        assert_eq!(
            plan.child_tid(ilgen_trace::NO_THREAD, 0),
            None,
            "orphans are never scheduled"
        );
        assert_eq!(plan.first_fresh, 2);
    }

    #[test]
    fn watched_accesses_are_ranked_once_and_only_in_their_segment() {
        let mut schedule = listing1();
        let watch = |tid, site, after| Watch { tid, site, after };
        schedule.watch = vec![watch(1, 5, 2), watch(0, 6, 3), watch(1, 7, 4)];
        let plan = Plan::new(&schedule).unwrap();
        assert_eq!(plan.watched(), [None, None, None]);
        // The same line in another segment, or by another thread: not the watched run.
        assert!(!plan.saw(1, 5, 1, 0));
        assert!(!plan.saw(0, 5, 2, 0));
        assert!(!plan.saw(1, 5, 2, 0));
        assert!(!plan.saw(1, 5, 2, 0));
        assert!(!plan.saw(1, 7, 4, 0));
        assert_eq!(plan.watched(), [Some(1), None, Some(2)]);
        // The last one ran, but out of order: nothing confirmed.
        assert!(!plan.saw(0, 6, 3, 0));
        assert_eq!(plan.watched(), [Some(1), Some(3), Some(2)]);
        assert!(!ilgen_trace::replay::watched_in_order(&plan.watched()));
        // In order: e2, the last, confirms.
        let plan = Plan::new(&schedule).unwrap();
        assert!(!plan.saw(1, 5, 2, 0));
        assert!(!plan.saw(0, 6, 3, 0));
        assert!(plan.saw(1, 7, 4, 0));
        assert!(!plan.saw(1, 7, 4, 0), "confirmed once");
        // Inside calls not begun yet: their `TxBegin`s may still come before the watched segment,
        // never after it.
        let plan = Plan::new(&schedule).unwrap();
        assert!(!plan.saw(1, 5, 0, 1));
        assert!(!plan.saw(1, 5, 3, 2));
        assert_eq!(plan.watched(), [None, None, None]);
        assert!(!plan.saw(1, 5, 1, 1));
        assert!(!plan.saw(0, 6, 1, 2));
        assert_eq!(plan.watched(), [Some(1), Some(2), None]);
    }

    #[test]
    fn verdicts_follow_the_cursor() {
        let plan = Plan::new(&listing1()).unwrap();
        assert_eq!(
            plan.verdict(0, 0, OpKind::Fork, Some(0), 0),
            Verdict::Turn(0)
        );
        assert_eq!(
            plan.verdict(1, 1, OpKind::Lock, Some(0), 0),
            Verdict::Turn(2)
        );
        // Main's lock is not in the schedule: it waits for the end of the schedule.
        assert_eq!(
            plan.verdict(0, 1, OpKind::Lock, Some(0), 1),
            Verdict::AfterSchedule
        );
        assert_eq!(plan.verdict(0, 1, OpKind::Lock, Some(0), 4), Verdict::Free);
        assert_eq!(plan.verdict(7, 0, OpKind::Start, None, 4), Verdict::Free);
    }

    #[test]
    fn another_kind_at_a_step_is_a_mismatch() {
        let plan = Plan::new(&listing1()).unwrap();
        assert_eq!(
            plan.verdict(1, 1, OpKind::Unlock, Some(0), 2),
            Verdict::Mismatch(2)
        );
        assert_eq!(
            plan.verdict(1, 2, OpKind::Lock, Some(0), 0),
            Verdict::Mismatch(3)
        );
        assert_eq!(plan.step_ref(2).op, OpKind::Lock);
    }

    #[test]
    fn the_same_kind_at_another_site_is_a_mismatch() {
        let plan = Plan::new(&listing1()).unwrap();
        assert_eq!(
            plan.verdict(1, 1, OpKind::Lock, Some(3), 0),
            Verdict::Mismatch(2)
        );
        // Thread start has no site: only its kind is compared.
        assert_eq!(plan.verdict(1, 0, OpKind::Start, None, 0), Verdict::Turn(1));
    }

    #[test]
    fn inconsistent_schedules_are_refused() {
        let mut s = listing1();
        s.steps.push(s.steps[2].clone());
        assert!(Plan::new(&s).unwrap_err().contains("repeats"));
        let mut s = listing1();
        s.steps[1].tid = 5;
        assert!(Plan::new(&s).unwrap_err().contains("T5"));
    }
}
