//! Code that is not instrumented, as replay's stacks show it.
//!
//! Takes a code address (the return address the pass's entry hook passes, into the caller of an
//! instrumented function) or the entry point an interposed pthread call came in through
//! (`intercept::interpose`); gives [`frame`], the address as the module it is in and the address
//! in that module's own terms (`ilgen_trace::replay::NativeFrame`, which `ilgen` names from the
//! module's symbol table), and [`caller_of`], the return address into the code that called the
//! entry point (libstdc++'s `std::thread::_M_start_thread` for the `pthread_create` of a
//! `std::thread`).
//!
//! Why unwinding for the caller: the entry points are Rust, which has no stable way to read its
//! own return address, and the caller matters only in replay mode, where reports name the
//! operation (a thread's creation, a lock's acquisition, a step of the schedule). So the caller
//! is found there, when the call comes in, by walking the calling thread's stack with the
//! unwinder the runtime already links (libgcc's `_Unwind_Backtrace`) up to the entry point's
//! frame: its next frame is the caller. Record mode never walks.

use std::ffi::{c_int, c_void, CStr};

use ilgen_trace::replay::NativeFrame;

/// `_Unwind_Reason_Code`: go on walking, or stop.
const URC_NO_REASON: c_int = 0;
const URC_NORMAL_STOP: c_int = 4;

extern "C" {
    fn _Unwind_Backtrace(
        trace: extern "C" fn(ctx: *mut c_void, arg: *mut c_void) -> c_int,
        arg: *mut c_void,
    ) -> c_int;
    fn _Unwind_GetIP(ctx: *mut c_void) -> usize;
    fn _Unwind_FindEnclosingFunction(pc: *mut c_void) -> *mut c_void;
}

struct Walk {
    entry: usize,
    inside: bool,
    caller: Option<usize>,
}

extern "C" fn step(ctx: *mut c_void, arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Walk` that `caller_of` passed, alive for the whole walk; `ctx` is the
    // unwinder's context of the current frame.
    let (w, ip) = unsafe { (&mut *(arg as *mut Walk), _Unwind_GetIP(ctx)) };
    if ip == 0 {
        return URC_NORMAL_STOP;
    }
    if w.inside {
        w.caller = Some(ip);
        return URC_NORMAL_STOP;
    }
    // A return address may be just past its function's last instruction (a call that does not
    // return): the function is the one of the byte before it.
    // SAFETY: only looks the address up in the unwind tables.
    let f = unsafe { _Unwind_FindEnclosingFunction((ip - 1) as *mut c_void) };
    w.inside = f as usize == w.entry;
    URC_NO_REASON
}

/// The return address into the code that called the function at `entry`, which the calling
/// thread is inside now; `None` when the walk does not find `entry`'s frame.
pub(crate) fn caller_of(entry: usize) -> Option<usize> {
    let mut w = Walk {
        entry,
        inside: false,
        caller: None,
    };
    // The unwinder locks its own mutex with `pthread_mutex_lock`, which `ilgen cc` routes to the
    // runtime: the runtime's call, not the program's.
    crate::real::internal(|| {
        // SAFETY: `step` reads only the context it is given and `w`, which outlives the walk.
        unsafe { _Unwind_Backtrace(step, &mut w as *mut Walk as *mut c_void) }
    });
    w.caller
}

struct Find {
    pc: u64,
    found: Option<NativeFrame>,
}

extern "C" fn module(info: *mut libc::dl_phdr_info, _size: usize, arg: *mut c_void) -> c_int {
    // SAFETY: the loader passes one loaded object's description, valid during the call; `arg` is
    // the `Find` of `frame`.
    let (info, find) = unsafe { (&*info, &mut *(arg as *mut Find)) };
    let headers = if info.dlpi_phdr.is_null() {
        &[][..]
    } else {
        // SAFETY: `dlpi_phnum` program headers at `dlpi_phdr`, mapped while the object is loaded.
        unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
    };
    let Some(offset) = find.pc.checked_sub(info.dlpi_addr) else {
        return 0;
    };
    let inside = headers.iter().any(|h| {
        h.p_type == libc::PT_LOAD
            && (h.p_vaddr..h.p_vaddr.saturating_add(h.p_memsz)).contains(&offset)
    });
    if !inside {
        return 0;
    }
    let name = if info.dlpi_name.is_null() {
        String::new()
    } else {
        // SAFETY: the loader's NUL-terminated name of the object.
        unsafe { CStr::from_ptr(info.dlpi_name) }
            .to_string_lossy()
            .into_owned()
    };
    // The main program is the object without a name.
    find.found = Some(NativeFrame {
        module: (!name.is_empty()).then_some(name),
        offset,
    });
    1
}

/// The loaded object holding code address `pc`, and `pc` in its link-time addresses; `None` for
/// an address in no loaded object.
pub(crate) fn frame(pc: usize) -> Option<NativeFrame> {
    let mut find = Find {
        pc: pc as u64,
        found: None,
    };
    crate::real::internal(|| {
        // SAFETY: `module` reads only what the loader passes and `find`, which outlives the call.
        unsafe { libc::dl_iterate_phdr(Some(module), &mut find as *mut Find as *mut c_void) }
    });
    find.found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    extern "C" fn entry(out: &mut Option<usize>) {
        *out = caller_of(entry as *const () as usize);
        std::hint::black_box(out);
    }

    #[inline(never)]
    fn outer() -> Option<usize> {
        let mut found = None;
        entry(&mut found);
        std::hint::black_box(found)
    }

    #[test]
    fn the_caller_of_an_entry_point_is_found_in_the_calling_function() {
        let caller = outer().expect("the walk finds the entry's frame");
        // SAFETY: a lookup in the unwind tables.
        let f = unsafe { _Unwind_FindEnclosingFunction((caller - 1) as *mut c_void) } as usize;
        assert_eq!(f, outer as *const () as usize, "the caller is `outer`");
        assert_eq!(
            caller_of(entry as *const () as usize),
            None,
            "not inside `entry` now"
        );
    }

    #[test]
    fn code_addresses_are_named_by_module() {
        let f = frame(code_addresses_are_named_by_module as *const () as usize)
            .expect("in the test binary");
        assert_eq!(f.module, None, "the test executable is the main program");
        let libc = frame(libc::getpid as *const () as usize).expect("in libc");
        assert!(libc.module_name().starts_with("libc"), "{libc:?}");
        assert_eq!(frame(8), None);
    }
}
