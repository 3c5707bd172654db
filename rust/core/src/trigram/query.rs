//! Answering literal queries: candidate documents from posting-list intersection, then
//! verification against the stored bytes.

use super::postings::{self, Malformed};
use super::scan::{Fused, Hits};
use super::words::{self, WordPostings, SEPARATOR};
use super::{fold, work, LiteralMatch, TermCounts, TrigramIndex};
use crate::{Error, Result};
use memchr::memmem::Finder;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A case-sensitive search with SIMD available finds this many matches of a document with memmem
/// and separate newline counting, then hands the rest of the document to the single-pass scan:
/// documents with few matches are searched at memmem speed, dense ones in one pass.
const SPARSE_MATCHES: usize = 4;

/// Skipping an intersection means verifying its extra candidates instead. Lists come shortest
/// first, so later ones are long and filter out few candidates, while decoding is sequential and
/// verification is a parallel SIMD scan. A list is therefore intersected only while its encoded
/// length is below the content its candidates would make verification scan, divided by this.
const SCAN_BYTES_PER_POSTING_BYTE: usize = 256;

/// Decoding a byte of word postings (varints, then merging the words' lines per document)
/// costs about as much as verifying this many bytes of document content with SIMD; used to
/// choose between the two. Measured on 150 MB of source: 8-28 ns per posting byte (more when
/// many words share documents) against about 0.08 ns per verified byte.
const SCAN_BYTES_PER_WORD_POSTING_BYTE: usize = 128;

/// Passing over a byte of word postings of a document a filter leaves out (its lines skipped
/// eight bytes at a time, not decoded) costs about as much as verifying this many bytes.
/// `calibrate` on 57 MB of source: decoding every entry 12.6 ns a posting byte, decoding a
/// tenth of them and passing over the rest 3.25 ns, so about 2.2 ns a byte passed over, a
/// sixth of decoding one.
const SKIP_BYTES_PER_WORD_POSTING_BYTE: usize = SCAN_BYTES_PER_WORD_POSTING_BYTE / 6;

/// A filtered question takes the word path only when the constants above make it cost at
/// most this fraction of verifying. Term by term (the best of five) the word path was the
/// cheaper wherever they chose it for a `lang:python` question over the 20 benchmark trees, but
/// the question as a whole (`benches/filters.py`) was no faster for it: the margin keeps those
/// terms verified, and leaves the word path to a filter whose files are large (a folder of
/// generated pages, read whole for each term).
const FILTERED_WORDS_MARGIN: usize = 2;

/// What finding the words that hold a literal of three bytes or more through their trigrams
/// costs, in verified bytes: `calibrate` gives 2.4 us as the median (up to 15 us) against
/// 0.042 ns a verified byte, about 57 KB (up to 360 KB); the common words of a large
/// repository cost more (100-180 us over the 20 benchmark trees as one index).
const WORD_LOOKUP_BYTES: usize = 256 * 1024;

/// What each word found through the trigrams costs beyond its postings, in verified bytes
/// (0.042 ns each): checking that it holds the literal, about 80 ns over the 20 benchmark
/// trees as one index (a question's common words, 1,000-1,400 each, in 100-150 us), and, for a
/// word that does, setting up the decoding of its list (four lists allocated; not timed
/// apart). 6 KB is some 250 ns; over `benches/filters.py` 2 KB and 6 KB measured alike
/// (`lang:python` p50 3.19-3.31 and 3.16-3.25 ms over the 20 trees).
const WORD_CHECK_BYTES: usize = 6144;

/// Entries of word postings are grouped by document with a sort when there are fewer than one
/// for this many documents of the index, by a counting sort over the documents otherwise.
const FEW_ENTRIES_PER_DOCUMENT: usize = 8;

/// The word path of a literal of one or two bytes (whose words are found by a scan of the
/// vocabulary) is considered only when verification would read more than this many times
/// the vocabulary. Searching a byte of the vocabulary costs about what verifying a byte does
/// (`calibrate`: 0.040 against 0.044-0.053 ns on 57 and 186 MB of source), so the word path
/// pays as soon as verification reads more than the vocabulary; a search abandoned when the
/// words' postings outgrow their budget is the risk, and it is small while the postings cover
/// the same documents as the candidates.
const VOCABULARY_SEARCH_PAYOFF: usize = 1;

