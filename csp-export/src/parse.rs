//! The parser of the CSP_M subset [`print`](fn@crate::print) writes.
//!
//! Takes CSP_M text; gives its [`Script`], or a [`ParseError`] at a line:column. Operator binding
//! follows FDR4's grammar (libcspm), loosest first: replicated operators, `\`, `|||`, `[| |]`
//! (non-associative), `[]`, `/\`, `;`, `->`; the binary ones associate to the left. Comment lines
//! become [`Item::Comment`]s (consecutive lines form one comment, a blank line ends it); comments
//! after code on the same line, inside a definition, and `{- -}` blocks are dropped. Newlines
//! matter only in that every declaration starts on a new line.
//!
//! For every script whose names are identifiers and whose dotted values have two parts or more
//! (what [`crate::typecheck::check`] accepts), `parse(print(s)) == s`.

use crate::ast::{Assertion, Expr, Field, Item, Proc, Script, SetExpr};
use crate::lex::{lex, Tok, Token};
pub use crate::parse_error::{ParseError, ParseErrorKind, Pos};

/// Where an item of the script came from: its first token, and every name in it (type errors
/// about a name point at its first occurrence in the item).
#[derive(Clone, Debug)]
pub(crate) struct ItemSource {
    pub start: Pos,
    pub names: Vec<(String, Pos)>,
}

impl ItemSource {
    /// Where `name` first occurs in the item, or the item's start.
    pub(crate) fn locate(&self, name: Option<&str>) -> Pos {
        name.and_then(|name| self.names.iter().find(|(n, _)| n == name))
            .map_or(self.start, |(_, pos)| *pos)
    }
}

pub fn parse(text: &str) -> Result<Script> {
    parse_located(text).map(|(script, _)| script)
}

/// [`parse`], with where each item came from.
pub(crate) fn parse_located(text: &str) -> Result<(Script, Vec<ItemSource>)> {
    let end = Pos {
        line: 1 + text.matches('\n').count() as u32,
        col: 1 + text.rsplit('\n').next().unwrap_or_default().chars().count() as u32,
    };
    Parser {
        toks: lex(text)?,
        i: 0,
        end,
    }
    .script()
}

// Binding levels of the binary operators, loosest first.
const HIDE: u8 = 1;
const INTERLEAVE: u8 = 2;
const PARALLEL: u8 = 3;
const EXT_CHOICE: u8 = 4;
const INTERRUPT: u8 = 5;
const SEQ: u8 = 6;

fn binary_level(tok: &Tok) -> Option<u8> {
    Some(match tok {
        Tok::Hide => HIDE,
        Tok::Interleave => INTERLEAVE,
        Tok::SyncOpen => PARALLEL,
        Tok::ExtChoice => EXT_CHOICE,
        Tok::Interrupt => INTERRUPT,
        Tok::Seq => SEQ,
        _ => return None,
    })
}

/// Tokens that, after an event's head, say it is a prefix.
fn continues_prefix(tok: Option<&Tok>) -> bool {
    matches!(tok, Some(Tok::Dot | Tok::Bang | Tok::Query | Tok::Arrow))
}

struct Parser {
    toks: Vec<Token>,
    /// Index of the next raw token (comments included).
    i: usize,
    end: Pos,
}

type Result<T> = std::result::Result<T, ParseError>;

impl Parser {
    /// Index of the `n`-th significant (non-comment) token from the cursor.
    fn significant(&self, n: usize) -> Option<usize> {
        (self.i..self.toks.len())
            .filter(|&j| !matches!(self.toks[j].tok, Tok::Comment(_)))
            .nth(n)
    }

    fn peek_nth(&self, n: usize) -> Option<&Tok> {
        self.significant(n).map(|j| &self.toks[j].tok)
    }

    fn peek(&self) -> Option<&Tok> {
        self.peek_nth(0)
    }

    fn bump(&mut self) -> Option<Token> {
        let j = self.significant(0)?;
        self.i = j + 1;
        Some(self.toks[j].clone())
    }

    fn error(&self, expected: &'static str) -> ParseError {
        let (pos, found) = match self.significant(0) {
            Some(j) => (self.toks[j].pos, self.toks[j].tok.describe()),
            None => (self.end, "the end of the input".to_string()),
        };
        ParseError {
            pos,
            kind: ParseErrorKind::Unexpected { found, expected },
        }
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        let here = self.peek() == Some(tok);
        if here {
            self.bump();
        }
        here
    }

