//! The FDR runner.
//!
//! Takes a CSP_M file and FDR's command-line checker `refines`; gives one [`Verdict`] per
//! assertion of the file, in file order, with the counterexample's events named as in ilgen's own
//! checker (hidden events included and marked, so that callers treat both checkers alike).
//!
//! FDR is run as `refines --format json --reveal-taus FILE`. The FDR 4 manual ("The FDR
//! Command-Line Interface") documents `refines FILE...` and machine-readable output (JSON, XML or
//! YAML) chosen with `--format`. The field names below and `--reveal-taus` (which names the events
//! that hiding turned into taus; without them a race counterexample would be taus and `race`)
//! are those existing FDR integrations use; no FDR was at hand to confirm them, so the reader is
//! lenient: ids or names for events, numbers, booleans or words for results. The output read is:
//!
//! ```json
//! { "errors": [], "event_map": { "3": "fork.t1.t2", ... },
//!   "results": [ { "assertion_string": "STOP [T= ...", "result": 0, "visited_states": 12,
//!                  "errors": [],
//!                  "counterexamples": [ { "type": "trace",
//!                      "implementation_behaviour": { "trace": [...], "revealed_trace": [...],
//!                                                    "error_event": 9 } } ] } ] }
//! ```
//!
//! Events in traces are ids of `event_map` (or already names); `result` is 1 (or `true`,
//! `"Passed"`) when the assertion holds, 0 (`false`, `"Failed"`) when it fails, anything else
//! when FDR could not decide it (a [`Verdict::GaveUp`]). A `results` entry that itself holds
//! `results` (one per file) is read through.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::explore::{Step, Verdict, TICK};

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FdrError {
    /// No `refines` on PATH, or not at the path given.
    #[error(
        "FDR's `refines` was not found {}: install FDR 4 from https://cocotec.io/fdr/ (free for \
         academic use) and put its bin directory on PATH, or use ilgen's built-in checker",
        match program { Some(path) => format!("at {}", path.display()), None => "on PATH".into() }
    )]
    NotFound { program: Option<PathBuf> },
    /// `refines` could not be started.
    #[error("could not run {}: {error}", program.display())]
    Start { program: PathBuf, error: String },
    /// `refines` failed without writing results.
    #[error("refines failed ({status}): {}", stderr.trim())]
    Failed { status: String, stderr: String },
    /// The output is not JSON.
    #[error("refines wrote no JSON: {0}")]
    Json(String),
    /// The output is JSON, but not what FDR writes.
    #[error("unexpected refines output: {0}")]
    Shape(String),
    /// FDR rejected the file (syntax or type errors).
    #[error("FDR rejected the file: {}", errors.join("; "))]
    Script { errors: Vec<String> },
    /// FDR could not check one assertion.
    #[error("FDR could not check `{assertion}`: {}", errors.join("; "))]
    Assertion {
        assertion: String,
        errors: Vec<String>,
    },
}

/// `refines` on PATH.
pub fn find() -> Option<PathBuf> {
    locate().ok()
}

/// [`find`], or why not.
pub fn locate() -> Result<PathBuf, FdrError> {
    locate_in(&std::env::var_os("PATH").unwrap_or_default())
}

