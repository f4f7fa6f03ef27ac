//! One report from the reports of several runs of one binary (`ilgen detect DIR...`).
//!
//! Takes one single-run [`Report`] per run, in run order; gives a report whose runs are numbered
//! from 1 in that order, whose counts are summed, whose findings are deduplicated across runs by
//! kind and source lines (as within one run), each naming the runs that predicted it (a candidate
//! at its lines, whether or not that candidate's replay confirmed it) and the run whose candidates,
//! replay and schedule it shows: the first run that confirmed it; the candidates each run did not
//! replay (another of its own confirmed their race) are listed with their run. [`one_binary`] refuses trace
//! directories that are not distinct runs of one binary. Candidate numbers stay those of
//! their own run, so `ilgen replay RUN_TRACE_DIR:N` replays a finding against the right trace.

use std::path::{Path, PathBuf};

use crate::shard::MergeError;
use crate::{key, Counts, Finding, Key, NotReplayed, Report, Unconfirmed};

/// Refuses traces of different binaries (or one trace twice): their findings cannot be merged,
/// and one directory's candidate files would be written twice at once.
pub fn one_binary(dirs: &[PathBuf]) -> Result<(), MergeError> {
    let mut seen: Vec<(PathBuf, &Path, ilgen_trace::Meta)> = Vec::new();
    for dir in dirs {
        let meta = ilgen_trace::Meta::read(dir).map_err(|e| MergeError(e.to_string()))?;
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
        if let Some((_, first, _)) = seen.iter().find(|(r, _, _)| *r == real) {
            return Err(MergeError(format!(
                "{} and {} are the same trace directory; give each run once",
                first.display(),
                dir.display()
            )));
        }
        if let Some((_, first, m)) = seen.first() {
            if m.build_id != meta.build_id {
                return Err(MergeError(format!(
                    "{} and {} were recorded from different binaries ({} and {}, or the same \
                     path rebuilt); detect runs of one binary together, or each trace alone",
                    first.display(),
                    dir.display(),
                    m.binary,
                    meta.binary
                )));
            }
        }
        seen.push((real, dir, meta));
    }
    Ok(())
}

impl Report {
    /// Joins single-run reports (each made by [`Report::new`]) into one; `parts` must not be empty.
    pub fn merge(parts: Vec<Report>) -> Report {
        let mut merged = Report {
            binary: parts.first().map(|p| p.binary.clone()).unwrap_or_default(),
            runs: Vec::new(),
            counts: Counts::default(),
            findings: Vec::new(),
            unconfirmed: Vec::new(),
            not_replayed: Vec::new(),
            unjoined: Vec::new(),
            suppressed: Vec::new(),
        };
        let mut predicted: Vec<(Key, usize)> = Vec::new();
        for (i, part) in parts.into_iter().enumerate() {
            let run = i + 1;
            merged.runs.extend(part.runs);
            merged.counts.add(&part.counts);
            for mut f in part.findings {
                let (r, rs) = f.runs_mut();
                *r = run;
                *rs = vec![run];
                match merged.findings.iter_mut().find(|g| key(g) == key(&f)) {
                    Some(g) => join(g, f, run),
                    None => merged.findings.push(f),
                }
            }
            for u in part.unconfirmed {
                predicted.push((unconfirmed_key(&u), run));
                merged.unconfirmed.push(Unconfirmed { run, ..u });
            }
            for n in part.not_replayed {
                merged.not_replayed.push(NotReplayed { run, ..n });
            }
            merged.suppressed.extend(part.suppressed);
            for t in part.unjoined {
                if !merged.unjoined.iter().any(|u| u.tid == t.tid) {
                    merged.unjoined.push(t);
                }
            }
        }
        merged.unjoined.sort_by_key(|t| t.tid);
        for (k, run) in predicted {
            if let Some(f) = merged.findings.iter_mut().find(|f| key(f) == k) {
                f.runs_mut().1.push(run);
            }
        }
        for f in &mut merged.findings {
            let runs = f.runs_mut().1;
            runs.sort_unstable();
            runs.dedup();
        }
        merged
    }
}

impl Counts {
    pub(crate) fn add(&mut self, o: &Counts) {
        self.candidates += o.candidates;
        self.confirmed_races += o.confirmed_races;
        self.confirmed_deadlocks += o.confirmed_deadlocks;
        self.atomicity_candidates += o.atomicity_candidates;
        self.confirmed_atomicity += o.confirmed_atomicity;
        self.no_error += o.no_error;
        self.infeasible += o.infeasible;
        self.failed += o.failed;
        self.observed_deadlocks += o.observed_deadlocks;
        self.fallbacks_replayed += o.fallbacks_replayed;
        self.fallbacks_confirmed += o.fallbacks_confirmed;
        self.fallbacks_skipped += o.fallbacks_skipped;
        self.not_replayed += o.not_replayed;
    }
}

impl Finding {
    /// The run it shows and the runs that predicted it.
    fn runs_mut(&mut self) -> (&mut usize, &mut Vec<usize>) {
        match self {
            Finding::Race(r) => (&mut r.run, &mut r.runs),
            Finding::Deadlock(d) => (&mut d.run, &mut d.runs),
            Finding::Atomicity(a) => (&mut a.run, &mut a.runs),
        }
    }
}

/// Adds run `run`'s `f` to the equal finding `g` of an earlier run: `g` keeps its run's replay,
/// unless it is a deadlock only observed, which `f`'s replay then shows.
fn join(g: &mut Finding, f: Finding, run: usize) {
    if let (Finding::Deadlock(d), Finding::Deadlock(e)) = (&mut *g, &f) {
        if d.candidates.is_empty() && !e.candidates.is_empty() {
            d.run = run;
            d.candidates.clone_from(&e.candidates);
            d.replay_dir.clone_from(&e.replay_dir);
            d.schedule.clone_from(&e.schedule);
        }
    }
    g.runs_mut().1.push(run);
}

/// The key of the finding an unconfirmed candidate predicted.
fn unconfirmed_key(u: &Unconfirmed) -> Key {
    (u.predicted, u.locations.iter().map(|l| l.key()).collect())
}
