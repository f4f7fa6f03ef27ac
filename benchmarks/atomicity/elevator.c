// Atomicity benchmark: an elevator controller. THREADS passengers (argv[1]) each make ITERS
// trips (argv[2]) between FLOORS floors; every floor has its own lock, and the car a lock of its
// own, always taken after a floor's (nested, in one order: no deadlock). Marked transactions
// (ILGEN_ATOMIC):
//   - call: registers a request at the floor and, nested, moves the car's target there
//     (serializable: both under the floor's lock);
//   - ride: reads the car's position to decide the direction in one critical section of the car
//     and moves the car in another (the stale position: a violation to predict);
//   - arrive: clears the request at the floor (serializable).
// Passengers meet at a barrier every 64 trips (the morning rush ends), which orders the trips
// before it against those after: the prediction must not pair them.
#include <ilgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "workers.h"

#define FLOORS 6

static pthread_mutex_t floor_lock[FLOORS];
static int requests[FLOORS];
static pthread_mutex_t car_lock = PTHREAD_MUTEX_INITIALIZER;
static int car_at, car_target;
static pthread_barrier_t rush;

ILGEN_ATOMIC static void call(int floor) {
  pthread_mutex_lock(&floor_lock[floor]);
  requests[floor]++;
  pthread_mutex_lock(&car_lock);
  car_target = floor;
  pthread_mutex_unlock(&car_lock);
  pthread_mutex_unlock(&floor_lock[floor]);
}

ILGEN_ATOMIC static void ride(int floor) {
  pthread_mutex_lock(&car_lock);
  int at = car_at; // where the car is ...
  pthread_mutex_unlock(&car_lock);
  int step = floor > at ? 1 : floor < at ? -1 : 0;
  pthread_mutex_lock(&car_lock);
  car_at = at + step * abs(floor - at); // ... moved from there, maybe no longer true
  pthread_mutex_unlock(&car_lock);
}

ILGEN_ATOMIC static void arrive(int floor) {
  pthread_mutex_lock(&floor_lock[floor]);
  if (requests[floor] > 0)
    requests[floor]--;
  pthread_mutex_unlock(&floor_lock[floor]);
}

static void *passenger(void *arg) {
  long id = (long)arg;
  for (long i = 0; i < iters; i++) {
    int floor = (int)((id * 7 + i * 3) % FLOORS);
    call(floor);
    ride(floor);
    arrive(floor);
    if (i % 64 == 63)
      pthread_barrier_wait(&rush);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = workers(argc, argv);
  if (!threads)
    return 2;
  for (int f = 0; f < FLOORS; f++)
    pthread_mutex_init(&floor_lock[f], NULL);
  pthread_barrier_init(&rush, NULL, (unsigned)threads);
  run(threads, passenger);
  printf("%d %d\n", car_at, car_target);
  return 0;
}
