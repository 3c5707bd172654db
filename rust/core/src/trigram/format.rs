//! The serialized form of a trigram index (version 2), described in `docs/FORMAT.md`, section 2.
//!
//! ```text
//! header   magic "MGVTRGM\0" | version u32 | flags u32
//!          | doc_count u64 | content_len u64 | trigram_count u64 | postings_len u64
//!          | word_count u64 | vocabulary_len u64 | word_postings_len u64
//! sections doc ids [u32; n] | doc offsets [u64; n + 1] | content [u8; content_len]
//!          | trigram keys [u32; t] | posting offsets [u64; t + 1] | postings [u8; postings_len]
//!          | word offsets [u64; w + 1] | vocabulary [u8; v] | folded vocabulary [u8; v]
//!          | word posting offsets [u64; w + 1] | word postings [u8; word_postings_len]
//! trailer  CRC32 of everything before it, u32
//! ```
//!
//! All integers are little-endian and unaligned, so they are read with `from_le_bytes`.

use super::words::{is_word_byte, SEPARATOR};

/// The first eight bytes of every index.
pub const MAGIC: &[u8; 8] = b"MGVTRGM\0";
/// The format version this code writes and reads.
pub const VERSION: u32 = 2;
/// Bytes before the first section.
pub(crate) const HEADER_LEN: usize = 72;
/// Bytes after the last section (the checksum).
pub(crate) const TRAILER_LEN: usize = 4;
/// Trigram keys are three bytes.
pub(crate) const KEY_LIMIT: u32 = 1 << 24;

/// The counts in the header, from which the layout follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Counts {
    pub docs: usize,
    pub content_len: usize,
    pub trigrams: usize,
    pub postings_len: usize,
    pub words: usize,
    pub vocabulary_len: usize,
    pub word_postings_len: usize,
}

/// Where each section starts, derived from the counts in the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Number of documents, `n`.
    pub docs: usize,
    /// Number of distinct trigrams, `t`.
    pub trigrams: usize,
    /// Start of the doc id section.
    pub ids: usize,
    /// Start of the doc offset section.
    pub doc_offsets: usize,
    /// Start of the content section.
    pub content: usize,
    /// Length of the content section.
    pub content_len: usize,
    /// Start of the trigram key section.
    pub keys: usize,
    /// Start of the posting offset section.
    pub posting_offsets: usize,
    /// Start of the postings section.
    pub postings: usize,
    /// Length of the postings section.
    pub postings_len: usize,
    /// Number of distinct words, `w`.
    pub words: usize,
    /// Start of the word offset section.
    pub word_offsets: usize,
    /// Start of the vocabulary section.
    pub vocabulary: usize,
    /// Start of the folded vocabulary section.
    pub folded_vocabulary: usize,
    /// Length of each vocabulary section.
    pub vocabulary_len: usize,
    /// Start of the word posting offset section.
    pub word_posting_offsets: usize,
    /// Start of the word postings section.
    pub word_postings: usize,
    /// Length of the word postings section.
    pub word_postings_len: usize,
    /// Start of the trailer.
    pub trailer: usize,
}

impl Layout {
    /// The layout for the given counts; `None` if the sizes overflow `usize`.
    pub(crate) fn new(counts: Counts) -> Option<Layout> {
        let Counts { docs, content_len, trigrams, postings_len, words, vocabulary_len, word_postings_len } = counts;
        let ids = HEADER_LEN;
        let doc_offsets = ids.checked_add(docs.checked_mul(4)?)?;
        let content = doc_offsets.checked_add(docs.checked_add(1)?.checked_mul(8)?)?;
        let keys = content.checked_add(content_len)?;
        let posting_offsets = keys.checked_add(trigrams.checked_mul(4)?)?;
        let postings = posting_offsets.checked_add(trigrams.checked_add(1)?.checked_mul(8)?)?;
        let word_offsets = postings.checked_add(postings_len)?;
        let vocabulary = word_offsets.checked_add(words.checked_add(1)?.checked_mul(8)?)?;
        let folded_vocabulary = vocabulary.checked_add(vocabulary_len)?;
        let word_posting_offsets = folded_vocabulary.checked_add(vocabulary_len)?;
        let word_postings = word_posting_offsets.checked_add(words.checked_add(1)?.checked_mul(8)?)?;
        let trailer = word_postings.checked_add(word_postings_len)?;
        trailer.checked_add(TRAILER_LEN)?;
        Some(Layout {
            docs,
            trigrams,
            ids,
            doc_offsets,
            content,
            content_len,
            keys,
            posting_offsets,
            postings,
            postings_len,
            words,
            word_offsets,
            vocabulary,
            folded_vocabulary,
            vocabulary_len,
            word_posting_offsets,
            word_postings,
            word_postings_len,
            trailer,
        })
    }

