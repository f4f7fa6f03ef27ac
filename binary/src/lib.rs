//! `ilgen-binary`: the recorded executable, as the analysis and the report need it: site table
//! and symbols.
//!
//! Takes a run's [`Meta`] (the executable's path, its ELF build id and the address it was loaded
//! at); gives a [`Binary`] that names a [`SiteId`] (file, line, column, demangled function and the
//! library frames inlined there, from the `ilgen_sites` section the pass embedded), a runtime
//! address (`counters+8`, from the ELF symbol table) and a frame of a replay's stack in code that
//! is not instrumented (the function of the executable or of the shared library it is in,
//! demangled, see [`functions`]). The sites of the instrumented shared objects the run loaded
//! (`meta.modules`) are named the same way, from each one's own section at the ids the run gave
//! it. Loading refuses an executable or shared object whose build id differs from the recorded
//! one, or that has none: a rebuilt binary's site ids and symbol addresses would name the wrong
//! lines and variables.

use std::fs;
use std::path::{Path, PathBuf};

use ilgen_trace::replay::NativeFrame;
use ilgen_trace::sites::{Deciding, Site, SiteTable, SECTION};
use ilgen_trace::{Meta, SiteId};
use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

mod demangle;
mod error;
mod functions;
pub mod transactions;

use demangle::demangle;
pub use error::BinaryError;
use functions::{Functions, Modules};

/// One data symbol of the executable, at its link-time address.
#[derive(Clone, Debug)]
struct DataSymbol {
    address: u64,
    size: u64,
    name: String,
}

/// The executable a trace was recorded from.
#[derive(Debug)]
pub struct Binary {
    path: PathBuf,
    load_base: u64,
    sites: SiteTable,
    /// Sorted by address; overlapping or zero-sized symbols are dropped (see [`data_symbols`]).
    symbols: Vec<DataSymbol>,
    functions: Functions,
    /// The shared libraries replays' stacks went through, read when first named.
    modules: Modules,
}

/// The function a frame of uninstrumented code is in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeFunction {
    /// Demangled (`std::thread::_M_start_thread(...)`).
    pub function: String,
    /// The linkage name.
    pub symbol: String,
}

impl Binary {
    /// Reads `meta.binary` (relative paths are taken from `meta.cwd`), checks it is the recorded
    /// executable (its ELF build id against the one the runtime read from the running process)
    /// and parses its site table and symbols: an executable without ilgen's site table is refused,
    /// so replays only ever run instrumented programs.
    ///
    /// The instrumented shared objects the run loaded (`meta.modules`) are read and checked the
    /// same way, and their site tables added at the ids the run gave them.
    pub fn load(meta: &Meta) -> Result<Binary, BinaryError> {
        let path = Path::new(&meta.cwd).join(&meta.binary);
        let bytes = read_recorded(&path, &meta.build_id)?;
        let mut binary = Self::parse(&path, &bytes, meta.load_base)?;
        for module in &meta.modules {
            let path = Path::new(&meta.cwd).join(&module.path);
            let bytes = read_recorded(&path, &module.build_id)?;
            let file = object::File::parse(&*bytes).map_err(|e| BinaryError::Unreadable {
                path: path.clone(),
                what: format!("not a shared object ilgen can read ({e})"),
            })?;
            binary
                .sites
                .add_module(site_section(&path, &file)?, module.first_site, demangle)
                .map_err(|e| BinaryError::Unreadable {
                    path,
                    what: format!("bad site table: {e}"),
                })?;
        }
        Ok(binary)
    }

