//! Process-wide state: initialization, the run's configuration and the sync sequence counter.
//!
//! Takes `ILGEN_OPTIONS` and the process environment; gives [`Runtime`] (options, trace
//! directory, `meta.json`, the thread-exit key) once recording is on, `replay::gate::Replay` once
//! replaying (the one mode branch: record-mode paths find no `Runtime` and fall through to the
//! replay ones), and [`next_seq`].
//! Initialization runs from an ELF constructor (`.init_array`, in this same object so that linking
//! any hook links it too) and, because other constructors may call hooks first, lazily from the
//! first hook of any thread; whichever comes first does it, the others wait. A reused trace
//! directory loses the thread files of its earlier run. A failure (trace
//! directory cannot be created, `meta.json` cannot be written) prints one message naming the path
//! and turns recording off: the program keeps running. The trace directory is private (0700, see
//! [`private_dir`]): it holds the program's data.

use std::cell::Cell;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;

use crate::options::{Mode, Options};
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
    /// Its destructor ends a thread that exits through code the runtime does not see.
    pub thread_key: libc::pthread_key_t,
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

/// The runtime if recording is on, initializing the process on first use.
#[inline]
pub(crate) fn recording() -> Option<&'static Runtime> {
    match STATUS.load(Ordering::Acquire) {
        RECORDING => RUNTIME.get(),
        OFF | REPLAYING => None,
        _ => init_slow(),
    }
}

/// The replay runtime if the process replays, initializing the process on first use.
#[inline]
pub(crate) fn replaying() -> Option<&'static crate::replay::gate::Replay> {
    match STATUS.load(Ordering::Acquire) {
        REPLAYING => crate::replay::gate::get(),
        RECORDING | OFF => None,
        _ => {
            init_slow();
            if STATUS.load(Ordering::Acquire) == REPLAYING {
                crate::replay::gate::get()
            } else {
                None
            }
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
        let done = initialize();
        IN_INIT.with(|c| c.set(false));
        match done {
            Init::Record(rt) => {
                let ok = RUNTIME.set(rt).is_ok();
                STATUS.store(if ok { RECORDING } else { OFF }, Ordering::Release);
                if ok {
                    // Handlers need the runtime in place; install them once it is.
                    crate::record::finish::install();
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

/// The trace directory the options name, absolute (the program may change directory later).
fn trace_dir(options: &Options, pid: u32, cwd: &std::path::Path) -> PathBuf {
    let dir = if options.trace_dir.is_empty() {
        let exe = std::fs::read_link("/proc/self/exe").unwrap_or_default();
        let base = exe
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "program".into());
        PathBuf::from("ilgen-out").join(format!("{base}-{pid}"))
    } else {
        PathBuf::from(options.trace_dir.replace("%p", &pid.to_string()))
    };
    cwd.join(dir)
}

/// Creates `dir` (and missing parents) mode 0700, or takes an existing one that the calling user
/// owns and narrows it to 0700: a trace holds the program's data.
fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let md = std::fs::metadata(dir)?;
    // SAFETY: geteuid never fails.
    if md.uid() != unsafe { libc::geteuid() } {
        return Err(std::io::Error::other("it belongs to another user"));
    }
    if md.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Removes thread files of an earlier run from a reused directory (an explicit `trace_dir`), so
/// that the reader does not mix that run's threads into this one.
fn remove_stale_threads(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let stale = name
            .strip_prefix('t')
            .and_then(|n| n.strip_suffix(".tmp").or(Some(n)))
            .and_then(|n| n.strip_suffix(".trace"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// What initialization decided (once per process: the size difference does not matter).
#[allow(clippy::large_enum_variant)]
enum Init {
    Record(Runtime),
    Replay,
    Off,
}

fn initialize() -> Init {
    let text = std::env::var("ILGEN_OPTIONS").unwrap_or_default();
    let (options, errors) = Options::parse(&text);
    for e in &errors {
        say(&format!("ilgen: {e}"));
    }
    if options.help {
        say(&Options::help_text());
    }
    match options.mode {
        Mode::Off => Init::Off,
        // A schedule that cannot be replayed ends the process inside `replay::gate::init`.
        Mode::Replay => match crate::replay::gate::init(options) {
            Some(_) => Init::Replay,
            None => Init::Off,
        },
        Mode::Record => start_recording(options).map_or(Init::Off, Init::Record),
    }
}

fn start_recording(options: Options) -> Option<Runtime> {
    let pid = std::process::id();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let dir = trace_dir(&options, pid, &cwd);
    if let Err(e) = private_dir(&dir) {
        say(&format!(
            "ilgen: failed to create trace directory {}: {e}; recording is off",
            dir.display()
        ));
        return None;
    }
    remove_stale_threads(&dir);
    crate::sites::init();
    let meta = match MetaFile::start(
        &dir,
        pid,
        &cwd,
        (options.chaos != 0).then_some(options.chaos),
    ) {
        Ok(m) => m,
        Err(e) => {
            say(&format!(
                "ilgen: failed to write {}: {e}; recording is off",
                dir.join(ilgen_trace::meta::META_FILE).display()
            ));
            return None;
        }
    };
    let mut thread_key: libc::pthread_key_t = 0;
    // SAFETY: creating a key with a destructor that accepts any value this runtime stores.
    if unsafe { libc::pthread_key_create(&mut thread_key, Some(crate::thread::on_thread_exit)) }
        != 0
    {
        say("ilgen: failed to create a thread key; recording is off");
        return None;
    }
    if options.verbosity >= 1 {
        say(&format!("ilgen: recording to {}", dir.display()));
    }
    Some(Runtime {
        options,
        dir,
        pid,
        meta,
        thread_key,
    })
}

/// The ELF constructor: initializes the runtime and the main thread before `main`.
#[cfg_attr(test, allow(dead_code))]
extern "C" fn constructor() {
    if recording().is_some() {
        crate::thread::current();
    } else if replaying().is_some() {
        crate::replay::thread::current();
    }
}

// Not in unit tests: the test harness must not start recording itself.
#[cfg(not(test))]
#[used]
#[link_section = ".init_array"]
static CONSTRUCTOR: extern "C" fn() = constructor;
