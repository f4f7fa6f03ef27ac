//! One thread's events as the reader holds them: its compact records, decoded on every walk.
//!
//! Takes a thread's records in its file, up to the file's end or the next thread's section
//! (checked once, as they are read: [`Events::read`] from bytes in memory, [`Events::open`] from
//! a large file, read through a memory map) or events one at a time
//! ([`Events::push`]); gives the events back in program order ([`Events::iter`]), the thread's
//! sync and heap events with their positions ([`Events::marks`], which steps over the accesses)
//! and those of them that begin or end a thread or an object ([`Events::lifecycle`]). An [`Event`]
//! takes 48 bytes and its record about 5: zstd's run of 62 million accesses took 3 GB decoded, its
//! records take 300 MB. So nothing decoded is held, and the records of a file of [`IN_FILE`] bytes
//! or more stay in the file: every walk maps a window of [`WINDOW`] bytes of it at a time, so that
//! neither the reader's memory nor its resident pages grow with the run (issue 14's probe,
//! 2.5·10^8 events in 1.2 GB of records, reads in a few MB) and no byte is copied out of the page
//! cache.

use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::{Mmap, MmapOptions};
use xxhash_rust::xxh3::Xxh3;

use crate::codec::{section_at, Cursor, Encoder, Records, MAX_RECORD};
use crate::error::TraceError;
use crate::event::{Event, SyncOp};
use crate::meta::FileSum;

/// Thread files with at least this many bytes keep their records in the file.
pub const IN_FILE: u64 = 8 << 20;
/// Bytes of a file a walk maps at a time.
const WINDOW: usize = 1 << 20;
/// Bytes a walk keeps ahead of its next record: more than any record takes (a slot's length byte
/// allows 257), so that a record is never cut by the end of a window.
const AHEAD: usize = 512;
/// [`Events::lifecycle`] events a file's records keep in memory; a thread with more has them
/// found by a walk of its marks.
const LIFECYCLE_KEPT: usize = 1 << 12;

/// A file's bytes after one thread's records ([`Events::read`]), and the offset of the next
/// thread's header in them.
pub type Rest = (Vec<u8>, usize);

/// Where the records are.
#[derive(Clone, Debug)]
enum Store {
    Memory(Vec<u8>),
    /// Bytes `from..to` of the file at `path`, with its [`Events::lifecycle`] events while they
    /// are few.
    File {
        path: PathBuf,
        from: u64,
        to: u64,
        lifecycle: Option<Vec<(usize, Event)>>,
    },
}

impl Default for Store {
    fn default() -> Store {
        Store::Memory(Vec::new())
    }
}

/// A thread's events, in program order.
#[derive(Clone, Default)]
pub struct Events {
    store: Store,
    len: usize,
    last: Option<Event>,
    /// Where the next record's deltas are taken from.
    encoder: Encoder,
}

/// Whether a mark begins or ends a thread or an object: a heap event, a fork, join or detach, the
/// exit, the destroy of a sync object.
fn is_lifecycle(event: &Event) -> bool {
    match event {
        Event::Access(_) | Event::Atomic(_) => false,
        Event::Heap(_) => true,
        Event::Sync(s) => {
            s.op.peer_thread().is_some()
                || s.op == SyncOp::Exit
                || matches!(
                    s.op.object_access(),
                    Some((_, crate::event::AccessKind::Write))
                )
        }
    }
}

/// What a walk reads the records from: all of them in memory, or a window of the file mapped.
enum Source<'a> {
    Memory(&'a [u8]),
    File { file: File, map: Option<Mmap> },
}

/// A walk's place in the records.
struct Window<'a> {
    path: &'a Path,
    source: Source<'a>,
    /// Offset in the file of the first byte of [`Window::bytes`], and where what is read ends.
    base: u64,
    end: u64,
    /// The next record, in the bytes, and its cursor.
    at: usize,
    /// Where a next record begins too close to the end of the bytes, which must move on.
    limit: usize,
    cursor: Cursor,
    /// The file's sum, when the walk sums what it reads.
    sum: Option<&'a mut Summed>,
}

