// APP: blackscholes: European option pricing (Black-Scholes closed form plus the Greeks) over a
//      generated portfolio, statically partitioned among worker threads, joined at the end
// CATEGORY: fork-join
// EXPECT: none
// REORDER: no
// ARGS: -t 4 -n 131072 -r 16
// LIBS: -lm
//
// A PARSEC-style options-pricing kernel. main generates a deterministic portfolio of European
// calls and puts (spot, strike, risk-free rate, dividend yield, volatility, time to expiry) with
// a private linear congruential generator, then starts T worker threads. The portfolio is split
// into T contiguous slices; each worker prices its slice R times (the benchmark's repetition
// loop, as in PARSEC, so that the pricing dominates the set-up), writing the price and the
// Greeks of every option into the shared result arrays at the option's own index, and keeps its
// running statistics (sum of prices, of deltas, number of in-the-money options, the largest
// pricing error against put-call parity) in its own padded slot of a per-worker array.
//
// Synchronization is fork-join only: the portfolio is written by main before the creates, the
// results and the per-worker slots are read by main after the joins, and no two workers ever
// touch the same element. Race- and deadlock-free.
//
// Verification: main re-prices a deterministic sample of options serially and compares them with
// the parallel results (bitwise: the same code on the same inputs), checks put-call parity on
// every option (C - P = S e^{-qT} - K e^{-rT}), and prints a checksum of all prices, which does
// not depend on the number of threads or on the schedule (sums are taken serially by main).
#include <math.h>

#include "app_common.h"

#define MAX_THREADS 64
#define CACHE_LINE 64
#define SAMPLE_STRIDE 97

enum option_kind { OPT_CALL = 0, OPT_PUT = 1 };

/* One option of the portfolio (structure of arrays, as the benchmark's vectorizable layout). */
struct portfolio {
  size_t count;
  double *spot;       /* S: price of the underlying */
  double *strike;     /* K */
  double *rate;       /* r: continuously compounded risk-free rate */
  double *dividend;   /* q: continuous dividend yield */
  double *volatility; /* sigma */
  double *expiry;     /* T in years */
  unsigned char *kind;
};

/* Results, one element per option; each element is written by exactly one worker. */
struct results {
  double *price;  /* price of the option itself (call or put) */
  double *other;  /* price of the opposite kind, for the parity check */
  double *delta;
  double *gamma;
  double *vega;
  double *theta;
  double *rho;
};

/* Per-worker statistics, padded to its own cache line(s). */
struct worker_stats {
  double price_sum;
  double delta_sum;
  double vega_sum;
  double max_parity_error;
  long in_the_money;
  long priced;
  char pad[CACHE_LINE - (4 * sizeof(double) + 2 * sizeof(long)) % CACHE_LINE];
};

struct worker {
  pthread_t thread;
  int index;
  size_t first, last; /* [first, last) of the portfolio */
  int rounds;
  const struct portfolio *pf;
  struct results *res;
  struct worker_stats *stats;
};

/* ------------------------------------------------------------------------------------------ */
/* Deterministic portfolio generation                                                          */

struct lcg {
  uint64_t state;
};

static uint32_t lcg_next(struct lcg *g) {
  g->state = g->state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)(g->state >> 33);
}

/* Uniform in [lo, hi). */
static double lcg_uniform(struct lcg *g, double lo, double hi) {
  double u = (double)lcg_next(g) / 2147483648.0;
  return lo + (hi - lo) * u;
}

static int portfolio_alloc(struct portfolio *pf, size_t n) {
  memset(pf, 0, sizeof *pf);
  pf->count = n;
  pf->spot = malloc(n * sizeof(double));
  pf->strike = malloc(n * sizeof(double));
  pf->rate = malloc(n * sizeof(double));
  pf->dividend = malloc(n * sizeof(double));
  pf->volatility = malloc(n * sizeof(double));
  pf->expiry = malloc(n * sizeof(double));
  pf->kind = malloc(n);
  return pf->spot && pf->strike && pf->rate && pf->dividend && pf->volatility && pf->expiry &&
         pf->kind;
}

static void portfolio_free(struct portfolio *pf) {
  free(pf->spot);
  free(pf->strike);
  free(pf->rate);
  free(pf->dividend);
  free(pf->volatility);
  free(pf->expiry);
  free(pf->kind);
}

/* A portfolio that looks like a book of listed equity options: strikes clustered around the
 * money on a 2.5 grid, a handful of expiries, volatilities from a smile-like distribution. */
