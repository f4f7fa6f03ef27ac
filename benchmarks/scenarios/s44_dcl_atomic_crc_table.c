// SCENARIO: double-checked lazy initialisation of a CRC table done right: a C11 atomic flag with
//           release/acquire publishes the table, so the lock-free readers are ordered after it
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// Three workers checksum their messages with a CRC-32 table that is built on first use. The
// first caller takes init_lock, builds the table and then sets table_ready with a release store;
// every later caller sees table_ready == 1 through an acquire load and reads the table without
// taking the lock at all. This is the correct form of double-checked locking: the release store
// comes after every write of the table and the acquire load before every lock-free read, so each
// read happens after the writes (C11 synchronizes-with), whatever the order of the threads. A tool
// that looks only at locks sees table writes under init_lock and table reads under no lock, i.e. a
// race; one that understands atomics sees none. The second check of the flag, under the lock,
// keeps two threads that both saw 0 from building the table twice.
//
// In the natural run the first worker builds the table and the other two start 30 ms later and
// take the fast path. Any other order is equally race-free: a worker that sees 0 takes the lock.
// Each worker's result is its own until main reads it after the joins.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int table_ready; // 0 until crc_table is complete
static uint32_t crc_table[256]; // written once, under init_lock, before table_ready is set

static const uint32_t *get_crc_table(void) {
  if (!atomic_load_explicit(&table_ready, memory_order_acquire)) { // fast path: no lock
    pthread_mutex_lock(&init_lock);
    if (!atomic_load_explicit(&table_ready, memory_order_relaxed)) { // checked again, locked
      for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
          c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
      }
      atomic_store_explicit(&table_ready, 1, memory_order_release); // publishes the table
    }
    pthread_mutex_unlock(&init_lock);
  }
  return crc_table;
}

static uint32_t crc32(const char *buf, size_t len) {
  const uint32_t *t = get_crc_table();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < len; i++)
    c = t[(c ^ (uint8_t)buf[i]) & 0xFF] ^ (c >> 8); // lock-free read of the table
  return c ^ 0xFFFFFFFFu;
}

struct job {
  const char *msg;
  int start_delay_us;
  uint32_t crc;
};

static void *worker(void *arg) {
  struct job *j = arg;
  usleep(j->start_delay_us);
  j->crc = crc32(j->msg, strlen(j->msg));
  return NULL;
}

int main(void) {
  struct job jobs[3] = {
      {"123456789", 0, 0},
      {"The quick brown fox jumps over the lazy dog", 30000, 0},
      {"ilgen", 30000, 0},
  };
  pthread_t t[3];

  for (int i = 0; i < 3; i++)
    pthread_create(&t[i], NULL, worker, &jobs[i]);
  for (int i = 0; i < 3; i++)
    pthread_join(t[i], NULL);

  for (int i = 0; i < 3; i++)
    printf("crc32(\"%s\") = %08x\n", jobs[i].msg, (unsigned)jobs[i].crc);
  printf("check value %s\n", jobs[0].crc == 0xCBF43926u ? "ok" : "WRONG");
  return 0;
}
