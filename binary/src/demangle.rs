//! Function names as reports print them.
//!
//! Takes a symbol from the site table: an Itanium C++ name (`_ZN7Account7depositEl`), a Rust
//! name (legacy `_ZN..17h<hash>E` or v0 `_R...`), or a plain C name; gives the demangled name
//! (`Account::deposit(long)`, `core::fmt::write`), or the symbol unchanged when it is not mangled
//! or does not parse. Demangling happens once, when [`crate::Binary`] reads the site table, so
//! that every output (text, JSON, SARIF, dump, debugger sessions) shows the same names.
//!
//! The cpp_demangle and rustc-demangle crates rather than LLVM's demangler: the analysis side
//! links no LLVM (only the pass does), and binaries built by an older pass, whose tables hold
//! the linkage names, get demangled names too.

/// The name to print for `symbol`.
pub fn demangle(symbol: &str) -> String {
    // A Rust legacy symbol is valid Itanium too; rustc-demangle knows to drop its hash.
    if let Ok(d) = rustc_demangle::try_demangle(symbol) {
        return format!("{d:#}");
    }
    if !symbol.starts_with("_Z") {
        return symbol.to_owned();
    }
    cpp_demangle::Symbol::new(symbol)
        .ok()
        .and_then(|s| s.demangle().ok())
        .unwrap_or_else(|| symbol.to_owned())
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn cxx_rust_and_c_names() {
        for (symbol, name) in [
            ("_ZN7Account7depositEl", "Account::deposit(long)"),
            ("_Z4taskv", "task()"),
            (
                "_ZNSt10lock_guardISt5mutexEC2ERS0_",
                "std::lock_guard<std::mutex>::lock_guard(std::mutex&)",
            ),
            (
                "_ZL20__gthread_mutex_lockP15pthread_mutex_t",
                "__gthread_mutex_lock(pthread_mutex_t*)",
            ),
            ("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write"),
            ("_RNvCs1234_7mycrate3foo", "mycrate::foo"),
            ("main", "main"),
            ("_Z_not_mangled", "_Z_not_mangled"),
        ] {
            assert_eq!(demangle(symbol), name, "{symbol}");
        }
    }
}
