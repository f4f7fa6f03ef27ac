//! Compiles the runtime's C parts: the shim `src/sites.c` (stable Rust cannot declare the linker's
//! weak `__start_ilgen_sites` symbol, C can), `src/heap.c`, the replaced malloc family (weak
//! definitions in an object of their own, with default visibility so that the executable exports
//! them over libc.so's) and `src/heap_cxx.c`, the operator new/delete wrappers (their own object,
//! pulled in by C++ programs only; -fexceptions, so that exceptions unwind through them).

fn main() {
    println!("cargo:rerun-if-changed=src/sites.c");
    for f in ["src/heap.c", "src/heap.h", "src/heap_cxx.c"] {
        println!("cargo:rerun-if-changed={f}");
    }
    cc::Build::new()
        .file("src/sites.c")
        .flag_if_supported("-fvisibility=hidden")
        .compile("ilgen_rt_sites");
    cc::Build::new()
        .file("src/heap.c")
        .file("src/heap_cxx.c")
        .flag("-fexceptions")
        .compile("ilgen_rt_heap");
}
