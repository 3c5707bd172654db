//! Exact k-nearest-neighbour search over packed binary codes by Hamming distance.
//!
//! Codes are rows of `row_bytes` bytes (dims / 8), stored contiguously as a numpy array would
//! store them. A search scans the rows tile by tile: every query of a batch is compared with a
//! tile while it is still in cache, and each worker keeps a bounded heap per query. Results are
//! the `k` rows of smallest distance, ties broken by the smaller row id, so they are exactly what
//! a stable sort of all distances would give.

mod popcount;
mod select;

pub use popcount::Kernel;

use crate::{Error, Result};
use rayon::prelude::*;
use std::borrow::Cow;
use select::BoundedHeap;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Rows per tile: 256 rows of 128 bytes stay in a 32 KiB L1 cache with room for the queries.
const TILE_ROWS: usize = 256;

/// Below this many rows a scan asked for on several workers stays on the calling thread.
const MIN_PARALLEL_ROWS: usize = 16 * 1024;

/// Below this many bytes of codes a scan left to the shared pool (`threads` 0) stays on the
/// calling thread: on 2 cores, waking the pool's workers cost more than they saved (one query,
/// 64-byte codes: 0.09 ms alone against 0.14 ms split at 40,000 rows, 0.44 against 0.50 at
/// 200,000; an allow-list of runs split gains from 400,000 rows; `benches/hamming_pool.py`).
const MIN_POOLED_BYTES: usize = 16 << 20;

/// A borrowed matrix of packed binary codes: `rows` rows of `row_bytes` bytes.
#[derive(Clone, Copy, Debug)]
pub struct Codes<'a> {
    data: &'a [u8],
    row_bytes: usize,
}

impl<'a> Codes<'a> {
    /// Wraps `data` as rows of `row_bytes` bytes; `data.len()` must be a multiple of `row_bytes`
    /// and the row count must fit in a `u32`.
    pub fn new(data: &'a [u8], row_bytes: usize) -> Result<Self> {
        if row_bytes == 0 {
            return Err(Error::InvalidArgument("codes must have at least one byte per row".into()));
        }
        if !data.len().is_multiple_of(row_bytes) {
            return Err(Error::InvalidArgument(format!(
                "{} bytes of codes are not a whole number of {row_bytes}-byte rows",
                data.len()
            )));
        }
        if data.len() / row_bytes > u32::MAX as usize {
            return Err(Error::InvalidArgument("more than 2^32 - 1 rows of codes".into()));
        }
        Ok(Codes { data, row_bytes })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.data.len() / self.row_bytes
    }

    /// Bytes per row.
    pub fn row_bytes(&self) -> usize {
        self.row_bytes
    }

    fn row(&self, row: usize) -> &'a [u8] {
        &self.data[row * self.row_bytes..(row + 1) * self.row_bytes]
    }
}

/// One search result: a row and its Hamming distance to the query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Neighbor {
    /// Hamming distance to the query, in bits. Compared first, so neighbours sort nearest first.
    pub distance: u32,
    /// Row id in the code matrix; breaks ties between equal distances.
    pub row: u32,
}

/// How a search is run.
#[derive(Clone, Copy, Debug)]
pub struct SearchOptions {
    /// Worker threads: 0 uses every core (the shared pool), 1 runs on the calling thread.
    pub threads: usize,
    /// The popcount kernel; [`Kernel::detect`] unless a caller wants to compare kernels.
    pub kernel: Kernel,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { threads: 0, kernel: Kernel::detect() }
    }
}

/// The `k` rows nearest to `query`, nearest first, restricted to `allow` when given.
pub fn top_k(codes: &Codes, query: &[u8], k: usize, allow: Option<&[u32]>) -> Result<Vec<Neighbor>> {
    let mut all = top_k_batch(codes, query, k, allow, SearchOptions::default())?;
    Ok(all.pop().unwrap_or_default())
}

/// For each query in `queries` (concatenated rows of `codes.row_bytes()` bytes), its `k`
/// nearest rows, nearest first. `allow`, when given, restricts the search to those rows (in any
/// order; repeats are ignored); an id outside the matrix is an error.
pub fn top_k_batch(
    codes: &Codes,
    queries: &[u8],
    k: usize,
    allow: Option<&[u32]>,
    options: SearchOptions,
) -> Result<Vec<Vec<Neighbor>>> {
    top_k_batch_offset(codes, queries, k, allow, None, options)
}

