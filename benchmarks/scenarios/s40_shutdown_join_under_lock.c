// SCENARIO: server shutdown joins the connection handlers while holding the connection-table lock,
//           which each handler needs to unregister itself: a join/lock deadlock
// CATEGORY: deadlock
// EXPECT: deadlock 54 91
// REORDER: yes
//
// main accepts two connections, registers them in a table protected by table_lock and starts one
// handler thread per connection. On shutdown it takes table_lock, marks every entry closing and,
// to keep the table stable while it waits, joins each handler with the lock still held. A handler
// that finishes its request unregisters itself from the table, which needs table_lock. If main
// reaches shutdown while a handler is still working, main holds the lock and waits in
// pthread_join for the handler, and the handler waits in pthread_mutex_lock for the lock main
// holds: neither ever returns.
//
// In the natural run the handlers' requests are quick and main "serves" for 40 ms before shutting
// down, so both handlers have unregistered (and ended) before main takes the lock; the joins
// return at once. Reordering the recorded operations so that main's lock comes before a handler's
// unregistration exposes the deadlock (main in the join, the handlers in the lock).
//
// Data: the table is accessed under table_lock only (main fills it before the handlers exist,
// ordered by pthread_create), each handler's reply buffer belongs to its connection, and main
// reads the replies after the joins. There is no data race.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_CONN 2

struct conn {
  int fd;
  int open;    // under table_lock
  int closing; // under table_lock
  pthread_t thread;
  char request[32];
  char reply[48];
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conn table[MAX_CONN];
static int live; // number of registered connections, under table_lock

static void register_conn(struct conn *c, int fd, const char *request) {
  c->fd = fd;
  strncpy(c->request, request, sizeof c->request - 1);
  pthread_mutex_lock(&table_lock);
  c->open = 1;
  live++;
  pthread_mutex_unlock(&table_lock);
}

// Called by a handler when its connection is done.
static void unregister(struct conn *c) {
  pthread_mutex_lock(&table_lock); // a handler blocks here while main joins it
  c->open = 0;
  live--;
  pthread_mutex_unlock(&table_lock);
}

static void *handler(void *arg) {
  struct conn *c = arg;
  // Serve the request: an upper-cased echo, built in the connection's own buffer.
  size_t n = strlen(c->request);
  for (size_t i = 0; i < n && i + 1 < sizeof c->reply; i++) {
    char ch = c->request[i];
    c->reply[i] = (ch >= 'a' && ch <= 'z') ? (char)(ch - 'a' + 'A') : ch;
  }
  unregister(c);
  return NULL;
}

int main(void) {
  const char *requests[MAX_CONN] = {"get /index", "get /status"};

  for (int i = 0; i < MAX_CONN; i++) {
    register_conn(&table[i], 10 + i, requests[i]);
    if (pthread_create(&table[i].thread, NULL, handler, &table[i]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }

  usleep(40000); // serve for a while; the handlers are done by now in the natural run

  // Shutdown: mark every connection closing and wait for its handler. The bug: the joins happen
  // with table_lock held, and a handler that is still running needs it to unregister.
  pthread_mutex_lock(&table_lock);
  for (int i = 0; i < MAX_CONN; i++)
    table[i].closing = 1;
  for (int i = 0; i < MAX_CONN; i++)
    pthread_join(table[i].thread, NULL); // main blocks here, holding table_lock
  int left = live;
  pthread_mutex_unlock(&table_lock);

  for (int i = 0; i < MAX_CONN; i++)
    printf("fd %d: \"%s\" -> \"%s\"\n", table[i].fd, table[i].request, table[i].reply);
  printf("%d connection(s) still registered\n", left);
  return 0;
}
