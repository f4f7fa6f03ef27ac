//! The labelled transition system of a type-checked script.
//!
//! Takes an [`Env`] and the processes to explore; gives states (hash-consed terms, so equal
//! processes are one state) and their transitions under CSP's standard operational semantics
//! (Roscoe, *Understanding Concurrent Systems*): `SKIP` ticks; a tick of either side of
//! `[| X |]` or `|||` is a tau to a terminated side, and the composition ticks once both sides
//! have terminated; the tick of `P ; Q`'s left side is a tau into `Q`; `P /\ Q` is interrupted by
//! `Q`'s visible events and ends with `P`'s tick; a tau of one side of `[]` resolves nothing,
//! a visible event or a tick resolves it; `P \ X` turns `P`'s events in `X` into taus that still
//! carry the event, so that counterexamples can name what was hidden. Calling a process is not
//! a step: names unfold when a term is built, and unfolding a name again before any prefix is
//! an unguarded recursion.
//!
//! Definitions are compiled once into nodes whose variables are numbered frame slots; a state
//! refers to a node and the values of only the slots it can still read, so states that differ
//! in dead variables are one state.

use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::ops::Range;
use std::rc::Rc;

use crate::ast::{Expr, Field, Proc, SetExpr};
use crate::check_error::CheckError;
use crate::typecheck::{Decl, Env};

/// An event: its index among all events of the script, channel by channel.
pub(crate) type EventId = u32;
/// A state of the transition system.
pub(crate) type StateId = u32;
/// A value: an event, a constructor, or any other dotted value built while exploring. Events
/// are the values `0..n_events`.
type ValueId = u32;
/// A channel (`0..n_channels`) or a constructor.
type Sym = u32;
type NodeId = u32;
type Slot = u32;
type EnvId = u32;
type SetId = u32;
type ListId = u32;

/// A frame slot no binding has reached.
const UNBOUND: ValueId = u32::MAX;

