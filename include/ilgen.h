/* ilgen.h: mark the atomic blocks `ilgen detect --atomicity` checks.
 *
 * `ilgen cc` puts this header's directory on the include path. A function marked ILGEN_ATOMIC is
 * one transaction each time it is called; ILGEN_ATOMIC_BEGIN() and ILGEN_ATOMIC_END() mark a block
 * inside a function (pair them on every path). Blocks nest: only the outermost one of a thread
 * counts. Compiled without ilgen, the marks do nothing and need no ilgen library.
 *
 *   ILGEN_ATOMIC void withdraw(struct account *a, int amount) { ... }
 *
 *   ILGEN_ATOMIC_BEGIN();
 *   ... check and update ...
 *   ILGEN_ATOMIC_END();
 */
#ifndef ILGEN_H
#define ILGEN_H

#ifdef __cplusplus
extern "C" {
#endif

/* Defined by ilgen's runtime; weak, so a program built without it links and skips the calls.
 * The argument is the site the ilgen pass fills in. */
extern void __ilgen_tx_begin(const void *site) __attribute__((weak));
extern void __ilgen_tx_end(const void *site) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#define ILGEN_ATOMIC __attribute__((annotate("ilgen_atomic")))

#define ILGEN_ATOMIC_BEGIN()                                                                    \
  do {                                                                                          \
    if (__ilgen_tx_begin)                                                                       \
      __ilgen_tx_begin((const void *)0);                                                        \
  } while (0)

#define ILGEN_ATOMIC_END()                                                                      \
  do {                                                                                          \
    if (__ilgen_tx_end)                                                                         \
      __ilgen_tx_end((const void *)0);                                                          \
  } while (0)

#endif /* ILGEN_H */
