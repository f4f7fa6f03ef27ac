// APP: fft: parallel complex 1D FFT of N = m*m points by the six-step method (transpose, row
//      FFTs, twiddle, transpose, row FFTs, transpose), rows owned by threads, barriers between
//      the steps; a forward and an inverse transform, verified against a direct DFT and the input
// CATEGORY: barrier
// EXPECT: none
// REORDER: no
// ARGS: -t 4 -m 512 -i 6
// LIBS: -lm
//
// A SPLASH-2-style FFT kernel. The N = m*m complex points are viewed as an m x m row-major
// matrix. Each of T threads owns a contiguous band of rows (of every matrix: the data, the
// scratch matrix and the twiddle matrix) and only ever writes its own rows. One transform is
//
//   1. transpose src -> dst (the thread fills its own rows of dst, reading columns of src);
//   2. an m-point FFT of each own row of dst, then multiply it by the twiddles W_N^(row*col);
//   -- barrier --
//   3. transpose dst -> src;
//   4. an m-point FFT of each own row of src;
//   -- barrier --
//   5. transpose src -> dst: dst holds the transform in natural order;
//   -- barrier --
//
// Every transpose reads other threads' rows, so a barrier separates it from the steps that last
// wrote them (and from the next write of the rows it reads). The row FFT is a radix-2 Stockham
// autosort FFT (no bit reversal) written so that every array it touches is swept with unit
// stride, with a per-stage root table; the transposes go through a 32x32 tile on the stack.
//
// Phases of a thread: initialize its rows of the twiddle matrix and of the input (a generated
// signal: a few pure tones plus deterministic noise), keep a copy of the input; then I times:
// forward transform x -> y, record the energy of its rows of the spectrum and the sampled bins
// it owns, inverse transform y -> x, scale by 1/N and measure the round-trip error of its rows.
// Per-thread results go to the thread's own slot; main reads them after the joins.
//
// Race- and deadlock-free: cross-thread reads happen only in the transposes, each one between
// two barriers that order it after the writes of the rows it reads and before their next writes.
// Verification (main): sampled spectrum bins against a direct O(N) DFT of the input, Parseval's
// identity, the tones' bins standing out as the spectrum's peaks, and the round-trip error.
#include <math.h>

#include "app_common.h"

#define MAX_THREADS 64
#define TILE 32
#define NSAMPLES 12
#define NTONES 3
#define CACHE_LINE 64

typedef struct {
  double re, im;
} cpx;

