//! Posting lists: strictly increasing document ordinals stored as LEB128 varints of gaps.
//!
//! The first value is the ordinal itself; each later value is `ordinal - previous - 1`. Storing
//! the gap minus one makes every decodable sequence strictly increasing, so the decoder only has
//! to check the varints themselves and the upper bound on ordinals.

/// Why a posting list could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Malformed {
    /// A varint ran past the end of its list.
    Truncated,
    /// A varint is longer than five bytes, overflows `u32`, or has a redundant zero byte.
    Overlong,
    /// A decoded ordinal is not below the number of documents.
    OutOfRange,
}

impl Malformed {
    /// A sentence for `Error::Corrupt`.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Malformed::Truncated => "a posting list ends in the middle of a varint",
            Malformed::Overlong => "a posting list holds an overlong or overflowing varint",
            Malformed::OutOfRange => "a posting list names a document ordinal past the last document",
        }
    }
}

/// Appends `value` as an unsigned LEB128 varint (1 to 5 bytes).
pub(crate) fn write_varint(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads one varint at `*pos`, advancing it. Rejects non-canonical encodings so that every list
/// has exactly one byte representation.
#[inline]
pub(crate) fn read_varint(bytes: &[u8], pos: &mut usize) -> Result<u32, Malformed> {
    let first = *bytes.get(*pos).ok_or(Malformed::Truncated)?;
    *pos += 1;
    if first < 0x80 {
        return Ok(u32::from(first));
    }
    read_varint_tail(bytes, pos, u32::from(first & 0x7f))
}

/// The multi-byte case of [`read_varint`], kept out of line so the one-byte case stays small.
#[cold]
#[inline(never)]
fn read_varint_tail(bytes: &[u8], pos: &mut usize, mut value: u32) -> Result<u32, Malformed> {
    for shift in [7u32, 14, 21, 28] {
        let byte = *bytes.get(*pos).ok_or(Malformed::Truncated)?;
        *pos += 1;
        // The fifth byte may only carry the top four bits of a u32.
        if shift == 28 && byte > 0x0f {
            return Err(Malformed::Overlong);
        }
        value |= u32::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return if byte == 0 { Err(Malformed::Overlong) } else { Ok(value) };
        }
    }
    Err(Malformed::Overlong)
}

/// Appends a posting list. `ordinals` must be strictly increasing.
pub(crate) fn encode_list(out: &mut Vec<u8>, ordinals: impl IntoIterator<Item = u32>) {
    let mut next = 0u32;
    for ordinal in ordinals {
        debug_assert!(ordinal >= next, "posting list must be strictly increasing");
        write_varint(out, ordinal - next);
        next = ordinal.wrapping_add(1);
    }
}

/// Streams the ordinals of one posting list, checking each against the document count.
pub(crate) struct Postings<'a> {
    bytes: &'a [u8],
    pos: usize,
    next: u64,
    docs: u64,
}

impl<'a> Postings<'a> {
    /// A decoder over `bytes`, where every ordinal must be below `docs`.
    pub(crate) fn new(bytes: &'a [u8], docs: usize) -> Self {
        Postings { bytes, pos: 0, next: 0, docs: docs as u64 }
    }

    /// The list and the read position, for lists that interleave other varints with the
    /// ordinals (word postings).
    pub(crate) fn bytes_and_position(&mut self) -> (&'a [u8], &mut usize) {
        (self.bytes, &mut self.pos)
    }

    /// The next ordinal, `None` at the end of the list.
    #[inline]
    pub(crate) fn next_ordinal(&mut self) -> Result<Option<u32>, Malformed> {
        if self.pos >= self.bytes.len() {
            return Ok(None);
        }
        let ordinal = self.next + u64::from(read_varint(self.bytes, &mut self.pos)?);
        if ordinal >= self.docs {
            return Err(Malformed::OutOfRange);
        }
        self.next = ordinal + 1;
        // docs <= 2^32 (ordinals address u32 ids), so the value fits.
        Ok(Some(ordinal as u32))
    }
}

/// Decodes a whole posting list.
pub(crate) fn decode_list(bytes: &[u8], docs: usize) -> Result<Vec<u32>, Malformed> {
    // A list never holds more ordinals than bytes, nor more than there are documents.
    let mut out = Vec::with_capacity(bytes.len().min(docs));
    let mut list = Postings::new(bytes, docs);
    while let Some(ordinal) = list.next_ordinal()? {
        out.push(ordinal);
    }
    Ok(out)
}

