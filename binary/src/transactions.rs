//! The transactions `ilgen detect --atomicity` checks: the blocks the program marked, or with
//! `--atomic GLOB` the marked blocks and recorded calls whose function matches.
//!
//! Takes a recorded run, its [`Binary`] (or why it could not be loaded), the GLOBs and whether
//! atomicity violations are wanted at all; gives a [`Selection`] by the sites of `tx_begin`s
//! (`None`: the default, every marked block of a run that recorded no calls), or a message saying
//! what to fix. Which `tx_begin`s and `tx_end`s are calls (`ILGEN_OPTIONS=calls=1`) and which
//! are atomic blocks the site table says (`Site::call`). A GLOB that matches no recorded
//! transaction is warned about on stderr, with the names there are and, when the run recorded no
//! calls, how to record them.

use std::collections::{BTreeMap, BTreeSet};

use ilgen_trace::format::TraceDir;
use ilgen_trace::{Event, SiteId, SyncOp};

use crate::{Binary, BinaryError};

/// Names listed in the warning about a GLOB that matches nothing.
const LISTED: usize = 12;

/// The transactions to check, by the sites of their markers (`ilgen_analysis::Transactions`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// The sites of the `tx_begin`s and `tx_end`s that begin and end recorded calls.
    pub calls: BTreeSet<SiteId>,
    /// With GLOBs: the `tx_begin` sites (of marked blocks and of calls) whose function matches
    /// one; `None`: every marked block.
    pub selected: Option<BTreeSet<SiteId>>,
}

/// The transactions of `trace` to check when `atomicity` is on: without `globs` every marked
/// block (`None` when the run recorded no calls either), with them the marked blocks and calls
/// whose function matches one (a GLOB that matches none is warned about).
pub fn selected(
    trace: &TraceDir,
    binary: &Result<Binary, BinaryError>,
    globs: &[String],
    atomicity: bool,
) -> Result<Option<Selection>, String> {
    let markers: BTreeSet<(SiteId, bool)> = trace
        .threads
        .iter()
        .flat_map(|t| t.events.marks())
        .filter_map(|(_, e)| match e {
            Event::Sync(s) if matches!(s.op, SyncOp::TxBegin | SyncOp::TxEnd) => {
                Some((s.site, s.op == SyncOp::TxBegin))
            }
            _ => None,
        })
        .collect();
    // Without GLOBs the marked blocks are the transactions; only recorded calls need telling apart.
    let calls_recorded = trace.meta.calls && !markers.is_empty();
    if !atomicity || (globs.is_empty() && !calls_recorded) {
        return Ok(None);
    }
    let binary = binary.as_ref().map_err(|e| {
        let why = if globs.is_empty() {
            "telling the run's recorded calls from its atomic blocks"
        } else {
            "--atomic selects transactions by function name, which"
        };
        format!("{why} needs the recorded binary: {e}")
    })?;
    let calls: BTreeSet<SiteId> = markers
        .iter()
        .map(|&(site, _)| site)
        .filter(|&site| binary.site(site).is_some_and(|s| s.call))
        .collect();
    if globs.is_empty() {
        return Ok(Some(Selection {
            calls,
            selected: None,
        }));
    }
    let patterns = globs
        .iter()
        .map(|g| {
            glob::Pattern::new(g).map_err(|e| {
                format!("--atomic `{g}` is not a glob ({e}): use *, ? and [...] on function names")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let begins: BTreeMap<SiteId, &str> = markers
        .iter()
        .filter(|&&(_, begin)| begin)
        .filter_map(|&(site, _)| Some((site, binary.site(site)?.frame.function.as_str())))
        .collect();
    for (g, p) in globs.iter().zip(&patterns) {
        if !begins.values().any(|f| p.matches(f)) {
            eprintln!("{}", unmatched(g, &begins, trace.meta.calls));
        }
    }
    Ok(Some(Selection {
        selected: Some(
            begins
                .into_iter()
                .filter(|(_, f)| patterns.iter().any(|p| p.matches(f)))
                .map(|(site, _)| site)
                .collect(),
        ),
        calls,
    }))
}

/// The warning about GLOB `g`, which matches none of the functions of `begins`.
fn unmatched(g: &str, begins: &BTreeMap<SiteId, &str>, calls: bool) -> String {
    let names: BTreeSet<&str> = begins.values().copied().collect();
    let mut listed: Vec<&str> = names.iter().copied().take(LISTED).collect();
    if names.len() > LISTED {
        listed.push("...");
    }
    let hint = if calls {
        ""
    } else {
        "; the run recorded no calls: record it with ILGEN_OPTIONS=calls=1 to make any function \
         that synchronizes a transaction"
    };
    if listed.is_empty() {
        return format!(
            "ilgen: warning: --atomic `{g}` matches no transaction: the run recorded none{hint}"
        );
    }
    format!(
        "ilgen: warning: --atomic `{g}` matches none of the recorded transactions ({}){hint}",
        listed.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_lists_some_names_and_says_how_to_record_calls() {
        let begins: BTreeMap<SiteId, &str> =
            (0..20).map(|i| (i, ["a", "b"][i as usize % 2])).collect();
        assert_eq!(
            unmatched("dep*", &begins, true),
            "ilgen: warning: --atomic `dep*` matches none of the recorded transactions (a, b)"
        );
        let many: Vec<String> = (0..20).map(|i| format!("f{i:02}")).collect();
        let begins: BTreeMap<SiteId, &str> = many
            .iter()
            .enumerate()
            .map(|(i, f)| (i as SiteId, f.as_str()))
            .collect();
        let text = unmatched("x", &begins, false);
        assert!(
            text.contains("(f00, f01, f02, f03, f04, f05, f06, f07, f08, f09, f10, f11, ...)"),
            "{text}"
        );
        assert!(text.ends_with("record it with ILGEN_OPTIONS=calls=1 to make any function that synchronizes a transaction"), "{text}");
        assert!(unmatched("*", &BTreeMap::new(), false)
            .starts_with("ilgen: warning: --atomic `*` matches no transaction: the run recorded none; the run recorded no calls"));
    }
}
