//! The trigram index against a naive reference scan, across serialization, and on damaged input.

use maguyva_core::trigram::{count_by_chunk, ChunkLayout, LiteralMatch, TermCounts, TrigramIndex, BINARY_PROBE_LEN};
use maguyva_core::Error;
use proptest::prelude::*;
use std::collections::BTreeMap;
use proptest::sample::Index;

// ---------------------------------------------------------------------------------------------
// Reference implementation: a straightforward scan, written independently of the index.

fn is_binary(doc: &[u8]) -> bool {
    doc.iter().take(BINARY_PROBE_LEN).any(|&b| b == 0)
}

/// Leftmost non-overlapping occurrences: (count, distinct 1-based lines of match starts).
fn naive_scan(doc: &[u8], literal: &[u8], case_insensitive: bool) -> (u32, Vec<u32>) {
    let norm = |bytes: &[u8]| -> Vec<u8> {
        if case_insensitive {
            bytes.to_ascii_lowercase()
        } else {
            bytes.to_vec()
        }
    };
    let (doc_n, lit_n) = (norm(doc), norm(literal));
    let mut count = 0;
    let mut lines = Vec::new();
    let mut i = 0;
    while i + lit_n.len() <= doc_n.len() {
        if doc_n[i..i + lit_n.len()] == lit_n[..] {
            count += 1;
            let line = 1 + doc[..i].iter().filter(|&&b| b == b'\n').count() as u32;
            if lines.last() != Some(&line) {
                lines.push(line);
            }
            i += lit_n.len();
        } else {
            i += 1;
        }
    }
    (count, lines)
}

fn text_docs(docs: &[(u32, Vec<u8>)]) -> Vec<(u32, Vec<u8>)> {
    let mut text: Vec<_> = docs.iter().filter(|(_, d)| !is_binary(d)).cloned().collect();
    text.sort_by_key(|(id, _)| *id);
    text
}

fn reference_search(docs: &[(u32, Vec<u8>)], literal: &[u8], ci: bool) -> Vec<LiteralMatch> {
    text_docs(docs)
        .into_iter()
        .filter_map(|(doc_id, doc)| {
            let (count, lines) = naive_scan(&doc, literal, ci);
            (count > 0).then_some(LiteralMatch { doc_id, count, lines })
        })
        .collect()
}

fn reference_counts(docs: &[(u32, Vec<u8>)], terms: &[Vec<u8>], ci: bool) -> Vec<TermCounts> {
    text_docs(docs)
        .into_iter()
        .filter_map(|(doc_id, doc)| {
            let counts: Vec<u32> = terms.iter().map(|t| naive_scan(&doc, t, ci).0).collect();
            counts.iter().any(|&c| c > 0).then_some(TermCounts { doc_id, counts })
        })
        .collect()
}

fn build(docs: &[(u32, Vec<u8>)]) -> TrigramIndex {
    TrigramIndex::build(docs.to_vec()).expect("build").0
}

