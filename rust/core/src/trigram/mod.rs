//! A trigram index over documents of arbitrary bytes, answering literal (fixed-string) queries.
//!
//! Every indexed document is stored inside the index, so a query needs no file I/O: the posting
//! lists of the literal's trigrams are intersected to find candidate documents, and each
//! candidate is verified against its stored bytes (in parallel when that pays, `work`). Trigrams are taken over
//! ASCII-case-folded bytes, so one index answers both case-sensitive and case-insensitive queries.
//!
//! The index lives in one byte buffer in its on-disk format (`docs/FORMAT.md`, section 2), so a built
//! index and a loaded one are the same thing and serializing is free.
//!
//! ```
//! use maguyva_core::trigram::TrigramIndex;
//!
//! let docs = vec![(7, b"fn main() {\n    run();\n}\n".to_vec()), (3, b"fn run() {}\n".to_vec())];
//! let (index, report) = TrigramIndex::build(docs).unwrap();
//! assert_eq!(report.indexed, 2);
//!
//! let hits = index.search(b"RUN()", true).unwrap();
//! assert_eq!(hits.iter().map(|h| (h.doc_id, h.count, h.lines.clone())).collect::<Vec<_>>(),
//!            vec![(3, 1, vec![1]), (7, 1, vec![2])]);
//!
//! let copy = TrigramIndex::from_bytes(index.to_bytes().to_vec()).unwrap();
//! assert_eq!(copy.search(b"main", false).unwrap()[0].doc_id, 7);
//! ```

mod build;
#[cfg(test)]
mod calibrate;
mod chunks;
mod format;
mod merge;
mod postings;
mod query;
mod regex;
mod scan;
mod vocabulary;
mod words;
mod work;

use crate::{Error, Result};
use format::{u32_at, u64_at, Layout};
use std::fmt;
use std::io::Write;
use memmap2::Mmap;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use vocabulary::WordTrigrams;

pub use build::BINARY_PROBE_LEN;
pub use chunks::{chunk_term_table, count_by_chunk, ChunkCounts, ChunkCountsPlan, ChunkLayout, ChunkTermTable};
pub use regex::{RegexPlan, RegexSearch, MAX_PATTERN_BYTES as MAX_REGEX_BYTES};
pub use format::{MAGIC as FORMAT_MAGIC, VERSION as FORMAT_VERSION};

/// The serialized bytes of an index: built in memory, or a saved file mapped read-only.
#[derive(Clone)]
enum Bytes {
    Owned(Vec<u8>),
    Mapped(Arc<Mmap>),
}

impl Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(bytes) => bytes,
            Bytes::Mapped(map) => map,
        }
    }
}

/// A built or loaded trigram index.
#[derive(Clone)]
pub struct TrigramIndex {
    /// The whole index in its serialized form.
    buf: Bytes,
    /// Where the sections of `buf` start.
    layout: Layout,
    /// The file it was loaded from (empty otherwise), for error messages.
    path: PathBuf,
    /// The words of the vocabulary per trigram, made when a search first needs them.
    word_trigrams: Arc<OnceLock<WordTrigrams>>,
}

/// What a build did with its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildReport {
    /// Number of documents indexed.
    pub indexed: usize,
    /// Ids of the documents skipped as binary (a NUL byte in the first [`BINARY_PROBE_LEN`]
    /// bytes), ascending.
    pub skipped_binary: Vec<u32>,
}

/// The occurrences of a literal in one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiteralMatch {
    /// The document.
    pub doc_id: u32,
    /// Number of non-overlapping occurrences (leftmost first).
    pub count: u32,
    /// Sorted, distinct 1-based numbers of the lines on which an occurrence starts.
    pub lines: Vec<u32>,
}

/// Occurrence counts of several terms in one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermCounts {
    /// The document.
    pub doc_id: u32,
    /// `counts[i]` is the number of non-overlapping occurrences of term `i`.
    pub counts: Vec<u32>,
}

/// ASCII case folding used for trigram keys: `A..=Z` become `a..=z`, other bytes are unchanged.
#[inline]
pub(crate) fn fold(byte: u8) -> u8 {
    byte.to_ascii_lowercase()
}

impl TrigramIndex {
    fn new(buf: Bytes, layout: Layout, path: PathBuf) -> TrigramIndex {
        TrigramIndex { buf, layout, path, word_trigrams: Arc::default() }
    }