/// `refines` in the directories of a PATH-style list.
fn locate_in(path: &OsStr) -> Result<PathBuf, FdrError> {
    std::env::split_paths(path)
        .map(|dir| dir.join("refines"))
        .find(|candidate| is_executable(candidate))
        .ok_or(FdrError::NotFound { program: None })
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Checks every assertion of `script` with the `refines` at `refines`.
pub fn run(refines: &Path, script: &Path) -> Result<Vec<Verdict>, FdrError> {
    if !is_executable(refines) {
        return Err(FdrError::NotFound {
            program: Some(refines.to_path_buf()),
        });
    }
    let output = Command::new(refines)
        .args(["--format", "json", "--reveal-taus"])
        .arg(script)
        .output()
        .map_err(|e| FdrError::Start {
            program: refines.to_path_buf(),
            error: e.to_string(),
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    // Results are worth reading whatever the exit status; without them, the status explains.
    match parse_output(&stdout) {
        Err(FdrError::Json(_)) if !output.status.success() => Err(FdrError::Failed {
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }),
        other => other,
    }
}

/// The verdicts in `refines --format json` output (see the module doc for its shape).
pub fn parse_output(json: &str) -> Result<Vec<Verdict>, FdrError> {
    let value: Value = serde_json::from_str(json).map_err(|e| FdrError::Json(e.to_string()))?;
    let mut verdicts = Vec::new();
    collect(&value, &HashMap::new(), &mut verdicts)?;
    Ok(verdicts)
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Reads the results of `value` (an output, or one file's part of it) into `verdicts`.
fn collect(
    value: &Value,
    inherited: &HashMap<String, String>,
    verdicts: &mut Vec<Verdict>,
) -> Result<(), FdrError> {
    let errors = strings(value.get("errors"));
    if !errors.is_empty() {
        return Err(FdrError::Script { errors });
    }
    let mut events = inherited.clone();
    if let Some(map) = value.get("event_map").and_then(Value::as_object) {
        for (id, name) in map {
            let name = name
                .as_str()
                .map_or_else(|| name.to_string(), str::to_string);
            events.insert(id.clone(), name);
        }
    }
    let results = value
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| FdrError::Shape("no `results` list".into()))?;
    for result in results {
        if result.get("assertion_string").is_none() && result.get("results").is_some() {
            collect(result, &events, verdicts)?;
        } else {
            verdicts.push(verdict(result, &events)?);
        }
    }
    Ok(())
}

fn verdict(result: &Value, events: &HashMap<String, String>) -> Result<Verdict, FdrError> {
    let assertion = result
        .get("assertion_string")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    let errors = strings(result.get("errors"));
    if !errors.is_empty() {
        return Err(FdrError::Assertion { assertion, errors });
    }
    let states = result
        .get("visited_states")
        .and_then(Value::as_u64)
        .unwrap_or(0) as usize;
    let passed = match result.get("result") {
        Some(Value::Bool(b)) => Some(*b),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(1) => Some(true),
            Some(0) => Some(false),
            _ => None,
        },
        Some(Value::String(s)) => match s.to_ascii_lowercase().as_str() {
            "passed" | "true" => Some(true),
            "failed" | "false" => Some(false),
            _ => None,
        },
        _ => None,
    };
    Ok(match passed {
        Some(true) => Verdict::Holds { states },
        Some(false) => Verdict::Fails {
            trace: counterexample(result, events)?,
            states,
        },
        None => Verdict::GaveUp { states },
    })
}

/// An event of a trace by name: FDR writes ids into `event_map`, or names.
fn event_name(event: &Value, events: &HashMap<String, String>) -> Result<String, FdrError> {
    let key = match event {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => return Err(FdrError::Shape(format!("{other} is no event"))),
    };
    let name = match events.get(&key) {
        Some(name) => name.clone(),
        None if event.is_string() => key,
        None => {
            return Err(FdrError::Shape(format!(
                "event {key} is not in `event_map`"
            )))
        }
    };
    Ok(match name.as_str() {
        "_tick" | "tick" => TICK.to_string(),
        _ => name,
    })
}

fn is_tau(name: &str) -> bool {
    matches!(name, "τ" | "_tau" | "tau")
}

fn trace(value: Option<&Value>, events: &HashMap<String, String>) -> Result<Vec<String>, FdrError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let all = value
        .as_array()
        .ok_or_else(|| FdrError::Shape("a trace is not a list".into()))?;
    let mut names = Vec::new();
    for event in all {
        let name = event_name(event, events)?;
        if !is_tau(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

/// The first counterexample's steps: the revealed trace with the events missing from the
/// visible trace marked hidden, then the event the specification refused, if any.
fn counterexample(result: &Value, events: &HashMap<String, String>) -> Result<Vec<Step>, FdrError> {
    let Some(first) = result
        .get("counterexamples")
        .and_then(Value::as_array)
        .and_then(|all| all.first())
    else {
        return Ok(Vec::new());
    };
    let behaviour = first.get("implementation_behaviour").ok_or_else(|| {
        FdrError::Shape("a counterexample has no `implementation_behaviour`".into())
    })?;
    let visible = trace(behaviour.get("trace"), events)?;
    let mut steps = Vec::new();
    let mut next_visible = visible.iter().peekable();
    if let Some(revealed) = behaviour.get("revealed_trace") {
        for name in trace(Some(revealed), events)? {
            let hidden = next_visible.peek() != Some(&&name);
            if !hidden {
                next_visible.next();
            }
            steps.push(Step {
                event: name,
                hidden,
            });
        }
    }
    steps.extend(next_visible.map(|name| Step {
        event: name.clone(),
        hidden: false,
    }));
    if let Some(refused) = behaviour.get("error_event").filter(|e| !e.is_null()) {
        steps.push(Step {
            event: event_name(refused, events)?,
            hidden: false,
        });
    }
    Ok(steps)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn refines_is_found_only_as_an_executable_in_a_path_directory() {
        let dir = std::env::temp_dir().join(format!("ilgen-csp-{}-locate", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        let path = std::env::join_paths([Path::new("/nonexistent"), &dir]).expect("a PATH");
        let not_found = Err(FdrError::NotFound { program: None });
        assert_eq!(locate_in(&path), not_found);
        let refines = dir.join("refines");
        std::fs::write(&refines, "#!/bin/sh\n").expect("file");
        assert_eq!(locate_in(&path), not_found, "not executable");
        std::fs::set_permissions(&refines, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(locate_in(&path), Ok(refines));
        assert_eq!(locate_in(OsStr::new("")), not_found);
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