/// Events beyond this many are not enumerated: the naive checker would not finish anyway.
const MAX_EVENTS: usize = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Label {
    /// An internal step: the hidden event, or `None` for a tick turned internal.
    Tau(Option<EventId>),
    Tick,
    Event(EventId),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Transition {
    pub label: Label,
    pub to: StateId,
}

/// Hashes the ids the transition system is made of. The keys come from the checker, not from
/// an adversary, so one multiply per word is enough: the xor-shift after it carries the high bits
/// of the product into the low bits that pick a bucket.
#[derive(Clone, Copy, Default)]
pub(crate) struct WordHasher(u64);

impl WordHasher {
    fn mix(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 ^= self.0 >> 29;
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.mix(n.into());
    }

    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    fn write_isize(&mut self, n: isize) {
        self.mix(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;
type FastSet<K> = HashSet<K, BuildHasherDefault<WordHasher>>;

/// Ids for values of `T`: each distinct value is stored once.
struct Interner<T> {
    items: Vec<T>,
    index: FastMap<T, u32>,
}

impl<T: Clone + Eq + Hash> Interner<T> {
    fn new() -> Self {
        Interner {
            items: Vec::new(),
            index: FastMap::default(),
        }
    }

    fn intern(&mut self, item: T) -> u32 {
        match self.index.entry(item) {
            Entry::Occupied(known) => *known.get(),
            Entry::Vacant(new) => {
                let id = self.items.len() as u32;
                self.items.push(new.key().clone());
                new.insert(id);
                id
            }
        }
    }

    fn get(&self, id: u32) -> &T {
        &self.items[id as usize]
    }

    fn find<Q: Hash + Eq + ?Sized>(&self, item: &Q) -> Option<u32>
    where
        T: std::borrow::Borrow<Q>,
    {
        self.index.get(item).copied()
    }
}

#[derive(Clone, Debug)]
enum CExpr {
    Var(Slot),
    Const(ValueId),
    Dot(Box<[CExpr]>),
}

#[derive(Clone, Debug)]
enum CField {
    /// `.e` or `!e`: the same event either way.
    Value(CExpr),
    Input {
        slot: Slot,
        set: Option<CSet>,
    },
}

#[derive(Clone, Debug)]
enum CSet {
    Enum(Box<[CExpr]>),
    Productions(Box<[CExpr]>),
    Type(usize),
    Events,
    Diff(Box<CSet>, Box<CSet>),
    Union(Box<CSet>, Box<CSet>),
}

#[derive(Debug)]
enum Node {
    Stop,
    Skip,
    Call {
        def: usize,
        args: Box<[CExpr]>,
    },
    Prefix {
        head: CExpr,
        fields: Box<[CField]>,
        then: NodeId,
        /// The slots the prefix and its continuation read.
        keep: Box<[Slot]>,
    },
    ExtChoice(NodeId, NodeId),
    RepExtChoice {
        slot: Slot,
        set: CSet,
        body: NodeId,
    },
    Interrupt(NodeId, NodeId),
    /// `None` for `|||`.
    Parallel(NodeId, Option<CSet>, NodeId),
    RepInterleave {
        slot: Slot,
        set: CSet,
        body: NodeId,
    },
    Hide(NodeId, CSet),
    /// The right side does not start until the left ticks: it is kept as a node and the slots
    /// it reads.
    Seq(NodeId, NodeId, Box<[Slot]>),
}

struct DefCode {
    name: String,
    body: NodeId,
    frame: usize,
}

/// The compiled script: fixed while exploring.
struct Code {
    /// Channel names, then constructor names.
    syms: Vec<String>,
    n_channels: u32,
    n_events: u32,
    /// Per channel, its events.
    channel_events: Vec<Range<u32>>,
    /// Per channel, the datatype of each field.
    field_types: Vec<Vec<usize>>,
    /// Per datatype, its constructors as symbols and as values (ascending).
    type_syms: Vec<Vec<Sym>>,
    type_values: Vec<Vec<ValueId>>,
    nodes: Vec<Node>,
    defs: Vec<DefCode>,
    /// The processes to explore, with their frame sizes.
    roots: Vec<(NodeId, usize)>,
}

/// A process term: the state of the transition system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Term {
    Stop,
    Skip,
    /// Terminated: what is left after a tick.
    Omega,
    Prefix(NodeId, EnvId),
    /// External choice between two or more alternatives, sorted (`[]` is associative and
    /// commutative, so one flat list is one state however the choice was nested).
    Choice(ListId),
    Interrupt(StateId, StateId),
    Parallel(StateId, SetId, StateId),
    Hide(StateId, SetId),
    Seq(StateId, NodeId, EnvId),
}

type Free = BTreeSet<Slot>;
/// Where a list of transitions is in the arena. Transitions are read out one at a time, by copy,
/// so that the system can keep growing while a list is walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Moves {
    start: u32,
    len: u32,
}

impl Moves {
    const UNKNOWN: Moves = Moves {
        start: 0,
        len: u32::MAX,
    };
    const NONE: Moves = Moves { start: 0, len: 0 };

    pub(crate) fn len(self) -> usize {
        self.len as usize
    }

    pub(crate) fn is_empty(self) -> bool {
        self.len == 0
    }
}
type Values = Interner<Box<[Sym]>>;

struct Compiler<'e> {
    env: &'e Env<'e>,
    ctor_syms: HashMap<&'e str, Sym>,
    values: Values,
    nodes: Vec<Node>,
    scope: Vec<(String, Slot)>,
    next_slot: Slot,
}

impl Compiler<'_> {
    fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        (self.nodes.len() - 1) as NodeId
    }

    fn bind(&mut self, var: &str) -> Slot {
        let slot = self.next_slot;
        self.next_slot += 1;
        self.scope.push((var.to_string(), slot));
        slot
    }

    fn expr(&mut self, e: &Expr) -> Result<(CExpr, Free), CheckError> {
        match e {
            Expr::Name(name) => {
                if let Some((_, slot)) = self.scope.iter().rev().find(|(n, _)| n == name) {
                    return Ok((CExpr::Var(*slot), Free::from([*slot])));
                }
                let sym = match self.env.decl(name) {
                    Some(Decl::Channel(c)) => c as Sym,
                    Some(Decl::Ctor(_)) => self.ctor_syms[name.as_str()],
                    _ => return Err(CheckError::Unresolved { name: name.clone() }),
                };
                Ok((
                    CExpr::Const(self.values.intern(Box::new([sym]))),
                    Free::new(),
                ))
            }
            Expr::Dot(parts) => {
                let mut free = Free::new();
                let mut compiled = Vec::new();
                for part in parts {
                    let (c, f) = self.expr(part)?;
                    free.extend(f);
                    compiled.push(c);
                }
                let consts: Option<Vec<Sym>> = compiled
                    .iter()
                    .map(|c| match c {
                        CExpr::Const(v) => Some(self.values.get(*v).to_vec()),
                        _ => None,
                    })
                    .try_fold(Vec::new(), |mut all, part| {
                        all.extend(part?);
                        Some(all)
                    });
                Ok(match consts {
                    Some(syms) => (CExpr::Const(self.values.intern(syms.into())), free),
                    None => (CExpr::Dot(compiled.into()), free),
                })
            }
        }
    }

    fn exprs(&mut self, items: &[Expr]) -> Result<(Box<[CExpr]>, Free), CheckError> {
        let mut free = Free::new();
        let mut compiled = Vec::new();
        for item in items {
            let (c, f) = self.expr(item)?;
            free.extend(f);
            compiled.push(c);
        }
        Ok((compiled.into(), free))
    }

    fn set(&mut self, s: &SetExpr) -> Result<(CSet, Free), CheckError> {
        Ok(match s {
            SetExpr::Enum(items) => {
                let (items, free) = self.exprs(items)?;
                (CSet::Enum(items), free)
            }
            SetExpr::Productions(items) => {
                let (items, free) = self.exprs(items)?;
                (CSet::Productions(items), free)
            }
            SetExpr::Type(name) => match self.env.decl(name) {
                Some(Decl::Datatype(d)) => (CSet::Type(d), Free::new()),
                _ => return Err(CheckError::Unresolved { name: name.clone() }),
            },
            SetExpr::Events => (CSet::Events, Free::new()),
            SetExpr::Diff(a, b) | SetExpr::Union(a, b) => {
                let (a, mut free) = self.set(a)?;
                let (b, more) = self.set(b)?;
                free.extend(more);
                let (a, b) = (Box::new(a), Box::new(b));
                let set = if matches!(s, SetExpr::Diff(..)) {
                    CSet::Diff(a, b)
                } else {
                    CSet::Union(a, b)
                };
                (set, free)
            }
        })
    }

    /// A replicated operator's set and body, with its variable bound in the body.
    fn replicated(
        &mut self,
        var: &str,
        set: &SetExpr,
        body: &Proc,
    ) -> Result<(CSet, Slot, NodeId, Free), CheckError> {
        let (set, mut free) = self.set(set)?;
        let slot = self.bind(var);
        let (body, mut body_free) = self.proc(body)?;
        self.scope.pop();
        body_free.remove(&slot);
        free.extend(body_free);
        Ok((set, slot, body, free))
    }

    fn proc(&mut self, p: &Proc) -> Result<(NodeId, Free), CheckError> {
        let (node, free) = match p {
            Proc::Stop => (Node::Stop, Free::new()),
            Proc::Skip => (Node::Skip, Free::new()),
            Proc::Call { name, args } => {
                let Some(Decl::Def(def)) = self.env.decl(name) else {
                    return Err(CheckError::Unresolved { name: name.clone() });
                };
                let (args, free) = self.exprs(args)?;
                (Node::Call { def, args }, free)
            }
            Proc::Prefix { .. } => return self.prefix_chain(p),
            Proc::ExtChoice(a, b)
            | Proc::Interrupt(a, b)
            | Proc::Interleave(a, b)
            | Proc::Seq(a, b) => {
                let (a, mut free) = self.proc(a)?;
                let (b, b_free) = self.proc(b)?;
                let node = match p {
                    Proc::ExtChoice(..) => Node::ExtChoice(a, b),
                    Proc::Interrupt(..) => Node::Interrupt(a, b),
                    Proc::Interleave(..) => Node::Parallel(a, None, b),
                    _ => Node::Seq(a, b, b_free.iter().copied().collect()),
                };
                free.extend(b_free);
                (node, free)
            }
            Proc::RepExtChoice { var, set, body } => {
                let (set, slot, body, free) = self.replicated(var, set, body)?;
                (Node::RepExtChoice { slot, set, body }, free)
            }
            Proc::RepInterleave { var, set, body } => {
                let (set, slot, body, free) = self.replicated(var, set, body)?;
                (Node::RepInterleave { slot, set, body }, free)
            }
            Proc::Parallel { left, sync, right } => {
                let (left, mut free) = self.proc(left)?;
                let (sync, sync_free) = self.set(sync)?;
                let (right, right_free) = self.proc(right)?;
                free.extend(sync_free);
                free.extend(right_free);
                (Node::Parallel(left, Some(sync), right), free)
            }
            Proc::Hide(inner, set) => {
                let (inner, mut free) = self.proc(inner)?;
                let (set, set_free) = self.set(set)?;
                free.extend(set_free);
                (Node::Hide(inner, set), free)
            }
        };
        Ok((self.push(node), free))
    }

    /// A chain of prefixes, compiled in a loop (thread processes are long chains): forwards to
    /// bind the inputs, then backwards to link each prefix to its continuation.
    fn prefix_chain(&mut self, p: &Proc) -> Result<(NodeId, Free), CheckError> {
        let base = self.scope.len();
        let mut links = Vec::new();
        let mut link = p;
        while let Proc::Prefix {
            event,
            fields,
            then,
        } = link
        {
            let (head, mut free) = self.expr(event)?;
            let mut inputs = Vec::new();
            let mut compiled = Vec::new();
            for field in fields {
                compiled.push(match field {
                    Field::Dot(e) | Field::Out(e) => {
                        let (e, f) = self.expr(e)?;
                        free.extend(f);
                        CField::Value(e)
                    }
                    Field::In { var, set } => {
                        let set = match set {
                            Some(s) => {
                                let (s, f) = self.set(s)?;
                                free.extend(f);
                                Some(s)
                            }
                            None => None,
                        };
                        let slot = self.bind(var);
                        inputs.push(slot);
                        CField::Input { slot, set }
                    }
                });
            }
            links.push((head, compiled, free, inputs));
            link = then;
        }
        let (mut next, mut next_free) = self.proc(link)?;
        for (head, fields, mut free, inputs) in links.into_iter().rev() {
            free.extend(next_free);
            for slot in &inputs {
                free.remove(slot);
            }
            next = self.push(Node::Prefix {
                head,
                fields: fields.into(),
                then: next,
                keep: free.iter().copied().collect(),
            });
            next_free = free;
        }
        self.scope.truncate(base);
        Ok((next, next_free))
    }

    /// Compiles `p` in a fresh frame whose first slots are `params`; gives the node and the
    /// frame's size.
    fn frame(&mut self, params: &[String], p: &Proc) -> Result<(NodeId, usize), CheckError> {
        self.scope.clear();
        self.next_slot = 0;
        for param in params {
            self.bind(param);
        }
        let (node, _) = self.proc(p)?;
        Ok((node, self.next_slot as usize))
    }
}

