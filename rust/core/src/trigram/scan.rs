//! Verification and line numbering in a single pass over a document, with SIMD.
//!
//! The document is read in blocks of 64 positions. For each block, three probe bytes of the
//! literal (its two rarest, by a heuristic frequency ranking, and one at its start or end) are
//! compared at their offsets, which gives a mask of the positions where a match may start, and
//! the block is compared with `\n`, which gives a mask of its newlines. Candidates are confirmed
//! by comparing the whole literal; the line of a match is the number of newlines before the
//! block plus those below its bit in the newline mask. Line numbering thus costs one compare and
//! one popcount per block instead of a second scan between matches, and case-insensitive search
//! needs no lowercased copy of the document.
//!
//! Kernels exist for AVX2 and AVX-512BW and are chosen at run time; without either, the caller
//! falls back to `memmem` plus separate newline counting.

#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_variables))]

use memchr::arch::all::packedpair::Pair;

/// Positions covered by one block (one bit each in a `u64` mask).
const BLOCK: usize = 64;

/// Probes are taken from this many leading bytes of the literal, so a block never reads more than
/// `2 * BLOCK - 1` bytes past its start.
const PROBE_WINDOW: usize = BLOCK;

/// Number of probe bytes compared per candidate start.
const PROBES: usize = 3;

/// One byte of the literal compared at a fixed offset from each candidate start.
#[derive(Clone, Copy, Debug)]
struct Probe {
    /// Offset within the literal.
    offset: usize,
    /// The byte there (lowercase when matching case-insensitively).
    byte: u8,
    /// OR-ed into haystack bytes before comparing: `0x20` for a case-insensitive letter, which
    /// maps `A..=Z` onto `a..=z` and no other byte onto a lowercase letter.
    fold: u8,
}

/// The instruction set of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Kernel {
    /// The best kernel the running CPU supports, if any.
    fn detect() -> Option<Kernel> {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx512f") && has!("avx512bw") && has!("popcnt") && has!("bmi1") {
                return Some(Kernel::Avx512);
            }
            if has!("avx2") && has!("popcnt") && has!("bmi1") {
                return Some(Kernel::Avx2);
            }
        }
        None
    }
}

/// A literal prepared for the single-pass scan.
///
/// Probe offsets are below `PROBE_WINDOW`, so the masks of a block read at most
/// `2 * BLOCK - 1` bytes from its start; the last blocks of a document are read from a
/// zero-padded copy.
#[derive(Debug)]
pub(crate) struct Fused {
    /// The literal, lowercased when `folded`.
    needle: Vec<u8>,
    /// Whether ASCII letters match in either case.
    folded: bool,
    probes: [Probe; PROBES],
    /// The literal's first and last (up to) 8 bytes, for confirming short literals in two word
    /// compares.
    words: Words,
    kernel: Kernel,
}

/// A literal of at most 16 bytes as two little-endian words: `head` holds its first
/// `min(len, 8)` bytes, `tail` its last 8 when longer than 8. A haystack word matches when
/// `(word | fold) ^ value` is zero in the masked bytes; `fold` is `0x20` in the bytes of
/// case-insensitive letters.
#[derive(Clone, Copy, Debug, Default)]
struct Words {
    head: u64,
    head_fold: u64,
    head_mask: u64,
    tail: u64,
    tail_fold: u64,
}

impl Words {
    fn new(needle: &[u8], folded: bool) -> Words {
        let word = |bytes: &[u8]| {
            let (mut value, mut fold) = ([0u8; 8], [0u8; 8]);
            value[..bytes.len()].copy_from_slice(bytes);
            for (f, &b) in fold.iter_mut().zip(bytes) {
                *f = if folded && b.is_ascii_lowercase() { 0x20 } else { 0 };
            }
            (u64::from_le_bytes(value), u64::from_le_bytes(fold))
        };
        let head_len = needle.len().min(8);
        let (head, head_fold) = word(&needle[..head_len]);
        let (tail, tail_fold) = word(&needle[needle.len().saturating_sub(8)..]);
        let head_mask = if head_len == 8 { u64::MAX } else { (1u64 << (8 * head_len)) - 1 };
        Words { head, head_fold, head_mask, tail, tail_fold }
    }
}

