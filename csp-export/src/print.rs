//! The printer: writes a [`Script`] as FDR4-compatible CSP_M text.
//!
//! Takes a syntax tree; gives deterministic text that [`parse`](fn@crate::parse) reads back to the same tree.
//! Parentheses follow FDR4's operator binding (libcspm's grammar: replicated operators loosest,
//! then `\`, `|||`, `[| |]`, `[]`, `/\`, `;`, `->`) and are added wherever two different binary
//! operators meet, so that no reader has to remember that table. Lines longer than 100 characters
//! break before an operator or after `=`, `@` and `[T=`, the places where FDR's lexer lets a
//! declaration continue on the next line; continuation lines are indented.

use crate::ast::{Assertion, Expr, Field, Item, Proc, Script, SetExpr};

/// Lines longer than this are broken where the syntax allows.
const WIDTH: usize = 100;
const INDENT: usize = 4;

pub fn print(script: &Script) -> String {
    let mut out = String::new();
    for (i, item) in script.items.iter().enumerate() {
        // A blank line before each comment keeps two adjacent comments two comments.
        if i > 0 && matches!(item, Item::Comment(_)) {
            out.push('\n');
        }
        for line in item_lines(item) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

fn item_lines(item: &Item) -> Vec<String> {
    match item {
        Item::Comment(text) => text
            .split('\n')
            .map(|line| {
                if line.is_empty() {
                    "--".to_string()
                } else {
                    format!("-- {line}")
                }
            })
            .collect(),
        Item::Datatype { name, ctors } => fill(format!("datatype {name} ="), ctors, "|"),
        Item::Channel { names, fields } => {
            let mut line = format!("channel {}", names.join(", "));
            if !fields.is_empty() {
                line.push_str(" : ");
                line.push_str(&fields.join("."));
            }
            vec![line]
        }
        Item::Def { name, params, body } => {
            let mut head = name.clone();
            if !params.is_empty() {
                head.push('(');
                head.push_str(&params.join(", "));
                head.push(')');
            }
            head.push_str(" =");
            let body_flat = flat(body);
            if head.len() + 1 + body_flat.len() <= WIDTH {
                return vec![format!("{head} {body_flat}")];
            }
            let mut lines = vec![head];
            lines.extend(indented(layout(body, INDENT, INDENT), INDENT));
            lines
        }
        Item::Assert(Assertion::TraceRefines { spec, imp }) => {
            let one_line = format!("assert {} [T= {}", flat(spec), flat(imp));
            if one_line.len() <= WIDTH {
                return vec![one_line];
            }
            let mut lines = layout(spec, "assert ".len(), INDENT);
            lines[0].insert_str(0, "assert ");
            push_last(&mut lines, " [T=");
            lines.extend(indented(layout(imp, INDENT, INDENT), INDENT));
            lines
        }
        Item::Assert(Assertion::DeadlockFree { process }) => {
            let mut lines = layout(process, "assert ".len(), INDENT);
            lines[0].insert_str(0, "assert ");
            push_last(&mut lines, " :[deadlock free [F]]");
            lines
        }
    }
}

fn push_last(lines: &mut [String], text: &str) {
    if let Some(last) = lines.last_mut() {
        last.push_str(text);
    }
}

/// `lines` (whose first line starts at column `by`) as lines of their own: the first indented.
fn indented(mut lines: Vec<String>, by: usize) -> Vec<String> {
    lines[0].insert_str(0, &" ".repeat(by));
    lines
}

/// `head item sep item sep item ...`, wrapped: continuation lines start with `sep`.
fn fill(head: String, items: &[String], sep: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = head;
    for (i, item) in items.iter().enumerate() {
        let glue = if i == 0 {
            " ".to_string()
        } else {
            format!(" {sep} ")
        };
        if i > 0 && line.len() + glue.len() + item.len() > WIDTH {
            lines.push(std::mem::take(&mut line));
            line = format!("{}{sep} {item}", " ".repeat(INDENT));
        } else {
            line.push_str(&glue);
            line.push_str(item);
        }
    }
    lines.push(line);
    lines
}

/// The binary operators, for deciding parentheses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Hide,
    Interleave,
    Parallel,
    ExtChoice,
    Interrupt,
    Seq,
}

impl Op {
    fn of(p: &Proc) -> Option<Op> {
        Some(match p {
            Proc::Hide(..) => Op::Hide,
            Proc::Interleave(..) => Op::Interleave,
            Proc::Parallel { .. } => Op::Parallel,
            Proc::ExtChoice(..) => Op::ExtChoice,
            Proc::Interrupt(..) => Op::Interrupt,
            Proc::Seq(..) => Op::Seq,
            _ => return None,
        })
    }

    fn symbol(self) -> &'static str {
        match self {
            Op::Hide => "\\",
            Op::Interleave => "|||",
            Op::Parallel => "[|",
            Op::ExtChoice => "[]",
            Op::Interrupt => "/\\",
            Op::Seq => ";",
        }
    }

    /// The two operands of a chainable operator (all but `[| |]` and `\`, whose second operand
    /// is a set).
    fn operands(self, p: &Proc) -> Option<(&Proc, &Proc)> {
        match (self, p) {
            (Op::Interleave, Proc::Interleave(l, r))
            | (Op::ExtChoice, Proc::ExtChoice(l, r))
            | (Op::Interrupt, Proc::Interrupt(l, r))
            | (Op::Seq, Proc::Seq(l, r)) => Some((l, r)),
            _ => None,
        }
    }
}

