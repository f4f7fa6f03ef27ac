//! `ilgen export-csp`: the reorder model of a recorded run as a CSP_M file for FDR.
//!
//! Takes a trace directory and which model to write (all surviving variables and deadlocks, one
//! variable, or deadlocks only); gives the CSP_M text on stdout or in a file, named after the
//! program's symbols where the binary is at hand. With `--check` it also decides every assertion
//! with ilgen's own checker and prints each verdict and counterexample on stderr: what FDR's
//! `refines` would answer, for users who do not own FDR.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ilgen_csp::ast::{Assertion, Item};
use ilgen_csp::{Limits, Verdict};
use ilgen_trace::Meta;

use ilgen_analysis::csp::translate::{self, Naming, Target};
use ilgen_analysis::model::{Model, VarId};
use ilgen_analysis::{filter, prepare};
use ilgen_binary::Binary;

use crate::dump;
use crate::error::CliError;
use crate::exit;
use crate::output::print_out;

#[derive(clap::Args, Clone, Debug)]
pub struct ExportArgs {
    /// Trace directory of the recorded run [default: the newest under ./ilgen-out/]
    pub trace_dir: Option<PathBuf>,
    /// Write the CSP_M script to FILE instead of stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Only the race model of one shared variable: its name as reports show it (`y`,
    /// `stats+8`) or its address (`0x4040a8`)
    #[arg(long, value_name = "V", conflicts_with = "deadlock")]
    pub var: Option<String>,
    /// Only the deadlock model (sync events only)
    #[arg(long)]
    pub deadlock: bool,
    /// Also decide every assertion with ilgen's own CSP checker; print verdicts on stderr
    #[arg(long)]
    pub check: bool,
    /// States the checker may explore per assertion before it gives up
    #[arg(long, default_value_t = 1_000_000)]
    pub max_states: usize,
}

/// Runs `ilgen export-csp`: [`exit::CLEAN`], or with `--check` [`exit::FINDINGS`] when an
/// assertion fails (a race or deadlock in the model).
pub fn run(args: &ExportArgs) -> Result<i32, CliError> {
    let dir = dump::trace_dir(args.trace_dir.as_deref())?;
    let trace = crate::dump::open_trace(
        &dir,
        "lower --max-states, export one model (--var, --deadlock), or record a shorter run",
    )?;
    let binary = Binary::load_or_warn(&trace.meta, "objects get generic names");
    let symbol = |addr: u64| binary.as_ref()?.object_name(addr);
    let program = prepare::prepare(trace.threads);
    let (target, model) = if args.deadlock {
        (Target::Deadlock, program.model.restrict(None).0)
    } else if let Some(wanted) = &args.var {
        let var = find_var(&program, wanted, &symbol).ok_or_else(|| {
            CliError::Input(format!(
                "no shared variable `{wanted}` in the trace at {}: name one that `ilgen detect` \
                 reports (or its address in hex)",
                dir.display()
            ))
        })?;
        (Target::Race { var }, program.model.restrict(Some(var)).0)
    } else {
        let (survivors, _) = filter::filter(&program);
        let vars = survivors.iter().map(|s| s.var).collect();
        (Target::All { vars }, program.model.clone())
    };
    let var_name = |v: VarId| symbol(program.vars[v].addr);
    let naming = Naming {
        var: &var_name,
        object: &symbol,
    };
    let mut exported = translate::export(&model, &target, &naming);
    exported
        .script
        .items
        .splice(0..0, header(&trace.meta, &dir, &model));
    let text = ilgen_csp::print(&exported.script);
    match &args.output {
        Some(path) => std::fs::write(path, &text)
            .map_err(|e| CliError::Input(format!("failed to write {}: {e}", path.display())))?,
        None => print_out(&text)?,
    }
    if !args.check {
        return Ok(exit::CLEAN);
    }
    let env = ilgen_csp::typecheck::check(&exported.script)
        .map_err(|e| CliError::Input(format!("the exported model does not type-check: {e}")))?;
    let mut failed = false;
    for (n, assertion) in exported.script.assertions().enumerate() {
        let limits = Limits {
            max_states: args.max_states,
        };
        let verdict = ilgen_csp::check_assertion(&env, assertion, limits)
            .map_err(|e| CliError::Input(format!("checking assertion {}: {e}", n + 1)))?;
        failed |= matches!(verdict, Verdict::Fails { .. });
        eprint!("{}", verdict_text(n + 1, assertion, &verdict));
    }
    Ok(if failed { exit::FINDINGS } else { exit::CLEAN })
}

/// A variable by its reported name or its address.
fn find_var(
    program: &prepare::Program,
    wanted: &str,
    symbol: &dyn Fn(u64) -> Option<String>,
) -> Option<VarId> {
    let addr = wanted
        .strip_prefix("0x")
        .and_then(|h| u64::from_str_radix(h, 16).ok());
    program
        .vars
        .iter()
        .position(|v| Some(v.addr) == addr || symbol(v.addr).is_some_and(|name| name == wanted))
}

/// Comments that say where the model came from and how the threads are named.
fn header(meta: &Meta, dir: &Path, model: &Model) -> Vec<Item> {
    let mut text = format!(
        "ilgen reorder model of {} (trace {}).\nCheck it with FDR: refines <this file>.\n\
         Threads (the paper's numbering; reports say T0, T1, ...):",
        meta.binary,
        dir.display()
    );
    for t in &model.threads {
        let _ = write!(text, "\n  t{} = T{}", t.tid + 1, t.tid);
        if t.tid == 0 {
            text.push_str(" (main)");
        }
    }
    vec![Item::Comment(text)]
}

fn verdict_text(n: usize, assertion: &Assertion, verdict: &Verdict) -> String {
    let what = match assertion {
        Assertion::TraceRefines { .. } => "race assertion",
        Assertion::DeadlockFree { .. } => "deadlock-freedom assertion",
    };
    match verdict {
        Verdict::Holds { states } => format!("assertion {n} ({what}): holds ({states} states)\n"),
        Verdict::GaveUp { states } => {
            format!("assertion {n} ({what}): undecided: gave up after {states} states\n")
        }
        Verdict::Fails { trace, states } => {
            let all: Vec<&str> = trace.iter().map(|s| s.event.as_str()).collect();
            let sync: Vec<&str> = all
                .iter()
                .copied()
                .filter(|e| translate::is_sync_event(e))
                .collect();
            format!(
                "assertion {n} ({what}): fails ({states} states)\n  counterexample: {}\n  sync \
                 events: {}\n",
                all.join(", "),
                sync.join(", ")
            )
        }
    }
}
