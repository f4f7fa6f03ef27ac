// APP: parallel quicksort of 2-D points along a Hilbert curve: worker threads take sub-ranges
//      from a shared task stack (mutex + condition variable), partition them, push one half back
//      and sort small ranges sequentially (introsort, insertion-sort cutoff); result verified
// CATEGORY: work-queue
// EXPECT: race 498 436
// REORDER: yes
// ARGS: -n 120000 -t 4 -d uniform
//
// The program generates points of the plane (32-bit coordinates packed in 64 bits) from a seed
// with one of several distributions (uniform, clustered, diagonal, grid, duplicates, already
// sorted) and sorts them by their index along the Hilbert curve that fills the 2^32 x 2^32 grid,
// the order spatial indexes and renderers use because it keeps neighbours in the plane close in
// the array. The key is computed on every comparison. A pool of worker threads sorts: a range
// larger than the spawn cutoff is partitioned (median-of-three pivot, Hoare scheme); the smaller
// half goes back to the shared task stack for any worker, the larger half is kept by the worker
// that partitioned it. A range at or below the cutoff is sorted sequentially with an introsort
// (quicksort, insertion sort under 24 elements, heapsort when the recursion gets too deep). Each
// worker works on a private copy of its range (copied in when it pops the task, the pushed half
// and the sorted rest copied back), so that workers never share cache lines of the array while
// they sort. Termination is a count of pending tasks (pushed and not yet finished), kept under
// the stack's mutex: the worker that finishes the last task sets the done flag and wakes every
// idle worker. main verifies that the result is in Hilbert order and is a permutation of the
// input (sum, xor and a hash sum of the points), compares the length of the tour through the
// points before and after, and prints only figures that do not depend on the schedule.
//
// The documented race (a double-checked "done" flag): each worker looks at `g_done` at the top of
// its loop without taking the stack's mutex, to skip the lock when the sort is already over
// (worker_main). The flag is written under the mutex by the worker that finishes the last task
// (task_finished). The read is benign for the result (the worker re-checks under the lock in
// stack_pop), but it is a data race: a worker that has just finished its last task and unlocked
// reads the flag while another worker's final critical section writes it. In a natural run the
// reading worker usually reaches its next lock first, which orders the two accesses, so the race
// needs the critical sections reordered to show up. Every other shared datum is under the stack's
// mutex (the stack, pending, idle, the stack's statistics), handed from one worker to the next
// through a push and a pop on the stack (the ranges of the array), private to a worker until
// the join (its scratch buffer and counters), or written before the workers are created and read
// after they are joined.
#define _POSIX_C_SOURCE 200809L  // clock_gettime with -std=c11
#include <inttypes.h>
#include <limits.h>

#include "app_common.h"

#define MAX_WORKERS 16
#define INSERTION_CUTOFF 24
#define DEFAULT_SPAWN_CUTOFF 16384

// A point of the plane with 32-bit coordinates, packed as (x << 32) | y.
typedef uint64_t point_t;

static inline uint32_t px(point_t p) { return (uint32_t)(p >> 32); }
static inline uint32_t py(point_t p) { return (uint32_t)p; }
static inline point_t mkpoint(uint32_t x, uint32_t y) { return ((uint64_t)x << 32) | y; }

// ---------------------------------------------------------------------------------------------
// Configuration

enum distribution {
  DIST_UNIFORM,
  DIST_CLUSTERED,
  DIST_DIAGONAL,
  DIST_GRID,
  DIST_DUPLICATES,
  DIST_SORTED,
};

static const char *const dist_names[] = {
    "uniform", "clustered", "diagonal", "grid", "duplicates", "sorted",
};

struct config {
  long n;             // number of points
  long threads;       // worker threads
  long spawn_cutoff;  // ranges above this are split into tasks
  long dist;          // input distribution (an enum distribution)
  long seed;          // generator seed
  long verbose;       // per-worker statistics on stderr
};

static const char usage[] =
    "usage: %s [-n points] [-t threads] [-c spawn-cutoff] [-d distribution] [-s seed] [-v]\n"
    "distributions: uniform clustered diagonal grid duplicates sorted\n";

