//! The trace fuzzer: mutations of a real recorded trace never panic, hang or pass for complete.
//!
//! Takes the trace in `tests/Inputs/small` (three threads, a mutex, two joins, recorded by the
//! runtime, which sealed it at exit: `meta.json` lists each file's length and checksum); gives, for
//! a fixed seed and case count, one mutated copy per case read with `TraceDir::open` on a thread
//! that must answer within five seconds. The oracle, by mutation:
//! - a file cut anywhere (inside a record or on a record boundary), a thread file dropped or copied
//!   under another thread's name, a sync record duplicated, a sequence number moved onto another's
//!   or behind its predecessor, a byte flipped anywhere (thread file or `meta.json`): a
//!   [`TraceError`] naming a file of the trace, never a silent read;
//! - the same cuts with `meta.json` as the runtime writes it for a truncated run ("truncated",
//!   unsealed): read as exactly the prefix of the original, with `TraceDir::warning` saying so,
//!   or refused for a cut inside a record;
//! - a sequence number moved onto its own value (no change): read as the original.
//!
//! Longer local runs: `ILGEN_FUZZ_CASES=100000 cargo test --release -p ilgen-trace --test fuzz`.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use ilgen_trace::codec::{Encoder, Records};
use ilgen_trace::format::{decode_threads, thread_file_name};
use ilgen_trace::{Event, Meta, TraceDir, TraceError};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

const THREADS: usize = 3;
/// Bytes before the first record: magic and header.
const HEADER: usize = 24;

#[derive(Clone, Debug)]
enum Mutation {
    /// Cut thread file `file` to `len` bytes of its records (`len` taken modulo their length).
    Cut {
        file: usize,
        len: usize,
    },
    /// The same, with `meta.json` marked truncated and unsealed, as the runtime writes it when a
    /// thread file could not grow.
    CutMarked {
        file: usize,
        len: usize,
    },
    Drop {
        file: usize,
    },
    /// Copy thread file `file` under the name of thread `as_tid` (one that does not exist).
    Copy {
        file: usize,
        as_tid: u32,
    },
    /// Repeat the `nth` sync record of `file` right after itself.
    DuplicateSync {
        file: usize,
        nth: usize,
    },
    /// Give the `nth` sync record of `file` the seq of sync record `other` of the whole trace.
    SeqCollide {
        file: usize,
        nth: usize,
        other: usize,
    },
    /// Flip `mask` into byte `at` of file `file` (`meta.json` is file `THREADS`).
    Flip {
        file: usize,
        at: usize,
        mask: u8,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let file = 0..THREADS;
    prop_oneof![
        (file.clone(), any::<usize>()).prop_map(|(file, len)| Mutation::Cut { file, len }),
        (file.clone(), any::<usize>()).prop_map(|(file, len)| Mutation::CutMarked { file, len }),
        (1..THREADS).prop_map(|file| Mutation::Drop { file }),
        (file.clone(), 3u32..50).prop_map(|(file, as_tid)| Mutation::Copy { file, as_tid }),
        (file.clone(), any::<usize>())
            .prop_map(|(file, nth)| Mutation::DuplicateSync { file, nth }),
        (file.clone(), any::<usize>(), any::<usize>())
            .prop_map(|(file, nth, other)| Mutation::SeqCollide { file, nth, other }),
        (0..=THREADS, any::<usize>(), 1u8..=255).prop_map(|(file, at, mask)| Mutation::Flip {
            file,
            at,
            mask
        }),
    ]
}

fn input() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/Inputs/small")
}

/// The original files: thread files 0..THREADS, then `meta.json`.
fn original() -> Vec<Vec<u8>> {
    let mut files: Vec<Vec<u8>> = (0..THREADS)
        .map(|t| std::fs::read(input().join(thread_file_name(t as u32))).unwrap())
        .collect();
    files.push(std::fs::read(input().join("meta.json")).unwrap());
    files
}

/// Offsets where the records of a thread file start, and its length, with each record's event.
fn records(bytes: &[u8]) -> (Vec<usize>, Vec<Event>) {
    let mut records = Records::new(Path::new("x"), bytes, HEADER);
    let mut at = vec![HEADER];
    let mut events = Vec::new();
    while let Some(e) = records.next() {
        events.push(e.expect("the original records decode"));
        at.push(records.offset());
    }
    (at, events)
}

