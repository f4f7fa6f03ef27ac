// APP: parallel block compressor (in the style of pigz): a reader thread cuts the input into
//      blocks and mallocs a job per block, worker threads compress the blocks (run-length coding
//      and a CRC-32 of each block), a writer thread writes the compressed blocks in input order
//      and recycles the jobs through a free list or frees them
// CATEGORY: pipeline
// EXPECT: none
// ARGS: -w 3 -s 2048 -b 32 -j 8 -k 3
//
// main generates the input (-s KiB of text-like data with runs, from a fixed seed) and its CRC-32
// before any thread runs. The reader reads it through stdio (fmemopen, fread: libc allocates the
// stream and its buffer) in blocks of -b KiB. For each block it takes a job from the free list,
// or mallocs a new one if fewer than -j jobs exist (else it waits for the writer to give one
// back), names it with asprintf, reads the block into the job's input buffer (kept across
// recycling, grown with realloc) and puts the job into the compress queue: a bounded FIFO under
// a mutex with two condition variables (not full, not empty), as pigz's compress list is.
//
// A worker takes a job, mallocs an output buffer of the worst-case size, run-length codes the
// block into it (a control byte: 0..127 is that many + 1 literal bytes, 128..255 a run of that
// many - 125 copies of the next byte), shrinks it with realloc and computes the block's CRC-32
// (bitwise, the real work of a compressor's check). It then puts the job into the write list,
// kept in block order, and wakes the writer.
//
// The writer waits for the next block in order, writes a header line (name, sizes, CRC) and the
// compressed bytes into an open_memstream stream, strdups the block name into an index, frees the
// output buffer and the name and returns the job to the free list; a free list holding -k jobs
// already frees the job (and its input buffer) instead, so that later jobs are new mallocs whose
// addresses are the freed ones. After the last block it closes the stream. main joins every
// thread, decodes the stream block by block and compares it with the input (sizes, CRCs, bytes
// and the combined CRC), and prints figures that do not depend on the schedule.
//
// Race-free: a job belongs to one thread at a time, handed over under the queue's, the write
// list's or the free list's mutex; the counters of those lists are only touched under their
// mutex; each worker's statistics are its own until main joins it; the output stream and the
// index belong to the writer until main joins it.
#define _GNU_SOURCE
#include <inttypes.h>

#include "app_common.h"

#define MAX_WORKERS 16
#define MAX_JOBS 64

// ---------------------------------------------------------------------------------------------
// Input and coding

static uint32_t crc32(uint32_t crc, const uint8_t *p, size_t n) {
  return app_crc32_reflected(crc, p, n, 0xedb88320u);
}

// Text-like input: words from a small vocabulary, separated by spaces and newlines, with runs of
// one byte (padding, rules of dashes, zero fill) so that run-length coding has something to find.
static void make_input(uint8_t *buf, size_t n, uint64_t seed) {
  static const char *const words[] = {"block", "stream", "deflate", "window", "huffman", "the",
                                      "of",    "and",    "literal", "match",  "length",  "crc"};
  uint64_t s = seed;
  size_t i = 0;
  while (i < n) {
    uint64_t r = app_splitmix64_next(&s);
    if (r % 7 == 0) {
      size_t run = 8 + (size_t)(r >> 8) % 120;
      uint8_t c = "-= \0"[(r >> 20) % 4];
      for (size_t k = 0; k < run && i < n; k++)
        buf[i++] = c;
    } else {
      const char *w = words[(r >> 8) % (sizeof words / sizeof words[0])];
      while (*w && i < n)
        buf[i++] = (uint8_t)*w++;
      if (i < n)
        buf[i++] = (r >> 32) % 9 == 0 ? '\n' : ' ';
    }
  }
}

// Worst-case coded size of n bytes: one control byte per 128 literals.
static size_t rle_bound(size_t n) { return n + n / 128 + 1; }

