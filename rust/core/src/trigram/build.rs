//! Building the serialized index from documents.
//!
//! The buffer is written front to back: header placeholder, doc ids, doc offsets and content
//! first (the input documents are freed as they are copied), then trigram sets are extracted
//! from the copied content, sorted as packed `trigram << 32 | ordinal` keys, and encoded; the
//! word sections (`words`) follow.

use super::format::{self, Counts, Layout, HEADER_LEN};
use super::words::{self, WordSections};
use super::postings;
use super::{fold, BuildReport};
use crate::{Error, Result};
use rayon::prelude::*;

pub use crate::walk::{is_binary, BINARY_PROBE_LEN};

/// Trigram sets are extracted this much content at a time, to bound the memory held by sets
/// that are not yet packed.
const BATCH_CONTENT_BYTES: usize = 16 << 20;

/// Posting lists encoded per parallel task, in rough numbers of packed entries.
const ENCODE_CHUNK_ENTRIES: usize = 1 << 20;

/// Builds the serialized index and its layout.
pub(crate) fn build<B: AsRef<[u8]> + Send>(mut docs: Vec<(u32, B)>) -> Result<(Vec<u8>, Layout, BuildReport)> {
    docs.par_sort_unstable_by_key(|(id, _)| *id);
    if let Some(pair) = docs.windows(2).find(|pair| pair[0].0 == pair[1].0) {
        return Err(Error::DuplicateDocument(pair[0].0));
    }
    let (text, binary): (Vec<_>, Vec<_>) = docs.into_iter().partition(|(_, bytes)| !is_binary(bytes.as_ref()));
    let report = BuildReport { indexed: text.len(), skipped_binary: binary.iter().map(|(id, _)| *id).collect() };
    drop(binary);

    let (buf, doc_offsets) = write_documents(text);
    let packed = packed_trigrams(&buf, &doc_offsets, &(0..report.indexed).collect::<Vec<_>>());
    let postings = encode_postings(&packed);
    drop(packed);
    let contents: Vec<&[u8]> = doc_offsets.windows(2).map(|w| &buf[w[0]..w[1]]).collect();
    let word_sections = words::build(&contents);
    drop(contents);
    let (buf, layout) = assemble(buf, report.indexed, postings, word_sections)?;
    Ok((buf, layout, report))
}

/// The trigram keys, posting offsets (`keys.len() + 1` of them) and posting bytes of an index.
pub(crate) struct TrigramSections {
    pub keys: Vec<u32>,
    pub offsets: Vec<u64>,
    pub bytes: Vec<u8>,
}

/// Completes a buffer holding the header placeholder, ids, offsets and content of `docs`
/// documents (`write_documents`) with its other sections, header and checksum.
pub(crate) fn assemble(mut buf: Vec<u8>, docs: usize, postings: TrigramSections, word_sections: WordSections) -> Result<(Vec<u8>, Layout)> {
    let counts = Counts {
        docs,
        content_len: content_len(&buf, docs),
        trigrams: postings.keys.len(),
        postings_len: postings.bytes.len(),
        words: word_sections.words(),
        vocabulary_len: word_sections.vocabulary.len(),
        word_postings_len: word_sections.postings.len(),
    };
    let layout = Layout::new(counts)
        .ok_or_else(|| Error::InvalidArgument("the documents are too large to index".to_string()))?;
    buf.reserve_exact(layout.total_len() - buf.len());
    buf.extend(postings.keys.iter().flat_map(|key| key.to_le_bytes()));
    buf.extend(postings.offsets.iter().flat_map(|offset| offset.to_le_bytes()));
    buf.extend_from_slice(&postings.bytes);
    write_word_sections(&mut buf, word_sections);
    debug_assert_eq!(buf.len(), layout.trailer);
    buf[..HEADER_LEN].copy_from_slice(&layout.header());
    let crc = format::checksum(&buf);
    buf.extend_from_slice(&crc.to_le_bytes());
    Ok((buf, layout))
}

/// Appends the word offsets, both vocabularies, the word posting offsets and the word postings.
fn write_word_sections(buf: &mut Vec<u8>, sections: WordSections) {
    buf.extend(sections.word_offsets.iter().flat_map(|offset| offset.to_le_bytes()));
    buf.extend_from_slice(&sections.vocabulary);
    buf.extend(sections.vocabulary.iter().map(u8::to_ascii_lowercase));
    buf.extend(sections.posting_offsets.iter().flat_map(|offset| offset.to_le_bytes()));
    buf.extend_from_slice(&sections.postings);
}

