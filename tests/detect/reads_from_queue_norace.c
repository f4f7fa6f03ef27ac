// Reads keep their writers: a worker dequeues the job main enqueued (its read of the queue head is
// an address, which the pass flags as deciding), then works on the job outside the lock. A model
// without data values would let the worker's dequeue come before main's enqueue of the same job
// and predict a race on the job's fields, a schedule replay cannot follow (the worker would
// dequeue another job). detect keeps the head read's writer before it: no candidate at all, while
// --no-reads-from predicts the infeasible ones.
//
// The worker polls under the lock rather than waiting on a condition variable: a wait would order
// each dequeue after its enqueue through the signal whenever the recorded run happened to
// alternate, and the FREE check would depend on the recording's timing.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=KEPT
// RUN: sh -c '%ilgen detect --no-replay --no-reads-from %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=FREE
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct job {
  struct job *next;
  int input, output;
};

static struct job *head;
static int done_jobs;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg) {
  for (;;) {
    pthread_mutex_lock(&m);
    struct job *j = head;
    int finished = done_jobs < 0;
    if (j != NULL)
      head = j->next;
    pthread_mutex_unlock(&m);
    if (j != NULL)
      j->output = j->input * 2;
    else if (finished)
      return arg;
    else
      usleep(1000); // a poll, not a spin: a slow main would otherwise fill the trace
  }
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  struct job *jobs[4];
  for (int i = 0; i < 4; i++) {
    struct job *j = malloc(sizeof *j);
    j->input = i;
    j->output = 0;
    pthread_mutex_lock(&m);
    j->next = head;
    head = j;
    pthread_mutex_unlock(&m);
    jobs[i] = j;
  }
  pthread_mutex_lock(&m);
  done_jobs = -1;
  pthread_mutex_unlock(&m);
  pthread_join(t, NULL);
  int sum = 0;
  for (int i = 0; i < 4; i++)
    sum += jobs[i]->output;
  return sum == 12 ? 0 : 1;
}

// KEPT:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// KEPT:      exit=0

// FREE:      ilgen: {{[1-9][0-9]*}} candidate(s)
// FREE:      exit=66
