// SCENARIO: a NIC statistics struct whose rx fields are guarded by rx_lock and tx fields by
//           tx_lock; the rx and tx threads write neighbouring fields (same 8-byte word) in parallel
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// The receive and transmit paths of a driver run on their own threads and each keeps its own
// counters in the shared `stats` struct under its own lock: rx_packets and rx_errors under
// rx_lock, tx_packets and tx_errors under tx_lock. The fields interleave: rx_packets and
// tx_packets share one 8-byte word, rx_errors and tx_errors (16-bit) share one 4-byte word. The
// two threads really write these words at the same time, but never the same bytes: C11 makes
// distinct non-bit-field members distinct memory locations, so there is no data race. A detector
// that tracks memory by word (or by cache line) reports one. The monitor thread takes both locks
// (always rx_lock first, so there is no lock-order cycle) and reads a consistent snapshot of all
// four counters; main prints the totals after the joins.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define FRAMES 200

struct nic_stats {
  uint32_t rx_packets; // rx_lock
  uint32_t tx_packets; // tx_lock
  uint16_t rx_errors;  // rx_lock
  uint16_t tx_errors;  // tx_lock
};

static struct nic_stats stats;
static pthread_mutex_t rx_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t tx_lock = PTHREAD_MUTEX_INITIALIZER;

// A deterministic "bad frame" pattern.
static int frame_bad(int n, int salt) {
  return (n * 37 + salt) % 23 == 0;
}

static void *rx_path(void *arg) {
  (void)arg;
  for (int n = 0; n < FRAMES; n++) {
    int bad = frame_bad(n, 5);
    pthread_mutex_lock(&rx_lock);
    if (bad)
      stats.rx_errors++;
    else
      stats.rx_packets++;
    pthread_mutex_unlock(&rx_lock);
  }
  return NULL;
}

static void *tx_path(void *arg) {
  (void)arg;
  for (int n = 0; n < FRAMES; n++) {
    int bad = frame_bad(n, 11);
    pthread_mutex_lock(&tx_lock);
    if (bad)
      stats.tx_errors++;
    else
      stats.tx_packets++;
    pthread_mutex_unlock(&tx_lock);
  }
  return NULL;
}

// Snapshots all four counters with both locks held (rx_lock, then tx_lock).
static void *monitor(void *arg) {
  struct nic_stats *snap = arg;
  for (int i = 0; i < 3; i++) {
    pthread_mutex_lock(&rx_lock);
    pthread_mutex_lock(&tx_lock);
    *snap = stats;
    pthread_mutex_unlock(&tx_lock);
    pthread_mutex_unlock(&rx_lock);
  }
  return NULL;
}

int main(void) {
  pthread_t rx, tx, mon;
  struct nic_stats snap;

  pthread_create(&rx, NULL, rx_path, NULL);
  pthread_create(&tx, NULL, tx_path, NULL);
  pthread_create(&mon, NULL, monitor, &snap);
  pthread_join(rx, NULL);
  pthread_join(tx, NULL);
  pthread_join(mon, NULL);

  unsigned seen = snap.rx_packets + snap.rx_errors + snap.tx_packets + snap.tx_errors;
  printf("rx %u ok / %u bad, tx %u ok / %u bad (monitor snapshot %s)\n",
         (unsigned)stats.rx_packets, (unsigned)stats.rx_errors, (unsigned)stats.tx_packets,
         (unsigned)stats.tx_errors, seen <= 2 * FRAMES ? "plausible" : "torn");
  return 0;
}
