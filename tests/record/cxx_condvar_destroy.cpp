// std::condition_variable's destructor is libstdc++'s code: its pthread_cond_destroy reaches the
// runtime through the interposed calls and shows as a cond_destroy event (no site: an
// uninstrumented caller) of the condition variable the worker signalled, just before the free of
// the heap block it lived in. Dynamic and -static.
//
// RUN: %ilgen c++ -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
// RUN: %ilgen c++ -g -O0 -static %s -o %t.static 2>/dev/null
// RUN: rm -rf %t.strace && env ILGEN_OPTIONS=trace_dir=%t.strace %t.static
// RUN: %ilgen dump %t.strace | FileCheck %s
#include <condition_variable>
#include <mutex>
#include <thread>

struct Handoff {
  std::mutex m;
  std::condition_variable cv;
  bool ready = false;
};

int main() {
  Handoff *h = new Handoff;
  std::thread worker([h] {
    std::lock_guard<std::mutex> lock(h->m);
    h->ready = true;
    h->cv.notify_one();
  });
  {
    std::unique_lock<std::mutex> lock(h->m);
    h->cv.wait(lock, [h] { return h->ready; });
  }
  worker.join();
  delete h;
  return 0;
}

// CHECK:      T0 alloc [[H:0x[0-9a-f]+]] size={{[0-9]+}} seq={{[0-9]+}} at {{.*}}cxx_condvar_destroy.cpp:23:16 main
// CHECK:      T0 join T1 seq={{[0-9]+}}
// CHECK:      T0 cond_destroy [[CV:0x[0-9a-f]+]] seq={{[0-9]+}}{{$}}
// CHECK-NEXT: T0 free [[H]] size={{[0-9]+}} seq={{[0-9]+}} at {{.*}}cxx_condvar_destroy.cpp:34:3 main
// CHECK:      T1 signal [[CV]] seq={{[0-9]+}}