    /// Parses an executable's bytes without the build id check; `path` only names it in errors.
    pub fn parse(path: &Path, bytes: &[u8], load_base: u64) -> Result<Binary, BinaryError> {
        let bad = |what: String| BinaryError::Unreadable {
            path: path.to_path_buf(),
            what,
        };
        let file = object::File::parse(bytes)
            .map_err(|e| bad(format!("not an executable ilgen can read ({e})")))?;
        let sites = SiteTable::parse(site_section(path, &file)?, demangle)
            .map_err(|e| bad(format!("bad site table: {e}")))?;
        Ok(Binary {
            path: path.into(),
            load_base,
            sites,
            symbols: data_symbols(&file),
            functions: Functions::of(&file),
            modules: Modules::default(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Source location of an instrumented instruction, `None` for an id the table does not hold
    /// (including [`ilgen_trace::NO_SITE`]).
    pub fn site(&self, id: SiteId) -> Option<&Site> {
        self.sites.get(id)
    }

    /// The sites of loads whose value decides an address or a waiting loop's branch (the pass
    /// flags them): the reads whose observations a predicted schedule keeps.
    pub fn deciding_sites(&self) -> Deciding {
        let flagged = |flag: fn(&Site) -> bool| {
            self.sites
                .iter()
                .filter(|(_, s)| flag(s))
                .map(|(id, _)| id)
                .collect()
        };
        Deciding {
            addresses: flagged(|s| s.decides),
            predicates: flagged(|s| s.predicate),
            spins: flagged(|s| s.spin),
        }
    }

    /// The global variable holding the runtime address `addr`, and the offset into it.
    /// `None` for the stack, the heap, shared libraries and thread-local storage.
    pub fn symbolize(&self, addr: u64) -> Option<(String, u64)> {
        self.global_at(addr, self.load_base)
            .map(|g| (g.name.to_owned(), g.offset))
    }

    /// How reports name the global holding `addr`: `y`, or `stats+8` inside it.
    pub fn object_name(&self, addr: u64) -> Option<String> {
        let (name, off) = self.symbolize(addr)?;
        Some(if off == 0 {
            name
        } else {
            format!("{name}+{off}")
        })
    }

    /// [`Binary::load`] for a command that can do without the binary: on failure, warns on stderr
    /// with what the output loses (`degraded`) and gives `None`.
    pub fn load_or_warn(meta: &Meta, degraded: &str) -> Option<Binary> {
        match Binary::load(meta) {
            Ok(b) => Some(b),
            Err(e) => {
                eprintln!("ilgen: warning: {e}; {degraded}");
                None
            }
        }
    }

    /// The function that the frame `f` of a replay's stack returns into (its offset is a return
    /// address: the function is the one of the byte before it), from the executable's or its
    /// shared library's symbols; `None` when none holds it.
    pub fn native_function(&self, f: &NativeFrame) -> Option<NativeFunction> {
        let at = f.offset.checked_sub(1)?;
        let symbol = match &f.module {
            None => self.functions.at(at).map(str::to_owned),
            Some(path) => self.modules.function(path, at),
        }?;
        Some(NativeFunction {
            function: demangle(&symbol),
            symbol,
        })
    }

    /// The global variable holding `addr` in a process that loaded the executable at
    /// `load_base` (a replay's base differs from the recorded one under ASLR).
    pub fn global_at(&self, addr: u64, load_base: u64) -> Option<Global<'_>> {
        let link = addr.checked_sub(load_base)?;
        let i = self.symbols.partition_point(|s| s.address <= link);
        let sym = self.symbols.get(i.checked_sub(1)?)?;
        (link < sym.address + sym.size).then(|| Global {
            name: &sym.name,
            offset: link - sym.address,
            size: sym.size,
        })
    }
}

/// A global variable found by address: its name, the offset into it and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Global<'a> {
    pub name: &'a str,
    pub offset: u64,
    pub size: u64,
}

impl Binary {
    /// A binary that is only the site table `section` (the `ilgen_sites` bytes), for other
    /// crates' tests of how sites are named.
    #[cfg(feature = "testkit")]
    pub fn from_site_table(section: &[u8]) -> Result<Binary, String> {
        Ok(Binary {
            path: "a.out".into(),
            load_base: 0,
            sites: SiteTable::parse(section, demangle)?,
            symbols: Vec::new(),
            functions: Functions::default(),
            modules: Modules::default(),
        })
    }

    /// Address the recorded run loaded the executable at.
    pub fn load_base(&self) -> u64 {
        self.load_base
    }
}

/// The bytes of the file at `path` if its ELF build id is `recorded`: two files without an id
/// would match each other, so an empty id is no identity.
fn read_recorded(path: &Path, recorded: &str) -> Result<Vec<u8>, BinaryError> {
    let bytes = fs::read(path).map_err(|source| BinaryError::Read {
        path: path.into(),
        source,
    })?;
    let found = build_id(&bytes);
    if found.is_empty() {
        return Err(BinaryError::NoBuildId { path: path.into() });
    }
    if found != recorded {
        return Err(BinaryError::OtherBuild {
            path: path.into(),
            found,
            recorded: recorded.to_owned(),
        });
    }
    Ok(bytes)
}

/// The contents of `file`'s `ilgen_sites` section; `path` names it in errors.
fn site_section<'a>(path: &Path, file: &object::File<'a>) -> Result<&'a [u8], BinaryError> {
    let bad = |what: String| BinaryError::Unreadable {
        path: path.to_path_buf(),
        what,
    };
    let section = file.section_by_name(SECTION).ok_or_else(|| {
        bad(format!(
            "has no `{SECTION}` section; build the program with `ilgen cc` (or clang \
             -fpass-plugin=libilgen_pass.so)"
        ))
    })?;
    section
        .data()
        .map_err(|e| bad(format!("cannot read section `{SECTION}`: {e}")))
}

