//! The trigram index as a Python class. Searches release the GIL.

use crate::error::to_py;
use maguyva_core::background::{self, Background};
use maguyva_core::trigram::{ChunkCounts, ChunkLayout, LiteralMatch, RegexSearch, TrigramIndex as CoreIndex};
use numpy::ndarray::{Array1, Array2};
use numpy::{IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Mutex;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TrigramIndex>()?;
    m.add_class::<LiteralMatches>()?;
    m.add_class::<PendingChunkCounts>()?;
    m.add_function(wrap_pyfunction!(chunk_term_table, m)?)?;
    Ok(())
}

/// (term, chunk, count) columns (uint32, as `TrigramIndex.chunk_line_counts` gives them) as a
/// table: the chunks holding any term, ascending (uint32), a float64 (chunks, width) array of
/// their counts, and each term's count of chunks counting it (int64).
#[pyfunction]
fn chunk_term_table<'py>(
    py: Python<'py>,
    terms: PyReadonlyArray1<'py, u32>,
    chunks: PyReadonlyArray1<'py, u32>,
    counts: PyReadonlyArray1<'py, u32>,
    chunk_count: usize,
    width: usize,
) -> PyResult<Bound<'py, PyTuple>> {
    let (terms, chunks, counts) = (terms.as_slice()?, chunks.as_slice()?, counts.as_slice()?);
    let found = py
        .detach(|| maguyva_core::trigram::chunk_term_table(terms, chunks, counts, chunk_count, width))
        .map_err(to_py)?;
    let rows = found.ids.len();
    let table = Array2::from_shape_vec((rows, width), found.table).map_err(|e| PyValueError::new_err(e.to_string()))?;
    PyTuple::new(
        py,
        [
            Array1::from_vec(found.ids).into_pyarray(py).into_any(),
            table.into_pyarray(py).into_any(),
            Array1::from_vec(found.document_frequency).into_pyarray(py).into_any(),
        ],
    )
}

/// The terms' bytes, once there is one case flag per term.
fn terms_with_flags(terms: Vec<Text>, case_insensitive: &[bool]) -> PyResult<Vec<Vec<u8>>> {
    if terms.len() != case_insensitive.len() {
        return Err(PyValueError::new_err(format!(
            "{} terms but {} case_insensitive flags",
            terms.len(),
            case_insensitive.len()
        )));
    }
    Ok(terms.into_iter().map(Text::into_bytes).collect())
}

/// Text given as `str` is searched as its UTF-8 bytes.
#[derive(FromPyObject)]
enum Text {
    Bytes(Vec<u8>),
    Str(String),
}

impl Text {
    fn into_bytes(self) -> Vec<u8> {
        match self {
            Text::Bytes(b) => b,
            Text::Str(s) => s.into_bytes(),
        }
    }
}