/// [`VOCABULARY_SEARCH_PAYOFF`] when only some candidates are wanted (a filtered question): the
/// words' postings still cover every document, so their budget, made from the wanted
/// candidates' bytes, is outgrown more often, and the search is tried only when verification
/// would read four times the vocabulary.
const VOCABULARY_SEARCH_PAYOFF_AMONG_SOME: usize = 4;

/// A vocabulary worth the thread pool ([`work`]) is searched in about this many parallel parts.
const VOCABULARY_PARTS: usize = 8;

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

/// How a literal is answered ([`TrigramIndex::plan_literal`]).
#[derive(Debug)]
pub(crate) enum LiteralPlan {
    /// No document can hold it.
    Nothing,
    /// From the posting lists of these (word, occurrences of the literal in it).
    Words(Vec<(u32, u32)>),
    /// By reading these candidate documents (ordinals).
    Verify(Vec<u32>),
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

    /// How `literal` is to be answered: from nothing, from the posting lists of the words
    /// holding it, or by verifying the documents its trigrams allow.
    pub(crate) fn plan_literal(&self, literal: &[u8], case_insensitive: bool) -> Result<LiteralPlan> {
        self.plan_literal_among(literal, case_insensitive, |_| true)
    }

    /// [`Self::plan_literal`] for the documents (ordinals) `wanted` keeps: a question restricted
    /// to a few documents weighs reading them against searching the vocabulary, and reads them
    /// when that is cheaper, which it is for most filtered questions.
    pub(crate) fn plan_literal_among(&self, literal: &[u8], case_insensitive: bool, wanted: impl Fn(u32) -> bool) -> Result<LiteralPlan> {
        if literal.is_empty() {
            return Err(Error::InvalidArgument("the search literal is empty".to_string()));
        }
        let mut candidates = self.candidates(literal)?;
        let all = candidates.len();
        candidates.retain(|&ordinal| wanted(ordinal));
        if candidates.is_empty() {
            return Ok(LiteralPlan::Nothing);
        }
        Ok(match self.words_worth_reading(literal, case_insensitive, &candidates, all) {
            Some(words) => LiteralPlan::Words(words),
            None => LiteralPlan::Verify(candidates),
        })
    }

    /// Verified matches of `literal` with line numbers, by ascending doc id.
    pub(crate) fn search_literal(&self, literal: &[u8], case_insensitive: bool) -> Result<Vec<LiteralMatch>> {
        self.search_planned(literal, case_insensitive, &self.plan_literal(literal, case_insensitive)?)
    }

    /// [`Self::search_literal`] by a plan already made for it.
    pub(crate) fn search_planned(&self, literal: &[u8], case_insensitive: bool, plan: &LiteralPlan) -> Result<Vec<LiteralMatch>> {
        match plan {
            LiteralPlan::Nothing => Ok(Vec::new()),
            LiteralPlan::Words(words) => Ok(self
                .word_matches(words, true)?
                .into_iter()
                .map(|(ordinal, count, lines)| LiteralMatch { doc_id: self.id_at(ordinal as usize), count, lines })
                .collect()),
            LiteralPlan::Verify(candidates) => self.verify(literal, case_insensitive, candidates),
        }
    }

    /// Verified matches of `literal`, never from word postings.
    pub(crate) fn search_verified(&self, literal: &[u8], case_insensitive: bool) -> Result<Vec<LiteralMatch>> {
        if literal.is_empty() {
            return Err(Error::InvalidArgument("the search literal is empty".to_string()));
        }
        let candidates = self.candidates(literal)?;
        self.verify(literal, case_insensitive, &candidates)
    }

    /// The matches of `literal` among `candidates`, by reading each of them.
    pub(crate) fn verify(&self, literal: &[u8], case_insensitive: bool, candidates: &[u32]) -> Result<Vec<LiteralMatch>> {
        let matcher = Matcher::new(literal, case_insensitive)?;
        // With SIMD, matches and their lines come from one pass (`scan`); case-insensitively, it
        // needs no lowercased copy of the document.
        let fused = Fused::new(literal, case_insensitive);
        let parallel = work::parallel(self.candidates_bytes(candidates));
        Ok(work::filter_map_collect(parallel, candidates, |&ordinal| {
            let content = self.content(ordinal as usize);
            let (count, lines) = match &fused {
                Some(fused) => matcher.count_with_lines_fused(fused, literal, content)?,
                None => matcher.count_with_lines(content)?,
            };
            Some(LiteralMatch { doc_id: self.id_at(ordinal as usize), count, lines })
        }))
    }