/// A distance added to each row by its group (rows of one file share their file's): a row's
/// distance to query `q` becomes `scale` times its Hamming distance plus
/// `offsets[q * groups_count + groups[row]]`, where `groups_count` is `offsets.len()` divided by
/// the number of queries.
#[derive(Clone, Copy, Debug)]
pub struct GroupOffsets<'a> {
    /// Per row of the codes, its group.
    pub groups: &'a [u32],
    /// Per query, per group, what its rows' distances gain; the queries' rows one after another.
    pub offsets: &'a [u32],
    /// What each bit of Hamming distance counts for beside the offsets.
    pub scale: u32,
}

impl GroupOffsets<'_> {
    /// Checks the shapes against `rows` rows of `row_bytes` bytes and `queries` queries, and
    /// that every distance stays below 2^31 (a signed 32-bit integer holds it); returns the
    /// number of groups.
    fn check(&self, rows: usize, row_bytes: usize, queries: usize) -> Result<usize> {
        let invalid = |why: String| Err(Error::InvalidArgument(why));
        if self.groups.len() != rows {
            return invalid(format!("{} groups for {rows} rows of codes", self.groups.len()));
        }
        if queries == 0 || !self.offsets.len().is_multiple_of(queries) {
            return invalid(format!("{} offsets are not a whole number per query of {queries}", self.offsets.len()));
        }
        let count = self.offsets.len() / queries;
        if let Some(&bad) = self.groups.iter().find(|&&g| g as usize >= count) {
            return invalid(format!("group {bad} has no offset (there are {count} groups)"));
        }
        let largest = u64::from(self.scale) * (row_bytes as u64 * 8) + u64::from(self.offsets.iter().copied().max().unwrap_or(0));
        if largest > i32::MAX as u64 {
            return invalid(format!("scale {} and offsets up to {largest} overflow a distance", self.scale));
        }
        Ok(count)
    }
}

/// [`top_k_batch`] with each row's distance offset by its group (`offsets`), when given: the
/// rows nearest by `scale * hamming + offset`, ties broken by the smaller row id, in one scan.
pub fn top_k_batch_offset(
    codes: &Codes,
    queries: &[u8],
    k: usize,
    allow: Option<&[u32]>,
    offsets: Option<GroupOffsets>,
    options: SearchOptions,
) -> Result<Vec<Vec<Neighbor>>> {
    let queries = Codes::new(queries, codes.row_bytes).map_err(|_| {
        Error::InvalidArgument(format!(
            "queries of {} bytes are not a whole number of {}-byte codes",
            queries.len(),
            codes.row_bytes
        ))
    })?;
    let groups_count = match &offsets {
        Some(by) if queries.rows() > 0 => by.check(codes.rows(), codes.row_bytes, queries.rows())?,
        _ => 0,
    };
    let allow = allow.map(|rows| normalize_allow_list(rows, codes.rows())).transpose()?;
    let candidates = allow.as_ref().map_or(codes.rows(), |rows| rows.len());
    let k = k.min(candidates);
    if k == 0 || queries.rows() == 0 {
        return Ok(vec![Vec::new(); queries.rows()]);
    }
    let scan = Scan {
        codes,
        queries: &queries,
        k,
        kernel: options.kernel,
        allow: allow.as_deref(),
        offsets: offsets.map(|by| (by, groups_count)),
    };
    let tiles = candidates.div_ceil(TILE_ROWS);
    let alone = match options.threads {
        0 => candidates * codes.row_bytes < MIN_POOLED_BYTES,
        1 => true,
        _ => candidates < MIN_PARALLEL_ROWS,
    };
    let heaps = if alone {
        scan.tiles(0..tiles, scan.empty_heaps())
    } else {
        run_in_pool(options.threads, || {
            (0..tiles)
                .into_par_iter()
                .with_min_len(4)
                .fold(|| scan.empty_heaps(), |heaps, tile| scan.tiles(tile..tile + 1, heaps))
                .reduce(|| scan.empty_heaps(), merge_heaps)
        })
    };
    Ok(heaps.into_iter().map(BoundedHeap::into_sorted).collect())
}

