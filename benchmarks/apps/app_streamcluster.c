// APP: streamcluster: online k-median clustering of a generated point stream, chunk by chunk:
//      worker threads generate and assign their slice of each chunk, evaluate candidate centers
//      over it, and the best candidate is chosen through a shared best gain updated under a lock
//      (with an unlocked fast-path read of it: the race); barriers separate the phases
// CATEGORY: barrier-lock
// EXPECT: race 200 203
// REORDER: no
// ARGS: -t 4 -n 131072 -c 16384 -r 12
// LIBS: -lm
//
// A PARSEC-streamcluster-style kernel. A stream of points in DIM dimensions, drawn from a mixture
// of K Gaussian clusters, arrives in chunks of CHUNK points. The clustering keeps a growing set
// of weighted centers (facilities). For each chunk, each of T threads owns a contiguous slice of
// the chunk and keeps its points, their current cost (distance to the nearest center) and
// assignment on its own stack; the shared state is the chunk's points (for the candidates), the
// centers, the per-thread partial gains, the best candidate and the accumulated weights. A chunk:
//
//   G. each thread generates its slice (a pure function of the global point index, so the
//      stream does not depend on T), publishes it into the shared chunk, and assigns each point
//      to its nearest existing center;
//   -- barrier --
//   then ROUNDS rounds of a local search (as in PARSEC's pgain, one candidate opened per round):
//   E. each thread computes, for each of the round's NCAND candidate points, the gain of opening
//      it over its own slice (sum of max(0, cost_i - d(i, candidate))), into its row of the
//      shared partial-gain table;
//   -- barrier --
//   R. thread t sums the partial gains of the candidates c = t (mod T) in thread order and
//      offers each to the shared best (highest gain, then lowest index) under best_lock, after
//      an unlocked fast-path check against the current best;
//   -- barrier --
//   thread 0 alone: if the best gain exceeds the facility cost Z, opens the candidate as a new
//   center; resets the best;
//   -- barrier --
//   A. each thread reassigns its points that are closer to the new center.
//   After the last round each thread adds its assignment counts into the centers' weights and
//   its slice cost into the stream cost, under center_lock.
//
// No barrier is needed between A and the next round's E (E reads the thread's own costs and the
// unchanged chunk) nor between chunks (the chunk's points were last read before the round's last
// barrier; centers were last written before it).
//
// The deliberate race: phase R reads g.best_gain without the lock as a fast path (line 200,
// `if (total >= g.best_gain)`) while another thread may be writing it under best_lock (line 203,
// `g.best_gain = total;`). The fast path only skips candidates that are already beaten, and the
// decision is made again under the lock, so the result is the same in every run; the read is
// still a data race (in C11 terms undefined behaviour, and on weaker hardware a torn or stale
// read). Every other shared access is ordered by a barrier, a lock, create or join.
//
// Verification (main): every point is counted exactly once in the center weights; a final
// weighted k-means of the centers (serial) recovers each true cluster mean within a tolerance;
// the output (centers opened per chunk, stream cost, final centers) is deterministic.
#include <math.h>

#include "app_common.h"

#define DIM 8
#define MAX_THREADS 16
#define MAX_SLICE 8192    /* points per thread and chunk (the slice lives on the thread's stack) */
#define MAX_CHUNK 65536
#define MAX_CENTERS 512
#define NCAND 16          /* candidates evaluated per round */
#define NCLUSTERS 10      /* true clusters of the generated stream, and the final k */
#define FACILITY_COST 1500.0
#define FIXED_SCALE 65536.0
#define CACHE_LINE 64

struct gain_row {
  _Alignas(CACHE_LINE) double gain[NCAND];
};

static struct {
  int nthreads, chunk, rounds;
  long npoints;
  int nchunks;
  double means[NCLUSTERS][DIM]; /* the generator's true cluster means (read-only) */
  double sigma[NCLUSTERS];
  double *points;                 /* the current chunk, chunk x DIM, written in G by owners */
  double centers[MAX_CENTERS][DIM]; /* written by thread 0 between barriers */
  int ncenters;
  long center_weight[MAX_CENTERS]; /* under center_lock */
  int64_t center_sum[MAX_CENTERS][DIM]; /* under center_lock: coordinates of the members */
  int64_t stream_cost_fixed;       /* under center_lock */
  struct gain_row *partial;        /* [thread]: partial gains of the round's candidates */
  double best_gain;                /* under best_lock (but see the fast path) */
  int best_cand;                   /* under best_lock */
  int opened;                      /* the round's new center, or -1; thread 0 */
  int *opened_per_chunk;           /* thread 0 */
  pthread_mutex_t best_lock;
  pthread_mutex_t center_lock;
  pthread_barrier_t barrier;
} g;

/* ------------------------------------------------------------------------------------------ */
/* The stream                                                                                   */

