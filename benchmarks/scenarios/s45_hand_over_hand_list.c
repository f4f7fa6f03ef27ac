// SCENARIO: a sorted word-count list with one lock per node, traversed hand over hand (lock the
//           next node before releasing the current one): fine-grained but race-free
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// Three threads count the words of their texts into one sorted linked list. There is no list-wide
// lock: every node, including the sentinel head, has its own mutex, and list_add() walks the list
// with lock coupling (hand-over-hand): it locks the next node while still holding the current one
// and only then releases the current one. A thread therefore always holds the lock of the node
// whose `next` it reads or writes, and the lock of the node whose count it increments. A new node
// is filled in (word, count, next) by the inserting thread before it is linked into the list, and
// the link is written with the predecessor locked; another thread can only reach the new node by
// locking that predecessor afterwards, so the initialising writes happen before any other
// thread's access. Locksets alone see those initialising writes done with no lock and the reads
// done under the node's lock (a "race"); happens-before through the predecessor's lock does not.
//
// Nodes are freed by main after the joins. The threads start 10 ms apart in the natural run but
// overlap in their traversals; the final list is the same in every order.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node {
  pthread_mutex_t lock;
  char word[16];
  int count;
  struct node *next;
};

static struct node head = {PTHREAD_MUTEX_INITIALIZER, "", 0, NULL}; // sentinel

static void list_add(const char *word) {
  struct node *prev = &head;
  pthread_mutex_lock(&prev->lock);
  struct node *cur = prev->next;
  while (cur) {
    pthread_mutex_lock(&cur->lock); // coupling: prev is still held
    int cmp = strcmp(cur->word, word);
    if (cmp == 0) {
      cur->count++;
      pthread_mutex_unlock(&cur->lock);
      pthread_mutex_unlock(&prev->lock);
      return;
    }
    if (cmp > 0) { // insert before cur, between prev (still locked) and cur
      pthread_mutex_unlock(&cur->lock);
      break;
    }
    pthread_mutex_unlock(&prev->lock);
    prev = cur;
    cur = cur->next; // cur is locked: its next cannot change under us
  }
  struct node *n = malloc(sizeof *n);
  pthread_mutex_init(&n->lock, NULL);
  snprintf(n->word, sizeof n->word, "%s", word);
  n->count = 1;
  n->next = cur;
  prev->next = n; // linked with prev locked: the node is complete before anyone can reach it
  pthread_mutex_unlock(&prev->lock);
}

struct text {
  const char *words[6];
  int start_delay_us;
};

static const struct text texts[3] = {
    {{"lock", "wait", "signal", "lock", "join", "fork"}, 0},
    {{"wait", "race", "lock", "barrier", "fork", "race"}, 10000},
    {{"signal", "join", "lock", "race", "wait", "yield"}, 20000},
};

static void *counter(void *arg) {
  const struct text *t = arg;
  usleep(t->start_delay_us);
  for (int i = 0; i < 6; i++)
    list_add(t->words[i]);
  return NULL;
}

int main(void) {
  pthread_t th[3];
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, counter, (void *)&texts[i]);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);

  int total = 0;
  for (struct node *n = head.next, *next; n; n = next) {
    printf("%-8s %d\n", n->word, n->count);
    total += n->count;
    next = n->next;
    pthread_mutex_destroy(&n->lock);
    free(n);
  }
  printf("%d words\n", total);
  return 0;
}
