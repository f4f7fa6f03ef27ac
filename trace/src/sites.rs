//! The site table: source location of every instrumented instruction, embedded in the binary.
//!
//! Takes sites from the pass ([`SiteTableBuilder`], one blob per compiled module) and gives back,
//! from the linked executable's `ilgen_sites` section, a [`SiteTable`] mapping a [`SiteId`] to file,
//! line, column and function, and the library frames inlined at that line. Events carry only
//! 4-byte site ids; nothing else is written beside the binary.
//!
//! A site is in the user's code whenever the compiler can say so: for an instruction inlined from
//! a library header (`std::lock_guard`'s constructor, `std::mutex::lock`, gthr-default.h's
//! `__gthread_mutex_lock`), the pass records the first frame of the inlined-at chain that
//! [`is_user_file`] accepts (the `std::lock_guard` line) as the site and the library frames
//! inlined at it as the site's [`Site::inlined`] frames; the frames of the chain beyond the site's
//! (its function inlined into its callers: `deposit` into `main`) are its [`Site::callers`].
//!
//! Layout. The section is a sequence of 16-byte units; the linker concatenates one blob per module
//! (each 16-aligned and a whole number of units, so no padding falls between them):
//! ```text
//! unit 0      "ILGS" | version: u16 | 0: u16 | n_sites: u32 | n_units: u32   (n_units counts unit 0)
//! unit 1..=n  line: u32 | column: u16 | flags: u8 | n_inlined: u8 | file: u32 | function: u32
//!             (file and function: byte offsets of NUL-ended UTF-8 strings from the blob's start)
//! then        the inlined frames, n_inlined units per site in site order, each
//!             line: u32 | column: u16 | caller: u16 | file: u32 | function: u32
//!             (caller 1: a frame the site's function is inlined into, innermost first, after
//!             the library frames inlined at the site, which have caller 0)
//! then        the strings, zero-padded to a whole unit
//! ```
//! All integers little endian. Instrumented code passes the address of its site's unit to the
//! runtime, which turns it into the id `(address - start of section) / 16`, so ids are unique
//! across the compiled modules of one executable without any registration at start-up. A shared
//! object built with the pass has a section of its own: a constructor the pass adds registers its
//! bounds with the runtime, which gives its units the ids from a first id on, past the
//! executable's, and names it in `meta.json` ([`crate::meta::Module`]); [`SiteTable::add_module`]
//! reads such a section at its ids. A function is
//! named by its linkage name (mangled for C++ and Rust), or its source name when it has none (C);
//! the reader demangles ([`SiteTable::parse`]).
//!
//! Flags: bit 0 ([`FLAG_DECIDES`]) marks a load whose value decides an address, bit 1
//! ([`FLAG_PREDICATE`]) a load whose value decides a branch of a loop that waits for another
//! thread (`ilgen-pass`'s `decides`): a predicted schedule keeps what such a read saw. A table
//! written before bit 1 existed reads as no predicate loads. Bit 2 ([`FLAG_CALL`]) marks the entry
//! or an exit of a function whose calls the runtime records under `ILGEN_OPTIONS=calls=1`
//! (`ilgen-pass`'s `call_markers`); older tables have none. Bit 3 ([`FLAG_SPIN`]) marks those
//! predicate loads whose loop has no sync operation inside (`ilgen-pass`'s `predicates`); older
//! tables have none, and their spin loops are modelled as before it.
//!
//! Versions: 1, first layout (column: u32, no flags; still read, as flags 0); 2, flags: u16 (still
//! read: its high byte was always 0, which version 3 reads as no inlined frames); 3, sites in user
//! code with their inlined library frames (still read, as no callers); 4, the inlined callers.

use std::collections::{BTreeSet, HashMap};

use crate::event::SiteId;
use crate::file::u32_at;

