//! The input side file `t<tid>.inputs`: what each read of a stream returned in the recording.
//!
//! Takes the outcomes the runtime records (record mode) or a trace directory's files (the reader,
//! the replaying runtime); gives their bytes and [`ThreadInputs`] decoded and checked. One file per
//! thread that read from a stream socket, a pipe or a FIFO through an instrumented call of
//! [`crate::abi::INPUT_CALLS`]; a thread that read none has no file, and neither has a trace of an
//! ilgen before this file existed: replay then leaves every read to the real descriptor.
//!
//! Only the outcome is kept (the count, or -1 and errno), not the bytes: a replay of a server
//! gets its requests from a new run of the same client, which sends the same bytes; what differs
//! is how they arrive split and when, and that decides which path a reader takes. A peer that
//! sends other bytes is out of scope.
//!
//! Layout, little-endian: a header of [`HEADER_LEN`] bytes (the magic `ILGENIN\0`, the version
//! [`INPUTS_VERSION`], the thread's tid, parent and child index as in its thread file), then one
//! record of [`RECORD_LEN`] bytes per read: the count as i64 (-1 for a failure), the errno as i32
//! (0 unless the count is -1), the descriptor as i32 (for messages). Versions:
//! - 1: first format.

use std::path::Path;

use crate::error::{without_magic, TraceError};
use crate::event::ThreadId;
use crate::file::{read_regular, u32_at, u64_at};

pub const INPUTS_MAGIC: &[u8; 8] = b"ILGENIN\0";
pub const INPUTS_VERSION: u32 = 1;
pub const HEADER_LEN: usize = 24;
pub const RECORD_LEN: usize = 16;

/// Which thread a file belongs to: the identity of its thread file's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputsHeader {
    pub tid: ThreadId,
    pub parent: ThreadId,
    pub child_index: u32,
}

/// What one read of a stream returned in the recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Input {
    /// Bytes read (0: end of stream), or -1.
    pub result: i64,
    /// The errno of a failure, 0 otherwise.
    pub errno: i32,
    pub fd: i32,
}

/// One thread's file, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadInputs {
    pub header: InputsHeader,
    pub inputs: Vec<Input>,
}

/// File name of thread `tid`'s inputs inside a trace directory.
pub fn inputs_file_name(tid: ThreadId) -> String {
    format!("t{tid}.inputs")
}

