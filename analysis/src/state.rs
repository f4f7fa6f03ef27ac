//! The sync processes of the model: the state of every sync object and what it allows next.
//!
//! Takes a [`Model`] and how far each thread has run; gives [`State`], which says whether a thread's
//! next operation is enabled and applies it. Both solvers (cut and exhaustive) move through the
//! model only by these rules, so they agree on what a schedule may do. The rules themselves are
//! the transitions of [`crate::semantics`] (which the CSP_M translation derives from too); this
//! module supplies their facts. Whether a thread was forked or ended, an instance signalled, a
//! barrier entered or the process exited follows from the positions ([`crate::model::Sources`]); a state stores only
//! what does not: lock holders, semaphore counts, which threads wait at a wait-loop exit, and
//! which signals were lost to a wait that was entered after them.

use crate::model::{At, Model, ModelOp, TryTarget, Wake};
use crate::semantics::{
    self, BarrierOp, CondOp, Creation, CreationOp, Holder, MutexOp, ProcessOp, RwLock, RwOp, SemOp,
    Termination, TerminationOp,
};

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// Per thread: how many of its events have run.
    pub pos: Vec<usize>,
    /// The mutexes held, each with its holder and recursion count, sorted by mutex; a free mutex is
    /// absent. A run has thousands of mutexes (memcached's item lock table) and few held at once,
    /// while the exhaustive search clones, hashes and compares a state per step: a slot per mutex
    /// made each step cost the whole table (memcached: 10 s per search of 200,000 states, 5 GiB).
    held: Vec<(usize, (usize, u32))>,
    rw: Vec<RwLock>,
    sem: Vec<u32>,
    /// Per thread: it released its mutex to wait at a wait-loop exit (its segment's accesses,
    /// made before the wait, are behind it).
    waiting: Vec<bool>,
    /// (condition instance, thread): the instance was signalled before the thread entered its
    /// bare wait ([`crate::model::Sources::bare_waits_of`]), so it never wakes that wait.
    /// Sorted; almost always empty.
    lost: Vec<(usize, usize)>,
}

impl Clone for State {
    fn clone(&self) -> State {
        State {
            pos: self.pos.clone(),
            held: self.held.clone(),
            rw: self.rw.clone(),
            sem: self.sem.clone(),
            waiting: self.waiting.clone(),
            lost: self.lost.clone(),
        }
    }

    /// Field by field, into the buffers `self` has: the exhaustive search tries every thread's
    /// step on one scratch copy, which then allocates nothing.
    fn clone_from(&mut self, source: &State) {
        self.pos.clone_from(&source.pos);
        self.held.clone_from(&source.held);
        self.rw.clone_from(&source.rw);
        self.sem.clone_from(&source.sem);
        self.waiting.clone_from(&source.waiting);
        self.lost.clone_from(&source.lost);
    }
}

/// A field of [`State::encode`]'s words that has no value: a free rwlock's writer.
const NONE: u32 = u32::MAX;

/// The bit of [`State::encode`]'s words that makes one a run of threads at their base position
/// (the run's length in the other bits), not a thread's distance from it.
const STILL: u32 = 1 << 31;

impl State {
    /// Appends the state to `out` as words: what the exhaustive search keeps of each state it
    /// visited, so that a state is one slice of a shared buffer rather than six vectors of its
    /// own (allocating, freeing and comparing those was a fifth of app_tpool's detect). Only the
    /// threads in `moving` (ascending) are written, each as its distance from its position in
    /// `base`, a run of threads still there as one word: a search moves a window's threads only,
    /// from the window's start, and a program that starts a thread per job has thousands of them,
    /// most not started yet in any state a bounded search reaches (htslib's thrash_threads2, 9,001
    /// threads: a word per thread per state made its 200,000 states 7 GB). Two states of one
    /// model that agree outside `moving` are equal exactly when their words are: every
    /// variable-length part is preceded by its length or ends a run, and the number of rwlocks
    /// and semaphores is the model's.
    pub fn encode(&self, moving: &[usize], base: &[usize], out: &mut Vec<u32>) {
        let word = |x: usize| u32::try_from(x).expect("a model's indices fit in 32 bits");
        let mut still = 0u32;
        for &t in moving {
            let moved = self.pos[t] - base[t];
            if moved == 0 {
                still += 1;
                continue;
            }
            if still > 0 {
                out.push(STILL | still);
                still = 0;
            }
            assert!(moved < STILL as usize, "a thread's events fit in 31 bits");
            out.push(word(moved));
        }
        if still > 0 {
            out.push(STILL | still);
        }
        out.extend(moving.chunks(32).map(|threads| {
            threads
                .iter()
                .enumerate()
                .fold(0u32, |w, (i, &t)| w | (u32::from(self.waiting[t]) << i))
        }));
        out.push(word(self.held.len()));
        for &(mutex, (holder, count)) in &self.held {
            out.extend([word(mutex), word(holder), count]);
        }
        for rw in &self.rw {
            out.push(rw.writer.map_or(NONE, word));
            out.push(word(rw.readers.len()));
            out.extend(rw.readers.iter().map(|&r| word(r)));
        }
        out.extend(&self.sem);
        out.push(word(self.lost.len()));
        for &(cond, thread) in &self.lost {
            out.extend([word(cond), word(thread)]);
        }
    }