/// Length of the content section of a buffer holding only header, ids, offsets and content.
fn content_len(buf: &[u8], docs: usize) -> usize {
    buf.len() - HEADER_LEN - 4 * docs - 8 * (docs + 1)
}

/// Writes a zeroed header, the doc ids, the doc offsets and the content (documents sorted by id;
/// owned contents are freed as they are copied). Returns the buffer and the content offsets (as
/// positions in the buffer) for trigram extraction.
pub(crate) fn write_documents<B: AsRef<[u8]>>(text: Vec<(u32, B)>) -> (Vec<u8>, Vec<usize>) {
    let content_len: usize = text.iter().map(|(_, bytes)| bytes.as_ref().len()).sum();
    let mut buf = Vec::with_capacity(HEADER_LEN + 12 * text.len() + 8 + content_len);
    buf.resize(HEADER_LEN, 0);
    buf.extend(text.iter().flat_map(|(id, _)| id.to_le_bytes()));
    let mut offset = 0u64;
    buf.extend_from_slice(&offset.to_le_bytes());
    for (_, bytes) in &text {
        offset += bytes.as_ref().len() as u64;
        buf.extend_from_slice(&offset.to_le_bytes());
    }
    let mut doc_offsets = Vec::with_capacity(text.len() + 1);
    doc_offsets.push(buf.len());
    for (_, bytes) in text {
        buf.extend_from_slice(bytes.as_ref());
        doc_offsets.push(buf.len());
    }
    (buf, doc_offsets)
}

/// The distinct folded trigrams of one document, sorted.
pub(crate) fn trigram_set(doc: &[u8]) -> Vec<u32> {
    if doc.len() < 3 {
        return Vec::new();
    }
    let mut set = Vec::with_capacity(doc.len() - 2);
    let mut key = (u32::from(fold(doc[0])) << 8) | u32::from(fold(doc[1]));
    for &byte in &doc[2..] {
        key = ((key << 8) | u32::from(fold(byte))) & (format::KEY_LIMIT - 1);
        set.push(key);
    }
    set.sort_unstable();
    set.dedup();
    set.shrink_to_fit();
    set
}

/// Every (trigram, document) pair of the documents at `ordinals` (ascending) as
/// `trigram << 32 | ordinal`, sorted.
pub(crate) fn packed_trigrams(buf: &[u8], doc_offsets: &[usize], ordinals: &[usize]) -> Vec<u64> {
    let mut packed = Vec::new();
    for batch in batches(doc_offsets, ordinals) {
        let sets: Vec<Vec<u32>> = batch
            .par_iter()
            .map(|&ordinal| trigram_set(&buf[doc_offsets[ordinal]..doc_offsets[ordinal + 1]]))
            .collect();
        packed.reserve(sets.iter().map(Vec::len).sum());
        for (&ordinal, set) in batch.iter().zip(sets) {
            packed.extend(set.into_iter().map(|key| (u64::from(key) << 32) | ordinal as u64));
        }
    }
    packed.par_sort_unstable();
    packed
}

/// Consecutive runs of `ordinals` holding about [`BATCH_CONTENT_BYTES`] of content each.
fn batches<'a>(doc_offsets: &[usize], ordinals: &'a [usize]) -> Vec<&'a [usize]> {
    let mut runs = Vec::new();
    let (mut start, mut held) = (0, 0);
    for (end, &ordinal) in ordinals.iter().enumerate() {
        held += doc_offsets[ordinal + 1] - doc_offsets[ordinal];
        if held >= BATCH_CONTENT_BYTES || end + 1 == ordinals.len() {
            runs.push(&ordinals[start..=end]);
            (start, held) = (end + 1, 0);
        }
    }
    runs
}

/// Encoded posting lists of one run of trigrams.
#[derive(Default)]
pub(crate) struct EncodedChunk {
    pub keys: Vec<u32>,
    /// Start of each list in `bytes`.
    pub starts: Vec<u64>,
    pub bytes: Vec<u8>,
}

/// The posting sections of the sorted `packed` pairs.
pub(crate) fn encode_postings(packed: &[u64]) -> TrigramSections {
    let bounds = chunk_bounds(packed, packed.len().div_ceil(ENCODE_CHUNK_ENTRIES));
    concatenate(bounds.par_windows(2).map(|w| encode_chunk(&packed[w[0]..w[1]])).collect())
}

