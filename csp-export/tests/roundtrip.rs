//! Printing and parsing are inverse: `parse(print(s)) == s` and `print(parse(print(s))) ==
//! print(s)`, on hand-built scripts with every construct, on random scripts, and on the long
//! chains and wide choices that real models have.

use ilgen_csp::ast::{Assertion, Expr, Field, Item, Proc, Script, SetExpr};
use ilgen_csp::{parse, print};

fn name(s: &str) -> Expr {
    Expr::Name(s.into())
}

fn dot(parts: &[Expr]) -> Expr {
    Expr::Dot(parts.to_vec())
}

fn call(s: &str) -> Proc {
    Proc::Call {
        name: s.into(),
        args: vec![],
    }
}

fn b(p: Proc) -> Box<Proc> {
    Box::new(p)
}

fn prefix(channel: &str, fields: Vec<Field>, then: Proc) -> Proc {
    Proc::Prefix {
        event: name(channel),
        fields,
        then: b(then),
    }
}

fn def(n: &str, body: Proc) -> Item {
    Item::Def {
        name: n.into(),
        params: vec![],
        body,
    }
}

/// Asserts both round trips and gives the text.
fn round_trip(script: &Script) -> String {
    let text = print(script);
    let parsed = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(&parsed, script, "parse(print(s)) != s for\n{text}");
    assert_eq!(print(&parsed), text);
    text
}

