//! The error every `ilgen` subcommand returns, and the exit code it maps to.
//!
//! Takes the typed errors of each library crate (trace reading, binary reading, analysis,
//! replaying) and the command's own input errors; gives one message that names the file and says
//! what to do, and an exit code from [`crate::exit`].

use ilgen_analysis::AnalysisError;
use ilgen_binary::BinaryError;
use ilgen_confirm::ConfirmError;
use ilgen_trace::TraceError;

use crate::exit;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A trace could not be read (names the file).
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The recorded executable could not be used (names the file).
    #[error(transparent)]
    Binary(#[from] BinaryError),
    /// A CSP checker could not decide the model.
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    /// A replay could not be run (names the file or process).
    #[error(transparent)]
    Confirm(#[from] ConfirmError),
    /// Any other bad input: the message names the file or flag and what to do.
    #[error("{0}")]
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
