// SCENARIO: a print spool guarded by a binary semaphore used as a mutex, and a start semaphore
//           that releases the workers only after main has written the spool configuration
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// Two submitter threads append jobs to a shared spool. The spool has no mutex: it is guarded by
// spool_sem, a semaphore with initial count 1 that every submitter waits on before touching the
// spool and posts afterwards; a binary semaphore excludes like a mutex, and each sem_post
// happens-before the sem_wait that it lets through, so the appends are ordered. The submitters
// also read the spool's configuration (page limit, tray), which main writes after creating them:
// they first wait on start_sem (initial count 0), which main posts once per submitter after
// writing the configuration, so every read comes after the write.
//
// A tool that only knows pthread mutexes sees unprotected, unordered accesses to the spool and
// to its configuration; a happens-before detector that models semaphores sees none. main reads
// the spool after joining both submitters.
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

#define SPOOL_CAP 32
#define JOBS_PER_SUBMITTER 6

struct job {
  int owner;
  int pages;
};

struct spool_config {
  int max_pages;
  int tray;
};

static struct job spool[SPOOL_CAP];
static int spool_len;
static int spool_rejected;
static struct spool_config spool_cfg;
static sem_t spool_sem; // binary: the spool's lock
static sem_t start_sem; // counts the submitters allowed to start

static void spool_submit(int owner, int pages) {
  sem_wait(&spool_sem);
  if (pages <= spool_cfg.max_pages && spool_len < SPOOL_CAP) {
    spool[spool_len].owner = owner;
    spool[spool_len].pages = pages;
    spool_len++;
  } else {
    spool_rejected++;
  }
  sem_post(&spool_sem);
}

static void *submitter(void *arg) {
  int id = *(const int *)arg;
  sem_wait(&start_sem); // the configuration is written before this returns
  for (int i = 0; i < JOBS_PER_SUBMITTER; i++)
    spool_submit(id, 1 + (id * 7 + i * 5) % 12);
  return NULL;
}

int main(void) {
  pthread_t t[2];
  int ids[2] = {1, 2};

  sem_init(&spool_sem, 0, 1);
  sem_init(&start_sem, 0, 0);
  for (int i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, submitter, &ids[i]);
  // Read the printer's limits (after the submitters exist), then let them start.
  spool_cfg.max_pages = 10;
  spool_cfg.tray = 2;
  for (int i = 0; i < 2; i++)
    sem_post(&start_sem);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);

  int pages = 0;
  for (int i = 0; i < spool_len; i++)
    pages += spool[i].pages;
  printf("spooled %d jobs (%d pages) for tray %d, rejected %d\n", spool_len, pages, spool_cfg.tray,
         spool_rejected);
  sem_destroy(&spool_sem);
  sem_destroy(&start_sem);
  return 0;
}