static int parse_args(int argc, char **argv, struct config *cfg) {
  *cfg = (struct config){.n = 120000, .threads = 4, .spawn_cutoff = DEFAULT_SPAWN_CUTOFF,
                         .dist = DIST_UNIFORM, .seed = 0x5eed1234abcdL};
  const struct app_opt opts[] = {
      APP_OPT("-n", cfg->n, 2, LONG_MAX),
      APP_OPT("-t", cfg->threads, 1, MAX_WORKERS),
      APP_OPT("-c", cfg->spawn_cutoff, 2 * INSERTION_CUTOFF, LONG_MAX),
      APP_OPT("-s", cfg->seed, LONG_MIN, LONG_MAX),
      APP_CHOICE("-d", cfg->dist, dist_names, "distribution"),
      APP_SWITCH("-v", cfg->verbose),
  };
  return app_parse_opts(argc, argv, opts, APP_NOPTS(opts), 1);
}

// ---------------------------------------------------------------------------------------------
// The sort key: position along a Hilbert curve

// Index of (x, y) along the Hilbert curve that fills the 2^32 x 2^32 grid. Points close on the
// curve are close in the plane, which is why spatial indexes and renderers sort by it. Computed
// on every comparison (no key cache: the array holds only the points).
static inline uint64_t hilbert_key(point_t p) {
  uint64_t x = px(p), y = py(p), d = 0;
  const uint64_t n = 1ULL << 32;
  for (uint64_t s = n >> 1; s > 0; s >>= 1) {
    uint64_t rx = (x & s) ? 1 : 0;
    uint64_t ry = (y & s) ? 1 : 0;
    d += s * s * ((3 * rx) ^ ry);
    if (ry == 0) {  // rotate the quadrant
      if (rx == 1) {
        x = n - 1 - x;
        y = n - 1 - y;
      }
      uint64_t t = x;
      x = y;
      y = t;
    }
  }
  return d;
}

// ---------------------------------------------------------------------------------------------
// Input generation and verification

// The points come from app_splitmix64_next, one generator state per call, never shared.
static void generate(point_t *a, long n, enum distribution dist, uint64_t seed) {
  uint64_t st = seed;
  switch (dist) {
  case DIST_UNIFORM:
    for (long i = 0; i < n; i++)
      a[i] = app_splitmix64_next(&st);
    break;
  case DIST_CLUSTERED: {
    // 16 cluster centres; each point is a centre plus a triangular-distributed offset
    uint32_t cx[16], cy[16];
    for (int c = 0; c < 16; c++) {
      cx[c] = (uint32_t)app_splitmix64_next(&st);
      cy[c] = (uint32_t)app_splitmix64_next(&st);
    }
    for (long i = 0; i < n; i++) {
      uint64_t r = app_splitmix64_next(&st);
      int c = (int)(r & 15);
      int32_t dx = (int32_t)((r >> 8) & 0xffffff) - (int32_t)((r >> 32) & 0xffffff);
      int32_t dy = (int32_t)((r >> 20) & 0xfffff) - (int32_t)((r >> 44) & 0xfffff);
      a[i] = mkpoint(cx[c] + (uint32_t)dx, cy[c] + (uint32_t)dy);
    }
    break;
  }
  case DIST_DIAGONAL:
    for (long i = 0; i < n; i++) {
      uint32_t t = (uint32_t)app_splitmix64_next(&st);
      a[i] = mkpoint(t, t + (uint32_t)(app_splitmix64_next(&st) & 0xfff));
    }
    break;
  case DIST_GRID: {
    long side = 1;
    while (side * side < n)
      side++;
    uint32_t step = (uint32_t)(0xffffffffu / (uint32_t)side);
    for (long i = 0; i < n; i++)
      a[i] = mkpoint((uint32_t)(i % side) * step, (uint32_t)(i / side) * step);
    break;
  }
  case DIST_DUPLICATES:
    for (long i = 0; i < n; i++) {
      uint64_t r = app_splitmix64_next(&st) % 61;
      a[i] = mkpoint((uint32_t)(r * 70000000u), (uint32_t)((r * 7) % 61 * 70000000u));
    }
    break;
  case DIST_SORTED:  // uniform points, put in Hilbert order by main before the timed sort
    for (long i = 0; i < n; i++)
      a[i] = app_splitmix64_next(&st);
    break;
  }
}

