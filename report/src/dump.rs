//! A recorded trace as text, one event per line (`ilgen dump`).
//!
//! Takes a read trace and, when it could be loaded, the recorded executable (for names); gives
//! deterministic text: a header with
//! the run, then per thread (by thread id) a thread line and its events in program order. Written
//! for people and for FileCheck:
//! ```text
//! run binary=/tmp/listing1 pid=4242 argv=["./listing1"] end=exit threads=2
//! T0 thread main
//! T0 write y size=4 at /src/listing1.c:28:4 main
//! T0 fork T1 seq=0 at /src/listing1.c:29:3 main
//! T0 lock m seq=1 at /src/listing1.c:31:3 main
//! T1 thread parent=T0 child=0
//! T1 start seq=3
//! T1 lock m PENDING at /src/listing1.c:18:3 task
//! ```
//! Accesses: `read`, `write`, `atomic_read`, `atomic_write`, the object and `size=`. Sync events:
//! [`SyncOp::name`], the peer thread or object, a second object or flag where the kind has one
//! (`mutex=m`, `timed`, `timed_out`, `serial`, a semaphore's `count=`), `acquired`/`failed` for
//! try and timed operations.
//! Objects are global variables by name (`counters+8`) or hex addresses; a sync event shows its
//! sequence number, or `PENDING` when the thread was still blocked in it as the trace ended.
//! Heap events: `alloc`, `free`, `stack`, `map` or `unmap` ([`HeapOp::name`]), the block's hex address,
//! `size=` and `seq=` (`T1 free 0x5555555592a0 size=24 seq=7 at /src/jobs.c:40:5 writer`).

use std::io::{self, Write};

use ilgen_binary::Binary;
use ilgen_trace::format::ThreadTrace;
use ilgen_trace::{
    Access, AccessKind, Event, Heap, Meta, RunEnd, SiteId, Sync, SyncOp, TraceDir, NO_SITE,
    NO_THREAD,
};

/// Writes the whole dump.
pub fn write_dump(
    out: &mut dyn Write,
    trace: &TraceDir,
    binary: Option<&Binary>,
) -> io::Result<()> {
    let names = Names { binary };
    writeln!(out, "{}", header(&trace.meta, trace.threads.len()))?;
    for thread in &trace.threads {
        write_thread(out, thread, &names)?;
    }
    Ok(())
}

fn header(meta: &Meta, threads: usize) -> String {
    let argv = serde_json::to_string(&meta.argv).unwrap_or_default();
    let end = match meta.end {
        Some(RunEnd::Exit) => "exit".to_owned(),
        Some(RunEnd::Signal { signal }) => match signal_name(signal) {
            Some(name) => format!("signal {signal} ({name})"),
            None => format!("signal {signal}"),
        },
        None => "none (killed or still running)".to_owned(),
    };
    format!(
        "run binary={} pid={} argv={argv} end={end} threads={threads}",
        meta.binary, meta.pid
    )
}

/// The name `kill -l` gives signal `signal` (for the common ones).
pub fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => return None,
    })
}

fn write_thread(out: &mut dyn Write, thread: &ThreadTrace, names: &Names) -> io::Result<()> {
    let t = thread.header.tid;
    if thread.header.parent == NO_THREAD {
        if t == 0 {
            writeln!(out, "T{t} thread main")?;
        } else {
            writeln!(
                out,
                "T{t} thread parent=unknown (created outside instrumented code)"
            )?;
        }
    } else {
        writeln!(
            out,
            "T{t} thread parent=T{} child={}",
            thread.header.parent, thread.header.child_index
        )?;
    }
    for event in &thread.events {
        let line = match &event {
            Event::Access(a) => access_line(a, names),
            Event::Sync(s) => sync_line(s, names),
            Event::Heap(h) => heap_line(h, names),
            Event::Atomic(a) => format!(
                "{} {} seq={}{}",
                a.op.name(),
                names.object(a.addr),
                a.seq,
                names.site(a.site)
            ),
        };
        writeln!(out, "T{t} {line}")?;
    }
    Ok(())
}

/// How addresses and sites are named: by the binary when it could be loaded.
struct Names<'a> {
    binary: Option<&'a Binary>,
}

impl Names<'_> {
    fn object(&self, addr: u64) -> String {
        self.binary
            .and_then(|b| b.object_name(addr))
            .unwrap_or_else(|| format!("{addr:#x}"))
    }

    /// ` at file:line:col function`, ` at site#N` when unknown, nothing for [`NO_SITE`].
    fn site(&self, id: SiteId) -> String {
        if id == NO_SITE {
            return String::new();
        }
        match self.binary.and_then(|b| b.site(id)) {
            Some(s) => format!(
                " at {}:{}:{} {}",
                s.frame.file, s.frame.line, s.frame.column, s.frame.function
            ),
            None => format!(" at site#{id}"),
        }
    }
}