/// Whether `child`, an operand of `parent`, is printed in parentheses. Precedence alone would
/// drop some of these; they stay so that mixed operators read unambiguously.
fn needs_parens(child: &Proc, parent: Op, right: bool) -> bool {
    match child {
        Proc::Stop | Proc::Skip | Proc::Call { .. } => false,
        // `a -> P \ X` hides the prefix too, which reads wrong.
        Proc::Prefix { .. } => parent == Op::Hide,
        Proc::RepExtChoice { .. } | Proc::RepInterleave { .. } => true,
        _ => Op::of(child) != Some(parent) || right || parent == Op::Parallel,
    }
}

/// A prefix's continuation needs parentheses when it is anything but an atom or a prefix.
fn body_needs_parens(body: &Proc) -> bool {
    !matches!(
        body,
        Proc::Stop | Proc::Skip | Proc::Call { .. } | Proc::Prefix { .. }
    )
}

/// The process on one line.
fn flat(p: &Proc) -> String {
    let mut out = String::new();
    write_proc(p, &mut out);
    out
}

fn write_operand(child: &Proc, parens: bool, out: &mut String) {
    if parens {
        out.push('(');
        write_proc(child, out);
        out.push(')');
    } else {
        write_proc(child, out);
    }
}

fn write_proc(p: &Proc, out: &mut String) {
    match p {
        Proc::Stop => out.push_str("STOP"),
        Proc::Skip => out.push_str("SKIP"),
        Proc::Call { name, args } => {
            out.push_str(name);
            if !args.is_empty() {
                out.push('(');
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_expr(arg, out);
                }
                out.push(')');
            }
        }
        Proc::Prefix { .. } => {
            let (links, tail) = prefix_chain(p);
            for link in links {
                out.push_str(&link);
                out.push_str(" -> ");
            }
            write_operand(tail, body_needs_parens(tail), out);
        }
        Proc::RepExtChoice { var, set, body } | Proc::RepInterleave { var, set, body } => {
            out.push_str(&replicated_header(p, var, set));
            out.push(' ');
            write_proc(body, out);
        }
        Proc::Parallel { left, sync, right } => {
            write_operand(left, needs_parens(left, Op::Parallel, false), out);
            out.push(' ');
            out.push_str(Op::Parallel.symbol());
            out.push(' ');
            write_set(sync, out);
            out.push_str(" |] ");
            write_operand(right, needs_parens(right, Op::Parallel, true), out);
        }
        Proc::Hide(inner, set) => {
            write_operand(inner, needs_parens(inner, Op::Hide, false), out);
            out.push(' ');
            out.push_str(Op::Hide.symbol());
            out.push(' ');
            write_set(set, out);
        }
        Proc::Interleave(l, r) => write_binary(Op::Interleave, l, r, out),
        Proc::ExtChoice(l, r) => write_binary(Op::ExtChoice, l, r, out),
        Proc::Interrupt(l, r) => write_binary(Op::Interrupt, l, r, out),
        Proc::Seq(l, r) => write_binary(Op::Seq, l, r, out),
    }
}

