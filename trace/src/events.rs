//! One thread's events as the reader holds them: its compact records, decoded on every walk.
//!
//! Takes a thread file's records (checked once, as they are read: [`Events::read`]) or events one
//! at a time ([`Events::push`]); gives the events back in program order ([`Events::iter`]) and the
//! thread's sync and heap events, decoded once, with their positions ([`Events::marks`]). An
//! [`Event`] takes 48 bytes and its record about 5: zstd's run of 62 million accesses took 3 GB
//! decoded, its records take 300 MB. The analysis walks the accesses a few times; the checks, the
//! reports and every stage that needs only the sync operations read the marks.

use std::fmt;
use std::path::Path;

use crate::codec::{Encoder, Records, MAX_RECORD};
use crate::error::TraceError;
use crate::event::Event;

/// A thread's events, in program order.
#[derive(Clone, Default)]
pub struct Events {
    records: Vec<u8>,
    len: usize,
    last: Option<Event>,
    /// Where the next record's deltas are taken from.
    encoder: Encoder,
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
            records: bytes,
            len,
            last,
            encoder,
        })
    }

    /// Appends `event`.
    pub fn push(&mut self, event: Event) {
        let mut buf = [0u8; MAX_RECORD];
        let n = self.encoder.event(&event, &mut buf);
        self.records.extend_from_slice(&buf[..n]);
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
    /// on every walk, skipping the accesses, so that a run of 10^8 sync events is never held
    /// decoded.
    pub fn marks(&self) -> Marks<'_> {
        Marks {
            records: Records::new(Path::new(""), &self.records, 0),
            index: 0,
        }
    }

    /// Bytes the records take.
    pub fn record_bytes(&self) -> usize {
        self.records.len()
    }

    /// Every event, decoded as it comes.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            records: Records::new(Path::new(""), &self.records, 0),
        }
    }

    pub fn to_vec(&self) -> Vec<Event> {
        self.iter().collect()
    }
}

/// The events of [`Events::iter`].
#[derive(Clone)]
pub struct Iter<'a> {
    records: Records<'a>,
}

impl Iter<'_> {
    /// The next sync or heap event from here on, found without moving.
    pub fn next_mark(&self) -> Option<Event> {
        let mut ahead = Marks {
            records: self.records.clone(),
            index: 0,
        };
        ahead.next().map(|(_, e)| e)
    }
}

impl Iterator for Iter<'_> {
    type Item = Event;

    #[inline]
    fn next(&mut self) -> Option<Event> {
        // Every record was decoded once when it was read or pushed.
        Some(
            self.records
                .next()?
                .expect("records are checked as they are read"),
        )
    }
}

/// The events of [`Events::marks`].
pub struct Marks<'a> {
    records: Records<'a>,
    /// Index of the next record among all events.
    index: usize,
}

impl Iterator for Marks<'_> {
    type Item = (usize, Event);

    #[inline]
    fn next(&mut self) -> Option<(usize, Event)> {
        while self.records.skip_access() {
            self.index += 1;
        }
        let event = self
            .records
            .next()?
            .expect("records are checked as they are read");
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
        let mut read = Events::read(Path::new("t0.trace"), events.records.clone(), 0).unwrap();
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
