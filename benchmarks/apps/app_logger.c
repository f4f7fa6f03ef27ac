// APP: tracing library (in the style of ctrace) used by a small multi-threaded request server:
//      per-thread ring buffers of trace records, a global registry of traced threads under a
//      lock, log levels, a flusher thread that drains the rings into an in-memory trace file;
//      main plays the operator and changes the trace level while the workers run
// EXPECT: race 139 145
// EXPECT: race 258 258
// EXPECT: race 258 284
// REORDER: no
// ARGS: -w 4 -n 2400 -W 6000
//
// The library (the trc_* functions) keeps one struct trc_thread per registered thread, with a
// ring of RING_SIZE records guarded by the ring's own mutex. trc_log() formats a record, appends
// it to the calling thread's ring, and when the ring reaches its high-water mark asks the flusher
// for a flush (under the registry lock, with a condition variable); when the ring is full the
// logging thread waits on the ring's `space` condition until the flusher has drained it. The
// flusher waits for requests, walks the registry (registry lock held, then each ring's lock),
// moves every record into the trace file, counts the records per level and adds their digests.
// Threads register when they start and unregister when they end; unregistering drains the
// thread's ring. The trace file's summary (records per level, an order-independent digest) is
// checked by main against what the workers logged.
//
// The server part: each worker handles `-n` synthetic requests (parses a request line, computes a
// response body digest with `-W` rounds of work, decides a status) and logs every request at
// INFO, slow or odd requests at WARN, failures at ERROR, and details at DEBUG. main starts the
// workers and the flusher, then raises the trace level to DEBUG for a while and lowers it back to
// INFO, as an operator would while chasing a problem, then joins everyone. DEBUG records depend
// on when the level changed, so only the levels up to INFO are printed (DEBUG counts with -v).
//
// Documented races:
//  1. The trace level `g_trc.level` is written by trc_set_level under the registry lock but read
//     by trc_enabled without any lock (every trc_log call does, "a lock per log call is too
//     expensive"): race between main's level changes and the workers' checks.
//  2. The statistic `g_trc.records_total` is incremented by trc_log after the ring's lock is
//     released, with no lock ("statistics may be approximate"): the loggers race with each other
//     on it, and with the flusher, which reads it (under the registry lock only) for the header
//     of every flush it writes.
// Everything else is protected: the rings (ring lock), the registry, flush requests, the trace
// file and its counters (registry lock); a thread's own counters are its own until main joins it.
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdarg.h>

#include "app_common.h"

// ---------------------------------------------------------------------------------------------
// The tracing library: interface

enum trc_level { TRC_FATAL, TRC_ERROR, TRC_WARN, TRC_INFO, TRC_DEBUG, TRC_TRACE, TRC_NLEVELS };

static const char *const trc_level_names[TRC_NLEVELS] = {"FATAL", "ERROR", "WARN",
                                                         "INFO",  "DEBUG", "TRACE"};

#define TRC_MAX_THREADS 16
#define RING_SIZE 128
#define HIGH_WATER 96
#define MSG_MAX 104
#define TRACE_FILE_MAX (8u << 20)

struct trc_record {
  uint64_t seq;    // per thread
  uint32_t owner;  // the thread's user-given id
  uint8_t level;
  uint8_t len;
  char msg[MSG_MAX];
};

struct trc_ring {
  pthread_mutex_t lock;
  pthread_cond_t space;  // signalled by the flusher when it drained the ring
  unsigned head, tail, count;
  int flush_requested;  // a request is outstanding for this ring
  long full_waits;
  struct trc_record rec[RING_SIZE];
};

struct trc_thread {
  int in_use;
  uint32_t owner;
  char name[24];
  uint64_t next_seq;
  long emitted[TRC_NLEVELS];  // the thread's own counters (read by main after the join)
  long filtered;
  long flush_requests;
  struct trc_ring ring;
};

struct trace_file {
  char *data;
  size_t len;
  long records[TRC_NLEVELS];
  uint64_t digest[TRC_NLEVELS];  // sum of record digests, per level
  long flushes;
  long truncated;  // records that did not fit
};

struct tracer {
  pthread_mutex_t reg_lock;  // registry, flush requests, trace file
  pthread_cond_t flush_cv;
  struct trc_thread *threads[TRC_MAX_THREADS];
  int nthreads;
  int pending_flushes;
  int shutdown;
  int level;             // RACE: written under reg_lock, read without it (trc_enabled)
  long records_total;    // RACE: incremented without a lock (trc_log)
  long level_changes;
  struct trace_file file;
};

