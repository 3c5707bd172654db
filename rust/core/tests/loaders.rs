//! Every loader of stored or external bytes, fed damaged input.
//!
//! - The trigram index file: truncated, bit- and byte-flipped, overwritten, forged behind a
//!   recomputed checksum (header counts, offsets, ids, keys, whole sections), empty, garbage.
//!   Loading must fail with `Error::Corrupt` naming the file, or (only when the bytes are the
//!   valid ones, or forged behind a valid checksum) give an index whose queries never panic and
//!   fail only with `Error::Corrupt`; an unchanged file answers exactly as the original.
//! - Packed Hamming codes, queries and allow-lists of arbitrary shapes, and fusion tables of
//!   arbitrary lengths and values: an `InvalidArgument`/`RowOutOfRange` error exactly when the
//!   shapes or values are invalid, otherwise the reference answer.
//! - Files read for indexing (`walk::read_files`) against every size limit.
//!
//! A counting global allocator fails the tests on any allocation over 1 MiB: every input here
//! is a few kilobytes, so a larger allocation can only come from trusting a forged length.

use maguyva_core::fusion::{boost, fuse, ChunkTable, RankedList};
use maguyva_core::hamming::{top_k_batch, Codes, Kernel, Neighbor, SearchOptions};
use maguyva_core::trigram::{LiteralMatch, TermCounts, TrigramIndex, FORMAT_MAGIC, FORMAT_VERSION};
use maguyva_core::walk::{read_files, ReadOutcome, SkipReason, BINARY_PROBE_LEN};
use maguyva_core::Error;
use proptest::prelude::*;
use proptest::sample::Index;
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------
// Allocation watch.

const BIG_ALLOCATION: usize = 1 << 20;
static LARGEST_BIG_ALLOCATION: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether allocations of this thread are watched: only while loading and querying, so that
    /// a panic elsewhere (whose backtrace takes megabytes to symbolize) is not counted.
    static WATCHED: Cell<bool> = const { Cell::new(false) };
}

struct Watch;

fn note(size: usize) {
    if size > BIG_ALLOCATION && WATCHED.try_with(Cell::get).unwrap_or(false) {
        LARGEST_BIG_ALLOCATION.fetch_max(size, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for Watch {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Watch = Watch;

/// Runs `f` on a thread pool whose threads are all watched, the calling thread waiting; a
/// panic inside is returned as an error. Kernels that fan out with rayon run on that pool.
fn watched<R: Send>(f: impl FnOnce() -> R + Send) -> std::thread::Result<R> {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    let pool = POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .start_handler(|_| WATCHED.set(true))
            .build()
            .expect("a watched pool")
    });
    let result = catch_unwind(AssertUnwindSafe(|| pool.install(f)));
    if result.is_ok() {
        assert_no_big_allocation();
    } else {
        // Printing the panic's backtrace allocated; the panic is the failure to report.
        LARGEST_BIG_ALLOCATION.store(0, Ordering::Relaxed);
    }
    result
}

fn assert_no_big_allocation() {
    let largest = LARGEST_BIG_ALLOCATION.load(Ordering::Relaxed);
    assert_eq!(largest, 0, "an allocation of {largest} bytes was made from inputs of a few kilobytes");
}

// ---------------------------------------------------------------------------------------------
// The layout of a serialized index, recomputed from the header as section 2 of docs/FORMAT.md gives it.

const HEADER_LEN: usize = 72;
const TRAILER_LEN: usize = 4;
const KEY_LIMIT: u32 = 1 << 24;

#[derive(Debug, Clone, Copy)]
struct Sections {
    /// docs, content_len, trigrams, postings_len, words, vocabulary_len, word_postings_len.
    counts: [usize; 7],
    ids: usize,
    doc_offsets: usize,
    content: usize,
    keys: usize,
    posting_offsets: usize,
    postings: usize,
    word_offsets: usize,
    vocabulary: usize,
    folded_vocabulary: usize,
    word_posting_offsets: usize,
    word_postings: usize,
    trailer: usize,
}

impl Sections {
    /// The layout of a valid index.
    fn of(buf: &[u8]) -> Sections {
        let mut counts = [0usize; 7];
        for (i, count) in counts.iter_mut().enumerate() {
            *count = u64_at(buf, 16 + 8 * i) as usize;
        }
        let [docs, content_len, trigrams, postings_len, words, vocabulary_len, word_postings_len] = counts;
        let ids = HEADER_LEN;
        let doc_offsets = ids + 4 * docs;
        let content = doc_offsets + 8 * (docs + 1);
        let keys = content + content_len;
        let posting_offsets = keys + 4 * trigrams;
        let postings = posting_offsets + 8 * (trigrams + 1);
        let word_offsets = postings + postings_len;
        let vocabulary = word_offsets + 8 * (words + 1);
        let folded_vocabulary = vocabulary + vocabulary_len;
        let word_posting_offsets = folded_vocabulary + vocabulary_len;
        let word_postings = word_posting_offsets + 8 * (words + 1);
        let trailer = word_postings + word_postings_len;
        assert_eq!(trailer + TRAILER_LEN, buf.len(), "layout recomputed from the header");
        Sections {
            counts,
            ids,
            doc_offsets,
            content,
            keys,
            posting_offsets,
            postings,
            word_offsets,
            vocabulary,
            folded_vocabulary,
            word_posting_offsets,
            word_postings,
            trailer,
        }
    }

    /// (start, entries, length of the section they point into, strictly increasing) of the four
    /// offset arrays: documents, trigram postings, words, word postings.
    fn offset_arrays(&self) -> [(usize, usize, usize, bool); 4] {
        let [docs, content_len, trigrams, postings_len, words, vocabulary_len, word_postings_len] = self.counts;
        [
            (self.doc_offsets, docs + 1, content_len, false),
            (self.posting_offsets, trigrams + 1, postings_len, true),
            (self.word_offsets, words + 1, vocabulary_len, true),
            (self.word_posting_offsets, words + 1, word_postings_len, true),
        ]
    }

    /// (start, end) of every section after the header, trailer excluded.
    fn spans(&self) -> [(usize, usize); 11] {
        [
            (self.ids, self.doc_offsets),
            (self.doc_offsets, self.content),
            (self.content, self.keys),
            (self.keys, self.posting_offsets),
            (self.posting_offsets, self.postings),
            (self.postings, self.word_offsets),
            (self.word_offsets, self.vocabulary),
            (self.vocabulary, self.folded_vocabulary),
            (self.folded_vocabulary, self.word_posting_offsets),
            (self.word_posting_offsets, self.word_postings),
            (self.word_postings, self.trailer),
        ]
    }
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().unwrap())
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().unwrap())
}