/// The 8 bytes of `haystack` at `at`, little-endian.
#[inline(always)]
fn word_at(haystack: &[u8], at: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&haystack[at..at + 8]);
    u64::from_le_bytes(bytes)
}

impl Fused {
    /// A scanner for `literal` (non-empty), or `None` when the CPU has no supported SIMD.
    pub(crate) fn new(literal: &[u8], case_insensitive: bool) -> Option<Fused> {
        Fused::with_kernel(literal, case_insensitive, Kernel::detect()?)
    }

    fn with_kernel(literal: &[u8], case_insensitive: bool, kernel: Kernel) -> Option<Fused> {
        if literal.is_empty() {
            return None;
        }
        let folded = case_insensitive && literal.iter().any(u8::is_ascii_alphabetic);
        let needle = if folded { literal.to_ascii_lowercase() } else { literal.to_vec() };
        let window = &needle[..needle.len().min(PROBE_WINDOW)];
        let (first, second) = match Pair::new(window) {
            Some(pair) => (usize::from(pair.index1()), usize::from(pair.index2())),
            None => (0, 0),
        };
        let probe = |offset: usize| {
            let byte = needle[offset];
            Probe { offset, byte, fold: if folded && byte.is_ascii_lowercase() { 0x20 } else { 0 } }
        };
        let last = needle.len().min(PROBE_WINDOW) - 1;
        let third = if first != 0 && second != 0 {
            0
        } else if first != last && second != last {
            last
        } else {
            (0..=last).find(|&i| i != first && i != second).unwrap_or(first)
        };
        let probes = [probe(first), probe(second), probe(third)];
        let words = Words::new(&needle, folded);
        Some(Fused { needle, folded, probes, words, kernel })
    }

    /// The kernels available on this CPU, for tests: every one of them must agree with the
    /// portable path.
    #[cfg(test)]
    pub(crate) fn all(literal: &[u8], case_insensitive: bool) -> Vec<Fused> {
        let mut kernels = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx2") && has!("popcnt") && has!("bmi1") {
                kernels.push(Kernel::Avx2);
            }
            if has!("avx512f") && has!("avx512bw") && has!("popcnt") && has!("bmi1") {
                kernels.push(Kernel::Avx512);
            }
        }
        kernels.into_iter().filter_map(|kernel| Fused::with_kernel(literal, case_insensitive, kernel)).collect()
    }

    /// Occurrence count and the distinct 1-based lines holding a match start; `None` without a
    /// match. Same results as `Matcher::count_with_lines`.
    #[cfg(test)]
    pub(crate) fn count_with_lines(&self, haystack: &[u8]) -> Option<(u32, Vec<u32>)> {
        let mut hits = Hits::default();
        self.extend(haystack, 0, 0, &mut hits);
        hits.finish()
    }

    /// Adds to `hits` the matches starting at or after `from`, given the number of newlines
    /// before it; `hits` may hold the matches before `from` already.
    pub(crate) fn extend(&self, haystack: &[u8], from: usize, newlines: usize, hits: &mut Hits) {
        let from = from.min(haystack.len());
        let folds = self.probes.iter().any(|probe| probe.fold != 0);
        match self.kernel {
            // SAFETY: the kernel was chosen by `Kernel::detect` (or checked in `all`), so the CPU
            // has the features these functions enable.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 if folds => unsafe { x86::scan_avx2::<true>(self, haystack, from, newlines, hits) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { x86::scan_avx2::<false>(self, haystack, from, newlines, hits) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 if folds => unsafe { x86::scan_avx512::<true>(self, haystack, from, newlines, hits) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { x86::scan_avx512::<false>(self, haystack, from, newlines, hits) },
        }
    }

    /// Whether the literal occurs at `start` (which must leave room for it in `haystack`).
    #[inline(always)]
    fn matches_at(&self, haystack: &[u8], start: usize) -> bool {
        let (len, w) = (self.needle.len(), &self.words);
        if (8..=16).contains(&len) {
            let head = (word_at(haystack, start) | w.head_fold) ^ w.head;
            let tail = (word_at(haystack, start + len - 8) | w.tail_fold) ^ w.tail;
            return head | tail == 0;
        }
        if len < 8 && start + 8 <= haystack.len() {
            return ((word_at(haystack, start) | w.head_fold) ^ w.head) & w.head_mask == 0;
        }
        let window = &haystack[start..start + self.needle.len()];
        if self.folded {
            window.iter().zip(&self.needle).all(|(&h, &n)| h.to_ascii_lowercase() == n)
        } else {
            window == self.needle.as_slice()
        }
    }
}

