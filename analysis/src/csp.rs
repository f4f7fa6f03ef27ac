//! The CSP_M back end of the reorder model: the paper's pipeline beside the native solver.
//!
//! Takes the prepared program; gives CSP_M scripts ([`translate`], which `ilgen export-csp` writes
//! for FDR), and findings from a checker's counterexamples ([`counterexample`], [`solve`]: ilgen's
//! own checker of the `ilgen-csp` crate, or FDR's `refines` where it is installed). The native
//! solver ([`crate::solve`]) stays the default; this back end is kept so that its verdicts can be
//! compared with the native ones.

pub mod counterexample;
pub mod solve;
#[cfg(test)]
mod tests;
pub mod translate;
