// Allocation events: the program's own malloc/calloc/realloc/free with their sites, and the
// allocations libc makes by itself (strdup, asprintf) without one, on two threads; each
// allocation and free names the block's usable size. Dynamic and -static record the same.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
// RUN: %ilgen cc -g -O0 -static %s -o %t.static 2>/dev/null
// RUN: rm -rf %t.strace && env ILGEN_OPTIONS=trace_dir=%t.strace %t.static
// RUN: %ilgen dump %t.strace | FileCheck %s
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *name;

void *worker(void *arg) {
  char *copy = strdup(arg);
  name = copy;
  free(copy);
  return NULL;
}

int main(void) {
  int *a = malloc(24);
  a[0] = 1;
  a = realloc(a, 4096);
  free(a);
  int *z = calloc(4, 8);
  free(z);
  pthread_t t;
  pthread_create(&t, NULL, worker, "hello");
  pthread_join(t, NULL);
  char *s;
  if (asprintf(&s, "%d", 42) < 0)
    return 1;
  free(s);
  return 0;
}

// CHECK:      T0 thread main
// A -static link also shows libgcc's object_mutex, taken by the startup code.
// CHECK:      T0 alloc [[A:0x[0-9a-f]+]] size=24 seq={{[0-9]+}} at {{.*}}heap_events.c:27:12 main
// CHECK-NEXT: T0 write [[A]] size=4 at {{.*}}heap_events.c:28:8 main
// CHECK-NEXT: T0 free [[A]] size=24 seq={{[0-9]+}} at {{.*}}heap_events.c:29:7 main
// CHECK-NEXT: T0 alloc [[B:0x[0-9a-f]+]] size=4104 seq={{[0-9]+}} at {{.*}}heap_events.c:29:7 main
// CHECK-NEXT: T0 free [[B]] size={{409[0-9]|410[0-9]}} seq={{[0-9]+}} at {{.*}}heap_events.c:30:3 main
// CHECK-NEXT: T0 alloc [[Z:0x[0-9a-f]+]] size=40 seq={{[0-9]+}} at {{.*}}heap_events.c:31:12 main
// CHECK-NEXT: T0 free [[Z]] size=40 seq={{[0-9]+}} at {{.*}}heap_events.c:32:3 main
// CHECK-NEXT: T0 fork T1
// CHECK:      T0 join T1
// asprintf allocates, and frees or grows, its buffer inside libc: no site; the program frees the
// string it got.
// CHECK:      T0 alloc {{0x[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}{{$}}
// CHECK:      T0 alloc [[S:0x[0-9a-f]+]] size=24 seq={{[0-9]+}}{{$}}
// CHECK:      T0 free [[S]] size=24 seq={{[0-9]+}} at {{.*}}heap_events.c:39:3 main
// CHECK:      T1 thread parent=T0 child=0
// CHECK-NEXT: T1 start
// CHECK-NEXT: T1 stack {{0x[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}{{$}}
// CHECK-NEXT: T1 read {{.*}} size=6 at {{.*}}heap_events.c:20:16 worker
// strdup's malloc is libc's own call.
// CHECK-NEXT: T1 alloc [[C:0x[0-9a-f]+]] size=24 seq={{[0-9]+}}{{$}}
// CHECK-NEXT: T1 write name size=8 at {{.*}}heap_events.c:21:8 worker
// CHECK-NEXT: T1 free [[C]] size=24 seq={{[0-9]+}} at {{.*}}heap_events.c:22:3 worker
// CHECK-NEXT: T1 end
