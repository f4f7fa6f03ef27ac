// SCENARIO: a routing table guarded by a rwlock; lookups hold only the read lock but also bump a
//           shared hit counter, so two forwarding threads inside the read lock race on it
// CATEGORY: rwlock
// EXPECT: race 51 51
// REORDER: no
//
// A small packet forwarder. main installs a few routes with route_add() (write lock), then starts
// two forwarding threads and an admin thread. The forwarders resolve destination addresses with
// route_lookup(), which correctly takes table_lock for reading: any number of lookups may run at
// once, and the admin's route_add() (write lock) excludes them all. But route_lookup() also counts
// successful lookups in lookup_hits, a write, and a read lock does not exclude other readers:
// both forwarders can be inside the read lock at the same time and their increments of lookup_hits
// (the same line, a read-modify-write) are unordered. Read locks give no happens-before edge
// between readers, so the race is there in any run in which both forwarders do lookups, whatever
// the order in which their read sections came, unless the admin's write section falls between
// the two forwarders' lookups (a write lock orders every read section before it with every one
// after it). In the natural run the admin installs its route late (a sleep, timing only), after
// both forwarders' bursts of lookups: the race is visible as recorded, no reordering needed.
//
// The table itself is fine: the forwarders only read it under the read lock and the admin writes
// it under the write lock. Each forwarder's count of forwarded packets is its own local until
// main joins it; the final report comes after all joins.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define MAX_ROUTES 16
#define PACKETS 12

struct route {
  unsigned prefix;
  unsigned mask;
  int port;
};

static struct route table[MAX_ROUTES];
static int nroutes;
static long lookup_hits; // statistics: lookups that found a route
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;

// Longest-prefix matching is overkill here: the first matching route wins.
static int route_lookup(unsigned addr) {
  int port = -1;
  pthread_rwlock_rdlock(&table_lock);
  for (int i = 0; i < nroutes && port < 0; i++)
    if ((addr & table[i].mask) == table[i].prefix)
      port = table[i].port;
  // The bug: a write under the read lock. Another reader can be right here at the same time.
  if (port >= 0)
    lookup_hits++;
  pthread_rwlock_unlock(&table_lock);
  return port;
}

static void route_add(unsigned prefix, unsigned mask, int port) {
  pthread_rwlock_wrlock(&table_lock);
  if (nroutes < MAX_ROUTES) {
    table[nroutes].prefix = prefix;
    table[nroutes].mask = mask;
    table[nroutes].port = port;
    nroutes++;
  }
  pthread_rwlock_unlock(&table_lock);
}

static void *forwarder(void *arg) {
  unsigned base = *(const unsigned *)arg;
  intptr_t forwarded = 0;
  for (unsigned i = 0; i < PACKETS; i++)
    if (route_lookup(base + i * 0x100u) >= 0)
      forwarded++;
  return (void *)forwarded;
}

// Installs a route for a network the forwarders never send to: it changes none of their results.
static void *admin(void *arg) {
  (void)arg;
  usleep(30000); // the admin logs in after the forwarders' bursts: timing only
  route_add(0xc0a80000u, 0xffff0000u, 9);
  return NULL;
}

int main(void) {
  pthread_t fw[2], adm;
  unsigned bases[2] = {0x0a000001u, 0x0a010001u};
  intptr_t total = 0;

  route_add(0x0a000000u, 0xffff0000u, 1); // 10.0.0.0/16
  route_add(0x0a010000u, 0xffff0000u, 2); // 10.1.0.0/16
  for (int i = 0; i < 2; i++)
    pthread_create(&fw[i], NULL, forwarder, &bases[i]);
  pthread_create(&adm, NULL, admin, NULL);
  for (int i = 0; i < 2; i++) {
    void *ret;
    pthread_join(fw[i], &ret);
    total += (intptr_t)ret;
  }
  pthread_join(adm, NULL);
  printf("forwarded %ld packets, %d routes, hit counter %s\n", (long)total, nroutes,
         lookup_hits == total ? "consistent" : "lost updates");
  return 0;
}
