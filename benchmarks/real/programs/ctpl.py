"""CTPL (https://github.com/vit-vit/CTPL): a C++11 thread pool (std::thread workers, a
std::mutex + std::condition_variable queue of std::function jobs, std::packaged_task results):
its example.cpp on 2 threads, built against ctpl_stl.h (the header without Boost). Its `ugu`
job reads a `Third` that main passed by reference and whose scope ended before the job ran."""
NAME = "ctpl"
CHECKOUT = "CTPL"
EXE = "example"
WORKLOAD = "example.cpp (ctpl_stl.h): 2 threads, 17 jobs, resized to 1"
ARGV = ["{exe}"]


def build(cc, cxx):
    # example.cpp includes <ctpl.h> (the Boost lock-free queue); ctpl_stl.h is the same pool on
    # the standard library alone.
    return [
        "mkdir -p stl && echo '#include \"ctpl_stl.h\"' > stl/ctpl.h",
        f"{cxx} -std=c++14 -O2 -g -Istl -I. example.cpp -o example -lpthread",
    ]


def prepare(data):
    pass
