//! The type checker.
//!
//! Takes a [`Script`]; gives the [`Env`] the checker explores (its datatypes, channels and process
//! definitions, every name resolved), or the first [`TypeError`]. It checks what FDR's type checker
//! would reject in this subset: names that are no identifiers or are declared twice, undeclared
//! datatypes, channels, constructors and processes, calls with the wrong number of arguments,
//! prefixes whose fields do not match their channel's declaration in number or type, sets that
//! mix events with data or are not sets of events where events are synchronised on or hidden,
//! and bound variables that hide a declared name (CSP_M would read a constructor there as a
//! pattern, not a binding). A parameter's type is that of the arguments it is called with; all
//! calls must agree.

use std::collections::HashMap;

use crate::ast::{Assertion, Expr, Field, Item, Proc, Script, SetExpr};
use crate::lex::is_identifier;
use crate::print::expr_text;

/// `datatype name = ctors`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datatype {
    pub name: String,
    pub ctors: Vec<String>,
}

/// One channel of a `channel` declaration, with the datatype of each field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Channel {
    pub name: String,
    pub fields: Vec<String>,
}

/// `name(params) = body`, borrowed from the script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Definition<'s> {
    pub name: &'s str,
    pub params: &'s [String],
    pub body: &'s Proc,
}

/// What a declared name stands for (the index is into the [`Env`]'s lists).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decl {
    Datatype(usize),
    /// A constructor of the datatype.
    Ctor(usize),
    Channel(usize),
    Def(usize),
}

/// A type-checked script's declarations.
#[derive(Clone, Debug, Default)]
pub struct Env<'s> {
    datatypes: Vec<Datatype>,
    channels: Vec<Channel>,
    definitions: Vec<Definition<'s>>,
    names: HashMap<String, Decl>,
    /// Per channel, the datatype of each field.
    field_types: Vec<Vec<usize>>,
    /// Per definition and parameter, the type its calls give it (`None`: never called).
    param_types: Vec<Vec<Option<Ty>>>,
}

impl<'s> Env<'s> {
    pub fn datatypes(&self) -> &[Datatype] {
        &self.datatypes
    }

    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    pub fn definitions(&self) -> &[Definition<'s>] {
        &self.definitions
    }

    pub(crate) fn decl(&self, name: &str) -> Option<Decl> {
        self.names.get(name).copied()
    }

