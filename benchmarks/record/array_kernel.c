/* array_kernel.c -- recording-overhead workload: an array kernel with many shared accesses.
 *
 * Stresses: memory-access instrumentation and trace volume. Four threads run a 5-point
 * integer stencil over a shared SIZE x SIZE grid for STEPS sweeps, double-buffered: per cell it
 * writes in the shared destination grid (its own band of rows), a thread reads four cells of
 * the shared source grid (the rows at a band's edges are also read by the neighbouring thread)
 * and the destination cell it wrote just before, which keeps the loop scalar (6 memory accesses
 * per cell, ~1 ns natively). After each sweep all threads meet at a pthread barrier before the
 * buffers swap, so each sweep is a new synchronization segment.
 *
 * Usage: array_kernel [SIZE]   grid side (default 384); STEPS is fixed at 200.
 * Output: a checksum of the final grid, identical for every build and every schedule.
 * Race-free: a sweep writes only its own rows of dst and reads src plus the dst cell it wrote
 * just before; the barrier separates sweeps.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4
#define STEPS 200

static int size;
static unsigned *grid[2];
static pthread_barrier_t sweep_done;

static void *sweep(void *arg) {
  int index = (int)(size_t)arg;
  int rows = size - 2; /* the border rows and columns stay fixed */
  int first = 1 + rows * index / NTHREADS;
  int last = 1 + rows * (index + 1) / NTHREADS;
  for (int step = 0; step < STEPS; step++) {
    const unsigned *src = grid[step & 1];
    unsigned *dst = grid[(step + 1) & 1];
    for (int y = first; y < last; y++) {
      for (int x = 1; x < size - 1; x++) {
        size_t i = (size_t)y * (size_t)size + (size_t)x;
        /* dst[i - 1] was just written by this thread: a carried dependency along the row, so
         * the compiler cannot vectorize the sweep and every access stays a scalar access. */
        unsigned v = 4 * src[i] + dst[i - 1] + src[i + 1] + src[i - size] + src[i + size];
        dst[i] = (v >> 3) ^ (unsigned)step;
      }
    }
    pthread_barrier_wait(&sweep_done);
  }
  return NULL;
}

int main(int argc, char **argv) {
  size = argc > 1 ? atoi(argv[1]) : 384;
  if (size < 3) {
    fprintf(stderr, "usage: %s [SIZE>=3]\n", argv[0]);
    return 2;
  }
  size_t cells = (size_t)size * (size_t)size;
  for (int b = 0; b < 2; b++) {
    grid[b] = malloc(cells * sizeof(unsigned));
    if (!grid[b]) {
      perror("malloc");
      return 1;
    }
  }
  unsigned seed = 12345u;
  for (size_t i = 0; i < cells; i++) {
    seed = seed * 1103515245u + 12345u;
    grid[0][i] = grid[1][i] = (seed >> 8) & 0xffffu;
  }
  pthread_barrier_init(&sweep_done, NULL, NTHREADS);
  pthread_t threads[NTHREADS];
  for (int t = 0; t < NTHREADS; t++)
    if (pthread_create(&threads[t], NULL, sweep, (void *)(size_t)t) != 0)
      return 1;
  for (int t = 0; t < NTHREADS; t++)
    pthread_join(threads[t], NULL);
  pthread_barrier_destroy(&sweep_done);
  const unsigned *final = grid[STEPS & 1];
  unsigned long long sum = 0;
  for (size_t i = 0; i < cells; i++)
    sum = sum * 1000003ull + final[i];
  printf("array_kernel size=%d steps=%d checksum=%llu\n", size, STEPS, sum);
  free(grid[0]);
  free(grid[1]);
  return 0;
}