/// Recomputes the CRC32 trailer, so that damage reaches the structural checks.
fn reseal(buf: &mut [u8]) {
    let body = buf.len() - TRAILER_LEN;
    let crc = crc32fast::hash(&buf[..body]);
    buf[body..].copy_from_slice(&crc.to_le_bytes());
}

// ---------------------------------------------------------------------------------------------
// Corpora, queries and loading.

/// Small text over an alphabet of word bytes, separators and UTF-8; optionally a long run of
/// one repeated word, which makes answering from word postings cheaper than verification so
/// both query paths read the loaded bytes; rarely a NUL (a binary document, skipped).
fn doc() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        6 => prop::sample::select(b"abAB_z9".to_vec()),
        3 => prop::sample::select(b" \n.(\t".to_vec()),
        1 => prop::sample::select(vec![0xc3u8, 0xa9, 0xff]),
    ];
    let text = prop::collection::vec(byte, 0..48);
    let word = prop::collection::vec(prop::sample::select(b"abAB_".to_vec()), 1..4);
    let filler = prop::option::weighted(0.4, (word, 100usize..300));
    (text, filler, prop::bool::weighted(0.1)).prop_map(|(mut text, filler, binary)| {
        if let Some((word, times)) = filler {
            for _ in 0..times {
                text.extend_from_slice(&word);
                text.push(b' ');
            }
        }
        if binary {
            text.insert(text.len() / 2, 0);
        }
        text
    })
}

fn corpus() -> impl Strategy<Value = Vec<(u32, Vec<u8>)>> {
    prop::collection::btree_map(prop_oneof![0u32..8, any::<u32>()], doc(), 0..6)
        .prop_map(|docs: BTreeMap<u32, Vec<u8>>| docs.into_iter().collect())
}

/// Substring picks (document, start, length), turned into literals by `literals`.
fn picks() -> impl Strategy<Value = Vec<(Index, Index, usize)>> {
    prop::collection::vec((any::<Index>(), any::<Index>(), 1usize..7), 0..6)
}

fn literals(docs: &[(u32, Vec<u8>)], picks: &[(Index, Index, usize)]) -> Vec<Vec<u8>> {
    let mut literals: Vec<Vec<u8>> =
        [&b"a"[..], b"ab", b"abA", b"b a", b"AB_", b"\n", b"\xc3\xa9", b"zz9 "].iter().map(|l| l.to_vec()).collect();
    for (doc, start, len) in picks {
        if docs.is_empty() {
            break;
        }
        let doc = &docs[doc.index(docs.len())].1;
        if doc.is_empty() {
            continue;
        }
        let start = start.index(doc.len());
        literals.push(doc[start..(start + len).min(doc.len())].to_vec());
    }
    literals
}

fn build(docs: &[(u32, Vec<u8>)]) -> TrigramIndex {
    TrigramIndex::build(docs.to_vec()).expect("build").0
}