/// The sum of a file read in pieces, perhaps overlapping (the threads of one file, each read
/// through its own windows): the bytes from its start up to `to`, each once.
pub(crate) struct Summed {
    hasher: Xxh3,
    to: u64,
}

impl Summed {
    pub fn new() -> Summed {
        Summed {
            hasher: Xxh3::new(),
            to: 0,
        }
    }

    /// Adds the bytes of `bytes`, which begin at byte `from` of the file, that are past what was
    /// summed; `from` is never past it (the pieces are read in order, each from a point an earlier
    /// one reached).
    pub fn add(&mut self, from: u64, bytes: &[u8]) {
        debug_assert!(from <= self.to, "a gap in the sum before byte {from}");
        let skip = (self.to - from.min(self.to)) as usize;
        if let Some(new) = bytes.get(skip..).filter(|b| !b.is_empty()) {
            self.hasher.update(new);
            self.to = from + bytes.len() as u64;
        }
    }

    /// The sum of a file of `size` bytes, all of them added.
    pub fn finish(&self, size: u64) -> FileSum {
        debug_assert_eq!(self.to, size);
        FileSum::of_hasher(size, &self.hasher)
    }
}

/// Bytes `from..from + len` of `file`, mapped (and their pages mapped at once: the walk reads
/// them all).
fn map(file: &File, from: u64, len: usize) -> std::io::Result<Mmap> {
    // SAFETY: the map is only read. A trace file is not written once its run is over; one
    // truncated while it is analysed would fault on a page that went, as a read of it would fail.
    unsafe {
        MmapOptions::new()
            .offset(from)
            .len(len)
            .populate()
            .map(file)
    }
}

impl<'a> Window<'a> {
    fn of(events: &'a Events) -> Window<'a> {
        match &events.store {
            Store::Memory(bytes) => Window {
                path: Path::new(""),
                source: Source::Memory(bytes),
                base: 0,
                end: bytes.len() as u64,
                at: 0,
                limit: usize::MAX,
                cursor: Cursor::default(),
                sum: None,
            },
            Store::File { path, from, to, .. } => Window {
                path,
                source: Source::File {
                    file: File::open(path).unwrap_or_else(|e| gone(path, e)),
                    map: None,
                },
                base: *from,
                end: *to,
                at: 0,
                limit: 0,
                cursor: Cursor::default(),
                sum: None,
            },
        }
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        match &self.source {
            Source::Memory(bytes) => bytes,
            Source::File { map, .. } => map.as_deref().unwrap_or(&[]),
        }
    }

    /// Whether the bytes reach the end of what is read.
    #[inline]
    fn whole(&self) -> bool {
        self.base + self.bytes().len() as u64 >= self.end
    }

    /// Maps the next window from the next record on when fewer than [`AHEAD`] bytes are left and
    /// the file has more.
    #[inline(always)]
    fn fill(&mut self) -> std::io::Result<()> {
        match self.at < self.limit {
            true => Ok(()),
            false => self.move_on(),
        }
    }

    #[cold]
    #[inline(never)]
    fn move_on(&mut self) -> std::io::Result<()> {
        let len = self.bytes().len();
        if len - self.at >= AHEAD || self.whole() {
            return Ok(());
        }
        let Source::File { file, map: mapped } = &mut self.source else {
            return Ok(());
        };
        let from = self.base + self.at as u64;
        let next = map(file, from, WINDOW.min((self.end - from) as usize))?;
        if let Some(sum) = &mut self.sum {
            sum.add(from, &next);
        }
        *mapped = Some(next);
        self.base = from;
        self.at = 0;
        self.limit = match self.whole() {
            true => usize::MAX,
            false => self.bytes().len() - AHEAD + 1,
        };
        Ok(())
    }

    fn records(&self) -> Records<'_> {
        Records::resume(
            self.path,
            self.bytes(),
            self.at,
            self.cursor,
            self.base as usize,
        )
    }

    /// The next record, decoded (`Err` only while records are checked).
    #[inline(always)]
    fn next(&mut self) -> Option<Result<Event, TraceError>> {
        if let Err(e) = self.fill() {
            return Some(Err(self.io(e)));
        }
        let mut records = self.records();
        let event = records.next()?;
        (self.at, self.cursor) = (records.offset(), records.cursor());
        Some(event)
    }

