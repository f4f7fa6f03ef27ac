// SCENARIO: a sorted linked list with one mutex per node, traversed with hand-over-hand (lock
//           coupling) locking by an inserter and an updater running at once: race-free
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// Fine-grained locking: each node has its own lock and a thread walking the list always holds
// the lock of the node it is on before it releases the previous one. The inserter links a new
// node between `prev` and `cur` while holding both of their locks; the updater bumps the count
// of a key while holding that node's lock. Every access to a node's `next` or `count` is made
// with that node's lock held, and a newly inserted node is initialized before it is linked (its
// initial writes are ordered with later lockers by the unlock of `prev`, the only way to reach it).
//
// No single lock protects the whole list, and each thread holds a changing set of locks, so a
// tool that looks for one common lock per variable, or that does not follow lock coupling,
// reports the `next` and `count` fields. The head sentinel is never removed; main frees and
// prints the list after both joins.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct node {
  pthread_mutex_t lock;
  int key;
  int count;
  struct node *next;
};

static struct node *new_node(int key, struct node *next) {
  struct node *n = malloc(sizeof *n);
  pthread_mutex_init(&n->lock, NULL);
  n->key = key;
  n->count = 1;
  n->next = next;
  return n;
}

static struct node *head; // sentinel with key -1, created before the threads

// Adds one to `key`'s count, inserting the key in order if it is missing.
static void add(int key) {
  struct node *prev = head;
  pthread_mutex_lock(&prev->lock);
  struct node *cur = prev->next;
  while (cur) {
    pthread_mutex_lock(&cur->lock);
    if (cur->key >= key)
      break;
    pthread_mutex_unlock(&prev->lock); // hand over: cur stays locked
    prev = cur;
    cur = cur->next;
  }
  if (cur && cur->key == key) {
    cur->count++;
  } else {
    prev->next = new_node(key, cur); // both prev and cur (if any) are locked
  }
  if (cur)
    pthread_mutex_unlock(&cur->lock);
  pthread_mutex_unlock(&prev->lock);
}

static void *inserter(void *arg) {
  (void)arg;
  static const int keys[] = {40, 10, 30, 20};
  for (int i = 0; i < 4; i++)
    add(keys[i]);
  return NULL;
}

static void *updater(void *arg) {
  (void)arg;
  usleep(2000); // arrives when some keys exist: timing only
  for (int i = 0; i < 3; i++)
    add(30);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  head = new_node(-1, NULL);
  pthread_create(&a, NULL, inserter, NULL);
  pthread_create(&b, NULL, updater, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);

  for (struct node *n = head->next, *next; n; n = next) {
    printf("%d:%d ", n->key, n->count);
    next = n->next;
    pthread_mutex_destroy(&n->lock);
    free(n);
  }
  printf("\n");
  pthread_mutex_destroy(&head->lock);
  free(head);
  return 0;
}