    /// Indexes `docs`, given as (id, bytes) pairs in any order. Ids are chosen by the caller and
    /// may be sparse. Binary documents are skipped and listed in the report.
    ///
    /// Fails with [`Error::DuplicateDocument`] if an id appears twice. The documents may be
    /// owned or borrowed (a caller's buffers are copied once, into the index).
    pub fn build<B: AsRef<[u8]> + Send>(docs: Vec<(u32, B)>) -> Result<(TrigramIndex, BuildReport)> {
        let (buf, layout, report) = build::build(docs)?;
        Ok((TrigramIndex::new(Bytes::Owned(buf), layout, PathBuf::new()), report))
    }

    /// Every document containing `literal`, by ascending doc id. `case_insensitive` folds ASCII
    /// letters only. Fails with [`Error::InvalidArgument`] for an empty literal.
    pub fn search(&self, literal: &[u8], case_insensitive: bool) -> Result<Vec<LiteralMatch>> {
        self.search_literal(literal, case_insensitive)
    }

    /// [`search`](Self::search) for each `(literal, case_insensitive)` of `terms`, in their
    /// order, the terms searched side by side when their work is worth it (a question's terms
    /// are mostly small searches, each too short to occupy every core by itself). Fails on the
    /// first term that fails.
    pub fn search_each(&self, terms: &[(&[u8], bool)]) -> Result<Vec<Vec<LiteralMatch>>> {
        let plans = terms
            .iter()
            .map(|&(literal, fold)| Ok((literal, fold, self.plan_literal(literal, fold)?)))
            .collect::<Result<Vec<_>>>()?;
        let parallel = work::parallel(plans.iter().map(|(_, _, plan)| self.plan_work(plan)).sum());
        work::map_collect(parallel, &plans, |(literal, fold, plan)| self.search_planned(literal, *fold, plan))
    }

    /// As [`search`](Self::search), always verifying trigram candidates against the stored
    /// documents, never answering from word postings: the reference the word path is measured
    /// and tested against.
    #[doc(hidden)]
    pub fn search_by_verification(&self, literal: &[u8], case_insensitive: bool) -> Result<Vec<LiteralMatch>> {
        self.search_verified(literal, case_insensitive)
    }

    /// Occurrence counts of each term, for every document where at least one count is nonzero,
    /// by ascending doc id. An empty `terms` gives an empty result; an empty term is an
    /// [`Error::InvalidArgument`].
    pub fn count_terms(&self, terms: &[&[u8]], case_insensitive: bool) -> Result<Vec<TermCounts>> {
        self.count_all_terms(terms, case_insensitive)
    }

    /// Number of indexed (non-binary) documents.
    pub fn doc_count(&self) -> usize {
        self.layout.docs
    }

    /// The ids of the indexed documents, ascending.
    pub fn doc_ids(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        (0..self.layout.docs).map(|ordinal| self.id_at(ordinal))
    }

    /// Length in bytes of document `doc_id`, if it is indexed.
    pub fn doc_len(&self, doc_id: u32) -> Option<usize> {
        self.doc_bytes(doc_id).map(<[u8]>::len)
    }

    /// The stored bytes of document `doc_id`, if it is indexed.
    pub fn doc_bytes(&self, doc_id: u32) -> Option<&[u8]> {
        self.ordinal_of(doc_id).map(|ordinal| self.content(ordinal))
    }

    /// Lines `start..=end` (1-based) of document `doc_id`, as the bytes from the first one's
    /// start to the last one's end without its newline: a result's few lines without copying
    /// its whole file. A document of n newlines has n + 1 lines (the last one empty when it
    /// ends with a newline); `None` when `start` is past them, or the document is not indexed.
    pub fn doc_lines(&self, doc_id: u32, start: usize, end: usize) -> Option<&[u8]> {
        let content = self.doc_bytes(doc_id)?;
        let start = start.max(1);
        let first = if start == 1 { 0 } else { after_newlines(content, start - 1)? };
        let last = if end < start {
            first
        } else {
            after_newlines(&content[first..], end - start + 1).map_or(content.len(), |at| first + at - 1)
        };
        Some(&content[first..last])
    }

    /// Number of distinct trigrams.
    pub fn trigram_count(&self) -> usize {
        self.layout.trigrams
    }

    /// Size of the encoded posting lists in bytes.
    pub fn postings_bytes(&self) -> usize {
        self.layout.postings_len
    }

    /// Number of distinct words (maximal runs of letters, digits, `_` and non-ASCII bytes).
    pub fn word_count(&self) -> usize {
        self.layout.words
    }

