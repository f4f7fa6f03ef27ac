"""ThreadPool (https://github.com/progschj/ThreadPool): the widely copied C++11 thread pool
(std::thread workers, a std::mutex + std::condition_variable task queue, std::future results):
its example.cpp, 8 tasks on 4 threads."""
NAME = "threadpool-cxx"
CHECKOUT = "ThreadPool"
EXE = "example"
WORKLOAD = "example.cpp: 8 tasks, 4 std::threads"
ARGV = ["{exe}"]


def build(cc, cxx):
    return [f"{cxx} -std=c++11 -O2 -g example.cpp -o example -lpthread"]


def prepare(data):
    pass
