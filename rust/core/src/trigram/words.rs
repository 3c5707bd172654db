//! Word postings: for every distinct word of the corpus, the documents holding it with its
//! occurrence count and the lines it is on.
//!
//! A *word* is a maximal run of word bytes (ASCII letters, digits, `_`, and every byte >= 0x80,
//! so UTF-8 identifiers stay whole). A literal made of word bytes only can never straddle two
//! words, so its occurrences in a document are exactly its occurrences inside that document's
//! words: the words containing the literal, found in the vocabulary, give every matching
//! document, count and line without reading a document. That answers literals common enough to
//! defeat trigram pruning (`return`, `self`) from a few hundred kilobytes of postings instead of
//! most of the corpus.
//!
//! The vocabulary is stored twice, as written and ASCII-lowercased, each word followed by a
//! newline (never a word byte, so a match cannot run from one word into the next).
//!
//! A word's posting list holds one entry per document, by ascending ordinal:
//! `ordinal gap | count - lines | lines - 1 | first line - 1 | line gap - 1 ...`, all varints,
//! where the ordinal gap is encoded as in trigram posting lists and the lines are the distinct
//! 1-based lines holding the word.

use super::postings::{read_varint, write_varint, Malformed, Postings};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Separates words in the vocabulary sections.
pub(crate) const SEPARATOR: u8 = b'\n';

/// Which bytes are word bytes.
const WORD_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
        byte += 1;
    }
    table
};

/// Whether `byte` belongs to words.
#[inline]
pub(crate) fn is_word_byte(byte: u8) -> bool {
    WORD_BYTES[byte as usize]
}

/// Whether every occurrence of `literal` lies inside one word, so word postings can answer it.
pub(crate) fn answerable(literal: &[u8]) -> bool {
    !literal.is_empty() && literal.iter().all(|&b| is_word_byte(b))
}

/// The word sections of an index, ready to be written.
pub(crate) struct WordSections {
    /// Start of each word in `vocabulary`, plus its length: `words + 1` offsets.
    pub word_offsets: Vec<u64>,
    /// The words, sorted, each followed by [`SEPARATOR`].
    pub vocabulary: Vec<u8>,
    /// Start of each word's posting list in `postings`, plus its length.
    pub posting_offsets: Vec<u64>,
    pub postings: Vec<u8>,
}

impl WordSections {
    pub(crate) fn words(&self) -> usize {
        self.word_offsets.len() - 1
    }
}

/// The words of one document and each one's encoded entry (without the ordinal gap).
pub(crate) struct DocumentWords<'a> {
    pub words: Vec<&'a [u8]>,
    /// Entry `i` is `entries[ends[i - 1]..ends[i]]`.
    ends: Vec<u32>,
    entries: Vec<u8>,
}

impl DocumentWords<'_> {
    pub(crate) fn entry(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.entries[start..self.ends[i] as usize]
    }
}

/// Splits `doc` into words and encodes each distinct word's count and lines.
pub(crate) fn document_words(doc: &[u8]) -> DocumentWords<'_> {
    let mut local: FxHashMap<&[u8], u32> = FxHashMap::default();
    let mut words: Vec<&[u8]> = Vec::new();
    // (local word, line) of every occurrence, in document order.
    let mut occurrences: Vec<(u32, u32)> = Vec::new();
    let (mut line, mut at) = (1u32, 0usize);
    while at < doc.len() {
        let byte = doc[at];
        if !is_word_byte(byte) {
            line += u32::from(byte == b'\n');
            at += 1;
            continue;
        }
        let start = at;
        while at < doc.len() && is_word_byte(doc[at]) {
            at += 1;
        }
        let word = &doc[start..at];
        let next = words.len() as u32;
        let id = *local.entry(word).or_insert(next);
        if id == next {
            words.push(word);
        }
        occurrences.push((id, line));
    }
    encode_entries(words, &occurrences)
}

