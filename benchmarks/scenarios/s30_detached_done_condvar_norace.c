// SCENARIO: two detached upload workers report completion through a mutex-protected pending
//           count and a condition variable; main waits for the count to reach zero, then reads
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// The fixed version of the fire-and-forget upload. Detached threads cannot be joined, so they
// signal completion themselves: each worker stores its result in its heap descriptor, then, under
// done_lock, decrements `pending` and signals `all_done`. main waits in the canonical loop
// (while pending > 0, wait) and only then reads the results. The worker's result store comes
// before its unlock, and main's wake-up re-acquires done_lock (and is matched to the signal), so
// the store happens-before main's read: no race, although the thread is never joined and the
// result field itself is written without holding the lock. After its unlock a worker touches
// nothing shared any more (it returns), so main may free the descriptors as soon as it has read
// them; done_lock and all_done are globals, never destroyed while a worker may still use them.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define UPLOADS 2

struct upload {
  long size;
  long chunk;
  long bytes_sent; // the worker's result, published by the completion handshake
};

static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_done = PTHREAD_COND_INITIALIZER;
static int pending; // uploads not finished yet, under done_lock

static void *uploader(void *arg) {
  struct upload *u = arg;
  long sent = 0;
  for (long off = 0; off < u->size; off += u->chunk) {
    long len = u->size - off < u->chunk ? u->size - off : u->chunk;
    sent += len;
  }
  usleep(2000 + (int)(u->size % 3) * 1000); // the network round trips
  u->bytes_sent = sent;
  pthread_mutex_lock(&done_lock);
  pending--;
  pthread_cond_signal(&all_done);
  pthread_mutex_unlock(&done_lock);
  return NULL; // nothing shared is touched after the unlock
}

int main(void) {
  struct upload *ups[UPLOADS];
  long sizes[UPLOADS] = {20000, 7001};

  pending = UPLOADS; // before any worker exists
  for (int i = 0; i < UPLOADS; i++) {
    pthread_t t;
    ups[i] = calloc(1, sizeof *ups[i]);
    if (!ups[i])
      return 1;
    ups[i]->size = sizes[i];
    ups[i]->chunk = 512;
    if (pthread_create(&t, NULL, uploader, ups[i]) != 0)
      return 1;
    pthread_detach(t);
  }

  pthread_mutex_lock(&done_lock);
  while (pending > 0)
    pthread_cond_wait(&all_done, &done_lock);
  pthread_mutex_unlock(&done_lock);

  for (int i = 0; i < UPLOADS; i++) {
    printf("upload %d: %ld of %ld bytes\n", i, ups[i]->bytes_sent, ups[i]->size);
    free(ups[i]);
  }
  return 0;
}