    /// Total serialized size.
    pub(crate) fn total_len(&self) -> usize {
        self.trailer + TRAILER_LEN
    }

    /// The header bytes describing this layout.
    pub(crate) fn header(&self) -> [u8; HEADER_LEN] {
        let mut header = [0u8; HEADER_LEN];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&VERSION.to_le_bytes());
        // Bytes 12..16 are the flags, zero in version 2.
        let counts = [
            self.docs,
            self.content_len,
            self.trigrams,
            self.postings_len,
            self.words,
            self.vocabulary_len,
            self.word_postings_len,
        ];
        for (slot, count) in header[16..].chunks_exact_mut(8).zip(counts) {
            slot.copy_from_slice(&(count as u64).to_le_bytes());
        }
        header
    }
}

/// Reads a little-endian u32 at `at`. Callers pass offsets inside a validated layout.
#[inline]
pub(crate) fn u32_at(buf: &[u8], at: usize) -> u32 {
    let mut bytes = [0u8; 4];
    bytes.copy_from_slice(&buf[at..at + 4]);
    u32::from_le_bytes(bytes)
}

/// Reads a little-endian u64 at `at`. Callers pass offsets inside a validated layout.
#[inline]
pub(crate) fn u64_at(buf: &[u8], at: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(bytes)
}

/// The CRC32 that belongs in the trailer of `body` (everything before the trailer).
pub(crate) fn checksum(body: &[u8]) -> u32 {
    crc32fast::hash(body)
}

/// Checks everything about `buf` that can be checked without decoding posting lists, and returns
/// its layout. The error is a reason for `Error::Corrupt`.
pub(crate) fn validate(buf: &[u8]) -> Result<Layout, String> {
    let layout = parse_header(buf)?;
    check_checksum(buf, &layout)?;
    check_offsets(buf, layout.doc_offsets, layout.docs, layout.content_len, false, "document")?;
    check_increasing_u32(buf, layout.ids, layout.docs, u64::from(u32::MAX) + 1, "document ids")?;
    check_increasing_u32(buf, layout.keys, layout.trigrams, u64::from(KEY_LIMIT), "trigram keys")?;
    check_offsets(buf, layout.posting_offsets, layout.trigrams, layout.postings_len, true, "posting")?;
    if layout.docs == 0 && layout.trigrams > 0 {
        return Err(format!("{} trigrams are listed but there are no documents", layout.trigrams));
    }
    check_offsets(buf, layout.word_offsets, layout.words, layout.vocabulary_len, true, "word")?;
    check_vocabulary(buf, &layout)?;
    check_offsets(buf, layout.word_posting_offsets, layout.words, layout.word_postings_len, true, "word posting")?;
    if layout.docs == 0 && layout.words > 0 {
        return Err(format!("{} words are listed but there are no documents", layout.words));
    }
    Ok(layout)
}

