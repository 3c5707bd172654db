//! Hamming top-k: every popcount kernel this CPU has, one thread and all threads, one query and a
//! batch of 100, over 1,000,000 random 1024-bit codes (the shape of the Python benchmark).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use maguyva_core::hamming::{top_k_batch, Codes, Kernel, SearchOptions};
use std::hint::black_box;
use std::time::Duration;

const ROWS: usize = 1_000_000;
const ROW_BYTES: usize = 128;

fn random_bytes(len: usize) -> Vec<u8> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.extend_from_slice(&state.to_le_bytes());
    }
    out.truncate(len);
    out
}

fn bench_hamming(c: &mut Criterion) {
    let data = random_bytes(ROWS * ROW_BYTES);
    let codes = Codes::new(&data, ROW_BYTES).unwrap();
    let queries = random_bytes(100 * ROW_BYTES);
    let mut group = c.benchmark_group("hamming_top10_1M_x_1024bit");
    group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    for kernel in Kernel::available() {
        for threads in [1usize, 0] {
            let options = SearchOptions { threads, kernel };
            let label = format!("{}/{}", kernel.name(), if threads == 1 { "1thread" } else { "all" });
            for batch in [1usize, 100] {
                group.throughput(Throughput::Bytes((ROWS * ROW_BYTES * batch) as u64));
                group.bench_function(BenchmarkId::new(format!("batch{batch}"), &label), |b| {
                    b.iter(|| top_k_batch(&codes, black_box(&queries[..batch * ROW_BYTES]), 10, None, options))
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench_hamming);
criterion_main!(benches);
