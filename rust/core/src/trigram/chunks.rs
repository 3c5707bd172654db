//! Term matches counted by the chunk that holds each matching line: what a scorer of chunks
//! needs, without handing every matching line back to the caller (a common word matches
//! millions of lines of a large repository; the chunk-term pairs they fall in are far fewer).

use super::query::LiteralPlan;
use super::{work, LiteralMatch, TrigramIndex};
use crate::{Error, Result};

/// How a corpus's documents are cut into chunks. Chunk `c` starts at line `start_key[c] &
/// 0xffff_ffff` of document `start_key[c] >> 32` (ascending); the chunks of document `d` are
/// `file_offsets[d] .. file_offsets[d + 1]` (none when the two are equal). A line belongs to the
/// last chunk of its document starting at or before it, or to the document's first chunk.
#[derive(Clone, Copy, Debug)]
pub struct ChunkLayout<'a> {
    /// (document << 32) + first line, per chunk, ascending.
    pub start_key: &'a [i64],
    /// Per document, its first chunk; one more entry at the end (the chunk count).
    pub file_offsets: &'a [i64],
}

/// The vocabulary (bytes) from which a question's terms are planned side by side on the
/// thread pool: a megabyte of words, some 100,000 of them, the vocabulary of a repository of
/// 50 MB or so (a benchmark repository's is under 0.2 MB).
const PLANNING_MIN_VOCABULARY: usize = 1 << 20;

/// Matching lines per (term, chunk), by term then chunk: three columns of one length.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChunkCounts {
    /// The term's index among those asked for.
    pub terms: Vec<u32>,
    /// The chunk.
    pub chunks: Vec<u32>,
    /// How many of the term's matching lines the chunk holds.
    pub counts: Vec<u32>,
}

impl TrigramIndex {
    /// For each of `terms` (literal, case-insensitive), how many of the lines holding it each
    /// chunk of `layout` holds. Lines of a document without chunks are not counted. The terms
    /// are counted side by side (when their work is worth it, [`work`]), each document's lines
    /// as they are found: no term's matches are ever listed whole.
    pub fn chunk_line_counts(&self, terms: &[(&[u8], bool)], layout: ChunkLayout<'_>) -> Result<ChunkCounts> {
        let plan = self.plan_chunk_line_counts(terms, layout)?;
        self.counts_by_plan(&plan, layout)
    }

    /// Whether the terms of a question are planned side by side on the thread pool
    /// ([`Self::plan_chunk_line_counts`]): finding the words that hold a common term costs tens
    /// to hundreds of microseconds once the vocabulary reaches [`PLANNING_MIN_VOCABULARY`].
    pub fn planning_worth_the_pool(&self) -> bool {
        self.layout.vocabulary_len >= PLANNING_MIN_VOCABULARY
    }

    /// The first half of [`TrigramIndex::chunk_line_counts`]: each term's plan (the candidate
    /// documents, or the words to read), and what answering them is worth. A caller may run the
    /// second half, [`TrigramIndex::counts_by_plan`], elsewhere when the plan is worth it.
    pub fn plan_chunk_line_counts(&self, terms: &[(&[u8], bool)], layout: ChunkLayout<'_>) -> Result<ChunkCountsPlan> {
        let chunked = self.chunked(layout);
        let side_by_side = terms.len() > 1 && self.planning_worth_the_pool();
        let terms: Result<Vec<_>> = work::map_collect(side_by_side, terms, |&(literal, fold)| {
            Ok((literal.to_vec(), fold, self.plan_literal_among(literal, fold, &chunked)?))
        });
        let terms = terms?;
        let work = terms.iter().map(|(_, _, plan)| self.plan_work(plan)).sum();
        Ok(ChunkCountsPlan { terms, work })
    }