    /// The bytes of content of the documents (ordinals) `candidates`: what verifying them reads.
    pub(crate) fn candidates_bytes(&self, candidates: &[u32]) -> usize {
        candidates.iter().map(|&ordinal| self.content(ordinal as usize).len()).sum()
    }

    /// What answering `plan` is worth in verified bytes ([`work`]): its candidates' content, or
    /// its words' posting lists at what decoding a byte of them costs.
    pub(crate) fn plan_work(&self, plan: &LiteralPlan) -> usize {
        match plan {
            LiteralPlan::Nothing => 0,
            LiteralPlan::Words(words) => self.words_work(words),
            LiteralPlan::Verify(candidates) => self.candidates_bytes(candidates),
        }
    }

    /// What decoding the posting lists of `words` is worth in verified bytes.
    fn words_work(&self, words: &[(u32, u32)]) -> usize {
        let listed: usize = words.iter().map(|&(word, _)| self.word_posting_list(word as usize).len()).sum();
        listed.saturating_mul(SCAN_BYTES_PER_WORD_POSTING_BYTE)
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
    pub(crate) fn count_term(&self, term: &[u8], case_insensitive: bool) -> Result<Vec<(u32, u32)>> {
        let candidates = self.candidates(term)?;
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(words) = self.words_worth_reading(term, case_insensitive, &candidates, candidates.len()) {
            let matches = self.word_matches(&words, false)?;
            return Ok(matches.into_iter().map(|(ordinal, count, _)| (ordinal, count)).collect());
        }
        let matcher = Matcher::new(term, case_insensitive)?;
        // In any case, the single-pass SIMD scan reads each document once; the folded matcher
        // would lower-case a copy of it first.
        let fused = match matcher {
            Matcher::Folded(_) => Fused::new(term, true),
            Matcher::Exact(_) => None,
        };
        let parallel = work::parallel(self.candidates_bytes(&candidates));
        Ok(work::filter_map_collect(parallel, &candidates, |&ordinal| {
            let content = self.content(ordinal as usize);
            let count = match &fused {
                Some(fused) => matcher.count_with_lines_fused(fused, term, content).map_or(0, |(count, _)| count),
                None => matcher.count(content),
            };
            (count > 0).then_some((ordinal, count))
        }))
    }
}

/// One word's decoded posting list, as its occurrences of a literal.
struct DecodedWord {
    ordinals: Vec<u32>,
    /// Occurrences of the literal per document: the word's count times the literal's
    /// occurrences in the word.
    counts: Vec<u64>,
    /// Lines of entry `i` are `lines[line_ends[i - 1]..line_ends[i]]` (empty without lines).
    line_ends: Vec<usize>,
    lines: Vec<u32>,
}

impl DecodedWord {
    fn lines_of(&self, entry: usize) -> &[u32] {
        let start = if entry == 0 { 0 } else { self.line_ends[entry - 1] };
        &self.lines[start..self.line_ends[entry]]
    }
}

impl TrigramIndex {
    /// The words holding `literal` (with its occurrences in each) when reading their postings
    /// is cheaper than verifying `candidates`, which a filter may have chosen among `of_all`
    /// candidates; `None` when verification is the better way or word postings cannot answer
    /// `literal`.
    pub(crate) fn words_worth_reading(&self, literal: &[u8], case_insensitive: bool, candidates: &[u32], of_all: usize) -> Option<Vec<(u32, u32)>> {
        if !words::answerable(literal) || self.layout.words == 0 || candidates.is_empty() {
            return None;
        }
        let verify_bytes = self.candidates_bytes(candidates);
        if literal.len() < 3 {
            // Found by a scan of the vocabulary: below this, a search abandoned half way would
            // cost more than it could save.
            let payoff = if candidates.len() < of_all { VOCABULARY_SEARCH_PAYOFF_AMONG_SOME } else { VOCABULARY_SEARCH_PAYOFF };
            if verify_bytes <= payoff * self.layout.vocabulary_len {
                return None;
            }
            let budget = (verify_bytes - self.layout.vocabulary_len) / SCAN_BYTES_PER_WORD_POSTING_BYTE;
            return self.words_containing(literal, case_insensitive, budget, 0);
        }
        // The words are found through their trigrams, for about what verifying
        // `WORD_LOOKUP_BYTES` costs, or the vocabulary when it is smaller (a small
        // repository's lists are short). A filter's postings are decoded for the documents
        // it keeps, about their share of the candidates, and passed over for the rest.
        let lookup = WORD_LOOKUP_BYTES.min(self.layout.vocabulary_len);
        if verify_bytes <= lookup {
            return None;
        }
        let kept = candidates.len().min(of_all);
        let mut per_posting_byte = ((kept * SCAN_BYTES_PER_WORD_POSTING_BYTE + (of_all - kept) * SKIP_BYTES_PER_WORD_POSTING_BYTE) / of_all.max(1)).max(1);
        if kept < of_all {
            per_posting_byte *= FILTERED_WORDS_MARGIN;
        }
        let budget = (verify_bytes - lookup) / per_posting_byte;
        let per_candidate = WORD_CHECK_BYTES.div_ceil(per_posting_byte);
        // The word that is the literal itself, when there is one, is among those found, and
        // its postings alone may outgrow the budget: then the search is not begun.
        let itself = if case_insensitive { literal.to_ascii_lowercase() } else { literal.to_vec() };
        if self.word_named(&itself).is_some_and(|word| self.word_posting_list(word).len() + per_candidate > budget) {
            return None;
        }
        self.words_containing(literal, case_insensitive, budget, per_candidate)
    }

