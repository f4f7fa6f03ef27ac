// SCENARIO: a firmware image is written without a lock and then marked as staged under
//           state_lock; the installer polls the state under the lock and reads the image only
//           after it saw it staged: the critical-section order is forced by the data, race-free
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// The downloader fills `image` (a header word, a length and the payload) with no lock held and
// then, under state_lock, advances `state` from EMPTY to STAGED. The installer polls: it takes
// state_lock, copies `state`, releases the lock, and sleeps a millisecond if the image is not
// staged yet. Once it has seen STAGED it verifies and "flashes" the image, reading it unlocked.
//
// This looks like the races hidden by critical-section order elsewhere in the suite: unlocked
// writes before a critical section, unlocked reads after another critical section on the same
// lock, ordered in the recorded run by the order of those two critical sections. Here, however,
// the order is not a matter of timing: the installer only leaves the polling loop after a
// critical section that read state == STAGED, which only exists after the downloader's critical
// section. A predictive tool that moves that critical section before the downloader's without
// checking what it reads predicts a race that no execution has; in every real schedule the
// earlier polls see EMPTY and the installer keeps polling. The verdict reaches main through the
// join.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

enum { EMPTY, STAGED };
#define PAYLOAD 256

struct fw_image {
  unsigned magic;
  int len;
  unsigned char data[PAYLOAD];
};

static struct fw_image image;  // written before STAGED, read after it, never under the lock
static int state = EMPTY;      // under state_lock
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned crc(const unsigned char *p, int n) {
  unsigned c = 0xffffffffu;
  for (int i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++)
      c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}

static void *downloader(void *arg) {
  (void)arg;
  usleep(3000); // the "download" takes a while: the installer polls a few times first
  for (int i = 0; i < PAYLOAD; i++)
    image.data[i] = (unsigned char)(i * 7 + 3);
  image.len = PAYLOAD;
  image.magic = 0x46574d31u; // "FWM1"
  pthread_mutex_lock(&state_lock);
  state = STAGED;
  pthread_mutex_unlock(&state_lock);
  return NULL;
}

static void *installer(void *arg) {
  unsigned *verdict = arg;
  for (;;) {
    pthread_mutex_lock(&state_lock);
    int st = state;
    pthread_mutex_unlock(&state_lock);
    if (st == STAGED)
      break;
    usleep(1000);
  }
  // Only reached after a critical section that saw STAGED: ordered after the image writes.
  if (image.magic != 0x46574d31u || image.len != PAYLOAD) {
    verdict[0] = 0;
    return NULL;
  }
  verdict[0] = crc(image.data, image.len);
  return NULL;
}

int main(void) {
  pthread_t td, ti;
  unsigned verdict = 1;

  if (pthread_create(&td, NULL, downloader, NULL) != 0 ||
      pthread_create(&ti, NULL, installer, &verdict) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  pthread_join(td, NULL);
  pthread_join(ti, NULL);
  if (verdict == 0)
    printf("installer rejected the image\n");
  else
    printf("installed image, crc %08x\n", verdict);
  return 0;
}