    fn expect(&mut self, tok: &Tok, expected: &'static str) -> Result<()> {
        if self.eat(tok) {
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    fn ident(&mut self, expected: &'static str) -> Result<String> {
        match self.peek() {
            Some(Tok::Ident(name)) => {
                let name = name.clone();
                self.bump();
                Ok(name)
            }
            _ => Err(self.error(expected)),
        }
    }

    fn keyword(&mut self, word: &str, expected: &'static str) -> Result<()> {
        match self.peek() {
            Some(Tok::Ident(name)) if name == word => {
                self.bump();
                Ok(())
            }
            _ => Err(self.error(expected)),
        }
    }

    /// `first (sep next)*`
    fn separated<T>(
        &mut self,
        sep: &Tok,
        mut one: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut all = vec![one(self)?];
        while self.eat(sep) {
            all.push(one(self)?);
        }
        Ok(all)
    }

    fn script(mut self) -> Result<(Script, Vec<ItemSource>)> {
        let mut items = Vec::new();
        let mut sources = Vec::new();
        while let Some(token) = self.toks.get(self.i) {
            match &token.tok {
                Tok::Comment(_) if !token.line_start => self.i += 1,
                Tok::Comment(text) => {
                    let start = token.pos;
                    let mut text = text.clone();
                    let mut line = start.line;
                    self.i += 1;
                    while let Some(Token {
                        tok: Tok::Comment(more),
                        pos,
                        line_start: true,
                    }) = self.toks.get(self.i)
                    {
                        if pos.line != line + 1 {
                            break;
                        }
                        text.push('\n');
                        text.push_str(more);
                        line = pos.line;
                        self.i += 1;
                    }
                    items.push(Item::Comment(text));
                    sources.push(ItemSource {
                        start,
                        names: Vec::new(),
                    });
                }
                tok => {
                    if !token.line_start {
                        return Err(ParseError {
                            pos: token.pos,
                            kind: ParseErrorKind::NotOnNewLine {
                                found: tok.describe(),
                            },
                        });
                    }
                    let start = self.i;
                    items.push(self.item()?);
                    let names = self.toks[start..self.i]
                        .iter()
                        .filter_map(|t| match &t.tok {
                            Tok::Ident(name) => Some((name.clone(), t.pos)),
                            _ => None,
                        })
                        .collect();
                    sources.push(ItemSource {
                        start: self.toks[start].pos,
                        names,
                    });
                }
            }
        }
        Ok((Script { items }, sources))
    }

    fn item(&mut self) -> Result<Item> {
        match self.peek() {
            Some(Tok::Channel) => {
                self.bump();
                let names = self.separated(&Tok::Comma, |p| p.ident("a channel name"))?;
                let fields = if self.eat(&Tok::Colon) {
                    self.separated(&Tok::Dot, |p| p.ident("a type name"))?
                } else {
                    Vec::new()
                };
                Ok(Item::Channel { names, fields })
            }
            Some(Tok::Datatype) => {
                self.bump();
                let name = self.ident("the datatype's name")?;
                self.expect(&Tok::Define, "`=`")?;
                let ctors = self.separated(&Tok::Bar, |p| p.ident("a constructor name"))?;
                Ok(Item::Datatype { name, ctors })
            }
            Some(Tok::Assert) => {
                self.bump();
                Ok(Item::Assert(self.assertion()?))
            }
            Some(Tok::Ident(_)) => {
                let name = self.ident("a definition's name")?;
                let params = if self.eat(&Tok::LParen) {
                    let params = self.separated(&Tok::Comma, |p| p.ident("a parameter name"))?;
                    self.expect(&Tok::RParen, "`)`")?;
                    params
                } else {
                    Vec::new()
                };
                self.expect(&Tok::Define, "`=`")?;
                let body = self.proc(0)?;
                Ok(Item::Def { name, params, body })
            }
            _ => Err(self.error("a declaration (channel, datatype, assert or a definition)")),
        }
    }

    fn assertion(&mut self) -> Result<Assertion> {
        let first = self.proc(0)?;
        if self.eat(&Tok::TraceRefines) {
            let imp = self.proc(0)?;
            return Ok(Assertion::TraceRefines { spec: first, imp });
        }
        let Some(open) = self.significant(0).map(|j| self.toks[j].pos) else {
            return Err(self.error("`[T=` or `:[deadlock free [F]]`"));
        };
        self.expect(&Tok::PropOpen, "`[T=` or `:[deadlock free [F]]`")?;
        let unsupported = |what: String| ParseError {
            pos: open,
            kind: ParseErrorKind::UnsupportedProperty(what),
        };
        let word = self.ident("a property")?;
        if word != "deadlock" {
            return Err(unsupported(word));
        }
        self.keyword("free", "`free`")?;
        if self.eat(&Tok::RBracket) {
            return Err(unsupported(
                "deadlock free (FDR's default model [FD])".into(),
            ));
        }
        self.expect(&Tok::LBracket, "`[F]`")?;
        let model = self.ident("a semantic model")?;
        if model != "F" {
            return Err(unsupported(format!("deadlock free [{model}]")));
        }
        self.expect(&Tok::RBracket, "`]`")?;
        self.expect(&Tok::RBracket, "`]`")?;
        Ok(Assertion::DeadlockFree { process: first })
    }

    /// A process whose binary operators all bind at `min` or tighter.
    fn proc(&mut self, min: u8) -> Result<Proc> {
        let mut left = self.operand()?;
        while let Some(level) = self.peek().and_then(binary_level) {
            if level < min {
                break;
            }
            let Some(op) = self.bump() else { break };
            left = match op.tok {
                Tok::Hide => Proc::Hide(Box::new(left), self.set()?),
                Tok::SyncOpen => {
                    let sync = self.set()?;
                    self.expect(&Tok::SyncClose, "`|]`")?;
                    let right = self.proc(level + 1)?;
                    if self.peek() == Some(&Tok::SyncOpen) {
                        let j = self.significant(0).unwrap_or(self.i);
                        return Err(ParseError {
                            pos: self.toks[j].pos,
                            kind: ParseErrorKind::NonAssociative,
                        });
                    }
                    Proc::Parallel {
                        left: Box::new(left),
                        sync,
                        right: Box::new(right),
                    }
                }
                tok => {
                    let right = Box::new(self.proc(level + 1)?);
                    let left = Box::new(left);
                    match tok {
                        Tok::Interleave => Proc::Interleave(left, right),
                        Tok::ExtChoice => Proc::ExtChoice(left, right),
                        Tok::Interrupt => Proc::Interrupt(left, right),
                        _ => Proc::Seq(left, right),
                    }
                }
            };
        }
        Ok(left)
    }

    /// An operand of the binary operators: an atom, a prefix chain, or a replicated operator
    /// (whose body extends as far as it can).
    fn operand(&mut self) -> Result<Proc> {
        if let Some(head) = self.prefix_head()? {
            return self.prefix_chain(head);
        }
        match self.peek() {
            Some(Tok::Stop) => {
                self.bump();
                Ok(Proc::Stop)
            }
            Some(Tok::Skip) => {
                self.bump();
                Ok(Proc::Skip)
            }
            Some(Tok::ExtChoice | Tok::Interleave) => {
                let interleave = self.bump().is_some_and(|t| t.tok == Tok::Interleave);
                let var = self.ident("the replicated operator's variable")?;
                self.expect(&Tok::Colon, "`:`")?;
                let set = self.set()?;
                self.expect(&Tok::At, "`@`")?;
                let body = Box::new(self.proc(0)?);
                Ok(if interleave {
                    Proc::RepInterleave { var, set, body }
                } else {
                    Proc::RepExtChoice { var, set, body }
                })
            }
            Some(Tok::LParen) => {
                self.bump();
                let inner = self.proc(0)?;
                self.expect(&Tok::RParen, "`)`")?;
                Ok(inner)
            }
            Some(Tok::Ident(_)) => {
                let name = self.ident("a process name")?;
                let args = if self.eat(&Tok::LParen) {
                    let args = if self.peek() == Some(&Tok::RParen) {
                        Vec::new()
                    } else {
                        self.separated(&Tok::Comma, Self::dotted)?
                    };
                    self.expect(&Tok::RParen, "`)`")?;
                    args
                } else {
                    Vec::new()
                };
                Ok(Proc::Call { name, args })
            }
            _ => Err(self.error("a process")),
        }
    }

    /// The head of a prefix, if one starts here: a name, or a parenthesised dotted value, that
    /// fields or `->` follow. Consumes nothing when it returns `None`.
    fn prefix_head(&mut self) -> Result<Option<Expr>> {
        match self.peek() {
            Some(Tok::Ident(name)) if continues_prefix(self.peek_nth(1)) => {
                let name = name.clone();
                self.bump();
                Ok(Some(Expr::Name(name)))
            }
            Some(Tok::LParen) => {
                let save = self.i;
                self.bump();
                let head = match self.dotted() {
                    Ok(head) if self.eat(&Tok::RParen) && continues_prefix(self.peek()) => {
                        Some(head)
                    }
                    _ => None,
                };
                if head.is_none() {
                    self.i = save;
                }
                Ok(head)
            }
            _ => Ok(None),
        }
    }

    /// `head fields -> head fields -> ... -> body`, built without recursing per link so that
    /// long threads do not exhaust the stack.
    fn prefix_chain(&mut self, first: Expr) -> Result<Proc> {
        let mut links = Vec::new();
        let mut head = first;
        loop {
            let fields = self.fields()?;
            self.expect(&Tok::Arrow, "`->`")?;
            links.push((head, fields));
            match self.prefix_head()? {
                Some(next) => head = next,
                None => break,
            }
        }
        let mut body = self.operand()?;
        for (event, fields) in links.into_iter().rev() {
            body = Proc::Prefix {
                event,
                fields,
                then: Box::new(body),
            };
        }
        Ok(body)
    }

    fn fields(&mut self) -> Result<Vec<Field>> {
        let mut fields = Vec::new();
        loop {
            let field = match self.peek() {
                Some(Tok::Dot) => {
                    self.bump();
                    Field::Dot(self.atom()?)
                }
                Some(Tok::Bang) => {
                    self.bump();
                    Field::Out(self.atom()?)
                }
                Some(Tok::Query) => {
                    self.bump();
                    let var = self.ident("the input's variable")?;
                    let set = if self.eat(&Tok::Colon) {
                        Some(self.set()?)
                    } else {
                        None
                    };
                    Field::In { var, set }
                }
                _ => return Ok(fields),
            };
            fields.push(field);
        }
    }

    /// A name, or a parenthesised dotted value.
    fn atom(&mut self) -> Result<Expr> {
        if self.eat(&Tok::LParen) {
            let inner = self.dotted()?;
            self.expect(&Tok::RParen, "`)`")?;
            return Ok(inner);
        }
        Ok(Expr::Name(self.ident("a name or a parenthesised value")?))
    }

    /// `atom (. atom)*`: one atom stands for itself.
    fn dotted(&mut self) -> Result<Expr> {
        let mut parts = self.separated(&Tok::Dot, Self::atom)?;
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Expr::Dot(parts)
        })
    }