fn boundaries(bytes: &[u8]) -> Vec<usize> {
    records(bytes).0
}

/// Index among the events and byte range of each sync record of a thread file.
fn syncs(bytes: &[u8]) -> Vec<(usize, usize, usize)> {
    let (at, events) = records(bytes);
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Event::Sync(_)))
        .map(|(i, _)| (i, at[i], at[i + 1]))
        .collect()
}

fn seq_of(event: &mut Event) -> &mut u64 {
    match event {
        Event::Sync(s) => &mut s.seq,
        _ => panic!("not a sync record"),
    }
}

/// What the oracle expects of one mutated trace.
enum Expect {
    Refused,
    /// Read as the original with thread `file` cut to its first `events` events, with the
    /// truncation warning (or refused).
    Prefix {
        file: usize,
        events: usize,
    },
    /// The mutation changed nothing (a sequence number moved onto its own value): read whole.
    Unchanged,
}

fn apply(files: &mut Vec<Option<Vec<u8>>>, m: &Mutation) -> Expect {
    let thread = |files: &Vec<Option<Vec<u8>>>, f: usize| files[f].clone().unwrap();
    match *m {
        Mutation::Cut { file, len } | Mutation::CutMarked { file, len } => {
            let bytes = thread(files, file);
            let b = boundaries(&bytes);
            let cut = HEADER + len % (bytes.len() - HEADER);
            files[file] = Some(bytes[..cut].to_vec());
            if matches!(m, Mutation::Cut { .. }) {
                return Expect::Refused;
            }
            let meta: Meta = serde_json::from_slice(&thread(files, THREADS)).unwrap();
            let meta = Meta {
                truncated: true,
                files: None,
                checksum: None,
                ..meta
            };
            files[THREADS] = Some(meta.to_json().into_bytes());
            match b.iter().position(|&o| o == cut) {
                Some(events) => Expect::Prefix { file, events },
                None => Expect::Refused,
            }
        }
        Mutation::Drop { file } => {
            files[file] = None;
            Expect::Refused
        }
        Mutation::Copy { file, as_tid } => {
            let bytes = thread(files, file);
            files.resize(as_tid as usize + 2, None);
            // Kept past meta.json's slot: `write` names slots above THREADS by their tid - 1.
            files[as_tid as usize + 1] = Some(bytes);
            Expect::Refused
        }
        Mutation::DuplicateSync { file, nth } => {
            let mut bytes = thread(files, file);
            let s = syncs(&bytes);
            let (_, a, b) = s[nth % s.len()];
            let record = bytes[a..b].to_vec();
            bytes.splice(b..b, record);
            files[file] = Some(bytes);
            Expect::Refused
        }
        Mutation::SeqCollide { file, nth, other } => {
            let all: Vec<(usize, usize)> = (0..THREADS)
                .flat_map(|f| syncs(&thread(files, f)).into_iter().map(move |s| (f, s.0)))
                .collect();
            let (of, oi) = all[other % all.len()];
            let seq = *seq_of(&mut records(&thread(files, of)).1[oi]);
            let bytes = thread(files, file);
            let (i, _, _) = syncs(&bytes)[nth % syncs(&bytes).len()];
            let mut events = records(&bytes).1;
            if *seq_of(&mut events[i]) == seq {
                return Expect::Unchanged;
            }
            *seq_of(&mut events[i]) = seq;
            let mut moved = bytes[..HEADER].to_vec();
            moved.extend(Encoder::default().all(&events));
            files[file] = Some(moved);
            Expect::Refused
        }
        Mutation::Flip { file, at, mask } => {
            let mut bytes = thread(files, file);
            let at = at % bytes.len();
            bytes[at] ^= mask;
            files[file] = Some(bytes);
            Expect::Refused
        }
    }
}

