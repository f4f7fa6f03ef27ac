//! Bad input gives typed errors that say where: type errors at the offending name's line:column,
//! parse errors at the token's, checker errors at the assertion's.

use ilgen_csp::ast::{Assertion, Expr, Item, Proc, Script};
use ilgen_csp::parse::ParseErrorKind;
use ilgen_csp::typecheck::{self, TypeErrorKind};
use ilgen_csp::{check_assertion, check_text, parse, CheckError, Error, Limits, Pos};

const DECLS: &str = "\
datatype T = a | b
datatype U = u
channel c : T
channel e : T.U
";

/// The position and kind of the type error in `DECLS` followed by `rest`.
fn type_error(rest: &str) -> (Pos, TypeErrorKind, String) {
    match check_text(&format!("{DECLS}{rest}"), Limits::default()) {
        Err(Error::Type { at, error }) => {
            let message = Error::Type {
                at,
                error: error.clone(),
            }
            .to_string();
            (at, *error.kind, message)
        }
        other => panic!("expected a type error for {rest:?}, got {other:?}"),
    }
}

fn pos(line: u32, col: u32) -> Pos {
    Pos { line, col }
}

#[test]
fn an_undeclared_channel_is_reported_where_it_is_used() {
    let (at, kind, message) = type_error("P = c.a -> d -> STOP\nassert P :[deadlock free [F]]\n");
    assert_eq!(at, pos(5, 12));
    assert_eq!(kind, TypeErrorKind::Undeclared { name: "d".into() });
    assert_eq!(
        message,
        "5:12: in `P`: `d` is not declared: no constructor, channel or variable has that name"
    );
}

#[test]
fn a_prefix_with_the_wrong_number_of_fields_is_an_error() {
    let (at, kind, _) = type_error("Q = c -> STOP\n");
    assert_eq!(at, pos(5, 5));
    assert_eq!(
        kind,
        TypeErrorKind::FieldArity {
            channel: "c".into(),
            expected: 1,
            found: 0
        }
    );
    let (_, kind, _) = type_error("Q = e.a.u.u -> STOP\n");
    assert!(
        matches!(
            kind,
            TypeErrorKind::FieldArity {
                expected: 2,
                found: 3,
                ..
            }
        ),
        "{kind:?}"
    );
    let (_, kind, _) = type_error("Q = e?x?y?z -> STOP\n");
    assert!(
        matches!(
            kind,
            TypeErrorKind::FieldArity {
                expected: 2,
                found: 3,
                ..
            }
        ),
        "{kind:?}"
    );
}

#[test]
fn a_field_of_the_wrong_type_is_an_error() {
    let (_, kind, message) = type_error("R = e.u.a -> STOP\n");
    assert_eq!(
        kind,
        TypeErrorKind::FieldType {
            channel: "e".into(),
            field: 1,
            expected: "T".into(),
            found: "U".into()
        }
    );
    assert_eq!(
        message,
        "5:5: in `R`: field 1 of channel `e` is a T, but gets a U"
    );
}

