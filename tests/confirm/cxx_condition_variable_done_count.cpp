// Workers count themselves done under a std::mutex and the last one wakes main through a
// std::condition_variable (`if (++done == total) cv.notify_all()`), as leveldb's db_bench does.
// libstdc++ broadcasts and waits inside the library, so the pass did not see that the branch
// decides a sync operation, nor that main's loop around `cv.wait` is a wait loop: the analysis
// predicted schedules in which the first worker to finish broadcasts (it read `done` before the
// other's increment) and main's loop takes another turn, and every replay was infeasible ("step 89
// expects T2 operation #42 to be broadcast, but it is unlock"; a deadlock candidate too), 1-3
// candidates a recording. Now, as with pthread_cond_broadcast and pthread_cond_wait, there is
// nothing to predict; with -DRACY both workers also write `last` unlocked, and that race (and
// only that) is confirmed.
//
// RUN: %ilgen c++ -g -O2 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=OUT
// RUN: sh -c '%ilgen detect %t.trace 2>&1; echo "exit=$?"' | FileCheck %s --check-prefix=NONE
// RUN: %ilgen c++ -g -O2 -DRACY %s -o %t.racy
// RUN: rm -rf %t.racy.trace && env ILGEN_OPTIONS=trace_dir=%t.racy.trace %t.racy | FileCheck %s --check-prefix=OUT
// RUN: sh -c '%ilgen detect %t.racy.trace 2>&1; echo "exit=$?"' | FileCheck %s --check-prefix=RACY
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

static std::mutex mu;
static std::condition_variable cv;
static int done_count = 0;
static const int total = 2;
static int result[2];
int last = -1;

static void worker(int id) {
  for (int i = 0; i < 20; i++) {
    std::lock_guard<std::mutex> l(mu);
    result[id] += i;
  }
#ifdef RACY
  last = id;
#endif
  {
    std::lock_guard<std::mutex> l(mu);
    done_count++;
    if (done_count >= total)
      cv.notify_all();
  }
}

int main() {
  std::thread a(worker, 0), b(worker, 1);
  a.detach();
  b.detach();
  {
    std::unique_lock<std::mutex> l(mu);
    while (done_count < total)
      cv.wait(l);
  }
  printf("sums=%d,%d last=%s\n", result[0], result[1], last < 0 ? "none" : "set");
  return 0;
}

// OUT: sums=190,190 last={{none|set}}

// NONE:      ilgen: 0 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// NONE:      exit=0

// RACY:      WARNING: ilgen: data race
// RACY-DAG:  cxx_condition_variable_done_count.cpp:36
// RACY-DAG:  cxx_condition_variable_done_count.cpp:36
// RACY:      SUMMARY: ilgen: data race {{.*}}cxx_condition_variable_done_count.cpp:36
// RACY:      ilgen: 1 finding(s) confirmed
// RACY-NOT:  infeasible:
// RACY:      exit=66