/// Compiles the script of `env` and the processes `roots`.
fn compile(env: &Env, roots: &[&Proc]) -> Result<(Code, Values), CheckError> {
    let n_channels = env.channels().len() as Sym;
    let mut syms: Vec<String> = env.channels().iter().map(|c| c.name.clone()).collect();
    let mut ctor_syms = HashMap::new();
    let mut type_syms = Vec::new();
    for datatype in env.datatypes() {
        let mut these = Vec::new();
        for ctor in &datatype.ctors {
            let sym = syms.len() as Sym;
            syms.push(ctor.clone());
            ctor_syms.insert(ctor.as_str(), sym);
            these.push(sym);
        }
        type_syms.push(these);
    }
    let field_types: Vec<Vec<usize>> = (0..env.channels().len())
        .map(|c| env.field_types(c).to_vec())
        .collect();
    let count: usize = field_types
        .iter()
        .map(|types| {
            types
                .iter()
                .try_fold(1usize, |n, &d| n.checked_mul(type_syms[d].len()))
                .unwrap_or(usize::MAX)
        })
        .try_fold(0usize, usize::checked_add)
        .unwrap_or(usize::MAX);
    if count > MAX_EVENTS {
        return Err(CheckError::TooManyEvents {
            count,
            limit: MAX_EVENTS,
        });
    }
    // Events first, so that they are the values 0..n_events, channel by channel and in the
    // lexicographic order of their fields.
    let mut values = Interner::new();
    let mut channel_events = Vec::new();
    for (c, types) in field_types.iter().enumerate() {
        let start = values.items.len() as u32;
        let mut event = vec![c as Sym];
        enumerate_events(types, &type_syms, &mut event, &mut values);
        channel_events.push(start..values.items.len() as u32);
    }
    let n_events = values.items.len() as u32;
    let type_values = type_syms
        .iter()
        .map(|these| {
            these
                .iter()
                .map(|&s| values.intern(Box::new([s])))
                .collect()
        })
        .collect();
    let mut compiler = Compiler {
        env,
        ctor_syms,
        values,
        nodes: Vec::new(),
        scope: Vec::new(),
        next_slot: 0,
    };
    let mut defs = Vec::new();
    for def in env.definitions() {
        let (body, frame) = compiler.frame(def.params, def.body)?;
        defs.push(DefCode {
            name: def.name.to_string(),
            body,
            frame,
        });
    }
    let roots = roots
        .iter()
        .map(|p| compiler.frame(&[], p))
        .collect::<Result<_, _>>()?;
    let code = Code {
        syms,
        n_channels,
        n_events,
        channel_events,
        field_types,
        type_syms,
        type_values,
        nodes: compiler.nodes,
        defs,
        roots,
    };
    Ok((code, compiler.values))
}

