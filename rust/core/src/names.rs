//! The names a source file spells: the ASCII identifiers of its code, each once, and the words
//! they are made of.
//!
//! A *name* is a letter or `_` followed by letters, digits and `_` (what most programming
//! languages accept as an identifier, in ASCII), taken leftmost and longest: `x9abc` is one
//! name, `9abc` is the name `abc`, and any other byte (punctuation, space, a byte of a non-ASCII
//! character) ends one. Parts of the source can be left out, such as its comments: a name never
//! runs across a part left out.
//!
//! The *words* of a name are its parts cut at case changes, acronyms and separators, each with
//! the digits that follow it (`parseHTTPServer2` -> parse, HTTP, Server2; a run of digits with
//! no word before it is a part of its own), as `maguyva.lexicon.split_identifier` cuts an ASCII
//! identifier; [`distinct_words`] keeps those of three letters or more, made of letters only,
//! lowercased.

use rustc_hash::{FxHashMap, FxHashSet};

/// Which bytes may continue a name.
const NAME_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric() || b == b'_';
        byte += 1;
    }
    table
};

#[inline]
fn starts_name(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_'
}

/// The distinct names of `source` outside the byte ranges `skip` (`start..end`, in any order,
/// overlapping or not, clipped to the source), in the order they first appear.
///
/// ```
/// use maguyva_core::names::distinct_names;
///
/// let source = b"let total = sum(items); // total of items\nlet x9 = 9abc;";
/// let comment = (24, 42);
/// let names: Vec<&str> = distinct_names(source, &[comment]).iter().map(|n| std::str::from_utf8(n).unwrap()).collect();
/// assert_eq!(names, ["let", "total", "sum", "items", "x9", "abc"]);
/// ```
pub fn distinct_names<'a>(source: &'a [u8], skip: &[(usize, usize)]) -> Vec<&'a [u8]> {
    let mut ranges: Vec<(usize, usize)> =
        skip.iter().map(|&(s, e)| (s.min(source.len()), e.min(source.len()))).filter(|&(s, e)| s < e).collect();
    ranges.sort_unstable();
    let mut seen: FxHashSet<&[u8]> = FxHashSet::default();
    let mut names = Vec::new();
    let mut at = 0;
    for (start, end) in ranges.into_iter().chain(std::iter::once((source.len(), source.len()))) {
        if start > at {
            collect(&source[at..start], &mut seen, &mut names);
        }
        at = at.max(end);
    }
    names
}

/// The distinct words of the distinct names of `source` outside `skip` (as [`distinct_names`]):
/// each name's parts of three letters or more and letters only, lowercased, in the order they
/// first appear.
///
/// ```
/// use maguyva_core::names::distinct_words;
///
/// let words = distinct_words(b"parseHTTPServer2(cfg); XMLHttpRequest utf8 AB1 my_value", &[]);
/// // `Server2` and `utf8` hold digits, `my` and `AB1` are too short.
/// assert_eq!(words, ["parse", "http", "cfg", "xml", "request", "value"]);
/// ```
pub fn distinct_words(source: &[u8], skip: &[(usize, usize)]) -> Vec<String> {
    let mut seen: FxHashSet<Vec<u8>> = FxHashSet::default();
    let mut words = Vec::new();
    let mut lowered = Vec::new();
    for name in distinct_names(source, skip) {
        for part in name_parts(name) {
            if part.len() < 3 || !part.iter().all(u8::is_ascii_alphabetic) {
                continue;
            }
            lowered.clear();
            lowered.extend(part.iter().map(u8::to_ascii_lowercase));
            if !seen.contains(lowered.as_slice()) {
                seen.insert(lowered.clone());
                // Letters only: valid UTF-8 as it stands.
                words.push(String::from_utf8(lowered.clone()).unwrap_or_default());
            }
        }
    }
    words
}

