"""C-Thread-Pool (https://github.com/Pithikos/C-Thread-Pool): a small C thread pool library
(`thpool_add_work`, `thpool_wait`): its own test tests/src/conc_increment.c, 1000 jobs that
increment a counter under a mutex, on 4 threads, then its wait test."""
NAME = "c-thread-pool"
CHECKOUT = "C-Thread-Pool"
EXE = "conc_increment"
WORKLOAD = "tests/src/conc_increment.c: 1000 jobs, 4 threads"
ARGV = ["{exe}", "1000", "4"]


def build(cc, cxx):
    return [f"{cc} -O2 -g -I. tests/src/conc_increment.c thpool.c -o conc_increment -lpthread"]


def prepare(data):
    pass
