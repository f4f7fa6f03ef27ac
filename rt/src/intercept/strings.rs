//! libc memory and string wrappers: `memcpy`, `strcpy` and the rest of the pass's list.
//!
//! Takes the program's calls to these functions; gives the byte ranges each one reads and writes
//! as plain `Read`/`Write` accesses at the call's site (the segment cache merges them like any
//! other access), then calls the real function. Extents follow what the function touches:
//! `strcpy` reads `strlen(src) + 1` bytes of `src` and writes as many of `dst`; a search stops
//! where it found its byte; `memcmp`/`bcmp` count all `n` bytes, as TSan's default does (an
//! implementation may read them all before comparing). `strdup`'s result is fresh memory of this
//! thread: only its source is recorded.
//!
//! The `sprintf` family is not wrapped (a Rust wrapper cannot forward C variadic arguments): the
//! pass leaves the call and follows it with `__ilgen_printf_written`, which records the write of
//! the bytes the call produced, its return value and the NUL, cut to the length bound. The reads
//! of the format's string arguments are not recorded.

use std::ffi::{c_char, c_int, c_void};

use crate::intercept::memory::{read_range, write_range};

type Site = *const c_void;

extern "C" {
    fn bcmp(a: *const c_void, b: *const c_void, n: usize) -> c_int;
}

fn len(s: *const c_char) -> usize {
    // SAFETY: the program passed `s` as a string to a string function.
    unsafe { libc::strlen(s) }
}

fn nlen(s: *const c_char, n: usize) -> usize {
    // SAFETY: as in `len`, bounded by `n`.
    unsafe { libc::strnlen(s, n) }
}

/// Bytes a comparison of two strings reads from each: up to and including the first difference
/// or terminator, at most `n`.
fn compared(a: *const c_char, b: *const c_char, n: usize) -> usize {
    let mut i = 0;
    while i < n {
        // SAFETY: both are strings the program is comparing; we stop at the first NUL.
        let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
        if x != y || x == 0 {
            return i + 1;
        }
        i += 1;
    }
    n
}

fn r(p: *const c_char, n: usize, site: Site) {
    read_range(p as *const c_void, n, site);
}

fn w(p: *mut c_char, n: usize, site: Site) {
    write_range(p as *const c_void, n, site);
}

/// # Safety
/// Same contract as `memcpy`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_memcpy(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    site: Site,
) -> *mut c_void {
    read_range(src, n, site);
    write_range(dst, n, site);
    // SAFETY: the program's own call.
    unsafe { libc::memcpy(dst, src, n) }
}

/// # Safety
/// Same contract as `memmove`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_memmove(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    site: Site,
) -> *mut c_void {
    read_range(src, n, site);
    write_range(dst, n, site);
    // SAFETY: the program's own call.
    unsafe { libc::memmove(dst, src, n) }
}

/// # Safety
/// Same contract as `memset`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_memset(
    s: *mut c_void,
    c: c_int,
    n: usize,
    site: Site,
) -> *mut c_void {
    write_range(s, n, site);
    // SAFETY: the program's own call.
    unsafe { libc::memset(s, c, n) }
}

/// # Safety
/// Same contract as `memcmp`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_memcmp(
    a: *const c_void,
    b: *const c_void,
    n: usize,
    site: Site,
) -> c_int {
    read_range(a, n, site);
    read_range(b, n, site);
    // SAFETY: the program's own call.
    unsafe { libc::memcmp(a, b, n) }
}

/// # Safety
/// Same contract as `bcmp`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_bcmp(
    a: *const c_void,
    b: *const c_void,
    n: usize,
    site: Site,
) -> c_int {
    read_range(a, n, site);
    read_range(b, n, site);
    // SAFETY: the program's own call.
    unsafe { bcmp(a, b, n) }
}

/// # Safety
/// Same contract as `memchr`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_memchr(
    s: *const c_void,
    c: c_int,
    n: usize,
    site: Site,
) -> *mut c_void {
    // SAFETY: the program's own call.
    let found = unsafe { libc::memchr(s, c, n) };
    let read = if found.is_null() {
        n
    } else {
        found as usize - s as usize + 1
    };
    read_range(s, read, site);
    found
}

/// # Safety
/// Same contract as `strcpy`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_strcpy(
    dst: *mut c_char,
    src: *const c_char,
    site: Site,
) -> *mut c_char {
    let n = len(src) + 1;
    r(src, n, site);
    w(dst, n, site);
    // SAFETY: the program's own call.
    unsafe { libc::strcpy(dst, src) }
}

/// # Safety
/// Same contract as `stpcpy`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_stpcpy(
    dst: *mut c_char,
    src: *const c_char,
    site: Site,
) -> *mut c_char {
    let n = len(src) + 1;
    r(src, n, site);
    w(dst, n, site);
    // SAFETY: the program's own call.
    unsafe { libc::stpcpy(dst, src) }
}

/// # Safety
/// Same contract as `strncpy`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_strncpy(
    dst: *mut c_char,
    src: *const c_char,
    n: usize,
    site: Site,
) -> *mut c_char {
    r(src, (nlen(src, n) + 1).min(n), site);
    // strncpy pads the destination with NULs up to n.
    w(dst, n, site);
    // SAFETY: the program's own call.
    unsafe { libc::strncpy(dst, src, n) }
}

/// # Safety
/// Same contract as `strcat`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_strcat(
    dst: *mut c_char,
    src: *const c_char,
    site: Site,
) -> *mut c_char {
    let (d, s) = (len(dst), len(src));
    r(dst, d + 1, site);
    r(src, s + 1, site);
    // SAFETY: the program guarantees room for the concatenation.
    w(unsafe { dst.add(d) }, s + 1, site);
    // SAFETY: the program's own call.
    unsafe { libc::strcat(dst, src) }
}

