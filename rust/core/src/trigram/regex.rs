//! Regular-expression search: a trigram query derived from the expression's syntax tree
//! prunes the documents, the `regex` crate verifies the rest.
//!
//! The query is the one of Russ Cox's code search, kept small: for each part of the expression,
//! either the exact strings it can match, while they stay few, or a condition on the
//! trigrams of any match: AND over a concatenation, OR over an alternation, nothing required
//! for what may match short or empty strings (`a*`, `.`, a large class). Any pattern is safe:
//! the compiled automaton and its cache are bounded, matching is linear in the text, and a
//! pattern from which nothing can be required is answered by reading every document.

use super::{fold, LiteralMatch, TrigramIndex};
use crate::{Error, Result};
use regex_syntax::hir::{Class, Hir, HirKind};

/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 4096;
/// Bound on the compiled program and on the lazy DFA's cache of each thread, in bytes.
const AUTOMATON_BYTES: usize = 8 << 20;
/// The exact strings of a part are kept while there are at most this many.
const MAX_EXACT: usize = 64;
/// A class of at most this many characters keeps its characters as exact strings.
const MAX_CLASS_CHARS: usize = 16;

/// What every match must contain, as a condition on a document's trigrams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegexPlan {
    /// Any document.
    All,
    /// This string, in this case (or in any ASCII case, when the flag says it is folded).
    Literal(Vec<u8>, bool),
    /// Every one of these.
    And(Vec<RegexPlan>),
    /// At least one of these.
    Or(Vec<RegexPlan>),
}

impl RegexPlan {
    fn and(parts: Vec<RegexPlan>) -> RegexPlan {
        let mut kept: Vec<RegexPlan> = Vec::new();
        for part in parts {
            match part {
                RegexPlan::All => {}
                RegexPlan::And(inner) => kept.extend(inner),
                other => kept.push(other),
            }
        }
        kept.dedup();
        match kept.len() {
            0 => RegexPlan::All,
            1 => kept.pop().unwrap_or(RegexPlan::All),
            _ => RegexPlan::And(kept),
        }
    }

    fn or(parts: Vec<RegexPlan>) -> RegexPlan {
        let mut kept: Vec<RegexPlan> = Vec::new();
        for part in parts {
            match part {
                RegexPlan::All => return RegexPlan::All,
                RegexPlan::Or(inner) => kept.extend(inner),
                other => kept.push(other),
            }
        }
        kept.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
        kept.dedup();
        match kept.len() {
            0 => RegexPlan::All, // an alternation of nothing cannot come from a parsed pattern
            1 => kept.pop().unwrap_or(RegexPlan::All),
            _ => RegexPlan::Or(kept),
        }
    }

    /// Whether the plan requires anything at all (a scan of every document otherwise).
    pub fn prunes(&self) -> bool {
        match self {
            RegexPlan::All => false,
            RegexPlan::Literal(s, _) => s.len() >= 3,
            RegexPlan::And(parts) => parts.iter().any(RegexPlan::prunes),
            RegexPlan::Or(parts) => parts.iter().all(RegexPlan::prunes),
        }
    }
}

/// What a part of the expression can match: its exact strings while they are few (`folded`:
/// ASCII-lowercased, to be matched in any ASCII case), otherwise a condition on its matches.
enum Info {
    Exact(Vec<Vec<u8>>, bool),
    Plan(RegexPlan),
}

impl Info {
    fn into_plan(self) -> RegexPlan {
        match self {
            Info::Exact(strings, folded) => {
                RegexPlan::or(strings.into_iter().map(|s| RegexPlan::Literal(s, folded)).collect())
            }
            Info::Plan(plan) => plan,
        }
    }
}

