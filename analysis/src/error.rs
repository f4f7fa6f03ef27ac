//! Why the analysis of a run stopped without candidates.
//!
//! Takes nothing; gives [`AnalysisError`], printed as one lowercase line that names the file
//! involved (a CSP script written for a checker) where there is one.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    /// A CSP checker (`--solver check` or `fdr`) could not decide the model: its script could not
    /// be written, did not type-check, or the checker failed; the message says which.
    #[error("{0}")]
    Checker(String),
}
