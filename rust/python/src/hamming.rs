//! Hamming top-k over numpy arrays of packed codes, read in place (no copy).

use crate::error::to_py;
use maguyva_core::hamming::{top_k_batch, Codes, Kernel, SearchOptions};
use numpy::ndarray::Array2;
use numpy::{
    AllowTypeChange, IntoPyArray, PyArrayLike1, PyReadonlyArray2, PyReadonlyArrayDyn,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(hamming_top_k, m)?)?;
    m.add_function(wrap_pyfunction!(hamming_kernels, m)?)?;
    Ok(())
}

/// The popcount kernels this CPU supports, slowest first; the last is used by default.
#[pyfunction]
fn hamming_kernels() -> Vec<&'static str> {
    Kernel::available().into_iter().map(Kernel::name).collect()
}

/// The k rows of `codes` nearest to each row of `queries` (or to the one 1-D query) by Hamming
/// distance: a pair of arrays (rows as int64, distances as int32), nearest first.
#[pyfunction]
#[pyo3(signature = (codes, queries, k, allow=None, threads=0, kernel=None))]
fn hamming_top_k<'py>(
    py: Python<'py>,
    codes: PyReadonlyArray2<'py, u8>,
    queries: PyReadonlyArrayDyn<'py, u8>,
    k: usize,
    allow: Option<PyArrayLike1<'py, i64, AllowTypeChange>>,
    threads: usize,
    kernel: Option<&str>,
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
    let code_bytes = codes
        .as_slice()
        .map_err(|_| PyValueError::new_err("codes must be a C-contiguous uint8 array"))?;
    let query_bytes = queries
        .as_slice()
        .map_err(|_| PyValueError::new_err("queries must be a C-contiguous uint8 array"))?;
    let options = SearchOptions { threads, kernel };
    let hits = py
        .detach(|| {
            let matrix = Codes::new(code_bytes, row_bytes)?;
            top_k_batch(&matrix, query_bytes, k, allow.as_deref(), options)
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


fn rows_as_u32(rows: &[i64]) -> PyResult<Vec<u32>> {
    rows.iter()
        .map(|&r| {
            u32::try_from(r).map_err(|_| PyValueError::new_err(format!("row {r} is not a valid row id")))
        })
        .collect()
}
