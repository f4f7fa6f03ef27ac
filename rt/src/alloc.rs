//! The runtime's own allocator: glibc's, through its `__libc_*` entry points.
//!
//! Takes the Rust allocations of the runtime (thread state, registry, replay tables, reports);
//! gives them glibc's memory without passing through the replaced malloc family (`heap.c`), so
//! that the runtime's allocations are never heap events of the program and can never recurse into
//! the hooks that record them.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

extern "C" {
    fn __libc_malloc(size: usize) -> *mut c_void;
    fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
    fn __libc_realloc(p: *mut c_void, size: usize) -> *mut c_void;
    fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
    fn __libc_free(p: *mut c_void);
}

/// What glibc's malloc guarantees on the 64-bit targets the runtime builds for.
const MALLOC_ALIGN: usize = 16;

struct Libc;

// SAFETY: every method forwards to glibc's allocator, which returns memory of at least the
// requested size and alignment (memalign when malloc's guarantee is not enough), or null.
unsafe impl GlobalAlloc for Libc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: plain glibc calls.
        unsafe {
            if layout.align() <= MALLOC_ALIGN {
                __libc_malloc(layout.size()).cast()
            } else {
                __libc_memalign(layout.align(), layout.size()).cast()
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            // SAFETY: a plain glibc call.
            return unsafe { __libc_calloc(1, layout.size()).cast() };
        }
        // SAFETY: `alloc` returns `layout.size()` writable bytes or null.
        unsafe {
            let p = self.alloc(layout);
            if !p.is_null() {
                p.write_bytes(0, layout.size());
            }
            p
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, _layout: Layout) {
        // SAFETY: `p` came from this allocator.
        unsafe { __libc_free(p.cast()) }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            // SAFETY: `p` came from this allocator with malloc's alignment.
            return unsafe { __libc_realloc(p.cast(), new_size).cast() };
        }
        // SAFETY: a new block of the same alignment, the old contents copied, the old block freed.
        unsafe {
            let new = self.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(p, new, layout.size().min(new_size));
                self.dealloc(p, layout);
            }
            new
        }
    }
}

#[global_allocator]
static ALLOCATOR: Libc = Libc;
