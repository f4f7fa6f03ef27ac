//! What the text output of `ilgen detect` says about the analysis itself, beside the findings:
//! the race pairs a limit left undecided, the analysis's counts, the replay divergence rate and
//! what became of the fallback schedules.
//!
//! Takes a run's [`CandidatesFile`] (its stats), its replays' [`Counts`], its [`Meta`] (to name sites and objects from the
//! recorded binary, or show ids and addresses when it cannot be read) and the [`Limits`] it ran
//! with; gives text lines starting with `ilgen:`.

use ilgen_analysis::candidates::{self, CandidatesFile, Limits, Names};
use ilgen_binary::Binary;
use ilgen_trace::Meta;

use crate::Counts;

/// `f` given names for the recorded binary's sites and objects (ids and addresses when the
/// binary cannot be read).
pub fn with_names<R>(meta: &Meta, f: impl FnOnce(&Names) -> R) -> R {
    let binary = Binary::load_or_warn(meta, "sites are shown as ids");
    let site = |id| {
        let s = binary.as_ref()?.site(id)?;
        Some(format!(
            "{}:{} in {}",
            s.frame.file, s.frame.line, s.frame.function
        ))
    };
    let object = |addr| binary.as_ref()?.object_name(addr);
    f(&Names {
        site: &site,
        object: &object,
    })
}

/// Race pairs a limit left undecided (listed when `show_all`, else counted in one line), and with
/// `stats` the analysis's counts, the run's replay divergence rate and, if it had fallbacks, what
/// became of them (`replayed`: its candidates' verdicts).
pub fn text(
    meta: &Meta,
    file: &CandidatesFile,
    replayed: &Counts,
    limits: &Limits,
    show_all: bool,
    stats: bool,
) -> String {
    let mut out = String::new();
    let open = &file.stats.not_decided;
    if show_all && !open.is_empty() {
        out.push_str(&with_names(meta, |names| {
            candidates::not_decided_text(&file.stats, names, limits)
        }));
    } else if !open.is_empty() {
        let pairs: u64 = open.iter().map(|n| n.pairs).sum();
        out.push_str(&format!(
            "ilgen: {pairs} race pair(s) on {} object(s) not decided (a limit stopped the \
             search); --show-all lists them with the limit to raise\n",
            open.len()
        ));
    }
    if stats {
        out.push_str("ilgen: analysis:\n");
        out.push_str(&candidates::stats_text(&file.stats));
        out.push_str(&divergence_text(replayed));
        if replayed.fallbacks_replayed + replayed.fallbacks_skipped > 0 {
            out.push_str(&format!(
                "ilgen: replay: {}\n",
                crate::text::fallbacks_text(replayed)
            ));
        }
    }
    out
}

/// The replay divergence rate of one run: replays whose schedule could not be followed (verdict
/// infeasible) of the replays run, one per candidate.
fn divergence_text(c: &Counts) -> String {
    if c.candidates == 0 {
        return "ilgen: replay: no candidate to replay\n".into();
    }
    format!(
        "ilgen: replay: {} of {} replay(s) diverged (divergence rate {:.0}%)\n",
        c.infeasible,
        c.candidates,
        100.0 * c.infeasible as f64 / c.candidates as f64
    )
}
