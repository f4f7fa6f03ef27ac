//! The JSON report (`ilgen detect --format json`, `ilgen replay --format json`).
//!
//! One object, pretty-printed:
//! - `format_version`: [`FORMAT_VERSION`]; any change to the layout bumps it.
//! - `tool`: `"ilgen"`, `tool_version`: the `ilgen` version.
//! - `binary`: the recorded executable.
//! - `runs`: the recorded runs (one, or one per `ilgen detect DIR...` argument, numbered from 1
//!   in that order): `trace_dir`, `chaos_seed` (the run's `chaos=SEED`, or null).
//! - `counts`: `candidates`, `confirmed_races`, `confirmed_deadlocks`, `no_error`, `infeasible`,
//!   `failed`: one per replayed candidate by its replay's verdict; `observed_deadlocks`: deadlocks
//!   the recorded runs themselves ended in; `atomicity_candidates`, `confirmed_atomicity`: the
//!   atomicity violations among the candidates and how many replay confirmed;
//!   `fallbacks_replayed`, `fallbacks_confirmed`: the fallback candidates replayed (each because
//!   no replay before confirmed the race at its two sites; in `candidates` too) and how many
//!   of them replay confirmed, `fallbacks_skipped`: those not replayed (a replay at their two
//!   sites confirmed first; not in `candidates`); `not_replayed`: every race candidate not
//!   replayed, fallbacks among them (the replay of an earlier one at its two sites confirmed their
//!   race; not in `candidates`); summed over the runs.
//! - `findings`: confirmed, deduplicated by kind and source lines across the runs, each with
//!   `kind`, `run` (the run whose candidates, replay and schedule it shows: replay it with
//!   `ilgen replay <runs[run-1].trace_dir>:<candidates[0]>`) and `runs` (every run that predicted
//!   it, ascending), `fingerprint` (16 hex digits, the same for the same finding in every run and
//!   rebuild of unchanged code: the recipe is in [`crate::fingerprint`]), and:
//!   - `"race"`: `candidates` (numbers whose replay found it), `pid`, `replay_dir`, `current` and
//!     `previous` accesses (`tid`, `kind`: `read` | `write` | `atomic_read` | `atomic_write` |
//!     `free` | `destroy`, `addr`, `size`, `location`, `stack`, `locks`: the locks its thread held
//!     when it made the access, each as `holds`' items), `object` (`name`, `offset`, `size` of the
//!     global, or null),
//!     `heap_block` (only for heap memory: `address`, `size`, `thread`, `location`, `stack` of
//!     the block's allocation; the last allocation covering the address, freed since for a race
//!     on freed memory), `threads`, `schedule_steps` (how many steps the schedule that exposed
//!     it has), `schedule` (its last steps, at most `crate::SHOWN_STEPS`: steps `schedule_steps -
//!     len + 1` to `schedule_steps`; `ilgen replay` runs them all), `left_schedule` (only when
//!     the replay left the schedule: `step S of T (why)`);
//!   - `"deadlock"`: `candidates`, `observed` (the recorded run ended in it; `candidates` may
//!     then be empty), `pid`, `replay_dir`, `blocked` (`tid`, `op`, `object`, `object_name`,
//!     `location`, `stack`, `waits_for`, `holds`: `object`, `object_name`, `location`, `stack`),
//!     `cycle` (tids),
//!     `threads`, `schedule_steps`, `schedule`, `left_schedule` (as a race's), `lost_wakeups` (`cond`, `cond_name`, `waiter`, `wait`,
//!     `signaller`, `signal`, `broadcast`);
//!   - `"atomicity"`: `candidates`, `pid`, `replay_dir`, `pattern` (`read_write_read`,
//!     `read_write_write`, `write_read_write`, `write_write_read`, `write_write_write`),
//!     `transaction` (the location it began at), the accesses `e1`, `f`, `e2`, `object`,
//!     `threads`, `schedule_steps`, `schedule`, `left_schedule` (as a race's).
//! - `unconfirmed`: every other replayed candidate: `run`, `candidate`, `predicted` (`race` |
//!   `deadlock` | `atomicity_violation`), `fallback_of` (only for a fallback: the candidate it
//!   stands in for),
//!   `verdict` (`no_error` | `infeasible` | `failed`), `reason`, `locations`.
//! - `not_replayed` (only when there are some): every race candidate not replayed, in candidate
//!   order: `run`, `candidate`, `fallback_of` (only for a fallback), `confirmed_by` (the candidate
//!   of that run whose replay confirmed the race at its two sites: the finding at their lines
//!   lists it), `locations` (its two accesses' sites).
//! - `unjoined` (only when there are some): the threads never joined when the program exited.
//! - `suppressed` (only when there are some): the confirmed findings a suppressions file hid, each
//!   `suppression` (the rule as written, `race:worker`) and `finding` (as in `findings`); they
//!   are not in `findings` and do not make the exit code 66.
//! - `shard` (only in the report of one shard, `ilgen detect --shard I/N --format json`, which
//!   `ilgen merge` reads): `index` (1-based) and `count`, `trace` (xxh3-64 of the trace's
//!   `meta.json`), `build_id`, `analysis` (the options that decide the predictions, as flags),
//!   `candidates` (per candidate, in order: `[rank, unit, n]`, its place in the unsharded
//!   analysis: `ilgen_analysis::shard::Key`);
//!   its candidate numbers, `pid`s and `replay_dir`s are the shard's own (see [`crate::shard`]).
//! - A `location` is `site` (id in the binary's site table, null for thread start and end) and,
//!   when the binary names it, `file`, `line`, `column`, `function` (demangled), `symbol` (the
//!   linkage name, when it differs from `function`) and `inlined` (when the line called into
//!   library code that was inlined there: those frames, each `file`, `line`, `column`,
//!   `function`, optional `symbol`, from the line's call inward); a frame in code that is not
//!   instrumented has a null `site` and `native`: `module` (the path of the shared library or
//!   executable), `offset` (the return address in the module's link-time addresses), and when a
//!   symbol of the module holds it `function` (demangled) and `symbol`. A thread is `tid`, `parent`
//!   (null for main) and `created_at` (the fork's location, or null: the first user frame of the
//!   creator's stack, `std::thread`'s constructor call when libstdc++ forked), `created_stack`
//!   (the frames below it, when replay kept them), and `never_joined: true`
//!   when it was created and neither joined nor detached when the program exited; a schedule
//!   step is `tid`, `op`, optional `peer`, `object`, `object_name`, and `location` (the first
//!   user frame of the stack its replay took it with, else its own site).
//!
//! The JSON Schema is `tests/confirm/Inputs/ilgen-report.schema.json`.
//!
//! Versions:
//! - 1: first format.
//! - 2: `never_joined` on threads, `unjoined`, the `free` access kind (a race on freed memory),
//!   and observed deadlocks (`observed`, `lost_wakeups`, `observed_deadlocks`).
//! - 3: a location's `site` is null when absent (was 4294967295); `op` is one of the names of
//!   `ilgen_trace::OpKind` (spelled as before).
//! - 4: several runs: `runs` replaces `trace_dir`; `run` and `runs` on findings, `run` on
//!   unconfirmed candidates. A location's `function` is demangled, with `symbol` and `inlined`; a
//!   location inlined from a library header is the user's line it was inlined at.
//! - 5: `fingerprint` on findings; `suppressed`; the `destroy` access kind (a race on a destroyed
//!   sync object); schedule steps may name the destroy operations (`mutex_destroy`,
//!   `cond_destroy`, `rwlock_destroy`, `barrier_destroy`). Findings of kind `atomicity`,
//!   `counts.atomicity_candidates` and `counts.confirmed_atomicity`; `predicted` may be
//!   `atomicity_violation`.
//! - 6: `stack` on accesses, blocked threads and held locks: the frames below `location`, each a
//!   location, innermost first (callers, and library code the location's line called, see
//!   `Context::frames`); `locks` on accesses: the locks held (each as `holds`' items). `shard` in
//!   the report of one shard (`ilgen detect --shard I/N`), read by `ilgen merge`.
//! - 7: the `unmap` access kind (a race on unmapped memory: `munmap`, `mremap`, a `MAP_FIXED`
//!   mapping put over the block), which was `free` before.
//! - 8: fallback candidates: `counts.fallbacks_replayed`, `fallbacks_confirmed`,
//!   `fallbacks_skipped`, `fallback_of` on unconfirmed candidates; `counts.candidates` counts
//!   the replayed ones; a shard's `candidates` are `[rank, unit, n]`.
//! - 9: `native` on locations: a frame of uninstrumented code (libstdc++'s
//!   `std::thread::_M_start_thread` below the line that constructed a `std::thread`, its
//!   `execute_native_thread_routine` below a thread's function, libc's `__libc_start_call_main`
//!   below `main`), which `<uninstrumented code>` stood for; `locks` on the previous access of a
//!   race too (the locks its thread held when it made it); a schedule step's `location` is the
//!   first user frame of the stack the replay took it with (at -O0 a lock's `std::lock_guard`
//!   line, which was `gthr-default.h`).
//! - 10: `schedule_steps` on findings; `schedule` holds the schedule's last
//!   `crate::SHOWN_STEPS` steps, not all (a server's 49 findings had made a 471 MB report);
//!   `left_schedule` on atomicity violations too.
//! - 11: the race candidates at one pair of sites are replayed in turn, until one confirms their
//!   race: `counts.not_replayed` and `not_replayed` (the candidates after it); `fallbacks_skipped`
//!   counts the fallbacks among them.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::shard::{Part, ShardInfo};
use crate::Report;