/// Everything a caller can ask an index, errors as their messages.
#[derive(Debug, PartialEq)]
struct Answers {
    ids: Vec<u32>,
    docs: Vec<Option<Vec<u8>>>,
    sizes: [usize; 6],
    searches: Vec<Result<Vec<LiteralMatch>, String>>,
    counts: Vec<Result<Vec<TermCounts>, String>>,
}

/// Asks `index` everything, inside `catch_unwind`; every error must be `Corrupt` naming `path`.
fn answers(index: &TrigramIndex, literals: &[Vec<u8>], path: &Path) -> Answers {
    let ask = || {
        let ids: Vec<u32> = index.doc_ids().collect();
        let docs = ids.iter().map(|&id| index.doc_bytes(id).map(<[u8]>::to_vec)).collect();
        for &id in &ids {
            assert_eq!(index.doc_len(id), index.doc_bytes(id).map(<[u8]>::len));
        }
        let _ = index.doc_len(u32::MAX);
        let sizes = [
            index.doc_count(),
            index.trigram_count(),
            index.word_count(),
            index.postings_bytes(),
            index.content_bytes(),
            index.size_bytes(),
        ];
        let mut searches = Vec::new();
        for literal in literals {
            for ci in [false, true] {
                searches.push(checked(index.search(literal, ci), path));
                searches.push(checked(index.search_by_verification(literal, ci), path));
            }
        }
        let terms: Vec<&[u8]> = literals.iter().map(Vec::as_slice).collect();
        let counts = [false, true].map(|ci| checked(index.count_terms(&terms, ci), path)).into();
        Answers { ids, docs, sizes, searches, counts }
    };
    watched(ask).unwrap_or_else(|_| panic!("a query on a loaded index panicked"))
}

/// A result with its error replaced by the message of a `Corrupt` error naming `path`.
fn checked<T>(result: Result<T, Error>, path: &Path) -> Result<T, String> {
    result.map_err(|err| corrupt_reason(&err, path))
}

/// The message of a `Corrupt` error naming `path`; anything else fails the test.
fn corrupt_reason(err: &Error, path: &Path) -> String {
    match err {
        Error::Corrupt { path: named, .. } if named == path => {
            let message = err.to_string();
            assert!(message.contains(&path.display().to_string()), "{message}");
            message
        }
        other => panic!("expected a Corrupt error naming {}, got {other:?}", path.display()),
    }
}

/// Writes `bytes` to `path` and loads it, inside `catch_unwind`. An error must be `Corrupt`
/// naming `path`.
fn load(path: &Path, bytes: &[u8]) -> Option<TrigramIndex> {
    std::fs::write(path, bytes).unwrap();
    let loaded = watched(|| TrigramIndex::load(path))
        .unwrap_or_else(|_| panic!("loading {} damaged bytes panicked", bytes.len()));
    match loaded {
        Ok(index) => Some(index),
        Err(err) => {
            corrupt_reason(&err, path);
            None
        }
    }
}

/// Parses `bytes` from memory (as `load` does after reading the file), which must fail with
/// `Corrupt`.
fn reject_in_memory(bytes: Vec<u8>, what: &str) {
    let parsed = watched(|| TrigramIndex::from_bytes(bytes)).unwrap_or_else(|_| panic!("parsing panicked: {what}"));
    match parsed {
        Ok(_) => panic!("accepted: {what}"),
        Err(err) => assert!(matches!(&err, Error::Corrupt { path, .. } if path.as_os_str().is_empty()), "{err}"),
    }
}

/// A built index, its serialized bytes and the queries asked of it.
struct Saved {
    _dir: tempfile::TempDir,
    /// Where damaged copies are written and loaded from.
    path: PathBuf,
    bytes: Vec<u8>,
    literals: Vec<Vec<u8>>,
    original: TrigramIndex,
}

impl Saved {
    /// The index of `docs`. Its bytes are `to_bytes`, which is what `save` writes (checked in
    /// `saved_index_and_truncations`, the only test paying for `save`'s fsync).
    fn new(docs: &[(u32, Vec<u8>)], picks: &[(Index, Index, usize)]) -> Saved {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.mgv");
        let original = build(docs);
        let bytes = original.to_bytes().to_vec();
        // The checksum is CRC32 of everything before the trailer.
        let mut resealed = bytes.clone();
        reseal(&mut resealed);
        assert_eq!(resealed, bytes);
        Saved { _dir: dir, path, bytes, literals: literals(docs, picks), original }
    }

    fn original_answers(&self) -> Answers {
        answers(&self.original, &self.literals, &self.path)
    }