pub const SECTION: &str = "ilgen_sites";
pub const UNIT: usize = 16;
pub const MAGIC: [u8; 4] = *b"ILGS";
pub const VERSION: u16 = 4;
/// [`Site::decides`] in a site's flags.
pub const FLAG_DECIDES: u8 = 1;
/// An inlined frame that is one of [`Site::callers`].
const FRAME_CALLER: u32 = 1;
/// [`Site::predicate`] in a site's flags.
pub const FLAG_PREDICATE: u8 = 2;
/// [`Site::call`] in a site's flags.
pub const FLAG_CALL: u8 = 4;
/// [`Site::spin`] in a site's flags.
pub const FLAG_SPIN: u8 = 8;

/// Where the system's and the compiler's headers live: a frame in a file under one of these is
/// library code, never a site's own frame while a user frame is known.
pub const SYSTEM_DIRS: [&str; 3] = ["/usr/include/", "/usr/lib/gcc/", "/usr/lib/llvm-19/"];

/// The id of the site whose unit is at address `site`, given the address `start` of the
/// section (0 when the executable has none): `(site - start) / UNIT`, or [`crate::event::NO_SITE`] for
/// NULL and for an address outside the section.
#[inline]
pub fn id_at(site: usize, start: usize) -> SiteId {
    if site == 0 || start == 0 || site < start {
        return crate::event::NO_SITE;
    }
    SiteId::try_from((site - start) / UNIT)
        .ok()
        .filter(|&id| id != crate::event::NO_SITE)
        .unwrap_or(crate::event::NO_SITE)
}

/// Whether `file` is the user's code: any file not under one of the [`SYSTEM_DIRS`].
pub fn is_user_file(file: &str) -> bool {
    !SYSTEM_DIRS.iter().any(|dir| file.starts_with(dir))
}

/// The sites of a binary's deciding reads, by what they decide: the reads whose observations a
/// predicted schedule keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deciding {
    /// Loads whose value decides an address ([`FLAG_DECIDES`]).
    pub addresses: BTreeSet<SiteId>,
    /// Loads whose value decides a waiting loop's branch ([`FLAG_PREDICATE`]).
    pub predicates: BTreeSet<SiteId>,
    /// Those of the predicates that decide a loop with no sync operation inside ([`FLAG_SPIN`]).
    pub spins: BTreeSet<SiteId>,
}

impl Deciding {
    pub fn is_empty(&self) -> bool {
        self.addresses.is_empty() && self.predicates.is_empty()
    }
}

/// One source location and the function it is in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// How reports name the function: demangled by [`SiteTable::parse`]'s demangler.
    pub function: String,
    /// The name the table holds: the linkage name (mangled for C++), or the source name.
    pub symbol: String,
}

impl Frame {
    /// A frame as the pass writes it: its function named by `symbol` alone, not yet demangled.
    pub fn new(
        file: impl Into<String>,
        line: u32,
        column: u32,
        symbol: impl Into<String>,
    ) -> Frame {
        let symbol = symbol.into();
        Frame {
            file: file.into(),
            line,
            column,
            function: symbol.clone(),
            symbol,
        }
    }
}

/// Collects one module's sites and lays out its blob.
#[derive(Default)]
pub struct SiteTableBuilder {
    entries: Vec<[u32; 4]>,
    inlined: Vec<[u32; 4]>,
    strings: Vec<u8>,
    interned: HashMap<String, u32>,
}

