//! The transactions `ilgen detect --atomic GLOB` checks, chosen by the name of their function.
//!
//! Takes a run's recorded threads, its [`Binary`] (or why it could not be loaded) and the GLOBs;
//! gives the sites of the selected `tx_begin`s (`None` without GLOBs: every transaction), or a
//! message saying what to fix. A GLOB that matches no recorded transaction is warned about on
//! stderr, with the names there are.

use std::collections::{BTreeMap, BTreeSet};

use ilgen_trace::format::ThreadTrace;
use ilgen_trace::{Event, SiteId, SyncOp};

use crate::{Binary, BinaryError};

/// With `--atomic` GLOBs: the sites of the recorded `tx_begin`s whose function matches one of
/// them (a GLOB that matches none is warned about); without: `None`, every transaction.
pub fn selected(
    threads: &[ThreadTrace],
    binary: &Result<Binary, BinaryError>,
    globs: &[String],
) -> Result<Option<BTreeSet<SiteId>>, String> {
    if globs.is_empty() {
        return Ok(None);
    }
    let binary = binary.as_ref().map_err(|e| {
        format!(
            "--atomic selects transactions by function name, which needs the recorded binary: {e}"
        )
    })?;
    let patterns = globs
        .iter()
        .map(|g| {
            glob::Pattern::new(g).map_err(|e| {
                format!("--atomic `{g}` is not a glob ({e}): use *, ? and [...] on function names")
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let begins: BTreeMap<SiteId, &str> = threads
        .iter()
        .flat_map(|t| t.events.marks())
        .filter_map(|(_, e)| match e {
            Event::Sync(s) if s.op == SyncOp::TxBegin => Some(s.site),
            _ => None,
        })
        .filter_map(|site| Some((site, binary.site(site)?.frame.function.as_str())))
        .collect();
    for (g, p) in globs.iter().zip(&patterns) {
        if !begins.values().any(|f| p.matches(f)) {
            let names: BTreeSet<&str> = begins.values().copied().collect();
            let names: Vec<&str> = names.into_iter().collect();
            eprintln!(
                "ilgen: warning: --atomic `{g}` matches none of the recorded transactions ({})",
                names.join(", ")
            );
        }
    }
    Ok(Some(
        begins
            .into_iter()
            .filter(|(_, f)| patterns.iter().any(|p| p.matches(f)))
            .map(|(site, _)| site)
            .collect(),
    ))
}
