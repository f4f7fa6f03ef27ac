// SCENARIO: a print spooler limits jobs in flight with a semaphore initialised to 2 and keeps
//           its page tally inside the "critical section" it believes the semaphore guards; two
//           jobs can hold a slot at once and race on the tally
// CATEGORY: semaphore
// EXPECT: race 38 38
// REORDER: yes
//
// The spooler once had one printer and a binary semaphore around each job, so the page tally
// updated inside the job needed no lock of its own. A second printer was added by raising the
// semaphore's initial count to 2: now two jobs are inside at once, and both add to the tally.
//
// In the recorded run the second job is submitted long after the first finished (a sleep), so
// the jobs never overlap and the first job's post orders the second's wait: the race is hidden,
// and the observed order alone would do with a count of 1. Only the recorded initial count
// (sem_init's 2) tells the analysis that the second job need not wait for the first's post.
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <unistd.h>

#define PRINTERS 2

static sem_t printers;
static long pages_printed; // the tally both jobs update

struct job {
  const char *name;
  int pages;
  int submit_delay_us;
};

static void *print_job(void *arg) {
  const struct job *j = arg;
  usleep(j->submit_delay_us);
  sem_wait(&printers); // a printer is free
  for (int p = 0; p < j->pages; p++)
    usleep(100); // the page goes out
  pages_printed += j->pages;
  sem_post(&printers);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  struct job jobs[2] = {{"report", 5, 0}, {"invoice", 3, 100000}};

  sem_init(&printers, 0, PRINTERS);
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, print_job, &jobs[i]);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  printf("%ld pages printed\n", pages_printed);
  sem_destroy(&printers);
  return 0;
}