/// Documents given as (id, content): `bytes` read where Python holds them (a build's contents
/// are most of its memory, and a copy freed after the build stays resident), `str` as its
/// UTF-8 bytes.
fn documents<'a>(docs: &'a [(u32, Bound<'_, PyAny>)]) -> PyResult<Vec<(u32, Cow<'a, [u8]>)>> {
    docs.iter()
        .map(|(id, content)| match content.cast::<PyBytes>() {
            Ok(bytes) => Ok((*id, Cow::Borrowed(bytes.as_bytes()))),
            Err(_) => Ok((*id, Cow::Owned(content.extract::<String>()?.into_bytes()))),
        })
        .collect()
}

/// A trigram index over documents of bytes, with the documents stored in it. Weakly
/// referenceable: the readers and builds of a process share a loaded file while one holds it.
#[pyclass(module = "maguyva._core", frozen, weakref)]
pub(crate) struct TrigramIndex {
    inner: CoreIndex,
}

#[pymethods]
impl TrigramIndex {
    /// Builds an index from (doc_id, content) pairs. Returns the index and the ids of the
    /// documents skipped as binary.
    #[staticmethod]
    fn build(py: Python<'_>, docs: Vec<(u32, Bound<'_, PyAny>)>) -> PyResult<(TrigramIndex, Vec<u32>)> {
        let docs = documents(&docs)?;
        let (inner, report) = py.detach(|| CoreIndex::build(docs)).map_err(to_py)?;
        Ok((TrigramIndex { inner }, report.skipped_binary))
    }

    /// This index's documents `kept` ((old id, new id) pairs, in the same order under both) and
    /// the documents `added`, as one new index, the same as a build of those documents. Returns
    /// the index and the ids of the added documents skipped as binary.
    fn merged(&self, py: Python<'_>, kept: Vec<(u32, u32)>, added: Vec<(u32, Bound<'_, PyAny>)>) -> PyResult<(TrigramIndex, Vec<u32>)> {
        let added = documents(&added)?;
        let (inner, report) = py.detach(|| self.inner.merged(&kept, added)).map_err(to_py)?;
        Ok((TrigramIndex { inner }, report.skipped_binary))
    }

    /// Loads an index saved by `save`; a damaged file raises CorruptIndexError.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<TrigramIndex> {
        let inner = py.detach(|| CoreIndex::load(&path)).map_err(to_py)?;
        Ok(TrigramIndex { inner })
    }

    /// Reads an index from the bytes `to_bytes` gave.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<TrigramIndex> {
        let inner = py.detach(|| CoreIndex::from_bytes(data)).map_err(to_py)?;
        Ok(TrigramIndex { inner })
    }

    /// Writes the index to `path` atomically (a temporary file, then a rename).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.inner.save(&path)).map_err(to_py)
    }

    /// The serialized index.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.to_bytes())
    }

    /// Documents holding `literal`, with match counts and matching line numbers.
    #[pyo3(signature = (literal, case_insensitive=false))]
    fn search(&self, py: Python<'_>, literal: Text, case_insensitive: bool) -> PyResult<LiteralMatches> {
        let literal = literal.into_bytes();
        let matches = py.detach(|| self.inner.search(&literal, case_insensitive)).map_err(to_py)?;
        Ok(literal_matches(py, &matches))
    }

    /// Every document matching the regular expression `pattern` (the `regex` crate's syntax;
    /// `^` and `$` match at line ends), as `search` answers a literal: the documents its
    /// trigram plan allows are read and matched. ValueError for an invalid pattern or one past
    /// the size limits.
    #[pyo3(signature = (pattern, case_insensitive=false))]
    fn search_regex(&self, py: Python<'_>, pattern: &str, case_insensitive: bool) -> PyResult<LiteralMatches> {
        let search = RegexSearch::new(pattern, case_insensitive).map_err(to_py)?;
        let matches = py.detach(|| self.inner.search_regex(&search)).map_err(to_py)?;
        Ok(literal_matches(py, &matches))
    }

    /// Every line holding each of several literals, in one call: three flat arrays (term index,
    /// doc id, 1-based line), uint32, by term then doc then line. `case_insensitive[i]` says
    /// how term i is matched. A caller ranking by many terms saves a round trip per term.
    fn search_lines<'py>(
        &self,
        py: Python<'py>,
        terms: Vec<Text>,
        case_insensitive: Vec<bool>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let terms = terms_with_flags(terms, &case_insensitive)?;
        let (term_ids, doc_ids, lines) = py
            .detach(|| -> maguyva_core::Result<(Vec<u32>, Vec<u32>, Vec<u32>)> {
                let (mut term_ids, mut doc_ids, mut lines) = (Vec::new(), Vec::new(), Vec::new());
                let each: Vec<(&[u8], bool)> =
                    terms.iter().map(Vec::as_slice).zip(case_insensitive.iter().copied()).collect();
                for (t, matches) in self.inner.search_each(&each)?.into_iter().enumerate() {
                    for m in matches {
                        term_ids.extend(std::iter::repeat_n(t as u32, m.lines.len()));
                        doc_ids.extend(std::iter::repeat_n(m.doc_id, m.lines.len()));
                        lines.extend_from_slice(&m.lines);
                    }
                }
                Ok((term_ids, doc_ids, lines))
            })
            .map_err(to_py)?;
        PyTuple::new(
            py,
            [
                Array1::from_vec(term_ids).into_pyarray(py).into_any(),
                Array1::from_vec(doc_ids).into_pyarray(py).into_any(),
                Array1::from_vec(lines).into_pyarray(py).into_any(),
            ],
        )
    }

    /// How many of the lines holding each term each chunk holds: three arrays (term index,
    /// chunk, count), uint32, by term then chunk. Chunk c starts at line `chunk_start_key[c] &
    /// 0xffffffff` of document `chunk_start_key[c] >> 32`; document d's chunks are
    /// `file_chunk_offsets[d]` to `file_chunk_offsets[d + 1] - 1`; a line belongs to the last
    /// chunk of its document starting at or before it (or to the first).
    fn chunk_line_counts<'py>(
        &self,
        py: Python<'py>,
        terms: Vec<Text>,
        case_insensitive: Vec<bool>,
        chunk_start_key: PyReadonlyArray1<'py, i64>,
        file_chunk_offsets: PyReadonlyArray1<'py, i64>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let terms = terms_with_flags(terms, &case_insensitive)?;
        let start_key = chunk_start_key.as_slice()?;
        let file_offsets = file_chunk_offsets.as_slice()?;
        let counts = py
            .detach(|| {
                let each: Vec<(&[u8], bool)> =
                    terms.iter().map(Vec::as_slice).zip(case_insensitive.iter().copied()).collect();
                self.inner.chunk_line_counts(&each, ChunkLayout { start_key, file_offsets })
            })
            .map_err(to_py)?;
        chunk_counts_tuple(py, counts)
    }

    /// `chunk_line_counts`, started on the core's threads: returns at once, and the answer's
    /// `result()` gives the three arrays. The caller runs its other work meanwhile. Neither array
    /// may be written before `result()` returns or the answer is dropped (which waits for the
    /// search): the search reads them where they are.
    fn start_chunk_line_counts(
        slf: &Bound<'_, Self>,
        terms: Vec<Text>,
        case_insensitive: Vec<bool>,
        chunk_start_key: Bound<'_, PyArray1<i64>>,
        file_chunk_offsets: Bound<'_, PyArray1<i64>>,
    ) -> PyResult<PendingChunkCounts> {
        let terms = terms_with_flags(terms, &case_insensitive)?;
        let start_key = Borrowed::of(&chunk_start_key)?;
        let file_offsets = Borrowed::of(&file_chunk_offsets)?;
        let inner = &slf.get().inner;
        // SAFETY: both arrays are alive (bound here) and unwritten (the method's contract).
        let layout = move || unsafe { ChunkLayout { start_key: start_key.slice::<i64>(), file_offsets: file_offsets.slice::<i64>() } };
        let index = inner as *const CoreIndex as usize;
        // SAFETY (each job below): the pending answer holds the index and both arrays, and its
        // drop waits for the job; the arrays are not written meanwhile (the method's contract).
        let counting = if inner.planning_worth_the_pool() {
            // Planned and counted on a worker: the plan of a large index's common words is
            // itself worth starting the other modalities before.
            Counting::Running(background::start(move || {
                let index = unsafe { &*(index as *const CoreIndex) };
                let each: Vec<(&[u8], bool)> = terms.iter().map(Vec::as_slice).zip(case_insensitive.iter().copied()).collect();
                index.plan_chunk_line_counts(&each, layout()).and_then(|plan| index.counts_by_plan(&plan, layout()))
            }))
        } else {
            let each: Vec<(&[u8], bool)> = terms.iter().map(Vec::as_slice).zip(case_insensitive.iter().copied()).collect();
            // Planned here; counted here too when that costs less than waking a worker would.
            slf.py()
                .detach(|| -> maguyva_core::Result<Counting> {
                    let plan = inner.plan_chunk_line_counts(&each, layout())?;
                    if !plan.worth_the_pool() {
                        return Ok(Counting::Done(inner.counts_by_plan(&plan, layout())));
                    }
                    Ok(Counting::Running(background::start(move || {
                        let index = unsafe { &*(index as *const CoreIndex) };
                        index.counts_by_plan(&plan, layout())
                    })))
                })
                .map_err(to_py)?
        };
        Ok(PendingChunkCounts {
            counting: Mutex::new(Some(counting)),
            _held: (slf.clone().into_any().unbind(), chunk_start_key.into_any().unbind(), file_chunk_offsets.into_any().unbind()),
        })
    }

    /// Verified occurrence counts of each term in every document holding at least one:
    /// (doc ids uint32 (n,), counts uint32 (n, len(terms))).
    #[pyo3(signature = (terms, case_insensitive=false))]
    fn count_terms<'py>(
        &self,
        py: Python<'py>,
        terms: Vec<Text>,
        case_insensitive: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let terms: Vec<Vec<u8>> = terms.into_iter().map(Text::into_bytes).collect();
        let width = terms.len();
        let rows = py
            .detach(|| {
                let slices: Vec<&[u8]> = terms.iter().map(Vec::as_slice).collect();
                self.inner.count_terms(&slices, case_insensitive)
            })
            .map_err(to_py)?;
        let doc_ids = Array1::from_iter(rows.iter().map(|r| r.doc_id));
        let counts = Array2::from_shape_fn((rows.len(), width), |(i, j)| rows[i].counts[j]);
        PyTuple::new(py, [doc_ids.into_pyarray(py).into_any(), counts.into_pyarray(py).into_any()])
    }

    /// The ids of the indexed documents, ascending.
    fn doc_ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        Array1::from_iter(self.inner.doc_ids()).into_pyarray(py)
    }

    /// Length in bytes of a document, or None if it is not indexed.
    fn doc_len(&self, doc_id: u32) -> Option<usize> {
        self.inner.doc_len(doc_id)
    }

    /// The stored bytes of a document.
    fn doc_bytes<'py>(&self, py: Python<'py>, doc_id: u32) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self
            .inner
            .doc_bytes(doc_id)
            .ok_or_else(|| PyValueError::new_err(format!("document {doc_id} is not in the index")))?;
        Ok(PyBytes::new(py, bytes))
    }

    /// Lines `start..=end` (1-based) of a document, joined by their newlines; None when `start`
    /// is past its last line (a document of n newlines has n + 1 lines).
    fn doc_lines<'py>(&self, py: Python<'py>, doc_id: u32, start: usize, end: usize) -> PyResult<Option<Bound<'py, PyBytes>>> {
        if self.inner.doc_bytes(doc_id).is_none() {
            return Err(PyValueError::new_err(format!("document {doc_id} is not in the index")));
        }
        Ok(self.inner.doc_lines(doc_id, start, end).map(|bytes| PyBytes::new(py, bytes)))
    }

    /// Number of indexed documents.
    #[getter]
    fn doc_count(&self) -> usize {
        self.inner.doc_count()
    }

    /// Number of distinct trigrams.
    #[getter]
    fn trigram_count(&self) -> usize {
        self.inner.trigram_count()
    }

    /// Bytes taken by the posting lists.
    #[getter]
    fn postings_bytes(&self) -> usize {
        self.inner.postings_bytes()
    }

    /// Number of distinct words (runs of letters, digits, `_` and non-ASCII bytes).
    #[getter]
    fn word_count(&self) -> usize {
        self.inner.word_count()
    }

    /// Bytes taken by the word postings, which answer common words without reading documents.
    #[getter]
    fn word_bytes(&self) -> usize {
        self.inner.word_bytes()
    }

    /// Bytes taken by the stored documents.
    #[getter]
    fn content_bytes(&self) -> usize {
        self.inner.content_bytes()
    }

    /// Bytes of the whole serialized index.
    #[getter]
    fn size_bytes(&self) -> usize {
        self.inner.size_bytes()
    }

    fn __len__(&self) -> usize {
        self.inner.doc_count()
    }

    fn __repr__(&self) -> String {
        format!(
            "TrigramIndex(docs={}, trigrams={}, size_bytes={})",
            self.inner.doc_count(),
            self.inner.trigram_count(),
            self.inner.size_bytes()
        )
    }
}