/// Groups occurrences by word (a counting sort: stable, so lines stay ascending) and encodes.
fn encode_entries<'a>(words: Vec<&'a [u8]>, occurrences: &[(u32, u32)]) -> DocumentWords<'a> {
    let mut starts = vec![0u32; words.len() + 1];
    for &(id, _) in occurrences {
        starts[id as usize + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut fill = starts.clone();
    let mut lines = vec![0u32; occurrences.len()];
    for &(id, line) in occurrences {
        lines[fill[id as usize] as usize] = line;
        fill[id as usize] += 1;
    }
    let mut entries = Vec::with_capacity(occurrences.len() + 2 * words.len());
    let mut ends = Vec::with_capacity(words.len());
    let mut distinct = Vec::new();
    for id in 0..words.len() {
        let group = &lines[starts[id] as usize..starts[id + 1] as usize];
        distinct.clear();
        distinct.extend_from_slice(group);
        distinct.dedup();
        write_varint(&mut entries, (group.len() - distinct.len()) as u32);
        write_varint(&mut entries, distinct.len() as u32 - 1);
        let mut previous = 0u32;
        for &line in &distinct {
            write_varint(&mut entries, line - previous - 1);
            previous = line;
        }
        ends.push(entries.len() as u32);
    }
    DocumentWords { words, ends, entries }
}

/// Posting lists written per parallel task, in rough numbers of entries.
const WRITE_CHUNK_ENTRIES: usize = 1 << 18;

/// Builds the word sections for the documents `contents` (by ordinal).
pub(crate) fn build(contents: &[&[u8]]) -> WordSections {
    let per_doc: Vec<DocumentWords<'_>> = contents.par_iter().map(|doc| document_words(doc)).collect();
    let (vocabulary, ids) = assign_ids(&per_doc);
    // Ranks in byte order make the output independent of hashing and document order.
    let mut order: Vec<u32> = (0..vocabulary.len() as u32).collect();
    order.par_sort_unstable_by_key(|&id| vocabulary[id as usize]);
    let mut rank = vec![0u32; vocabulary.len()];
    for (r, &id) in order.iter().enumerate() {
        rank[id as usize] = r as u32;
    }
    let (list_starts, entries) = group_by_word(&per_doc, &ids, &rank);

    let mut word_offsets = Vec::with_capacity(order.len() + 1);
    let mut vocabulary_bytes = Vec::with_capacity(vocabulary.iter().map(|w| w.len() + 1).sum());
    for &id in &order {
        word_offsets.push(vocabulary_bytes.len() as u64);
        vocabulary_bytes.extend_from_slice(vocabulary[id as usize]);
        vocabulary_bytes.push(SEPARATOR);
    }
    word_offsets.push(vocabulary_bytes.len() as u64);
    let (posting_offsets, postings) = write_lists(&per_doc, &list_starts, &entries);
    WordSections { word_offsets, vocabulary: vocabulary_bytes, posting_offsets, postings }
}

/// The distinct words in first-seen order, and the id of every document's every word (all
/// documents' ids concatenated, in document order).
fn assign_ids<'a>(per_doc: &[DocumentWords<'a>]) -> (Vec<&'a [u8]>, Vec<u32>) {
    let mut global: FxHashMap<&[u8], u32> = FxHashMap::default();
    let mut vocabulary: Vec<&[u8]> = Vec::new();
    let mut ids = Vec::with_capacity(per_doc.iter().map(|d| d.words.len()).sum());
    for doc in per_doc {
        for &word in &doc.words {
            let next = vocabulary.len() as u32;
            let id = *global.entry(word).or_insert(next);
            if id == next {
                vocabulary.push(word);
            }
            ids.push(id);
        }
    }
    (vocabulary, ids)
}

/// A counting sort of all (ordinal, entry) pairs by the rank of their word: returns where each
/// rank's list starts (`words + 1` values) and the pairs. Documents are visited in order, so each
/// list comes out by ascending ordinal.
fn group_by_word(per_doc: &[DocumentWords<'_>], ids: &[u32], rank: &[u32]) -> (Vec<usize>, Vec<(u32, u32)>) {
    let mut starts = vec![0usize; rank.len() + 1];
    for &id in ids {
        starts[rank[id as usize] as usize + 1] += 1;
    }
    for r in 1..starts.len() {
        starts[r] += starts[r - 1];
    }
    let mut fill = starts.clone();
    let mut entries = vec![(0u32, 0u32); ids.len()];
    let mut ids = ids.iter();
    for (ordinal, doc) in per_doc.iter().enumerate() {
        for entry in 0..doc.words.len() {
            let r = rank[*ids.next().expect("one id per word") as usize] as usize;
            entries[fill[r]] = (ordinal as u32, entry as u32);
            fill[r] += 1;
        }
    }
    (starts, entries)
}

/// Encodes every word's posting list, in parallel over runs of words; returns the list offsets
/// (`words + 1`) and the bytes.
fn write_lists(per_doc: &[DocumentWords<'_>], list_starts: &[usize], entries: &[(u32, u32)]) -> (Vec<u64>, Vec<u8>) {
    let words = list_starts.len() - 1;
    let mut runs = vec![0usize];
    for word in 1..words {
        if list_starts[word] - list_starts[*runs.last().unwrap_or(&0)] >= WRITE_CHUNK_ENTRIES {
            runs.push(word);
        }
    }
    runs.push(words);
    let written: Vec<(Vec<u64>, Vec<u8>)> = runs
        .par_windows(2)
        .map(|run| {
            let (mut offsets, mut bytes) = (Vec::with_capacity(run[1] - run[0]), Vec::new());
            for word in run[0]..run[1] {
                offsets.push(bytes.len() as u64);
                let mut next = 0u32;
                for &(ordinal, entry) in &entries[list_starts[word]..list_starts[word + 1]] {
                    write_varint(&mut bytes, ordinal - next);
                    next = ordinal + 1;
                    bytes.extend_from_slice(per_doc[ordinal as usize].entry(entry as usize));
                }
            }
            (offsets, bytes)
        })
        .collect();
    let mut offsets = Vec::with_capacity(words + 1);
    let mut postings = Vec::with_capacity(written.iter().map(|(_, b)| b.len()).sum());
    for (run_offsets, bytes) in written {
        let base = postings.len() as u64;
        offsets.extend(run_offsets.iter().map(|offset| base + offset));
        postings.extend_from_slice(&bytes);
    }
    offsets.push(postings.len() as u64);
    (offsets, postings)
}

/// The next entry of a word's posting list as its ordinal and its encoded bytes after the
/// ordinal gap (count, lines), which a merge copies as they are; `None` at the end of the list.
pub(crate) fn next_raw_entry<'a>(list: &mut Postings<'a>) -> Result<Option<(u32, &'a [u8])>, Malformed> {
    let Some(ordinal) = list.next_ordinal()? else { return Ok(None) };
    let (bytes, pos) = list.bytes_and_position();
    let start = *pos;
    read_varint(bytes, pos)?;
    let distinct = u64::from(read_varint(bytes, pos)?) + 1;
    for _ in 0..distinct {
        read_varint(bytes, pos)?;
    }
    Ok(Some((ordinal, &bytes[start..*pos])))
}

/// One document's entry in a word's posting list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WordEntry {
    pub ordinal: u32,
    /// Occurrences of the word in the document.
    pub count: u32,
}

