// SCENARIO: two cross-directory renames lock the source and target directories in opposite
//           orders, but both hold the file system's rename gate lock first: no deadlock, no race
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// A look-alike of a lock-order inversion. Moving a file from /a to /b locks a then b; moving one
// from /b to /a locks b then a, so the lock graph has the cycle a -> b -> a, and a tool that only
// looks at lock-order edges (TSan's deadlock detector, say) warns about it. But, as in the Linux
// VFS, every cross-directory rename first takes one file-system-wide gate lock (rename_lock) and
// holds it until both directory locks are released. Whichever rename takes the gate first runs
// its whole nested section before the other one can take its first directory lock, so the two
// threads can never each hold one directory lock: the inversion can never close, in any order of
// the operations. Plain same-directory operations (the file-count updates of `tidy`) take a
// single directory lock and cannot take part in a cycle either.
//
// The entry counts of each directory are only changed under that directory's lock and printed
// after the joins. In the natural run the second rename starts 10 ms late; every reordering of
// the recorded operations is equally free of races and deadlocks.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct dir {
  pthread_mutex_t lock;
  const char *path;
  int entries;   // under lock
  int renames_in; // under lock
};

static pthread_mutex_t rename_lock = PTHREAD_MUTEX_INITIALIZER; // the gate
static struct dir dir_a = {PTHREAD_MUTEX_INITIALIZER, "/a", 3, 0};
static struct dir dir_b = {PTHREAD_MUTEX_INITIALIZER, "/b", 1, 0};

// Cross-directory rename: gate first, then source, then target. Without the gate the two
// directions would deadlock.
static int move_entry(struct dir *from, struct dir *to) {
  int moved = 0;
  pthread_mutex_lock(&rename_lock);
  pthread_mutex_lock(&from->lock);
  pthread_mutex_lock(&to->lock);
  if (from->entries > 0) {
    from->entries--;
    to->entries++;
    to->renames_in++;
    moved = 1;
  }
  pthread_mutex_unlock(&to->lock);
  pthread_mutex_unlock(&from->lock);
  pthread_mutex_unlock(&rename_lock);
  return moved;
}

// A same-directory operation: one lock, no gate needed.
static void tidy(struct dir *d) {
  pthread_mutex_lock(&d->lock);
  if (d->entries > 2)
    d->entries--; // drop a stale temporary file
  pthread_mutex_unlock(&d->lock);
}

struct job {
  struct dir *from, *to;
  int delay_us;
  int moved;
};

static void *mover(void *arg) {
  struct job *j = arg;
  usleep(j->delay_us);
  j->moved += move_entry(j->from, j->to);
  tidy(j->from);
  j->moved += move_entry(j->from, j->to);
  return NULL;
}

int main(void) {
  struct job ab = {&dir_a, &dir_b, 0, 0};
  struct job ba = {&dir_b, &dir_a, 10000, 0};
  pthread_t t1, t2;

  pthread_create(&t1, NULL, mover, &ab);
  pthread_create(&t2, NULL, mover, &ba);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);

  printf("/a -> /b moved %d, /b -> /a moved %d; /a has %d entries, /b has %d (total %d)\n",
         ab.moved, ba.moved, dir_a.entries, dir_b.entries, dir_a.entries + dir_b.entries);
  return 0;
}
