// A trace directory or file that another (non-root) user owns could name any program: detect and
// replay refuse it with exit 2 naming the file, unless --trust-trace is given; dump runs nothing
// and reads it.
//
// REQUIRES: root
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace %t.theirs && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: cp -r %t.trace %t.theirs && chown 65534 %t.theirs/meta.json
// RUN: sh -c '%ilgen detect %t.theirs; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=DETECT %s
// DETECT:      ilgen: error: {{.*}}.theirs/meta.json belongs to another user (uid 65534): whoever can write a trace chooses the program ilgen replays; record the program again yourself, or pass --trust-trace if you trust who wrote it
// DETECT-NEXT: exit=2
// RUN: sh -c '%ilgen detect --trust-trace %t.theirs > /dev/null 2>&1; echo "exit=$?"' | FileCheck --check-prefix=TRUSTED %s
// TRUSTED: exit=66
// RUN: chown -R 65534 %t.theirs && chown 0 %t.theirs/meta.json
// RUN: sh -c '%ilgen replay %t.theirs:1; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=DIR %s
// DIR:      ilgen: error: {{.*}}.theirs belongs to another user (uid 65534)
// DIR-NEXT: exit=2
// RUN: %ilgen dump %t.theirs | FileCheck --check-prefix=DUMP %s
// DUMP: T1 write last_writer size=8
#include <pthread.h>
#include <stdio.h>

// Which thread wrote last: both write it unordered.
long last_writer;

static void *writer(void *arg) {
  last_writer = (long)arg;
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, writer, (void *)1);
  last_writer = 0;
  pthread_join(t, NULL);
  printf("last writer: %ld\n", last_writer);
  return 0;
}