pub const FORMAT_VERSION: u32 = 11;

#[derive(Serialize)]
struct Versioned<'a> {
    format_version: u32,
    tool: &'static str,
    tool_version: &'static str,
    #[serde(flatten)]
    report: &'a Report,
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: Option<&'a ShardInfo>,
}

/// A report read back (its version and tool checked before).
#[derive(Deserialize)]
struct Read {
    #[serde(flatten)]
    report: Report,
    shard: Option<ShardInfo>,
}

pub fn render(report: &Report) -> String {
    render_with(report, None)
}

/// The report of one shard of an analysis (`ilgen detect --shard`): with its `shard` object.
pub fn render_shard(report: &Report, shard: &ShardInfo) -> String {
    render_with(report, Some(shard))
}

fn render_with(report: &Report, shard: Option<&ShardInfo>) -> String {
    let v = Versioned {
        format_version: FORMAT_VERSION,
        tool: "ilgen",
        tool_version: env!("CARGO_PKG_VERSION"),
        report,
        shard,
    };
    format!(
        "{}\n",
        serde_json::to_string_pretty(&v).expect("report serializes")
    )
}

/// Reads a JSON report of this version back (the `file` it came from names it in the error),
/// with its `shard` object if it has one.
pub fn parse(file: &str, text: &str) -> Result<(Report, Option<ShardInfo>), String> {
    #[derive(Deserialize)]
    struct Header {
        format_version: Option<u32>,
        tool: Option<String>,
    }
    let not_ours = || {
        format!("{file} is not a JSON report of ilgen (`ilgen detect --format json` writes one)")
    };
    let header: Header = serde_json::from_str(text).map_err(|e| format!("{}: {e}", not_ours()))?;
    if header.tool.as_deref() != Some("ilgen") {
        return Err(not_ours());
    }
    if header.format_version != Some(FORMAT_VERSION) {
        return Err(format!(
            "{file} is a report of format version {}, this ilgen reads {FORMAT_VERSION}: write it \
             again with this ilgen",
            header
                .format_version
                .map_or("(none)".into(), |v| v.to_string())
        ));
    }
    let read: Read = serde_json::from_str(text).map_err(|e| format!("{}: {e}", not_ours()))?;
    Ok((read.report, read.shard))
}

/// The shard report in `path`, as `ilgen detect --shard I/N --format json` printed it; or a
/// message saying what to pass instead.
pub fn read_shard(path: &Path) -> Result<Part, String> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!("failed to read {file}: {e}; pass the JSON report each shard printed")
    })?;
    let (report, shard) = parse(&file, &text)?;
    let shard = shard.ok_or_else(|| {
        format!(
            "{file} is the report of a whole analysis, not of a shard; merge what `ilgen \
             detect --shard I/N --format json` printed"
        )
    })?;
    Ok(Part {
        file,
        report,
        shard,
    })
}