#[test]
fn declarations_and_calls_are_checked() {
    let cases: [(&str, TypeErrorKind); 9] = [
        (
            "P = Nope\n",
            TypeErrorKind::UndefinedProcess {
                name: "Nope".into(),
            },
        ),
        (
            "F(v) = STOP\nP = F\n",
            TypeErrorKind::ProcessArity {
                name: "F".into(),
                expected: 1,
                found: 0,
            },
        ),
        (
            "datatype V = u\n",
            TypeErrorKind::Duplicate { name: "u".into() },
        ),
        (
            "channel f : W\n",
            TypeErrorKind::UndeclaredType { name: "W".into() },
        ),
        (
            "P = [] a : T @ c.a -> STOP\n",
            TypeErrorKind::Shadows { name: "a".into() },
        ),
        (
            "P = STOP [| T |] STOP\n",
            TypeErrorKind::NotAnEventSet { found: "T".into() },
        ),
        (
            "P = STOP [| {a, c.a} |] STOP\n",
            TypeErrorKind::MixedSet {
                first: "T".into(),
                second: "event".into(),
            },
        ),
        (
            "F(v) = c!v -> STOP\nP = F(a) [] F(u)\n",
            TypeErrorKind::ParamTypeConflict {
                process: "F".into(),
                param: "v".into(),
                first: "T".into(),
                second: "U".into(),
            },
        ),
        (
            "P = c?x : U -> STOP\n",
            TypeErrorKind::SetOfWrongType {
                expected: "T".into(),
                found: "U".into(),
            },
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(type_error(text).1, expected, "{text}");
    }
}

#[test]
fn trees_the_printer_cannot_write_are_type_errors() {
    let script = |body: Proc| Script {
        items: vec![Item::Def {
            name: "P".into(),
            params: vec!["v".into()],
            body,
        }],
    };
    let one_part = Proc::Call {
        name: "P".into(),
        args: vec![Expr::Dot(vec![Expr::Name("v".into())])],
    };
    let err = typecheck::check(&script(one_part)).expect_err("a one-part dot");
    assert_eq!(*err.kind, TypeErrorKind::DegenerateDot);
    let mut bad = script(Proc::Stop);
    bad.items.push(Item::Def {
        name: "two words".into(),
        params: vec![],
        body: Proc::Stop,
    });
    let err = typecheck::check(&bad).expect_err("a space in a name");
    assert_eq!(err.item, Some(1));
    assert!(matches!(*err.kind, TypeErrorKind::InvalidName { .. }));
}

#[test]
fn an_assertion_checked_on_its_own_is_type_checked_first() {
    let script = parse(DECLS).expect("parses");
    let env = typecheck::check(&script).expect("type-checks");
    let stray = Assertion::DeadlockFree {
        process: Proc::Call {
            name: "MISSING".into(),
            args: vec![],
        },
    };
    match check_assertion(&env, &stray, Limits::default()) {
        Err(CheckError::Type(e)) => assert_eq!(
            *e.kind,
            TypeErrorKind::UndefinedProcess {
                name: "MISSING".into()
            }
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn parse_errors_say_where() {
    let cases: [(&str, Pos, ParseErrorKind); 7] = [
        (
            "channel a\nP = a -> ",
            pos(2, 10),
            ParseErrorKind::Unexpected {
                found: "the end of the input".into(),
                expected: "a process",
            },
        ),
        (
            "channel a\nP = a STOP\n",
            pos(2, 7),
            ParseErrorKind::NotOnNewLine {
                found: "`STOP`".into(),
            },
        ),
        (
            "P = a # b\n",
            pos(1, 7),
            ParseErrorKind::UnexpectedChar('#'),
        ),
        (
            "{- open\nP = STOP\n",
            pos(1, 1),
            ParseErrorKind::UnterminatedComment,
        ),
        (
            "P = A [| {} |] B [| {} |] C\n",
            pos(1, 18),
            ParseErrorKind::NonAssociative,
        ),
        (
            "assert P :[deadlock free [FD]]\n",
            pos(1, 10),
            ParseErrorKind::UnsupportedProperty("deadlock free [FD]".into()),
        ),
        (
            "datatype T a\n",
            pos(1, 12),
            ParseErrorKind::Unexpected {
                found: "`a`".into(),
                expected: "`=`",
            },
        ),
    ];
    for (text, at, kind) in cases {
        let err = parse(text).expect_err(text);
        assert_eq!((err.pos, &err.kind), (at, &kind), "{text}");
    }
    let err = parse("channel a\nP = a STOP\n").expect_err("two processes");
    assert_eq!(
        err.to_string(),
        "2:7: `STOP` must start a new line (one declaration per line)"
    );
}

#[test]
fn check_text_reports_parse_errors_too() {
    let err = check_text("P = (STOP\n", Limits::default()).expect_err("unclosed");
    assert_eq!(
        err.to_string(),
        "2:1: expected `)`, found the end of the input"
    );
}

#[test]
fn too_many_events_is_an_error_not_a_hang() {
    let ctors: Vec<String> = (0..1_100).map(|i| format!("v{i}")).collect();
    let text = format!(
        "datatype D = {}\nchannel big : D.D\nassert STOP :[deadlock free [F]]\n",
        ctors.join(" | ")
    );
    match check_text(&text, Limits::default()) {
        Err(Error::Check {
            at,
            error: CheckError::TooManyEvents { count, .. },
        }) => {
            assert_eq!(at, pos(3, 1));
            assert_eq!(count, 1_100 * 1_100);
        }
        other => panic!("{other:?}"),
    }
}
