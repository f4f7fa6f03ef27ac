// SCENARIO: a two-worker pool serves a batch of requests from a mutex+condvar queue; each worker
//           adds its result to a shared byte counter after releasing the queue lock: the adds race
// CATEGORY: pool
// EXPECT: race 56 56
// REORDER: no
//
// The queue is correct (mutex + condition variable, the canonical wait loop, shutdown under the
// lock with a broadcast), but the pool's result counter bytes_served is updated after the worker
// has dropped the queue lock: the author moved the add out of the critical section "to keep the
// lock short" and forgot that the counter is shared. main submits a batch of requests at once;
// serving one takes a while (an I/O wait), so both workers serve requests at the same time and
// add to bytes_served with no synchronization between them: a worker's add comes after its
// dequeue and before its next lock, and the other worker's add in the same window is unordered
// with it. The race is there in the natural run, no reordering is needed; one of the adds can be
// lost. The queue fields are only touched under the lock, each worker's count of served requests
// is its own element of `served[]`, and main reads everything after the shutdown and the joins.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define WORKERS 2
#define REQUESTS 6
#define QCAP 8

static int queue[QCAP]; // request sizes
static int q_head, q_len, shutting_down;
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_nonempty = PTHREAD_COND_INITIALIZER;
static long bytes_served; // the result counter

static long serve(int size) {
  long bytes = 0;
  for (int i = 0; i < size; i++)
    bytes += 1 + (i % 3 == 0); // headers on every third block
  return bytes;
}

static void *worker(void *arg) {
  int *served = arg;
  for (;;) {
    pthread_mutex_lock(&q_lock);
    while (q_len == 0 && !shutting_down)
      pthread_cond_wait(&q_nonempty, &q_lock);
    if (q_len == 0) { // shutting down, nothing left
      pthread_mutex_unlock(&q_lock);
      return NULL;
    }
    int size = queue[q_head];
    q_head = (q_head + 1) % QCAP;
    q_len--;
    pthread_mutex_unlock(&q_lock);

    long bytes = serve(size);
    usleep(2000);          // wait for the client to take the data
    (*served)++;           // this worker's own count
    bytes_served += bytes; // the bug: the shared counter, outside the lock
  }
}

static void submit(int size) {
  pthread_mutex_lock(&q_lock);
  queue[(q_head + q_len) % QCAP] = size;
  q_len++;
  pthread_cond_signal(&q_nonempty);
  pthread_mutex_unlock(&q_lock);
}

int main(void) {
  pthread_t th[WORKERS];
  int served[WORKERS] = {0};
  long expect = 0;

  for (int i = 0; i < WORKERS; i++)
    pthread_create(&th[i], NULL, worker, &served[i]);
  for (int r = 0; r < REQUESTS; r++) { // a batch: all requests queued at once
    int size = 100 + 37 * r;
    expect += serve(size);
    submit(size);
  }
  pthread_mutex_lock(&q_lock);
  shutting_down = 1;
  pthread_cond_broadcast(&q_nonempty);
  pthread_mutex_unlock(&q_lock);
  for (int i = 0; i < WORKERS; i++)
    pthread_join(th[i], NULL);
  printf("%d requests served, %ld bytes (%s)\n", served[0] + served[1], bytes_served,
         bytes_served == expect ? "consistent" : "lost update");
  fprintf(stderr, "per worker: %d %d\n", served[0], served[1]);
  return 0;
}
