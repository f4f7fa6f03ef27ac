//! One thread's events as the reader holds them: its compact records, decoded on every walk.
//!
//! Takes a thread file's records (checked once, as they are read: [`Events::read`] from bytes in
//! memory, [`Events::open`] from a large file, read in pieces) or events one at a time
//! ([`Events::push`]); gives the events back in program order ([`Events::iter`]) and the
//! thread's sync and heap events with their positions ([`Events::marks`], which steps over the
//! accesses). An [`Event`] takes 48 bytes and its record about 5: zstd's run of 62 million
//! accesses took 3 GB decoded, its records take 300 MB. So nothing decoded is held, and the
//! records of a file of [`IN_FILE`] bytes or more stay in the file: every walk reads it again in
//! pieces of [`PIECE`] bytes, so that the reader's memory does not grow with the run (issue 14's
//! probe, 2.5·10^8 events in 1.2 GB of records, reads in a few MB).

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;

use crate::codec::{Cursor, Encoder, Records, MAX_RECORD};
use crate::error::TraceError;
use crate::event::Event;
use crate::meta::FileSum;

/// Thread files with at least this many bytes keep their records in the file.
pub const IN_FILE: u64 = 8 << 20;
/// Bytes a walk of a file reads at a time.
const PIECE: usize = 64 << 10;
/// Bytes a walk keeps ahead of its next record: more than any record takes (a slot's length byte
/// allows 257), so that a record is never cut by the end of a piece.
const AHEAD: usize = 512;

/// Where the records are.
#[derive(Clone, Debug)]
enum Store {
    Memory(Vec<u8>),
    /// Bytes `from..to` of the file at `path`.
    File {
        path: PathBuf,
        from: u64,
        to: u64,
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

/// What a walk reads the records through: all of them in memory, or a piece of the file that
/// moves along with it.
struct Window<'a> {
    path: &'a Path,
    bytes: Cow<'a, [u8]>,
    file: Option<File>,
    /// Offset in the file of `bytes[0]`, and where what is read ends.
    base: u64,
    end: u64,
    /// The next record, in `bytes`, and its cursor.
    at: usize,
    cursor: Cursor,
    /// Everything read so far, when the walk sums the file.
    sum: Option<Xxh3>,
}

impl<'a> Window<'a> {
    fn of(events: &'a Events) -> Window<'a> {
        match &events.store {
            Store::Memory(bytes) => Window {
                path: Path::new(""),
                bytes: Cow::Borrowed(bytes),
                file: None,
                base: 0,
                end: bytes.len() as u64,
                at: 0,
                cursor: Cursor::default(),
                sum: None,
            },
            Store::File { path, from, to } => Window {
                path,
                bytes: Cow::Owned(Vec::new()),
                file: Some(File::open(path).unwrap_or_else(|e| gone(path, e))),
                base: *from,
                end: *to,
                at: 0,
                cursor: Cursor::default(),
                sum: None,
            },
        }
    }

    /// Reads on when fewer than [`AHEAD`] bytes are left and the file has more.
    #[inline]
    fn fill(&mut self) -> std::io::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let read = self.base + self.bytes.len() as u64;
        if self.bytes.len() - self.at >= AHEAD || read >= self.end {
            return Ok(());
        }
        let buf = self.bytes.to_mut();
        buf.drain(..self.at);
        self.base += self.at as u64;
        self.at = 0;
        let old = buf.len();
        buf.resize(old + PIECE.min((self.end - read) as usize), 0);
        file.read_exact_at(&mut buf[old..], read)?;
        if let Some(sum) = &mut self.sum {
            sum.update(&buf[old..]);
        }
        Ok(())
    }

    fn records(&self) -> Records<'_> {
        Records::resume(
            self.path,
            &self.bytes,
            self.at,
            self.cursor,
            self.base as usize,
        )
    }

    /// The next record, decoded (`Err` only while records are checked).
    #[inline]
    fn next(&mut self) -> Option<Result<Event, TraceError>> {
        if let Err(e) = self.fill() {
            return Some(Err(self.io(e)));
        }
        let mut records = self.records();
        let event = records.next()?;
        (self.at, self.cursor) = (records.offset(), records.cursor());
        Some(event)
    }

