// APP: nbody: molecular dynamics of charged Lennard-Jones particles (a WATER-NSQUARED-style
//      O(N^2) force loop), velocity Verlet with barriers per time step, per-thread partial forces
//      reduced into the shared force array under a lock; the virial monitor is updated unlocked
// CATEGORY: barrier-lock
// EXPECT: race 273 273
// REORDER: no
// ARGS: -t 4 -n 512 -s 100
// LIBS: -lm
//
// N particles (alternating charges +q/-q, an ionic melt in reduced Lennard-Jones units) in a
// periodic cubic box interact through a shifted-force Lennard-Jones potential plus a
// damped shifted-force Coulomb term (erfc screening), both cut off at RC. T threads; thread id
// owns the particles [first, last) of a static partition for the integration, and the pairs
// (i, j), j > i, of every row i with i mod T == id for the force computation (cyclic rows keep
// the triangle balanced). Each time step is
//
//   A. owned particles: half kick with the old forces, drift, wrap into the box; zero their
//      entries of the shared force array; zero the thread's private partial forces;
//   -- barrier --
//   B. the thread copies all positions into a private snapshot (one memcpy), computes the
//      forces of its pairs on the snapshot into its private partial array (Newton's third law:
//      +f on i, -f on j), its potential energy and virial locally; then, under force_lock, adds
//      the partial array and the potential energy into the shared fixed-point accumulators
//      (snapshot and partial array live on the thread's stack);
//   -- barrier --
//   C. owned particles: second half kick with the new forces; kinetic energy under stats_lock;
//   -- barrier --
//   thread 0 alone: append the step's energies to the history, reset the accumulators, and every
//   REPORT steps print the pressure monitor to stderr.
//
// Forces and energies are accumulated in 64-bit fixed point (2^-32 units), so the sums do not
// depend on the order in which threads get the locks: the trajectory and the output are the same
// for every schedule (for a given number of threads).
//
// The deliberate race: the virial, which the pressure monitor shows, is added to the shared
// g.virial_monitor after the unlock of force_lock, with no lock (line 273: `g.virial_monitor
// += virial;`, a read and a write of the same double). Two threads can execute that line at the
// same time and lose an update; only the stderr monitor is affected (stdout reports the locked
// accumulators). Thread 0 reads and resets the monitor between two barriers, so those accesses
// are ordered; the only racing pair is line 273 with itself. Everything else is protected by a
// lock, or separated by barriers, create or join.
//
// Verification (main): total energy drift over the run, total momentum (zero), and the final
// parallel forces against a serial recomputation at the final positions.
#include <math.h>

#include "app_common.h"

#define MAX_THREADS 64
#define CACHE_LINE 64
#define FIXED_SCALE 4294967296.0 /* 2^32 */
#define REPORT 10
#define MAX_PARTICLES 2048 /* the per-thread arrays live on the thread's stack */

/* Physical parameters (reduced units: sigma = epsilon = mass = 1). */
#define DENSITY 0.80
#define TEMPERATURE 1.40
#define CHARGE 0.40
#define RC 2.80       /* cutoff */
#define ALPHA 0.35    /* Coulomb damping */
#define TIME_STEP 0.002

struct particle {
  double c[3]; /* position */
  double q;    /* charge */
};

struct vec3 {
  double c[3];
};

struct fixed3 {
  int64_t c[3];
};

struct step_energy {
  double kinetic, potential;
};

struct per_thread {
  _Alignas(CACHE_LINE) long pairs_in_range;
  long pairs_total;
};

static struct {
  int n, nthreads, steps;
  double box, half_box;
  struct particle *pos; /* shared positions (written by owners in A, read by all in B) */
  struct vec3 *vel;     /* owned */
  struct fixed3 *force; /* shared, fixed point, accumulated under force_lock */
  int64_t potential_fixed;      /* under force_lock */
  int64_t kinetic_fixed;        /* under stats_lock */
  double virial_monitor;        /* RACY: updated without a lock (see the header) */
  struct step_energy *history;  /* written by thread 0 */
  double coul_shift_e, coul_shift_f, lj_shift_e, lj_shift_f;
  struct per_thread *slots;
  pthread_mutex_t force_lock;
  pthread_mutex_t stats_lock;
  pthread_barrier_t barrier;
} g;

