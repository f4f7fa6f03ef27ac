//! Compact trace records: the one encoding the runtime writes and the analyzer reads.
//!
//! Takes a thread's events one at a time ([`Encoder`], which keeps the thread's [`Cursor`]); gives
//! their bytes, and back the events of a run of records ([`Records`]).
//!
//! ```text
//! record = access | window | sync | heap | slot | atomic | section
//! access = 0x40 | size code << 2 | kind: u8, addr delta, [size,] site delta
//! window = 0x84 | kind: u8, addr delta, mask, site delta
//! sync   = 0x80: u8, seq delta, site delta, op (bincode varint, each object as a delta)
//! heap   = 0x81: u8, seq delta, site delta, op (bincode varint)
//! slot   = 0x82: u8, len: u8, bincode fixed-int of the Event, len bytes
//! atomic = 0x88 | op: u8, seq delta, site delta, address delta
//! section = 0x8c: u8, a thread file's start (magic and header) for the next thread
//! ```
//! Numbers are LEB128. A delta is the zigzag LEB128 of the wrapping difference from the same field
//! of the thread's previous record that has it: an access's address and site from the previous
//! access's, the seq and site of sync and heap records from the previous sync or heap record's,
//! and each sync object address from the previous sync object address; an atomic record's seq, site
//! and address are those of a sync record and its object (a walk of the marks, which steps over
//! the accesses, decodes it); all start at zero. Size
//! codes 0..=3 are sizes of 1, 2, 4 and 8 bytes; code 4 says the size follows. On a lock/access
//! loop a lock operation takes 5 bytes and an access 3 to 4, where fixed-width records took 25-29.
//!
//! A window stands for the accesses of one site and kind to the 64 bytes from its address: bit
//! `i` of its mask (bit 0 always set, at least two runs of set bits) says byte `addr + i` was
//! accessed, and each run of set bits decodes as one access, in address order; the deltas after
//! it are taken from its address and site. It is how a loop that reads a byte at a stride (a
//! Boyer-Moore skip loop), or each unrolled copy of a loop writing an array by turns, takes one
//! record per 64 bytes rather than one per access: the decoded accesses are those the separate
//! records gave.
//!
//! A slot is a sync record written pending: fixed-width and outside the deltas (it leaves the
//! cursor as it was), so the runtime can complete it in place whatever was written after it. When
//! it is still the thread's last record, the runtime writes its completion as a sync record
//! instead (it keeps the cursor from before the slot).
//!
//! A section ends the records of one thread and begins another's in the same file: the runtime
//! hands the file of a thread that ended to the next thread it starts (see `crate::format`). What
//! follows it is what a thread file begins with, its magic and header (never more than
//! [`MAX_RECORD`] bytes with its tag), then that thread's records, their deltas taken from zero
//! again. [`Records`] stops at it, as at the end of the records ([`section_at`] says where the
//! next header is).

use std::path::Path;

use crate::error::TraceError;
use crate::event::{Access, AccessKind, Atomic, AtomicOp, Event, Heap, Sync, SyncOp};

/// Upper bound of one encoded record.
pub const MAX_RECORD: usize = 64;

const ACCESS: u8 = 0x40;
const SYNC: u8 = 0x80;
const HEAP: u8 = 0x81;
const SLOT: u8 = 0x82;
/// Window records: `WINDOW | kind`.
const WINDOW: u8 = 0x84;
/// Atomic records: `ATOMIC | op` (0: acquire, 1: release store, 2: release read-modify-write).
const ATOMIC: u8 = 0x88;
/// The record that ends one thread's records and begins the next thread's.
const SECTION: u8 = 0x8c;
/// Bytes a window record spans.
pub const WINDOW_BYTES: u64 = 64;
/// The size code that says the size follows the address.
const SIZE_FOLLOWS: u8 = 4;

/// The fields the next record's deltas are taken from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    addr: u64,
    access_site: u32,
    seq: u64,
    site: u32,
    object: u64,
    /// The runs of the last window record not decoded yet (bits from `addr`), and their kind's
    /// bits: its accesses come one at a time, and a reader may stop and resume between them.
    runs: u64,
    runs_kind: u8,
}

impl Cursor {
    /// Forgets the accesses of a window record not decoded yet; gives how many there were.
    pub fn take_runs(&mut self) -> usize {
        let n = run_count(self.runs) as usize;
        self.runs = 0;
        n
    }
}

/// The runs of set bits of `mask`, lowest first, as (first bit, length).
#[inline]
pub fn runs(mut mask: u64) -> impl Iterator<Item = (u32, u32)> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let run = first_run(mask);
            mask &= !run_bits(run);
            run
        })
    })
}

#[inline]
fn first_run(mask: u64) -> (u32, u32) {
    let start = mask.trailing_zeros();
    (start, (!(mask >> start)).trailing_zeros())
}

#[inline]
fn run_bits((start, len): (u32, u32)) -> u64 {
    (u64::MAX >> (64 - len)) << start
}

/// Runs of set bits in `mask`.
#[inline]
pub fn run_count(mask: u64) -> u32 {
    (mask & !(mask << 1)).count_ones()
}

/// Whether `mask` is a window record's: bit 0 set and at least two runs.
#[inline]
pub fn is_window(mask: u64) -> bool {
    mask & 1 == 1 && run_count(mask) >= 2
}