    /// Makes `self` the state whose [`State::encode`] with `moving` and `base` gave `words`,
    /// reusing its buffers. `self` must be a state of the same model and hold the positions and
    /// waits of the threads not in `moving` (they are not in the words).
    pub fn decode(&mut self, moving: &[usize], base: &[usize], words: &[u32]) {
        let mut words = words.iter().map(|&w| w as usize);
        let mut next = || words.next().expect("a state's words, as encoded");
        let mut threads = moving.iter();
        while let Some(&t) = threads.next() {
            let w = next();
            if w & STILL as usize == 0 {
                self.pos[t] = base[t] + w;
                continue;
            }
            self.pos[t] = base[t];
            for &t in threads.by_ref().take((w & !(STILL as usize)) - 1) {
                self.pos[t] = base[t];
            }
        }
        for chunk in moving.chunks(32) {
            let bits = next();
            for (i, &t) in chunk.iter().enumerate() {
                self.waiting[t] = bits >> i & 1 == 1;
            }
        }
        let held = next();
        self.held.clear();
        self.held
            .extend((0..held).map(|_| (next(), (next(), next() as u32))));
        for rw in &mut self.rw {
            let writer = next();
            rw.writer = (writer != NONE as usize).then_some(writer);
            let readers = next();
            rw.readers.clear();
            rw.readers.extend((0..readers).map(|_| next()));
        }
        for sem in &mut self.sem {
            *sem = next() as u32;
        }
        let lost = next();
        self.lost.clear();
        self.lost.extend((0..lost).map(|_| (next(), next())));
    }
}

/// Where a thread stands, given the end of the part of it the search may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Its next constraining event, at this index.
    At(usize),
    /// Nothing constraining is left: the thread is done.
    Finished,
    /// Its next constraining event lies beyond the search's end (a window boundary): the thread
    /// may go on in the real run, so it is neither done nor blocked.
    Cut,
}

impl State {
    /// Every thread at its beginning, every object as the run found it.
    pub fn initial(model: &Model) -> State {
        let o = &model.objects;
        State {
            pos: vec![0; model.threads.len()],
            held: Vec::new(),
            rw: vec![RwLock::default(); o.rwlocks.len()],
            sem: o.sems.iter().map(|s| s.initial).collect(),
            waiting: vec![false; model.threads.len()],
            lost: Vec::new(),
        }
    }

    /// Runs these sync events as the run did, in this order (an observed order, each thread's
    /// next ones), with no check; each thread ends right after the last of its events.
    pub fn run_observed(&mut self, model: &Model, order: impl IntoIterator<Item = At>) {
        for at in order {
            if let Some(op) = model.op(at) {
                self.apply(model, at.thread, op);
            }
            self.pos[at.thread] = at.index + 1;
        }
    }

    /// The thread's next constraining event, if it lies before `end` (its events the search may
    /// run are those before `end`). A thread that ran an operation it was still blocked in when
    /// the run ended goes on beyond its trace, so it is not finished.
    pub fn next(&self, model: &Model, thread: usize, end: usize) -> Next {
        match model.next_stop(thread, self.pos[thread]) {
            None if model.ran_pending(thread, self.pos[thread]) => Next::Cut,
            None => Next::Finished,
            Some(q) if q >= end => Next::Cut,
            Some(q) => Next::At(q),
        }
    }

    /// Whether the event at `at` has run.
    fn passed(&self, at: Option<At>) -> bool {
        at.is_some_and(|at| self.pos.get(at.thread).is_some_and(|&p| p > at.index))
    }

    fn signalled(&self, model: &Model, cond: usize) -> bool {
        self.passed(model.signal_of(cond))
    }

    /// Thread `child`'s creation as the positions tell it. Its start is its own next operation
    /// whenever the question is asked, so it has not started.
    fn creation(&self, model: &Model, child: usize) -> Creation {
        Creation {
            forked: self.passed(model.fork_of(child)),
            started: false,
        }
    }

    /// Thread `child`'s end as the positions tell it; each join runs once by its position, so
    /// none is counted.
    fn termination(&self, model: &Model, child: usize) -> Termination {
        Termination {
            ended: self.passed(model.end_of(child)),
            joined: 0,
        }
    }

    fn owner(&self, mutex: usize) -> Holder {
        let i = self.held.binary_search_by_key(&mutex, |&(m, _)| m).ok()?;
        Some(self.held[i].1)
    }

    fn set_owner(&mut self, mutex: usize, holder: Holder) {
        match (self.held.binary_search_by_key(&mutex, |&(m, _)| m), holder) {
            (Ok(i), Some(h)) => self.held[i].1 = h,
            (Ok(i), None) => {
                self.held.remove(i);
            }
            (Err(i), Some(h)) => self.held.insert(i, (mutex, h)),
            (Err(_), None) => {}
        }
    }

    /// The mutex after `thread` performs `op` on it, if it may now.
    fn mutex(&self, model: &Model, thread: usize, mutex: usize, op: MutexOp) -> Option<Holder> {
        let recursive = model.objects.mutexes[mutex].recursive;
        semantics::mutex(self.owner(mutex), thread, op, recursive, u32::MAX)
    }

    /// The entered count after `op` at `barrier`, if it may happen now.
    fn barrier(&self, model: &Model, barrier: usize, op: BarrierOp) -> Option<u32> {
        let b = &model.objects.barriers[barrier];
        let entered = model
            .enters_of(barrier)
            .filter(|&at| self.passed(Some(at)))
            .count() as u32;
        semantics::barrier(entered, op, b.parties, b.released, u32::MAX)
    }