static void portfolio_generate(struct portfolio *pf, uint64_t seed) {
  static const double expiries[] = {0.0833, 0.1667, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0};
  struct lcg g = {seed};
  for (size_t i = 0; i < pf->count; i++) {
    double s = lcg_uniform(&g, 20.0, 180.0);
    double moneyness = lcg_uniform(&g, 0.7, 1.3);
    double k = floor(s * moneyness / 2.5 + 0.5) * 2.5;
    if (k < 2.5)
      k = 2.5;
    double skew = fabs(moneyness - 1.0);
    pf->spot[i] = s;
    pf->strike[i] = k;
    pf->rate[i] = lcg_uniform(&g, 0.005, 0.06);
    pf->dividend[i] = (lcg_next(&g) % 4 == 0) ? 0.0 : lcg_uniform(&g, 0.0, 0.04);
    pf->volatility[i] = 0.12 + 0.5 * skew * skew + lcg_uniform(&g, 0.0, 0.35);
    pf->expiry[i] = expiries[lcg_next(&g) % (sizeof expiries / sizeof expiries[0])];
    pf->kind[i] = (unsigned char)(lcg_next(&g) & 1);
  }
}

static int results_alloc(struct results *r, size_t n) {
  r->price = calloc(n, sizeof(double));
  r->other = calloc(n, sizeof(double));
  r->delta = calloc(n, sizeof(double));
  r->gamma = calloc(n, sizeof(double));
  r->vega = calloc(n, sizeof(double));
  r->theta = calloc(n, sizeof(double));
  r->rho = calloc(n, sizeof(double));
  return r->price && r->other && r->delta && r->gamma && r->vega && r->theta && r->rho;
}

static void results_free(struct results *r) {
  free(r->price);
  free(r->other);
  free(r->delta);
  free(r->gamma);
  free(r->vega);
  free(r->theta);
  free(r->rho);
}

/* ------------------------------------------------------------------------------------------ */
/* The pricing model                                                                            */

#define INV_SQRT_2PI 0.39894228040143267794

/* Standard normal density. */
static inline double norm_pdf(double x) { return INV_SQRT_2PI * exp(-0.5 * x * x); }

/* Standard normal cumulative distribution: the 5-term polynomial approximation of Abramowitz &
 * Stegun 26.2.17 (absolute error < 7.5e-8), the approximation the benchmark family uses. */
static inline double norm_cdf(double x) {
  const double b1 = 0.319381530, b2 = -0.356563782, b3 = 1.781477937;
  const double b4 = -1.821255978, b5 = 1.330274429, p = 0.2316419;
  double ax = fabs(x);
  double t = 1.0 / (1.0 + p * ax);
  double poly = t * (b1 + t * (b2 + t * (b3 + t * (b4 + t * b5))));
  double tail = norm_pdf(ax) * poly;
  return x >= 0.0 ? 1.0 - tail : tail;
}

struct quote {
  double call, put;
  double delta_call, delta_put;
  double gamma, vega;
  double theta_call, theta_put;
  double rho_call, rho_put;
};

/* Black-Scholes-Merton with a continuous dividend yield. */
static void price_option(double s, double k, double r, double q, double sigma, double t,
                         struct quote *out) {
  double sqrt_t = sqrt(t);
  double sig_sqrt_t = sigma * sqrt_t;
  double d1 = (log(s / k) + (r - q + 0.5 * sigma * sigma) * t) / sig_sqrt_t;
  double d2 = d1 - sig_sqrt_t;
  double disc_r = exp(-r * t);
  double disc_q = exp(-q * t);
  double nd1 = norm_cdf(d1), nd2 = norm_cdf(d2);
  double nmd1 = norm_cdf(-d1), nmd2 = norm_cdf(-d2);
  double pdf_d1 = norm_pdf(d1);

  out->call = s * disc_q * nd1 - k * disc_r * nd2;
  out->put = k * disc_r * nmd2 - s * disc_q * nmd1;
  out->delta_call = disc_q * nd1;
  out->delta_put = disc_q * (nd1 - 1.0);
  out->gamma = disc_q * pdf_d1 / (s * sig_sqrt_t);
  out->vega = s * disc_q * pdf_d1 * sqrt_t;
  double common = -s * disc_q * pdf_d1 * sigma / (2.0 * sqrt_t);
  out->theta_call = common - r * k * disc_r * nd2 + q * s * disc_q * nd1;
  out->theta_put = common + r * k * disc_r * nmd2 - q * s * disc_q * nmd1;
  out->rho_call = k * t * disc_r * nd2;
  out->rho_put = -k * t * disc_r * nmd2;
}