/// The parts of one ASCII name, leftmost first: an acronym before a capitalised word (the
/// `HTTP` of `HTTPServer`), a word with at most one capital first, a run of capitals, each with
/// the digits after it; or a run of digits. Any other byte (`_`) separates parts.
fn name_parts(name: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut i = 0;
    std::iter::from_fn(move || {
        let run = |from: usize, test: fn(&u8) -> bool| from + name[from..].iter().take_while(|b| test(b)).count();
        while i < name.len() {
            let start = i;
            let byte = name[i];
            let end = if byte.is_ascii_uppercase() {
                let capitals = run(i, u8::is_ascii_uppercase);
                if capitals - i >= 2 && name.get(capitals).is_some_and(u8::is_ascii_lowercase) {
                    // The acronym stops before the capital that starts the next word.
                    capitals - 1
                } else if name.get(i + 1).is_some_and(u8::is_ascii_lowercase) {
                    run(run(i + 1, u8::is_ascii_lowercase), u8::is_ascii_digit)
                } else {
                    run(capitals, u8::is_ascii_digit)
                }
            } else if byte.is_ascii_lowercase() {
                run(run(i, u8::is_ascii_lowercase), u8::is_ascii_digit)
            } else if byte.is_ascii_digit() {
                run(i, u8::is_ascii_digit)
            } else {
                i += 1;
                continue;
            };
            i = end;
            return Some(&name[start..end]);
        }
        None
    })
}

fn collect<'a>(piece: &'a [u8], seen: &mut FxHashSet<&'a [u8]>, names: &mut Vec<&'a [u8]>) {
    let mut i = 0;
    while i < piece.len() {
        let byte = piece[i];
        if starts_name(byte) {
            let start = i;
            i += 1;
            while i < piece.len() && NAME_BYTES[piece[i] as usize] {
                i += 1;
            }
            let name = &piece[start..i];
            if seen.insert(name) {
                names.push(name);
            }
        } else {
            i += 1;
        }
    }
}

/// Which bytes a token of text is made of: ASCII letters, digits, `_` and `$`, what the
/// pattern `[\w$]` matches in ASCII text.
const TOKEN_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
        byte += 1;
    }
    table
};

/// The tokens of many texts ([`text_tokens`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextTokens<'a> {
    /// Each distinct token, in the order first met.
    pub tokens: Vec<&'a str>,
    /// The tokens of every text, one text after another, as indexes into `tokens`.
    pub ids: Vec<u32>,
    /// How many tokens each text holds.
    pub counts: Vec<u32>,
    /// The texts not tokenized here (a byte past ASCII, or no text at all: `None`), by index;
    /// they hold no token in `ids`. Past ASCII, what a word character is is Unicode's.
    pub not_ascii: Vec<u32>,
}

/// The tokens of each of `texts`: its maximal runs of ASCII letters, digits, `_` and `$`, as the
/// pattern `[\w$]+` finds them in ASCII text, each distinct token numbered once for all texts.
/// A text holding any byte past ASCII is left to the caller (`not_ascii`).
///
/// ```
/// use maguyva_core::names::text_tokens;
///
/// let found = text_tokens(&[Some("fn parse_config($path)"), Some("parse café"), Some("config, 2x")]);
/// assert_eq!(found.tokens, ["fn", "parse_config", "$path", "config", "2x"]);
/// assert_eq!(found.ids, [0, 1, 2, 3, 4]);
/// assert_eq!(found.counts, [3, 0, 2]);
/// assert_eq!(found.not_ascii, [1]);
/// ```
pub fn text_tokens<'a>(texts: &[Option<&'a str>]) -> TextTokens<'a> {
    let mut numbers: FxHashMap<&'a str, u32> = FxHashMap::default();
    let mut found = TextTokens { counts: Vec::with_capacity(texts.len()), ..TextTokens::default() };
    for (index, text) in texts.iter().enumerate() {
        let Some(text) = text.filter(|text| text.is_ascii()) else {
            found.not_ascii.push(index as u32);
            found.counts.push(0);
            continue;
        };
        let bytes = text.as_bytes();
        let before = found.ids.len();
        let mut at = 0;
        while at < bytes.len() {
            if !TOKEN_BYTES[bytes[at] as usize] {
                at += 1;
                continue;
            }
            let start = at;
            while at < bytes.len() && TOKEN_BYTES[bytes[at] as usize] {
                at += 1;
            }
            let token = &text[start..at];
            let next = found.tokens.len() as u32;
            let number = *numbers.entry(token).or_insert(next);
            if number == next {
                found.tokens.push(token);
            }
            found.ids.push(number);
        }
        found.counts.push((found.ids.len() - before) as u32);
    }
    found
}

