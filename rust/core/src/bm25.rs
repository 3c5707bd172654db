//! BM25 over the rows of a term-frequency table: the text modality's score of each chunk.
//!
//! A row's terms are summed as numpy sums a row of a float64 array (`ndarray.sum(axis=1)`,
//! pairwise with eight accumulators), so that each score is, to the bit, the numpy expression
//! the text modality computed before it was moved here.

use crate::{Error, Result};

/// BM25's two constants and the collection's mean document length.
#[derive(Clone, Copy, Debug)]
pub struct Bm25 {
    /// Term-frequency saturation.
    pub k1: f64,
    /// Length normalisation (0: none, 1: full).
    pub b: f64,
    /// The mean length of every document of the collection, not only of the rows scored.
    pub mean_length: f64,
}

/// The score of each row of `tf` (row-major, `term_weights.len()` columns): the sum over terms
/// of `weight * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / mean_length))`, where the
/// weight is the term's own times its inverse document frequency, and `lengths[r]` is row r's
/// length.
pub fn scores(tf: &[f64], lengths: &[f64], term_weights: &[f64], params: Bm25) -> Result<Vec<f64>> {
    let width = term_weights.len();
    if tf.len() != lengths.len() * width {
        return Err(Error::InvalidArgument(format!(
            "a table of {} counts is not {} rows of {width} terms",
            tf.len(),
            lengths.len()
        )));
    }
    let Bm25 { k1, b, mean_length } = params;
    let mut row = vec![0.0f64; width];
    Ok(lengths
        .iter()
        .enumerate()
        .map(|(r, &length)| {
            let norm = k1 * ((1.0 - b) + (b * length) / mean_length);
            for (t, value) in row.iter_mut().enumerate() {
                let f = tf[r * width + t];
                *value = term_weights[t] * f * (k1 + 1.0) / (f + norm);
            }
            pairwise_sum(&row)
        })
        .collect())
}

/// numpy's pairwise summation of contiguous float64 values (`pairwise_sum` of its loops).
fn pairwise_sum(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 8 {
        values.iter().fold(0.0, |sum, &v| sum + v)
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&values[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for (j, acc) in r.iter_mut().enumerate() {
                *acc += values[i + j];
            }
            i += 8;
        }
        let mut sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &v in &values[i..] {
            sum += v;
        }
        sum
    } else {
        let half = n / 2;
        let half = half - half % 8;
        pairwise_sum(&values[..half]) + pairwise_sum(&values[half..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_saturate_with_frequency_and_fall_with_length() {
        let params = Bm25 { k1: 1.2, b: 0.75, mean_length: 10.0 };
        // One term of weight 1: tf 1 and 4 at the mean length, then tf 1 at four times it.
        let got = scores(&[1.0, 4.0, 1.0], &[10.0, 10.0, 40.0], &[1.0], params).unwrap();
        assert!((got[0] - 1.0).abs() < 1e-12, "tf 1 at the mean length scores the weight");
        assert!(got[1] > got[0] && got[1] < 2.2 * got[0], "saturating: {got:?}");
        assert!(got[2] < got[0]);
        // A row sums its terms; a term it lacks adds nothing.
        let two = scores(&[1.0, 0.0, 1.0, 1.0], &[10.0, 10.0], &[1.0, 2.0], params).unwrap();
        assert_eq!(two, [1.0, 3.0]);
        assert!(scores(&[1.0, 2.0], &[10.0], &[1.0], params).is_err());
    }

    #[test]
    fn sums_are_numpys_pairwise_order() {
        // 1e16 + 1 + ... loses the ones one at a time, not in eight accumulators.
        let mut values = vec![1.0f64; 17];
        values[0] = 1e16;
        let sequential = values.iter().fold(0.0, |s, &v| s + v);
        assert_eq!(sequential, 1e16);
        let first = 1e16 + 1.0; // the first accumulator: values 0 and 8
        assert_eq!(pairwise_sum(&values), (((first + 2.0) + (2.0 + 2.0)) + ((2.0 + 2.0) + (2.0 + 2.0))) + 1.0);
        assert!(pairwise_sum(&values) > sequential);
        let long: Vec<f64> = (0..1000).map(|i| f64::from(i) * 0.1).collect();
        let expected = pairwise_sum(&long[..496]) + pairwise_sum(&long[496..]);
        assert_eq!(pairwise_sum(&long), expected);
    }
}
