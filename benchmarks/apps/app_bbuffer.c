// APP: bounded buffer: several producer threads build checksummed messages and put them into a
//      fixed-size ring (one mutex, two condition variables: not-full and not-empty); several
//      consumer threads take them out, verify them and fold them into per-producer totals
// CATEGORY: prodcons
// EXPECT: none
// REORDER: no
// ARGS: -p 3 -c 3 -n 2000 -b 8 -r 80
//
// A message is a header (producer, sequence number, payload length, flags) and up to 240 bytes of
// payload generated from the producer's id and the sequence number; the producer seals it with a
// CRC-32C and an Adler-32 of the payload (bitwise, no tables), `-r` rounds of a scrambling pass
// over the payload standing in for the real work of building a message (encoding, compression).
// The ring holds `-b` messages. put() waits on not_full while the ring is full, copies the message
// into the tail slot, and signals not_empty; get() waits on not_empty while the ring is empty and
// producers are still running, copies the head slot out, and signals not_full. A producer that is
// done decrements the count of running producers under the lock; the last one broadcasts
// not_empty so that every consumer waiting on an empty ring sees the end of the stream.
//
// Consumers verify each message (both checksums recomputed from the copy, length and flags
// consistent) and that, per producer, the sequence numbers they receive increase: the ring is
// FIFO, so any one consumer sees one producer's messages in order (not necessarily all of them).
// They unscramble the payload and fold it into per-producer totals of their own. main adds up
// the consumers' totals after joining them and compares them with what the producers computed
// while producing: every message delivered exactly once, nothing corrupted, nothing lost.
//
// Race-free: the ring, its counters and the number of running producers are only touched with the
// mutex held; a message is built in the producer's own memory and copied into the ring under
// the lock, copied out under the lock by the consumer; each thread's statistics are its own until
// main joins it. Only main prints, after the joins, and only figures that do not depend on the
// schedule (which consumer got which message does).
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>

#include "app_common.h"

#define MAX_PRODUCERS 8
#define MAX_CONSUMERS 8
#define MAX_CAPACITY 256
#define PAYLOAD_MAX 240

// ---------------------------------------------------------------------------------------------
// Messages

enum msg_flags {
  MSG_URGENT = 1u << 0,     // every 16th message
  MSG_COMPRESSED = 1u << 1, // payload was scrambled (always, with -r > 0)
  MSG_LAST = 1u << 2,       // the producer's last message
};

struct msg_header {
  uint16_t producer;
  uint16_t length;  // payload bytes used
  uint32_t seq;     // per producer, from 0
  uint32_t flags;
  uint32_t crc;     // CRC-32C of payload[0 .. length)
  uint32_t adler;   // Adler-32 of the same bytes
  uint32_t rounds;  // scrambling rounds applied
};

struct message {
  struct msg_header h;
  uint8_t payload[PAYLOAD_MAX];
};

static uint32_t crc32c(const uint8_t *p, size_t n) {
  return app_crc32_reflected(0, p, n, 0x82f63b78u);
}

static uint32_t adler32(const uint8_t *p, size_t n) {
  uint32_t a = 1, b = 0;
  for (size_t i = 0; i < n; i++) {
    a = (a + p[i]) % 65521u;
    b = (b + a) % 65521u;
  }
  return (b << 16) | a;
}

// xorshift32 keyed by (producer, seq, round): the keystream of the scrambling pass.
static uint32_t keystream_seed(unsigned producer, uint32_t seq, unsigned round) {
  uint32_t x = 0x9e3779b9u ^ (producer * 0x85ebca6bu) ^ (seq * 0xc2b2ae35u) ^ (round * 0x27d4eb2fu);
  return x ? x : 1;
}

static uint32_t xorshift32(uint32_t *s) {
  uint32_t x = *s;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *s = x;
}

// One scrambling round: xor with a keystream, then rotate every byte by a key-dependent amount.
// Invertible (unscramble runs the rounds backwards).
static void scramble_round(uint8_t *p, size_t n, uint32_t key) {
  uint32_t s = key;
  for (size_t i = 0; i < n; i++) {
    uint32_t k = xorshift32(&s);
    uint8_t v = (uint8_t)(p[i] ^ (uint8_t)k);
    unsigned r = (k >> 8) & 7u;
    p[i] = (uint8_t)((v << r) | (v >> ((8 - r) & 7u)));
  }
}

