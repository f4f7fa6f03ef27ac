"""minimap2 (https://github.com/lh3/minimap2): a read mapper; kthread.c's kt_pipeline hands
batches of reads through three steps (read, map, write) under a mutex and a condition variable,
and kt_for maps a batch's reads on worker threads that take indices with atomic fetch-and-add and
steal each other's (a plain read of the other workers' counters: kthread.c:35)."""
NAME = "minimap2"
CHECKOUT = "minimap2"
EXE = "minimap2"
WORKLOAD = "minimap2 -t 4 -K 50k -a: 3,000 reads of 300 bp on a 20 kb genome"
ARGV = ["{exe}", "-t", "4", "-K", "50k", "-a", "{data}/ref.fa", "{data}/reads.fa"]


def build(cc, cxx):
    return [f"make CC='{cc}' CFLAGS='-O2 -g' minimap2"]


def prepare(data):
    from inputs import reads_fasta
    reads_fasta(data / "ref.fa", data / "reads.fa")