    /// Steps over the accesses up to the next other record (see [`Records::skip_access`]); gives
    /// how many.
    #[inline]
    fn skip_accesses(&mut self) -> usize {
        let mut skipped = 0;
        loop {
            if self.fill().is_err() {
                return skipped;
            }
            // Up to where the piece must be read on (it holds at least AHEAD bytes more then).
            let whole = self.file.is_none() || self.base + self.bytes.len() as u64 >= self.end;
            let until = match whole {
                true => usize::MAX,
                false => self.bytes.len() - AHEAD,
            };
            let mut records = self.records();
            let mut more = true;
            while more && records.offset() <= until {
                more = records.skip_access();
                skipped += usize::from(more);
            }
            self.at = records.offset();
            if !more || whole {
                return skipped;
            }
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
    /// The records of `bytes` from `at` on, up to the end or the zero padding, each checked; `path`
    /// only names the file in errors. The records stay in `bytes`, which is not copied.
    pub fn read(path: &Path, mut bytes: Vec<u8>, at: usize) -> Result<Events, TraceError> {
        let mut records = Records::new(path, &bytes, at);
        let (mut len, mut last) = (0, None);
        let mut end = at;
        while let Some(event) = records.next() {
            last = Some(event?);
            len += 1;
            end = records.offset();
        }
        let cursor = records.cursor();
        bytes.truncate(end);
        bytes.drain(..at);
        bytes.shrink_to_fit();
        let mut encoder = Encoder::default();
        encoder.rewind(cursor);
        Ok(Events {
            store: Store::Memory(bytes),
            len,
            last,
            encoder,
        })
    }

    /// The records of the file at `path`, of `size` bytes, from byte `at` on, each checked as
    /// [`Events::read`] does, read in pieces and left in the file; `head` is the file's first
    /// `at` bytes, already read. Gives the sum of the whole file too.
    pub fn open(
        path: &Path,
        file: File,
        head: &[u8],
        size: u64,
    ) -> Result<(Events, FileSum), TraceError> {
        let mut sum = Xxh3::new();
        sum.update(head);
        let at = head.len() as u64;
        let mut window = Window {
            path,
            bytes: Cow::Owned(Vec::new()),
            file: Some(file),
            base: at,
            end: size,
            at: 0,
            cursor: Cursor::default(),
            sum: Some(sum),
        };
        let (mut len, mut last) = (0, None);
        let mut end = at;
        while let Some(event) = window.next() {
            last = Some(event?);
            len += 1;
            end = window.base + window.at as u64;
        }
        // The zero padding: the first piece of it was checked with the last records.
        while window.base + (window.bytes.len() as u64) < size {
            window.at = window.bytes.len();
            window.fill().map_err(|e| window.io(e))?;
            if let Some(i) = window.bytes.iter().position(|&b| b != 0) {
                return Err(TraceError::Corrupt {
                    path: path.into(),
                    offset: window.base as usize + i,
                    reason: format!("data after the end of the records (at byte {end})"),
                });
            }
        }
        let mut encoder = Encoder::default();
        encoder.rewind(window.cursor);
        let sum = FileSum::of_hasher(size, &window.sum.take().expect("summed as it was read"));
        let events = Events {
            store: Store::File {
                path: path.into(),
                from: at,
                to: end,
            },
            len,
            last,
            encoder,
        };
        Ok((events, sum))
    }

    /// Holds the records in memory from now on, so that events can be pushed.
    pub fn load(&mut self) -> Result<(), TraceError> {
        if let Store::File { path, from, to } = &self.store {
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
        let mut bytes: Cow<[u8]> = Cow::Borrowed(&w.bytes);
        let (mut at, mut cursor, mut base) = (w.at, w.cursor, w.base);
        loop {
            let mut records = Records::resume(w.path, &bytes, at, cursor, base as usize);
            while records.skip_access() {}
            let left = bytes.len() - records.offset();
            let read = base + bytes.len() as u64;
            if left >= AHEAD || read >= w.end || w.file.is_none() {
                return records.next().map(checked);
            }
            // Near the end of the piece: read on in a copy of its rest.
            let (from, rest) = (records.offset(), records.cursor());
            let mut more = bytes[from..].to_vec();
            let old = more.len();
            more.resize(old + PIECE.min((w.end - read) as usize), 0);
            if let Some(file) = &w.file {
                file.read_exact_at(&mut more[old..], read)
                    .unwrap_or_else(|e| gone(w.path, e));
            }
            (bytes, at, cursor, base) = (Cow::Owned(more), 0, rest, base + from as u64);
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
        self.index += self.window.skip_accesses();
        let event = checked(self.window.next()?);
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
        let mut read = Events::read(Path::new("t0.trace"), records.clone(), 0).unwrap();
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
