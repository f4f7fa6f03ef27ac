// APP: lu: blocked dense LU factorization (no pivoting) of a diagonally dominant matrix stored
//      as contiguous B x B blocks, blocks owned by threads in a 2D scatter, two barriers per
//      step; verified by reconstructing sampled rows of A = LU and by solving A x = b
// CATEGORY: barrier
// EXPECT: none
// REORDER: no
// ARGS: -t 4 -n 1280 -b 32
// LIBS: -lm
//
// A SPLASH-2-style LU kernel ("contiguous blocks" variant). The n x n matrix is cut into
// nb x nb blocks of B x B doubles; every block is stored contiguously, and block (I, J) belongs
// to thread (I mod pr) * pc + (J mod pc) of a pr x pc grid of threads, which alone writes it.
// Each thread first fills its own blocks with the generated matrix. Step k of the right-looking
// factorization is
//
//   1. the owner of the diagonal block (k, k) factors it in place (L unit lower, U upper);
//   -- barrier --
//   2. the owners of the perimeter blocks update them: row blocks (k, J), J > k, become
//      U_kJ = L_kk^-1 A_kJ, column blocks (I, k), I > k, become L_Ik = A_Ik U_kk^-1;
//   -- barrier --
//   3. the owners of the interior blocks (I, J), I, J > k, subtract L_Ik U_kJ.
//
// There is no barrier between step 3 and the next step's 1: the diagonal block (k+1, k+1) is
// updated in 3 and factored in 1 by the same thread, nobody else touches it until the barrier
// after 1, and every thread passes that barrier only after its own step 3. The blocks the
// interior update reads (row k and column k) are final after step 2 and never written again.
//
// Race- and deadlock-free: a block is only written by its owner, and every read of another
// thread's block is separated from that block's writes by one of the barriers above.
// Verification (main, after the joins): sampled rows of L*U against the generated A, the
// residual of A x = b solved with the factors (b = A * [1, 2, 3, ...]), and a checksum
// (log |det A| = sum log |U_ii|) that does not depend on the number of threads.
#include <math.h>

#include "app_common.h"

#define MAX_THREADS 64
#define NSAMPLE_ROWS 8
#define CACHE_LINE 64

struct per_thread {
  _Alignas(CACHE_LINE) long blocks_owned;
  long diag_factored;
  long perimeter_updates;
  long interior_updates;
  double flops;
};

static struct {
  int n, b, nb;        /* matrix order, block order, blocks per dimension */
  int nthreads, pr, pc; /* thread grid pr x pc */
  double *blocks;      /* nb * nb blocks of b * b doubles, block (I, J) at (I * nb + J) * b * b */
  uint64_t seed;
  struct per_thread *slots;
  pthread_barrier_t barrier;
} g;

/* ------------------------------------------------------------------------------------------ */
/* The matrix                                                                                   */

/* Entry (i, j) of A: uniform in [-1, 1), plus n on the diagonal (diagonally dominant, so the
 * factorization without pivoting is stable). A pure function of (seed, i, j). */
static double a_entry(int i, int j) {
  uint64_t key = g.seed ^ ((uint64_t)(unsigned)i << 32 | (unsigned)j);
  double u = (double)(app_splitmix64(key) >> 11) / 9007199254740992.0;
  double v = 2.0 * u - 1.0;
  if (i == j)
    v += (double)g.n;
  return v;
}

static inline double *block_at(int bi, int bj) {
  return g.blocks + ((size_t)bi * (size_t)g.nb + (size_t)bj) * (size_t)g.b * (size_t)g.b;
}

/* Element (i, j) of the factored matrix (L below the diagonal, U on and above it). */
static inline double elem(int i, int j) {
  int b = g.b;
  return block_at(i / b, j / b)[(i % b) * b + (j % b)];
}

static inline int owner_of(int bi, int bj) { return (bi % g.pr) * g.pc + (bj % g.pc); }

/* ------------------------------------------------------------------------------------------ */
/* Block kernels (all blocks b x b, row-major inside the block)                                 */

/* In-place LU of a diagonal block: a = L U, L unit lower (stored below the diagonal). */
static void factor_diag(double *a, int b) {
  for (int k = 0; k < b; k++) {
    double pivot = a[k * b + k];
    const double *rowk = a + k * b;
    for (int i = k + 1; i < b; i++) {
      double *rowi = a + i * b;
      double l = rowi[k] / pivot;
      rowi[k] = l;
      for (int j = k + 1; j < b; j++)
        rowi[j] -= l * rowk[j];
    }
  }
}

/* Row perimeter block: x := L^-1 x with L the unit lower part of the factored diagonal block d
 * (forward substitution on all columns at once). */
static void solve_lower(const double *d, double *x, int b) {
  for (int i = 1; i < b; i++) {
    double *xi = x + i * b;
    for (int p = 0; p < i; p++) {
      double l = d[i * b + p];
      const double *xp = x + p * b;
      for (int j = 0; j < b; j++)
        xi[j] -= l * xp[j];
    }
  }
}