fn fold_all(strings: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = strings.into_iter().map(|s| s.iter().map(|&b| fold(b)).collect()).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Two sets of exact strings in one case mode: folded if either is.
fn same_mode(a: Vec<Vec<u8>>, a_folded: bool, b: Vec<Vec<u8>>, b_folded: bool) -> (Vec<Vec<u8>>, Vec<Vec<u8>>, bool) {
    if a_folded == b_folded {
        (a, b, a_folded)
    } else {
        (fold_all(a), fold_all(b), true)
    }
}

fn info(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::Exact(vec![Vec::new()], false),
        HirKind::Literal(literal) => Info::Exact(vec![literal.0.to_vec()], false),
        HirKind::Class(class) => class_info(class),
        HirKind::Capture(capture) => info(&capture.sub),
        HirKind::Repetition(repetition) => {
            if repetition.min == 0 {
                return Info::Plan(RegexPlan::All);
            }
            let once = info(&repetition.sub);
            if repetition.min == 1 && repetition.max == Some(1) {
                return once;
            }
            // At least one match of the part: what it requires is required.
            Info::Plan(once.into_plan())
        }
        HirKind::Concat(parts) => concat_info(parts),
        HirKind::Alternation(branches) => {
            let infos: Vec<Info> = branches.iter().map(info).collect();
            let total: usize = infos.iter().map(|i| if let Info::Exact(s, _) = i { s.len() } else { usize::MAX / 2 }).sum();
            if total <= MAX_EXACT {
                let mut strings: Vec<Vec<u8>> = Vec::new();
                let mut folded = false;
                for branch in infos {
                    if let Info::Exact(more, more_folded) = branch {
                        let (so_far, more, now_folded) = same_mode(std::mem::take(&mut strings), folded, more, more_folded);
                        strings = so_far;
                        strings.extend(more);
                        folded = now_folded;
                    }
                }
                strings.sort_unstable();
                strings.dedup();
                return Info::Exact(strings, folded);
            }
            Info::Plan(RegexPlan::or(infos.into_iter().map(Info::into_plan).collect()))
        }
    }
}

/// A small class as its members; one that is the two cases of an ASCII letter (what `(?i)`
/// makes of a letter) as that letter folded, to be matched in any case.
fn class_info(class: &Class) -> Info {
    let mut strings: Vec<Vec<u8>> = Vec::new();
    match class {
        Class::Unicode(class) => {
            let size: usize = class.ranges().iter().map(|r| r.end() as usize - r.start() as usize + 1).sum();
            if size > MAX_CLASS_CHARS {
                return Info::Plan(RegexPlan::All);
            }
            for range in class.ranges() {
                for c in range.start()..=range.end() {
                    let mut buf = [0u8; 4];
                    strings.push(c.encode_utf8(&mut buf).as_bytes().to_vec());
                }
            }
        }
        Class::Bytes(class) => {
            let size: usize = class.ranges().iter().map(|r| r.end() as usize - r.start() as usize + 1).sum();
            if size > MAX_CLASS_CHARS {
                return Info::Plan(RegexPlan::All);
            }
            for range in class.ranges() {
                for b in range.start()..=range.end() {
                    strings.push(vec![b]);
                }
            }
        }
    }
    let one_letter = strings.len() == 2
        && strings.iter().all(|s| s.len() == 1 && s[0].is_ascii_alphabetic())
        && fold(strings[0][0]) == fold(strings[1][0]);
    if one_letter {
        return Info::Exact(vec![vec![fold(strings[0][0])]], true);
    }
    strings.sort_unstable();
    strings.dedup();
    Info::Exact(strings, false)
}

/// A concatenation: exact strings multiplied out while they stay few; otherwise the parts
/// found so far become a condition, ANDed with the rest.
fn concat_info(parts: &[Hir]) -> Info {
    let mut conditions: Vec<RegexPlan> = Vec::new();
    let mut current: Option<(Vec<Vec<u8>>, bool)> = Some((vec![Vec::new()], false));
    for part in parts {
        match info(part) {
            Info::Exact(strings, folded) => {
                let product = current.as_ref().map_or(usize::MAX, |(c, _)| c.len().saturating_mul(strings.len()));
                match current.take() {
                    Some((prefixes, prefixes_folded)) if product <= MAX_EXACT => {
                        let (prefixes, strings, folded) = same_mode(prefixes, prefixes_folded, strings, folded);
                        let mut joined: Vec<Vec<u8>> = prefixes
                            .iter()
                            .flat_map(|p| strings.iter().map(move |s| [p.as_slice(), s.as_slice()].concat()))
                            .collect();
                        joined.sort_unstable();
                        joined.dedup();
                        current = Some((joined, folded));
                    }
                    Some((prefixes, prefixes_folded)) => {
                        conditions.push(Info::Exact(prefixes, prefixes_folded).into_plan());
                        current = Some((strings, folded));
                    }
                    None => current = Some((strings, folded)),
                }
            }
            Info::Plan(plan) => {
                if let Some((prefixes, folded)) = current.take() {
                    conditions.push(Info::Exact(prefixes, folded).into_plan());
                }
                conditions.push(plan);
            }
        }
    }
    match current {
        Some((strings, folded)) if conditions.is_empty() => Info::Exact(strings, folded),
        Some((strings, folded)) => {
            conditions.push(Info::Exact(strings, folded).into_plan());
            Info::Plan(RegexPlan::and(conditions))
        }
        None => Info::Plan(RegexPlan::and(conditions)),
    }
}

