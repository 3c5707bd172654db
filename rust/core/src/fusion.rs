//! Weighted Reciprocal Rank Fusion of several ranked lists.
//!
//! Retrievers score on incomparable scales, so only ranks are fused. A chunk at 0-based `rank`
//! in a list of weight `w` earns `w / (k + rank + 1)`; each such contribution is multiplied by the
//! chunk's graph-importance boost `min(1 + 0.3 ln(1 + centrality), 1.5)` and by its demotion
//! factor (1 for ordinary paths, less for vendored, built or generated ones). A chunk's score is
//! the sum of its contributions, so agreement between retrievers lifts it. The results keep the
//! best chunk of each file, best first, ties broken by the smaller chunk id.

use crate::{Error, Result};
use std::collections::HashSet;

/// The most the centrality boost can multiply a contribution by, so a hub cannot bury a more
/// relevant obscure result.
pub const MAX_BOOST: f64 = 1.5;

/// The centrality from which the boost is capped: e^(5/3) - 1.
const CAP_CENTRALITY: f64 = 4.294_490_050_470_03;

/// One retriever's ranked list: chunk ids, best first, and the weight of that retriever.
#[derive(Clone, Copy, Debug)]
pub struct RankedList<'a> {
    /// Weight of this modality for the query's intent.
    pub weight: f64,
    /// Chunk ids, best first. A repeated id counts at its first (best) rank only.
    pub ids: &'a [u32],
}

/// What fusion knows about every chunk, indexed by chunk id.
#[derive(Clone, Copy, Debug)]
pub struct ChunkTable<'a> {
    /// Centrality of each chunk (non-negative; scaled by the caller, see [`boost`]).
    pub centrality: &'a [f32],
    /// Multiplier in [0, 1] applied to a chunk's score: 1 keeps it, less demotes it.
    pub demotion: &'a [f32],
    /// The file each chunk belongs to; results keep one chunk per file.
    pub file: &'a [u32],
}

/// A modality's part in one fused result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModalityHit {
    /// 0-based rank of the chunk in that modality's list.
    pub rank: u32,
    /// What that rank added to the score, boost and demotion included.
    pub contribution: f64,
}

/// One fused result.
#[derive(Clone, Debug, PartialEq)]
pub struct FusedHit {
    /// The chunk id.
    pub chunk: u32,
    /// The sum of the contributions.
    pub score: f64,
    /// Per input list, in input order: the chunk's rank and contribution there, if it was found.
    pub modalities: Vec<Option<ModalityHit>>,
}

/// The graph-importance multiplier for a centrality: `min(1 + 0.3 ln(1 + c), 1.5)`.
/// Negative or NaN centralities count as 0.
pub fn boost(centrality: f32) -> f64 {
    let c = if centrality.is_nan() { 0.0 } else { f64::from(centrality).max(0.0) };
    // Past e^(5/3) - 1 the cap applies, so the logarithm (the costly part of a fusion call) is
    // skipped; `ln(1 + c)` is used over `ln_1p`, which is several times slower and whose extra
    // precision for tiny `c` cannot change a ranking.
    if c >= CAP_CENTRALITY {
        return MAX_BOOST;
    }
    (1.0 + 0.3 * (1.0 + c).ln()).min(MAX_BOOST)
}

/// Fuses `lists` with RRF constant `k` and returns at most `top_k` results, one per file.
pub fn fuse(lists: &[RankedList], chunks: &ChunkTable, k: f64, top_k: usize) -> Result<Vec<FusedHit>> {
    validate(lists, chunks, k)?;
    let table = accumulate(lists, k);

    // Boost and demotion are per chunk, so they scale a chunk's summed reciprocal ranks once.
    let factors: Vec<f64> = table
        .ids
        .iter()
        .map(|&id| boost(chunks.centrality[id as usize]) * f64::from(chunks.demotion[id as usize]))
        .collect();
    let scores: Vec<f64> = table.raw.iter().zip(&factors).map(|(raw, f)| raw * f).collect();
    let best = best_per_file(&scores, &table.ids, chunks.file, top_k);
    Ok(best
        .into_iter()
        .map(|i| FusedHit {
            chunk: table.ids[i],
            score: scores[i],
            modalities: table
                .cells(i)
                .iter()
                .enumerate()
                .map(|(m, rank)| {
                    rank.map(|rank| ModalityHit {
                        rank,
                        contribution: lists[m].weight / (k + f64::from(rank) + 1.0) * factors[i],
                    })
                })
                .collect(),
        })
        .collect())
}