    /// Every word containing `literal`, ascending, with the number of non-overlapping
    /// occurrences of `literal` in it (ASCII case folded when `case_insensitive`); `None` as
    /// soon as their posting lists add up to more than `budget` bytes, counting `per_candidate`
    /// more for each word checked when the words are found through their trigrams (what
    /// checking it costs, in bytes of postings).
    pub(crate) fn words_containing(&self, literal: &[u8], case_insensitive: bool, budget: usize, per_candidate: usize) -> Option<Vec<(u32, u32)>> {
        let folded = case_insensitive && literal.iter().any(u8::is_ascii_alphabetic);
        let needle = if folded { literal.to_ascii_lowercase() } else { literal.to_vec() };
        let finder = Finder::new(&needle);
        if needle.len() >= 3 {
            self.words_among_candidates(&needle, folded, &finder, budget, per_candidate)
        } else {
            self.words_by_scan(folded, &finder, budget)
        }
    }

    /// [`Self::words_containing`] by a scan of the whole vocabulary (folded when `folded`)
    /// with `finder`: what a needle shorter than a trigram needs.
    pub(crate) fn words_by_scan(&self, folded: bool, finder: &Finder<'_>, budget: usize) -> Option<Vec<(u32, u32)>> {
        let vocabulary = self.vocabulary(folded);
        let spent = AtomicUsize::new(0);
        let parallel = work::parallel(vocabulary.len());
        let bounds = separator_bounds(vocabulary, if parallel { VOCABULARY_PARTS } else { 1 });
        let parts: Vec<(usize, usize)> = bounds.windows(2).map(|part| (part[0], part[1])).collect();
        let found: Option<Vec<Vec<(u32, u32)>>> = work::map_collect(parallel, &parts, |&(start, end)| {
            let mut found: Vec<(u32, u32)> = Vec::new();
            let mut word = 0;
            // The literal holds no separator, so a match never leaves its word, and scanning
            // the concatenation counts like scanning each word alone.
            for offset in finder.find_iter(&vocabulary[start..end]) {
                let at = start + offset;
                if found.last().is_some_and(|&(last, _)| self.word_end(last as usize) > at) {
                    found.last_mut().expect("checked").1 += 1;
                    continue;
                }
                word = self.word_at(at, word);
                found.push((word as u32, 1));
                let list = self.word_posting_list(word).len();
                if spent.fetch_add(list, Ordering::Relaxed) + list > budget {
                    return None;
                }
            }
            Some(found)
        });
        Some(found?.concat())
    }