/// A regular expression compiled for searching, with its trigram plan.
pub struct RegexSearch {
    regex: regex::bytes::Regex,
    plan: RegexPlan,
}

impl RegexSearch {
    /// `pattern` in the `regex` crate's syntax; `^` and `$` match at line ends. An invalid
    /// pattern, or one whose automaton would pass the size limit, is an `InvalidArgument`.
    pub fn new(pattern: &str, case_insensitive: bool) -> Result<RegexSearch> {
        if pattern.is_empty() {
            return Err(Error::InvalidArgument("the regular expression is empty".to_string()));
        }
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(Error::InvalidArgument(format!(
                "the regular expression is {} bytes long; at most {MAX_PATTERN_BYTES} are allowed",
                pattern.len()
            )));
        }
        let hir = regex_syntax::ParserBuilder::new()
            .case_insensitive(case_insensitive)
            .multi_line(true)
            .utf8(false)
            .build()
            .parse(pattern)
            .map_err(|e| Error::InvalidArgument(format!("invalid regular expression: {}", one_line(&e.to_string()))))?;
        let regex = regex::bytes::RegexBuilder::new(pattern)
            .case_insensitive(case_insensitive)
            .multi_line(true)
            .size_limit(AUTOMATON_BYTES)
            .dfa_size_limit(AUTOMATON_BYTES)
            .build()
            .map_err(|e| Error::InvalidArgument(format!("invalid regular expression: {}", one_line(&e.to_string()))))?;
        Ok(RegexSearch { regex, plan: info(&hir).into_plan() })
    }

    /// What the trigrams of a document must allow for it to be read.
    pub fn plan(&self) -> &RegexPlan {
        &self.plan
    }

    /// Number of non-empty matches in `haystack` and the distinct 1-based lines they start on.
    fn count_with_lines(&self, haystack: &[u8]) -> Option<(u32, Vec<u32>)> {
        let mut count = 0u32;
        let mut lines: Vec<u32> = Vec::new();
        let (mut line, mut scanned) = (1usize, 0usize);
        for found in self.regex.find_iter(haystack) {
            if found.is_empty() {
                continue; // an empty match marks no text
            }
            count = count.saturating_add(1);
            line += memchr::memchr_iter(b'\n', &haystack[scanned..found.start()]).count();
            scanned = found.start();
            let at = u32::try_from(line).unwrap_or(u32::MAX);
            if lines.last() != Some(&at) {
                lines.push(at);
            }
        }
        (count > 0).then_some((count, lines))
    }
}

