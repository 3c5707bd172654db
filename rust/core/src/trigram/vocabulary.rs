//! The words of an index's vocabulary that hold a literal, found through the trigrams of the
//! words rather than by scanning the whole vocabulary.
//!
//! A question's term ("session") is answered from word postings once the words holding it are
//! known (`session`, `urlsession`, `sessiondelegate`...). Scanning the vocabulary for them reads
//! every byte of it, megabytes for a large repository, for each term of each question. The
//! words holding a literal hold each of its trigrams, so the lists of words per trigram,
//! intersected shortest first, leave a few candidates to check: the same words, found in
//! time that follows the literal's rarest trigrams, not the vocabulary.
//!
//! The lists are made from the folded (ASCII lowercased) vocabulary the first time a search
//! needs them, and kept with the index: a word holding a literal exactly holds it folded, so
//! the one table serves both kinds of search.

/// Per trigram of the folded vocabulary, the words holding it, ascending.
#[derive(Debug, Default)]
pub(crate) struct WordTrigrams {
    /// The distinct trigram keys (three bytes, first byte highest), ascending.
    keys: Vec<u32>,
    /// Where each key's words start in `words`; one more entry at the end.
    starts: Vec<usize>,
    /// The words of each key, one list after another.
    words: Vec<u32>,
}

/// `pairs` ((key << 32) + word, by ascending word) by ascending key, each key's words still
/// ascending: a stable radix sort on the key's two halves of 12 bits, two passes over the pairs
/// where a comparison sort would make twenty.
fn sorted_by_key(mut pairs: Vec<u64>) -> Vec<u64> {
    let mut other = vec![0u64; pairs.len()];
    for shift in [32, 44] {
        let digit = |pair: u64| ((pair >> shift) & 0xfff) as usize;
        let mut starts = vec![0usize; 4097];
        for &pair in &pairs {
            starts[digit(pair) + 1] += 1;
        }
        for d in 0..4096 {
            starts[d + 1] += starts[d];
        }
        for &pair in &pairs {
            let d = digit(pair);
            other[starts[d]] = pair;
            starts[d] += 1;
        }
        std::mem::swap(&mut pairs, &mut other);
    }
    pairs
}

/// The key of the trigram starting at `bytes[0]`.
#[inline]
fn key(bytes: &[u8]) -> u32 {
    (u32::from(bytes[0]) << 16) | (u32::from(bytes[1]) << 8) | u32::from(bytes[2])
}

impl WordTrigrams {
    /// The lists of the `word_count` words of `folded` (the folded vocabulary), word `w` being
    /// `folded[word_start(w)..word_start(w + 1) - 1]` (each word is followed by a separator).
    pub(crate) fn build(folded: &[u8], word_count: usize, word_start: impl Fn(usize) -> usize) -> WordTrigrams {
        // (key << 32) + word of every trigram of every word, by word, then by key (a stable
        // sort: each key's words ascending); a word repeating a trigram lists it once. On this
        // thread alone: a search waiting for the table on the thread pool must not be handed
        // another search's wait for it (a parallel sort would let its worker take one).
        let mut pairs: Vec<u64> = Vec::new();
        for word in 0..word_count {
            let bytes = &folded[word_start(word)..word_start(word + 1) - 1];
            pairs.extend(bytes.windows(3).map(|t| (u64::from(key(t)) << 32) | word as u64));
        }
        let mut pairs = sorted_by_key(pairs);
        pairs.dedup();
        let mut table = WordTrigrams { keys: Vec::new(), starts: Vec::new(), words: Vec::with_capacity(pairs.len()) };
        for pair in pairs {
            let key = (pair >> 32) as u32;
            if table.keys.last() != Some(&key) {
                table.keys.push(key);
                table.starts.push(table.words.len());
            }
            table.words.push(pair as u32);
        }
        table.starts.push(table.words.len());
        table
    }

