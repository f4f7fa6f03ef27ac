//! The reports of the shards of one analysis (`ilgen detect --shard I/N`), and their merge into the
//! report of the unsharded run (`ilgen merge`).
//!
//! Takes the shards' JSON reports, each with its [`ShardInfo`] (which shard of how many, of which
//! trace and binary, with which analysis options, and the unsharded position of each of its
//! candidates); gives one [`Report`] equal to the one `ilgen detect` gives without `--shard`:
//! candidates renumbered to their unsharded numbers (and the candidates fallbacks stand in for),
//! findings deduplicated across the shards and
//! in the order of the candidates that first confirmed them (after the deadlock the recorded run
//! ended in, which shard 1 reports), unconfirmed candidates and those not replayed (each naming the
//! candidate that confirmed its race) in candidate order, counts summed. A shard replays what the
//! unsharded run does: the analysis gives every race candidate at one pair of sites to one shard
//! (`ilgen_analysis::shard`), and replay tries them in turn. The
//! replays stay where the shards ran them: `pid` and `replay_dir` are those of the shard's replay
//! (shard-local numbering in the directory name). A [`MergeError`] refuses shards of different
//! traces, binaries or options, and a set with a shard missing or given twice.

use std::collections::BTreeMap;
use std::path::Path;

use ilgen_analysis::shard::{Key, Shard};
use ilgen_trace::meta::{FileSum, META_FILE};
use serde::{Deserialize, Serialize};

use crate::{key, Finding, Report};

/// What a shard's JSON report says about the shard (its `shard` object).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ShardInfo {
    /// 1-based, of `count`.
    pub index: usize,
    pub count: usize,
    /// The trace analysed: the xxh3-64 of its `meta.json` (the same on every copy of the trace).
    pub trace: String,
    /// The recorded binary's build id.
    pub build_id: String,
    /// The options that decide what the analysis predicts, as `ilgen detect` flags.
    pub analysis: String,
    /// The unsharded position of each of the shard's candidates, in the shard's candidate order.
    pub candidates: Vec<Key>,
}

impl ShardInfo {
    /// Of `shard` of the analysis of the trace in `trace_dir` (recorded from `build_id`), with
    /// the `analysis` options, which found candidates at `candidates`.
    pub fn new(
        shard: Shard,
        trace_dir: &Path,
        build_id: &str,
        analysis: String,
        candidates: Vec<Key>,
    ) -> Result<ShardInfo, MergeError> {
        let meta = trace_dir.join(META_FILE);
        let bytes = std::fs::read(&meta)
            .map_err(|e| MergeError(format!("failed to read {}: {e}", meta.display())))?;
        Ok(ShardInfo {
            index: shard.index,
            count: shard.count,
            trace: FileSum::of(&bytes).xxh3,
            build_id: build_id.to_owned(),
            analysis,
            candidates,
        })
    }
}

/// Why shard reports (or trace directories detected together) cannot be merged.
#[derive(Debug, PartialEq, Eq)]
pub struct MergeError(pub String);

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MergeError {}

/// One shard's report, and the file it came from (named in errors).
pub struct Part {
    pub file: String,
    pub report: Report,
    pub shard: ShardInfo,
}

impl Report {
    /// The report of the whole analysis from the reports of all its shards, in any order.
    pub fn merge_shards(mut parts: Vec<Part>) -> Result<Report, MergeError> {
        check_set(&mut parts)?;
        // Sorting every shard's keys gives the unsharded candidate order.
        let mut all: Vec<(Key, usize, usize)> = Vec::new();
        for (p, part) in parts.iter().enumerate() {
            // Replayed or not (an earlier candidate at its two sites confirmed their race).
            let c = &part.report.counts;
            let listed = c.candidates + c.not_replayed;
            if part.shard.candidates.len() != listed {
                return Err(MergeError(format!(
                    "{} lists {} candidate positions for {listed} candidates; it was not written \
                     by `ilgen detect --shard`, or was edited: run that shard again",
                    part.file,
                    part.shard.candidates.len(),
                )));
            }
            all.extend(
                part.shard
                    .candidates
                    .iter()
                    .enumerate()
                    .map(|(n, &k)| (k, p, n)),
            );
        }
        all.sort_unstable();
        let mut number: Vec<Vec<usize>> = parts
            .iter()
            .map(|p| vec![0; p.shard.candidates.len()])
            .collect();
        for (global, &(_, p, n)) in all.iter().enumerate() {
            number[p][n] = global + 1;
        }
        let first = parts[0].report.clone();
        let mut merged = Report {
            findings: Vec::new(),
            unconfirmed: Vec::new(),
            not_replayed: Vec::new(),
            suppressed: Vec::new(),
            counts: Default::default(),
            ..first
        };
        // (first candidate, shard, position in the shard's findings): the unsharded order of
        // first confirmation; an observed deadlock has no candidate and comes first.
        let mut findings: Vec<((usize, usize, usize), Finding)> = Vec::new();
        for (p, part) in parts.into_iter().enumerate() {
            let renumber = |n: usize| number[p].get(n.wrapping_sub(1)).copied();
            merged.counts.add(&part.report.counts);
            for (i, mut f) in part.report.findings.into_iter().enumerate() {
                let candidates = candidates_mut(&mut f);
                for n in candidates.iter_mut() {
                    *n = renumber(*n).ok_or_else(|| unknown(&part.file, *n))?;
                }
                findings.push(((candidates.first().copied().unwrap_or(0), p, i), f));
            }
            for mut u in part.report.unconfirmed {
                u.candidate =
                    renumber(u.candidate).ok_or_else(|| unknown(&part.file, u.candidate))?;
                if let Some(n) = u.fallback_of {
                    u.fallback_of = Some(renumber(n).ok_or_else(|| unknown(&part.file, n))?);
                }
                merged.unconfirmed.push(u);
            }
            for mut n in part.report.not_replayed {
                for c in [&mut n.candidate, &mut n.confirmed_by]
                    .into_iter()
                    .chain(n.fallback_of.as_mut())
                {
                    *c = renumber(*c).ok_or_else(|| unknown(&part.file, *c))?;
                }
                merged.not_replayed.push(n);
            }
            merged.suppressed.extend(part.report.suppressed);
        }
        findings.sort_by_key(|(order, _)| *order);
        for (_, f) in findings {
            match merged.findings.iter_mut().find(|g| key(g) == key(&f)) {
                Some(g) => join(g, f),
                None => merged.findings.push(f),
            }
        }
        merged.unconfirmed.sort_by_key(|u| u.candidate);
        merged.not_replayed.sort_by_key(|n| n.candidate);
        Ok(merged)
    }
}

