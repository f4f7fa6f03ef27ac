// SCENARIO: double-checked lazy initialisation of a sine table with a plain int flag: the
//           unlocked check races with the flag's write, and the lock-free table reads with its fill
// CATEGORY: lazy-init
// EXPECT: race 43 48
// EXPECT: race 47 67
// REORDER: no
//
// Two mixer threads synthesise tones with a fixed-point sine table built on first use. The table
// is initialised with the double-checked locking idiom, but the "ready" flag is a plain int: the
// first check reads it with no lock and nothing orders that read after the write of the flag by
// the thread that built the table, nor the fast path's lock-free table reads after the writes
// that filled it. Under the C11 memory model both are data races (undefined behaviour); in
// practice the compiler or the CPU may make the flag visible before the table entries, and a mixer
// then plays zeros. The fix is s44's: an atomic flag with a release store and acquire loads.
//
// In the natural run mixer 1 builds the table and mixer 2 starts 30 ms later, sees the flag set on
// its unlocked first check and reads the table without taking the lock: no synchronization
// operation of mixer 2 lies between mixer 1's writes and its reads, so both races are in the
// recorded run as it is. The second check, under the lock, is ordered by the lock and does not
// race; the voices' outputs are their own until main reads them after the joins.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define TABLE 64
#define SAMPLES 16

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int sine_ready; // plain int: the bug
static short sine_q15[TABLE];

// sin(2*pi*i/TABLE) in Q15, by a Taylor polynomial (no libm needed).
static short sine_entry(int i) {
  double x = 6.283185307179586 * i / TABLE;
  if (x > 3.141592653589793)
    x -= 6.283185307179586;
  double x2 = x * x;
  double s = x * (1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72))));
  return (short)(s * 32767.0);
}

static const short *get_sine_table(void) {
  if (!sine_ready) { // unlocked first check: races with the write of the flag
    pthread_mutex_lock(&init_lock);
    if (!sine_ready) {
      for (int i = 0; i < TABLE; i++)
        sine_q15[i] = sine_entry(i); // fill: races with the lock-free reads
      sine_ready = 1;
    }
    pthread_mutex_unlock(&init_lock);
  }
  return sine_q15;
}

struct voice {
  int step; // table positions per sample: the pitch
  int start_delay_us;
  long energy;
  short out[SAMPLES];
};

static void *mixer(void *arg) {
  struct voice *v = arg;
  usleep(v->start_delay_us);
  const short *t = get_sine_table();
  for (int n = 0; n < SAMPLES; n++) {
    short s = t[(n * v->step) % TABLE]; // lock-free read of the table
    v->out[n] = s / 2;
    v->energy += (long)s * s / 32768;
  }
  return NULL;
}

int main(void) {
  static struct voice v1 = {3, 0, 0, {0}};
  static struct voice v2 = {5, 30000, 0, {0}};
  pthread_t a, b;

  pthread_create(&a, NULL, mixer, &v1);
  pthread_create(&b, NULL, mixer, &v2);
  pthread_join(a, NULL);
  pthread_join(b, NULL);

  printf("voice 1: energy %ld, out[1..3] %d %d %d\n", v1.energy, v1.out[1], v1.out[2], v1.out[3]);
  printf("voice 2: energy %ld, out[1..3] %d %d %d\n", v2.energy, v2.out[1], v2.out[2], v2.out[3]);
  return 0;
}