fn fixed() -> impl bincode::config::Config {
    bincode::config::standard()
        .with_little_endian()
        .with_fixed_int_encoding()
}

fn varint() -> impl bincode::config::Config {
    bincode::config::standard()
        .with_little_endian()
        .with_variable_int_encoding()
}

#[inline]
fn put(out: &mut [u8], at: &mut usize, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out[*at] = byte;
            *at += 1;
            return;
        }
        out[*at] = byte | 0x80;
        *at += 1;
    }
}

#[inline]
fn delta(new: u64, old: u64) -> u64 {
    let d = new.wrapping_sub(old) as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

#[inline]
fn undelta(old: u64, zigzag: u64) -> u64 {
    old.wrapping_add((zigzag >> 1) ^ (zigzag & 1).wrapping_neg())
}

/// Sites are 32-bit: their deltas wrap at 32 bits, so [`crate::NO_SITE`] next to a small site is
/// a small delta.
#[inline]
fn site_delta(new: u32, old: u32) -> u64 {
    let d = new.wrapping_sub(old) as i32;
    u64::from(((d << 1) ^ (d >> 31)) as u32)
}

#[inline]
fn site_undelta(old: u32, zigzag: u64) -> u32 {
    let z = zigzag as u32;
    old.wrapping_add((z >> 1) ^ (z & 1).wrapping_neg())
}

#[inline]
fn kind_bits(kind: AccessKind) -> u8 {
    match kind {
        AccessKind::Read => 0,
        AccessKind::Write => 1,
        AccessKind::AtomicRead => 2,
        AccessKind::AtomicWrite => 3,
    }
}

/// The access kind of an access or window record's tag.
#[inline]
fn kind_of(tag: u8) -> AccessKind {
    match tag & 3 {
        0 => AccessKind::Read,
        1 => AccessKind::Write,
        2 => AccessKind::AtomicRead,
        _ => AccessKind::AtomicWrite,
    }
}

#[inline]
fn atomic_bits(op: AtomicOp) -> u8 {
    match op {
        AtomicOp::Acquire => 0,
        AtomicOp::ReleaseStore => 1,
        AtomicOp::ReleaseRmw => 2,
    }
}

/// `op` with every sync object address replaced by `f` of it, in declaration order.
fn map_objects(op: SyncOp, mut f: impl FnMut(u64) -> u64) -> SyncOp {
    use SyncOp::*;
    match op {
        Start | End | Exit | TxBegin | TxEnd | Fork { .. } | Join { .. } | Detach { .. } => op,
        MutexLock { mutex } => MutexLock { mutex: f(mutex) },
        MutexTryLock { mutex, acquired } => MutexTryLock {
            mutex: f(mutex),
            acquired,
        },
        MutexTimedLock { mutex, acquired } => MutexTimedLock {
            mutex: f(mutex),
            acquired,
        },
        MutexUnlock { mutex } => MutexUnlock { mutex: f(mutex) },
        MutexDestroy { mutex } => MutexDestroy { mutex: f(mutex) },
        RwRdLock { lock } => RwRdLock { lock: f(lock) },
        RwWrLock { lock } => RwWrLock { lock: f(lock) },
        RwTryRdLock { lock, acquired } => RwTryRdLock {
            lock: f(lock),
            acquired,
        },
        RwTryWrLock { lock, acquired } => RwTryWrLock {
            lock: f(lock),
            acquired,
        },
        RwUnlock { lock } => RwUnlock { lock: f(lock) },
        RwDestroy { lock } => RwDestroy { lock: f(lock) },
        SpinLock { lock } => SpinLock { lock: f(lock) },
        SpinTryLock { lock, acquired } => SpinTryLock {
            lock: f(lock),
            acquired,
        },
        SpinUnlock { lock } => SpinUnlock { lock: f(lock) },
        CondWait { cond, mutex, timed } => {
            let cond = f(cond);
            CondWait {
                cond,
                mutex: f(mutex),
                timed,
            }
        }
        CondWake {
            cond,
            mutex,
            timed_out,
        } => {
            let cond = f(cond);
            CondWake {
                cond,
                mutex: f(mutex),
                timed_out,
            }
        }
        CondSignal { cond } => CondSignal { cond: f(cond) },
        CondBroadcast { cond } => CondBroadcast { cond: f(cond) },
        CondDestroy { cond } => CondDestroy { cond: f(cond) },
        WaitLoopEnter { cond } => WaitLoopEnter { cond: f(cond) },
        WaitLoopExit { cond } => WaitLoopExit { cond: f(cond) },
        BarrierEnter { barrier } => BarrierEnter {
            barrier: f(barrier),
        },
        BarrierExit { barrier, serial } => BarrierExit {
            barrier: f(barrier),
            serial,
        },
        BarrierDestroy { barrier } => BarrierDestroy {
            barrier: f(barrier),
        },
        SemWait { sem } => SemWait { sem: f(sem) },
        SemTryWait { sem, acquired } => SemTryWait {
            sem: f(sem),
            acquired,
        },
        SemTimedWait { sem, acquired } => SemTimedWait {
            sem: f(sem),
            acquired,
        },
        SemPost { sem } => SemPost { sem: f(sem) },
        SemInit { sem, count } => SemInit { sem: f(sem), count },
        SemDestroy { sem } => SemDestroy { sem: f(sem) },
        ChannelWrite { channel, bytes } => ChannelWrite {
            channel: f(channel),
            bytes,
        },
        ChannelRead { channel, bytes } => ChannelRead {
            channel: f(channel),
            bytes,
        },
    }
}

/// One thread's encoder: writes records at the start of a caller's buffer of [`MAX_RECORD`]
/// bytes and returns their length. Allocation-free: the runtime calls it on its hot path and in
/// signal handlers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Encoder {
    cursor: Cursor,
}

