//! Updating an index without building it again: the documents of an index that are kept, under
//! new ids, and new documents, merged into exactly the bytes a build of the same documents writes.
//!
//! Kept documents are never read again: their posting lists (trigrams and words) are decoded,
//! renumbered and merged with the lists of the added documents, which are the only content
//! scanned. A merge costs one pass over the old postings plus the work of indexing what was
//! added, where a build costs the trigrams and words of every document.

use super::build::{self, EncodedChunk, TrigramSections};
use super::format::Layout;
use super::postings::{self, write_varint, Malformed, Postings};
use super::words::{self, DocumentWords, WordSections, SEPARATOR};
use super::{BuildReport, TrigramIndex};
use crate::walk::is_binary;
use crate::{Error, Result};
use rayon::prelude::*;

/// Old posting lists merged per parallel task, in rough bytes of old postings (tiny in tests,
/// so that their small indexes are merged in many runs and the runs' edges are exercised).
#[cfg(not(test))]
const MERGE_CHUNK_BYTES: usize = 1 << 20;
#[cfg(test)]
const MERGE_CHUNK_BYTES: usize = 8;

/// Marks an old ordinal whose document is not kept.
const GONE: u32 = u32::MAX;

/// The merged index of `old`'s documents `kept` ((old id, new id) pairs: kept documents keep
/// their order, so new ids ascend with the old ones) and the documents `added`.
pub(crate) fn merge<B: AsRef<[u8]> + Send>(old: &TrigramIndex, kept: &[(u32, u32)], added: Vec<(u32, B)>) -> Result<(Vec<u8>, Layout, BuildReport)> {
    let renumbered = renumbering(old, kept)?;
    let mut added = added;
    added.par_sort_unstable_by_key(|(id, _)| *id);
    if let Some(pair) = added.windows(2).find(|pair| pair[0].0 == pair[1].0) {
        return Err(Error::DuplicateDocument(pair[0].0));
    }
    let (text, binary): (Vec<_>, Vec<_>) = added.into_iter().partition(|(_, bytes)| !is_binary(bytes.as_ref()));
    let skipped_binary = binary.iter().map(|(id, _)| *id).collect();
    drop(binary);

    // The merged order, by new id: each document's source and, for old ones, its new ordinal.
    let mut new_ordinal = vec![GONE; old.layout.docs];
    let mut documents: Vec<(u32, &[u8])> = Vec::with_capacity(kept.len() + text.len());
    let mut added_ordinals = Vec::with_capacity(text.len());
    let kept_in_order = renumbered.iter().enumerate().filter_map(|(ordinal, id)| id.map(|id| (id, ordinal)));
    let mut kept_in_order = kept_in_order.peekable();
    let mut fresh = text.iter().peekable();
    loop {
        let take_old = match (kept_in_order.peek(), fresh.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(&(kept_id, _)), Some(&(added_id, _))) if kept_id == *added_id => {
                return Err(Error::DuplicateDocument(kept_id));
            }
            (Some(&(kept_id, _)), Some(&(added_id, _))) => kept_id < *added_id,
        };
        if take_old {
            let (id, ordinal) = kept_in_order.next().expect("peeked");
            new_ordinal[ordinal] = documents.len() as u32;
            documents.push((id, old.content(ordinal)));
        } else {
            let (id, bytes) = fresh.next().expect("peeked");
            added_ordinals.push(documents.len());
            documents.push((*id, bytes.as_ref()));
        }
    }
    let report = BuildReport { indexed: documents.len(), skipped_binary };
    let (buf, doc_offsets) = build::write_documents(documents);
    drop(text);

    let packed = build::packed_trigrams(&buf, &doc_offsets, &added_ordinals);
    let trigrams = merge_trigrams(old, &new_ordinal, &packed)?;
    drop(packed);
    let added_words: Vec<DocumentWords<'_>> = added_ordinals
        .par_iter()
        .map(|&ordinal| words::document_words(&buf[doc_offsets[ordinal]..doc_offsets[ordinal + 1]]))
        .collect();
    let word_sections = merge_words(old, &new_ordinal, &added_ordinals, &added_words)?;
    drop(added_words);
    let (buf, layout) = build::assemble(buf, report.indexed, trigrams, word_sections)?;
    Ok((buf, layout, report))
}

