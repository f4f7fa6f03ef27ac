//! Golden bytes of every on-disk record: the thread-file header, each event kind, the schedule
//! file and the site table. A failure here means the format changed: bump `FORMAT_VERSION` (or
//! `SCHEDULE_VERSION`, or the site table's `VERSION`), write the change in the version list of
//! `trace/src/format.rs` (or `schedule.rs`, `sites.rs`), and only then update the bytes below. New enum variants go at the end of their enum (bincode writes the
//! variant index); [`sync_golden`] has no wildcard, so a new `SyncOp` cannot compile without its
//! golden row.

use ilgen_trace::format::{encode_header, Encoder, ThreadHeader, MAX_RECORD};
use ilgen_trace::meta::FileSum;
use ilgen_trace::schedule::{Schedule, ScheduleThread, Step};
use ilgen_trace::sites::{Frame, SiteTableBuilder, FLAG_DECIDES};
use ilgen_trace::{
    Access, AccessKind, Atomic, AtomicOp, Event, Heap, HeapOp, Meta, OpKind, RunEnd, Sync, SyncOp,
    NO_THREAD,
};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of `event` as a thread's first record.
fn record_hex(event: &Event) -> String {
    let mut out = [0u8; MAX_RECORD];
    let n = Encoder::default().event(event, &mut out);
    hex(&out[..n])
}

/// The golden bytes of one sync record (seq 0x0102, site 7, objects 0x1122_3344_5566_7788 and
/// 0x99), as a thread's first record, per operation.
fn sync_golden(op: SyncOp) -> &'static str {
    match op {
        SyncOp::Start => "8084040e00",
        SyncOp::End => "8084040e01",
        SyncOp::Fork { .. } => "8084040e0203",
        SyncOp::Join { .. } => "8084040e0303",
        SyncOp::Detach { .. } => "8084040e0403",
        SyncOp::MutexLock { .. } => "8084040e05fd10efccaa88664422",
        SyncOp::MutexTryLock { .. } => "8084040e06fd10efccaa8866442201",
        SyncOp::MutexTimedLock { .. } => "8084040e07fd10efccaa8866442200",
        SyncOp::MutexUnlock { .. } => "8084040e08fd10efccaa88664422",
        SyncOp::RwRdLock { .. } => "8084040e09fd10efccaa88664422",
        SyncOp::RwWrLock { .. } => "8084040e0afd10efccaa88664422",
        SyncOp::RwTryRdLock { .. } => "8084040e0bfd10efccaa8866442201",
        SyncOp::RwTryWrLock { .. } => "8084040e0cfd10efccaa8866442200",
        SyncOp::RwUnlock { .. } => "8084040e0dfd10efccaa88664422",
        SyncOp::CondWait { .. } => "8084040e0efd10efccaa88664422fdddedccaa8866442201",
        SyncOp::CondWake { .. } => "8084040e0ffd10efccaa88664422fdddedccaa8866442200",
        SyncOp::CondSignal { .. } => "8084040e10fd10efccaa88664422",
        SyncOp::CondBroadcast { .. } => "8084040e11fd10efccaa88664422",
        SyncOp::BarrierEnter { .. } => "8084040e12fd10efccaa88664422",
        SyncOp::BarrierExit { .. } => "8084040e13fd10efccaa8866442201",
        SyncOp::SpinLock { .. } => "8084040e14fd10efccaa88664422",
        SyncOp::SpinTryLock { .. } => "8084040e15fd10efccaa8866442201",
        SyncOp::SpinUnlock { .. } => "8084040e16fd10efccaa88664422",
        SyncOp::SemWait { .. } => "8084040e17fd10efccaa88664422",
        SyncOp::SemTryWait { .. } => "8084040e18fd10efccaa8866442200",
        SyncOp::SemPost { .. } => "8084040e19fd10efccaa88664422",
        SyncOp::WaitLoopEnter { .. } => "8084040e1afd10efccaa88664422",
        SyncOp::WaitLoopExit { .. } => "8084040e1bfd10efccaa88664422",
        SyncOp::Exit => "8084040e1c",
        SyncOp::SemInit { .. } => "8084040e1dfd10efccaa8866442202",
        SyncOp::SemTimedWait { .. } => "8084040e1efd10efccaa8866442201",
        SyncOp::SemDestroy { .. } => "8084040e1ffd10efccaa88664422",
        SyncOp::MutexDestroy { .. } => "8084040e20fd10efccaa88664422",
        SyncOp::CondDestroy { .. } => "8084040e21fd10efccaa88664422",
        SyncOp::RwDestroy { .. } => "8084040e22fd10efccaa88664422",
        SyncOp::BarrierDestroy { .. } => "8084040e23fd10efccaa88664422",
        SyncOp::TxBegin => "8084040e24",
        SyncOp::TxEnd => "8084040e25",
        SyncOp::ChannelWrite { .. } => "8084040e26fd10efccaa8866442201",
        SyncOp::ChannelRead { .. } => "8084040e27fd10efccaa88664422fb0010",
    }
}