/// Streams the entries of one word's posting list, checking each against the document count.
pub(crate) struct WordPostings<'a> {
    ordinals: Postings<'a>,
}

impl<'a> WordPostings<'a> {
    pub(crate) fn new(bytes: &'a [u8], docs: usize) -> Self {
        WordPostings { ordinals: Postings::new(bytes, docs) }
    }

    /// The next entry of a document `wanted` keeps, with its distinct lines appended to `lines`
    /// (when given); `None` at the end of the list. The entries of other documents are passed
    /// over, their lines skipped without being decoded (a filtered question's words are mostly
    /// in documents it leaves out).
    pub(crate) fn next_wanted_entry(&mut self, wanted: &impl Fn(u32) -> bool, lines: Option<&mut Vec<u32>>) -> Result<Option<WordEntry>, Malformed> {
        loop {
            let Some(ordinal) = self.ordinals.next_ordinal()? else { return Ok(None) };
            if wanted(ordinal) {
                return self.rest_of_entry(ordinal, lines).map(Some);
            }
            let (bytes, pos) = self.ordinals.bytes_and_position();
            read_varint(bytes, pos)?;
            let distinct = u64::from(read_varint(bytes, pos)?) + 1;
            skip_varints(bytes, pos, distinct)?;
        }
    }

    /// The entry of document `ordinal` after its ordinal gap: its count, and its lines.
    fn rest_of_entry(&mut self, ordinal: u32, mut lines: Option<&mut Vec<u32>>) -> Result<WordEntry, Malformed> {
        let (bytes, pos) = self.ordinals.bytes_and_position();
        let extra = read_varint(bytes, pos)?;
        let distinct = u64::from(read_varint(bytes, pos)?) + 1;
        let count = u32::try_from(distinct + u64::from(extra)).map_err(|_| Malformed::Overlong)?;
        let mut line = 0u64;
        for _ in 0..distinct {
            line += u64::from(read_varint(bytes, pos)?) + 1;
            if line > u64::from(u32::MAX) {
                return Err(Malformed::Overlong);
            }
            if let Some(lines) = lines.as_deref_mut() {
                lines.push(line as u32);
            }
        }
        Ok(WordEntry { ordinal, count })
    }
}

