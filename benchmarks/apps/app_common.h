// app_common.h: the helpers that the Table 2 applications (benchmarks/apps/app_*.c) share, so
// that each application holds only its own program. Everything is `static inline` (no object
// file to link) and no helper accesses data while other threads may access it (app_run_workers
// sets up its barrier before the workers start and destroys it after the joins), so the race and
// deadlock locations of the applications stay in their own files.
//
// What it gives:
//  - Command lines: `struct app_opt` tables and app_parse_opts(), a strict parser of "-x VALUE"
//    integer options (a whole decimal argument within [lo, hi], else the command line is bad),
//    of "-x NAME" options that pick one of a list of names, and of "-x" switches; app_usage()
//    prints an application's usage text (a printf format whose first argument is the program).
//  - Hashing: app_mix64_with() (the xor-shift-multiply finalizer, with the shifts and
//    multipliers as parameters), app_mix64() (the splitmix64 finalizer), app_splitmix64() (the
//    splitmix64 output for a key: the finalizer of key + the golden gamma) and
//    app_splitmix64_next() (the splitmix64 generator, stepping a private state).
//  - Checksums: app_crc32_reflected(), the bitwise (table-less) reflected CRC-32 for any
//    polynomial (0xedb88320 is CRC-32/IEEE, 0x82f63b78 CRC-32C).
//  - Time: app_now_seconds() (CLOCK_MONOTONIC) and app_sleep_us() (nanosleep, resumed after a
//    signal).
//  - Threads: app_run_workers(), for the fork-join applications whose workers are numbered:
//    starts worker(0) .. worker(n - 1), joins them all, with an optional barrier for the n
//    workers initialized before and destroyed after.
#ifndef APP_COMMON_H
#define APP_COMMON_H

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// ---------------------------------------------------------------------------------------------
// Command lines

// One option of a table. "-x VALUE" with an integer VALUE in [lo, hi] (choices == NULL), or
// "-x NAME" with NAME one of choices[0 .. lo) (the value is its index, `what` names the kind of
// thing in the error message), or the switch "-x" without a value (sets the value to 1).
struct app_opt {
  const char *flag;
  long *value;
  long lo, hi;
  int is_switch;
  const char *const *choices;
  const char *what;
};

#define APP_OPT(flag, var, lo, hi) {(flag), &(var), (lo), (hi), 0, NULL, NULL}
#define APP_SWITCH(flag, var) {(flag), &(var), 0, 1, 1, NULL, NULL}
#define APP_CHOICE(flag, var, names, what)                                                        \
  {(flag), &(var), (long)(sizeof(names) / sizeof(names)[0]), 0, 0, (names), (what)}
#define APP_NOPTS(table) (sizeof(table) / sizeof(table)[0])

// A whole decimal number in [lo, hi] (no sign of overflow, no trailing characters, not empty).
static inline int app_parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi)
    return 0;
  *out = v;
  return 1;
}

// Parses argv[1 .. argc) against the table: 0 when every argument is a known option with a good
// value (stored), -1 at the first bad one (values before it are stored). With `explain`, says on
// stderr what is wrong with an option that lacks its value, an unknown option or an unknown name
// (a bad integer is left to the usage text).
static inline int app_parse_opts(int argc, char **argv, const struct app_opt *opts, size_t nopts,
                                 int explain) {
  for (int i = 1; i < argc; i++) {
    const char *flag = argv[i];
    const struct app_opt *o = NULL;
    for (size_t k = 0; k < nopts && !o; k++)
      if (strcmp(flag, opts[k].flag) == 0)
        o = &opts[k];
    if (o && o->is_switch) {
      *o->value = 1;
      continue;
    }
    if (i + 1 >= argc) {
      if (explain)
        fprintf(stderr, "option %s needs a value\n", flag);
      return -1;
    }
    const char *val = argv[++i];
    if (!o) {
      if (explain)
        fprintf(stderr, "unknown option '%s'\n", flag);
      return -1;
    }
    if (o->choices) {
      long found = -1;
      for (long k = 0; k < o->lo; k++)
        if (strcmp(val, o->choices[k]) == 0)
          found = k;
      if (found < 0) {
        if (explain)
          fprintf(stderr, "unknown %s '%s'\n", o->what, val);
        return -1;
      }
      *o->value = found;
    } else if (!app_parse_long(val, o->lo, o->hi, o->value)) {
      return -1;
    }
  }
  return 0;
}

