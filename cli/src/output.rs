//! What `ilgen detect` and `ilgen replay` print, and how: the `--format` choice and stdout.
//!
//! Takes a [`Report`] (or any finished text) and the [`Format`]; gives the rendered text on
//! stdout. Also reads the suppressions file both commands apply (`--suppressions FILE`, else
//! `ILGEN_OPTIONS=suppressions=FILE`). Both commands use it, so it sits below them.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use ilgen_report::suppress::Suppressions;
use ilgen_report::Report;

use crate::error::CliError;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    /// SARIF 2.1.0 (confirmed findings; not with --no-replay)
    Sarif,
}

/// Renders `report` in `format`.
pub fn render(report: &Report, format: Format, show_all: bool) -> String {
    match format {
        Format::Text => ilgen_report::text::render(report, show_all),
        Format::Json => ilgen_report::json::render(report),
        Format::Sarif => ilgen_report::sarif::render(report),
    }
}

/// Writes the summary to stdout. A reader that closed the pipe early (`ilgen detect | head`) is
/// no error: the candidates are on disk and the exit code still says whether there are any.
pub fn print_out(text: &str) -> Result<(), CliError> {
    print_with(|out| out.write_all(text.as_bytes()))
}

/// [`print_out`] of what `write` writes, as it writes it (through a buffer).
pub fn print_with(
    write: impl FnOnce(&mut std::io::BufWriter<std::io::StdoutLock>) -> std::io::Result<()>,
) -> Result<(), CliError> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::Input(format!("failed to write the summary: {e}"))),
    }
}

/// The suppressions of `flag` (`--suppressions FILE`), else of `ILGEN_OPTIONS=suppressions=FILE`
/// (split as the runtime splits it: at `:` and white space); `None` when neither names a file.
/// Notes on rules ilgen ignores go to stderr.
pub fn suppressions(flag: Option<&Path>) -> Result<Option<Suppressions>, CliError> {
    let from_env = || {
        let options = std::env::var(ilgen_confirm::run::OPTIONS_VAR).ok()?;
        options
            .split(|c: char| c == ':' || c.is_whitespace())
            .filter_map(|item| item.strip_prefix("suppressions="))
            .next_back()
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let Some(path) = flag.map(Path::to_path_buf).or_else(from_env) else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        CliError::Input(format!(
            "failed to read the suppressions file {}: {e}; pass an existing file to \
             --suppressions (or ILGEN_OPTIONS=suppressions=FILE)",
            path.display()
        ))
    })?;
    let s = Suppressions::parse(&path.display().to_string(), &text)
        .map_err(|e| CliError::Input(e.to_string()))?;
    for note in &s.notes {
        eprintln!("ilgen: {note}");
    }
    Ok(Some(s))
}
