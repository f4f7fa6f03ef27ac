// Workload for benchmarks/detect, in the shape of `zstd -T`: THREADS workers (argv[1]) compress
// JOBS blocks (argv[2]) of 128 KiB that main generates. main mallocs each block, fills it with
// text-like data and hands it over through a job queue (mutex + condition variable); a worker
// takes it, codes it with a small LZ77 (a private hash table of earlier positions; each position
// reads the 4 bytes at its hash table candidate, so it reads the block at scattered places, as a
// match finder does) into an output buffer of its own malloc, and marks the job done (mutex +
// condition variable); main waits for the jobs in order, with at most 2 * THREADS in flight, reads
// each output into a checksum and frees both buffers.
//
// Race-free: every block byte is written by main and read by one worker, every output byte
// written by a worker and read by main, each pair ordered by the queue's signal → wait (or, when
// the predicate already held, the wait-loop markers) and the job's done signal → main's wait.
// With many distinct scattered reads per block, the trace has millions of shared objects, each
// touched by two threads and every pair ordered by happens-before (what zstd's trace has).
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK (128 * 1024)
#define HASH_BITS 14
#define MIN_MATCH 4

typedef uint32_t unaligned_u32 __attribute__((aligned(1)));

typedef struct job {
  unsigned char *in;
  unsigned char *out;
  long out_len;
  int done;
  pthread_cond_t done_cv;
  struct job *next;
} job_t;

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static job_t *head, *tail;
static int closing;

static unsigned hash(uint32_t v) { return (v * 2654435761u) >> (32 - HASH_BITS); }

// LZ77 into `out`: a literal run is a byte n < 128 and n + 1 bytes, a match is 128 + (length -
// MIN_MATCH) (at most 127 + MIN_MATCH), then the 3-byte distance.
static long compress(const unsigned char *in, unsigned char *out, uint32_t *table) {
  for (int h = 0; h < (1 << HASH_BITS); h++)
    table[h] = UINT32_MAX;
  long o = 0, lit = -1;
  uint32_t i = 0;
  while (i + MIN_MATCH <= BLOCK) {
    uint32_t v = *(const unaligned_u32 *)(in + i);
    unsigned h = hash(v);
    uint32_t cand = table[h];
    table[h] = i;
    if (cand != UINT32_MAX && *(const unaligned_u32 *)(in + cand) == v) {
      uint32_t len = MIN_MATCH;
      while (i + len < BLOCK && len < 127 + MIN_MATCH && in[cand + len] == in[i + len])
        len++;
      uint32_t dist = i - cand;
      out[o++] = (unsigned char)(128 + len - MIN_MATCH);
      out[o++] = (unsigned char)dist;
      out[o++] = (unsigned char)(dist >> 8);
      out[o++] = (unsigned char)(dist >> 16);
      lit = -1;
      i += len;
      continue;
    }
    if (lit < 0 || out[lit] == 127) {
      lit = o++;
      out[lit] = 0;
    } else {
      out[lit]++;
    }
    out[o++] = in[i++];
  }
  while (i < BLOCK) {
    out[o++] = 0;
    out[o++] = in[i++];
  }
  return o;
}

static void *worker(void *arg) {
  (void)arg;
  uint32_t *table = malloc(sizeof(uint32_t) << HASH_BITS);
  for (;;) {
    pthread_mutex_lock(&m);
    while (!head && !closing)
      pthread_cond_wait(&not_empty, &m);
    job_t *j = head;
    if (j) {
      head = j->next;
      if (!head)
        tail = NULL;
    }
    pthread_mutex_unlock(&m);
    if (!j)
      break;
    // The worst case: a literal run byte per 128 literals.
    j->out = malloc(BLOCK + BLOCK / 64 + 16);
    j->out_len = compress(j->in, j->out, table);
    pthread_mutex_lock(&m);
    j->done = 1;
    pthread_cond_signal(&j->done_cv);
    pthread_mutex_unlock(&m);
  }
  free(table);
  return NULL;
}

static const char *words[] = {"the ", "quick ", "brown ", "fox ", "jumps ", "over ", "a ",
                              "lazy ", "dog ", "and ", "then ", "sleeps ", "in ", "sun.\n"};

static void fill(unsigned char *p, uint64_t *seed) {
  long n = 0;
  while (n < BLOCK) {
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    const char *w = words[(*seed >> 33) % (sizeof words / sizeof *words)];
    for (; *w && n < BLOCK; w++)
      p[n++] = (unsigned char)*w;
    // Now and then a byte no word has, so that the data is not all matches.
    if ((*seed >> 60) == 0 && n < BLOCK)
      p[n++] = (unsigned char)(*seed >> 40);
  }
}

static uint64_t finish(job_t *j, uint64_t *total) {
  pthread_mutex_lock(&m);
  while (!j->done)
    pthread_cond_wait(&j->done_cv, &m);
  pthread_mutex_unlock(&m);
  uint64_t sum = 0;
  for (long k = 0; k < j->out_len; k++)
    sum = sum * 31 + j->out[k];
  sum += (uint64_t)j->out_len << 32;
  *total += (uint64_t)j->out_len;
  pthread_cond_destroy(&j->done_cv);
  free(j->in);
  free(j->out);
  free(j);
  return sum;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 6;
  long jobs = argc > 2 ? atol(argv[2]) : 64;
  if (threads < 1 || threads > 64 || jobs < 1) {
    fprintf(stderr, "usage: %s THREADS(1-64) JOBS\n", argv[0]);
    return 2;
  }
  pthread_t t[64];
  for (int k = 0; k < threads; k++)
    pthread_create(&t[k], NULL, worker, NULL);
  long window = 2L * threads;
  job_t **all = calloc((size_t)jobs, sizeof *all);
  uint64_t seed = 42, sum = 0, total = 0;
  for (long n = 0; n < jobs; n++) {
    job_t *j = calloc(1, sizeof *j);
    pthread_cond_init(&j->done_cv, NULL);
    j->in = malloc(BLOCK);
    fill(j->in, &seed);
    all[n] = j;
    pthread_mutex_lock(&m);
    if (tail)
      tail->next = j;
    else
      head = j;
    tail = j;
    pthread_cond_signal(&not_empty);
    pthread_mutex_unlock(&m);
    if (n >= window)
      sum ^= finish(all[n - window], &total);
  }
  for (long n = jobs > window ? jobs - window : 0; n < jobs; n++)
    sum ^= finish(all[n], &total);
  pthread_mutex_lock(&m);
  closing = 1;
  pthread_cond_broadcast(&not_empty);
  pthread_mutex_unlock(&m);
  for (int k = 0; k < threads; k++)
    pthread_join(t[k], NULL);
  free(all);
  printf("%ld blocks, %llu bytes out, checksum %016llx\n", jobs, (unsigned long long)total,
         (unsigned long long)sum);
  return 0;
}
