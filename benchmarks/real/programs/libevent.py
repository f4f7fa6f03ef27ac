"""libevent (https://github.com/libevent/libevent): its regress test program's thread tests, run
in the test process (`--no-fork`; tinytest forks a child per test otherwise):
debug_mode_too_late_race (two threads create event bases while debug mode is turned on: the
unlocked write TSan reports), conditions_simple (condition variables signalled from timer
callbacks) and basic (100 threads x 100 timed condition waits whose timers the main thread's
event loop fires under the base's lock)."""
NAME = "libevent"
CHECKOUT = "libevent"
EXE = "build/bin/regress"
WORKLOAD = "test/regress --no-fork: thread/debug_mode_too_late_race, conditions_simple, basic"
ARGV = ["{exe}", "--no-fork", "thread/debug_mode_too_late_race", "thread/conditions_simple",
        "thread/basic"]


def build(cc, cxx):
    # CMake takes the compiler from $CC and the flags from $CFLAGS (-O2 -g): no build type.
    return ["cmake -S . -B build -DEVENT__LIBRARY_TYPE=STATIC -DEVENT__DISABLE_OPENSSL=ON"
            " -DEVENT__DISABLE_MBEDTLS=ON -DEVENT__DISABLE_BENCHMARK=ON"
            " -DEVENT__DISABLE_SAMPLES=ON",
            "cmake --build build -j2 --target regress"]


def prepare(data):
    pass