fn enumerate_events(
    types: &[usize],
    type_syms: &[Vec<Sym>],
    event: &mut Vec<Sym>,
    values: &mut Values,
) {
    match types.split_first() {
        None => {
            values.intern(event.as_slice().into());
        }
        Some((&d, rest)) => {
            for &sym in &type_syms[d] {
                event.push(sym);
                enumerate_events(rest, type_syms, event, values);
                event.pop();
            }
        }
    }
}

/// The transition system of some processes of a script, built as it is explored.
pub(crate) struct Lts {
    /// Shared so that a node can be read while the terms it unfolds into are interned.
    code: Rc<Code>,
    values: Values,
    terms: Interner<Term>,
    envs: Interner<Box<[ValueId]>>,
    sets: Interner<Box<[u64]>>,
    lists: Interner<Box<[StateId]>>,
    /// Calls already unfolded: the callee's body and arguments, and the state they gave.
    unfolded: FastMap<(NodeId, EnvId), StateId>,
    /// Calls being unfolded: meeting one again is an unguarded recursion.
    unfolding: FastSet<(NodeId, EnvId)>,
    /// Every list of transitions computed, one after the other: one allocation for them all.
    arena: Vec<Transition>,
    /// Per state, its transitions (ordered by label), once computed.
    transitions: Vec<Moves>,
    /// Per component and synchronisation set, the component's transitions outside the set and
    /// on it.
    splits: FastMap<(StateId, SetId), (Moves, Moves)>,
    /// The empty set: `|||` synchronises on it.
    no_events: SetId,
}