    /// The counts `plan` (made for `layout`) asks for: the second half of
    /// [`TrigramIndex::chunk_line_counts`].
    pub fn counts_by_plan(&self, plan: &ChunkCountsPlan, layout: ChunkLayout<'_>) -> Result<ChunkCounts> {
        let chunked = self.chunked(layout);
        let per_term: Result<Vec<Vec<(u32, u32)>>> = work::map_collect(work::parallel(plan.work), &plan.terms, |(literal, fold, term_plan)| {
            self.planned_chunk_counts(literal, *fold, term_plan, &chunked, layout)
        });
        let per_term = per_term?;
        let mut out = ChunkCounts::default();
        for (term, pairs) in per_term.iter().enumerate() {
            for &(chunk, count) in pairs {
                push(&mut out, term as u32, chunk, count);
            }
        }
        Ok(out)
    }

    /// Whether the layout gives the document of `ordinal` any chunk. A document it gives none
    /// (a filtered question leaves files out this way) adds no count: it is neither read nor
    /// weighed in the plan.
    fn chunked<'a>(&'a self, layout: ChunkLayout<'a>) -> impl Fn(u32) -> bool + Sync + 'a {
        let offsets = layout.file_offsets;
        move |ordinal: u32| {
            let doc = self.id_at(ordinal as usize) as usize;
            doc + 1 >= offsets.len() || offsets[doc] < offsets[doc + 1]
        }
    }

    /// (chunk, count) of one term answered by `plan`, by ascending chunk; `chunked` keeps the
    /// documents (ordinals) the layout gives chunks.
    fn planned_chunk_counts(
        &self,
        literal: &[u8],
        case_insensitive: bool,
        plan: &LiteralPlan,
        chunked: impl Fn(u32) -> bool + Sync,
        layout: ChunkLayout<'_>,
    ) -> Result<Vec<(u32, u32)>> {
        let mut counter = ChunkCounter::new(layout);
        match plan {
            LiteralPlan::Nothing => {}
            LiteralPlan::Words(words) => {
                let mut failed = None;
                self.for_each_word_match(words, true, chunked, |ordinal, _, lines| {
                    if failed.is_none() {
                        failed = counter.add(self.id_at(ordinal as usize), lines).err();
                    }
                })?;
                if let Some(error) = failed {
                    return Err(error);
                }
            }
            LiteralPlan::Verify(candidates) => {
                for m in self.verify(literal, case_insensitive, candidates)? {
                    counter.add(m.doc_id, &m.lines)?;
                }
            }
        }
        Ok(counter.pairs)
    }
}

/// A [`TrigramIndex::chunk_line_counts`] planned ([`TrigramIndex::plan_chunk_line_counts`]).
#[derive(Debug)]
pub struct ChunkCountsPlan {
    terms: Vec<(Vec<u8>, bool, LiteralPlan)>,
    /// What answering every term is worth, in verified bytes ([`work`]).
    work: usize,
}

impl ChunkCountsPlan {
    /// Whether answering it is worth the thread pool ([`work::PARALLEL_MIN_WORK`]): below, it
    /// costs less than waking a worker of the pool does.
    pub fn worth_the_pool(&self) -> bool {
        work::parallel(self.work)
    }
}

/// [`TrigramIndex::chunk_line_counts`] of matches already found (`per_term[t]`: term t's, by
/// document, each with its sorted lines).
pub fn count_by_chunk(per_term: &[Vec<LiteralMatch>], layout: ChunkLayout<'_>) -> Result<ChunkCounts> {
    let mut out = ChunkCounts::default();
    for (term, matches) in per_term.iter().enumerate() {
        let mut counter = ChunkCounter::new(layout);
        for m in matches {
            counter.add(m.doc_id, &m.lines)?;
        }
        for (chunk, count) in counter.pairs {
            push(&mut out, term as u32, chunk, count);
        }
    }
    Ok(out)
}

/// One term's lines counted by the chunk holding each, a document at a time.
struct ChunkCounter<'a> {
    layout: ChunkLayout<'a>,
    documents: usize,
    pairs: Vec<(u32, u32)>,
}

impl<'a> ChunkCounter<'a> {
    fn new(layout: ChunkLayout<'a>) -> Self {
        ChunkCounter { layout, documents: layout.file_offsets.len().saturating_sub(1), pairs: Vec::new() }
    }