    /// The words of trigram `key` (none when no word holds it).
    fn words_of(&self, key: u32) -> &[u32] {
        match self.keys.binary_search(&key) {
            Ok(at) => &self.words[self.starts[at]..self.starts[at + 1]],
            Err(_) => &[],
        }
    }

    /// The words holding every trigram of `folded_literal` (at least three bytes, ASCII
    /// lowercased), ascending: a superset of the words holding the literal, with or without
    /// its case.
    pub(crate) fn candidates(&self, folded_literal: &[u8]) -> Vec<u32> {
        debug_assert!(folded_literal.len() >= 3);
        let mut keys: Vec<u32> = folded_literal.windows(3).map(key).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut lists: Vec<&[u32]> = keys.iter().map(|&k| self.words_of(k)).collect();
        lists.sort_by_key(|list| list.len());
        let Some((shortest, rest)) = lists.split_first() else { return Vec::new() };
        let mut found = shortest.to_vec();
        for list in rest {
            if found.is_empty() {
                break;
            }
            // Each candidate looked for from where the last one was found (the lists ascend),
            // galloping: candidates close together cost steps in the distance between them.
            let mut from = 0;
            found.retain(|&word| {
                let mut step = 1;
                while from + step < list.len() && list[from + step] < word {
                    from += step;
                    step *= 2;
                }
                let end = (from + step + 1).min(list.len());
                from += list[from..end].partition_point(|&w| w < word);
                from < list.len() && list[from] == word
            });
        }
        found
    }

}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vocabulary of `words` (sorted, each followed by a newline) and each word's start.
    fn vocabulary(words: &[&str]) -> (Vec<u8>, Vec<usize>) {
        let mut bytes = Vec::new();
        let mut starts = vec![0];
        for word in words {
            bytes.extend_from_slice(word.as_bytes());
            bytes.push(b'\n');
            starts.push(bytes.len());
        }
        (bytes, starts)
    }

    #[test]
    fn candidates_hold_every_trigram_of_the_literal() {
        let words = ["aaaa", "abcxbcd", "banana", "session", "sessions", "urlsession", "zzz"];
        let (bytes, starts) = vocabulary(&words);
        let table = WordTrigrams::build(&bytes, words.len(), |w| starts[w]);
        assert_eq!(table.candidates(b"session"), vec![3, 4, 5]);
        assert_eq!(table.candidates(b"ana"), vec![2]);
        assert_eq!(table.candidates(b"aaa"), vec![0]);
        assert_eq!(table.candidates(b"nana"), vec![2]);
        // A word holding every trigram of a literal is a candidate, whether or not it holds
        // the literal; a word holding only some of them is not.
        assert_eq!(table.candidates(b"abcd"), vec![1]);
        assert!(table.candidates(b"sessionana").is_empty());
        assert!(table.candidates(b"qqq").is_empty());
        assert!(table.candidates(b"zzzz").len() == 1);
    }

    proptest::proptest! {
        /// Pairs listed by word come out by key, each key's words in their order: what a sort
        /// of the pairs gives.
        #[test]
        fn pairs_sorted_by_key_are_sorted(keys in proptest::collection::vec(proptest::collection::vec(0u32..1 << 24, 0..6), 0..60)) {
            let pairs: Vec<u64> = keys.iter().enumerate().flat_map(|(word, keys)| keys.iter().map(move |&k| (u64::from(k) << 32) | word as u64)).collect();
            let mut sorted = pairs.clone();
            sorted.sort_unstable();
            proptest::prop_assert_eq!(sorted_by_key(pairs), sorted);
        }
    }

    #[test]
    fn a_word_shorter_than_a_trigram_holds_none() {
        let words = ["a", "ab", "abc"];
        let (bytes, starts) = vocabulary(&words);
        let table = WordTrigrams::build(&bytes, words.len(), |w| starts[w]);
        assert_eq!(table.candidates(b"abc"), vec![2]);
        assert_eq!(table.words.len(), 1);
    }
}