/// # Safety
/// Same contract as `strncat`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_strncat(
    dst: *mut c_char,
    src: *const c_char,
    n: usize,
    site: Site,
) -> *mut c_char {
    let (d, s) = (len(dst), nlen(src, n));
    r(dst, d + 1, site);
    r(src, (s + 1).min(n), site);
    // SAFETY: the program guarantees room for the concatenation.
    w(unsafe { dst.add(d) }, s + 1, site);
    // SAFETY: the program's own call.
    unsafe { libc::strncat(dst, src, n) }
}

/// # Safety
/// Same contract as `strlen`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_strlen(s: *const c_char, site: Site) -> usize {
    let n = len(s);
    r(s, n + 1, site);
    n
}

/// # Safety
/// Same contract as `strnlen`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_strnlen(s: *const c_char, max: usize, site: Site) -> usize {
    let n = nlen(s, max);
    r(s, (n + 1).min(max), site);
    n
}

/// # Safety
/// Same contract as `strcmp`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_strcmp(
    a: *const c_char,
    b: *const c_char,
    site: Site,
) -> c_int {
    let n = compared(a, b, usize::MAX);
    r(a, n, site);
    r(b, n, site);
    // SAFETY: the program's own call.
    unsafe { libc::strcmp(a, b) }
}

/// # Safety
/// Same contract as `strncmp`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_strncmp(
    a: *const c_char,
    b: *const c_char,
    n: usize,
    site: Site,
) -> c_int {
    let k = compared(a, b, n);
    r(a, k, site);
    r(b, k, site);
    // SAFETY: the program's own call.
    unsafe { libc::strncmp(a, b, n) }
}

/// # Safety
/// Same contract as `strchr`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_strchr(
    s: *const c_char,
    c: c_int,
    site: Site,
) -> *mut c_char {
    // SAFETY: the program's own call.
    let found = unsafe { libc::strchr(s, c) };
    let n = if found.is_null() {
        len(s) + 1
    } else {
        found as usize - s as usize + 1
    };
    r(s, n, site);
    found
}

/// # Safety
/// Same contract as `strrchr`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_strrchr(
    s: *const c_char,
    c: c_int,
    site: Site,
) -> *mut c_char {
    r(s, len(s) + 1, site);
    // SAFETY: the program's own call.
    unsafe { libc::strrchr(s, c) }
}

/// # Safety
/// Same contract as `strstr`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_strstr(
    hay: *const c_char,
    needle: *const c_char,
    site: Site,
) -> *mut c_char {
    // SAFETY: the program's own call.
    let found = unsafe { libc::strstr(hay, needle) };
    let n = len(needle);
    let h = if found.is_null() {
        len(hay) + 1
    } else {
        found as usize - hay as usize + n
    };
    r(hay, h, site);
    r(needle, n + 1, site);
    found
}

/// # Safety
/// Same contract as `strdup`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_strdup(s: *const c_char, site: Site) -> *mut c_char {
    r(s, len(s) + 1, site);
    // SAFETY: the program's own call.
    unsafe { libc::strdup(s) }
}

/// # Safety
/// Same contract as `strndup`.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_wrap_strndup(
    s: *const c_char,
    n: usize,
    site: Site,
) -> *mut c_char {
    r(s, (nlen(s, n) + 1).min(n), site);
    // SAFETY: the program's own call.
    unsafe { libc::strndup(s, n) }
}

/// Bytes a `sprintf`-family call wrote, from its length bound `max` (`u64::MAX` when unbounded)
/// and its result `ret`: the `ret` characters and the NUL, at most `max`; none on error (`ret`
/// negative: what was written is unspecified) or when `max` is 0 (`snprintf(NULL, 0, ...)`).
fn printf_written_len(max: u64, ret: i64) -> u64 {
    match u64::try_from(ret) {
        Ok(r) => r.saturating_add(1).min(max),
        Err(_) => 0,
    }
}

/// Right after `ret = snprintf(buf, max, ...)` (or `sprintf` and the others of
/// `abi::FORMATTED_CALLS`, with `max == u64::MAX`): records the write into `buf`.
///
/// # Safety
/// Callable from any thread at any time; `buf` is only recorded, never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn __ilgen_printf_written(buf: *mut c_void, max: u64, ret: i64, site: Site) {
    let n = printf_written_len(max, ret);
    if n > 0 {
        write_range(buf, n as usize, site);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_writes_its_output_and_nul_within_the_bound() {
        assert_eq!(printf_written_len(u64::MAX, 5), 6);
        assert_eq!(printf_written_len(16, 5), 6);
        // Truncated: `ret` counts what would have been written.
        assert_eq!(printf_written_len(4, 5), 4);
        assert_eq!(printf_written_len(6, 5), 6);
        assert_eq!(printf_written_len(0, 5), 0);
        assert_eq!(printf_written_len(16, -1), 0);
        assert_eq!(printf_written_len(u64::MAX, 0), 1);
    }

    #[test]
    fn comparisons_read_through_the_first_difference() {
        let a = c"abcd";
        let b = c"abxd";
        assert_eq!(compared(a.as_ptr(), b.as_ptr(), usize::MAX), 3);
        assert_eq!(compared(a.as_ptr(), a.as_ptr(), usize::MAX), 5);
        assert_eq!(compared(a.as_ptr(), b.as_ptr(), 2), 2);
    }
}