impl Encoder {
    /// The cursor the next record's deltas are taken from.
    pub fn cursor(&self) -> Cursor {
        self.cursor
    }

    /// Goes back to `cursor`: the records after it were removed.
    pub fn rewind(&mut self, cursor: Cursor) {
        self.cursor = cursor;
    }

    /// One access record; hand-written, as most records of a trace are accesses.
    #[inline]
    pub fn access(&mut self, a: &Access, out: &mut [u8]) -> usize {
        let code = match a.size {
            1 => 0,
            2 => 1,
            4 => 2,
            8 => 3,
            _ => SIZE_FOLLOWS,
        };
        out[0] = ACCESS | code << 2 | kind_bits(a.kind);
        let mut at = 1;
        put(out, &mut at, delta(a.addr, self.cursor.addr));
        if code == SIZE_FOLLOWS {
            put(out, &mut at, u64::from(a.size));
        }
        put(out, &mut at, site_delta(a.site, self.cursor.access_site));
        self.cursor.addr = a.addr;
        self.cursor.access_site = a.site;
        at
    }

    /// One window record (see the module's doc): the accesses of `kind` at `site` to the bytes
    /// `addr + i` for each bit `i` of `mask`, which [`is_window`].
    pub fn window(
        &mut self,
        addr: u64,
        mask: u64,
        kind: AccessKind,
        site: u32,
        out: &mut [u8],
    ) -> usize {
        debug_assert!(is_window(mask));
        out[0] = WINDOW | kind_bits(kind);
        let mut at = 1;
        put(out, &mut at, delta(addr, self.cursor.addr));
        put(out, &mut at, mask);
        put(out, &mut at, site_delta(site, self.cursor.access_site));
        self.cursor.addr = addr;
        self.cursor.access_site = site;
        at
    }

    /// One record of any event; a pending sync operation is written as a slot ([`slot`]).
    pub fn event(&mut self, event: &Event, out: &mut [u8]) -> usize {
        match event {
            Event::Access(a) => self.access(a, out),
            Event::Sync(s) if s.is_pending() => slot(event, out),
            Event::Sync(s) => {
                let at = self.head(SYNC, s.seq, s.site, out);
                let mut prev = self.cursor.object;
                let op = map_objects(s.op, |o| {
                    let d = delta(o, prev);
                    prev = o;
                    d
                });
                self.cursor.object = prev;
                at + encode_varint(op, &mut out[at..MAX_RECORD])
            }
            Event::Heap(h) => {
                let at = self.head(HEAP, h.seq, h.site, out);
                at + encode_varint(h.op, &mut out[at..MAX_RECORD])
            }
            Event::Atomic(a) => {
                let mut at = self.head(ATOMIC | atomic_bits(a.op), a.seq, a.site, out);
                put(out, &mut at, delta(a.addr, self.cursor.object));
                self.cursor.object = a.addr;
                at
            }
        }
    }

    /// The tag, seq and site of a sync or heap record; returns their length.
    fn head(&mut self, tag: u8, seq: u64, site: u32, out: &mut [u8]) -> usize {
        out[0] = tag;
        let mut at = 1;
        put(out, &mut at, delta(seq, self.cursor.seq));
        put(out, &mut at, site_delta(site, self.cursor.site));
        self.cursor.seq = seq;
        self.cursor.site = site;
        at
    }

    /// A section record: `head` (a thread file's start: magic and header) of the thread whose
    /// records follow, which the deltas start afresh for. `head` with its tag fits in
    /// [`MAX_RECORD`] bytes.
    pub fn section(&mut self, head: &[u8], out: &mut [u8]) -> usize {
        out[1..=head.len()].copy_from_slice(head);
        // The tag last: until it is stored the records end here (a zero), so a process killed
        // meanwhile leaves no half header to read.
        std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
        out[0] = SECTION;
        self.cursor = Cursor::default();
        head.len() + 1
    }

    /// The records of `events`, one after the other.
    pub fn all(&mut self, events: &[Event]) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut buf = [0u8; MAX_RECORD];
        for e in events {
            let n = self.event(e, &mut buf);
            bytes.extend_from_slice(&buf[..n]);
        }
        bytes
    }
}

fn encode_varint(value: impl serde::Serialize, out: &mut [u8]) -> usize {
    bincode::serde::encode_into_slice(value, out, varint()).expect("an event fits in MAX_RECORD")
}

/// A sync record as a slot: fixed-width, so that its completion (the same operation with its seq
/// and outcome) has the same length and can replace it in place. Leaves every cursor unchanged.
pub fn slot(event: &Event, out: &mut [u8]) -> usize {
    let len = bincode::serde::encode_into_slice(event, &mut out[2..MAX_RECORD], fixed())
        .expect("an event fits in MAX_RECORD");
    out[0] = SLOT;
    out[1] = len as u8;
    len + 2
}