impl SiteTableBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a site at `at` with the library frames `inlined` at it, from the call on `at`'s line
    /// inward; returns its index within this module. A frame's function is written as its
    /// [`Frame::symbol`]. Columns above 65535 are kept as 65535, frames beyond 255 dropped.
    pub fn add(&mut self, at: &Frame, inlined: &[Frame], flags: u8) -> usize {
        self.add_inlined_into(at, inlined, &[], flags)
    }

    /// [`SiteTableBuilder::add`], with the frames `callers` that `at`'s function is inlined
    /// into, innermost first; beyond 255 frames in all, the outermost callers are dropped.
    pub fn add_inlined_into(
        &mut self,
        at: &Frame,
        inlined: &[Frame],
        callers: &[Frame],
        flags: u8,
    ) -> usize {
        let max = u8::MAX as usize;
        let inlined = &inlined[..inlined.len().min(max)];
        let callers = &callers[..callers.len().min(max - inlined.len())];
        let entry = self.unit(at, flags, (inlined.len() + callers.len()) as u8);
        self.entries.push(entry);
        for f in inlined {
            let unit = self.unit(f, 0, 0);
            self.inlined.push(unit);
        }
        for f in callers {
            let mut unit = self.unit(f, 0, 0);
            unit[1] |= FRAME_CALLER << 16;
            self.inlined.push(unit);
        }
        self.entries.len() - 1
    }

    fn unit(&mut self, f: &Frame, flags: u8, n_inlined: u8) -> [u32; 4] {
        let column =
            f.column.min(u16::MAX as u32) | ((flags as u32) << 16) | ((n_inlined as u32) << 24);
        [f.line, column, self.intern(&f.file), self.intern(&f.symbol)]
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Byte offset of site `index`'s unit from the start of the blob.
    pub fn byte_offset(index: usize) -> usize {
        (1 + index) * UNIT
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&off) = self.interned.get(s) {
            return off;
        }
        // Offsets are relative to the string area until `finish` knows where it starts.
        let off = self.strings.len() as u32;
        self.strings.extend_from_slice(s.as_bytes());
        self.strings.push(0);
        self.interned.insert(s.to_owned(), off);
        off
    }

    /// The blob: a whole number of units.
    pub fn finish(self) -> Vec<u8> {
        let strings_at = (1 + self.entries.len() + self.inlined.len()) * UNIT;
        let n_units = (strings_at + self.strings.len()).div_ceil(UNIT);
        let mut out = Vec::with_capacity(n_units * UNIT);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        out.extend_from_slice(&(n_units as u32).to_le_bytes());
        for [line, col, file, func] in self.entries.into_iter().chain(self.inlined) {
            for v in [
                line,
                col,
                file + strings_at as u32,
                func + strings_at as u32,
            ] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        out.extend_from_slice(&self.strings);
        out.resize(n_units * UNIT, 0);
        out
    }
}

/// One instrumented instruction's source location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    /// The line in the user's code when the compiler knows one (see the module doc).
    pub frame: Frame,
    /// A load whose value decides an address ([`FLAG_DECIDES`]).
    pub decides: bool,
    /// A load whose value decides a branch of a loop that waits for another thread: a wait
    /// loop's predicate, a spin or polling loop's condition ([`FLAG_PREDICATE`]).
    pub predicate: bool,
    /// The entry or an exit of a function, where a recorded call begins or ends ([`FLAG_CALL`]):
    /// its `tx_begin`/`tx_end` is a call, not an atomic block the program marked.
    pub call: bool,
    /// A predicate load of a loop with no sync operation inside (a spin, or a loop that only
    /// yields or sleeps) ([`FLAG_SPIN`]): the loop runs from its first read to its exit within
    /// one segment, where the recorder keeps the first read only.
    pub spin: bool,
    /// The library frames inlined at [`Site::frame`], from its call inward: the operation itself
    /// is in the last one. Empty when the instruction is the line's own.
    pub inlined: Vec<Frame>,
    /// The frames [`Site::frame`]'s function is inlined into, innermost first: each the line of
    /// the inlined call. Empty when it is not inlined.
    pub callers: Vec<Frame>,
}

/// Every site of one executable and of the instrumented shared objects its run loaded.
#[derive(Clone, Debug, Default)]
pub struct SiteTable {
    sites: HashMap<SiteId, Site>,
}

impl SiteTable {
    /// Parses the contents of the `ilgen_sites` section, naming every function by
    /// `demangle(symbol)`. The error says what is wrong, without a file name: the caller knows
    /// which binary it read.
    pub fn parse(section: &[u8], demangle: impl Fn(&str) -> String) -> Result<SiteTable, String> {
        let mut table = SiteTable::default();
        table.add_module(section, 0, demangle)?;
        Ok(table)
    }

