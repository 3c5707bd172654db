//! Lookups of a symbol table made in one pass: ids grouped by key in the order the keys are
//! first met, rows ordered by several columns at once, and the values of sorted lists of keys
//! summed by key.
//!
//! A symbol table of a large repository (hundreds of thousands of definitions) is made again for
//! every generation an edit publishes; done with a Python dict and numpy sorts, its groupings
//! and its tie-breaking order cost most of that.

use crate::error::{Error, Result};
use rayon::slice::ParallelSliceMut;
use rustc_hash::FxHashMap;
use std::hash::Hash;

/// Ids grouped by key: what a map from each key to the list of its ids, filled by appending,
/// would hold, as one flat list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grouped {
    /// For each distinct key, in the order first met, the first source that gave it.
    pub firsts: Vec<usize>,
    /// Each key's ids in turn: those of its sources, in source order.
    pub ids: Vec<i64>,
    /// Key `g`'s ids are `ids[bounds[g]..bounds[g + 1]]` (one more entry than keys).
    pub bounds: Vec<i64>,
}

/// Groups the ids of sources by their keys: source `j` has key `keys[j]` and the ids
/// `ids[offsets[j]..offsets[j + 1]]`. Equal to a stable sort of the sources by the order their
/// keys were first met, made by counting instead of sorting.
///
/// ```
/// use maguyva_core::groups::group_by_key;
///
/// let grouped = group_by_key(&["b", "a", "b"], &[7, 8, 9, 10], &[0, 1, 3, 4]).unwrap();
/// assert_eq!(grouped.firsts, [0, 1]); // "b" first met at source 0, "a" at source 1
/// assert_eq!(grouped.ids, [7, 10, 8, 9]);
/// assert_eq!(grouped.bounds, [0, 2, 4]);
/// ```
pub fn group_by_key<K: Hash + Eq>(keys: &[K], ids: &[i64], offsets: &[i64]) -> Result<Grouped> {
    if offsets.len() != keys.len() + 1 {
        return Err(Error::InvalidArgument(format!(
            "{} offsets for {} keys: one more than the keys is needed",
            offsets.len(),
            keys.len()
        )));
    }
    if offsets[0] < 0 || offsets.windows(2).any(|w| w[1] < w[0]) || offsets[keys.len()] as u64 > ids.len() as u64 {
        return Err(Error::InvalidArgument(format!(
            "offsets must rise from 0 or more to at most the {} ids",
            ids.len()
        )));
    }
    let mut code_of: FxHashMap<&K, usize> = FxHashMap::default();
    code_of.reserve(keys.len().min(1 << 20));
    let mut firsts = Vec::new();
    let mut codes = Vec::with_capacity(keys.len());
    let mut totals: Vec<i64> = Vec::new();
    for (j, key) in keys.iter().enumerate() {
        let code = *code_of.entry(key).or_insert_with(|| {
            firsts.push(j);
            totals.push(0);
            firsts.len() - 1
        });
        totals[code] += offsets[j + 1] - offsets[j];
        codes.push(code);
    }
    let mut bounds = Vec::with_capacity(totals.len() + 1);
    bounds.push(0i64);
    let mut sum = 0i64;
    for total in &totals {
        sum += total;
        bounds.push(sum);
    }
    let mut next: Vec<usize> = bounds[..totals.len()].iter().map(|&b| b as usize).collect();
    let mut grouped = vec![0i64; sum as usize];
    for (j, &code) in codes.iter().enumerate() {
        let source = &ids[offsets[j] as usize..offsets[j + 1] as usize];
        let at = next[code];
        grouped[at..at + source.len()].copy_from_slice(source);
        next[code] = at + source.len();
    }
    Ok(Grouped { firsts, ids: grouped, bounds })
}

