"""pigz (https://github.com/madler/pigz): parallel gzip; a reader, compressing workers and a
writer hand jobs through yarn's locks and condition variables, jobs recycled through pools."""
NAME = "pigz"
CHECKOUT = "pigz"
EXE = "pigz"
WORKLOAD = "pigz -p 4 -b 128 on 8 MB of text"
ARGV = ["{exe}", "-p", "4", "-b", "128", "-k", "-f", "-c", "{data}/input.txt"]


def build(cc, cxx):
    return [f"make pigz CC='{cc}' CFLAGS='-O2 -g'"]


def prepare(data):
    from inputs import text_file
    text_file(data / "input.txt", 8 << 20)