    /// Whether the process allows `op` now: nothing but a no-op once the exit has run.
    fn alive(&self, model: &Model, op: ModelOp) -> bool {
        let exited = self.passed(model.exit_of());
        let op = match op {
            ModelOp::Nop => return true,
            ModelOp::Exit => ProcessOp::Exit,
            _ => ProcessOp::Step,
        };
        semantics::process(exited, op).is_some()
    }

    /// Whether `thread` may perform `op` now.
    pub fn enabled(&self, model: &Model, thread: usize, op: ModelOp) -> bool {
        self.alive(model, op) && self.allows(model, thread, op)
    }

    /// Whether the objects `op` acts on let `thread` perform it now.
    fn allows(&self, model: &Model, thread: usize, op: ModelOp) -> bool {
        match op {
            ModelOp::Start { forked } => {
                semantics::creation(self.creation(model, thread), CreationOp::Start { forked })
                    .is_some()
            }
            ModelOp::Fork { child } => {
                semantics::creation(self.creation(model, child), CreationOp::Fork).is_some()
            }
            ModelOp::End => {
                let s = self.termination(model, thread);
                semantics::termination(s, TerminationOp::End, usize::MAX).is_some()
            }
            ModelOp::Join { child } => {
                let s = self.termination(model, child);
                semantics::termination(s, TerminationOp::Join, usize::MAX).is_some()
            }
            ModelOp::Lock { mutex } => self.mutex(model, thread, mutex, MutexOp::Lock).is_some(),
            ModelOp::Unlock { mutex } => {
                self.mutex(model, thread, mutex, MutexOp::Unlock).is_some()
            }
            ModelOp::WaitRelease { mutex } => self
                .mutex(model, thread, mutex, MutexOp::WaitRelease)
                .is_some(),
            ModelOp::ReadLock { rw } => self.rw[rw].allows(thread, RwOp::Read, u32::MAX),
            ModelOp::WriteLock { rw } => self.rw[rw].allows(thread, RwOp::Write, u32::MAX),
            ModelOp::RwUnlock { rw } => self.rw[rw].allows(thread, RwOp::Unlock, u32::MAX),
            ModelOp::WaitReturn { mutex, wake } => {
                let woken = match wake {
                    Wake::Signal(c) => {
                        let lost = self.lost.binary_search(&(c, thread)).is_ok();
                        semantics::condition(self.signalled(model, c), lost, CondOp::Wake)
                    }
                    Wake::Unsignalled => true,
                    Wake::Never => false,
                };
                woken
                    && self
                        .mutex(model, thread, mutex, MutexOp::WaitReturn)
                        .is_some()
            }
            ModelOp::Signal { cond } => {
                semantics::condition(self.signalled(model, cond), false, CondOp::Signal)
            }
            ModelOp::LoopExit { cond, mutex } => {
                semantics::condition(self.signalled(model, cond), false, CondOp::LoopExit)
                    && mutex
                        .is_none_or(|m| self.mutex(model, thread, m, MutexOp::LoopExit).is_some())
            }
            ModelOp::BarrierEnter { barrier } => {
                self.barrier(model, barrier, BarrierOp::Enter).is_some()
            }
            ModelOp::BarrierExit { barrier } => {
                self.barrier(model, barrier, BarrierOp::Exit).is_some()
            }
            ModelOp::SemWait { sem, units } => {
                semantics::semaphore(self.sem[sem], SemOp::Wait(units), u32::MAX).is_some()
            }
            ModelOp::SemPost { sem, units } => {
                semantics::semaphore(self.sem[sem], SemOp::Post(units), u32::MAX).is_some()
            }
            ModelOp::TryFail { target } => self.busy(thread, target),
            ModelOp::Exit | ModelOp::Nop => true,
        }
    }

    /// Whether a try operation of `thread` on `target` fails now: another thread holds the mutex;
    /// another thread holds the rwlock for writing (read try) or at all (write try); the
    /// semaphore's count is zero.
    pub fn busy(&self, thread: usize, target: TryTarget) -> bool {
        match target {
            TryTarget::Mutex(m) => {
                semantics::mutex(self.owner(m), thread, MutexOp::TryFail, false, u32::MAX).is_some()
            }
            TryTarget::RwRead(rw) => self.rw[rw].allows(thread, RwOp::TryReadFail, u32::MAX),
            TryTarget::RwWrite(rw) => self.rw[rw].allows(thread, RwOp::TryWriteFail, u32::MAX),
            TryTarget::Sem(sem) => {
                semantics::semaphore(self.sem[sem], SemOp::TryWaitFail, u32::MAX).is_some()
            }
        }
    }

    /// The threads whose hold makes a try on `target` fail: the mutex's owner; the rwlock's
    /// writer, and for a write try also its readers (the writer first, then readers in the order
    /// they took it). A semaphore has no holders.
    pub fn holders(&self, target: TryTarget) -> Vec<usize> {
        match target {
            TryTarget::Mutex(m) => self.owner(m).map(|(h, _)| h).into_iter().collect(),
            TryTarget::RwRead(rw) => self.rw[rw].writer.into_iter().collect(),
            TryTarget::RwWrite(rw) => {
                let state = &self.rw[rw];
                state
                    .writer
                    .into_iter()
                    .chain(state.readers.iter().copied())
                    .collect()
            }
            TryTarget::Sem(_) => Vec::new(),
        }
    }

