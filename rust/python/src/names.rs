//! The words of the names a source spells outside the parts left out.

use maguyva_core::names::distinct_words;
use pyo3::prelude::*;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(name_words, m)?)?;
    Ok(())
}

/// The distinct words (three letters or more, letters only, lowercased) of the distinct ASCII
/// identifiers of `source` outside the byte ranges `skip`, in the order they first appear.
#[pyfunction]
#[pyo3(signature = (source, skip = Vec::new()))]
fn name_words(py: Python<'_>, source: &[u8], skip: Vec<(usize, usize)>) -> Vec<String> {
    py.detach(|| distinct_words(source, &skip))
}
