//! The runtime's architecture-specific parts, in one place: the calling thread's state pointer
//! and keeping the report hook's arguments alive.
//!
//! [`get`]/[`set`] take and give the calling thread's slot as an untyped pointer (`thread` casts
//! it to its `ThreadState`, so this module depends on nothing). On x86-64 Linux it is one
//! `%fs`-relative load; elsewhere it falls back to Rust's `thread_local!`, so the runtime builds
//! for any target (`make lint` runs `cargo check --target aarch64-unknown-linux-gnu -p ilgen-rt`).

/// The calling thread's state pointer (null, `thread::REPLAY`, `thread::DEAD` or a live state).
///
/// On x86-64 Linux it is a `.tbss` variable read and written with the local-exec TLS model (one
/// `%fs`-relative load): Rust's `thread_local!` in a static library compiles to the general-dynamic
/// model, a call to `__tls_get_addr` that the linker later relaxes to a load, but which already
/// made every hook save registers around it. Local-exec is valid because the runtime is only ever
/// linked into executables (`ilgen cc` adds it to no `-shared` link).
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod imp {
    std::arch::global_asm!(
        ".pushsection .tbss,\"awT\",@nobits",
        ".p2align 3",
        ".globl ilgen_rt_current_thread",
        ".hidden ilgen_rt_current_thread",
        ".type ilgen_rt_current_thread, @object",
        ".size ilgen_rt_current_thread, 8",
        "ilgen_rt_current_thread:",
        ".zero 8",
        ".popsection",
    );

    #[inline(always)]
    pub(crate) fn get() -> *mut () {
        let p: *mut ();
        // SAFETY: reads this thread's 8-byte TLS slot defined above.
        unsafe {
            std::arch::asm!(
                "movq %fs:ilgen_rt_current_thread@tpoff, {}",
                out(reg) p,
                options(att_syntax, nostack, preserves_flags, readonly)
            );
        }
        p
    }

    #[inline(always)]
    pub(crate) fn set(p: *mut ()) {
        // SAFETY: writes this thread's 8-byte TLS slot defined above.
        unsafe {
            std::arch::asm!(
                "movq {}, %fs:ilgen_rt_current_thread@tpoff",
                in(reg) p,
                options(att_syntax, nostack, preserves_flags)
            );
        }
    }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
mod imp {
    use std::cell::Cell;

    thread_local! {
        static CURRENT: Cell<*mut ()> = const { Cell::new(std::ptr::null_mut()) };
    }

    #[inline(always)]
    pub(crate) fn get() -> *mut () {
        CURRENT.with(|c| c.get())
    }

    #[inline(always)]
    pub(crate) fn set(p: *mut ()) {
        CURRENT.with(|c| c.set(p))
    }
}

pub(crate) use imp::{get, set};

/// Keeps four values in registers at this point of an `#[inline(never)]` function, without a
/// call: the report hook's arguments stay visible to a debugger stopped on it, and the debugger's
/// breakpoint lands in the hook itself (`std::hint::black_box` would be an inlined frame there).
#[inline(always)]
pub(crate) fn keep_alive(a: i32, b: u32, c: u32, d: u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: an empty assembly block (a comment) that only names four registers.
    unsafe {
        std::arch::asm!("/* {0:e} {1:e} {2:e} {3} */", in(reg) a, in(reg) b, in(reg) c, in(reg) d,
            options(nomem, nostack, preserves_flags));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: an empty assembly block (a comment) that only names four registers.
    unsafe {
        std::arch::asm!("/* {0:w} {1:w} {2:w} {3} */", in(reg) a, in(reg) b, in(reg) c, in(reg) d,
            options(nomem, nostack, preserves_flags));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    std::hint::black_box((a, b, c, d));
}