static inline double uniform01(uint64_t key) {
  return ((double)(app_splitmix64(key) >> 11) + 0.5) / 9007199254740992.0;
}

/* Point p of the stream, coordinate by coordinate (Box-Muller on keyed uniforms). */
static inline __attribute__((always_inline)) void generate_point(long p, double *out) {
  uint64_t base = (uint64_t)p * 64;
  int cl = (int)(app_splitmix64(base ^ 0xc1a57e7ULL) % NCLUSTERS);
  for (int d = 0; d < DIM; d += 2) {
    double u1 = uniform01(base + (uint64_t)d), u2 = uniform01(base + (uint64_t)d + 1);
    double rad = sqrt(-2.0 * log(u1)) * g.sigma[cl];
    out[d] = g.means[cl][d] + rad * cos(2.0 * M_PI * u2);
    if (d + 1 < DIM)
      out[d + 1] = g.means[cl][d + 1] + rad * sin(2.0 * M_PI * u2);
  }
}

static void make_clusters(void) {
  for (int c = 0; c < NCLUSTERS; c++) {
    for (int d = 0; d < DIM; d++)
      g.means[c][d] = 100.0 * uniform01(0xabcdef00ULL + (uint64_t)c * DIM + (uint64_t)d);
    g.sigma[c] = 1.5 + 2.5 * uniform01(0x5151ULL + (uint64_t)c);
  }
}

static inline __attribute__((always_inline)) double dist(const double *a, const double *b) {
  double s = 0.0;
  for (int d = 0; d < DIM; d++) {
    double t = a[d] - b[d];
    s += t * t;
  }
  return sqrt(s);
}

/* The chunk-local index of candidate c of round r of chunk k. */
static inline int candidate(int k, int r, int c) {
  uint64_t key = ((uint64_t)k << 40) ^ ((uint64_t)r << 20) ^ (uint64_t)c ^ 0x77ULL;
  return (int)(app_splitmix64(key) % (uint64_t)g.chunk);
}

static inline int64_t to_fixed(double v) { return (int64_t)llrint(v * FIXED_SCALE); }

/* ------------------------------------------------------------------------------------------ */
/* Threads                                                                                      */

static void slice_of(int id, int *first, int *last) {
  int base = g.chunk / g.nthreads, extra = g.chunk % g.nthreads;
  *first = id * base + (id < extra ? id : extra);
  *last = *first + base + (id < extra ? 1 : 0);
}

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg;
  int first, last;
  slice_of(id, &first, &last);
  int len = last - first;
  /* The thread's working set, on its own stack. */
  double mine[MAX_SLICE][DIM];
  double cost[MAX_SLICE];
  int assign[MAX_SLICE];
  long count[MAX_CENTERS];
  double coord_sum[MAX_CENTERS][DIM];

  for (int k = 0; k < g.nchunks; k++) {
    /* G. generate the slice, publish it, assign it to the nearest existing center. */
    int nc = g.ncenters;
    for (int i = 0; i < len; i++) {
      generate_point((long)k * g.chunk + first + i, mine[i]);
      memcpy(&g.points[(size_t)(first + i) * DIM], mine[i], sizeof mine[i]);
      double best = INFINITY;
      int arg_best = -1;
      for (int c = 0; c < nc; c++) {
        double d = dist(mine[i], g.centers[c]);
        if (d < best) {
          best = d;
          arg_best = c;
        }
      }
      cost[i] = best;
      assign[i] = arg_best;
    }
    pthread_barrier_wait(&g.barrier);

    for (int r = 0; r < g.rounds; r++) {
      /* E. partial gains of the round's candidates over the slice. */
      for (int c = 0; c < NCAND; c++) {
        double cand[DIM];
        memcpy(cand, &g.points[(size_t)candidate(k, r, c) * DIM], sizeof cand);
        double gain = 0.0;
        for (int i = 0; i < len; i++) {
          double d = dist(mine[i], cand);
          if (d < cost[i])
            gain += cost[i] - d;
        }
        g.partial[id].gain[c] = gain;
      }
      pthread_barrier_wait(&g.barrier);

      /* R. totals of this thread's candidates, offered to the shared best. */
      for (int c = id; c < NCAND; c += g.nthreads) {
        double total = 0.0;
        for (int t = 0; t < g.nthreads; t++)
          total += g.partial[t].gain[c];
        int cand = candidate(k, r, c);
        if (total >= g.best_gain) { /* fast path, without the lock: the race */
          pthread_mutex_lock(&g.best_lock);
          if (total > g.best_gain || (total == g.best_gain && cand < g.best_cand)) {
            g.best_gain = total;
            g.best_cand = cand;
          }
          pthread_mutex_unlock(&g.best_lock);
        }
      }
      pthread_barrier_wait(&g.barrier);

      /* Thread 0: open the best candidate if it pays for itself; reset the best. */
      if (id == 0) {
        g.opened = -1;
        if (g.best_gain > FACILITY_COST && g.ncenters < MAX_CENTERS) {
          memcpy(g.centers[g.ncenters], &g.points[(size_t)g.best_cand * DIM],
                 sizeof g.centers[0]);
          g.opened = g.ncenters++;
          g.opened_per_chunk[k]++;
        }
        g.best_gain = -1.0;
        g.best_cand = -1;
      }
      pthread_barrier_wait(&g.barrier);

      /* A. reassign the slice's points that the new center serves better. */
      int o = g.opened;
      if (o >= 0) {
        double center[DIM];
        memcpy(center, g.centers[o], sizeof center);
        for (int i = 0; i < len; i++) {
          double d = dist(mine[i], center);
          if (d < cost[i]) {
            cost[i] = d;
            assign[i] = o;
          }
        }
      }
    }

    /* End of the chunk: the slice's members of each center (count and coordinate sums, for
     * the centroids) and its cost. */
    int ncent = g.ncenters;
    memset(count, 0, (size_t)ncent * sizeof count[0]);
    memset(coord_sum, 0, (size_t)ncent * sizeof coord_sum[0]);
    double slice_cost = 0.0;
    for (int i = 0; i < len; i++) {
      int a = assign[i];
      count[a]++;
      for (int d = 0; d < DIM; d++)
        coord_sum[a][d] += mine[i][d];
      slice_cost += cost[i];
    }
    pthread_mutex_lock(&g.center_lock);
    for (int c = 0; c < ncent; c++) {
      if (count[c] == 0)
        continue;
      g.center_weight[c] += count[c];
      for (int d = 0; d < DIM; d++)
        g.center_sum[c][d] += to_fixed(coord_sum[c][d]);
    }
    g.stream_cost_fixed += to_fixed(slice_cost);
    pthread_mutex_unlock(&g.center_lock);
  }
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Final clustering of the weighted centers (main, serial)                                      */

