// A reader whose path depends on how a message arrives split, as a server's worker does: if its
// first read of the pipe gets the whole 6-byte message it counts it without the lock (the race
// with main's locked count); if it gets part, it takes the lock and reads the rest. The peer is a
// forked child (the client): in the recorded run (no flag file yet) it writes the message at once;
// in every later run, the replays, it writes 3 bytes, waits until the pipe is drained (FIONREAD
// on its end: no timing) and writes the other 3. Replay gives the read its recorded outcome (6
// bytes, read from the real pipe until all 6 are in), so the reader takes the recorded path and
// the race is confirmed. The same trace without its inputs file (a trace of an older ilgen)
// replays as before: the read gets 3 bytes, the reader locks where the recording did not, and
// the race is not reached.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace %t.old %t.flag && env ILGEN_OPTIONS=trace_dir=%t.trace %t %t.flag
// RUN: cp -r %t.trace %t.old && rm %t.old/t1.inputs
// RUN: sh -c '%ilgen detect -q %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: sh -c '%ilgen detect -q --show-all %t.old; echo "exit=$?"' | FileCheck %s --check-prefix=OLD
//
// CHECK-DAG: #0 reader {{.*}}input_split_race.c:40:
// CHECK-DAG: #0 main {{.*}}input_split_race.c:77:
// CHECK: ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s)
// CHECK: exit=66
// OLD: ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 1 no error
// OLD: exit=0
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int fds[2];
static int counted;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *reader(void *arg) {
  (void)arg;
  char buf[6];
  ssize_t n = read(fds[0], buf, sizeof buf);
  if (n == 6) {
    counted++;
    return NULL;
  }
  pthread_mutex_lock(&lock);
  counted++;
  pthread_mutex_unlock(&lock);
  while (n > 0 && n < 6) {
    ssize_t more = read(fds[0], buf + n, sizeof buf - n);
    if (more <= 0)
      break;
    n += more;
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2 || pipe(fds) != 0)
    return 2;
  int first = access(argv[1], F_OK) != 0;
  if (first)
    fclose(fopen(argv[1], "w"));
  pid_t child = fork();
  if (child == 0) {
    if (first) {
      write(fds[1], "HELLO\n", 6);
    } else {
      write(fds[1], "HEL", 3);
      int queued = 1;
      while (ioctl(fds[1], FIONREAD, &queued) == 0 && queued > 0)
        usleep(1000);
      write(fds[1], "LO\n", 3);
    }
    _exit(0);
  }
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  pthread_mutex_lock(&lock);
  counted++;
  pthread_mutex_unlock(&lock);
  pthread_join(t, NULL);
  waitpid(child, NULL, 0);
  printf("%d\n", counted);
  return 0;
}
