// APP: parallel segmented downloader (in the style of aget): N worker threads each fetch one byte
//      range of a file from a simulated server in chunks, with simulated latency and transient
//      errors, write them at their offsets, and checkpoint a resume table; a reporter thread
//      shows progress and snapshots the resume table; main verifies the file at the end
// EXPECT: race 316 199
// EXPECT: race 242 242
// REORDER: yes
// ARGS: -n 4 -s 1536 -c 8 -l 4000
//
// The "server" is in memory: main generates the file's content (-s KiB) from a seed and its
// CRC-32 before any thread runs. A request to the server takes a connection (counted under the
// server's lock), waits a latency that depends on the requested offset (-l microseconds on
// average), fails on the first attempt for some offsets (a transient error: the worker retries),
// and otherwise copies the requested bytes into the worker's receive buffer. As with a real
// resumed download, a previous session is simulated: the first part of every segment is already
// on disk (main copies it into the output buffer and records it in the resume table), and each
// worker verifies that part against the resume record's checksum before fetching the rest.
//
// Every worker owns one contiguous segment of the file (the segments tile the file) and fetches
// it chunk by chunk (-c KiB): it checks the chunk's length and a checksum, writes the chunk to
// the output buffer at its offset (the pwrite of a real downloader; segments are disjoint),
// checkpoints its offset in the resume table under the resume lock, and adds the bytes to the
// global progress (under the progress lock). The reporter wakes up every few milliseconds,
// computes the percentage and the rate, and writes a snapshot of the resume table (under the
// resume lock) that a restarted download would start from; it stops when every worker is done.
//
// Documented races (both on statistics; the downloaded file is always right):
//  1. The reporter reads the global byte count `g_progress.bytes_done` without the progress lock
//     ("it is only for the progress bar"), while the workers add to it under the lock in
//     progress_add (as aget's updateProgressBar reads bwritten): read/write race between the
//     reporter's read and the workers' update. Visible in a natural run.
//  2. The retry counter `g_stats.retries` is incremented without any lock in the retry path of
//     fetch_chunk: two workers retrying race on it (a lost update would only make the statistics
//     wrong). Between two retries of different workers there are normally several lock hand-offs
//     (progress, resume table, server), so the race usually needs the critical sections
//     reordered to show up.
// Everything else is protected or ordered: the progress fields other than that one read, the
// server's connection counters, the resume table (including the reporter's snapshots), the
// number of finished workers; the file content is written before the threads are created; the
// output buffer's segments are disjoint and read by main after the joins.
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>

#include "app_common.h"

#define MAX_WORKERS 8
#define MAX_SNAPSHOTS 4096

// ---------------------------------------------------------------------------------------------
// Checksums

// CRC-32 (IEEE), bitwise: no table, so no memory traffic besides the data itself.
static uint32_t crc32(const uint8_t *p, size_t n) {
  return app_crc32_reflected(0, p, n, 0xedb88320u);
}

// A cheap per-chunk integrity check over 64-bit words (the "Content-MD5" of a chunk, much
// simplified): the server computes it over what it sends, the worker over what it received.
static uint64_t chunk_sum(const uint8_t *p, size_t n) {
  uint64_t a = 0x6a09e667f3bcc908ULL, b = 0;
  size_t words = n / 8;
  for (size_t i = 0; i < words; i++) {
    uint64_t w;
    memcpy(&w, p + 8 * i, 8);
    a += w;
    b += a;
  }
  for (size_t i = words * 8; i < n; i++) {
    a += p[i];
    b += a;
  }
  return a ^ (b * 0x9e3779b97f4a7c15ULL);
}

static uint64_t hash64(uint64_t x) {
  return app_mix64_with(x, 31, 0x7fb5d329728ea185ULL, 27, 0x81dadef4bc2dd44dULL, 33);
}

// ---------------------------------------------------------------------------------------------
// The simulated server

struct server {
  const uint8_t *content;  // written by main before any thread exists, read-only afterwards
  size_t size;
  uint32_t crc;
  long latency_us;  // average latency of one request
  pthread_mutex_t lock;
  int connections;      // open right now
  int max_connections;  // most ever open at once
  long requests;
  long transient_errors;
};