/* Weighted k-means of the centers' centroids (the mean of the points each center served) into
 * k clusters, seeded from the heaviest center, then each time with the centroid of the largest
 * weight * squared distance to the seeds so far (a deterministic k-means++); returns the weighted cost (sum of
 * weight * distance to the final center). */
static double centroid[MAX_CENTERS][DIM];

static double final_clustering(double out[NCLUSTERS][DIM], int k) {
  int n = g.ncenters;
  for (int c = 0; c < n; c++)
    for (int d = 0; d < DIM; d++)
      centroid[c][d] = g.center_weight[c] == 0 ? g.centers[c][d]
                                               : (double)g.center_sum[c][d] / FIXED_SCALE /
                                                     (double)g.center_weight[c];
  int heaviest = 0;
  for (int c = 1; c < n; c++)
    if (g.center_weight[c] > g.center_weight[heaviest])
      heaviest = c;
  memcpy(out[0], centroid[heaviest], sizeof out[0]);
  for (int s = 1; s < k; s++) {
    int far = 0;
    double far_d = -1.0;
    for (int c = 0; c < n; c++) {
      if (g.center_weight[c] == 0)
        continue;
      double best = INFINITY;
      for (int j = 0; j < s; j++) {
        double d = dist(centroid[c], out[j]);
        if (d < best)
          best = d;
      }
      best *= best * (double)g.center_weight[c]; /* weight * squared distance, as k-means++ */
      if (best > far_d) {
        far_d = best;
        far = c;
      }
    }
    memcpy(out[s], centroid[far], sizeof out[s]);
  }
  double total = 0.0;
  for (int iter = 0; iter < 50; iter++) {
    double sum[NCLUSTERS][DIM];
    double wsum[NCLUSTERS];
    memset(sum, 0, sizeof sum);
    memset(wsum, 0, sizeof wsum);
    total = 0.0;
    for (int c = 0; c < n; c++) {
      double w = (double)g.center_weight[c];
      if (w == 0.0)
        continue;
      int best_j = 0;
      double best = INFINITY;
      for (int j = 0; j < k; j++) {
        double d = dist(centroid[c], out[j]);
        if (d < best) {
          best = d;
          best_j = j;
        }
      }
      total += w * best;
      wsum[best_j] += w;
      for (int d = 0; d < DIM; d++)
        sum[best_j][d] += w * centroid[c][d];
    }
    for (int j = 0; j < k; j++)
      if (wsum[j] > 0.0)
        for (int d = 0; d < DIM; d++)
          out[j][d] = sum[j][d] / wsum[j];
  }
  return total;
}

static int cmp_rows(const void *a, const void *b) {
  const double *x = a, *y = b;
  for (int d = 0; d < DIM; d++)
    if (x[d] != y[d])
      return x[d] < y[d] ? -1 : 1;
  return 0;
}