/// Length of the slot record at the start of `bytes`, `None` if it is no slot.
pub fn slot_len(bytes: &[u8]) -> Option<usize> {
    (bytes.len() >= 2 && bytes[0] == SLOT).then(|| usize::from(bytes[1]) + 2)
}

/// Where the next thread's header begins if the record at `at` is a section, `None` otherwise.
pub fn section_at(bytes: &[u8], at: usize) -> Option<usize> {
    (bytes.get(at) == Some(&SECTION)).then_some(at + 1)
}

/// A bincode varint `u64` at `*at`, if it is in its shortest form (else bincode decides).
#[inline]
fn bincode_u64(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let first = *bytes.get(*at)?;
    let wide = |n: usize| -> Option<u64> {
        let mut le = [0u8; 8];
        le[..n].copy_from_slice(bytes.get(*at + 1..*at + 1 + n)?);
        Some(u64::from_le_bytes(le))
    };
    let (value, used) = match first {
        0..=250 => (u64::from(first), 1),
        251 => (wide(2).filter(|&v| v > 250)?, 3),
        252 => (wide(4).filter(|&v| v > u64::from(u16::MAX))?, 5),
        253 => (wide(8).filter(|&v| v > u64::from(u32::MAX))?, 9),
        _ => return None,
    };
    *at += used;
    Some(value)
}

/// The operation at `*at` if it is one of those a lock loop is made of (no field, or one object
/// delta), decoded without bincode's serde visitors, which took a quarter of a walk of 10^7
/// sync records; `None` leaves the others (and any encoding not in its shortest form) to bincode.
#[inline]
fn common_op(bytes: &[u8], at: &mut usize) -> Option<SyncOp> {
    use SyncOp::*;
    let mut i = *at;
    let variant = bincode_u64(bytes, &mut i)?;
    let op = match variant {
        0 => Start,
        1 => End,
        28 => Exit,
        36 => TxBegin,
        37 => TxEnd,
        5 | 8 | 16 | 17 | 20 | 22 => {
            let d = bincode_u64(bytes, &mut i)?;
            match variant {
                5 => MutexLock { mutex: d },
                8 => MutexUnlock { mutex: d },
                16 => CondSignal { cond: d },
                17 => CondBroadcast { cond: d },
                20 => SpinLock { lock: d },
                _ => SpinUnlock { lock: d },
            }
        }
        _ => return None,
    };
    *at = i;
    Some(op)
}

/// The events of the records in `bytes` from `at` on, up to the end or the zero padding; each item
/// is an event or the error that ends the iteration.
#[derive(Clone)]
pub struct Records<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    at: usize,
    cursor: Cursor,
    done: bool,
    /// Offset in the file of `bytes[0]`, for errors.
    base: usize,
}