/// Magic, version, flags and section sizes.
fn parse_header(buf: &[u8]) -> Result<Layout, String> {
    let minimum = HEADER_LEN + TRAILER_LEN;
    if buf.len() < minimum {
        return Err(format!("truncated: {} bytes, but the header and trailer alone take {minimum}", buf.len()));
    }
    if &buf[..8] != MAGIC {
        return Err("wrong magic bytes (this is not a trigram index)".to_string());
    }
    let version = u32_at(buf, 8);
    if version != VERSION {
        return Err(format!("unsupported format version {version} (this build reads version {VERSION})"));
    }
    let flags = u32_at(buf, 12);
    if flags != 0 {
        return Err(format!("unknown flags {flags:#x} in the header"));
    }
    let count = |at: usize, what: &str| {
        usize::try_from(u64_at(buf, at)).map_err(|_| format!("{what} in the header does not fit in memory"))
    };
    let counts = Counts {
        docs: count(16, "document count")?,
        content_len: count(24, "content length")?,
        trigrams: count(32, "trigram count")?,
        postings_len: count(40, "postings length")?,
        words: count(48, "word count")?,
        vocabulary_len: count(56, "vocabulary length")?,
        word_postings_len: count(64, "word postings length")?,
    };
    if counts.docs as u64 > u64::from(u32::MAX) + 1 {
        return Err(format!("{} documents, more than there are u32 ids", counts.docs));
    }
    let layout = Layout::new(counts)
        .ok_or_else(|| "section sizes in the header overflow".to_string())?;
    if layout.total_len() != buf.len() {
        return Err(format!(
            "section lengths add up to {} bytes but there are {} (truncated or trailing data)",
            layout.total_len(),
            buf.len()
        ));
    }
    Ok(layout)
}

/// The trailer must be the CRC32 of everything before it.
fn check_checksum(buf: &[u8], layout: &Layout) -> Result<(), String> {
    let stored = u32_at(buf, layout.trailer);
    let actual = checksum(&buf[..layout.trailer]);
    if stored != actual {
        return Err(format!("checksum mismatch: stored {stored:#010x}, computed {actual:#010x}"));
    }
    Ok(())
}

/// An offset array of `count + 1` u64s at `at` must start at 0, end at `end`, and never decrease
/// (strictly increase when `strict`, because posting lists are never empty).
fn check_offsets(buf: &[u8], at: usize, count: usize, end: usize, strict: bool, what: &str) -> Result<(), String> {
    if u64_at(buf, at) != 0 {
        return Err(format!("{what} offsets do not start at 0"));
    }
    let mut previous = 0u64;
    for i in 1..=count {
        let offset = u64_at(buf, at + 8 * i);
        if offset < previous || (strict && offset == previous) {
            return Err(format!("{what} offset {i} ({offset}) is not after the one before it ({previous})"));
        }
        previous = offset;
    }
    if previous != end as u64 {
        return Err(format!("{what} offsets end at {previous}, but the section holds {end} bytes"));
    }
    Ok(())
}

/// Every word must be a non-empty run of word bytes followed by the separator (the offsets,
/// checked before, put each word's start right after the previous separator), and the folded
/// vocabulary must be the vocabulary ASCII-lowercased.
fn check_vocabulary(buf: &[u8], layout: &Layout) -> Result<(), String> {
    let vocabulary = &buf[layout.vocabulary..layout.vocabulary + layout.vocabulary_len];
    let folded = &buf[layout.folded_vocabulary..layout.folded_vocabulary + layout.vocabulary_len];
    let word_end = |word: usize| u64_at(buf, layout.word_offsets + 8 * (word + 1)) as usize;
    let (mut word, mut word_start) = (0usize, 0usize);
    let mut end = if layout.words > 0 { word_end(0) } else { usize::MAX };
    for (at, (&byte, &folded_byte)) in vocabulary.iter().zip(folded).enumerate() {
        if folded_byte != byte.to_ascii_lowercase() {
            return Err(format!("the folded vocabulary differs from the vocabulary at byte {at}"));
        }
        if at + 1 == end {
            if byte != SEPARATOR || at == word_start {
                return Err(format!("word {word} is empty or does not end with the separator"));
            }
            word += 1;
            word_start = at + 1;
            end = if word < layout.words { word_end(word) } else { usize::MAX };
        } else if !is_word_byte(byte) {
            return Err(format!("vocabulary byte {at} ({byte:#04x}) is not a word byte"));
        }
    }
    Ok(())
}

