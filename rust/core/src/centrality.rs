//! PageRank and in-degree of a dependency graph given as two columns of node ids: the centrality
//! an index stores for every file and symbol.
//!
//! The power iteration is the textbook one (and that of NetworkX and rustworkx, whose results
//! it reproduces to the bit): every node starts at `1 / n`; each step moves `alpha` of a node's
//! rank along its out-edges, each edge's share weighted by how many times it is given (parallel
//! edges add up), spreads the rank of nodes with no out-edge evenly over all nodes, and gives
//! every node `(1 - alpha) / n`. It stops when a step changes the ranks by less than
//! `n * tolerance` in total (L1), keeping the ranks before that step.
//!
//! Each node's new rank is a sum over its in-edges in ascending source order, the same order
//! whichever thread computes it, so the result does not depend on the thread count.

use rayon::prelude::*;

use crate::{Error, Result};

/// When the power iteration stops, and its damping.
#[derive(Clone, Copy, Debug)]
pub struct PageRank {
    /// The share of a node's rank that follows its out-edges (0.85 in the literature).
    pub alpha: f64,
    /// At most this many steps.
    pub max_iterations: usize,
    /// Converged when a step changes the ranks by less than `node_count * tolerance` (L1).
    pub tolerance: f64,
}

/// What [`centrality`] finds.
#[derive(Clone, Debug, PartialEq)]
pub struct Centrality {
    /// PageRank of each node; they sum to 1.
    pub ranks: Vec<f64>,
    /// How many distinct nodes have an edge to each node.
    pub in_degree: Vec<u32>,
    /// Steps taken.
    pub iterations: usize,
    /// Whether the ranks converged within `max_iterations` (if not, they are the last step's).
    pub converged: bool,
}

/// Rows of at least this many nodes are worth a thread of their own.
const ROWS_PER_TASK: usize = 8192;

/// The transposed transition matrix in compressed rows: row `j` lists the distinct sources of
/// edges into `j`, ascending, with the share of each source's rank that reaches `j`.
struct InEdges {
    offsets: Vec<usize>,
    sources: Vec<u32>,
    shares: Vec<f64>,
}

impl InEdges {
    fn new(node_count: usize, src: &[u32], dst: &[u32]) -> (Self, Vec<bool>) {
        let mut out_edges = vec![0u32; node_count];
        let mut offsets = vec![0usize; node_count + 1];
        for (&s, &d) in src.iter().zip(dst) {
            out_edges[s as usize] += 1;
            offsets[d as usize + 1] += 1;
        }
        for j in 0..node_count {
            offsets[j + 1] += offsets[j];
        }
        // A counting sort by target: each row gets its sources in edge order.
        let mut next = offsets.clone();
        let mut placed = vec![0u32; src.len()];
        for (&s, &d) in src.iter().zip(dst) {
            placed[next[d as usize]] = s;
            next[d as usize] += 1;
        }
        // Each row sorted, parallel edges merged into one entry of their multiplicity.
        let mut sources = Vec::with_capacity(src.len());
        let mut counts: Vec<u32> = Vec::with_capacity(src.len());
        let mut merged_offsets = Vec::with_capacity(node_count + 1);
        merged_offsets.push(0);
        for j in 0..node_count {
            let row = &mut placed[offsets[j]..offsets[j + 1]];
            if !row.is_sorted() {
                row.sort_unstable();
            }
            for &s in row.iter() {
                if sources.len() > merged_offsets[j] && sources.last() == Some(&s) {
                    *counts.last_mut().expect("a source was pushed") += 1;
                } else {
                    sources.push(s);
                    counts.push(1);
                }
            }
            merged_offsets.push(sources.len());
        }
        let shares = sources.iter().zip(&counts).map(|(&s, &c)| f64::from(c) / f64::from(out_edges[s as usize])).collect();
        let dangling = out_edges.iter().map(|&c| c == 0).collect();
        (InEdges { offsets: merged_offsets, sources, shares }, dangling)
    }