static inline cpx c_add(cpx a, cpx b) { return (cpx){a.re + b.re, a.im + b.im}; }
static inline cpx c_sub(cpx a, cpx b) { return (cpx){a.re - b.re, a.im - b.im}; }
static inline cpx c_mul(cpx a, cpx b) {
  return (cpx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
static inline cpx c_conj(cpx a) { return (cpx){a.re, -a.im}; }
static inline cpx c_scale(cpx a, double s) { return (cpx){a.re * s, a.im * s}; }
static inline double c_abs2(cpx a) { return a.re * a.re + a.im * a.im; }

/* ------------------------------------------------------------------------------------------ */
/* Problem, shared state                                                                       */

struct tone {
  long bin;   /* frequency index in [0, N) */
  double amp; /* amplitude */
  double phase;
};

static const struct tone tones_template[NTONES] = {
    {0, 40.0, 0.3}, /* bins filled in from N at start-up */
    {0, 25.0, 1.1},
    {0, 15.0, 2.0},
};

struct per_thread {
  /* sum |X_k|^2 over the thread's rows of the last forward transform (aligned: one slot per
   * thread, no false sharing) */
  _Alignas(CACHE_LINE) double spectrum_energy;
  double input_energy;   /* sum |x_j|^2 over its rows of the input */
  double max_roundtrip;  /* max |x - ifft(fft(x))| over its rows and all iterations */
  long peak_bin[NTONES]; /* the largest bins of its rows (candidates for the tones) */
  double peak_mag[NTONES];
};

static struct {
  int m, log2m, nthreads, iterations;
  long n;
  cpx *x;       /* data, m x m (input, then the round-trip output) */
  cpx *y;       /* scratch / spectrum, m x m */
  cpx *orig;    /* copy of the input, for the round-trip check */
  cpx *twiddle; /* W_N^(r*c), m x m */
  cpx *roots;   /* per-stage roots of the m-point FFT: for L = m, m/2, ..., 2: W_L^p, p < L/2 */
  cpx *work;    /* one m-point scratch row per thread */
  struct tone tones[NTONES];
  long sample_bin[NSAMPLES];
  cpx sample_val[NSAMPLES]; /* written by the owner of the bin's row */
  struct per_thread *slots;
  pthread_barrier_t barrier;
} g;

/* ------------------------------------------------------------------------------------------ */
/* Deterministic input                                                                          */

static double noise(uint64_t key) {
  return ((double)(app_splitmix64(key) >> 11) / 9007199254740992.0 - 0.5) * 2.0;
}

/* The input sample at index j: the tones plus noise in [-1, 1] on each component. */
static cpx input_sample(long j) {
  cpx v = {noise(2 * (uint64_t)j), noise(2 * (uint64_t)j + 1)};
  for (int t = 0; t < NTONES; t++) {
    /* angle = 2 pi bin j / N + phase, with bin*j reduced mod N first to keep it exact */
    long e = (long)(((unsigned long)g.tones[t].bin * (unsigned long)j) % (unsigned long)g.n);
    double ang = 2.0 * M_PI * (double)e / (double)g.n + g.tones[t].phase;
    v.re += g.tones[t].amp * cos(ang);
    v.im += g.tones[t].amp * sin(ang);
  }
  return v;
}

/* ------------------------------------------------------------------------------------------ */
/* Kernels                                                                                      */

/* Rows [r0, r1) of dst = the transpose of src (m x m), through a TILE x TILE block on the stack:
 * both the reads of src and the writes of dst run along rows. */
static void transpose_rows(cpx *restrict dst, const cpx *restrict src, int m, int r0, int r1) {
  cpx tile[TILE][TILE];
  for (int rb = r0; rb < r1; rb += TILE) {
    int rh = r1 - rb < TILE ? r1 - rb : TILE;
    for (int cb = 0; cb < m; cb += TILE) {
      int cw = m - cb < TILE ? m - cb : TILE;
      /* src rows cb..cb+cw, columns rb..rb+rh */
      for (int c = 0; c < cw; c++) {
        const cpx *s = src + (size_t)(cb + c) * (size_t)m + rb;
        for (int r = 0; r < rh; r++)
          tile[r][c] = s[r];
      }
      for (int r = 0; r < rh; r++) {
        cpx *d = dst + (size_t)(rb + r) * (size_t)m + cb;
        for (int c = 0; c < cw; c++)
          d[c] = tile[r][c];
      }
    }
  }
}

/* In-place m-point FFT of one row (radix-2 Stockham autosort, ping-ponging with WORK).
 * inverse != 0: the roots are conjugated (no scaling here). */
static void fft_row(cpx *row, cpx *work, const cpx *roots, int m, int inverse) {
  cpx *x = row, *y = work;
  size_t off = 0;
  for (int len = m, s = 1; len > 1; len >>= 1, s <<= 1) {
    int half = len / 2;
    const cpx *w = roots + off;
    for (int p = 0; p < half; p++) {
      cpx wp = w[p];
      if (inverse)
        wp.im = -wp.im;
      const cpx *xa = x + (size_t)s * (size_t)p;
      const cpx *xb = x + (size_t)s * (size_t)(p + half);
      cpx *out = y + (size_t)2 * (size_t)s * (size_t)p;
      /* out[0..s) = a + b, out[s..2s) = (a - b) w: both halves with one sweep of out */
      for (int h = 0; h < 2; h++) {
        for (int q = 0; q < s; q++) {
          cpx a = xa[q], b = xb[q];
          out[h * s + q] = h == 0 ? c_add(a, b) : c_mul(c_sub(a, b), wp);
        }
      }
    }
    off += (size_t)half;
    cpx *t = x;
    x = y;
    y = t;
  }
  if (x != row)
    memcpy(row, x, (size_t)m * sizeof(cpx));
}

/* Multiplies rows [r0, r1) of a elementwise by the twiddle matrix (conjugated if inverse). */
static void twiddle_rows(cpx *a, int m, int r0, int r1, int inverse) {
  for (int r = r0; r < r1; r++) {
    cpx *row = a + (size_t)r * (size_t)m;
    const cpx *tw = g.twiddle + (size_t)r * (size_t)m;
    if (inverse) {
      for (int c = 0; c < m; c++)
        row[c] = c_mul(row[c], c_conj(tw[c]));
    } else {
      for (int c = 0; c < m; c++)
        row[c] = c_mul(row[c], tw[c]);
    }
  }
}

static void fft_rows(cpx *a, cpx *work, int m, int r0, int r1, int inverse) {
  for (int r = r0; r < r1; r++)
    fft_row(a + (size_t)r * (size_t)m, work, g.roots, m, inverse);
}

/* The six-step transform of the whole m x m matrix src into dst, by this thread's rows [r0, r1);
 * src is used as scratch. On return (after the last barrier) dst is complete. */
static void transform(cpx *src, cpx *dst, cpx *work, int r0, int r1, int inverse) {
  int m = g.m;
  transpose_rows(dst, src, m, r0, r1);
  fft_rows(dst, work, m, r0, r1, inverse);
  twiddle_rows(dst, m, r0, r1, inverse);
  pthread_barrier_wait(&g.barrier);
  transpose_rows(src, dst, m, r0, r1);
  fft_rows(src, work, m, r0, r1, inverse);
  pthread_barrier_wait(&g.barrier);
  transpose_rows(dst, src, m, r0, r1);
  pthread_barrier_wait(&g.barrier);
}

/* ------------------------------------------------------------------------------------------ */
/* Threads                                                                                      */

static void own_rows(int id, int *r0, int *r1) {
  int base = g.m / g.nthreads, extra = g.m % g.nthreads;
  *r0 = id * base + (id < extra ? id : extra);
  *r1 = *r0 + base + (id < extra ? 1 : 0);
}

static void keep_peak(struct per_thread *me, long bin, double mag) {
  /* me->peak_* is sorted by decreasing magnitude */
  int k = NTONES - 1;
  if (mag <= me->peak_mag[k])
    return;
  while (k > 0 && me->peak_mag[k - 1] < mag) {
    me->peak_mag[k] = me->peak_mag[k - 1];
    me->peak_bin[k] = me->peak_bin[k - 1];
    k--;
  }
  me->peak_mag[k] = mag;
  me->peak_bin[k] = bin;
}

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg;
  int m = g.m, r0, r1;
  own_rows(id, &r0, &r1);
  struct per_thread *me = &g.slots[id];
  cpx *work = g.work + (size_t)id * (size_t)m;
  double inv_n = 1.0 / (double)g.n;

  /* Initialization of the thread's rows: twiddles, input, copy of the input. */
  double in_energy = 0.0;
  for (int r = r0; r < r1; r++) {
    for (int c = 0; c < m; c++) {
      size_t k = (size_t)r * (size_t)m + (size_t)c;
      double ang = -2.0 * M_PI * (double)((long)r * c) / (double)g.n;
      g.twiddle[k] = (cpx){cos(ang), sin(ang)};
      cpx v = input_sample((long)k);
      g.x[k] = v;
      g.orig[k] = v;
      in_energy += c_abs2(v);
    }
  }
  me->input_energy = in_energy;
  pthread_barrier_wait(&g.barrier);

  double max_err = 0.0;
  for (int it = 0; it < g.iterations; it++) {
    /* Forward: x -> y. */
    transform(g.x, g.y, work, r0, r1, 0);

    /* The spectrum's rows of this thread: energy, peaks, the sampled bins it owns. */
    double energy = 0.0;
    for (int p = 0; p < NTONES; p++) {
      me->peak_bin[p] = -1;
      me->peak_mag[p] = 0.0;
    }
    for (int r = r0; r < r1; r++) {
      const cpx *row = g.y + (size_t)r * (size_t)m;
      for (int c = 0; c < m; c++) {
        double e = c_abs2(row[c]);
        energy += e;
        keep_peak(me, (long)r * m + c, e);
      }
    }
    me->spectrum_energy = energy;
    for (int s = 0; s < NSAMPLES; s++) {
      long b = g.sample_bin[s];
      if (b / m >= r0 && b / m < r1)
        g.sample_val[s] = g.y[b];
    }
    /* The inverse transform starts with a transpose of y, which reads every thread's rows:
     * the barrier at the end of transform() already ordered them. */

    /* Inverse: y -> x, then scale and compare with the input. */
    transform(g.y, g.x, work, r0, r1, 1);
    for (int r = r0; r < r1; r++) {
      cpx *row = g.x + (size_t)r * (size_t)m;
      const cpx *ref = g.orig + (size_t)r * (size_t)m;
      for (int c = 0; c < m; c++) {
        row[c] = c_scale(row[c], inv_n);
        double err = sqrt(c_abs2(c_sub(row[c], ref[c])));
        if (err > max_err)
          max_err = err;
      }
    }
    /* The next forward transform reads all rows of x (scaled above by their owners). */
    pthread_barrier_wait(&g.barrier);
  }
  me->max_roundtrip = max_err;
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Set-up and verification (main)                                                               */

static void make_roots(void) {
  size_t off = 0;
  for (int len = g.m; len > 1; len >>= 1) {
    for (int p = 0; p < len / 2; p++) {
      double ang = -2.0 * M_PI * (double)p / (double)len;
      g.roots[off + (size_t)p] = (cpx){cos(ang), sin(ang)};
    }
    off += (size_t)(len / 2);
  }
}

/* X_k = sum_j x_j W_N^(jk), directly; the root is recomputed exactly every 256 steps. */
static cpx direct_dft_bin(const cpx *x, long n, long k) {
  cpx acc = {0.0, 0.0};
  double step_ang = -2.0 * M_PI * (double)k / (double)n;
  cpx step = {cos(step_ang), sin(step_ang)};
  cpx w = {1.0, 0.0};
  for (long j = 0; j < n; j++) {
    if ((j & 255) == 0) {
      long e = (long)(((unsigned long)j * (unsigned long)k) % (unsigned long)n);
      double ang = -2.0 * M_PI * (double)e / (double)n;
      w = (cpx){cos(ang), sin(ang)};
    }
    acc = c_add(acc, c_mul(x[j], w));
    w = c_mul(w, step);
  }
  return acc;
}

static const char usage[] =
    "usage: %s [-t THREADS] [-m ROWS] [-i ITERATIONS]\n"
    "  transforms N = ROWS*ROWS points (ROWS a power of two >= 4) forward and back\n";

int main(int argc, char **argv) {
  long nthreads = 4, m = 512, iterations = 6;
  const struct app_opt opts[] = {
      APP_OPT("-t", nthreads, 1, MAX_THREADS),
      APP_OPT("-m", m, 4, 8192),
      APP_OPT("-i", iterations, 1, 1000),
  };
  if (app_parse_opts(argc, argv, opts, APP_NOPTS(opts), 0) != 0 || (m & (m - 1)) != 0 ||
      nthreads > m) {
    app_usage(usage, argv[0]);
    return 2;
  }

  g.m = (int)m;
  g.n = m * m;
  g.nthreads = (int)nthreads;
  g.iterations = (int)iterations;
  for (g.log2m = 0; (1L << g.log2m) < m; g.log2m++)
    ;
  size_t n = (size_t)g.n;
  g.x = malloc(n * sizeof(cpx));
  g.y = malloc(n * sizeof(cpx));
  g.orig = malloc(n * sizeof(cpx));
  g.twiddle = malloc(n * sizeof(cpx));
  g.roots = malloc((size_t)m * sizeof(cpx));
  g.work = malloc((size_t)nthreads * (size_t)m * sizeof(cpx));
  g.slots = aligned_alloc(CACHE_LINE, (size_t)nthreads * sizeof(struct per_thread));
  if (!g.x || !g.y || !g.orig || !g.twiddle || !g.roots || !g.work || !g.slots) {
    perror("fft: malloc");
    return 1;
  }
  memset(g.slots, 0, (size_t)nthreads * sizeof(struct per_thread));
  make_roots();

  /* Tones at fixed fractions of N; sampled bins: the tones, their neighbours, a few others. */
  for (int t = 0; t < NTONES; t++)
    g.tones[t] = tones_template[t];
  g.tones[0].bin = g.n / 7;
  g.tones[1].bin = g.n / 3 + 5;
  g.tones[2].bin = g.n - g.n / 11;
  for (int s = 0; s < NSAMPLES; s++) {
    long b;
    if (s < NTONES)
      b = g.tones[s].bin;
    else if (s < 2 * NTONES)
      b = g.tones[s - NTONES].bin + 1;
    else
      b = (long)(app_splitmix64(1000 + (uint64_t)s) % (uint64_t)g.n);
    g.sample_bin[s] = b % g.n;
  }

  if (app_run_workers("fft", nthreads, worker, &g.barrier) != 0)
    return 1;

  /* Reduce the per-thread results in thread order. */
  double spec_energy = 0.0, in_energy = 0.0, roundtrip = 0.0;
  long best_bin[NTONES];
  double best_mag[NTONES];
  for (int p = 0; p < NTONES; p++) {
    best_bin[p] = -1;
    best_mag[p] = 0.0;
  }
  for (long t = 0; t < nthreads; t++) {
    struct per_thread *s = &g.slots[t];
    spec_energy += s->spectrum_energy;
    in_energy += s->input_energy;
    if (s->max_roundtrip > roundtrip)
      roundtrip = s->max_roundtrip;
    for (int p = 0; p < NTONES; p++) {
      /* insert s->peak into best (sorted by decreasing magnitude) */
      double mag = s->peak_mag[p];
      long bin = s->peak_bin[p];
      int k = NTONES - 1;
      if (bin < 0 || mag <= best_mag[k])
        continue;
      while (k > 0 && best_mag[k - 1] < mag) {
        best_mag[k] = best_mag[k - 1];
        best_bin[k] = best_bin[k - 1];
        k--;
      }
      best_mag[k] = mag;
      best_bin[k] = bin;
    }
  }

  int failures = 0;
  /* Parseval: sum |X|^2 = N sum |x|^2. */
  double parseval = fabs(spec_energy / (double)g.n - in_energy) / in_energy;
  if (parseval > 1e-9) {
    fprintf(stderr, "fft: Parseval mismatch, relative %.3e\n", parseval);
    failures++;
  }
  /* Sampled bins against a direct DFT of the input. */
  double worst_bin = 0.0;
  for (int s = 0; s < NSAMPLES; s++) {
    cpx want = direct_dft_bin(g.orig, g.n, g.sample_bin[s]);
    cpx got = g.sample_val[s];
    double err = sqrt(c_abs2(c_sub(want, got))) / (1.0 + sqrt(c_abs2(want)));
    if (err > worst_bin)
      worst_bin = err;
    if (err > 1e-8) {
      fprintf(stderr, "fft: bin %ld: fft (%.6f, %.6f), direct (%.6f, %.6f)\n", g.sample_bin[s],
              got.re, got.im, want.re, want.im);
      failures++;
    }
  }
  /* The tones are the three largest bins, in order of amplitude. */
  for (int t = 0; t < NTONES; t++) {
    if (best_bin[t] != g.tones[t].bin) {
      fprintf(stderr, "fft: peak %d at bin %ld, expected the tone at %ld\n", t, best_bin[t],
              g.tones[t].bin);
      failures++;
    }
  }
  if (roundtrip > 1e-9) {
    fprintf(stderr, "fft: round-trip error %.3e\n", roundtrip);
    failures++;
  }

  /* A checksum of the round-trip output (serial, independent of the thread count). */
  double sum_re = 0.0, sum_im = 0.0;
  const double *flat = &g.x[0].re; /* re, im, re, im, ... */
  for (size_t k = 0; k < 2 * n; k++) {
    if (k & 1)
      sum_im += flat[k] * (double)((k / 2) % 13 + 1);
    else
      sum_re += flat[k] * (double)((k / 2) % 17 + 1);
  }

  printf("fft: N = %ld (%ld x %ld), %ld threads, %ld iteration(s)\n", g.n, m, m, nthreads,
         iterations);
  printf("spectrum energy / N %.6e, input energy %.6e\n", spec_energy / (double)g.n, in_energy);
  for (int t = 0; t < NTONES; t++)
    printf("peak %d: bin %ld |X| %.4f (tone amplitude %.1f -> %.1f)\n", t, best_bin[t],
           sqrt(best_mag[t]), g.tones[t].amp, g.tones[t].amp * (double)g.n);
  printf("sampled bins: worst relative error %s 1e-8\n", worst_bin <= 1e-8 ? "<=" : ">");
  printf("round trip: %s 1e-9; checksum %.6f %.6f\n", roundtrip <= 1e-9 ? "<=" : ">", sum_re,
         sum_im);
  printf("verification: %s\n", failures == 0 ? "PASSED" : "FAILED");

  free(g.slots);
  free(g.work);
  free(g.roots);
  free(g.twiddle);
  free(g.orig);
  free(g.y);
  free(g.x);
  return failures == 0 ? 0 : 1;
}
