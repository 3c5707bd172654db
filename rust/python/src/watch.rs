//! The watch of a repository's folders (Linux).

use crate::error::to_py;
use crate::walk::{walked, Files};
use maguyva_core::walk::WalkOptions;
use maguyva_core::watch::TreeWatch as CoreTreeWatch;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TreeWatch>()
}

/// A watch of the folders of the tree at `root` (see `maguyva_core::watch`).
#[pyclass(module = "maguyva._core")]
struct TreeWatch {
    inner: CoreTreeWatch,
}

#[pymethods]
impl TreeWatch {
    #[new]
    fn new(root: PathBuf) -> PyResult<Self> {
        Ok(TreeWatch { inner: CoreTreeWatch::new(&root).map_err(to_py)? })
    }

    /// `walk` of the root, then the folders it entered watched.
    #[pyo3(signature = (max_file_size=1_000_000, include_secrets=false))]
    fn walk<'py>(&mut self, py: Python<'py>, max_file_size: u64, include_secrets: bool) -> PyResult<(Files, Bound<'py, PyDict>)> {
        let options = WalkOptions { max_file_size, include_secrets, ..WalkOptions::default() };
        let inner = &mut self.inner;
        let report = py.detach(|| inner.walk(&options)).map_err(to_py)?;
        walked(py, report)
    }

    /// The count of changes seen so far, after reading what the kernel queued.
    fn changes(&mut self) -> PyResult<u64> {
        self.inner.changes().map_err(to_py)
    }

    /// How many folders are watched.
    #[getter]
    fn watched(&self) -> usize {
        self.inner.watched()
    }

    /// How many walks walked only what changed since the walk before.
    #[getter]
    fn partial_walks(&self) -> u64 {
        self.inner.partial_walks()
    }

    #[getter]
    fn root(&self) -> PathBuf {
        self.inner.root().to_path_buf()
    }
}