/// Sorts `parts` by shard index after checking that they are the whole set of shards of one
/// analysis.
fn check_set(parts: &mut [Part]) -> Result<(), MergeError> {
    let Some(first) = parts.first() else {
        return Err(MergeError(
            "ilgen merge needs the JSON reports of every shard".into(),
        ));
    };
    let (a, s) = (&first.file, &first.shard);
    for part in parts.iter() {
        let (b, t) = (&part.file, &part.shard);
        let differ = if t.build_id != s.build_id || part.report.binary != first.report.binary {
            Some(format!(
                "of different binaries ({} and {})",
                first.report.binary, part.report.binary
            ))
        } else if t.trace != s.trace {
            Some("of different traces (recorded runs) of one binary".to_owned())
        } else if t.analysis != s.analysis {
            Some(format!(
                "analysed with different options (`{}` and `{}`)",
                s.analysis, t.analysis
            ))
        } else if t.count != s.count {
            Some(format!("of {} and of {} shards", s.count, t.count))
        } else {
            None
        };
        if let Some(differ) = differ {
            return Err(MergeError(format!(
                "{a} and {b} are shards {differ}; merge the shards of one `ilgen detect --shard \
                 I/N` run of one trace"
            )));
        }
    }
    let mut seen: BTreeMap<usize, &str> = BTreeMap::new();
    for part in parts.iter() {
        if let Some(other) = seen.insert(part.shard.index, &part.file) {
            return Err(MergeError(format!(
                "{other} and {} are both shard {}/{}; give each shard once",
                part.file, part.shard.index, s.count
            )));
        }
    }
    let missing: Vec<String> = (1..=s.count)
        .filter(|i| !seen.contains_key(i))
        .map(|i| format!("{i}/{}", s.count))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError(format!(
            "shard {} missing: merge the reports of all {} shards (run `ilgen detect --shard I/{} \
             --format json` for each missing I)",
            missing.join(", "),
            s.count,
            s.count
        )));
    }
    parts.sort_by_key(|p| p.shard.index);
    Ok(())
}

fn unknown(file: &str, n: usize) -> MergeError {
    MergeError(format!(
        "{file} names candidate {n}, which it does not list; run that shard again"
    ))
}

fn candidates_mut(f: &mut Finding) -> &mut Vec<usize> {
    match f {
        Finding::Race(r) => &mut r.candidates,
        Finding::Deadlock(d) => &mut d.candidates,
        Finding::Atomicity(a) => &mut a.candidates,
    }
}

/// Adds `f`'s candidates to the equal finding `g` that an earlier candidate confirmed (or the
/// recorded run observed: then `g` shows `f`'s replay, as [`Report::add`] does).
fn join(g: &mut Finding, mut f: Finding) {
    if let (Finding::Deadlock(d), Finding::Deadlock(e)) = (&mut *g, &f) {
        if d.candidates.is_empty() {
            d.replay_dir.clone_from(&e.replay_dir);
            d.schedule.clone_from(&e.schedule);
        }
    }
    let more = std::mem::take(candidates_mut(&mut f));
    let candidates = candidates_mut(g);
    candidates.extend(more);
    candidates.sort_unstable();
    candidates.dedup();
}