/// Keeps only the candidates that appear in the list `bytes`. Decoding stops at the first ordinal
/// past the last candidate, so a long list is only read as far as it can matter.
pub(crate) fn intersect(candidates: &mut Vec<u32>, bytes: &[u8], docs: usize) -> Result<(), Malformed> {
    let mut list = Postings::new(bytes, docs);
    let mut current = list.next_ordinal()?;
    let mut kept = 0;
    for read in 0..candidates.len() {
        let candidate = candidates[read];
        while current.is_some_and(|ordinal| ordinal < candidate) {
            current = list.next_ordinal()?;
        }
        match current {
            None => break,
            Some(ordinal) if ordinal == candidate => {
                candidates[kept] = candidate;
                kept += 1;
            }
            Some(_) => {}
        }
    }
    candidates.truncate(kept);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(values: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_list(&mut out, values.iter().copied());
        out
    }

    #[test]
    fn varint_round_trips_boundaries() {
        let values = [0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 0x1f_ffff, 0x20_0000, 0x0fff_ffff, 0x1000_0000, u32::MAX];
        for &value in &values {
            let mut out = Vec::new();
            write_varint(&mut out, value);
            let mut pos = 0;
            assert_eq!(read_varint(&out, &mut pos), Ok(value));
            assert_eq!(pos, out.len(), "value {value:#x} consumed wrong length");
        }
    }

    #[test]
    fn varint_lengths() {
        for (value, len) in [(0u32, 1usize), (127, 1), (128, 2), (16_383, 2), (16_384, 3), (u32::MAX, 5)] {
            let mut out = Vec::new();
            write_varint(&mut out, value);
            assert_eq!(out.len(), len, "value {value}");
        }
    }

    #[test]
    fn varint_rejects_truncation() {
        let mut pos = 0;
        assert_eq!(read_varint(&[], &mut pos), Err(Malformed::Truncated));
        let mut pos = 0;
        assert_eq!(read_varint(&[0x80, 0x80], &mut pos), Err(Malformed::Truncated));
    }

    #[test]
    fn varint_rejects_overlong_and_overflow() {
        for bytes in [
            &[0x80, 0x00][..],                         // redundant zero byte
            &[0xff, 0xff, 0xff, 0xff, 0x10][..],       // 33 bits
            &[0xff, 0xff, 0xff, 0xff, 0x8f, 0x01][..], // six bytes
            &[0x80, 0x80, 0x80, 0x80, 0x00][..],       // zero spelled in five bytes
        ] {
            let mut pos = 0;
            assert_eq!(read_varint(bytes, &mut pos), Err(Malformed::Overlong), "{bytes:x?}");
        }
    }

    #[test]
    fn list_round_trips() {
        let lists: [&[u32]; 5] = [&[], &[0], &[5], &[0, 1, 2, 3], &[3, 200, 201, 100_000, 4_000_000_000]];
        for list in lists {
            assert_eq!(decode_list(&encoded(list), u32::MAX as usize + 1).as_deref(), Ok(list));
        }
    }

    #[test]
    fn dense_list_is_one_byte_per_entry() {
        let list: Vec<u32> = (0..1000).collect();
        assert_eq!(encoded(&list).len(), 1000);
    }

    #[test]
    fn list_rejects_ordinal_out_of_range() {
        let bytes = encoded(&[1, 4]);
        assert_eq!(decode_list(&bytes, 5).map(|v| v.len()), Ok(2));
        assert_eq!(decode_list(&bytes, 4), Err(Malformed::OutOfRange));
        let mut candidates = vec![1, 4];
        assert_eq!(intersect(&mut candidates, &bytes, 4), Err(Malformed::OutOfRange));
    }

    #[test]
    fn list_rejects_cut_varint() {
        let bytes = encoded(&[1, 1000]);
        assert_eq!(decode_list(&bytes[..bytes.len() - 1], 2000), Err(Malformed::Truncated));
    }

    #[test]
    fn intersect_keeps_common_ordinals() {
        let bytes = encoded(&[1, 3, 5, 7, 9, 11]);
        let mut candidates = vec![0, 3, 4, 5, 11, 12];
        intersect(&mut candidates, &bytes, 100).unwrap();
        assert_eq!(candidates, vec![3, 5, 11]);

        let mut none = vec![2, 4];
        intersect(&mut none, &bytes, 100).unwrap();
        assert!(none.is_empty());

        let mut from_empty = vec![1, 3];
        intersect(&mut from_empty, &[], 100).unwrap();
        assert!(from_empty.is_empty());
    }

    #[test]
    fn intersect_stops_at_last_candidate() {
        // The tail after ordinal 3 is garbage; it must not be read because no candidate needs it.
        let mut bytes = encoded(&[1, 3]);
        bytes.extend_from_slice(&[0xff, 0xff]);
        let mut candidates = vec![1, 2];
        intersect(&mut candidates, &bytes, 100).unwrap();
        assert_eq!(candidates, vec![1]);
    }
}