    /// Loads `damaged` from the file. Unchanged bytes must load and answer as the original;
    /// changed bytes must fail to load unless `forged` (checksum recomputed), in which case an
    /// accepted index must still never panic and fail queries only as `Corrupt`. Returns
    /// whether the bytes were accepted.
    fn check(&self, damaged: &[u8], forged: bool) -> bool {
        let loaded = load(&self.path, damaged);
        if damaged == self.bytes {
            let index = loaded.expect("the unchanged index is rejected");
            assert_eq!(answers(&index, &self.literals, &self.path), self.original_answers());
            return true;
        }
        match loaded {
            None => false,
            Some(_) if !forged => panic!("damaged bytes with a wrong checksum were accepted"),
            Some(index) => {
                answers(&index, &self.literals, &self.path);
                true
            }
        }
    }

    /// Loads `damaged`, which must be rejected.
    fn reject(&self, damaged: &[u8], what: &str) {
        assert!(load(&self.path, damaged).is_none(), "accepted: {what}");
    }
}

// ---------------------------------------------------------------------------------------------
// Damage.

/// Flips of one bit or one byte (XOR with a nonzero mask) at a position anywhere in the file.
fn flips() -> impl Strategy<Value = Vec<(Index, u8)>> {
    let mask = prop_oneof![(0u32..8).prop_map(|bit| 1u8 << bit), 1u8..=255];
    prop::collection::vec((any::<Index>(), mask), 1..=8)
}

fn apply_flips(bytes: &mut [u8], flips: &[(Index, u8)]) {
    for (at, mask) in flips {
        let at = at.index(bytes.len());
        bytes[at] ^= mask;
    }
}

/// Spans overwritten with random bytes.
fn spans() -> impl Strategy<Value = Vec<(Index, Vec<u8>)>> {
    prop::collection::vec((any::<Index>(), prop::collection::vec(any::<u8>(), 1..48)), 1..=3)
}

fn apply_spans(bytes: &mut [u8], spans: &[(Index, Vec<u8>)]) {
    for (at, span) in spans {
        let at = at.index(bytes.len());
        let end = (at + span.len()).min(bytes.len());
        bytes[at..end].copy_from_slice(&span[..end - at]);
    }
}

/// A value written over a header count or an offset.
#[derive(Debug, Clone)]
enum Value {
    Max,
    /// At least 2^32.
    Huge(u64),
    Any(u64),
    /// Below the size of any test file.
    Small(u16),
    /// The original plus a small signed delta.
    Near(i8),
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Max),
        ((1u64 << 32)..=u64::MAX).prop_map(Value::Huge),
        any::<u64>().prop_map(Value::Any),
        any::<u16>().prop_map(Value::Small),
        (-3i8..=3).prop_map(Value::Near),
    ]
}

impl Value {
    fn resolve(&self, original: u64) -> u64 {
        match *self {
            Value::Max => u64::MAX,
            Value::Huge(v) | Value::Any(v) => v,
            Value::Small(v) => u64::from(v),
            Value::Near(d) => original.wrapping_add(d as i64 as u64),
        }
    }
}

/// Damage behind a recomputed checksum.
#[derive(Debug, Clone)]
enum Forge {
    Version(u32),
    Flags(u32),
    /// One of the seven section counts of the header.
    Count(usize, Value),
    /// An entry of one of the four offset arrays.
    Offset(usize, Index, Value),
    DocId(Index, u32),
    /// A document id set to its neighbour's.
    DuplicateId(Index),
    TrigramKey(Index, u32),
    /// Random bytes over part of one section.
    Section(usize, Index, Vec<u8>),
}

fn forge() -> impl Strategy<Value = Forge> {
    prop_oneof![
        1 => any::<u32>().prop_map(Forge::Version),
        1 => any::<u32>().prop_map(Forge::Flags),
        3 => (0usize..7, value()).prop_map(|(field, v)| Forge::Count(field, v)),
        4 => (0usize..4, any::<Index>(), value()).prop_map(|(array, at, v)| Forge::Offset(array, at, v)),
        1 => (any::<Index>(), any::<u32>()).prop_map(|(at, v)| Forge::DocId(at, v)),
        1 => any::<Index>().prop_map(Forge::DuplicateId),
        1 => (any::<Index>(), prop_oneof![0u32..KEY_LIMIT, KEY_LIMIT..=u32::MAX]).prop_map(|(at, v)| Forge::TrigramKey(at, v)),
        4 => (0usize..11, any::<Index>(), prop::collection::vec(any::<u8>(), 1..24))
            .prop_map(|(section, at, bytes)| Forge::Section(section, at, bytes)),
    ]
}

