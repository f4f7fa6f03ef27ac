//! The error every `ilgen` subcommand returns, and the exit code it maps to.
//!
//! Takes the typed errors of each library crate (trace reading, binary reading, analysis,
//! replaying) and the command's own input errors; gives one message that names the file and says
//! what to do, and an exit code from [`crate::exit`].

use std::fmt;

use ilgen_analysis::AnalysisError;
use ilgen_binary::BinaryError;
use ilgen_confirm::ConfirmError;
use ilgen_trace::TraceError;

use crate::exit;

#[derive(Debug)]
pub enum CliError {
    /// A trace could not be read (names the file).
    Trace(TraceError),
    /// The recorded executable could not be used (names the file).
    Binary(BinaryError),
    /// A CSP checker could not decide the model.
    Analysis(AnalysisError),
    /// A replay could not be run (names the file or process).
    Confirm(ConfirmError),
    /// Any other bad input: the message names the file or flag and what to do.
    Input(String),
}

impl CliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Trace(_)
            | CliError::Binary(_)
            | CliError::Analysis(_)
            | CliError::Confirm(_)
            | CliError::Input(_) => exit::INPUT_ERROR,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Trace(e) => e.fmt(f),
            CliError::Binary(e) => e.fmt(f),
            CliError::Analysis(e) => e.fmt(f),
            CliError::Confirm(e) => e.fmt(f),
            CliError::Input(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for CliError {}

impl From<TraceError> for CliError {
    fn from(e: TraceError) -> Self {
        CliError::Trace(e)
    }
}

impl From<BinaryError> for CliError {
    fn from(e: BinaryError) -> Self {
        CliError::Binary(e)
    }
}

impl From<AnalysisError> for CliError {
    fn from(e: AnalysisError) -> Self {
        CliError::Analysis(e)
    }
}

impl From<ConfirmError> for CliError {
    fn from(e: ConfirmError) -> Self {
        CliError::Confirm(e)
    }
}