/* Column perimeter block: x := x U^-1 with U the upper part of the factored diagonal block d
 * (each row of x solved against U from the left). */
static void solve_upper(const double *d, double *x, int b) {
  for (int r = 0; r < b; r++) {
    double *xr = x + r * b;
    for (int p = 0; p < b; p++) {
      double v = xr[p] / d[p * b + p];
      xr[p] = v;
      const double *up = d + p * b;
      for (int j = p + 1; j < b; j++)
        xr[j] -= v * up[j];
    }
  }
}

/* Interior block: c -= l * u. */
static void update_interior(double *restrict c, const double *restrict l,
                            const double *restrict u, int b) {
  for (int i = 0; i < b; i++) {
    double *ci = c + i * b;
    const double *li = l + i * b;
    for (int p = 0; p < b; p++) {
      double f = li[p];
      const double *up = u + p * b;
      for (int j = 0; j < b; j++)
        ci[j] -= f * up[j];
    }
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Threads                                                                                      */

static void fill_block(int bi, int bj) {
  int b = g.b;
  double *blk = block_at(bi, bj);
  for (int r = 0; r < b; r++)
    for (int c = 0; c < b; c++)
      blk[r * b + c] = a_entry(bi * b + r, bj * b + c);
}

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg;
  int nb = g.nb, b = g.b;
  struct per_thread *me = &g.slots[id];
  double bf = (double)b;
  long owned = 0, diag = 0, perim = 0, inter = 0;
  double flops = 0.0;

  /* Each thread initializes the blocks it owns (first touch). */
  for (int bi = 0; bi < nb; bi++)
    for (int bj = 0; bj < nb; bj++)
      if (owner_of(bi, bj) == id) {
        fill_block(bi, bj);
        owned++;
      }
  pthread_barrier_wait(&g.barrier);

  for (int k = 0; k < nb; k++) {
    double *dkk = block_at(k, k);

    /* 1. the diagonal block */
    if (owner_of(k, k) == id) {
      factor_diag(dkk, b);
      diag++;
      flops += 2.0 * bf * bf * bf / 3.0;
    }
    pthread_barrier_wait(&g.barrier);

    /* 2. the perimeter: row k to the right, column k below */
    for (int j = k + 1; j < nb; j++) {
      if (owner_of(k, j) == id) {
        solve_lower(dkk, block_at(k, j), b);
        perim++;
        flops += bf * bf * bf;
      }
    }
    for (int i = k + 1; i < nb; i++) {
      if (owner_of(i, k) == id) {
        solve_upper(dkk, block_at(i, k), b);
        perim++;
        flops += bf * bf * bf;
      }
    }
    pthread_barrier_wait(&g.barrier);

    /* 3. the interior */
    for (int i = k + 1; i < nb; i++) {
      const double *lik = block_at(i, k);
      for (int j = k + 1; j < nb; j++) {
        if (owner_of(i, j) != id)
          continue;
        update_interior(block_at(i, j), lik, block_at(k, j), b);
        inter++;
        flops += 2.0 * bf * bf * bf;
      }
    }
  }

  me->blocks_owned = owned;
  me->diag_factored = diag;
  me->perimeter_updates = perim;
  me->interior_updates = inter;
  me->flops = flops;
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Verification (main, serial)                                                                  */

/* Row i of L U into out[0..n): sum over p <= i of L(i, p) * U(p, :), with L(i, i) = 1 and
 * U(p, j) = 0 for j < p. Sweeps the rows of U (the matrix is row-contiguous inside blocks). */
static void lu_row(int i, double *out) {
  int n = g.n;
  for (int j = 0; j < n; j++)
    out[j] = 0.0;
  for (int p = 0; p <= i; p++) {
    double l = p == i ? 1.0 : elem(i, p);
    for (int j = p; j < n; j++)
      out[j] += l * elem(p, j);
  }
}

/* Solves L U x = rhs in place (forward, then backward substitution). */
static void lu_solve(double *x, int n) {
  for (int i = 0; i < n; i++) {
    double s = x[i];
    for (int p = 0; p < i; p++)
      s -= elem(i, p) * x[p];
    x[i] = s;
  }
  for (int i = n - 1; i >= 0; i--) {
    double s = x[i];
    for (int p = i + 1; p < n; p++)
      s -= elem(i, p) * x[p];
    x[i] = s / elem(i, i);
  }
}

static const char usage[] =
    "usage: %s [-t THREADS] [-n ORDER] [-b BLOCK] [-s SEED]\n"
    "  factors an ORDER x ORDER matrix in BLOCK x BLOCK blocks (BLOCK divides ORDER)\n";

int main(int argc, char **argv) {
  long nthreads = 4, n = 1280, b = 32, seed = 1995;
  const struct app_opt opts[] = {
      APP_OPT("-t", nthreads, 1, MAX_THREADS),
      APP_OPT("-n", n, 1, 8192),
      APP_OPT("-b", b, 1, 256),
      APP_OPT("-s", seed, 0, 1L << 40),
  };
  if (app_parse_opts(argc, argv, opts, APP_NOPTS(opts), 0) != 0 || n % b != 0) {
    app_usage(usage, argv[0]);
    return 2;
  }

  g.n = (int)n;
  g.b = (int)b;
  g.nb = (int)(n / b);
  g.nthreads = (int)nthreads;
  g.seed = (uint64_t)seed * 0x2545f4914f6cdd1dULL;
  /* The most square grid pr x pc = nthreads with pr <= pc. */
  g.pr = 1;
  for (int d = 1; d * d <= g.nthreads; d++)
    if (g.nthreads % d == 0)
      g.pr = d;
  g.pc = g.nthreads / g.pr;

  g.blocks = malloc((size_t)n * (size_t)n * sizeof(double));
  g.slots = aligned_alloc(CACHE_LINE, (size_t)nthreads * sizeof(struct per_thread));
  if (!g.blocks || !g.slots) {
    perror("lu: malloc");
    return 1;
  }
  memset(g.slots, 0, (size_t)nthreads * sizeof(struct per_thread));

  if (app_run_workers("lu", nthreads, worker, &g.barrier) != 0)
    return 1;

  /* Work accounting: every block op done exactly once. */
  long owned = 0, diag = 0, perim = 0, inter = 0;
  double flops = 0.0;
  for (long t = 0; t < nthreads; t++) {
    owned += g.slots[t].blocks_owned;
    diag += g.slots[t].diag_factored;
    perim += g.slots[t].perimeter_updates;
    inter += g.slots[t].interior_updates;
    flops += g.slots[t].flops;
  }
  long nbl = g.nb;
  long want_perim = nbl * (nbl - 1);
  long want_inter = (nbl - 1) * nbl * (2 * nbl - 1) / 6;
  int failures = 0;
  if (owned != nbl * nbl || diag != nbl || perim != want_perim || inter != want_inter) {
    fprintf(stderr, "lu: block counts %ld/%ld/%ld/%ld, expected %ld/%ld/%ld/%ld\n", owned, diag,
            perim, inter, nbl * nbl, nbl, want_perim, want_inter);
    failures++;
  }

  /* Sampled rows of L U against A: the first and last rows and a few in between. */
  double worst = 0.0;
  double *row = malloc((size_t)n * sizeof(double));
  if (!row) {
    perror("lu: malloc");
    return 1;
  }
  uint64_t state = 0x5eed;
  for (int s = 0; s < NSAMPLE_ROWS; s++) {
    state = app_splitmix64(state);
    int i = s == 0 ? 0 : s == 1 ? (int)n - 1 : (int)(state % (uint64_t)n);
    lu_row(i, row);
    for (int j = 0; j < n; j++) {
      double err = fabs(row[j] - a_entry(i, j));
      if (err > worst)
        worst = err;
    }
  }
  free(row);
  if (worst > 1e-9 * (double)n) {
    fprintf(stderr, "lu: |LU - A| up to %.3e on the sampled rows\n", worst);
    failures++;
  }

  /* Solve A x = b with b = A * (1, 2, ..., n) / n; the solution must come back. */
  double *x = malloc((size_t)n * sizeof(double));
  if (!x) {
    perror("lu: malloc");
    return 1;
  }
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int j = 0; j < n; j++)
      s += a_entry(i, j) * (double)(j + 1) / (double)n;
    x[i] = s;
  }
  lu_solve(x, (int)n);
  double sol_err = 0.0;
  for (int i = 0; i < n; i++) {
    double e = fabs(x[i] - (double)(i + 1) / (double)n);
    if (e > sol_err)
      sol_err = e;
  }
  if (sol_err > 1e-10) {
    fprintf(stderr, "lu: solution error %.3e\n", sol_err);
    failures++;
  }

  /* log |det A| and a checksum of U's diagonal and of L's last row. */
  double logdet = 0.0, lsum = 0.0;
  int negatives = 0;
  for (int i = 0; i < n; i++) {
    double u = elem(i, i);
    logdet += log(fabs(u));
    negatives += u < 0.0;
  }
  for (int j = 0; j < n - 1; j++)
    lsum += elem((int)n - 1, j);

  printf("lu: n = %ld, block %ld (%d x %d blocks), %ld threads on a %d x %d grid\n", n, b, g.nb,
         g.nb, nthreads, g.pr, g.pc);
  printf("block ops: %ld diagonal, %ld perimeter, %ld interior; %.1f Mflop\n", diag, perim, inter,
         flops / 1e6);
  printf("log|det A| = %.10f, sign %s, L last row sum %.10f\n", logdet,
         negatives % 2 ? "-" : "+", lsum);
  printf("A = LU on %d sampled rows: %s; A x = b: %s\n", NSAMPLE_ROWS,
         worst <= 1e-9 * (double)n ? "ok" : "WRONG", sol_err <= 1e-10 ? "ok" : "WRONG");
  printf("verification: %s\n", failures == 0 ? "PASSED" : "FAILED");

  free(x);
  free(g.slots);
  free(g.blocks);
  return failures == 0 ? 0 : 1;
}
