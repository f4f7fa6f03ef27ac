// SCENARIO: a name registry protected by a recursive mutex whose public functions call each
//           other with the lock already held; two threads register and resolve names: race-free
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// registry_add() takes reg_lock and, to reject duplicates, calls registry_find(), which takes
// reg_lock again; registry_rename() calls both. With a normal mutex the nested lock would
// self-deadlock; reg_lock is PTHREAD_MUTEX_RECURSIVE, so the owner may lock it again and the
// mutex is released only by the outermost unlock. Every access to the table is made with
// reg_lock held, and the threads' critical sections are ordered by their outermost
// unlock/lock pairs.
//
// A tool that treats an inner unlock as releasing the mutex would think the accesses made
// after the inner unlock (the writes of registry_add and registry_rename that follow the
// nested find) are unprotected, and a tool that ignores recursion reports a self-deadlock; both
// are false. main prints the table after the joins.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 8

struct slot {
  char name[16];
  int id;
};

static struct slot table[SLOTS];
static int used;
static pthread_mutex_t reg_lock;

static int registry_find(const char *name) {
  int id = -1;
  pthread_mutex_lock(&reg_lock); // nested when called from add/rename
  for (int i = 0; i < used; i++)
    if (strcmp(table[i].name, name) == 0)
      id = table[i].id;
  pthread_mutex_unlock(&reg_lock); // inner unlock: the mutex stays held by the caller
  return id;
}

static int registry_add(const char *name, int id) {
  int ok = 0;
  pthread_mutex_lock(&reg_lock);
  if (registry_find(name) < 0 && used < SLOTS) {
    snprintf(table[used].name, sizeof table[used].name, "%s", name);
    table[used].id = id;
    used++;
    ok = 1;
  }
  pthread_mutex_unlock(&reg_lock);
  return ok;
}

static int registry_rename(const char *from, const char *to) {
  int ok = 0;
  pthread_mutex_lock(&reg_lock);
  if (registry_find(to) < 0)
    for (int i = 0; i < used; i++)
      if (strcmp(table[i].name, from) == 0) {
        snprintf(table[i].name, sizeof table[i].name, "%s", to);
        ok = 1;
      }
  pthread_mutex_unlock(&reg_lock);
  return ok;
}

static void *services(void *arg) {
  (void)arg;
  registry_add("disk", 1);
  registry_add("net", 2);
  registry_add("disk", 3); // duplicate, rejected
  return NULL;
}

static void *admin(void *arg) {
  int *found = arg;
  usleep(2000); // comes up after the services: timing only
  registry_rename("net", "eth0");
  *found = registry_find("eth0");
  return NULL;
}

int main(void) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&reg_lock, &attr);
  pthread_mutexattr_destroy(&attr);

  pthread_t s, a;
  int found = -1;
  pthread_create(&s, NULL, services, NULL);
  pthread_create(&a, NULL, admin, &found);
  pthread_join(s, NULL);
  pthread_join(a, NULL);
  for (int i = 0; i < used; i++)
    printf("%s=%d ", table[i].name, table[i].id);
  printf("(eth0 -> %d)\n", found);
  pthread_mutex_destroy(&reg_lock);
  return 0;
}
