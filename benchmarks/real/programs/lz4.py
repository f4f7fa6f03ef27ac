"""lz4 (https://github.com/lz4/lz4): `lz4 -T4`, the command line's multithreaded frame
compression (programs/lz4io.c on programs/threadpool.c): a pool of worker threads takes
compression jobs from a bounded queue (mutex + two condition variables), and a writer job puts
the compressed blocks out in order."""
NAME = "lz4"
CHECKOUT = "lz4"
EXE = "programs/lz4"
WORKLOAD = "lz4 -T4 -1 on 16 MB of text"
ARGV = ["{exe}", "-q", "-f", "-T4", "-1", "{data}/input.txt", "{out}.lz4"]


def build(cc, cxx):
    return [f"make -j2 -C programs lz4 CC='{cc}' MOREFLAGS='-O2 -g'"]


def prepare(data):
    from inputs import text_file
    text_file(data / "input.txt", 16 << 20)
