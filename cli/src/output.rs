//! What `ilgen detect` and `ilgen replay` print, and how: the `--format` choice and stdout.
//!
//! Takes a [`Report`] (or any finished text) and the [`Format`]; gives the rendered text on
//! stdout. Both commands use it, so it sits below them.

use std::io::Write as _;

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
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::Input(format!("failed to write the summary: {e}"))),
    }
}
