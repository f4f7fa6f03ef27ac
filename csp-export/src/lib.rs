//! `ilgen-csp`: CSP_M models for the FDR refinement checker, and a checker of its own.
//!
//! Takes a CSP_M [`Script`](ast::Script), built in memory or read from text with [`parse`](fn@parse);
//! gives FDR4-compatible text ([`print`](fn@print)), its type-checked declarations
//! ([`typecheck::check`]), and a [`Verdict`] per assertion with a shortest counterexample: from an
//! explicit-state exploration of CSP's operational semantics ([`check_assertion`],
//! [`check_text`]), or from FDR's own `refines` where it is installed ([`fdr`]). The subset is
//! what ilgen's models need: enumerated datatypes, channels over them, prefixes with `.`/`!`/`?`
//! fields, `[]`, `/\`, `|||`, `[| |]`, `\`, `;`, replicated `[]` and `|||`, sets of values and
//! events, and the assertions `STOP [T= P` (any specification, in fact) and
//! `P :[deadlock free [F]]`.
//!
//! It knows nothing of ilgen's own types: the analyzer translates its reorder model into this
//! crate's syntax tree, and maps counterexamples (event names) back.

pub mod ast;
mod check_error;
pub mod explore;
pub mod fdr;
mod lex;
mod lts;
pub mod parse;
mod parse_error;
pub mod print;
pub mod typecheck;

pub use explore::{check_assertion, CheckError, Limits, Step, Verdict};
pub use parse::{parse, ParseError, Pos};
pub use print::print;
pub use typecheck::{Env, TypeError};

use ast::{Assertion, Item};

/// Why [`check_text`] could not decide a file's assertions.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Parse(ParseError),
    #[error("{at}: {error}")]
    Type { at: Pos, error: TypeError },
    /// `at` is where the assertion starts.
    #[error("{at}: {error}")]
    Check { at: Pos, error: CheckError },
}

/// Parses, type-checks and checks every assertion of a CSP_M file, in file order.
pub fn check_text(text: &str, limits: Limits) -> Result<Vec<(Assertion, Verdict)>, Error> {
    let (script, sources) = parse::parse_located(text).map_err(Error::Parse)?;
    let env = typecheck::check(&script).map_err(|error| Error::Type {
        at: error
            .item
            .map_or(Pos { line: 1, col: 1 }, |i| sources[i].locate(error.name())),
        error,
    })?;
    let mut verdicts = Vec::new();
    for (item, source) in script.items.iter().zip(&sources) {
        if let Item::Assert(a) = item {
            let verdict = check_assertion(&env, a, limits).map_err(|error| Error::Check {
                at: source.start,
                error,
            })?;
            verdicts.push((a.clone(), verdict));
        }
    }
    Ok(verdicts)
}
