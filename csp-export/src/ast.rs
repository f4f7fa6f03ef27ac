//! The CSP_M syntax tree of the subset ilgen emits.
//!
//! Takes nothing; gives the types a [`Script`] is built from. The printer writes them as
//! FDR4-compatible text, the parser reads that text back, and the checker explores them.
//! Names are plain strings: this crate knows nothing of the program the model came from.

/// A CSP_M file: declarations, definitions and assertions in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// `-- text`, one line per line of `text`.
    Comment(String),
    /// `datatype Name = a | b | c`
    Datatype {
        name: String,
        ctors: Vec<String>,
    },
    /// `channel a, b : T1.T2`; no fields is a plain event (`channel race`).
    Channel {
        names: Vec<String>,
        fields: Vec<String>,
    },
    /// `NAME = body` or `NAME(p, q) = body`.
    Def {
        name: String,
        params: Vec<String>,
        body: Proc,
    },
    Assert(Assertion),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Assertion {
    /// `assert spec [T= imp`
    TraceRefines { spec: Proc, imp: Proc },
    /// `assert process :[deadlock free [F]]`
    DeadlockFree { process: Proc },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    pub items: Vec<Item>,
}

impl Script {
    /// The script's assertions in file order: the order FDR checks and reports them in.
    pub fn assertions(&self) -> impl Iterator<Item = &Assertion> {
        self.items.iter().filter_map(|item| match item {
            Item::Assert(a) => Some(a),
            _ => None,
        })
    }
}

/// A process expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proc {
    Stop,
    Skip,
    /// `NAME` or `NAME(a, b)`.
    Call {
        name: String,
        args: Vec<Expr>,
    },
    /// `event fields -> then`: `event` is a channel name, or a variable bound to a whole event
    /// (`[] x : S @ x -> P`).
    Prefix {
        event: Expr,
        fields: Vec<Field>,
        then: Box<Proc>,
    },
    /// `P [] Q`
    ExtChoice(Box<Proc>, Box<Proc>),
    /// `[] x : set @ body`
    RepExtChoice {
        var: String,
        set: SetExpr,
        body: Box<Proc>,
    },
    /// `P /\ Q`
    Interrupt(Box<Proc>, Box<Proc>),
    /// `P ||| Q`
    Interleave(Box<Proc>, Box<Proc>),
    /// `||| x : set @ body`
    RepInterleave {
        var: String,
        set: SetExpr,
        body: Box<Proc>,
    },
    /// `P [| sync |] Q`
    Parallel {
        left: Box<Proc>,
        sync: SetExpr,
        right: Box<Proc>,
    },
    /// `P \ set`
    Hide(Box<Proc>, SetExpr),
    /// `P ; Q`
    Seq(Box<Proc>, Box<Proc>),
}

/// One field of a prefix's event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Field {
    /// `.e`
    Dot(Expr),
    /// `!e`
    Out(Expr),
    /// `?x` or `?x : set`
    In { var: String, set: Option<SetExpr> },
}

/// A value: a datatype constructor, a channel, a bound variable, or values joined by dots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    Name(String),
    /// `a.b.c`
    Dot(Vec<Expr>),
}

/// A set of values or of events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetExpr {
    /// `{a, b.c}`
    Enum(Vec<Expr>),
    /// `{| lock, unlock |}`: every event of those channels (or of those channel prefixes).
    Productions(Vec<Expr>),
    /// A datatype's name: all its constructors.
    Type(String),
    /// `Events`: every event of every declared channel.
    Events,
    /// `diff(a, b)`
    Diff(Box<SetExpr>, Box<SetExpr>),
    /// `union(a, b)`
    Union(Box<SetExpr>, Box<SetExpr>),
}