    /// Adds the sites of another module's `ilgen_sites` section (an instrumented shared object
    /// whose ids the run gave from `first` on: the id of its unit `i` is `first + i`), as
    /// [`SiteTable::parse`] reads them.
    pub fn add_module(
        &mut self,
        section: &[u8],
        first: SiteId,
        demangle: impl Fn(&str) -> String,
    ) -> Result<(), String> {
        let sites = &mut self.sites;
        let mut unit = 0usize;
        while (unit + 1) * UNIT <= section.len() {
            let blob = &section[unit * UNIT..];
            if blob[..UNIT].iter().all(|&b| b == 0) {
                // Alignment padding from a linker that does not pack whole units.
                unit += 1;
                continue;
            }
            if blob[..4] != MAGIC {
                return Err(format!("unit {unit} does not start a site table"));
            }
            let version = u16::from_le_bytes([blob[4], blob[5]]);
            if !(1..=VERSION).contains(&version) {
                return Err(format!(
                    "site table version {version}, expected {VERSION}; rebuild the program with this ilgen's pass"
                ));
            }
            let n_sites = u32_at(blob, 8) as usize;
            let n_units = u32_at(blob, 12) as usize;
            if n_units < 1 + n_sites || n_units * UNIT > blob.len() {
                return Err(format!("site table at unit {unit} is cut short"));
            }
            let blob = &blob[..n_units * UNIT];
            let string = |off: u32| -> Result<String, String> {
                let rest = blob
                    .get(off as usize..)
                    .ok_or_else(|| format!("string offset {off} outside its table"))?;
                let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
            };
            // (frame, flags, inlined frames) of the unit at byte `at`; an inlined frame's flags
            // are its caller word.
            let frame = |at: usize| -> Result<(Frame, u8, usize), String> {
                let word = u32_at(blob, at + 4);
                let (column, flags, n_inlined) = match version {
                    1 => (word, 0, 0),
                    _ => (word & 0xffff, (word >> 16) as u8, (word >> 24) as usize),
                };
                let symbol = string(u32_at(blob, at + 12))?;
                let frame = Frame {
                    file: string(u32_at(blob, at + 8))?,
                    line: u32_at(blob, at),
                    column,
                    function: demangle(&symbol),
                    symbol,
                };
                Ok((frame, flags, n_inlined))
            };
            let mut next_inlined = 1 + n_sites;
            for i in 0..n_sites {
                let (at_site, flags, n_inlined) = frame((1 + i) * UNIT)?;
                if next_inlined + n_inlined > n_units {
                    return Err(format!("site table at unit {unit} is cut short"));
                }
                let frames = (next_inlined..next_inlined + n_inlined)
                    .map(|u| frame(u * UNIT))
                    .collect::<Result<Vec<_>, _>>()?;
                next_inlined += n_inlined;
                let (callers, inlined): (Vec<_>, Vec<_>) = frames
                    .into_iter()
                    .partition(|&(_, caller, _)| version >= 4 && u32::from(caller) == FRAME_CALLER);
                let site = Site {
                    frame: at_site,
                    decides: flags & FLAG_DECIDES != 0,
                    predicate: flags & FLAG_PREDICATE != 0,
                    call: flags & FLAG_CALL != 0,
                    spin: flags & FLAG_SPIN != 0,
                    inlined: inlined.into_iter().map(|(f, _, _)| f).collect(),
                    callers: callers.into_iter().map(|(f, _, _)| f).collect(),
                };
                let id = SiteId::try_from(unit + 1 + i)
                    .ok()
                    .and_then(|i| i.checked_add(first))
                    .filter(|&id| id != crate::event::NO_SITE)
                    .ok_or_else(|| format!("site {i} of the table at unit {unit} has no id"))?;
                sites.insert(id, site);
            }
            unit += n_units;
        }
        Ok(())
    }

    pub fn get(&self, id: SiteId) -> Option<&Site> {
        self.sites.get(&id)
    }

