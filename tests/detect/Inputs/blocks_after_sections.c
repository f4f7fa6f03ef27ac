// Main reads BLOCKS heap blocks after its SECTIONS critical sections while a worker writes them
// after its own: one race per block, each candidate's schedule running through both threads'
// sections. The two memory-cap tests of tests/detect build it with their own sizes.
#include <pthread.h>
#include <stdlib.h>


static int *blocks[BLOCKS];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long sections_done;

static void sections(void) {
  for (int i = 0; i < SECTIONS; i++) {
    pthread_mutex_lock(&m);
    sections_done++;
    pthread_mutex_unlock(&m);
  }
}

static void *worker(void *arg) {
  sections();
  for (int i = 0; i < BLOCKS; i++)
    *blocks[i] = i;
  return arg;
}

int main(void) {
  for (int i = 0; i < BLOCKS; i++)
    blocks[i] = calloc(1, sizeof(int));
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  sections();
  long sum = 0;
  for (int i = 0; i < BLOCKS; i++)
    sum += *blocks[i];
  pthread_join(t, NULL);
  for (int i = 0; i < BLOCKS; i++)
    free(blocks[i]);
  return sum < 0;
}
