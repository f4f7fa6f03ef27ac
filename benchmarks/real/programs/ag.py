"""The Silver Searcher (https://github.com/ggreer/the_silver_searcher), `ag`: a parallel search
tool; the main thread walks the tree and queues files, worker threads search them (a work queue
under a mutex + condition variable, printing under a print mutex, stats under a stats mutex)."""
NAME = "ag"
CHECKOUT = "ag"
EXE = "ag"
WORKLOAD = "ag --workers 4 --stats -c qz on 200 files (6.4 MB), all matching"
# Every file matches (about 35 lines each) and each takes a while to search, so all four workers
# search and print at once: with a rare pattern one worker found every match (RESULTS.md).
ARGV = ["{exe}", "--workers", "4", "--stats", "--nocolor", "-c", "qz", "{data}/tree"]


def build(cc, cxx):
    return ["./autogen.sh", f"./configure CC='{cc}' CFLAGS='-O2 -g'", "make -j2 ag"]


def prepare(data):
    from inputs import text_file
    tree = data / "tree"
    for i in range(200):
        sub = tree / f"d{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        text_file(sub / f"f{i}.txt", 32 << 10, seed=i)
