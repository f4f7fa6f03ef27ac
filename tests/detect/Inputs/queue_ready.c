// The predicate of callee_predicate_norace.c and callee_predicate_race.c, in a translation unit of
// its own: the pass sees this load apart from the loop that branches on what it returns.
#include "queue_ready.h"

int queue_ready(const struct queue *q) { return q->finished; }
