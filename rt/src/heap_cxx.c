// The pass's wrappers of C++'s operator new and delete (`ilgen_trace::abi::NEW_DELETE_CALLS`):
// leave the site, then call libstdc++'s operator, which allocates through the replaced malloc
// family (heap.c) that reports the event. In a file of their own, so that only C++ programs
// (which link libstdc++) pull them in, and compiled with -fexceptions, so that operator new's
// exceptions unwind through them. `std::align_val_t` is a `size_t`; `std::nothrow_t` is passed
// by reference.
#include "heap.h"

typedef size_t align_t;
typedef const void *nothrow_t;

WRAP(void *, _Znwm, (size_t n), (n))
WRAP(void *, _Znam, (size_t n), (n))
WRAP(void *, _ZnwmRKSt9nothrow_t, (size_t n, nothrow_t t), (n, t))
WRAP(void *, _ZnamRKSt9nothrow_t, (size_t n, nothrow_t t), (n, t))
WRAP(void *, _ZnwmSt11align_val_t, (size_t n, align_t a), (n, a))
WRAP(void *, _ZnamSt11align_val_t, (size_t n, align_t a), (n, a))
WRAP(void *, _ZnwmSt11align_val_tRKSt9nothrow_t, (size_t n, align_t a, nothrow_t t), (n, a, t))
WRAP(void *, _ZnamSt11align_val_tRKSt9nothrow_t, (size_t n, align_t a, nothrow_t t), (n, a, t))
VWRAP(_ZdlPv, (void *p), (p))
VWRAP(_ZdaPv, (void *p), (p))
VWRAP(_ZdlPvm, (void *p, size_t n), (p, n))
VWRAP(_ZdaPvm, (void *p, size_t n), (p, n))
VWRAP(_ZdlPvRKSt9nothrow_t, (void *p, nothrow_t t), (p, t))
VWRAP(_ZdaPvRKSt9nothrow_t, (void *p, nothrow_t t), (p, t))
VWRAP(_ZdlPvSt11align_val_t, (void *p, align_t a), (p, a))
VWRAP(_ZdaPvSt11align_val_t, (void *p, align_t a), (p, a))
VWRAP(_ZdlPvmSt11align_val_t, (void *p, size_t n, align_t a), (p, n, a))
VWRAP(_ZdaPvmSt11align_val_t, (void *p, size_t n, align_t a), (p, n, a))
VWRAP(_ZdlPvSt11align_val_tRKSt9nothrow_t, (void *p, align_t a, nothrow_t t), (p, a, t))
VWRAP(_ZdaPvSt11align_val_tRKSt9nothrow_t, (void *p, align_t a, nothrow_t t), (p, a, t))
