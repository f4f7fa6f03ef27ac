//! Threads' current segments, kept where a killed process leaves them: `pending.<n>` files.
//!
//! Takes (runtime side) the layout the recording runtime keeps its segment caches in, or (reader
//! side) a trace directory and its decoded threads; gives the accesses of the segment each thread
//! had not written out when the process died, appended to its events as its last segment.
//!
//! The runtime keeps every thread's segment cache in a slot of a pending file, mapped
//! `MAP_SHARED`, so every access recorded since the thread's last sync event is in the page cache
//! at every moment: SIGKILL, `_exit` or a fatal signal whose handler could not flush lose nothing.
//! The files are a pool made once per process, not per thread: a file of several slots is added
//! only when every slot is taken, a thread takes a free slot when it starts and gives it back when
//! it ends (its segment then is in its thread file, followed by `End`), so thread start creates
//! no file. A sealed exit removes the files; a run that died leaves them, and the reader takes a
//! slot's segment only for a thread whose file has no `End`, and none when the run was sealed.
//! Layout of `pending.<n>` (native byte order, little endian on every target the runtime supports):
//! ```text
//! 0   magic "ILGENPND" | version: u32 (FORMAT_VERSION) | slots: u32
//! 16  sites: u64 (the address of the site section, to turn site pointers into ids)
//! 24  capacity: u32 (ranges per slot) | 4 zero bytes
//! 32  slot * slots, each SLOT_HEADER + capacity * RANGE bytes:
//!     tid: u32 (NO_THREAD when free) | len: u32 (ranges in use, published after the range it
//!     counts is written) | 24 zero bytes | range * capacity
//! range: lo: u64 | hi: u64 | site: u64 (a site pointer) | kind: u8 | 7 bytes | mask: u64
//! ```
//! A range holds the bytes `[lo, hi)` and, for each bit `i` of its mask, byte `lo + i`, of one
//! access kind: the same bytes the cache drains as access and window records ([`shape`]).
//! The files are an addition beside the thread files: their bytes and [`FORMAT_VERSION`] are as
//! they were, and a reader that does not know them reads the trace as before, without those
//! segments.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use crate::codec::{is_window, runs, WINDOW_BYTES};
use crate::error::{TraceError, FORMAT_VERSION};
use crate::event::{Access, AccessKind, Event, SyncOp, ThreadId, NO_THREAD};
use crate::file::{read_regular, u32_at, u64_at};
use crate::format::ThreadTrace;

pub const MAGIC: [u8; 8] = *b"ILGENPND";
/// Bytes of a file's header, before its first slot.
pub const HEADER: usize = 32;
/// Bytes of a slot's header, before its first range.
pub const SLOT_HEADER: usize = 32;
/// Offset of the `len` field in a slot.
pub const LEN_AT: usize = 4;
/// Bytes of one range.
pub const RANGE: usize = 40;

/// File name of the `n`th pending file of a trace directory.
pub fn file_name(n: usize) -> String {
    format!("pending.{n}")
}

/// Bytes of one slot of `capacity` ranges.
pub fn slot_bytes(capacity: usize) -> usize {
    SLOT_HEADER + capacity * RANGE
}

