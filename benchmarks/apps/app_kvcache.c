// APP: in-memory key-value cache server (in the style of memcached): a dispatcher hands client
//      connections to worker threads through per-worker connection queues, workers serve get and
//      set requests on a hash table with striped item locks, a clock thread ticks the server's
//      time and aggregates the statistics
// CATEGORY: server
// EXPECT: race 114 167
// EXPECT: race 120 175
// REORDER: no
// ARGS: -w 4 -c 24 -n 3000 -k 512
//
// The server keeps -c connection objects (struct conn: the request being served, its reply). main
// is the dispatcher: it takes an idle connection from the free list (a stack under `free_lock`,
// waiting on `free_cond` while it is empty), reads the reply of the connection's previous request
// into its digest, writes the next request into the connection and pushes it onto a worker's
// connection queue (round robin; each worker's queue has its own mutex and condition variable, as
// memcached's per-thread `conn_queue`). A worker pops a connection, serves the request outside any
// lock, writes the reply into the connection and pushes it back onto the free list. So a
// connection's fields are touched by main and by every worker in turn, without a lock: each hand-off
// goes through a queue whose head read is an address. Over -n requests that is thousands of
// race-pair candidates per field that only the hand-offs order, the shape of memcached's trace.
//
// Requests are gets and sets of -k keys on a hash table whose buckets are guarded by a table of
// item locks (bucket b by lock b % ITEM_LOCKS, memcached's `item_locks`); a set that adds an item
// counts it in the global `curr_items` under `stats_lock`. Each worker counts its gets, sets and
// hits under its own stats lock; the clock thread ticks `current_time` and adds the workers' counts
// up under each worker's stats lock (memcached's `threadlocal_stats_aggregate`). main prints the
// number of requests, the items in the table and an order-independent digest of their values and
// of the replies (a set replies its key's value, a get the value or 0, and the digest counts only
// sets).
//
// Documented races (as TSan reports on memcached):
//  1. The clock thread writes `current_time` without a lock; workers read it for each item they
//     store (memcached's `current_time`, written by its clock handler).
//  2. The clock thread reads `curr_items` without `stats_lock`, which the workers hold when they
//     write it (memcached's clock handler reading `stats_state.curr_items`).
// Everything else is protected or handed off: the queues and the free list (their mutexes), items
// (their bucket's lock), per-worker counts (the worker's stats lock).
#include <inttypes.h>

#include "app_common.h"

#define MAX_WORKERS 16
#define MAX_CONNS 256
#define ITEM_LOCKS 16
#define BUCKETS 1024

struct conn {
  int op;  // 0: get, 1: set
  uint64_t key;
  uint64_t value;
  uint64_t reply;
};

struct item {
  uint64_t key, value;
  unsigned time;
  struct item *next;
};

struct worker {
  pthread_t thread;
  pthread_mutex_t cq_lock;
  pthread_cond_t cq_cond;
  int cq[MAX_CONNS];
  int head, count, stop;
  pthread_mutex_t stats_lock;
  uint64_t gets, sets, hits;
};

static struct conn *conns;
static struct worker workers[MAX_WORKERS];
static long nworkers = 4, nconns = 24, nrequests = 3000, nkeys = 512, verbose;

static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t free_cond = PTHREAD_COND_INITIALIZER;
static int free_ids[MAX_CONNS];
static int nfree;

static struct item *buckets[BUCKETS];
static pthread_mutex_t item_locks[ITEM_LOCKS];

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static long curr_items;

static unsigned current_time;
static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;
static int clock_stop;
static uint64_t clock_gets, clock_items;

static uint64_t value_of(uint64_t key) { return app_splitmix64(key) | 1; }

// Serves one request: a get gives the key's value or 0, a set stores the key's value.
static uint64_t serve(struct worker *w, const struct conn *c) {
  unsigned b = (unsigned)(app_mix64(c->key) % BUCKETS);
  pthread_mutex_t *lock = &item_locks[b % ITEM_LOCKS];
  uint64_t reply = 0;
  int added = 0, hit = 0;
  pthread_mutex_lock(lock);
  struct item *it = buckets[b];
  while (it && it->key != c->key)
    it = it->next;
  if (c->op == 0) {
    hit = it != NULL;
    reply = it ? it->value : 0;
  } else {
    if (!it) {
      it = malloc(sizeof *it);
      it->key = c->key;
      it->next = buckets[b];
      buckets[b] = it;
      added = 1;
    }
    it->value = c->value;
    it->time = current_time;
    reply = it->value;
  }
  pthread_mutex_unlock(lock);
  if (added) {
    pthread_mutex_lock(&stats_lock);
    curr_items++;
    pthread_mutex_unlock(&stats_lock);
  }
  pthread_mutex_lock(&w->stats_lock);
  if (c->op == 0) {
    w->gets++;
    w->hits += (uint64_t)hit;
  } else {
    w->sets++;
  }
  pthread_mutex_unlock(&w->stats_lock);
  return reply;
}

static void *worker_main(void *arg) {
  struct worker *w = arg;
  for (;;) {
    pthread_mutex_lock(&w->cq_lock);
    while (w->count == 0 && !w->stop)
      pthread_cond_wait(&w->cq_cond, &w->cq_lock);
    if (w->count == 0) {
      pthread_mutex_unlock(&w->cq_lock);
      return NULL;
    }
    int id = w->cq[w->head];
    w->head = (w->head + 1) % MAX_CONNS;
    w->count--;
    pthread_mutex_unlock(&w->cq_lock);

    struct conn *c = &conns[id];
    c->reply = serve(w, c);

    pthread_mutex_lock(&free_lock);
    free_ids[nfree++] = id;
    pthread_cond_signal(&free_cond);
    pthread_mutex_unlock(&free_lock);
  }
}