/// Every query in `literals` and `terms`, both case modes, agrees with the reference.
fn check_against_reference(index: &TrigramIndex, docs: &[(u32, Vec<u8>)], literals: &[Vec<u8>], terms: &[Vec<u8>]) {
    for ci in [false, true] {
        for literal in literals {
            let got = index.search(literal, ci).expect("search");
            assert_eq!(got, reference_search(docs, literal, ci), "literal {literal:?} ci={ci}");
        }
        let term_refs: Vec<&[u8]> = terms.iter().map(Vec::as_slice).collect();
        let got = index.count_terms(&term_refs, ci).expect("count_terms");
        assert_eq!(got, reference_counts(docs, terms, ci), "terms {terms:?} ci={ci}");
    }
    // All literals at once, each case in turn: every term's answer in its place.
    let each: Vec<(&[u8], bool)> =
        literals.iter().flat_map(|l| [(l.as_slice(), false), (l.as_slice(), true)]).filter(|(l, _)| !l.is_empty()).collect();
    let got = index.search_each(&each).expect("search_each");
    let want: Vec<Vec<LiteralMatch>> = each.iter().map(|&(l, ci)| reference_search(docs, l, ci)).collect();
    assert_eq!(got, want, "search_each of {literals:?}");
    // Counted by chunk (a chunk every other line of every document) as the listed matches are,
    // over the same documents numbered 0, 1, ... (a chunk layout is indexed by document id).
    let mut dense: Vec<(u32, Vec<u8>)> = docs.to_vec();
    dense.sort_by_key(|(id, _)| *id);
    let dense: Vec<(u32, Vec<u8>)> = dense.into_iter().enumerate().map(|(i, (_, doc))| (i as u32, doc)).collect();
    let dense_index = build(&dense);
    let (keys, offsets) = every_other_line(&dense);
    let layout = ChunkLayout { start_key: &keys, file_offsets: &offsets };
    let listed = dense_index.search_each(&each).expect("search_each");
    let counted = dense_index.chunk_line_counts(&each, layout).expect("chunk_line_counts");
    assert_eq!(counted, count_by_chunk(&listed, layout).expect("count_by_chunk"), "chunk_line_counts of {literals:?}");
    // And as counted by hand from the reference's lines: line l of document d is in chunk
    // offsets[d] + (l - 1) / 2.
    let (mut terms, mut chunks, mut counts) = (Vec::new(), Vec::new(), Vec::new());
    for (t, &(literal, ci)) in each.iter().enumerate() {
        for m in reference_search(&dense, literal, ci) {
            let mut per_chunk: BTreeMap<u32, u32> = BTreeMap::new();
            for line in m.lines {
                *per_chunk.entry(offsets[m.doc_id as usize] as u32 + (line - 1) / 2).or_default() += 1;
            }
            for (chunk, count) in per_chunk {
                terms.push(t as u32);
                chunks.push(chunk);
                counts.push(count);
            }
        }
    }
    assert_eq!((counted.terms, counted.chunks, counted.counts), (terms, chunks, counts), "hand counts of {literals:?}");
}

/// A chunk layout of `docs` (ids 0, 1, ...) with a chunk starting at every other line of each
/// document.
fn every_other_line(docs: &[(u32, Vec<u8>)]) -> (Vec<i64>, Vec<i64>) {
    let last = docs.iter().map(|(id, _)| *id as usize + 1).max().unwrap_or(0);
    let (mut keys, mut offsets) = (Vec::new(), vec![0i64]);
    for id in 0..last {
        if let Some((_, doc)) = docs.iter().find(|(d, _)| *d as usize == id) {
            let lines = doc.iter().filter(|&&b| b == b'\n').count() as i64 + 1;
            keys.extend((1..=lines).step_by(2).map(|line| ((id as i64) << 32) + line));
        }
        offsets.push(keys.len() as i64);
    }
    (keys, offsets)
}

// ---------------------------------------------------------------------------------------------
// Random corpora over a small alphabet, so that literals actually match.

const ALPHABET: &[u8] = b"aAbB\n z\xC3\xA9";

fn doc_bytes() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![40 => prop::sample::select(ALPHABET), 1 => Just(0u8)];
    prop::collection::vec(byte, 0..120)
}

/// Documents with distinct, sparse ids in shuffled order.
fn corpus() -> impl Strategy<Value = Vec<(u32, Vec<u8>)>> {
    prop::collection::vec(doc_bytes(), 0..10)
        .prop_flat_map(|docs| {
            let n = docs.len();
            (Just(docs), prop::collection::btree_set(any::<u32>(), n..=n))
        })
        .prop_map(|(docs, ids)| ids.into_iter().rev().zip(docs).collect())
        .prop_shuffle()
}

/// Either random bytes from the alphabet or a substring of a document (possibly re-cased).
#[derive(Debug, Clone)]
enum LiteralSpec {
    Random(Vec<u8>),
    Substring { doc: Index, start: Index, len: usize, flip_case: bool },
}

fn literal_spec() -> impl Strategy<Value = LiteralSpec> {
    prop_oneof![
        prop::collection::vec(prop::sample::select(ALPHABET), 1..6).prop_map(LiteralSpec::Random),
        (any::<Index>(), any::<Index>(), 1usize..12, any::<bool>())
            .prop_map(|(doc, start, len, flip_case)| LiteralSpec::Substring { doc, start, len, flip_case }),
    ]
}