    /// Steps over the accesses up to the next other record (see [`Records::skip_access`]) and
    /// decodes that one; gives how many were stepped over, and the record.
    #[inline]
    fn next_mark(&mut self) -> (usize, Option<Result<Event, TraceError>>) {
        // The rest of a window record decoded in part first.
        let mut skipped = self.cursor.take_runs();
        loop {
            if let Err(e) = self.fill() {
                return (skipped, Some(Err(self.io(e))));
            }
            // Records beginning before the limit are whole in the bytes (and beyond, at the end).
            let limit = self.limit;
            let mut records = self.records();
            while records.offset() < limit {
                match records.skip_access() {
                    0 => break,
                    n => skipped += n,
                }
            }
            if records.offset() < limit {
                let event = records.next();
                (self.at, self.cursor) = (records.offset(), records.cursor());
                return (skipped, event);
            }
            self.at = records.offset();
        }
    }

    fn io(&self, source: std::io::Error) -> TraceError {
        TraceError::Io {
            path: self.path.into(),
            source,
        }
    }
}

/// A file whose records were checked cannot be read again: it changed under the analysis.
fn gone(path: &Path, e: std::io::Error) -> ! {
    panic!(
        "{} changed or went away while it was being analysed: {e}",
        path.display()
    )
}

impl Events {
    /// The records of `bytes` from `at` on, up to the end, the zero padding or the next thread's
    /// section, each checked; `path` only names the file in errors. Gives them and, when a
    /// section follows, `bytes` back with the offset of that thread's header. The records of a
    /// file's last thread stay in `bytes`, which is not copied; an earlier thread's are copied out.
    pub fn read(
        path: &Path,
        mut bytes: Vec<u8>,
        at: usize,
    ) -> Result<(Events, Option<Rest>), TraceError> {
        let mut records = Records::new(path, &bytes, at);
        let (mut len, mut last) = (0, None);
        let mut end = at;
        while let Some(event) = records.next() {
            last = Some(event?);
            len += 1;
            end = records.offset();
        }
        let cursor = records.cursor();
        let next = section_at(&bytes, end);
        let records = match next {
            Some(_) => bytes[at..end].to_vec(),
            None => {
                bytes.truncate(end);
                bytes.drain(..at);
                bytes.shrink_to_fit();
                std::mem::take(&mut bytes)
            }
        };
        let mut encoder = Encoder::default();
        encoder.rewind(cursor);
        let events = Events {
            store: Store::Memory(records),
            len,
            last,
            encoder,
        };
        Ok((events, next.map(|header| (bytes, header))))
    }

    /// The records of `file` (at `path`, of `size` bytes) from byte `at` on, each checked as
    /// [`Events::read`] does, read through a map and left in the file; every byte read is added
    /// to `sum`, which holds the file's bytes up to `at` at least. Gives them and, when the next
    /// thread's section follows, the offset of its header.
    pub(crate) fn open(
        path: &Path,
        file: &File,
        at: u64,
        size: u64,
        sum: &mut Summed,
    ) -> Result<(Events, Option<u64>), TraceError> {
        let io = |source| TraceError::Io {
            path: path.into(),
            source,
        };
        let mut window = Window {
            path,
            source: Source::File {
                file: file.try_clone().map_err(io)?,
                map: None,
            },
            base: at,
            end: size,
            at: 0,
            limit: 0,
            cursor: Cursor::default(),
            sum: Some(sum),
        };
        let (mut len, mut last) = (0, None);
        let mut lifecycle = Some(Vec::new());
        let mut end = at;
        while let Some(event) = window.next() {
            let event = event?;
            if let Some(kept) = lifecycle.as_mut().filter(|_| is_lifecycle(&event)) {
                kept.push((len, event));
                if kept.len() > LIFECYCLE_KEPT {
                    lifecycle = None;
                }
            }
            last = Some(event);
            len += 1;
            end = window.base + window.at as u64;
        }
        let next = section_at(window.bytes(), window.at).map(|h| window.base + h as u64);
        // The zero padding: the first window of it was checked with the last records.
        while next.is_none() && !window.whole() {
            window.at = window.bytes().len();
            window.fill().map_err(|e| window.io(e))?;
            if let Some(i) = window.bytes().iter().position(|&b| b != 0) {
                return Err(TraceError::Corrupt {
                    path: path.into(),
                    offset: window.base as usize + i,
                    reason: format!("data after the end of the records (at byte {end})"),
                });
            }
        }
        let mut encoder = Encoder::default();
        encoder.rewind(window.cursor);
        let events = Events {
            store: Store::File {
                path: path.into(),
                from: at,
                to: end,
                lifecycle,
            },
            len,
            last,
            encoder,
        };
        Ok((events, next))
    }

