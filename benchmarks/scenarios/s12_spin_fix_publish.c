// SCENARIO: a GPS thread bumps the fix counter under a spin lock and only then stores the new
//           position; the navigator reads the position before taking the spin lock
// CATEGORY: spinlock
// EXPECT: race 42 55
// EXPECT: race 43 56
// REORDER: yes
//
// The GPS thread announces a fix by incrementing `fixes` under fix_lock (a pthread spin lock)
// and then fills in `pos.lat_e7` and `pos.lon_e7` outside the lock: the author treated the
// counter as the thing to protect and the position as "written by one thread only". The
// navigator samples the position first and then takes fix_lock to see how many fixes there were,
// to decide whether the sample is fresh. Each field is written by one thread and read by
// another with nothing ordering the two except the order of the critical sections.
//
// In the natural run the GPS receiver needs time to acquire satellites (a sleep), so the
// navigator's sample and its critical section come first; the navigator's unlock then the GPS
// thread's lock order both reads before both writes, and a happens-before detector sees nothing.
// When the GPS thread's critical section comes first, its position stores (after its unlock) and
// the navigator's reads (before its lock) are unordered: one race per field, to be predicted by
// reordering the two critical sections. main prints the final state after the joins.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct position {
  long lat_e7; // degrees * 1e7
  long lon_e7;
};

static struct position pos;
static int fixes;
static pthread_spinlock_t fix_lock;

static void *gps(void *arg) {
  (void)arg;
  usleep(20000); // satellite acquisition: timing only
  long lat = 485000000 + 123, lon = 23500000 - 45;
  pthread_spin_lock(&fix_lock);
  fixes++;
  pthread_spin_unlock(&fix_lock);
  // BUG: the position is published after the counter, outside the lock.
  pos.lat_e7 = lat; // RACE: with the navigator's read of lat_e7
  pos.lon_e7 = lon; // RACE: with the navigator's read of lon_e7
  return NULL;
}

struct nav_state {
  struct position sample;
  int fresh;
};

static void *navigator(void *arg) {
  struct nav_state *st = arg;
  // Sample first, then check how many fixes there were.
  st->sample.lat_e7 = pos.lat_e7; // RACE: unlocked read of the latitude
  st->sample.lon_e7 = pos.lon_e7; // RACE: unlocked read of the longitude
  pthread_spin_lock(&fix_lock);
  int n = fixes;
  pthread_spin_unlock(&fix_lock);
  st->fresh = n > 0;
  return NULL;
}

int main(void) {
  pthread_t g, n;
  struct nav_state st = {{0, 0}, 0};
  pthread_spin_init(&fix_lock, PTHREAD_PROCESS_PRIVATE);
  pthread_create(&g, NULL, gps, NULL);
  pthread_create(&n, NULL, navigator, &st);
  pthread_join(g, NULL);
  pthread_join(n, NULL);
  printf("navigator sampled (%ld, %ld), %s; final fix (%ld, %ld), %d fix(es)\n",
         st.sample.lat_e7, st.sample.lon_e7, st.fresh ? "fresh" : "no fix yet", pos.lat_e7,
         pos.lon_e7, fixes);
  pthread_spin_destroy(&fix_lock);
  return 0;
}