fn realize(spec: &LiteralSpec, docs: &[(u32, Vec<u8>)]) -> Vec<u8> {
    match spec {
        LiteralSpec::Random(bytes) => bytes.clone(),
        LiteralSpec::Substring { doc, start, len, flip_case } => {
            let Some(doc) = (!docs.is_empty()).then(|| &docs[doc.index(docs.len())].1).filter(|d| !d.is_empty()) else {
                return b"ab".to_vec();
            };
            let start = start.index(doc.len());
            let end = (start + len).min(doc.len());
            let mut literal = doc[start..end].to_vec();
            if *flip_case {
                literal.iter_mut().for_each(|b| {
                    *b = if b.is_ascii_lowercase() { b.to_ascii_uppercase() } else { b.to_ascii_lowercase() }
                });
            }
            literal
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn queries_match_reference(
        docs in corpus(),
        specs in prop::collection::vec(literal_spec(), 1..6),
        term_specs in prop::collection::vec(literal_spec(), 0..4),
    ) {
        let literals: Vec<Vec<u8>> = specs.iter().map(|s| realize(s, &docs)).collect();
        let terms: Vec<Vec<u8>> = term_specs.iter().map(|s| realize(s, &docs)).collect();
        let (index, report) = TrigramIndex::build(docs.clone()).unwrap();

        let mut binary: Vec<u32> = docs.iter().filter(|(_, d)| is_binary(d)).map(|(id, _)| *id).collect();
        binary.sort_unstable();
        prop_assert_eq!(&report.skipped_binary, &binary);
        prop_assert_eq!(report.indexed, docs.len() - binary.len());
        prop_assert_eq!(index.doc_count(), report.indexed);
        let text = text_docs(&docs);
        prop_assert_eq!(index.doc_ids().collect::<Vec<_>>(), text.iter().map(|(id, _)| *id).collect::<Vec<_>>());
        for (id, doc) in &text {
            prop_assert_eq!(index.doc_bytes(*id), Some(doc.as_slice()));
            prop_assert_eq!(index.doc_len(*id), Some(doc.len()));
        }
        for id in &binary {
            prop_assert_eq!(index.doc_len(*id), None);
        }

        check_against_reference(&index, &docs, &literals, &terms);
        let copy = TrigramIndex::from_bytes(index.to_bytes().to_vec()).unwrap();
        prop_assert_eq!(copy.to_bytes(), index.to_bytes());
        check_against_reference(&copy, &docs, &literals, &terms);
    }

    #[test]
    fn queries_survive_save_and_load(
        docs in corpus(),
        specs in prop::collection::vec(literal_spec(), 1..4),
    ) {
        let literals: Vec<Vec<u8>> = specs.iter().map(|s| realize(s, &docs)).collect();
        let index = build(&docs);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.mgv");
        index.save(&path).unwrap();
        let loaded = TrigramIndex::load(&path).unwrap();
        prop_assert_eq!(loaded.to_bytes(), index.to_bytes());
        check_against_reference(&loaded, &docs, &literals, &literals);
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        mut bytes in prop::collection::vec(any::<u8>(), 0..300),
        keep_magic in any::<bool>(),
    ) {
        if keep_magic && bytes.len() >= 8 {
            bytes[..8].copy_from_slice(b"MGVTRGM\0");
        }
        prop_assert!(TrigramIndex::from_bytes(bytes).is_err());
    }
}

// ---------------------------------------------------------------------------------------------
// Documents longer than the 64-byte blocks of the SIMD scan, with a literal planted at chosen
// places: at and across block edges, near the end, in CRLF text with non-ASCII bytes.

/// A filler line: mostly letters, sometimes CRLF, sometimes UTF-8 or other high bytes.
fn filler() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        20 => prop::sample::select(&b"abcxyzABC _.;"[..]),
        2 => Just(b'\n'),
        1 => Just(b'\r'),
        1 => prop::sample::select(&b"\xC3\xA9\xE2\x80\x94\xFF\x80"[..]),
    ];
    prop::collection::vec(byte, 0..400)
}

/// Where to plant: near a multiple of 64 (within a literal's length either side), or anywhere.
fn plant_positions() -> impl Strategy<Value = Vec<(usize, i32, Index)>> {
    prop::collection::vec((0usize..8, -70i32..70, any::<Index>()), 0..6)
}