// Prints the usage text: a printf format, the program name its first argument.
static inline void app_usage(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  vfprintf(stderr, format, ap);
  va_end(ap);
}

// ---------------------------------------------------------------------------------------------
// Hashing

// x ^= x >> s1; x *= m1; x ^= x >> s2; x *= m2; x ^= x >> s3 (a 64-bit finalizer/mixer; the
// parameters pick the variant: splitmix64's, MurmurHash3's fmix64, ...).
static inline uint64_t app_mix64_with(uint64_t x, unsigned s1, uint64_t m1, unsigned s2,
                                      uint64_t m2, unsigned s3) {
  x ^= x >> s1;
  x *= m1;
  x ^= x >> s2;
  x *= m2;
  return x ^ (x >> s3);
}

#define APP_GOLDEN_GAMMA 0x9e3779b97f4a7c15ULL

// The splitmix64 finalizer.
static inline uint64_t app_mix64(uint64_t x) {
  return app_mix64_with(x, 30, 0xbf58476d1ce4e5b9ULL, 27, 0x94d049bb133111ebULL, 31);
}

// splitmix64 as a pure function of a key: the finalizer of key + gamma.
static inline uint64_t app_splitmix64(uint64_t key) { return app_mix64(key + APP_GOLDEN_GAMMA); }

// The splitmix64 generator: advances *state by gamma and returns the finalized state.
static inline uint64_t app_splitmix64_next(uint64_t *state) {
  return app_mix64(*state += APP_GOLDEN_GAMMA);
}

// ---------------------------------------------------------------------------------------------
// Checksums

// Reflected CRC-32 of p[0 .. n) continuing from `crc` (0 to start), bit by bit, no table.
static inline uint32_t app_crc32_reflected(uint32_t crc, const uint8_t *p, size_t n,
                                           uint32_t poly) {
  crc = ~crc;
  for (size_t i = 0; i < n; i++) {
    crc ^= p[i];
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (poly & (0u - (crc & 1u)));
  }
  return ~crc;
}

// ---------------------------------------------------------------------------------------------
// Time

static inline double app_now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void app_sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
    ;
}

// ---------------------------------------------------------------------------------------------
// Threads

// Runs worker((void *)0) .. worker((void *)(n - 1)) (the index as an intptr_t) on n threads and
// joins them. `barrier`, when not NULL, is initialized for the n threads before any starts and
// destroyed after the joins. Returns 0, or 1 after an error message prefixed with `name`.
static inline int app_run_workers(const char *name, long n, void *(*worker)(void *),
                                  pthread_barrier_t *barrier) {
  pthread_t *threads = malloc((size_t)n * sizeof(pthread_t));
  if (!threads) {
    fprintf(stderr, "%s: malloc: %s\n", name, strerror(errno));
    return 1;
  }
  if (barrier && pthread_barrier_init(barrier, NULL, (unsigned)n) != 0) {
    fprintf(stderr, "%s: pthread_barrier_init failed\n", name);
    free(threads);
    return 1;
  }
  for (long t = 0; t < n; t++) {
    int rc = pthread_create(&threads[t], NULL, worker, (void *)(intptr_t)t);
    if (rc != 0) {
      fprintf(stderr, "%s: pthread_create: %s\n", name, strerror(rc));
      return 1;
    }
  }
  for (long t = 0; t < n; t++)
    pthread_join(threads[t], NULL);
  if (barrier)
    pthread_barrier_destroy(barrier);
  free(threads);
  return 0;
}

#endif