/* ------------------------------------------------------------------------------------------ */
/* Set-up                                                                                       */

static double uniform(uint64_t key) {
  return (double)(app_splitmix64(key) >> 11) / 9007199254740992.0;
}

/* Gaussian by Box-Muller from two keyed uniforms. */
static double gaussian(uint64_t key) {
  double u1 = uniform(2 * key) + 1e-300, u2 = uniform(2 * key + 1);
  return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static void init_system(void) {
  int n = g.n;
  int side = 1;
  while (side * side * side < n)
    side++;
  long sites = (long)side * side * side;
  double a = g.box / side;
  /* Particles spread evenly over the sites of a simple cubic lattice, with a small jitter;
   * alternating charges (n is even: the system is neutral). */
  for (int k = 0; k < n; k++) {
    long site = (long)k * sites / n;
    int ix = (int)(site / ((long)side * side)), iy = (int)(site / side % side);
    int iz = (int)(site % side);
    int cell[3] = {ix, iy, iz};
    struct particle *p = &g.pos[k];
    for (int d = 0; d < 3; d++)
      p->c[d] = (cell[d] + 0.5) * a + 0.05 * a * (uniform(3 * (uint64_t)k + (uint64_t)d) - 0.5);
    p->q = (k & 1) ? -CHARGE : CHARGE;
  }
  /* Maxwell-Boltzmann velocities, zero total momentum, scaled to the temperature. */
  struct vec3 mom = {0, 0, 0};
  for (int i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) {
      g.vel[i].c[d] = gaussian(1000003 + 3 * (uint64_t)i + (uint64_t)d);
      mom.c[d] += g.vel[i].c[d];
    }
  double ke = 0.0;
  for (int i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) {
      g.vel[i].c[d] -= mom.c[d] / n;
      ke += 0.5 * g.vel[i].c[d] * g.vel[i].c[d];
    }
  double scale = sqrt(1.5 * (n - 1) * TEMPERATURE / ke);
  for (int i = 0; i < n; i++)
    for (int d = 0; d < 3; d++)
      g.vel[i].c[d] *= scale;
  /* Shifts that make the energy and (for Coulomb) the force go to zero at the cutoff. */
  double rc2 = RC * RC, irc6 = 1.0 / (rc2 * rc2 * rc2);
  g.lj_shift_e = 4.0 * (irc6 * irc6 - irc6);
  g.lj_shift_f = 24.0 * (2.0 * irc6 * irc6 - irc6) / RC;
  g.coul_shift_e = erfc(ALPHA * RC) / RC;
  g.coul_shift_f =
      erfc(ALPHA * RC) / rc2 + 2.0 * ALPHA / sqrt(M_PI) * exp(-ALPHA * ALPHA * rc2) / RC;
}

/* ------------------------------------------------------------------------------------------ */
/* The pair interaction                                                                         */

static inline double minimum_image(double d) {
  if (d > g.half_box)
    d -= g.box;
  else if (d < -g.half_box)
    d += g.box;
  return d;
}

/* Force on i from j (f = fscale * (ri - rj)) and the pair energy; returns 0 beyond the cutoff.
 * Always inlined: it is the body of the O(N^2) loop. */
static inline __attribute__((always_inline)) int
pair_force(const struct particle *pi, const struct particle *pj, struct vec3 *d, double *fscale,
           double *energy) {
  for (int k = 0; k < 3; k++)
    d->c[k] = minimum_image(pi->c[k] - pj->c[k]);
  double r2 = d->c[0] * d->c[0] + d->c[1] * d->c[1] + d->c[2] * d->c[2];
  if (r2 >= RC * RC)
    return 0;
  double r = sqrt(r2);
  double ir2 = 1.0 / r2, ir6 = ir2 * ir2 * ir2;
  /* Lennard-Jones, shifted force (energy and force both go to zero at the cutoff) */
  double e_lj = 4.0 * (ir6 * ir6 - ir6) - g.lj_shift_e + g.lj_shift_f * (r - RC);
  double f_lj = (24.0 * (2.0 * ir6 * ir6 - ir6) / r - g.lj_shift_f) / r;
  /* Damped shifted-force Coulomb */
  double qq = pi->q * pj->q;
  double erfc_ar = erfc(ALPHA * r);
  double gauss = 2.0 * ALPHA / sqrt(M_PI) * exp(-ALPHA * ALPHA * r2);
  double e_c = qq * (erfc_ar / r - g.coul_shift_e + g.coul_shift_f * (r - RC));
  double f_c = qq * (erfc_ar / r2 + gauss / r - g.coul_shift_f) / r;
  *fscale = f_lj + f_c;
  *energy = e_lj + e_c;
  return 1;
}

static inline int64_t to_fixed(double v) { return (int64_t)llrint(v * FIXED_SCALE); }
static inline double from_fixed(int64_t v) { return (double)v / FIXED_SCALE; }

/* ------------------------------------------------------------------------------------------ */
/* Threads                                                                                      */

static void own_range(int id, int *first, int *last) {
  int base = g.n / g.nthreads, extra = g.n % g.nthreads;
  *first = id * base + (id < extra ? id : extra);
  *last = *first + base + (id < extra ? 1 : 0);
}

static inline double wrap(double c) {
  if (c >= g.box)
    c -= g.box;
  else if (c < 0.0)
    c += g.box;
  return c;
}

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg;
  int n = g.n, first, last;
  own_range(id, &first, &last);
  struct per_thread *me = &g.slots[id];
  /* Private to the thread (its stack): a snapshot of the positions, refreshed every step, so the
   * O(N^2) loop runs on local memory, and the partial forces of the thread's pairs. */
  struct particle snap[MAX_PARTICLES];
  struct vec3 partial[MAX_PARTICLES];
  const double dt = TIME_STEP, half_dt = 0.5 * TIME_STEP;
  long in_range = 0, total = 0;

  for (int step = 0; step <= g.steps; step++) {
    /* A. half kick with the old forces (none before step 0), drift, wrap; zero the forces. */
    for (int i = first; i < last; i++) {
      if (step > 0) {
        for (int k = 0; k < 3; k++) {
          g.vel[i].c[k] += half_dt * from_fixed(g.force[i].c[k]);
          g.pos[i].c[k] = wrap(g.pos[i].c[k] + dt * g.vel[i].c[k]);
        }
      }
      for (int k = 0; k < 3; k++)
        g.force[i].c[k] = 0;
    }
    memset(partial, 0, (size_t)n * sizeof partial[0]);
    pthread_barrier_wait(&g.barrier);

    /* B. forces of the thread's pairs into its private partial array. */
    memcpy(snap, g.pos, (size_t)n * sizeof snap[0]);
    double epot = 0.0, virial = 0.0;
    for (int i = id; i < n - 1; i += g.nthreads) {
      struct particle pi = snap[i];
      struct vec3 fi = {0, 0, 0};
      for (int j = i + 1; j < n; j++) {
        struct vec3 d;
        double fs, e;
        total++;
        if (!pair_force(&pi, &snap[j], &d, &fs, &e))
          continue;
        in_range++;
        epot += e;
        for (int k = 0; k < 3; k++) {
          virial += fs * d.c[k] * d.c[k];
          fi.c[k] += fs * d.c[k];
          partial[j].c[k] -= fs * d.c[k];
        }
      }
      for (int k = 0; k < 3; k++)
        partial[i].c[k] += fi.c[k];
    }
    pthread_mutex_lock(&g.force_lock);
    for (int i = 0; i < n; i++)
      for (int k = 0; k < 3; k++)
        g.force[i].c[k] += to_fixed(partial[i].c[k]);
    g.potential_fixed += to_fixed(epot);
    pthread_mutex_unlock(&g.force_lock);
    g.virial_monitor += virial;
    pthread_barrier_wait(&g.barrier);

    /* C. second half kick with the new forces; kinetic energy. */
    double ke = 0.0;
    for (int i = first; i < last; i++) {
      for (int k = 0; k < 3; k++) {
        double v = g.vel[i].c[k] + half_dt * from_fixed(g.force[i].c[k]);
        g.vel[i].c[k] = v;
        ke += 0.5 * v * v;
      }
    }
    pthread_mutex_lock(&g.stats_lock);
    g.kinetic_fixed += to_fixed(ke);
    pthread_mutex_unlock(&g.stats_lock);
    pthread_barrier_wait(&g.barrier);

    /* Thread 0: the step's energies; the others are already in the next step's phase A, which
     * touches none of these (the next writes come after the next barrier). */
    if (id == 0) {
      g.history[step].kinetic = from_fixed(g.kinetic_fixed);
      g.history[step].potential = from_fixed(g.potential_fixed);
      if (step % REPORT == 0) {
        double vol = g.box * g.box * g.box;
        double pressure = (2.0 * g.history[step].kinetic + g.virial_monitor) / (3.0 * vol);
        fprintf(stderr, "nbody: step %4d  monitor pressure %.4f\n", step, pressure);
      }
      g.kinetic_fixed = 0;
      g.potential_fixed = 0;
      g.virial_monitor = 0.0;
    }
  }
  me->pairs_in_range = in_range;
  me->pairs_total = total;
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Verification (main)                                                                          */

/* Serial forces at the current positions; returns the worst deviation from the parallel ones. */
static double check_forces(double *epot_out) {
  int n = g.n;
  struct vec3 *f = calloc((size_t)n, sizeof *f);
  if (!f)
    return INFINITY;
  double epot = 0.0;
  for (int i = 0; i < n - 1; i++)
    for (int j = i + 1; j < n; j++) {
      struct vec3 d;
      double fs, e;
      if (!pair_force(&g.pos[i], &g.pos[j], &d, &fs, &e))
        continue;
      epot += e;
      for (int k = 0; k < 3; k++) {
        f[i].c[k] += fs * d.c[k];
        f[j].c[k] -= fs * d.c[k];
      }
    }
  double worst = 0.0;
  for (int i = 0; i < n; i++) {
    double err2 = 0.0;
    for (int k = 0; k < 3; k++) {
      double dk = f[i].c[k] - from_fixed(g.force[i].c[k]);
      err2 += dk * dk;
    }
    double err = sqrt(err2);
    if (err > worst)
      worst = err;
  }
  free(f);
  *epot_out = epot;
  return worst;
}

static const char usage[] =
    "usage: %s [-t THREADS] [-n PARTICLES] [-s STEPS]\n"
    "  STEPS velocity-Verlet steps of PARTICLES (even) charged Lennard-Jones particles\n";

int main(int argc, char **argv) {
  long nthreads = 4, n = 512, steps = 100;
  const struct app_opt opts[] = {
      APP_OPT("-t", nthreads, 1, MAX_THREADS),
      APP_OPT("-n", n, 8, MAX_PARTICLES),
      APP_OPT("-s", steps, 1, 1000000),
  };
  if (app_parse_opts(argc, argv, opts, APP_NOPTS(opts), 0) != 0 || n % 2 != 0) {
    app_usage(usage, argv[0]);
    return 2;
  }
  g.n = (int)n;
  g.nthreads = (int)nthreads;
  g.steps = (int)steps;
  g.box = cbrt((double)n / DENSITY);
  g.half_box = 0.5 * g.box;
  if (g.half_box <= RC) {
    fprintf(stderr, "nbody: %ld particles make a box too small for the cutoff\n", n);
    return 2;
  }

  g.pos = malloc((size_t)n * sizeof *g.pos);
  g.vel = malloc((size_t)n * sizeof *g.vel);
  g.force = calloc((size_t)n, sizeof *g.force);
  g.history = calloc((size_t)steps + 1, sizeof *g.history);
  g.slots = aligned_alloc(CACHE_LINE, (size_t)nthreads * sizeof(struct per_thread));
  if (!g.pos || !g.vel || !g.force || !g.history || !g.slots) {
    perror("nbody: malloc");
    return 1;
  }
  memset(g.slots, 0, (size_t)nthreads * sizeof(struct per_thread));
  init_system();

  pthread_mutex_init(&g.force_lock, NULL);
  pthread_mutex_init(&g.stats_lock, NULL);
  if (app_run_workers("nbody", nthreads, worker, &g.barrier) != 0)
    return 1;
  pthread_mutex_destroy(&g.stats_lock);
  pthread_mutex_destroy(&g.force_lock);

  /* Verification. */
  int failures = 0;
  long pairs = 0, in_range = 0;
  for (long t = 0; t < nthreads; t++) {
    pairs += g.slots[t].pairs_total;
    in_range += g.slots[t].pairs_in_range;
  }
  long want_pairs = (steps + 1) * (n * (n - 1) / 2);
  if (pairs != want_pairs) {
    fprintf(stderr, "nbody: %ld pair evaluations, expected %ld\n", pairs, want_pairs);
    failures++;
  }
  /* Energy conservation, relative to the scale of the energies involved. */
  double e0 = g.history[0].kinetic + g.history[0].potential;
  double escale = g.history[0].kinetic + fabs(g.history[0].potential);
  double drift = 0.0;
  for (long s = 0; s <= steps; s++) {
    double e = g.history[s].kinetic + g.history[s].potential;
    double d = fabs(e - e0) / escale;
    if (d > drift)
      drift = d;
  }
  if (drift > 1e-3) {
    fprintf(stderr, "nbody: energy drift %.3e\n", drift);
    failures++;
  }
  double px = 0.0, py = 0.0, pz = 0.0;
  for (int i = 0; i < n; i++) {
    px += g.vel[i].c[0];
    py += g.vel[i].c[1];
    pz += g.vel[i].c[2];
  }
  double pnorm = sqrt(px * px + py * py + pz * pz);
  if (pnorm > 1e-6) {
    fprintf(stderr, "nbody: total momentum %.3e\n", pnorm);
    failures++;
  }
  double epot_serial;
  double ferr = check_forces(&epot_serial);
  double epot_err = fabs(epot_serial - g.history[steps].potential);
  if (ferr > 1e-7 || epot_err > 1e-6 * (1.0 + fabs(epot_serial))) {
    fprintf(stderr, "nbody: final forces differ by %.3e, potential %.9f vs %.9f\n", ferr,
            g.history[steps].potential, epot_serial);
    failures++;
  }

  printf("nbody: %ld particles, box %.4f, %ld steps of %.4f, %ld threads\n", n, g.box, steps,
         TIME_STEP, nthreads);
  printf("pairs evaluated %ld, within the cutoff %ld\n", pairs, in_range);
  for (long s = 0; s <= steps; s += (steps >= 5 ? steps / 5 : 1))
    printf("step %5ld  kinetic %14.6f  potential %14.6f  total %14.6f\n", s, g.history[s].kinetic,
           g.history[s].potential, g.history[s].kinetic + g.history[s].potential);
  printf("energy drift %s 1e-3, momentum %s 1e-6, forces vs serial %s 1e-7\n",
         drift <= 1e-3 ? "<=" : ">", pnorm <= 1e-6 ? "<=" : ">", ferr <= 1e-7 ? "<=" : ">");
  printf("verification: %s\n", failures == 0 ? "PASSED" : "FAILED");

  free(g.slots);
  free(g.history);
  free(g.force);
  free(g.vel);
  free(g.pos);
  return failures == 0 ? 0 : 1;
}