/// The new id of each old ordinal's document, `None` for those not kept.
fn renumbering(old: &TrigramIndex, kept: &[(u32, u32)]) -> Result<Vec<Option<u32>>> {
    let mut renumbered: Vec<Option<u32>> = vec![None; old.layout.docs];
    for &(old_id, new_id) in kept {
        let ordinal = old
            .ordinal_of(old_id)
            .ok_or_else(|| Error::InvalidArgument(format!("document {old_id} is not in the index it is kept from")))?;
        if renumbered[ordinal].replace(new_id).is_some() {
            return Err(Error::InvalidArgument(format!("document {old_id} is kept twice")));
        }
    }
    let mut last: Option<u32> = None;
    for &id in renumbered.iter().flatten() {
        match last {
            Some(previous) if previous == id => return Err(Error::DuplicateDocument(id)),
            Some(previous) if previous > id => {
                return Err(Error::InvalidArgument(
                    "kept documents must keep their order: new ids ascending as the old ones do".to_string(),
                ))
            }
            _ => last = Some(id),
        }
    }
    Ok(renumbered)
}

/// Runs of positions `0..count` whose lists hold about [`MERGE_CHUNK_BYTES`] each (at least
/// one run, possibly empty), from the list offsets `offset(position)`.
fn runs(count: usize, offset: impl Fn(usize) -> u64) -> Vec<(usize, usize)> {
    let mut bounds = vec![0];
    for position in 1..count {
        if offset(position) - offset(*bounds.last().unwrap_or(&0)) >= MERGE_CHUNK_BYTES as u64 {
            bounds.push(position);
        }
    }
    bounds.push(count);
    bounds.windows(2).map(|w| (w[0], w[1])).collect()
}

/// The trigram posting sections: each old list renumbered, merged with the added documents'
/// `packed` pairs (sorted), lists left empty dropped.
fn merge_trigrams(old: &TrigramIndex, new_ordinal: &[u32], packed: &[u64]) -> Result<TrigramSections> {
    let count = old.layout.trigrams;
    let key_at = |position: usize| old.key_at(position);
    let posting_offset = |position: usize| old.posting_offset(position);
    let chunks: Vec<Result<EncodedChunk>> = runs(count, posting_offset)
        .into_par_iter()
        .map(|(start, end)| {
            // This run's added pairs: those of keys from its first old key up to the next run's.
            let low = if start == 0 { 0 } else { packed.partition_point(|&p| (p >> 32) < u64::from(key_at(start))) };
            let high = if end == count { packed.len() } else { packed.partition_point(|&p| (p >> 32) < u64::from(key_at(end))) };
            merge_trigram_run(old, new_ordinal, start..end, &packed[low..high]).map_err(|m| old.corrupt(m.reason().to_string()))
        })
        .collect();
    Ok(build::concatenate(chunks.into_iter().collect::<Result<Vec<_>>>()?))
}

fn merge_trigram_run(
    old: &TrigramIndex,
    new_ordinal: &[u32],
    positions: std::ops::Range<usize>,
    packed: &[u64],
) -> std::result::Result<EncodedChunk, Malformed> {
    let mut chunk = EncodedChunk::default();
    let mut groups = packed.chunk_by(|a, b| a >> 32 == b >> 32).peekable();
    let mut positions = positions.peekable();
    let mut kept = Vec::new();
    loop {
        let old_key = positions.peek().map(|&position| old.key_at(position));
        let new_key = groups.peek().map(|group| (group[0] >> 32) as u32);
        let key = match (old_key, new_key) {
            (None, None) => break,
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
        };
        kept.clear();
        if old_key == Some(key) {
            let position = positions.next().expect("peeked");
            let mut list = Postings::new(old.posting_list(position), old.layout.docs);
            while let Some(ordinal) = list.next_ordinal()? {
                let renumbered = new_ordinal[ordinal as usize];
                if renumbered != GONE {
                    kept.push(renumbered);
                }
            }
        }
        let added: &[u64] = if new_key == Some(key) { groups.next().expect("peeked") } else { &[] };
        if kept.is_empty() && added.is_empty() {
            continue;
        }
        chunk.keys.push(key);
        chunk.starts.push(chunk.bytes.len() as u64);
        postings::encode_list(&mut chunk.bytes, merged(&kept, added.iter().map(|&p| p as u32)));
    }
    Ok(chunk)
}