    /// Holds the records in memory from now on, so that events can be pushed.
    pub fn load(&mut self) -> Result<(), TraceError> {
        if let Store::File { path, from, to, .. } = &self.store {
            use std::os::unix::fs::FileExt;
            let mut bytes = vec![0; (to - from) as usize];
            File::open(path)
                .and_then(|f| f.read_exact_at(&mut bytes, *from))
                .map_err(|source| TraceError::Io {
                    path: path.clone(),
                    source,
                })?;
            self.store = Store::Memory(bytes);
        }
        Ok(())
    }

    /// Appends `event`; the records must be in memory ([`Events::load`]).
    pub fn push(&mut self, event: Event) {
        let mut buf = [0u8; MAX_RECORD];
        let n = self.encoder.event(&event, &mut buf);
        match &mut self.store {
            Store::Memory(records) => records.extend_from_slice(&buf[..n]),
            Store::File { .. } => panic!("events pushed to records left in their file"),
        }
        self.len += 1;
        self.last = Some(event);
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn first(&self) -> Option<Event> {
        self.iter().next()
    }

    pub fn last(&self) -> Option<Event> {
        self.last
    }

    /// The sync and heap events, each with its index among all events, in program order: decoded
    /// on every walk, stepping over the accesses.
    pub fn marks(&self) -> Marks<'_> {
        Marks {
            window: Window::of(self),
            index: 0,
        }
    }

    /// The marks that begin or end a thread or an object (heap events; forks, joins and detaches;
    /// the exit; destroys of sync objects), each with its index among all events, in program
    /// order: kept in memory when a file's records had few, else found by a walk of the marks.
    pub fn lifecycle(&self) -> Lifecycle<'_> {
        match &self.store {
            Store::File {
                lifecycle: Some(kept),
                ..
            } => Lifecycle::Kept(kept.iter()),
            _ => Lifecycle::Walked(Box::new(self.marks())),
        }
    }

    /// Bytes the records take.
    pub fn record_bytes(&self) -> usize {
        match &self.store {
            Store::Memory(records) => records.len(),
            Store::File { from, to, .. } => (to - from) as usize,
        }
    }

    /// Every event, decoded as it comes.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            window: Window::of(self),
        }
    }

    pub fn to_vec(&self) -> Vec<Event> {
        self.iter().collect()
    }
}

/// The events of [`Events::iter`].
pub struct Iter<'a> {
    window: Window<'a>,
}

/// A record checked when it was read, or a file that changed since.
#[inline(always)]
fn checked(event: Result<Event, TraceError>) -> Event {
    match event {
        Ok(event) => event,
        Err(e) => unchecked(e),
    }
}

#[cold]
#[inline(never)]
fn unchecked(e: TraceError) -> ! {
    panic!("records are checked as they are read: {e}")
}

impl Iter<'_> {
    /// The next sync or heap event from here on, found without moving.
    pub fn next_mark(&self) -> Option<Event> {
        let w = &self.window;
        let mut ahead: Option<Mmap> = None;
        let (mut at, mut cursor, mut base) = (w.at, w.cursor, w.base);
        loop {
            let bytes = ahead.as_deref().unwrap_or(w.bytes());
            let mut records = Records::resume(w.path, bytes, at, cursor, base as usize);
            while records.skip_access() != 0 {}
            let left = bytes.len() - records.offset();
            let read = base + bytes.len() as u64;
            let Source::File { file, .. } = &w.source else {
                return records.next().map(checked);
            };
            if left >= AHEAD || read >= w.end {
                return records.next().map(checked);
            }
            // Near the end of the window: map the next one, from the record on.
            let from = base + records.offset() as u64;
            cursor = records.cursor();
            let next = map(file, from, WINDOW.min((w.end - from) as usize))
                .unwrap_or_else(|e| gone(w.path, e));
            (ahead, at, base) = (Some(next), 0, from);
        }
    }
}