enum fetch_status { FETCH_OK = 0, FETCH_AGAIN = -1, FETCH_RANGE = -2 };

struct response {
  size_t length;
  uint64_t sum;  // chunk_sum of the bytes sent
};

static void server_connect(struct server *s) {
  pthread_mutex_lock(&s->lock);
  s->connections++;
  if (s->connections > s->max_connections)
    s->max_connections = s->connections;
  s->requests++;
  pthread_mutex_unlock(&s->lock);
}

static void server_disconnect(struct server *s, int failed) {
  pthread_mutex_lock(&s->lock);
  s->connections--;
  if (failed)
    s->transient_errors++;
  pthread_mutex_unlock(&s->lock);
}

// Whether the first attempt at this offset fails (a dropped connection, a 503): a fixed
// function of the offset, so that every run sees the same errors.
static int transient_failure(size_t offset, int attempt) {
  return attempt == 0 && hash64(offset ^ 0xfeedULL) % 11 == 0;
}

// A ranged GET: copies up to `len` bytes from `offset` into `dst`.
static enum fetch_status server_get(struct server *s, size_t offset, size_t len, uint8_t *dst,
                                    int attempt, struct response *resp) {
  if (offset >= s->size)
    return FETCH_RANGE;
  server_connect(s);
  // latency between 1/2 and 3/2 of the average, depending on the offset
  long lat = s->latency_us / 2 + (long)(hash64(offset) % (uint64_t)(s->latency_us + 1));
  app_sleep_us(lat);
  if (transient_failure(offset, attempt)) {
    server_disconnect(s, 1);
    return FETCH_AGAIN;
  }
  if (offset + len > s->size)
    len = s->size - offset;
  memcpy(dst, s->content + offset, len);
  resp->length = len;
  resp->sum = chunk_sum(s->content + offset, len);
  server_disconnect(s, 0);
  return FETCH_OK;
}

// ---------------------------------------------------------------------------------------------
// Download state: segments and resume table, progress, statistics

enum seg_state { SEG_PENDING, SEG_VERIFYING, SEG_FETCHING, SEG_DONE, SEG_FAILED };

struct segment {
  int id;
  size_t start, end;   // [start, end) of the file
  size_t offset;       // next byte to fetch; checkpointed under the resume lock
  size_t resumed;      // bytes already present from the previous session
  uint32_t resume_crc; // CRC-32 of [start, start + resumed) recorded by the previous session
  enum seg_state state;
  long chunks;
};

struct resume_table {
  pthread_mutex_t lock;
  struct segment seg[MAX_WORKERS];
  int nseg;
  long checkpoints;
};

// What the reporter writes out: the resume table at one moment.
struct snapshot {
  double when;
  size_t offset[MAX_WORKERS];
  int done;
};

struct progress {
  pthread_mutex_t lock;
  size_t total;       // file size, set before the threads start
  size_t bytes_done;  // RACE: updated under the lock, read without it by the reporter
  long chunks_done;
  int workers_done;
};

struct stats {
  long retries;  // RACE: incremented without a lock by the workers
  long verified_resumes;
  long bad_resumes;
};

static struct server g_server;
static struct resume_table g_resume;
static struct progress g_progress;
static struct stats g_stats;
static uint8_t *g_file;  // the output file (in memory)
static struct snapshot *g_snapshots;
static int g_nsnapshots;

static void progress_add(size_t n) {
  pthread_mutex_lock(&g_progress.lock);
  g_progress.bytes_done += n;  // RACE (write, under the lock): the reporter reads it unlocked
  g_progress.chunks_done++;
  pthread_mutex_unlock(&g_progress.lock);
}

static void checkpoint(struct segment *seg, size_t offset, enum seg_state state) {
  pthread_mutex_lock(&g_resume.lock);
  seg->offset = offset;
  seg->state = state;
  g_resume.checkpoints++;
  pthread_mutex_unlock(&g_resume.lock);
}