/// Moves `pos` past `n` varints of `bytes`, eight bytes at a time while at least eight remain
/// to pass: a varint ends at each byte below 0x80, so a word of eight bytes ends as many as it
/// has such bytes, never more than eight.
fn skip_varints(bytes: &[u8], pos: &mut usize, mut n: u64) -> Result<(), Malformed> {
    while n >= 8 {
        let Some(eight) = bytes.get(*pos..*pos + 8) else { break };
        let word = u64::from_le_bytes(eight.try_into().expect("eight bytes"));
        n -= u64::from((!word & 0x8080_8080_8080_8080).count_ones());
        *pos += 8;
    }
    while n > 0 {
        let byte = *bytes.get(*pos).ok_or(Malformed::Truncated)?;
        *pos += 1;
        if byte < 0x80 {
            n -= 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(sections: &WordSections, word: usize, docs: usize) -> Vec<(u32, u32, Vec<u32>)> {
        let bytes = &sections.postings
            [sections.posting_offsets[word] as usize..sections.posting_offsets[word + 1] as usize];
        let mut list = WordPostings::new(bytes, docs);
        let mut out = Vec::new();
        loop {
            let mut lines = Vec::new();
            match list.next_wanted_entry(&|_| true, Some(&mut lines)).unwrap() {
                Some(entry) => out.push((entry.ordinal, entry.count, lines)),
                None => return out,
            }
        }
    }

    #[test]
    fn words_are_maximal_runs_of_word_bytes() {
        let doc = "fn créer_x(a1: u8) {\n  a1 + a1\n}\n\na1".as_bytes();
        let words = document_words(doc);
        let found: Vec<&str> = words.words.iter().map(|w| std::str::from_utf8(w).unwrap()).collect();
        assert_eq!(found, vec!["fn", "créer_x", "a1", "u8"]);
        assert!(answerable(b"a1_") && answerable("é".as_bytes()));
        assert!(!answerable(b"a b") && !answerable(b"a.b") && !answerable(b""));
    }

    #[test]
    fn postings_hold_counts_and_distinct_lines() {
        let docs: Vec<&[u8]> = vec![b"b a\na a\n\nb", b"", b"a"];
        let sections = build(&docs);
        assert_eq!(sections.vocabulary, b"a\nb\n");
        assert_eq!(sections.word_offsets, vec![0, 2, 4]);
        assert_eq!(decode(&sections, 0, 3), vec![(0, 3, vec![1, 2]), (2, 1, vec![1])]);
        assert_eq!(decode(&sections, 1, 3), vec![(0, 2, vec![1, 4])]);
    }

    proptest::proptest! {
        /// Passing over varints eight bytes at a time ends where reading them one by one does,
        /// whatever their lengths.
        #[test]
        fn skipped_varints_end_where_read_ones_do(
            values in proptest::collection::vec(proptest::prop_oneof![0u32..128, 128u32..1 << 14, proptest::num::u32::ANY], 0..64),
            skip in 0usize..64,
        ) {
            let mut bytes = Vec::new();
            for &value in &values {
                write_varint(&mut bytes, value);
            }
            let n = skip.min(values.len());
            let mut read = 0;
            for _ in 0..n {
                read_varint(&bytes, &mut read).unwrap();
            }
            let mut skipped = 0;
            skip_varints(&bytes, &mut skipped, n as u64).unwrap();
            proptest::prop_assert_eq!(skipped, read);
            proptest::prop_assert_eq!(skip_varints(&bytes, &mut skipped, (values.len() - n + 1) as u64), Err(Malformed::Truncated));
        }

        /// The entries of the documents a filter keeps are the entries read whole, then kept.
        #[test]
        fn wanted_entries_are_the_entries_kept(
            docs in proptest::collection::vec(proptest::collection::vec(proptest::sample::select(b"ab \n".to_vec()), 0..200), 1..12),
            every in 1u32..4,
        ) {
            let contents: Vec<&[u8]> = docs.iter().map(Vec::as_slice).collect();
            let sections = build(&contents);
            let wanted = |ordinal: u32| ordinal.is_multiple_of(every);
            for word in 0..sections.word_offsets.len() - 1 {
                let all: Vec<_> = decode(&sections, word, docs.len()).into_iter().filter(|(o, _, _)| wanted(*o)).collect();
                let bytes = &sections.postings[sections.posting_offsets[word] as usize..sections.posting_offsets[word + 1] as usize];
                let mut list = WordPostings::new(bytes, docs.len());
                let mut kept = Vec::new();
                loop {
                    let mut lines = Vec::new();
                    match list.next_wanted_entry(&wanted, Some(&mut lines)).unwrap() {
                        Some(entry) => kept.push((entry.ordinal, entry.count, lines)),
                        None => break,
                    }
                }
                proptest::prop_assert_eq!(kept, all);
            }
        }
    }

    #[test]
    fn build_is_canonical() {
        let a: Vec<&[u8]> = vec![b"zeta alpha", b"alpha beta"];
        let first = build(&a);
        let second = build(&a);
        assert_eq!(first.vocabulary, second.vocabulary);
        assert_eq!(first.postings, second.postings);
        assert_eq!(first.vocabulary, b"alpha\nbeta\nzeta\n");
    }

    #[test]
    fn damaged_entries_are_errors() {
        // ordinal 0, extra 0, one line, line gap overflowing u32
        let bytes = [0u8, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f];
        let mut list = WordPostings::new(&bytes, 1);
        assert!(list.next_wanted_entry(&|_| true, None).is_err());
        let truncated = [0u8, 0, 3];
        let mut list = WordPostings::new(&truncated, 1);
        assert_eq!(list.next_wanted_entry(&|_| true, None), Err(Malformed::Truncated));
    }
}
