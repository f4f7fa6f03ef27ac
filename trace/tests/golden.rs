//! Golden bytes of every on-disk record: the thread-file header, each event kind, the schedule
//! file and the site table. A failure here means the format changed: bump `FORMAT_VERSION` (or
//! `SCHEDULE_VERSION`, or the site table's `VERSION`), write the change in the version list of
//! `trace/src/format.rs` (or `schedule.rs`, `sites.rs`), and only then update the bytes below. New enum variants go at the end of their enum (bincode writes the
//! variant index); [`sync_golden`] has no wildcard, so a new `SyncOp` cannot compile without its
//! golden row.

use ilgen_trace::format::{encode_header, encode_record, ThreadHeader, MAX_RECORD};
use ilgen_trace::meta::FileSum;
use ilgen_trace::schedule::{Schedule, ScheduleThread, Step};
use ilgen_trace::sites::{Frame, SiteTableBuilder, FLAG_DECIDES};
use ilgen_trace::{
    Access, AccessKind, Event, Heap, HeapOp, Meta, OpKind, RunEnd, Sync, SyncOp, NO_THREAD,
};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn record_hex(event: &Event) -> String {
    let mut out = [0u8; MAX_RECORD];
    let n = encode_record(event, &mut out);
    hex(&out[..n])
}

