//! `ilgen dump`: a recorded trace as text, one event per line.
//!
//! Takes a trace directory (or, without one, the newest run under `./ilgen-out/`) and, when it is
//! still there and unchanged, the recorded executable; gives the text of
//! [`ilgen_report::dump`] on stdout. Also where the other commands find and open a trace
//! directory ([`trace_dir`], [`open_trace`], [`newest_trace`]).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use ilgen_binary::Binary;
use ilgen_report::dump::write_dump;
use ilgen_trace::TraceDir;

use crate::error::CliError;

/// Default parent of trace directories, as the runtime names them (`<binary>-<pid>`).
pub const DEFAULT_OUT: &str = "ilgen-out";

/// Runs `ilgen dump [dir]`, writing to stdout and warnings to stderr.
pub fn run(dir: Option<&Path>) -> Result<(), CliError> {
    let dir = trace_dir(dir)?;
    let trace = open_trace(&dir, "record a shorter run")?;
    let binary = Binary::load_or_warn(
        &trace.meta,
        "sites are shown as ids and objects as addresses",
    );
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match write_dump(&mut out, &trace, binary.as_ref()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        // `ilgen dump | head` closes the pipe early: that is not an error of the trace.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::Input(format!("failed to write the dump: {e}"))),
    }
}

/// The trace directory a command was given, or the newest under [`DEFAULT_OUT`].
pub fn trace_dir(given: Option<&Path>) -> Result<PathBuf, CliError> {
    match given {
        Some(d) => Ok(d.to_path_buf()),
        None => newest_trace(Path::new(DEFAULT_OUT)),
    }
}

/// Reads and checks the trace in `dir`, printing the one-line warning of a truncated trace. From
/// here on, running out of memory is exit 2 with a message naming `dir` and the command's
/// `advice` (what to lower).
pub fn open_trace(dir: &Path, advice: &str) -> Result<TraceDir, CliError> {
    ilgen_trace::memory::on_exhaustion(
        &format!(
            "ilgen: error: out of memory while analysing {}; {advice}",
            dir.display()
        ),
        crate::exit::INPUT_ERROR,
    );
    let trace = TraceDir::open(dir)?;
    if let Some(warning) = trace.warning() {
        eprintln!("ilgen: {warning}");
    }
    for w in ilgen_trace::format::incomplete(&trace.threads) {
        eprintln!("ilgen: warning: {w}");
    }
    Ok(trace)
}

/// The most recently modified directory under `out`.
pub fn newest_trace(out: &Path) -> Result<PathBuf, CliError> {
    let none = || {
        CliError::Input(format!(
            "no trace directory given and none found under {}; run a program built with \
             `ilgen cc`, or pass the trace directory",
            out.display()
        ))
    };
    let entries = fs::read_dir(out).map_err(|_| none())?;
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let md = e.metadata().ok()?;
            md.is_dir().then(|| (md.modified().ok(), e.path()))
        })
        // Ties (coarse timestamps) go to the greatest name, so the choice is deterministic.
        .max()
        .map(|(_, p)| p)
        .ok_or_else(none)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_default_directory_is_a_clear_error() {
        let err = newest_trace(Path::new("/nonexistent/ilgen-out")).unwrap_err();
        assert!(err.to_string().contains("ilgen cc"), "{err}");
    }
}
