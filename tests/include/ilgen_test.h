// Test-only helpers the runtime provides and never records: a barrier that forces the
// interleaving a test needs without adding a synchronization event to the trace (as TSan's test.h
// does), so the recorded run looks to the analysis exactly like an unlucky schedule.
#ifndef ILGEN_TEST_H
#define ILGEN_TEST_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  unsigned long state[2];
} ilgen_test_barrier_t;

void __ilgen_testonly_barrier_init(ilgen_test_barrier_t *b, unsigned count);
void __ilgen_testonly_barrier_wait(ilgen_test_barrier_t *b);

#ifdef __cplusplus
}
#endif

#endif