/// Suffixes in the order [`stem_ascii`] tries them: (suffix, replacement, letters that must
/// remain). `maguyva.lexicon.stem` reads the same tables (for words past ASCII).
pub const SUFFIXES: [(&str, &str, usize); 25] = [
    ("ations", "", 3),
    ("ation", "", 3),
    ("ators", "", 3),
    ("ator", "", 3),
    ("ating", "", 3),
    ("ated", "", 3),
    ("ates", "", 3),
    ("ate", "", 3),
    ("ions", "", 3),
    ("ion", "", 3),
    ("ences", "", 3),
    ("ence", "", 3),
    ("ings", "", 3),
    ("ing", "", 3),
    ("ers", "", 3),
    ("er", "", 3),
    ("ies", "i", 3),
    ("ied", "i", 3),
    ("ed", "", 4),
    ("sses", "ss", 3),
    ("ches", "ch", 3),
    ("shes", "sh", 3),
    ("xes", "x", 3),
    ("zes", "z", 3),
    ("s", "", 3),
];
/// Verbs in "-er" lose it too once their own ending is gone.
pub const AGENT: [(&str, &str, usize); 1] = [("er", "", 3)];
/// After these a doubled final consonant is undoubled, unless it is one of `KEEP_DOUBLE`.
pub const UNDOUBLE: [&str; 5] = ["ing", "ings", "ed", "er", "ers"];
/// Consonants left doubled (install, pass, buzz).
pub const KEEP_DOUBLE: &str = "lsz";
/// Endings of words whose final "s" is not a plural's.
pub const NOT_PLURAL: [&str; 3] = ["ss", "us", "is"];

/// The key a word shares with its inflected and derived forms, as `maguyva.lexicon.stem` gives
/// it, for a word of ASCII bytes; `None` for a word with a byte past ASCII (whose letters are
/// Unicode's to tell).
///
/// ```
/// use maguyva_core::names::stem_ascii;
///
/// assert_eq!(stem_ascii("filtering").as_deref(), Some("filt"));
/// assert_eq!(stem_ascii("entries").as_deref(), Some("entri"));
/// assert_eq!(stem_ascii("v2"), Some("v2".to_string())); // not letters only: as it is
/// assert_eq!(stem_ascii("café"), None);
/// ```
pub fn stem_ascii(word: &str) -> Option<String> {
    if !word.is_ascii() {
        return None;
    }
    if word.len() <= 3 || !word.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Some(word.to_string());
    }
    let mut stemmed = strip(word, &SUFFIXES);
    stemmed = strip(&stemmed, &AGENT);
    let bytes = stemmed.as_bytes();
    let n = bytes.len();
    if n > 3 && bytes[n - 1] == b'e' {
        stemmed.truncate(n - 1);
    } else if n > 3 && bytes[n - 1] == b'y' && !b"aeiou".contains(&bytes[n - 2]) {
        stemmed.truncate(n - 1);
        stemmed.push('i');
    }
    Some(stemmed)
}

