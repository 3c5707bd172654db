//! The words of the names a source spells outside the parts left out.

use maguyva_core::names::{distinct_words, stem_ascii, text_tokens as tokens_of_texts, AGENT, KEEP_DOUBLE, NOT_PLURAL, SUFFIXES, UNDOUBLE};
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyString;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(name_words, m)?)?;
    m.add_function(wrap_pyfunction!(name_stems, m)?)?;
    // The stemmer's tables, which `maguyva.lexicon.stem` reads: one list for both stemmers.
    m.add("STEM_SUFFIXES", SUFFIXES.to_vec())?;
    m.add("STEM_AGENT", AGENT.to_vec())?;
    m.add("STEM_UNDOUBLE", UNDOUBLE.to_vec())?;
    m.add("STEM_KEEP_DOUBLE", KEEP_DOUBLE)?;
    m.add("STEM_NOT_PLURAL", NOT_PLURAL.to_vec())?;
    m.add_function(wrap_pyfunction!(text_tokens, m)?)?;
    Ok(())
}

/// (tokens, ids, counts, not_ascii): the distinct tokens (runs of ASCII letters, digits, `_` and
/// `$`) of `texts` in the order first met, every text's tokens one text after another as indexes
/// into them (uint32), each text's count of tokens (uint32), and the texts left to the caller
/// (those holding a character past ASCII, or that are not valid UTF-8), by index.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn text_tokens<'py>(
    py: Python<'py>,
    texts: Vec<Bound<'py, PyString>>,
) -> (Vec<String>, Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<u32>>, Vec<u32>) {
    let borrowed: Vec<Option<&str>> = texts.iter().map(|text| text.to_str().ok()).collect();
    let found = py.detach(|| tokens_of_texts(&borrowed));
    let tokens = found.tokens.iter().map(|token| (*token).to_owned()).collect();
    (tokens, found.ids.into_pyarray(py), found.counts.into_pyarray(py), found.not_ascii)
}

/// The distinct words (three letters or more, letters only, lowercased) of the distinct ASCII
/// identifiers of `source` outside the byte ranges `skip`, in the order they first appear.
#[pyfunction]
#[pyo3(signature = (source, skip = Vec::new()))]
fn name_words(py: Python<'_>, source: &[u8], skip: Vec<(usize, usize)>) -> Vec<String> {
    py.detach(|| distinct_words(source, &skip))
}

/// The stems (`maguyva.lexicon.stem`) of `name_words(source, skip)`, in the same order (a stem
/// may come more than once).
#[pyfunction]
#[pyo3(signature = (source, skip = Vec::new()))]
fn name_stems(py: Python<'_>, source: &[u8], skip: Vec<(usize, usize)>) -> Vec<String> {
    py.detach(|| {
        // Letters only: every word is ASCII, and has a stem.
        distinct_words(source, &skip).into_iter().map(|word| stem_ascii(&word).unwrap_or(word)).collect()
    })
}
