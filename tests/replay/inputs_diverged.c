// A replay whose peer does not deliver what a read got in the recording ends as "diverged" with
// words for it (exit status 86), never as a hang or a deadlock of the program. The peer is a
// forked child writing to a pipe: in the recorded run (no flag file yet) it writes 6 bytes and the
// reader's one read gets all 6; in the replays it writes 3 and then closes (`close`) or stalls
// for 5 s while holding the pipe open (`stall`), so the read cannot be completed.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace %t.flag && env ILGEN_OPTIONS=trace_dir=%t.trace %t %t.flag close
// RUN: python3 %S/Inputs/schedule.py %t.trace 0:0:fork 1:0:start > %t.trace/s.json
// RUN: env ILGEN_OPTIONS=mode=replay:schedule=%t.trace/s.json \
// RUN:   bash -c '%t %t.flag close; echo "exit status $?"' 2>&1 | FileCheck %s --check-prefix=CLOSE
// RUN: env ILGEN_OPTIONS=mode=replay:schedule=%t.trace/s.json:replay_timeout_ms=500 \
// RUN:   bash -c '%t %t.flag stall; echo "exit status $?"' 2>&1 | FileCheck %s --check-prefix=STALL
// RUN: FileCheck %s --check-prefix=OUTCOME < %t.trace/replay-outcome.json
//
// CLOSE:      ilgen: replay diverged: T1's read #0 on fd {{[0-9]+}} returned 6 bytes in the recording, the replay's peer closed after 3 (exit status 86)
// CLOSE-NEXT: exit status 86
// STALL:      ilgen: replay diverged: T1's read #0 on fd {{[0-9]+}} returned 6 bytes in the recording, the replay's peer sent 3 and nothing more for 500 ms (exit status 86)
// STALL-NEXT: exit status 86
// OUTCOME: "result": "diverged",
// OUTCOME: "reason": "T1's read #0 on fd {{[0-9]+}} returned 6 bytes in the recording, the replay's peer sent 3 and nothing more for 500 ms"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int fds[2];
static long got;

static void *reader(void *arg) {
  (void)arg;
  char buf[6];
  got = read(fds[0], buf, sizeof buf);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3 || pipe(fds) != 0)
    return 2;
  int first = access(argv[1], F_OK) != 0;
  if (first)
    fclose(fopen(argv[1], "w"));
  if (fork() == 0) {
    if (first) {
      write(fds[1], "HELLO\n", 6);
    } else {
      write(fds[1], "HEL", 3);
      if (strcmp(argv[2], "stall") == 0) {
        // Not holding the test's output open while it stalls.
        close(1);
        close(2);
        sleep(5);
      }
    }
    _exit(0);
  }
  close(fds[1]);
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  pthread_join(t, NULL);
  printf("%ld\n", got);
  return 0;
}
