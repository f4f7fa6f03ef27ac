// SCENARIO: a status reporter is forked before main loads the configuration; its read of the
//           verbosity is ordered after the load only through a worker forked after the load and
//           the worker's registration lock, an order the natural run happens to take
// CATEGORY: fork-join
// EXPECT: race 38 59
// REORDER: yes
//
// main starts the status reporter first thing ("so that start-up problems get reported too"),
// then loads the configuration into `cfg` without a lock, forks a worker, joins it and joins the
// reporter. The worker, forked after the load, reads cfg freely (the fork orders it) and
// registers itself under registry_lock. The reporter wakes up after a while, reads the number of
// registered workers under registry_lock and then reads cfg.verbosity, unlocked, to decide how
// much to print.
//
// Nothing orders main's store of cfg.verbosity with the reporter's read except a chain that goes
// through the other thread: main's store -> fork(worker) -> worker's unlock(registry_lock) ->
// reporter's lock(registry_lock). In the natural run the reporter sleeps long enough that the
// worker has registered (and main has usually joined it) before it looks, so the chain exists
// and a happens-before detector sees nothing. If the reporter's critical section comes before
// the worker's, for instance because the reporter wakes before the worker is even forked, the
// reporter reads cfg.verbosity while main may be storing it. The worker's reads of cfg come
// after the fork that follows the load; its result is read by main after the join.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct config {
  int verbosity;
  int batch;
};

static struct config cfg;                 // written by main, unlocked
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static int registered;                    // under registry_lock

static void load_config(int argc) {
  cfg.batch = 16 * argc;
  cfg.verbosity = argc > 1 ? 3 : 1; // RACE with the reporter's read
}

static void *worker(void *arg) {
  long *result = arg;
  pthread_mutex_lock(&registry_lock);
  registered++;
  pthread_mutex_unlock(&registry_lock);
  long acc = 0;
  for (int i = 0; i < cfg.batch; i++) // ordered: the fork comes after load_config
    acc += (long)i * cfg.verbosity;
  result[0] = acc;
  return NULL;
}

static void *reporter(void *arg) {
  int *lines = arg;
  usleep(40000); // report once start-up has settled
  pthread_mutex_lock(&registry_lock);
  int n = registered;
  pthread_mutex_unlock(&registry_lock);
  int v = cfg.verbosity; // RACE with main's store in load_config
  lines[0] = v >= 2 ? n + 1 : 1;
  return NULL;
}

int main(int argc, char **argv) {
  (void)argv;
  pthread_t tr, tw;
  int report_lines = 0;
  long result = 0;

  if (pthread_create(&tr, NULL, reporter, &report_lines) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  load_config(argc);
  if (pthread_create(&tw, NULL, worker, &result) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  pthread_join(tw, NULL);
  pthread_join(tr, NULL);
  printf("result %ld, reporter printed %d line(s), %d worker(s)\n", result, report_lines,
         registered);
  return 0;
}
