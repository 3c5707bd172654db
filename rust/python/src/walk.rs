//! The repository walk and the parallel file reader.

use crate::error::to_py;
use maguyva_core::walk::{read_files as core_read_files, walk as core_walk, ReadOutcome, WalkOptions, WalkReport};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(walk, m)?)?;
    m.add_function(wrap_pyfunction!(read_files, m)?)?;
    Ok(())
}

/// Found files as (path relative to the root, '/'-separated, size, mtime_ns). Paths go to Python
/// as `str` (undecodable bytes as surrogate escapes, like `os.fsdecode`): building a
/// `pathlib.Path` per file cost a third of a walk's time.
pub(crate) type Files = Vec<(OsString, u64, u64)>;

/// `path` with '/' between its components on every platform, as the index stores paths.
fn slash_separated(path: PathBuf) -> OsString {
    if std::path::MAIN_SEPARATOR == '/' {
        return path.into_os_string();
    }
    let mut joined = OsString::new();
    for (i, component) in Path::new(&path).components().enumerate() {
        if i > 0 {
            joined.push("/");
        }
        joined.push(component.as_os_str());
    }
    joined
}

/// Walks `root`: returns (files as (relative '/'-separated path, size, mtime_ns) sorted by path,
/// skipped counts by reason).
#[pyfunction]
#[pyo3(signature = (root, max_file_size=1_000_000, include_hidden=false, include_dependency_dirs=false, respect_gitignore=true, include_secrets=false))]
fn walk<'py>(
    py: Python<'py>,
    root: PathBuf,
    max_file_size: u64,
    include_hidden: bool,
    include_dependency_dirs: bool,
    respect_gitignore: bool,
    include_secrets: bool,
) -> PyResult<(Files, Bound<'py, PyDict>)> {
    let options =
        WalkOptions { max_file_size, include_hidden, include_dependency_dirs, respect_gitignore, include_secrets, list_folders: false };
    let report = py.detach(|| core_walk(&root, &options)).map_err(to_py)?;
    walked(py, report)
}

/// A walk's report as `walk` returns it.
pub(crate) fn walked(py: Python<'_>, report: WalkReport) -> PyResult<(Files, Bound<'_, PyDict>)> {
    let skipped = PyDict::new(py);
    for (reason, count) in &report.skipped {
        skipped.set_item(reason.name(), count)?;
    }
    let files = report.files.into_iter().map(|f| (slash_separated(f.path), f.size, f.mtime_ns)).collect();
    Ok((files, skipped))
}

/// Reads files (paths relative to `root`) in parallel. Each result is the file's bytes, or the
/// name of the reason it was skipped ("binary", "unreadable", "vanished", "too_large").
#[pyfunction]
#[pyo3(signature = (root, paths, max_file_size=1_000_000))]
fn read_files(py: Python<'_>, root: PathBuf, paths: Vec<PathBuf>, max_file_size: u64) -> PyResult<Vec<Py<PyAny>>> {
    let outcomes = py.detach(|| core_read_files(&root, &paths, max_file_size));
    outcomes
        .into_iter()
        .map(|outcome| match outcome {
            ReadOutcome::Text(bytes) => Ok(PyBytes::new(py, &bytes).into_any().unbind()),
            ReadOutcome::Skipped(reason) => Ok(reason.name().into_pyobject(py)?.into_any().unbind()),
        })
        .collect()
}
