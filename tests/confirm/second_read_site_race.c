// A field read outside the lock at a second line of one segment, after another line of the same
// segment read it, is a race of its own line (memcached's make_ascii_get_suffix, issue 18: its
// `FLAGS_SIZE(it)` at proto_parser.c:630 reads `it_flags` after `ITEM_key(it)` at 670 did, both
// after `item_get` let go of the item lock; ThreadSanitizer named 630 against do_item_bump's
// locked write). The getter takes a reference under the lock, then reads `flags` to find the key
// (line 47) and again, after copying the key, for the suffix (line 50); the bumper sets a flag
// under the lock. Both reads race with that write, and each is reported with its own line: the
// trace keeps the segment's first read (line 47) and the candidate is that pair, but the replay
// checks each site's first access of an instant even where a cell of another site of the same
// instant covers its bytes.
//
// Built with REPEATS=8, the first line reads `flags` 8 times: its second read is decided on the
// shadow's fast path and goes into replay's coverage table (rt/src/replay/cover.rs), which the
// inlined check then reads to skip the later ones; the second line's first read must not find
// that entry (the site is in its tag), or only the first line's finding is confirmed.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen cc -g -O0 -DREPEATS=8 -I %testinc %s -o %t.repeats
// RUN: rm -rf %t.repeats.trace && env ILGEN_OPTIONS=trace_dir=%t.repeats.trace %t.repeats
// RUN: sh -c '%ilgen detect %t.repeats.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <string.h>
#ifndef REPEATS
#define REPEATS 1
#endif

struct item {
  int refcount;
  unsigned short flags;
  char key[14];
};

struct item the_item = {0, 0, "key"};
pthread_mutex_t item_lock = PTHREAD_MUTEX_INITIALIZER;
char out[32];

void *getter(void *arg) {
  struct item *it = &the_item;
  pthread_mutex_lock(&item_lock);
  it->refcount++;
  pthread_mutex_unlock(&item_lock);
  char *p = out;
  unsigned short f = 0;
  for (int r = 0; r < REPEATS; r++)
    f |= it->flags;
  const char *key = it->key + ((f & 1) ? 8 : 0);
  memcpy(p, key, 4);
  p[4] = (it->flags & 2) ? 'x' : '0';
  return arg;
}

void *bumper(void *arg) {
  pthread_mutex_lock(&item_lock);
  the_item.flags |= 2;
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

// Each report names either access first; the bumper's only access of `flags` is line 56.
// CHECK-DAG: #0 getter /{{.*}}second_read_site_race.c:47:
// CHECK-DAG: #0 getter /{{.*}}second_read_site_race.c:50:
// CHECK-DAG: #0 bumper /{{.*}}second_read_site_race.c:56:
// CHECK:     ilgen: 2 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66
