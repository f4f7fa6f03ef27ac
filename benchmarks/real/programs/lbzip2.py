"""lbzip2 (https://github.com/kjn/lbzip2): parallel bzip2; a splitter, worker threads and a muxer
share one work queue under a mutex with condition variables (src/main.c, src/compress.c)."""
NAME = "lbzip2"
CHECKOUT = "lbzip2"
EXE = "lbzip2"
WORKLOAD = "lbzip2 -n4 -1 on 512 KB of text"
ARGV = ["{exe}", "-n", "4", "-1", "-k", "-f", "-c", "{data}/input.txt"]


def build(cc, cxx):
    # Its build is autotools with gnulib (not in the checkout); the sources need only these.
    return [f"{cc} -O2 -g -std=gnu99 -D_XOPEN_SOURCE=700 -D_FILE_OFFSET_BITS=64 "
            f"-DPACKAGE_NAME='\"lbzip2\"' -DPACKAGE_VERSION='\"devel\"' -Isrc src/*.c "
            f"-o lbzip2 -lpthread"]


def prepare(data):
    from inputs import text_file
    text_file(data / "input.txt", 512 << 10)