/// The header of a fresh pending file of `slots` slots (which the runtime then marks free).
pub fn encode_header(slots: u32, sites: u64, capacity: u32) -> [u8; HEADER] {
    let mut out = [0u8; HEADER];
    out[..8].copy_from_slice(&MAGIC);
    out[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    out[12..16].copy_from_slice(&slots.to_le_bytes());
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

/// How a range's bytes become records (see [`shape`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A window record from `lo` of this mask.
    Window(u64),
    /// Access records of [`split`]`(lo, hi)` with this `hi`.
    Range(u64),
}

/// The records of the range holding `[lo, hi)` and byte `lo + i` for each bit `i` of `mask`: a
/// window when those bytes are not one run, else the one run they are. A mask counts only with
/// `lo < hi` (the cache masks no empty range).
pub fn shape(lo: u64, hi: u64, mask: u64) -> Shape {
    let len = hi.wrapping_sub(lo);
    if mask == 0 || hi <= lo || len >= WINDOW_BYTES {
        return Shape::Range(hi);
    }
    let all = mask | ((1u64 << len) - 1);
    if is_window(all) {
        Shape::Window(all)
    } else {
        Shape::Range(lo + u64::from(64 - all.leading_zeros()))
    }
}

/// The segments of the pending file `bytes`, by thread: every taken slot with ranges in use.
/// `path` only names the file in errors.
pub fn decode(path: &Path, bytes: &[u8]) -> Result<Vec<(ThreadId, Vec<Access>)>, TraceError> {
    let corrupt = |offset: usize, reason: String| TraceError::Corrupt {
        path: path.into(),
        offset,
        reason,
    };
    if bytes.len() < HEADER || bytes[..8] != MAGIC {
        return Err(crate::error::without_magic(
            path,
            "an ilgen pending segment file",
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
    let (slots, sites, capacity) = (u32_at(bytes, 12), u64_at(bytes, 16), u32_at(bytes, 24));
    let stride = slot_bytes(capacity as usize);
    let needed = (slots as usize)
        .checked_mul(stride)
        .and_then(|b| b.checked_add(HEADER));
    if needed.is_none_or(|n| bytes.len() < n) {
        return Err(corrupt(
            12,
            format!(
                "{slots} slots of {capacity} ranges do not fit in {} bytes",
                bytes.len()
            ),
        ));
    }
    let mut out = Vec::new();
    for slot in 0..slots as usize {
        let at = HEADER + slot * stride;
        let (tid, len) = (u32_at(bytes, at), u32_at(bytes, at + LEN_AT));
        if tid == NO_THREAD || len == 0 {
            continue;
        }
        if len > capacity {
            return Err(corrupt(
                at + LEN_AT,
                format!("slot {slot} has {len} ranges in use of {capacity}"),
            ));
        }
        let mut accesses = Vec::new();
        for i in 0..len as usize {
            let at = at + SLOT_HEADER + i * RANGE;
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
            let site = crate::sites::id_at(site as usize, sites as usize);
            let access = |(addr, size)| Access {
                addr,
                size,
                site,
                kind,
            };
            match shape(lo, hi, u64_at(bytes, at + 32)) {
                Shape::Window(mask) => accesses.extend(
                    runs(mask).map(|(i, len)| access((lo.wrapping_add(u64::from(i)), len))),
                ),
                Shape::Range(hi) => accesses.extend(split(lo, hi).map(access)),
            }
        }
        out.push((tid, accesses));
    }
    Ok(out)
}

/// The `n` of a pending file name `pending.<n>`, `None` for any other name.
pub fn file_index(name: &str) -> Option<usize> {
    let digits = name.strip_prefix("pending.")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Appends to each of `threads` (read from `dir`) that did not end the segment a pending file of
/// `dir` holds for it. Nothing for a sealed run (`sealed`): every segment is in its thread file.
pub fn recover(dir: &Path, sealed: bool, threads: &mut [ThreadTrace]) -> Result<(), TraceError> {
    if sealed {
        return Ok(());
    }
    let io = |path: &Path, source| TraceError::Io {
        path: path.into(),
        source,
    };
    let mut segments: HashMap<ThreadId, (std::path::PathBuf, Vec<Access>)> = HashMap::new();
    for entry in fs::read_dir(dir).map_err(|e| io(dir, e))? {
        let entry = entry.map_err(|e| io(dir, e))?;
        if entry.file_name().to_str().and_then(file_index).is_none() {
            continue;
        }
        let path = entry.path();
        for (tid, accesses) in decode(&path, &read_regular(&path)?)? {
            if let Some((first, _)) = segments.get(&tid) {
                return Err(TraceError::Inconsistent {
                    path: path.clone(),
                    reason: format!(
                        "it holds a segment of thread {tid}, and so does {}",
                        first.display()
                    ),
                });
            }
            segments.insert(tid, (path.clone(), accesses));
        }
    }
    for thread in threads.iter_mut() {
        let Some((_, accesses)) = segments.remove(&thread.header.tid) else {
            continue;
        };
        if !matches!(thread.events.last(), Some(Event::Sync(s)) if s.op == SyncOp::End) {
            thread.events.load()?;
            for a in accesses {
                thread.events.push(Event::Access(a));
            }
        }
    }
    if let Some((tid, (path, _))) = segments.into_iter().min_by_key(|(tid, _)| *tid) {
        return Err(TraceError::Inconsistent {
            path,
            reason: format!("it holds a segment of thread {tid}, which has no thread file"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPACITY: usize = 4;

    /// A range as (lo, hi, site pointer, kind byte, mask).
    type RawRange = (u64, u64, u64, u8, u64);

    /// A pending file of `slots.len()` slots, each (tid, ranges in use).
    fn file(slots: &[(ThreadId, &[RawRange])]) -> Vec<u8> {
        let mut bytes = encode_header(slots.len() as u32, 0x1000, CAPACITY as u32).to_vec();
        for (tid, ranges) in slots {
            let at = bytes.len();
            bytes.extend_from_slice(&tid.to_le_bytes());
            bytes.extend_from_slice(&(ranges.len() as u32).to_le_bytes());
            bytes.resize(at + SLOT_HEADER, 0);
            for &(lo, hi, site, kind, mask) in *ranges {
                for v in [lo, hi, site] {
                    bytes.extend_from_slice(&v.to_le_bytes());
                }
                bytes.extend_from_slice(&[kind, 0, 0, 0, 0, 0, 0, 0]);
                bytes.extend_from_slice(&mask.to_le_bytes());
            }
            bytes.resize(at + slot_bytes(CAPACITY), 0);
        }
        bytes
    }

    fn access(addr: u64, size: u32, site: u32, kind: AccessKind) -> Access {
        Access {
            addr,
            size,
            site,
            kind,
        }
    }

    #[test]
    fn taken_slots_in_use_become_accesses_with_site_ids() {
        let bytes = file(&[
            (NO_THREAD, &[(0x10, 0x18, 0x1030, 1, 0)]),
            (
                2,
                &[
                    (0x10, 0x18, 0x1030, 1, 0),
                    (0x40, 0x41, 0, 2, 0),
                    (0x80, 0x82, 0x1030, 0, 0b1001_0011),
                ],
            ),
            (3, &[]),
        ]);
        let got = decode(Path::new("pending.0"), &bytes).unwrap();
        assert_eq!(
            got,
            vec![(
                2,
                vec![
                    access(0x10, 8, 3, AccessKind::Write),
                    access(0x40, 1, crate::event::NO_SITE, AccessKind::AtomicRead),
                    // A window's runs: bytes 0-1 (the range), 4 and 7 (its mask).
                    access(0x80, 2, 3, AccessKind::Read),
                    access(0x84, 1, 3, AccessKind::Read),
                    access(0x87, 1, 3, AccessKind::Read),
                ]
            )]
        );
    }

    #[test]
    fn bad_files_are_named_errors() {
        let p = Path::new("pending.0");
        let err = decode(p, &file(&[(2, &[(0, 4, 0, 9, 0)])]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("access kind 9"), "{err}");
        let err = decode(p, &file(&[(2, &[(8, 4, 0, 0, 0)])]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("ends before it starts"), "{err}");
        let mut five = file(&[(2, &[])]);
        five[HEADER + LEN_AT] = 5;
        let err = decode(p, &five).unwrap_err().to_string();
        assert!(err.contains("slot 0 has 5 ranges in use of 4"), "{err}");
        let mut short = file(&[(2, &[]), (3, &[])]);
        short.truncate(short.len() - 1);
        let err = decode(p, &short).unwrap_err().to_string();
        assert!(err.contains("2 slots of 4 ranges do not fit"), "{err}");
        let mut huge = file(&[]);
        huge[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        huge[24..28].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(decode(p, &huge), Err(TraceError::Corrupt { .. })));
        assert!(matches!(
            decode(p, b"ILGENTHR and more bytes than a header"),
            Err(TraceError::NotATrace { .. })
        ));
    }

    #[test]
    fn only_pending_file_names_are_read() {
        assert_eq!(file_index("pending.0"), Some(0));
        assert_eq!(file_index("pending.12"), Some(12));
        assert_eq!(file_index("pending."), None);
        assert_eq!(file_index("pending.0.tmp"), None);
        assert_eq!(file_index("t0.trace"), None);
    }

    #[test]
    fn long_ranges_split_into_u32_pieces() {
        let max = u64::from(u32::MAX);
        let pieces: Vec<_> = split(0, max + 4).collect();
        assert_eq!(pieces, vec![(0, u32::MAX), (max, 4)]);
        assert_eq!(split(5, 5).count(), 0);
    }

    #[test]
    fn a_masked_range_is_a_window_only_when_its_bytes_are_not_one_run() {
        assert_eq!(shape(0x10, 0x11, 0b100), Shape::Window(0b101));
        // The range grew over the gap: one run, as far as the mask reaches.
        assert_eq!(shape(0x10, 0x12, 0b100), Shape::Range(0x13));
        assert_eq!(shape(0x10, 0x14, 0b100), Shape::Range(0x14));
        assert_eq!(shape(0x10, 0x50, 1 << 63), Shape::Range(0x50));
        assert_eq!(shape(0x10, 0x10, 0b100), Shape::Range(0x10));
        assert_eq!(shape(0x10, 0x11, 1 << 63), Shape::Window(1 << 63 | 1));
    }
}