fn access_line(a: &Access, names: &Names) -> String {
    let kind = match a.kind {
        AccessKind::Read => "read",
        AccessKind::Write => "write",
        AccessKind::AtomicRead => "atomic_read",
        AccessKind::AtomicWrite => "atomic_write",
    };
    format!(
        "{kind} {} size={}{}",
        names.object(a.addr),
        a.size,
        names.site(a.site)
    )
}

fn heap_line(h: &Heap, names: &Names) -> String {
    let (addr, size) = h.op.block();
    format!(
        "{} {addr:#x} size={size} seq={}{}",
        h.op.name(),
        h.seq,
        names.site(h.site)
    )
}

fn sync_line(s: &Sync, names: &Names) -> String {
    let mut line = s.op.name().to_owned();
    if let Some(peer) = s.op.peer_thread() {
        line += &format!(" T{peer}");
    }
    if let Some(obj) = s.op.object() {
        line += " ";
        line += &names.object(obj);
    }
    // The second object or flag each kind carries.
    match s.op {
        SyncOp::CondWait { mutex, timed, .. } => {
            line += &format!(" mutex={}", names.object(mutex));
            if timed {
                line += " timed";
            }
        }
        SyncOp::CondWake {
            mutex, timed_out, ..
        } => {
            line += &format!(" mutex={}", names.object(mutex));
            if timed_out {
                line += " timed_out";
            }
        }
        SyncOp::BarrierExit { serial: true, .. } => line += " serial",
        SyncOp::SemInit { count, .. } => line += &format!(" count={count}"),
        _ => {}
    }
    if !s.is_pending() {
        if let Some(acquired) = s.op.acquired() {
            line += if acquired { " acquired" } else { " failed" };
        }
        line += &format!(" seq={}", s.seq);
    } else {
        // The thread was blocked here: the outcome of a try/timed operation is not known yet.
        line += " PENDING";
    }
    line += &names.site(s.site);
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use ilgen_trace::format::ThreadHeader;
    use ilgen_trace::{HeapOp, FORMAT_VERSION, PENDING};

    fn meta(end: Option<RunEnd>) -> Meta {
        Meta {
            pid: 42,
            argv: vec!["./a".into(), "x y".into()],
            cwd: "/".into(),
            binary: "/nonexistent/a".into(),
            build_id: "0".into(),
            end,
            ..Default::default()
        }
    }

    fn sync(seq: u64, site: SiteId, op: SyncOp) -> Event {
        Event::Sync(Sync { seq, site, op })
    }

    #[test]
    fn dump_without_binary_shows_ids_and_addresses() {
        let trace = TraceDir {
            path: "t".into(),
            meta: meta(Some(RunEnd::Signal { signal: 15 })),
            threads: vec![
                ThreadTrace {
                    header: ThreadHeader {
                        version: FORMAT_VERSION,
                        tid: 0,
                        parent: NO_THREAD,
                        child_index: 0,
                    },
                    events: vec![
                        Event::Access(Access {
                            addr: 0x1000,
                            size: 4,
                            site: 3,
                            kind: AccessKind::AtomicWrite,
                        }),
                        sync(0, 4, SyncOp::Fork { child: 1 }),
                        Event::Heap(Heap {
                            seq: 5,
                            site: 8,
                            op: HeapOp::Free {
                                addr: 0x5000,
                                size: 24,
                            },
                        }),
                        sync(PENDING, 5, SyncOp::MutexLock { mutex: 0x2000 }),
                    ]
                    .into(),
                },
                ThreadTrace {
                    header: ThreadHeader {
                        version: FORMAT_VERSION,
                        tid: 1,
                        parent: 0,
                        child_index: 0,
                    },
                    events: vec![
                        sync(1, NO_SITE, SyncOp::Start),
                        sync(
                            2,
                            6,
                            SyncOp::MutexTryLock {
                                mutex: 0x2000,
                                acquired: false,
                            },
                        ),
                        sync(
                            3,
                            7,
                            SyncOp::CondWake {
                                cond: 0x30,
                                mutex: 0x2000,
                                timed_out: true,
                            },
                        ),
                    ]
                    .into(),
                },
            ],
        };
        let mut out = Vec::new();
        write_dump(&mut out, &trace, None).unwrap();
        let text = String::from_utf8(out).unwrap();
        let expected = "\
run binary=/nonexistent/a pid=42 argv=[\"./a\",\"x y\"] end=signal 15 (SIGTERM) threads=2
T0 thread main
T0 atomic_write 0x1000 size=4 at site#3
T0 fork T1 seq=0 at site#4
T0 free 0x5000 size=24 seq=5 at site#8
T0 lock 0x2000 PENDING at site#5
T1 thread parent=T0 child=0
T1 start seq=1
T1 trylock 0x2000 failed seq=2 at site#6
T1 wake 0x30 mutex=0x2000 timed_out seq=3 at site#7
";
        assert_eq!(text, expected);
    }

    #[test]
    fn end_none_says_killed() {
        assert!(header(&meta(None), 1).contains("end=none (killed or still running)"));
    }
}