/// One value of every operation, in declaration order.
fn every_sync_op() -> Vec<SyncOp> {
    let o = 0x1122_3344_5566_7788;
    vec![
        SyncOp::Start,
        SyncOp::End,
        SyncOp::Fork { child: 3 },
        SyncOp::Join { child: 3 },
        SyncOp::Detach { child: 3 },
        SyncOp::MutexLock { mutex: o },
        SyncOp::MutexTryLock {
            mutex: o,
            acquired: true,
        },
        SyncOp::MutexTimedLock {
            mutex: o,
            acquired: false,
        },
        SyncOp::MutexUnlock { mutex: o },
        SyncOp::RwRdLock { lock: o },
        SyncOp::RwWrLock { lock: o },
        SyncOp::RwTryRdLock {
            lock: o,
            acquired: true,
        },
        SyncOp::RwTryWrLock {
            lock: o,
            acquired: false,
        },
        SyncOp::RwUnlock { lock: o },
        SyncOp::CondWait {
            cond: o,
            mutex: 0x99,
            timed: true,
        },
        SyncOp::CondWake {
            cond: o,
            mutex: 0x99,
            timed_out: false,
        },
        SyncOp::CondSignal { cond: o },
        SyncOp::CondBroadcast { cond: o },
        SyncOp::BarrierEnter { barrier: o },
        SyncOp::BarrierExit {
            barrier: o,
            serial: true,
        },
        SyncOp::SpinLock { lock: o },
        SyncOp::SpinTryLock {
            lock: o,
            acquired: true,
        },
        SyncOp::SpinUnlock { lock: o },
        SyncOp::SemWait { sem: o },
        SyncOp::SemTryWait {
            sem: o,
            acquired: false,
        },
        SyncOp::SemPost { sem: o },
        SyncOp::WaitLoopEnter { cond: o },
        SyncOp::WaitLoopExit { cond: o },
        SyncOp::Exit,
        SyncOp::SemInit { sem: o, count: 2 },
        SyncOp::SemTimedWait {
            sem: o,
            acquired: true,
        },
        SyncOp::SemDestroy { sem: o },
        SyncOp::MutexDestroy { mutex: o },
        SyncOp::CondDestroy { cond: o },
        SyncOp::RwDestroy { lock: o },
        SyncOp::BarrierDestroy { barrier: o },
        SyncOp::TxBegin,
        SyncOp::TxEnd,
        SyncOp::ChannelWrite {
            channel: o,
            bytes: 1,
        },
        SyncOp::ChannelRead {
            channel: o,
            bytes: 4096,
        },
    ]
}

#[test]
fn every_sync_record_has_its_golden_bytes() {
    for op in every_sync_op() {
        let event = Event::Sync(Sync {
            seq: 0x0102,
            site: 7,
            op,
        });
        assert_eq!(record_hex(&event), sync_golden(op), "{}", op.name());
    }
}

#[test]
fn access_records_have_their_golden_bytes() {
    let golden = [
        (AccessKind::Read, "4890deb3d68ad199a22212"),
        (AccessKind::Write, "4990deb3d68ad199a22212"),
        (AccessKind::AtomicRead, "4a90deb3d68ad199a22212"),
        (AccessKind::AtomicWrite, "4b90deb3d68ad199a22212"),
    ];
    for (kind, bytes) in golden {
        let access = Access {
            addr: 0x1122_3344_5566_7788,
            size: 4,
            site: 9,
            kind,
        };
        assert_eq!(record_hex(&Event::Access(access)), bytes, "{kind:?}");
    }
}