static void unscramble_round(uint8_t *p, size_t n, uint32_t key) {
  uint32_t s = key;
  for (size_t i = 0; i < n; i++) {
    uint32_t k = xorshift32(&s);
    unsigned r = (k >> 8) & 7u;
    uint8_t v = (uint8_t)((p[i] >> r) | (p[i] << ((8 - r) & 7u)));
    p[i] = (uint8_t)(v ^ (uint8_t)k);
  }
}

// The clear-text payload of message `seq` of `producer`: a little record in text form, padded
// with a pattern, so that lengths vary between 48 and PAYLOAD_MAX bytes.
static size_t make_payload(uint8_t *p, unsigned producer, uint32_t seq) {
  char text[96];
  int len = snprintf(text, sizeof text, "producer=%u seq=%" PRIu32 " reading=%" PRIu32 ".%02u;",
                     producer, seq, (seq * 37u + producer * 11u) % 1000u, (seq * 7u) % 100u);
  size_t n = 48 + (size_t)((seq * 2654435761u + producer * 97u) % (PAYLOAD_MAX - 48 + 1));
  for (size_t i = 0; i < n; i++)
    p[i] = i < (size_t)len ? (uint8_t)text[i] : (uint8_t)('a' + (i * 7 + seq) % 26);
  return n;
}

