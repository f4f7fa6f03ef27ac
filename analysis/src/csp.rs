//! The CSP_M back end of the reorder model: export for FDR, and solving through a CSP checker.
//!
//! Takes the prepared program of `ilgen detect`; gives CSP_M scripts ([`translate`]), findings
//! from a checker's counterexamples ([`counterexample`], [`solve`]: ilgen's own checker of the
//! `ilgen-csp` crate, or FDR's `refines` where it is installed), and the `ilgen export-csp`
//! command ([`export`]). The native solver ([`crate::detect::solve`]) stays the default; this back
//! end is the paper's pipeline, kept so that its verdicts can be compared with the native ones.

pub mod counterexample;
pub mod export;
pub mod solve;
#[cfg(test)]
mod tests;
pub mod translate;