/// One script with every construct of the syntax tree.
fn every_construct() -> Script {
    let threads = SetExpr::Type("Threads".into());
    let sync = SetExpr::Productions(vec![name("lock"), name("unlock")]);
    let items = vec![
        Item::Comment("A model.\n\n  indented line".into()),
        Item::Comment(String::new()),
        Item::Datatype {
            name: "Threads".into(),
            ctors: vec!["T1".into(), "T2".into()],
        },
        Item::Datatype {
            name: "Mutexes".into(),
            ctors: vec!["m".into(), "m'".into()],
        },
        Item::Channel {
            names: vec!["lock".into(), "unlock".into()],
            fields: vec!["Threads".into(), "Mutexes".into()],
        },
        Item::Channel {
            names: vec!["race".into()],
            fields: vec![],
        },
        Item::Def {
            name: "MUTEX".into(),
            params: vec!["mu".into()],
            body: Proc::RepExtChoice {
                var: "t".into(),
                set: threads.clone(),
                body: b(prefix(
                    "lock",
                    vec![Field::Dot(name("t")), Field::Out(name("mu"))],
                    prefix(
                        "unlock",
                        vec![Field::Dot(name("t")), Field::Dot(name("mu"))],
                        Proc::Call {
                            name: "MUTEX".into(),
                            args: vec![name("mu")],
                        },
                    ),
                )),
            },
        },
        def(
            "INPUTS",
            prefix(
                "lock",
                vec![
                    Field::In {
                        var: "t".into(),
                        set: Some(SetExpr::Diff(
                            b_set(threads.clone()),
                            b_set(SetExpr::Enum(vec![name("T1")])),
                        )),
                    },
                    Field::In {
                        var: "k".into(),
                        set: None,
                    },
                ],
                Proc::Skip,
            ),
        ),
        // `?x : S` before a `.` field: the set is parenthesised.
        def(
            "SET_THEN_DOT",
            prefix(
                "lock",
                vec![
                    Field::In {
                        var: "t".into(),
                        set: Some(threads.clone()),
                    },
                    Field::Dot(name("m")),
                ],
                Proc::Stop,
            ),
        ),
        // Dotted heads and dotted field values keep their shape.
        def(
            "DOTTED",
            Proc::Prefix {
                event: dot(&[name("lock"), name("T1")]),
                fields: vec![Field::Dot(name("m"))],
                then: b(Proc::Prefix {
                    event: name("lock"),
                    fields: vec![Field::Dot(dot(&[name("T2"), name("m")]))],
                    then: b(Proc::Prefix {
                        event: name("lock"),
                        fields: vec![Field::Out(dot(&[name("T2"), name("m")]))],
                        then: b(Proc::Prefix {
                            event: dot(&[dot(&[name("lock"), name("T1")]), name("m")]),
                            fields: vec![],
                            then: b(Proc::Stop),
                        }),
                    }),
                }),
            },
        ),
        def(
            "OPS",
            Proc::Hide(
                b(Proc::Parallel {
                    left: b(Proc::Interleave(
                        b(Proc::Seq(b(call("A")), b(call("B")))),
                        b(Proc::Interleave(b(call("C")), b(call("D")))),
                    )),
                    sync: SetExpr::Union(
                        b_set(sync.clone()),
                        b_set(SetExpr::Enum(vec![
                            name("race"),
                            dot(&[name("lock"), name("T1"), name("m")]),
                        ])),
                    ),
                    right: b(Proc::Interrupt(
                        b(Proc::ExtChoice(
                            b(Proc::ExtChoice(b(call("A")), b(call("B")))),
                            b(Proc::ExtChoice(b(call("C")), b(call("D")))),
                        )),
                        b(Proc::RepInterleave {
                            var: "t".into(),
                            set: threads.clone(),
                            body: b(prefix("race", vec![], Proc::Skip)),
                        }),
                    )),
                }),
                SetExpr::Diff(b_set(SetExpr::Events), b_set(SetExpr::Enum(vec![]))),
            ),
        ),
        // A prefix whose continuation is a choice, a hidden prefix, a parallel of parallels.
        def(
            "NESTED",
            Proc::Parallel {
                left: b(Proc::Parallel {
                    left: b(prefix(
                        "race",
                        vec![],
                        Proc::ExtChoice(b(call("A")), b(Proc::Skip)),
                    )),
                    sync: SetExpr::Enum(vec![name("race")]),
                    right: b(Proc::Hide(
                        b(prefix("race", vec![], Proc::Stop)),
                        sync.clone(),
                    )),
                }),
                sync: SetExpr::Events,
                right: b(Proc::Parallel {
                    left: b(call("A")),
                    sync: SetExpr::Enum(vec![]),
                    right: b(Proc::Seq(
                        b(Proc::Seq(b(call("A")), b(call("B")))),
                        b(Proc::Interrupt(b(call("C")), b(call("D")))),
                    )),
                }),
            },
        ),
        def("A", Proc::Stop),
        def("B", Proc::Skip),
        def(
            "C",
            Proc::Hide(b(Proc::Hide(b(call("A")), sync.clone())), SetExpr::Events),
        ),
        def(
            "D",
            Proc::Call {
                name: "MUTEX".into(),
                args: vec![dot(&[name("m"), name("m'")])],
            },
        ),
        Item::Assert(Assertion::TraceRefines {
            spec: Proc::Stop,
            imp: Proc::Hide(b(call("OPS")), SetExpr::Events),
        }),
        Item::Assert(Assertion::DeadlockFree {
            process: call("NESTED"),
        }),
        Item::Comment("the end".into()),
    ];
    Script { items }
}

fn b_set(s: SetExpr) -> Box<SetExpr> {
    Box::new(s)
}

#[test]
fn every_construct_round_trips() {
    round_trip(&every_construct());
}

#[test]
fn the_empty_script_round_trips() {
    assert_eq!(round_trip(&Script { items: vec![] }), "");
}