/// Every heap operation (seq 0x0102, site 7, the block 0x7f00_0000_1000 + 0x2000).
#[test]
fn heap_records_have_their_golden_bytes() {
    let golden = [
        (
            HeapOp::Alloc {
                addr: 0x7f00_0000_1000,
                size: 0x2000,
            },
            "8184040e00fd00100000007f0000fb0020",
        ),
        (
            HeapOp::Free {
                addr: 0x7f00_0000_1000,
                size: 0x2000,
            },
            "8184040e01fd00100000007f0000fb0020",
        ),
        (
            HeapOp::Stack {
                addr: 0x7f00_0000_1000,
                size: 0x2000,
            },
            "8184040e02fd00100000007f0000fb0020",
        ),
        (
            HeapOp::Map {
                addr: 0x7f00_0000_1000,
                size: 0x2000,
            },
            "8184040e03fd00100000007f0000fb0020",
        ),
        (
            HeapOp::Unmap {
                addr: 0x7f00_0000_1000,
                size: 0x2000,
            },
            "8184040e04fd00100000007f0000fb0020",
        ),
    ];
    for (op, bytes) in golden {
        let heap = Heap {
            seq: 0x0102,
            site: 7,
            op,
        };
        assert_eq!(record_hex(&Event::Heap(heap)), bytes, "{op:?}");
    }
}

/// An atomic record: `0x88 | op`, then seq, site and address deltas.
#[test]
fn atomic_records_have_their_golden_bytes() {
    for (op, bytes) in [
        (AtomicOp::Acquire, "8884040e80c0808080c03f"),
        (AtomicOp::ReleaseStore, "8984040e80c0808080c03f"),
        (AtomicOp::ReleaseRmw, "8a84040e80c0808080c03f"),
    ] {
        let atomic = Atomic {
            seq: 0x0102,
            addr: 0x7f00_0000_1000,
            site: 7,
            op,
        };
        assert_eq!(record_hex(&Event::Atomic(atomic)), bytes, "{op:?}");
    }
}

/// A pending operation is a slot: its tag, length and the fixed-width bincode of the event.
#[test]
fn pending_records_are_slots_with_their_golden_bytes() {
    let pending = Event::Sync(Sync {
        seq: ilgen_trace::PENDING,
        site: 7,
        op: SyncOp::MutexLock {
            mutex: 0x1122_3344_5566_7788,
        },
    });
    assert_eq!(
        record_hex(&pending),
        "821c01000000ffffffffffffffff07000000050000008877665544332211"
    );
}

#[test]
fn thread_header_has_its_golden_bytes() {
    let header = ThreadHeader {
        version: 1,
        tid: 2,
        parent: NO_THREAD,
        child_index: 5,
    };
    assert_eq!(
        hex(&encode_header(&header)),
        "494c47454e5448520100000002000000ffffffff05000000"
    );
}

#[test]
fn section_record_has_its_golden_bytes() {
    let head = encode_header(&ThreadHeader {
        version: 8,
        tid: 9,
        parent: 0,
        child_index: 3,
    });
    let mut encoder = Encoder::default();
    let mut out = [0u8; MAX_RECORD];
    // A record before it, so that the deltas after it are seen to start from zero.
    encoder.event(
        &Event::Sync(Sync {
            seq: 0x0102,
            site: 7,
            op: SyncOp::End,
        }),
        &mut out,
    );
    let n = encoder.section(&head, &mut out);
    assert_eq!(
        hex(&out[..n]),
        "8c494c47454e54485208000000090000000000000003000000"
    );
    let n = encoder.event(
        &Event::Sync(Sync {
            seq: 0x0102,
            site: 7,
            op: SyncOp::Start,
        }),
        &mut out,
    );
    assert_eq!(hex(&out[..n]), sync_golden(SyncOp::Start));
}

