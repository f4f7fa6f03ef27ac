// SCENARIO: an in-place heat-diffusion stencil with one barrier per step: each thread reads its
//           neighbours, waits at the barrier, then writes its own cell, but the next step's read
//           of a neighbour falls in the same phase as that neighbour's write
// CATEGORY: barrier
// EXPECT: race 35 37
// REORDER: no
//
// A rod of six cells; the two ends are fixed temperatures (written by main before the forks and
// never again), and four threads each own one inner cell. A step is: read the left and right
// neighbours and my own cell, compute the new value, pthread_barrier_wait ("everyone has read the
// old values"), store the new value into my cell. The author dropped the second barrier of the
// classic two-barrier in-place scheme, reasoning that one barrier already separates the reads
// from the writes.
//
// It separates step k's reads from step k's writes, but step k's write of cell i and step k+1's
// read of cell i by a neighbour are in the same phase, between two arrivals at the barrier:
// nothing orders them, and the neighbour can read either the old or the new temperature. The
// race is between the store of the own cell and the read of the neighbours (one pair of lines),
// and it is visible in any run: no reordering is needed. In the natural run every thread logs a
// little after its store (a short sleep, which orders nothing), so the stores usually land
// before the neighbours' next reads and the output matches the two-barrier version.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define INNER 4
#define STEPS 6

static int cell[INNER + 2]; // temperatures in millidegrees; cell[0] and cell[INNER + 1] fixed
static pthread_barrier_t step_barrier;

static void *diffuse(void *arg) {
  int i = (int)(long)arg; // my cell, 1..INNER
  for (int s = 0; s < STEPS; s++) {
    int next = cell[i] + (cell[i - 1] - 2 * cell[i] + cell[i + 1]) / 4; // RACE: reads neighbours
    pthread_barrier_wait(&step_barrier); // all old values read
    cell[i] = next; // RACE: store, same phase as the neighbours' next read
    usleep(500);    // "log the step": the missing second barrier was here
  }
  return NULL;
}

// The same computation, sequential, as the reference the output is compared with.
static void reference(int *rod) {
  int tmp[INNER + 2];
  for (int s = 0; s < STEPS; s++) {
    for (int i = 1; i <= INNER; i++)
      tmp[i] = rod[i] + (rod[i - 1] - 2 * rod[i] + rod[i + 1]) / 4;
    for (int i = 1; i <= INNER; i++)
      rod[i] = tmp[i];
  }
}

int main(void) {
  pthread_t th[INNER];
  int ref[INNER + 2];

  cell[0] = 100000; // hot end
  cell[INNER + 1] = 0; // cold end
  for (int i = 1; i <= INNER; i++)
    cell[i] = 20000;
  for (int i = 0; i < INNER + 2; i++)
    ref[i] = cell[i];

  pthread_barrier_init(&step_barrier, NULL, INNER);
  for (long i = 1; i <= INNER; i++)
    if (pthread_create(&th[i - 1], NULL, diffuse, (void *)i) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  for (int i = 0; i < INNER; i++)
    pthread_join(th[i], NULL);
  pthread_barrier_destroy(&step_barrier);

  reference(ref);
  int same = 1;
  for (int i = 1; i <= INNER; i++)
    same &= cell[i] == ref[i];
  printf("after %d steps:", STEPS);
  for (int i = 0; i < INNER + 2; i++)
    printf(" %d", cell[i]);
  printf(" (%s)\n", same ? "matches the sequential reference" : "differs from the reference");
  return 0;
}
