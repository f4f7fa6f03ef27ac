//! The site table: source location of every instrumented instruction, embedded in the binary.
//!
//! Takes sites from the pass ([`SiteTableBuilder`], one blob per compiled module) and gives back,
//! from the linked executable's `ilgen_sites` section, a [`SiteTable`] mapping a [`SiteId`] to file,
//! line, column and function. Events carry only 4-byte site ids; nothing else is written beside the
//! binary.
//!
//! Layout. The section is a sequence of 16-byte units; the linker concatenates one blob per module
//! (each 16-aligned and a whole number of units, so no padding falls between them):
//! ```text
//! unit 0      "ILGS" | version: u16 | 0: u16 | n_sites: u32 | n_units: u32   (n_units counts unit 0)
//! unit 1..=n  line: u32 | column: u16 | flags: u16 | file: u32 | function: u32   (file and
//!             function: byte offsets of NUL-ended UTF-8 strings from the blob's start)
//! then        the strings, zero-padded to a whole unit
//! ```
//! All integers little endian. Instrumented code passes the address of its site's unit to the
//! runtime, which turns it into the id `(address - start of section) / 16`, so ids are unique
//! across the modules of one executable without any registration at start-up.
//!
//! Flags: bit 0 ([`FLAG_DECIDES`]) marks a load whose value decides an address
//! (`ilgen-pass`'s `decides`): a predicted schedule keeps the write such a read saw.
//!
//! Versions: 1, first layout (column: u32, no flags; still read, as flags 0); 2, flags.

use std::collections::HashMap;

use crate::event::SiteId;

pub const SECTION: &str = "ilgen_sites";
pub const UNIT: usize = 16;
pub const MAGIC: [u8; 4] = *b"ILGS";
pub const VERSION: u16 = 2;
/// [`Site::decides`] in a site's flags.
pub const FLAG_DECIDES: u16 = 1;

/// Collects one module's sites and lays out its blob.
#[derive(Default)]
pub struct SiteTableBuilder {
    entries: Vec<[u32; 4]>,
    strings: Vec<u8>,
    interned: HashMap<String, u32>,
}

impl SiteTableBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a site; returns its index within this module. Columns above 65535 are kept as 65535.
    pub fn add(
        &mut self,
        file: &str,
        line: u32,
        column: u32,
        function: &str,
        decides: bool,
    ) -> usize {
        let file = self.intern(file);
        let function = self.intern(function);
        let flags = if decides { FLAG_DECIDES } else { 0 } as u32;
        self.entries.push([
            line,
            column.min(u16::MAX as u32) | flags << 16,
            file,
            function,
        ]);
        self.entries.len() - 1
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
        let strings_at = (1 + self.entries.len()) * UNIT;
        let n_units = (strings_at + self.strings.len()).div_ceil(UNIT);
        let mut out = Vec::with_capacity(n_units * UNIT);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        out.extend_from_slice(&(n_units as u32).to_le_bytes());
        for [line, col, file, func] in self.entries {
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

/// One source location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// The function's symbol name (mangled for C++).
    pub function: String,
    /// A load whose value decides an address ([`FLAG_DECIDES`]).
    pub decides: bool,
}

/// Every site of one executable.
#[derive(Clone, Debug, Default)]
pub struct SiteTable {
    sites: HashMap<SiteId, Site>,
}

impl SiteTable {
    /// Parses the contents of the `ilgen_sites` section. The error says what is wrong, without a
    /// file name: the caller knows which binary it read.
    pub fn parse(section: &[u8]) -> Result<SiteTable, String> {
        let mut sites = HashMap::new();
        let mut unit = 0usize;
        let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
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
            if version != VERSION && version != 1 {
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
            for i in 0..n_sites {
                let at = (1 + i) * UNIT;
                let word = u32_at(blob, at + 4);
                let (column, flags) = match version {
                    1 => (word, 0),
                    _ => (word & 0xffff, (word >> 16) as u16),
                };
                let site = Site {
                    line: u32_at(blob, at),
                    column,
                    file: string(u32_at(blob, at + 8))?,
                    function: string(u32_at(blob, at + 12))?,
                    decides: flags & FLAG_DECIDES != 0,
                };
                sites.insert((unit + 1 + i) as SiteId, site);
            }
            unit += n_units;
        }
        Ok(SiteTable { sites })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_module_blobs_concatenated_give_global_ids() {
        let mut a = SiteTableBuilder::new();
        assert_eq!(a.add("a.c", 4, 3, "main", false), 0);
        assert_eq!(a.add("a.c", 6, 3, "main", true), 1);
        let mut b = SiteTableBuilder::new();
        b.add("dir/b.c", 17, 5, "task", false);
        let a = a.finish();
        let b = b.finish();
        assert_eq!(a.len() % UNIT, 0);
        let mut section = a.clone();
        section.extend_from_slice(&b);
        let table = SiteTable::parse(&section).unwrap();
        assert_eq!(table.len(), 3);
        let id_a1 = SiteTableBuilder::byte_offset(1) / UNIT;
        assert_eq!(table.get(id_a1 as SiteId).unwrap().line, 6);
        assert!(table.get(id_a1 as SiteId).unwrap().decides);
        let id_b0 = (a.len() + SiteTableBuilder::byte_offset(0)) / UNIT;
        let s = table.get(id_b0 as SiteId).unwrap();
        assert_eq!(
            (
                s.file.as_str(),
                s.line,
                s.column,
                s.function.as_str(),
                s.decides
            ),
            ("dir/b.c", 17, 5, "task", false)
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(SiteTable::parse(&[0xff; 32]).is_err());
        let mut blob = SiteTableBuilder::new();
        blob.add("a.c", 1, 1, "f", false);
        let blob = blob.finish();
        assert!(SiteTable::parse(&blob[..blob.len() - UNIT]).is_err());
    }
}
