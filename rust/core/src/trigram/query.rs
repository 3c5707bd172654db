//! Answering literal queries: candidate documents from posting-list intersection, then
//! verification against the stored bytes.

use super::postings::{self, Malformed};
use super::scan::{Fused, Hits};
use super::{fold, LiteralMatch, TermCounts, TrigramIndex};
use crate::{Error, Result};
use memchr::memmem::Finder;
use rayon::prelude::*;
use std::cell::RefCell;

/// A case-sensitive search with SIMD available finds this many matches of a document with memmem
/// and separate newline counting, then hands the rest of the document to the single-pass scan:
/// documents with few matches are searched at memmem speed, dense ones in one pass.
const SPARSE_MATCHES: usize = 4;

/// Skipping an intersection means verifying its extra candidates instead. Lists come shortest
/// first, so later ones are long and filter out few candidates, while decoding is sequential and
/// verification is a parallel SIMD scan. A list is therefore intersected only while its encoded
/// length is below the content its candidates would make verification scan, divided by this.
const SCAN_BYTES_PER_POSTING_BYTE: usize = 256;

/// Finds the non-overlapping occurrences of one literal, built once per query.
pub(crate) enum Matcher {
    /// Byte-exact search; also used case-insensitively when the literal has no ASCII letters.
    Exact(Box<Finder<'static>>),
    /// ASCII case-insensitive search: the lowercased literal, searched for in a lowercased copy
    /// of each document (folding is byte for byte, so match offsets carry over). This runs at
    /// memmem speed, several times faster than a case-insensitive automaton.
    Folded(Box<Finder<'static>>),
}

impl Matcher {
    /// A matcher for `literal` (non-empty).
    pub(crate) fn new(literal: &[u8], case_insensitive: bool) -> Result<Matcher> {
        if !case_insensitive || !literal.iter().any(u8::is_ascii_alphabetic) {
            return Ok(Matcher::Exact(Box::new(Finder::new(literal).into_owned())));
        }
        Ok(Matcher::Folded(Box::new(Finder::new(&literal.to_ascii_lowercase()).into_owned())))
    }

    /// Calls `f` with the start of every non-overlapping occurrence, left to right.
    #[inline]
    fn for_each_start(&self, haystack: &[u8], f: impl FnMut(usize)) {
        match self {
            Matcher::Exact(finder) => finder.find_iter(haystack).for_each(f),
            Matcher::Folded(finder) => with_folded(haystack, |folded| finder.find_iter(folded).for_each(f)),
        }
    }

    /// Number of non-overlapping occurrences.
    pub(crate) fn count(&self, haystack: &[u8]) -> u32 {
        let count = match self {
            Matcher::Exact(finder) => finder.find_iter(haystack).count(),
            Matcher::Folded(finder) => with_folded(haystack, |folded| finder.find_iter(folded).count()),
        };
        saturate(count)
    }

    /// Occurrence count and the distinct 1-based lines holding a match start; `None` without a
    /// match. Newlines are counted only between successive matches, never from the start again.
    /// Used where the single-pass SIMD scan of `scan` is not available.
    pub(crate) fn count_with_lines(&self, haystack: &[u8]) -> Option<(u32, Vec<u32>)> {
        let mut count = 0usize;
        let mut lines: Vec<u32> = Vec::new();
        let (mut line, mut scanned) = (1usize, 0usize);
        self.for_each_start(haystack, |start| {
            count += 1;
            line += memchr::memchr_iter(b'\n', &haystack[scanned..start]).count();
            scanned = start;
            let line = saturate(line);
            if lines.last() != Some(&line) {
                lines.push(line);
            }
        });
        (count > 0).then(|| (saturate(count), lines))
    }
}

impl Matcher {
    /// As `count_with_lines`, with the single-pass scan of `fused` (built for the same
    /// `literal`). A case-sensitive search takes the first `SPARSE_MATCHES` matches with memmem
    /// and the rest with `fused`.
    fn count_with_lines_fused(&self, fused: &Fused, literal: &[u8], haystack: &[u8]) -> Option<(u32, Vec<u32>)> {
        let mut hits = Hits::default();
        match self {
            Matcher::Exact(finder) => {
                let (mut newlines, mut scanned) = (0usize, 0usize);
                for start in finder.find_iter(haystack) {
                    newlines += memchr::memchr_iter(b'\n', &haystack[scanned..start]).count();
                    scanned = start;
                    hits.push(newlines + 1);
                    if hits.count == SPARSE_MATCHES {
                        // The match is `literal` itself, so its newlines are the literal's.
                        let inside = memchr::memchr_iter(b'\n', literal).count();
                        fused.extend(haystack, start + literal.len(), newlines + inside, &mut hits);
                        break;
                    }
                }
            }
            Matcher::Folded(_) => fused.extend(haystack, 0, 0, &mut hits),
        }
        hits.finish()
    }
}

/// Calls `f` with `haystack` ASCII-lowercased, in a buffer reused by each thread so that
/// verification allocates nothing per candidate.
fn with_folded<R>(haystack: &[u8], f: impl FnOnce(&[u8]) -> R) -> R {
    thread_local! {
        static FOLDED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    FOLDED.with_borrow_mut(|folded| {
        folded.clear();
        folded.extend(haystack.iter().map(u8::to_ascii_lowercase));
        f(folded)
    })
}

/// Counts past `u32::MAX` (only possible in documents over 4 GiB) are clamped.
fn saturate(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// The distinct folded trigram keys of `literal`, sorted.
fn literal_trigrams(literal: &[u8]) -> Vec<u32> {
    let mut keys: Vec<u32> = literal
        .windows(3)
        .map(|w| (u32::from(fold(w[0])) << 16) | (u32::from(fold(w[1])) << 8) | u32::from(fold(w[2])))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

impl TrigramIndex {
    /// Ordinals of the documents that may contain `literal` (any case), ascending.
    pub(crate) fn candidates(&self, literal: &[u8]) -> Result<Vec<u32>> {
        let docs = self.layout.docs;
        if literal.len() < 3 {
            return Ok((0..docs).map(|ordinal| ordinal as u32).collect());
        }
        let mut lists = Vec::new();
        for key in literal_trigrams(literal) {
            match self.trigram_position(key) {
                Some(position) => lists.push(self.posting_list(position)),
                None => return Ok(Vec::new()),
            }
        }
        // Byte length is a good proxy for entry count, and needs no decoding.
        lists.sort_unstable_by_key(|list| list.len());
        let mut candidates = postings::decode_list(lists[0], docs).map_err(|e| self.malformed(e))?;
        let scan_per_candidate = self.layout.content_len / docs.max(1) + 1;
        for list in &lists[1..] {
            let worth_it = candidates.len().saturating_mul(scan_per_candidate) / SCAN_BYTES_PER_POSTING_BYTE;
            if candidates.is_empty() || list.len() > worth_it.max(1) {
                break;
            }
            postings::intersect(&mut candidates, list, docs).map_err(|e| self.malformed(e))?;
        }
        Ok(candidates)
    }

    /// A damaged posting list, found at query time.
    fn malformed(&self, malformed: Malformed) -> Error {
        self.corrupt(malformed.reason().to_string())
    }

    /// Verified matches of `literal` with line numbers, by ascending doc id.
    pub(crate) fn search_literal(&self, literal: &[u8], case_insensitive: bool) -> Result<Vec<LiteralMatch>> {
        if literal.is_empty() {
            return Err(Error::InvalidArgument("the search literal is empty".to_string()));
        }
        let candidates = self.candidates(literal)?;
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let matcher = Matcher::new(literal, case_insensitive)?;
        // With SIMD, matches and their lines come from one pass (`scan`); case-insensitively, it
        // needs no lowercased copy of the document.
        let fused = Fused::new(literal, case_insensitive);
        Ok(candidates
            .par_iter()
            .filter_map(|&ordinal| {
                let content = self.content(ordinal as usize);
                let (count, lines) = match &fused {
                    Some(fused) => matcher.count_with_lines_fused(fused, literal, content)?,
                    None => matcher.count_with_lines(content)?,
                };
                Some(LiteralMatch { doc_id: self.id_at(ordinal as usize), count, lines })
            })
            .collect())
    }

    /// Verified per-document occurrence counts of each term, by ascending doc id.
    pub(crate) fn count_all_terms(&self, terms: &[&[u8]], case_insensitive: bool) -> Result<Vec<TermCounts>> {
        if let Some(index) = terms.iter().position(|term| term.is_empty()) {
            return Err(Error::InvalidArgument(format!("term {index} is empty")));
        }
        // (ordinal, term index, count) for every nonzero count.
        let mut hits: Vec<(u32, u32, u32)> = Vec::new();
        for (index, term) in terms.iter().enumerate() {
            let counts = self.count_term(term, case_insensitive)?;
            hits.extend(counts.into_iter().map(|(ordinal, count)| (ordinal, index as u32, count)));
        }
        hits.sort_unstable();
        Ok(hits
            .chunk_by(|a, b| a.0 == b.0)
            .map(|group| {
                let mut counts = vec![0; terms.len()];
                for &(_, index, count) in group {
                    counts[index as usize] = count;
                }
                TermCounts { doc_id: self.id_at(group[0].0 as usize), counts }
            })
            .collect())
    }

    /// (ordinal, count) for every document containing `term`, ascending.
    fn count_term(&self, term: &[u8], case_insensitive: bool) -> Result<Vec<(u32, u32)>> {
        let candidates = self.candidates(term)?;
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let matcher = Matcher::new(term, case_insensitive)?;
        Ok(candidates
            .par_iter()
            .filter_map(|&ordinal| {
                let count = matcher.count(self.content(ordinal as usize));
                (count > 0).then_some((ordinal, count))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts_and_lines(literal: &[u8], ci: bool, haystack: &[u8]) -> Option<(u32, Vec<u32>)> {
        Matcher::new(literal, ci).unwrap().count_with_lines(haystack)
    }

    #[test]
    fn counts_are_non_overlapping() {
        let m = Matcher::new(b"aa", false).unwrap();
        assert_eq!(m.count(b"aaaaa"), 2);
        let m = Matcher::new(b"aA", true).unwrap();
        assert_eq!(m.count(b"AaAaA"), 2);
    }

    #[test]
    fn lines_are_distinct_and_one_based() {
        let text = b"foo foo\nbar\n\nfoo\nfoofoo";
        assert_eq!(starts_and_lines(b"foo", false, text), Some((5, vec![1, 4, 5])));
        assert_eq!(starts_and_lines(b"FOO", true, text), Some((5, vec![1, 4, 5])));
        assert_eq!(starts_and_lines(b"FOO", false, text), None);
        assert_eq!(starts_and_lines(b"\n", false, text), Some((4, vec![1, 2, 3, 4])));
    }

    #[test]
    fn fused_path_agrees_past_the_sparse_matches() {
        let text = b"x\nab\nab ab\r\nAB\n\nab\nxab\nab".repeat(7);
        for (literal, ci) in [(&b"ab"[..], false), (b"AB", true), (b"b\na", false), (b"\n", false), (b"B\r\nA", true)] {
            let matcher = Matcher::new(literal, ci).unwrap();
            let Some(fused) = Fused::new(literal, ci) else { return };
            for len in 0..=text.len() {
                let haystack = &text[..len];
                let expected = matcher.count_with_lines(haystack);
                assert_eq!(matcher.count_with_lines_fused(&fused, literal, haystack), expected, "{literal:?} {len}");
            }
        }
    }

    #[test]
    fn case_insensitive_without_letters_is_exact() {
        assert!(matches!(Matcher::new(b"12;", true).unwrap(), Matcher::Exact(_)));
        assert!(matches!(Matcher::new(b"1a", true).unwrap(), Matcher::Folded(_)));
    }

    #[test]
    fn candidates_are_intersections() {
        let docs = [(1, b"abcd".to_vec()), (2, b"BCDE".to_vec()), (3, b"xyz".to_vec())];
        let (index, _) = TrigramIndex::build(docs.to_vec()).unwrap();
        assert_eq!(index.candidates(b"bcd").unwrap(), vec![0, 1]);
        assert_eq!(index.candidates(b"abcd").unwrap(), vec![0]);
        assert_eq!(index.candidates(b"abcde").unwrap(), Vec::<u32>::new());
        assert_eq!(index.candidates(b"qqq").unwrap(), Vec::<u32>::new());
        assert_eq!(index.candidates(b"zz").unwrap(), vec![0, 1, 2]);
    }

    #[test]
    fn literal_trigrams_are_folded_and_distinct() {
        assert_eq!(literal_trigrams(b"ABab"), literal_trigrams(b"abab"));
        assert_eq!(literal_trigrams(b"aaaaaa").len(), 1);
        assert!(literal_trigrams(b"ab").is_empty());
    }
}
