//! Which part of one analysis a shard does (`ilgen detect --shard I/N`).
//!
//! Takes `I/N` (1 ≤ I ≤ N) and, per unit of work, the pairs of sites its race candidates can be
//! at; gives a [`Shard`] and the units that are its own ([`Shard::units`]). A unit is what
//! [`crate::analyze_shard`] solves on its own: the races of one surviving variable, the deadlocks,
//! the atomicity violations. Replay tries the race candidates at one pair of sites in turn, on
//! whichever objects they are (`ilgen-confirm`), so the units whose candidates can share a pair
//! form one group, and a group is done by one shard: then each shard replays exactly what the
//! unsharded run replays of its candidates. Group `g` (numbered in the order of its first unit,
//! units in report order) belongs to shard `g mod N + 1`: every shard derives the same units and
//! groups from the same trace and options, so the N shards together do each unit exactly once,
//! and neighbouring variables (often alike in cost) go to different shards.

use std::collections::HashMap;

use ilgen_trace::SiteId;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: usize,
    pub count: usize,
}

/// Where a candidate stands in the unsharded analysis: its rank (0, or n for the n-th fallback
/// of a race candidate), the unit that found it and its position among that unit's candidates of
/// that rank. Sorting the keys of all shards gives the unsharded order.
pub type Key = (usize, usize, usize);

/// The pairs of sites a unit's race candidates can be at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sites {
    /// These pairs (each sorted): those of the race pairs the filter left.
    Pairs(Vec<[SiteId; 2]>),
    /// Any pair of these sites: the filter did not store every race pair it left.
    Any(Vec<SiteId>),
}

impl Shard {
    /// The whole analysis as one shard.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// Parses `I/N`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("--shard takes I/N with 1 <= I <= N (e.g. 2/8), not `{text}`");
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The units of `count` that are this shard's, in report order; `sites` gives what each
    /// unit's race candidates can be at (asked only when there are several shards).
    pub fn units(&self, count: usize, sites: impl FnOnce() -> Vec<Sites>) -> Vec<usize> {
        if self.count == 1 {
            return (0..count).collect();
        }
        groups(&sites())
            .into_iter()
            .enumerate()
            .filter(|&(_, g)| g % self.count + 1 == self.index)
            .map(|(u, _)| u)
            .collect()
    }
}

/// Per unit, its group: units with a pair of sites in common (or one unit's site among another's
/// [`Sites::Any`]) are in one group, and so are the groups they join. Groups are numbered in the
/// order of their first unit.
fn groups(units: &[Sites]) -> Vec<usize> {
    // Union-find whose root is the first unit of its group.
    let mut parent: Vec<usize> = (0..units.len()).collect();
    fn root(parent: &mut [usize], mut u: usize) -> usize {
        while parent[u] != u {
            parent[u] = parent[parent[u]];
            u = parent[u];
        }
        u
    }
    let mut join = |a: usize, b: usize| {
        let (a, b) = (root(&mut parent, a), root(&mut parent, b));
        parent[a.max(b)] = a.min(b);
    };
    let mut any_at: HashMap<SiteId, usize> = HashMap::new();
    for (u, sites) in units.iter().enumerate() {
        if let Sites::Any(sites) = sites {
            for &s in sites {
                join(u, *any_at.entry(s).or_insert(u));
            }
        }
    }
    let mut at_pair: HashMap<[SiteId; 2], usize> = HashMap::new();
    for (u, sites) in units.iter().enumerate() {
        if let Sites::Pairs(pairs) = sites {
            for &pair in pairs {
                join(u, *at_pair.entry(pair).or_insert(u));
                for s in pair {
                    if let Some(&v) = any_at.get(&s) {
                        join(u, v);
                    }
                }
            }
        }
    }
    let mut number: HashMap<usize, usize> = HashMap::new();
    (0..units.len())
        .map(|u| {
            let r = root(&mut parent, u);
            let next = number.len();
            *number.entry(r).or_insert(next)
        })
        .collect()
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/3", "4/3", "3", "a/3", "1/0", "-1/2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    /// Per unit, the shard of `count` that takes it.
    fn owners(units: &[Sites], count: usize) -> Vec<usize> {
        let mut owner = vec![0; units.len()];
        for index in 1..=count {
            for u in (Shard { index, count }).units(units.len(), || units.to_vec()) {
                assert_eq!(owner[u], 0, "unit {u} in two shards");
                owner[u] = index;
            }
        }
        owner
    }

    #[test]
    fn units_with_no_pair_in_common_go_round_the_shards() {
        let units: Vec<Sites> = (0..10).map(|s| Sites::Pairs(vec![[s, s + 100]])).collect();
        assert_eq!(owners(&units, 3), [1, 2, 3, 1, 2, 3, 1, 2, 3, 1]);
        assert_eq!(
            Shard::WHOLE.units(10, || panic!("not needed")),
            (0..10).collect::<Vec<_>>()
        );
    }

    #[test]
    fn units_that_can_share_a_pair_of_sites_go_to_one_shard() {
        let units = [
            // 0, 2 and 5 share [1, 2] (5 through 2's other pair); 4 may be at any pair of 7
            // and 9, so with 3 at [8, 9]; 1 and 6 alone.
            Sites::Pairs(vec![[1, 2]]),
            Sites::Pairs(vec![[3, 4]]),
            Sites::Pairs(vec![[1, 2], [5, 6]]),
            Sites::Pairs(vec![[8, 9]]),
            Sites::Any(vec![7, 9]),
            Sites::Pairs(vec![[5, 6]]),
            Sites::Pairs(vec![[1, 3]]),
        ];
        assert_eq!(groups(&units), [0, 1, 0, 2, 2, 0, 3]);
        assert_eq!(owners(&units, 2), [1, 2, 1, 1, 1, 1, 2]);
        assert_eq!(owners(&units, 4), [1, 2, 1, 3, 3, 1, 4]);
    }
}
