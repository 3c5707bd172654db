//! BERT-style WordPiece tokenization: normalize (drop control characters, space out CJK
//! ideographs, strip accents, lower-case), split at whitespace and punctuation, then cut each
//! word into the longest vocabulary pieces from the left. The same ids as the `tokenizers`
//! library gives a `tokenizer.json` of BertNormalizer, BertPreTokenizer and WordPiece without
//! special tokens added, checked against it by the package's tests over real source trees.

use crate::{Error, Result};
use rustc_hash::FxHashMap;
use unicode_categories::UnicodeCategories;
use unicode_normalization::UnicodeNormalization;

/// How text is normalized before it is split (BertNormalizer's options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Normalization {
    /// Drop NUL, U+FFFD and control characters; every whitespace character becomes a space.
    pub clean_text: bool,
    /// Put spaces around CJK ideographs, so that each is a word of its own.
    pub chinese_chars: bool,
    /// Decompose (NFD) and drop nonspacing marks.
    pub strip_accents: bool,
    /// Lower-case every character.
    pub lowercase: bool,
}

/// A token matched in the raw text before normalization (a special token such as `[PAD]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddedToken {
    /// The text that stands for the token.
    pub content: String,
    /// Its id.
    pub id: u32,
}

/// A WordPiece vocabulary with the normalization and splitting of its tokenizer.
#[derive(Debug)]
pub struct WordPiece {
    vocab: FxHashMap<String, u32>,
    unknown: u32,
    prefix: String,
    max_chars: usize,
    normalization: Normalization,
    added: Vec<AddedToken>,
}

impl WordPiece {
    /// A tokenizer of `tokens` (token `i` has id `i`), `unknown` the id given to a word that no
    /// pieces spell, `prefix` the mark of a piece that continues a word (`##`), `max_chars`
    /// the longest word cut into pieces (a longer one is unknown). `added` tokens are found in
    /// the raw text first, leftmost (the longest of those starting at the same place).
    pub fn new(
        tokens: Vec<String>,
        unknown: u32,
        prefix: String,
        max_chars: usize,
        normalization: Normalization,
        added: Vec<AddedToken>,
    ) -> Result<WordPiece> {
        if (unknown as usize) >= tokens.len() {
            return Err(Error::InvalidArgument(format!(
                "the unknown token's id {unknown} is not below the vocabulary's {} tokens",
                tokens.len()
            )));
        }
        if let Some(token) = added.iter().find(|t| t.content.is_empty()) {
            return Err(Error::InvalidArgument(format!("added token {} has no text", token.id)));
        }
        let mut vocab = FxHashMap::default();
        vocab.reserve(tokens.len());
        for (id, token) in tokens.into_iter().enumerate() {
            // A token listed twice keeps its first id, as a vocabulary read in id order would.
            vocab.entry(token).or_insert(id as u32);
        }
        Ok(WordPiece { vocab, unknown, prefix, max_chars, normalization, added })
    }

    /// Appends the ids of `text` to `out`.
    pub fn encode(&self, text: &str, out: &mut Vec<u32>) {
        let mut rest = text;
        while let Some((at, token)) = self.next_added(rest) {
            self.encode_normalized(&rest[..at], out);
            out.push(token.id);
            rest = &rest[at + token.content.len()..];
        }
        self.encode_normalized(rest, out);
    }

    /// The first added token in `text`: where it starts, and which (the longest there).
    fn next_added(&self, text: &str) -> Option<(usize, &AddedToken)> {
        let mut best: Option<(usize, &AddedToken)> = None;
        for token in &self.added {
            if let Some(at) = text.find(token.content.as_str()) {
                let better = match best {
                    None => true,
                    Some((start, known)) => at < start || (at == start && token.content.len() > known.content.len()),
                };
                if better {
                    best = Some((at, token));
                }
            }
        }
        best
    }