/// An array of `count` u32s at `at` must be strictly increasing and below `limit`.
fn check_increasing_u32(buf: &[u8], at: usize, count: usize, limit: u64, what: &str) -> Result<(), String> {
    let mut previous: Option<u32> = None;
    for i in 0..count {
        let value = u32_at(buf, at + 4 * i);
        if u64::from(value) >= limit {
            return Err(format!("{what}: entry {i} ({value:#x}) is out of range"));
        }
        if previous.is_some_and(|p| value <= p) {
            return Err(format!("{what} are not strictly increasing at entry {i}"));
        }
        previous = Some(value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid serialized index with no documents.
    fn empty() -> Vec<u8> {
        let layout = Layout::new(Counts::default()).unwrap();
        let mut buf = layout.header().to_vec();
        buf.extend_from_slice(&0u64.to_le_bytes()); // doc offsets
        buf.extend_from_slice(&0u64.to_le_bytes()); // posting offsets
        buf.extend_from_slice(&0u64.to_le_bytes()); // word offsets
        buf.extend_from_slice(&0u64.to_le_bytes()); // word posting offsets
        seal(buf)
    }

    fn seal(mut body: Vec<u8>) -> Vec<u8> {
        let crc = checksum(&body);
        body.extend_from_slice(&crc.to_le_bytes());
        body
    }

    fn reseal(mut buf: Vec<u8>) -> Vec<u8> {
        buf.truncate(buf.len() - TRAILER_LEN);
        seal(buf)
    }

    #[test]
    fn empty_index_is_valid() {
        let buf = empty();
        assert_eq!(buf.len(), HEADER_LEN + 4 * 8 + TRAILER_LEN);
        assert_eq!(validate(&buf), Layout::new(Counts::default()).ok_or(String::new()));
    }

    #[test]
    fn rejects_short_magic_version_flags() {
        let buf = empty();
        assert!(validate(&buf[..10]).unwrap_err().contains("truncated"));

        let mut magic = buf.clone();
        magic[0] = b'X';
        assert!(validate(&magic).unwrap_err().contains("magic"));

        let mut version = buf.clone();
        version[8] = 1;
        assert!(validate(&reseal(version)).unwrap_err().contains("version 1"));

        let mut flags = buf.clone();
        flags[12] = 1;
        assert!(validate(&reseal(flags)).unwrap_err().contains("flags"));
    }

    #[test]
    fn rejects_wrong_length_and_checksum() {
        let mut longer = empty();
        longer.push(0);
        assert!(validate(&longer).unwrap_err().contains("add up"));

        let mut huge = empty();
        huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(validate(&reseal(huge)).is_err());

        let mut bad_crc = empty();
        let last = bad_crc.len() - 1;
        bad_crc[last] ^= 1;
        assert!(validate(&bad_crc).unwrap_err().contains("checksum"));
    }

    #[test]
    fn rejects_offsets_that_do_not_start_at_zero() {
        let mut buf = empty();
        buf[HEADER_LEN] = 1;
        assert!(validate(&reseal(buf)).unwrap_err().contains("start at 0"));
    }

    #[test]
    fn rejects_trigrams_without_documents() {
        let layout = Layout::new(Counts { trigrams: 1, postings_len: 1, ..Counts::default() }).unwrap();
        let mut buf = layout.header().to_vec();
        buf.extend_from_slice(&0u64.to_le_bytes());
        buf.extend_from_slice(&7u32.to_le_bytes());
        buf.extend_from_slice(&0u64.to_le_bytes());
        buf.extend_from_slice(&1u64.to_le_bytes());
        buf.push(0);
        buf.extend_from_slice(&0u64.to_le_bytes()); // word offsets
        buf.extend_from_slice(&0u64.to_le_bytes()); // word posting offsets
        assert!(validate(&seal(buf)).unwrap_err().contains("no documents"));
    }
}