// ---------------------------------------------------------------------------------------------
// Workers

struct worker {
  pthread_t thread;
  int id;
  struct segment *seg;
  size_t chunk;   // bytes per request
  uint8_t *rx;    // receive buffer (chunk bytes), the worker's own
  long requests;  // including failed attempts
  long bad_sums;
  double busy;    // seconds spent waiting for the server
};

// Fetches [offset, offset + len) into w->rx with retries; returns the bytes received, 0 on a
// permanent failure.
static size_t fetch_chunk(struct worker *w, size_t offset, size_t len) {
  for (int attempt = 0; attempt < 5; attempt++) {
    struct response resp;
    double t0 = app_now_seconds();
    enum fetch_status st = server_get(&g_server, offset, len, w->rx, attempt, &resp);
    w->busy += app_now_seconds() - t0;
    w->requests++;
    if (st == FETCH_OK) {
      if (chunk_sum(w->rx, resp.length) == resp.sum)
        return resp.length;
      w->bad_sums++;
    } else if (st == FETCH_RANGE) {
      return 0;
    }
    g_stats.retries++;  // RACE: no lock; other workers retry at the same time
  }
  return 0;
}

// Checks the part of the segment that the previous session left on disk.
static int verify_resumed(struct segment *seg) {
  if (seg->resumed == 0)
    return 1;
  uint32_t crc = crc32(g_file + seg->start, seg->resumed);
  return crc == seg->resume_crc;
}

static void *worker_main(void *arg) {
  struct worker *w = arg;
  struct segment *seg = w->seg;
  checkpoint(seg, seg->offset, SEG_VERIFYING);
  size_t offset = seg->start;
  if (verify_resumed(seg)) {
    offset = seg->start + seg->resumed;
    if (seg->resumed)
      progress_add(seg->resumed);
  } else {
    // the previous session's data is bad: fetch the whole segment again
    memset(g_file + seg->start, 0, seg->resumed);
  }
  checkpoint(seg, offset, SEG_FETCHING);
  while (offset < seg->end) {
    size_t len = seg->end - offset < w->chunk ? seg->end - offset : w->chunk;
    size_t got = fetch_chunk(w, offset, len);
    if (got == 0) {
      checkpoint(seg, offset, SEG_FAILED);
      break;
    }
    memcpy(g_file + offset, w->rx, got);  // pwrite(fd, rx, got, offset)
    offset += got;
    seg->chunks++;
    checkpoint(seg, offset, offset == seg->end ? SEG_DONE : SEG_FETCHING);
    progress_add(got);
  }
  pthread_mutex_lock(&g_progress.lock);
  g_progress.workers_done++;
  pthread_mutex_unlock(&g_progress.lock);
  return NULL;
}

// ---------------------------------------------------------------------------------------------
// Progress reporter

struct reporter {
  pthread_t thread;
  int nworkers;
  long interval_us;
  int verbose;
  long samples;
  double peak_rate;  // bytes per second
};

static void format_size(char *buf, size_t n, double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (bytes >= 1024 && u < 3) {
    bytes /= 1024;
    u++;
  }
  snprintf(buf, n, "%.1f %s", bytes, units[u]);
}

