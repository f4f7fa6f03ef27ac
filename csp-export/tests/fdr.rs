//! The FDR runner without FDR: its output parser on samples of `refines --format json` output
//! (see `ilgen_csp::fdr` for the shape), a missing `refines`, and a stand-in `refines` script
//! that checks how it is called.

use std::path::{Path, PathBuf};

use ilgen_csp::fdr::{self, FdrError};
use ilgen_csp::{Step, Verdict};

/// A race counterexample (hidden events revealed, `race` refused by STOP), a passed check, a
/// deadlock, and an undecided check.
const SAMPLE: &str = r#"{
  "errors": [],
  "warnings": [],
  "event_map": {
    "0": "τ", "1": "✓", "2": "fork.t1.t2", "3": "start.t2", "4": "lock.t2.m",
    "5": "write.t2.x", "6": "unlock.t2.m", "7": "write.t2.y", "8": "write.t1.y", "9": "race"
  },
  "results": [
    {
      "assertion_string": "STOP [T= (PROGRAM [| diff(Events, {|race|}) |] RACE(y)) \\ diff(Events, {|race|})",
      "result": 0, "visited_states": 42, "visited_transitions": 90, "errors": [],
      "counterexamples": [{
        "type": "trace",
        "implementation_behaviour": {
          "trace": [0, 0, 0, 0, 0, 0, 0],
          "revealed_trace": [2, 3, 4, 5, 6, 7, 8],
          "error_event": 9
        }
      }]
    },
    { "assertion_string": "PROGRAM :[deadlock free [F]]", "result": 1, "visited_states": 20,
      "errors": [], "counterexamples": [] },
    {
      "assertion_string": "P :[deadlock free [F]]", "result": false, "visited_states": 3,
      "counterexamples": [{
        "type": "deadlock",
        "implementation_behaviour": { "trace": [2, 3], "revealed_trace": [2, 3] }
      }]
    },
    { "assertion_string": "Q :[deadlock free [F]]", "result": "Timeout", "visited_states": 1000 }
  ]
}"#;

fn steps(events: &[(&str, bool)]) -> Vec<Step> {
    events
        .iter()
        .map(|&(event, hidden)| Step {
            event: event.into(),
            hidden,
        })
        .collect()
}

#[test]
fn the_output_gives_one_verdict_per_assertion() {
    let verdicts = fdr::parse_output(SAMPLE).expect("parses");
    assert_eq!(
        verdicts,
        [
            Verdict::Fails {
                trace: steps(&[
                    ("fork.t1.t2", true),
                    ("start.t2", true),
                    ("lock.t2.m", true),
                    ("write.t2.x", true),
                    ("unlock.t2.m", true),
                    ("write.t2.y", true),
                    ("write.t1.y", true),
                    ("race", false),
                ]),
                states: 42
            },
            Verdict::Holds { states: 20 },
            Verdict::Fails {
                trace: steps(&[("fork.t1.t2", false), ("start.t2", false)]),
                states: 3
            },
            Verdict::GaveUp { states: 1000 },
        ]
    );
}

#[test]
fn per_file_results_and_named_events_are_read_through() {
    let nested = r#"{ "results": [ { "file_name": "a.csp", "event_map": { "7": "b" },
        "results": [ { "assertion_string": "STOP [T= P", "result": "Failed",
          "counterexamples": [ { "implementation_behaviour":
            { "trace": ["a", 7, "_tau"], "error_event": "_tick" } } ] } ] } ] }"#;
    assert_eq!(
        fdr::parse_output(nested),
        Ok(vec![Verdict::Fails {
            trace: steps(&[("a", false), ("b", false), ("✓", false)]),
            states: 0
        }])
    );
}

#[test]
fn malformed_output_and_fdr_errors_are_typed() {
    assert!(matches!(
        fdr::parse_output("Checking a.csp"),
        Err(FdrError::Json(_))
    ));
    assert!(matches!(fdr::parse_output("{}"), Err(FdrError::Shape(_))));
    let unknown = r#"{ "results": [ { "assertion_string": "P :[deadlock free [F]]",
        "result": 0, "counterexamples": [ { "implementation_behaviour": { "trace": [5] } } ] } ] }"#;
    assert_eq!(
        fdr::parse_output(unknown),
        Err(FdrError::Shape("event 5 is not in `event_map`".into()))
    );
    let rejected = r#"{ "errors": ["a.csp:3:5-6: P is not in scope"], "results": [] }"#;
    assert_eq!(
        fdr::parse_output(rejected),
        Err(FdrError::Script {
            errors: vec!["a.csp:3:5-6: P is not in scope".into()]
        })
    );
    let failed = r#"{ "results": [ { "assertion_string": "P [T= Q", "errors": ["too big"] } ] }"#;
    assert_eq!(
        fdr::parse_output(failed).map_err(|e| e.to_string()),
        Err("FDR could not check `P [T= Q`: too big".into())
    );
}

#[test]
fn a_missing_refines_says_how_to_get_fdr() {
    let missing = Path::new("/nonexistent/fdr/bin/refines");
    let err = fdr::run(missing, Path::new("model.csp")).expect_err("no FDR there");
    assert_eq!(
        err,
        FdrError::NotFound {
            program: Some(missing.to_path_buf())
        }
    );
    let message = FdrError::NotFound { program: None }.to_string();
    assert!(
        message.starts_with("FDR's `refines` was not found on PATH"),
        "{message}"
    );
    assert!(message.contains("https://cocotec.io/fdr/"), "{message}");
}

/// A scratch directory of this test process.
#[cfg(unix)]
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ilgen-csp-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

#[cfg(unix)]
fn fake_refines(dir: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("refines");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

#[cfg(unix)]
#[test]
fn refines_is_run_on_the_file_and_its_json_read() {
    let dir = scratch("run");
    let model = dir.join("model.csp");
    std::fs::write(&model, "assert STOP :[deadlock free [F]]\n").expect("model");
    let sample = dir.join("out.json");
    std::fs::write(&sample, SAMPLE).expect("sample");
    // The stand-in answers only when called as the runner documents.
    let refines = fake_refines(
        &dir,
        &format!(
            "[ \"$1 $2 $3\" = \"--format json --reveal-taus\" ] && [ -f \"$4\" ] || exit 3\ncat {}",
            sample.display()
        ),
    );
    let verdicts = fdr::run(&refines, &model).expect("runs");
    assert_eq!(verdicts, fdr::parse_output(SAMPLE).expect("parses"));

    let broken = fake_refines(&dir, "echo 'license expired' >&2\nexit 2");
    match fdr::run(&broken, &model) {
        Err(FdrError::Failed { stderr, .. }) => assert_eq!(stderr.trim(), "license expired"),
        other => panic!("{other:?}"),
    }
    std::fs::remove_dir_all(&dir).expect("cleanup");
}