/// `word` without the first of `suffixes` it ends with that leaves enough letters.
fn strip(word: &str, suffixes: &[(&str, &str, usize)]) -> String {
    for &(suffix, replacement, keep) in suffixes {
        let Some(base) = word.strip_suffix(suffix) else { continue };
        let b = base.as_bytes();
        let doubled = b.len() >= 2 && b[b.len() - 1] == b[b.len() - 2];
        if base.len() < keep && !(suffix == "ed" && base.len() == 3 && doubled) {
            continue;
        }
        if suffix == "s" && NOT_PLURAL.iter().any(|ending| word.ends_with(ending)) {
            continue;
        }
        let mut base = base.to_string();
        if UNDOUBLE.contains(&suffix) && base.len() > 3 && doubled && !KEEP_DOUBLE.as_bytes().contains(&b[b.len() - 1]) {
            base.pop();
        }
        base.push_str(replacement);
        return base;
    }
    word.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(source: &str, skip: &[(usize, usize)]) -> Vec<String> {
        distinct_names(source.as_bytes(), skip).iter().map(|n| String::from_utf8(n.to_vec()).unwrap()).collect()
    }

    #[test]
    fn names_are_ascii_identifiers_taken_leftmost_and_longest() {
        assert_eq!(names("parseConfig(env_2, 3rd) + x9abc", &[]), ["parseConfig", "env_2", "rd", "x9abc"]);
        assert_eq!(names("café_au_lait __init__ $el", &[]), ["caf", "_au_lait", "__init__", "el"]);
        assert_eq!(names("a a b a", &[]), ["a", "b"]);
        assert!(names("", &[]).is_empty());
        assert!(names("123 + 456; //", &[]).is_empty());
    }

    fn parts(name: &str) -> Vec<&str> {
        name_parts(name.as_bytes()).map(|p| std::str::from_utf8(p).unwrap()).collect()
    }

    #[test]
    fn names_are_cut_at_case_changes_acronyms_and_separators() {
        assert_eq!(parts("parseConfigHTTPServer_v2"), ["parse", "Config", "HTTP", "Server", "v2"]);
        assert_eq!(parts("XMLHttpRequest"), ["XML", "Http", "Request"]);
        assert_eq!(parts("ABc"), ["A", "Bc"]);
        assert_eq!(parts("AB1x"), ["AB1", "x"]);
        assert_eq!(parts("__init__"), ["init"]);
        assert_eq!(parts("base64_2x"), ["base64", "2", "x"]);
        assert_eq!(parts("MAX_SIZE"), ["MAX", "SIZE"]);
        assert!(parts("___").is_empty());
    }

    #[test]
    fn words_are_the_long_alphabetic_parts_lowercased_once() {
        let words = distinct_words(b"getUserName(user_name); // username\nHTTP2 ok_go", &[(24, 36)]);
        assert_eq!(words, ["get", "user", "name"]);
    }

    #[test]
    fn a_part_left_out_splits_names_and_hides_its_own() {
        let source = "alpha/* beta */gamma";
        assert_eq!(names(source, &[(5, 15)]), ["alpha", "gamma"]);
        // Left out between two halves of one word: two names, never one across the gap.
        assert_eq!(names("foobar", &[(3, 3), (3, 4)]), ["foo", "ar"]);
        // Overlapping, unsorted and out-of-range parts.
        assert_eq!(names("one two three four", &[(8, 13), (4, 10), (17, 99)]), ["one", "fou"]);
    }

    #[test]
    fn a_word_shares_its_stem_with_its_forms() {
        let cases = [
            ("filtering", "filt"), ("filters", "filt"), ("referred", "ref"), ("reference", "ref"),
            ("entries", "entri"), ("entry", "entri"), ("retried", "retri"), ("stopped", "stop"),
            ("getter", "get"), ("installing", "install"), ("passes", "pass"), ("buzzing", "buzz"),
            ("status", "status"), ("analysis", "analysis"), ("configuration", "configur"),
            ("validators", "valid"), ("churches", "church"), ("added", "add"), ("fed", "fed"),
            ("used", "used"), ("caching", "cach"), ("day", "day"), ("HTTP", "HTTP"), ("Running", "Run"),
        ];
        for (word, stem) in cases {
            assert_eq!(stem_ascii(word).as_deref(), Some(stem), "{word}");
        }
        assert_eq!(stem_ascii("naïve"), None);
    }

    #[test]
    fn text_tokens_are_runs_of_ascii_word_bytes_numbered_once() {
        let found = text_tokens(&[Some("a_b $c\x00d-e"), None, Some(""), Some("d a_b"), Some("über d")]);
        assert_eq!(found.tokens, ["a_b", "$c", "d", "e"]);
        assert_eq!(found.ids, [0, 1, 2, 3, 2, 0]);
        assert_eq!(found.counts, [4, 0, 0, 2, 0]);
        assert_eq!(found.not_ascii, [1, 4]);
    }
}