/// The Hamming distance from `query` to every row of `codes`, in row order (for a table small
/// enough to be read whole, such as one code per file, where a top-k would sort it all).
pub fn distances(codes: &Codes, query: &[u8], kernel: Kernel) -> Result<Vec<u32>> {
    if query.len() != codes.row_bytes {
        return Err(Error::InvalidArgument(format!(
            "a query of {} bytes against {}-byte codes",
            query.len(),
            codes.row_bytes
        )));
    }
    let mut out = vec![0u32; codes.rows()];
    for (tile, chunk) in codes.data.chunks(TILE_ROWS * codes.row_bytes).zip(out.chunks_mut(TILE_ROWS)) {
        kernel.scan_tile(tile, query, |i, distance| chunk[i] = distance);
    }
    Ok(out)
}

/// Sorted, deduplicated, bounds-checked allow-list; one given so (a mask's rows) is used as it is.
fn normalize_allow_list(rows: &[u32], n: usize) -> Result<Cow<'_, [u32]>> {
    if let Some(&bad) = rows.iter().find(|&&r| r as usize >= n) {
        return Err(Error::RowOutOfRange { row: bad as u64, rows: n });
    }
    if rows.windows(2).all(|pair| pair[0] < pair[1]) {
        return Ok(Cow::Borrowed(rows));
    }
    let mut rows = rows.to_vec();
    rows.sort_unstable();
    rows.dedup();
    Ok(Cow::Owned(rows))
}

fn merge_heaps(mut a: Vec<BoundedHeap>, b: Vec<BoundedHeap>) -> Vec<BoundedHeap> {
    for (into, from) in a.iter_mut().zip(b) {
        into.merge(from);
    }
    a
}

/// One search in progress: what every worker needs to scan its share of tiles.
struct Scan<'s, 'a> {
    codes: &'s Codes<'a>,
    queries: &'s Codes<'s>,
    k: usize,
    kernel: Kernel,
    allow: Option<&'s [u32]>,
    /// The rows' offsets by group, and how many groups each query has offsets for.
    offsets: Option<(GroupOffsets<'s>, usize)>,
}

impl Scan<'_, '_> {
    fn empty_heaps(&self) -> Vec<BoundedHeap> {
        (0..self.queries.rows()).map(|_| BoundedHeap::new(self.k)).collect()
    }

    /// Scans the tiles in `range` into `heaps` (one per query), each row's distance as the
    /// search asks for it (compiled apart for each, so a plain search pays nothing for offsets).
    fn tiles(&self, range: std::ops::Range<usize>, heaps: Vec<BoundedHeap>) -> Vec<BoundedHeap> {
        match self.offsets {
            None => self.tiles_by(range, heaps, Plain),
            Some((by, count)) => self.tiles_by(range, heaps, ByGroup { by, count }),
        }
    }

