// SCENARIO: a parallel 3x3 blur splits the image into horizontal bands, but each band's last row
//           is computed inclusively, so the row on the boundary is written by both threads
// CATEGORY: struct-array
// EXPECT: race 45 45
// REORDER: no
//
// Each worker blurs its band of `src` into `dst`. Reading `src` across the band boundary is fine
// (both threads only read it: the blur needs the neighbouring rows). The bands of `dst` are meant
// to be disjoint, but make_bands() sets last = (i + 1) * H / BANDS, an inclusive bound that
// should have been one less: band 0 covers rows 0..12 and band 1 rows 12..23, and row 12 is
// written by both workers (the same line, the same values, so the output does not even show
// it). Nothing orders the two workers, so the race is there in every run, without reordering.
// The neighbouring rows 11 and 13 are each written by one thread only: the shared ranges are
// adjacent, and only the one overlapping row is a race. main checks the result after the joins.
#include <pthread.h>
#include <stdio.h>

#define W 32
#define H 24
#define BANDS 2

static float src[H][W];
static float dst[H][W];

struct band {
  int first, last; // rows, inclusive
};

static float at(int y, int x) {
  if (y < 0) y = 0;
  if (y >= H) y = H - 1;
  if (x < 0) x = 0;
  if (x >= W) x = W - 1;
  return src[y][x];
}

static void *blur_band(void *arg) {
  const struct band *b = arg;
  for (int y = b->first; y <= b->last; y++) {
    for (int x = 0; x < W; x++) {
      float s = 0;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
          s += at(y + dy, x + dx);
      dst[y][x] = s / 9.0f; // row 12 is written by both bands
    }
  }
  return NULL;
}

// The bug: `last` is inclusive, so it should be (i + 1) * H / BANDS - 1.
static void make_bands(struct band *bands) {
  for (int i = 0; i < BANDS; i++) {
    bands[i].first = i * H / BANDS;
    bands[i].last = (i + 1) * H / BANDS;
    if (bands[i].last > H - 1)
      bands[i].last = H - 1;
  }
}

int main(void) {
  pthread_t t[BANDS];
  struct band bands[BANDS];

  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      src[y][x] = (float)((x * 7 + y * 13) % 32);
  make_bands(bands);
  for (int i = 0; i < BANDS; i++)
    pthread_create(&t[i], NULL, blur_band, &bands[i]);
  for (int i = 0; i < BANDS; i++)
    pthread_join(t[i], NULL);

  double sum = 0;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      sum += dst[y][x];
  printf("bands: rows %d-%d and %d-%d, blurred sum %.3f\n", bands[0].first, bands[0].last,
         bands[1].first, bands[1].last, sum);
  return 0;
}