/* Prices option I of the portfolio into the result arrays; returns the parity error. */
static double price_one(const struct portfolio *pf, struct results *res, size_t i) {
  struct quote qt;
  double s = pf->spot[i], k = pf->strike[i], r = pf->rate[i], q = pf->dividend[i];
  double t = pf->expiry[i];
  price_option(s, k, r, q, pf->volatility[i], t, &qt);
  int call = pf->kind[i] == OPT_CALL;
  res->price[i] = call ? qt.call : qt.put;
  res->other[i] = call ? qt.put : qt.call;
  res->delta[i] = call ? qt.delta_call : qt.delta_put;
  res->theta[i] = call ? qt.theta_call : qt.theta_put;
  res->rho[i] = call ? qt.rho_call : qt.rho_put;
  res->gamma[i] = qt.gamma;
  res->vega[i] = qt.vega;
  double parity = (qt.call - qt.put) - (s * exp(-q * t) - k * exp(-r * t));
  return fabs(parity);
}

/* ------------------------------------------------------------------------------------------ */
/* Workers                                                                                     */

static void *worker_main(void *arg) {
  struct worker *w = arg;
  const struct portfolio *pf = w->pf;
  struct results *res = w->res;
  struct worker_stats local;
  memset(&local, 0, sizeof local);

  for (int round = 0; round < w->rounds; round++) {
    /* Every round prices the whole slice again (the benchmark's repetition loop); only the last
     * round's statistics are kept, so that they do not depend on the number of rounds. */
    double price_sum = 0.0, delta_sum = 0.0, vega_sum = 0.0, max_err = 0.0;
    long itm = 0, priced = 0;
    for (size_t i = w->first; i < w->last; i++) {
      double err = price_one(pf, res, i);
      if (err > max_err)
        max_err = err;
      price_sum += res->price[i];
      delta_sum += res->delta[i];
      vega_sum += res->vega[i];
      double intrinsic = pf->spot[i] - pf->strike[i];
      if (pf->kind[i] != OPT_CALL)
        intrinsic = -intrinsic;
      if (intrinsic > 0.0)
        itm++;
      priced++;
    }
    local.price_sum = price_sum;
    local.delta_sum = delta_sum;
    local.vega_sum = vega_sum;
    local.max_parity_error = max_err;
    local.in_the_money = itm;
    local.priced = priced;
  }
  *w->stats = local;
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Verification and reporting (main thread, after the joins)                                   */

/* A checksum of a double array that does not depend on summation order across threads: a
 * serial Kahan sum plus an order-sensitive hash of the rounded values. */
static void checksum(const double *v, size_t n, double *sum_out, uint64_t *hash_out) {
  double sum = 0.0, c = 0.0;
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) {
    double y = v[i] - c;
    double t = sum + y;
    c = (t - sum) - y;
    sum = t;
    int64_t fixed = (int64_t)llround(v[i] * 1e6);
    h ^= (uint64_t)fixed;
    h *= 1099511628211ULL;
  }
  *sum_out = sum;
  *hash_out = h;
}

static int verify_sample(const struct portfolio *pf, const struct results *res) {
  int bad = 0;
  for (size_t i = 0; i < pf->count; i += SAMPLE_STRIDE) {
    struct quote qt;
    price_option(pf->spot[i], pf->strike[i], pf->rate[i], pf->dividend[i], pf->volatility[i],
                 pf->expiry[i], &qt);
    double want = pf->kind[i] == OPT_CALL ? qt.call : qt.put;
    if (fabs(want - res->price[i]) > 1e-9 * (1.0 + fabs(want))) {
      if (bad < 5)
        fprintf(stderr, "blackscholes: option %zu: parallel %.10f, serial %.10f\n", i,
                res->price[i], want);
      bad++;
    }
    if (res->price[i] < -1e-9 || res->gamma[i] < 0.0 || res->vega[i] < 0.0) {
      if (bad < 5)
        fprintf(stderr, "blackscholes: option %zu: implausible price/greeks\n", i);
      bad++;
    }
  }
  return bad;
}

static int verify_parity(const struct portfolio *pf, const struct results *res, double *worst) {
  int bad = 0;
  *worst = 0.0;
  for (size_t i = 0; i < pf->count; i++) {
    double own = res->price[i], opposite = res->other[i];
    int is_call = pf->kind[i] == OPT_CALL;
    double call = is_call ? own : opposite;
    double put = is_call ? opposite : own;
    double fwd = pf->spot[i] * exp(-pf->dividend[i] * pf->expiry[i]) -
                 pf->strike[i] * exp(-pf->rate[i] * pf->expiry[i]);
    double err = fabs((call - put) - fwd);
    if (err > *worst)
      *worst = err;
    /* The normal-CDF approximation is good to ~1e-7 per term: allow for the strike size. */
    if (err > 1e-5 * (1.0 + pf->strike[i]))
      bad++;
  }
  return bad;
}