fn planted_doc(mut doc: Vec<u8>, literal: &[u8], positions: &[(usize, i32, Index)]) -> Vec<u8> {
    if doc.len() < literal.len() {
        return doc;
    }
    let last = doc.len() - literal.len();
    for &(block, delta, anywhere) in positions {
        let near_edge = (block * 64) as i64 + i64::from(delta);
        let start = if delta % 5 == 0 { anywhere.index(last + 1) } else { near_edge.clamp(0, last as i64) as usize };
        doc[start..start + literal.len()].copy_from_slice(literal);
    }
    doc
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn planted_literals_match_reference(
        fillers in prop::collection::vec(filler(), 1..6),
        literal in prop_oneof![
            prop::collection::vec(prop::sample::select(&b"abcxyzAB\r\n\xC3\xA9"[..]), 1..70),
            prop::collection::vec(any::<u8>().prop_filter("no NUL", |b| *b != 0), 1..70),
        ],
        positions in prop::collection::vec(plant_positions(), 6),
        flip_case in any::<bool>(),
    ) {
        let docs: Vec<(u32, Vec<u8>)> = fillers
            .into_iter()
            .zip(&positions)
            .enumerate()
            .map(|(i, (doc, at))| (i as u32 * 3, planted_doc(doc, &literal, at)))
            .collect();
        let index = build(&docs);
        let flipped: Vec<u8> = if flip_case {
            literal.iter().map(|b| if b.is_ascii_alphabetic() { b ^ 0x20 } else { *b }).collect()
        } else {
            literal.clone()
        };
        for (query, ci) in [(&literal, false), (&literal, true), (&flipped, true), (&flipped, false)] {
            let got = index.search(query, ci).unwrap();
            prop_assert_eq!(got, reference_search(&docs, query, ci), "literal {:?} ci={}", query, ci);
        }
    }
}

#[test]
fn dense_literal_on_every_line() {
    let mut doc = Vec::new();
    for line in 0..3000usize {
        // Lines of varied length, so matches fall at every offset within a block, some CRLF.
        doc.extend_from_slice(&b"    x".repeat(line % 17));
        doc.extend_from_slice(if line % 3 == 0 { b"return value;\r\n" } else { b"return;RETURN\n" });
    }
    let docs =
        vec![(1, doc.clone()), (2, doc[..doc.len() / 2].to_vec()), (3, b"return".to_vec()), (4, b"retur".to_vec())];
    let index = build(&docs);
    for (literal, ci) in [(&b"return"[..], false), (b"RETURN", true), (b"n;", false), (b"\r\n", false), (b"\n", true)] {
        assert_eq!(index.search(literal, ci).unwrap(), reference_search(&docs, literal, ci), "{literal:?} ci={ci}");
    }
}

// ---------------------------------------------------------------------------------------------
// Larger deterministic corpora: multi-byte varint gaps and long intersections.

/// A fixed-seed generator so the test is reproducible without proptest.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn word_corpus(docs: usize, seed: u64) -> Vec<(u32, Vec<u8>)> {
    const WORDS: &[&str] = &["fn", "let", "Self", "parse", "Config", "user_id", "return", "match", "None", "Some", "é"];
    let mut rng = SplitMix(seed);
    (0..docs)
        .map(|i| {
            let mut doc = Vec::new();
            for _ in 0..rng.below(60) {
                doc.extend_from_slice(WORDS[rng.below(WORDS.len())].as_bytes());
                doc.push(if rng.below(6) == 0 { b'\n' } else { b' ' });
            }
            if rng.below(300) == 0 {
                doc.extend_from_slice(b"needle_Haystack\n");
            }
            (i as u32 * 3 + 1, doc)
        })
        .collect()
}

