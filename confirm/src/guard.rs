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

use std::process::{Child, Command};
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
                }
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            set
        };
        std::thread::spawn(move || watch(set));
    });
}

fn watch(set: libc::sigset_t) {
    let mut sig: libc::c_int = 0;
    // SAFETY: waiting for one of the signals this thread (like every other) has blocked.
    if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
        return;
    }
    if let Ok(mut groups) = GROUPS.lock() {
        groups.stopping = true;
        for &pgid in &groups.live {
            // SAFETY: kill(2) of a process group ilgen created.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
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

/// Spawns `cmd` (which must make its own process group) and registers its group; `None` when
/// ilgen is stopping.
pub fn spawn(cmd: &mut Command) -> Option<std::io::Result<Child>> {
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    if groups.stopping {
        return None;
    }
    let child = cmd.spawn();
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