    /// [`Self::words_containing`] for a `needle` of three bytes or more (folded when `folded`):
    /// the words holding all of its trigrams ([`WordTrigrams`](super::vocabulary::WordTrigrams)),
    /// each searched alone, in the order and with the counts of [`Self::words_by_scan`] (the
    /// same verdict on `budget` when `per_candidate` is 0).
    fn words_among_candidates(&self, needle: &[u8], folded: bool, finder: &Finder<'_>, budget: usize, per_candidate: usize) -> Option<Vec<(u32, u32)>> {
        let folded_needle = if folded { needle.to_vec() } else { needle.to_ascii_lowercase() };
        let mut found = Vec::new();
        let mut spent = 0usize;
        for word in self.word_trigrams().candidates(&folded_needle) {
            // A match never crosses a separator, so counting in the word alone counts as the
            // scan of the whole vocabulary does.
            let occurrences = finder.find_iter(self.word_in(folded, word as usize)).count();
            spent += per_candidate;
            if occurrences > 0 {
                found.push((word, occurrences as u32));
                spent += self.word_posting_list(word as usize).len();
            }
            if spent > budget {
                return None;
            }
        }
        Some(found)
    }

    /// The matches of a literal from the posting lists of the words holding it: (ordinal,
    /// count, lines) by ascending ordinal, lines left empty unless `with_lines`.
    fn word_matches(&self, words: &[(u32, u32)], with_lines: bool) -> Result<Vec<(u32, u32, Vec<u32>)>> {
        let mut matches = Vec::new();
        self.for_each_word_match(words, with_lines, |_| true, |ordinal, count, lines| matches.push((ordinal, count, lines.to_vec())))?;
        Ok(matches)
    }

    /// [`word_matches`](Self::word_matches) handed to `each` one document at a time, by
    /// ascending ordinal, its lines in a buffer reused for the next: no allocation per document.
    /// Only the documents (ordinals) `wanted` keeps are handed over, and only theirs are merged.
    pub(crate) fn for_each_word_match(
        &self,
        words: &[(u32, u32)],
        with_lines: bool,
        wanted: impl Fn(u32) -> bool + Sync,
        mut each: impl FnMut(u32, u32, &[u32]),
    ) -> Result<()> {
        let parallel = work::parallel(self.words_work(words));
        let decoded: std::result::Result<Vec<DecodedWord>, Malformed> = work::map_collect(parallel, words, |&(word, occurrences)| {
            self.decode_word(word as usize, occurrences, with_lines, &wanted)
        });
        let decoded = decoded.map_err(|e| self.malformed(e))?;
        let entries = self.entries_by_document(&decoded);
        let mut lines = Vec::new();
        let mut seen: Vec<u64> = Vec::new();
        for group in entries.chunk_by(|a, b| a.0 == b.0) {
            let count: u64 = group.iter().map(|&(_, w, i)| decoded[w as usize].counts[i as usize]).sum();
            if group.len() == 1 {
                let (_, w, i) = group[0];
                each(group[0].0, saturate(count as usize), decoded[w as usize].lines_of(i as usize));
                continue;
            }
            // Several words' ascending lines, merged without duplicates through a bitmap of the
            // document's lines (cheaper than sorting them: a line holds many words that contain
            // a short literal).
            lines.clear();
            let last = group.iter().filter_map(|&(_, w, i)| decoded[w as usize].lines_of(i as usize).last()).max();
            let bitmap_words = last.map_or(0, |&line| line as usize / 64 + 1);
            seen.clear();
            seen.resize(bitmap_words, 0);
            for &(_, w, i) in group {
                for &line in decoded[w as usize].lines_of(i as usize) {
                    seen[line as usize / 64] |= 1 << (line % 64);
                }
            }
            for (at, &word) in seen.iter().enumerate() {
                let mut rest = word;
                while rest != 0 {
                    lines.push((at * 64) as u32 + rest.trailing_zeros());
                    rest &= rest - 1;
                }
            }
            each(group[0].0, saturate(count as usize), &lines);
        }
        Ok(())
    }

    /// (ordinal, word, entry) of every entry of `decoded`, grouped by document, each
    /// document's in word order: what a sort of the triples gives. Many entries are placed by a
    /// counting sort on the ordinal (each word's ordinals ascend, and words are taken in order,
    /// so within a document the entries stay in word order); few are sorted, as a counting
    /// sort passes over every document of the index, tens of thousands for a handful of
    /// entries.
    fn entries_by_document(&self, decoded: &[DecodedWord]) -> Vec<(u32, u32, u32)> {
        let count: usize = decoded.iter().map(|word| word.ordinals.len()).sum();
        if count.saturating_mul(FEW_ENTRIES_PER_DOCUMENT) < self.layout.docs {
            sorted_entries(decoded)
        } else {
            counted_entries(decoded, self.layout.docs)
        }
    }