static void *reporter_main(void *arg) {
  struct reporter *r = arg;
  double t_start = app_now_seconds(), t_prev = t_start;
  size_t prev = 0;
  for (;;) {
    app_sleep_us(r->interval_us);
    size_t done = g_progress.bytes_done;  // RACE (read, no lock): workers update it locked
    double t = app_now_seconds();
    double rate = t > t_prev ? (double)(done - prev) / (t - t_prev) : 0;
    if (rate > r->peak_rate)
      r->peak_rate = rate;
    prev = done;
    t_prev = t;
    r->samples++;
    if (r->verbose) {
      char have[32], total[32], speed[32];
      format_size(have, sizeof have, (double)done);
      format_size(total, sizeof total, (double)g_progress.total);
      format_size(speed, sizeof speed, rate);
      fprintf(stderr, "\r%5.1f%%  %s of %s  %s/s   ", 100.0 * (double)done /
              (double)g_progress.total, have, total, speed);
    }

    // the resume file: where each segment stands
    pthread_mutex_lock(&g_resume.lock);
    if (g_nsnapshots < MAX_SNAPSHOTS) {
      struct snapshot *s = &g_snapshots[g_nsnapshots++];
      s->when = t - t_start;
      s->done = 0;
      for (int i = 0; i < g_resume.nseg; i++) {
        s->offset[i] = g_resume.seg[i].offset;
        s->done += g_resume.seg[i].state == SEG_DONE;
      }
    }
    pthread_mutex_unlock(&g_resume.lock);

    pthread_mutex_lock(&g_progress.lock);
    int finished = g_progress.workers_done == r->nworkers;
    pthread_mutex_unlock(&g_progress.lock);
    if (finished)
      break;
  }
  if (r->verbose)
    fprintf(stderr, "\n");
  return NULL;
}

// ---------------------------------------------------------------------------------------------
// main

struct config {
  long workers;
  long size_kib, chunk_kib;  // as given
  size_t size;               // bytes
  size_t chunk;              // bytes
  long latency_us;
  long resume_pct;  // how much of each segment the previous session fetched
  long seed;
  long verbose;
};

static const char usage[] =
    "usage: %s [-n workers] [-s size-KiB] [-c chunk-KiB] [-l latency-us] [-r resume-%%]\n"
    "          [-S seed] [-v]\n";

static int parse_args(int argc, char **argv, struct config *c) {
  *c = (struct config){.workers = 4, .size_kib = 1536, .chunk_kib = 8, .latency_us = 4000,
                       .resume_pct = 12, .seed = 20150101};
  const struct app_opt opts[] = {
      APP_OPT("-n", c->workers, 1, MAX_WORKERS),
      APP_OPT("-s", c->size_kib, 1, 1 << 20),
      APP_OPT("-c", c->chunk_kib, 1, 4096),
      APP_OPT("-l", c->latency_us, 0, 1000000),
      APP_OPT("-r", c->resume_pct, 0, 100),
      APP_OPT("-S", c->seed, 0, 0x7fffffffL),
      APP_SWITCH("-v", c->verbose),
  };
  int rc = app_parse_opts(argc, argv, opts, APP_NOPTS(opts), 0);
  c->size = (size_t)c->size_kib * 1024;
  c->chunk = (size_t)c->chunk_kib * 1024;
  return rc;
}

static uint8_t *make_content(size_t size, uint64_t seed) {
  uint8_t *p = malloc(size);
  if (!p)
    return NULL;
  uint64_t x = seed;
  for (size_t i = 0; i < size; i += 8) {
    x = hash64(x + i);
    size_t n = size - i < 8 ? size - i : 8;
    memcpy(p + i, &x, n);
  }
  return p;
}

