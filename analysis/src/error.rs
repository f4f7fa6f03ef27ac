//! Why the analysis of a run stopped without candidates.
//!
//! Takes nothing; gives [`AnalysisError`], printed as one lowercase line that names the file
//! involved (a CSP script written for a checker) where there is one.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnalysisError {
    /// A CSP checker (`--solver check` or `fdr`) could not decide the model: its script could not
    /// be written, did not type-check, or the checker failed; the message says which.
    Checker(String),
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalysisError::Checker(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for AnalysisError {}
