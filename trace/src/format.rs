//! The on-disk trace: one directory per recorded run, thread files plus `meta.json`.
//!
//! Takes events and a header (runtime side) or a directory path (analyzer side); gives the bytes of
//! a thread file, and back a [`TraceDir`] with every thread's events in program order.
//!
//! Thread file `t<tid>.trace`:
//! ```text
//! magic "ILGENTHR" | header (bincode, fixed-int, little endian) | record*
//!     (section: 0x8c | magic | header | record*)* | (zero bytes)*
//! ```
//! A file holds thread `tid`'s records and, after each section record, those of a thread that
//! took the file over: the runtime gives the file of a thread that ended to the next thread it
//! starts, so a program that starts a thread per job (9,001 threads in htslib's
//! `thrash_threads2`, 8 alive at a time) writes as many files as it has threads alive at once, not
//! one per thread. Each thread is in exactly one file, whole.
//!
//! Records are compact (tags and LEB128 deltas, see [`crate::codec`]). A zero tag ends them: the
//! runtime writes through a shared file mapping that it grows in zero-filled chunks, so a process
//! killed with SIGKILL leaves its records followed by zeros, and that file still reads as complete
//! up to the last record written.
//!
//! Frozen layout: bincode writes each enum's variant index, so the variant order of [`Event`],
//! `SyncOp`, `HeapOp` and [`AccessKind`] is part of the format: new variants are appended, never
//! inserted or reordered. `trace/tests/golden.rs` pins the bytes of the header and of every
//! record kind.
//!
//! Versions (bump [`FORMAT_VERSION`] on any change; old traces are refused with a message):
//! - 1: first format.
//! - 2: `SyncOp::Exit`, the end of the process on the exiting thread (appended to the enum), and
//!   `Event::Heap` (allocations, frees and thread stacks).
//! - 3: `meta.json` names the executable by its ELF `build_id` alone; `binary_hash` (xxh3 of the
//!   whole file, read at every start) is gone. `SyncOp::SemInit`, a semaphore's count from
//!   `sem_init` or `sem_open`, `SyncOp::SemTimedWait` (`sem_timedwait`, `sem_clockwait`) and
//!   `SyncOp::SemDestroy` (appended).
//! - 4: a run that finished normally is sealed: `meta.json` lists every thread file's length and
//!   xxh3-64 checksum (`files`) and ends with a `checksum` of its own bytes (see `meta`); the
//!   reader refuses a sealed trace whose files differ. `HeapOp::Map` and `HeapOp::Unmap`
//!   (anonymous mappings, appended); `SyncOp::MutexDestroy`, `CondDestroy`, `RwDestroy`,
//!   `BarrierDestroy`, then `SyncOp::TxBegin`/`TxEnd`, the outermost atomic blocks (appended).
//! - 5: compact records (tags, LEB128 deltas and slots, see [`crate::codec`]) instead of a length byte and the
//!   fixed-int bincode of every event: ~4 bytes per record instead of ~25. Later, with the same
//!   bytes: a run recorded with `calls=1` says so in `meta.json` (`calls`), and its
//!   `TxBegin`/`TxEnd` also mark calls, which nest (an older reader refuses such a trace: its
//!   atomic blocks would begin inside one another); every other trace is as before.
//! - 6: window records (`0x84 | kind`, see [`crate::codec`]): the byte reads of one site at a
//!   stride, one record per 64 bytes; pending files' ranges carry the window's mask (40 bytes
//!   each, see [`crate::pending`]).
//! - 7: `Event::Atomic` (appended; records `0x88 | op`, see [`crate::codec`]): the acquire and
//!   release halves of atomic operations, numbered in the run's order, for the happens-before
//!   of C/C++ atomics.
//! - 8: section records (`0x8c`, see [`crate::codec`]): a thread file holds the threads that took
//!   it over after its first thread ended, each after a section that repeats the file's start
//!   with the next thread's header. `HeapOp::Map`/`Unmap` cover mappings of files too, not
//!   anonymous ones alone (the same records).
//! - 9: sites of instrumented shared objects: `meta.json` lists each one the run loaded
//!   (`modules`: path, build id, load base, its first site id and units, see `meta`), and their
//!   accesses carry ids from those ranges instead of no site. An older trace is refused: its
//!   shared objects' accesses have no site, which a report would name by the executable's call.
//! - 10: `SyncOp::ChannelWrite` and `SyncOp::ChannelRead` (appended): the bytes that went into and
//!   came out of a pipe, FIFO or stream socket, so the analysis orders a read after the writes
//!   whose bytes it got.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::event::{Event, SyncOp, ThreadId, NO_THREAD};
use crate::events::Summed;
pub use crate::events::{Events, Marks};
use crate::meta::Meta;