    /// Decodes the posting list of `word`, which holds the literal `occurrences` times, keeping
    /// the entries of the documents `wanted` keeps.
    fn decode_word(&self, word: usize, occurrences: u32, with_lines: bool, wanted: &impl Fn(u32) -> bool) -> std::result::Result<DecodedWord, Malformed> {
        let mut list = WordPostings::new(self.word_posting_list(word), self.layout.docs);
        let mut decoded = DecodedWord { ordinals: Vec::new(), counts: Vec::new(), line_ends: Vec::new(), lines: Vec::new() };
        while let Some(entry) = list.next_wanted_entry(wanted, with_lines.then_some(&mut decoded.lines))? {
            decoded.ordinals.push(entry.ordinal);
            decoded.counts.push(u64::from(entry.count) * u64::from(occurrences));
            decoded.line_ends.push(decoded.lines.len());
        }
        Ok(decoded)
    }
}

/// About `parts + 1` positions splitting `vocabulary` right after separators (first 0, last
/// the length), so that no word is cut.
fn separator_bounds(vocabulary: &[u8], parts: usize) -> Vec<usize> {
    let mut bounds = vec![0];
    let step = vocabulary.len() / parts.max(1) + 1;
    let mut at = step;
    while at < vocabulary.len() {
        match memchr::memchr(SEPARATOR, &vocabulary[at..]) {
            Some(offset) if at + offset + 1 < vocabulary.len() => bounds.push(at + offset + 1),
            _ => break,
        }
        at = *bounds.last().unwrap_or(&0) + step;
    }
    bounds.push(vocabulary.len());
    bounds.dedup();
    bounds
}

/// The (ordinal, word, entry) triples of `decoded`, sorted.
fn sorted_entries(decoded: &[DecodedWord]) -> Vec<(u32, u32, u32)> {
    let mut entries = Vec::with_capacity(decoded.iter().map(|word| word.ordinals.len()).sum());
    for (w, word) in decoded.iter().enumerate() {
        entries.extend(word.ordinals.iter().enumerate().map(|(i, &o)| (o, w as u32, i as u32)));
    }
    entries.sort_unstable();
    entries
}

/// [`sorted_entries`] by a counting sort on the ordinal, over `docs` documents.
fn counted_entries(decoded: &[DecodedWord], docs: usize) -> Vec<(u32, u32, u32)> {
    let mut starts = vec![0usize; docs + 1];
    for word in decoded {
        for &o in &word.ordinals {
            starts[o as usize + 1] += 1;
        }
    }
    for d in 0..docs {
        starts[d + 1] += starts[d];
    }
    let mut entries = vec![(0u32, 0u32, 0u32); starts[docs]];
    for (w, word) in decoded.iter().enumerate() {
        for (i, &o) in word.ordinals.iter().enumerate() {
            entries[starts[o as usize]] = (o, w as u32, i as u32);
            starts[o as usize] += 1;
        }
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every match of `literal` found by reading word postings only.
    fn by_words(index: &TrigramIndex, literal: &[u8], ci: bool) -> Vec<(u32, u32, Vec<u32>)> {
        let words = index.words_containing(literal, ci, usize::MAX, 0).unwrap();
        index.word_matches(&words, true).unwrap()
    }

    /// Every match of `literal` found by scanning every document.
    fn by_scanning(docs: &[Vec<u8>], literal: &[u8], ci: bool) -> Vec<(u32, u32, Vec<u32>)> {
        let matcher = Matcher::new(literal, ci).unwrap();
        let found = docs.iter().enumerate().filter_map(|(ordinal, doc)| {
            matcher.count_with_lines(doc).map(|(count, lines)| (ordinal as u32, count, lines))
        });
        found.collect()
    }

    /// One to seven documents of up to `longest` bytes, drawn from `word` bytes (`weight` times
    /// as often) and `other` bytes.
    fn documents(word: &'static [u8], weight: u32, other: &'static [u8], longest: usize) -> impl Strategy<Value = Vec<Vec<u8>>> {
        let byte = prop_oneof![weight => proptest::sample::select(word.to_vec()), 1 => proptest::sample::select(other.to_vec())];
        proptest::collection::vec(proptest::collection::vec(byte, 0..longest), 1..8)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Entries grouped by a sort and by a counting sort come in the same order.
        #[test]
        fn entries_sorted_and_counted_agree(
            words in proptest::collection::vec(proptest::collection::btree_set(0u32..40, 0..20), 0..6),
        ) {
            let decoded: Vec<DecodedWord> = words
                .iter()
                .map(|ordinals| DecodedWord { ordinals: ordinals.iter().copied().collect(), counts: Vec::new(), line_ends: Vec::new(), lines: Vec::new() })
                .collect();
            prop_assert_eq!(sorted_entries(&decoded), counted_entries(&decoded, 40));
        }

        /// Word postings give exactly what scanning gives, for any literal of word bytes:
        /// substrings of words, repeated letters (non-overlapping counts), case folding,
        /// UTF-8 and every kind of separator between words.
        #[test]
        fn word_postings_equal_scanning(
            docs in documents(b"aAbB_9", 4, b" \n.(\r\xc3\xa9", 80),
            literal in proptest::collection::vec(proptest::sample::select(b"aAbB_9\xc3\xa9".to_vec()), 1..6),
            ci in any::<bool>(),
        ) {
            let (index, _) = TrigramIndex::build(docs.iter().cloned().enumerate().map(|(i, d)| (i as u32, d)).collect()).unwrap();
            prop_assert_eq!(by_words(&index, &literal, ci), by_scanning(&docs, &literal, ci));
        }

        /// The words found through their trigrams are those a scan of the vocabulary finds, in
        /// its order, with its counts, and the budget gives up on the same searches.
        #[test]
        fn words_through_trigrams_equal_the_vocabulary_scan(
            docs in documents(b"aAb", 6, b" \n.\xc3\xa9", 120),
            literal in proptest::collection::vec(proptest::sample::select(b"aAb\xc3\xa9".to_vec()), 3..7),
            ci in any::<bool>(),
            budget in prop_oneof![Just(usize::MAX), 0usize..64],
        ) {
            let (index, _) = TrigramIndex::build(docs.iter().cloned().enumerate().map(|(i, d)| (i as u32, d)).collect()).unwrap();
            let folded = ci && literal.iter().any(u8::is_ascii_alphabetic);
            let needle = if folded { literal.to_ascii_lowercase() } else { literal.clone() };
            let finder = Finder::new(&needle);
            prop_assert_eq!(
                index.words_among_candidates(&needle, folded, &finder, budget, 0),
                index.words_by_scan(folded, &finder, budget)
            );
        }

        /// Per-document counts (a regular expression's required strings are found this way)
        /// are the scan's, in either case mode, whichever way they are read.
        #[test]
        fn term_counts_equal_scanning(
            docs in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(b"aAbB_ \n.".to_vec()), 0..120),
                1..8),
            literal in proptest::collection::vec(proptest::sample::select(b"aAbB_ .".to_vec()), 3..6),
            ci in any::<bool>(),
        ) {
            let (index, _) = TrigramIndex::build(docs.iter().cloned().enumerate().map(|(i, d)| (i as u32, d)).collect()).unwrap();
            let scanned: Vec<(u32, u32)> = by_scanning(&docs, &literal, ci).into_iter().map(|(o, c, _)| (o, c)).collect();
            prop_assert_eq!(index.count_term(&literal, ci).unwrap(), scanned);
        }
    }