    fn set(&mut self) -> Result<SetExpr> {
        let Some(token) = self.bump() else {
            return Err(self.error("a set"));
        };
        match token.tok {
            Tok::LBrace => {
                let items = if self.peek() == Some(&Tok::RBrace) {
                    Vec::new()
                } else {
                    self.separated(&Tok::Comma, Self::dotted)?
                };
                self.expect(&Tok::RBrace, "`}`")?;
                Ok(SetExpr::Enum(items))
            }
            Tok::ProdOpen => {
                let items = self.separated(&Tok::Comma, Self::dotted)?;
                self.expect(&Tok::ProdClose, "`|}`")?;
                Ok(SetExpr::Productions(items))
            }
            Tok::Events => Ok(SetExpr::Events),
            Tok::Diff | Tok::Union => {
                self.expect(&Tok::LParen, "`(`")?;
                let a = Box::new(self.set()?);
                self.expect(&Tok::Comma, "`,`")?;
                let b = Box::new(self.set()?);
                self.expect(&Tok::RParen, "`)`")?;
                Ok(if token.tok == Tok::Diff {
                    SetExpr::Diff(a, b)
                } else {
                    SetExpr::Union(a, b)
                })
            }
            Tok::LParen => {
                let inner = self.set()?;
                self.expect(&Tok::RParen, "`)`")?;
                Ok(inner)
            }
            Tok::Ident(name) => Ok(SetExpr::Type(name)),
            _ => {
                self.i -= 1;
                Err(self.error("a set"))
            }
        }
    }
}
