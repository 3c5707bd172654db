//! Hamming top-k over numpy arrays of packed codes, read in place (no copy).

use crate::error::to_py;
use maguyva_core::hamming::{distances, top_k_batch_offset, Codes, GroupOffsets, Kernel, SearchOptions};
use numpy::ndarray::Array2;
use numpy::{
    AllowTypeChange, IntoPyArray, PyArray1, PyArrayLike1, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArrayDyn,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(hamming_top_k, m)?)?;
    m.add_function(wrap_pyfunction!(hamming_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(hamming_distances, m)?)?;
    Ok(())
}

/// The popcount kernels this CPU supports, slowest first; the last is used by default.
#[pyfunction]
fn hamming_kernels() -> Vec<&'static str> {
    Kernel::available().into_iter().map(Kernel::name).collect()
}

/// The Hamming distance from one `query` code to every row of `codes`, in row order (int32).
#[pyfunction]
fn hamming_distances<'py>(
    py: Python<'py>,
    codes: PyReadonlyArray2<'py, u8>,
    query: PyReadonlyArray1<'py, u8>,
) -> PyResult<Bound<'py, PyArray1<i32>>> {
    let row_bytes = codes.shape()[1];
    let (code_bytes, query_bytes) = (contiguous(&codes, "codes")?, contiguous(&query, "the query")?);
    let found = py
        .detach(|| distances(&Codes::new(code_bytes, row_bytes)?, query_bytes, Kernel::detect()))
        .map_err(to_py)?;
    Ok(found.into_iter().map(|d| d as i32).collect::<Vec<i32>>().into_pyarray(py))
}

/// The k rows of `codes` nearest to each row of `queries` (or to the one 1-D query) by Hamming
/// distance: a pair of arrays (rows as int64, distances as int32), nearest first. With `groups`
/// (per row, its group) and `offsets` (per group, or per query and group), a row's distance is
/// `scale` times its Hamming distance plus its group's offset.
#[pyfunction]
#[pyo3(signature = (codes, queries, k, allow=None, threads=0, kernel=None, groups=None, offsets=None, scale=1))]
#[allow(clippy::too_many_arguments)]
fn hamming_top_k<'py>(
    py: Python<'py>,
    codes: PyReadonlyArray2<'py, u8>,
    queries: PyReadonlyArrayDyn<'py, u8>,
    k: usize,
    allow: Option<PyArrayLike1<'py, i64, AllowTypeChange>>,
    threads: usize,
    kernel: Option<&str>,
    groups: Option<PyReadonlyArray1<'py, u32>>,
    offsets: Option<PyReadonlyArrayDyn<'py, u32>>,
    scale: u32,
) -> PyResult<Bound<'py, PyTuple>> {
    let kernel = match kernel {
        None => Kernel::detect(),
        Some(name) => Kernel::from_name(name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown or unsupported popcount kernel {name:?}; this CPU has {:?}",
                hamming_kernels()
            ))
        })?,
    };
    let row_bytes = codes.shape()[1];
    let (query_count, query_bytes_per_row, single) = match queries.shape() {
        [bytes] => (1, *bytes, true),
        [count, bytes] => (*count, *bytes, false),
        shape => {
            return Err(PyValueError::new_err(format!(
                "queries must be one code (1-D) or a batch of codes (2-D), not {}-D",
                shape.len()
            )))
        }
    };
    if query_bytes_per_row != row_bytes {
        return Err(PyValueError::new_err(format!(
            "queries have {query_bytes_per_row} bytes per code but the codes have {row_bytes}"
        )));
    }
    let allow = allow.map(|a| rows_as_u32(a.as_slice()?)).transpose()?;
    let (code_bytes, query_bytes) = (contiguous(&codes, "codes")?, contiguous(&queries, "queries")?);
    let (group_of_row, offset_of_group) = match (&groups, &offsets) {
        (None, None) => (None, None),
        (Some(groups), Some(offsets)) => {
            let offsets_shape_fits = match offsets.shape() {
                [_] => query_count == 1,
                [count, _] => *count == query_count,
                _ => false,
            };
            if !offsets_shape_fits {
                return Err(PyValueError::new_err(
                    "offsets must be one row per query: 1-D for one query, 2-D (queries, groups) for a batch",
                ));
            }
            (Some(contiguous(groups, "groups")?), Some(contiguous(offsets, "offsets")?))
        }
        _ => return Err(PyValueError::new_err("groups and offsets are given together or not at all")),
    };
    let options = SearchOptions { threads, kernel };
    let hits = py
        .detach(|| {
            let matrix = Codes::new(code_bytes, row_bytes)?;
            let by = group_of_row.zip(offset_of_group).map(|(groups, offsets)| GroupOffsets { groups, offsets, scale });
            top_k_batch_offset(&matrix, query_bytes, k, allow.as_deref(), by, options)
        })
        .map_err(to_py)?;
    let width = hits.first().map_or(0, Vec::len);
    let rows = Array2::from_shape_fn((query_count, width), |(q, i)| i64::from(hits[q][i].row));
    let distances = Array2::from_shape_fn((query_count, width), |(q, i)| hits[q][i].distance as i32);
    if single {
        let (rows, distances) = (rows.row(0).to_owned(), distances.row(0).to_owned());
        return PyTuple::new(py, [rows.into_pyarray(py).into_any(), distances.into_pyarray(py).into_any()]);
    }
    PyTuple::new(py, [rows.into_pyarray(py).into_any(), distances.into_pyarray(py).into_any()])
}


/// The elements of `array` in place, or a clear error naming `what` when it is not contiguous.
fn contiguous<'a, T: numpy::Element, D: numpy::ndarray::Dimension>(
    array: &'a numpy::PyReadonlyArray<'_, T, D>,
    what: &str,
) -> PyResult<&'a [T]> {
    array.as_slice().map_err(|_| {
        PyValueError::new_err(format!("{what} must be a C-contiguous {} array", std::any::type_name::<T>().replace("u", "uint")))
    })
}

fn rows_as_u32(rows: &[i64]) -> PyResult<Vec<u32>> {
    rows.iter()
        .map(|&r| {
            u32::try_from(r).map_err(|_| PyValueError::new_err(format!("row {r} is not a valid row id")))
        })
        .collect()
}
