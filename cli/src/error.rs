//! The error every `ilgen` subcommand returns, and the exit code it maps to.
//!
//! Takes the library errors of each stage (trace reading, binary reading, tool launching); gives
//! one message that names the file and says what to do, and an exit code from [`crate::exit`].

use std::fmt;

use ilgen_trace::TraceError;

use crate::exit;

#[derive(Debug)]
pub enum CliError {
    /// A trace could not be read (names the file).
    Trace(TraceError),
    /// Any other bad input: the message names the file or flag and what to do.
    Input(String),
}

impl CliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Trace(_) | CliError::Input(_) => exit::INPUT_ERROR,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Trace(e) => e.fmt(f),
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
