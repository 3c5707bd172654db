//! A symbol table's lookups: ids grouped by key, rows ordered by several columns, sorted keys'
//! values summed by key.

use crate::error::to_py;
use maguyva_core::groups::{group_by_key, merged_sums, ordered_rows, Column};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(group_ids, m)?)?;
    m.add_function(wrap_pyfunction!(order_rows, m)?)?;
    m.add_function(wrap_pyfunction!(key_sums, m)?)?;
    Ok(())
}

/// (firsts, ids, bounds): the ids `ids[offsets[j]:offsets[j + 1]]` of each source j grouped by
/// its key `keys[j]`, keys in the order first met (`firsts`: each one's first source), a key's
/// ids those of its sources in source order (`ids[bounds[g]:bounds[g + 1]]`).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn group_ids<'py>(
    py: Python<'py>,
    keys: Vec<Bound<'py, PyString>>,
    ids: PyReadonlyArray1<'py, i64>,
    offsets: PyReadonlyArray1<'py, i64>,
) -> PyResult<(Vec<usize>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>)> {
    let texts = keys.iter().map(|key| key.to_str()).collect::<PyResult<Vec<&str>>>()?;
    let grouped = group_by_key(&texts, ids.as_slice()?, offsets.as_slice()?).map_err(to_py)?;
    Ok((grouped.firsts, grouped.ids.into_pyarray(py), grouped.bounds.into_pyarray(py)))
}

/// The rows in order of `columns` (int64 or float64 arrays, the first deciding), each ascending
/// unless its `descending` flag is set (only descending floats are taken); rows equal in every
/// column in row order.
#[pyfunction]
fn order_rows<'py>(
    py: Python<'py>,
    columns: Vec<Bound<'py, PyAny>>,
    descending: Vec<bool>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    if columns.len() != descending.len() {
        return Err(PyValueError::new_err("one direction is needed for each column"));
    }
    let mut integers: Vec<(usize, PyReadonlyArray1<'py, i64>)> = Vec::new();
    let mut floats: Vec<(usize, PyReadonlyArray1<'py, f64>)> = Vec::new();
    for (i, (column, &down)) in columns.iter().zip(&descending).enumerate() {
        if let Ok(values) = column.extract::<PyReadonlyArray1<'py, i64>>() {
            integers.push((i, values));
        } else if down {
            floats.push((i, column.extract::<PyReadonlyArray1<'py, f64>>()?));
        } else {
            return Err(PyValueError::new_err("a column is int64, or float64 in descending order"));
        }
    }
    let mut ordering: Vec<Option<Column<'_>>> = vec![None; columns.len()];
    for (i, values) in &integers {
        let slice = values.as_slice()?;
        ordering[*i] = Some(if descending[*i] { Column::Descending(slice) } else { Column::Ascending(slice) });
    }
    for (i, values) in &floats {
        ordering[*i] = Some(Column::DescendingFloat(values.as_slice()?));
    }
    let ordering: Vec<Column<'_>> = ordering.into_iter().flatten().collect();
    let order = py.detach(|| ordered_rows(&ordering)).map_err(to_py)?;
    Ok(order.into_pyarray(py))
}

/// (keys, sums): the distinct keys of `parts` (int64 arrays, each ascending), ascending, and the
/// sum of each one's `values` (float64 arrays, one per part) in the order of the parts
/// concatenated (`groups::merged_sums`).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn key_sums<'py>(
    py: Python<'py>,
    parts: Vec<PyReadonlyArray1<'py, i64>>,
    values: Vec<PyReadonlyArray1<'py, f64>>,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>)> {
    let keys = parts.iter().map(|part| part.as_slice()).collect::<Result<Vec<&[i64]>, _>>()?;
    let weights = values.iter().map(|part| part.as_slice()).collect::<Result<Vec<&[f64]>, _>>()?;
    let (found, sums) = py.detach(|| merged_sums(&keys, &weights)).map_err(to_py)?;
    Ok((found.into_pyarray(py), sums.into_pyarray(py)))
}
