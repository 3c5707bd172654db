//! The RRF merge loop: four ranked lists of 1,000 chunk ids over a table of 100,000 chunks.

use criterion::{criterion_group, criterion_main, Criterion};
use maguyva_core::fusion::{fuse, ChunkTable, RankedList};
use std::hint::black_box;

fn bench_fusion(c: &mut Criterion) {
    let chunks = 100_000u32;
    let centrality: Vec<f32> = (0..chunks).map(|i| (i % 97) as f32 / 10.0).collect();
    let demotion: Vec<f32> = (0..chunks).map(|i| if i % 50 == 0 { 0.5 } else { 1.0 }).collect();
    let file: Vec<u32> = (0..chunks).map(|i| i / 8).collect();
    // Lists that overlap in part, as retrievers that half agree would.
    let lists: Vec<Vec<u32>> = (0..4u32)
        .map(|m| (0..1000u32).map(|r| (r * (7 + 2 * m) + m * 131) % chunks).collect())
        .collect();
    let weights = [0.5, 0.2, 0.2, 0.1];
    let ranked: Vec<RankedList> =
        lists.iter().zip(weights).map(|(ids, weight)| RankedList { weight, ids }).collect();
    let table = ChunkTable { centrality: &centrality, demotion: &demotion, file: &file };
    c.bench_function("rrf_4_lists_x_1000_top10", |b| {
        b.iter(|| fuse(black_box(&ranked), &table, 60.0, 10).unwrap())
    });
}

criterion_group!(benches, bench_fusion);
criterion_main!(benches);
