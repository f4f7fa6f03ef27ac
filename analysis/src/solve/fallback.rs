//! Fallbacks: other witnessed race pairs at the two sites of a race candidate, kept in reserve.
//!
//! Takes, from [`super::races_with`], the race pairs whose two sites already have a candidate of
//! the cut path; gives up to [`Options::fallbacks`](crate::Options::fallbacks) [`Fallback`]s per
//! such candidate: other dynamic instances of the same two sites, each with its own cut witness.
//!
//! Why: a candidate's schedule may not replay (its thread reads a value the model does not see
//! and goes elsewhere), while another instance of the same two sites, reached through other sync
//! events, does. Replay (`ilgen-confirm`) tries a candidate's fallbacks in turn, each only when
//! no replay before it confirmed the candidate. Of the pairs at the sites, those whose threads
//! differ from every pair kept for them, or that share neither access with one, are tried first:
//! their schedules differ most. The cut tries per candidate are bounded ([`TRIES`] per fallback
//! wanted), so that sites hit a million times cost little.

use ilgen_trace::SiteId;
use rustc_hash::FxHashMap;

use super::cut::{self, Cuts};
use crate::finding::Finding;
use crate::model::At;

/// Cut tries per fallback wanted, of one candidate.
const TRIES: usize = 4;

/// A race pair kept for the candidate `of` (its index among the findings): replayed only if the
/// candidate's own schedule, and every fallback of it before this one, did not confirm it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fallback {
    pub of: usize,
    pub finding: Finding,
}

/// The reserves of one variable's candidates, by their two sites (sorted).
pub(super) struct Reserves {
    wanted: usize,
    /// Looked up for every race pair of the variable: FxHash rather than SipHash.
    by_sites: FxHashMap<Vec<SiteId>, usize>,
    reserves: Vec<Reserve>,
    found: Vec<Fallback>,
    /// Pairs at the sites of a candidate that did not become a fallback of it.
    same_sites: u64,
}

struct Reserve {
    /// The candidate's index among the findings.
    of: usize,
    /// The candidate's pair, then its fallbacks' pairs.
    kept: Vec<(At, At)>,
    tries: usize,
    /// Pairs that look like a kept one, tried after the others ([`Reserves::finish`]).
    deferred: Vec<(At, At)>,
}

impl Reserve {
    fn wants(&self, wanted: usize) -> bool {
        self.kept.len() <= wanted && self.tries > 0
    }

    /// Its threads are new to the reserve, or it shares no access with a kept pair.
    fn differs(&self, (x, y): (At, At)) -> bool {
        let threads = |(a, b): (At, At)| (a.thread.min(b.thread), a.thread.max(b.thread));
        let other_threads = self.kept.iter().all(|&p| threads(p) != threads((x, y)));
        let other_accesses = self
            .kept
            .iter()
            .all(|&(a, b)| ![a, b].contains(&x) && ![a, b].contains(&y));
        other_threads || other_accesses
    }
}

impl Reserves {
    /// Reserves of up to `wanted` fallbacks per candidate.
    pub(super) fn new(wanted: usize) -> Reserves {
        Reserves {
            wanted,
            by_sites: FxHashMap::default(),
            reserves: Vec::new(),
            found: Vec::new(),
            same_sites: 0,
        }
    }

    /// The pair at `sites` became the candidate `of`.
    pub(super) fn open(&mut self, sites: Vec<SiteId>, of: usize, pair: (At, At)) {
        self.by_sites.insert(sites, self.reserves.len());
        self.reserves.push(Reserve {
            of,
            kept: vec![pair],
            tries: TRIES * self.wanted,
            deferred: Vec::new(),
        });
    }

    /// Whether some candidate still wants fallbacks (and has tries left).
    pub(super) fn wanting(&self) -> bool {
        self.reserves.iter().any(|r| r.wants(self.wanted))
    }

    /// Takes `pair` if its `sites` have a candidate: tries it as a fallback (now, or deferred to
    /// [`Reserves::finish`]) or counts it as a pair whose sites had one. False: no candidate has
    /// these sites.
    pub(super) fn offer(&mut self, cuts: &mut Cuts, sites: &[SiteId], pair: (At, At)) -> bool {
        let Some(&r) = self.by_sites.get(sites) else {
            return false;
        };
        let reserve = &mut self.reserves[r];
        if !reserve.wants(self.wanted) {
            self.same_sites += 1;
        } else if reserve.differs(pair) {
            self.try_pair(cuts, r, pair);
        } else if reserve.deferred.len() < reserve.tries {
            reserve.deferred.push(pair);
        } else {
            self.same_sites += 1;
        }
        true
    }

    /// Tries the deferred pairs of every candidate that still wants fallbacks; gives the
    /// fallbacks by candidate, each candidate's in the order they were found, and the count of
    /// the pairs offered that are none.
    pub(super) fn finish(mut self, cuts: &mut Cuts) -> (Vec<Fallback>, u64) {
        for r in 0..self.reserves.len() {
            for pair in std::mem::take(&mut self.reserves[r].deferred) {
                if self.reserves[r].wants(self.wanted) {
                    self.try_pair(cuts, r, pair);
                } else {
                    self.same_sites += 1;
                }
            }
        }
        self.found.sort_by_key(|f| f.of);
        (self.found, self.same_sites)
    }

    fn try_pair(&mut self, cuts: &mut Cuts, r: usize, (x, y): (At, At)) {
        let reserve = &mut self.reserves[r];
        reserve.tries -= 1;
        match cuts.race(x, y) {
            cut::Verdict::Witness(schedule) => {
                reserve.kept.push((x, y));
                self.found.push(Fallback {
                    of: reserve.of,
                    finding: Finding::Race {
                        first: x,
                        second: y,
                        schedule,
                    },
                });
            }
            cut::Verdict::Excluded | cut::Verdict::Unknown => self.same_sites += 1,
        }
    }
}
