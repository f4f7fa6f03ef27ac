// SCENARIO: a worker announces itself ready under a lock and spins until main says go; main
//           says go only if it finds the worker already announced. Both stamp the boot stage
//           without a lock: in the order that exposes that race the worker spins forever
// CATEGORY: race-then-hang
// EXPECT: race 40 57
// REORDER: yes
//
// A service starts one worker. The worker writes its boot stage (a plain diagnostic field that
// main overwrites later), takes the start lock, marks itself ready and then busy-waits on the
// atomic `go` flag. main takes the start lock when it begins serving and sets `go` only if the
// worker is already ready: the author assumed the worker always wins the race to the lock. After
// its critical section main stamps the boot stage too.
//
// In the natural run main sleeps first, so the worker is ready before main serves: the worker's
// unlock orders its stamp before main's lock and main's stamp, and nobody waits. Moving main's
// critical section before the worker's exposes the race on `boot_stage` (the worker's stamp,
// written before its lock, is then unordered with main's), and in that very order main does not
// see the worker ready, never sets `go`, and the worker spins forever after the race while main
// blocks in its join. The replay must confirm the race before the program stops making progress
// (the runtime ends a replay whose verdict is in and whose threads complete no more sync
// operations), not time out with nothing to show.
//
// `go` is a C11 atomic: the spin itself is no data race.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

enum { STAGE_NONE, STAGE_WORKER_UP, STAGE_SERVING };

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static int worker_ready; // under start_lock
static int serving;      // under start_lock
static atomic_int go;
static int boot_stage; // the diagnostic both threads stamp without a lock
static long handled;

static void *worker(void *arg) {
  (void)arg;
  boot_stage = STAGE_WORKER_UP; // RACE: stamped before the lock
  pthread_mutex_lock(&start_lock);
  worker_ready = 1;
  pthread_mutex_unlock(&start_lock);
  while (!atomic_load(&go))
    ; // spins forever when main served before the worker was ready
  for (int i = 0; i < 1000; i++)
    handled += i % 3;
  return NULL;
}

static void serve(void) {
  pthread_mutex_lock(&start_lock);
  serving = 1;
  if (worker_ready)
    atomic_store(&go, 1); // the only place that releases the worker
  pthread_mutex_unlock(&start_lock);
  boot_stage = STAGE_SERVING; // RACE: stamped after main's critical section
}

int main(void) {
  pthread_t w;
  pthread_create(&w, NULL, worker, NULL);
  usleep(150000); // the worker is ready long before main serves: timing only
  serve();
  pthread_join(w, NULL);
  printf("stage %d, serving %d, handled %ld\n", boot_stage, serving, handled);
  return 0;
}