/// One column of an ordering, with its direction.
#[derive(Debug, Clone, Copy)]
pub enum Column<'a> {
    /// Integers, smallest first.
    Ascending(&'a [i64]),
    /// Integers, largest first.
    Descending(&'a [i64]),
    /// Floats, largest first; NaN after every number, as numpy sorts it.
    DescendingFloat(&'a [f64]),
}

impl Column<'_> {
    fn len(&self) -> usize {
        match self {
            Column::Ascending(values) | Column::Descending(values) => values.len(),
            Column::DescendingFloat(values) => values.len(),
        }
    }

    /// Row `row`'s value as an unsigned key that sorts, ascending, as the column is ordered.
    fn key(&self, row: usize) -> u64 {
        const SIGN: u64 = 1 << 63;
        match self {
            Column::Ascending(values) => values[row] as u64 ^ SIGN,
            Column::Descending(values) => !(values[row] as u64 ^ SIGN),
            Column::DescendingFloat(values) => {
                let value = values[row];
                if value.is_nan() {
                    return u64::MAX;
                }
                // 0.0 for -0.0 (numpy finds them equal); then the IEEE bits made to sort as
                // the numbers do (negatives reversed below the positives), and reversed.
                let bits = (value + 0.0).to_bits();
                let ascending = if bits & SIGN != 0 { !bits } else { bits | SIGN };
                // No number's key is 0 (that would be a NaN's bits), so none reaches u64::MAX.
                !ascending
            }
        }
    }
}

/// The rows in order of `columns` (the first decides, the next breaks its ties, and so on; rows
/// equal in every column stay in row order): what numpy's `lexsort` gives for the same columns
/// listed last first, a descending one negated.
///
/// ```
/// use maguyva_core::groups::{ordered_rows, Column};
///
/// let rank = [1, 0, 0, 1];
/// let weight = [0.5, 0.25, 0.75, 0.5];
/// let order = ordered_rows(&[Column::Ascending(&rank), Column::DescendingFloat(&weight)]).unwrap();
/// assert_eq!(order, [2, 1, 0, 3]);
/// ```
pub fn ordered_rows(columns: &[Column<'_>]) -> Result<Vec<i64>> {
    let rows = columns.first().map_or(0, Column::len);
    if columns.iter().any(|c| c.len() != rows) {
        return Err(Error::InvalidArgument("the columns of an ordering differ in length".into()));
    }
    // Each row's keys side by side, so a comparison reads one place of memory, not one per column.
    let width = columns.len();
    let mut keys = vec![0u64; rows * width];
    for (c, column) in columns.iter().enumerate() {
        for row in 0..rows {
            keys[row * width + c] = column.key(row);
        }
    }
    let mut order: Vec<usize> = (0..rows).collect();
    // With the row as the last key no two rows are equal, so an unstable sort is exact.
    order.par_sort_unstable_by(|&a, &b| keys[a * width..(a + 1) * width].cmp(&keys[b * width..(b + 1) * width]).then(a.cmp(&b)));
    Ok(order.into_iter().map(|row| row as i64).collect())
}

/// The distinct keys of `parts` (each a list of keys, ascending; equal keys allowed), ascending,
/// and for each the sum of the values (`values[p][i]` goes with `parts[p][i]`) of all its
/// occurrences, added from 0 in the order the parts and their keys come: what numpy gives for
/// the parts concatenated as `np.unique(keys, return_inverse=True)` then `np.bincount(inverse,
/// weights=values)`, to the bit, by merging the sorted parts instead of sorting their whole and
/// scattering an inverse (a word index of millions of postings, made for every generation).
///
/// ```
/// use maguyva_core::groups::merged_sums;
///
/// let (keys, sums) = merged_sums(&[&[1, 4, 9], &[4, 5]], &[&[0.5, 1.0, 2.0], &[0.25, 3.0]]).unwrap();
/// assert_eq!(keys, [1, 4, 5, 9]);
/// assert_eq!(sums, [0.5, 1.25, 3.0, 2.0]);
/// ```
pub fn merged_sums(parts: &[&[i64]], values: &[&[f64]]) -> Result<(Vec<i64>, Vec<f64>)> {
    if parts.len() != values.len() {
        return Err(Error::InvalidArgument(format!("{} lists of keys and {} of values: one each is needed", parts.len(), values.len())));
    }
    for (p, (keys, weights)) in parts.iter().zip(values).enumerate() {
        if keys.len() != weights.len() {
            return Err(Error::InvalidArgument(format!("part {p} has {} keys and {} values", keys.len(), weights.len())));
        }
        if keys.windows(2).any(|pair| pair[0] > pair[1]) {
            return Err(Error::InvalidArgument(format!("the keys of part {p} are not ascending")));
        }
    }
    let total: usize = parts.iter().map(|keys| keys.len()).sum();
    let mut keys_out: Vec<i64> = Vec::with_capacity(total);
    let mut sums: Vec<f64> = Vec::with_capacity(total);
    let mut at = vec![0usize; parts.len()];
    // The smallest key at the parts' heads: each part adds its run of it, in part order.
    while let Some(key) = parts.iter().zip(&at).filter_map(|(keys, &i)| keys.get(i).copied()).min() {
        let mut sum = 0.0f64;
        for (p, keys) in parts.iter().enumerate() {
            while at[p] < keys.len() && keys[at[p]] == key {
                sum += values[p][at[p]];
                at[p] += 1;
            }
        }
        keys_out.push(key);
        sums.push(sum);
    }
    Ok((keys_out, sums))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Ordering;

    /// A map of lists filled by appending, as the grouping is defined.
    fn appended(keys: &[u8], ids: &[i64], offsets: &[i64]) -> Grouped {
        let mut order: Vec<u8> = Vec::new();
        let mut firsts = Vec::new();
        let mut lists: Vec<Vec<i64>> = Vec::new();
        for (j, key) in keys.iter().enumerate() {
            let g = match order.iter().position(|k| k == key) {
                Some(g) => g,
                None => {
                    order.push(*key);
                    firsts.push(j);
                    lists.push(Vec::new());
                    order.len() - 1
                }
            };
            lists[g].extend_from_slice(&ids[offsets[j] as usize..offsets[j + 1] as usize]);
        }
        let mut bounds = vec![0i64];
        for list in &lists {
            bounds.push(bounds.last().unwrap() + list.len() as i64);
        }
        Grouped { firsts, ids: lists.concat(), bounds }
    }

    proptest! {
        /// Merging sums each key's values in the order of the parts concatenated, as sorting the
        /// whole stably and adding each run from 0 does.
        #[test]
        fn merged_sums_are_the_sums_of_a_stable_sort_of_the_whole(
            parts in proptest::collection::vec(proptest::collection::vec((-20i64..20, -4.0f64..4.0), 0..30), 0..6),
        ) {
            let mut keyed: Vec<Vec<i64>> = Vec::new();
            let mut weighed: Vec<Vec<f64>> = Vec::new();
            for part in &parts {
                let mut part = part.clone();
                part.sort_by_key(|&(key, _)| key);
                keyed.push(part.iter().map(|&(key, _)| key).collect());
                weighed.push(part.iter().map(|&(_, value)| value).collect());
            }
            let whole: Vec<(i64, f64)> = keyed.iter().flatten().copied().zip(weighed.iter().flatten().copied()).collect();
            let mut order: Vec<usize> = (0..whole.len()).collect();
            order.sort_by_key(|&i| whole[i].0);
            let mut expected_keys: Vec<i64> = Vec::new();
            let mut expected_sums: Vec<f64> = Vec::new();
            for i in order {
                let (key, value) = whole[i];
                if expected_keys.last() != Some(&key) {
                    expected_keys.push(key);
                    expected_sums.push(0.0);
                }
                *expected_sums.last_mut().unwrap() += value;
            }
            let key_slices: Vec<&[i64]> = keyed.iter().map(Vec::as_slice).collect();
            let value_slices: Vec<&[f64]> = weighed.iter().map(Vec::as_slice).collect();
            let (keys, sums) = merged_sums(&key_slices, &value_slices).unwrap();
            prop_assert_eq!(keys, expected_keys);
            prop_assert_eq!(sums.iter().map(|s| s.to_bits()).collect::<Vec<_>>(), expected_sums.iter().map(|s| s.to_bits()).collect::<Vec<_>>());
        }
    }

    #[test]
    fn merged_sums_refuse_keys_out_of_order_and_lists_of_other_lengths() {
        assert!(merged_sums(&[&[3, 1]], &[&[1.0, 1.0]]).is_err());
        assert!(merged_sums(&[&[1, 3]], &[&[1.0]]).is_err());
        assert!(merged_sums(&[&[1]], &[]).is_err());
        assert_eq!(merged_sums(&[], &[]).unwrap(), (vec![], vec![]));
    }

    proptest! {
        #[test]
        fn grouping_is_appending_in_first_met_order(
            sources in prop::collection::vec((0u8..6, 0usize..4), 0..40),
        ) {
            let keys: Vec<u8> = sources.iter().map(|(k, _)| *k).collect();
            let mut offsets = vec![0i64];
            for (_, length) in &sources {
                offsets.push(offsets.last().unwrap() + *length as i64);
            }
            let ids: Vec<i64> = (0..*offsets.last().unwrap()).map(|i| i * 3 + 1).collect();
            prop_assert_eq!(group_by_key(&keys, &ids, &offsets).unwrap(), appended(&keys, &ids, &offsets));
        }

        #[test]
        fn ordering_is_a_stable_sort_by_every_column(
            rows in prop::collection::vec((-2i64..3, -3i64..4, prop_oneof![Just(0.0), Just(-0.0), Just(0.5), Just(f64::NAN), Just(2.0), Just(-1.5), Just(-7.25), Just(f64::INFINITY), Just(f64::NEG_INFINITY)]), 0..60),
        ) {
            let first: Vec<i64> = rows.iter().map(|r| r.0).collect();
            let second: Vec<i64> = rows.iter().map(|r| r.1).collect();
            let third: Vec<f64> = rows.iter().map(|r| r.2).collect();
            let columns = [Column::Ascending(&first), Column::Descending(&second), Column::DescendingFloat(&third)];
            let found = ordered_rows(&columns).unwrap();
            // The reference: a stable insertion sort by the same keys, NaN last, -0.0 == 0.0.
            let key = |i: usize| (first[i], -second[i], third[i].is_nan(), if third[i].is_nan() { 0.0 } else { -third[i] });
            let mut expected: Vec<usize> = Vec::new();
            for i in 0..rows.len() {
                let at = expected.iter().position(|&j| key(i).partial_cmp(&key(j)) == Some(Ordering::Less)).unwrap_or(expected.len());
                expected.insert(at, i);
            }
            prop_assert_eq!(found, expected.into_iter().map(|i| i as i64).collect::<Vec<_>>());
        }
    }

    #[test]
    fn bad_offsets_are_refused() {
        assert!(group_by_key(&["a"], &[1], &[0]).is_err());
        assert!(group_by_key(&["a", "b"], &[1], &[0, 1, 0]).is_err());
        assert!(group_by_key(&["a"], &[1], &[0, 2]).is_err());
        assert!(group_by_key(&["a"], &[1], &[-1, 1]).is_err());
        assert!(ordered_rows(&[Column::Ascending(&[1, 2]), Column::Ascending(&[1])]).is_err());
    }
}