    /// Size of the word sections (vocabulary, both cases, and word postings with offsets).
    pub fn word_bytes(&self) -> usize {
        self.layout.trailer - self.layout.word_offsets
    }

    /// Size of the stored document content in bytes.
    pub fn content_bytes(&self) -> usize {
        self.layout.content_len
    }

    /// Size of the whole serialized index in bytes.
    pub fn size_bytes(&self) -> usize {
        self.buf.len()
    }

    /// The serialized index, exactly as [`save`](Self::save) writes it.
    pub fn to_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The serialized index, without copying one built in memory (a loaded one is copied).
    pub fn into_bytes(self) -> Vec<u8> {
        match self.buf {
            Bytes::Owned(bytes) => bytes,
            Bytes::Mapped(map) => map.to_vec(),
        }
    }

    /// This index's documents `kept`, as (old id, new id) pairs, and the documents `added`, as
    /// one new index: the same bytes [`build`](Self::build) writes for those documents, made from
    /// the kept documents' posting lists without reading their content again. Kept documents
    /// keep their order (new ids ascend as the old ones do); binary documents added are skipped
    /// and reported as a build does.
    ///
    /// Fails with [`Error::InvalidArgument`] if an old id is not in the index, is kept twice or
    /// out of order, and with [`Error::DuplicateDocument`] if a new id is given twice.
    pub fn merged<B: AsRef<[u8]> + Send>(&self, kept: &[(u32, u32)], added: Vec<(u32, B)>) -> Result<(TrigramIndex, BuildReport)> {
        let (buf, layout, report) = merge::merge(self, kept, added)?;
        Ok((TrigramIndex::new(Bytes::Owned(buf), layout, PathBuf::new()), report))
    }

    /// Reads a serialized index, checking its structure and checksum. Fails with
    /// [`Error::Corrupt`] (with an empty path) if `buf` is not a valid index.
    pub fn from_bytes(buf: Vec<u8>) -> Result<TrigramIndex> {
        Self::parse(Bytes::Owned(buf), PathBuf::new())
    }

    /// Writes the index to `path` atomically: to a temporary file in the same directory, which
    /// is then renamed over `path`, so readers never see a partial index.
    pub fn save(&self, path: &Path) -> Result<()> {
        let temp = temp_path(path)?;
        let written = write_synced(&temp, &self.buf).and_then(|()| {
            std::fs::rename(&temp, path).map_err(|source| Error::Io { path: path.to_path_buf(), source })
        });
        if written.is_err() {
            // Best effort: the original error is the one worth reporting.
            let _ = std::fs::remove_file(&temp);
        }
        written
    }

    /// Opens an index written by [`save`](Self::save), mapped read-only rather than read: its
    /// pages are the file system's cache, read as they are used (the checksum reads each once).
    /// A saved index is never written again (`save` replaces the file by a rename), so the
    /// mapping stays what was checked. Fails with [`Error::Io`] if the file cannot be opened
    /// and [`Error::Corrupt`] (naming `path`) if it is not a valid index.
    pub fn load(path: &Path) -> Result<TrigramIndex> {
        let io = |source: std::io::Error| Error::Io { path: path.to_path_buf(), source };
        let file = std::fs::File::open(path).map_err(io)?;
        if file.metadata().map_err(io)?.len() == 0 {
            // An empty file cannot be mapped; it is no index either.
            return Self::parse(Bytes::Owned(Vec::new()), path.to_path_buf());
        }
        // SAFETY: the mapping is read-only, and a saved index is replaced by renaming a new
        // file over it, never written in place or truncated by this crate (as zoekt and Lucene
        // map their segments).
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        Self::parse(Bytes::Mapped(Arc::new(map)), path.to_path_buf())
    }

    fn parse(buf: Bytes, path: PathBuf) -> Result<TrigramIndex> {
        match format::validate(&buf) {
            Ok(layout) => Ok(TrigramIndex::new(buf, layout, path)),
            Err(reason) => Err(Error::Corrupt { path, reason }),
        }
    }

    /// An `Error::Corrupt` about this index.
    fn corrupt(&self, reason: String) -> Error {
        Error::Corrupt { path: self.path.clone(), reason }
    }

    /// The id of the document with this ordinal (`ordinal < docs`).
    fn id_at(&self, ordinal: usize) -> u32 {
        u32_at(&self.buf, self.layout.ids + 4 * ordinal)
    }