impl Forge {
    /// Applies the damage (without resealing); returns whether the result must be rejected
    /// whatever else is right with it.
    fn apply(&self, buf: &mut [u8]) -> bool {
        let s = Sections::of(buf);
        let put_u32 = |buf: &mut [u8], at: usize, v: u32| buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
        let put_u64 = |buf: &mut [u8], at: usize, v: u64| buf[at..at + 8].copy_from_slice(&v.to_le_bytes());
        let docs = s.counts[0];
        match self {
            Forge::Version(v) => {
                put_u32(buf, 8, *v);
                *v != FORMAT_VERSION
            }
            Forge::Flags(v) => {
                put_u32(buf, 12, *v);
                *v != 0
            }
            Forge::Count(field, value) => {
                // Each count weighs on the total length, which must equal the file's.
                let at = 16 + 8 * field;
                let original = u64_at(buf, at);
                let v = value.resolve(original);
                put_u64(buf, at, v);
                v != original
            }
            Forge::Offset(array, entry, value) => {
                let (start, entries, section_len, _) = s.offset_arrays()[*array];
                let entry = entry.index(entries);
                let at = start + 8 * entry;
                let original = u64_at(buf, at);
                let v = value.resolve(original);
                put_u64(buf, at, v);
                // The first must be 0, the last the section length, and none can pass it.
                v != original && (entry == 0 || entry == entries - 1 || v > section_len as u64)
            }
            Forge::DocId(entry, v) => {
                if docs > 0 {
                    put_u32(buf, s.ids + 4 * entry.index(docs), *v);
                }
                false
            }
            Forge::DuplicateId(entry) => {
                if docs < 2 {
                    return false;
                }
                let entry = entry.index(docs - 1);
                let neighbour = u32_at(buf, s.ids + 4 * entry);
                put_u32(buf, s.ids + 4 * (entry + 1), neighbour);
                true
            }
            Forge::TrigramKey(entry, v) => {
                let trigrams = s.counts[2];
                if trigrams == 0 {
                    return false;
                }
                put_u32(buf, s.keys + 4 * entry.index(trigrams), *v);
                *v >= KEY_LIMIT
            }
            Forge::Section(section, at, bytes) => {
                let (start, end) = s.spans()[*section];
                if start < end {
                    let at = start + at.index(end - start);
                    let n = bytes.len().min(end - at);
                    buf[at..at + n].copy_from_slice(&bytes[..n]);
                }
                false
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The trigram index file.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The saved file is `to_bytes`, loads, and answers as the built index, by both query
    /// paths alike. (a) Every truncation is rejected from memory; a sample of them also from the
    /// file, with the error naming it; so is a trailing byte.
    #[test]
    fn saved_index_and_truncations(docs in corpus(), picks in picks(), lengths in prop::collection::vec(any::<Index>(), 8)) {
        let saved = Saved::new(&docs, &picks);
        saved.original.save(&saved.path).unwrap();
        prop_assert_eq!(&std::fs::read(&saved.path).unwrap(), &saved.bytes);
        let answers = saved.original_answers();
        for pair in answers.searches.chunks(2) {
            prop_assert_eq!(&pair[0], &pair[1], "search and search_by_verification differ");
        }
        prop_assert!(saved.check(&saved.bytes, false));

        for len in 0..saved.bytes.len() {
            let err = TrigramIndex::from_bytes(saved.bytes[..len].to_vec()).expect_err("truncated index accepted");
            prop_assert!(matches!(&err, Error::Corrupt { path, .. } if path.as_os_str().is_empty()), "{}", err);
        }
        for len in lengths {
            let len = len.index(saved.bytes.len());
            saved.reject(&saved.bytes[..len], &format!("truncated to {len} bytes"));
        }
        let mut longer = saved.bytes.clone();
        longer.push(0);
        saved.reject(&longer, "one trailing byte");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// (b) One to eight bit or byte flips anywhere (header, sections, checksum) are rejected.
    #[test]
    fn flipped_bits_and_bytes(docs in corpus(), picks in picks(), flips in flips()) {
        let saved = Saved::new(&docs, &picks);
        let mut damaged = saved.bytes.clone();
        apply_flips(&mut damaged, &flips);
        saved.check(&damaged, false);
    }

    /// (c) Spans overwritten with random bytes are rejected.
    #[test]
    fn overwritten_spans(docs in corpus(), picks in picks(), spans in spans()) {
        let saved = Saved::new(&docs, &picks);
        let mut damaged = saved.bytes.clone();
        apply_spans(&mut damaged, &spans);
        saved.check(&damaged, false);
    }

    /// (d) Flips and overwritten spans behind a recomputed checksum: rejected by the structural
    /// checks, or accepted (document bytes and posting lists can change without breaking the
    /// structure) and then queries never panic and fail only as `Corrupt`.
    #[test]
    fn random_damage_behind_a_valid_checksum(docs in corpus(), picks in picks(), flips in flips(), spans in spans(), both in any::<bool>()) {
        let saved = Saved::new(&docs, &picks);
        let mut damaged = saved.bytes.clone();
        apply_flips(&mut damaged, &flips);
        if both {
            apply_spans(&mut damaged, &spans);
        }
        reseal(&mut damaged);
        saved.check(&damaged, true);
    }

    /// (d) Header fields, offsets, ids, keys and whole sections forged behind a recomputed
    /// checksum, with huge and inconsistent values. One forgery that breaks a rule the loader
    /// checks must be rejected; any mix of them must be rejected or answer without panicking.
    #[test]
    fn forged_structure(docs in corpus(), picks in picks(), forges in prop::collection::vec(forge(), 1..=3)) {
        let saved = Saved::new(&docs, &picks);
        let mut damaged = saved.bytes.clone();
        let mut must_fail = false;
        for forge in &forges {
            // After a forged count the layout is unknown; later forgeries would misplace.
            if Sections::of_checked(&damaged).is_none() {
                break;
            }
            // A later forgery may undo an earlier one, so only a single one is sure to break a rule.
            must_fail = forge.apply(&mut damaged) && forges.len() == 1;
        }
        reseal(&mut damaged);
        let accepted = saved.check(&damaged, true);
        prop_assert!(!(must_fail && accepted), "forgery accepted: {:?}", forges);
    }
}

impl Sections {
    /// The layout, if the header still describes a file of this length.
    fn of_checked(buf: &[u8]) -> Option<Sections> {
        let counts: Vec<u128> = (0..7).map(|i| u128::from(u64_at(buf, 16 + 8 * i))).collect();
        let [docs, content, trigrams, postings, words, vocabulary, word_postings] = counts[..] else { unreachable!() };
        let total = HEADER_LEN as u128
            + 12 * docs
            + 8
            + content
            + 12 * trigrams
            + 8
            + postings
            + 16 * words
            + 16
            + 2 * vocabulary
            + word_postings
            + TRAILER_LEN as u128;
        (total == buf.len() as u128).then(|| Sections::of(buf))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// (d) Systematically: every header count and every offset set to values no valid file of
    /// this size can hold, checksum recomputed, is rejected without a large allocation.
    #[test]
    fn every_forged_count_and_offset(docs in corpus(), picks in picks()) {
        let saved = Saved::new(&docs, &picks);
        let len = saved.bytes.len() as u64;
        let s = Sections::of(&saved.bytes);
        let impossible = [u64::MAX, u64::MAX / 2, 1 << 63, 1 << 40, 1 << 32, u64::from(u32::MAX) + 1, len, len + 1];
        for field in 0..7 {
            let original = s.counts[field] as u64;
            for v in impossible.iter().copied().chain([original + 1, original.wrapping_sub(1)]) {
                if v == original {
                    continue;
                }
                let mut damaged = saved.bytes.clone();
                damaged[16 + 8 * field..24 + 8 * field].copy_from_slice(&v.to_le_bytes());
                reseal(&mut damaged);
                reject_in_memory(damaged, &format!("count {field} set to {v}"));
            }
        }
        for (array, (start, entries, section_len, strict)) in s.offset_arrays().into_iter().enumerate() {
            for entry in 0..entries {
                let at = start + 8 * entry;
                let original = u64_at(&saved.bytes, at);
                let mut values = impossible.to_vec();
                values.push(section_len as u64 + 1);
                if entry == 0 || entry == entries - 1 {
                    values.extend([original + 1, original.wrapping_sub(1)]);
                }
                if strict && entry > 0 {
                    values.push(u64_at(&saved.bytes, at - 8));
                }
                for v in values {
                    if v == original {
                        continue;
                    }
                    let mut damaged = saved.bytes.clone();
                    damaged[at..at + 8].copy_from_slice(&v.to_le_bytes());
                    reseal(&mut damaged);
                    reject_in_memory(damaged, &format!("offset array {array} entry {entry} set to {v}"));
                }
            }
        }
    }

    /// (e) An empty file, random garbage, garbage behind valid magic, version and flags, and
    /// garbage behind a header whose counts add up to the file length with a valid checksum.
    #[test]
    fn garbage(
        garbage in prop::collection::vec(any::<u8>(), 0..2048),
        counts in prop::collection::vec(0u64..24, 7),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("garbage.mgv");
        prop_assert!(load(&path, &[]).is_none());
        prop_assert!(load(&path, &garbage).is_none());

        let mut header = FORMAT_MAGIC.to_vec();
        header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        header.extend_from_slice(&0u32.to_le_bytes());
        let mut magic_then_garbage = header.clone();
        magic_then_garbage.extend_from_slice(&garbage);
        prop_assert!(load(&path, &magic_then_garbage).is_none());

        // Counts that add up to the length, random sections, a valid checksum.
        let [docs, content, trigrams, postings, words, vocabulary, word_postings] = counts[..] else { unreachable!() };
        let total = HEADER_LEN as u64 + 12 * docs + 8 + content + 12 * trigrams + 8 + postings + 16 * words + 16
            + 2 * vocabulary + word_postings + TRAILER_LEN as u64;
        let mut consistent = header;
        for count in &counts {
            consistent.extend_from_slice(&count.to_le_bytes());
        }
        consistent.extend(garbage.iter().copied().cycle().take(total as usize - HEADER_LEN));
        consistent.resize(total as usize, 0);
        reseal(&mut consistent);
        if let Some(index) = load(&path, &consistent) {
            answers(&index, &literals(&[], &[]), &path);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Packed Hamming codes of arbitrary shapes.

fn reference_top_k(data: &[u8], row_bytes: usize, query: &[u8], k: usize, allow: Option<&[u32]>) -> Vec<Neighbor> {
    let rows = data.len() / row_bytes;
    let mut candidates: Vec<u32> = match allow {
        Some(allow) => allow.to_vec(),
        None => (0..rows as u32).collect(),
    };
    candidates.sort_unstable();
    candidates.dedup();
    let mut all: Vec<Neighbor> = candidates
        .into_iter()
        .map(|row| {
            let code = &data[row as usize * row_bytes..(row as usize + 1) * row_bytes];
            let distance = code.iter().zip(query).map(|(a, b)| (a ^ b).count_ones()).sum();
            Neighbor { distance, row }
        })
        .collect();
    all.sort_unstable();
    all.truncate(k);
    all
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Code matrices, query batches and allow-lists whose lengths may not match: an error
    /// exactly when they do not, otherwise the brute-force answer, with every kernel.
    #[test]
    fn hamming_inputs_of_any_shape(
        row_bytes in 0usize..20,
        rows in 0usize..12,
        data_slack in prop_oneof![4 => Just(0isize), 1 => -2isize..=2],
        query_rows in 0usize..3,
        query_slack in prop_oneof![4 => Just(0isize), 1 => -2isize..=2],
        fill in prop::collection::vec(any::<u8>(), 256),
        k in 0usize..16,
        allow in prop::option::of(prop::collection::vec(0u32..14, 0..10)),
        threads in prop::sample::select(vec![0usize, 1, 2]),
        kernel in any::<Index>(),
    ) {
        let sized = |n: usize, slack: isize| n.saturating_add_signed(slack).min(fill.len());
        let data = fill[..sized(rows * row_bytes, data_slack)].to_vec();
        let queries: Vec<u8> = fill.iter().rev().copied().take(sized(query_rows * row_bytes, query_slack)).collect();
        let kernels = Kernel::available();
        let options = SearchOptions { threads, kernel: kernels[kernel.index(kernels.len())] };

        let codes = watched(|| Codes::new(&data, row_bytes)).expect("Codes::new panicked");
        if row_bytes == 0 || data.len() % row_bytes != 0 {
            prop_assert!(matches!(codes, Err(Error::InvalidArgument(_))));
            return Ok(());
        }
        let codes = codes.unwrap();
        let rows = data.len() / row_bytes;
        prop_assert_eq!(codes.rows(), rows);
        let got = watched(|| top_k_batch(&codes, &queries, k, allow.as_deref(), options)).expect("top_k_batch panicked");
        if !queries.len().is_multiple_of(row_bytes) {
            prop_assert!(matches!(got, Err(Error::InvalidArgument(_))), "{:?}", got);
        } else if let Some(&bad) = allow.iter().flatten().find(|&&row| row as usize >= rows) {
            prop_assert!(matches!(got, Err(Error::RowOutOfRange { row, rows: n }) if row == u64::from(bad) && n == rows), "{:?}", got);
        } else {
            let expected: Vec<Vec<Neighbor>> = queries
                .chunks_exact(row_bytes)
                .map(|query| reference_top_k(&data, row_bytes, query, k, allow.as_deref()))
                .collect();
            prop_assert_eq!(got.unwrap(), expected);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Fusion tables and ranked lists of arbitrary lengths and values.

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => 0.0f64..2.0,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => -2.0f64..0.0,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Chunk tables whose columns may differ in length, lists naming chunks past the table,
    /// invalid weights, RRF constants and demotions: an error exactly when something is
    /// invalid, otherwise at most `top_k` hits, one per file, best first, each scored as the
    /// definition says.
    #[test]
    fn fusion_inputs_of_any_shape(
        n in 0usize..12,
        column_slack in prop_oneof![6 => Just([0usize; 3]), 1 => prop::array::uniform3(0usize..2)],
        centrality in prop::collection::vec(prop_oneof![4 => 0.0f32..6.0, 1 => Just(f32::NAN), 1 => -1.0f32..0.0], 14),
        demotion in prop::collection::vec(prop_oneof![6 => 0.0f32..=1.0, 1 => Just(f32::NAN), 1 => 1.0f32..2.0, 1 => -1.0f32..0.0], 14),
        file in prop::collection::vec(0u32..4, 14),
        lists in prop::collection::vec((float(), prop::collection::vec(0u32..13, 0..10)), 0..4),
        k in prop_oneof![6 => 0.0f64..100.0, 1 => Just(f64::NAN), 1 => Just(f64::INFINITY), 1 => Just(-1.0)],
        top_k in 0usize..8,
    ) {
        let chunks = ChunkTable {
            centrality: &centrality[..n + column_slack[0]],
            demotion: &demotion[..n + column_slack[1]],
            file: &file[..n + column_slack[2]],
        };
        let ranked: Vec<RankedList> = lists.iter().map(|(weight, ids)| RankedList { weight: *weight, ids }).collect();
        let got = watched(|| fuse(&ranked, &chunks, k, top_k)).expect("fuse panicked");

        let valid_number = |x: f64| x.is_finite() && x >= 0.0;
        let invalid = !(column_slack[0] == column_slack[1] && column_slack[1] == column_slack[2] && valid_number(k))
            || lists.iter().any(|(weight, ids)| {
                !valid_number(*weight) || ids.iter().any(|&id| id as usize >= chunks.centrality.len())
            })
            || lists.iter().flat_map(|(_, ids)| ids).any(|&id| {
                (id as usize) < chunks.demotion.len() && !(0.0..=1.0).contains(&chunks.demotion[id as usize])
            });
        if invalid {
            prop_assert!(matches!(got, Err(Error::InvalidArgument(_))), "{:?}", got);
            return Ok(());
        }
        let hits = got.unwrap();
        // Reference scores: each list counts a chunk at its first rank.
        let mut scores: BTreeMap<u32, f64> = BTreeMap::new();
        for (weight, ids) in &lists {
            let mut seen = std::collections::HashSet::new();
            for (rank, &id) in ids.iter().enumerate() {
                if seen.insert(id) {
                    let factor = boost(chunks.centrality[id as usize]) * f64::from(chunks.demotion[id as usize]);
                    *scores.entry(id).or_default() += weight / (k + rank as f64 + 1.0) * factor;
                }
            }
        }
        let files: std::collections::BTreeSet<u32> = scores.keys().map(|&id| chunks.file[id as usize]).collect();
        prop_assert_eq!(hits.len(), top_k.min(files.len()));
        let mut hit_files = std::collections::HashSet::new();
        for (i, hit) in hits.iter().enumerate() {
            prop_assert!(hit_files.insert(chunks.file[hit.chunk as usize]), "two hits from one file");
            prop_assert_eq!(hit.modalities.len(), lists.len());
            let expected = scores[&hit.chunk];
            prop_assert!((hit.score - expected).abs() <= 1e-9 * expected.abs().max(1e-12), "{} vs {}", hit.score, expected);
            if i > 0 {
                prop_assert!(hits[i - 1].score >= hit.score);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Files read for indexing.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every size limit, from 0 to `u64::MAX`: a file is its bytes when it fits and is not
    /// binary, too large when it does not fit; missing paths have vanished and a folder is
    /// unreadable.
    #[test]
    fn read_files_against_every_limit(
        files in prop::collection::vec(
            (prop::collection::vec(prop_oneof![20 => any::<u8>().prop_filter("text", |&b| b != 0), 1 => Just(0u8)], 0..64),
             any::<bool>()),
            0..6),
        limit in prop_oneof![Just(u64::MAX), Just(u64::MAX - 1), Just(0u64), 0u64..80],
    ) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("folder")).unwrap();
        let mut paths = vec![PathBuf::from("absent"), PathBuf::from("folder")];
        let mut expected = vec![ReadOutcome::Skipped(SkipReason::Vanished), ReadOutcome::Skipped(SkipReason::Unreadable)];
        for (i, (bytes, long_text_prefix)) in files.iter().enumerate() {
            // A NUL past the binary probe does not make a file binary.
            let mut content = if *long_text_prefix { vec![b'x'; BINARY_PROBE_LEN] } else { Vec::new() };
            content.extend_from_slice(bytes);
            let name = PathBuf::from(format!("f{i}"));
            std::fs::write(dir.path().join(&name), &content).unwrap();
            paths.push(name);
            expected.push(if content.len() as u64 > limit {
                ReadOutcome::Skipped(SkipReason::TooLarge)
            } else if content[..content.len().min(BINARY_PROBE_LEN)].contains(&0) {
                ReadOutcome::Skipped(SkipReason::Binary)
            } else {
                ReadOutcome::Text(content)
            });
        }
        let got = watched(|| read_files(dir.path(), &paths, limit)).expect("read_files panicked");
        prop_assert_eq!(got, expected);
    }
}
