// SCENARIO: a toy file system: rename nests three locks (directory, inode, journal) while the
//           checkpoint thread takes the journal lock and then an inode lock: inversion at depth 3
// CATEGORY: deadlock
// EXPECT: deadlock 58 80 101
// REORDER: yes
//
// The documented lock order of the file system is directory -> inode -> journal: rename() takes
// the directory lock, then the lock of the inode it renames, then the journal lock to log the
// change, three levels deep. The checkpoint thread was written later: it holds the journal lock
// for the whole checkpoint and, for each journalled inode, takes the inode lock to write the inode
// back. That inverts inode -> journal. When rename holds the directory and inode locks and the
// checkpoint holds the journal lock, rename waits for the journal (its innermost lock) and the
// checkpoint waits for the inode: both are stuck and main waits in its first pthread_join. The
// directory lock, the outermost one, plays no part in the cycle but is held all along.
//
// In the natural run the checkpoint thread starts 40 ms late, after rename has released all its
// locks, and the program finishes. Reordering the recorded lock operations (the checkpoint takes
// the journal lock between rename's inode lock and its journal lock) exposes the deadlock.
//
// Data: each field is accessed only under the lock that protects it (dirent name under dir_lock,
// inode fields under the inode lock, the journal under journal_lock); results are printed after
// the joins. There is no data race.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct inode {
  pthread_mutex_t lock;
  int ino;
  int nlink;
  int dirty; // set by rename, cleared by the write-back
  int version;
};

static pthread_mutex_t dir_lock = PTHREAD_MUTEX_INITIALIZER;
static char dirent_name[32] = "draft.txt"; // under dir_lock
static struct inode file_inode = {PTHREAD_MUTEX_INITIALIZER, 17, 1, 0, 0};

static pthread_mutex_t journal_lock = PTHREAD_MUTEX_INITIALIZER;
static int journal[8]; // inode numbers logged, under journal_lock
static int journal_len;
static int checkpoints;

static void journal_log(int ino) {
  if (journal_len < 8)
    journal[journal_len++] = ino;
}

// rename(): directory -> inode -> journal, the documented order.
static void *renamer(void *arg) {
  const char *new_name = arg;
  pthread_mutex_lock(&dir_lock);
  strncpy(dirent_name, new_name, sizeof dirent_name - 1);
  pthread_mutex_lock(&file_inode.lock);
  file_inode.version++;
  file_inode.dirty = 1;
  pthread_mutex_lock(&journal_lock); // blocked here: the checkpoint holds the journal
  journal_log(file_inode.ino);
  pthread_mutex_unlock(&journal_lock);
  pthread_mutex_unlock(&file_inode.lock);
  pthread_mutex_unlock(&dir_lock);
  return NULL;
}

static struct inode *inode_by_number(int ino) {
  return ino == file_inode.ino ? &file_inode : NULL;
}

// Checkpoint: holds the journal while writing back every logged inode: journal -> inode, the
// inversion.
static void *checkpointer(void *arg) {
  (void)arg;
  usleep(40000); // the periodic checkpoint fires after the rename in the natural run
  pthread_mutex_lock(&journal_lock);
  for (int i = 0; i < journal_len; i++) {
    struct inode *ip = inode_by_number(journal[i]);
    if (!ip)
      continue;
    pthread_mutex_lock(&ip->lock); // blocked here: rename holds the inode
    ip->dirty = 0;
    pthread_mutex_unlock(&ip->lock);
  }
  journal_len = 0;
  checkpoints++;
  pthread_mutex_unlock(&journal_lock);
  return NULL;
}

int main(void) {
  pthread_t ren, ckpt;
  static char new_name[] = "report.txt";

  // Something is already journalled, so that the checkpoint has an inode to write back.
  pthread_mutex_lock(&journal_lock);
  journal_log(file_inode.ino);
  pthread_mutex_unlock(&journal_lock);

  pthread_create(&ren, NULL, renamer, new_name);
  pthread_create(&ckpt, NULL, checkpointer, NULL);
  pthread_join(ren, NULL); // main is stuck here when rename and checkpoint deadlock
  pthread_join(ckpt, NULL);

  printf("name %s, inode %d version %d dirty %d, %d checkpoint(s), %d journalled\n", dirent_name,
         file_inode.ino, file_inode.version, file_inode.dirty, checkpoints, journal_len);
  return 0;
}