    #[test]
    fn common_words_are_answered_from_postings() {
        // Long documents with few occurrences: verification would read far more than postings.
        let filler = "    let value = compute(alpha, beta, gamma);\n".repeat(200);
        let doc = |i: usize| format!("fn f{i}() {{\n    return x;\n}}\n// returns\n{filler}").into_bytes();
        let docs: Vec<Vec<u8>> = (0..200).map(doc).collect();
        let (index, _) = TrigramIndex::build(docs.iter().cloned().enumerate().map(|(i, d)| (i as u32, d)).collect()).unwrap();
        let candidates = index.candidates(b"return").unwrap();
        assert_eq!(candidates.len(), 200);
        let words = index.words_worth_reading(b"return", false, &candidates, candidates.len()).expect("postings are cheaper here");
        assert_eq!(words.len(), 2, "return and returns");
        let hits = index.search(b"return", false).unwrap();
        assert_eq!((hits.len(), hits[7].count, hits[7].lines.clone()), (200, 2, vec![2, 4]));
        // A literal with a non-word byte is never answered from word postings.
        assert!(index.words_worth_reading(b"return ", false, &candidates, candidates.len()).is_none());
    }

    #[test]
    fn the_vocabulary_is_searched_sooner_when_every_candidate_is_wanted() {
        // A literal of two bytes, whose words are found by a scan of the vocabulary, with
        // candidates reading between one and four times the vocabulary: every one wanted, the
        // word path pays; some left out by a filter, their postings (of every document) are
        // likelier to outgrow the budget, and the candidates are read.
        let filler = "    let value = compute(alpha, beta, gamma);\n".repeat(20);
        let doc = |i: usize| {
            let own: String = (0..60).map(|j| format!("u{i}a{j} ")).collect();
            format!("fn f{i}() {{\n    return x;\n}}\n{own}\n{filler}").into_bytes()
        };
        let (index, _) = TrigramIndex::build((0..200).map(|i| (i as u32, doc(i))).collect()).unwrap();
        let candidates = index.candidates(b"re").unwrap();
        let ratio = index.candidates_bytes(&candidates) as f64 / index.layout.vocabulary_len as f64;
        assert!((1.0..4.0).contains(&ratio), "{ratio}");
        assert!(index.words_worth_reading(b"re", false, &candidates, candidates.len()).is_some());
        assert!(index.words_worth_reading(b"re", false, &candidates, candidates.len() + 1).is_none());
        assert!(matches!(index.plan_literal(b"re", false).unwrap(), LiteralPlan::Words(_)));
        assert!(matches!(index.plan_literal_among(b"re", false, |o| o % 2 == 0).unwrap(), LiteralPlan::Verify(_)));
    }