/// Two ascending sequences of distinct values as one ascending sequence.
fn merged<'a>(kept: &'a [u32], added: impl Iterator<Item = u32> + 'a) -> impl Iterator<Item = u32> + 'a {
    let mut kept = kept.iter().copied().peekable();
    let mut added = added.peekable();
    std::iter::from_fn(move || match (kept.peek(), added.peek()) {
        (Some(&a), Some(&b)) if b < a => added.next(),
        (Some(_), _) => kept.next(),
        (None, _) => added.next(),
    })
}

/// The word sections: each old word's list renumbered and merged with the entries of the added
/// documents, words left without documents dropped, new words placed in byte order.
fn merge_words(
    old: &TrigramIndex,
    new_ordinal: &[u32],
    added_ordinals: &[usize],
    added: &[DocumentWords<'_>],
) -> Result<WordSections> {
    // Every (word, new ordinal, document, entry) of the added documents, by word then ordinal.
    let mut fresh: Vec<(&[u8], u32, u32, u32)> = added
        .iter()
        .zip(added_ordinals)
        .enumerate()
        .flat_map(|(doc, (words, &ordinal))| {
            words.words.iter().enumerate().map(move |(entry, &word)| (word, ordinal as u32, doc as u32, entry as u32))
        })
        .collect();
    fresh.par_sort_unstable();
    let count = old.layout.words;
    let runs = runs(count, |word| old.word_posting_offset(word));
    let parts: Vec<Result<WordSections>> = runs
        .into_par_iter()
        .map(|(start, end)| {
            let low = if start == 0 { 0 } else { fresh.partition_point(|f| f.0 < old.word(start)) };
            let high = if end == count { fresh.len() } else { fresh.partition_point(|f| f.0 < old.word(end)) };
            merge_word_run(old, new_ordinal, start..end, &fresh[low..high], added)
                .map_err(|m| old.corrupt(m.reason().to_string()))
        })
        .collect();
    let mut sections = WordSections { word_offsets: Vec::new(), vocabulary: Vec::new(), posting_offsets: Vec::new(), postings: Vec::new() };
    for part in parts {
        let part = part?;
        let (vocabulary_base, postings_base) = (sections.vocabulary.len() as u64, sections.postings.len() as u64);
        sections.word_offsets.extend(part.word_offsets.iter().map(|offset| vocabulary_base + offset));
        sections.posting_offsets.extend(part.posting_offsets.iter().map(|offset| postings_base + offset));
        sections.vocabulary.extend_from_slice(&part.vocabulary);
        sections.postings.extend_from_slice(&part.postings);
    }
    sections.word_offsets.push(sections.vocabulary.len() as u64);
    sections.posting_offsets.push(sections.postings.len() as u64);
    Ok(sections)
}

/// The words of one run (offsets without the closing one).
fn merge_word_run(
    old: &TrigramIndex,
    new_ordinal: &[u32],
    positions: std::ops::Range<usize>,
    fresh: &[(&[u8], u32, u32, u32)],
    added: &[DocumentWords<'_>],
) -> std::result::Result<WordSections, Malformed> {
    let mut part = WordSections { word_offsets: Vec::new(), vocabulary: Vec::new(), posting_offsets: Vec::new(), postings: Vec::new() };
    let mut groups = fresh.chunk_by(|a, b| a.0 == b.0).peekable();
    let mut positions = positions.peekable();
    let mut kept: Vec<(u32, &[u8])> = Vec::new();
    loop {
        let old_word = positions.peek().map(|&position| old.word(position));
        let new_word = groups.peek().map(|group| group[0].0);
        let word = match (old_word, new_word) {
            (None, None) => break,
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
        };
        kept.clear();
        if old_word == Some(word) {
            let position = positions.next().expect("peeked");
            let mut list = Postings::new(old.word_posting_list(position), old.layout.docs);
            while let Some((ordinal, entry)) = words::next_raw_entry(&mut list)? {
                let renumbered = new_ordinal[ordinal as usize];
                if renumbered != GONE {
                    kept.push((renumbered, entry));
                }
            }
        }
        let group: &[(&[u8], u32, u32, u32)] = if new_word == Some(word) { groups.next().expect("peeked") } else { &[] };
        if kept.is_empty() && group.is_empty() {
            continue;
        }
        part.word_offsets.push(part.vocabulary.len() as u64);
        part.vocabulary.extend_from_slice(word);
        part.vocabulary.push(SEPARATOR);
        part.posting_offsets.push(part.postings.len() as u64);
        let from_added = group.iter().map(|&(_, ordinal, doc, entry)| (ordinal, added[doc as usize].entry(entry as usize)));
        let (mut kept_entries, mut added_entries) = (kept.iter().copied().peekable(), from_added.peekable());
        let mut next = 0u32;
        loop {
            let take_added = match (kept_entries.peek(), added_entries.peek()) {
                (None, None) => break,
                (Some(a), Some(b)) => b.0 < a.0,
                (None, Some(_)) => true,
                (Some(_), None) => false,
            };
            let (ordinal, entry) = if take_added { added_entries.next() } else { kept_entries.next() }.expect("peeked");
            write_varint(&mut part.postings, ordinal - next);
            next = ordinal + 1;
            part.postings.extend_from_slice(entry);
        }
    }
    Ok(part)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator, so the property runs the same everywhere.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self, below: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 33) % below
        }
    }

    fn document(rng: &mut Lcg) -> Vec<u8> {
        const WORDS: [&str; 12] = ["fn", "retry", "Retry", "parse_config", "x", "é_ident", "42", "self", "a", "ab", "abc", "queue"];
        const GAPS: [&str; 6] = [" ", "\n", ".", "(", ") {\n", "\n\n"];
        let mut doc = Vec::new();
        for _ in 0..rng.next(40) {
            doc.extend_from_slice(WORDS[rng.next(WORDS.len() as u64) as usize].as_bytes());
            doc.extend_from_slice(GAPS[rng.next(GAPS.len() as u64) as usize].as_bytes());
        }
        doc
    }

    #[test]
    fn a_merge_writes_what_a_build_of_the_same_documents_writes() {
        let mut rng = Lcg(7);
        for round in 0..200 {
            let before: Vec<(u32, Vec<u8>)> = (0..rng.next(12) as u32).map(|i| (i * 3 + 1, document(&mut rng))).collect();
            let (old, _) = TrigramIndex::build(before.clone()).unwrap();
            // Keep some documents under new ascending ids, add others between and after them.
            let mut kept = Vec::new();
            let mut after: Vec<(u32, Vec<u8>)> = Vec::new();
            let mut added = Vec::new();
            let mut next_id = rng.next(3) as u32;
            for (id, bytes) in &before {
                if rng.next(4) == 0 {
                    added.push((next_id, document(&mut rng)));
                    after.push(added.last().unwrap().clone());
                    next_id += 1 + rng.next(2) as u32;
                }
                if rng.next(3) != 0 {
                    kept.push((*id, next_id));
                    after.push((next_id, bytes.clone()));
                    next_id += 1 + rng.next(2) as u32;
                }
            }
            for _ in 0..rng.next(3) {
                added.push((next_id, document(&mut rng)));
                after.push(added.last().unwrap().clone());
                next_id += 1;
            }
            if round % 10 == 0 {
                added.push((next_id, b"binary\0blob".to_vec()));
            }
            let (merged, report) = old.merged(&kept, added).unwrap();
            let (rebuilt, rebuilt_report) = TrigramIndex::build(after).unwrap();
            assert_eq!(report.indexed, rebuilt_report.indexed, "round {round}");
            assert_eq!(merged.to_bytes(), rebuilt.to_bytes(), "round {round}: merged bytes differ from a build");
            assert_eq!(report.skipped_binary.len(), usize::from(round % 10 == 0));
        }
    }

    #[test]
    fn a_merge_refuses_what_a_build_would_not_index() {
        let (old, _) = TrigramIndex::build(vec![(1, b"alpha".to_vec()), (2, b"beta".to_vec())]).unwrap();
        assert!(matches!(old.merged(&[(1, 5), (2, 4)], Vec::<(u32, Vec<u8>)>::new()), Err(Error::InvalidArgument(_))));
        assert!(matches!(old.merged(&[(9, 1)], Vec::<(u32, Vec<u8>)>::new()), Err(Error::InvalidArgument(_))));
        assert!(matches!(old.merged(&[(1, 1), (1, 2)], Vec::<(u32, Vec<u8>)>::new()), Err(Error::InvalidArgument(_))));
        assert!(matches!(old.merged(&[(1, 3)], vec![(3, b"gamma".to_vec())]), Err(Error::DuplicateDocument(3))));
        assert!(matches!(old.merged(&[], vec![(3, b"x".to_vec()), (3, b"y".to_vec())]), Err(Error::DuplicateDocument(3))));
        let (empty, report) = old.merged(&[], Vec::<(u32, Vec<u8>)>::new()).unwrap();
        assert_eq!((empty.doc_count(), report.indexed), (0, 0));
    }
}
