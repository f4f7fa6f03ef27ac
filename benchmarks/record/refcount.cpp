// Reference counting under recording: THREADS threads each copy a std::shared_ptr COPIES times (-DCOPIES=N)
// (libstdc++: an acq_rel fetch_add and fetch_sub of its use count per copy). With no argument
// they share one pointer, with "own" each copies its own. The record's cost per copy is what
// benchmarks/RESULTS.md measures (issue 14).
#include <cstdio>
#include <cstring>
#include <memory>
#include <pthread.h>

enum { THREADS = 4 };
#ifndef COPIES
#define COPIES 1000000
#endif

static std::shared_ptr<int> pointers[THREADS];

static void *worker(void *arg) {
  const std::shared_ptr<int> &p = *static_cast<std::shared_ptr<int> *>(arg);
  long sum = 0;
  for (int i = 0; i < COPIES; i++) {
    std::shared_ptr<int> copy = p;
    sum += copy != nullptr;
  }
  return (void *)sum;
}

int main(int argc, char **argv) {
  bool own = argc > 1 && std::strcmp(argv[1], "own") == 0;
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) {
    pointers[i] = own || i == 0 ? std::make_shared<int>(1) : pointers[0];
    pthread_create(&t[i], nullptr, worker, &pointers[own ? i : 0]);
  }
  long total = 0;
  for (pthread_t th : t) {
    void *r;
    pthread_join(th, &r);
    total += (long)r;
  }
  std::printf("%ld\n", total);
  return total == long(THREADS) * COPIES ? 0 : 1;
}
