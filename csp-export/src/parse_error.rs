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

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub pos: Pos,
    pub kind: ParseErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// A character that starts no token of the subset.
    UnexpectedChar(char),
    /// `{-` without its `-}`.
    UnterminatedComment,
    /// `found` (a token, or the end of the input) where `expected` should be.
    Unexpected {
        found: String,
        expected: &'static str,
    },
    /// A declaration that does not start its own line.
    NotOnNewLine { found: String },
    /// `P [| A |] Q [| B |] R`: FDR rejects it too; parenthesise one side.
    NonAssociative,
    /// A property assertion other than `:[deadlock free [F]]`.
    UnsupportedProperty(String),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.pos)?;
        match &self.kind {
            ParseErrorKind::UnexpectedChar(c) => write!(f, "unexpected character {c:?}"),
            ParseErrorKind::UnterminatedComment => write!(f, "`{{-` comment is never closed"),
            ParseErrorKind::Unexpected { found, expected } => {
                write!(f, "expected {expected}, found {found}")
            }
            ParseErrorKind::NotOnNewLine { found } => {
                write!(
                    f,
                    "{found} must start a new line (one declaration per line)"
                )
            }
            ParseErrorKind::NonAssociative => write!(
                f,
                "`[| |]` does not associate: parenthesise one side of the two parallels"
            ),
            ParseErrorKind::UnsupportedProperty(what) => write!(
                f,
                "unsupported property `{what}`: only `:[deadlock free [F]]` is checked"
            ),
        }
    }
}

impl std::error::Error for ParseError {}
