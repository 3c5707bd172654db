//! Hamming distance kernels, one per CPU feature level, chosen once at run time.
//!
//! `u64::count_ones` only becomes the POPCNT instruction when that target feature is enabled at
//! compile time, and a portable build cannot assume it. So each kernel is compiled with its own
//! `#[target_feature]` and the best one the running CPU supports is picked by [`Kernel::detect`].
//! Every kernel computes, for a tile of consecutive rows, the distance of each row to one query,
//! and hands it to a sink inlined into the kernel: dispatch happens once per tile, not per row.

/// A popcount implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Portable bit tricks; works everywhere.
    Scalar,
    /// 64-bit words through the POPCNT instruction.
    Popcnt,
    /// 256-bit vectors: nibble lookup with VPSHUFB, summed with VPSADBW.
    Avx2,
    /// 512-bit vectors through VPOPCNTQ (AVX-512 VPOPCNTDQ), tails through masked loads (AVX-512 BW).
    Avx512Vpopcntdq,
}

impl Kernel {
    /// The fastest kernel the running CPU supports.
    pub fn detect() -> Kernel {
        *Kernel::available().last().expect("the scalar kernel is always available")
    }

    /// Every kernel the running CPU supports, slowest first.
    pub fn available() -> Vec<Kernel> {
        let mut kernels = vec![Kernel::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("popcnt") {
                kernels.push(Kernel::Popcnt);
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                kernels.push(Kernel::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
            {
                kernels.push(Kernel::Avx512Vpopcntdq);
            }
        }
        kernels
    }

    /// A short stable name, as reported to callers and benchmarks.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Popcnt => "popcnt",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512Vpopcntdq => "avx512-vpopcntdq",
        }
    }