static const char usage[] =
    "usage: %s [-t THREADS] [-n POINTS] [-c CHUNK] [-r ROUNDS]\n"
    "  clusters POINTS stream points in chunks of CHUNK (dividing POINTS), ROUNDS local\n"
    "  search rounds per chunk (>= %d); CHUNK / THREADS <= %d\n";

int main(int argc, char **argv) {
  long nthreads = 4, npoints = 131072, chunk = 16384, rounds = 12;
  const struct app_opt opts[] = {
      APP_OPT("-t", nthreads, 1, MAX_THREADS),
      APP_OPT("-n", npoints, 1, 1L << 30),
      APP_OPT("-c", chunk, NCAND, MAX_CHUNK),
      APP_OPT("-r", rounds, 1, 1000),
  };
  /* The local search opens at most one center per round: the first chunk needs a few more
   * rounds than the stream has clusters, or it ends with mixed centers. */
  if (app_parse_opts(argc, argv, opts, APP_NOPTS(opts), 0) != 0 || npoints % chunk != 0 ||
      (chunk + nthreads - 1) / nthreads > MAX_SLICE || rounds < NCLUSTERS + 2) {
    app_usage(usage, argv[0], NCLUSTERS + 2, MAX_SLICE);
    return 2;
  }
  g.nthreads = (int)nthreads;
  g.npoints = npoints;
  g.chunk = (int)chunk;
  g.rounds = (int)rounds;
  g.nchunks = (int)(npoints / chunk);
  make_clusters();

  g.points = malloc((size_t)chunk * DIM * sizeof(double));
  g.partial = aligned_alloc(CACHE_LINE, (size_t)nthreads * sizeof(struct gain_row));
  g.opened_per_chunk = calloc((size_t)g.nchunks, sizeof(int));
  if (!g.points || !g.partial || !g.opened_per_chunk) {
    perror("streamcluster: malloc");
    return 1;
  }
  memset(g.partial, 0, (size_t)nthreads * sizeof(struct gain_row));
  /* The first facility: the stream's first point (as the speedy initial solution would). */
  generate_point(0, g.centers[0]);
  g.ncenters = 1;
  g.best_gain = -1.0;
  g.best_cand = -1;

  pthread_mutex_init(&g.best_lock, NULL);
  pthread_mutex_init(&g.center_lock, NULL);
  if (app_run_workers("streamcluster", nthreads, worker, &g.barrier) != 0)
    return 1;
  pthread_mutex_destroy(&g.center_lock);
  pthread_mutex_destroy(&g.best_lock);

  /* Verification. */
  int failures = 0;
  long weight = 0;
  for (int c = 0; c < g.ncenters; c++)
    weight += g.center_weight[c];
  if (weight != npoints) {
    fprintf(stderr, "streamcluster: centers weigh %ld points, the stream had %ld\n", weight,
            npoints);
    failures++;
  }
  double final[NCLUSTERS][DIM];
  double final_cost = final_clustering(final, NCLUSTERS);
  qsort(final, NCLUSTERS, sizeof final[0], cmp_rows);
  double worst = 0.0;
  for (int c = 0; c < NCLUSTERS; c++) {
    double best = INFINITY;
    for (int j = 0; j < NCLUSTERS; j++) {
      double d = dist(g.means[c], final[j]);
      if (d < best)
        best = d;
    }
    if (best > worst)
      worst = best;
  }
  if (worst > 2.0) {
    fprintf(stderr, "streamcluster: a true cluster mean is %.3f away from every final center\n",
            worst);
    failures++;
  }

  printf("streamcluster: %ld points of dimension %d in %d chunks of %d, %d rounds x %d "
         "candidates, %ld threads\n",
         npoints, DIM, g.nchunks, g.chunk, g.rounds, NCAND, nthreads);
  printf("centers opened per chunk:");
  for (int k = 0; k < g.nchunks; k++)
    printf(" %d", g.opened_per_chunk[k]);
  printf("  (%d in all)\n", g.ncenters);
  printf("stream cost %.3f (mean distance to its center %.4f)\n",
         (double)g.stream_cost_fixed / FIXED_SCALE,
         (double)g.stream_cost_fixed / FIXED_SCALE / (double)npoints);
  printf("final weighted %d-means of the centers: cost %.3f\n", NCLUSTERS, final_cost);
  for (int j = 0; j < NCLUSTERS; j++) {
    printf("  center %d:", j);
    for (int d = 0; d < DIM; d++)
      printf(" %8.3f", final[j][d]);
    printf("\n");
  }
  printf("every true mean within %.3f of a final center (limit 2.0)\n", worst);
  printf("verification: %s\n", failures == 0 ? "PASSED" : "FAILED");

  free(g.opened_per_chunk);
  free(g.partial);
  free(g.points);
  return failures == 0 ? 0 : 1;
}