static void *clock_main(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&clock_lock);
    int stop = clock_stop;
    pthread_mutex_unlock(&clock_lock);
    if (stop)
      return NULL;
    current_time++;
    uint64_t gets = 0;
    for (long i = 0; i < nworkers; i++) {
      pthread_mutex_lock(&workers[i].stats_lock);
      gets += workers[i].gets;
      pthread_mutex_unlock(&workers[i].stats_lock);
    }
    clock_gets = gets;
    clock_items = (uint64_t)curr_items;
    app_sleep_us(300);
  }
}

static void dispatch(struct worker *w, int id) {
  pthread_mutex_lock(&w->cq_lock);
  w->cq[(w->head + w->count) % MAX_CONNS] = id;
  w->count++;
  pthread_cond_signal(&w->cq_cond);
  pthread_mutex_unlock(&w->cq_lock);
}

static const char usage[] =
    "usage: %s [-w WORKERS] [-c CONNS] [-n REQUESTS] [-k KEYS] [-v]\n"
    "  -w  worker threads (1-16, default 4)\n"
    "  -c  connection objects (1-256, default 24)\n"
    "  -n  requests in all (default 3000)\n"
    "  -k  distinct keys (default 512)\n"
    "  -v  also print the hit count and the clock's last figures (vary from run to run)\n";

int main(int argc, char **argv) {
  const struct app_opt opts[] = {
      APP_OPT("-w", nworkers, 1, MAX_WORKERS), APP_OPT("-c", nconns, 1, MAX_CONNS),
      APP_OPT("-n", nrequests, 1, 100000000L), APP_OPT("-k", nkeys, 1, 1000000L),
      APP_SWITCH("-v", verbose),
  };
  if (app_parse_opts(argc, argv, opts, APP_NOPTS(opts), 1) != 0) {
    app_usage(usage, argv[0]);
    return 2;
  }
  conns = calloc((size_t)nconns, sizeof *conns);
  if (!conns) {
    perror("calloc");
    return 1;
  }
  for (int i = 0; i < ITEM_LOCKS; i++)
    pthread_mutex_init(&item_locks[i], NULL);
  for (int i = 0; i < nconns; i++)
    free_ids[nfree++] = i;
  pthread_t clock;
  for (long i = 0; i < nworkers; i++) {
    pthread_mutex_init(&workers[i].cq_lock, NULL);
    pthread_cond_init(&workers[i].cq_cond, NULL);
    pthread_mutex_init(&workers[i].stats_lock, NULL);
    pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
  }
  pthread_create(&clock, NULL, clock_main, NULL);

  // The dispatcher. A connection's `op` is -1 until its first request.
  for (int i = 0; i < nconns; i++)
    conns[i].op = -1;
  uint64_t digest = 0, sets = 0;
  for (long r = 0; r < nrequests; r++) {
    pthread_mutex_lock(&free_lock);
    while (nfree == 0)
      pthread_cond_wait(&free_cond, &free_lock);
    int id = free_ids[--nfree];
    pthread_mutex_unlock(&free_lock);
    struct conn *c = &conns[id];
    if (c->op == 1) {
      digest += c->reply;
      sets++;
    }
    uint64_t key = app_splitmix64((uint64_t)r) % (uint64_t)nkeys;
    c->op = r % 3 == 0 ? 1 : 0;
    c->key = key;
    c->value = value_of(key);
    dispatch(&workers[r % nworkers], id);
  }
  // Wait for every connection to come back, then collect the last replies.
  pthread_mutex_lock(&free_lock);
  while (nfree < nconns)
    pthread_cond_wait(&free_cond, &free_lock);
  pthread_mutex_unlock(&free_lock);
  for (int i = 0; i < nconns; i++) {
    if (conns[i].op == 1) {
      digest += conns[i].reply;
      sets++;
    }
  }
  for (long i = 0; i < nworkers; i++) {
    pthread_mutex_lock(&workers[i].cq_lock);
    workers[i].stop = 1;
    pthread_cond_broadcast(&workers[i].cq_cond);
    pthread_mutex_unlock(&workers[i].cq_lock);
  }
  uint64_t hits = 0;
  for (long i = 0; i < nworkers; i++) {
    pthread_join(workers[i].thread, NULL);
    hits += workers[i].hits;
  }
  pthread_mutex_lock(&clock_lock);
  clock_stop = 1;
  pthread_mutex_unlock(&clock_lock);
  pthread_join(clock, NULL);

  uint64_t items = 0, table = 0;
  for (int b = 0; b < BUCKETS; b++) {
    for (struct item *it = buckets[b]; it;) {
      struct item *next = it->next;
      items++;
      table ^= app_mix64(it->key ^ it->value);
      free(it);
      it = next;
    }
  }
  printf("requests %ld sets %" PRIu64 " items %" PRIu64 " table %016" PRIx64 " replies %016" PRIx64
         "\n",
         nrequests, sets, items, table, digest);
  if (verbose)
    printf("hits %" PRIu64 " clock: gets %" PRIu64 " items %" PRIu64 "\n", hits, clock_gets,
           clock_items);
  free(conns);
  return 0;
}
