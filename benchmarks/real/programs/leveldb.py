"""leveldb (https://github.com/google/leveldb, C++): its db_bench, one writer filling the database
while readers read it: a memtable skiplist read without locks (std::atomic release/acquire
links), a background compaction thread woken through a condition variable, refcounted versions
and memtables under the DB mutex, a write queue of writers that take turns leading a batch.
db_bench first destroys the database it is given: the directory a run leaves behind makes the
next run take other locks (DestroyDB locks and lists the files it finds), so every run and
every replay starts without it (RESET)."""
NAME = "leveldb"
CHECKOUT = "leveldb"
EXE = "b/db_bench"
WORKLOAD = "db_bench --threads=2 --num=200 fillrandom,readwhilewriting"
ARGV = ["{exe}", "--db={data}/db", "--threads=2", "--num=200",
        "--benchmarks=fillrandom,readwhilewriting"]
RESET = "rm -rf {data}/db"
# Larger runs cost the analysis much more than db_bench: --threads=4 --num=3000 (0.5 s natively,
# a 37 MB trace) leaves 98,197 shared objects to solve, at 15-35 a second on 2 shared cores (no
# candidate among the first 10,372, 1 GiB peak RSS): about an hour.


def build(cc, cxx):
    # Tests on: db_bench links gmock. C++17: HEAD uses std::is_standard_layout_v.
    return ["cmake -S . -B b -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_STANDARD=17 "
            "-DLEVELDB_BUILD_TESTS=ON -DLEVELDB_BUILD_BENCHMARKS=ON",
            "cmake --build b -j2 --target db_bench"]


def prepare(data):
    pass
