// A nonblocking read that found nothing in the recording is given back as nothing in the replay,
// even where the replay's peer already sent data: the reader counts without the lock when its
// read fails with EAGAIN (the race with main's locked count) and under the lock when it got data.
// In the recorded run (no flag file yet) nothing is written to the socket; in every later run,
// the replays, main writes a byte before it starts the reader, with writev, which the runtime
// does not see (a write it sees is a sync operation, which the schedule would not expect): the
// byte stands for a peer's. Replay gives the read its recorded
// -1/EAGAIN without reading, so the reader takes the recorded path and the race is confirmed; the
// byte stays unread. Without the inputs file the read gets the byte and the race is not reached.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace %t.old %t.flag && env ILGEN_OPTIONS=trace_dir=%t.trace %t %t.flag
// RUN: cp -r %t.trace %t.old && rm %t.old/t1.inputs
// RUN: sh -c '%ilgen detect -q %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: sh -c '%ilgen detect -q --show-all %t.old; echo "exit=$?"' | FileCheck %s --check-prefix=OLD
//
// CHECK-DAG: #0 reader {{.*}}input_eagain_race.c:39:
// CHECK-DAG: #0 main {{.*}}input_eagain_race.c:58:
// CHECK: ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s)
// CHECK: exit=66
// OLD: ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 1 no error
// OLD: exit=0
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static int sv[2];
static int counted;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *reader(void *arg) {
  (void)arg;
  char c;
  if (recv(sv[0], &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN) {
    counted++;
    return NULL;
  }
  pthread_mutex_lock(&lock);
  counted++;
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
    return 2;
  if (access(argv[1], F_OK) != 0)
    fclose(fopen(argv[1], "w"));
  else
    writev(sv[1], &(struct iovec){.iov_base = "x", .iov_len = 1}, 1);
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  pthread_mutex_lock(&lock);
  counted++;
  pthread_mutex_unlock(&lock);
  pthread_join(t, NULL);
  printf("%d\n", counted);
  return 0;
}
