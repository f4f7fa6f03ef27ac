// A program that closes every descriptor above 2 and then opens and writes its own file gets the
// runtime's old descriptor numbers: the runtime must never truncate, write or close them. Small
// chunks make both threads' trace files grow many times after the closing: main's file then has
// to be reopened by path, the worker's is created after it.
//
// RUN: %ilgen cc -g -O0 %s -o %t && %clang -g -O0 %s -o %t.plain -lpthread
// RUN: sh %S/Inputs/unharmed.sh %t.plain %t %t.d chunk_kb=4 | FileCheck %s
// RUN: cmp %t.d/plain/own.txt %t.d/recorded/own.txt
// RUN: %ilgen dump %t.d/recorded/trace | FileCheck --check-prefix=DUMP %s
// CHECK:      status 0 0
// CHECK-NEXT: output same
// CHECK-NEXT: plain files: ./own.txt
// CHECK-NEXT: recorded files: ./own.txt ./trace
// DUMP:       run binary={{.*}} end=exit threads=2
// DUMP:       T0 write more size=4000 at {{.*}}closed_fds.c:{{[0-9]+}}:{{[0-9]+}} fill
// DUMP:       T1 write data size=4000 at {{.*}}closed_fds.c:{{[0-9]+}}:{{[0-9]+}} fill
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static char data[1000][4000], more[1000][4000];
static int sum;

static void fill(char (*rows)[4000]) {
  // One lock per row: each row is its own segment, so the trace grows by a record per row.
  for (int i = 0; i < 1000; i++) {
    pthread_mutex_lock(&m);
    memset(rows[i], i & 0xff, sizeof rows[i]);
    sum += rows[i][0];
    pthread_mutex_unlock(&m);
  }
}

static void *worker(void *arg) {
  (void)arg;
  fill(data);
  return NULL;
}

int main(void) {
  for (int fd = 3; fd < 1024; fd++)
    close(fd);
  int own = open("own.txt", O_CREAT | O_WRONLY | O_TRUNC, 0644);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  for (int i = 0; i < 200; i++)
    dprintf(own, "line %d of the program's own file\n", i);
  fill(more);
  pthread_join(t, NULL);
  close(own);
  printf("sum %d\n", sum);
  return 0;
}
