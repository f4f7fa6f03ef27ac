// A trace holds the program's data: its directory is 0700 and its files 0600, also when the
// directory existed with wider modes; a `meta.json.tmp` symlink planted in it is replaced, never
// followed, and the file it points to is unchanged. A sealed trace keeps no spare `meta.json.tmp`.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.fresh %t.old %t.victim && echo "victim's data" > %t.victim
// RUN: env ILGEN_OPTIONS=trace_dir=%t.fresh %t
// RUN: stat -c '%%a %%n' %t.fresh %t.fresh/* | sed 's| .*/| |' | FileCheck --check-prefix=FRESH %s
// FRESH:      700 {{.*}}.fresh
// FRESH-NEXT: 600 meta.json
// FRESH-NEXT: 600 t0.trace
// FRESH-NEXT: 600 t1.trace
//
// RUN: mkdir %t.old && chmod 777 %t.old && ln -s %t.victim %t.old/meta.json.tmp && ln -s %t.victim %t.old/t0.trace.tmp
// RUN: env ILGEN_OPTIONS=trace_dir=%t.old %t
// RUN: stat -c '%%a %%F' %t.old %t.old/t0.trace | FileCheck --check-prefix=OLD %s
// RUN: test ! -e %t.old/meta.json.tmp && test ! -L %t.old/meta.json.tmp
// OLD:      700 directory
// OLD-NEXT: 600 regular file
// RUN: echo "victim's data" | cmp - %t.victim
// RUN: %ilgen dump %t.old | FileCheck --check-prefix=DUMP %s
// DUMP: T1 write g size=4
#include <pthread.h>

int g;

static void *set(void *arg) {
  g = *(int *)arg;
  return NULL;
}

int main(void) {
  int one = 1;
  pthread_t t;
  pthread_create(&t, NULL, set, &one);
  pthread_join(t, NULL);
  return g - 1;
}