static size_t rle_encode(const uint8_t *in, size_t n, uint8_t *out) {
  size_t i = 0, o = 0;
  while (i < n) {
    size_t run = 1;
    while (i + run < n && run < 130 && in[i + run] == in[i])
      run++;
    if (run >= 3) {
      out[o++] = (uint8_t)(run + 125);
      out[o++] = in[i];
      i += run;
      continue;
    }
    // Literals up to the next run of 3 (or 128 of them).
    size_t start = i, lit = 0;
    while (i < n && lit < 128 && !(i + 2 < n && in[i] == in[i + 1] && in[i] == in[i + 2])) {
      i++;
      lit++;
    }
    out[o++] = (uint8_t)(lit - 1);
    memcpy(out + o, in + start, lit);
    o += lit;
  }
  return o;
}

// Decodes n coded bytes into out (room for cap bytes); returns the decoded size, or (size_t)-1
// if the input is malformed or does not fit.
static size_t rle_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap) {
  size_t i = 0, o = 0;
  while (i < n) {
    uint8_t c = in[i++];
    if (c < 128) {
      size_t lit = (size_t)c + 1;
      if (i + lit > n || o + lit > cap)
        return (size_t)-1;
      memcpy(out + o, in + i, lit);
      i += lit;
      o += lit;
    } else {
      size_t run = (size_t)c - 125;
      if (i >= n || o + run > cap)
        return (size_t)-1;
      memset(out + o, in[i++], run);
      o += run;
    }
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Jobs, the compress queue, the write list and the free list

struct job {
  long seq;
  char *name;        // asprintf by the reader, freed by the writer
  uint8_t *in;       // input buffer, kept while the job is recycled
  size_t in_len, in_cap;
  uint8_t *out;      // malloc'd by a worker, freed by the writer
  size_t out_len;
  uint32_t crc;      // of in[0 .. in_len)
  struct job *next;
};

// The bounded FIFO between the reader and the workers.
struct queue {
  pthread_mutex_t lock;
  pthread_cond_t not_empty, not_full;
  struct job *head, *tail;
  int count, capacity;
  int closed;  // the reader has put its last job
};

// Compressed jobs waiting for the writer, in block order.
struct write_list {
  pthread_mutex_t lock;
  pthread_cond_t ready;
  struct job *head;
  long total;  // number of blocks, -1 until the reader knows it
};

// Jobs the writer gave back, for the reader to reuse.
struct pool {
  pthread_mutex_t lock;
  pthread_cond_t returned;
  struct job *free;
  int cached, keep;  // jobs on the free list, the most it keeps
  int alive, limit;  // jobs in existence, the most the reader may have
  long made, reused, freed;
};

static struct queue g_queue;
static struct write_list g_written;
static struct pool g_pool;

static void queue_put(struct queue *q, struct job *j) {
  pthread_mutex_lock(&q->lock);
  while (q->count == q->capacity)
    pthread_cond_wait(&q->not_full, &q->lock);
  j->next = NULL;
  if (q->tail)
    q->tail->next = j;
  else
    q->head = j;
  q->tail = j;
  q->count++;
  pthread_cond_signal(&q->not_empty);
  pthread_mutex_unlock(&q->lock);
}

static void queue_close(struct queue *q) {
  pthread_mutex_lock(&q->lock);
  q->closed = 1;
  pthread_cond_broadcast(&q->not_empty);
  pthread_mutex_unlock(&q->lock);
}

// The oldest job, or NULL once the queue is closed and empty.
static struct job *queue_get(struct queue *q) {
  pthread_mutex_lock(&q->lock);
  while (q->count == 0 && !q->closed)
    pthread_cond_wait(&q->not_empty, &q->lock);
  struct job *j = q->head;
  if (j) {
    q->head = j->next;
    if (!q->head)
      q->tail = NULL;
    q->count--;
    pthread_cond_signal(&q->not_full);
  }
  pthread_mutex_unlock(&q->lock);
  return j;
}

static void written_put(struct write_list *w, struct job *j) {
  pthread_mutex_lock(&w->lock);
  struct job **at = &w->head;
  while (*at && (*at)->seq < j->seq)
    at = &(*at)->next;
  j->next = *at;
  *at = j;
  pthread_cond_signal(&w->ready);
  pthread_mutex_unlock(&w->lock);
}

static void written_total(struct write_list *w, long total) {
  pthread_mutex_lock(&w->lock);
  w->total = total;
  pthread_cond_signal(&w->ready);
  pthread_mutex_unlock(&w->lock);
}

// Job `seq` once a worker has compressed it, or NULL if there is no such block.
static struct job *written_get(struct write_list *w, long seq) {
  pthread_mutex_lock(&w->lock);
  while (!(w->head && w->head->seq == seq) && (w->total < 0 || seq < w->total))
    pthread_cond_wait(&w->ready, &w->lock);
  struct job *j = NULL;
  if (w->head && w->head->seq == seq) {
    j = w->head;
    w->head = j->next;
  }
  pthread_mutex_unlock(&w->lock);
  return j;
}

// A job for the reader: recycled, new, or (at the limit) the next one the writer gives back.
static struct job *pool_get(struct pool *p) {
  pthread_mutex_lock(&p->lock);
  while (!p->free && p->alive == p->limit)
    pthread_cond_wait(&p->returned, &p->lock);
  struct job *j = p->free;
  if (j) {
    p->free = j->next;
    p->cached--;
    p->reused++;
  } else {
    p->alive++;
    p->made++;
  }
  pthread_mutex_unlock(&p->lock);
  if (!j) {
    j = calloc(1, sizeof *j);
    if (!j) {
      perror("calloc");
      exit(1);
    }
  }
  return j;
}

static void pool_return(struct pool *p, struct job *j) {
  pthread_mutex_lock(&p->lock);
  int keep = p->cached < p->keep;
  if (keep) {
    j->next = p->free;
    p->free = j;
    p->cached++;
  } else {
    p->alive--;
    p->freed++;
  }
  pthread_cond_signal(&p->returned);
  pthread_mutex_unlock(&p->lock);
  if (!keep) {
    free(j->in);
    free(j);
  }
}

// ---------------------------------------------------------------------------------------------
// Threads

struct reader_arg {
  const uint8_t *input;
  size_t size, block;
};

struct worker {
  pthread_t thread;
  long blocks;
  size_t bytes_in, bytes_out;
};

struct writer_out {
  char *stream;  // open_memstream's buffer
  size_t stream_len;
  char **index;  // strdup'd block names, in order
  long blocks;
  uint32_t crc;  // CRC-32 of the whole input, combined block by block
};

static void *reader_main(void *arg) {
  const struct reader_arg *a = arg;
  FILE *f = fmemopen((void *)a->input, a->size, "r");
  if (!f) {
    perror("fmemopen");
    exit(1);
  }
  long seq = 0;
  for (;;) {
    struct job *j = pool_get(&g_pool);
    if (j->in_cap < a->block) {
      uint8_t *in = realloc(j->in, a->block);
      if (!in) {
        perror("realloc");
        exit(1);
      }
      j->in = in;
      j->in_cap = a->block;
    }
    j->in_len = fread(j->in, 1, a->block, f);
    if (j->in_len == 0) {
      pool_return(&g_pool, j);
      break;
    }
    j->seq = seq;
    if (asprintf(&j->name, "block-%05ld@%zu", seq, (size_t)seq * a->block) < 0) {
      perror("asprintf");
      exit(1);
    }
    seq++;
    queue_put(&g_queue, j);
  }
  fclose(f);
  written_total(&g_written, seq);
  queue_close(&g_queue);
  return NULL;
}

static void *worker_main(void *arg) {
  struct worker *w = arg;
  struct job *j;
  while ((j = queue_get(&g_queue))) {
    uint8_t *out = malloc(rle_bound(j->in_len));
    if (!out) {
      perror("malloc");
      exit(1);
    }
    size_t n = rle_encode(j->in, j->in_len, out);
    uint8_t *shrunk = realloc(out, n ? n : 1);
    j->out = shrunk ? shrunk : out;
    j->out_len = n;
    j->crc = crc32(0, j->in, j->in_len);
    w->blocks++;
    w->bytes_in += j->in_len;
    w->bytes_out += n;
    written_put(&g_written, j);
  }
  return NULL;
}

static void *writer_main(void *arg) {
  struct writer_out *o = arg;
  FILE *f = open_memstream(&o->stream, &o->stream_len);
  if (!f) {
    perror("open_memstream");
    exit(1);
  }
  size_t cap = 0;
  struct job *j;
  while ((j = written_get(&g_written, o->blocks))) {
    fprintf(f, "%s %zu %zu %08" PRIx32 "\n", j->name, j->in_len, j->out_len, j->crc);
    fwrite(j->out, 1, j->out_len, f);
    o->crc = crc32(o->crc, j->in, j->in_len);
    if ((size_t)o->blocks == cap) {
      cap = cap ? 2 * cap : 64;
      char **index = realloc(o->index, cap * sizeof *index);
      if (!index) {
        perror("realloc");
        exit(1);
      }
      o->index = index;
    }
    o->index[o->blocks++] = strdup(j->name);
    free(j->out);
    free(j->name);
    j->out = NULL;
    j->name = NULL;
    pool_return(&g_pool, j);
  }
  fclose(f);
  return NULL;
}

// ---------------------------------------------------------------------------------------------
// main

// Decodes the writer's stream and compares it with the input; returns the number of errors.
static long verify(const struct writer_out *o, const uint8_t *input, size_t size, size_t block) {
  uint8_t *buf = malloc(block);
  long bad = 0;
  size_t at = 0, pos = 0;
  for (long b = 0; b < o->blocks && !bad; b++) {
    // The header line, copied out: the stream holds binary data, and sscanf wants a string.
    char line[128], name[64];
    const char *nl = memchr(o->stream + at, '\n', o->stream_len - at);
    size_t len = nl ? (size_t)(nl - (o->stream + at)) : sizeof line;
    size_t in_len, out_len;
    uint32_t crc;
    int used = 0;
    if (len >= sizeof line) {
      bad++;
      break;
    }
    memcpy(line, o->stream + at, len);
    line[len] = '\0';
    if (sscanf(line, "%63s %zu %zu %" SCNx32 "%n", name, &in_len, &out_len, &crc, &used) != 4 ||
        (size_t)used != len || strcmp(name, o->index[b]) != 0 || out_len > o->stream_len - at - len - 1) {
      bad++;
      break;
    }
    at += len + 1;
    size_t got = rle_decode((const uint8_t *)o->stream + at, out_len, buf, block);
    at += out_len;
    if (got != in_len || pos + got > size || memcmp(buf, input + pos, got) != 0 ||
        crc32(0, buf, got) != crc)
      bad++;
    pos += got;
  }
  free(buf);
  return bad + (pos != size) + (at != o->stream_len);
}

struct config {
  long workers, size_kib, block_kib, jobs, keep, verbose;
};

static const char usage[] =
    "usage: %s [-w workers] [-s input-KiB] [-b block-KiB] [-j max-jobs] [-k jobs-kept] [-v]\n";

int main(int argc, char **argv) {
  struct config cfg = {.workers = 3, .size_kib = 2048, .block_kib = 32, .jobs = 8, .keep = 3};
  const struct app_opt opts[] = {
      APP_OPT("-w", cfg.workers, 1, MAX_WORKERS),  APP_OPT("-s", cfg.size_kib, 1, 1 << 20),
      APP_OPT("-b", cfg.block_kib, 1, 1 << 14),    APP_OPT("-j", cfg.jobs, 1, MAX_JOBS),
      APP_OPT("-k", cfg.keep, 0, MAX_JOBS),        APP_SWITCH("-v", cfg.verbose),
  };
  if (app_parse_opts(argc, argv, opts, APP_NOPTS(opts), 0) != 0) {
    app_usage(usage, argv[0]);
    return 2;
  }
  size_t size = (size_t)cfg.size_kib * 1024, block = (size_t)cfg.block_kib * 1024;
  uint8_t *input = malloc(size);
  struct worker *workers = calloc((size_t)cfg.workers, sizeof *workers);
  if (!input || !workers) {
    perror("malloc");
    return 1;
  }
  make_input(input, size, 0x5eed);
  uint32_t want_crc = crc32(0, input, size);

  pthread_mutex_init(&g_queue.lock, NULL);
  pthread_cond_init(&g_queue.not_empty, NULL);
  pthread_cond_init(&g_queue.not_full, NULL);
  g_queue.capacity = (int)cfg.jobs;
  pthread_mutex_init(&g_written.lock, NULL);
  pthread_cond_init(&g_written.ready, NULL);
  g_written.total = -1;
  pthread_mutex_init(&g_pool.lock, NULL);
  pthread_cond_init(&g_pool.returned, NULL);
  g_pool.keep = (int)cfg.keep;
  g_pool.limit = (int)cfg.jobs;

  struct reader_arg ra = {input, size, block};
  struct writer_out wo = {0};
  pthread_t reader, writer;
  int rc = pthread_create(&reader, NULL, reader_main, &ra);
  for (long i = 0; i < cfg.workers && rc == 0; i++)
    rc = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
  if (rc == 0)
    rc = pthread_create(&writer, NULL, writer_main, &wo);
  if (rc) {
    fprintf(stderr, "pthread_create: %s\n", strerror(rc));
    return 1;
  }
  pthread_join(reader, NULL);
  for (long i = 0; i < cfg.workers; i++)
    pthread_join(workers[i].thread, NULL);
  pthread_join(writer, NULL);

  long blocks = 0;
  size_t bytes_in = 0, bytes_out = 0;
  for (long i = 0; i < cfg.workers; i++) {
    blocks += workers[i].blocks;
    bytes_in += workers[i].bytes_in;
    bytes_out += workers[i].bytes_out;
  }
  long bad = verify(&wo, input, size, block);
  int ok = bad == 0 && blocks == wo.blocks && bytes_in == size && wo.crc == want_crc &&
           g_pool.made + g_pool.reused == wo.blocks + 1 && g_pool.made - g_pool.freed == g_pool.alive;
  printf("pzip: %zu bytes in %ld blocks of %zu, %ld workers, at most %ld jobs, %ld kept\n", size,
         wo.blocks, block, cfg.workers, cfg.jobs, cfg.keep);
  printf("compressed: %zu bytes (%.1f%%), crc %08" PRIx32 ", stream %zu bytes\n", bytes_out,
         100.0 * (double)bytes_out / (double)size, wo.crc, wo.stream_len);
  printf("checks: %ld bad blocks\n", bad);
  if (cfg.verbose)
    fprintf(stderr, "jobs: %ld made, %ld reused, %ld freed\n", g_pool.made, g_pool.reused,
            g_pool.freed);
  printf("%s\n", ok ? "OK" : "FAILED");

  for (struct job *j = g_pool.free, *next; j; j = next) {
    next = j->next;
    free(j->in);
    free(j);
  }
  for (long b = 0; b < wo.blocks; b++)
    free(wo.index[b]);
  free(wo.index);
  free(wo.stream);
  pthread_cond_destroy(&g_pool.returned);
  pthread_mutex_destroy(&g_pool.lock);
  pthread_cond_destroy(&g_written.ready);
  pthread_mutex_destroy(&g_written.lock);
  pthread_cond_destroy(&g_queue.not_full);
  pthread_cond_destroy(&g_queue.not_empty);
  pthread_mutex_destroy(&g_queue.lock);
  free(workers);
  free(input);
  return ok ? 0 : 1;
}
