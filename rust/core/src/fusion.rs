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
    (1.0 + 0.3 * c.ln_1p()).min(MAX_BOOST)
}

/// Fuses `lists` with RRF constant `k` and returns at most `top_k` results, one per file.
pub fn fuse(lists: &[RankedList], chunks: &ChunkTable, k: f64, top_k: usize) -> Result<Vec<FusedHit>> {
    validate(lists, chunks, k)?;
    let modalities = lists.len();
    let entries = sorted_entries(lists);

    // Group the entries by chunk: scores in one array, (rank, contribution) in a flat table of
    // `modalities` cells per chunk, so no allocation happens per chunk.
    let mut ids: Vec<u32> = Vec::new();
    let mut scores: Vec<f64> = Vec::new();
    let mut cells: Vec<Option<ModalityHit>> = Vec::new();
    for &(chunk, modality, rank) in &entries {
        if ids.last() != Some(&chunk) {
            ids.push(chunk);
            scores.push(0.0);
            cells.resize(cells.len() + modalities, None);
        }
        let cell = &mut cells[(ids.len() - 1) * modalities + modality as usize];
        if cell.is_some() {
            continue; // a repeat within one list: the best rank came first in the sort
        }
        let c = chunk as usize;
        let contribution = lists[modality as usize].weight / (k + f64::from(rank) + 1.0)
            * boost(chunks.centrality[c])
            * f64::from(chunks.demotion[c]);
        *cell = Some(ModalityHit { rank, contribution });
        *scores.last_mut().unwrap() += contribution;
    }

    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_unstable_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(ids[a].cmp(&ids[b])));
    let mut seen_files = HashSet::new();
    Ok(order
        .into_iter()
        .filter(|&i| seen_files.insert(chunks.file[ids[i] as usize]))
        .take(top_k)
        .map(|i| FusedHit {
            chunk: ids[i],
            score: scores[i],
            modalities: cells[i * modalities..(i + 1) * modalities].to_vec(),
        })
        .collect())
}

/// Every (chunk, modality, rank) triple, sorted so a chunk's entries are adjacent and a repeated
/// id within one list meets its best rank first.
fn sorted_entries(lists: &[RankedList]) -> Vec<(u32, u32, u32)> {
    let mut entries = Vec::with_capacity(lists.iter().map(|l| l.ids.len()).sum());
    for (modality, list) in lists.iter().enumerate() {
        entries.extend(list.ids.iter().enumerate().map(|(rank, &id)| (id, modality as u32, rank as u32)));
    }
    entries.sort_unstable();
    entries
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
    if let Some(bad) = chunks.demotion.iter().find(|d| !(0.0..=1.0).contains(*d)) {
        return Err(Error::InvalidArgument(format!("demotion factors must lie in [0, 1], not {bad}")));
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
        assert!(fuse(&list(1.0, &[0]), &chunks, 40.0, 10).is_err());
        let short = [0u32; 2];
        let chunks = ChunkTable { centrality: &c, demotion: &d, file: &short };
        assert!(fuse(&list(1.0, &[0]), &chunks, 40.0, 10).is_err());
    }
}
