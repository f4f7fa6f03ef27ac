#!/usr/bin/env python3
"""Tests of ilgen_common.py (the text and frame choice of the gdb and lldb commands) on a small
session: takes nothing, exits 0 when all pass. The commands themselves run in the lit tests
(tests/confirm/gdb_*.c, lldb_*.c)."""

import struct
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import ilgen_common as common  # noqa: E402

SESSION = {
    "candidate": 2,
    "kind": "race",
    "title": "data race on y (0x10) (4 bytes)",
    "first": {"tid": 0, "access": "write", "where": "/src/p.c:9 in main"},
    "second": {"tid": 1, "access": "read", "where": "/src/p.c:4 in task"},
    "prefix_steps": 1,
    "steps": [{"tid": 0, "text": "fork thread 1"}, {"tid": 1, "text": "start"},
              {"tid": 1, "text": "lock m"}],
    "threads": [{"tid": 0, "created_by": None}, {"tid": 1, "created_by": "T0 at /src/p.c:8 in main"}],
    "sources": ["/src/p.c"],
}


class Common(unittest.TestCase):
    def test_the_users_frame_is_the_newest_in_the_programs_files(self):
        frames = [
            ("ilgen_rt::replay::report::__ilgen_report_hook", "rt/src/replay/report.rs"),
            ("__futex_wait", "./nptl/futex-internal.c"),
            ("helper", "/src/other.c"),
            ("task", "/src/p.c"),
        ]
        self.assertEqual(common.user_frame_index(SESSION, frames), 3)

    def test_without_a_program_file_any_non_runtime_source_is_the_users(self):
        frames = [("__ilgen_stop_hook", None), ("std::sync::x", "library/std/x.rs"),
                  ("libc_thing", "../sysdeps/x.c"), ("start_thread", "nptl/pthread_create.c"),
                  ("helper", "/src/other.c")]
        self.assertEqual(common.user_frame_index(SESSION, frames), 4)
        self.assertIsNone(common.user_frame_index(SESSION, frames[:4]))

    def test_runtime_frames_are_its_rust_code_and_hooks(self):
        self.assertTrue(common.is_runtime_frame("ilgen_rt::replay::gate::Replay::wait_turn", None))
        self.assertTrue(common.is_runtime_frame("__ilgen_write4", None))
        self.assertTrue(common.is_runtime_frame("std::thread::park", "library/std/src/thread.rs"))
        self.assertFalse(common.is_runtime_frame("task", "/src/p.c"))
        self.assertFalse(common.is_runtime_frame(0x401000, None))

    def test_hooks_are_found_below_inlined_frames(self):
        self.assertEqual(common.hook_of(["ilgen_rt::arch::keep_alive",
                                         "ilgen_rt::replay::debug::__ilgen_step_hook"]),
                         common.STEP_HOOK)
        self.assertIsNone(common.hook_of(["main", "__libc_start_main"]))

    def test_thread_table_maps_kernel_tids_to_ilgen_tids(self):
        raw = struct.pack("<3Q", 100 << 32 | 0, 101 << 32 | 1, 0)
        self.assertEqual(common.thread_table(raw), {100: 0, 101: 1})

    def test_schedule_marks_the_next_step(self):
        text = common.schedule_text(SESSION, 2)
        self.assertEqual(text.splitlines(), [
            "ilgen: schedule step 2 of 3 taken",
            "   step 1: T0 fork thread 1   (observed prefix)",
            "   step 2: T1 start",
            "=> step 3: T1 lock m",
        ])
        self.assertTrue(common.schedule_text(SESSION, 3).endswith("=> (schedule finished: the threads run free)"))
        self.assertNotIn("=>", common.schedule_text(SESSION, None))

    def test_finding_names_both_accesses_and_the_step(self):
        self.assertEqual(common.finding_text(SESSION, 3).splitlines(), [
            "ilgen: candidate 2: data race on y (0x10) (4 bytes)",
            "  first access:  write by thread T0 at /src/p.c:9 in main",
            "  second access: read by thread T1 at /src/p.c:4 in task",
            "  schedule step 3 of 3 taken",
        ])

    def test_an_atomicity_violation_names_e1_f_and_e2(self):
        session = dict(SESSION, kind="atomicity",
                       title="atomicity violation on b (0x10) (4 bytes), read-write-write",
                       other={"tid": 1, "access": "write", "where": "/src/p.c:5 in task"})
        self.assertEqual(common.finding_text(session, 2).splitlines(), [
            "ilgen: candidate 2: atomicity violation on b (0x10) (4 bytes), read-write-write",
            "  e1 (transaction): write by thread T0 at /src/p.c:9 in main",
            "  f (other thread): write by thread T1 at /src/p.c:5 in task",
            "  e2 (transaction): read by thread T1 at /src/p.c:4 in task",
            "  schedule step 2 of 3 taken",
        ])

    def test_threads_show_their_creator(self):
        self.assertEqual(common.thread_row(SESSION, 3, 1, "/src/p.c:4 in task"),
                         "  3      T1   created by T0 at /src/p.c:8 in main; now at /src/p.c:4 in task")
        self.assertIn("not an ilgen thread", common.thread_row(SESSION, 2, None, "??"))

    def test_the_session_is_found_through_the_outcome_dir(self):
        self.assertEqual(common.session_path("mode=replay:schedule=/t/s.json:outcome_dir=/t/replay-gdb"),
                         "/t/replay-gdb/session.json")
        self.assertIsNone(common.session_path("mode=replay"))


if __name__ == "__main__":
    unittest.main()