fn write_binary(op: Op, l: &Proc, r: &Proc, out: &mut String) {
    write_operand(l, needs_parens(l, op, false), out);
    out.push(' ');
    out.push_str(op.symbol());
    out.push(' ');
    write_operand(r, needs_parens(r, op, true), out);
}

fn replicated_header(p: &Proc, var: &str, set: &SetExpr) -> String {
    let op = if matches!(p, Proc::RepInterleave { .. }) {
        "|||"
    } else {
        "[]"
    };
    let mut out = format!("{op} {var} : ");
    write_set(set, &mut out);
    out.push_str(" @");
    out
}

/// A chain of prefixes as its links (`event fields`) and the process after the last arrow;
/// walked in a loop, since thread processes are long chains.
fn prefix_chain(mut p: &Proc) -> (Vec<String>, &Proc) {
    let mut links = Vec::new();
    while let Proc::Prefix {
        event,
        fields,
        then,
    } = p
    {
        let mut link = String::new();
        match event {
            Expr::Name(name) => link.push_str(name),
            Expr::Dot(_) => write_atom(event, &mut link),
        }
        for (i, field) in fields.iter().enumerate() {
            match field {
                Field::Dot(e) => {
                    link.push('.');
                    write_atom(e, &mut link);
                }
                Field::Out(e) => {
                    link.push('!');
                    write_atom(e, &mut link);
                }
                Field::In { var, set } => {
                    link.push('?');
                    link.push_str(var);
                    if let Some(set) = set {
                        link.push_str(" : ");
                        // FDR would read `?x : T.y` as the set `T.y`.
                        let followed_by_dot = matches!(fields.get(i + 1), Some(Field::Dot(_)));
                        if followed_by_dot {
                            link.push('(');
                        }
                        write_set(set, &mut link);
                        if followed_by_dot {
                            link.push(')');
                        }
                    }
                }
            }
        }
        links.push(link);
        p = then;
    }
    (links, p)
}

/// A dotted value; parts that are themselves dotted keep their parentheses, so the tree
/// survives a round trip.
fn write_expr(e: &Expr, out: &mut String) {
    match e {
        Expr::Name(name) => out.push_str(name),
        Expr::Dot(parts) => {
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                write_atom(part, out);
            }
        }
    }
}

fn write_atom(e: &Expr, out: &mut String) {
    match e {
        Expr::Name(name) => out.push_str(name),
        Expr::Dot(_) => {
            out.push('(');
            write_expr(e, out);
            out.push(')');
        }
    }
}

/// A value as the printer writes it: for messages.
pub(crate) fn expr_text(e: &Expr) -> String {
    let mut out = String::new();
    write_expr(e, &mut out);
    out
}

fn write_exprs(items: &[Expr], out: &mut String) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_expr(item, out);
    }
}

fn write_set(s: &SetExpr, out: &mut String) {
    match s {
        SetExpr::Enum(items) => {
            out.push('{');
            write_exprs(items, out);
            out.push('}');
        }
        SetExpr::Productions(items) => {
            out.push_str("{|");
            write_exprs(items, out);
            out.push_str("|}");
        }
        SetExpr::Type(name) => out.push_str(name),
        SetExpr::Events => out.push_str("Events"),
        SetExpr::Diff(a, b) | SetExpr::Union(a, b) => {
            out.push_str(if matches!(s, SetExpr::Diff(..)) {
                "diff("
            } else {
                "union("
            });
            write_set(a, out);
            out.push_str(", ");
            write_set(b, out);
            out.push(')');
        }
    }
}