#[test]
fn large_corpus_matches_reference() {
    let docs = word_corpus(3000, 7);
    let index = build(&docs);
    let literals: Vec<Vec<u8>> =
        ["needle_haystack", "user_id", "parse Config", "SELF", "é", "fn", "n\nl", "zzz", "return None\n"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
    check_against_reference(&index, &docs, &literals, &literals[..4]);
}

#[test]
fn long_document_line_numbers() {
    let mut doc = Vec::new();
    for line in 1..=20_000u32 {
        doc.extend_from_slice(if line % 1000 == 0 { b"x MARK MARK\n" } else { b"filler text\n" });
    }
    // A NUL after the binary probe does not make the document binary.
    doc.push(0);
    let index = build(&[(5, doc.clone())]);
    let hits = index.search(b"mark", true).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].count, 40);
    assert_eq!(hits[0].lines, (1..=20).map(|k| k * 1000).collect::<Vec<u32>>());
    assert!(index.search(b"mark", false).unwrap().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Arguments and edge cases.

#[test]
fn binary_documents_are_skipped_and_reported() {
    let docs =
        vec![(3, b"text one".to_vec()), (1, b"bin\0ary".to_vec()), (2, b"\0".to_vec()), (9, b"text two".to_vec())];
    let (index, report) = TrigramIndex::build(docs).unwrap();
    assert_eq!(report.indexed, 2);
    assert_eq!(report.skipped_binary, vec![1, 2]);
    assert_eq!(index.doc_ids().collect::<Vec<_>>(), vec![3, 9]);
    assert!(index.search(b"ary", false).unwrap().is_empty());
    assert_eq!(index.search(b"text", false).unwrap().len(), 2);
}

#[test]
fn duplicate_ids_are_rejected() {
    let docs = vec![(4, b"a".to_vec()), (5, b"b".to_vec()), (4, b"c".to_vec())];
    assert!(matches!(TrigramIndex::build(docs), Err(Error::DuplicateDocument(4))));
    // Even when one of the two is binary.
    let docs = vec![(8, b"\0".to_vec()), (8, b"text".to_vec())];
    assert!(matches!(TrigramIndex::build(docs), Err(Error::DuplicateDocument(8))));
}

#[test]
fn empty_corpus_works() {
    let (index, report) = TrigramIndex::build(Vec::<(u32, Vec<u8>)>::new()).unwrap();
    assert_eq!((report.indexed, report.skipped_binary.len()), (0, 0));
    assert_eq!((index.doc_count(), index.trigram_count(), index.content_bytes()), (0, 0, 0));
    assert!(index.search(b"abc", false).unwrap().is_empty());
    assert!(index.search(b"a", true).unwrap().is_empty());
    assert!(index.count_terms(&[b"abc", b"x"], false).unwrap().is_empty());
    let copy = TrigramIndex::from_bytes(index.to_bytes().to_vec()).unwrap();
    assert_eq!(copy.doc_count(), 0);
}

#[test]
fn empty_literals_and_terms() {
    let index = build(&[(1, b"abc".to_vec())]);
    assert!(matches!(index.search(b"", false), Err(Error::InvalidArgument(_))));
    assert!(matches!(index.search_each(&[(b"abc", false), (b"", true)]), Err(Error::InvalidArgument(_))));
    assert!(index.search_each(&[]).unwrap().is_empty());
    assert!(index.count_terms(&[], true).unwrap().is_empty());
    assert!(matches!(index.count_terms(&[b"abc", b""], false), Err(Error::InvalidArgument(_))));
}

#[test]
fn save_replaces_atomically_and_leaves_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("idx.mgv");
    build(&[(1, b"first version".to_vec())]).save(&path).unwrap();
    let second = build(&[(2, b"second version".to_vec())]);
    second.save(&path).unwrap();
    assert_eq!(TrigramIndex::load(&path).unwrap().doc_ids().collect::<Vec<_>>(), vec![2]);
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("idx.mgv")]);
}

#[test]
fn a_loaded_index_answers_from_its_file_after_a_save_replaces_it() {
    // The loaded index maps its file: a newer index saved over the path (a rename) leaves it
    // answering from the bytes it was checked with.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("idx.mgv");
    let first = build(&[(1, b"fn retry_later() {}\n".to_vec()), (2, b"let other = 1;\n".to_vec())]);
    first.save(&path).unwrap();
    let loaded = TrigramIndex::load(&path).unwrap();
    build(&[(7, b"nothing alike\n".to_vec())]).save(&path).unwrap();
    assert_eq!(loaded.to_bytes(), first.to_bytes());
    assert_eq!(loaded.search(b"retry_later", false).unwrap().iter().map(|m| m.doc_id).collect::<Vec<_>>(), vec![1]);
    assert_eq!(loaded.clone().into_bytes(), first.to_bytes());
    assert_eq!(TrigramIndex::load(&path).unwrap().doc_ids().collect::<Vec<_>>(), vec![7]);
}