    /// Normalizes, splits and cuts `text` (holding no added token).
    fn encode_normalized(&self, text: &str, out: &mut Vec<u32>) {
        if text.is_ascii() {
            self.encode_ascii(text.as_bytes(), out);
            return;
        }
        let normalized = self.normalize(text);
        let mut word = String::new();
        for c in normalized.chars() {
            if c.is_whitespace() {
                self.flush(&mut word, out);
            } else if is_punctuation(c) {
                self.flush(&mut word, out);
                let mut one = [0u8; 4];
                self.cut(c.encode_utf8(&mut one), out);
            } else {
                word.push(c);
            }
        }
        self.flush(&mut word, out);
    }

    /// The ASCII case: every step is a byte test, and a word is lower-cased in place.
    fn encode_ascii(&self, text: &[u8], out: &mut Vec<u32>) {
        let mut word: Vec<u8> = Vec::new();
        for &b in text {
            let b = if self.normalization.lowercase { b.to_ascii_lowercase() } else { b };
            if self.normalization.clean_text && is_ascii_control(b) {
                // Dropped before splitting: the word goes on past it.
            } else if is_ascii_whitespace(b) {
                self.flush_ascii(&mut word, out);
            } else if b.is_ascii_punctuation() {
                self.flush_ascii(&mut word, out);
                self.cut(std::str::from_utf8(std::slice::from_ref(&b)).unwrap_or_default(), out);
            } else {
                word.push(b);
            }
        }
        self.flush_ascii(&mut word, out);
    }

    fn flush_ascii(&self, word: &mut Vec<u8>, out: &mut Vec<u32>) {
        if !word.is_empty() {
            // Only ASCII bytes were pushed.
            self.cut(std::str::from_utf8(word).unwrap_or_default(), out);
            word.clear();
        }
    }

    fn flush(&self, word: &mut String, out: &mut Vec<u32>) {
        if !word.is_empty() {
            self.cut(word, out);
            word.clear();
        }
    }

    /// BertNormalizer's steps, in its order: clean, CJK, accents, case.
    fn normalize(&self, text: &str) -> String {
        let options = self.normalization;
        let mut cleaned = String::with_capacity(text.len());
        for c in text.chars() {
            if options.clean_text {
                if c == '\0' || c == '\u{fffd}' || is_control(c) {
                    continue;
                }
                if is_bert_whitespace(c) {
                    cleaned.push(' ');
                    continue;
                }
            }
            if options.chinese_chars && is_chinese_char(c) {
                cleaned.push(' ');
                cleaned.push(c);
                cleaned.push(' ');
            } else {
                cleaned.push(c);
            }
        }
        let stripped: String = if options.strip_accents {
            cleaned.nfd().filter(|c| !c.is_mark_nonspacing()).collect()
        } else {
            cleaned
        };
        if options.lowercase {
            stripped.chars().flat_map(char::to_lowercase).collect()
        } else {
            stripped
        }
    }

    /// The pieces of one word: the longest vocabulary entry from the left, then the longest
    /// continuation (with the prefix) from where it ends, and so on; a word of more than
    /// `max_chars` characters, or one that some remainder starts no piece of, is unknown.
    fn cut(&self, word: &str, out: &mut Vec<u32>) {
        if word.chars().count() > self.max_chars {
            out.push(self.unknown);
            return;
        }
        if let Some(&id) = self.vocab.get(word) {
            out.push(id);
            return;
        }
        let mark = out.len();
        let mut piece = String::with_capacity(self.prefix.len() + word.len());
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                piece.clear();
                if start > 0 {
                    piece.push_str(&self.prefix);
                }
                piece.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(piece.as_str()) {
                    found = Some(id);
                    break;
                }
                end = floor_char_boundary(word, end - 1);
            }
            match found {
                Some(id) => out.push(id),
                None => {
                    out.truncate(mark);
                    out.push(self.unknown);
                    return;
                }
            }
            start = end;
        }
    }
}

