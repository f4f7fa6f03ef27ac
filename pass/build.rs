//! Compiles the C++ registration glue (src/glue.cpp) against Debian's LLVM 19 headers.

use std::process::Command;

fn main() {
    let prefix =
        std::env::var("LLVM_SYS_191_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-19".to_owned());
    let config = format!("{prefix}/bin/llvm-config");
    println!("cargo:rerun-if-changed=src/glue.cpp");
    println!("cargo:rerun-if-env-changed=LLVM_SYS_191_PREFIX");
    let cxxflags = Command::new(&config)
        .arg("--cxxflags")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_else(|e| panic!("failed to run {config} --cxxflags: {e}"));
    let mut build = cc::Build::new();
    build.cpp(true).file("src/glue.cpp").warnings(false);
    for flag in cxxflags.split_whitespace() {
        // The plugin is a shared object: the -fno-exceptions/-std/-I/-D flags matter; -O and -g
        // come from cargo's profile.
        if flag.starts_with("-O") || flag.starts_with("-g") {
            continue;
        }
        build.flag(flag);
    }
    build.compile("ilgen_glue");
}