/// The golden bytes of one sync record (seq 0x0102, site 7) per operation.
fn sync_golden(op: SyncOp) -> &'static str {
    match op {
        SyncOp::Start => "140100000002010000000000000700000000000000",
        SyncOp::End => "140100000002010000000000000700000001000000",
        SyncOp::Fork { .. } => "18010000000201000000000000070000000200000003000000",
        SyncOp::Join { .. } => "18010000000201000000000000070000000300000003000000",
        SyncOp::Detach { .. } => "18010000000201000000000000070000000400000003000000",
        SyncOp::MutexLock { .. } => "1c01000000020100000000000007000000050000008877665544332211",
        SyncOp::MutexTryLock { .. } => {
            "1d0100000002010000000000000700000006000000887766554433221101"
        }
        SyncOp::MutexTimedLock { .. } => {
            "1d0100000002010000000000000700000007000000887766554433221100"
        }
        SyncOp::MutexUnlock { .. } => "1c01000000020100000000000007000000080000008877665544332211",
        SyncOp::RwRdLock { .. } => "1c01000000020100000000000007000000090000008877665544332211",
        SyncOp::RwWrLock { .. } => "1c010000000201000000000000070000000a0000008877665544332211",
        SyncOp::RwTryRdLock { .. } => {
            "1d010000000201000000000000070000000b000000887766554433221101"
        }
        SyncOp::RwTryWrLock { .. } => {
            "1d010000000201000000000000070000000c000000887766554433221100"
        }
        SyncOp::RwUnlock { .. } => "1c010000000201000000000000070000000d0000008877665544332211",
        SyncOp::CondWait { .. } => {
            "25010000000201000000000000070000000e0000008877665544332211990000000000000001"
        }
        SyncOp::CondWake { .. } => {
            "25010000000201000000000000070000000f0000008877665544332211990000000000000000"
        }
        SyncOp::CondSignal { .. } => "1c01000000020100000000000007000000100000008877665544332211",
        SyncOp::CondBroadcast { .. } => {
            "1c01000000020100000000000007000000110000008877665544332211"
        }
        SyncOp::BarrierEnter { .. } => "1c01000000020100000000000007000000120000008877665544332211",
        SyncOp::BarrierExit { .. } => {
            "1d0100000002010000000000000700000013000000887766554433221101"
        }
        SyncOp::SpinLock { .. } => "1c01000000020100000000000007000000140000008877665544332211",
        SyncOp::SpinTryLock { .. } => {
            "1d0100000002010000000000000700000015000000887766554433221101"
        }
        SyncOp::SpinUnlock { .. } => "1c01000000020100000000000007000000160000008877665544332211",
        SyncOp::SemWait { .. } => "1c01000000020100000000000007000000170000008877665544332211",
        SyncOp::SemTryWait { .. } => "1d0100000002010000000000000700000018000000887766554433221100",
        SyncOp::SemPost { .. } => "1c01000000020100000000000007000000190000008877665544332211",
        SyncOp::WaitLoopEnter { .. } => {
            "1c010000000201000000000000070000001a0000008877665544332211"
        }
        SyncOp::WaitLoopExit { .. } => "1c010000000201000000000000070000001b0000008877665544332211",
        SyncOp::Exit => "14010000000201000000000000070000001c000000",
        SyncOp::SemInit { .. } => {
            "20010000000201000000000000070000001d000000887766554433221102000000"
        }
        SyncOp::SemTimedWait { .. } => {
            "1d010000000201000000000000070000001e000000887766554433221101"
        }
        SyncOp::SemDestroy { .. } => "1c010000000201000000000000070000001f0000008877665544332211",
        SyncOp::MutexDestroy { .. } => "1c01000000020100000000000007000000200000008877665544332211",
        SyncOp::CondDestroy { .. } => "1c01000000020100000000000007000000210000008877665544332211",
        SyncOp::RwDestroy { .. } => "1c01000000020100000000000007000000220000008877665544332211",
        SyncOp::BarrierDestroy { .. } => {
            "1c01000000020100000000000007000000230000008877665544332211"
        }
        SyncOp::TxBegin => "140100000002010000000000000700000024000000",
        SyncOp::TxEnd => "140100000002010000000000000700000025000000",
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
        (
            AccessKind::Read,
            "18000000008877665544332211040000000900000000000000",
        ),
        (
            AccessKind::Write,
            "18000000008877665544332211040000000900000001000000",
        ),
        (
            AccessKind::AtomicRead,
            "18000000008877665544332211040000000900000002000000",
        ),
        (
            AccessKind::AtomicWrite,
            "18000000008877665544332211040000000900000003000000",
        ),
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
            "24020000000201000000000000070000000000000000100000007f00000020000000000000",
        ),
        (
            HeapOp::Free {
                addr: 0x7f00_0000_1000,
                size: 0x2000,
            },
            "24020000000201000000000000070000000100000000100000007f00000020000000000000",
        ),
        (
            HeapOp::Stack {
                addr: 0x7f00_0000_1000,
                size: 0x2000,
            },
            "24020000000201000000000000070000000200000000100000007f00000020000000000000",
        ),
        (
            HeapOp::Map {
                addr: 0x7f00_0000_1000,
                size: 0x2000,
            },
            "24020000000201000000000000070000000300000000100000007f00000020000000000000",
        ),
        (
            HeapOp::Unmap {
                addr: 0x7f00_0000_1000,
                size: 0x2000,
            },
            "24020000000201000000000000070000000400000000100000007f00000020000000000000",
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
fn schedule_file_has_its_golden_text() {
    let schedule = Schedule {
        format_version: 3,
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
            },
            Step {
                tid: 1,
                index: 2,
                op: OpKind::Lock,
                site: Some(7),
            },
        ],
        watch: Vec::new(),
    };
    let golden = r#"{
  "format_version": 3,
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
    b.add(
        &Frame::new("a.c", 9, 70000, "f"),
        &[Frame::new("/usr/include/h.h", 2, 5, "g")],
        0,
    );
    let units: Vec<String> = b.finish().chunks(16).map(hex).collect();
    assert_eq!(
        units,
        [
            // "ILGS", version 3, 2 sites, 6 units.
            "494c4753030000000200000006000000",
            // line 7, column 3, flags: decides, no inlined frames, "a.c" (at 0x40), "f" (0x44).
            "07000000030001004000000044000000",
            // line 9, column 65535 (kept), 1 inlined frame, "a.c", "f".
            "09000000ffff00014000000044000000",
            // the inlined frame: line 2, column 5, "/usr/include/h.h" (0x46), "g" (0x57).
            "02000000050000004600000057000000",
            // strings: "a.c", "f", "/usr/include/h.h", "g", zero-padded.
            "612e630066002f7573722f696e636c75",
            "64652f682e6800670000000000000000",
        ]
    );
}
