//! A thread's current segment, kept where a killed process leaves it: `t<tid>.pending`.
//!
//! Takes (runtime side) the layout the recording runtime keeps its segment cache in, or (reader
//! side) a thread's decoded file and its trace directory; gives the accesses of the segment the
//! thread had not written out when the process died, appended to its events as its last segment.
//!
//! The runtime's segment cache holds its ranges in this file, mapped `MAP_SHARED`, so every access
//! recorded since the thread's last sync event is in the page cache at every moment: SIGKILL,
//! `_exit` or a fatal signal whose handler could not flush lose nothing. A thread that ends, and
//! a process that exits with every cache flushed, remove their pending files; a run that died
//! leaves one per live thread, which the reader reads only when the thread file has no `End`.
//! Layout (native byte order, little endian on every target the runtime supports):
//! ```text
//! 0   magic "ILGENPND" | version: u32 (FORMAT_VERSION) | tid: u32
//! 16  sites: u64 (the address of the site section, to turn site pointers into ids)
//! 24  capacity: u32 | len: u32 (ranges in use, published after the range it counts is written)
//! 32  range * capacity: lo: u64 | hi: u64 | site: u64 (a site pointer) | kind: u8 | 7 bytes
//! ```
//! A range is `[lo, hi)` of one access kind, the same ranges the cache drains as access records.
//! The file is an addition beside the thread files: their bytes and [`FORMAT_VERSION`] are as they
//! were, and a reader that does not know it reads the trace as before, without that segment.

use std::path::Path;

use crate::error::{TraceError, FORMAT_VERSION};
use crate::event::{Access, AccessKind, Event, SyncOp, ThreadId};
use crate::file::read_regular;
use crate::format::ThreadTrace;

pub const MAGIC: [u8; 8] = *b"ILGENPND";
/// Bytes before the first range.
pub const HEADER: usize = 32;
/// Bytes of one range.
pub const RANGE: usize = 32;
/// Offset of the `len` field.
pub const LEN_AT: usize = 28;

/// File name of thread `tid`'s pending segment inside a trace directory.
pub fn file_name(tid: ThreadId) -> String {
    format!("t{tid}.pending")
}

