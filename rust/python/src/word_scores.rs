//! The structural modality's question words summed over numpy word postings.

use crate::error::to_py;
use maguyva_core::word_scores::{accumulate, Form, Term};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(word_scores, m)?)?;
    Ok(())
}

/// A term as Python gives it: its weight, whether its one form is the word's own posting, and
/// its forms as (symbol ids int64, values float64, factor).
type PyTerm<'py> = (f64, bool, Vec<(PyReadonlyArray1<'py, i64>, PyReadonlyArray1<'py, f64>, f64)>);

/// (symbols, total, covered) of the question's `terms` over `count` symbols: the symbols reached
/// in the order first reached, only those `within` (bool, one per symbol) keeps when given,
/// with the sum of their term values (the best form's, scaled by its factor, or the own
/// posting's as it is) and of their terms' weights.
#[pyfunction]
#[pyo3(signature = (count, terms, within=None))]
#[allow(clippy::type_complexity)]
fn word_scores<'py>(
    py: Python<'py>,
    count: usize,
    terms: Vec<PyTerm<'py>>,
    within: Option<PyReadonlyArray1<'py, bool>>,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
    let mut read = Vec::with_capacity(terms.len());
    for (weight, direct, forms) in &terms {
        let mut read_forms = Vec::with_capacity(forms.len());
        for (ids, values, factor) in forms {
            read_forms.push(Form { ids: ids.as_slice()?, values: values.as_slice()?, factor: *factor });
        }
        read.push(Term { weight: *weight, forms: read_forms, direct: *direct });
    }
    let mask = within.as_ref().map(|m| m.as_slice()).transpose()?;
    let reached = py.detach(|| accumulate(count, &read, mask)).map_err(to_py)?;
    Ok((reached.symbols.into_pyarray(py), reached.total.into_pyarray(py), reached.covered.into_pyarray(py)))
}