    /// Whether `thread` stands at a failed try operation that cannot fail now: in the real program
    /// it would succeed and go on another way, so it is not blocked (see [`ModelOp::TryFail`]).
    pub fn diverted(&self, thread: usize, op: ModelOp) -> bool {
        matches!(op, ModelOp::TryFail { target } if !self.busy(thread, target))
    }

    /// Whether `thread`, stopped before its event `index` (operation `op`) that the model cannot
    /// run now, is still not blocked there in the real program: a failed try that cannot fail
    /// ([`State::diverted`]), a try or timed acquisition, which fails or times out where it
    /// cannot take its object ([`crate::model::ModelThread::acquires_by_try`]), or a wait-loop
    /// exit that would wait ([`State::release_to_wait`]). No deadlock has such a thread.
    pub fn escapes(&self, model: &Model, thread: usize, index: usize, op: ModelOp) -> bool {
        self.diverted(thread, op)
            || model.threads[thread].acquires_by_try(index)
            || self.clone().release_to_wait(model, thread, op)
    }

    /// Performs `op` for `thread` (positions are the caller's business): each object it touches
    /// takes the transition of [`crate::semantics`]; an object that does not allow the operation
    /// is left as it is rather than panicking.
    pub fn apply(&mut self, model: &Model, thread: usize, op: ModelOp) {
        if let Some(w) = self.waiting.get_mut(thread) {
            *w = false;
        }
        let (mutex, mutex_op) = match op {
            ModelOp::Lock { mutex } => (mutex, MutexOp::Lock),
            ModelOp::Unlock { mutex } => (mutex, MutexOp::Unlock),
            ModelOp::WaitRelease { mutex } => (mutex, MutexOp::WaitRelease),
            ModelOp::WaitReturn { mutex, .. } => (mutex, MutexOp::WaitReturn),
            ModelOp::LoopExit {
                mutex: Some(mutex), ..
            } => (mutex, MutexOp::LoopExit),
            ModelOp::ReadLock { rw } => return self.apply_rw(thread, rw, RwOp::Read),
            ModelOp::WriteLock { rw } => return self.apply_rw(thread, rw, RwOp::Write),
            ModelOp::RwUnlock { rw } => return self.apply_rw(thread, rw, RwOp::Unlock),
            ModelOp::SemWait { sem, units } => return self.apply_sem(sem, SemOp::Wait(units)),
            ModelOp::SemPost { sem, units } => return self.apply_sem(sem, SemOp::Post(units)),
            // Fork, start, end, join, signal, barriers and exit change no stored state (the
            // positions tell them); a failed try changes nothing.
            _ => return,
        };
        if let Some(next) = self.mutex(model, thread, mutex, mutex_op) {
            self.set_owner(mutex, next);
        }
    }

    fn apply_rw(&mut self, thread: usize, rw: usize, op: RwOp) {
        if self.rw[rw].allows(thread, op, u32::MAX) {
            self.rw[rw].apply(thread, op);
        }
    }

    fn apply_sem(&mut self, sem: usize, op: SemOp) {
        if let Some(n) = semantics::semaphore(self.sem[sem], op, u32::MAX) {
            self.sem[sem] = n;
        }
    }

    /// The wait a thread at an unsignalled [`ModelOp::LoopExit`] would call: it releases the
    /// mutex and stays where it is. False if that is not the thread's situation.
    pub fn release_to_wait(&mut self, model: &Model, thread: usize, op: ModelOp) -> bool {
        let ModelOp::LoopExit {
            cond,
            mutex: Some(m),
        } = op
        else {
            return false;
        };
        if !self.alive(model, op)
            || !semantics::condition(self.signalled(model, cond), false, CondOp::LoopRelease)
        {
            return false;
        }
        let Some(next) = self.mutex(model, thread, m, MutexOp::LoopRelease) else {
            return false;
        };
        self.set_owner(m, next);
        self.waiting[thread] = true;
        true
    }

    /// A signal of `cond` now reaches none of its bare waits not yet entered.
    fn lose_signal(&mut self, model: &Model, cond: usize) {
        let Some(waits) = model.bare_waits_of(cond) else {
            return;
        };
        let entered = waits.map(|(waiter, release)| (waiter, self.pos[waiter] > release));
        for waiter in semantics::lost_to(entered).collect::<Vec<_>>() {
            if let Err(i) = self.lost.binary_search(&(cond, waiter)) {
                self.lost.insert(i, (cond, waiter));
            }
        }
    }

