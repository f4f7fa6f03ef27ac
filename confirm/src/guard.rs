//! Nothing outlives `ilgen`: every replayed program's process group is killed when ilgen stops.
//!
//! Takes the process groups [`spawn`] starts; gives their end on ilgen's own SIGINT, SIGTERM or
//! SIGHUP (and, through `run`, on timeout and on normal completion). [`install`], called first
//! thing in `main` before any thread exists, blocks those three signals in every thread ilgen will
//! have and leaves them to one watcher thread (`sigwait`): on a signal it kills every live group,
//! stops further spawns, and ends ilgen with that signal's default action. Spawning and
//! registering a group happen under one lock that the watcher also takes, so no replay can start
//! unseen between the two. Signals that were ignored when ilgen started (a background job's
//! SIGINT) stay ignored.
//!
//! Once replays have proved something, dying would lose it: after [`keep_report`] (called by
//! `ilgen detect` before its replays) the first signal only kills the live groups and stops
//! further spawns, so the replays in flight end at once and the command goes on to print what the
//! finished ones proved ([`stopped_by`] says which signal stopped it); a second signal ends ilgen
//! as before. A user's Ctrl-C on a long detect, or a batch scheduler's SIGTERM at the time limit,
//! so still gets the confirmed findings.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Live process groups, and whether ilgen is stopping (then nothing more is spawned).
struct Groups {
    live: Vec<i32>,
    stopping: bool,
}

static GROUPS: Mutex<Groups> = Mutex::new(Groups {
    live: Vec::new(),
    stopping: false,
});
static WATCHER: OnceLock<()> = OnceLock::new();
/// Whether the first signal leaves ilgen running to report ([`keep_report`]).
static KEEP_REPORT: AtomicBool = AtomicBool::new(false);
/// The signal that stopped the replays (0: none).
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);
/// The signals [`install`] blocked, bit `sig` for signal `sig`.
static BLOCKED: AtomicU64 = AtomicU64::new(0);

/// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (and so in every thread it starts
/// later) and starts the watcher. Call it from `main` before anything starts a thread.
pub fn install() {
    WATCHER.get_or_init(|| {
        // SAFETY: signal-set and mask calls on stack values.
        let set = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in SIGNALS {
                let mut old: libc::sigaction = std::mem::zeroed();
                let ignored = libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN;
                if !ignored {
                    libc::sigaddset(&mut set, sig);
                    BLOCKED.fetch_or(1 << sig, Ordering::SeqCst);
                }
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            set
        };
        std::thread::spawn(move || watch(set));
    });
}

/// From now on the first signal stops the replays without ending ilgen, so that the caller can
/// report what the finished ones proved; a second signal still ends it.
pub fn keep_report() {
    KEEP_REPORT.store(true, Ordering::SeqCst);
}

/// The signal that stopped the replays, if one did (after [`keep_report`]).
pub fn stopped_by() -> Option<i32> {
    Some(STOPPED_BY.load(Ordering::SeqCst)).filter(|&s| s != 0)
}

fn watch(set: libc::sigset_t) {
    let mut sig: libc::c_int = 0;
    loop {
        // SAFETY: waiting for one of the signals this thread (like every other) has blocked.
        if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
            return;
        }
        stop_groups();
        if !KEEP_REPORT.load(Ordering::SeqCst) || STOPPED_BY.swap(sig, Ordering::SeqCst) != 0 {
            break;
        }
    }
    // SAFETY: restore the default action and deliver the signal to ilgen itself, unblocked in
    // this thread, so ilgen ends as the signal says.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut one: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut one);
        libc::sigaddset(&mut one, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
        libc::raise(sig);
    }
}

/// Kills every live group and lets no more start.
fn stop_groups() {
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    groups.stopping = true;
    for &pgid in &groups.live {
        // SAFETY: kill(2) of a process group ilgen created.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
}

/// Makes `cmd`'s program start without the signals [`install`] blocked: a signal mask survives
/// exec, and a program started with SIGINT, SIGTERM and SIGHUP blocked never receives them
/// (memcached's `shutdown` command raises SIGINT, which then stayed pending for good and its
/// replays never shut down; a debugger would ignore Ctrl-C).
pub fn unblocked(cmd: &mut Command) -> &mut Command {
    let blocked = BLOCKED.load(Ordering::SeqCst);
    // SAFETY: the closure runs in the child between fork and exec, and calls only the
    // async-signal-safe signal-set and mask functions on a stack value.
    unsafe {
        cmd.pre_exec(move || {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in SIGNALS {
                if blocked & (1 << sig) != 0 {
                    libc::sigaddset(&mut set, sig);
                }
            }
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            Ok(())
        })
    }
}

/// Spawns `cmd` (which must make its own process group) and registers its group; `None` when
/// ilgen is stopping. The program starts with the signal mask ilgen had before [`install`].
pub fn spawn(cmd: &mut Command) -> Option<std::io::Result<Child>> {
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    if groups.stopping {
        return None;
    }
    let child = unblocked(cmd).spawn();
    if let Ok(c) = &child {
        groups.live.push(c.id() as i32);
    }
    Some(child)
}

/// Kills the group of `pid` (the program and anything it left behind) and forgets it.
pub fn kill(pid: u32) {
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: kill(2) of a process group ilgen created.
    unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
    groups.live.retain(|&g| g != pid as i32);
}
