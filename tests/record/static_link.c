// A fully static executable (`-static`): the runtime links into it, records (libraries' pthread
// calls too, via --wrap), and `ilgen dump` names sites and globals (load base 0, absolute).
//
// RUN: %ilgen cc -g -O0 -static -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
// RUN: llvm-readelf --program-headers %t | FileCheck --check-prefix=STATIC %s
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int shared;
pthread_t t;

void *worker(void *arg) {
  pthread_mutex_lock(&m);
  shared++;
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  return shared == 1 ? 0 : 1;
}

// CHECK:      run binary={{.*}} end=exit threads=2
// CHECK-NEXT: T0 thread main
// The libraries' own calls are recorded too (without a site): libgcc registers the unwind
// tables under its object_mutex before main. It unregisters them at exit in the last ELF
// destructor, after the runtime's has sealed the trace: that pair is not recorded.
// CHECK-NEXT: T0 lock object_mutex seq={{[0-9]+}}{{$}}
// CHECK-NEXT: T0 unlock object_mutex seq={{[0-9]+}}{{$}}
// CHECK-NEXT: T0 fork T1 seq={{[0-9]+}} at {{.*}}static_link.c:22:3 main
// CHECK-NEXT: T0 read t size=8 at {{.*}}static_link.c:23:{{[0-9]+}} main
// CHECK-NEXT: T0 join T1 seq={{[0-9]+}} at {{.*}}static_link.c:23:3 main
// CHECK-NEXT: T0 read shared size=4 at {{.*}}static_link.c:24:{{[0-9]+}} main
// CHECK-NEXT: T0 exit seq={{[0-9]+}} at {{.*}}static_link.c:24:3 main
// CHECK-NEXT: T1 thread parent=T0 child=0
// CHECK-NEXT: T1 start seq={{[0-9]+}}
// CHECK-NEXT: T1 stack 0x{{[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}
// CHECK-NEXT: T1 lock m seq={{[0-9]+}} at {{.*}}static_link.c:15:3 worker
// CHECK-NEXT: T1 write shared size=4 at {{.*}}static_link.c:16:{{[0-9]+}} worker
// CHECK-NEXT: T1 unlock m seq={{[0-9]+}} at {{.*}}static_link.c:17:3 worker
// CHECK-NEXT: T1 end seq={{[0-9]+}}
// CHECK-NOT: {{.}}

// No dynamic loader: the executable is really static.
// STATIC: Program Headers:
// STATIC-NOT: INTERP