#[test]
fn schedule_file_has_its_golden_text() {
    let schedule = Schedule {
        format_version: 4,
        build_id: "ab12".into(),
        threads: vec![
            ScheduleThread {
                tid: 0,
                parent: None,
                child_index: 0,
            },
            ScheduleThread {
                tid: 1,
                parent: Some(0),
                child_index: 0,
            },
        ],
        steps: vec![
            Step {
                tid: 1,
                index: 0,
                op: OpKind::Start,
                site: None,
                timed_out: None,
            },
            Step {
                tid: 1,
                index: 2,
                op: OpKind::Lock,
                site: Some(7),
                timed_out: None,
            },
            Step {
                tid: 0,
                index: 4,
                op: OpKind::Wake,
                site: Some(8),
                timed_out: Some(false),
            },
        ],
        watch: Vec::new(),
    };
    let golden = r#"{
  "format_version": 4,
  "build_id": "ab12",
  "threads": [
    {
      "tid": 0,
      "parent": null,
      "child_index": 0
    },
    {
      "tid": 1,
      "parent": 0,
      "child_index": 0
    }
  ],
  "steps": [
    {
      "tid": 1,
      "index": 0,
      "op": "start",
      "site": null
    },
    {
      "tid": 1,
      "index": 2,
      "op": "lock",
      "site": 7
    },
    {
      "tid": 0,
      "index": 4,
      "op": "wake",
      "site": 8,
      "timed_out": false
    }
  ]
}"#;
    assert_eq!(schedule.to_json(), golden);
    assert_eq!(serde_json::from_str::<Schedule>(golden).unwrap(), schedule);
}

/// Every operation has its own kind, and a kind reads back from the name it is written as.
#[test]
fn every_sync_op_has_a_kind_spelled_by_its_name() {
    let kinds: Vec<OpKind> = every_sync_op().iter().map(|op| op.kind()).collect();
    assert_eq!(
        kinds,
        OpKind::ALL,
        "one kind per operation, in declaration order"
    );
    for kind in OpKind::ALL {
        let json = serde_json::to_string(&kind).unwrap();
        assert_eq!(json, format!("\"{}\"", kind.name()));
        assert_eq!(serde_json::from_str::<OpKind>(&json).unwrap(), kind);
    }
    assert!(serde_json::from_str::<OpKind>("\"lockk\"").is_err());
}

#[test]
fn sealed_meta_file_has_its_golden_text() {
    let meta = Meta {
        format_version: 4,
        pid: 7,
        argv: vec!["./a".into()],
        cwd: "/w".into(),
        binary: "/w/a".into(),
        build_id: "ab12".into(),
        load_base: 0,
        started_unix_ms: 1,
        truncated: false,
        chaos_seed: None,
        calls: false,
        modules: Vec::new(),
        end: Some(RunEnd::Exit),
        files: Some(
            [("t0.trace".to_owned(), FileSum::of(b"ILGENTHR"))]
                .into_iter()
                .collect(),
        ),
        checksum: None,
    };
    let golden = r#"{
  "format_version": 4,
  "pid": 7,
  "argv": [
    "./a"
  ],
  "cwd": "/w",
  "binary": "/w/a",
  "build_id": "ab12",
  "load_base": 0,
  "started_unix_ms": 1,
  "truncated": false,
  "end": {
    "kind": "exit"
  },
  "files": {
    "t0.trace": {
      "len": 8,
      "xxh3": "e1e3b0fd5314be67"
    }
  },
  "checksum": "91cbee2aac3e104a"
}"#;
    assert_eq!(meta.to_sealed_json(), golden);
}

#[test]
fn site_table_has_its_golden_bytes() {
    let mut b = SiteTableBuilder::new();
    b.add(&Frame::new("a.c", 7, 3, "f"), &[], FLAG_DECIDES);
    b.add_inlined_into(
        &Frame::new("a.c", 9, 70000, "f"),
        &[Frame::new("/usr/include/h.h", 2, 5, "g")],
        &[Frame::new("a.c", 20, 4, "f")],
        0,
    );
    let units: Vec<String> = b.finish().chunks(16).map(hex).collect();
    assert_eq!(
        units,
        [
            // "ILGS", version 4, 2 sites, 7 units.
            "494c4753040000000200000007000000",
            // line 7, column 3, flags: decides, no inlined frames, "a.c" (at 0x50), "f" (0x54).
            "07000000030001005000000054000000",
            // line 9, column 65535 (kept), 2 inlined frames, "a.c", "f".
            "09000000ffff00025000000054000000",
            // the library frame inlined there: line 2, column 5, "/usr/include/h.h" (0x56), "g"
            // (0x67).
            "02000000050000005600000067000000",
            // the caller it is inlined into: line 20, column 4, caller 1, "a.c", "f".
            "14000000040001005000000054000000",
            // strings: "a.c", "f", "/usr/include/h.h", "g", zero-padded.
            "612e630066002f7573722f696e636c75",
            "64652f682e6800670000000000000000",
        ]
    );
}
