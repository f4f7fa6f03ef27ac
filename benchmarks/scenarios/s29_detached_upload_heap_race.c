// SCENARIO: main hands a malloc'd upload descriptor to a detached worker, then sleeps "long
//           enough" and reads the worker's result field from the heap object: a race
// CATEGORY: detached
// EXPECT: race 45 70
// REORDER: no
//
// A client starts a background upload without waiting for it: the upload descriptor is allocated
// on the heap (the worker outlives main's stack frame in the real program), filled in, and given
// to a thread that is immediately detached, so it can never be joined. The worker splits the file
// into chunks and stores the number of bytes it sent in u->bytes_sent. main has no way to wait
// for a detached thread and nobody added one: it sleeps for longer than an upload ever takes and
// then reads u->bytes_sent for its summary. In practice the value is always there, but no
// synchronization orders the worker's store before main's load: the sleep is not a
// happens-before edge, and a detached thread has no join. The race is visible in any run.
//
// The fields that main writes before pthread_create (name, size, chunk size) are ordered with the
// worker by the create. main never frees the descriptor: without a handshake it cannot know when
// the worker is done with it (a free here would race with the worker's reads of size and chunk);
// the process exit reclaims it.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct upload {
  char name[32];
  long size;
  long chunk;
  long bytes_sent; // the worker's result
};

// A stand-in for the network: how much of a chunk the server accepted.
static long send_chunk(long offset, long len) {
  return (offset / 512) % 7 == 3 ? len - 1 : len; // one short write now and then
}

static void *uploader(void *arg) {
  struct upload *u = arg;
  long sent = 0;
  for (long off = 0; off < u->size; off += u->chunk) {
    long len = u->size - off < u->chunk ? u->size - off : u->chunk;
    sent += send_chunk(off, len);
  }
  u->bytes_sent = sent; // publishes the result with a plain store
  return NULL;
}

static struct upload *upload_new(const char *name, long size, long chunk) {
  struct upload *u = malloc(sizeof *u);
  if (!u)
    return NULL;
  memset(u, 0, sizeof *u);
  strncpy(u->name, name, sizeof u->name - 1);
  u->size = size;
  u->chunk = chunk;
  return u;
}

int main(void) {
  pthread_t t;
  struct upload *u = upload_new("report.pdf", 20000, 512);
  if (!u)
    return 1;
  if (pthread_create(&t, NULL, uploader, u) != 0)
    return 1;
  pthread_detach(t); // fire and forget
  // "An upload never takes more than a few milliseconds": a sleep instead of a handshake.
  usleep(30000);
  long sent = u->bytes_sent; // unordered with the worker's store
  printf("%s: %ld of %ld bytes sent (%s)\n", u->name, sent, u->size,
         sent == u->size ? "complete" : "short writes");
  return 0; // u is not freed: see above
}
