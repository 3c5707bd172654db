//! `maguyva._core`: the kernels of `maguyva-core` for Python. Each file here wraps one core
//! module and only converts types; the algorithms and their tests live in the core crate.

use pyo3::prelude::*;

mod bm25;
mod centrality;
mod embed;
mod error;
mod fusion;
mod groups;
mod hamming;
mod names;
mod trigram;
mod walk;
#[cfg(target_os = "linux")]
mod watch;
mod word_scores;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    error::register(m)?;
    hamming::register(m)?;
    trigram::register(m)?;
    fusion::register(m)?;
    groups::register(m)?;
    walk::register(m)?;
    #[cfg(target_os = "linux")]
    watch::register(m)?;
    embed::register(m)?;
    bm25::register(m)?;
    centrality::register(m)?;
    names::register(m)?;
    word_scores::register(m)?;
    Ok(())
}
