//! Exit codes of the `ilgen` command, documented in README and `--help`.
//!
//! Takes nothing; gives the named codes every subcommand returns, so that CI scripts can tell a
//! clean run from findings, bad input and replay divergence.

/// Nothing found (or the command did what it was asked).
pub const CLEAN: i32 = 0;
/// Findings reported (candidates with `--no-replay`, confirmed findings otherwise). TSan's default.
pub const FINDINGS: i32 = 66;
/// Usage or input error: bad flags, an unreadable, truncated, foreign or wrong-version trace.
pub const INPUT_ERROR: i32 = 2;
/// `ilgen replay` only: the schedule could not be followed (the program took another path), or
/// the replay left no outcome (timeout, crash). `ilgen detect` counts such candidates as
/// infeasible or failed and exits by its confirmed findings.
pub const DIVERGED: i32 = 3;
/// `ilgen run`: the time limit stopped the program (timeout(1)'s code).
pub const TIMEOUT: i32 = 124;
/// `ilgen run`: the program exists but could not be started (the shell's code).
pub const CANNOT_RUN: i32 = 126;
/// `ilgen run`: the program was not found (the shell's code).
pub const NOT_FOUND: i32 = 127;

/// `ilgen detect` stopped by signal `sig` during its replays, with nothing confirmed before: the
/// shell's code for a command killed by that signal (130 for SIGINT, 143 for SIGTERM), so that no
/// script takes the cut-short run for a clean one. With a confirmed finding it exits
/// [`FINDINGS`], after printing the report.
pub fn stopped(sig: i32) -> i32 {
    128 + sig
}
