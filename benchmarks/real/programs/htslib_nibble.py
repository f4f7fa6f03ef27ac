"""htslib (https://github.com/samtools/htslib) just before 5d318680 ("Avoid possible race when
selecting nibble2base implementation", May 2024): `nibble2base` was a function pointer that its
first call set to the SSE or the plain version, so two threads formatting their first reads at
once wrote and read it unsynchronized. test/test_view converts SAM to SAM with a pool of 4
threads: the format workers (sam.c's sam_format_worker) are those threads. A bug fixed upstream,
for the question TSan users ask: does one recorded run find what a hundred runs under TSan find
now and then?"""
NAME = "htslib-nibble"
CHECKOUT = "htslib"
REVISION = "30c9c50a"
EXE = "test/test_view"
WORKLOAD = "test/test_view -@4 at 30c9c50a (before 5d318680): 4,000 reads of 100 bp, SAM to SAM"
ARGV = ["{exe}", "-@4", "-p", "{out}.sam", "{data}/reads.sam"]


def build(cc, cxx):
    from htslib import build_target
    return build_target(cc, EXE)


def prepare(data):
    from inputs import alignments_sam
    alignments_sam(data / "reads.sam")
