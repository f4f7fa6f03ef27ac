// SCENARIO: two workers hash 10000 records each, adding every hash to a shared histogram under a
//           mutex (10000 critical sections each), and count each record as started without it
// CATEGORY: loop
// EXPECT: race 52 52
// REORDER: yes
//
// A long loop with one racy pair of source lines among tens of thousands of sync operations. Each
// worker first claims its range of input records from a shared cursor under hist_lock. Then,
// for each record, it bumps `records_started`, a progress counter for the status line, without
// any lock ("it is only a progress display"), hashes the record, and adds it to the shared
// histogram under hist_lock. The histogram is race-free; the progress counter is not.
//
// In the natural run the second worker starts late (it loads its input first, a sleep): by the
// time it claims its range, the first worker has finished all 10000 iterations. Every increment
// of the first worker comes before one of its own critical sections, the last of which is
// released before the second worker's claim acquires the lock, so all of them happen-before all
// of the second worker's increments and a happens-before detector sees nothing. If the second
// worker claims its range before the first worker's last critical section, the first worker's
// last increment and the second worker's increments are unordered: updates can be lost. Finding
// it means moving one critical section of the second worker in front of the last of the first
// worker's 10000 (the trace holds 40000 lock and unlock operations and 20000 segments per
// worker, each touching records_started). main prints the histogram after joining both workers;
// the progress count may have lost updates, so it only goes to stderr.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define RECORDS 10000
#define BUCKETS 16

static long hist[BUCKETS];
static unsigned next_record; // the input cursor, under hist_lock
static long records_started; // progress for the status line: updated without the lock
static pthread_mutex_t hist_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned hash_record(unsigned key) {
  unsigned h = key * 2654435761u;
  h ^= h >> 15;
  return h * 2246822519u;
}

static void *worker(void *arg) {
  int load_us = *(const int *)arg;
  usleep(load_us); // read the input file

  pthread_mutex_lock(&hist_lock); // claim a range of records
  unsigned base = next_record;
  next_record += RECORDS;
  pthread_mutex_unlock(&hist_lock);

  for (unsigned i = 0; i < RECORDS; i++) {
    records_started++; // the racy progress update
    unsigned h = hash_record(base + i);
    pthread_mutex_lock(&hist_lock);
    hist[h % BUCKETS]++;
    pthread_mutex_unlock(&hist_lock);
  }
  return NULL;
}

int main(void) {
  pthread_t t[2];
  int load_us[2] = {0, 150000}; // the second input file is on a slow disk

  for (int i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, worker, &load_us[i]);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);

  long total = 0, max = 0;
  for (int b = 0; b < BUCKETS; b++) {
    total += hist[b];
    if (hist[b] > max)
      max = hist[b];
  }
  printf("hashed %ld records into %d buckets, fullest bucket %ld\n", total, BUCKETS, max);
  fprintf(stderr, "progress counter: %ld of %d\n", records_started, 2 * RECORDS);
  return 0;
}
