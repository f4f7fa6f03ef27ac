// libstdc++'s std::mutex locks through inline functions (__gthread_mutex_lock) that call
// pthread_mutex_lock directly; those calls are in this module, so the pass rewrites them.
// RUN: %clang -x c++ -g -O0 -fpass-plugin=%plugin -S -emit-llvm -o - %s | FileCheck %s
// RUN: %clang -x c++ -g -O2 -fpass-plugin=%plugin -S -emit-llvm -o - %s | FileCheck %s
#include <mutex>

std::mutex mu;
int counter;

// CHECK: call i32 @__ilgen_wrap_pthread_mutex_lock(ptr {{.*}}, ptr getelementptr inbounds (i8, ptr @__ilgen_sites
// CHECK: call i32 @__ilgen_wrap_pthread_mutex_unlock(ptr {{.*}}, ptr getelementptr inbounds (i8, ptr @__ilgen_sites
// CHECK-NOT: call {{.*}} @pthread_mutex_lock(
void bump() {
  std::lock_guard<std::mutex> guard(mu);
  counter++;
}