    /// The datatype of each field of channel `c`.
    pub(crate) fn field_types(&self, c: usize) -> &[usize] {
        &self.field_types[c]
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{kind}", within.as_ref().map(|w| format!("in `{w}`: ")).unwrap_or_default())]
pub struct TypeError {
    /// The index in the script's items of the offending item (`None` for an assertion checked
    /// on its own by [`crate::check_assertion`]).
    pub item: Option<usize>,
    /// The definition the error is in, if any.
    pub within: Option<String>,
    pub kind: Box<TypeErrorKind>,
}

impl TypeError {
    /// The name the error is about, to point at in the source.
    pub fn name(&self) -> Option<&str> {
        match &*self.kind {
            TypeErrorKind::InvalidName { name, .. }
            | TypeErrorKind::Duplicate { name }
            | TypeErrorKind::UndeclaredType { name }
            | TypeErrorKind::Undeclared { name }
            | TypeErrorKind::NotAValue { name, .. }
            | TypeErrorKind::UndefinedProcess { name }
            | TypeErrorKind::ProcessArity { name, .. }
            | TypeErrorKind::Shadows { name }
            | TypeErrorKind::FieldArity { channel: name, .. }
            | TypeErrorKind::FieldType { channel: name, .. }
            | TypeErrorKind::ParamTypeConflict { process: name, .. } => Some(name),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TypeErrorKind {
    /// Not a CSP_M identifier, or a keyword.
    #[error(
        "`{name}` is no valid {what} name (a letter, then letters, digits or `_`; no keyword)"
    )]
    InvalidName { name: String, what: &'static str },
    #[error("`{name}` is declared twice")]
    Duplicate { name: String },
    /// A channel with no names or a datatype with no constructors.
    #[error("a {what} that declares nothing")]
    EmptyDeclaration { what: &'static str },
    #[error("`{name}` is not a declared datatype")]
    UndeclaredType { name: String },
    /// No constructor, channel or variable has this name.
    #[error("`{name}` is not declared: no constructor, channel or variable has that name")]
    Undeclared { name: String },
    /// A process or datatype name where a value belongs.
    #[error("`{name}` is a {is}, not a value")]
    NotAValue { name: String, is: &'static str },
    #[error("`{name}` is not a defined process")]
    UndefinedProcess { name: String },
    #[error("`{name}` takes {expected} argument(s), the call gives {found}")]
    ProcessArity {
        name: String,
        expected: usize,
        found: usize,
    },
    /// A bound variable or parameter with the name of a constructor, channel or process.
    #[error("the variable `{name}` has the name of a declared constructor, channel or process; rename it")]
    Shadows { name: String },
    /// `Expr::Dot` with fewer than two parts.
    #[error("a dotted value needs two parts or more")]
    DegenerateDot,
    /// A prefix whose head is no channel (nor a variable holding an event).
    #[error("`{value}` is not a channel, so it cannot start an event")]
    NotAChannel { value: String },
    #[error("channel `{channel}` carries {expected} field(s), this event gives {found}")]
    FieldArity {
        channel: String,
        expected: usize,
        found: usize,
    },
    #[error("field {field} of channel `{channel}` is a {expected}, but gets a {found}")]
    FieldType {
        channel: String,
        /// From 1.
        field: usize,
        expected: String,
        found: String,
    },
    /// A channel or an event where a field's data value belongs.
    #[error("`{value}` is a channel or an event, not a field's value")]
    EventAsData { value: String },
    /// Fields after a value that is already a complete event.
    #[error("`{value}` is a complete event: no field can follow it")]
    CompleteEventExtended { value: String },
    /// A set of data where a set of events belongs (synchronisation, hiding).
    #[error("a set of events is needed here, this is a set of {found}")]
    NotAnEventSet { found: String },
    /// An input's restricting set of another type than the field.
    #[error("the input ranges over {expected}, but its set holds {found}")]
    SetOfWrongType { expected: String, found: String },
    /// A set whose elements have different types.
    #[error("a set cannot hold both {first} and {second}")]
    MixedSet { first: String, second: String },
    #[error("parameter `{param}` of `{process}` is given a {first} by one call and a {second} by another")]
    ParamTypeConflict {
        process: String,
        param: String,
        first: String,
        second: String,
    },
}

/// One component of a dotted value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Atom {
    /// A constructor of the datatype.
    Data(usize),
    Channel(usize),
}

/// The static type of a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    /// Not known statically: it depends on a parameter that no call gives a type.
    Unknown,
    /// A complete event.
    Event,
    /// A channel with some (not all) of its fields, or a dotted value of data.
    Parts(Vec<Atom>),
}

/// CSP_M words (FDR's keywords and built-in types) that no name of the script may take.
pub const RESERVED: &[&str] = &[
    "if",
    "then",
    "else",
    "let",
    "within",
    "not",
    "and",
    "or",
    "true",
    "false",
    "external",
    "transparent",
    "nametype",
    "subtype",
    "module",
    "exports",
    "endmodule",
    "include",
    "Int",
    "Bool",
    "Char",
    "Proc",
    "Set",
    "Seq",
];

/// Names FDR predefines (processes, sets, functions, assertion words): a script may shadow some of
/// them, but a generated name should not, so that the text reads as FDR reads it.
pub const BUILTINS: &[&str] = &[
    "channel",
    "datatype",
    "assert",
    "STOP",
    "SKIP",
    "CHAOS",
    "Events",
    "diff",
    "union",
    "inter",
    "member",
    "card",
    "empty",
    "set",
    "seq",
    "length",
    "null",
    "head",
    "tail",
    "concat",
    "elem",
    "deadlock",
    "free",
    "divergence",
    "deterministic",
];

/// Whether a generated name would clash with a CSP_M keyword or one of FDR's built-in names.
pub fn is_taken_by_csp(name: &str) -> bool {
    RESERVED.contains(&name) || BUILTINS.contains(&name)
}

fn valid_name(name: &str, what: &'static str) -> Result<(), TypeErrorKind> {
    if is_identifier(name) && !RESERVED.contains(&name) {
        Ok(())
    } else {
        Err(TypeErrorKind::InvalidName {
            name: name.to_string(),
            what,
        })
    }
}

/// Turns an error's kind into the error, at item `item` of the script.
fn at(item: usize, within: Option<&str>) -> impl Fn(TypeErrorKind) -> TypeError {
    let within = within.map(str::to_string);
    move |kind| TypeError {
        item: Some(item),
        within: within.clone(),
        kind: Box::new(kind),
    }
}

pub fn check(script: &Script) -> Result<Env<'_>, TypeError> {
    let mut env = Env::default();
    // The item each definition and channel came from, for errors.
    let mut def_items = Vec::new();
    let mut channel_items = Vec::new();
    for (i, item) in script.items.iter().enumerate() {
        let declare = |env: &mut Env, name: &str, what, decl| {
            valid_name(name, what).map_err(at(i, None))?;
            if env.names.insert(name.to_string(), decl).is_some() {
                return Err(at(i, None)(TypeErrorKind::Duplicate {
                    name: name.to_string(),
                }));
            }
            Ok(())
        };
        match item {
            Item::Comment(_) | Item::Assert(_) => {}
            Item::Datatype { name, ctors } => {
                let index = env.datatypes.len();
                declare(&mut env, name, "datatype", Decl::Datatype(index))?;
                if ctors.is_empty() {
                    return Err(at(i, None)(TypeErrorKind::EmptyDeclaration {
                        what: "datatype",
                    }));
                }
                for ctor in ctors {
                    declare(&mut env, ctor, "constructor", Decl::Ctor(index))?;
                }
                env.datatypes.push(Datatype {
                    name: name.clone(),
                    ctors: ctors.clone(),
                });
            }
            Item::Channel { names, fields } => {
                if names.is_empty() {
                    return Err(at(i, None)(TypeErrorKind::EmptyDeclaration {
                        what: "channel declaration",
                    }));
                }
                for name in names {
                    let index = env.channels.len();
                    declare(&mut env, name, "channel", Decl::Channel(index))?;
                    env.channels.push(Channel {
                        name: name.clone(),
                        fields: fields.clone(),
                    });
                    channel_items.push(i);
                }
            }
            Item::Def { name, params, body } => {
                let index = env.definitions.len();
                declare(&mut env, name, "process", Decl::Def(index))?;
                env.definitions.push(Definition { name, params, body });
                def_items.push(i);
            }
        }
    }
    for (c, channel) in env.channels.iter().enumerate() {
        let types = channel
            .fields
            .iter()
            .map(|field| match env.names.get(field) {
                Some(Decl::Datatype(d)) => Ok(*d),
                _ => Err(at(channel_items[c], None)(TypeErrorKind::UndeclaredType {
                    name: field.clone(),
                })),
            })
            .collect::<Result<Vec<_>, _>>()?;
        env.field_types.push(types);
    }
    for (d, def) in env.definitions.iter().enumerate() {
        let err = at(def_items[d], Some(def.name));
        for (k, param) in def.params.iter().enumerate() {
            valid_name(param, "parameter").map_err(&err)?;
            if env.names.contains_key(param) {
                return Err(err(TypeErrorKind::Shadows {
                    name: param.clone(),
                }));
            }
            if def.params[..k].contains(param) {
                return Err(err(TypeErrorKind::Duplicate {
                    name: param.clone(),
                }));
            }
        }
    }
    let mut param_types: Vec<Vec<Option<Ty>>> = env
        .definitions
        .iter()
        .map(|d| vec![None; d.params.len()])
        .collect();
    // Parameter types come from calls, which may come later in the script: check until no call
    // teaches anything new. Each round fixes at least one parameter, so this ends.
    loop {
        let mut checker = Checker {
            env: &env,
            param_types: &mut param_types,
            changed: false,
        };
        for (d, def) in env.definitions.iter().enumerate() {
            let mut scope: Vec<(String, Ty)> = def
                .params
                .iter()
                .zip(&checker.param_types[d])
                .map(|(p, t)| (p.clone(), t.clone().unwrap_or(Ty::Unknown)))
                .collect();
            checker
                .proc(def.body, &mut scope)
                .map_err(at(def_items[d], Some(def.name)))?;
        }
        for (i, item) in script.items.iter().enumerate() {
            if let Item::Assert(a) = item {
                checker.assertion(a).map_err(at(i, None))?;
            }
        }
        if !checker.changed {
            break;
        }
    }
    env.param_types = param_types;
    Ok(env)
}

/// Checks an assertion against an environment it did not come with.
pub(crate) fn check_assertion(env: &Env, a: &Assertion) -> Result<(), TypeError> {
    let mut param_types = env.param_types.clone();
    Checker {
        env,
        param_types: &mut param_types,
        changed: false,
    }
    .assertion(a)
    .map_err(|kind| TypeError {
        item: None,
        within: None,
        kind: Box::new(kind),
    })
}

struct Checker<'a> {
    env: &'a Env<'a>,
    param_types: &'a mut Vec<Vec<Option<Ty>>>,
    /// Whether a call gave a parameter its first type.
    changed: bool,
}

type Checked<T> = Result<T, TypeErrorKind>;

impl Checker<'_> {
    fn ty_text(&self, ty: &Ty) -> String {
        match ty {
            Ty::Unknown => "value of unknown type".into(),
            Ty::Event => "event".into(),
            Ty::Parts(atoms) => atoms
                .iter()
                .map(|a| match a {
                    Atom::Data(d) => self.env.datatypes[*d].name.as_str(),
                    Atom::Channel(c) => self.env.channels[*c].name.as_str(),
                })
                .collect::<Vec<_>>()
                .join("."),
        }
    }

    /// `Parts` that fill all of their channel's fields are an `Event`.
    fn complete(&self, atoms: Vec<Atom>) -> Ty {
        match atoms[0] {
            Atom::Channel(c) if atoms.len() - 1 == self.env.field_types(c).len() => Ty::Event,
            _ => Ty::Parts(atoms),
        }
    }

    fn assertion(&mut self, a: &Assertion) -> Checked<()> {
        let mut scope = Vec::new();
        match a {
            Assertion::TraceRefines { spec, imp } => {
                self.proc(spec, &mut scope)?;
                self.proc(imp, &mut scope)
            }
            Assertion::DeadlockFree { process } => self.proc(process, &mut scope),
        }
    }

    fn bind(&self, name: &str, ty: Ty, scope: &mut Vec<(String, Ty)>) -> Checked<()> {
        valid_name(name, "variable")?;
        if self.env.names.contains_key(name) {
            return Err(TypeErrorKind::Shadows {
                name: name.to_string(),
            });
        }
        scope.push((name.to_string(), ty));
        Ok(())
    }

    fn expr(&self, e: &Expr, scope: &[(String, Ty)]) -> Checked<Ty> {
        match e {
            Expr::Name(name) => {
                if let Some((_, ty)) = scope.iter().rev().find(|(n, _)| n == name) {
                    return Ok(ty.clone());
                }
                match self.env.decl(name) {
                    Some(Decl::Ctor(d)) => Ok(Ty::Parts(vec![Atom::Data(d)])),
                    Some(Decl::Channel(c)) => Ok(self.complete(vec![Atom::Channel(c)])),
                    Some(Decl::Def(_)) => Err(TypeErrorKind::NotAValue {
                        name: name.clone(),
                        is: "process",
                    }),
                    Some(Decl::Datatype(_)) => Err(TypeErrorKind::NotAValue {
                        name: name.clone(),
                        is: "datatype",
                    }),
                    None => Err(TypeErrorKind::Undeclared { name: name.clone() }),
                }
            }
            Expr::Dot(parts) => {
                if parts.len() < 2 {
                    return Err(TypeErrorKind::DegenerateDot);
                }
                let mut atoms = Vec::new();
                let mut unknown = false;
                for (i, part) in parts.iter().enumerate() {
                    match self.expr(part, scope)? {
                        Ty::Unknown => unknown = true,
                        Ty::Event if i == 0 => {
                            return Err(TypeErrorKind::CompleteEventExtended {
                                value: expr_text(part),
                            })
                        }
                        Ty::Parts(more) if i == 0 || matches!(more[0], Atom::Data(_)) => {
                            atoms.extend(more)
                        }
                        Ty::Event | Ty::Parts(_) => {
                            return Err(TypeErrorKind::EventAsData {
                                value: expr_text(part),
                            })
                        }
                    }
                }
                if unknown {
                    return Ok(Ty::Unknown);
                }
                if let Atom::Channel(c) = atoms[0] {
                    self.fields_fit(c, 0, &atoms[1..])?;
                }
                Ok(self.complete(atoms))
            }
        }
    }

    /// Checks that `atoms` fit channel `c`'s fields from field index `from` on.
    fn fields_fit(&self, c: usize, from: usize, atoms: &[Atom]) -> Checked<()> {
        let types = self.env.field_types(c);
        let channel = &self.env.channels[c].name;
        if from + atoms.len() > types.len() {
            return Err(TypeErrorKind::FieldArity {
                channel: channel.clone(),
                expected: types.len(),
                found: from + atoms.len(),
            });
        }
        for (k, atom) in atoms.iter().enumerate() {
            let expected = types[from + k];
            if *atom != Atom::Data(expected) {
                return Err(TypeErrorKind::FieldType {
                    channel: channel.clone(),
                    field: from + k + 1,
                    expected: self.env.datatypes[expected].name.clone(),
                    found: self.ty_text(&Ty::Parts(vec![*atom])),
                });
            }
        }
        Ok(())
    }

    fn proc(&mut self, p: &Proc, scope: &mut Vec<(String, Ty)>) -> Checked<()> {
        match p {
            Proc::Stop | Proc::Skip => Ok(()),
            Proc::Call { name, args } => {
                let Some(Decl::Def(d)) = self.env.decl(name) else {
                    return Err(TypeErrorKind::UndefinedProcess { name: name.clone() });
                };
                let def = self.env.definitions[d];
                if def.params.len() != args.len() {
                    return Err(TypeErrorKind::ProcessArity {
                        name: name.clone(),
                        expected: def.params.len(),
                        found: args.len(),
                    });
                }
                for (k, arg) in args.iter().enumerate() {
                    let ty = self.expr(arg, scope)?;
                    match &self.param_types[d][k] {
                        _ if ty == Ty::Unknown => {}
                        None => {
                            self.param_types[d][k] = Some(ty);
                            self.changed = true;
                        }
                        Some(known) if *known == ty => {}
                        Some(known) => {
                            return Err(TypeErrorKind::ParamTypeConflict {
                                process: name.clone(),
                                param: def.params[k].clone(),
                                first: self.ty_text(known),
                                second: self.ty_text(&ty),
                            })
                        }
                    }
                }
                Ok(())
            }
            Proc::Prefix { .. } => {
                // Walked in a loop: thread processes are long chains.
                let base = scope.len();
                let mut link = p;
                while let Proc::Prefix {
                    event,
                    fields,
                    then,
                } = link
                {
                    self.prefix(event, fields, scope)?;
                    link = then;
                }
                self.proc(link, scope)?;
                scope.truncate(base);
                Ok(())
            }
            Proc::ExtChoice(l, r)
            | Proc::Interrupt(l, r)
            | Proc::Interleave(l, r)
            | Proc::Seq(l, r) => {
                self.proc(l, scope)?;
                self.proc(r, scope)
            }
            Proc::RepExtChoice { var, set, body } | Proc::RepInterleave { var, set, body } => {
                let ty = self.set(set, scope)?;
                self.bind(var, ty, scope)?;
                self.proc(body, scope)?;
                scope.pop();
                Ok(())
            }
            Proc::Parallel { left, sync, right } => {
                self.proc(left, scope)?;
                self.event_set(sync, scope)?;
                self.proc(right, scope)
            }
            Proc::Hide(inner, set) => {
                self.proc(inner, scope)?;
                self.event_set(set, scope)
            }
        }
    }

    /// One link of a prefix chain; binds its inputs in `scope`.
    fn prefix(
        &mut self,
        event: &Expr,
        fields: &[Field],
        scope: &mut Vec<(String, Ty)>,
    ) -> Checked<()> {
        // The channel and how many of its fields are known so far; `None` once a value of
        // unknown type makes the count unknown.
        let mut at = match self.expr(event, scope)? {
            Ty::Unknown => None,
            Ty::Event => {
                if fields.is_empty() {
                    None
                } else {
                    return Err(TypeErrorKind::CompleteEventExtended {
                        value: expr_text(event),
                    });
                }
            }
            Ty::Parts(atoms) => match atoms[0] {
                Atom::Channel(c) => Some((c, atoms.len() - 1)),
                Atom::Data(_) => {
                    return Err(TypeErrorKind::NotAChannel {
                        value: expr_text(event),
                    })
                }
            },
        };
        for field in fields {
            match field {
                Field::Dot(e) | Field::Out(e) => match self.expr(e, scope)? {
                    Ty::Unknown => at = None,
                    Ty::Parts(atoms) if matches!(atoms[0], Atom::Data(_)) => {
                        if let Some((c, known)) = &mut at {
                            self.fields_fit(*c, *known, &atoms)?;
                            *known += atoms.len();
                        }
                    }
                    Ty::Event | Ty::Parts(_) => {
                        return Err(TypeErrorKind::EventAsData {
                            value: expr_text(e),
                        })
                    }
                },
                Field::In { var, set } => {
                    let ty = match &mut at {
                        Some((c, known)) => {
                            let types = self.env.field_types(*c);
                            let Some(&d) = types.get(*known) else {
                                return Err(TypeErrorKind::FieldArity {
                                    channel: self.env.channels[*c].name.clone(),
                                    expected: types.len(),
                                    found: *known + 1,
                                });
                            };
                            *known += 1;
                            Ty::Parts(vec![Atom::Data(d)])
                        }
                        None => Ty::Unknown,
                    };
                    if let Some(set) = set {
                        let elements = self.set(set, scope)?;
                        if self.merge(&ty, &elements).is_none() {
                            return Err(TypeErrorKind::SetOfWrongType {
                                expected: self.ty_text(&ty),
                                found: self.ty_text(&elements),
                            });
                        }
                    }
                    self.bind(var, ty, scope)?;
                }
            }
        }
        match at {
            Some((c, known)) if known != self.env.field_types(c).len() => {
                Err(TypeErrorKind::FieldArity {
                    channel: self.env.channels[c].name.clone(),
                    expected: self.env.field_types(c).len(),
                    found: known,
                })
            }
            _ => Ok(()),
        }
    }

    /// The type that values of both `a` and `b` have, if any.
    fn merge(&self, a: &Ty, b: &Ty) -> Option<Ty> {
        match (a, b) {
            (Ty::Unknown, t) | (t, Ty::Unknown) => Some(t.clone()),
            (a, b) if a == b => Some(a.clone()),
            _ => None,
        }
    }

    fn merge_or_err(&self, a: Ty, b: Ty) -> Checked<Ty> {
        self.merge(&a, &b).ok_or_else(|| TypeErrorKind::MixedSet {
            first: self.ty_text(&a),
            second: self.ty_text(&b),
        })
    }

    /// The type of the set's elements.
    fn set(&self, s: &SetExpr, scope: &[(String, Ty)]) -> Checked<Ty> {
        match s {
            SetExpr::Enum(items) => items.iter().try_fold(Ty::Unknown, |elements, item| {
                let ty = self.expr(item, scope)?;
                self.merge_or_err(elements, ty)
            }),
            SetExpr::Productions(items) => {
                for item in items {
                    if let Ty::Parts(atoms) = self.expr(item, scope)? {
                        if let Atom::Data(_) = atoms[0] {
                            return Err(TypeErrorKind::NotAChannel {
                                value: expr_text(item),
                            });
                        }
                    }
                }
                Ok(Ty::Event)
            }
            SetExpr::Type(name) => match self.env.decl(name) {
                Some(Decl::Datatype(d)) => Ok(Ty::Parts(vec![Atom::Data(d)])),
                _ => Err(TypeErrorKind::UndeclaredType { name: name.clone() }),
            },
            SetExpr::Events => Ok(Ty::Event),
            SetExpr::Diff(a, b) | SetExpr::Union(a, b) => {
                let a = self.set(a, scope)?;
                let b = self.set(b, scope)?;
                self.merge_or_err(a, b)
            }
        }
    }

    fn event_set(&self, s: &SetExpr, scope: &[(String, Ty)]) -> Checked<()> {
        match self.set(s, scope)? {
            Ty::Event | Ty::Unknown => Ok(()),
            other => Err(TypeErrorKind::NotAnEventSet {
                found: self.ty_text(&other),
            }),
        }
    }
}
