// A read-modify-write (`flags++`, one `__ilgen_read_write` hook) at a second line of one segment,
// after another line of the same segment wrote the field, is a race of its own line: the replay
// checks the two halves of a read-modify-write in one entry and decides both at once when a cell of
// the instant covers them, but not when either site makes its first access of the instant (the
// read at line 29 here, covered by line 28's write). The trace keeps the segment's first write
// (line 28) and the candidate is that pair against the bumper's locked write; the replay names
// line 29 too (second_read_site_race.c: the same for two plain reads).
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>

struct item {
  int refcount;
  unsigned short flags;
  char key[14];
};

struct item the_item = {0, 0, "key"};
pthread_mutex_t item_lock = PTHREAD_MUTEX_INITIALIZER;

void *getter(void *arg) {
  struct item *it = &the_item;
  pthread_mutex_lock(&item_lock);
  it->refcount++;
  pthread_mutex_unlock(&item_lock);
  it->flags = 1;
  it->flags++;
  return arg;
}

void *bumper(void *arg) {
  pthread_mutex_lock(&item_lock);
  the_item.flags = 2;
  pthread_mutex_unlock(&item_lock);
  return arg;
}

int main(void) {
  pthread_t g, b;
  pthread_create(&g, NULL, getter, NULL);
  pthread_create(&b, NULL, bumper, NULL);
  pthread_join(g, NULL);
  pthread_join(b, NULL);
  return 0;
}

// Each report names either access first; the bumper's only access of `flags` is line 35.
// CHECK-DAG: #0 getter /{{.*}}second_site_read_write_race.c:28:
// CHECK-DAG: #0 getter /{{.*}}second_site_read_write_race.c:29:
// CHECK-DAG: #0 bumper /{{.*}}second_site_read_write_race.c:35:
// CHECK:     ilgen: 2 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66
