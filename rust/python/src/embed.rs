//! WordPiece tokenization and static-embedding pooling for Python. Both release the GIL.

use crate::error::to_py;
use maguyva_core::embed::{self, f16, AddedToken, Normalization, Table, WordPiece};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<WordPieceTokenizer>()?;
    Ok(())
}

/// A WordPiece tokenizer (BertNormalizer, BertPreTokenizer, WordPiece) from its parts.
#[pyclass(module = "maguyva._core", frozen)]
pub(crate) struct WordPieceTokenizer {
    inner: WordPiece,
}

#[pymethods]
impl WordPieceTokenizer {
    /// `tokens[i]` is token i; `added` holds (text, id) of the tokens found in the raw text
    /// before normalization.
    #[new]
    #[pyo3(signature = (tokens, unknown, prefix, max_chars, clean_text, chinese_chars, strip_accents, lowercase, added))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        tokens: Vec<String>,
        unknown: u32,
        prefix: String,
        max_chars: usize,
        clean_text: bool,
        chinese_chars: bool,
        strip_accents: bool,
        lowercase: bool,
        added: Vec<(String, u32)>,
    ) -> PyResult<WordPieceTokenizer> {
        let normalization = Normalization { clean_text, chinese_chars, strip_accents, lowercase };
        let added = added.into_iter().map(|(content, id)| AddedToken { content, id }).collect();
        let inner = WordPiece::new(tokens, unknown, prefix, max_chars, normalization, added).map_err(to_py)?;
        Ok(WordPieceTokenizer { inner })
    }

    /// The ids of every line, one after another (uint32), and each line's count (int64).
    fn token_ids<'py>(&self, py: Python<'py>, lines: Vec<String>) -> PyResult<Bound<'py, PyTuple>> {
        let (ids, counts) = py.detach(|| {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            embed::token_ids(&self.inner, &lines)
        });
        let counts: Vec<i64> = counts.into_iter().map(|c| c as i64).collect();
        PyTuple::new(py, [ids.into_pyarray(py).into_any(), counts.into_pyarray(py).into_any()])
    }

    /// Per text, the sum of its tokens' rows of `table` (float32 or float16, C-contiguous; sums
    /// in float32, (len(texts), dims)), summed line by line, and its token count (int64),
    /// tokens of `skip` left out.
    fn pooled_sums<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<String>,
        table: &Bound<'py, PyAny>,
        skip: PyReadonlyArray1<'py, u32>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let contiguous = || PyValueError::new_err("the table must be C-contiguous");
        let (singles, halves);
        let table = if let Ok(array) = table.extract::<PyReadonlyArray2<'py, f32>>() {
            singles = array;
            Table::new(singles.as_slice().map_err(|_| contiguous())?, singles.shape()[1])
        } else if let Ok(array) = table.extract::<PyReadonlyArray2<'py, f16>>() {
            halves = array;
            Table::from_f16(halves.as_slice().map_err(|_| contiguous())?, halves.shape()[1])
        } else {
            return Err(PyValueError::new_err("the table must be a 2-d float32 or float16 array"));
        }
        .map_err(to_py)?;
        let dims = table.dims();
        let skip = skip.as_slice()?;
        let (sums, counts) = py
            .detach(|| {
                let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
                embed::pooled_sums(&self.inner, &table, skip, &texts)
            })
            .map_err(to_py)?;
        let rows = counts.len();
        let sums = Array2::from_shape_vec((rows, dims), sums).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let counts: Vec<i64> = counts.into_iter().map(|c| c as i64).collect();
        let counts: Bound<'py, PyArray1<i64>> = counts.into_pyarray(py);
        PyTuple::new(py, [sums.into_pyarray(py).into_any(), counts.into_any()])
    }
}
