//! The one place where core errors become Python exceptions.

use maguyva_core::Error;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError, PyValueError};
use pyo3::prelude::*;

// The exception is the package's own (`maguyva.errors.CorruptIndexError`, a `MaguyvaError`), so
// that a caller catching the package's one error family also catches a damaged file found here.
pyo3::import_exception!(maguyva.errors, CorruptIndexError);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CorruptIndexError", m.py().get_type::<CorruptIndexError>())
}

/// Converts a core error into the Python exception a caller would expect for it.
pub(crate) fn to_py(err: Error) -> PyErr {
    let message = err.to_string();
    match err {
        Error::Io { path, source } => match source.raw_os_error() {
            // With its errno, Python picks the subclass (ENOSPC, EROFS...) and fills `strerror`
            // and `filename`, which is what callers report to a user.
            Some(code) => {
                let suffix = format!(" (os error {code})");
                let shown = source.to_string();
                let strerror = shown.strip_suffix(&suffix).unwrap_or(&shown).to_owned();
                PyOSError::new_err((code, strerror, path.to_string_lossy().into_owned()))
            }
            None => match source.kind() {
                std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
                std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
                _ => PyOSError::new_err(message),
            },
        },
        Error::Corrupt { .. } => CorruptIndexError::new_err(message),
        Error::InvalidArgument(_) | Error::RowOutOfRange { .. } | Error::DuplicateDocument(_) => {
            PyValueError::new_err(message)
        }
    }
}
