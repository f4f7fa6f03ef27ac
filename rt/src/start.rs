//! The process start-up: reads `ILGEN_OPTIONS` and prepares the mode it names.
//!
//! Takes `ILGEN_OPTIONS` and the process environment; gives the `runtime::Init` that `runtime`
//! publishes: a [`Runtime`] with its trace directory and `meta.json` when recording (then the
//! exit, fork and signal handlers, once the runtime is in place), the replay runtime
//! (`replay::gate::init`) when replaying, or off. `runtime` reaches this module through the two
//! link-time symbols below, not by import: the start-up knows every layer of the runtime, and
//! `runtime` sits under all of them.
//!
//! A reused trace directory loses the thread files of its earlier run. A failure (trace directory
//! cannot be created, `meta.json` cannot be written) prints one message naming the path and turns
//! recording off: the program keeps running. The trace directory is private (0700, see
//! [`private_dir`]): it holds the program's data.

use std::path::PathBuf;

use crate::options::{Mode, Options};
use crate::record::meta::MetaFile;
use crate::runtime::{say, Init, Runtime};

/// Called by `runtime` right after a start-up into recording, with the runtime in place.
#[no_mangle]
fn ilgen_rt_started() {
    crate::record::finish::install();
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

/// Called by `runtime` once per process, on the thread that starts it.
#[no_mangle]
fn ilgen_rt_start() -> Init {
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
    if !crate::thread::create_exit_key() {
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
    })
}