/// The matches found in one document so far.
#[derive(Debug, Default)]
pub(crate) struct Hits {
    /// Number of matches.
    pub(crate) count: usize,
    /// Distinct 1-based lines holding a match start, ascending.
    pub(crate) lines: Vec<u32>,
}

impl Hits {
    /// Records a match starting on `line`.
    #[inline(always)]
    pub(crate) fn push(&mut self, line: usize) {
        self.count += 1;
        let line = u32::try_from(line).unwrap_or(u32::MAX);
        if self.lines.last() != Some(&line) {
            self.lines.push(line);
        }
    }

    /// (count, lines), or `None` without a match. Counts past `u32::MAX` are clamped.
    pub(crate) fn finish(self) -> Option<(u32, Vec<u32>)> {
        (self.count > 0).then(|| (u32::try_from(self.count).unwrap_or(u32::MAX), self.lines))
    }
}

/// The 64-position block compare of one instruction set.
trait Block: Copy {
    /// (candidate mask, newline mask) of the 64 positions starting at `ptr`: bit `j` of the first
    /// is set when every probe matches for a start at `ptr + j`, bit `j` of the second when
    /// `ptr[j]` is `\n`.
    ///
    /// # Safety
    /// `ptr .. ptr + 2 * BLOCK - 1` must be readable, and the CPU must have the kernel's features.
    unsafe fn masks(self, ptr: *const u8) -> (u64, u64);
}

/// Blocks per chunk: a chunk's masks are computed first, then its candidates confirmed.
const CHUNK_BLOCKS: usize = 64;

/// A block with candidates, waiting for them to be confirmed.
#[derive(Clone, Copy, Default)]
struct Pending {
    /// Position of the block's first byte.
    base: usize,
    candidates: u64,
    newlines: u64,
    /// Newlines before the block.
    before: usize,
}

/// Running state of one scan.
struct Scan<'a> {
    fused: &'a Fused,
    haystack: &'a [u8],
    /// The first position where a match may start (matches do not overlap).
    next: usize,
}

impl Scan<'_> {
    /// Confirms the candidates of one block and records the matches.
    #[inline(always)]
    fn confirm(&mut self, block: Pending, hits: &mut Hits) {
        let len = self.fused.needle.len();
        let mut candidates = block.candidates;
        while candidates != 0 {
            let bit = candidates.trailing_zeros() as usize;
            candidates &= candidates - 1;
            let start = block.base + bit;
            if start < self.next {
                continue;
            }
            if start + len > self.haystack.len() {
                break;
            }
            if self.fused.matches_at(self.haystack, start) {
                self.next = start + len;
                let below = (block.newlines & ((1u64 << bit) - 1)).count_ones() as usize;
                hits.push(block.before + below + 1);
            }
        }
    }
}

