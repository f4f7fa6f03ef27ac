// SCENARIO: a parser hands a parsed request to a handler through a mutex, a `ready` flag and a
//           condition variable; the handler arrives after the flag is set and never calls
//           pthread_cond_wait, yet the hand-off still orders everything: race-free
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// The parser fills the request (method, path length, body checksum) without holding any lock,
// then takes req_lock, sets `ready` and signals req_cv. The handler takes req_lock and waits
// with the textbook loop `while (!ready) pthread_cond_wait(...)`, releases the lock and then
// reads the request fields, unlocked, to build its response.
//
// In the natural run the handler starts late (a short sleep), finds `ready` already set and never
// waits: there is no signal-to-wait edge in the trace, only the order of the two critical
// sections on req_lock. That order is not an accident of timing, though: the handler can only
// leave the loop after reading ready == 1, which only the parser's critical section writes, after
// it filled the request. If the handler's critical section came first it would find ready == 0
// and block in pthread_cond_wait until the parser's signal, which again orders the fill before
// the reads. A tool that reorders the two critical sections without honouring the predicate
// (or that treats the missing wait as "no synchronization") reports a false race on the request
// fields. The response goes back to main through the join.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct request {
  int method;    // 0 = GET, 1 = PUT
  int path_len;
  unsigned sum;  // checksum of the body
};

static struct request req;         // filled by the parser without a lock, before `ready`
static int ready;                  // under req_lock
static pthread_mutex_t req_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t req_cv = PTHREAD_COND_INITIALIZER;

static void *parser(void *arg) {
  const char *raw = arg;
  const char *sp = strchr(raw, ' ');
  const char *body = strchr(raw, '\n');
  unsigned sum = 0;
  for (const char *p = body ? body + 1 : raw; *p; p++)
    sum = sum * 33 + (unsigned char)*p;
  req.method = strncmp(raw, "PUT", 3) == 0;
  req.path_len = (sp && body) ? (int)(body - sp - 1) : 0;
  req.sum = sum;
  pthread_mutex_lock(&req_lock);
  ready = 1;
  pthread_cond_signal(&req_cv);
  pthread_mutex_unlock(&req_lock);
  return NULL;
}

static void *handler(void *arg) {
  unsigned *response = arg;
  usleep(5000); // the handler thread comes up after the request is parsed
  pthread_mutex_lock(&req_lock);
  while (!ready) // already true in the natural run: the wait is never called
    pthread_cond_wait(&req_cv, &req_lock);
  pthread_mutex_unlock(&req_lock);
  // Ordered after the parser's stores by the predicate, whichever thread locks first.
  unsigned status = req.method ? 201 : 200;
  response[0] = status * 1000 + (unsigned)req.path_len;
  response[1] = req.sum;
  return NULL;
}

int main(void) {
  static char raw[] = "PUT /accounts/17\nbalance=250&owner=ada";
  unsigned response[2] = {0, 0};
  pthread_t tp, th;

  if (pthread_create(&tp, NULL, parser, raw) != 0 ||
      pthread_create(&th, NULL, handler, response) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  pthread_join(tp, NULL);
  pthread_join(th, NULL);
  printf("status %u, path length %u, body checksum %u\n", response[0] / 1000, response[0] % 1000,
         response[1]);
  return 0;
}