    /// `out[j] = alpha * (sum of share * ranks[source] over row j + spread) + base`, rows in
    /// tasks of ROWS_PER_TASK.
    fn step(&self, ranks: &[f64], spread: f64, alpha: f64, base: f64, out: &mut [f64]) {
        let row = |(j, value): (usize, &mut f64)| {
            let (from, to) = (self.offsets[j], self.offsets[j + 1]);
            let mut sum = 0.0f64;
            for (&s, &share) in self.sources[from..to].iter().zip(&self.shares[from..to]) {
                sum += share * ranks[s as usize];
            }
            *value = alpha * (sum + spread) + base;
        };
        if out.len() >= 2 * ROWS_PER_TASK {
            out.par_chunks_mut(ROWS_PER_TASK).enumerate().for_each(|(task, chunk)| {
                chunk.iter_mut().enumerate().map(|(k, v)| (task * ROWS_PER_TASK + k, v)).for_each(row)
            });
        } else {
            out.iter_mut().enumerate().for_each(row);
        }
    }
}

/// Node ids as `u32`, each checked to be below `node_count`.
fn node_ids(column: &[i64], node_count: usize, name: &str) -> Result<Vec<u32>> {
    column
        .iter()
        .map(|&node| {
            if node < 0 || node as u64 >= node_count as u64 {
                Err(Error::InvalidArgument(format!("edge {name} {node} is not a node of a graph of {node_count} nodes")))
            } else {
                Ok(node as u32)
            }
        })
        .collect()
}

