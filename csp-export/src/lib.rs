//! `ilgen-csp`: CSP_M models for the FDR refinement checker.
//!
//! Takes nothing yet but its syntax tree ([`ast`]): the printer, parser, checker and FDR runner
//! build on it. It knows nothing of ilgen's own types: the analyzer translates its reorder model
//! into this crate's syntax tree.

pub mod ast;
