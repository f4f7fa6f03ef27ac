// SCENARIO: main waits for a batch with `while (finished < WORKERS) pthread_cond_wait` and, at
//           each wakeup, prints the rows done so far from the workers' progress slots, which each
//           worker fills without a lock just before it counts itself finished
// CATEGORY: condvar
// EXPECT: race 48 63
// REORDER: yes
//
// A batch job splits a table among two workers. Each worker takes its slice number under
// batch_lock, sums its rows and stores the row count in its own progress slot, then takes
// batch_lock again to count itself finished and signal main. main waits with the counter loop
// `while (finished < WORKERS)`, and after every wakeup sums the progress slots for a progress
// line, under batch_lock: but the slots are written outside it.
//
// In the natural run both workers start late (sleeps: main waits first), the second after main
// has woken for the first worker and printed: the first worker's slot is ordered before main's
// read by its unlock and main's wake, main's read of the second slot before the second worker's
// write by main's wait (which releases batch_lock) and the second worker's later lock (slice).
// Every read of the progress slots is ordered with every write: the race is hidden. It needs
// the second worker to take its slice before main's first wakeup; the schedule that does so must
// still let main's counter loop read the counts it read in the run (1, then 2), or the replay
// goes another way.
//
// Data: `finished` and `next_slice` are only touched under batch_lock; the table is written
// before the workers start and only read after.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define WORKERS 2
#define ROWS 64

static pthread_mutex_t batch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t batch_cv = PTHREAD_COND_INITIALIZER;
static int next_slice; // under batch_lock
static int finished;   // under batch_lock
static long progress[WORKERS]; // one slot per slice, written without batch_lock
static int table[WORKERS * ROWS];
static long sums[WORKERS];

static void *worker(void *arg) {
  usleep(*(const int *)arg); // the second worker starts late: timing only
  pthread_mutex_lock(&batch_lock);
  int slice = next_slice++;
  pthread_mutex_unlock(&batch_lock);

  for (int r = 0; r < ROWS; r++)
    sums[slice] += table[slice * ROWS + r];
  progress[slice] = ROWS; // RACE: outside batch_lock

  pthread_mutex_lock(&batch_lock);
  finished++;
  pthread_cond_signal(&batch_cv);
  pthread_mutex_unlock(&batch_lock);
  return NULL;
}

static void wait_for_batch(void) {
  pthread_mutex_lock(&batch_lock);
  while (finished < WORKERS) {
    pthread_cond_wait(&batch_cv, &batch_lock);
    long rows = 0;
    for (int i = 0; i < WORKERS; i++)
      rows += progress[i]; // RACE: read under batch_lock, written outside it
    printf("progress: %ld of %d rows\n", rows, WORKERS * ROWS);
  }
  pthread_mutex_unlock(&batch_lock);
}

int main(void) {
  pthread_t th[WORKERS];
  int delay_us[WORKERS] = {30000, 180000}; // main waits before the first worker finishes
  for (int i = 0; i < WORKERS * ROWS; i++)
    table[i] = i % 17;
  for (int i = 0; i < WORKERS; i++)
    pthread_create(&th[i], NULL, worker, &delay_us[i]);
  wait_for_batch();
  for (int i = 0; i < WORKERS; i++)
    pthread_join(th[i], NULL);
  printf("sums %ld %ld\n", sums[0], sums[1]);
  return 0;
}
