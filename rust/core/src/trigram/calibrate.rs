//! The measurement behind the planner's costs ([`super::query`]'s constants): what verifying a
//! byte of candidate content, searching a byte of the vocabulary and decoding a byte of word
//! postings cost on a real corpus. Run by hand, on a tree that is not a benchmark's:
//!
//! ```text
//! MAGUYVA_CALIBRATE_TREE=/path/to/tree cargo test -p maguyva-core --release calibrate -- --ignored --nocapture
//! ```
//!
//! For a sample of the corpus's words (every 997th of four letters or more, as written and
//! lowercased, and their first four letters), among all documents and among every tenth (a
//! filter), it prints the costs (verification and decoding in nanoseconds per byte, finding
//! the words in microseconds, and what a scan of the vocabulary would cost a byte) and their
//! medians.

use super::TrigramIndex;
use crate::walk::{read_files, walk, ReadOutcome, WalkOptions};
use std::time::Instant;

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Seconds of the fastest of five runs of `f`.
fn fastest(mut f: impl FnMut()) -> f64 {
    (0..5)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

#[test]
#[ignore = "a measurement on a tree given by MAGUYVA_CALIBRATE_TREE"]
fn calibrate() {
    let Some(tree) = std::env::var_os("MAGUYVA_CALIBRATE_TREE") else { return };
    let tree = std::path::PathBuf::from(tree);
    let report = walk(&tree, &WalkOptions::default()).unwrap();
    let paths: Vec<_> = report.files.iter().map(|f| f.path.clone()).collect();
    let docs: Vec<(u32, Vec<u8>)> = read_files(&tree, &paths, 1_000_000)
        .into_iter()
        .enumerate()
        .filter_map(|(i, outcome)| match outcome {
            ReadOutcome::Text(bytes) => Some((i as u32, bytes)),
            ReadOutcome::Skipped(_) => None,
        })
        .collect();
    let (index, _) = TrigramIndex::build(docs).unwrap();
    let vocabulary = index.layout.vocabulary_len;
    println!("{} documents, {} bytes of content, {} of vocabulary", index.layout.docs, index.layout.content_len, vocabulary);
    let mut literals: Vec<Vec<u8>> = Vec::new();
    for word in (0..index.layout.words).step_by(997) {
        let text = index.word(word);
        if text.len() >= 4 && text.iter().all(u8::is_ascii_alphabetic) {
            literals.push(text.to_vec());
            literals.push(text[..4].to_vec());
        }
    }
    let (mut verify, mut search, mut scan) = (Vec::new(), Vec::new(), Vec::new());
    let mut decode: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    println!("literal\tfold\tfilter\tcandidate bytes\tverify ns/B\tword lookup us\tvocabulary scan ns/B\tposting bytes\tdecode ns/B");
    for literal in &literals {
        for fold in [false, true] {
            for (filtered, every) in [(0, 1u32), (1, 10)] {
                let wanted = |ordinal: u32| ordinal.is_multiple_of(every);
                let mut candidates = index.candidates(literal).unwrap();
                candidates.retain(|&o| wanted(o));
                let bytes = index.candidates_bytes(&candidates);
                let words = index.words_containing(literal, fold, usize::MAX, 0).unwrap_or_default();
                let postings: usize = words.iter().map(|&(w, _)| index.word_posting_list(w as usize).len()).sum();
                if bytes < 65_536 || postings < 1_024 {
                    continue; // too little to time
                }
                let v = fastest(|| drop(index.verify(literal, fold, &candidates).unwrap())) * 1e9 / bytes as f64;
                let s = fastest(|| drop(index.words_containing(literal, fold, usize::MAX, 0))) * 1e6;
                let needle = if fold { literal.to_ascii_lowercase() } else { literal.clone() };
                let finder = memchr::memmem::Finder::new(&needle);
                let c = fastest(|| drop(index.words_by_scan(fold, &finder, usize::MAX))) * 1e9 / vocabulary as f64;
                let d = fastest(|| index.for_each_word_match(&words, true, wanted, |_, _, _| {}).unwrap()) * 1e9 / postings as f64;
                println!("{}\t{fold}\t1/{every}\t{bytes}\t{v:.3}\t{s:.1}\t{c:.3}\t{postings}\t{d:.2}", String::from_utf8_lossy(literal));
                verify.push(v);
                search.push(s);
                scan.push(c);
                decode[filtered].push(d);
            }
        }
    }
    println!(
        "medians over {} cases: verify {:.3} ns/B, word lookup {:.1} us (a vocabulary scan {:.3} ns/B), posting decode {:.2} ns/B, among a tenth {:.2} ns/B",
        verify.len(),
        median(&mut verify),
        median(&mut search),
        median(&mut scan),
        median(&mut decode[0]),
        median(&mut decode[1])
    );
}
