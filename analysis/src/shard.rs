//! Which part of one analysis a shard does (`ilgen detect --shard I/N`).
//!
//! Takes `I/N` (1 ≤ I ≤ N); gives a [`Shard`] that says which units of work are its own. A unit is
//! what [`crate::analyze_shard`] solves on its own: the races of one surviving variable, the
//! deadlocks, the atomicity violations. Unit `u` (numbered in report order) belongs to shard
//! `u mod N + 1`: every shard derives the same units from the same trace and options, so the N
//! shards together do each unit exactly once, and neighbouring variables (often alike in cost)
//! go to different shards.

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

    /// Whether unit `unit` is this shard's.
    pub fn takes(&self, unit: usize) -> bool {
        unit % self.count + 1 == self.index
    }
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

    #[test]
    fn every_unit_goes_to_exactly_one_shard() {
        let count = 3;
        for unit in 0..10 {
            let owners: Vec<usize> = (1..=count)
                .filter(|&index| Shard { index, count }.takes(unit))
                .collect();
            assert_eq!(owners, vec![unit % count + 1]);
        }
        assert!((0..10).all(|u| Shard::WHOLE.takes(u)));
    }
}