    /// The stored bytes of the document with this ordinal (`ordinal < docs`).
    fn content(&self, ordinal: usize) -> &[u8] {
        let at = self.layout.doc_offsets + 8 * ordinal;
        // Offsets were checked to be monotonic and within the content section.
        let (start, end) = (u64_at(&self.buf, at) as usize, u64_at(&self.buf, at + 8) as usize);
        &self.buf[self.layout.content + start..self.layout.content + end]
    }

    /// The ordinal of `doc_id`, by binary search over the sorted ids.
    fn ordinal_of(&self, doc_id: u32) -> Option<usize> {
        let ordinal = lower_bound(self.layout.docs, |ordinal| self.id_at(ordinal) < doc_id);
        (ordinal < self.layout.docs && self.id_at(ordinal) == doc_id).then_some(ordinal)
    }

    /// The position of trigram `key` in the key section, by binary search.
    fn trigram_position(&self, key: u32) -> Option<usize> {
        let position = lower_bound(self.layout.trigrams, |position| self.key_at(position) < key);
        (position < self.layout.trigrams && self.key_at(position) == key).then_some(position)
    }

    /// The vocabulary section, as written or ASCII-lowercased.
    fn vocabulary(&self, folded: bool) -> &[u8] {
        let start = if folded { self.layout.folded_vocabulary } else { self.layout.vocabulary };
        &self.buf[start..start + self.layout.vocabulary_len]
    }

    /// The words of the vocabulary per trigram ([`WordTrigrams`]), made on first use.
    fn word_trigrams(&self) -> &WordTrigrams {
        self.word_trigrams.get_or_init(|| WordTrigrams::build(self.vocabulary(true), self.layout.words, |word| self.word_start(word)))
    }

    /// The word of the vocabulary that is `text` exactly, if there is one (the vocabulary is
    /// sorted: a binary search).
    fn word_named(&self, text: &[u8]) -> Option<usize> {
        let at = lower_bound(self.layout.words, |w| self.word(w) < text);
        (at < self.layout.words && self.word(at) == text).then_some(at)
    }

    /// Where word `word` ends in the vocabulary (the position after its separator).
    fn word_end(&self, word: usize) -> usize {
        u64_at(&self.buf, self.layout.word_offsets + 8 * (word + 1)) as usize
    }

    /// The word whose bytes (or separator) are at `at` in the vocabulary (`at < vocabulary_len`),
    /// searched for from word `from` on (which must not be past it): galloping, then binary
    /// search, so a scan through the vocabulary finds each word in steps logarithmic in the
    /// distance from the last.
    fn word_at(&self, at: usize, from: usize) -> usize {
        let (mut low, mut step) = (from, 1);
        let mut high = loop {
            let probe = low.saturating_add(step);
            if probe >= self.layout.words || self.word_end(probe) > at {
                break probe.min(self.layout.words);
            }
            low = probe;
            step *= 2;
        };
        high = high.max(low);
        low + lower_bound(high - low, |i| self.word_end(low + i) <= at)
    }

    /// The encoded word posting list of word `word` (`word < words`).
    fn word_posting_list(&self, word: usize) -> &[u8] {
        let at = self.layout.word_posting_offsets + 8 * word;
        // Offsets were checked to be strictly increasing and within the word postings section.
        let (start, end) = (u64_at(&self.buf, at) as usize, u64_at(&self.buf, at + 8) as usize);
        &self.buf[self.layout.word_postings + start..self.layout.word_postings + end]
    }

    /// The trigram key at `position` (`position < trigrams`).
    fn key_at(&self, position: usize) -> u32 {
        u32_at(&self.buf, self.layout.keys + 4 * position)
    }

    /// Where the posting list at `position` starts in the postings section (`position <= trigrams`).
    fn posting_offset(&self, position: usize) -> u64 {
        u64_at(&self.buf, self.layout.posting_offsets + 8 * position)
    }

    /// The bytes of word `word` (`word < words`), without its separator.
    fn word(&self, word: usize) -> &[u8] {
        self.word_in(false, word)
    }

    /// [`Self::word`] in the folded vocabulary when `folded`.
    fn word_in(&self, folded: bool, word: usize) -> &[u8] {
        &self.vocabulary(folded)[self.word_start(word)..self.word_end(word) - 1]
    }

    /// Where word `word` starts in the vocabulary (`word <= words`: the last is its end).
    fn word_start(&self, word: usize) -> usize {
        u64_at(&self.buf, self.layout.word_offsets + 8 * word) as usize
    }

