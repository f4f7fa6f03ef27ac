"""zstd (https://github.com/facebook/zstd): `zstd -T4`, the multithreaded compressor: a job
queue in a thread pool (lib/common/pool.c), per-job buffers from a buffer pool, an LDM window
shared between jobs."""
NAME = "zstd"
CHECKOUT = "zstd"
EXE = "programs/zstd"
WORKLOAD = "zstd -T4 -3 on 16 MB of text"
ARGV = ["{exe}", "-q", "-f", "-T4", "-3", "{data}/input.txt", "-o", "{out}.zst"]


def build(cc, cxx):
    return [f"make -j2 -C programs zstd CC='{cc}' MOREFLAGS='-O2 -g'"]


def prepare(data):
    from inputs import text_file
    text_file(data / "input.txt", 16 << 20)