pub use crate::error::{TraceError, FORMAT_VERSION};
pub const THREAD_MAGIC: [u8; 8] = *b"ILGENTHR";
pub use crate::codec::{Encoder, MAX_RECORD};

fn config() -> impl bincode::config::Config {
    bincode::config::standard()
        .with_little_endian()
        .with_fixed_int_encoding()
}

/// Header of a thread file: who the thread is, in terms stable across runs.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadHeader {
    pub version: u32,
    pub tid: ThreadId,
    /// [`crate::NO_THREAD`] for the main thread and for threads created by uninstrumented code.
    pub parent: ThreadId,
    /// This thread is the parent's `child_index`-th child (0-based).
    pub child_index: u32,
}

/// Bytes of the header with its magic: what a thread file starts with.
pub fn encode_header(header: &ThreadHeader) -> Vec<u8> {
    let mut out = THREAD_MAGIC.to_vec();
    out.extend(bincode::serde::encode_to_vec(header, config()).expect("header encodes"));
    out
}

/// File name of thread `tid`'s trace inside a trace directory.
pub fn thread_file_name(tid: ThreadId) -> String {
    format!("t{tid}.trace")
}

/// One thread's file, read: its header and its events ([`Events`]: held as records).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadTrace {
    pub header: ThreadHeader,
    pub events: Events,
}

/// Decodes the bytes of one thread file: its threads, in the order they wrote it (one, or more
/// when later threads took the file over, see the module doc); `path` only names the file in
/// errors.
pub fn decode_threads(path: &Path, bytes: &[u8]) -> Result<Vec<ThreadTrace>, TraceError> {
    read_threads(path, bytes.to_vec())
}

/// [`decode_threads`], keeping the records of the file's last thread in `bytes`: a thread file
/// is never held twice.
pub fn read_threads(path: &Path, mut bytes: Vec<u8>) -> Result<Vec<ThreadTrace>, TraceError> {
    let mut threads = Vec::new();
    let mut at = 0;
    loop {
        let (header, used) = header(path, &bytes[at..])?;
        let (events, next) = Events::read(path, bytes, at + used)?;
        threads.push(ThreadTrace { header, events });
        let Some((rest, next)) = next else {
            return Ok(threads);
        };
        (bytes, at) = (rest, next);
    }
}

/// The threads of a thread file of `size` bytes, their records checked and left in the file
/// ([`Events::open`]), with the sum of the file.
pub fn open_threads(
    path: &Path,
    file: std::fs::File,
    size: u64,
) -> Result<(Vec<ThreadTrace>, crate::meta::FileSum), TraceError> {
    use std::os::unix::fs::FileExt;
    let mut sum = Summed::new();
    let mut threads = Vec::new();
    let mut at = 0;
    loop {
        // A header is a few dozen bytes.
        let mut head = vec![0u8; (size - at).min(4096) as usize];
        file.read_exact_at(&mut head, at)
            .map_err(|source| TraceError::Io {
                path: path.into(),
                source,
            })?;
        let (header, used) = header(path, &head)?;
        sum.add(at, &head[..used]);
        let (events, next) = Events::open(path, &file, at + used as u64, size, &mut sum)?;
        threads.push(ThreadTrace { header, events });
        match next {
            Some(next) => at = next,
            None => return Ok((threads, sum.finish(size))),
        }
    }
}

/// The header of the thread file that `bytes` begin, and where its records begin.
fn header(path: &Path, bytes: &[u8]) -> Result<(ThreadHeader, usize), TraceError> {
    if bytes.len() < THREAD_MAGIC.len() || bytes[..THREAD_MAGIC.len()] != THREAD_MAGIC {
        return Err(crate::error::without_magic(
            path,
            "an ilgen thread file",
            "ILGENTHR",
            bytes,
        ));
    }
    let rest = &bytes[THREAD_MAGIC.len()..];
    // The version is the header's first field: read it alone so that a newer header layout still
    // gets the version message rather than a decoding error.
    if rest.len() < 4 {
        return Err(TraceError::Truncated {
            path: path.into(),
            offset: bytes.len(),
        });
    }
    let found = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes"));
    if found != FORMAT_VERSION {
        return Err(TraceError::Version {
            path: path.into(),
            found: u64::from(found),
            expected: FORMAT_VERSION,
        });
    }
    let (header, used): (ThreadHeader, usize) = bincode::serde::decode_from_slice(rest, config())
        .map_err(|_| TraceError::Truncated {
        path: path.into(),
        offset: bytes.len(),
    })?;
    Ok((header, THREAD_MAGIC.len() + used))
}