int main(int argc, char **argv) {
  struct config cfg;
  if (parse_args(argc, argv, &cfg) != 0) {
    app_usage(usage, argv[0]);
    return 2;
  }

  // The server's file.
  uint8_t *content = make_content(cfg.size, (uint64_t)cfg.seed);
  g_file = calloc(1, cfg.size);
  g_snapshots = calloc(MAX_SNAPSHOTS, sizeof *g_snapshots);
  if (!content || !g_file || !g_snapshots) {
    perror("malloc");
    return 1;
  }
  g_server.content = content;
  g_server.size = cfg.size;
  g_server.crc = crc32(content, cfg.size);
  g_server.latency_us = cfg.latency_us;
  pthread_mutex_init(&g_server.lock, NULL);

  // Segments, and the state a previous, interrupted session left behind.
  pthread_mutex_init(&g_resume.lock, NULL);
  g_resume.nseg = cfg.workers;
  size_t per = cfg.size / (size_t)cfg.workers;
  size_t resumed_total = 0;
  for (int i = 0; i < cfg.workers; i++) {
    struct segment *s = &g_resume.seg[i];
    s->id = i;
    s->start = (size_t)i * per;
    s->end = i == cfg.workers - 1 ? cfg.size : s->start + per;
    s->resumed = (s->end - s->start) * (size_t)cfg.resume_pct / 100;
    memcpy(g_file + s->start, content + s->start, s->resumed);
    s->resume_crc = crc32(content + s->start, s->resumed);
    s->offset = s->start + s->resumed;
    s->state = SEG_PENDING;
    resumed_total += s->resumed;
  }
  pthread_mutex_init(&g_progress.lock, NULL);
  g_progress.total = cfg.size;

  struct worker workers[MAX_WORKERS];
  struct reporter rep = {.nworkers = cfg.workers, .interval_us = 4000, .verbose = cfg.verbose};
  double t0 = app_now_seconds();
  for (int i = 0; i < cfg.workers; i++) {
    memset(&workers[i], 0, sizeof workers[i]);
    workers[i].id = i;
    workers[i].seg = &g_resume.seg[i];
    workers[i].chunk = cfg.chunk;
    workers[i].rx = malloc(cfg.chunk);
    if (!workers[i].rx) {
      perror("malloc");
      return 1;
    }
    int rc = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
    if (rc) {
      fprintf(stderr, "pthread_create: %s\n", strerror(rc));
      return 1;
    }
  }
  int rc = pthread_create(&rep.thread, NULL, reporter_main, &rep);
  if (rc) {
    fprintf(stderr, "pthread_create: %s\n", strerror(rc));
    return 1;
  }
  for (int i = 0; i < cfg.workers; i++)
    pthread_join(workers[i].thread, NULL);
  pthread_join(rep.thread, NULL);
  double elapsed = app_now_seconds() - t0;

  // Everything below runs after the joins.
  uint32_t crc = crc32(g_file, cfg.size);
  int complete = 1;
  long chunks = 0, requests = 0, bad_sums = 0;
  for (int i = 0; i < cfg.workers; i++) {
    const struct segment *s = &g_resume.seg[i];
    complete &= s->state == SEG_DONE && s->offset == s->end;
    chunks += s->chunks;
    requests += workers[i].requests;
    bad_sums += workers[i].bad_sums;
    free(workers[i].rx);
  }
  // The last snapshot the reporter took shows every segment done (it stops only then).
  int last_ok = g_nsnapshots > 0 && g_snapshots[g_nsnapshots - 1].done == cfg.workers;
  int ok = complete && crc == g_server.crc && g_progress.bytes_done == cfg.size &&
           g_progress.chunks_done == chunks + (resumed_total ? cfg.workers : 0) && last_ok &&
           g_server.connections == 0 && bad_sums == 0;

  char size_s[32];
  format_size(size_s, sizeof size_s, (double)cfg.size);
  printf("download: %s in %ld segments, %zu KiB chunks, average latency %ld us\n", size_s,
         cfg.workers, cfg.chunk / 1024, cfg.latency_us);
  printf("resumed: %zu bytes from the previous session (%ld%% of each segment)\n", resumed_total,
         cfg.resume_pct);
  for (int i = 0; i < cfg.workers; i++) {
    const struct segment *s = &g_resume.seg[i];
    printf("segment %d: [%zu, %zu) %ld chunks, %s\n", i, s->start, s->end, s->chunks,
           s->state == SEG_DONE ? "done" : "INCOMPLETE");
  }
  printf("requests: %ld (%ld retries, %ld transient errors at the server)\n", requests,
         g_stats.retries, g_server.transient_errors);
  printf("file crc32 %08" PRIx32 ", server crc32 %08" PRIx32 "\n", crc, g_server.crc);
  if (cfg.verbose)
    fprintf(stderr, "%.3f s, %ld progress samples, %d snapshots, peak %.0f B/s, %d connections "
            "at most, %ld checkpoints\n", elapsed, rep.samples, g_nsnapshots, rep.peak_rate,
            g_server.max_connections, g_resume.checkpoints);
  printf("%s\n", ok ? "OK" : "FAILED");
  free(content);
  free(g_file);
  free(g_snapshots);
  return ok ? 0 : 1;
}
