//! The search kernels of maguyva: the parts of answering a code-search question that must be fast.
//!
//! - [`hamming`]: exact k-nearest-neighbour search over packed binary embeddings by Hamming
//!   distance, with popcount chosen at run time (scalar, POPCNT, AVX2, AVX-512 VPOPCNTDQ).
//! - [`trigram`]: a trigram index over documents of arbitrary bytes; literal queries are answered
//!   from posting-list intersections and verified against the stored bytes.
//! - [`fusion`]: weighted Reciprocal Rank Fusion of several ranked lists with a centrality boost,
//!   path demotion and per-file deduplication.
//! - [`embed`]: static embeddings: WordPiece tokenization, token vectors summed line by line,
//!   the signs kept as bits.
//! - [`walk`]: the files of a repository worth indexing, honouring `.gitignore` and
//!   `.maguyvaignore`, with the reason for every file left out.
//!
//! The crate has no Python types in it; `maguyva-python` wraps it for the `maguyva` package.
//!
//! ```
//! use maguyva_core::hamming::{Codes, top_k};
//!
//! // Three 64-bit codes, one row of 8 bytes each.
//! let data = [0u8; 8].iter().chain(&[0xffu8; 8]).chain(&[0x0fu8; 8]).copied().collect::<Vec<_>>();
//! let codes = Codes::new(&data, 8).unwrap();
//! let hits = top_k(&codes, &[0u8; 8], 2, None).unwrap();
//! assert_eq!(hits.iter().map(|h| (h.row, h.distance)).collect::<Vec<_>>(), vec![(0, 0), (2, 32)]);
//! ```
#![deny(missing_docs)]

pub mod embed;
mod error;
pub mod fusion;
pub mod hamming;
pub mod trigram;
pub mod walk;

pub use error::{Error, Result};