fn set_text(s: &SetExpr) -> String {
    let mut out = String::new();
    write_set(s, &mut out);
    out
}

/// `p` as lines: the first starts at column `col` (after text already on its line), the others
/// carry their own indentation, at least `indent`.
fn layout(p: &Proc, col: usize, indent: usize) -> Vec<String> {
    let one_line = flat(p);
    if col + one_line.len() <= WIDTH {
        return vec![one_line];
    }
    let pad = " ".repeat(indent);
    match p {
        Proc::Stop | Proc::Skip | Proc::Call { .. } => vec![one_line],
        Proc::Prefix { .. } => {
            let (links, tail) = prefix_chain(p);
            let mut lines = Vec::new();
            let mut line = String::new();
            let mut line_col = col;
            for link in links {
                if line.is_empty() {
                    line = link;
                } else if line_col + line.len() + 4 + link.len() > WIDTH {
                    lines.push(std::mem::take(&mut line));
                    line = format!("{pad}-> {link}");
                    line_col = 0;
                } else {
                    line.push_str(" -> ");
                    line.push_str(&link);
                }
            }
            let parens = body_needs_parens(tail);
            let mut tail_text = String::new();
            write_operand(tail, parens, &mut tail_text);
            if line_col + line.len() + 4 + tail_text.len() <= WIDTH {
                line.push_str(" -> ");
                line.push_str(&tail_text);
                lines.push(line);
            } else {
                lines.push(line);
                let at = indent + 3;
                let mut rest = operand_lines(tail, parens, at, at);
                rest[0].insert_str(0, &format!("{pad}-> "));
                lines.extend(rest);
            }
            lines
        }
        Proc::RepExtChoice { var, set, body } | Proc::RepInterleave { var, set, body } => {
            let at = indent + INDENT;
            let mut lines = vec![replicated_header(p, var, set)];
            lines.extend(indented(layout(body, at, at), at));
            lines
        }
        Proc::Parallel { left, sync, right } => {
            let mut lines =
                operand_lines(left, needs_parens(left, Op::Parallel, false), col, indent);
            lines.push(format!(
                "{pad}{} {} |]",
                Op::Parallel.symbol(),
                set_text(sync)
            ));
            let right = operand_lines(
                right,
                needs_parens(right, Op::Parallel, true),
                indent,
                indent,
            );
            lines.extend(indented(right, indent));
            lines
        }
        Proc::Hide(inner, set) => {
            let mut lines = operand_lines(inner, needs_parens(inner, Op::Hide, false), col, indent);
            lines.push(format!("{pad}{} {}", Op::Hide.symbol(), set_text(set)));
            lines
        }
        Proc::Interleave(..) => chain_layout(Op::Interleave, p, col, indent),
        Proc::ExtChoice(..) => chain_layout(Op::ExtChoice, p, col, indent),
        Proc::Interrupt(..) => chain_layout(Op::Interrupt, p, col, indent),
        Proc::Seq(..) => chain_layout(Op::Seq, p, col, indent),
    }
}

/// A left-nested run of one operator, one operand per line, each after the operator.
fn chain_layout(op: Op, p: &Proc, col: usize, indent: usize) -> Vec<String> {
    let mut rights = Vec::new();
    let mut first = p;
    while let Some((l, r)) = op.operands(first) {
        rights.push(r);
        first = l;
    }
    let mut lines = operand_lines(first, needs_parens(first, op, false), col, indent);
    let lead = format!("{}{} ", " ".repeat(indent), op.symbol());
    for r in rights.into_iter().rev() {
        let mut more = operand_lines(r, needs_parens(r, op, true), lead.len(), lead.len());
        more[0].insert_str(0, &lead);
        lines.extend(more);
    }
    lines
}

fn operand_lines(child: &Proc, parens: bool, col: usize, indent: usize) -> Vec<String> {
    if !parens {
        return layout(child, col, indent);
    }
    let mut lines = layout(child, col + 1, indent + 1);
    lines[0].insert(0, '(');
    push_last(&mut lines, ")");
    lines
}