    /// Where the posting list of word `word` starts in the word postings section (`word <= words`).
    fn word_posting_offset(&self, word: usize) -> u64 {
        u64_at(&self.buf, self.layout.word_posting_offsets + 8 * word)
    }

    /// The encoded posting list at `position` (`position < trigrams`).
    fn posting_list(&self, position: usize) -> &[u8] {
        let at = self.layout.posting_offsets + 8 * position;
        // Offsets were checked to be strictly increasing and within the postings section.
        let (start, end) = (u64_at(&self.buf, at) as usize, u64_at(&self.buf, at + 8) as usize);
        &self.buf[self.layout.postings + start..self.layout.postings + end]
    }
}

impl fmt::Debug for TrigramIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrigramIndex")
            .field("docs", &self.layout.docs)
            .field("trigrams", &self.layout.trigrams)
            .field("content_bytes", &self.layout.content_len)
            .field("postings_bytes", &self.layout.postings_len)
            .field("path", &self.path)
            .finish()
    }
}

/// The first index in `0..len` for which `less` is false (`less` must be monotonic).
fn lower_bound(len: usize, mut less: impl FnMut(usize) -> bool) -> usize {
    let (mut low, mut high) = (0, len);
    while low < high {
        let mid = low + (high - low) / 2;
        if less(mid) {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}

/// A fresh temporary file name next to `path`; unique per process and call so concurrent saves
/// never share one.
fn temp_path(path: &Path) -> Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name =
        path.file_name().ok_or_else(|| Error::InvalidArgument(format!("{}: not a file path", path.display())))?;
    let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
    let temp_name = format!(".{}.{}.{unique}.tmp", name.to_string_lossy(), std::process::id());
    Ok(path.with_file_name(temp_name))
}

/// The offset just past the `n`-th newline of `content` (`n` >= 1), or `None` when it has fewer.
/// Whole blocks are skipped by counting their newlines, which the compiler vectorizes: a result
/// deep in a large file costs a pass at memory speed, not a search call per line before it.
fn after_newlines(content: &[u8], n: usize) -> Option<usize> {
    const BLOCK: usize = 256;
    let (mut at, mut left) = (0, n);
    while let Some(block) = content.get(at..at + BLOCK).and_then(|block| <&[u8; BLOCK]>::try_from(block).ok()) {
        // Byte lanes that count up to BLOCK / 32 each: what vectorizes as a compare and a subtract.
        let mut lanes = [0u8; 32];
        for part in block.as_chunks::<32>().0 {
            for (lane, &byte) in lanes.iter_mut().zip(part) {
                *lane += u8::from(byte == b'\n');
            }
        }
        let newlines: usize = lanes.iter().map(|&count| usize::from(count)).sum();
        if newlines >= left {
            break;
        }
        left -= newlines;
        at += BLOCK;
    }
    memchr::memchr_iter(b'\n', &content[at..]).nth(left - 1).map(|found| at + found + 1)
}

/// Creates `path` (which must not exist), writes `bytes` and flushes them to disk, so the rename
/// that follows cannot expose an incomplete file after a crash.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let mut file = std::fs::File::create_new(path).map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)
}

#[cfg(test)]
mod tests {
    #[test]
    fn doc_lines_agree_with_splitting_the_document_at_every_newline() {
        // Documents of many short and long lines, so that whole blocks are skipped and lines
        // start and end on either side of a block's edge.
        let mut state = 0x2545_f491_u64;
        for doc in 0..40u32 {
            let mut content = Vec::new();
            for _ in 0..(doc as usize * 11) {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                let width = (state >> 33) as usize % if doc % 3 == 0 { 700 } else { 12 };
                content.extend(std::iter::repeat_n(b'a' + (doc % 26) as u8, width));
                content.push(b'\n');
            }
            if doc % 2 == 1 {
                content.extend_from_slice(b"no newline at the end");
            }
            let index = TrigramIndex::build(vec![(doc, content.clone())]).unwrap().0;
            let lines: Vec<&[u8]> = content.split(|&b| b == b'\n').collect();
            // Where each line starts, and one past the last line's end.
            let mut starts = vec![0];
            for line in &lines {
                starts.push(starts.last().unwrap() + line.len() + 1);
            }
            for start in 1..=lines.len() + 1 {
                for end in [start.saturating_sub(1), start, start + 1, start + 7, lines.len(), lines.len() + 3] {
                    let expected = (start <= lines.len()).then(|| {
                        let first_at = starts[start - 1];
                        let last_at = if end < start { first_at } else { starts[end.min(lines.len())] - 1 };
                        &content[first_at..last_at]
                    });
                    assert_eq!(index.doc_lines(doc, start, end), expected, "doc {doc}, lines {start}..={end}");
                }
            }
        }
    }

