// What heap.c and heap_cxx.c share: the site the pass's wrapper leaves for the next heap event
// of this thread, and the macros that define those wrappers.
#include <stddef.h>

#define TLS __thread __attribute__((tls_model("local-exec")))
extern TLS __attribute__((visibility("hidden"))) const void *__ilgen_heap_site;

// `__ilgen_wrap_NAME(params..., site)`: leaves the site, then calls NAME.
#define WRAP(ret, name, params, args)                                                              \
  ret name params;                                                                                 \
  ret __ilgen_wrap_##name(WRAP_PARAMS params, const void *site) {                                  \
    __ilgen_heap_site = site;                                                                      \
    return name args;                                                                              \
  }
#define WRAP_PARAMS(...) __VA_ARGS__
#define VWRAP(name, params, args)                                                                  \
  void name params;                                                                                \
  void __ilgen_wrap_##name(WRAP_PARAMS params, const void *site) {                                 \
    __ilgen_heap_site = site;                                                                      \
    name args;                                                                                     \
  }

