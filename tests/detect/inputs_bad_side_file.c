// A thread's inputs file (t<tid>.inputs: what each read of a pipe or stream socket returned) that
// is cut, holds an outcome no read returns, is named for another thread or names a thread the
// trace has not is refused with one message naming the file and exit code 2, before anything is
// replayed; the replaying runtime refuses it too (exit status 88), before the program runs.
// The reader's read of the pipe is t1.inputs' one record: header 24 bytes, record 16.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace %t.cut %t.bad %t.name %t.who
// RUN: env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace > /dev/null; echo "exit=$?"' | FileCheck %s --check-prefix=GOOD
// GOOD: exit=66
// `ilgen replay` writes the candidate's schedule, which the runtime is given below.
// RUN: %ilgen replay --print-env %t.trace:1 > /dev/null
//
// RUN: cp -r %t.trace %t.cut && head -c 30 %t.trace/t1.inputs > %t.cut/t1.inputs
// RUN: sh -c '%ilgen detect --no-replay %t.cut; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=CUT
// CUT:      ilgen: error: {{.*}}.cut/t1.inputs is truncated at byte 24
// CUT-NEXT: exit=2
// RUN: env ILGEN_OPTIONS=mode=replay:schedule=%t.cut/schedule-1.json \
// RUN:   bash -c '%t; echo "exit status $?"' 2>&1 | FileCheck %s --check-prefix=RT-CUT
// RT-CUT:      ilgen: cannot replay: {{.*}}.cut/t1.inputs is truncated at byte 24{{.*}} (exit status 88)
// RT-CUT-NEXT: exit status 88
//
// A count of -2 where the record's count is (bytes 24..31).
// RUN: cp -r %t.trace %t.bad
// RUN: sh -c 'printf "\376" | dd of=%t.bad/t1.inputs bs=1 seek=24 conv=notrunc 2>/dev/null'
// RUN: sh -c 'printf "\377\377\377\377\377\377\377" | dd of=%t.bad/t1.inputs bs=1 seek=25 conv=notrunc 2>/dev/null'
// RUN: sh -c '%ilgen detect --no-replay %t.bad; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD:      ilgen: error: {{.*}}.bad/t1.inputs is corrupt at byte 24: read #0 has count -2, errno 0 on descriptor {{[0-9]+}}, which no read returns; record the program again
// BAD-NEXT: exit=2
//
// RUN: cp -r %t.trace %t.name && mv %t.name/t1.inputs %t.name/t7.inputs
// RUN: sh -c '%ilgen detect --no-replay %t.name; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=NAME
// NAME:      ilgen: error: {{.*}}.name/t7.inputs is inconsistent with the rest of its trace: its header says it is thread 1, its name says thread 7
// NAME-NEXT: exit=2
//
// Thread 7 in the header (bytes 12..15) and the name: no such thread.
// RUN: cp -r %t.trace %t.who && mv %t.who/t1.inputs %t.who/t7.inputs
// RUN: sh -c 'printf "\007" | dd of=%t.who/t7.inputs bs=1 seek=12 conv=notrunc 2>/dev/null'
// RUN: sh -c '%ilgen detect --no-replay %t.who; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=WHO
// WHO:      ilgen: error: {{.*}}.who/t7.inputs is inconsistent with the rest of its trace: it names thread 7 (child 0 of thread 0), which the trace has not
// WHO-NEXT: exit=2
#include <pthread.h>
#include <unistd.h>

static int fds[2];
static int counted;

static void *reader(void *arg) {
  (void)arg;
  char buf[4];
  if (read(fds[0], buf, sizeof buf) == 3)
    counted++;
  return NULL;
}

int main(void) {
  if (pipe(fds) != 0)
    return 2;
  write(fds[1], "abc", 3);
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  counted++;
  pthread_join(t, NULL);
  return 0;
}
