//! Giving each read of a stream its recorded outcome (`ilgen_trace::inputs`).
//!
//! Takes the trace directory's inputs files (at start-up, from the schedule's directory) and each
//! read the wrapper (`intercept::input`) found to be on a stream socket, a pipe or a FIFO; gives
//! the thread's n-th such read the n-th outcome its recorded thread had:
//! - a failure (-1 with `EAGAIN`, `EINTR`, ...) is returned at once, nothing read;
//! - a count k is read from the real descriptor until exactly k bytes are in: the peer (a new run
//!   of the client that drove the recording) sends the same bytes, but split and timed its own
//!   way, and the path a reader takes depends on what one read got;
//! - an end of stream (0) waits for the peer to close.
//!
//! While short the thread polls the descriptor with status `Input` (the watchdog names it in a
//! divergence, and never counts it as blocked in a sync operation); a peer that sends nothing for
//! `replay_timeout_ms`, closes early, sends more where the recording saw the end, or fails ends
//! the replay with a divergence saying so. The bytes are not recorded: a peer that sends other
//! bytes than the recording's is out of scope.
//!
//! The recorded thread of a replay thread: its own tid when the schedule names it (or main);
//! else, for a child of such a thread, the recorded thread with the same parent and child index.
//! Any other thread, a thread with no file, every read after the recorded ones, and every read
//! once the replay has left its schedule (the run no longer retraces the recorded one, and a read
//! held to a recorded count would wait for bytes no peer sends), read freely.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use ilgen_trace::inputs::{read_dir, Input};
use ilgen_trace::replay::Divergence;
use ilgen_trace::ThreadId;

use crate::replay::gate::{self, now_ms};
use crate::replay::report;
use crate::replay::thread::{current_if_live, ReplayThread, Status};

struct Recorded {
    by_tid: HashMap<ThreadId, Vec<Input>>,
    /// (parent, child index) → recorded tid.
    by_identity: HashMap<(ThreadId, u32), ThreadId>,
}

static RECORDED: OnceLock<Recorded> = OnceLock::new();

/// Reads the inputs files of the trace directory `dir`; the error names the bad file.
pub(crate) fn load(dir: &Path) -> Result<(), String> {
    let files = read_dir(dir).map_err(|e| e.to_string())?;
    let recorded = Recorded {
        by_identity: files
            .iter()
            .map(|f| ((f.header.parent, f.header.child_index), f.header.tid))
            .collect(),
        by_tid: files
            .into_iter()
            .map(|f| (f.header.tid, f.inputs))
            .collect(),
    };
    let _ = RECORDED.set(recorded);
    Ok(())
}

/// The recorded outcomes of the thread `t` stands for.
fn outcomes(t: &ReplayThread) -> Option<&'static [Input]> {
    let recorded = RECORDED.get()?;
    let first_fresh = gate::get()?.plan.first_fresh;
    let me = t.info.me;
    let tid = if me.tid < first_fresh {
        me.tid
    } else {
        let parent = me.parent.filter(|&p| p < first_fresh)?;
        *recorded.by_identity.get(&(parent, me.child_index))?
    };
    recorded.by_tid.get(&tid).map(Vec::as_slice)
}

/// The calling thread's next recorded outcome (and its number), if it has one, not taken yet.
fn upcoming() -> Option<(&'static ReplayThread, u32, Input)> {
    if gate::get()?.abandoned() {
        return None;
    }
    let t = current_if_live()?;
    let all = outcomes(t)?;
    let nth = t.info.inputs.load(Ordering::Relaxed);
    Some((t, nth, *all.get(nth as usize)?))
}

/// The calling thread's next recorded outcome, if it has one; `stream` decides (once the thread
/// is known to have outcomes) whether the read counts.
fn next(stream: impl FnOnce() -> bool) -> Option<(&'static ReplayThread, u32, Input)> {
    let (t, nth, input) = upcoming()?;
    if !stream() {
        return None;
    }
    t.info.inputs.store(nth + 1, Ordering::Relaxed);
    Some((t, nth, input))
}

/// What the calling thread's next read of a stream returned in the recording, if it has a
/// recorded outcome: a read that got bytes was also recorded as a sync operation
/// (`SyncOp::ChannelRead`), and [`serve`] gives it exactly that many.
pub(crate) fn upcoming_result() -> Option<i64> {
    upcoming().map(|(_, _, input)| input.result)
}

fn set_errno(e: i32) {
    // SAFETY: writing this thread's errno.
    unsafe { *libc::__errno_location() = e };
}

fn errno() -> i32 {
    // SAFETY: reading this thread's errno.
    unsafe { *libc::__errno_location() }
}

/// Serves a read of at most `len` bytes on `fd` with its recorded outcome; `read(offset, n)` makes
/// the real call for `n` bytes into the buffer at `offset`. `None`: not a read with a recorded
/// outcome, the caller reads freely. `stream` says whether `fd` is one whose reads count.
pub(crate) fn serve(
    fd: i32,
    len: usize,
    stream: impl FnOnce() -> bool,
    mut read: impl FnMut(usize, usize) -> isize,
) -> Option<isize> {
    let (t, nth, input) = next(stream)?;
    if input.result < 0 {
        set_errno(input.errno);
        return Some(-1);
    }
    let want = input.result as usize;
    let tid = t.tid();
    let said = |what: String| -> ! {
        report::diverged(Divergence {
            step: None,
            expected: None,
            got: None,
            reason: format!(
                "T{tid}'s read #{nth} on fd {fd} returned {} in the recording, {what}",
                if want == 0 {
                    "the end of the stream".to_owned()
                } else {
                    format!("{want} bytes")
                }
            ),
        })
    };
    if want > len {
        said(format!("the replay asked for {len}"));
    }
    let timeout = gate::get().map_or(10_000, |r| u64::from(r.options.replay_timeout_ms));
    t.info.set(Status::Input {
        fd,
        nth,
        want: input.result,
    });
    let mut got = 0usize;
    let mut since = now_ms();
    while got < want || want == 0 {
        if gate::get().is_some_and(|r| r.abandoned()) {
            // Another thread left the schedule meanwhile: what came in is this read's outcome,
            // and with nothing yet the caller reads freely.
            t.info.set(Status::Running);
            return (got > 0).then_some(got as isize);
        }
        let left = timeout.saturating_sub(now_ms().saturating_sub(since));
        if left == 0 {
            said(format!(
                "the replay's peer sent {got} and nothing more for {timeout} ms"
            ));
        }
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd on the stack. A tenth of a second at most, to see an abandonment.
        let ready = unsafe { libc::poll(&mut pfd, 1, left.min(100) as i32) };
        if ready <= 0 {
            continue;
        }
        let r = if want == 0 {
            read(0, len)
        } else {
            read(got, want - got)
        };
        match r {
            0 if want == 0 => break,
            0 => said(format!("the replay's peer closed after {got}")),
            n if n > 0 && want == 0 => said(format!("the replay's peer sent {n} more bytes")),
            n if n > 0 => {
                got += n as usize;
                since = now_ms();
            }
            _ => match errno() {
                libc::EAGAIN | libc::EINTR => {}
                e => said(format!(
                    "the replay's read failed after {got}: {}",
                    std::io::Error::from_raw_os_error(e)
                )),
            },
        }
    }
    t.info.set(Status::Running);
    Some(want as isize)
}
