# lit configuration: every test is a C/C++ program or an .ll file with RUN: lines at the top and
# CHECK: lines with the expected result, compiled through the real plugin and runtime.
import os

import lit.formats

config.name = "ilgen"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".c", ".cpp", ".ll"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["include", "Inputs", "lit.cfg.py"]

root = os.path.dirname(config.test_source_root)
bindir = os.environ.get("ILGEN_BIN", os.path.join(root, "target", "release"))
llvm_bin = "/usr/lib/llvm-19/bin"

config.environment["PATH"] = os.pathsep.join([llvm_bin, os.environ["PATH"]])
# Tests choose their own trace directory; an inherited option string would redirect them.
config.environment.pop("ILGEN_OPTIONS", None)
config.environment.pop("ILGEN_PASS_OPTIONS", None)

config.substitutions.append(("%ilgen", os.path.join(bindir, "ilgen")))
config.substitutions.append(("%plugin", os.path.join(bindir, "libilgen_pass.so")))
config.substitutions.append(("%rtlib", os.path.join(bindir, "libilgen_rt.a")))
config.substitutions.append(("%testinc", os.path.join(config.test_source_root, "include")))
config.substitutions.append(("%clang", os.path.join(llvm_bin, "clang")))
config.substitutions.append(("%opt", os.path.join(llvm_bin, "opt")))

# The full-disk fault test mounts a small tmpfs in a user and mount namespace of its own; where the
# kernel allows no such namespace, lit lists that test as unsupported.
import subprocess

if subprocess.call(
    ["unshare", "--map-root-user", "--mount", "true"],
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
) == 0:
    config.available_features.add("tmpfs-mount")

# The foreign-owner trust test gives a trace file to another user, which only root can do; lit
# lists it as unsupported for anyone else.
if os.geteuid() == 0:
    config.available_features.add("root")