/// The events of [`Events::lifecycle`].
pub enum Lifecycle<'a> {
    Kept(std::slice::Iter<'a, (usize, Event)>),
    Walked(Box<Marks<'a>>),
}

impl Iterator for Lifecycle<'_> {
    type Item = (usize, Event);

    fn next(&mut self) -> Option<(usize, Event)> {
        match self {
            Lifecycle::Kept(kept) => kept.next().copied(),
            Lifecycle::Walked(marks) => marks.find(|(_, e)| is_lifecycle(e)),
        }
    }
}

impl Iterator for Iter<'_> {
    type Item = Event;

    #[inline]
    fn next(&mut self) -> Option<Event> {
        self.window.next().map(checked)
    }
}

/// The events of [`Events::marks`].
pub struct Marks<'a> {
    window: Window<'a>,
    /// Index of the next record among all events.
    index: usize,
}

impl Iterator for Marks<'_> {
    type Item = (usize, Event);

    #[inline]
    fn next(&mut self) -> Option<(usize, Event)> {
        let (skipped, event) = self.window.next_mark();
        self.index += skipped;
        let event = checked(event?);
        self.index += 1;
        Some((self.index - 1, event))
    }
}

impl<'a> IntoIterator for &'a Events {
    type Item = Event;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl FromIterator<Event> for Events {
    fn from_iter<I: IntoIterator<Item = Event>>(iter: I) -> Events {
        let mut events = Events::default();
        for e in iter {
            events.push(e);
        }
        events
    }
}

impl From<Vec<Event>> for Events {
    fn from(events: Vec<Event>) -> Events {
        events.into_iter().collect()
    }
}

impl PartialEq for Events {
    fn eq(&self, other: &Events) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for Events {}

impl PartialEq<Vec<Event>> for Events {
    fn eq(&self, other: &Vec<Event>) -> bool {
        self.len == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl fmt::Debug for Events {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Access, AccessKind, Heap, HeapOp, Sync, SyncOp, PENDING};

    fn sample() -> Vec<Event> {
        let access = |addr| {
            Event::Access(Access {
                addr,
                size: 4,
                site: 9,
                kind: AccessKind::Write,
            })
        };
        vec![
            Event::Sync(Sync {
                seq: 1,
                site: 7,
                op: SyncOp::Start,
            }),
            access(0x1000),
            Event::Heap(Heap {
                seq: 2,
                site: 3,
                op: HeapOp::Alloc {
                    addr: 0x5000,
                    size: 24,
                },
            }),
            access(0x5008),
            Event::Sync(Sync {
                seq: PENDING,
                site: 11,
                op: SyncOp::MutexLock { mutex: 0x90 },
            }),
        ]
    }

    #[test]
    fn events_read_pushed_and_read_again_are_the_same_with_their_marks() {
        let events = Events::from(sample());
        assert_eq!(events, sample());
        assert_eq!(events.len(), 5);
        assert_eq!(events.last(), sample().last().copied());
        let marks: Vec<usize> = events.marks().map(|(i, _)| i).collect();
        assert_eq!(marks, [0, 2, 4]);
        // Read back from the bytes, then pushed to: the deltas go on from the last record.
        let Store::Memory(records) = &events.store else {
            panic!("pushed events are in memory")
        };
        let (mut read, next) = Events::read(Path::new("t0.trace"), records.clone(), 0).unwrap();
        assert!(next.is_none());
        assert_eq!(read, events);
        let more = sample()[1];
        read.push(more);
        let mut all = sample();
        all.push(more);
        assert_eq!(read.to_vec(), all);
        assert!(read.marks().eq(events
            .marks()
            .chain([(5, more)])
            .filter(|(_, e)| !matches!(e, Event::Access(_)))));
    }
}
