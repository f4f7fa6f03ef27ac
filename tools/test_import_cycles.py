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


if __name__ == "__main__":
    unittest.main()