impl<'a> Records<'a> {
    /// `path` only names the file in errors.
    pub fn new(path: &'a Path, bytes: &'a [u8], at: usize) -> Records<'a> {
        Records {
            path,
            bytes,
            at,
            cursor: Cursor::default(),
            done: false,
            base: 0,
        }
    }

    /// The records of `bytes` from `at` on, the next one's deltas taken from `cursor`: a piece
    /// of a file that begins at its byte `base` (named in errors), read on from where an earlier
    /// piece's records left off.
    pub fn resume(
        path: &'a Path,
        bytes: &'a [u8],
        at: usize,
        cursor: Cursor,
        base: usize,
    ) -> Records<'a> {
        Records {
            cursor,
            base,
            ..Records::new(path, bytes, at)
        }
    }

    /// Offset of the next record.
    pub fn offset(&self) -> usize {
        self.at
    }

    /// The cursor the next record's deltas are taken from.
    pub fn cursor(&self) -> Cursor {
        self.cursor
    }

    /// Steps over the accesses of the next record if it is an access or a window (or those of a
    /// window partly decoded), without decoding them: gives how many, 0 if none. The access deltas
    /// are left behind, so only a walk that decodes no access may use it
    /// ([`crate::events::Marks`]); a record it cannot step over is left to [`Iterator::next`].
    #[inline]
    pub fn skip_access(&mut self) -> usize {
        if self.cursor.runs != 0 {
            return self.cursor.take_runs();
        }
        let Some(&tag) = self.bytes.get(self.at) else {
            return 0;
        };
        if self.done {
            return 0;
        }
        if (WINDOW..WINDOW + 4).contains(&tag) {
            return self.skip_window();
        }
        if !(ACCESS..=0x53).contains(&tag) {
            return 0;
        }
        let numbers = if (tag >> 2) & 0xf == SIZE_FOLLOWS {
            3
        } else {
            2
        };
        // The eight bytes after the tag hold the whole record but for long numbers: its end is
        // the last of its numbers' last bytes (those with the high bit clear), found in one word.
        if let Some(word) = self.bytes.get(self.at + 1..self.at + 9) {
            let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            let mut last_bytes = !word & 0x8080_8080_8080_8080;
            for _ in 1..numbers {
                last_bytes &= last_bytes.wrapping_sub(1);
            }
            if last_bytes != 0 {
                self.at += 1 + (last_bytes.trailing_zeros() / 8) as usize + 1;
                return 1;
            }
        }
        let mut at = self.at + 1;
        for _ in 0..numbers {
            loop {
                let Some(&byte) = self.bytes.get(at) else {
                    return 0;
                };
                at += 1;
                if byte & 0x80 == 0 {
                    break;
                }
            }
        }
        self.at = at;
        1
    }

    /// [`Records::skip_access`] of a window record: its mask is read for the count of its runs.
    #[cold]
    fn skip_window(&mut self) -> usize {
        let start = self.at;
        let mut at = start + 1;
        let mut numbers = [0u64; 3];
        for n in &mut numbers {
            match self.number(start, &mut at) {
                Ok(v) => *n = v,
                Err(_) => return 0,
            }
        }
        if !is_window(numbers[1]) {
            return 0;
        }
        self.at = at;
        run_count(numbers[1]) as usize
    }

    fn truncated(&self, start: usize) -> TraceError {
        TraceError::Truncated {
            path: self.path.into(),
            offset: self.base + start,
        }
    }

    fn corrupt(&self, offset: usize, reason: String) -> TraceError {
        TraceError::Corrupt {
            path: self.path.into(),
            offset: self.base + offset,
            reason,
        }
    }

    /// One LEB128 number of the record at `start`, at `*at`.
    #[inline]
    fn number(&self, start: usize, at: &mut usize) -> Result<u64, TraceError> {
        // Most deltas take one byte.
        match self.bytes.get(*at) {
            Some(&byte) if byte < 0x80 => {
                *at += 1;
                Ok(u64::from(byte))
            }
            _ => self.long_number(start, at),
        }
    }

    #[cold]
    #[inline(never)]
    fn long_number(&self, start: usize, at: &mut usize) -> Result<u64, TraceError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.bytes.get(*at) else {
                return Err(self.truncated(start));
            };
            *at += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.corrupt(start, "a number longer than 64 bits".into()))
    }

    /// A bincode value of the record at `start`, at `*at`.
    fn value<T: serde::de::DeserializeOwned>(
        &self,
        start: usize,
        at: &mut usize,
        end: usize,
        config: impl bincode::config::Config,
    ) -> Result<T, TraceError> {
        let slice = &self.bytes[*at..end];
        match bincode::serde::decode_from_slice(slice, config) {
            Ok((v, used)) => {
                *at += used;
                Ok(v)
            }
            Err(bincode::error::DecodeError::UnexpectedEnd { .. }) => Err(self.truncated(start)),
            Err(e) => Err(self.corrupt(start, e.to_string())),
        }
    }

    /// The access of the lowest run of the window record `c` is decoding, which has one left.
    #[inline]
    fn next_run(c: &mut Cursor) -> Event {
        let run = first_run(c.runs);
        c.runs &= !run_bits(run);
        Event::Access(Access {
            addr: c.addr.wrapping_add(u64::from(run.0)),
            size: run.1,
            site: c.access_site,
            kind: kind_of(c.runs_kind),
        })
    }

    fn record(&mut self, start: usize) -> Result<Event, TraceError> {
        let tag = self.bytes[start];
        let mut at = start + 1;
        let mut c = self.cursor;
        let event = match tag {
            ACCESS..=0x53 => {
                let addr = undelta(c.addr, self.number(start, &mut at)?);
                let code = (tag >> 2) & 0xf;
                let size = if code == SIZE_FOLLOWS {
                    let size = self.number(start, &mut at)?;
                    u32::try_from(size)
                        .map_err(|_| self.corrupt(start, format!("access size {size}")))?
                } else {
                    1 << code
                };
                let site = site_undelta(c.access_site, self.number(start, &mut at)?);
                let kind = kind_of(tag);
                c.addr = addr;
                c.access_site = site;
                Event::Access(Access {
                    addr,
                    size,
                    site,
                    kind,
                })
            }
            WINDOW..=0x87 => {
                let addr = undelta(c.addr, self.number(start, &mut at)?);
                let mask = self.number(start, &mut at)?;
                if !is_window(mask) {
                    return Err(self.corrupt(start, format!("window mask {mask:#x}")));
                }
                let site = site_undelta(c.access_site, self.number(start, &mut at)?);
                c.addr = addr;
                c.access_site = site;
                c.runs = mask;
                c.runs_kind = tag & 3;
                let event = Self::next_run(&mut c);
                self.cursor = c;
                self.at = at;
                return Ok(event);
            }
            SYNC | HEAP => {
                let seq = undelta(c.seq, self.number(start, &mut at)?);
                let site = site_undelta(c.site, self.number(start, &mut at)?);
                c.seq = seq;
                c.site = site;
                let end = self.bytes.len();
                if tag == HEAP {
                    let op = self.value(start, &mut at, end, varint())?;
                    Event::Heap(Heap { seq, site, op })
                } else {
                    let deltas: SyncOp = match common_op(self.bytes, &mut at) {
                        Some(op) => op,
                        None => self.value(start, &mut at, end, varint())?,
                    };
                    let mut prev = c.object;
                    let op = map_objects(deltas, |d| {
                        prev = undelta(prev, d);
                        prev
                    });
                    c.object = prev;
                    Event::Sync(Sync { seq, site, op })
                }
            }
            ATOMIC..=0x8a => {
                let seq = undelta(c.seq, self.number(start, &mut at)?);
                let site = site_undelta(c.site, self.number(start, &mut at)?);
                let addr = undelta(c.object, self.number(start, &mut at)?);
                (c.seq, c.site, c.object) = (seq, site, addr);
                let op = match tag - ATOMIC {
                    0 => AtomicOp::Acquire,
                    1 => AtomicOp::ReleaseStore,
                    _ => AtomicOp::ReleaseRmw,
                };
                Event::Atomic(Atomic {
                    seq,
                    addr,
                    site,
                    op,
                })
            }
            SLOT => {
                let Some(&len) = self.bytes.get(at) else {
                    return Err(self.truncated(start));
                };
                at += 1;
                let end = at + usize::from(len);
                if end > self.bytes.len() {
                    return Err(self.truncated(start));
                }
                let event: Event = self.value(start, &mut at, end, fixed())?;
                if at != end || !matches!(event, Event::Sync(_)) {
                    return Err(self.corrupt(
                        start,
                        format!("a slot of {len} bytes holds no sync record of that length"),
                    ));
                }
                event
            }
            _ => return Err(self.corrupt(start, format!("unknown record tag {tag:#04x}"))),
        };
        self.cursor = c;
        self.at = at;
        Ok(event)
    }
}

