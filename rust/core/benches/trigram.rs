//! Trigram index: build time and literal queries over a synthetic source-code corpus, with a
//! brute-force scan of the same bytes as the baseline queries are measured against.
//!
//! Set `MAGUYVA_TRIGRAM_CORPUS=/some/dir` to index the files under a real directory instead
//! (for comparing with `rg --fixed-strings` over the same files).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use maguyva_core::trigram::TrigramIndex;
use memchr::memmem::Finder;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

const DOCS: usize = 2_000;
const DOC_BYTES: usize = 8 * 1024;

/// A fixed-seed generator, so every run measures the same corpus.
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

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "user", "config", "parse", "buffer", "index", "query", "result", "error", "handle", "request", "response",
    "session", "token", "cache", "value", "key", "node", "tree", "graph", "path", "file", "reader", "writer", "stream",
    "event", "state", "context", "manager", "service", "client", "server", "record", "entry", "batch", "chunk",
    "offset", "length", "count", "limit", "score",
];
const KEYWORDS: &[&str] = &["let", "if", "for", "return", "match", "while", "const", "pub fn", "impl", "struct"];
const TYPES: &[&str] = &["u32", "usize", "String", "Vec<u8>", "Option<Node>", "Result<()>", "&str", "bool"];

/// An identifier of one to three vocabulary words, in snake_case or CamelCase, sometimes with a
/// numeric suffix (which makes rare identifiers).
fn identifier(rng: &mut SplitMix) -> String {
    let camel = rng.below(3) == 0;
    let mut ident = String::new();
    for i in 0..1 + rng.below(3) {
        let word = rng.pick(WORDS);
        if camel {
            ident.push_str(&word[..1].to_uppercase());
            ident.push_str(&word[1..]);
        } else {
            if i > 0 {
                ident.push('_');
            }
            ident.push_str(word);
        }
    }
    if rng.below(8) == 0 {
        ident.push_str(&rng.below(1000).to_string());
    }
    ident
}

fn line(rng: &mut SplitMix) -> String {
    let indent = "    ".repeat(rng.below(4));
    let (a, b, c) = (identifier(rng), identifier(rng), identifier(rng));
    match rng.below(6) {
        0 => format!("{indent}let {a} = {b}.{c}();\n"),
        1 => format!("{indent}pub fn {a}({b}: {}) -> {} {{\n", rng.pick(TYPES), rng.pick(TYPES)),
        2 => format!("{indent}if {a} > {b}.{c} {{ return Err(Error::{}); }}\n", identifier(rng)),
        3 => format!("{indent}// {} the {a} before {b} is {}\n", rng.pick(KEYWORDS), rng.pick(WORDS)),
        4 => format!("{indent}{} {a} in {b}.iter() {{\n", rng.pick(KEYWORDS)),
        _ => format!("{indent}}}\n"),
    }
}

/// `DOCS` pseudo-source documents of about `DOC_BYTES` each; every 400th holds a marker.
fn corpus() -> Vec<(u32, Vec<u8>)> {
    let mut rng = SplitMix(0x5EED);
    (0..DOCS)
        .map(|i| {
            let mut doc = String::with_capacity(DOC_BYTES + 128);
            while doc.len() < DOC_BYTES {
                doc.push_str(&line(&mut rng));
                if i % 400 == 7 && rng.below(100) == 0 {
                    doc.push_str("    maguyva_needle_marker(42);\n");
                }
            }
            (i as u32, doc.into_bytes())
        })
        .collect()
}

/// The files under `root`, recursively (symlinks are not followed), in a stable order.
fn directory_corpus(root: &Path) -> Vec<(u32, Vec<u8>)> {
    let mut paths = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(entry.path()),
                Ok(kind) if kind.is_file() => paths.push(entry.path()),
                _ => {}
            }
        }
    }
    paths.sort();
    paths.iter().filter_map(|path| std::fs::read(path).ok()).enumerate().map(|(i, bytes)| (i as u32, bytes)).collect()
}

/// The corpus to measure, and the queries to run over it.
fn workload() -> (Vec<(u32, Vec<u8>)>, &'static [Query]) {
    match std::env::var_os("MAGUYVA_TRIGRAM_CORPUS") {
        Some(root) => (directory_corpus(Path::new(&root)), DIRECTORY_QUERIES),
        None => (corpus(), QUERIES),
    }
}

fn bench_build(c: &mut Criterion) {
    let (docs, _) = workload();
    let bytes: usize = docs.iter().map(|(_, d)| d.len()).sum();
    let mut group = c.benchmark_group("trigram_build");
    group.sample_size(10).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function(format!("{}_docs", docs.len()), |b| {
        b.iter(|| TrigramIndex::build(black_box(docs.clone())).unwrap())
    });
    group.finish();
}

/// (name, literal, case-insensitive).
type Query = (&'static str, &'static [u8], bool);

const QUERIES: &[Query] = &[
    ("rare", b"maguyva_needle_marker", false),
    ("rare_ci", b"MAGUYVA_NEEDLE_MARKER", true),
    ("identifier", b"SessionToken", false),
    ("common", b"return", false),
    ("common_ci", b"Return", true),
    ("two_bytes", b"=>", false),
];

/// Queries for a directory of C headers or source code.
const DIRECTORY_QUERIES: &[Query] = &[
    ("rare", b"pthread_mutex_timedlock", false),
    ("rare_ci", b"PTHREAD_MUTEX_TIMEDLOCK", true),
    ("identifier", b"EINVAL", false),
    ("identifier_ci", b"einval", true),
    ("common", b"return", false),
    ("common_ci", b"Return", true),
    ("phrase", b"unsigned long long", false),
    ("absent", b"zq_no_such_identifier", false),
    ("two_bytes", b"=>", false),
];

fn bench_queries(c: &mut Criterion) {
    let (docs, queries) = workload();
    let (index, _) = TrigramIndex::build(docs.clone()).unwrap();
    println!(
        "corpus: {} docs, {} content bytes, {} trigrams, {} posting bytes, index {} bytes",
        index.doc_count(),
        index.content_bytes(),
        index.trigram_count(),
        index.postings_bytes(),
        index.size_bytes()
    );
    let mut group = c.benchmark_group("trigram_search");
    group.sample_size(20).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    for &(name, literal, ci) in queries {
        let hits = index.search(literal, ci).unwrap().len();
        println!("query {name}: {hits} matching docs");
        group.bench_with_input(BenchmarkId::new("index", name), &literal, |b, literal| {
            b.iter(|| index.search(black_box(literal), ci).unwrap())
        });
        // The same query without word postings: what they save on common words.
        group.bench_with_input(BenchmarkId::new("verification_only", name), &literal, |b, literal| {
            b.iter(|| index.search_by_verification(black_box(literal), ci).unwrap())
        });
    }
    // The baseline: every document scanned with a SIMD substring search, no index, no I/O.
    for &(name, literal, _) in &queries[..1] {
        let finder = Finder::new(literal);
        group.bench_function(BenchmarkId::new("brute_force_scan", name), |b| {
            b.iter(|| docs.iter().filter(|(_, d)| finder.find(black_box(d)).is_some()).count())
        });
    }
    let terms: [&[u8]; 3] = [b"session", b"token", b"maguyva_needle"];
    group.bench_function("count_terms_3", |b| b.iter(|| index.count_terms(black_box(&terms), true).unwrap()));
    group.finish();
}

criterion_group!(benches, bench_build, bench_queries);
criterion_main!(benches);
