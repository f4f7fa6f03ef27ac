//! `ilgen replay --gdb / --lldb / --print-env`: one candidate's replay under a debugger.
//!
//! Takes the candidate, its schedule file, the recorded run and its binary; gives, in the replay's
//! output directory, `session.json` (the finding with source lines, the schedule as text, the
//! threads' creation sites: what the `ilgen` debugger commands show) and the debugger scripts of
//! `tools/debug/` (built into ilgen, so a replay never depends on where ilgen was installed), then
//! replaces this process with gdb or lldb, or prints the environment and command line that
//! reproduce the replay. The scripts break on the runtime's hooks (`rt/src/replay/debug.rs`,
//! `rt/src/replay/report.rs`) and select the user's frame.

use std::fmt::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use ilgen_analysis::candidates::{self, AccessSide, Candidate, Names, Step};
use ilgen_binary::Binary;
use ilgen_confirm::run;
use ilgen_report::Context;
use ilgen_trace::{known_site, site_text, Meta, SiteId, ThreadId};
use serde_json::{json, Value};

use crate::error::CliError;

/// The scripts, written next to `session.json`; the gdb and lldb ones import the common one.
const SCRIPTS: [(&str, &str); 3] = [
    (
        "ilgen_common.py",
        include_str!("../../tools/debug/ilgen_common.py"),
    ),
    (
        "ilgen_gdb.py",
        include_str!("../../tools/debug/ilgen_gdb.py"),
    ),
    (
        "ilgen_lldb.py",
        include_str!("../../tools/debug/ilgen_lldb.py"),
    ),
];

/// The file the scripts read (`ilgen load FILE` names another one).
pub const SESSION_FILE: &str = "session.json";

/// Which access the replay stops at first.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopAt {
    /// Before the first access of the race, in its thread (then `continue` reaches the second)
    First,
    /// Where the finding is reported: the second access of a race, or the deadlock
    Finding,
    /// When the schedule's first step is taken, in its thread (then `ilgen step-sync`)
    Start,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Debugger {
    Gdb,
    Lldb,
    /// Print the environment and command line instead of starting a debugger.
    PrintEnv,
}

/// One candidate of a recorded run, ready to debug.
pub struct Session<'a> {
    pub meta: &'a Meta,
    pub binary: &'a Binary,
    pub ctx: &'a Context<'a>,
    pub number: usize,
    pub candidate: &'a Candidate,
    pub schedule: &'a Path,
    pub out_dir: &'a Path,
}

fn site_json(ctx: &Context, site: Option<SiteId>) -> Value {
    match ctx.location(site).source {
        Some(s) => json!({
            "site": site,
            "file": s.file,
            "line": s.line,
            "function": s.function,
            "where": format!("{}:{} in {}", s.file, s.line, s.function),
        }),
        None => json!({ "site": site, "where": site_text(site) }),
    }
}

fn access_json(ctx: &Context, a: &AccessSide) -> Value {
    let mut v = site_json(ctx, Some(a.site));
    v["tid"] = json!(a.tid);
    v["access"] = json!(a.access.text());
    v
}