impl Lts {
    /// The system of the script of `env` for the processes `roots` (see [`Lts::root`]).
    pub(crate) fn new(env: &Env, roots: &[&Proc]) -> Result<Self, CheckError> {
        let (code, values) = compile(env, roots)?;
        let mut sets = Interner::new();
        let no_events = sets.intern(vec![0u64; code.n_events.div_ceil(64) as usize].into());
        Ok(Lts {
            code: Rc::new(code),
            values,
            terms: Interner::new(),
            envs: Interner::new(),
            sets,
            lists: Interner::new(),
            unfolded: FastMap::default(),
            unfolding: FastSet::default(),
            arena: Vec::new(),
            transitions: Vec::new(),
            splits: FastMap::default(),
            no_events,
        })
    }

    /// The initial state of the `i`-th process given to [`Lts::new`].
    pub(crate) fn root(&mut self, i: usize) -> Result<StateId, CheckError> {
        let (node, frame) = self.code.roots[i];
        self.unfold(node, &vec![UNBOUND; frame])
    }

    pub(crate) fn is_terminated(&self, s: StateId) -> bool {
        *self.terms.get(s) == Term::Omega
    }

    /// The event's dotted name, as FDR prints it.
    pub(crate) fn event_name(&self, e: EventId) -> String {
        self.value_name(e)
    }

    fn value_name(&self, v: ValueId) -> String {
        self.syms_name(self.values.get(v))
    }

    fn syms_name(&self, syms: &[Sym]) -> String {
        syms.iter()
            .map(|&s| self.code.syms[s as usize].as_str())
            .collect::<Vec<_>>()
            .join(".")
    }

    fn term(&mut self, t: Term) -> StateId {
        self.terms.intern(t)
    }

    fn eval(&mut self, e: &CExpr, frame: &[ValueId]) -> Result<ValueId, CheckError> {
        match e {
            CExpr::Const(v) => Ok(*v),
            CExpr::Var(slot) => match frame[*slot as usize] {
                UNBOUND => Err(CheckError::Unresolved {
                    name: format!("variable in slot {slot}"),
                }),
                v => Ok(v),
            },
            CExpr::Dot(parts) => {
                let mut syms = Vec::new();
                for part in parts.iter() {
                    let v = self.eval(part, frame)?;
                    syms.extend_from_slice(self.values.get(v));
                }
                Ok(self.values.intern(syms.into()))
            }
        }
    }

    /// The set's values, ascending.
    fn eval_set(&mut self, s: &CSet, frame: &[ValueId]) -> Result<Vec<ValueId>, CheckError> {
        let mut values = match s {
            CSet::Enum(items) => items
                .iter()
                .map(|e| self.eval(e, frame))
                .collect::<Result<Vec<_>, _>>()?,
            CSet::Productions(items) => {
                let mut all = Vec::new();
                for item in items.iter() {
                    let v = self.eval(item, frame)?;
                    let prefix = self.values.get(v).clone();
                    let c = prefix[0];
                    if c >= self.code.n_channels {
                        return Err(CheckError::NotAChannel {
                            value: self.value_name(v),
                        });
                    }
                    all.extend(
                        self.code.channel_events[c as usize]
                            .clone()
                            .filter(|&e| self.values.get(e).starts_with(&prefix)),
                    );
                }
                all
            }
            CSet::Type(d) => self.code.type_values[*d].clone(),
            CSet::Events => (0..self.code.n_events).collect(),
            CSet::Diff(a, b) => {
                let a = self.eval_set(a, frame)?;
                let b = self.eval_set(b, frame)?;
                a.into_iter()
                    .filter(|v| b.binary_search(v).is_err())
                    .collect()
            }
            CSet::Union(a, b) => {
                let mut a = self.eval_set(a, frame)?;
                a.extend(self.eval_set(b, frame)?);
                a
            }
        };
        values.sort_unstable();
        values.dedup();
        Ok(values)
    }

    /// A set of events, as a bitset state terms can share.
    fn event_set(&mut self, s: &CSet, frame: &[ValueId]) -> Result<SetId, CheckError> {
        let mut bits = vec![0u64; self.code.n_events.div_ceil(64) as usize];
        for v in self.eval_set(s, frame)? {
            if v >= self.code.n_events {
                return Err(CheckError::NotAnEvent {
                    value: self.value_name(v),
                });
            }
            bits[(v / 64) as usize] |= 1 << (v % 64);
        }
        Ok(self.sets.intern(bits.into()))
    }