// A fingerprint of the multiset of points: equal for any permutation of the same points.
struct fingerprint {
  uint64_t sum;
  uint64_t xor_;
  uint64_t mixed;  // sum of a strong hash of each point
};

// MurmurHash3's 64-bit finalizer.
static uint64_t fmix64(uint64_t k) {
  return app_mix64_with(k, 33, 0xff51afd7ed558ccdULL, 33, 0xc4ceb9fe1a85ec53ULL, 33);
}

static struct fingerprint fingerprint_of(const point_t *a, long n) {
  struct fingerprint f = {0, 0, 0};
  for (long i = 0; i < n; i++) {
    f.sum += a[i];
    f.xor_ ^= a[i];
    f.mixed += fmix64(a[i]);
  }
  return f;
}

// Neighbours out of Hilbert order (0 when sorted).
static long count_descents(const point_t *a, long n) {
  long bad = 0;
  uint64_t prev = hilbert_key(a[0]);
  for (long i = 1; i < n; i++) {
    uint64_t k = hilbert_key(a[i]);
    if (prev > k)
      bad++;
    prev = k;
  }
  return bad;
}

// Length of the path that visits the points in array order, in units of 2^16 (Manhattan): what
// the Hilbert order is for; it drops by orders of magnitude when the points are sorted.
static uint64_t tour_length(const point_t *a, long n) {
  uint64_t len = 0;
  for (long i = 1; i < n; i++) {
    int64_t dx = (int64_t)px(a[i]) - (int64_t)px(a[i - 1]);
    int64_t dy = (int64_t)py(a[i]) - (int64_t)py(a[i - 1]);
    len += (uint64_t)((dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy)) >> 16;
  }
  return len;
}

// ---------------------------------------------------------------------------------------------
// Sequential sorting by Hilbert key: insertion sort, heapsort, introsort

static void insertion_sort(point_t *a, long lo, long hi) {
  for (long i = lo + 1; i < hi; i++) {
    point_t v = a[i];
    uint64_t kv = hilbert_key(v);
    long j = i - 1;
    while (j >= lo && hilbert_key(a[j]) > kv) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = v;
  }
}

static void sift_down(point_t *a, long base, long start, long end) {
  long root = start;
  for (;;) {
    long child = 2 * root + 1;
    if (child >= end)
      return;
    if (child + 1 < end && hilbert_key(a[base + child]) < hilbert_key(a[base + child + 1]))
      child++;
    if (hilbert_key(a[base + root]) >= hilbert_key(a[base + child]))
      return;
    point_t t = a[base + root];
    a[base + root] = a[base + child];
    a[base + child] = t;
    root = child;
  }
}

static void heap_sort(point_t *a, long lo, long hi) {
  long n = hi - lo;
  for (long s = n / 2 - 1; s >= 0; s--)
    sift_down(a, lo, s, n);
  for (long end = n - 1; end > 0; end--) {
    point_t t = a[lo];
    a[lo] = a[lo + end];
    a[lo + end] = t;
    sift_down(a, lo, 0, end);
  }
}

static uint64_t median3(uint64_t x, uint64_t y, uint64_t z) {
  if (x < y) {
    if (y < z)
      return y;
    return x < z ? z : x;
  }
  if (x < z)
    return x;
  return y < z ? z : y;
}