/// Where a contiguous array's elements are, for a job on another thread: its owner is held
/// elsewhere for as long as the job runs.
#[derive(Clone, Copy)]
struct Borrowed {
    at: usize,
    len: usize,
}

impl Borrowed {
    fn of(array: &Bound<'_, PyArray1<i64>>) -> PyResult<Borrowed> {
        let readonly = array.readonly();
        let slice = readonly.as_slice()?;
        Ok(Borrowed { at: slice.as_ptr() as usize, len: slice.len() })
    }

    /// SAFETY: the array is alive and unwritten, and holds `T`s.
    unsafe fn slice<'a, T>(self) -> &'a [T] {
        unsafe { std::slice::from_raw_parts(self.at as *const T, self.len) }
    }
}

/// The counts of a started `chunk_line_counts`: done already, or running on the pool.
enum Counting {
    Done(maguyva_core::Result<ChunkCounts>),
    Running(Background<maguyva_core::Result<ChunkCounts>>),
}

impl Counting {
    fn wait(self) -> maguyva_core::Result<ChunkCounts> {
        match self {
            Counting::Done(counts) => counts,
            Counting::Running(job) => job.wait(),
        }
    }
}

/// A `chunk_line_counts` running on the core's threads (`TrigramIndex.start_chunk_line_counts`).
#[pyclass(module = "maguyva._core", frozen)]
pub(crate) struct PendingChunkCounts {
    counting: Mutex<Option<Counting>>,
    /// The index and the layout's arrays the search reads, alive until it is done.
    _held: (Py<PyAny>, Py<PyAny>, Py<PyAny>),
}