    fn contains(&self, set: SetId, e: EventId) -> bool {
        self.sets.get(set)[(e / 64) as usize] & (1 << (e % 64)) != 0
    }

    /// The frame reduced to the slots in `keep`, as an environment id.
    fn keep(&mut self, frame: &[ValueId], keep: &[Slot]) -> EnvId {
        let mut env = vec![UNBOUND; frame.len()];
        for &slot in keep {
            env[slot as usize] = frame[slot as usize];
        }
        self.envs.intern(env.into())
    }

    fn choice(&mut self, alternatives: &[StateId]) -> StateId {
        let mut flat = Vec::new();
        for &a in alternatives {
            match *self.terms.get(a) {
                Term::Stop => {}
                Term::Choice(list) => flat.extend_from_slice(self.lists.get(list)),
                _ => flat.push(a),
            }
        }
        flat.sort_unstable();
        match flat.as_slice() {
            [] => self.term(Term::Stop),
            [one] => *one,
            _ => {
                let list = self.lists.intern(flat.into());
                self.term(Term::Choice(list))
            }
        }
    }

    /// `STOP /\ Q` is `Q`.
    fn interrupt(&mut self, a: StateId, b: StateId) -> StateId {
        if *self.terms.get(a) == Term::Stop {
            return b;
        }
        self.term(Term::Interrupt(a, b))
    }

    /// Hiding changes nothing of a process with no events.
    fn hide(&mut self, a: StateId, set: SetId) -> StateId {
        if matches!(self.terms.get(a), Term::Stop | Term::Omega) {
            return a;
        }
        self.term(Term::Hide(a, set))
    }

    /// `STOP ; Q` is `STOP`.
    fn seq(&mut self, a: StateId, node: NodeId, env: EnvId) -> StateId {
        if *self.terms.get(a) == Term::Stop {
            return a;
        }
        self.term(Term::Seq(a, node, env))
    }

    /// The state of node `node` in `frame`: names unfolded, replicated operators expanded.
    fn unfold(&mut self, node: NodeId, frame: &[ValueId]) -> Result<StateId, CheckError> {
        let code = Rc::clone(&self.code);
        Ok(match &code.nodes[node as usize] {
            Node::Stop => self.term(Term::Stop),
            Node::Skip => self.term(Term::Skip),
            Node::Call { def, args } => {
                let DefCode {
                    body, frame: size, ..
                } = code.defs[*def];
                let mut callee = vec![UNBOUND; size];
                for (slot, arg) in args.iter().enumerate() {
                    callee[slot] = self.eval(arg, frame)?;
                }
                let key = (body, self.envs.intern(callee.clone().into()));
                if let Some(&state) = self.unfolded.get(&key) {
                    return Ok(state);
                }
                if !self.unfolding.insert(key) {
                    return Err(CheckError::UnguardedRecursion {
                        process: code.defs[*def].name.clone(),
                    });
                }
                let state = self.unfold(body, &callee);
                self.unfolding.remove(&key);
                let state = state?;
                self.unfolded.insert(key, state);
                state
            }
            Node::Prefix { keep, .. } => {
                let env = self.keep(frame, keep);
                self.term(Term::Prefix(node, env))
            }
            Node::ExtChoice(a, b) => {
                let a = self.unfold(*a, frame)?;
                let b = self.unfold(*b, frame)?;
                self.choice(&[a, b])
            }
            Node::RepExtChoice { slot, set, body } => {
                let alternatives = self.replicate(*slot, set, *body, frame)?;
                self.choice(&alternatives)
            }
            Node::Interrupt(a, b) => {
                let a = self.unfold(*a, frame)?;
                let b = self.unfold(*b, frame)?;
                self.interrupt(a, b)
            }
            Node::Parallel(a, sync, b) => {
                let a = self.unfold(*a, frame)?;
                let set = match sync {
                    Some(s) => self.event_set(s, frame)?,
                    None => self.no_events,
                };
                let b = self.unfold(*b, frame)?;
                self.term(Term::Parallel(a, set, b))
            }
            Node::RepInterleave { slot, set, body } => {
                let parts = self.replicate(*slot, set, *body, frame)?;
                let none = self.no_events;
                match parts.split_last() {
                    None => self.term(Term::Skip),
                    Some((&last, rest)) => rest
                        .iter()
                        .rev()
                        .fold(last, |acc, &p| self.term(Term::Parallel(p, none, acc))),
                }
            }
            Node::Hide(a, set) => {
                let a = self.unfold(*a, frame)?;
                let set = self.event_set(set, frame)?;
                self.hide(a, set)
            }
            Node::Seq(a, b, keep) => {
                let a = self.unfold(*a, frame)?;
                let env = self.keep(frame, keep);
                self.seq(a, *b, env)
            }
        })
    }