    #[test]
    fn doc_lines_are_the_lines_asked_for() {
        let index = TrigramIndex::build(vec![(4, b"one\ntwo\nthree\n".to_vec()), (5, b"no newline".to_vec())]).unwrap().0;
        assert_eq!(index.doc_lines(4, 1, 1), Some(&b"one"[..]));
        assert_eq!(index.doc_lines(4, 2, 3), Some(&b"two\nthree"[..]));
        // The empty line after the last newline is the fourth; past it there is none.
        assert_eq!(index.doc_lines(4, 3, 9), Some(&b"three\n"[..]));
        assert_eq!(index.doc_lines(4, 4, 4), Some(&b""[..]));
        assert_eq!(index.doc_lines(4, 5, 6), None);
        assert_eq!(index.doc_lines(5, 1, 2), Some(&b"no newline"[..]));
        assert_eq!(index.doc_lines(5, 2, 2), None);
        assert_eq!(index.doc_lines(6, 1, 1), None);
    }

    use super::*;

    fn index(docs: &[(u32, &[u8])]) -> TrigramIndex {
        TrigramIndex::build(docs.iter().map(|&(id, d)| (id, d.to_vec())).collect()).unwrap().0
    }

    #[test]
    fn lookups_by_id() {
        let idx = index(&[(9, b"nine"), (2, b"two"), (4000000000, b"")]);
        assert_eq!(idx.doc_ids().collect::<Vec<_>>(), vec![2, 9, 4000000000]);
        assert_eq!(idx.doc_len(9), Some(4));
        assert_eq!(idx.doc_bytes(2), Some(&b"two"[..]));
        assert_eq!(idx.doc_len(4000000000), Some(0));
        assert_eq!(idx.doc_len(3), None);
        assert_eq!(idx.doc_len(u32::MAX), None);
        assert_eq!(idx.doc_count(), 3);
    }

    #[test]
    fn sizes_add_up() {
        let idx = index(&[(1, b"hello world"), (2, b"hello there")]);
        assert_eq!(idx.content_bytes(), 22);
        assert!(idx.trigram_count() > 0 && idx.postings_bytes() >= idx.trigram_count());
        assert_eq!(idx.size_bytes(), idx.layout.total_len());
        assert_eq!(idx.word_count(), 3);
        assert_eq!(idx.layout.vocabulary_len, "hello\nthere\nworld\n".len());
        assert_eq!(idx.to_bytes().len(), idx.size_bytes());
    }

    #[test]
    fn damaged_posting_list_is_reported_at_query_time() {
        // One document, so every ordinal in a posting list must be 0. Rewrite the single
        // posting byte of each list to 1 (ordinal 1) and reseal the checksum: the structure stays
        // valid, so only query-time decoding can notice.
        let idx = index(&[(1, b"abc")]);
        let mut buf = idx.into_bytes();
        let layout = format::validate(&buf).unwrap();
        assert_eq!(layout.postings_len, 1);
        buf[layout.postings] = 1;
        let body = buf.len() - format::TRAILER_LEN;
        let crc = format::checksum(&buf[..body]);
        buf[body..].copy_from_slice(&crc.to_le_bytes());
        let damaged = TrigramIndex::from_bytes(buf).unwrap();
        let err = damaged.search(b"abc", false).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        assert!(damaged.count_terms(&[b"abc"], true).is_err());
        // Literals too short for trigrams never touch the postings.
        assert_eq!(damaged.search(b"ab", false).unwrap().len(), 1);
    }

    #[test]
    fn temp_path_is_a_sibling() {
        let temp = temp_path(Path::new("/some/dir/index.mgv")).unwrap();
        assert_eq!(temp.parent(), Some(Path::new("/some/dir")));
        assert!(temp.file_name().unwrap().to_string_lossy().starts_with(".index.mgv."));
        assert!(temp_path(Path::new("/")).is_err());
    }

    #[test]
    fn lower_bound_finds_first_not_less() {
        let values = [1, 3, 3, 7];
        for (probe, expected) in [(0, 0), (1, 0), (2, 1), (3, 1), (4, 3), (7, 3), (8, 4)] {
            assert_eq!(lower_bound(values.len(), |i| values[i] < probe), expected, "probe {probe}");
        }
        assert_eq!(lower_bound(0, |_| true), 0);
    }
}
