// SCENARIO: a texture cache takes references under the cache lock but drops them with a plain
//           decrement and no lock: the release races with other threads' acquires and releases
// CATEGORY: cs-order
// EXPECT: race 48 55
// EXPECT: race 55 55
// REORDER: yes
//
// The racy counterpart of s48. Each cached texture has a reference count; the cache itself holds
// one reference, so a texture is never freed while cached. tex_get() looks the texture up and
// increments its count under cache_lock; tex_put() was "optimised" to decrement without the lock,
// since it is a single statement. But `--t->refs` is a read-modify-write of a plain int: a put
// that runs concurrently with another thread's get or put on the same texture can lose an update
// (the count drifts, and the texture is later freed while in use or leaked).
//
// Two render threads draw with the textures: renderer 1 uses "grass" and then "stone"; renderer 2
// starts 30 ms late and uses "grass". In the natural run renderer 1's put of grass is followed by
// its get of stone, a lock of cache_lock, and renderer 2's first lock comes after that, so the
// unlock-lock edge on cache_lock orders renderer 1's decrement before both of renderer 2's
// accesses to grass's count and a happens-before detector sees nothing. When renderer 2 takes
// cache_lock for grass between renderer 1's get of grass and its get of stone, renderer 1's
// unlocked decrement is concurrent with renderer 2's increment (under the lock) and with its
// unlocked decrement. The texture's name and size are written before the threads start and only
// read afterwards; main checks the counts after the joins.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct texture {
  const char *name;
  int width, height;
  int refs; // 1 (the cache's own) + one per user
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct texture cache[2] = {
    {"grass", 64, 64, 1},
    {"stone", 128, 64, 1},
};

static struct texture *tex_get(const char *name) {
  struct texture *t = NULL;
  pthread_mutex_lock(&cache_lock);
  for (int i = 0; i < 2 && !t; i++)
    if (strcmp(cache[i].name, name) == 0)
      t = &cache[i];
  if (t)
    t->refs++; // under cache_lock
  pthread_mutex_unlock(&cache_lock);
  return t;
}

// The bug: no lock around the decrement.
static void tex_put(struct texture *t) {
  if (--t->refs == 0)
    fprintf(stderr, "texture %s would be freed while cached\n", t->name);
}

struct renderer {
  const char *uses[2];
  int start_delay_us;
  long pixels;
};

static void *render(void *arg) {
  struct renderer *r = arg;
  usleep(r->start_delay_us);
  for (int i = 0; i < 2 && r->uses[i]; i++) {
    struct texture *t = tex_get(r->uses[i]);
    if (!t)
      continue;
    r->pixels += (long)t->width * t->height; // draw with it
    tex_put(t);
  }
  return NULL;
}

int main(void) {
  static struct renderer r1 = {{"grass", "stone"}, 0, 0};
  static struct renderer r2 = {{"grass", NULL}, 30000, 0};
  pthread_t a, b;

  pthread_create(&a, NULL, render, &r1);
  pthread_create(&b, NULL, render, &r2);
  pthread_join(a, NULL);
  pthread_join(b, NULL);

  printf("renderer 1 drew %ld pixels, renderer 2 drew %ld\n", r1.pixels, r2.pixels);
  for (int i = 0; i < 2; i++)
    printf("%s: %d reference(s) (%s)\n", cache[i].name, cache[i].refs,
           cache[i].refs == 1 ? "ok" : "DRIFTED");
  return 0;
}