/// The thread id in an inputs file name `t<tid>.inputs`, `None` for any other name.
pub fn inputs_file_tid(name: &str) -> Option<ThreadId> {
    let digits = name.strip_prefix('t')?.strip_suffix(".inputs")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

pub fn encode_header(h: &InputsHeader) -> [u8; HEADER_LEN] {
    let mut out = [0u8; HEADER_LEN];
    out[..8].copy_from_slice(INPUTS_MAGIC);
    out[8..12].copy_from_slice(&INPUTS_VERSION.to_le_bytes());
    out[12..16].copy_from_slice(&h.tid.to_le_bytes());
    out[16..20].copy_from_slice(&h.parent.to_le_bytes());
    out[20..24].copy_from_slice(&h.child_index.to_le_bytes());
    out
}

pub fn encode(input: &Input) -> [u8; RECORD_LEN] {
    let mut out = [0u8; RECORD_LEN];
    out[..8].copy_from_slice(&input.result.to_le_bytes());
    out[8..12].copy_from_slice(&input.errno.to_le_bytes());
    out[12..16].copy_from_slice(&input.fd.to_le_bytes());
    out
}

/// Decodes the bytes of one inputs file; `path` only names the file in errors.
pub fn decode(path: &Path, bytes: &[u8]) -> Result<ThreadInputs, TraceError> {
    if !bytes.starts_with(INPUTS_MAGIC) {
        return Err(without_magic(
            path,
            "an ilgen inputs file",
            "ILGENIN",
            bytes,
        ));
    }
    if bytes.len() < HEADER_LEN {
        return Err(TraceError::Truncated {
            path: path.into(),
            offset: bytes.len(),
        });
    }
    let version = u32_at(bytes, 8);
    if version != INPUTS_VERSION {
        return Err(TraceError::Version {
            path: path.into(),
            found: version.into(),
            expected: INPUTS_VERSION,
        });
    }
    let header = InputsHeader {
        tid: u32_at(bytes, 12),
        parent: u32_at(bytes, 16),
        child_index: u32_at(bytes, 20),
    };
    let body = &bytes[HEADER_LEN..];
    if body.len() % RECORD_LEN != 0 {
        return Err(TraceError::Truncated {
            path: path.into(),
            offset: bytes.len() - body.len() % RECORD_LEN,
        });
    }
    let mut inputs = Vec::with_capacity(body.len() / RECORD_LEN);
    for (i, r) in body.chunks_exact(RECORD_LEN).enumerate() {
        let input = Input {
            result: u64_at(r, 0) as i64,
            errno: u32_at(r, 8) as i32,
            fd: u32_at(r, 12) as i32,
        };
        let ok = input.fd >= 0
            && match input.result {
                -1 => input.errno > 0,
                n => n >= 0 && input.errno == 0,
            };
        if !ok {
            return Err(TraceError::Corrupt {
                path: path.into(),
                offset: HEADER_LEN + i * RECORD_LEN,
                reason: format!(
                    "read #{i} has count {}, errno {} on descriptor {}, which no read returns",
                    input.result, input.errno, input.fd
                ),
            });
        }
        inputs.push(input);
    }
    Ok(ThreadInputs { header, inputs })
}

/// Every `t<tid>.inputs` file of `dir`, decoded, each named for the thread its header names.
pub fn read_dir(dir: &Path) -> Result<Vec<ThreadInputs>, TraceError> {
    let io = |source| TraceError::Io {
        path: dir.into(),
        source,
    };
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let Some(tid) = entry.file_name().to_str().and_then(inputs_file_tid) else {
            continue;
        };
        let path = entry.path();
        let file = decode(&path, &read_regular(&path)?)?;
        if file.header.tid != tid {
            return Err(TraceError::Inconsistent {
                path,
                reason: format!(
                    "its header says it is thread {}, its name says thread {tid}",
                    file.header.tid
                ),
            });
        }
        all.push(file);
    }
    all.sort_by_key(|f| f.header.tid);
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(inputs: &[Input]) -> Vec<u8> {
        let mut bytes = encode_header(&InputsHeader {
            tid: 3,
            parent: 0,
            child_index: 2,
        })
        .to_vec();
        for i in inputs {
            bytes.extend(encode(i));
        }
        bytes
    }

    #[test]
    fn outcomes_read_back_as_written() {
        let inputs = [
            Input {
                result: 40,
                errno: 0,
                fd: 9,
            },
            Input {
                result: -1,
                errno: libc::EAGAIN,
                fd: 9,
            },
            Input {
                result: 0,
                errno: 0,
                fd: 9,
            },
        ];
        let got = decode(Path::new("t3.inputs"), &file(&inputs)).unwrap();
        assert_eq!(got.header.child_index, 2);
        assert_eq!(got.inputs, inputs);
        assert_eq!(inputs_file_tid("t3.inputs"), Some(3));
        assert_eq!(inputs_file_tid("t3.trace"), None);
    }

    #[test]
    fn a_cut_or_impossible_record_or_foreign_file_is_named() {
        let p = Path::new("t3.inputs");
        let good = file(&[Input {
            result: 5,
            errno: 0,
            fd: 4,
        }]);
        let err = decode(p, &good[..good.len() - 3]).unwrap_err().to_string();
        assert!(err.contains("t3.inputs is truncated at byte 24"), "{err}");
        let bad = file(&[Input {
            result: -7,
            errno: 0,
            fd: 4,
        }]);
        let err = decode(p, &bad).unwrap_err().to_string();
        assert!(
            err.contains("corrupt at byte 24: read #0 has count -7"),
            "{err}"
        );
        let err = decode(p, b"hello").unwrap_err().to_string();
        assert!(err.contains("is not an ilgen inputs file"), "{err}");
        let mut newer = good.clone();
        newer[8] = 9;
        let err = decode(p, &newer).unwrap_err().to_string();
        assert!(err.contains("format version 9"), "{err}");
    }
}
