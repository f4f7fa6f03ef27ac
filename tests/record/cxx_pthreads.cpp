// C++ built with `ilgen c++`: classes, templates and references over plain pthreads (libstdc++'s
// std::thread and std::mutex are not used). Sites name functions by their mangled symbol.
//
// RUN: %ilgen c++ -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
#include <pthread.h>

class Counter {
public:
  void add(long n) {
    pthread_mutex_lock(&mu_);
    value_ += n;
    pthread_mutex_unlock(&mu_);
  }
  long value_ = 0;

private:
  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
};

template <typename T> struct Box {
  T item;
  void set(T v) { item = v; }
};

Counter counter;
Box<int> box;
pthread_t t;

extern "C" void *worker(void *) {
  counter.add(2);
  box.set(7);
  return nullptr;
}

int main() {
  pthread_create(&t, nullptr, worker, nullptr);
  pthread_join(t, nullptr);
  return counter.value_ == 2 && box.item == 7 ? 0 : 1;
}

// CHECK:      T0 thread main
// CHECK-NEXT: T0 fork T1 seq={{[0-9]+}} at {{.*}}cxx_pthreads.cpp:38:3 main
// CHECK-NEXT: T0 read t size=8 at {{.*}}cxx_pthreads.cpp:39:{{[0-9]+}} main
// CHECK-NEXT: T0 join T1 seq={{[0-9]+}} at {{.*}}cxx_pthreads.cpp:39:3 main
// CHECK-NEXT: T0 read counter size=8 at {{.*}}cxx_pthreads.cpp:40:{{[0-9]+}} main
// CHECK-NEXT: T0 read box size=4 at {{.*}}cxx_pthreads.cpp:40:{{[0-9]+}} main
// CHECK-NEXT: T0 exit seq={{[0-9]+}} at {{.*}}cxx_pthreads.cpp:40:3 main
// CHECK-NEXT: T1 thread parent=T0 child=0
// CHECK-NEXT: T1 start seq={{[0-9]+}}
// CHECK-NEXT: T1 stack 0x{{[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}
// CHECK-NEXT: T1 lock counter+8 seq={{[0-9]+}} at {{.*}}cxx_pthreads.cpp:12:5 Counter::add(long)
// CHECK-NEXT: T1 write counter size=8 at {{.*}}cxx_pthreads.cpp:13:{{[0-9]+}} Counter::add(long)
// CHECK-NEXT: T1 unlock counter+8 seq={{[0-9]+}} at {{.*}}cxx_pthreads.cpp:14:5 Counter::add(long)
// CHECK-NEXT: T1 write box size=4 at {{.*}}cxx_pthreads.cpp:24:{{[0-9]+}} Box<int>::set(int)
// CHECK-NEXT: T1 end seq={{[0-9]+}}
// CHECK-NOT: {{.}}
