use std::path::PathBuf;

/// Every way a kernel call can fail. Messages are sentences a caller can act on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An argument has a shape or value the kernel cannot work with.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// A row id (in an allow-list, say) is not a row of the code matrix.
    #[error("row {row} is out of range: the code matrix has {rows} rows")]
    RowOutOfRange {
        /// The offending row id.
        row: u64,
        /// How many rows there are.
        rows: usize,
    },

    /// The same document id was given twice to a trigram index build.
    #[error("document id {0} was given more than once")]
    DuplicateDocument(u32),

    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },

    /// A serialized index is not one this version can read, or is damaged.
    #[error("{path}: not a valid maguyva trigram index: {reason}")]
    Corrupt {
        /// The file involved (empty when reading from memory).
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// The result type of this crate.
pub type Result<T> = std::result::Result<T, Error>;