// Hoare partition of [lo, hi) around the median of three keys; returns the split point p:
// every key in [lo, p) <= every key in [p, hi), and lo < p < hi.
static long partition(point_t *a, long lo, long hi) {
  long mid = lo + (hi - lo) / 2;
  uint64_t pivot = median3(hilbert_key(a[lo]), hilbert_key(a[mid]), hilbert_key(a[hi - 1]));
  long i = lo - 1, j = hi;
  for (;;) {
    do
      i++;
    while (hilbert_key(a[i]) < pivot);
    do
      j--;
    while (hilbert_key(a[j]) > pivot);
    if (i >= j)
      return j + 1;
    point_t t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

struct seq_stats {
  long partitions;
  long insertion_sorts;
  long heap_sorts;
};

static void intro_sort(point_t *a, long lo, long hi, int depth_left, struct seq_stats *st) {
  while (hi - lo > INSERTION_CUTOFF) {
    if (depth_left == 0) {
      heap_sort(a, lo, hi);
      st->heap_sorts++;
      return;
    }
    depth_left--;
    long p = partition(a, lo, hi);
    st->partitions++;
    // Recurse into the smaller side, loop on the larger one: O(log n) stack.
    if (p - lo < hi - p) {
      intro_sort(a, lo, p, depth_left, st);
      lo = p;
    } else {
      intro_sort(a, p, hi, depth_left, st);
      hi = p;
    }
  }
  insertion_sort(a, lo, hi);
  st->insertion_sorts++;
}

static int depth_limit(long n) {
  int d = 0;
  while (n > 1) {
    n >>= 1;
    d++;
  }
  return 2 * d + 4;
}

// ---------------------------------------------------------------------------------------------
// The shared task stack

struct task {
  long lo, hi;  // the range [lo, hi) of the array
  int depth;    // partition levels left before falling back to heapsort
};

struct task_stack {
  pthread_mutex_t lock;
  pthread_cond_t more;  // a task was pushed, or the sort is over
  struct task *items;
  int top;
  int cap;
  long pending;     // tasks pushed and not yet finished
  int idle;         // workers blocked in stack_pop
  long pushes;      // statistics, under lock
  int high_water;   // deepest the stack has been
  long idle_waits;  // how often a worker had to wait
};

static struct task_stack g_stack;
static int g_done;  // set once, by the worker that finishes the last task
static point_t *g_points;

static void stack_init(struct task_stack *s, int cap) {
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->more, NULL);
  s->items = malloc(sizeof(struct task) * (size_t)cap);
  if (!s->items) {
    perror("malloc");
    exit(1);
  }
  s->top = 0;
  s->cap = cap;
  s->pending = 0;
  s->idle = 0;
  s->pushes = 0;
  s->high_water = 0;
  s->idle_waits = 0;
}

static void stack_destroy(struct task_stack *s) {
  free(s->items);
  pthread_cond_destroy(&s->more);
  pthread_mutex_destroy(&s->lock);
}

// Pushes a task; the caller does not hold the lock.
static void stack_push(struct task_stack *s, struct task t) {
  pthread_mutex_lock(&s->lock);
  if (s->top == s->cap) {
    int ncap = s->cap * 2;
    struct task *n = realloc(s->items, sizeof(struct task) * (size_t)ncap);
    if (!n) {
      perror("realloc");
      exit(1);
    }
    s->items = n;
    s->cap = ncap;
  }
  s->items[s->top++] = t;
  if (s->top > s->high_water)
    s->high_water = s->top;
  s->pending++;
  s->pushes++;
  pthread_cond_signal(&s->more);
  pthread_mutex_unlock(&s->lock);
}

// Pops a task, waiting while the stack is empty and the sort is not over. Returns 0 when the
// sort is over (nothing left to do), 1 with *out filled otherwise.
static int stack_pop(struct task_stack *s, struct task *out) {
  pthread_mutex_lock(&s->lock);
  while (s->top == 0 && !g_done) {
    s->idle++;
    s->idle_waits++;
    pthread_cond_wait(&s->more, &s->lock);
    s->idle--;
  }
  if (s->top == 0) {
    pthread_mutex_unlock(&s->lock);
    return 0;
  }
  *out = s->items[--s->top];
  pthread_mutex_unlock(&s->lock);
  return 1;
}

// A worker finished the task it popped (its own share of the range; the halves it pushed are
// tasks of their own). The last one ends the sort.
static void task_finished(struct task_stack *s) {
  pthread_mutex_lock(&s->lock);
  s->pending--;
  if (s->pending == 0) {
    g_done = 1;  // RACE (write, under the lock): read without it in worker_main
    pthread_cond_broadcast(&s->more);
  }
  pthread_mutex_unlock(&s->lock);
}

// ---------------------------------------------------------------------------------------------
// Workers

struct worker {
  pthread_t thread;
  int id;
  long spawn_cutoff;
  point_t *scratch;     // private working copy of the range being sorted (room for every key)
  long tasks;          // tasks popped
  long spawned;        // halves pushed
  long keys_sorted;    // keys sorted sequentially
  long keys_copied;    // keys copied in and out of the scratch buffer
  struct seq_stats seq;
};

// Sorts the range of one task. The worker copies the range into its private scratch buffer,
// works there and copies results back: neighbouring ranges owned by different workers then never
// share a cache line while they are being sorted, and the shared array sees one copy in and one
// copy out per key and task. While the range in the scratch buffer is large, it is partitioned and
// the smaller side is written back to the array and pushed as a new task; the worker keeps the
// larger side. What is left at the end is sorted sequentially and written back.
static void sort_task(struct worker *w, struct task t) {
  long lo = t.lo, hi = t.hi;
  int depth = t.depth;
  point_t *buf = w->scratch;  // buf[0 .. hi-lo) mirrors g_points[lo .. hi)
  long off = 0;              // buf index of g_points[lo]
  memcpy(buf, g_points + lo, sizeof(point_t) * (size_t)(hi - lo));
  w->keys_copied += hi - lo;
  while (hi - lo > w->spawn_cutoff && depth > 0) {
    long p = lo + (partition(buf, off, off + (hi - lo)) - off);
    w->seq.partitions++;
    depth--;
    struct task half;
    if (p - lo < hi - p) {
      half = (struct task){lo, p, depth};
      memcpy(g_points + lo, buf + off, sizeof(point_t) * (size_t)(p - lo));
      off += p - lo;
      lo = p;
    } else {
      half = (struct task){p, hi, depth};
      memcpy(g_points + p, buf + off + (p - lo), sizeof(point_t) * (size_t)(hi - p));
      hi = p;
    }
    w->keys_copied += half.hi - half.lo;
    stack_push(&g_stack, half);
    w->spawned++;
  }
  intro_sort(buf, off, off + (hi - lo), depth, &w->seq);
  memcpy(g_points + lo, buf + off, sizeof(point_t) * (size_t)(hi - lo));
  w->keys_copied += hi - lo;
  w->keys_sorted += hi - lo;
}

static void *worker_main(void *arg) {
  struct worker *w = arg;
  for (;;) {
    if (g_done)  // RACE (read, no lock): fast exit; written under the lock in task_finished
      break;
    struct task t;
    if (!stack_pop(&g_stack, &t))
      break;
    w->tasks++;
    sort_task(w, t);
    task_finished(&g_stack);
  }
  return NULL;
}

// ---------------------------------------------------------------------------------------------
// main

int main(int argc, char **argv) {
  struct config cfg;
  if (parse_args(argc, argv, &cfg) != 0) {
    app_usage(usage, argv[0]);
    return 2;
  }

  g_points = malloc(sizeof(point_t) * (size_t)cfg.n);
  if (!g_points) {
    perror("malloc");
    return 1;
  }
  generate(g_points, cfg.n, (enum distribution)cfg.dist, (uint64_t)cfg.seed);
  if (cfg.dist == DIST_SORTED) {
    struct seq_stats ignored = {0, 0, 0};
    intro_sort(g_points, 0, cfg.n, depth_limit(cfg.n), &ignored);
  }
  struct fingerprint before = fingerprint_of(g_points, cfg.n);
  long descents_before = count_descents(g_points, cfg.n);
  uint64_t tour_before = tour_length(g_points, cfg.n);

  stack_init(&g_stack, 64);
  g_done = 0;
  // The whole array is the first task; it is pushed before any worker exists.
  stack_push(&g_stack, (struct task){0, cfg.n, depth_limit(cfg.n)});

  struct worker workers[MAX_WORKERS];
  double t0 = app_now_seconds();
  for (int i = 0; i < cfg.threads; i++) {
    memset(&workers[i], 0, sizeof workers[i]);
    workers[i].id = i;
    workers[i].spawn_cutoff = cfg.spawn_cutoff;
    // Allocated here, not by the worker, and freed after the join: a task can be as large as
    // the whole array, and no buffer changes hands while the workers run.
    workers[i].scratch = malloc(sizeof(point_t) * (size_t)cfg.n);
    if (!workers[i].scratch) {
      perror("malloc");
      return 1;
    }
    int rc = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
    if (rc != 0) {
      fprintf(stderr, "pthread_create: %s\n", strerror(rc));
      return 1;
    }
  }
  for (int i = 0; i < cfg.threads; i++)
    pthread_join(workers[i].thread, NULL);
  double elapsed = app_now_seconds() - t0;

  // Everything below runs after every worker is joined.
  struct fingerprint after = fingerprint_of(g_points, cfg.n);
  long descents_after = count_descents(g_points, cfg.n);
  uint64_t tour_after = tour_length(g_points, cfg.n);
  int same_points =
      before.sum == after.sum && before.xor_ == after.xor_ && before.mixed == after.mixed;

  long tasks = 0, spawned = 0, sorted_seq = 0, copied = 0;
  struct seq_stats seq = {0, 0, 0};
  for (int i = 0; i < cfg.threads; i++) {
    tasks += workers[i].tasks;
    spawned += workers[i].spawned;
    sorted_seq += workers[i].keys_sorted;
    copied += workers[i].keys_copied;
    seq.partitions += workers[i].seq.partitions;
    seq.insertion_sorts += workers[i].seq.insertion_sorts;
    seq.heap_sorts += workers[i].seq.heap_sorts;
    free(workers[i].scratch);
    if (cfg.verbose)
      fprintf(stderr, "worker %d: %ld tasks, %ld spawned, %ld points sorted sequentially\n", i,
              workers[i].tasks, workers[i].spawned, workers[i].keys_sorted);
  }
  if (cfg.verbose)
    fprintf(stderr, "sorted in %.3f s, stack high water %d, %ld idle waits\n", elapsed,
            g_stack.high_water, g_stack.idle_waits);

  // Only figures that do not depend on the schedule: the set of tasks and the partitions done
  // are a function of the input alone (each range is partitioned the same way by any worker).
  printf("hilbert sort: %ld points (%s), %ld workers, spawn cutoff %ld\n", cfg.n,
         dist_names[cfg.dist], cfg.threads, cfg.spawn_cutoff);
  printf("input:  %ld descents, tour %" PRIu64 ", fingerprint %016" PRIx64 "\n", descents_before,
         tour_before, before.mixed);
  printf("tasks: %ld (1 initial + %ld spawned), pushes %ld, partitions %ld, insertion sorts %ld, "
         "heapsorts %ld\n",
         tasks, spawned, g_stack.pushes, seq.partitions, seq.insertion_sorts, seq.heap_sorts);
  printf("points sorted sequentially: %ld, copied through scratch buffers: %ld\n", sorted_seq,
         copied);
  printf("output: %ld descents, tour %" PRIu64 ", fingerprint %016" PRIx64 ", %s\n",
         descents_after, tour_after, after.mixed, same_points ? "same points" : "POINTS CHANGED");
  printf("first (%u, %u), middle (%u, %u), last (%u, %u)\n", px(g_points[0]), py(g_points[0]),
         px(g_points[cfg.n / 2]), py(g_points[cfg.n / 2]), px(g_points[cfg.n - 1]),
         py(g_points[cfg.n - 1]));

  int ok = descents_after == 0 && same_points && tasks == spawned + 1 && sorted_seq == cfg.n &&
           g_stack.pending == 0 && g_stack.top == 0;
  printf("%s\n", ok ? "OK" : "FAILED");
  stack_destroy(&g_stack);
  free(g_points);
  return ok ? 0 : 1;
}