/// The values in both ascending lists, ascending.
fn intersect_sorted(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(a.len().min(b.len())));
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl TrigramIndex {
    /// Ordinals of the documents `plan` allows, ascending.
    pub(crate) fn plan_candidates(&self, plan: &RegexPlan) -> Result<Vec<u32>> {
        match plan {
            RegexPlan::All => Ok((0..self.layout.docs as u32).collect()),
            // A string every match holds (in some case): the documents holding it, found as a
            // literal is (word postings, or trigrams then a SIMD scan), which costs less than
            // running the expression over every document its trigrams allow.
            RegexPlan::Literal(literal, folded) if literal.len() >= 3 => {
                Ok(self.count_term(literal, *folded)?.into_iter().map(|(ordinal, _)| ordinal).collect())
            }
            RegexPlan::Literal(literal, _) => self.candidates(literal),
            RegexPlan::And(parts) => {
                let mut result: Option<Vec<u32>> = None;
                for part in parts.iter().filter(|p| p.prunes()) {
                    let found = self.plan_candidates(part)?;
                    result = Some(match result {
                        None => found,
                        Some(so_far) => intersect_sorted(&so_far, &found),
                    });
                    if result.as_ref().is_some_and(Vec::is_empty) {
                        break;
                    }
                }
                match result {
                    Some(found) => Ok(found),
                    None => self.plan_candidates(&RegexPlan::All),
                }
            }
            RegexPlan::Or(parts) => {
                let mut all: Vec<u32> = Vec::new();
                for part in parts {
                    all.extend(self.plan_candidates(part)?);
                }
                all.sort_unstable();
                all.dedup();
                Ok(all)
            }
        }
    }

    /// Every non-empty match of `search` with the lines it starts on, by ascending doc id.
    pub fn search_regex(&self, search: &RegexSearch) -> Result<Vec<LiteralMatch>> {
        let candidates = self.plan_candidates(&search.plan)?;
        let parallel = super::work::parallel(self.candidates_bytes(&candidates));
        Ok(super::work::filter_map_collect(parallel, &candidates, |&ordinal| {
            let (count, lines) = search.count_with_lines(self.content(ordinal as usize))?;
            Some(LiteralMatch { doc_id: self.id_at(ordinal as usize), count, lines })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(pattern: &str) -> RegexPlan {
        RegexSearch::new(pattern, false).unwrap().plan().clone()
    }

    fn lit(s: &str) -> RegexPlan {
        RegexPlan::Literal(s.as_bytes().to_vec(), false)
    }

    fn any_case(s: &str) -> RegexPlan {
        RegexPlan::Literal(s.as_bytes().to_vec(), true)
    }

    #[test]
    fn literals_alternations_and_classes_become_required_strings() {
        assert_eq!(plan("ECONNREFUSED"), lit("ECONNREFUSED"));
        assert_eq!(plan("ECONN(REFUSED|RESET)"), RegexPlan::or(vec![lit("ECONNREFUSED"), lit("ECONNRESET")]));
        assert_eq!(plan("retry_[0-9]"), RegexPlan::or((0..10).map(|d| lit(&format!("retry_{d}"))).collect()));
        // A large class breaks the string; the parts on either side are each required.
        assert_eq!(plan(r"parse\w+Config"), RegexPlan::and(vec![lit("parse"), lit("Config")]));
        assert_eq!(plan("fo+bar"), RegexPlan::and(vec![lit("f"), lit("o"), lit("bar")]));
    }

    #[test]
    fn what_may_match_little_requires_nothing() {
        assert!(!plan("a*").prunes());
        assert!(!plan(".").prunes());
        assert!(!plan("ab|cdef").prunes(), "one branch too short to require a trigram");
        assert!(!plan(r"\w+").prunes());
        assert_eq!(plan("(?i)timeout"), any_case("timeout"));
        assert_eq!(RegexSearch::new("TimeOut", true).unwrap().plan(), &any_case("timeout"));
        // Case-insensitive in part: the whole string is matched in any case.
        assert_eq!(plan("time(?i:out)"), any_case("timeout"));
        // The Kelvin sign is a case of k: not an ASCII pair, so it stays a string of its own.
        assert_eq!(plan("(?i)kit"), RegexPlan::or(vec![any_case("kit"), any_case("\u{212A}it")]));
    }

    #[test]
    fn bad_patterns_are_one_sentence_errors() {
        for bad in ["(", "a{99999999}", ""] {
            let Err(Error::InvalidArgument(message)) = RegexSearch::new(bad, false) else { panic!("{bad} accepted") };
            assert!(!message.contains('\n'), "{message}");
        }
        assert!(RegexSearch::new(&"a".repeat(MAX_PATTERN_BYTES + 1), false).is_err());
        // Large but legal: bounded by the automaton limit, refused rather than built.
        assert!(RegexSearch::new(r"\w{1000}\w{1000}\w{1000}", false).is_err());
    }

    #[test]
    fn matches_and_lines_agree_with_a_scan_of_every_document() {
        let docs: Vec<(u32, Vec<u8>)> = vec![
            (3, b"let e = ECONNREFUSED;\nretry(e)\n".to_vec()),
            (7, b"ECONNRESET here\nand ECONNRESET there ECONNREFUSED\n".to_vec()),
            (9, b"nothing to see\n".to_vec()),
            (11, b"econnrefused in lower case\n".to_vec()),
        ];
        let (index, _) = TrigramIndex::build(docs.clone()).unwrap();
        for (pattern, ci) in [("ECONN(REFUSED|RESET)", false), ("(?i)econnrefused", false), ("econnrefused", true),
                              (r"^\w+ ", false), ("e.*e", false), ("ECONN[A-Z]+D", false)] {
            let search = RegexSearch::new(pattern, ci).unwrap();
            let found = index.search_regex(&search).unwrap();
            let expected: Vec<LiteralMatch> = docs
                .iter()
                .filter_map(|(id, bytes)| {
                    let (count, lines) = search.count_with_lines(bytes)?;
                    Some(LiteralMatch { doc_id: *id, count, lines })
                })
                .collect();
            assert_eq!(found, expected, "{pattern}");
        }
        let search = RegexSearch::new("ECONN(REFUSED|RESET)", false).unwrap();
        let found = index.search_regex(&search).unwrap();
        assert_eq!(found.iter().map(|m| (m.doc_id, m.count, m.lines.clone())).collect::<Vec<_>>(),
                   vec![(3, 1, vec![1]), (7, 3, vec![1, 2])]);
    }
}
