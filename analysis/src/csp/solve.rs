//! Solving the reorder model through a CSP checker instead of the native search.
//!
//! Takes the prepared [`Program`] and one target (a surviving variable, or deadlocks) and a
//! [`Checker`]; gives the same [`Solved`] the native solver gives: the restricted model and at most
//! one finding (the checker's counterexample, mapped back by [`counterexample`]), without
//! fallbacks. The whole trace is one model: windows are a device of the native search only.

use std::path::{Path, PathBuf};

use ilgen_csp::ast::Assertion;
use ilgen_csp::{Limits, Verdict};

use super::counterexample::{self, Kind};
use super::translate::{self, Naming, Target};
use crate::filter::Survivor;
use crate::model::Model;
use crate::options::Checker;
use crate::prepare::Program;
use crate::solve::{SolveStats, Solved};

/// Races on the survivor's variable.
pub fn races(program: &Program, survivor: &Survivor, checker: &Checker) -> Result<Solved, String> {
    let (model, _) = program.model.restrict(Some(survivor.var));
    let target = Target::Race { var: survivor.var };
    solve(
        model,
        &target,
        checker,
        &format!("var-{}", survivor.var + 1),
        Kind::Race,
    )
}

/// Deadlocks of the sync-only model.
pub fn deadlocks(program: &Program, checker: &Checker) -> Result<Solved, String> {
    let (model, _) = program.model.restrict(None);
    solve(
        model,
        &Target::Deadlock,
        checker,
        "deadlock",
        Kind::Deadlock,
    )
}

fn solve(
    model: Model,
    target: &Target,
    checker: &Checker,
    stem: &str,
    kind: Kind,
) -> Result<Solved, String> {
    let exported = translate::export(&model, target, &Naming::plain());
    let want = |a: &Assertion| match kind {
        Kind::Race => matches!(a, Assertion::TraceRefines { .. }),
        Kind::Deadlock => matches!(a, Assertion::DeadlockFree { .. }),
    };
    let mut stats = SolveStats::default();
    let verdict = match checker {
        Checker::Builtin { max_states } => {
            let env = ilgen_csp::typecheck::check(&exported.script)
                .map_err(|e| format!("the exported model does not type-check: {e}"))?;
            let assertion = exported
                .script
                .assertions()
                .find(|a| want(a))
                .ok_or("the exported model has no assertion to check")?;
            ilgen_csp::check_assertion(
                &env,
                assertion,
                Limits {
                    max_states: *max_states,
                },
            )
            .map_err(|e| format!("checking the exported model failed: {e}"))?
        }
        Checker::Fdr { refines, dir } => {
            let path = write_script(dir, stem, &ilgen_csp::print(&exported.script))?;
            let results = ilgen_csp::fdr::run(refines, &path).map_err(|e| e.to_string())?;
            let index = exported
                .script
                .assertions()
                .position(want)
                .ok_or("the exported model has no assertion to check")?;
            results.into_iter().nth(index).ok_or_else(|| {
                format!(
                    "FDR gave no result for assertion {} of {}",
                    index + 1,
                    path.display()
                )
            })?
        }
    };
    let findings = match verdict {
        Verdict::Holds { states } => {
            stats.checker_states += states as u64;
            vec![]
        }
        Verdict::GaveUp { states } => {
            stats.checker_states += states as u64;
            stats.checker_gave_up += 1;
            vec![]
        }
        Verdict::Fails { trace, states } => {
            stats.checker_states += states as u64;
            let names: Vec<String> = trace.into_iter().map(|s| s.event).collect();
            vec![counterexample::finding(&exported, &model, &names, kind)?]
        }
    };
    Ok(Solved {
        model,
        findings,
        fallbacks: Vec::new(),
        stats,
        not_decided: None,
    })
}

fn write_script(dir: &Path, stem: &str, text: &str) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    let path = dir.join(format!("{stem}.csp"));
    std::fs::write(&path, text).map_err(|e| format!("failed to write {}: {e}", path.display()))?;
    Ok(path)
}