/// The ELF build id of an executable, lowercase hex; empty when it has none.
fn build_id(bytes: &[u8]) -> String {
    let id = object::File::parse(bytes)
        .ok()
        .and_then(|f| f.build_id().ok().flatten())
        .unwrap_or_default();
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// The executable's defined data objects, sorted by address. Thread-local symbols are left out:
/// their values are offsets into each thread's block, not addresses. Of several symbols at one
/// address (aliases) the global one wins, so that a user's variable is named as they wrote it.
/// C++ names are demangled (`std::locale::facet::_S_once`, not `_ZNSt6locale5facet7_S_onceE`).
fn data_symbols(file: &object::File) -> Vec<DataSymbol> {
    let mut all: Vec<(DataSymbol, bool)> = file
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Data && s.is_definition() && s.size() > 0)
        .filter_map(|s| {
            let name = s.name().ok()?;
            Some((
                DataSymbol {
                    address: s.address(),
                    size: s.size(),
                    name: demangle(name),
                },
                s.is_global(),
            ))
        })
        .collect();
    all.sort_by(|(a, ga), (b, gb)| (a.address, !ga, &a.name).cmp(&(b.address, !gb, &b.name)));
    let mut out: Vec<DataSymbol> = Vec::with_capacity(all.len());
    for (sym, _) in all {
        match out.last() {
            Some(prev) if sym.address < prev.address + prev.size => {} // alias or nested: keep first
            _ => out.push(sym),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binary(symbols: &[(u64, u64, &str)]) -> Binary {
        Binary {
            path: "a.out".into(),
            load_base: 0x5555_0000_0000,
            sites: SiteTable::default(),
            symbols: symbols
                .iter()
                .map(|&(address, size, name)| DataSymbol {
                    address,
                    size,
                    name: name.into(),
                })
                .collect(),
            functions: Functions::default(),
            modules: Modules::default(),
        }
    }

    #[test]
    fn symbolize_names_globals_with_offsets() {
        let b = binary(&[(0x4000, 4, "x"), (0x4004, 4, "y"), (0x4010, 32, "counters")]);
        let base = 0x5555_0000_0000;
        assert_eq!(b.symbolize(base + 0x4000), Some(("x".into(), 0)));
        assert_eq!(b.symbolize(base + 0x4004), Some(("y".into(), 0)));
        assert_eq!(b.symbolize(base + 0x4018), Some(("counters".into(), 8)));
        assert_eq!(b.symbolize(base + 0x4008), None);
        assert_eq!(b.symbolize(base + 0x4030), None);
        assert_eq!(b.symbolize(0x10), None);
    }

    #[test]
    fn garbage_bytes_are_an_error_naming_the_file() {
        let err = Binary::parse(Path::new("/tmp/nope"), b"not an elf", 0).unwrap_err();
        assert!(err.to_string().contains("/tmp/nope"), "{err}");
    }

    #[test]
    fn own_executable_has_no_site_table() {
        // The test binary is a real ELF file without an `ilgen_sites` section.
        let exe = std::env::current_exe().unwrap();
        let err = Binary::parse(&exe, &fs::read(&exe).unwrap(), 0).unwrap_err();
        assert!(err.to_string().contains("ilgen_sites"), "{err}");
    }
}
