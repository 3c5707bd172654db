//! PageRank and in-degree of a dependency graph given as numpy edge columns.

use crate::error::to_py;
use maguyva_core::centrality::{centrality, PageRank};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(graph_centrality, m)?)?;
    Ok(())
}

/// `(ranks, in_degree, converged)` of the graph of `node_count` nodes with an edge
/// `src[e] -> dst[e]` (int64 columns) for every `e`: PageRank (float64, summing to 1; parallel
/// edges weigh their number) and the count of distinct nodes with an edge to each (uint32).
#[pyfunction]
#[pyo3(signature = (node_count, src, dst, *, alpha, max_iterations, tolerance))]
#[allow(clippy::type_complexity)]
fn graph_centrality<'py>(
    py: Python<'py>,
    node_count: usize,
    src: PyReadonlyArray1<'py, i64>,
    dst: PyReadonlyArray1<'py, i64>,
    alpha: f64,
    max_iterations: usize,
    tolerance: f64,
) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<u32>>, bool)> {
    let (src, dst) = (src.as_slice()?, dst.as_slice()?);
    let params = PageRank { alpha, max_iterations, tolerance };
    let found = py.detach(|| centrality(node_count, src, dst, params)).map_err(to_py)?;
    Ok((found.ranks.into_pyarray(py), found.in_degree.into_pyarray(py), found.converged))
}
