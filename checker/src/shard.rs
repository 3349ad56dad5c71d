//! Splitting the matrix into shards and joining their JSON back: `matrix --shard K/N` checks
//! the cells whose index (from 0, in the matrix's order) modulo N is K − 1, and `merge` joins
//! the N files into the JSON one whole run prints. Round robin rather than contiguous blocks:
//! the matrix lists the expensive cells (framework re-runs, id tables) together, and dealing
//! them out keeps the shards' run times close.

use crate::report::json::{MatrixRecord, ShardRecord};
use anyhow::{anyhow, bail, Result};
use std::str::FromStr;

/// One shard of N (`--shard K/N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// K, from 1.
    pub index: usize,
    /// N.
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;

    /// `K/N` with 1 ≤ K ≤ N.
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}` is not a shard (expected K/N with 1 <= K <= N, e.g. 2/3)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) =
            (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// Whether the cell at `position` (from 0) of the whole matrix belongs to this shard.
    pub fn holds(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }

    /// The items of the whole matrix that belong to this shard, in order.
    pub fn select<T>(&self, all: Vec<T>) -> Vec<T> {
        all.into_iter().enumerate().filter(|(i, _)| self.holds(*i)).map(|(_, x)| x).collect()
    }

    /// The record naming this shard of a matrix of `cells` cells under `profiles`.
    pub fn record(&self, cells: usize, profiles: Vec<String>) -> ShardRecord {
        ShardRecord { cells, count: self.count, index: self.index, profiles }
    }
}

/// Join shard files (`(name, record)`, any order) into the whole matrix's record: every shard
/// of one split given once, each with the cells it should have. An error is one line naming
/// the file at fault.
pub fn merge<'a>(files: Vec<(String, MatrixRecord<'a>)>) -> Result<MatrixRecord<'a>> {
    let mut first: Option<(String, ShardRecord)> = None;
    let mut slots: Vec<Option<(String, MatrixRecord<'a>)>> = Vec::new();
    for (name, record) in files {
        let Some(shard) = record.shard.clone() else {
            bail!("{name}: not a shard (no `shard` field; shards come from `matrix --shard K/N --format json`)");
        };
        match &first {
            None => {
                slots = (0..shard.count).map(|_| None).collect();
                first = Some((name.clone(), shard.clone()));
            }
            Some((first_name, f)) if (f.count, f.cells, &f.profiles) != (shard.count, shard.cells, &shard.profiles) => {
                bail!(
                    "{name}: shard of another matrix than {first_name} ({} shards of {} cells under {}, not {} of {} under {})",
                    shard.count,
                    shard.cells,
                    shard.profiles.join(","),
                    f.count,
                    f.cells,
                    f.profiles.join(",")
                );
            }
            Some(_) => {}
        }
        if shard.index == 0 || shard.index > shard.count {
            bail!("{name}: shard {}/{} does not exist", shard.index, shard.count);
        }
        let expected = (0..shard.cells).filter(|i| i % shard.count == shard.index - 1).count();
        if record.cells.len() != expected {
            bail!(
                "{name}: shard {}/{} has {} cells, a shard of this matrix has {expected}",
                shard.index,
                shard.count,
                record.cells.len()
            );
        }
        let slot = &mut slots[shard.index - 1];
        if let Some((other, _)) = slot {
            bail!("{name}: shard {}/{} is given twice (also {other})", shard.index, shard.count);
        }
        *slot = Some((name, record));
    }
    let (_, whole) = first.ok_or_else(|| anyhow!("no shard file given"))?;
    let missing: Vec<String> = slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .map(|(i, _)| format!("{}/{}", i + 1, whole.count))
        .collect();
    if !missing.is_empty() {
        bail!("shards missing: {} (each of 1/{n} to {n}/{n} must be given once)", missing.join(", "), n = whole.count);
    }
    let mut shards: Vec<std::vec::IntoIter<_>> =
        slots.into_iter().map(|s| s.expect("every shard").1.cells.into_iter()).collect();
    let cells = (0..whole.cells).map(|i| shards[i % whole.count].next().expect("counted")).collect();
    Ok(MatrixRecord { cells, shard: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_deal_cells_round_robin() {
        let s: Shard = "2/3".parse().unwrap();
        assert_eq!(s.select((0..8).collect()), vec![1, 4, 7]);
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