#[test]
fn text_is_fdr_csp_m() {
    let text = round_trip(&every_construct());
    for expected in [
        "-- A model.\n--\n--   indented line\n\n--\ndatatype Threads = T1 | T2\n",
        "channel lock, unlock : Threads.Mutexes\nchannel race\n",
        "MUTEX(mu) = [] t : Threads @ lock.t!mu -> unlock.t.mu -> MUTEX(mu)\n",
        "INPUTS = lock?t : diff(Threads, {T1})?k -> SKIP\n",
        "SET_THEN_DOT = lock?t : (Threads).m -> STOP\n",
        "(lock.T1).m -> lock.(T2.m) -> lock!(T2.m) -> ((lock.T1).m) -> STOP",
        "C = A \\ {|lock, unlock|} \\ Events\n",
        "D = MUTEX(m.m')\n",
        "assert STOP [T= OPS \\ Events\n",
        "assert NESTED :[deadlock free [F]]\n",
        "\n-- the end\n",
    ] {
        assert!(text.contains(expected), "no {expected:?} in\n{text}");
    }
    // Different operators meeting are parenthesised; a run of one operator is not.
    for expected in [
        "race -> (A [] SKIP)",
        "(race -> STOP) \\ {|lock, unlock|}",
        "((A ; B) ||| (C ||| D))",
        "(A [] B [] (C [] D)) /\\ (||| t : Threads @ race -> SKIP)",
        "A ; B ; (C /\\ D)",
    ] {
        assert!(text.contains(expected), "no {expected:?} in\n{text}");
    }
}

#[test]
fn long_lines_break_where_fdr_continues_reading() {
    let text = round_trip(&every_construct());
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    // NESTED is too long for a line: its parallel breaks around `[| Events |]`.
    assert!(text.contains("\n    [| Events |]\n"), "{text}");
    // Every continuation line starts with an operator or is indented under an `=`.
    let wide = Script {
        items: vec![
            Item::Datatype {
                name: "Objects".into(),
                ctors: (0..60).map(|i| format!("object_{i}")).collect(),
            },
            def(
                "CHOICE",
                (0..12)
                    .map(|i| prefix(&format!("event_number_{i}"), vec![], call("CHOICE")))
                    .reduce(|a, c| Proc::ExtChoice(b(a), b(c)))
                    .expect("twelve"),
            ),
        ],
    };
    let text = round_trip(&wide);
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    assert!(text.contains("\n    | object_"), "{text}");
    assert_eq!(text.matches("\n    [] event_number_").count(), 11, "{text}");
}

#[test]
fn long_chains_round_trip_and_check_without_exhausting_the_stack() {
    let events = 5_000;
    let chain = (0..events).rev().fold(Proc::Skip, |then, i| {
        prefix("lock", vec![Field::Dot(name(&format!("t{}", i % 7)))], then)
    });
    let script = Script {
        items: vec![
            Item::Datatype {
                name: "Threads".into(),
                ctors: (0..7).map(|i| format!("t{i}")).collect(),
            },
            Item::Channel {
                names: vec!["lock".into()],
                fields: vec!["Threads".into()],
            },
            def("THREAD", chain),
            Item::Assert(Assertion::DeadlockFree {
                process: call("THREAD"),
            }),
        ],
    };
    // Compared as text: the syntax tree's derived equality recurses once per link.
    let text = print(&script);
    let parsed = parse(&text).expect("parses");
    assert_eq!(print(&parsed), text);
    assert!(text.lines().all(|l| l.chars().count() <= 100));
    assert_eq!(text.matches("lock.").count(), events);
    let env = ilgen_csp::typecheck::check(&parsed).expect("type-checks");
    let assertion = parsed.assertions().next().expect("one assertion");
    let verdict = ilgen_csp::check_assertion(&env, assertion, ilgen_csp::Limits::default());
    assert_eq!(
        verdict,
        Ok(ilgen_csp::Verdict::Holds { states: events + 2 })
    );
}

/// A small deterministic generator of scripts: every shape the syntax tree allows, with valid
/// names and dotted values of two parts or more.
struct Gen(u64);

impl Gen {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn ident(&mut self) -> String {
        ["a", "b", "P", "Q'", "T_1", "lock", "x9"][self.next(7)].to_string()
    }

    fn expr(&mut self, depth: usize) -> Expr {
        if depth == 0 || self.next(3) > 0 {
            return Expr::Name(self.ident());
        }
        let parts = 2 + self.next(2);
        Expr::Dot((0..parts).map(|_| self.expr(depth - 1)).collect())
    }

