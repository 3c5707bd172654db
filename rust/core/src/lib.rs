//! The search kernels of maguyva: the parts of answering a code-search question that must be fast.
//!
//! - [`hamming`]: exact k-nearest-neighbour search over packed binary embeddings by Hamming
//!   distance, with popcount chosen at run time (scalar, POPCNT, AVX2, AVX-512 VPOPCNTDQ).
//! - [`trigram`]: a trigram index over documents of arbitrary bytes; literal queries are answered
//!   from posting-list intersections and verified against the stored bytes.
//! - [`fusion`]: weighted Reciprocal Rank Fusion of several ranked lists with a centrality boost,
//!   path demotion and per-file deduplication.
//! - [`bm25`]: BM25 scores of the rows of a term-frequency table (the text modality's chunks).
//! - [`centrality`]: PageRank and in-degree of the dependency graph, for every file and symbol.
//! - [`embed`]: static embeddings: WordPiece tokenization, token vectors summed line by line,
//!   the signs kept as bits.
//! - [`word_scores`]: the question words of a structural search summed over the symbols'
//!   word postings.
//! - [`groups`]: a symbol table's lookups: ids grouped by key in the order first met, rows
//!   ordered by several columns.
//! - [`names`]: the distinct identifiers a source spells outside the parts left out (its comments).
//! - [`background`]: a job on the thread pool while the caller goes on (a question's text
//!   modality counting while the others run).
//! - [`walk`]: the files of a repository worth indexing, honouring `.gitignore` and
//!   `.maguyvaignore`, with the reason for every file left out.
//! - [`watch`] (Linux): the folders a walk entered, watched, so that a check finds nothing
//!   changed without walking again.
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
//!
//! A question answered end to end in miniature: the text and semantic retrievers each rank three
//! chunks (one per file, the third a vendored copy), and fusion merges their lists by their
//! intent's weights, with the copy demoted.
//!
//! ```
//! use maguyva_core::fusion::{fuse, ChunkTable, RankedList};
//! use maguyva_core::hamming::{top_k, Codes};
//! use maguyva_core::trigram::TrigramIndex;
//!
//! let chunks = [
//!     "def retry(request):\n    return send(request)\n",
//!     "def send(request):\n    return post(request)\n",
//!     "# vendored copy\ndef retry(request): pass\n",
//! ];
//! let (text, _) = TrigramIndex::build(chunks.iter().enumerate().map(|(id, c)| (id as u32, c.as_bytes().to_vec())).collect())?;
//! // The text retriever: the chunks holding the literal, here in id order.
//! let literal: Vec<u32> = text.search(b"retry", false)?.iter().map(|m| m.doc_id).collect();
//! assert_eq!(literal, [0, 2]);
//! assert_eq!(text.search(b"retry", false)?[0].lines, [1]);
//!
//! // The semantic retriever: one 8-bit code per chunk, nearest to the question's code first.
//! let codes = [0b0000_0001u8, 0b0000_0000, 0b0000_0011];
//! let nearest: Vec<u32> = top_k(&Codes::new(&codes, 1)?, &[0], 3, None)?.iter().map(|n| n.row).collect();
//! assert_eq!(nearest, [1, 0, 2]);
//!
//! // Fusion: each list's rank r adds weight / (k + r + 1); the vendored copy's score is halved.
//! let table = ChunkTable { centrality: &[0.0; 3], demotion: &[1.0, 1.0, 0.5], file: &[0, 1, 2] };
//! let lists = [RankedList { weight: 1.0, ids: &literal }, RankedList { weight: 0.5, ids: &nearest }];
//! let fused = fuse(&lists, &table, 60.0, 3)?;
//! assert_eq!(fused.iter().map(|hit| hit.chunk).collect::<Vec<_>>(), [0, 2, 1]);
//! assert!((fused[0].score - (1.0 / 61.0 + 0.5 / 62.0)).abs() < 1e-12);
//! assert_eq!(fused[2].modalities[0], None); // the text retriever never listed chunk 1
//! # Ok::<(), maguyva_core::Error>(())
//! ```
#![deny(missing_docs)]

pub mod background;
pub mod bm25;
pub mod centrality;
pub mod embed;
mod error;
pub mod fusion;
pub mod groups;
pub mod hamming;
pub mod names;
pub mod trigram;
pub mod walk;
#[cfg(target_os = "linux")]
pub mod watch;
pub mod word_scores;

pub use error::{Error, Result};