    /// The body once per value of the set, the value bound to `slot`.
    fn replicate(
        &mut self,
        slot: Slot,
        set: &CSet,
        body: NodeId,
        frame: &[ValueId],
    ) -> Result<Vec<StateId>, CheckError> {
        let mut frame = frame.to_vec();
        let mut states = Vec::new();
        for v in self.eval_set(set, &frame)? {
            frame[slot as usize] = v;
            states.push(self.unfold(body, &frame)?);
        }
        Ok(states)
    }

    /// The `i`-th transition of `moves`.
    pub(crate) fn nth(&self, moves: Moves, i: usize) -> Transition {
        self.arena[moves.start as usize + i]
    }

    fn store(&mut self, list: Vec<Transition>) -> Moves {
        let start = self.arena.len() as u32;
        self.arena.extend(list);
        Moves {
            start,
            len: self.arena.len() as u32 - start,
        }
    }

    /// The transitions of `s`, ordered by label.
    pub(crate) fn transitions(&mut self, s: StateId) -> Result<Moves, CheckError> {
        if let Some(&known) = self.transitions.get(s as usize) {
            if known != Moves::UNKNOWN {
                return Ok(known);
            }
        }
        let mut out = Vec::new();
        match *self.terms.get(s) {
            Term::Stop | Term::Omega => {}
            Term::Skip => {
                let omega = self.term(Term::Omega);
                out.push(Transition {
                    label: Label::Tick,
                    to: omega,
                });
            }
            Term::Prefix(node, env) => self.prefix_transitions(node, env, &mut out)?,
            Term::Choice(list) => {
                let alternatives = self.lists.get(list).clone();
                for (i, &a) in alternatives.iter().enumerate() {
                    let moves = self.transitions(a)?;
                    for k in 0..moves.len() {
                        let t = self.nth(moves, k);
                        let to = if let Label::Tau(_) = t.label {
                            let mut rest = alternatives.to_vec();
                            rest[i] = t.to;
                            self.choice(&rest)
                        } else {
                            t.to
                        };
                        out.push(Transition { label: t.label, to });
                    }
                }
            }
            Term::Interrupt(a, b) => {
                let moves = self.transitions(a)?;
                for k in 0..moves.len() {
                    let t = self.nth(moves, k);
                    let to = match t.label {
                        Label::Tick => t.to,
                        _ => self.interrupt(t.to, b),
                    };
                    out.push(Transition { label: t.label, to });
                }
                let moves = self.transitions(b)?;
                for k in 0..moves.len() {
                    let t = self.nth(moves, k);
                    let to = match t.label {
                        Label::Tau(_) => self.interrupt(a, t.to),
                        _ => t.to,
                    };
                    out.push(Transition { label: t.label, to });
                }
            }
            Term::Parallel(a, set, b) => self.parallel_transitions(a, set, b, &mut out)?,
            Term::Hide(a, set) => {
                let moves = self.transitions(a)?;
                for k in 0..moves.len() {
                    let t = self.nth(moves, k);
                    let label = match t.label {
                        Label::Event(e) if self.contains(set, e) => Label::Tau(Some(e)),
                        other => other,
                    };
                    let to = self.hide(t.to, set);
                    out.push(Transition { label, to });
                }
            }
            Term::Seq(a, node, env) => {
                let moves = self.transitions(a)?;
                for k in 0..moves.len() {
                    let t = self.nth(moves, k);
                    out.push(match t.label {
                        Label::Tick => {
                            let frame = self.envs.get(env).clone();
                            Transition {
                                label: Label::Tau(None),
                                to: self.unfold(node, &frame)?,
                            }
                        }
                        label => Transition {
                            label,
                            to: self.seq(t.to, node, env),
                        },
                    });
                }
            }
        }
        out.sort_unstable();
        let moves = self.store(out);
        if self.transitions.len() <= s as usize {
            self.transitions.resize(s as usize + 1, Moves::UNKNOWN);
        }
        self.transitions[s as usize] = moves;
        Ok(moves)
    }

    /// `s`'s transitions outside `set` and on it, each ordered by label; kept, since a component
    /// meets the same synchronisation set in many states of the whole.
    fn split(&mut self, s: StateId, set: SetId) -> Result<(Moves, Moves), CheckError> {
        if set == self.no_events {
            return Ok((self.transitions(s)?, Moves::NONE));
        }
        if let Some(&known) = self.splits.get(&(s, set)) {
            return Ok(known);
        }
        let moves = self.transitions(s)?;
        let (sync, free): (Vec<Transition>, Vec<Transition>) = (0..moves.len())
            .map(|k| self.nth(moves, k))
            .partition(|t| matches!(t.label, Label::Event(e) if self.contains(set, e)));
        let split = (self.store(free), self.store(sync));
        self.splits.insert((s, set), split);
        Ok(split)
    }

