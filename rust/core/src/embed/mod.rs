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
pub use half::f16;
use rayon::prelude::*;

/// Texts handed to a thread at a time: enough to keep the scheduling cost small.
const TEXTS_PER_TASK: usize = 16;

/// A table of token vectors: row `id` is token `id`'s vector, in f32 or in half floats (as a
/// model ships them: half the bytes to load and to read). A half row is widened to f32 as it is
/// read, exactly (every half float is an f32), so both give the same sums.
#[derive(Clone, Copy, Debug)]
pub struct Table<'a> {
    values: Values<'a>,
    dims: usize,
}

#[derive(Clone, Copy, Debug)]
enum Values<'a> {
    F32(&'a [f32]),
    /// The halves and the fastest way this CPU has to add a row of them to f32s.
    F16(&'a [f16], AddHalves),
}

/// Adds each half float of a row, widened, to the f32 at the same place.
type AddHalves = fn(&[f16], &mut [f32]);

fn add_halves_scalar(row: &[f16], total: &mut [f32]) {
    for (sum, value) in total.iter_mut().zip(row) {
        *sum += value.to_f32();
    }
}

/// The same with the F16C conversion, eight at a time: the same sums, as each lane's addition is
/// the scalar one.
#[cfg(target_arch = "x86_64")]
fn add_halves_f16c(row: &[f16], total: &mut [f32]) {
    #[target_feature(enable = "avx,f16c")]
    unsafe fn add(row: &[f16], total: &mut [f32]) {
        use std::arch::x86_64::{__m128i, _mm256_add_ps, _mm256_cvtph_ps, _mm256_loadu_ps, _mm256_storeu_ps, _mm_loadu_si128};
        let n = row.len().min(total.len());
        let whole = n - n % 8;
        for at in (0..whole).step_by(8) {
            // SAFETY: `at + 8 <= n`, within both slices; unaligned loads and stores.
            unsafe {
                let widened = _mm256_cvtph_ps(_mm_loadu_si128(row.as_ptr().add(at).cast::<__m128i>()));
                let sum = _mm256_add_ps(_mm256_loadu_ps(total.as_ptr().add(at)), widened);
                _mm256_storeu_ps(total.as_mut_ptr().add(at), sum);
            }
        }
        add_halves_scalar(&row[whole..n], &mut total[whole..n]);
    }
    // SAFETY: chosen by `add_halves` only when the CPU has AVX and F16C.
    unsafe { add(row, total) }
}

/// The fastest `AddHalves` the running CPU supports.
fn add_halves() -> AddHalves {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") && std::arch::is_x86_feature_detected!("f16c") {
        return add_halves_f16c;
    }
    add_halves_scalar
}

impl<'a> Table<'a> {
    /// `data` row-major, `dims` values a row.
    pub fn new(data: &'a [f32], dims: usize) -> Result<Table<'a>> {
        Self::checked(Values::F32(data), data.len(), dims)
    }

    /// The same, of half floats.
    pub fn from_f16(data: &'a [f16], dims: usize) -> Result<Table<'a>> {
        Self::checked(Values::F16(data, add_halves()), data.len(), dims)
    }

    fn checked(values: Values<'a>, len: usize, dims: usize) -> Result<Table<'a>> {
        if dims == 0 || !len.is_multiple_of(dims) {
            return Err(Error::InvalidArgument(format!("a table of {len} values does not hold rows of {dims} dimensions")));
        }
        Ok(Table { values, dims })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        match self.values {
            Values::F32(data) => data.len() / self.dims,
            Values::F16(data, _) => data.len() / self.dims,
        }
    }

    /// Values per row.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Adds row `id` to `total` (`dims` values).
    fn add_row(&self, id: u32, total: &mut [f32]) {
        let start = id as usize * self.dims;
        match self.values {
            Values::F32(data) => {
                for (sum, value) in total.iter_mut().zip(&data[start..start + self.dims]) {
                    *sum += value;
                }
            }
            Values::F16(data, add) => add(&data[start..start + self.dims], total),
        }
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
    let sum_run = |(ids, line): &mut (Vec<u32>, Vec<f32>), sums: &mut [f32], counts: &mut [u64], texts: &[&str]| -> Result<()> {
        for ((sum, count), text) in sums.chunks_mut(dims).zip(counts.iter_mut()).zip(texts) {
            *count = sum_text(tokenizer, table, &skipped, text, sum, ids, line)?;
        }
        Ok(())
    };
    if texts.len() <= TEXTS_PER_TASK {
        // One task (a question's text): handing it to the thread pool would only add a wake-up.
        sum_run(&mut (Vec::new(), vec![0f32; dims]), &mut sums, &mut counts, texts)?;
    } else {
        sums.par_chunks_mut(dims * TEXTS_PER_TASK)
            .zip(counts.par_chunks_mut(TEXTS_PER_TASK))
            .zip(texts.par_chunks(TEXTS_PER_TASK))
            .try_for_each_init(
                || (Vec::new(), vec![0f32; dims]),
                |scratch, ((sums, counts), texts)| sum_run(scratch, sums, counts, texts),
            )?;
    }
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
            table.add_row(id, line);
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
    fn a_half_float_table_sums_as_its_f32_widening() {
        let values: Vec<f32> = (0..5).flat_map(|i| [0.1 * i as f32, -1.7e-3 * i as f32, 3.0e4, 6.1e-5]).collect();
        let halves: Vec<f16> = values.iter().map(|&v| f16::from_f32(v)).collect();
        let widened: Vec<f32> = halves.iter().map(|h| h.to_f32()).collect();
        let texts = ["a b\nc zz a", "", "c\n\nb b"];
        let (from_halves, counts) = pooled_sums(&tokenizer(), &Table::from_f16(&halves, 4).unwrap(), &[1], &texts).unwrap();
        let (from_f32, same_counts) = pooled_sums(&tokenizer(), &Table::new(&widened, 4).unwrap(), &[1], &texts).unwrap();
        assert_eq!(counts, same_counts);
        assert_eq!(from_halves.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), from_f32.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        assert_ne!(widened, values, "the half floats round: the test compares with their widening");
        assert!(Table::from_f16(&halves, 3).is_err());
    }

    #[test]
    fn every_way_of_adding_halves_gives_the_scalar_sums() {
        // Every finite half, in rows of a length that leaves a tail after the lanes of eight.
        let halves: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).filter(|h| h.is_finite()).collect();
        let start: Vec<f32> = (0..halves.len()).map(|i| (i % 97) as f32 * 0.37 - 11.0).collect();
        let mut expected = start.clone();
        add_halves_scalar(&halves, &mut expected);
        for row in [13, 256, halves.len()] {
            let mut found = start.clone();
            for (part, total) in halves.chunks(row).zip(found.chunks_mut(row)) {
                add_halves()(part, total);
            }
            assert_eq!(found.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), expected.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        }
    }

    #[test]
    fn token_ids_keep_each_lines_count() {
        let (ids, counts) = token_ids(&tokenizer(), &["a b", "", "c a"]);
        assert_eq!((ids, counts), (vec![2, 3, 4, 2], vec![2, 0, 2]));
    }
}
