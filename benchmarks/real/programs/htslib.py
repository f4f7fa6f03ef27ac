"""htslib (https://github.com/samtools/htslib, with its htscodecs submodule): its
test/thrash_threads2, which opens a BGZF writer on /dev/null, gives it a pool of 8 threads
(thread_pool.c: a job queue, result queues, condition variables) and closes it, 1,000 times: a
program that starts its threads afresh per job, 9,001 threads in all."""
NAME = "htslib"
CHECKOUT = "htslib"
EXE = "test/thrash_threads2"
WORKLOAD = "test/thrash_threads2: 1,000 BGZF writers with a pool of 8 threads, opened and closed"
ARGV = ["{exe}"]


def build(cc, cxx):
    return build_target(cc, EXE)


def build_target(cc, target):
    """The commands that configure htslib with CC and make TARGET."""
    # The build names htscodecs' version from its git checkout, which the driver's copy is not.
    return ["echo '#define HTSCODECS_VERSION_TEXT \"1.6.6\"' > htscodecs/htscodecs/version.h",
            "autoreconf -i",
            f"./configure CC='{cc}' CFLAGS='-O2 -g' --disable-libcurl --disable-gcs --disable-s3",
            f"make -j2 {target}"]


def prepare(data):
    pass