/// Writes the files into `dir`: thread files by tid, `meta.json`, copies under their new tid.
fn write(dir: &Path, files: &[Option<Vec<u8>>]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    for (i, f) in files.iter().enumerate() {
        let Some(bytes) = f else { continue };
        let name = match i {
            i if i < THREADS => thread_file_name(i as u32),
            i if i == THREADS => "meta.json".into(),
            i => thread_file_name(i as u32 - 1),
        };
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

/// Opens `dir` on another thread; `None` if it did not answer in time (a hang).
fn open_in_time(dir: &Path) -> Option<Result<TraceDir, TraceError>> {
    let (tx, rx) = mpsc::channel();
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(TraceDir::open(&dir));
    });
    rx.recv_timeout(Duration::from_secs(5)).ok()
}

#[test]
fn mutated_traces_are_refused_or_read_as_what_they_hold() {
    let cases = std::env::var("ILGEN_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1500);
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[13; 32]));
    let base = original();
    let original = TraceDir::open(&input()).expect("the fuzzer's input trace reads");
    let dir = std::env::temp_dir().join(format!("ilgen-fuzz-{}", std::process::id()));
    let counts = std::cell::RefCell::new([0usize; 4]);
    let result = runner.run(&mutation(), |m| {
        let mut files: Vec<Option<Vec<u8>>> = base.iter().cloned().map(Some).collect();
        let expect = apply(&mut files, &m);
        write(&dir, &files);
        let read = open_in_time(&dir).ok_or_else(|| TestCaseError::fail("reader hung"))?;
        if let Err(e) = &read {
            let text = e.to_string();
            prop_assert!(text.contains(dir.to_str().unwrap()), "{m:?}: {text}");
        }
        counts.borrow_mut()[read.is_ok() as usize] += 1;
        match (expect, read) {
            (Expect::Refused, Ok(_)) => {
                return Err(TestCaseError::fail(format!("{m:?} was accepted")))
            }
            (Expect::Prefix { file, events }, Ok(t)) => {
                counts.borrow_mut()[2] += 1;
                prop_assert!(t.warning().is_some(), "{:?}", m);
                for (i, (got, want)) in t.threads.iter().zip(&original.threads).enumerate() {
                    let want = want.events.to_vec();
                    let want: &[Event] = if i == file { &want[..events] } else { &want };
                    prop_assert_eq!(&got.events.to_vec()[..], want, "{:?}", m);
                }
            }
            (Expect::Unchanged, read) => {
                counts.borrow_mut()[3] += 1;
                let t = read.map_err(|e| TestCaseError::fail(format!("{m:?}: {e}")))?;
                prop_assert!(t.warning().is_none(), "{:?}", m);
                for (got, want) in t.threads.iter().zip(&original.threads) {
                    prop_assert_eq!(&got.events, &want.events, "{:?}", m);
                }
            }
            (Expect::Refused | Expect::Prefix { .. }, Err(_)) => {}
        }
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = result {
        panic!("{e}");
    }
    let [refused, accepted, prefixes, unchanged] = *counts.borrow();
    eprintln!(
        "{cases} mutations: {refused} refused, {accepted} read ({prefixes} marked truncated, read \
         as a prefix; {unchanged} left unchanged, read whole)"
    );
    assert_eq!(accepted, prefixes + unchanged, "nothing else is read");
    assert_eq!(refused + accepted, cases as usize);
}

#[test]
fn the_input_trace_is_a_real_three_thread_run() {
    let t = TraceDir::open(&input()).unwrap();
    assert_eq!(t.threads.len(), THREADS);
    assert!(t.warning().is_none());
    assert_eq!(
        t.meta.files.as_ref().map(|f| f.len()),
        Some(THREADS),
        "sealed"
    );
    for (i, th) in t.threads.iter().enumerate() {
        let bytes = std::fs::read(input().join(thread_file_name(i as u32))).unwrap();
        assert_eq!(
            decode_threads(Path::new("x"), &bytes).unwrap(),
            std::slice::from_ref(th)
        );
        assert!(!syncs(&bytes).is_empty());
        // Moving a seq re-encodes the file: the runtime wrote it as the encoder does.
        let mut again = bytes[..HEADER].to_vec();
        again.extend(Encoder::default().all(&th.events.to_vec()));
        assert_eq!(again, bytes);
    }
}