    /// The mutexes `thread` holds.
    pub fn mutexes_of(&self, thread: usize) -> impl Iterator<Item = usize> + '_ {
        self.held
            .iter()
            .filter(move |&&(_, (h, _))| h == thread)
            .map(|&(m, _)| m)
    }

    /// Whether `thread` holds an rwlock, for reading or writing.
    pub fn holds_rwlock(&self, thread: usize) -> bool {
        self.rw
            .iter()
            .any(|r| r.writer == Some(thread) || r.readers.contains(&thread))
    }

    /// Drops every other thread's holds: what `thread`'s own operations then do to its locks is
    /// what they did in any run where they were enabled.
    pub fn only_holds_of(&mut self, thread: usize) {
        self.held.retain(|&(_, (h, _))| h == thread);
        for r in &mut self.rw {
            r.writer = r.writer.filter(|&w| w == thread);
            r.readers.retain(|&h| h == thread);
        }
    }

    /// Whether the thread released its mutex to wait at a wait-loop exit.
    pub fn waiting(&self, thread: usize) -> bool {
        self.waiting[thread]
    }

    /// A thread whose hold of the lock keeps `op` from running, if that is what blocks it.
    pub fn holder(&self, op: ModelOp) -> Option<usize> {
        match op {
            ModelOp::Lock { mutex } | ModelOp::WaitReturn { mutex, .. } => {
                self.owner(mutex).map(|(h, _)| h)
            }
            ModelOp::ReadLock { rw } | ModelOp::WriteLock { rw } => {
                let state = &self.rw[rw];
                state.writer.or_else(|| state.readers.first().copied())
            }
            _ => None,
        }
    }

    /// Whether the writers the sync event at `stop` waits for ([`Model::rf_needs`]) have run. Not
    /// part of [`State::enabled`]: a thread that waits only for such an edge is not blocked in the
    /// real program, so it never makes a deadlock.
    fn rf_ready(&self, model: &Model, thread: usize, stop: usize) -> bool {
        model
            .rf_needs(At {
                thread,
                index: stop,
            })
            .all(|w| self.passed(Some(w)))
    }

    /// Whether [`State::advance`] would run `thread` through `stop`: a search asks before it
    /// copies the state, since most threads of a state are blocked.
    pub fn may_advance(&self, model: &Model, thread: usize, stop: usize) -> bool {
        self.ready(model, thread, stop).is_some()
    }

    /// The operation at `stop`, if `thread` may run it now.
    fn ready(&self, model: &Model, thread: usize, stop: usize) -> Option<ModelOp> {
        let op = model.threads[thread].events[stop].op()?;
        (self.enabled(model, thread, op) && self.rf_ready(model, thread, stop)).then_some(op)
    }

    /// Runs `thread` through its constraining event at `stop` (and the accesses and no-ops
    /// before it), if that event is enabled.
    pub fn advance(&mut self, model: &Model, thread: usize, stop: usize) -> bool {
        let Some(op) = self.ready(model, thread, stop) else {
            return false;
        };
        if let ModelOp::Signal { cond } = op {
            self.lose_signal(model, cond);
        }
        self.apply(model, thread, op);
        self.pos[thread] = stop + 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use ilgen_trace::{SyncOp, NO_SITE};

    use super::*;
    use crate::model::{
        BarrierObject, MutexObject, Observed, SemObject, SyncObjects, ThreadBuilder,
    };

    fn model(threads: Vec<Vec<ModelOp>>, objects: SyncObjects) -> Model {
        Model::new(
            threads
                .into_iter()
                .enumerate()
                .map(|(t, ops)| {
                    let mut thread = ThreadBuilder::new(t as u32);
                    for op in ops {
                        thread.sync(
                            op,
                            Observed {
                                seq: 0,
                                op_index: 0,
                                site: NO_SITE,
                                op: SyncOp::Start,
                            },
                        );
                    }
                    thread.build()
                })
                .collect(),
            objects,
        )
    }

    fn mutexes(recursive: bool) -> SyncObjects {
        SyncObjects {
            mutexes: vec![MutexObject { addr: 1, recursive }],
            ..SyncObjects::default()
        }
    }

    #[test]
    fn mutex_only_the_holder_unlocks_and_others_wait() {
        let m = model(vec![vec![], vec![]], mutexes(false));
        let mut s = State::initial(&m);
        let (lock, unlock) = (ModelOp::Lock { mutex: 0 }, ModelOp::Unlock { mutex: 0 });
        assert!(!s.enabled(&m, 0, unlock), "nobody holds it");
        s.apply(&m, 0, lock);
        assert!(!s.enabled(&m, 1, lock));
        assert!(!s.enabled(&m, 1, unlock), "only the holder unlocks");
        assert!(!s.enabled(&m, 0, lock), "a plain mutex does not relock");
        assert!(s.enabled(&m, 0, unlock));
        s.apply(&m, 0, unlock);
        assert!(s.enabled(&m, 1, lock));
    }

    #[test]
    fn recursive_mutex_counts_its_levels() {
        let m = model(vec![vec![], vec![]], mutexes(true));
        let mut s = State::initial(&m);
        let (lock, unlock) = (ModelOp::Lock { mutex: 0 }, ModelOp::Unlock { mutex: 0 });
        s.apply(&m, 0, lock);
        assert!(s.enabled(&m, 0, lock));
        s.apply(&m, 0, lock);
        s.apply(&m, 0, unlock);
        assert!(!s.enabled(&m, 1, lock), "one level still held");
        s.apply(&m, 0, unlock);
        assert!(s.enabled(&m, 1, lock));
    }

    #[test]
    fn failed_trylock_happens_only_while_another_thread_holds_the_mutex() {
        let m = model(vec![vec![], vec![], vec![]], mutexes(false));
        let mut s = State::initial(&m);
        let fail = ModelOp::TryFail {
            target: TryTarget::Mutex(0),
        };
        assert!(!s.enabled(&m, 1, fail), "free: the trylock would succeed");
        assert!(s.diverted(1, fail));
        s.apply(&m, 0, ModelOp::Lock { mutex: 0 });
        assert!(s.enabled(&m, 1, fail));
        assert!(!s.diverted(1, fail));
        assert!(!s.enabled(&m, 0, fail), "held by the thread itself");
        let before = s.clone();
        s.apply(&m, 1, fail);
        assert_eq!(s, before, "acquires nothing");
        assert!(s.enabled(&m, 2, fail), "fails again for anyone else");
        assert_eq!(s.holder(fail), None, "not blocked by a holder");
        s.apply(&m, 0, ModelOp::Unlock { mutex: 0 });
        assert!(!s.enabled(&m, 1, fail));
        assert!(!s.diverted(1, ModelOp::Nop));
        assert!(s.enabled(&m, 1, ModelOp::Nop), "a no-op runs anywhere");
    }

    #[test]
    fn failed_rwlock_tries_need_a_writer_or_for_writing_any_holder() {
        let objects = SyncObjects {
            rwlocks: vec![7],
            ..SyncObjects::default()
        };
        let m = model(vec![vec![], vec![], vec![]], objects);
        let (rd_fail, wr_fail) = (
            ModelOp::TryFail {
                target: TryTarget::RwRead(0),
            },
            ModelOp::TryFail {
                target: TryTarget::RwWrite(0),
            },
        );
        let mut s = State::initial(&m);
        assert!(!s.enabled(&m, 1, rd_fail) && !s.enabled(&m, 1, wr_fail));
        s.apply(&m, 0, ModelOp::ReadLock { rw: 0 });
        assert!(!s.enabled(&m, 1, rd_fail), "readers share");
        assert!(s.enabled(&m, 1, wr_fail), "a reader keeps a writer out");
        assert!(!s.enabled(&m, 0, wr_fail), "its own read lock only");
        s.apply(&m, 0, ModelOp::RwUnlock { rw: 0 });
        s.apply(&m, 2, ModelOp::WriteLock { rw: 0 });
        assert!(s.enabled(&m, 1, rd_fail) && s.enabled(&m, 1, wr_fail));
        assert!(!s.enabled(&m, 2, rd_fail) && !s.enabled(&m, 2, wr_fail));
    }

    #[test]
    fn failed_sem_trywait_needs_a_zero_count() {
        let m = model(vec![vec![], vec![]], one_sem(1));
        let fail = ModelOp::TryFail {
            target: TryTarget::Sem(0),
        };
        let mut s = State::initial(&m);
        assert!(!s.enabled(&m, 1, fail));
        s.apply(&m, 0, ModelOp::SemWait { sem: 0, units: 1 });
        assert!(
            s.enabled(&m, 1, fail),
            "any thread fails on zero, the waiter too"
        );
        assert!(s.enabled(&m, 0, fail));
        s.apply(&m, 1, fail);
        assert!(s.enabled(&m, 1, fail), "and takes nothing");
        s.apply(&m, 0, ModelOp::SemPost { sem: 0, units: 1 });
        assert!(!s.enabled(&m, 1, fail));
    }

    #[test]
    fn rwlock_admits_many_readers_or_one_writer() {
        let objects = SyncObjects {
            rwlocks: vec![7],
            ..SyncObjects::default()
        };
        let m = model(vec![vec![], vec![], vec![]], objects);
        let mut s = State::initial(&m);
        let (rd, wr, un) = (
            ModelOp::ReadLock { rw: 0 },
            ModelOp::WriteLock { rw: 0 },
            ModelOp::RwUnlock { rw: 0 },
        );
        s.apply(&m, 0, rd);
        assert!(s.enabled(&m, 1, rd));
        s.apply(&m, 1, rd);
        assert!(!s.enabled(&m, 2, wr));
        assert!(
            !s.enabled(&m, 2, un),
            "a thread holding nothing does not unlock"
        );
        s.apply(&m, 0, un);
        s.apply(&m, 1, un);
        assert!(s.enabled(&m, 2, wr));
        s.apply(&m, 2, wr);
        assert!(!s.enabled(&m, 0, rd));
        assert!(!s.enabled(&m, 0, wr));
    }

    /// Runs `thread`'s next event if it is enabled.
    fn step(s: &mut State, m: &Model, thread: usize) -> bool {
        let next = s.pos[thread];
        s.advance(m, thread, next)
    }

    #[test]
    fn start_after_fork_and_join_after_end() {
        let m = model(
            vec![
                vec![ModelOp::Fork { child: 1 }, ModelOp::Join { child: 1 }],
                vec![ModelOp::Start { forked: true }, ModelOp::End],
            ],
            SyncObjects::default(),
        );
        let mut s = State::initial(&m);
        assert!(!step(&mut s, &m, 1), "not forked yet");
        assert!(step(&mut s, &m, 0));
        assert!(!step(&mut s, &m, 0), "not ended yet");
        assert!(step(&mut s, &m, 1));
        assert!(step(&mut s, &m, 1));
        assert!(step(&mut s, &m, 0));
        assert!(State::initial(&m).enabled(&m, 1, ModelOp::Start { forked: false }));
    }

    fn cond_objects(conds: usize) -> SyncObjects {
        SyncObjects {
            mutexes: vec![MutexObject {
                addr: 1,
                recursive: false,
            }],
            conds: vec![5; conds],
            ..SyncObjects::default()
        }
    }

    #[test]
    fn condition_instance_releases_its_wait_only_after_its_signal() {
        let (lock, unlock) = (ModelOp::Lock { mutex: 0 }, ModelOp::Unlock { mutex: 0 });
        let m = model(
            vec![
                vec![
                    lock,
                    ModelOp::WaitRelease { mutex: 0 },
                    ModelOp::WaitReturn {
                        mutex: 0,
                        wake: Wake::Signal(1),
                    },
                ],
                vec![
                    lock,
                    ModelOp::Signal { cond: 0 },
                    ModelOp::Signal { cond: 1 },
                    unlock,
                ],
            ],
            cond_objects(2),
        );
        let mut s = State::initial(&m);
        assert!(step(&mut s, &m, 0));
        assert!(step(&mut s, &m, 0), "the wait releases the mutex");
        assert!(step(&mut s, &m, 1));
        assert!(step(&mut s, &m, 1));
        assert!(!step(&mut s, &m, 0), "another instance's signal");
        assert!(step(&mut s, &m, 1));
        assert!(!step(&mut s, &m, 0), "signalled, but the mutex is held");
        assert!(step(&mut s, &m, 1));
        assert!(step(&mut s, &m, 0));
        let never = ModelOp::WaitReturn {
            mutex: 0,
            wake: Wake::Never,
        };
        assert!(!State::initial(&m).enabled(&m, 0, never));
    }

    #[test]
    fn no_thread_takes_a_step_after_the_exit() {
        let (lock, unlock) = (ModelOp::Lock { mutex: 0 }, ModelOp::Unlock { mutex: 0 });
        let m = model(
            vec![vec![lock, unlock, ModelOp::Exit], vec![lock, unlock]],
            mutexes(false),
        );
        assert_eq!(
            m.sources().exit_of,
            Some(At {
                thread: 0,
                index: 2
            })
        );
        let mut s = State::initial(&m);
        assert!(step(&mut s, &m, 0) && step(&mut s, &m, 0));
        let before = s.clone();
        assert!(
            step(&mut s, &m, 1),
            "before the exit the other thread may go first"
        );
        assert!(step(&mut s, &m, 0), "the exit waits for nobody");
        assert!(!s.enabled(&m, 0, ModelOp::Exit), "the process exits once");
        assert!(
            !step(&mut s, &m, 1),
            "the mutex is free, but the process has exited"
        );
        assert!(
            !m.process_alive(&s.pos),
            "and the thread left at its unlock is no deadlock"
        );
        assert!(s.enabled(&m, 1, ModelOp::Nop));
        let mut s = before;
        assert!(step(&mut s, &m, 0));
        assert!(!step(&mut s, &m, 1), "its lock came after the exit");
    }

    #[test]
    fn unsignalled_wait_loop_exit_may_release_its_mutex_to_wait() {
        let (lock, unlock) = (ModelOp::Lock { mutex: 0 }, ModelOp::Unlock { mutex: 0 });
        let exit = ModelOp::LoopExit {
            cond: 0,
            mutex: Some(0),
        };
        let m = model(
            vec![
                vec![lock, exit, unlock],
                vec![lock, ModelOp::Signal { cond: 0 }, unlock],
            ],
            cond_objects(1),
        );
        let mut s = State::initial(&m);
        assert!(step(&mut s, &m, 0));
        assert!(!step(&mut s, &m, 0), "not signalled");
        assert!(s.release_to_wait(&m, 0, exit));
        assert!(step(&mut s, &m, 1), "the waiting thread released the mutex");
        assert!(step(&mut s, &m, 1));
        assert!(!step(&mut s, &m, 0), "signalled but the mutex is held");
        assert!(!s.release_to_wait(&m, 0, exit));
        assert!(step(&mut s, &m, 1));
        assert!(step(&mut s, &m, 0), "takes the mutex back and leaves");
        assert!(!s.enabled(&m, 1, lock));

        // After the exit, the wait is not called either.
        let m = model(
            vec![vec![lock, exit, unlock], vec![ModelOp::Exit]],
            cond_objects(1),
        );
        let mut s = State::initial(&m);
        assert!(step(&mut s, &m, 0));
        assert!(s.clone().release_to_wait(&m, 0, exit));
        assert!(step(&mut s, &m, 1));
        assert!(!s.release_to_wait(&m, 0, exit));
    }

    #[test]
    fn barrier_instance_lets_nobody_out_before_all_entered() {
        let objects = SyncObjects {
            barriers: vec![
                BarrierObject {
                    addr: 3,
                    parties: 2,
                    released: true,
                },
                BarrierObject {
                    addr: 3,
                    parties: 1,
                    released: false,
                },
            ],
            ..SyncObjects::default()
        };
        let (enter, exit) = (
            ModelOp::BarrierEnter { barrier: 0 },
            ModelOp::BarrierExit { barrier: 0 },
        );
        let m = model(
            vec![
                vec![
                    enter,
                    exit,
                    ModelOp::BarrierEnter { barrier: 1 },
                    ModelOp::BarrierExit { barrier: 1 },
                ],
                vec![enter, exit],
            ],
            objects,
        );
        let mut s = State::initial(&m);
        assert!(step(&mut s, &m, 0));
        assert!(!step(&mut s, &m, 0), "thread 1 has not entered");
        assert!(step(&mut s, &m, 1));
        assert!(step(&mut s, &m, 0));
        assert!(step(&mut s, &m, 1));
        assert!(step(&mut s, &m, 0));
        assert!(!step(&mut s, &m, 0), "never released in the run");
    }

    fn one_sem(initial: u32) -> SyncObjects {
        SyncObjects {
            sems: vec![SemObject {
                addr: 4,
                initial,
                recorded: Some(initial),
            }],
            ..SyncObjects::default()
        }
    }

    #[test]
    fn a_state_decodes_from_its_words_to_itself() {
        let objects = SyncObjects {
            rwlocks: vec![7, 8],
            ..one_sem(2)
        };
        let objects = SyncObjects {
            mutexes: vec![
                MutexObject {
                    addr: 1,
                    recursive: true,
                };
                3
            ],
            ..objects
        };
        let m = model(vec![vec![]; 34], objects);
        let mut s = State::initial(&m);
        let all: Vec<usize> = (0..34).collect();
        let zero = vec![0; 34];
        let words = |s: &State| {
            let mut w = Vec::new();
            s.encode(&all, &zero, &mut w);
            w
        };
        let empty = words(&s);
        s.apply(&m, 5, ModelOp::Lock { mutex: 2 });
        s.apply(&m, 5, ModelOp::Lock { mutex: 2 });
        s.apply(&m, 1, ModelOp::Lock { mutex: 0 });
        s.apply(&m, 3, ModelOp::ReadLock { rw: 1 });
        s.apply(&m, 4, ModelOp::ReadLock { rw: 1 });
        s.apply(&m, 6, ModelOp::WriteLock { rw: 0 });
        s.apply(&m, 2, ModelOp::SemWait { sem: 0, units: 1 });
        s.pos[33] = 9;
        s.waiting[33] = true;
        s.waiting[0] = true;
        s.lost = vec![(0, 2), (1, 33)];
        let full = words(&s);
        let mut back = State::initial(&m);
        back.decode(&all, &zero, &full);
        assert_eq!(back, s);
        back.decode(&all, &zero, &empty);
        assert_eq!(
            back,
            State::initial(&m),
            "the buffers are emptied, not kept"
        );
        s.waiting[33] = false;
        assert_ne!(
            words(&s),
            full,
            "a thread past the first 32 has its own bit"
        );
    }

    #[test]
    fn threads_at_their_base_are_one_word_per_run_and_the_others_are_not_written() {
        let m = model(vec![vec![]; 40], SyncObjects::default());
        let base: Vec<usize> = (0..40).map(|t| 10 * t).collect();
        // Threads 0 and 39 do not move in this search: their positions are not in the words.
        let moving: Vec<usize> = (1..39).collect();
        let mut s = State::initial(&m);
        s.pos.clone_from(&base);
        s.pos[0] = 3;
        s.pos[39] = 1;
        let encode = |s: &State| {
            let mut w = Vec::new();
            s.encode(&moving, &base, &mut w);
            w
        };
        // 38 threads at their base: one run and two words of wait bits before the rest.
        let at_base = encode(&s);
        assert_eq!(at_base[..3], [STILL | 38, 0, 0]);
        s.pos[1] += 2;
        s.pos[20] += 7;
        s.pos[38] += 1;
        s.waiting[20] = true;
        let moved = encode(&s);
        assert_eq!(moved[..5], [2, STILL | 18, 7, STILL | 17, 1]);
        assert_eq!(
            moved[5..7],
            [1 << 19, 0],
            "thread 20 is the 20th moving one"
        );
        let mut back = State::initial(&m);
        back.pos[0] = 3;
        back.pos[39] = 1;
        back.decode(&moving, &base, &moved);
        assert_eq!(back, s);
        back.decode(&moving, &base, &at_base);
        s.pos[1] -= 2;
        s.pos[20] -= 7;
        s.pos[38] -= 1;
        s.waiting[20] = false;
        assert_eq!(back, s);
    }

    #[test]
    fn semaphore_counts_from_its_initial_value() {
        let m = model(vec![vec![], vec![]], one_sem(1));
        let mut s = State::initial(&m);
        let (wait, post) = (
            ModelOp::SemWait { sem: 0, units: 1 },
            ModelOp::SemPost { sem: 0, units: 1 },
        );
        assert!(s.enabled(&m, 0, wait));
        s.apply(&m, 0, wait);
        assert!(!s.enabled(&m, 1, wait));
        s.apply(&m, 0, post);
        assert!(s.enabled(&m, 1, wait));
    }

    #[test]
    fn a_signal_before_a_bare_wait_is_lost_to_it() {
        let objects = SyncObjects {
            conds: vec![9],
            ..mutexes(false)
        };
        let signal = ModelOp::Signal { cond: 0 };
        let wake = ModelOp::WaitReturn {
            mutex: 0,
            wake: Wake::Signal(0),
        };
        let waiter = vec![
            ModelOp::Lock { mutex: 0 },
            ModelOp::WaitRelease { mutex: 0 },
            wake,
        ];
        let m = model(vec![vec![signal], waiter], objects);
        assert_eq!(
            m.sources().bare_waits_of,
            std::collections::BTreeMap::from([(0, vec![(1, 1)])])
        );

        // Waiting first: the signal wakes it.
        let mut s = State::initial(&m);
        assert!(s.advance(&m, 1, 0) && s.advance(&m, 1, 1) && s.advance(&m, 0, 0));
        assert!(s.enabled(&m, 1, wake));

        // Signalled first: the wait that follows never returns.
        let mut s = State::initial(&m);
        assert!(s.advance(&m, 0, 0) && s.advance(&m, 1, 0) && s.advance(&m, 1, 1));
        assert!(!s.enabled(&m, 1, wake));
    }
}
