/* compute.c -- recording-overhead workload: a compute loop with little sharing.
 *
 * Stresses: the cost of instrumentation when threads mostly compute in registers and on
 * thread-private memory. Four threads render disjoint rows of a Mandelbrot image (a static
 * row partition, no locks); each pixel costs up to MAX_ITER iterations of floating-point
 * arithmetic and ends in one store to the shared image, plus a few loads/stores to the
 * thread's private histogram. Main joins the threads and folds the image into a checksum,
 * so the only cross-thread communication is create/join.
 *
 * Usage: compute [SIZE]   image is SIZE x SIZE pixels (default 2000).
 * Output: a checksum line, identical for every build and every schedule.
 * Race-free: each row is written by exactly one thread; main reads only after join.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4
#define MAX_ITER 256

struct worker {
  pthread_t thread;
  int index;
  int size;
  unsigned short *image;      /* shared, rows partitioned by index */
  unsigned long hist[16];     /* private to this worker until join */
};

static unsigned escape_time(double cr, double ci) {
  double zr = 0.0, zi = 0.0;
  unsigned n = 0;
  while (n < MAX_ITER && zr * zr + zi * zi <= 4.0) {
    double t = zr * zr - zi * zi + cr;
    zi = 2.0 * zr * zi + ci;
    zr = t;
    n++;
  }
  return n;
}

static void *render(void *arg) {
  struct worker *w = arg;
  int size = w->size;
  for (int y = w->index; y < size; y += NTHREADS) {
    double ci = -1.25 + 2.5 * (double)y / (double)size;
    unsigned short *row = w->image + (size_t)y * (size_t)size;
    for (int x = 0; x < size; x++) {
      double cr = -2.0 + 2.5 * (double)x / (double)size;
      unsigned n = escape_time(cr, ci);
      row[x] = (unsigned short)n;
      w->hist[n % 16]++;
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  int size = argc > 1 ? atoi(argv[1]) : 2000;
  if (size <= 0) {
    fprintf(stderr, "usage: %s [SIZE>0]\n", argv[0]);
    return 2;
  }
  unsigned short *image = calloc((size_t)size * (size_t)size, sizeof *image);
  struct worker *workers = calloc(NTHREADS, sizeof *workers);
  if (!image || !workers) {
    perror("calloc");
    return 1;
  }
  for (int i = 0; i < NTHREADS; i++) {
    workers[i].index = i;
    workers[i].size = size;
    workers[i].image = image;
    if (pthread_create(&workers[i].thread, NULL, render, &workers[i]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  unsigned long hist[16] = {0};
  for (int i = 0; i < NTHREADS; i++) {
    pthread_join(workers[i].thread, NULL);
    for (int b = 0; b < 16; b++)
      hist[b] += workers[i].hist[b];
  }
  unsigned long long sum = 0;
  for (size_t i = 0; i < (size_t)size * (size_t)size; i++)
    sum = sum * 31 + image[i];
  printf("compute size=%d checksum=%llu hist0=%lu hist15=%lu\n", size, sum, hist[0], hist[15]);
  free(image);
  free(workers);
  return 0;
}
