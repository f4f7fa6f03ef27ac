// SCENARIO: a reference-counted route table shared by two forwarding threads and main; the count
//           is dropped with atomic_fetch_sub and whoever drops the last reference tallies and frees
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// main builds a route table with three references (its own and one per forwarding thread) and
// hands it to the threads. Each thread looks up routes for its packets and counts its hits in its
// own slot of the table (hits[id], plain writes, no lock), then drops its reference with
// atomic_fetch_sub. The thread that takes the count from 1 to 0 is the last user: it reads every
// hits slot to retire the table's statistics and frees it. No lock orders the other threads'
// hits writes before the last user's reads; the reference count does: every fetch_sub is a
// release (it comes after the thread's last use of the table) and the last one an acquire, so
// all the writes happen before the final tally in every execution, whichever thread is last.
// A tool blind to atomics sees hits[] written by one thread and read by another with no lock and
// no join in between.
//
// In the natural run main drops its reference right after starting the threads and the second
// forwarder starts 10 ms late, so the second forwarder frees the table; any other order is
// equally race-free. The retired statistics are read by main after the joins.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ROUTES 4

struct route_table {
  atomic_int refs;
  unsigned prefix[ROUTES]; // read-only after creation
  int port[ROUTES];        // read-only after creation
  int hits[3];             // hits[id]: written only by the user with that id
};

static long retired_hits; // written by the last user, read by main after the joins

static void table_put(struct route_table *t) {
  if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1) {
    // Last reference: every other user's hits[] writes happened before its fetch_sub.
    long sum = 0;
    for (int i = 0; i < 3; i++)
      sum += t->hits[i];
    retired_hits = sum;
    free(t);
  }
}

static int lookup(const struct route_table *t, unsigned addr) {
  for (int i = 0; i < ROUTES; i++)
    if ((addr & 0xFF000000u) == t->prefix[i])
      return t->port[i];
  return -1;
}

struct forwarder {
  int id;
  struct route_table *table;
  unsigned packets[3];
  int ports[3];
};

static void *forward(void *arg) {
  struct forwarder *f = arg;
  usleep(f->id == 2 ? 10000 : 0);
  for (int i = 0; i < 3; i++) {
    f->ports[i] = lookup(f->table, f->packets[i]);
    if (f->ports[i] >= 0)
      f->table->hits[f->id]++; // own slot, no lock
  }
  table_put(f->table); // f->table must not be used after this
  return NULL;
}

int main(void) {
  struct route_table *t = malloc(sizeof *t);
  atomic_init(&t->refs, 3);
  for (int i = 0; i < ROUTES; i++) {
    t->prefix[i] = (unsigned)(10 + i) << 24;
    t->port[i] = i + 1;
  }
  for (int i = 0; i < 3; i++)
    t->hits[i] = 0;

  static struct forwarder f1 = {1, NULL, {0x0A000001u, 0x0C010203u, 0x7F000001u}, {0}};
  static struct forwarder f2 = {2, NULL, {0x0D000001u, 0x0B0000FFu, 0x0A0A0A0Au}, {0}};
  f1.table = f2.table = t;
  pthread_t a, b;
  pthread_create(&a, NULL, forward, &f1);
  pthread_create(&b, NULL, forward, &f2);
  table_put(t); // main is done with the table

  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("ports f1: %d %d %d, f2: %d %d %d; %ld hit(s) retired\n", f1.ports[0], f1.ports[1],
         f1.ports[2], f2.ports[0], f2.ports[1], f2.ports[2], retired_hits);
  return 0;
}
