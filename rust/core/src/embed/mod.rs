//! Static embeddings: a text's tokens looked up in a table of vectors and summed (the signs of
//! the sum are the text's binary code, kept by the caller).
//!
//! A text is summed line by line: each line's token vectors in order, then the lines' sums in
//! order, in f32. That is the order of the package's batched numpy pooling (which sums each
//! distinct line once), so both give the same bits, and a line's sum does not depend on the
//! text it is in.

pub mod wordpiece;

pub use wordpiece::{AddedToken, Normalization, WordPiece};

use crate::{Error, Result};
use rayon::prelude::*;

/// Texts handed to a thread at a time: enough to keep the scheduling cost small.
const TEXTS_PER_TASK: usize = 16;

/// A table of token vectors: row `id` is token `id`'s vector.
#[derive(Clone, Copy, Debug)]
pub struct Table<'a> {
    data: &'a [f32],
    dims: usize,
}

impl<'a> Table<'a> {
    /// `data` row-major, `dims` values a row.
    pub fn new(data: &'a [f32], dims: usize) -> Result<Table<'a>> {
        if dims == 0 || !data.len().is_multiple_of(dims) {
            return Err(Error::InvalidArgument(format!(
                "a table of {} values does not hold rows of {dims} dimensions",
                data.len()
            )));
        }
        Ok(Table { data, dims })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.data.len() / self.dims
    }

    /// Values per row.
    pub fn dims(&self) -> usize {
        self.dims
    }

    fn row(&self, id: u32) -> &'a [f32] {
        let start = id as usize * self.dims;
        &self.data[start..start + self.dims]
    }
}

/// Per text: the sum of its tokens' vectors (`texts.len()` rows of `table.dims()` values) and
/// its number of tokens, leaving out tokens whose id is in `skip`. Fails when the tokenizer
/// gives an id the table has no row for.
pub fn pooled_sums(tokenizer: &WordPiece, table: &Table<'_>, skip: &[u32], texts: &[&str]) -> Result<(Vec<f32>, Vec<u64>)> {
    let dims = table.dims();
    let mut skipped = vec![false; table.rows()];
    for &id in skip {
        if let Some(flag) = skipped.get_mut(id as usize) {
            *flag = true;
        }
    }
    let mut sums = vec![0f32; texts.len() * dims];
    let mut counts = vec![0u64; texts.len()];
    sums.par_chunks_mut(dims * TEXTS_PER_TASK)
        .zip(counts.par_chunks_mut(TEXTS_PER_TASK))
        .zip(texts.par_chunks(TEXTS_PER_TASK))
        .try_for_each_init(
            || (Vec::new(), vec![0f32; dims]),
            |(ids, line), ((sums, counts), texts)| -> Result<()> {
                for ((sum, count), text) in sums.chunks_mut(dims).zip(counts.iter_mut()).zip(texts) {
                    *count = sum_text(tokenizer, table, &skipped, text, sum, ids, line)?;
                }
                Ok(())
            },
        )?;
    Ok((sums, counts))
}

/// Adds `text`'s vectors into `sum` (zeros), line by line; returns how many tokens counted.
fn sum_text(
    tokenizer: &WordPiece,
    table: &Table<'_>,
    skipped: &[bool],
    text: &str,
    sum: &mut [f32],
    ids: &mut Vec<u32>,
    line: &mut [f32],
) -> Result<u64> {
    let mut count = 0u64;
    for text_line in text.split('\n') {
        ids.clear();
        tokenizer.encode(text_line, ids);
        line.fill(0.0);
        for &id in ids.iter() {
            match skipped.get(id as usize) {
                None => {
                    return Err(Error::InvalidArgument(format!(
                        "token id {id} has no row in a table of {} rows",
                        table.rows()
                    )))
                }
                Some(true) => continue,
                Some(false) => {}
            }
            count += 1;
            for (total, value) in line.iter_mut().zip(table.row(id)) {
                *total += value;
            }
        }
        for (total, value) in sum.iter_mut().zip(line.iter()) {
            *total += value;
        }
    }
    Ok(count)
}

/// The token ids of each of `lines`, one after another, and each line's number of ids.
pub fn token_ids(tokenizer: &WordPiece, lines: &[&str]) -> (Vec<u32>, Vec<u64>) {
    let parts: Vec<(Vec<u32>, Vec<u64>)> = lines
        .par_chunks(TEXTS_PER_TASK * 16)
        .map(|lines| {
            let mut ids = Vec::new();
            let mut counts = Vec::with_capacity(lines.len());
            for line in lines {
                let before = ids.len();
                tokenizer.encode(line, &mut ids);
                counts.push((ids.len() - before) as u64);
            }
            (ids, counts)
        })
        .collect();
    let mut ids = Vec::with_capacity(parts.iter().map(|(i, _)| i.len()).sum());
    let mut counts = Vec::with_capacity(lines.len());
    for (part_ids, part_counts) in parts {
        ids.extend(part_ids);
        counts.extend(part_counts);
    }
    (ids, counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer() -> WordPiece {
        let tokens = ["[PAD]", "[UNK]", "a", "b", "c"].iter().map(|t| t.to_string()).collect();
        let normalization = Normalization { clean_text: true, chinese_chars: true, strip_accents: true, lowercase: true };
        WordPiece::new(tokens, 1, "##".into(), 100, normalization, vec![]).unwrap()
    }

    #[test]
    fn texts_are_summed_line_by_line_without_skipped_tokens() {
        let data: Vec<f32> = (0..5).flat_map(|i| [i as f32, -(i as f32)]).collect();
        let table = Table::new(&data, 2).unwrap();
        let (sums, counts) = pooled_sums(&tokenizer(), &table, &[1], &["a b\nc zz", "", "a\n\na"]).unwrap();
        assert_eq!(counts, [3, 0, 2], "the unknown word is skipped");
        assert_eq!(sums, [9.0, -9.0, 0.0, 0.0, 4.0, -4.0]);
    }

    #[test]
    fn a_token_without_a_row_is_an_error() {
        let data = [0f32; 6];
        let table = Table::new(&data, 2).unwrap();
        let error = pooled_sums(&tokenizer(), &table, &[], &["c"]).unwrap_err();
        assert!(error.to_string().contains("token id 4 has no row in a table of 3 rows"));
        assert!(Table::new(&data, 4).is_err());
    }

    #[test]
    fn token_ids_keep_each_lines_count() {
        let (ids, counts) = token_ids(&tokenizer(), &["a b", "", "c a"]);
        assert_eq!((ids, counts), (vec![2, 3, 4, 2], vec![2, 0, 2]));
    }
}
