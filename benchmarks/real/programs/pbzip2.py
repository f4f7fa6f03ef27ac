"""pbzip2 (a mirror of the parallel bzip2, C++ with pthreads): a producer queue of blocks
(pthread mutex + condition variables), consumer threads compressing, a file writer thread."""
NAME = "pbzip2"
CHECKOUT = "pbzip2"
EXE = "pbzip2"
WORKLOAD = "pbzip2 -p4 -b9 on 8 MB of text"
ARGV = ["{exe}", "-p4", "-k", "-f", "-c", "{data}/input.txt"]


def build(cc, cxx):
    # Its Makefile names icc; the code predates C++11 (string literal macros), so gnu++98.
    return [f"{cxx} -std=gnu++98 -O2 -g -pthread -D_LARGEFILE64_SOURCE -D_FILE_OFFSET_BITS=64 "
            f"pbzip2.cpp BZ2StreamScanner.cpp ErrorContext.cpp -o pbzip2 -lbz2"]


def prepare(data):
    from inputs import text_file
    text_file(data / "input.txt", 8 << 20)