/// PageRank and in-degree of the graph of `node_count` nodes with an edge `src[e] -> dst[e]`
/// for every `e` (an edge given twice counts twice in PageRank, once in the in-degree).
pub fn centrality(node_count: usize, src: &[i64], dst: &[i64], params: PageRank) -> Result<Centrality> {
    if src.len() != dst.len() {
        return Err(Error::InvalidArgument(format!("{} edge sources against {} targets", src.len(), dst.len())));
    }
    if node_count > u32::MAX as usize {
        return Err(Error::InvalidArgument(format!("{node_count} nodes are more than a graph may have")));
    }
    if !(0.0..=1.0).contains(&params.alpha) {
        return Err(Error::InvalidArgument(format!("alpha {} is not between 0 and 1", params.alpha)));
    }
    if node_count == 0 {
        return Ok(Centrality { ranks: Vec::new(), in_degree: Vec::new(), iterations: 0, converged: true });
    }
    let (src, dst) = (node_ids(src, node_count, "source")?, node_ids(dst, node_count, "target")?);
    let (edges, dangling) = InEdges::new(node_count, &src, &dst);
    let in_degree = edges.offsets.windows(2).map(|w| (w[1] - w[0]) as u32).collect();

    let n = node_count as f64;
    let uniform = n.recip();
    let base = (1.0 - params.alpha) * uniform;
    let mut ranks = vec![uniform; node_count];
    let mut next = vec![0.0f64; node_count];
    let (mut iterations, mut converged) = (0, false);
    while iterations < params.max_iterations {
        iterations += 1;
        let lost: f64 = ranks.iter().zip(&dangling).filter(|(_, &d)| d).map(|(r, _)| *r).sum();
        edges.step(&ranks, lost * uniform, params.alpha, base, &mut next);
        let change: f64 = next.iter().zip(&ranks).map(|(a, b)| (a - b).abs()).sum();
        if change < n * params.tolerance {
            converged = true;
            break;
        }
        std::mem::swap(&mut ranks, &mut next);
    }
    Ok(Centrality { ranks, in_degree, iterations, converged })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: PageRank = PageRank { alpha: 0.85, max_iterations: 200, tolerance: 1e-10 };

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn a_cycle_ranks_every_node_alike() {
        let found = centrality(4, &[0, 1, 2, 3], &[1, 2, 3, 0], PARAMS).unwrap();
        assert!(close(&found.ranks, &[0.25; 4]));
        assert_eq!(found.in_degree, vec![1, 1, 1, 1]);
        assert!(found.converged);
    }

    #[test]
    fn ranks_sum_to_one_and_a_hub_ranks_first() {
        // Everything points at node 0, which points nowhere (a dangling node).
        let found = centrality(5, &[1, 2, 3, 4, 2], &[0, 0, 0, 0, 1], PARAMS).unwrap();
        let total: f64 = found.ranks.iter().sum();
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        let best = (0..5).max_by(|&a, &b| found.ranks[a].total_cmp(&found.ranks[b])).unwrap();
        assert_eq!(best, 0);
        assert!(found.ranks[1] > found.ranks[3], "node 1 has an in-edge, node 3 none");
        assert_eq!(found.in_degree, vec![4, 1, 0, 0, 0]);
    }

    #[test]
    fn two_nodes_solve_in_closed_form() {
        // 0 -> 1, and 1 dangling: r0 = a * r1 / 2 + (1 - a) / 2 and r0 + r1 = 1, so r0 = 1 / (2 + a).
        let a = 0.85;
        let found = centrality(2, &[0], &[1], PARAMS).unwrap();
        let r0 = 1.0 / (2.0 + a);
        assert!(close(&found.ranks, &[r0, 1.0 - r0]), "{:?}", found.ranks);
    }

    #[test]
    fn a_parallel_edge_weighs_twice() {
        // 0 sends two edges to 1 and one to 2: node 1 gets twice node 2's share.
        let once = centrality(3, &[0, 0], &[1, 2], PARAMS).unwrap();
        let twice = centrality(3, &[0, 0, 0], &[1, 1, 2], PARAMS).unwrap();
        assert!(close(&once.ranks[1..2], &once.ranks[2..3]));
        assert!(twice.ranks[1] > twice.ranks[2]);
        assert_eq!(twice.in_degree, vec![0, 1, 1], "a parallel edge counts once in the in-degree");
    }

    #[test]
    fn the_edge_order_and_the_thread_count_do_not_change_a_bit() {
        // A graph large enough to be stepped in parallel, its edges given in two orders.
        let n = 3 * ROWS_PER_TASK as i64;
        let mut edges: Vec<(i64, i64)> = (0..n).flat_map(|i| [(i, (i * 7 + 3) % n), (i, (i * i) % n), ((i * 13) % n, i / 2)]).collect();
        let (src, dst): (Vec<i64>, Vec<i64>) = edges.iter().copied().unzip();
        let first = centrality(n as usize, &src, &dst, PARAMS).unwrap();
        edges.reverse();
        let (src, dst): (Vec<i64>, Vec<i64>) = edges.iter().copied().unzip();
        let second = centrality(n as usize, &src, &dst, PARAMS).unwrap();
        assert_eq!(first, second);
        let serial = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let third = serial.install(|| centrality(n as usize, &src, &dst, PARAMS).unwrap());
        assert_eq!(first, third);
    }

    #[test]
    fn stopping_early_keeps_the_last_step() {
        let found = centrality(3, &[0, 1], &[1, 2], PageRank { max_iterations: 1, ..PARAMS }).unwrap();
        assert!(!found.converged);
        assert_eq!(found.iterations, 1);
        let total: f64 = found.ranks.iter().sum();
        assert!((total - 1.0).abs() < 1e-12);
        assert!(found.ranks[1] > found.ranks[0], "one step moved rank along 0 -> 1");
    }

    #[test]
    fn bad_input_is_refused_in_one_sentence() {
        let err = centrality(2, &[0, 2], &[1, 0], PARAMS).unwrap_err().to_string();
        assert!(err.contains("edge source 2 is not a node of a graph of 2 nodes"), "{err}");
        let err = centrality(2, &[0], &[-1], PARAMS).unwrap_err().to_string();
        assert!(err.contains("edge target -1"), "{err}");
        assert!(centrality(2, &[0], &[], PARAMS).is_err());
        assert!(centrality(2, &[], &[], PageRank { alpha: 1.5, ..PARAMS }).is_err());
        assert_eq!(centrality(0, &[], &[], PARAMS).unwrap().ranks, Vec::<f64>::new());
    }
}
