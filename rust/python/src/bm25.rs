//! BM25 scores of a numpy term-frequency table.

use crate::error::to_py;
use maguyva_core::bm25::{scores, Bm25};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bm25_scores, m)?)?;
    Ok(())
}

/// The BM25 score of each row of `tf` (float64, rows x terms, C order): `lengths` per row,
/// `term_weights` per term (its weight times its idf), `mean_length` of the whole collection.
/// The same floats as numpy's `(w * tf * (k1 + 1) / (tf + norm[:, None])).sum(axis=1)`.
#[pyfunction]
fn bm25_scores<'py>(
    py: Python<'py>,
    tf: PyReadonlyArray2<'py, f64>,
    lengths: PyReadonlyArray1<'py, f64>,
    term_weights: PyReadonlyArray1<'py, f64>,
    k1: f64,
    b: f64,
    mean_length: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let (tf, lengths, term_weights) = (tf.as_slice()?, lengths.as_slice()?, term_weights.as_slice()?);
    let found = py.detach(|| scores(tf, lengths, term_weights, Bm25 { k1, b, mean_length })).map_err(to_py)?;
    Ok(found.into_pyarray(py))
}