    fn tiles_by(&self, range: std::ops::Range<usize>, mut heaps: Vec<BoundedHeap>, distance: impl RowDistance) -> Vec<BoundedHeap> {
        let row_bytes = self.codes.row_bytes;
        let mut gathered = Vec::new();
        for tile in range {
            let first = tile * TILE_ROWS;
            match self.allow {
                None => {
                    let last = (first + TILE_ROWS).min(self.codes.rows());
                    let tile_bytes = &self.codes.data[first * row_bytes..last * row_bytes];
                    self.offer_tile(tile_bytes, &mut heaps, |i| (first + i) as u32, distance);
                }
                Some(allow) => {
                    // Copy the allowed rows into one contiguous tile so the kernels see the
                    // same layout either way; a tile is small enough to stay in cache.
                    let ids = &allow[first..(first + TILE_ROWS).min(allow.len())];
                    let (start, end) = (ids[0] as usize, ids[ids.len() - 1] as usize + 1);
                    if end - start == ids.len() {
                        // A run of consecutive rows (a filter keeps whole files, whose chunks
                        // are neighbours) is scanned where it lies.
                        let tile_bytes = &self.codes.data[start * row_bytes..end * row_bytes];
                        self.offer_tile(tile_bytes, &mut heaps, |i| (start + i) as u32, distance);
                        continue;
                    }
                    gathered.clear();
                    let mut at = 0;
                    while at < ids.len() {
                        // Each run of consecutive rows copied in one piece.
                        let mut next = at + 1;
                        while next < ids.len() && ids[next] == ids[next - 1] + 1 {
                            next += 1;
                        }
                        let (run_start, run_end) = (ids[at] as usize, ids[next - 1] as usize + 1);
                        gathered.extend_from_slice(&self.codes.data[run_start * row_bytes..run_end * row_bytes]);
                        at = next;
                    }
                    self.offer_tile(&gathered, &mut heaps, |i| ids[i], distance);
                }
            }
        }
        heaps
    }
}

impl Scan<'_, '_> {
    /// Offers every row of one tile to every query's heap; `row_id(i)` names the tile's row `i`.
    #[inline(always)]
    fn offer_tile(&self, tile: &[u8], heaps: &mut [BoundedHeap], row_id: impl Fn(usize) -> u32, distance: impl RowDistance) {
        for (q, heap) in heaps.iter_mut().enumerate() {
            let of_query = distance.for_query(q);
            self.kernel.scan_tile(tile, self.queries.row(q), |i, hamming| {
                let row = row_id(i);
                let distance = of_query.of(row, hamming);
                if select::key(distance, row) < heap.bound() {
                    heap.offer(Neighbor { distance, row });
                }
            });
        }
    }
}

/// How a row's distance to a query is made from its Hamming distance.
trait RowDistance: Copy {
    /// The distance to query `q`, as a function of the row and its Hamming distance.
    type ToQuery: QueryDistance;
    fn for_query(self, q: usize) -> Self::ToQuery;
}

trait QueryDistance: Copy {
    fn of(self, row: u32, hamming: u32) -> u32;
}

/// The Hamming distance itself.
#[derive(Clone, Copy)]
struct Plain;

impl RowDistance for Plain {
    type ToQuery = Plain;
    #[inline(always)]
    fn for_query(self, _q: usize) -> Plain {
        self
    }
}

impl QueryDistance for Plain {
    #[inline(always)]
    fn of(self, _row: u32, hamming: u32) -> u32 {
        hamming
    }
}

/// `scale` times the Hamming distance plus the row's group's offset for the query.
#[derive(Clone, Copy)]
struct ByGroup<'s> {
    by: GroupOffsets<'s>,
    count: usize,
}

impl<'s> RowDistance for ByGroup<'s> {
    type ToQuery = GroupsOfQuery<'s>;
    #[inline(always)]
    fn for_query(self, q: usize) -> GroupsOfQuery<'s> {
        let offsets = &self.by.offsets[q * self.count..(q + 1) * self.count];
        GroupsOfQuery { groups: self.by.groups, offsets, scale: self.by.scale }
    }
}

/// One query's offsets by group.
#[derive(Clone, Copy)]
struct GroupsOfQuery<'s> {
    groups: &'s [u32],
    offsets: &'s [u32],
    scale: u32,
}

impl QueryDistance for GroupsOfQuery<'_> {
    #[inline(always)]
    fn of(self, row: u32, hamming: u32) -> u32 {
        // Checked not to overflow (`GroupOffsets::check`).
        hamming * self.scale + self.offsets[self.groups[row as usize] as usize]
    }
}