    /// Counts the sorted `lines` of document `doc_id`.
    fn add(&mut self, doc_id: u32, lines: &[u32]) -> Result<()> {
        let (doc, layout) = (doc_id as usize, self.layout);
        if doc >= self.documents {
            return Err(Error::InvalidArgument(format!("document {doc} is not in the chunk layout of {} documents", self.documents)));
        }
        let (first, end) = (layout.file_offsets[doc], layout.file_offsets[doc + 1]);
        if first >= end || first < 0 || end as usize > layout.start_key.len() {
            return Ok(()); // no chunk holds this document's lines
        }
        let starts = &layout.start_key[first as usize..end as usize];
        // Lines ascend, so the chunk holding each is at or after the previous line's.
        let mut at = 0usize;
        let mut run: Option<(u32, u32)> = None;
        for &line in lines {
            let key = ((doc as i64) << 32) + i64::from(line);
            while at + 1 < starts.len() && starts[at + 1] <= key {
                at += 1;
            }
            let chunk = (first as usize + at) as u32;
            run = match run {
                Some((c, n)) if c == chunk => Some((c, n + 1)),
                Some(done) => {
                    self.pairs.push(done);
                    Some((chunk, 1))
                }
                None => Some((chunk, 1)),
            };
        }
        self.pairs.extend(run);
        Ok(())
    }
}

/// A question's counts by chunk and term ([`chunk_term_table`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkTermTable {
    /// The chunks holding any term, ascending.
    pub ids: Vec<u32>,
    /// Their counts, a row of `width` per chunk (row-major).
    pub table: Vec<f64>,
    /// Per term, how many rows count it more than 0: BM25's document frequency, which numpy
    /// worked out from the table column by column at 2 ms a question of 100,000 chunks.
    pub document_frequency: Vec<i64>,
}

/// (term, chunk, count) triples as a table with a row per chunk: the chunks holding any term,
/// ascending, and their counts, `width` per row (row-major; a (term, chunk) given twice adds up),
/// and each term's count of rows it is counted in. Work and memory follow the triples and
/// `chunk_count / 64` words, not `chunk_count` rows: a question's few thousand chunks of a corpus
/// of millions.
pub fn chunk_term_table(terms: &[u32], chunks: &[u32], counts: &[u32], chunk_count: usize, width: usize) -> Result<ChunkTermTable> {
    if terms.len() != chunks.len() || chunks.len() != counts.len() {
        return Err(Error::InvalidArgument(format!(
            "{} terms, {} chunks and {} counts: the columns must have one length",
            terms.len(),
            chunks.len(),
            counts.len()
        )));
    }
    if let Some(&term) = terms.iter().find(|&&t| t as usize >= width) {
        return Err(Error::InvalidArgument(format!("term {term} is not among the {width} terms")));
    }
    if let Some(&chunk) = chunks.iter().find(|&&c| c as usize >= chunk_count) {
        return Err(Error::InvalidArgument(format!("chunk {chunk} is not among the {chunk_count} chunks")));
    }
    // A bit per chunk, then the bits set before each word: a chunk's row is its rank.
    let mut bits = vec![0u64; chunk_count.div_ceil(64)];
    for &chunk in chunks {
        bits[chunk as usize / 64] |= 1 << (chunk % 64);
    }
    let mut before = Vec::with_capacity(bits.len());
    let mut rows = 0usize;
    for &word in &bits {
        before.push(rows);
        rows += word.count_ones() as usize;
    }
    let mut ids = Vec::with_capacity(rows);
    for (at, &word) in bits.iter().enumerate() {
        let mut rest = word;
        while rest != 0 {
            ids.push((at * 64) as u32 + rest.trailing_zeros());
            rest &= rest - 1;
        }
    }
    let mut table = vec![0.0f64; rows * width];
    let mut document_frequency = vec![0i64; width];
    for ((&term, &chunk), &count) in terms.iter().zip(chunks).zip(counts) {
        let (word, bit) = (chunk as usize / 64, chunk % 64);
        let row = before[word] + (bits[word] & ((1u64 << bit) - 1)).count_ones() as usize;
        let cell = &mut table[row * width + term as usize];
        // Counts only add up: a cell is counted once, when it first becomes more than 0.
        document_frequency[term as usize] += i64::from(*cell == 0.0 && count > 0);
        *cell += f64::from(count);
    }
    Ok(ChunkTermTable { ids, table, document_frequency })
}