// A digest of the clear-text payload that the totals add up (order independent).
static uint64_t payload_digest(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

// ---------------------------------------------------------------------------------------------
// The bounded buffer

struct ring {
  pthread_mutex_t lock;
  pthread_cond_t not_full;
  pthread_cond_t not_empty;
  struct message *slots;
  int capacity;
  int head;       // next slot to take
  int tail;       // next slot to fill
  int count;      // messages in the ring
  int producers;  // producers still running
  // statistics, under the lock
  long puts, gets;
  long full_waits, empty_waits;
  int high_water;
};

static int ring_init(struct ring *r, int capacity, int producers) {
  memset(r, 0, sizeof *r);
  r->slots = calloc((size_t)capacity, sizeof(struct message));
  if (!r->slots)
    return -1;
  pthread_mutex_init(&r->lock, NULL);
  pthread_cond_init(&r->not_full, NULL);
  pthread_cond_init(&r->not_empty, NULL);
  r->capacity = capacity;
  r->producers = producers;
  return 0;
}

static void ring_destroy(struct ring *r) {
  pthread_cond_destroy(&r->not_empty);
  pthread_cond_destroy(&r->not_full);
  pthread_mutex_destroy(&r->lock);
  free(r->slots);
}

// Copies *m into the ring, waiting while it is full.
static void ring_put(struct ring *r, const struct message *m) {
  pthread_mutex_lock(&r->lock);
  while (r->count == r->capacity) {
    r->full_waits++;
    pthread_cond_wait(&r->not_full, &r->lock);
  }
  struct message *slot = &r->slots[r->tail];
  slot->h = m->h;
  memcpy(slot->payload, m->payload, m->h.length);
  r->tail = (r->tail + 1) % r->capacity;
  r->count++;
  r->puts++;
  if (r->count > r->high_water)
    r->high_water = r->count;
  pthread_cond_signal(&r->not_empty);
  pthread_mutex_unlock(&r->lock);
}

// Copies the oldest message into *m, waiting while the ring is empty and producers are running.
// Returns 0 at the end of the stream (empty ring, no producer left), 1 otherwise.
static int ring_get(struct ring *r, struct message *m) {
  pthread_mutex_lock(&r->lock);
  while (r->count == 0 && r->producers > 0) {
    r->empty_waits++;
    pthread_cond_wait(&r->not_empty, &r->lock);
  }
  if (r->count == 0) {
    pthread_mutex_unlock(&r->lock);
    return 0;
  }
  const struct message *slot = &r->slots[r->head];
  m->h = slot->h;
  memcpy(m->payload, slot->payload, slot->h.length);
  r->head = (r->head + 1) % r->capacity;
  r->count--;
  r->gets++;
  pthread_cond_signal(&r->not_full);
  pthread_mutex_unlock(&r->lock);
  return 1;
}

// A producer is done: the last one wakes every consumer waiting on an empty ring.
static void ring_producer_done(struct ring *r) {
  pthread_mutex_lock(&r->lock);
  r->producers--;
  if (r->producers == 0)
    pthread_cond_broadcast(&r->not_empty);
  pthread_mutex_unlock(&r->lock);
}

// ---------------------------------------------------------------------------------------------
// Threads

struct totals {
  long messages;
  long bytes;
  long urgent;
  uint64_t digest_sum;  // sum of payload digests (clear text)
  uint64_t seq_sum;     // sum of sequence numbers
};

struct producer {
  pthread_t thread;
  unsigned id;
  long count;       // messages to produce
  unsigned rounds;  // scrambling rounds per message
  struct ring *ring;
  struct totals made;
};

struct consumer {
  pthread_t thread;
  unsigned id;
  unsigned nproducers;
  struct ring *ring;
  struct totals got[MAX_PRODUCERS];
  int64_t last_seq[MAX_PRODUCERS];  // per producer, -1 before the first message
  long bad_checksum, bad_order, bad_length, last_flags;
};

static void *producer_main(void *arg) {
  struct producer *p = arg;
  struct message m;
  for (long i = 0; i < p->count; i++) {
    uint32_t seq = (uint32_t)i;
    size_t n = make_payload(m.payload, p->id, seq);
    p->made.messages++;
    p->made.bytes += (long)n;
    p->made.digest_sum += payload_digest(m.payload, n);
    p->made.seq_sum += seq;
    for (unsigned k = 0; k < p->rounds; k++)
      scramble_round(m.payload, n, keystream_seed(p->id, seq, k));
    m.h.producer = (uint16_t)p->id;
    m.h.length = (uint16_t)n;
    m.h.seq = seq;
    m.h.flags = (p->rounds ? MSG_COMPRESSED : 0u) | (seq % 16 == 0 ? MSG_URGENT : 0u) |
                (i == p->count - 1 ? MSG_LAST : 0u);
    if (m.h.flags & MSG_URGENT)
      p->made.urgent++;
    m.h.rounds = p->rounds;
    m.h.crc = crc32c(m.payload, n);
    m.h.adler = adler32(m.payload, n);
    ring_put(p->ring, &m);
  }
  ring_producer_done(p->ring);
  return NULL;
}

static void *consumer_main(void *arg) {
  struct consumer *c = arg;
  struct message m;
  for (unsigned i = 0; i < c->nproducers; i++)
    c->last_seq[i] = -1;
  while (ring_get(c->ring, &m)) {
    unsigned pid = m.h.producer;
    size_t n = m.h.length;
    if (pid >= c->nproducers || n < 48 || n > PAYLOAD_MAX) {
      c->bad_length++;
      continue;
    }
    if (crc32c(m.payload, n) != m.h.crc || adler32(m.payload, n) != m.h.adler) {
      c->bad_checksum++;
      continue;
    }
    if ((int64_t)m.h.seq <= c->last_seq[pid])
      c->bad_order++;
    c->last_seq[pid] = m.h.seq;
    if (m.h.flags & MSG_LAST)
      c->last_flags++;
    for (unsigned k = m.h.rounds; k-- > 0;)
      unscramble_round(m.payload, n, keystream_seed(pid, m.h.seq, k));
    struct totals *t = &c->got[pid];
    t->messages++;
    t->bytes += (long)n;
    if (m.h.flags & MSG_URGENT)
      t->urgent++;
    t->digest_sum += payload_digest(m.payload, n);
    t->seq_sum += m.h.seq;
  }
  return NULL;
}

// ---------------------------------------------------------------------------------------------
// main

struct config {
  long producers, consumers;
  long per_producer;
  long capacity;
  long rounds;
  long verbose;
};

static const char usage[] =
    "usage: %s [-p producers] [-c consumers] [-n messages-per-producer] [-b capacity]\n"
    "          [-r scrambling-rounds] [-v]\n";

static int parse_args(int argc, char **argv, struct config *cfg) {
  *cfg = (struct config){
      .producers = 3, .consumers = 3, .per_producer = 2000, .capacity = 8, .rounds = 80};
  const struct app_opt opts[] = {
      APP_OPT("-p", cfg->producers, 1, MAX_PRODUCERS),
      APP_OPT("-c", cfg->consumers, 1, MAX_CONSUMERS),
      APP_OPT("-n", cfg->per_producer, 1, 100000000L),
      APP_OPT("-b", cfg->capacity, 1, MAX_CAPACITY),
      APP_OPT("-r", cfg->rounds, 0, 1000),
      APP_SWITCH("-v", cfg->verbose),
  };
  return app_parse_opts(argc, argv, opts, APP_NOPTS(opts), 0);
}

int main(int argc, char **argv) {
  struct config cfg;
  if (parse_args(argc, argv, &cfg) != 0) {
    app_usage(usage, argv[0]);
    return 2;
  }
  struct ring ring;
  if (ring_init(&ring, cfg.capacity, cfg.producers) != 0) {
    perror("ring_init");
    return 1;
  }
  struct producer *prods = calloc((size_t)cfg.producers, sizeof *prods);
  struct consumer *cons = calloc((size_t)cfg.consumers, sizeof *cons);
  if (!prods || !cons) {
    perror("calloc");
    return 1;
  }

  for (int i = 0; i < cfg.consumers; i++) {
    cons[i].id = (unsigned)i;
    cons[i].nproducers = (unsigned)cfg.producers;
    cons[i].ring = &ring;
    int rc = pthread_create(&cons[i].thread, NULL, consumer_main, &cons[i]);
    if (rc) {
      fprintf(stderr, "pthread_create: %s\n", strerror(rc));
      return 1;
    }
  }
  for (int i = 0; i < cfg.producers; i++) {
    prods[i].id = (unsigned)i;
    prods[i].count = cfg.per_producer;
    prods[i].rounds = cfg.rounds;
    prods[i].ring = &ring;
    int rc = pthread_create(&prods[i].thread, NULL, producer_main, &prods[i]);
    if (rc) {
      fprintf(stderr, "pthread_create: %s\n", strerror(rc));
      return 1;
    }
  }
  for (int i = 0; i < cfg.producers; i++)
    pthread_join(prods[i].thread, NULL);
  for (int i = 0; i < cfg.consumers; i++)
    pthread_join(cons[i].thread, NULL);

  // After the joins: compare what was made with what was received, per producer.
  int ok = 1;
  long bad_checksum = 0, bad_order = 0, bad_length = 0, last_flags = 0;
  for (int j = 0; j < cfg.consumers; j++) {
    bad_checksum += cons[j].bad_checksum;
    bad_order += cons[j].bad_order;
    bad_length += cons[j].bad_length;
    last_flags += cons[j].last_flags;
  }
  printf("bbuffer: %ld producers x %ld messages, %ld consumers, capacity %ld, %ld rounds\n",
         cfg.producers, cfg.per_producer, cfg.consumers, cfg.capacity, cfg.rounds);
  struct totals all_made = {0, 0, 0, 0, 0}, all_got = {0, 0, 0, 0, 0};
  for (int i = 0; i < cfg.producers; i++) {
    struct totals got = {0, 0, 0, 0, 0};
    for (int j = 0; j < cfg.consumers; j++) {
      got.messages += cons[j].got[i].messages;
      got.bytes += cons[j].got[i].bytes;
      got.urgent += cons[j].got[i].urgent;
      got.digest_sum += cons[j].got[i].digest_sum;
      got.seq_sum += cons[j].got[i].seq_sum;
    }
    const struct totals *made = &prods[i].made;
    int same = got.messages == made->messages && got.bytes == made->bytes &&
               got.urgent == made->urgent && got.digest_sum == made->digest_sum &&
               got.seq_sum == made->seq_sum;
    ok &= same;
    printf("producer %d: %ld messages, %ld bytes, %ld urgent, digest %016" PRIx64 " -> %s\n", i,
           made->messages, made->bytes, made->urgent, made->digest_sum,
           same ? "all delivered" : "MISMATCH");
    all_made.messages += made->messages;
    all_made.bytes += made->bytes;
    all_got.messages += got.messages;
    all_got.bytes += got.bytes;
  }
  ok &= bad_checksum == 0 && bad_order == 0 && bad_length == 0 && last_flags == cfg.producers;
  ok &= ring.count == 0 && ring.puts == all_made.messages && ring.gets == all_got.messages;
  printf("total: %ld messages, %ld bytes made; %ld messages, %ld bytes received\n",
         all_made.messages, all_made.bytes, all_got.messages, all_got.bytes);
  printf("checks: %ld bad checksums, %ld out of order, %ld bad lengths, %ld end markers\n",
         bad_checksum, bad_order, bad_length, last_flags);
  if (cfg.verbose) {
    fprintf(stderr, "ring: high water %d of %d, %ld waits on full, %ld waits on empty\n",
            ring.high_water, ring.capacity, ring.full_waits, ring.empty_waits);
    for (int j = 0; j < cfg.consumers; j++) {
      long n = 0;
      for (int i = 0; i < cfg.producers; i++)
        n += cons[j].got[i].messages;
      fprintf(stderr, "consumer %d: %ld messages\n", j, n);
    }
  }
  printf("%s\n", ok ? "OK" : "FAILED");
  ring_destroy(&ring);
  free(prods);
  free(cons);
  return ok ? 0 : 1;
}
