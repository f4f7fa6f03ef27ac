//! Process-wide state: the run's mode, its recording configuration and the sync sequence counter.
//!
//! Takes the outcome of the process start-up (`start`: `ILGEN_OPTIONS`, the trace directory,
//! `meta.json`); gives [`Runtime`] (options, trace directory, `meta.json`) once recording is on,
//! whether the process replays (the one mode branch: record-mode paths find no `Runtime` and fall
//! through to the replay ones), [`say`], [`next_seq`] and the atomics' numbers ([`release_seq`],
//! [`acquire_seq`]).
//!
//! The start-up runs from the ELF constructor (in `lib.rs`) and, because other constructors may
//! call hooks first, lazily from the first hook of any thread; whichever comes first does it, the
//! others wait. This module sits below everything that records or replays, yet the lazy path must
//! run the start-up, which knows them all: it calls it through two symbols bound at link time
//! (`ilgen_rt_start`, `ilgen_rt_started`, defined in `start`), as `#[global_allocator]` binds
//! an allocator, so that no file of the runtime imports one that imports it back.

use std::cell::Cell;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;

use crate::options::Options;
use crate::record::meta::MetaFile;

const UNINIT: u8 = 0;
const INITIALIZING: u8 = 1;
const RECORDING: u8 = 2;
const OFF: u8 = 3;
const REPLAYING: u8 = 4;

static STATUS: AtomicU8 = AtomicU8::new(UNINIT);
static RUNTIME: OnceLock<Runtime> = OnceLock::new();
static SEQ: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Set while this thread initializes, so that a hook reached from inside initialization
    /// (an instrumented allocator, say) records nothing instead of waiting for itself.
    static IN_INIT: Cell<bool> = const { Cell::new(false) };
}

pub(crate) struct Runtime {
    pub options: Options,
    pub dir: PathBuf,
    pub pid: u32,
    pub meta: MetaFile,
}

/// What the start-up decided (once per process: the size difference does not matter).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Init {
    Record(Runtime),
    Replay,
    Off,
}

extern "Rust" {
    /// The start-up (`start::ilgen_rt_start`): reads the options and prepares the mode.
    fn ilgen_rt_start() -> Init;
    /// What follows a start-up into recording once the runtime is in place
    /// (`start::ilgen_rt_started`: the exit, fork and signal handlers).
    fn ilgen_rt_started();
}

/// Writes `message` and a newline on stderr, ignoring failure (stderr may be closed).
pub(crate) fn say(message: &str) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

/// The next sync sequence number: one atomic add per sync operation, none per memory access.
#[inline]
pub(crate) fn next_seq() -> u64 {
    SEQ.fetch_add(1, Ordering::Relaxed)
}

/// The number of the release half of an atomic operation, taken after its instruction while
/// its address's lock is held (`record::stripes`): releases of one address are numbered in the
/// order they took effect.
#[inline]
pub(crate) fn release_seq() -> u64 {
    SEQ.fetch_add(1, Ordering::Release)
}

/// The counter as the acquire half of an atomic operation sees it, after its instruction while
/// its address's lock is held: the releases of that address it could have read from are those
/// numbered below it. No number is taken, so spinning loads do not move the counter (two
/// spinners would record each other's every turn).
#[inline]
pub(crate) fn acquire_seq() -> u64 {
    SEQ.load(Ordering::Acquire)
}

/// The runtime if recording is on, initializing the process on first use.
#[inline]
pub(crate) fn recording() -> Option<&'static Runtime> {
    match STATUS.load(Ordering::Acquire) {
        RECORDING => RUNTIME.get(),
        OFF | REPLAYING => None,
        _ => init_slow(),
    }
}

/// Whether the process replays, initializing the process on first use (`replay::gate::replaying`
/// gives the replay runtime).
#[inline]
pub(crate) fn replaying() -> bool {
    match STATUS.load(Ordering::Acquire) {
        REPLAYING => true,
        RECORDING | OFF => false,
        _ => {
            init_slow();
            STATUS.load(Ordering::Acquire) == REPLAYING
        }
    }
}

/// Initialization is over: the mode will not change any more (except a forked child's, to off).
pub(crate) fn settled() -> bool {
    matches!(STATUS.load(Ordering::Acquire), RECORDING | OFF | REPLAYING)
}

/// The runtime if recording is on; never initializes (for exit and signal paths).
pub(crate) fn get() -> Option<&'static Runtime> {
    if STATUS.load(Ordering::Acquire) == RECORDING {
        RUNTIME.get()
    } else {
        None
    }
}

/// Turns recording off for good (a forked child).
pub(crate) fn turn_off() {
    STATUS.store(OFF, Ordering::Release);
}

#[cold]
fn init_slow() -> Option<&'static Runtime> {
    if IN_INIT.with(|c| c.get()) {
        return None;
    }
    if STATUS
        .compare_exchange(UNINIT, INITIALIZING, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        IN_INIT.with(|c| c.set(true));
        // SAFETY: defined in `start` with this signature; called once, here.
        let done = unsafe { ilgen_rt_start() };
        IN_INIT.with(|c| c.set(false));
        match done {
            Init::Record(rt) => {
                let ok = RUNTIME.set(rt).is_ok();
                STATUS.store(if ok { RECORDING } else { OFF }, Ordering::Release);
                if ok {
                    // Handlers need the runtime in place; install them once it is.
                    // SAFETY: defined in `start` with this signature; called once, here.
                    unsafe { ilgen_rt_started() };
                }
            }
            Init::Replay => STATUS.store(REPLAYING, Ordering::Release),
            Init::Off => STATUS.store(OFF, Ordering::Release),
        }
    } else {
        while STATUS.load(Ordering::Acquire) == INITIALIZING {
            std::thread::yield_now();
        }
    }
    get()
}
