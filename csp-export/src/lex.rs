//! The lexer of the CSP_M subset.
//!
//! Takes source text; gives its tokens, each with the line:column it starts at and whether it is
//! the first token of its line (the parser starts every declaration on a new line, as FDR does).
//! Line comments are tokens too, so the parser can keep the ones that stand on their own lines;
//! block comments `{- -}` (nested, as in FDR) are skipped.

use crate::parse_error::{ParseError, ParseErrorKind, Pos};

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    Ident(String),
    /// `-- text`: the text after the dashes and at most one space.
    Comment(String),
    Channel,
    Datatype,
    Assert,
    Stop,
    Skip,
    Events,
    Diff,
    Union,
    /// `=`
    Define,
    /// `->`
    Arrow,
    /// `[]`
    ExtChoice,
    /// `/\`
    Interrupt,
    /// `|||`
    Interleave,
    /// `[|`
    SyncOpen,
    /// `|]`
    SyncClose,
    /// `\`
    Hide,
    /// `;`
    Seq,
    LParen,
    RParen,
    LBrace,
    RBrace,
    /// `{|`
    ProdOpen,
    /// `|}`
    ProdClose,
    Comma,
    Dot,
    /// `!`
    Bang,
    /// `?`
    Query,
    Colon,
    At,
    /// `|` between a datatype's constructors
    Bar,
    /// `[T=`
    TraceRefines,
    /// `:[` opening a property assertion
    PropOpen,
    LBracket,
    RBracket,
}

impl Tok {
    /// How the token reads in an error message.
    pub(crate) fn describe(&self) -> String {
        let text = match self {
            Tok::Ident(name) => return format!("`{name}`"),
            Tok::Comment(_) => "a comment",
            Tok::Channel => "channel",
            Tok::Datatype => "datatype",
            Tok::Assert => "assert",
            Tok::Stop => "STOP",
            Tok::Skip => "SKIP",
            Tok::Events => "Events",
            Tok::Diff => "diff",
            Tok::Union => "union",
            Tok::Define => "=",
            Tok::Arrow => "->",
            Tok::ExtChoice => "[]",
            Tok::Interrupt => "/\\",
            Tok::Interleave => "|||",
            Tok::SyncOpen => "[|",
            Tok::SyncClose => "|]",
            Tok::Hide => "\\",
            Tok::Seq => ";",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::ProdOpen => "{|",
            Tok::ProdClose => "|}",
            Tok::Comma => ",",
            Tok::Dot => ".",
            Tok::Bang => "!",
            Tok::Query => "?",
            Tok::Colon => ":",
            Tok::At => "@",
            Tok::Bar => "|",
            Tok::TraceRefines => "[T=",
            Tok::PropOpen => ":[",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
        };
        format!("`{text}`")
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub pos: Pos,
    pub line_start: bool,
}

/// Symbols, longest first so that `|||` is not read as `|` `|` `|`.
const SYMBOLS: &[(&str, Tok)] = &[
    ("[T=", Tok::TraceRefines),
    ("|||", Tok::Interleave),
    ("->", Tok::Arrow),
    ("[]", Tok::ExtChoice),
    ("/\\", Tok::Interrupt),
    ("[|", Tok::SyncOpen),
    ("|]", Tok::SyncClose),
    ("{|", Tok::ProdOpen),
    ("|}", Tok::ProdClose),
    (":[", Tok::PropOpen),
    ("=", Tok::Define),
    ("\\", Tok::Hide),
    (";", Tok::Seq),
    ("(", Tok::LParen),
    (")", Tok::RParen),
    ("{", Tok::LBrace),
    ("}", Tok::RBrace),
    (",", Tok::Comma),
    (".", Tok::Dot),
    ("!", Tok::Bang),
    ("?", Tok::Query),
    (":", Tok::Colon),
    ("@", Tok::At),
    ("|", Tok::Bar),
    ("[", Tok::LBracket),
    ("]", Tok::RBracket),
];

fn keyword(word: &str) -> Option<Tok> {
    Some(match word {
        "channel" => Tok::Channel,
        "datatype" => Tok::Datatype,
        "assert" => Tok::Assert,
        "STOP" => Tok::Stop,
        "SKIP" => Tok::Skip,
        "Events" => Tok::Events,
        "diff" => Tok::Diff,
        "union" => Tok::Union,
        _ => return None,
    })
}

pub(crate) fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let mut lexer = Lexer {
        rest: text,
        pos: Pos { line: 1, col: 1 },
        line_has_token: false,
        tokens: Vec::new(),
    };
    lexer.run()?;
    Ok(lexer.tokens)
}

struct Lexer<'a> {
    rest: &'a str,
    pos: Pos,
    line_has_token: bool,
    tokens: Vec<Token>,
}

impl Lexer<'_> {
    fn advance(&mut self, bytes: usize) {
        for c in self.rest[..bytes].chars() {
            if c == '\n' {
                self.pos.line += 1;
                self.pos.col = 1;
                self.line_has_token = false;
            } else {
                self.pos.col += 1;
            }
        }
        self.rest = &self.rest[bytes..];
    }

    fn push(&mut self, tok: Tok, pos: Pos) {
        self.tokens.push(Token {
            tok,
            pos,
            line_start: !self.line_has_token,
        });
        self.line_has_token = true;
    }

    fn run(&mut self) -> Result<(), ParseError> {
        while let Some(c) = self.rest.chars().next() {
            let start = self.pos;
            if c.is_whitespace() {
                self.advance(c.len_utf8());
            } else if let Some(body) = self.rest.strip_prefix("--") {
                let line = body.split('\n').next().unwrap_or_default();
                let text = line.strip_prefix(' ').unwrap_or(line).to_string();
                self.advance(2 + line.len());
                self.push(Tok::Comment(text), start);
            } else if self.rest.starts_with("{-") {
                self.block_comment(start)?;
            } else if c.is_ascii_alphabetic() {
                let len = identifier_len(self.rest);
                let word = &self.rest[..len];
                let tok = keyword(word).unwrap_or_else(|| Tok::Ident(word.to_string()));
                self.advance(len);
                self.push(tok, start);
            } else if let Some((text, tok)) =
                SYMBOLS.iter().find(|(text, _)| self.rest.starts_with(text))
            {
                self.advance(text.len());
                self.push(tok.clone(), start);
            } else {
                return Err(ParseError {
                    pos: start,
                    kind: ParseErrorKind::UnexpectedChar(c),
                });
            }
        }
        Ok(())
    }

    fn block_comment(&mut self, start: Pos) -> Result<(), ParseError> {
        let mut depth = 0usize;
        loop {
            if self.rest.starts_with("{-") {
                depth += 1;
                self.advance(2);
            } else if self.rest.starts_with("-}") {
                depth -= 1;
                self.advance(2);
                if depth == 0 {
                    return Ok(());
                }
            } else if let Some(c) = self.rest.chars().next() {
                self.advance(c.len_utf8());
            } else {
                return Err(ParseError {
                    pos: start,
                    kind: ParseErrorKind::UnterminatedComment,
                });
            }
        }
    }
}

/// Length of the identifier at the start of `text`: CSP_M's letters, digits and underscores,
/// then primes (`P'`).
fn identifier_len(text: &str) -> usize {
    let body = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    body + text[body..]
        .find(|c: char| c != '\'')
        .unwrap_or(text.len() - body)
}

/// Whether `name` lexes as one identifier (and no keyword): the names a printed script may use.
pub(crate) fn is_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && identifier_len(name) == name.len()
        && keyword(name).is_none()
}
