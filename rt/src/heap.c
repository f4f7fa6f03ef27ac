// The malloc family, replaced: every allocation and free of the process, the program's and libc's
// own (strdup, asprintf, getline, fopen), goes through here to glibc's allocator and is reported to
// the runtime (`__ilgen_heap`, in intercept/heap.rs).
//
// Two ways in, one file:
// - dynamic links: the weak definitions of `malloc`, `free`, ... below interpose on libc.so's, as
//   glibc allows for a replaced allocator, and forward to its `__libc_*` entry points;
// - `-static` links: libc.a's malloc.o defines `malloc`, `free` and `realloc` strongly and is pulled
//   in by `__libc_malloc`, so a strong replacement would be a duplicate definition. There `ilgen cc`
//   links with `-Wl,--wrap=malloc,...`: every call goes to `__wrap_malloc`, ... below, and the weak
//   definitions here lose to libc.a's without an error.
// `posix_memalign`, `aligned_alloc` and `reallocarray` have no `__libc_*` entry point in libc.so:
// they are built on `__libc_memalign` and `realloc` here, with glibc's argument checks.
//
// The pass rewrites the program's own calls (malloc, free, operator new/delete, ...) into
// `__ilgen_wrap_NAME(args..., site)`, which leaves the site for the next event of this thread; an
// allocation libc makes by itself has no site.
//
// Recursion: the runtime's Rust code allocates past this file (rt/src/alloc.rs); what libc
// allocates while this thread reports an event, or inside `__ilgen_heap_quiet`, is forwarded
// without one. Before the runtime is initialized, and on threads it does not follow,
// `__ilgen_heap` returns at once (it never initializes anything).
// Hot path: two thread-local flags, the real call, and the report (no lock, no system call).
#include <stddef.h>

#include "heap.h"

enum { HEAP_ALLOC = 0, HEAP_FREE = 1 };

// <errno.h> without the system headers, which a cross check of the runtime (make lint) lacks.
extern int *__errno_location(void);
#define errno (*__errno_location())
enum { ENOMEM = 12, EINVAL = 22 };

void __ilgen_heap(int op, void *addr, size_t size, size_t span, const void *site);

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);
extern size_t malloc_usable_size(void *);

static TLS int in_heap;
TLS const void *__ilgen_heap_site;

static const void *take_site(void) {
  const void *s = __ilgen_heap_site;
  __ilgen_heap_site = 0;
  return s;
}

static void report(int op, void *p, size_t size, size_t span) {
  const void *site = take_site();
  if (!p || in_heap)
    return;
  int saved = errno;
  in_heap = 1;
  __ilgen_heap(op, p, size, span, site);
  in_heap = 0;
  errno = saved;
}

// An allocation of `size` bytes is recorded as asked for, but spans the block's usable size, as a
// free does (free knows no other size): a block malloc hands out again must forget the whole
// earlier object, its last bytes included, or the first object's free stays there and pairs with
// the second object's free as a race.
static void *allocated(void *p, size_t size) {
  report(HEAP_ALLOC, p, size, p ? malloc_usable_size(p) : 0);
  return p;
}

static void do_free(void *p) {
  if (p) {
    size_t size = malloc_usable_size(p);
    report(HEAP_FREE, p, size, size);
  } else
    take_site();
  __libc_free(p);
}

// A block that moves is copied here, not by glibc's realloc: glibc frees the old block inside its
// realloc, and another thread's malloc can be handed that memory (and report it allocated) before
// this thread has reported the free; the late free then stood over the new owner's object, and
// replay confirmed a "race on freed memory" between the two owners (htslib's test_view: a
// worker's kstring growing in `kputsn_` against main's `bam_copy1` into the block it got). Here
// the free is reported before libc has the block back, as `free` does. A block keeps its place
// when it shrinks to half its usable size or more (glibc would keep it too, or free its tail
// for others), and moves to a block of its own size below that.
static void *do_realloc(void *p, size_t n) {
  if (!p)
    return allocated(__libc_malloc(n), n);
  if (n == 0) {
    do_free(p);
    return 0;
  }
  size_t old = malloc_usable_size(p);
  if (n <= old && n >= old / 2) {
    take_site();
    return p;
  }
  const void *site = __ilgen_heap_site;
  void *q = __libc_malloc(n);
  if (!q) {
    take_site();
    return 0;
  }
  __builtin_memcpy(q, p, n < old ? n : old);
  report(HEAP_FREE, p, old, old);
  __libc_free(p);
  __ilgen_heap_site = site;
  return allocated(q, n);
}

static int is_power_of_2(size_t a) { return a && !(a & (a - 1)); }

static int do_posix_memalign(void **out, size_t align, size_t n) {
  if (!is_power_of_2(align) || align % sizeof(void *) != 0) {
    take_site();
    return EINVAL;
  }
  void *p = __libc_memalign(align, n);
  if (!p) {
    take_site();
    return ENOMEM;
  }
  *out = allocated(p, n);
  return 0;
}

static void *do_aligned_alloc(size_t align, size_t n) {
  if (!is_power_of_2(align)) {
    take_site();
    errno = EINVAL;
    return 0;
  }
  return allocated(__libc_memalign(align, n), n);
}

static void *do_reallocarray(void *p, size_t n, size_t m) {
  size_t bytes;
  if (__builtin_mul_overflow(n, m, &bytes)) {
    take_site();
    errno = ENOMEM;
    return 0;
  }
  return do_realloc(p, bytes);
}

// Each function three times: the weak replacement (dynamic links), `__wrap_NAME` (static links)
// and the pass's `__ilgen_wrap_NAME(params..., site)`, which leaves the site and calls
// `__wrap_NAME`: not `NAME`, which a static link resolves to libc.a's own.
#define BOTH(ret, name, params, args, body)                                                        \
  __attribute__((weak)) ret name params body                                                       \
  ret __wrap_##name params body                                                                    \
  ret __ilgen_wrap_##name(WRAP_PARAMS params, const void *site) {                                 \
    __ilgen_heap_site = site;                                                                      \
    return __wrap_##name args;                                                                     \
  }

BOTH(void *, malloc, (size_t n), (n), { return allocated(__libc_malloc(n), n); })
BOTH(void *, calloc, (size_t n, size_t m), (n, m), { return allocated(__libc_calloc(n, m), n * m); })
BOTH(void *, realloc, (void *p, size_t n), (p, n), { return do_realloc(p, n); })
BOTH(void *, reallocarray, (void *p, size_t n, size_t m), (p, n, m),
     { return do_reallocarray(p, n, m); })
BOTH(void *, memalign, (size_t a, size_t n), (a, n), { return allocated(__libc_memalign(a, n), n); })
BOTH(void *, aligned_alloc, (size_t a, size_t n), (a, n), { return do_aligned_alloc(a, n); })
BOTH(int, posix_memalign, (void **out, size_t a, size_t n), (out, a, n),
     { return do_posix_memalign(out, a, n); })
BOTH(void *, valloc, (size_t n), (n), { return allocated(__libc_valloc(n), n); })
BOTH(void *, pvalloc, (size_t n), (n), { return allocated(__libc_pvalloc(n), n); })

__attribute__((weak)) void free(void *p) { do_free(p); }
void __wrap_free(void *p) { do_free(p); }
void __ilgen_wrap_free(void *p, const void *site) {
  __ilgen_heap_site = site;
  do_free(p);
}

// The runtime's own calls into libc that allocate (pthread_getattr_np) are no program event.
int __ilgen_heap_quiet(int on) {
  int was = in_heap;
  in_heap = on;
  return was;
}