    #[test]
    fn a_word_is_found_by_its_name() {
        let (index, _) = TrigramIndex::build(vec![(0, b"gamma alpha\nbeta Beta betas".to_vec())]).unwrap();
        for name in [&b"alpha"[..], b"beta", b"Beta", b"betas", b"gamma"] {
            let word = index.word_named(name).expect("a word of the document");
            assert_eq!(index.words_containing(name, false, usize::MAX, 0).unwrap().iter().filter(|&&(w, _)| w as usize == word).count(), 1);
        }
        for name in [&b"bet"[..], b"BETA", b"alphas", b"a", b"zeta", b""] {
            assert_eq!(index.word_named(name), None);
        }
    }

    #[test]
    fn a_filter_weighs_only_the_postings_it_decodes() {
        // Long documents holding "return" on 150 lines: the word path pays unfiltered,
        // and under a filter keeping half of them, whose other entries are passed over; under
        // one keeping two documents, reading them costs less than finding the words does.
        let filler = "    let value = compute(alpha, beta, gamma);\n".repeat(1200);
        let returns = "    return x;\n".repeat(150);
        let doc = |i: usize| format!("fn f{i}() {{\n{returns}}}\n{filler}").into_bytes();
        let (index, _) = TrigramIndex::build((0..200).map(|i| (i as u32, doc(i))).collect()).unwrap();
        assert!(matches!(index.plan_literal(b"return", false).unwrap(), LiteralPlan::Words(_)));
        assert!(matches!(index.plan_literal_among(b"return", false, |o| o % 2 == 0).unwrap(), LiteralPlan::Words(_)));
        assert!(matches!(index.plan_literal_among(b"return", false, |o| o % 100 == 0).unwrap(), LiteralPlan::Verify(_)));
        // Passing over the entries left out is what makes the half worth it: were they decoded
        // too, the budget of the half's bytes would not cover the whole postings.
        let candidates: Vec<u32> = index.candidates(b"return").unwrap().into_iter().filter(|o| o % 2 == 0).collect();
        let postings: usize = index.words_containing(b"return", false, usize::MAX, 0).unwrap().iter().map(|&(w, _)| index.word_posting_list(w as usize).len()).sum();
        let lookup = WORD_LOOKUP_BYTES.min(index.layout.vocabulary_len);
        assert!((index.candidates_bytes(&candidates) - lookup) / (FILTERED_WORDS_MARGIN * SCAN_BYTES_PER_WORD_POSTING_BYTE) < postings);
    }

    #[test]
    fn separator_bounds_never_cut_words() {
        let vocabulary = b"alpha\nbeta\ngamma\ndelta\n";
        for parts in 1..10 {
            let bounds = separator_bounds(vocabulary, parts);
            assert_eq!((bounds[0], *bounds.last().unwrap()), (0, vocabulary.len()));
            for &b in &bounds[1..bounds.len() - 1] {
                assert_eq!(vocabulary[b - 1], SEPARATOR, "{parts} parts");
            }
        }
        assert_eq!(separator_bounds(b"", 4), vec![0]);
    }

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