/// Every distinct chunk of the lists with its summed `weight / (k + rank + 1)` and its best rank
/// in each list. Chunks are found by an open-addressing hash table sized for the input, which
/// is cheaper than sorting all entries or hashing with a general-purpose map.
struct Accumulated {
    ids: Vec<u32>,
    raw: Vec<f64>,
    /// `lists` ranks per chunk, flattened.
    ranks: Vec<Option<u32>>,
    lists: usize,
}

impl Accumulated {
    fn cells(&self, i: usize) -> &[Option<u32>] {
        &self.ranks[i * self.lists..(i + 1) * self.lists]
    }
}

fn accumulate(lists: &[RankedList], k: f64) -> Accumulated {
    let total: usize = lists.iter().map(|l| l.ids.len()).sum();
    let capacity = (2 * total).next_power_of_two().max(16);
    let shift = 64 - capacity.trailing_zeros();
    let mut slots = vec![u32::MAX; capacity]; // index into ids, or empty
    let mut acc = Accumulated {
        ids: Vec::with_capacity(total),
        raw: Vec::with_capacity(total),
        ranks: Vec::with_capacity(total * lists.len()),
        lists: lists.len(),
    };
    for (m, list) in lists.iter().enumerate() {
        for (rank, &id) in list.ids.iter().enumerate() {
            let mut slot = (u64::from(id).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize;
            let index = loop {
                match slots[slot] {
                    u32::MAX => {
                        slots[slot] = acc.ids.len() as u32;
                        acc.ids.push(id);
                        acc.raw.push(0.0);
                        acc.ranks.resize(acc.ranks.len() + acc.lists, None);
                        break acc.ids.len() - 1;
                    }
                    i if acc.ids[i as usize] == id => break i as usize,
                    _ => slot = (slot + 1) & (capacity - 1),
                }
            };
            let cell = &mut acc.ranks[index * acc.lists + m];
            if cell.is_none() {
                // A repeat within one list keeps its first (best) rank only.
                *cell = Some(rank as u32);
                acc.raw[index] += list.weight / (k + rank as f64 + 1.0);
            }
        }
    }
    acc
}

/// Indices of the `top_k` best scores whose chunks lie in distinct files, best first, ties
/// broken by the smaller id. Only a prefix of the ranking is sorted: a few times `top_k`
/// candidates usually cover `top_k` files; the prefix grows when they do not.
fn best_per_file(scores: &[f64], ids: &[u32], file: &[u32], top_k: usize) -> Vec<usize> {
    let better = |a: &usize, b: &usize| scores[*b].total_cmp(&scores[*a]).then(ids[*a].cmp(&ids[*b]));
    let mut order: Vec<usize> = (0..scores.len()).collect();
    let mut prefix = top_k.saturating_mul(4).saturating_add(16);
    loop {
        if prefix < order.len() {
            order.select_nth_unstable_by(prefix, better);
            order[..prefix].sort_unstable_by(better);
        } else {
            prefix = order.len();
            order.sort_unstable_by(better);
        }
        let mut seen = HashSet::new();
        let best: Vec<usize> =
            order[..prefix].iter().copied().filter(|&i| seen.insert(file[ids[i] as usize])).take(top_k).collect();
        if best.len() == top_k || prefix == order.len() {
            return best;
        }
        prefix = prefix.saturating_mul(4);
    }
}

fn validate(lists: &[RankedList], chunks: &ChunkTable, k: f64) -> Result<()> {
    let n = chunks.centrality.len();
    if chunks.demotion.len() != n || chunks.file.len() != n {
        return Err(Error::InvalidArgument(format!(
            "chunk table columns differ in length: centrality {n}, demotion {}, file {}",
            chunks.demotion.len(),
            chunks.file.len()
        )));
    }
    if !(k.is_finite() && k >= 0.0) {
        return Err(Error::InvalidArgument(format!("RRF k must be a finite number >= 0, not {k}")));
    }
    if lists.len() > u32::MAX as usize {
        return Err(Error::InvalidArgument("too many ranked lists".into()));
    }
    for (i, list) in lists.iter().enumerate() {
        if !(list.weight.is_finite() && list.weight >= 0.0) {
            return Err(Error::InvalidArgument(format!(
                "weight of list {i} must be a finite number >= 0, not {}",
                list.weight
            )));
        }
        if let Some(&bad) = list.ids.iter().find(|&&id| id as usize >= n) {
            return Err(Error::InvalidArgument(format!(
                "list {i} names chunk {bad}, but the chunk table has {n} chunks"
            )));
        }
    }
    // Only the chunks in the lists are read, so only theirs are checked: a call costs in
    // proportion to its lists, not to the size of the index.
    for list in lists {
        for &id in list.ids {
            let demotion = chunks.demotion[id as usize];
            if !(0.0..=1.0).contains(&demotion) {
                return Err(Error::InvalidArgument(format!(
                    "demotion factors must lie in [0, 1], not {demotion} (chunk {id})"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(n: usize) -> (Vec<f32>, Vec<f32>, Vec<u32>) {
        (vec![0.0; n], vec![1.0; n], (0..n as u32).collect())
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn single_list_scores_are_weight_over_k_plus_rank_plus_one() {
        let (c, d, f) = table(10);
        let chunks = ChunkTable { centrality: &c, demotion: &d, file: &f };
        let hits = fuse(&[RankedList { weight: 0.5, ids: &[7, 3, 9] }], &chunks, 40.0, 10).unwrap();
        assert_eq!(hits.iter().map(|h| h.chunk).collect::<Vec<_>>(), vec![7, 3, 9]);
        assert!(close(hits[0].score, 0.5 / 41.0));
        assert!(close(hits[1].score, 0.5 / 42.0));
        assert!(close(hits[2].score, 0.5 / 43.0));
        assert_eq!(hits[2].modalities, vec![Some(ModalityHit { rank: 2, contribution: 0.5 / 43.0 })]);
    }

    #[test]
    fn agreement_sums_contributions_and_reports_each_modality() {
        let (c, d, f) = table(10);
        let chunks = ChunkTable { centrality: &c, demotion: &d, file: &f };
        let lists = [
            RankedList { weight: 0.2, ids: &[1, 2] },
            RankedList { weight: 0.6, ids: &[2, 5] },
            RankedList { weight: 0.1, ids: &[] },
        ];
        let hits = fuse(&lists, &chunks, 60.0, 10).unwrap();
        // chunk 2: 0.2/62 + 0.6/61; chunk 5: 0.6/62; chunk 1: 0.2/61.
        assert_eq!(hits.iter().map(|h| h.chunk).collect::<Vec<_>>(), vec![2, 5, 1]);
        assert!(close(hits[0].score, 0.2 / 62.0 + 0.6 / 61.0));
        assert_eq!(hits[0].modalities[0].unwrap().rank, 1);
        assert_eq!(hits[0].modalities[1].unwrap().rank, 0);
        assert_eq!(hits[0].modalities[2], None);
        let sum: f64 = hits[0].modalities.iter().flatten().map(|m| m.contribution).sum();
        assert!(close(sum, hits[0].score));
    }

    #[test]
    fn equal_scores_break_ties_by_chunk_id() {
        let (c, d, f) = table(10);
        let chunks = ChunkTable { centrality: &c, demotion: &d, file: &f };
        let lists = [RankedList { weight: 1.0, ids: &[8] }, RankedList { weight: 1.0, ids: &[4] }];
        let hits = fuse(&lists, &chunks, 40.0, 10).unwrap();
        assert_eq!(hits.iter().map(|h| h.chunk).collect::<Vec<_>>(), vec![4, 8]);
        assert_eq!(hits[0].score, hits[1].score);
    }

    #[test]
    fn cap_centrality_is_where_the_formula_reaches_the_cap() {
        assert!((CAP_CENTRALITY - ((5.0f64 / 3.0).exp() - 1.0)).abs() < 1e-12);
        assert!(close(1.0 + 0.3 * (1.0 + CAP_CENTRALITY).ln(), MAX_BOOST));
        assert!(boost(4.2944) < MAX_BOOST);
    }

    #[test]
    fn boost_formula_and_cap() {
        assert!(close(boost(0.0), 1.0));
        assert!(close(boost(1.0), 1.0 + 0.3 * 2f64.ln()));
        // ln(1 + c) reaches 5/3 at c = e^(5/3) - 1, about 4.29: the cap applies beyond it.
        assert!(close(boost(4.0), 1.0 + 0.3 * 5f64.ln()));
        assert_eq!(boost(5.0), MAX_BOOST);
        assert_eq!(boost(1e9), MAX_BOOST);
        assert_eq!(boost(-3.0), 1.0);
        assert_eq!(boost(f32::NAN), 1.0);
    }

    #[test]
    fn boost_and_demotion_scale_contributions() {
        let (mut c, mut d, f) = table(4);
        c[0] = 1000.0; // capped hub
        c[1] = 1.0;
        d[2] = 0.25; // vendored
        let chunks = ChunkTable { centrality: &c, demotion: &d, file: &f };
        let hits = fuse(&[RankedList { weight: 1.0, ids: &[2, 1, 0, 3] }], &chunks, 0.0, 10).unwrap();
        let score = |chunk| hits.iter().find(|h| h.chunk == chunk).unwrap().score;
        assert!(close(score(2), 0.25));
        assert!(close(score(1), (1.0 + 0.3 * 2f64.ln()) / 2.0));
        assert!(close(score(0), 1.5 / 3.0));
        assert!(close(score(3), 0.25));
        assert_eq!(hits.iter().map(|h| h.chunk).collect::<Vec<_>>(), vec![1, 0, 2, 3]);
    }

    #[test]
    fn keeps_best_chunk_per_file_then_truncates() {
        let (c, d, _) = table(6);
        let file = [0, 0, 1, 1, 2, 2];
        let chunks = ChunkTable { centrality: &c, demotion: &d, file: &file };
        let lists = [RankedList { weight: 1.0, ids: &[1, 0, 3, 5, 2, 4] }];
        let hits = fuse(&lists, &chunks, 40.0, 2).unwrap();
        assert_eq!(hits.iter().map(|h| h.chunk).collect::<Vec<_>>(), vec![1, 3]);
    }

    #[test]
    fn repeated_id_counts_once_at_best_rank() {
        let (c, d, f) = table(3);
        let chunks = ChunkTable { centrality: &c, demotion: &d, file: &f };
        let hits = fuse(&[RankedList { weight: 1.0, ids: &[2, 1, 2] }], &chunks, 10.0, 10).unwrap();
        assert_eq!(hits[0].chunk, 2);
        assert!(close(hits[0].score, 1.0 / 11.0));
    }

    #[test]
    fn empty_inputs_give_empty_results() {
        let (c, d, f) = table(0);
        let chunks = ChunkTable { centrality: &c, demotion: &d, file: &f };
        assert!(fuse(&[], &chunks, 40.0, 10).unwrap().is_empty());
        assert!(fuse(&[RankedList { weight: 1.0, ids: &[] }], &chunks, 40.0, 10).unwrap().is_empty());
    }

    #[test]
    fn rejects_bad_arguments() {
        let (c, d, f) = table(3);
        let chunks = ChunkTable { centrality: &c, demotion: &d, file: &f };
        let list = |weight, ids| [RankedList { weight, ids }];
        assert!(fuse(&list(1.0, &[3]), &chunks, 40.0, 10).is_err());
        assert!(fuse(&list(-1.0, &[0]), &chunks, 40.0, 10).is_err());
        assert!(fuse(&list(f64::NAN, &[0]), &chunks, 40.0, 10).is_err());
        assert!(fuse(&list(1.0, &[0]), &chunks, -1.0, 10).is_err());
        let bad_demotion = [1.0, 2.0, 1.0];
        let chunks = ChunkTable { centrality: &c, demotion: &bad_demotion, file: &f };
        assert!(fuse(&list(1.0, &[1]), &chunks, 40.0, 10).is_err());
        assert!(fuse(&list(1.0, &[0]), &chunks, 40.0, 10).is_ok(), "only listed chunks are checked");
        let short = [0u32; 2];
        let chunks = ChunkTable { centrality: &c, demotion: &d, file: &short };
        assert!(fuse(&list(1.0, &[0]), &chunks, 40.0, 10).is_err());
    }
}
