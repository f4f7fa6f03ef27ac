//! Where and why parsing CSP_M text failed: shared by the lexer and the parser.
//!
//! Takes nothing; gives [`Pos`] (line and column) and [`ParseError`], whose text is
//! `line:col: what was wrong`.

use std::fmt;

/// A line and column, both from 1; columns count characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {kind}")]
pub struct ParseError {
    pub pos: Pos,
    pub kind: ParseErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseErrorKind {
    /// A character that starts no token of the subset.
    #[error("unexpected character {0:?}")]
    UnexpectedChar(char),
    /// `{-` without its `-}`.
    #[error("`{{-` comment is never closed")]
    UnterminatedComment,
    /// `found` (a token, or the end of the input) where `expected` should be.
    #[error("expected {expected}, found {found}")]
    Unexpected {
        found: String,
        expected: &'static str,
    },
    /// A declaration that does not start its own line.
    #[error("{found} must start a new line (one declaration per line)")]
    NotOnNewLine { found: String },
    /// `P [| A |] Q [| B |] R`: FDR rejects it too; parenthesise one side.
    #[error("`[| |]` does not associate: parenthesise one side of the two parallels")]
    NonAssociative,
    /// A property assertion other than `:[deadlock free [F]]`.
    #[error("unsupported property `{0}`: only `:[deadlock free [F]]` is checked")]
    UnsupportedProperty(String),
}
