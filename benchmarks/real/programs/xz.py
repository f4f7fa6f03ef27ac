"""xz (https://github.com/tukaani-project/xz): `xz -T4`, liblzma's multithreaded encoder
(lib/liblzma/common/stream_encoder_mt.c): the main thread hands input blocks to worker threads
through a mutex + condition variable per worker and collects their output queue in order."""
NAME = "xz"
CHECKOUT = "xz"
EXE = "b/xz"
WORKLOAD = "xz -T4 -1 --block-size=256KiB on 1 MB of text"
ARGV = ["{exe}", "-T4", "-1", "--block-size=256KiB", "-k", "-f", "-c", "{data}/input.txt"]


def build(cc, cxx):
    # CMake takes the compiler from $CC (its first word; the rest, like ilgen's `cc`, goes first
    # on every command line) and the flags from $CFLAGS; no build type, so no other -O.
    # No sandbox: xz's Landlock rules, set after it opened its files, forbid creating files, so
    # the worker threads it starts later could not create their trace files (RESULTS.md).
    return ["cmake -S . -B b -DBUILD_SHARED_LIBS=OFF -DENABLE_NLS=OFF -DXZ_DOC=OFF "
            "-DXZ_SANDBOX=no",
            "cmake --build b -j2 --target xz"]


def prepare(data):
    from inputs import text_file
    text_file(data / "input.txt", 1 << 20)
