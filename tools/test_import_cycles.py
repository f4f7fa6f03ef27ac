#!/usr/bin/env python3
"""Tests of import_cycles.py on small generated crates: takes nothing, exits 0 when all pass."""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

CHECKER = Path(__file__).with_name("import_cycles.py")


def check(files, *args):
    """Runs the checker on a workspace holding `files` ({path: text}); gives (status, stdout)."""
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            p = Path(root, path)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        r = subprocess.run(
            [sys.executable, str(CHECKER), root, *args], capture_output=True, text=True
        )
        return r.returncode, r.stdout


class ImportCycles(unittest.TestCase):
    def test_two_siblings_importing_each_other_are_a_cycle(self):
        code, out = check(
            {
                "a/src/lib.rs": "mod x;\nmod y;\n",
                "a/src/x.rs": "use crate::y::Y;\npub struct X;\n",
                "a/src/y.rs": "use crate::x::{self, X};\npub struct Y;\n",
            }
        )
        self.assertEqual(code, 1)
        self.assertEqual(out.strip(), "a: x.rs -> y.rs -> x.rs")

    def test_parent_using_its_child_that_uses_the_parent_is_a_cycle(self):
        code, out = check(
            {
                "a/src/lib.rs": "mod solve;\n",
                "a/src/solve.rs": "pub mod cut;\nuse cut::Goal;\npub struct Schedule;\n",
                "a/src/solve/cut.rs": "use super::Schedule;\npub struct Goal;\n",
            }
        )
        self.assertEqual(code, 1)
        self.assertEqual(out.strip(), "a: solve/cut.rs -> solve.rs -> solve/cut.rs")

    def test_inline_paths_count_and_test_modules_resolve_super_to_their_file(self):
        code, out = check(
            {
                "a/src/lib.rs": "mod x;\nmod y;\n",
                "a/src/x.rs": "pub fn f() { crate::y::g() }\n"
                "#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
                "a/src/y.rs": "pub fn g() {}\n#[cfg(test)]\nmod tests {\n    use crate::x::f;\n}\n",
            }
        )
        self.assertEqual(code, 1)
        self.assertEqual(out.strip(), "a: x.rs -> y.rs -> x.rs")

    def test_a_chain_and_comments_are_no_cycle_and_skip_leaves_a_crate_out(self):
        files = {
            "a/src/lib.rs": "mod x;\nmod y;\n",
            "a/src/x.rs": "use crate::y::Y;\n// use crate::x::X in a comment is no import\n",
            "a/src/y.rs": "pub struct Y; // see crate::x::X\n",
            "b/src/lib.rs": "mod p;\nmod q;\n",
            "b/src/p.rs": "use crate::q::Q;\npub struct P;\n",
            "b/src/q.rs": "use crate::p::P;\npub struct Q;\n",
        }
        self.assertEqual(check(files)[0], 1)
        code, out = check(files, "--skip", "b")
        self.assertEqual(code, 0)
        self.assertIn("no cycle among 3 files of 1 crates (skipped: b)", out)

    def test_a_path_through_a_module_imported_by_name_reaches_the_file_it_names(self):
        files = {
            "a/src/lib.rs": "mod replay;\nmod report;\n",
            "a/src/replay.rs": "pub mod gate;\n",
            "a/src/replay/gate.rs": "pub fn get() {}\n",
            "a/src/report.rs": "use crate::replay;\npub fn f() { replay::gate::get() }\n",
        }
        self.assertEqual(check(files)[0], 0)
        files["a/src/replay/gate.rs"] = "pub fn get() { crate::report::f() }\n"
        code, out = check(files)
        self.assertEqual(code, 1)
        self.assertEqual(out.strip(), "a: replay/gate.rs -> report.rs -> replay/gate.rs")

    def test_a_renamed_import_and_a_braced_self_are_followed(self):
        for user in ("use crate::replay as r;\npub fn f() { r::gate::get() }\n",
                     "use crate::{replay::{self}, sync};\npub fn f() { replay::gate::get() }\n"):
            code, out = check(
                {
                    "a/src/lib.rs": "mod replay;\nmod report;\nmod sync;\n",
                    "a/src/replay.rs": "pub mod gate;\n",
                    "a/src/replay/gate.rs": "pub fn get() { crate::report::f() }\n",
                    "a/src/report.rs": user,
                    "a/src/sync.rs": "pub fn g() {}\n",
                }
            )
            self.assertEqual(code, 1, user)
            self.assertEqual(out.strip(), "a: replay/gate.rs -> report.rs -> replay/gate.rs")

    def test_super_paths_in_code_and_through_a_use_of_super_are_followed(self):
        for user in ("use super::shadow;\npub fn f() { shadow::check::run() }\n",
                     "pub fn f() { super::shadow::check::run() }\n"):
            code, out = check(
                {
                    "a/src/lib.rs": "mod replay;\n",
                    "a/src/replay.rs": "pub mod shadow;\npub mod sync;\n",
                    "a/src/replay/shadow.rs": "pub mod check;\n",
                    "a/src/replay/shadow/check.rs": "pub fn run() { crate::replay::sync::f() }\n",
                    "a/src/replay/sync.rs": user,
                }
            )
            self.assertEqual(code, 1, user)
            self.assertEqual(
                out.strip(), "a: replay/shadow/check.rs -> replay/sync.rs -> replay/shadow/check.rs"
            )

    def test_self_paths_and_child_modules_named_in_code_are_followed(self):
        for user in ("pub fn f() { self::gate::hold::get() }\n",
                     "use self::gate;\npub fn f() { gate::hold::get() }\n",
                     "pub fn f() { gate::hold::get() }\n"):
            code, out = check(
                {
                    "a/src/lib.rs": "mod replay;\n",
                    "a/src/replay.rs": "pub mod gate;\n" + user,
                    "a/src/replay/gate.rs": "pub mod hold;\n",
                    "a/src/replay/gate/hold.rs": "pub fn get() { super::super::f() }\n",
                }
            )
            self.assertEqual(code, 1, user)
            self.assertEqual(
                out.strip(), "a: replay/gate/hold.rs -> replay.rs -> replay/gate/hold.rs"
            )

    def test_an_inline_crate_path_without_a_use_is_followed_to_the_deepest_file(self):
        code, out = check(
            {
                "a/src/lib.rs": "mod replay;\nmod record;\n",
                "a/src/replay.rs": "pub mod sync;\n",
                "a/src/replay/sync.rs": "pub fn on_op() { crate::record::write() }\n",
                "a/src/record.rs": "pub fn write() {}\n"
                "pub fn op() { crate::replay::sync::on_op() }\n",
            }
        )
        self.assertEqual(code, 1)
        self.assertEqual(out.strip(), "a: record.rs -> replay/sync.rs -> record.rs")

    def test_a_name_from_another_crate_is_no_edge_even_where_a_module_has_it(self):
        files = {
            "a/src/lib.rs": "mod gate;\nmod sync;\n",
            "a/src/gate.rs": "use std::sync;\npub fn f() { sync::atomic::fence() }\n",
            "a/src/sync.rs": "pub fn h() { crate::gate::f() }\n",
        }
        self.assertEqual(check(files), (0, "import_cycles: no cycle among 3 files of 1 crates\n"))
        files["a/src/gate.rs"] = "use crate::sync;\npub fn f() { sync::h() }\n"
        self.assertEqual(check(files)[0], 1)
    def test_paths_after_a_continued_string_or_a_quote_char_are_seen(self):
        for before in ('let s = "one \\\n    two";\nlet t = "three";\n',
                       "let q = '\"';\nlet t = \"x\";\n"):
            code, out = check(
                {
                    "a/src/lib.rs": "mod x;\nmod y;\n",
                    "a/src/x.rs": "pub fn f() {\n"
                    + before
                    + "crate::y::g();\nlet u = \"four\";\n}\n",
                    "a/src/y.rs": "pub fn g() { crate::x::f() }\n",
                }
            )
            self.assertEqual((code, out.strip()), (1, "a: x.rs -> y.rs -> x.rs"), before)


if __name__ == "__main__":
    unittest.main()