#[test]
fn load_of_missing_file_is_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = TrigramIndex::load(&dir.path().join("absent")).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Damaged input.

fn sample_index_bytes() -> Vec<u8> {
    let docs = vec![
        (10, b"fn parse(input: &str) -> Config {\n    Config::default()\n}\n".to_vec()),
        (20, b"let user = parse(\"x\");\nuser.run();\n".to_vec()),
        (30, "caf\u{e9} au lait\nCAF\u{c9}\n".as_bytes().to_vec()),
    ];
    build(&docs).to_bytes().to_vec()
}

/// A query battery whose only requirement is that nothing panics.
fn exercise(index: &TrigramIndex) {
    for literal in [&b"parse"[..], b"Config", b"us", b"u", b"caf", b"\n"] {
        let _ = index.search(literal, false);
        let _ = index.search(literal, true);
    }
    let _ = index.count_terms(&[b"parse", b"user", b"x"], true);
    let ids: Vec<u32> = index.doc_ids().collect();
    for id in ids {
        let _ = index.doc_bytes(id);
    }
}

#[test]
fn every_truncation_is_rejected() {
    let bytes = sample_index_bytes();
    for len in 0..bytes.len() {
        let err = TrigramIndex::from_bytes(bytes[..len].to_vec()).expect_err("truncated index accepted");
        assert!(matches!(err, Error::Corrupt { .. }), "len {len}: {err}");
    }
    assert!(TrigramIndex::from_bytes(bytes).is_ok());
}

#[test]
fn every_single_byte_flip_is_rejected() {
    let bytes = sample_index_bytes();
    let mut rng = SplitMix(42);
    for position in 0..bytes.len() {
        let mut damaged = bytes.clone();
        damaged[position] ^= 1 + rng.below(255) as u8;
        let err = TrigramIndex::from_bytes(damaged).expect_err("damaged index accepted");
        assert!(matches!(err, Error::Corrupt { .. }), "position {position}: {err}");
    }
}

#[test]
fn resealed_damage_never_panics() {
    // With the checksum recomputed, damage reaches the structural checks and query-time decoding.
    let bytes = sample_index_bytes();
    let body = bytes.len() - 4;
    let mut rng = SplitMix(7);
    let mut accepted = 0;
    for round in 0..4000 {
        let mut damaged = bytes.clone();
        for _ in 0..1 + round % 3 {
            let position = rng.below(body);
            damaged[position] ^= 1 + rng.below(255) as u8;
        }
        let crc = crc32(&damaged[..body]);
        damaged[body..].copy_from_slice(&crc.to_le_bytes());
        if let Ok(index) = TrigramIndex::from_bytes(damaged) {
            accepted += 1;
            exercise(&index);
        }
    }
    // Content bytes can change without breaking the structure, so some must be accepted.
    assert!(accepted > 0);
}

/// CRC-32 (IEEE), bit by bit, to reseal damaged buffers without depending on the crate's code.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[test]
fn truncated_file_is_corrupt_and_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("truncated.mgv");
    let bytes = sample_index_bytes();
    for len in [0, 7, 30, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&path, &bytes[..len]).unwrap();
        let err = TrigramIndex::load(&path).unwrap_err();
        assert!(matches!(&err, Error::Corrupt { path: p, .. } if p == &path), "{err}");
        assert!(err.to_string().contains(&path.display().to_string()), "{err}");
    }
}

#[test]
fn specific_reasons() {
    let bytes = sample_index_bytes();
    let reason = |buf: Vec<u8>| TrigramIndex::from_bytes(buf).unwrap_err().to_string();
    assert!(reason(bytes[..20].to_vec()).contains("truncated"));
    let mut magic = bytes.clone();
    magic[1] = b'x';
    assert!(reason(magic).contains("magic"));
    let mut version = bytes.clone();
    version[8] = 9;
    assert!(reason(version).contains("version 9"));
    assert!(reason(bytes[..bytes.len() - 1].to_vec()).contains("add up"));
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x40;
    assert!(reason(flipped).contains("checksum"));
}
