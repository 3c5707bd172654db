//! Weighted RRF over numpy arrays of chunk ids.

use crate::error::to_py;
use maguyva_core::fusion::{boost, fuse, ChunkTable, RankedList};
use numpy::ndarray::{Array1, Array2};
use numpy::{AllowTypeChange, IntoPyArray, PyArray1, PyArrayLike1, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rrf_fuse, m)?)?;
    m.add_function(wrap_pyfunction!(centrality_boost, m)?)?;
    Ok(())
}

/// The graph-importance multiplier `min(1 + 0.3 ln(1 + centrality), 1.5)`.
#[pyfunction]
fn centrality_boost(centrality: f32) -> f64 {
    boost(centrality)
}

type Ids<'py> = PyArrayLike1<'py, u32, AllowTypeChange>;
type Floats<'py> = PyArrayLike1<'py, f32, AllowTypeChange>;

/// Chunk ids from a uint32 array, an int64 array (numpy's default integer,
/// converted here because numpy's own type change costs more than the fusion), or any sequence.
fn chunk_ids(value: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    if let Ok(array) = value.cast::<PyArray1<u32>>() {
        return Ok(array.readonly().as_slice()?.to_vec());
    }
    if let Ok(array) = value.cast::<PyArray1<i64>>() {
        let ids = array.readonly();
        return ids
            .as_slice()?
            .iter()
            .map(|&id| u32::try_from(id).map_err(|_| PyValueError::new_err(format!("{id} is not a chunk id"))))
            .collect();
    }
    Ok(value.extract::<Ids>()?.as_slice()?.to_vec())
}

/// Weighted Reciprocal Rank Fusion with centrality boost, demotion and one chunk per file.
///
/// Returns (chunk ids uint32 (n,), scores float64 (n,), ranks int32 (n, lists) with -1 where a
/// list did not find the chunk, contributions float64 (n, lists)).
#[pyfunction]
#[pyo3(signature = (lists, weights, k, centrality, demotion, file_ids, top_k))]
#[allow(clippy::too_many_arguments)]
fn rrf_fuse<'py>(
    py: Python<'py>,
    lists: Vec<Bound<'py, PyAny>>,
    weights: Vec<f64>,
    k: f64,
    centrality: Floats<'py>,
    demotion: Floats<'py>,
    file_ids: Ids<'py>,
    top_k: usize,
) -> PyResult<Bound<'py, PyTuple>> {
    if lists.len() != weights.len() {
        return Err(PyValueError::new_err(format!(
            "{} ranked lists but {} weights",
            lists.len(),
            weights.len()
        )));
    }
    let id_lists = lists.iter().map(chunk_ids).collect::<PyResult<Vec<_>>>()?;
    let ranked: Vec<RankedList> =
        id_lists.iter().zip(&weights).map(|(ids, &weight)| RankedList { weight, ids }).collect();
    let chunks = ChunkTable {
        centrality: centrality.as_slice()?,
        demotion: demotion.as_slice()?,
        file: file_ids.as_slice()?,
    };
    let hits = fuse(&ranked, &chunks, k, top_k).map_err(to_py)?;

    let (n, m) = (hits.len(), ranked.len());
    let chunk_ids = Array1::from_iter(hits.iter().map(|h| h.chunk));
    let scores = Array1::from_iter(hits.iter().map(|h| h.score));
    let ranks = Array2::from_shape_fn((n, m), |(i, j)| hits[i].modalities[j].map_or(-1, |h| h.rank as i32));
    let contributions =
        Array2::from_shape_fn((n, m), |(i, j)| hits[i].modalities[j].map_or(0.0, |h| h.contribution));
    PyTuple::new(
        py,
        [
            chunk_ids.into_pyarray(py).into_any(),
            scores.into_pyarray(py).into_any(),
            ranks.into_pyarray(py).into_any(),
            contributions.into_pyarray(py).into_any(),
        ],
    )
}
