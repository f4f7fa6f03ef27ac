// SCENARIO: a parallel sum whose join loop stops one thread short: main adds up the partial
//           sums while the last worker may still be writing its own
// CATEGORY: fork-join
// EXPECT: race 40 62
// REORDER: no
//
// main splits an array into NWORKERS slices and gives each worker a slot of `partial` to fill.
// The join loop was written `for (i = 0; i < NWORKERS - 1; i++)` when the code still summed the
// last slice itself; after the last slice was moved to a worker too, nobody updated the loop. So
// the last worker is never joined before main reads its slot: its store of the partial sum and
// main's load of it are unordered (the worker is started by a create, nothing after it). In the
// natural run main is slow to start summing (a sleep) and that worker is long done, so the total
// comes out right, but nothing in the program guarantees it: the run itself shows the race.
//
// The other workers' slots are read after their joins (ordered), the input array is filled
// before any create, and main joins the forgotten worker at the very end (after reading), so the
// program exits cleanly.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define N 4000
#define NWORKERS 4

static int data[N];
static long partial[NWORKERS];

struct slice {
  int index;
  int begin, end;
};

static void *sum_slice(void *arg) {
  struct slice *s = arg;
  long acc = 0;
  for (int i = s->begin; i < s->end; i++)
    acc += data[i];
  // Each worker writes only its own slot; the race is on the last worker's slot, which main
  // reads without having joined it.
  partial[s->index] = acc; // RACE: the last worker's store
  return NULL;
}

int main(void) {
  pthread_t tid[NWORKERS];
  struct slice slices[NWORKERS];

  for (int i = 0; i < N; i++)
    data[i] = i % 97;
  for (int w = 0; w < NWORKERS; w++) {
    slices[w].index = w;
    slices[w].begin = w * (N / NWORKERS);
    slices[w].end = (w + 1) * (N / NWORKERS);
    pthread_create(&tid[w], NULL, sum_slice, &slices[w]);
  }
  usleep(20000); // main opens the report file meanwhile: timing only
  for (int w = 0; w < NWORKERS - 1; w++) // BUG: the last worker is not joined here
    pthread_join(tid[w], NULL);

  long total = 0;
  for (int w = 0; w < NWORKERS; w++)
    total += partial[w]; // RACE: reads the last slot before the last worker is joined

  pthread_join(tid[NWORKERS - 1], NULL); // cleanup, too late for the sum
  long check = 0;
  for (int i = 0; i < N; i++)
    check += data[i];
  printf("total %ld, expected %ld\n", total, check);
  return 0;
}
