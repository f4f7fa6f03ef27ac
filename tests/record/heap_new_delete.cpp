// C++ operator new and delete (plain, array, sized, aligned, nothrow) are heap events at the
// program's sites: libstdc++ allocates through the replaced malloc family, the pass's wrappers give
// the site. An exception thrown by operator new unwinds through its wrapper. Dynamic and -static.
//
// RUN: %ilgen c++ -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
// RUN: %ilgen c++ -g -O0 -static %s -o %t.static 2>/dev/null
// RUN: rm -rf %t.strace && env ILGEN_OPTIONS=trace_dir=%t.strace %t.static
// RUN: %ilgen dump %t.strace | FileCheck %s
#include <cstdio>
#include <new>

struct alignas(64) Line {
  long v[8];
};

volatile unsigned long huge_size = 1UL << 62;

int main() {
  int *one = new int(1);
  delete one;
  int *many = new int[10];
  delete[] many;
  Line *line = new Line;
  delete line;
  int *maybe = new (std::nothrow) int;
  delete maybe;
  try {
    char *huge = new char[huge_size];
    delete[] huge;
  } catch (const std::bad_alloc &) {
    std::puts("bad_alloc");
  }
  return 0;
}

// A static link runs libstdc++'s constructors (its exception pool) after the runtime's: allocations
// may come before main's.
// CHECK:      T0 thread main
// CHECK:      T0 alloc [[ONE:0x[0-9a-f]+]] size=24 seq={{[0-9]+}} at {{.*}}heap_new_delete.cpp:21:14 main
// CHECK-NEXT: T0 write [[ONE]] size=4 at {{.*}}heap_new_delete.cpp:21:14 main
// CHECK-NEXT: T0 free [[ONE]] size={{[0-9]+}} seq={{[0-9]+}} at {{.*}}heap_new_delete.cpp:22:3 main
// CHECK-NEXT: T0 alloc [[MANY:0x[0-9a-f]+]] size=40 seq={{[0-9]+}} at {{.*}}heap_new_delete.cpp:23:15 main
// CHECK-NEXT: T0 free [[MANY]] size={{[0-9]+}} seq={{[0-9]+}} at {{.*}}heap_new_delete.cpp:24:3 main
// CHECK-NEXT: T0 alloc [[LINE:0x[0-9a-f]*[048c]0]] size=72 seq={{[0-9]+}} at {{.*}}heap_new_delete.cpp:25:16 main
// CHECK-NEXT: T0 free [[LINE]] size={{[0-9]+}} seq={{[0-9]+}} at {{.*}}heap_new_delete.cpp:26:3 main
// CHECK-NEXT: T0 alloc [[MAYBE:0x[0-9a-f]+]] size=24 seq={{[0-9]+}} at {{.*}}heap_new_delete.cpp:27:16 main
// CHECK-NEXT: T0 free [[MAYBE]] size={{[0-9]+}} seq={{[0-9]+}} at {{.*}}heap_new_delete.cpp:28:3 main
// CHECK-NEXT: T0 read huge_size size=8 at {{.*}}heap_new_delete.cpp:30:27 main
// The failed allocation is no event; the exception object is libstdc++'s own allocation, freed
// when the handler ends (the unwinder and puts may allocate in between).
// CHECK-NEXT: T0 alloc [[EXC:0x[0-9a-f]+]] size={{[0-9]+}} seq={{[0-9]+}}{{$}}
// CHECK:      T0 free [[EXC]] size={{[0-9]+}} seq={{[0-9]+}}{{$}}