impl Iterator for Records<'_> {
    type Item = Result<Event, TraceError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.cursor.runs != 0 {
            return Some(Ok(Self::next_run(&mut self.cursor)));
        }
        if self.done || self.at >= self.bytes.len() {
            return None;
        }
        let start = self.at;
        if self.bytes[start] == SECTION {
            // Another thread's records follow: this thread's end here.
            self.done = true;
            return None;
        }
        if self.bytes[start] == 0 {
            // The end of the records: only the writer's zero padding may follow. Anything else
            // is a record whose tag was overwritten, and would silently cut the file.
            self.done = true;
            let at = self.bytes[start..].iter().position(|&b| b != 0)?;
            return Some(Err(self.corrupt(
                start + at,
                format!(
                    "data after the end of the records (at byte {})",
                    self.base + start
                ),
            )));
        }
        let record = self.record(start);
        self.done = record.is_err();
        Some(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_ops_decode_as_bincode_does() {
        use SyncOp::*;
        let values = [
            0,
            1,
            250,
            251,
            0xffff,
            0x1_0000,
            0xffff_ffff,
            0x1_0000_0000,
            u64::MAX,
        ];
        for v in values {
            for op in [
                Start,
                End,
                Exit,
                TxBegin,
                TxEnd,
                MutexLock { mutex: v },
                MutexUnlock { mutex: v },
                CondSignal { cond: v },
                CondBroadcast { cond: v },
                SpinLock { lock: v },
                SpinUnlock { lock: v },
                MutexTryLock {
                    mutex: v,
                    acquired: true,
                },
            ] {
                let mut bytes = [0u8; 32];
                let n = encode_varint(op, &mut bytes);
                let mut at = 0;
                match common_op(&bytes[..n], &mut at) {
                    Some(fast) => assert_eq!((fast, at), (op, n)),
                    None => assert!(matches!(op, MutexTryLock { .. })),
                }
            }
        }
        // Not in its shortest form: left to bincode.
        assert_eq!(common_op(&[5, 251, 7, 0], &mut 0), None);
    }
    use crate::event::{HeapOp, NO_SITE, PENDING};

    fn decode(bytes: &[u8]) -> Result<Vec<Event>, TraceError> {
        Records::new(Path::new("t1.trace"), bytes, 0).collect()
    }

    fn lock(seq: u64, mutex: u64, unlock: bool) -> Event {
        let op = if unlock {
            SyncOp::MutexUnlock { mutex }
        } else {
            SyncOp::MutexLock { mutex }
        };
        Event::Sync(Sync { seq, site: 12, op })
    }

    fn access(addr: u64, size: u32, site: u32, kind: AccessKind) -> Event {
        Event::Access(Access {
            addr,
            size,
            site,
            kind,
        })
    }

    /// A lock/access loop of one thread, as the runtime records it: lock, the shared total,
    /// unlock, the thread's own slot and (every 8th iteration) the racy counter.
    fn loop_events(iterations: u64) -> Vec<Event> {
        let (locks, total, own, racy) = (
            0x5555_5555_8040u64,
            0x5555_5555_8080,
            0x5555_5555_80a0,
            0x5555_5555_8090,
        );
        let mut events = Vec::new();
        for i in 0..iterations {
            let k = i & 1;
            events.push(lock(3 * i + 1, locks + 40 * k, false));
            events.push(access(total + 8 * k, 8, 40, AccessKind::Write));
            events.push(lock(3 * i + 2, locks + 40 * k, true));
            events.push(access(own, 8, 41, AccessKind::Write));
            if i % 8 == 0 {
                events.push(access(racy, 8, 42, AccessKind::Write));
            }
        }
        events
    }

    #[test]
    fn a_lock_access_loop_takes_at_most_8_bytes_per_lock_and_6_per_access() {
        let events = loop_events(1000);
        let mut enc = Encoder::default();
        let mut buf = [0u8; MAX_RECORD];
        enc.all(&events[..5]);
        let (mut locks, mut accesses) = ((0, 0), (0, 0));
        // The first iteration's deltas are from zero: whole addresses.
        for e in &events[5..] {
            let n = enc.event(e, &mut buf);
            let total = if matches!(e, Event::Sync(_)) {
                &mut locks
            } else {
                &mut accesses
            };
            total.0 += n;
            total.1 += 1;
            assert!(
                n <= if matches!(e, Event::Sync(_)) { 8 } else { 6 },
                "{e:?}: {n} bytes"
            );
        }
        assert_eq!(decode(&Encoder::default().all(&events)).unwrap(), events);
        assert!(locks.0 <= 5 * locks.1, "{locks:?}");
        assert!(accesses.0 <= 4 * accesses.1, "{accesses:?}");
    }

    fn atomic(seq: u64, addr: u64, op: AtomicOp) -> Event {
        Event::Atomic(Atomic {
            seq,
            addr,
            site: 21,
            op,
        })
    }

    #[test]
    fn atomic_records_are_marks_with_deltas_of_their_own() {
        let flag = 0x5555_5555_8100u64;
        // Message passing: the data written, the flag released; the other side acquires.
        let events = [
            lock(3, 0x40, false),
            access(flag - 0x40, 4, 20, AccessKind::Write),
            access(flag, 4, 21, AccessKind::AtomicWrite),
            atomic(9, flag, AtomicOp::ReleaseStore),
            atomic(9, flag, AtomicOp::Acquire),
            access(flag, 4, 22, AccessKind::AtomicRead),
            atomic(12, flag, AtomicOp::ReleaseRmw),
            lock(13, 0x40, true),
        ];
        let bytes = Encoder::default().all(&events);
        assert_eq!(decode(&bytes).unwrap(), events);
        let mut enc = Encoder::default();
        let mut buf = [0u8; MAX_RECORD];
        let lens: Vec<usize> = events.iter().map(|e| enc.event(e, &mut buf)).collect();
        // Tag, seq delta, site delta, address delta (0 from the flag's last atomic record).
        assert_eq!(lens[4..7], [4, 3, 4]);
        // Steps over accesses stop at an atomic record, which decodes whole.
        let mut records = Records::new(Path::new("t1.trace"), &bytes, 0);
        records.next();
        assert_eq!(records.skip_access(), 1);
        assert_eq!(records.skip_access(), 1);
        assert_eq!(records.skip_access(), 0);
        assert_eq!(records.next().unwrap().unwrap(), events[3]);
    }

    #[test]
    fn extreme_values_round_trip() {
        let events = vec![
            access(u64::MAX, u32::MAX, NO_SITE, AccessKind::AtomicRead),
            access(0, 3, 0, AccessKind::AtomicWrite),
            access(1 << 63, 16, 7, AccessKind::Read),
            Event::Sync(Sync {
                seq: u64::MAX - 1,
                site: NO_SITE,
                op: SyncOp::CondWake {
                    cond: u64::MAX,
                    mutex: 0,
                    timed_out: true,
                },
            }),
            Event::Sync(Sync {
                seq: 0,
                site: 0,
                op: SyncOp::SemInit {
                    sem: 1 << 40,
                    count: u32::MAX,
                },
            }),
            Event::Heap(Heap {
                seq: 5,
                site: NO_SITE,
                op: HeapOp::Free {
                    addr: u64::MAX,
                    size: u64::MAX,
                },
            }),
            Event::Sync(Sync {
                seq: PENDING,
                site: 3,
                op: SyncOp::Join { child: u32::MAX },
            }),
            lock(6, 0x40, false),
            atomic(u64::MAX, u64::MAX, AtomicOp::Acquire),
            atomic(0, 0, AtomicOp::ReleaseRmw),
        ];
        let mut enc = Encoder::default();
        let mut buf = [0u8; MAX_RECORD];
        for e in &events {
            assert!(enc.event(e, &mut buf) <= MAX_RECORD);
        }
        assert_eq!(decode(&Encoder::default().all(&events)).unwrap(), events);
    }

    #[test]
    fn stepping_over_accesses_ends_where_decoding_them_does() {
        // Numbers of one to ten bytes, sizes coded and following, near the end of the bytes.
        let mut events = Vec::new();
        for (i, shift) in [0u32, 6, 7, 13, 14, 20, 27, 34, 48, 63]
            .into_iter()
            .enumerate()
        {
            for size in [1, 4, 3, 1 << 20] {
                let site = (i as u32) << (3 * i);
                events.push(access(1u64 << shift, size, site, AccessKind::Write));
                events.push(access(0, size, 0, AccessKind::Read));
            }
        }
        events.push(lock(1, 0x40, false));
        let bytes = Encoder::default().all(&events);
        let mut skipped = Records::new(Path::new("t1.trace"), &bytes, 0);
        let mut decoded = skipped.clone();
        for e in &events {
            let stepped = skipped.skip_access() == 1;
            assert_eq!(stepped, matches!(e, Event::Access(_)));
            decoded.next();
            if !stepped {
                skipped.next();
            }
            assert_eq!(skipped.offset(), decoded.offset(), "{e:?}");
        }
    }

    /// The bytes of `events` with a window record of (`addr`, `mask`, read at site 9) after the
    /// first `at` of them.
    fn with_window(events: &[Event], at: usize, addr: u64, mask: u64) -> Vec<u8> {
        let mut enc = Encoder::default();
        let mut bytes = enc.all(&events[..at]);
        let mut buf = [0u8; MAX_RECORD];
        let n = enc.window(addr, mask, AccessKind::Read, 9, &mut buf);
        bytes.extend_from_slice(&buf[..n]);
        bytes.extend(enc.all(&events[at..]));
        bytes
    }

    #[test]
    fn a_window_decodes_as_the_accesses_of_its_runs_and_is_stepped_over_as_many() {
        let lo = 0x7f00_1234_5600u64;
        // Strided byte reads, a run of three, the window's last byte.
        let mask = 0b101 | 0b111 << 8 | 1 << 63;
        let want_runs = [(0, 1), (2, 1), (8, 3), (63, 1)];
        let expanded: Vec<Event> = want_runs
            .iter()
            .map(|&(i, len)| access(lo + i, len, 9, AccessKind::Read))
            .collect();
        assert_eq!(
            runs(mask)
                .map(|(i, n)| (u64::from(i), n))
                .collect::<Vec<_>>(),
            want_runs.to_vec()
        );
        assert_eq!(run_count(mask), 4);
        assert_eq!(runs(u64::MAX).collect::<Vec<_>>(), [(0, 64)]);
        let around = [
            access(lo - 8, 8, 3, AccessKind::Write),
            lock(7, 0x40, false),
            access(lo + 70, 2, 9, AccessKind::Read),
        ];
        let bytes = with_window(&around, 1, lo, mask);
        let mut want = vec![around[0]];
        want.extend(&expanded);
        want.extend(&around[1..]);
        assert_eq!(decode(&bytes).unwrap(), want);
        // 32 strided reads of a byte take one record of 13 bytes after a record near them, where
        // they took 32 of at least 3.
        let mut enc = Encoder::default();
        let mut buf = [0u8; MAX_RECORD];
        enc.access(
            &Access {
                addr: lo - 64,
                size: 1,
                site: 9,
                kind: AccessKind::Read,
            },
            &mut buf,
        );
        let stride = 0x5555_5555_5555_5555u64;
        assert_eq!(enc.window(lo, stride, AccessKind::Read, 9, &mut buf), 13);
        // Stepped over whole, or after some of its accesses were decoded.
        for decoded in 0..=want_runs.len() {
            let mut records = Records::new(Path::new("t1.trace"), &bytes, 0);
            records.next();
            for _ in 0..decoded {
                records.next();
            }
            assert_eq!(records.skip_access(), want_runs.len() - decoded);
            assert_eq!(records.skip_access(), 0);
            assert_eq!(records.next().unwrap().unwrap(), around[1]);
        }
        // A resumed reader takes the rest of the window from the cursor.
        let mut records = Records::new(Path::new("t1.trace"), &bytes, 0);
        records.nth(1);
        let mut again = Records::resume(
            Path::new("t1.trace"),
            &bytes,
            records.offset(),
            records.cursor(),
            0,
        );
        assert_eq!(again.next().unwrap().unwrap(), expanded[1]);
    }

    #[test]
    fn a_window_of_one_run_or_without_its_first_byte_is_corrupt() {
        for mask in [0, 0b111, 0b110, u64::MAX] {
            let mut bytes = vec![WINDOW, 0];
            let mut at = 2;
            bytes.resize(16, 0);
            put(&mut bytes, &mut at, mask);
            put(&mut bytes, &mut at, 0);
            bytes.truncate(at);
            let err = decode(&bytes).unwrap_err().to_string();
            assert!(err.contains("window mask"), "{mask:#x}: {err}");
            assert_eq!(
                Records::new(Path::new("t1.trace"), &bytes, 0).skip_access(),
                0
            );
        }
    }

    #[test]
    fn a_slot_leaves_the_cursor_and_its_completion_keeps_its_length() {
        let mut enc = Encoder::default();
        let mut buf = [0u8; MAX_RECORD];
        enc.event(&lock(4, 0x1000, false), &mut buf);
        let before = enc.cursor();
        let pending = Event::Sync(Sync {
            seq: PENDING,
            site: 1,
            op: SyncOp::MutexTryLock {
                mutex: 5,
                acquired: false,
            },
        });
        let n = enc.event(&pending, &mut buf);
        assert_eq!(slot_len(&buf), Some(n));
        assert_eq!(enc.cursor(), before);
        let done = Event::Sync(Sync {
            seq: 42,
            site: 1,
            op: SyncOp::MutexTryLock {
                mutex: 5,
                acquired: true,
            },
        });
        assert_eq!(slot(&done, &mut buf), n);
        let mut bytes = Encoder::default().all(&[lock(4, 0x1000, false)]);
        bytes.extend_from_slice(&buf[..n]);
        bytes.extend(enc.all(&[lock(43, 0x1000, true)]));
        assert_eq!(
            decode(&bytes).unwrap(),
            [lock(4, 0x1000, false), done, lock(43, 0x1000, true)]
        );
    }

    #[test]
    fn every_cut_inside_a_record_is_truncated_and_bad_tags_are_corrupt() {
        let events = loop_events(9);
        let bytes = Encoder::default().all(&events);
        let mut records = Records::new(Path::new("t1.trace"), &bytes, 0);
        let mut ends = vec![0];
        while records.next().is_some() {
            ends.push(records.offset());
        }
        for cut in 1..bytes.len() {
            let read = decode(&bytes[..cut]);
            match ends.iter().position(|&e| e == cut) {
                Some(n) => assert_eq!(read.unwrap(), events[..n]),
                None => assert!(
                    matches!(read, Err(TraceError::Truncated { .. })),
                    "cut at {cut}: {read:?}"
                ),
            }
        }
        for tag in [0x01, 0x3f, 0x54, 0x7f, 0x83, 0x8b, 0xff] {
            let err = decode(&[tag, 0, 0, 0]).unwrap_err();
            assert!(err.to_string().contains("unknown record tag"), "{err}");
        }
    }
}
