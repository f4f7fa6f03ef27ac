//! `ilgen-csp`: CSP_M models for the FDR refinement checker.
//!
//! Takes nothing yet; the syntax tree, printer, FDR runner and checker arrive with the CSP export
//! issue. It knows nothing of ilgen's own types: the analyzer translates its reorder model into
//! this crate's syntax tree.
