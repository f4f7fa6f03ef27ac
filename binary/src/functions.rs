//! Function symbols by address: what names a frame in code that is not instrumented.
//!
//! Takes an ELF file (the executable, or a shared library a replay's stack went through, by the
//! path the loader opened it from); gives the function holding a link-time address, as its
//! linkage name. A library's own symbol table is usually stripped to its exported functions
//! (`.dynsym`: libstdc++'s `std::thread::_M_start_thread`, not the `execute_native_thread_routine`
//! that calls a thread's function); when the system has its separate debug file
//! (`/usr/lib/debug/.build-id/xx/yyyy.debug`, Debian's `-dbg` and `-dbgsym` packages) its full
//! `.symtab` is read too (`libc6-dbg`: `__libc_start_call_main`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use object::{Object, ObjectSymbol, SymbolKind};

/// Where Debian installs separate debug files, by build id.
const DEBUG_DIR: &str = "/usr/lib/debug/.build-id";

/// The defined functions of one file, sorted by address.
#[derive(Debug, Default)]
pub(crate) struct Functions {
    /// Address, size, linkage name; no two overlap.
    symbols: Vec<(u64, u64, String)>,
}

impl Functions {
    /// The functions of `file` (its `.symtab` and `.dynsym`).
    pub fn of(file: &object::File) -> Functions {
        let mut f = Functions::default();
        f.add(file);
        f
    }

    /// The functions of the shared object at `path`, with its debug file's when there is one;
    /// `None` when it cannot be read.
    fn load(path: &Path) -> Option<Functions> {
        let bytes = std::fs::read(path).ok()?;
        let file = object::File::parse(&*bytes).ok()?;
        let mut f = Functions::of(&file);
        let id = file.build_id().ok().flatten().filter(|id| id.len() > 1);
        if let Some(id) = id {
            let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
            let debug = Path::new(DEBUG_DIR)
                .join(&hex[..2])
                .join(format!("{}.debug", &hex[2..]));
            if let Ok(bytes) = std::fs::read(debug) {
                if let Ok(file) = object::File::parse(&*bytes) {
                    f.add(&file);
                }
            }
        }
        Some(f)
    }

    fn add(&mut self, file: &object::File) {
        let all = file.symbols().chain(file.dynamic_symbols());
        self.symbols.extend(
            all.filter(|s| s.kind() == SymbolKind::Text && s.is_definition() && s.size() > 0)
                .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_owned()))),
        );
        // Of several names at one address (aliases: `getpid`, `__getpid`) the shortest; nested
        // or overlapping ones are dropped.
        self.symbols
            .sort_by(|a, b| (a.0, a.2.len(), &a.2).cmp(&(b.0, b.2.len(), &b.2)));
        let mut kept: Vec<(u64, u64, String)> = Vec::with_capacity(self.symbols.len());
        for s in self.symbols.drain(..) {
            match kept.last() {
                Some(prev) if s.0 < prev.0 + prev.1 => {}
                _ => kept.push(s),
            }
        }
        self.symbols = kept;
    }

    /// The linkage name of the function holding `addr`.
    pub fn at(&self, addr: u64) -> Option<&str> {
        let i = self.symbols.partition_point(|s| s.0 <= addr);
        let (start, size, name) = self.symbols.get(i.checked_sub(1)?)?;
        (addr < start + size).then_some(name.as_str())
    }
}

/// The shared objects named so far, each read once.
#[derive(Debug, Default)]
pub(crate) struct Modules {
    read: Mutex<BTreeMap<String, Option<Arc<Functions>>>>,
}

impl Modules {
    /// The linkage name of the function at `addr` in the shared object at `path`.
    pub fn function(&self, path: &str, addr: u64) -> Option<String> {
        let functions = {
            let mut read = self.read.lock().unwrap_or_else(|e| e.into_inner());
            read.entry(path.to_owned())
                .or_insert_with(|| Functions::load(Path::new(path)).map(Arc::new))
                .clone()?
        };
        functions.at(addr).map(str::to_owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn functions(symbols: &[(u64, u64, &str)]) -> Functions {
        Functions {
            symbols: symbols
                .iter()
                .map(|&(a, s, n)| (a, s, n.to_owned()))
                .collect(),
        }
    }

    #[test]
    fn an_address_is_named_by_the_function_holding_it() {
        let f = functions(&[(0x100, 0x20, "main"), (0x140, 0x10, "work")]);
        assert_eq!(f.at(0x100), Some("main"));
        assert_eq!(f.at(0x11f), Some("main"));
        assert_eq!(f.at(0x120), None, "between two functions");
        assert_eq!(f.at(0x14f), Some("work"));
        assert_eq!(f.at(0x150), None);
        assert_eq!(f.at(0x10), None);
    }

    #[test]
    fn libc_is_read_from_its_file() {
        // This test's own process has libc loaded from the system's usual place.
        let path = [
            "/lib/x86_64-linux-gnu/libc.so.6",
            "/lib/aarch64-linux-gnu/libc.so.6",
        ]
        .into_iter()
        .find(|p| Path::new(p).exists());
        let Some(path) = path else { return };
        let m = Modules::default();
        let bytes = std::fs::read(path).unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let getpid = file
            .dynamic_symbols()
            .find(|s| s.name() == Ok("getpid"))
            .expect("libc exports getpid");
        assert_eq!(
            m.function(path, getpid.address()).as_deref(),
            Some("getpid")
        );
        assert_eq!(m.function("/nonexistent/libfoo.so", 0x10), None);
    }
}