    fn exprs(&mut self) -> Vec<Expr> {
        (0..self.next(3)).map(|_| self.expr(2)).collect()
    }

    fn set(&mut self, depth: usize) -> SetExpr {
        match self.next(if depth == 0 { 4 } else { 6 }) {
            0 => SetExpr::Enum(self.exprs()),
            1 => SetExpr::Productions((0..1 + self.next(2)).map(|_| self.expr(1)).collect()),
            2 => SetExpr::Type(self.ident()),
            3 => SetExpr::Events,
            4 => SetExpr::Diff(b_set(self.set(depth - 1)), b_set(self.set(depth - 1))),
            _ => SetExpr::Union(b_set(self.set(depth - 1)), b_set(self.set(depth - 1))),
        }
    }

    fn field(&mut self) -> Field {
        match self.next(4) {
            0 => Field::Dot(self.expr(1)),
            1 => Field::Out(self.expr(1)),
            2 => Field::In {
                var: self.ident(),
                set: None,
            },
            _ => Field::In {
                var: self.ident(),
                set: Some(self.set(1)),
            },
        }
    }

    fn sub(&mut self, depth: usize) -> Box<Proc> {
        b(self.proc(depth.saturating_sub(1)))
    }

    fn proc(&mut self, depth: usize) -> Proc {
        let pick = if depth == 0 {
            self.next(3)
        } else {
            self.next(13)
        };
        match pick {
            0 => Proc::Stop,
            1 => Proc::Skip,
            2 => {
                let args = self.exprs();
                Proc::Call {
                    name: self.ident(),
                    args,
                }
            }
            3 | 4 => {
                let event = self.expr(1);
                let fields = (0..self.next(4)).map(|_| self.field()).collect();
                Proc::Prefix {
                    event,
                    fields,
                    then: b(self.proc(depth - 1)),
                }
            }
            5 => Proc::ExtChoice(self.sub(depth), self.sub(depth)),
            6 => Proc::Interrupt(self.sub(depth), self.sub(depth)),
            7 => Proc::Interleave(self.sub(depth), self.sub(depth)),
            8 => Proc::Seq(self.sub(depth), self.sub(depth)),
            9 => Proc::Parallel {
                left: self.sub(depth),
                sync: self.set(1),
                right: self.sub(depth),
            },
            10 => Proc::Hide(self.sub(depth), self.set(1)),
            11 => Proc::RepExtChoice {
                var: self.ident(),
                set: self.set(1),
                body: self.sub(depth),
            },
            _ => Proc::RepInterleave {
                var: self.ident(),
                set: self.set(1),
                body: self.sub(depth),
            },
        }
    }

    fn item(&mut self) -> Item {
        match self.next(7) {
            0 => Item::Comment(
                (0..1 + self.next(3))
                    .map(|_| ["", "text", " spaced ", "-- dashes {- -}"][self.next(4)])
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            1 => Item::Datatype {
                name: self.ident(),
                ctors: (0..1 + self.next(3)).map(|_| self.ident()).collect(),
            },
            2 => Item::Channel {
                names: (0..1 + self.next(3)).map(|_| self.ident()).collect(),
                fields: (0..self.next(3)).map(|_| self.ident()).collect(),
            },
            3 => Item::Assert(Assertion::TraceRefines {
                spec: self.proc(2),
                imp: self.proc(4),
            }),
            4 => Item::Assert(Assertion::DeadlockFree {
                process: self.proc(4),
            }),
            _ => Item::Def {
                name: self.ident(),
                params: (0..self.next(3)).map(|_| self.ident()).collect(),
                body: self.proc(5),
            },
        }
    }
}

#[test]
fn random_scripts_round_trip() {
    let mut gen = Gen(0x9e37_79b9_7f4a_7c15);
    for _ in 0..2_000 {
        let items = (0..1 + gen.next(6)).map(|_| gen.item()).collect();
        round_trip(&Script { items });
    }
}
