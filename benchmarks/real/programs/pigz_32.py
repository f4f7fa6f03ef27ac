"""pigz (https://github.com/madler/pigz) with 32 compressing threads: many threads on one job
pool and one write queue (the ≥ 32 threads row)."""
from pigz import build  # noqa: F401  (the same build as pigz)

NAME = "pigz-32"
CHECKOUT = "pigz"
EXE = "pigz"
WORKLOAD = "pigz -p 32 -b 32 on 2 MB of text"
ARGV = ["{exe}", "-p", "32", "-b", "32", "-k", "-f", "-c", "{data}/input.txt"]


def prepare(data):
    from inputs import text_file
    text_file(data / "input.txt", 2 << 20)
