//! Compiles the C shim `src/sites.c`: stable Rust cannot declare the linker's weak
//! `__start_ilgen_sites` symbol, C can.

fn main() {
    println!("cargo:rerun-if-changed=src/sites.c");
    cc::Build::new()
        .file("src/sites.c")
        .flag_if_supported("-fvisibility=hidden")
        .compile("ilgen_rt_sites");
}