/// A whole recorded run: its metadata and every thread, ordered by thread id.
#[derive(Clone, Debug)]
pub struct TraceDir {
    pub path: PathBuf,
    pub meta: Meta,
    pub threads: Vec<ThreadTrace>,
}

impl TraceDir {
    /// The one-line warning to print before analysing this trace, if it is incomplete.
    pub fn warning(&self) -> Option<String> {
        self.meta.truncated.then(|| {
            format!(
                "warning: {} is truncated (the runtime could not grow a thread file: file size \
                 limit or disk full); analysing what was recorded up to the cut",
                self.path.display()
            )
        })
    }
}

/// What the run did outside instrumented code that the trace cannot show, one sentence
/// each: threads whose creation was not seen (parent `NO_THREAD`, other than main) and joins
/// or detaches of a thread whose creation was not seen. The analysis misses the
/// happens-before those bring, so its results are incomplete; the commands warn.
pub fn incomplete(threads: &[ThreadTrace]) -> Vec<String> {
    let mut out = Vec::new();
    for t in threads {
        let tid = t.header.tid;
        if tid != 0 && t.header.parent == NO_THREAD {
            out.push(format!(
                "thread T{tid} created outside instrumented code: results incomplete"
            ));
        }
        // Joins and detaches are lifecycle marks.
        for (_, e) in t.events.lifecycle() {
            let verb = match e {
                Event::Sync(s) if s.op == (SyncOp::Join { child: NO_THREAD }) => "joined",
                Event::Sync(s) if s.op == (SyncOp::Detach { child: NO_THREAD }) => "detached",
                _ => continue,
            };
            out.push(format!(
                "T{tid} {verb} a thread created outside instrumented code: results incomplete"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Access, AccessKind, Heap, HeapOp, Sync, SyncOp, PENDING};

    fn file(events: &[Event]) -> Vec<u8> {
        let mut bytes = encode_header(&ThreadHeader {
            version: FORMAT_VERSION,
            tid: 3,
            parent: 0,
            child_index: 2,
        });
        bytes.extend(Encoder::default().all(events));
        bytes
    }

    /// `bytes` (a thread file) taken over by thread `tid` (child 0 of thread 3), which recorded
    /// `events`.
    fn take_over(bytes: &mut Vec<u8>, tid: ThreadId, events: &[Event]) {
        let head = encode_header(&ThreadHeader {
            version: FORMAT_VERSION,
            tid,
            parent: 3,
            child_index: 0,
        });
        let mut encoder = Encoder::default();
        let mut out = [0u8; MAX_RECORD];
        let n = encoder.section(&head, &mut out);
        bytes.extend_from_slice(&out[..n]);
        bytes.extend(encoder.all(events));
    }

    fn sample() -> Vec<Event> {
        vec![
            Event::Sync(Sync {
                seq: 1,
                site: 7,
                op: SyncOp::Start,
            }),
            Event::Access(Access {
                addr: 0x1000,
                size: 4,
                site: 9,
                kind: AccessKind::Write,
            }),
            Event::Sync(Sync {
                seq: PENDING,
                site: 11,
                op: SyncOp::CondWake {
                    cond: 0xdead,
                    mutex: 0xbeef,
                    timed_out: false,
                },
            }),
        ]
    }

    #[test]
    fn round_trip_and_zero_padding_ends_records() {
        let mut bytes = file(&sample());
        bytes.extend_from_slice(&[0u8; 100]);
        let t = decode_threads(Path::new("t3.trace"), &bytes).unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].header.tid, 3);
        assert_eq!(t[0].header.child_index, 2);
        assert_eq!(t[0].events, sample());
    }

    #[test]
    fn threads_that_took_a_file_over_read_each_with_its_header_and_records() {
        let mut bytes = file(&sample());
        take_over(&mut bytes, 8, &sample()[1..]);
        take_over(&mut bytes, 9, &[]);
        take_over(&mut bytes, 12, &sample());
        bytes.extend_from_slice(&[0u8; 100]);
        let t = decode_threads(Path::new("t3.trace"), &bytes).unwrap();
        let read: Vec<(ThreadId, ThreadId, Vec<Event>)> = t
            .iter()
            .map(|t| (t.header.tid, t.header.parent, t.events.to_vec()))
            .collect();
        assert_eq!(
            read,
            [
                (3, 0, sample()),
                (8, 3, sample()[1..].to_vec()),
                (9, 3, vec![]),
                (12, 3, sample()),
            ]
        );
        // The deltas start afresh after a section: the last thread's records are a file's.
        let mut alone = encode_header(&t[3].header);
        alone.extend(Encoder::default().all(&sample()));
        assert_eq!(
            bytes
                .windows(alone.len() - 8)
                .filter(|w| *w == &alone[8..])
                .count(),
            1
        );
        // A section cut inside its header is refused, not read as a thread.
        let cut = bytes.len() - 100 - Encoder::default().all(&sample()).len() - 4;
        assert!(matches!(
            decode_threads(Path::new("t3.trace"), &bytes[..cut]),
            Err(TraceError::Truncated { .. })
        ));
    }

    #[test]
    fn data_after_the_end_of_the_records_is_corrupt() {
        let mut bytes = file(&sample());
        let end = bytes.len();
        bytes.extend_from_slice(&[0u8; 40]);
        bytes[end + 20] = 7;
        match decode_threads(Path::new("t3.trace"), &bytes) {
            Err(TraceError::Corrupt { offset, .. }) => assert_eq!(offset, end + 20),
            other => panic!("expected corrupt, got {other:?}"),
        }
    }

    #[test]
    fn a_file_read_in_pieces_gives_what_its_bytes_give() {
        use crate::meta::FileSum;
        let event = |i: u64| match i % 7 {
            0 => Event::Sync(Sync {
                seq: i,
                site: 3,
                op: SyncOp::MutexLock { mutex: 0x90 },
            }),
            3 => Event::Sync(Sync {
                seq: i,
                site: 4,
                op: SyncOp::MutexUnlock { mutex: 0x90 },
            }),
            5 if i % 700 == 5 => Event::Heap(Heap {
                seq: i,
                site: 5,
                op: HeapOp::Alloc {
                    addr: i << 8,
                    size: 24,
                },
            }),
            _ => Event::Access(Access {
                addr: 0x1000 + (i * 40) % 4096,
                size: 4,
                site: 9,
                kind: AccessKind::Write,
            }),
        };
        // Some 40 pieces of records, then two threads that took the file over (one with a few
        // records, one with pieces of its own), and padding of more than a piece.
        let events: Vec<Event> = (0..500_000).map(event).collect();
        let mut bytes = file(&events);
        take_over(&mut bytes, 8, &[event(1), event(0)]);
        take_over(&mut bytes, 9, &events[..200_000]);
        let records_end = bytes.len();
        bytes.extend_from_slice(&[0u8; 200_000]);
        let dir = std::env::temp_dir().join(format!("ilgen-pieces-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t3.trace");
        let open = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            let file = std::fs::File::open(&path).unwrap();
            open_threads(&path, file, bytes.len() as u64)
        };
        let (piecewise, sum) = open(&bytes).unwrap();
        let whole = decode_threads(&path, &bytes).unwrap();
        assert_eq!(sum, FileSum::of(&bytes));
        assert_eq!(piecewise, whole);
        let tids: Vec<ThreadId> = whole.iter().map(|t| t.header.tid).collect();
        assert_eq!(tids, [3, 8, 9]);
        assert_eq!(whole[2].events, events[..200_000].to_vec());
        for (piecewise, whole) in piecewise.iter().zip(&whole) {
            assert!(piecewise.events.marks().eq(whole.events.marks()));
            // Kept in memory against walked for.
            assert!(piecewise.events.lifecycle().eq(whole.events.lifecycle()));
            let (mut a, mut b) = (piecewise.events.iter(), whole.events.iter());
            loop {
                assert_eq!(a.next_mark(), b.next_mark());
                let next = a.next();
                assert_eq!(next, b.next());
                if next.is_none() {
                    break;
                }
            }
        }
        assert!(piecewise[0].events.lifecycle().count() > 700);
        // Errors name the same byte as when the file is read whole: garbage in the padding near
        // the records and a piece beyond them, records cut short.
        let same_error = |bytes: &[u8]| {
            let piecewise = open(bytes).err().map(|e| e.to_string());
            let whole = decode_threads(&path, bytes).err().map(|e| e.to_string());
            assert!(piecewise.is_some());
            assert_eq!(piecewise, whole);
        };
        bytes[records_end + 10] = 7;
        same_error(&bytes);
        bytes[records_end + 10] = 0;
        bytes[records_end + 150_000] = 7;
        same_error(&bytes);
        // The last record is an access of three bytes.
        same_error(&bytes[..records_end - 1]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_event_fits_in_max_record() {
        let big = Event::Sync(Sync {
            seq: u64::MAX,
            site: u32::MAX,
            op: SyncOp::CondWait {
                cond: u64::MAX,
                mutex: u64::MAX,
                timed: true,
            },
        });
        let heap = Event::Heap(Heap {
            seq: u64::MAX,
            site: u32::MAX,
            op: HeapOp::Free {
                addr: u64::MAX,
                size: u64::MAX,
            },
        });
        for e in [big, heap] {
            let mut buf = [0u8; MAX_RECORD];
            assert!(Encoder::default().event(&e, &mut buf) <= MAX_RECORD);
        }
    }

    #[test]
    fn heap_events_round_trip_after_the_older_variants() {
        let events: Vec<Event> = [
            HeapOp::Alloc {
                addr: 0x5000,
                size: 24,
            },
            HeapOp::Free {
                addr: 0x5000,
                size: 24,
            },
            HeapOp::Stack {
                addr: 0x7f00_0000,
                size: 8 << 20,
            },
            HeapOp::Map {
                addr: 0x7e00_0000,
                size: 1 << 16,
            },
            HeapOp::Unmap {
                addr: 0x7e00_1000,
                size: 0x1000,
            },
        ]
        .into_iter()
        .enumerate()
        .map(|(i, op)| {
            Event::Heap(Heap {
                seq: i as u64,
                site: 3,
                op,
            })
        })
        .collect();
        let t = decode_threads(Path::new("t3.trace"), &file(&events)).unwrap();
        assert_eq!(t[0].events, events);
    }

    #[test]
    fn an_older_trace_gets_the_version_message() {
        let mut bytes = file(&sample());
        bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
        let err = decode_threads(Path::new("t3.trace"), &bytes).unwrap_err();
        assert!(matches!(
            err,
            TraceError::Version {
                found: 2,
                expected: FORMAT_VERSION,
                ..
            }
        ));
        assert!(
            err.to_string().contains("record the program again"),
            "{err}"
        );
    }

    #[test]
    fn cut_record_is_truncated_not_a_panic() {
        let bytes = file(&sample());
        let cut = &bytes[..bytes.len() - 3];
        match decode_threads(Path::new("t3.trace"), cut) {
            Err(TraceError::Truncated { .. }) => {}
            other => panic!("expected truncated, got {other:?}"),
        }
    }

    #[test]
    fn foreign_and_wrong_version_files_are_named() {
        let err = decode_threads(Path::new("x/t0.trace"), b"ELF\x7f garbage").unwrap_err();
        assert!(matches!(err, TraceError::NotATrace { .. }));
        assert!(
            err.to_string().starts_with(
                "x/t0.trace is not an ilgen thread file: it is binary data starting with 45 4c 46 \
                 7f 20 67 61 72, without the ILGENTHR magic"
            ),
            "{err}"
        );
        let mut bytes = file(&sample());
        bytes[8] = 99;
        let err = decode_threads(Path::new("t3.trace"), &bytes).unwrap_err();
        assert!(matches!(err, TraceError::Version { found: 99, .. }));
        assert!(
            err.to_string()
                .contains(&format!("99, newer than version {FORMAT_VERSION}"))
                && err.to_string().contains("with the ilgen that wrote it"),
            "{err}"
        );
        bytes[8] = 0;
        let err = decode_threads(Path::new("t3.trace"), &bytes).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("0, older than version {FORMAT_VERSION}"))
                && err
                    .to_string()
                    .ends_with("record the program again with this ilgen"),
            "{err}"
        );
    }

    #[test]
    fn threads_and_joins_not_seen_created_are_incomplete() {
        let header = |tid, parent| ThreadHeader {
            version: FORMAT_VERSION,
            tid,
            parent,
            child_index: 0,
        };
        let sync = |op| {
            Event::Sync(Sync {
                seq: 1,
                site: 0,
                op,
            })
        };
        let threads = [
            ThreadTrace {
                header: header(0, NO_THREAD),
                events: vec![
                    sync(SyncOp::Join { child: 1 }),
                    sync(SyncOp::Join { child: NO_THREAD }),
                ]
                .into(),
            },
            ThreadTrace {
                header: header(1, 0),
                events: Events::default(),
            },
            ThreadTrace {
                header: header(2, NO_THREAD),
                events: vec![sync(SyncOp::Detach { child: NO_THREAD })].into(),
            },
        ];
        assert_eq!(
            incomplete(&threads),
            [
                "T0 joined a thread created outside instrumented code: results incomplete",
                "thread T2 created outside instrumented code: results incomplete",
                "T2 detached a thread created outside instrumented code: results incomplete",
            ]
        );
        assert!(incomplete(&threads[..2]).len() == 1, "T1 was seen created");
    }
}