static struct tracer g_trc;
static struct trc_thread g_slots[TRC_MAX_THREADS];  // the pool trc_register allocates from

// ---------------------------------------------------------------------------------------------
// The tracing library: implementation

// Digest of a record's owner, level and text: not of its sequence number, which counts the DEBUG
// records before it too and so depends on when the level changed.
static uint64_t record_digest(const struct trc_record *r) {
  uint64_t h = 0xcbf29ce484222325ULL ^ ((uint64_t)r->owner << 40) ^ ((uint64_t)r->level << 56);
  for (unsigned i = 0; i < r->len; i++) {
    h ^= (uint8_t)r->msg[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

static int trc_init(enum trc_level level) {
  memset(&g_trc, 0, sizeof g_trc);
  pthread_mutex_init(&g_trc.reg_lock, NULL);
  pthread_cond_init(&g_trc.flush_cv, NULL);
  g_trc.file.data = malloc(TRACE_FILE_MAX);
  if (!g_trc.file.data)
    return -1;
  g_trc.level = level;
  return 0;
}

static void trc_set_level(enum trc_level level) {
  pthread_mutex_lock(&g_trc.reg_lock);
  g_trc.level = level;  // RACE (write, under reg_lock): trc_enabled reads it without the lock
  g_trc.level_changes++;
  pthread_mutex_unlock(&g_trc.reg_lock);
}

static inline int trc_enabled(enum trc_level level) {
  return (int)level <= g_trc.level;  // RACE (read, no lock): written in trc_set_level
}

// Appends one record to the trace file. Caller holds reg_lock.
static void file_append_locked(const struct trc_record *r, const char *thread_name) {
  struct trace_file *f = &g_trc.file;
  f->records[r->level]++;
  f->digest[r->level] += record_digest(r);
  if (f->len + 160 > TRACE_FILE_MAX) {
    f->truncated++;
    return;
  }
  int n = snprintf(f->data + f->len, TRACE_FILE_MAX - f->len, "%-5s %-10s #%06" PRIu64 " %.*s\n",
                   trc_level_names[r->level], thread_name, r->seq, (int)r->len, r->msg);
  if (n > 0)
    f->len += (size_t)n;
}

// Moves every record of one ring into the trace file. Caller holds reg_lock.
static long drain_ring_locked(struct trc_thread *t) {
  struct trc_ring *r = &t->ring;
  long moved = 0;
  pthread_mutex_lock(&r->lock);
  while (r->count > 0) {
    file_append_locked(&r->rec[r->head], t->name);
    r->head = (r->head + 1) % RING_SIZE;
    r->count--;
    moved++;
  }
  r->flush_requested = 0;
  pthread_cond_broadcast(&r->space);
  pthread_mutex_unlock(&r->lock);
  return moved;
}

static struct trc_thread *trc_register(uint32_t owner, const char *name) {
  pthread_mutex_lock(&g_trc.reg_lock);
  struct trc_thread *t = NULL;
  for (int i = 0; i < TRC_MAX_THREADS; i++)
    if (!g_slots[i].in_use) {
      t = &g_slots[i];
      break;
    }
  if (t && g_trc.nthreads < TRC_MAX_THREADS) {
    memset(t, 0, sizeof *t);
    t->in_use = 1;
    t->owner = owner;
    snprintf(t->name, sizeof t->name, "%s", name);
    pthread_mutex_init(&t->ring.lock, NULL);
    pthread_cond_init(&t->ring.space, NULL);
    g_trc.threads[g_trc.nthreads++] = t;
  } else {
    t = NULL;
  }
  pthread_mutex_unlock(&g_trc.reg_lock);
  return t;
}

// Drains the thread's ring and removes it from the registry. The slot keeps the thread's
// counters for whoever wants them after the thread ended (main, after the join).
static void trc_unregister(struct trc_thread *t) {
  pthread_mutex_lock(&g_trc.reg_lock);
  drain_ring_locked(t);
  for (int i = 0; i < g_trc.nthreads; i++)
    if (g_trc.threads[i] == t) {
      g_trc.threads[i] = g_trc.threads[--g_trc.nthreads];
      break;
    }
  pthread_mutex_unlock(&g_trc.reg_lock);
}

static void trc_request_flush(struct trc_thread *t) {
  pthread_mutex_lock(&g_trc.reg_lock);
  g_trc.pending_flushes++;
  pthread_cond_signal(&g_trc.flush_cv);
  pthread_mutex_unlock(&g_trc.reg_lock);
  t->flush_requests++;
}

__attribute__((format(printf, 3, 4))) static void trc_log(struct trc_thread *t,
                                                           enum trc_level level, const char *fmt,
                                                           ...) {
  if (!trc_enabled(level)) {
    t->filtered++;
    return;
  }
  struct trc_record rec;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(rec.msg, sizeof rec.msg, fmt, ap);
  va_end(ap);
  if (n < 0)
    n = 0;
  rec.len = (uint8_t)(n < MSG_MAX ? n : MSG_MAX - 1);
  rec.level = (uint8_t)level;
  rec.owner = t->owner;
  rec.seq = t->next_seq++;

  struct trc_ring *r = &t->ring;
  pthread_mutex_lock(&r->lock);
  while (r->count == RING_SIZE) {  // full: the flush was requested at the high-water mark
    r->full_waits++;
    pthread_cond_wait(&r->space, &r->lock);
  }
  r->rec[r->tail] = rec;
  r->tail = (r->tail + 1) % RING_SIZE;
  r->count++;
  int request = r->count >= HIGH_WATER && !r->flush_requested;
  if (request)
    r->flush_requested = 1;
  pthread_mutex_unlock(&r->lock);
  if (request)
    trc_request_flush(t);
  g_trc.records_total++;  // RACE (no lock): loggers race here, the flusher reads it
  t->emitted[level]++;
}

struct flusher {
  pthread_t thread;
  long flushes;
  long records_moved;
};

static void *flusher_main(void *arg) {
  struct flusher *fl = arg;
  pthread_mutex_lock(&g_trc.reg_lock);
  for (;;) {
    while (g_trc.pending_flushes == 0 && !g_trc.shutdown)
      pthread_cond_wait(&g_trc.flush_cv, &g_trc.reg_lock);
    if (g_trc.pending_flushes == 0 && g_trc.shutdown)
      break;
    g_trc.pending_flushes = 0;
    long moved = 0;
    for (int i = 0; i < g_trc.nthreads; i++)
      moved += drain_ring_locked(g_trc.threads[i]);
    fl->flushes++;
    fl->records_moved += moved;
    struct trace_file *f = &g_trc.file;
    if (f->len + 80 <= TRACE_FILE_MAX) {
      long seen = g_trc.records_total;  // RACE (read, reg_lock only): loggers increment it unlocked
      int n = snprintf(f->data + f->len, TRACE_FILE_MAX - f->len,
                       "----- flush %ld: %ld records, about %ld logged so far\n", fl->flushes,
                       moved, seen);
      if (n > 0)
        f->len += (size_t)n;
    }
    f->flushes++;
  }
  pthread_mutex_unlock(&g_trc.reg_lock);
  return NULL;
}

static void trc_shutdown(void) {
  pthread_mutex_lock(&g_trc.reg_lock);
  g_trc.shutdown = 1;
  pthread_cond_signal(&g_trc.flush_cv);
  pthread_mutex_unlock(&g_trc.reg_lock);
}

// ---------------------------------------------------------------------------------------------
// The application: a request handler that logs through the library

static const char *const paths[] = {"/",         "/index.html", "/api/users", "/api/orders",
                                    "/static/app.js", "/static/app.css", "/login", "/logout",
                                    "/api/search", "/health",   "/metrics",   "/favicon.ico"};
#define NPATHS (sizeof paths / sizeof paths[0])

struct request {
  const char *method;
  const char *path;
  unsigned id;
  unsigned body_len;
};

struct worker {
  pthread_t thread;
  uint32_t id;
  long requests;
  long work_rounds;
  struct trc_thread *trc;
  // results, deterministic per worker
  long status_count[6];  // 2xx, 3xx, 4xx, 5xx, other, -
  uint64_t body_digest;
  long expected[TRC_NLEVELS];  // records this worker must have produced at levels <= INFO
};

static struct request make_request(uint32_t worker, long i) {
  uint64_t h = app_mix64(((uint64_t)worker << 32) ^ (uint64_t)i);
  struct request rq;
  rq.method = (h & 7) == 0 ? "POST" : (h & 7) == 1 ? "PUT" : "GET";
  rq.path = paths[(h >> 8) % NPATHS];
  rq.id = (unsigned)(worker * 100000 + i);
  rq.body_len = (unsigned)((h >> 20) % 9000);
  return rq;
}

// The work of producing a response: a digest of a synthetic body, `rounds` passes over it.
static uint64_t render_body(const struct request *rq, long rounds) {
  uint64_t path_hash = 0x100000001b3ULL;
  for (const char *p = rq->path; *p; p++)
    path_hash = (path_hash ^ (unsigned char)*p) * 0x100000001b3ULL;
  uint64_t acc = 0x243f6a8885a308d3ULL ^ rq->id ^ path_hash;
  for (long k = 0; k < rounds; k++)
    acc = app_mix64(acc + (uint64_t)k * rq->body_len) ^ (path_hash >> (k & 31));
  return acc;
}

static int status_of(const struct request *rq, uint64_t digest) {
  if (strcmp(rq->path, "/logout") == 0)
    return 302;
  if (digest % 53 == 0)
    return 500;
  if (digest % 11 == 0)
    return 404;
  if (rq->method[0] == 'P' && digest % 5 == 0)
    return 201;
  return 200;
}

// The levels whose records the worker's log calls produce no matter when the level changes
// (everything up to INFO) are counted here as well, to check the trace file against.
static void expect_record(struct worker *w, enum trc_level level) {
  if (level <= TRC_INFO)
    w->expected[level]++;
}

static void *worker_main(void *arg) {
  struct worker *w = arg;
  char name[24];
  snprintf(name, sizeof name, "worker-%u", w->id);
  w->trc = trc_register(w->id, name);
  if (!w->trc)
    return NULL;
  trc_log(w->trc, TRC_INFO, "%s started, %ld requests to serve", name, w->requests);
  expect_record(w, TRC_INFO);
  for (long i = 0; i < w->requests; i++) {
    struct request rq = make_request(w->id, i);
    trc_log(w->trc, TRC_DEBUG, "req %u: %s %s body=%u", rq.id, rq.method, rq.path, rq.body_len);
    uint64_t digest = render_body(&rq, w->work_rounds);
    int status = status_of(&rq, digest);
    w->body_digest += digest;
    w->status_count[status / 100 - 2]++;
    if (trc_enabled(TRC_DEBUG))
      trc_log(w->trc, TRC_DEBUG, "req %u: digest %016" PRIx64, rq.id, digest);
    trc_log(w->trc, TRC_INFO, "%s %s -> %d (%u bytes)", rq.method, rq.path, status, rq.body_len);
    expect_record(w, TRC_INFO);
    if (rq.body_len > 8000) {
      trc_log(w->trc, TRC_WARN, "req %u: large body %u bytes", rq.id, rq.body_len);
      expect_record(w, TRC_WARN);
    }
    if (status >= 500) {
      trc_log(w->trc, TRC_ERROR, "req %u: internal error rendering %s", rq.id, rq.path);
      expect_record(w, TRC_ERROR);
    }
    trc_log(w->trc, TRC_TRACE, "req %u done", rq.id);
  }
  trc_log(w->trc, TRC_INFO, "%s finished", name);
  expect_record(w, TRC_INFO);
  trc_unregister(w->trc);
  return NULL;
}

// ---------------------------------------------------------------------------------------------
// main

struct config {
  long workers;
  long requests;
  long work;
  long debug_after_us, debug_for_us;
  long verbose;
};

static const char usage[] =
    "usage: %s [-w workers] [-n requests-per-worker] [-W work-rounds] [-d debug-after-us]\n"
    "          [-D debug-for-us] [-v]\n";

static int parse_args(int argc, char **argv, struct config *cfg) {
  *cfg = (struct config){
      .workers = 4, .requests = 2400, .work = 6000, .debug_after_us = 20000, .debug_for_us = 30000};
  const struct app_opt opts[] = {
      APP_OPT("-w", cfg->workers, 1, TRC_MAX_THREADS - 2),
      APP_OPT("-n", cfg->requests, 1, 10000000),
      APP_OPT("-W", cfg->work, 1, 10000000),
      APP_OPT("-d", cfg->debug_after_us, 0, 10000000),
      APP_OPT("-D", cfg->debug_for_us, 0, 10000000),
      APP_SWITCH("-v", cfg->verbose),
  };
  return app_parse_opts(argc, argv, opts, APP_NOPTS(opts), 0);
}

int main(int argc, char **argv) {
  struct config cfg;
  if (parse_args(argc, argv, &cfg) != 0) {
    app_usage(usage, argv[0]);
    return 2;
  }
  if (trc_init(TRC_INFO) != 0) {
    perror("trc_init");
    return 1;
  }
  struct flusher fl = {0};
  int rc = pthread_create(&fl.thread, NULL, flusher_main, &fl);
  if (rc) {
    fprintf(stderr, "pthread_create: %s\n", strerror(rc));
    return 1;
  }
  struct worker *ws = calloc((size_t)cfg.workers, sizeof *ws);
  if (!ws) {
    perror("calloc");
    return 1;
  }
  for (int i = 0; i < cfg.workers; i++) {
    ws[i].id = (uint32_t)i;
    ws[i].requests = cfg.requests;
    ws[i].work_rounds = cfg.work;
    rc = pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]);
    if (rc) {
      fprintf(stderr, "pthread_create: %s\n", strerror(rc));
      return 1;
    }
  }

  // The operator: more detail for a while, then back to normal.
  app_sleep_us(cfg.debug_after_us);
  trc_set_level(TRC_DEBUG);
  app_sleep_us(cfg.debug_for_us);
  trc_set_level(TRC_INFO);

  for (int i = 0; i < cfg.workers; i++)
    pthread_join(ws[i].thread, NULL);
  trc_shutdown();
  pthread_join(fl.thread, NULL);

  // After the joins: the trace file must hold exactly what the workers logged (up to INFO).
  struct trace_file *f = &g_trc.file;
  long expected[TRC_NLEVELS] = {0}, emitted[TRC_NLEVELS] = {0}, filtered = 0;
  long status[6] = {0}, requests = 0, flush_requests = 0, full_waits = 0;
  uint64_t bodies = 0;
  for (int i = 0; i < cfg.workers; i++) {
    for (int l = 0; l < TRC_NLEVELS; l++) {
      expected[l] += ws[i].expected[l];
      if (ws[i].trc)
        emitted[l] += ws[i].trc->emitted[l];
    }
    for (int s = 0; s < 6; s++)
      status[s] += ws[i].status_count[s];
    bodies += ws[i].body_digest;
    requests += ws[i].requests;
    if (ws[i].trc) {
      filtered += ws[i].trc->filtered;
      flush_requests += ws[i].trc->flush_requests;
      full_waits += ws[i].trc->ring.full_waits;
    }
  }
  int ok = g_trc.nthreads == 0 && f->truncated == 0;
  long in_file = 0, emitted_all = 0;
  for (int l = 0; l < TRC_NLEVELS; l++) {
    in_file += f->records[l];
    emitted_all += emitted[l];
    if (l <= TRC_INFO)
      ok &= f->records[l] == expected[l] && emitted[l] == expected[l];
  }
  ok &= in_file == emitted_all;

  printf("logger: %ld workers x %ld requests, %ld work rounds each\n", cfg.workers, cfg.requests,
         cfg.work);
  printf("responses: %ld requests: %ld 2xx, %ld 3xx, %ld 4xx, %ld 5xx; body digest %016" PRIx64
         "\n", requests, status[0], status[1], status[2], status[3], bodies);
  for (int l = TRC_FATAL; l <= TRC_INFO; l++) {
    uint64_t d = f->digest[l];
    printf("trace %-5s: %6ld records, digest %016" PRIx64 " (%s)\n", trc_level_names[l],
           f->records[l], d, f->records[l] == expected[l] ? "as logged" : "MISMATCH");
  }
  printf("trace file: every record flushed: %s\n", in_file == emitted_all ? "yes" : "NO");
  if (cfg.verbose)
    fprintf(stderr,
            "%ld DEBUG records, %ld filtered calls, %ld flushes (%ld records moved by the "
            "flusher), %ld flush requests, %ld waits on a full ring, %zu bytes of trace, "
            "records_total %ld of %ld, %ld level changes\n",
            f->records[TRC_DEBUG], filtered, fl.flushes, fl.records_moved, flush_requests,
            full_waits, f->len, g_trc.records_total, in_file, g_trc.level_changes);
  printf("%s\n", ok ? "OK" : "FAILED");
  free(ws);
  free(f->data);
  return ok ? 0 : 1;
}