/// Runs `work` on the shared pool (threads == 0) or on a pool of exactly `threads` workers,
/// built once per size and kept, because building a pool costs more than a small search.
fn run_in_pool<T: Send>(threads: usize, work: impl FnOnce() -> T + Send) -> T {
    if threads == 0 {
        return work();
    }
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let pool = {
        let mut pools = POOLS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        pools
            .entry(threads)
            .or_insert_with(|| {
                Arc::new(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .thread_name(|i| format!("maguyva-hamming-{i}"))
                        .build()
                        .expect("a thread pool of a valid size can be built"),
                )
            })
            .clone()
    };
    pool.install(work)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(codes: &Codes, query: &[u8], k: usize, allow: Option<&[u32]>) -> Vec<Neighbor> {
        let rows: Vec<u32> = match allow {
            Some(a) => {
                let mut a = a.to_vec();
                a.sort_unstable();
                a.dedup();
                a
            }
            None => (0..codes.rows() as u32).collect(),
        };
        let mut all: Vec<Neighbor> = rows
            .into_iter()
            .map(|row| Neighbor {
                row,
                distance: codes
                    .row(row as usize)
                    .iter()
                    .zip(query)
                    .map(|(a, b)| (a ^ b).count_ones())
                    .sum(),
            })
            .collect();
        all.sort();
        all.truncate(k);
        all
    }

    fn bytes(len: usize, seed: u64) -> Vec<u8> {
        let mut s = seed | 1;
        (0..len)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (s >> 56) as u8
            })
            .collect()
    }

    #[test]
    fn matches_reference_across_sizes_threads_and_kernels() {
        for (rows, row_bytes, k) in [(0, 32, 5), (3, 32, 10), (1000, 16, 7), (40_000, 32, 10)] {
            let data = bytes(rows * row_bytes, rows as u64);
            let codes = Codes::new(&data, row_bytes).unwrap();
            let queries = bytes(3 * row_bytes, 99);
            for kernel in Kernel::available() {
                for threads in [0, 1, 2] {
                    let got = top_k_batch(&codes, &queries, k, None, SearchOptions { threads, kernel })
                        .unwrap();
                    for (q, hits) in got.iter().enumerate() {
                        let query = &queries[q * row_bytes..(q + 1) * row_bytes];
                        assert_eq!(hits, &reference(&codes, query, k, None), "{rows} rows {kernel:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn ties_break_by_row_id() {
        // Every row is identical, so the answer is decided by row id alone.
        let data = vec![0x5au8; 64 * 50_000];
        let codes = Codes::new(&data, 64).unwrap();
        let hits = top_k(&codes, &[0u8; 64], 4, None).unwrap();
        assert_eq!(hits.iter().map(|h| h.row).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn allow_list_restricts_dedupes_and_checks_bounds() {
        let data = bytes(300 * 32, 5);
        let codes = Codes::new(&data, 32).unwrap();
        let query = bytes(32, 11);
        let allow = [299, 5, 17, 5, 120, 250, 0];
        let hits = top_k(&codes, &query, 10, Some(&allow)).unwrap();
        assert_eq!(hits, reference(&codes, &query, 10, Some(&allow)));
        assert_eq!(hits.len(), 6);
        assert!(matches!(
            top_k(&codes, &query, 3, Some(&[300])),
            Err(Error::RowOutOfRange { row: 300, rows: 300 })
        ));
        assert!(top_k(&codes, &query, 3, Some(&[])).unwrap().is_empty());
    }

    #[test]
    fn sorted_allow_lists_of_runs_and_gaps_match_the_reference() {
        // A filter keeps whole files: runs of neighbouring rows, some longer than a tile, some
        // of one row, with gaps between them; in order, as a mask's rows come.
        let rows = 20_000;
        let data = bytes(rows * 32, 3);
        let codes = Codes::new(&data, 32).unwrap();
        let queries = bytes(2 * 32, 7);
        let mut allow: Vec<u32> = Vec::new();
        let (mut row, mut step) = (0u32, 1u64);
        while (row as usize) < rows {
            step = step.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let run = [1, 3, 40, 700][(step >> 60) as usize % 4];
            allow.extend((row..row + run).take_while(|&r| (r as usize) < rows));
            row += run + 1 + (step >> 58) as u32 % 50;
        }
        for kernel in Kernel::available() {
            for threads in [0, 1] {
                let got = top_k_batch(&codes, &queries, 25, Some(&allow), SearchOptions { threads, kernel }).unwrap();
                for (q, hits) in got.iter().enumerate() {
                    let query = &queries[q * 32..(q + 1) * 32];
                    assert_eq!(hits, &reference(&codes, query, 25, Some(&allow)), "{kernel:?} {threads}");
                }
            }
        }
    }

    /// Every allowed row scored as `scale * hamming + offset of its group`, sorted, the first `k`.
    fn offset_reference(codes: &Codes, query: &[u8], k: usize, allow: Option<&[u32]>, groups: &[u32], offsets: &[u32], scale: u32) -> Vec<Neighbor> {
        let mut all: Vec<Neighbor> = reference(codes, query, codes.rows(), allow)
            .into_iter()
            .map(|n| Neighbor { row: n.row, distance: n.distance * scale + offsets[groups[n.row as usize] as usize] })
            .collect();
        all.sort();
        all.truncate(k);
        all
    }

    #[test]
    fn group_offsets_rank_as_every_row_scored() {
        // Groups of 1 to 40 neighbouring rows (a file's chunks), offsets that can outweigh the
        // Hamming distance, a batch of queries each with its own offsets.
        for (rows, row_bytes, k, scale) in [(0, 32, 5, 10), (7, 32, 10, 1), (5_000, 16, 9, 10), (40_000, 64, 50, 1000)] {
            let data = bytes(rows * row_bytes, rows as u64 + 1);
            let codes = Codes::new(&data, row_bytes).unwrap();
            let mut groups = Vec::with_capacity(rows);
            let (mut group, mut step) = (0u32, 17u64);
            while groups.len() < rows {
                step = step.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let size = 1 + (step >> 58) as usize % 40;
                groups.extend(std::iter::repeat_n(group, size.min(rows - groups.len())));
                group += 1;
            }
            let count = group.max(1) as usize;
            let queries = bytes(3 * row_bytes, 23);
            let offsets: Vec<u32> = bytes(3 * count, 31).iter().map(|&b| u32::from(b) * scale / 16).collect();
            let allow: Vec<u32> = (0..rows as u32).filter(|r| r % 3 != 1).collect();
            for kernel in Kernel::available() {
                for threads in [0, 1, 2] {
                    for allowed in [None, Some(allow.as_slice())] {
                        let by = GroupOffsets { groups: &groups, offsets: &offsets, scale };
                        let got = top_k_batch_offset(&codes, &queries, k, allowed, Some(by), SearchOptions { threads, kernel }).unwrap();
                        for (q, hits) in got.iter().enumerate() {
                            let query = &queries[q * row_bytes..(q + 1) * row_bytes];
                            let own = &offsets[q * count..(q + 1) * count];
                            assert_eq!(hits, &offset_reference(&codes, query, k, allowed, &groups, own, scale), "{rows} rows {kernel:?} {threads}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn group_offsets_of_the_wrong_shape_or_size_are_refused() {
        let data = bytes(10 * 8, 3);
        let codes = Codes::new(&data, 8).unwrap();
        let query = bytes(8, 5);
        let run = |groups: &[u32], offsets: &[u32], scale| {
            top_k_batch_offset(&codes, &query, 3, None, Some(GroupOffsets { groups, offsets, scale }), SearchOptions::default())
        };
        let groups = [0, 0, 1, 1, 1, 2, 2, 3, 3, 3];
        assert!(run(&groups, &[0, 5, 9, 2], 2).is_ok());
        assert!(matches!(run(&groups[..9], &[0, 5, 9, 2], 2), Err(Error::InvalidArgument(_))));
        assert!(matches!(run(&groups, &[0, 5, 9], 2), Err(Error::InvalidArgument(_))));
        assert!(matches!(run(&groups, &[0, 5, 9, i32::MAX as u32 - 10], 2), Err(Error::InvalidArgument(_))));
        assert!(run(&groups, &[0, 5, 9, i32::MAX as u32 - 128], 2).is_ok());
        assert!(matches!(run(&groups, &[0, 0, 0, 0], u32::MAX / 64), Err(Error::InvalidArgument(_))));
        // No offsets asked for: the plain distances.
        let plain = top_k_batch_offset(&codes, &query, 3, None, None, SearchOptions::default()).unwrap();
        assert_eq!(plain[0], reference(&codes, &query, 3, None));
    }

    #[test]
    fn distances_are_every_rows_in_order() {
        for (rows, row_bytes) in [(0, 32), (1, 8), (700, 64), (5_000, 24)] {
            let data = bytes(rows * row_bytes, rows as u64 + 3);
            let codes = Codes::new(&data, row_bytes).unwrap();
            let query = bytes(row_bytes, 41);
            let mut want = reference(&codes, &query, rows, None);
            want.sort_by_key(|n| n.row);
            for kernel in Kernel::available() {
                let got = distances(&codes, &query, kernel).unwrap();
                assert_eq!(got, want.iter().map(|n| n.distance).collect::<Vec<_>>(), "{rows} rows {kernel:?}");
            }
        }
        let data = [0u8; 64];
        assert!(distances(&Codes::new(&data, 32).unwrap(), &[0u8; 31], Kernel::detect()).is_err());
    }

    #[test]
    fn rejects_ragged_input() {
        assert!(Codes::new(&[0u8; 10], 4).is_err());
        assert!(Codes::new(&[0u8; 8], 0).is_err());
        let data = [0u8; 64];
        let codes = Codes::new(&data, 32).unwrap();
        assert!(top_k(&codes, &[0u8; 31], 1, None).is_err());
    }
}