static const char usage[] =
    "usage: %s [-t THREADS] [-n OPTIONS] [-r ROUNDS] [-s SEED]\n"
    "  prices OPTIONS European options ROUNDS times on THREADS workers\n";

int main(int argc, char **argv) {
  long nthreads = 4, noptions = 131072, rounds = 16, seed = 20150901;
  const struct app_opt opts[] = {
      APP_OPT("-t", nthreads, 1, MAX_THREADS),
      APP_OPT("-n", noptions, 1, 1L << 26),
      APP_OPT("-r", rounds, 1, 100000),
      APP_OPT("-s", seed, 0, 1L << 40),
  };
  if (app_parse_opts(argc, argv, opts, APP_NOPTS(opts), 0) != 0) {
    app_usage(usage, argv[0]);
    return 2;
  }

  struct portfolio pf;
  struct results res;
  if (!portfolio_alloc(&pf, (size_t)noptions) || !results_alloc(&res, (size_t)noptions)) {
    perror("blackscholes: malloc");
    return 1;
  }
  portfolio_generate(&pf, (uint64_t)seed);

  struct worker *workers = calloc((size_t)nthreads, sizeof *workers);
  struct worker_stats *stats = aligned_alloc(CACHE_LINE, (size_t)nthreads * sizeof *stats);
  if (!workers || !stats) {
    perror("blackscholes: malloc");
    return 1;
  }
  memset(stats, 0, (size_t)nthreads * sizeof *stats);

  /* Static partition: contiguous slices, the remainder spread over the first workers. */
  size_t base = (size_t)noptions / (size_t)nthreads, extra = (size_t)noptions % (size_t)nthreads;
  size_t next = 0;
  for (long t = 0; t < nthreads; t++) {
    size_t len = base + ((size_t)t < extra ? 1 : 0);
    workers[t].index = (int)t;
    workers[t].first = next;
    workers[t].last = next + len;
    workers[t].rounds = (int)rounds;
    workers[t].pf = &pf;
    workers[t].res = &res;
    workers[t].stats = &stats[t];
    next += len;
  }
  for (long t = 0; t < nthreads; t++) {
    int rc = pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]);
    if (rc != 0) {
      fprintf(stderr, "blackscholes: pthread_create: %s\n", strerror(rc));
      return 1;
    }
  }
  for (long t = 0; t < nthreads; t++)
    pthread_join(workers[t].thread, NULL);

  /* Reduce the per-worker statistics in worker order (deterministic). */
  double delta_sum = 0.0, vega_sum = 0.0, max_err = 0.0;
  long itm = 0, priced = 0;
  for (long t = 0; t < nthreads; t++) {
    delta_sum += stats[t].delta_sum;
    vega_sum += stats[t].vega_sum;
    if (stats[t].max_parity_error > max_err)
      max_err = stats[t].max_parity_error;
    itm += stats[t].in_the_money;
    priced += stats[t].priced;
  }

  double price_total, delta_total;
  uint64_t price_hash, delta_hash;
  checksum(res.price, pf.count, &price_total, &price_hash);
  checksum(res.delta, pf.count, &delta_total, &delta_hash);
  double worst_parity;
  int bad = verify_sample(&pf, &res);
  int bad_parity = verify_parity(&pf, &res, &worst_parity);
  long calls = 0;
  for (size_t i = 0; i < pf.count; i++)
    calls += pf.kind[i] == OPT_CALL;

  printf("blackscholes: %ld options (%ld calls, %ld puts), %ld rounds, %ld threads\n", noptions,
         calls, noptions - calls, rounds, nthreads);
  printf("priced %ld, in the money %ld\n", priced, itm);
  printf("price sum %.6f  hash %016llx\n", price_total, (unsigned long long)price_hash);
  printf("delta sum %.6f  hash %016llx\n", delta_total, (unsigned long long)delta_hash);
  printf("parity: worst |C-P-F| %.3e, %d violation(s); sample: %d mismatch(es)\n", worst_parity,
         bad_parity, bad);
  /* The per-worker sums depend on the partition only through rounding: print them rounded. */
  printf("workers: delta sum %.3f, vega sum %.3f, max parity error %.3e\n", delta_sum, vega_sum,
         max_err);

  int ok = bad == 0 && bad_parity == 0 && priced == noptions;
  printf("verification: %s\n", ok ? "PASSED" : "FAILED");

  free(stats);
  free(workers);
  results_free(&res);
  portfolio_free(&pf);
  return ok ? 0 : 1;
}
