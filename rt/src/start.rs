//! The process start-up: reads `ILGEN_OPTIONS` and prepares the mode it names.
//!
//! Takes `ILGEN_OPTIONS` and the process environment; gives the `runtime::Init` that `runtime`
//! publishes: a [`Runtime`] with its trace directory and `meta.json` when recording (then the
//! exit, fork and signal handlers, once the runtime is in place), the replay runtime
//! (`replay::gate::Replay`: the schedule checked against this binary, the recorded reads'
//! outcomes beside it, then the exit and fork handlers and the watchdog) when replaying, or off. `runtime` reaches this module through the two
//! link-time symbols below, not by import: the start-up knows every layer of the runtime, and
//! `runtime` sits under all of them.
//!
//! A reused trace directory loses the thread files of its earlier run. A failure (trace directory
//! cannot be created, `meta.json` cannot be written) prints one message naming the path and turns
//! recording off: the program keeps running. The trace directory is private (0700, see
//! [`private_dir`]): it holds the program's data.

use std::path::PathBuf;

use ilgen_trace::schedule::Schedule;

use crate::options::{Mode, Options};
use crate::record::meta::MetaFile;
use crate::replay::gate::{self, Plan, Replay};
use crate::replay::{self, report};
use crate::runtime::{self, say, Init, Runtime};
use crate::sites::Ids;

/// Called by `runtime` right after a start-up into recording, with the runtime in place.
#[no_mangle]
fn ilgen_rt_started() {
    crate::record::finish::install();
}

/// A shared object got its site ids after the start: `meta.json` names it.
fn modules_changed() {
    if let Some(rt) = runtime::get() {
        rt.meta.set_modules(crate::sites::modules());
    }
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

/// Removes thread, inputs and pending files of an earlier run from a reused directory (an explicit
/// `trace_dir`), so that the reader does not mix that run's threads or segments into this one.
fn remove_stale_threads(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let name = name.strip_suffix(".tmp").unwrap_or(&name);
        if ilgen_trace::thread_file_tid(name).is_some()
            || ilgen_trace::inputs::inputs_file_tid(name).is_some()
            || ilgen_trace::pending::file_index(name).is_some()
        {
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
        // A schedule that cannot be replayed ends the process inside `start_replaying`.
        Mode::Replay => match start_replaying(options) {
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
    crate::sites::init(Ids::Record {
        changed: modules_changed,
    });
    let meta = match MetaFile::start(
        &dir,
        pid,
        &cwd,
        (options.chaos != 0).then_some(options.chaos),
        options.calls,
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
    if options.calls {
        crate::calls::turn_on();
    }
    Some(Runtime {
        options,
        dir,
        pid,
        meta,
    })
}

/// Where `replay-outcome.json` goes: `outcome_dir`, else `trace_dir`, else the schedule's
/// directory; relative to the working directory at start.
fn outcome_dir(options: &Options) -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let pid = std::process::id().to_string();
    let dir = if !options.outcome_dir.is_empty() {
        PathBuf::from(options.outcome_dir.replace("%p", &pid))
    } else if !options.trace_dir.is_empty() {
        PathBuf::from(options.trace_dir.replace("%p", &pid))
    } else {
        PathBuf::from(&options.schedule)
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_default()
    };
    cwd.join(dir)
}

/// Reads and checks the schedule and the recorded reads' outcomes, then starts the replay: the gate, the exit and fork handlers,
/// the watchdog. On failure: one message, an outcome saying why, and exit status
/// `EXIT_BAD_SCHEDULE`; the program does not run.
fn start_replaying(options: Options) -> Option<&'static Replay> {
    let dir = outcome_dir(&options);
    let build_id = crate::exe::build_id();
    let refuse = |why: String| -> ! { report::refused(&dir, &build_id, &options.schedule, &why) };
    if options.schedule.is_empty() {
        refuse("mode=replay needs schedule=PATH in ILGEN_OPTIONS".into());
    }
    let schedule = match Schedule::read(std::path::Path::new(&options.schedule)) {
        Ok(s) => s,
        Err(e) => refuse(format!("cannot replay: {e}")),
    };
    // Two binaries without an id would match each other: an empty id is no identity.
    if build_id.is_empty() {
        refuse(format!(
            "this binary has no ELF build id, so schedule {} cannot be checked against it; \
             rebuild it with `ilgen cc`, record it again and run ilgen detect on its trace",
            options.schedule
        ));
    }
    if schedule.build_id != build_id {
        refuse(format!(
            "schedule {} was made for another binary (build id {}, this binary is {}); record \
             this binary again and run ilgen detect on its trace",
            options.schedule, schedule.build_id, build_id
        ));
    }
    let plan = match Plan::new(&schedule) {
        Ok(p) => p,
        Err(why) => refuse(format!(
            "schedule {} is inconsistent: {why}",
            options.schedule
        )),
    };
    // The inputs files sit beside the schedule, in the trace directory `ilgen detect` wrote it to.
    let trace_dir = std::path::Path::new(&options.schedule)
        .parent()
        .unwrap_or(std::path::Path::new("."));
    if let Err(e) = replay::inputs::load(trace_dir) {
        refuse(format!("cannot replay: {e}"));
    }
    if !replay::sync::create_exit_key() {
        refuse("failed to create a thread key".into());
    }
    // The recorded shared objects' site ids; a trace without a readable meta.json leaves their
    // sites without ids (a replay then reports them as the executable's calls).
    let recorded = ilgen_trace::Meta::read(trace_dir).map_or_else(|_| Vec::new(), |m| m.modules);
    crate::sites::init(Ids::Replay(recorded));
    if options.verbosity >= 1 {
        say(&format!(
            "ilgen: replaying {} ({} steps), outcome in {}",
            options.schedule,
            plan.steps.len(),
            dir.display()
        ));
    }
    if options.calls {
        crate::calls::turn_on();
    }
    let r = gate::install(Replay::new(options, plan, build_id, dir))?;
    replay::stack::turn_on();
    // SAFETY: registering handlers that only touch the runtime's own state.
    unsafe {
        libc::atexit(on_replay_exit);
        libc::pthread_atfork(None, None, Some(on_replay_fork_child));
    }
    Some(r)
}

extern "C" fn on_replay_exit() {
    if gate::get().is_some_and(|r| r.pid == std::process::id()) {
        report::at_exit();
    }
}

/// A forked child stops replaying: its parent's other threads, which the schedule names, do not
/// exist in it. It writes no outcome.
extern "C" fn on_replay_fork_child() {
    runtime::turn_off();
    replay::thread::set_done();
}