/// The posting sections of consecutive runs of trigrams, in order.
pub(crate) fn concatenate(chunks: Vec<EncodedChunk>) -> TrigramSections {
    let total_keys = chunks.iter().map(|c| c.keys.len()).sum();
    let mut keys = Vec::with_capacity(total_keys);
    let mut offsets = Vec::with_capacity(total_keys + 1);
    let mut bytes = Vec::with_capacity(chunks.iter().map(|c| c.bytes.len()).sum());
    for chunk in chunks {
        let base = bytes.len() as u64;
        keys.extend_from_slice(&chunk.keys);
        offsets.extend(chunk.starts.iter().map(|start| base + start));
        bytes.extend_from_slice(&chunk.bytes);
    }
    offsets.push(bytes.len() as u64);
    TrigramSections { keys, offsets, bytes }
}

/// About `parts` split points of `packed`, each moved back to the start of its trigram's group
/// so that no posting list straddles two chunks.
fn chunk_bounds(packed: &[u64], parts: usize) -> Vec<usize> {
    let mut bounds = vec![0];
    for part in 1..parts {
        let key = packed[packed.len() / parts * part] >> 32;
        let start = packed.partition_point(|&entry| entry >> 32 < key);
        if start > *bounds.last().unwrap_or(&0) {
            bounds.push(start);
        }
    }
    bounds.push(packed.len());
    bounds
}

/// Encodes the posting lists of one chunk.
fn encode_chunk(packed: &[u64]) -> EncodedChunk {
    let mut chunk = EncodedChunk { keys: Vec::new(), starts: Vec::new(), bytes: Vec::with_capacity(packed.len()) };
    for group in packed.chunk_by(|a, b| a >> 32 == b >> 32) {
        chunk.keys.push((group[0] >> 32) as u32);
        chunk.starts.push(chunk.bytes.len() as u64);
        postings::encode_list(&mut chunk.bytes, group.iter().map(|&entry| entry as u32));
    }
    chunk
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigram_set_folds_and_dedups() {
        let key = |s: &[u8]| (u32::from(s[0]) << 16) | (u32::from(s[1]) << 8) | u32::from(s[2]);
        assert_eq!(trigram_set(b"abAB"), {
            let mut v = vec![key(b"aba"), key(b"bab")];
            v.sort();
            v
        });
        assert_eq!(trigram_set(b"aaaaAAAA"), vec![key(b"aaa")]);
        assert_eq!(trigram_set(b"\xC3\xA9x"), vec![key(b"\xC3\xA9x")]);
        assert!(trigram_set(b"ab").is_empty());
    }

    #[test]
    fn binary_probe_only_looks_at_the_start() {
        assert!(is_binary(b"ab\0cd"));
        assert!(!is_binary(b"plain text"));
        let mut late_nul = vec![b'x'; BINARY_PROBE_LEN];
        late_nul.push(0);
        assert!(!is_binary(&late_nul));
        late_nul[BINARY_PROBE_LEN - 1] = 0;
        assert!(is_binary(&late_nul));
    }

    #[test]
    fn chunk_bounds_respect_groups() {
        let packed: Vec<u64> = [(1u64, 0u64), (1, 1), (1, 2), (2, 0), (3, 0), (3, 1)]
            .iter()
            .map(|&(key, ordinal)| (key << 32) | ordinal)
            .collect();
        for parts in 1..=6 {
            let bounds = chunk_bounds(&packed, parts);
            assert_eq!((bounds[0], *bounds.last().unwrap()), (0, packed.len()));
            for &b in &bounds[1..bounds.len() - 1] {
                assert_ne!(packed[b - 1] >> 32, packed[b] >> 32, "bound {b} splits a group ({parts} parts)");
            }
        }
    }

    #[test]
    fn encoded_postings_match_input() {
        let packed: Vec<u64> = [(7u64, 0u64), (7, 5), (9, 2)].iter().map(|&(k, o)| (k << 32) | o).collect();
        let sections = encode_postings(&packed);
        assert_eq!(sections.keys, vec![7, 9]);
        assert_eq!(sections.offsets, vec![0, 2, 3]);
        assert_eq!(sections.bytes, vec![0, 4, 2]);
    }
}