    fn parallel_transitions(
        &mut self,
        a: StateId,
        set: SetId,
        b: StateId,
        out: &mut Vec<Transition>,
    ) -> Result<(), CheckError> {
        if self.is_terminated(a) && self.is_terminated(b) {
            let omega = self.term(Term::Omega);
            out.push(Transition {
                label: Label::Tick,
                to: omega,
            });
            return Ok(());
        }
        let (a_free, a_sync) = self.split(a, set)?;
        let (b_free, b_sync) = self.split(b, set)?;
        for k in 0..a_free.len() {
            let t = self.nth(a_free, k);
            let to = self.term(Term::Parallel(t.to, set, b));
            out.push(Transition {
                label: own_label(t.label),
                to,
            });
        }
        for k in 0..b_free.len() {
            let u = self.nth(b_free, k);
            let to = self.term(Term::Parallel(a, set, u.to));
            out.push(Transition {
                label: own_label(u.label),
                to,
            });
        }
        // A synchronised event pairs every move of one side on it with every move of the other:
        // walk the side with fewer such moves, find the other's by label (a monitor offering
        // every event must not cost its whole alphabet per state).
        let a_fewer = a_sync.len() <= b_sync.len();
        let (few, many) = if a_fewer {
            (a_sync, b_sync)
        } else {
            (b_sync, a_sync)
        };
        let many_range = many.start as usize..(many.start + many.len) as usize;
        for k in 0..few.len() {
            let t = self.nth(few, k);
            let mut j = self.arena[many_range.clone()].partition_point(|u| u.label < t.label);
            while j < many.len() {
                let u = self.nth(many, j);
                if u.label != t.label {
                    break;
                }
                let (left, right) = if a_fewer { (t.to, u.to) } else { (u.to, t.to) };
                let to = self.term(Term::Parallel(left, set, right));
                out.push(Transition { label: t.label, to });
                j += 1;
            }
        }
        Ok(())
    }

    fn prefix_transitions(
        &mut self,
        node: NodeId,
        env: EnvId,
        out: &mut Vec<Transition>,
    ) -> Result<(), CheckError> {
        let code = Rc::clone(&self.code);
        let Node::Prefix {
            head, fields, then, ..
        } = &code.nodes[node as usize]
        else {
            return Err(CheckError::Unresolved {
                name: format!("prefix node {node}"),
            });
        };
        let mut frame = self.envs.get(env).to_vec();
        let head = self.eval(head, &frame)?;
        let mut event = self.values.get(head).to_vec();
        self.offer(fields, *then, &mut event, &mut frame, out)
    }

    /// Every event the fields can complete `event` to, each with its continuation.
    fn offer(
        &mut self,
        fields: &[CField],
        then: NodeId,
        event: &mut Vec<Sym>,
        frame: &mut [ValueId],
        out: &mut Vec<Transition>,
    ) -> Result<(), CheckError> {
        match fields.split_first() {
            None => {
                let e = match self.values.find(event.as_slice()) {
                    Some(e) if e < self.code.n_events => e,
                    _ => {
                        return Err(CheckError::NotAnEvent {
                            value: self.syms_name(event),
                        })
                    }
                };
                let to = self.unfold(then, frame)?;
                out.push(Transition {
                    label: Label::Event(e),
                    to,
                });
            }
            Some((CField::Value(e), rest)) => {
                let v = self.eval(e, frame)?;
                let len = event.len();
                event.extend_from_slice(self.values.get(v));
                self.offer(rest, then, event, frame, out)?;
                event.truncate(len);
            }
            Some((CField::Input { slot, set }, rest)) => {
                let channel = event[0] as usize;
                let field = event.len() - 1;
                let Some(&d) = self
                    .code
                    .field_types
                    .get(channel)
                    .and_then(|types| types.get(field))
                else {
                    return Err(CheckError::NotAnEvent {
                        value: format!("{}?", self.syms_name(event)),
                    });
                };
                let allowed = match set {
                    Some(s) => Some(self.eval_set(s, frame)?),
                    None => None,
                };
                for k in 0..self.code.type_syms[d].len() {
                    let (sym, value) = (self.code.type_syms[d][k], self.code.type_values[d][k]);
                    if allowed
                        .as_ref()
                        .is_some_and(|a| a.binary_search(&value).is_err())
                    {
                        continue;
                    }
                    frame[*slot as usize] = value;
                    event.push(sym);
                    self.offer(rest, then, event, frame, out)?;
                    event.pop();
                }
            }
        }
        Ok(())
    }
}

/// A component's own step in a parallel composition: its tick is internal until both sides
/// have terminated.
fn own_label(label: Label) -> Label {
    match label {
        Label::Tick => Label::Tau(None),
        other => other,
    }
}