/// The largest char boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn is_ascii_whitespace(b: u8) -> bool {
    // Rust's (and BertPreTokenizer's) whitespace among ASCII: tab, line feed, vertical tab,
    // form feed, carriage return, space. Vertical tab and form feed are also control
    // characters, which cleaning drops before any split.
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

fn is_ascii_control(b: u8) -> bool {
    (b < 0x20 || b == 0x7f) && !matches!(b, b'\t' | b'\n' | b'\r')
}

/// BertNormalizer's whitespace: tab, line feed, carriage return and Unicode White_Space.
fn is_bert_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// BertNormalizer's control characters: control, format and private-use characters (not
/// unassigned code points, which stay in their word), tab, line feed and carriage return
/// excepted.
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

/// BertPreTokenizer's punctuation: ASCII punctuation and the Unicode punctuation categories.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

/// The CJK ideograph blocks BERT gives a word each.
fn is_chinese_char(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const BERT: Normalization = Normalization { clean_text: true, chinese_chars: true, strip_accents: true, lowercase: true };

    fn tokenizer(tokens: &[&str]) -> WordPiece {
        let added = vec![AddedToken { content: "[PAD]".into(), id: 0 }, AddedToken { content: "[UNK]".into(), id: 1 }];
        WordPiece::new(tokens.iter().map(|t| t.to_string()).collect(), 1, "##".into(), 12, BERT, added).unwrap()
    }

    fn tokens(wp: &WordPiece, text: &str, names: &[&str]) -> Vec<String> {
        let mut ids = Vec::new();
        wp.encode(text, &mut ids);
        ids.iter().map(|&i| names[i as usize].to_string()).collect()
    }

    const VOCAB: &[&str] = &[
        "[PAD]", "[UNK]", "parse", "##r", "##d", "config", "(", ")", ".", "_", "cafe", "中", "文", "get", "##user", "x", "!",
    ];

    #[test]
    fn words_are_cut_into_the_longest_pieces_from_the_left() {
        let wp = tokenizer(VOCAB);
        assert_eq!(tokens(&wp, "Parser.parsed(config)", VOCAB), ["parse", "##r", ".", "parse", "##d", "(", "config", ")"]);
        assert_eq!(tokens(&wp, "getUser", VOCAB), ["get", "##user"]);
    }

    #[test]
    fn a_word_no_pieces_spell_is_one_unknown_token() {
        let wp = tokenizer(VOCAB);
        assert_eq!(tokens(&wp, "parsez config", VOCAB), ["[UNK]", "config"]);
        assert_eq!(tokens(&wp, "xxxxxxxxxxxxx", VOCAB), ["[UNK]"], "longer than max_chars");
    }

    #[test]
    fn accents_case_controls_and_ideographs_are_normalized() {
        let wp = tokenizer(VOCAB);
        assert_eq!(tokens(&wp, "CAFÉ\u{7}", VOCAB), ["cafe"]);
        assert_eq!(tokens(&wp, "cafe\u{200b}x", VOCAB), ["[UNK]"], "a format character is dropped, joining the word");
        assert_eq!(tokens(&wp, "中文!", VOCAB), ["中", "文", "!"]);
        assert_eq!(tokens(&wp, "«x»", VOCAB), ["[UNK]", "x", "[UNK]"], "Unicode punctuation stands alone");
    }

    #[test]
    fn added_tokens_are_found_in_the_raw_text() {
        let wp = tokenizer(VOCAB);
        assert_eq!(tokens(&wp, "x[PAD]config [UNK]", VOCAB), ["x", "[PAD]", "config", "[UNK]"]);
    }

    #[test]
    fn an_unknown_id_outside_the_vocabulary_is_refused() {
        let error = WordPiece::new(vec!["a".into()], 3, "##".into(), 100, BERT, vec![]).unwrap_err();
        assert!(error.to_string().contains("unknown token's id 3"));
    }
}