    /// Every site with its id, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (SiteId, &Site)> {
        self.sites.iter().map(|(&id, site)| (id, site))
    }

    pub fn len(&self) -> usize {
        self.sites.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }
}

/// Whether sites `a` and `b` are one statement: the same file, line and function of one module's
/// table (the optimizer's copies of one call, such as an unlock duplicated into the two paths
/// after a loop, or calls on one line). `unit(i)` gives the section's unit `i` (a site's id is its
/// unit's index): a site's table begins at the nearest unit before it that starts with [`MAGIC`],
/// since its sites follow its header and a site unit starts with its line.
pub fn same_statement(unit: impl Fn(usize) -> [u8; UNIT], a: SiteId, b: SiteId) -> bool {
    let table_of = |site: usize| (0..=site).rev().find(|&i| unit(i)[..4] == MAGIC);
    let (a, b) = (a as usize, b as usize);
    // line | column, flags, inlined count | file | function: all but the second word.
    let key = |u: [u8; UNIT]| (u32_at(&u, 0), u32_at(&u, 8), u32_at(&u, 12));
    a == b || {
        let table = table_of(a);
        table.is_some() && table == table_of(b) && key(unit(a)) == key(unit(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_of_one_line_are_one_statement_and_other_lines_or_modules_are_not() {
        let mut a = SiteTableBuilder::new();
        a.add(&Frame::new("a.c", 7, 3, "task"), &[], 0);
        a.add(&Frame::new("a.c", 7, 41, "task"), &[], 0);
        a.add(&Frame::new("a.c", 8, 3, "task"), &[], 0);
        a.add(&Frame::new("a.c", 7, 3, "main"), &[], 0);
        let mut b = SiteTableBuilder::new();
        b.add(&Frame::new("a.c", 7, 3, "task"), &[], 0);
        let mut section = a.finish();
        let b_start = section.len();
        section.extend_from_slice(&b.finish());
        let unit =
            |i: usize| -> [u8; UNIT] { section[i * UNIT..(i + 1) * UNIT].try_into().unwrap() };
        let id = |i: usize| (SiteTableBuilder::byte_offset(i) / UNIT) as SiteId;
        assert!(same_statement(unit, id(0), id(1)), "two calls on line 7");
        assert!(same_statement(unit, id(1), id(1)));
        assert!(!same_statement(unit, id(0), id(2)), "another line");
        assert!(!same_statement(unit, id(0), id(3)), "another function");
        let other = (b_start / UNIT + SiteTableBuilder::byte_offset(0) / UNIT) as SiteId;
        assert!(
            !same_statement(unit, id(0), other),
            "another module's table"
        );
    }

    #[test]
    fn ids_are_unit_indices_and_null_is_no_site() {
        use crate::event::NO_SITE;
        assert_eq!(id_at(0, 0x1000), NO_SITE);
        assert_eq!(id_at(0x1000, 0), NO_SITE);
        assert_eq!(id_at(0x1000, 0x1000), 0);
        assert_eq!(id_at(0x1030, 0x1000), 3);
        assert_eq!(id_at(0x0ff0, 0x1000), NO_SITE);
    }

    #[test]
    fn two_module_blobs_concatenated_give_global_ids() {
        let mut a = SiteTableBuilder::new();
        assert_eq!(a.add(&Frame::new("a.c", 4, 3, "main"), &[], 0), 0);
        let header = [
            Frame::new("/usr/include/m.h", 20, 9, "_ZN1M4lockEv"),
            Frame::new("/usr/include/g.h", 749, 12, "gthread_lock"),
        ];
        assert_eq!(
            a.add(&Frame::new("a.c", 6, 3, "main"), &header, FLAG_DECIDES),
            1
        );
        let mut b = SiteTableBuilder::new();
        b.add(
            &Frame::new("dir/b.c", 17, 5, "task"),
            &[],
            FLAG_PREDICATE | FLAG_SPIN,
        );
        let a = a.finish();
        let b = b.finish();
        assert_eq!(a.len() % UNIT, 0);
        let mut section = a.clone();
        section.extend_from_slice(&b);
        let table = SiteTable::parse(&section, |s| s.to_uppercase()).unwrap();
        assert_eq!(table.len(), 3);
        let id_a0 = SiteTableBuilder::byte_offset(0) / UNIT;
        assert!(table.get(id_a0 as SiteId).unwrap().inlined.is_empty());
        let id_a1 = SiteTableBuilder::byte_offset(1) / UNIT;
        let s = table.get(id_a1 as SiteId).unwrap();
        assert_eq!(
            (s.frame.line, s.decides, s.predicate, s.spin),
            (6, true, false, false)
        );
        let mut want = header.to_vec();
        want[0].function = "_ZN1M4LOCKEV".into();
        want[1].function = "GTHREAD_LOCK".into();
        assert_eq!(s.inlined, want);
        let id_b0 = (a.len() + SiteTableBuilder::byte_offset(0)) / UNIT;
        let s = table.get(id_b0 as SiteId).unwrap();
        let mut want = Frame::new("dir/b.c", 17, 5, "task");
        want.function = "TASK".into();
        assert_eq!(
            (&s.frame, s.decides, s.predicate, s.spin),
            (&want, false, true, true)
        );
    }

    #[test]
    fn a_shared_object_s_table_is_read_at_its_first_id() {
        let mut exe = SiteTableBuilder::new();
        exe.add(&Frame::new("main.c", 5, 3, "main"), &[], 0);
        let mut lib = SiteTableBuilder::new();
        lib.add(&Frame::new("lib.c", 2, 1, "bump"), &[], 0);
        lib.add(&Frame::new("lib.c", 3, 1, "peek"), &[], FLAG_DECIDES);
        let mut table = SiteTable::parse(&exe.finish(), str::to_owned).unwrap();
        table.add_module(&lib.finish(), 40, str::to_owned).unwrap();
        let line = |id: SiteId| table.get(id).map(|s| (s.frame.file.as_str(), s.frame.line));
        // Unit 0 of each section is its header: the first site is unit 1.
        assert_eq!(line(1), Some(("main.c", 5)));
        assert_eq!(line(41), Some(("lib.c", 2)));
        assert_eq!(line(42), Some(("lib.c", 3)));
        assert!(table.get(42).unwrap().decides);
        assert_eq!((line(2), line(40), line(43)), (None, None, None));
        assert_eq!(table.len(), 3);
        let mut lib = SiteTableBuilder::new();
        lib.add(&Frame::new("lib.c", 2, 1, "bump"), &[], 0);
        let err = table
            .add_module(&lib.finish(), u32::MAX - 1, str::to_owned)
            .unwrap_err();
        assert!(err.contains("has no id"), "{err}");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let parse = |b: &[u8]| SiteTable::parse(b, str::to_owned);
        assert!(parse(&[0xff; 32]).is_err());
        let mut blob = SiteTableBuilder::new();
        blob.add(
            &Frame::new("a.c", 1, 1, "f"),
            &[Frame::new("/usr/include/h.h", 2, 1, "g")],
            0,
        );
        let blob = blob.finish();
        assert!(parse(&blob[..blob.len() - UNIT]).is_err());
        // A site claiming more inlined frames than its table holds.
        let mut bad = blob.clone();
        bad[UNIT + 7] = 200;
        assert!(parse(&bad).is_err());
    }

    #[test]
    fn user_code_is_outside_the_system_dirs() {
        assert!(is_user_file("/home/u/acct.cpp"));
        assert!(is_user_file("rel/a.c"));
        assert!(!is_user_file("/usr/include/c++/12/bits/std_mutex.h"));
        assert!(!is_user_file(
            "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/std_mutex.h"
        ));
        assert!(!is_user_file(
            "/usr/lib/llvm-19/lib/clang/19/include/stdatomic.h"
        ));
    }
}