/// The scan loop shared by the kernels; inlined into each `#[target_feature]` entry point.
///
/// The document is taken a chunk at a time: first the masks of all its blocks, without a
/// data-dependent branch (blocks with candidates are appended to a small buffer), so that the
/// loads stream at memory speed; then the buffered candidates, whose branches are hard to
/// predict but now wait on cached data only.
///
/// # Safety
/// The CPU must have the features of `B`, POPCNT and BMI1.
#[inline(always)]
unsafe fn scan<B: Block>(kernel: B, fused: &Fused, haystack: &[u8], from: usize, newlines: usize, hits: &mut Hits) {
    let len = haystack.len();
    let at = haystack.as_ptr();
    let mut scan = Scan { fused, haystack, next: from };
    let mut before = newlines;
    let mut base = from;
    let mut pending = [Pending::default(); CHUNK_BLOCKS];
    // Full blocks straight from the document, while all the bytes they read are in it.
    while base + 2 * BLOCK - 1 <= len {
        let blocks = ((len - (2 * BLOCK - 1) - base) / BLOCK + 1).min(CHUNK_BLOCKS);
        let mut waiting = 0;
        for _ in 0..blocks {
            // SAFETY: `base + 2 * BLOCK - 1 <= len` for each of the `blocks` blocks; the features
            // are the caller's.
            let (candidates, newlines) = unsafe { kernel.masks(at.add(base)) };
            pending[waiting] = Pending { base, candidates, newlines, before };
            waiting += usize::from(candidates != 0);
            before += newlines.count_ones() as usize;
            base += BLOCK;
        }
        for &block in &pending[..waiting] {
            scan.confirm(block, hits);
        }
    }
    if base >= len {
        return;
    }
    // The rest (fewer than `2 * BLOCK - 1` bytes) from a zero-padded copy. Padding is never a
    // newline, and candidates it makes are past the end and rejected by the length check.
    let mut padded = [0u8; 4 * BLOCK];
    let rest = len - base;
    padded[..rest].copy_from_slice(&haystack[base..]);
    let mut offset = 0;
    while offset < rest {
        // SAFETY: `offset < rest < 2 * BLOCK`, so `offset + 2 * BLOCK - 1 < 4 * BLOCK`; the
        // features are the caller's.
        let (candidates, newlines) = unsafe { kernel.masks(padded.as_ptr().add(offset)) };
        scan.confirm(Pending { base: base + offset, candidates, newlines, before }, hits);
        before += newlines.count_ones() as usize;
        offset += BLOCK;
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{scan, Block, Fused, Hits, PROBES};
    use std::arch::x86_64::*;

    /// # Safety
    /// 32 bytes at `ptr` must be readable, and the CPU must support AVX.
    #[inline(always)]
    unsafe fn load256(ptr: *const u8) -> __m256i {
        // SAFETY: guaranteed by the caller.
        unsafe { _mm256_loadu_si256(ptr.cast()) }
    }

    #[derive(Clone, Copy)]
    struct Avx2<const FOLD: bool> {
        newline: __m256i,
        bytes: [__m256i; PROBES],
        folds: [__m256i; PROBES],
        offsets: [usize; PROBES],
    }

    impl<const FOLD: bool> Avx2<FOLD> {
        /// Mask of the 32 starts at `ptr` where probe `k` matches.
        ///
        /// # Safety
        /// As for `Block::masks`.
        #[inline(always)]
        unsafe fn probe(self, ptr: *const u8, k: usize) -> __m256i {
            // SAFETY: guaranteed by the caller.
            unsafe {
                let bytes = load256(ptr.add(self.offsets[k]));
                let bytes = if FOLD { _mm256_or_si256(bytes, self.folds[k]) } else { bytes };
                _mm256_cmpeq_epi8(bytes, self.bytes[k])
            }
        }

        /// (candidate mask, newline mask) of the 32 starts at `ptr`.
        ///
        /// # Safety
        /// As for `Block::masks`.
        #[inline(always)]
        unsafe fn half(self, ptr: *const u8) -> (u32, u32) {
            // SAFETY: guaranteed by the caller.
            unsafe {
                let newlines = _mm256_cmpeq_epi8(load256(ptr), self.newline);
                let mut both = self.probe(ptr, 0);
                for k in 1..PROBES {
                    both = _mm256_and_si256(both, self.probe(ptr, k));
                }
                (_mm256_movemask_epi8(both) as u32, _mm256_movemask_epi8(newlines) as u32)
            }
        }
    }

    impl<const FOLD: bool> Block for Avx2<FOLD> {
        #[inline(always)]
        unsafe fn masks(self, ptr: *const u8) -> (u64, u64) {
            // SAFETY: the caller guarantees the reads are in bounds and AVX2 is available.
            let ((c0, n0), (c1, n1)) = unsafe { (self.half(ptr), self.half(ptr.add(32))) };
            (u64::from(c0) | (u64::from(c1) << 32), u64::from(n0) | (u64::from(n1) << 32))
        }
    }

    /// # Safety
    /// The CPU must support AVX2, POPCNT and BMI1.
    #[target_feature(enable = "avx2,popcnt,bmi1")]
    pub(super) unsafe fn scan_avx2<const FOLD: bool>(
        fused: &Fused,
        haystack: &[u8],
        from: usize,
        newlines: usize,
        hits: &mut Hits,
    ) {
        let kernel = Avx2::<FOLD> {
            newline: _mm256_set1_epi8(b'\n' as i8),
            bytes: fused.probes.map(|p| _mm256_set1_epi8(p.byte as i8)),
            folds: fused.probes.map(|p| _mm256_set1_epi8(p.fold as i8)),
            offsets: fused.probes.map(|p| p.offset),
        };
        // SAFETY: AVX2 is enabled here, as `Avx2::masks` requires.
        unsafe { scan(kernel, fused, haystack, from, newlines, hits) }
    }

    #[derive(Clone, Copy)]
    struct Avx512<const FOLD: bool> {
        newline: __m512i,
        bytes: [__m512i; PROBES],
        folds: [__m512i; PROBES],
        offsets: [usize; PROBES],
    }

    impl<const FOLD: bool> Block for Avx512<FOLD> {
        #[inline(always)]
        unsafe fn masks(self, ptr: *const u8) -> (u64, u64) {
            // SAFETY: the caller guarantees the reads are in bounds and AVX-512BW is available.
            unsafe {
                let newlines = _mm512_cmpeq_epi8_mask(_mm512_loadu_si512(ptr.cast()), self.newline);
                let mut both = u64::MAX;
                for k in 0..PROBES {
                    let bytes = _mm512_loadu_si512(ptr.add(self.offsets[k]).cast());
                    let bytes = if FOLD { _mm512_or_si512(bytes, self.folds[k]) } else { bytes };
                    both &= _mm512_cmpeq_epi8_mask(bytes, self.bytes[k]);
                }
                (both, newlines)
            }
        }
    }

    /// # Safety
    /// The CPU must support AVX-512F, AVX-512BW, POPCNT and BMI1.
    #[target_feature(enable = "avx512f,avx512bw,popcnt,bmi1")]
    pub(super) unsafe fn scan_avx512<const FOLD: bool>(
        fused: &Fused,
        haystack: &[u8],
        from: usize,
        newlines: usize,
        hits: &mut Hits,
    ) {
        let kernel = Avx512::<FOLD> {
            newline: _mm512_set1_epi8(b'\n' as i8),
            bytes: fused.probes.map(|p| _mm512_set1_epi8(p.byte as i8)),
            folds: fused.probes.map(|p| _mm512_set1_epi8(p.fold as i8)),
            offsets: fused.probes.map(|p| p.offset),
        };
        // SAFETY: AVX-512BW is enabled here, as `Avx512::masks` requires.
        unsafe { scan(kernel, fused, haystack, from, newlines, hits) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Leftmost non-overlapping matches, position by position.
    fn naive(doc: &[u8], literal: &[u8], ci: bool) -> Option<(u32, Vec<u32>)> {
        let eq = |a: &[u8], b: &[u8]| if ci { a.eq_ignore_ascii_case(b) } else { a == b };
        let (mut count, mut lines, mut i) = (0, Vec::new(), 0);
        while i + literal.len() <= doc.len() {
            if eq(&doc[i..i + literal.len()], literal) {
                count += 1;
                let line = 1 + doc[..i].iter().filter(|&&b| b == b'\n').count() as u32;
                if lines.last() != Some(&line) {
                    lines.push(line);
                }
                i += literal.len();
            } else {
                i += 1;
            }
        }
        (count > 0).then_some((count, lines))
    }

    fn first_match(doc: &[u8], literal: &[u8], ci: bool) -> Option<usize> {
        doc.windows(literal.len()).position(|w| if ci { w.eq_ignore_ascii_case(literal) } else { w == literal })
    }

    /// Every kernel, from the start and from the first match, agrees with the naive scan.
    fn check(doc: &[u8], literal: &[u8], ci: bool) {
        let expected = naive(doc, literal, ci);
        for fused in Fused::all(literal, ci) {
            let kernel = fused.kernel;
            assert_eq!(fused.count_with_lines(doc), expected, "{kernel:?} {literal:?} ci={ci} in {doc:?}");
            if let Some(first) = first_match(doc, literal, ci) {
                let mut hits = Hits::default();
                let newlines = doc[..first].iter().filter(|&&b| b == b'\n').count();
                fused.extend(doc, first, newlines, &mut hits);
                assert_eq!(hits.finish(), expected, "{kernel:?} from {first}");
            }
        }
    }

    #[test]
    fn matches_at_and_across_block_edges() {
        for len in 1..=70usize {
            let literal: Vec<u8> = (0..len).map(|i| b"xyzw"[i % 4]).collect();
            for at in [0, 1, 31, 32, 62, 63, 64, 65, 126, 127, 128, 129, 190, 191, 192, 200] {
                for doc_len in [at + len, at + len + 1, at + len + 63, at + len + 64, 256, 400] {
                    if doc_len < at + len {
                        continue;
                    }
                    let mut doc: Vec<u8> = (0..doc_len).map(|i| if i % 9 == 8 { b'\n' } else { b'.' }).collect();
                    doc[at..at + len].copy_from_slice(&literal);
                    check(&doc, &literal, false);
                    check(&doc, &literal.to_ascii_uppercase(), true);
                }
            }
        }
    }

    #[test]
    fn short_documents_and_edges() {
        for doc in [&b""[..], b"a", b"\n", b"ab", b"a\r\nb\r\n", b"\xC3\xA9a\xC3\xA9"] {
            for literal in [&b"a"[..], b"\n", b"\r\n", b"ab", b"\xC3\xA9", b"A"] {
                check(doc, literal, false);
                check(doc, literal, true);
            }
        }
    }

    #[test]
    fn dense_matches_and_overlaps() {
        let doc =
            b"aaaaaaaaaa\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n".repeat(5);
        for len in 1..=12 {
            check(&doc, &vec![b'a'; len], false);
            check(&doc, &vec![b'A'; len], true);
        }
        check(&b"\n".repeat(300), b"\n", false);
        check(&b"\n".repeat(300), b"\n\n\n", true);
    }

    #[test]
    fn case_folding_touches_letters_only() {
        // '@' and '[' differ from '`' and '{' by 0x20 but are not letters.
        check(b"@[`{ AZ az", b"`{", true);
        check(b"@[`{ AZ az", b"@[", true);
        check(b"@[`{ AZ az \xC3\xA9 \xE3\xA9", b"\xC3\xA9", true);
        check(b"xAzx aZa", b"AZ", true);
    }

    const ALPHABET: &[u8] = b"abAB\n\r \xC3\xA9z";

    fn doc() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(prop::sample::select(ALPHABET), 0..600)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        #[test]
        fn random_literals(doc in doc(), literal in prop::collection::vec(prop::sample::select(ALPHABET), 1..5), ci in any::<bool>()) {
            check(&doc, &literal, ci);
        }

        #[test]
        fn planted_literals(
            mut doc in doc(),
            literal in prop::collection::vec(any::<u8>(), 1..70),
            at in prop::collection::vec(any::<prop::sample::Index>(), 1..6),
            flip in any::<bool>(),
        ) {
            for at in at {
                if doc.len() >= literal.len() {
                    let start = at.index(doc.len() - literal.len() + 1);
                    doc[start..start + literal.len()].copy_from_slice(&literal);
                }
            }
            check(&doc, &literal, false);
            let flipped: Vec<u8> = if flip {
                literal.iter().map(|b| if b.is_ascii_alphabetic() { b ^ 0x20 } else { *b }).collect()
            } else {
                literal.clone()
            };
            check(&doc, &flipped, true);
        }

        #[test]
        fn substrings(doc in doc(), start in any::<prop::sample::Index>(), len in 1usize..70, ci in any::<bool>()) {
            if !doc.is_empty() {
                let start = start.index(doc.len());
                let literal = doc[start..(start + len).min(doc.len())].to_vec();
                check(&doc, &literal, ci);
            }
        }
    }
}