fn push(out: &mut ChunkCounts, term: u32, chunk: u32, count: u32) {
    out.terms.push(term);
    out.chunks.push(chunk);
    out.counts.push(count);
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// A document's lines go each to the last of its chunks starting at or before it (to
        /// its first chunk when none does), counted per chunk in chunk order.
        #[test]
        fn lines_are_counted_by_the_chunk_holding_each(
            starts in proptest::collection::btree_set(1u32..400, 1..30),
            lines in proptest::collection::btree_set(1u32..420, 0..120),
            doc in 0usize..3,
        ) {
            // Three documents; `doc` holds the chunks, the others one chunk each.
            let starts: Vec<u32> = starts.into_iter().collect();
            let lines: Vec<u32> = lines.into_iter().collect();
            let mut keys = Vec::new();
            let mut offsets = vec![0i64];
            for d in 0..3usize {
                let own: Vec<u32> = if d == doc { starts.clone() } else { vec![5] };
                keys.extend(own.iter().map(|&line| ((d as i64) << 32) + i64::from(line)));
                offsets.push(keys.len() as i64);
            }
            let layout = ChunkLayout { start_key: &keys, file_offsets: &offsets };
            let mut counter = ChunkCounter::new(layout);
            counter.add(doc as u32, &lines).unwrap();
            let first = offsets[doc] as u32;
            let mut expected: Vec<(u32, u32)> = Vec::new();
            for &line in &lines {
                let chunk = first + starts.iter().rposition(|&start| start <= line).unwrap_or(0) as u32;
                match expected.last_mut() {
                    Some((c, n)) if *c == chunk => *n += 1,
                    _ => expected.push((chunk, 1)),
                }
            }
            proptest::prop_assert_eq!(counter.pairs, expected);
        }
    }

    #[test]
    fn triples_become_one_row_per_chunk_in_chunk_order() {
        // Chunks 3, 64 and 130 across three bitmap words; (1, 64) twice adds up.
        let found = chunk_term_table(&[0, 0, 1, 1, 1], &[130, 3, 64, 3, 64], &[2, 5, 1, 7, 4], 131, 2).unwrap();
        assert_eq!(found.ids, [3, 64, 130]);
        assert_eq!(found.table, [5.0, 7.0, 0.0, 5.0, 2.0, 0.0]);
        assert_eq!(found.document_frequency, [2, 2]);
        let empty = chunk_term_table(&[], &[], &[], 0, 3).unwrap();
        assert_eq!((empty.ids.len(), empty.table.len(), empty.document_frequency), (0, 0, vec![0, 0, 0]));
        assert!(chunk_term_table(&[2], &[0], &[1], 1, 2).is_err());
        assert!(chunk_term_table(&[0], &[1], &[1], 1, 2).is_err());
        assert!(chunk_term_table(&[0], &[0, 1], &[1], 2, 2).is_err());
    }

    proptest::proptest! {
        /// Each term's document frequency is the count of its column's cells above 0, whatever
        /// the order of the triples, pairs given twice and counts of 0 among them.
        #[test]
        fn document_frequency_counts_the_cells_above_zero(
            triples in proptest::collection::vec((0u32..4, 0u32..200, 0u32..3), 0..300),
        ) {
            let terms: Vec<u32> = triples.iter().map(|t| t.0).collect();
            let chunks: Vec<u32> = triples.iter().map(|t| t.1).collect();
            let counts: Vec<u32> = triples.iter().map(|t| t.2).collect();
            let found = chunk_term_table(&terms, &chunks, &counts, 200, 4).unwrap();
            let by_column: Vec<i64> =
                (0..4).map(|t| found.table.iter().skip(t).step_by(4).filter(|&&cell| cell > 0.0).count() as i64).collect();
            proptest::prop_assert_eq!(found.document_frequency, by_column);
        }
    }

    fn layout_of(chunks: &[(u32, u32)], documents: usize) -> (Vec<i64>, Vec<i64>) {
        let keys = chunks.iter().map(|&(d, line)| (i64::from(d) << 32) + i64::from(line)).collect::<Vec<_>>();
        let offsets = (0..=documents).map(|d| chunks.iter().filter(|&&(c, _)| (c as usize) < d).count() as i64).collect();
        (keys, offsets)
    }

    #[test]
    fn lines_are_counted_by_the_chunk_holding_them() {
        let index = TrigramIndex::build(vec![
            (0, b"retry once\nnothing\nretry twice retry\nretry\n".to_vec()),
            (1, b"no match here\n".to_vec()),
            (2, b"retry in a file without chunks\n".to_vec()),
            (3, b"\n\nretry\n".to_vec()),
        ])
        .unwrap()
        .0;
        // Document 0 in chunks at lines 1 and 3; 1 in one; 2 in none; 3 in one starting at line 2.
        let (keys, offsets) = layout_of(&[(0, 1), (0, 3), (1, 1), (3, 2)], 4);
        let layout = ChunkLayout { start_key: &keys, file_offsets: &offsets };
        let counts = index.chunk_line_counts(&[(b"retry", false), (b"RETRY", true), (b"absent", false)], layout).unwrap();
        // A line counts once however often it holds the term, as line matches do.
        assert_eq!(counts.terms, [0, 0, 0, 1, 1, 1]);
        assert_eq!(counts.chunks, [0, 1, 3, 0, 1, 3]);
        assert_eq!(counts.counts, [1, 2, 1, 1, 2, 1]);
    }

    #[test]
    fn terms_answered_from_word_postings_count_as_their_listed_matches() {
        // Long documents with few occurrences, so that "return" is answered from its words'
        // postings ("return", "returns", both on one line of some documents); "return " (with a
        // byte no word holds) by verification.
        let filler = "    let value = compute(alpha, beta, gamma);\n".repeat(200);
        let doc = |i: usize| {
            let twice = if i.is_multiple_of(3) { "return returns\n" } else { "\n" };
            format!("fn f{i}() {{\n    return x;\n}}\n// returns\n{filler}{twice}").into_bytes()
        };
        let index = TrigramIndex::build((0..200).map(|i| (i as u32, doc(i))).collect()).unwrap().0;
        let candidates = index.candidates(b"return").unwrap();
        assert!(index.words_worth_reading(b"return", true, &candidates, candidates.len()).is_some());
        let chunks: Vec<(u32, u32)> = (0..200).flat_map(|d| [(d, 1), (d, 4), (d, 30)]).collect();
        let (keys, offsets) = layout_of(&chunks, 200);
        let layout = ChunkLayout { start_key: &keys, file_offsets: &offsets };
        let terms: [(&[u8], bool); 3] = [(b"return", true), (b"return ", false), (b"gamma", false)];
        let listed = index.search_each(&terms).unwrap();
        let counted = index.chunk_line_counts(&terms, layout).unwrap();
        assert_eq!(counted, count_by_chunk(&listed, layout).unwrap());
        // Document 0: lines 2 and 4 in chunks 0 and 1, then line 206 ("return returns", once).
        assert_eq!((counted.chunks[..3].to_vec(), counted.counts[..3].to_vec()), (vec![0, 1, 2], vec![1, 1, 1]));
    }

    #[test]
    fn a_layout_leaving_documents_out_counts_the_rest_as_the_whole_does() {
        // Unfiltered, "return" is answered from word postings; with one document in ten kept,
        // reading those documents is cheaper, and the counts of the kept chunks must not change.
        let filler = "    let value = compute(alpha, beta, gamma);\n".repeat(200);
        let doc = |i: usize| format!("fn f{i}() {{\n    return x;\n}}\n{filler}{}", "return returns\n".repeat(i % 4)).into_bytes();
        let index = TrigramIndex::build((0..200).map(|i| (i as u32, doc(i))).collect()).unwrap().0;
        let candidates = index.candidates(b"return").unwrap();
        assert!(index.words_worth_reading(b"return", true, &candidates, candidates.len()).is_some());
        let every: Vec<(u32, u32)> = (0..200).flat_map(|d| [(d, 1), (d, 20)]).collect();
        let some: Vec<(u32, u32)> = every.iter().copied().filter(|&(d, _)| d % 10 == 3).collect();
        let terms: [(&[u8], bool); 3] = [(b"return", true), (b"RETURNS", false), (b"gamma", false)];
        let (keys, offsets) = layout_of(&every, 200);
        let whole = index.chunk_line_counts(&terms, ChunkLayout { start_key: &keys, file_offsets: &offsets }).unwrap();
        let (some_keys, some_offsets) = layout_of(&some, 200);
        let part = index.chunk_line_counts(&terms, ChunkLayout { start_key: &some_keys, file_offsets: &some_offsets }).unwrap();
        // Chunk c of the partial layout is chunk `every.position(some[c])` of the whole one.
        let mut expected = ChunkCounts::default();
        for ((&term, &chunk), &count) in whole.terms.iter().zip(&whole.chunks).zip(&whole.counts) {
            if let Some(at) = some.iter().position(|&c| c == every[chunk as usize]) {
                push(&mut expected, term, at as u32, count);
            }
        }
        assert!(!expected.terms.is_empty());
        assert_eq!(part, expected);
    }

    #[test]
    fn a_plan_says_whether_it_is_worth_the_pool_and_answers_as_one_call_does() {
        // Megabytes of candidates to read for a phrase, and a few lines: the first is worth the
        // pool, the second is not; both plans answer as `chunk_line_counts` does.
        let doc = |i: usize| format!("open the gate\n{}close the gate {i}\n", "let gate = open(gate);\n".repeat(400)).into_bytes();
        let terms: [(&[u8], bool); 2] = [(b"the gate", true), (b"open(", false)];
        for (documents, worth) in [(300, true), (2, false)] {
            let index = TrigramIndex::build((0..documents).map(|i| (i as u32, doc(i))).collect()).unwrap().0;
            let chunks: Vec<(u32, u32)> = (0..documents as u32).flat_map(|d| [(d, 1), (d, 200)]).collect();
            let (keys, offsets) = layout_of(&chunks, documents);
            let layout = ChunkLayout { start_key: &keys, file_offsets: &offsets };
            let plan = index.plan_chunk_line_counts(&terms, layout).unwrap();
            assert_eq!(plan.worth_the_pool(), worth);
            let counted = index.counts_by_plan(&plan, layout).unwrap();
            assert_eq!(counted, index.chunk_line_counts(&terms, layout).unwrap());
            assert_eq!(counted.counts.iter().sum::<u32>() as usize, documents * (2 + 400));
        }
    }

    #[test]
    fn a_line_before_a_documents_first_chunk_goes_to_it() {
        let matches = vec![vec![LiteralMatch { doc_id: 1, count: 3, lines: vec![1, 4, 9] }]];
        let (keys, offsets) = layout_of(&[(0, 1), (1, 3), (1, 8)], 2);
        let counts = count_by_chunk(&matches, ChunkLayout { start_key: &keys, file_offsets: &offsets }).unwrap();
        assert_eq!((counts.chunks, counts.counts), (vec![1, 2], vec![2, 1]));
    }

    #[test]
    fn a_document_outside_the_layout_is_refused() {
        let matches = vec![vec![LiteralMatch { doc_id: 5, count: 1, lines: vec![1] }]];
        let (keys, offsets) = layout_of(&[(0, 1)], 1);
        assert!(count_by_chunk(&matches, ChunkLayout { start_key: &keys, file_offsets: &offsets }).is_err());
    }
}
