// A normal exit seals the trace even with a thread still running: the exit handshake closes every
// thread file to its exact length, and meta.json lists each file's length and checksum, then its
// own checksum. An exit handler that main registered still runs before the seal and is recorded.
// The same program killed by SIGTERM is not sealed: meta.json has neither.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace %t.killed
// RUN: env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: python3 -c 'import json, os, sys; d = sys.argv[1]; m = json.load(open(d + "/meta.json")); print(sorted((n, f["len"] == os.path.getsize(d + "/" + n), len(f["xxh3"])) for n, f in m["files"].items()), len(m["checksum"]))' %t.trace | FileCheck --check-prefix=SEALED %s
// SEALED: [('t0.trace', True, 16), ('t1.trace', True, 16)] 16
// RUN: %ilgen dump %t.trace | FileCheck %s
// RUN: env ILGEN_OPTIONS=trace_dir=%t.killed KILL=1 not --crash %t
// RUN: sh -c 'grep -c -e "\"files\"" -e "\"checksum\"" %t.killed/meta.json; %ilgen dump %t.killed > /dev/null; echo "exit=$?"' | FileCheck --check-prefix=KILLED %s
// KILLED:      0
// KILLED-NEXT: exit=0
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int ticks, last;

void *spin(void *arg) {
  for (;;) {
    pthread_mutex_lock(&m);
    ticks++;
    pthread_mutex_unlock(&m);
    usleep(1000);
  }
  return arg;
}

void bye(void) { last = ticks; }

int main(void) {
  pthread_t t;
  atexit(bye);
  pthread_create(&t, NULL, spin, NULL);
  usleep(20 * 1000);
  if (getenv("KILL"))
    raise(SIGTERM);
  return 0;
}

// CHECK: T0 exit seq={{[0-9]+}} at {{.*}}sealed_at_exit.c:{{[0-9]+}}:3 main
// CHECK: T0 write last size=4 at {{.*}}sealed_at_exit.c:{{[0-9]+}}:{{[0-9]+}} bye
// CHECK: T1 start