impl Session<'_> {
    fn names<T>(&self, f: impl FnOnce(&Names) -> T) -> T {
        let site = |id: SiteId| {
            let s = self.binary.site(id)?;
            Some(format!(
                "{}:{} in {}",
                s.frame.file, s.frame.line, s.frame.function
            ))
        };
        let object = |addr| self.binary.object_name(addr);
        f(&Names {
            site: &site,
            object: &object,
        })
    }

    fn object(&self, addr: u64) -> String {
        match self.binary.object_name(addr) {
            Some(name) => format!("{name} ({addr:#x})"),
            None => format!("{addr:#x}"),
        }
    }

    fn step_json(&self, s: &Step) -> Value {
        json!({ "tid": s.tid, "text": self.names(|n| candidates::step_text(s, n)) })
    }

    /// What `session.json` holds.
    fn json(&self) -> Value {
        let (kind, title, body, schedule) = match self.candidate {
            Candidate::Race {
                object,
                accesses,
                schedule,
                ..
            } => (
                "race",
                format!(
                    "data race on {} ({} bytes)",
                    self.object(object.addr),
                    object.len
                ),
                json!({
                    "first": access_json(self.ctx, &accesses[0]),
                    "second": access_json(self.ctx, &accesses[1]),
                }),
                schedule,
            ),
            Candidate::Deadlock { blocked, schedule } => (
                "deadlock",
                "deadlock".to_owned(),
                json!({ "blocked": blocked.iter().map(|b| {
                    let mut v = site_json(self.ctx, b.site);
                    v["tid"] = json!(b.tid);
                    v["op"] = json!(b.op);
                    v["object"] = json!(b.object.map(|o| self.object(o)));
                    v
                }).collect::<Vec<_>>() }),
                schedule,
            ),
            Candidate::Atomicity {
                object,
                accesses,
                pattern,
                schedule,
                ..
            } => (
                "atomicity",
                format!(
                    "atomicity violation on {} ({} bytes), {}",
                    self.object(object.addr),
                    object.len,
                    pattern.text()
                ),
                json!({
                    "first": access_json(self.ctx, &accesses[0]),
                    "other": access_json(self.ctx, &accesses[1]),
                    "second": access_json(self.ctx, &accesses[2]),
                }),
                schedule,
            ),
        };
        let mut tids: Vec<ThreadId> = schedule.steps().map(|s| s.tid).collect();
        tids.sort_unstable();
        tids.dedup();
        let threads: Vec<Value> = tids
            .iter()
            .map(|&tid| {
                let created = self.ctx.forks.get(&tid).map(|&(parent, site)| {
                    let at = site_json(self.ctx, known_site(site));
                    format!("T{parent} at {}", at["where"].as_str().unwrap_or(""))
                });
                json!({ "tid": tid, "created_by": created })
            })
            .collect();
        // The program's files: a debugger's frame in one of them is the user's.
        let mut sources: Vec<String> = schedule
            .steps()
            .map(|s| s.site)
            .chain(self.ctx.forks.values().map(|&(_, site)| known_site(site)))
            .chain(match self.candidate {
                Candidate::Race { accesses, .. } => {
                    accesses.iter().map(|a| Some(a.site)).collect::<Vec<_>>()
                }
                Candidate::Deadlock { blocked, .. } => blocked.iter().map(|b| b.site).collect(),
                Candidate::Atomicity { accesses, .. } => {
                    accesses.iter().map(|a| Some(a.site)).collect::<Vec<_>>()
                }
            })
            .filter_map(|site| Some(self.binary.site(site?)?.frame.file.clone()))
            .collect();
        sources.sort_unstable();
        sources.dedup();
        let mut v = json!({
            "candidate": self.number,
            "kind": kind,
            "title": title,
            "binary": self.meta.binary,
            "prefix_steps": schedule.prefix_steps,
            "steps": schedule.steps().map(|s| self.step_json(&s)).collect::<Vec<_>>(),
            "threads": threads,
            "sources": sources,
        });
        if let (Some(v), Some(b)) = (v.as_object_mut(), body.as_object()) {
            v.extend(b.clone());
        }
        v
    }

    /// `ILGEN_OPTIONS` of the replay: no divergence while the user is stopped, a program being
    /// debugged is not stopped after its race, and the first access's stop when asked.
    fn options(&self, stop_at: StopAt) -> Result<String, CliError> {
        let mut o = run::options(self.meta, self.schedule, self.out_dir)?;
        o.push_str(":replay_timeout_ms=3600000:verdict_grace_ms=0");
        if stop_at == StopAt::First {
            // A race's first access, an atomicity violation's e1.
            let first = match self.candidate {
                Candidate::Race { accesses, .. } => accesses[0],
                Candidate::Atomicity { accesses, .. } => accesses[0],
                Candidate::Deadlock { .. } => {
                    return Err(CliError::Input(format!(
                        "candidate {} is a deadlock: --stop-at first needs a race (a deadlock \
                         replay stops when the last thread blocks)",
                        self.number
                    )))
                }
            };
            let _ = write!(o, ":stop_at={},{}", first.site, first.tid);
        }
        Ok(o)
    }

    /// Writes `session.json` and the scripts into the output directory.
    fn write_files(&self) -> Result<(), CliError> {
        let write = |name: &str, text: &str| {
            let path = self.out_dir.join(name);
            std::fs::write(&path, text)
                .map_err(|e| CliError::Input(format!("failed to write {}: {e}", path.display())))
        };
        std::fs::create_dir_all(self.out_dir).map_err(|e| {
            CliError::Input(format!("failed to create {}: {e}", self.out_dir.display()))
        })?;
        let session = serde_json::to_string_pretty(&self.json())
            .map_err(|e| CliError::Input(format!("failed to write {SESSION_FILE}: {e}")))?;
        write(SESSION_FILE, &(session + "\n"))?;
        for (name, text) in SCRIPTS {
            write(name, text)?;
        }
        Ok(())
    }

    fn script(&self, name: &str) -> PathBuf {
        self.out_dir.join(name)
    }

    /// Starts the debugger (replacing this process: it returns only an error), or prints the
    /// environment and command line.
    pub fn start(
        &self,
        debugger: Debugger,
        stop_at: StopAt,
        extra: &[String],
    ) -> Result<(), CliError> {
        let options = self.options(stop_at)?;
        self.write_files()?;
        let (binary, args) = run::program(self.meta);
        let session = self.script(SESSION_FILE);
        // `ilgen step-sync` before the program runs starts it and stops at its first step.
        let run_command = match stop_at {
            StopAt::Start => "ilgen step-sync",
            StopAt::First | StopAt::Finding => "run",
        };
        let mut cmd = match debugger {
            Debugger::Gdb | Debugger::PrintEnv => {
                let mut c = Command::new("gdb");
                c.arg("-q")
                    .arg("-ex")
                    .arg(format!("set environment {}={options}", run::OPTIONS_VAR))
                    .arg("-ex")
                    .arg(format!("source {}", self.script("ilgen_gdb.py").display()))
                    .arg("-ex")
                    .arg(format!("ilgen load {}", session.display()))
                    .arg("-ex")
                    .arg(run_command)
                    .args(extra)
                    .arg("--args")
                    .arg(&binary)
                    .args(&args);
                c
            }
            Debugger::Lldb => {
                let mut c = Command::new("lldb-19");
                c.arg("--no-lldbinit")
                    .arg("-o")
                    .arg(format!(
                        "settings set target.env-vars {}={options}",
                        run::OPTIONS_VAR
                    ))
                    .arg("-o")
                    .arg(format!(
                        "command script import {}",
                        self.script("ilgen_lldb.py").display()
                    ))
                    .arg("-o")
                    .arg(format!("ilgen load {}", session.display()))
                    .arg("-o")
                    .arg(run_command)
                    .args(extra)
                    .arg("--")
                    .arg(&binary)
                    .args(&args);
                c
            }
        };
        cmd.current_dir(&self.meta.cwd);
        if debugger == Debugger::PrintEnv {
            let quoted: Vec<String> = std::iter::once(binary.display().to_string())
                .chain(args.iter().cloned())
                .map(|a| shell_quote(&a))
                .collect();
            crate::output::print_out(&format!(
                "cd {}\n{}={options}\nexport {}\n{}\n# under gdb: source {} and `ilgen load {}`\n",
                shell_quote(&self.meta.cwd),
                run::OPTIONS_VAR,
                run::OPTIONS_VAR,
                quoted.join(" "),
                self.script("ilgen_gdb.py").display(),
                session.display()
            ))?;
            return Ok(());
        }
        let name = if debugger == Debugger::Lldb {
            "lldb-19"
        } else {
            "gdb"
        };
        let e = ilgen_confirm::guard::unblocked(&mut cmd).exec();
        Err(CliError::Input(format!(
            "failed to start {name}: {e}; is it installed (`make deps`)?"
        )))
    }
}

/// `s` as one POSIX shell word.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=,:+".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("/a/b-c.1"), "/a/b-c.1");
        assert_eq!(shell_quote("two words"), "'two words'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