    /// Parses a name given by [`Kernel::name`], if the running CPU supports that kernel.
    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::available().into_iter().find(|k| k.name() == name)
    }

    /// Calls `sink(i, distance)` for every row `i` of `tile` (rows of `query.len()` bytes), in
    /// order. The sink is inlined into each kernel, so that deciding what to keep overlaps with
    /// the loads of the next rows instead of following the scan as a second pass.
    #[inline]
    pub(crate) fn scan_tile(self, tile: &[u8], query: &[u8], sink: impl FnMut(usize, u32)) {
        debug_assert_eq!(tile.len() % query.len(), 0);
        match self {
            Kernel::Scalar => tile_words(tile, query, sink),
            // SAFETY (all arms below): a kernel other than Scalar is only constructed by
            // `available()`, after checking that the CPU has the features it is compiled for.
            #[cfg(target_arch = "x86_64")]
            Kernel::Popcnt => unsafe { x86::tile_popcnt(tile, query, sink) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { x86::tile_avx2(tile, query, sink) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512Vpopcntdq => unsafe { x86::tile_avx512(tile, query, sink) },
            #[cfg(not(target_arch = "x86_64"))]
            _ => tile_words(tile, query, sink),
        }
    }

    /// The Hamming distance between two rows of equal length.
    #[cfg(test)]
    pub(crate) fn distance(self, a: &[u8], b: &[u8]) -> u32 {
        let mut out = 0;
        self.scan_tile(a, b, |_, d| out = d);
        out
    }

    /// Every row's distance, in order (for tests).
    #[cfg(test)]
    pub(crate) fn tile_distances(self, tile: &[u8], query: &[u8], out: &mut [u32]) {
        self.scan_tile(tile, query, |i, d| out[i] = d);
    }
}

/// Distance of one row by 64-bit words; the body every word-level kernel shares, inlined into
/// each `#[target_feature]` caller so that `count_ones` compiles to what that caller enables.
#[inline(always)]
fn row_distance_words(row: &[u8], query: &[u8]) -> u32 {
    let mut total = 0u32;
    let mut row_words = row.chunks_exact(8);
    let mut query_words = query.chunks_exact(8);
    for (r, q) in (&mut row_words).zip(&mut query_words) {
        let r = u64::from_le_bytes(r.try_into().unwrap());
        let q = u64::from_le_bytes(q.try_into().unwrap());
        total += (r ^ q).count_ones();
    }
    for (r, q) in row_words.remainder().iter().zip(query_words.remainder()) {
        total += (r ^ q).count_ones();
    }
    total
}

#[inline(always)]
fn tile_words(tile: &[u8], query: &[u8], mut sink: impl FnMut(usize, u32)) {
    // Common code widths get a fully unrolled loop; others take the general one.
    match query.len() {
        32 => tile_words_fixed::<32>(tile, query, sink),
        64 => tile_words_fixed::<64>(tile, query, sink),
        128 => tile_words_fixed::<128>(tile, query, sink),
        256 => tile_words_fixed::<256>(tile, query, sink),
        _ => {
            for (i, row) in tile.chunks_exact(query.len()).enumerate() {
                sink(i, row_distance_words(row, query));
            }
        }
    }
}

#[inline(always)]
fn tile_words_fixed<const N: usize>(tile: &[u8], query: &[u8], mut sink: impl FnMut(usize, u32)) {
    let query: &[u8; N] = query.try_into().unwrap();
    for (i, row) in tile.chunks_exact(N).enumerate() {
        let row: &[u8; N] = row.try_into().unwrap();
        let mut total = 0u32;
        for w in 0..N / 8 {
            let r = u64::from_le_bytes(row[w * 8..w * 8 + 8].try_into().unwrap());
            let q = u64::from_le_bytes(query[w * 8..w * 8 + 8].try_into().unwrap());
            total += (r ^ q).count_ones();
        }
        sink(i, total);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    #[target_feature(enable = "popcnt")]
    pub(super) unsafe fn tile_popcnt(tile: &[u8], query: &[u8], sink: impl FnMut(usize, u32)) {
        super::tile_words(tile, query, sink)
    }

    /// Popcount of each byte of `v` by two 16-entry nibble lookups.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn popcount_bytes_avx2(v: __m256i) -> __m256i {
        let lookup = _mm256_setr_epi8(
            0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3,
            3, 4,
        );
        let low_mask = _mm256_set1_epi8(0x0f);
        let lo = _mm256_and_si256(v, low_mask);
        let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(v), low_mask);
        _mm256_add_epi8(_mm256_shuffle_epi8(lookup, lo), _mm256_shuffle_epi8(lookup, hi))
    }

    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn tile_avx2(tile: &[u8], query: &[u8], mut sink: impl FnMut(usize, u32)) {
        let row_bytes = query.len();
        let vectors = row_bytes / 32;
        let tail = vectors * 32;
        for (i, row) in tile.chunks_exact(row_bytes).enumerate() {
            let mut acc = _mm256_setzero_si256();
            for v in 0..vectors {
                // SAFETY: v * 32 + 32 <= row_bytes, the length of both slices.
                let (r, q) = unsafe {
                    (
                        _mm256_loadu_si256(row.as_ptr().add(v * 32) as *const __m256i),
                        _mm256_loadu_si256(query.as_ptr().add(v * 32) as *const __m256i),
                    )
                };
                let counts = popcount_bytes_avx2(_mm256_xor_si256(r, q));
                // Byte counts are at most 8, so summing 8 of them per lane cannot overflow.
                acc = _mm256_add_epi64(acc, _mm256_sad_epu8(counts, _mm256_setzero_si256()));
            }
            let lanes = _mm_add_epi64(_mm256_castsi256_si128(acc), _mm256_extracti128_si256::<1>(acc));
            let sum = _mm_cvtsi128_si64(lanes) as u64 + _mm_extract_epi64::<1>(lanes) as u64;
            sink(i, sum as u32 + super::row_distance_words(&row[tail..], &query[tail..]));
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vpopcntdq")]
    pub(super) unsafe fn tile_avx512(tile: &[u8], query: &[u8], sink: impl FnMut(usize, u32)) {
        // SAFETY: the caller checked the features; each arm gets rows of the length it expects.
        unsafe {
            match query.len() {
                64 => tile_avx512_fixed::<1>(tile, query, sink),
                128 => tile_avx512_fixed::<2>(tile, query, sink),
                192 => tile_avx512_fixed::<3>(tile, query, sink),
                256 => tile_avx512_fixed::<4>(tile, query, sink),
                _ => tile_avx512_any(tile, query, sink),
            }
        }
    }

    /// Rows of exactly `V` 64-byte vectors: the query stays in registers and the loop unrolls.
    /// (Reducing eight rows at once with a transpose tree was tried: as fast from cache, but
    /// half as fast streaming from memory, so each row is reduced on its own.)
    #[target_feature(enable = "avx512f,avx512bw,avx512vpopcntdq")]
    unsafe fn tile_avx512_fixed<const V: usize>(tile: &[u8], query: &[u8], mut sink: impl FnMut(usize, u32)) {
        let q: [__m512i; V] = std::array::from_fn(|v| {
            // SAFETY: the query is V * 64 bytes long.
            unsafe { _mm512_loadu_si512(query.as_ptr().add(v * 64) as *const __m512i) }
        });
        for (i, row) in tile.chunks_exact(V * 64).enumerate() {
            let mut acc = _mm512_setzero_si512();
            for (v, qv) in q.iter().enumerate() {
                // SAFETY: every row is V * 64 bytes long.
                let r = unsafe { _mm512_loadu_si512(row.as_ptr().add(v * 64) as *const __m512i) };
                acc = _mm512_add_epi64(acc, _mm512_popcnt_epi64(_mm512_xor_si512(r, *qv)));
            }
            sink(i, _mm512_reduce_add_epi64(acc) as u32);
        }
    }

    /// Rows of any length: whole vectors, then a masked load for the tail.
    #[target_feature(enable = "avx512f,avx512bw,avx512vpopcntdq")]
    unsafe fn tile_avx512_any(tile: &[u8], query: &[u8], mut sink: impl FnMut(usize, u32)) {
        let row_bytes = query.len();
        let vectors = row_bytes / 64;
        let tail = row_bytes % 64;
        let tail_mask: __mmask64 = if tail == 0 { 0 } else { u64::MAX >> (64 - tail) };
        // SAFETY: the masked load reads only the `tail` bytes that remain in the query.
        let query_tail = unsafe { _mm512_maskz_loadu_epi8(tail_mask, query.as_ptr().add(vectors * 64) as *const i8) };
        for (i, row) in tile.chunks_exact(row_bytes).enumerate() {
            let mut acc = _mm512_setzero_si512();
            for v in 0..vectors {
                // SAFETY: v * 64 + 64 <= row_bytes, the length of both slices.
                let (r, q) = unsafe {
                    (
                        _mm512_loadu_si512(row.as_ptr().add(v * 64) as *const __m512i),
                        _mm512_loadu_si512(query.as_ptr().add(v * 64) as *const __m512i),
                    )
                };
                acc = _mm512_add_epi64(acc, _mm512_popcnt_epi64(_mm512_xor_si512(r, q)));
            }
            if tail != 0 {
                // SAFETY: as for the query tail; masked-off bytes are neither read nor faulted on.
                let r = unsafe { _mm512_maskz_loadu_epi8(tail_mask, row.as_ptr().add(vectors * 64) as *const i8) };
                acc = _mm512_add_epi64(acc, _mm512_popcnt_epi64(_mm512_xor_si512(r, query_tail)));
            }
            sink(i, _mm512_reduce_add_epi64(acc) as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pseudo_random_bytes(len: usize, seed: u64) -> Vec<u8> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect()
    }

    fn reference(a: &[u8], b: &[u8]) -> u32 {
        a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
    }

    #[test]
    fn every_available_kernel_matches_bytewise_reference() {
        // Row lengths cover whole vectors, partial vectors and sub-word tails.
        for row_bytes in [1, 3, 8, 13, 31, 32, 33, 48, 63, 64, 65, 96, 128, 130, 192, 256] {
            let rows = 17;
            let tile = pseudo_random_bytes(rows * row_bytes, row_bytes as u64);
            let query = pseudo_random_bytes(row_bytes, 7 + row_bytes as u64);
            let expected: Vec<u32> =
                tile.chunks_exact(row_bytes).map(|r| reference(r, &query)).collect();
            for kernel in Kernel::available() {
                let mut out = vec![0u32; rows];
                kernel.tile_distances(&tile, &query, &mut out);
                assert_eq!(out, expected, "kernel {} row_bytes {}", kernel.name(), row_bytes);
            }
        }
    }

    #[test]
    fn extremes_all_zero_and_all_one() {
        for kernel in Kernel::available() {
            assert_eq!(kernel.distance(&[0u8; 256], &[0xffu8; 256]), 2048, "{}", kernel.name());
            assert_eq!(kernel.distance(&[0xaau8; 40], &[0xaau8; 40]), 0, "{}", kernel.name());
        }
    }

    #[test]
    fn names_round_trip() {
        for kernel in Kernel::available() {
            assert_eq!(Kernel::from_name(kernel.name()), Some(kernel));
        }
        assert_eq!(Kernel::from_name("no-such-kernel"), None);
    }
}