/// The header of a fresh pending file, `len` 0.
pub fn encode_header(tid: ThreadId, sites: u64, capacity: u32) -> [u8; HEADER] {
    let mut out = [0u8; HEADER];
    out[..8].copy_from_slice(&MAGIC);
    out[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    out[12..16].copy_from_slice(&tid.to_le_bytes());
    out[16..24].copy_from_slice(&sites.to_le_bytes());
    out[24..28].copy_from_slice(&capacity.to_le_bytes());
    out
}

/// `[lo, hi)` as (address, size) pieces of at most `u32::MAX` bytes: how a range becomes access
/// records.
pub fn split(lo: u64, hi: u64) -> impl Iterator<Item = (u64, u32)> {
    let mut addr = lo;
    std::iter::from_fn(move || {
        (addr < hi).then(|| {
            let size = (hi - addr).min(u64::from(u32::MAX)) as u32;
            let at = addr;
            addr += u64::from(size);
            (at, size)
        })
    })
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// The accesses of the pending file `bytes` of thread `tid`; `path` only names it in errors.
pub fn decode(path: &Path, bytes: &[u8], tid: ThreadId) -> Result<Vec<Access>, TraceError> {
    let corrupt = |offset: usize, reason: String| TraceError::Corrupt {
        path: path.into(),
        offset,
        reason,
    };
    if bytes.len() < HEADER || bytes[..8] != MAGIC {
        return Err(crate::error::without_magic(
            path,
            "an ilgen pending segment",
            "ILGENPND",
            bytes,
        ));
    }
    let version = u32_at(bytes, 8);
    if version != FORMAT_VERSION {
        return Err(TraceError::Version {
            path: path.into(),
            found: u64::from(version),
            expected: FORMAT_VERSION,
        });
    }
    if u32_at(bytes, 12) != tid {
        return Err(corrupt(
            12,
            format!("it names thread {}", u32_at(bytes, 12)),
        ));
    }
    let sites = u64_at(bytes, 16) as usize;
    let (capacity, len) = (u32_at(bytes, 24), u32_at(bytes, LEN_AT));
    if len > capacity || bytes.len() < HEADER + len as usize * RANGE {
        return Err(corrupt(
            LEN_AT,
            format!(
                "{len} ranges in use of {capacity}, in {} bytes",
                bytes.len()
            ),
        ));
    }
    let mut out = Vec::new();
    for i in 0..len as usize {
        let at = HEADER + i * RANGE;
        let (lo, hi, site) = (
            u64_at(bytes, at),
            u64_at(bytes, at + 8),
            u64_at(bytes, at + 16),
        );
        let kind = match bytes[at + 24] {
            0 => AccessKind::Read,
            1 => AccessKind::Write,
            2 => AccessKind::AtomicRead,
            3 => AccessKind::AtomicWrite,
            k => return Err(corrupt(at + 24, format!("access kind {k}"))),
        };
        if lo > hi {
            return Err(corrupt(
                at,
                format!("range {lo:#x}..{hi:#x} ends before it starts"),
            ));
        }
        let site = crate::sites::id_at(site as usize, sites);
        out.extend(split(lo, hi).map(|(addr, size)| Access {
            addr,
            size,
            site,
            kind,
        }));
    }
    Ok(out)
}

/// Appends the pending segment in `dir` of `thread` to its events, unless the thread ended (its
/// file ends with `End`) or left none.
pub fn recover(dir: &Path, thread: &mut ThreadTrace) -> Result<(), TraceError> {
    if matches!(thread.events.last(), Some(Event::Sync(s)) if s.op == SyncOp::End) {
        return Ok(());
    }
    let path = dir.join(file_name(thread.header.tid));
    if !path.exists() {
        return Ok(());
    }
    let accesses = decode(&path, &read_regular(&path)?, thread.header.tid)?;
    thread
        .events
        .extend(accesses.into_iter().map(Event::Access));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(tid: ThreadId, ranges: &[(u64, u64, u64, u8)]) -> Vec<u8> {
        let mut bytes = encode_header(tid, 0x1000, 4).to_vec();
        bytes[LEN_AT..LEN_AT + 4].copy_from_slice(&(ranges.len() as u32).to_le_bytes());
        for &(lo, hi, site, kind) in ranges {
            for v in [lo, hi, site] {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
            bytes.extend_from_slice(&[kind, 0, 0, 0, 0, 0, 0, 0]);
        }
        bytes.resize(HEADER + 4 * RANGE, 0);
        bytes
    }

    #[test]
    fn ranges_in_use_become_accesses_with_site_ids() {
        let bytes = file(2, &[(0x10, 0x18, 0x1030, 1), (0x40, 0x41, 0, 2)]);
        let got = decode(Path::new("t2.pending"), &bytes, 2).unwrap();
        let access = |addr, size, site, kind| Access {
            addr,
            size,
            site,
            kind,
        };
        assert_eq!(
            got,
            vec![
                access(0x10, 8, 3, AccessKind::Write),
                access(0x40, 1, crate::NO_SITE, AccessKind::AtomicRead)
            ]
        );
    }

    #[test]
    fn bad_files_are_named_errors() {
        let p = Path::new("t2.pending");
        let err = decode(p, &file(3, &[]), 2).unwrap_err().to_string();
        assert!(err.contains("it names thread 3"), "{err}");
        let err = decode(p, &file(2, &[(0, 4, 0, 9)]), 2)
            .unwrap_err()
            .to_string();
        assert!(err.contains("access kind 9"), "{err}");
        let err = decode(p, &file(2, &[(8, 4, 0, 0)]), 2)
            .unwrap_err()
            .to_string();
        assert!(err.contains("ends before it starts"), "{err}");
        let mut five = file(2, &[]);
        five[LEN_AT] = 5;
        let err = decode(p, &five, 2).unwrap_err().to_string();
        assert!(err.contains("5 ranges in use of 4"), "{err}");
        assert!(matches!(
            decode(p, b"ILGENTHR and more bytes than a header", 2),
            Err(TraceError::NotATrace { .. })
        ));
    }

    #[test]
    fn long_ranges_split_into_u32_pieces() {
        let max = u64::from(u32::MAX);
        let pieces: Vec<_> = split(0, max + 4).collect();
        assert_eq!(pieces, vec![(0, u32::MAX), (max, 4)]);
        assert_eq!(split(5, 5).count(), 0);
    }
}