#[pymethods]
impl PendingChunkCounts {
    /// The three arrays of `chunk_line_counts`, waiting for the search without the GIL; once.
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let job = self.take().ok_or_else(|| PyValueError::new_err("the counts were already taken"))?;
        let counts = py.detach(|| job.wait()).map_err(to_py)?;
        chunk_counts_tuple(py, counts)
    }
}

impl PendingChunkCounts {
    fn take(&self) -> Option<Counting> {
        self.counting.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }
}

impl Drop for PendingChunkCounts {
    fn drop(&mut self) {
        // A running search reads what `_held` keeps alive: it must end before they can go.
        if let Some(Counting::Running(job)) = self.take() {
            let _ = job.join(); // a panic is the job's: a destructor must not raise it again
        }
    }
}

/// (term, chunk, count) as three uint32 arrays.
fn chunk_counts_tuple(py: Python<'_>, counts: ChunkCounts) -> PyResult<Bound<'_, PyTuple>> {
    PyTuple::new(
        py,
        [
            Array1::from_vec(counts.terms).into_pyarray(py).into_any(),
            Array1::from_vec(counts.chunks).into_pyarray(py).into_any(),
            Array1::from_vec(counts.counts).into_pyarray(py).into_any(),
        ],
    )
}

/// The documents matching a literal: parallel arrays, plus the matching lines of document `i`
/// at `lines[line_offsets[i]:line_offsets[i + 1]]`.
#[pyclass(module = "maguyva._core", frozen, get_all)]
pub(crate) struct LiteralMatches {
    /// Matching document ids, ascending (uint32).
    doc_ids: Py<PyArray1<u32>>,
    /// Non-overlapping occurrences per document (uint32).
    counts: Py<PyArray1<u32>>,
    /// Offsets into `lines`, one more than there are documents (uint64).
    line_offsets: Py<PyArray1<u64>>,
    /// 1-based numbers of the lines where a match starts, per document ascending (uint32).
    lines: Py<PyArray1<u32>>,
}

#[pymethods]
impl LiteralMatches {
    fn __len__(&self, py: Python<'_>) -> usize {
        PyUntypedArrayMethods::len(self.doc_ids.bind(py))
    }

    /// The matching line numbers of the `i`-th matching document.
    fn lines_of<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let offsets = self.line_offsets.bind(py).readonly();
        let offsets = offsets.as_slice()?;
        if i + 1 >= offsets.len() {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "match {i} out of range for {} matching documents",
                offsets.len() - 1
            )));
        }
        let lines = self.lines.bind(py).readonly();
        let slice = &lines.as_slice()?[offsets[i] as usize..offsets[i + 1] as usize];
        Ok(PyArray1::from_slice(py, slice))
    }
}


/// Matches as the flat arrays of `LiteralMatches`.
fn literal_matches(py: Python<'_>, matches: &[LiteralMatch]) -> LiteralMatches {
    let mut line_offsets = Vec::with_capacity(matches.len() + 1);
    line_offsets.push(0u64);
    let mut lines = Vec::new();
    for m in matches {
        lines.extend_from_slice(&m.lines);
        line_offsets.push(lines.len() as u64);
    }
    LiteralMatches {
        doc_ids: Array1::from_iter(matches.iter().map(|m| m.doc_id)).into_pyarray(py).unbind(),
        counts: Array1::from_iter(matches.iter().map(|m| m.count)).into_pyarray(py).unbind(),
        line_offsets: Array1::from_vec(line_offsets).into_pyarray(py).unbind(),
        lines: Array1::from_vec(lines).into_pyarray(py).unbind(),
    }
}
