"""The structural modality: definitions found by name in the symbol table.

Only definitions are returned (a function, class, type, constant... as the parser recorded it),
each as the chunk that holds the first line of its definition. A symbol matches in one of the
symbol table's four tiers (`maguyva.index.symbols`: exact, case-insensitive, name words, question
words), and every match of a higher tier ranks above every match of a lower one.

What the query is about (its subject) comes from the classifier when it extracted one; otherwise
identifier-like tokens of the text (camelCase, snake_case, qualified, ALL_CAPS, a capitalised
word inside a sentence, or the whole query when it is one token) serve as subjects.

A kind keyword ("class X", "def X", "interface X"...; `KIND_KEYWORDS`, `KIND_FAMILIES`)
restricts results to that family of kinds. When the name matches only symbols of other kinds
("class parse_config" and parse_config is a function), or nothing of the family matches at all,
nothing is filtered: the name is a better answer than an empty list. Among equal matches the
order is: the exact kind asked for (or, with none asked for, a type or callable over a variable
or field), then code over tests and over vendored or generated files, then the more depended-on
symbol (in-degree, then centrality), then the shorter qualified name, then file path and line.

A candidate's score is its tier's base (3, 2, 1, 0 for tiers 1 to 4) plus a fraction below 1 for
how well it matches within the tier, kept non-increasing down the list.
"""

from __future__ import annotations

from collections.abc import Container

import numpy as np

from maguyva import config
from maguyva.index.reader import IndexReader
from maguyva.index.symbols import (
    CASELESS,
    EXACT,
    NAME_WORDS,
    QUESTION_WORDS,
    SymbolTable,
    kind_preference,
    symbol_table,
)
from maguyva.lexicon import (
    KIND_FAMILIES,
    KIND_KEYWORDS,
    NOISE_WORDS,
    STOPWORDS,
    identifiers,
    looks_like_code,
    normalize_qualified,
    split_identifier,
    stem,
    words,
)
from maguyva.query.retrievers.base import Candidate, Query

#: Tiers are a unit apart, and the share of the unit within a tier (`config.STRUCTURAL_FRACTION`)
#: is below 1, so a tier's best stays below the next tier's base.
_TIER_BASE = {EXACT: 3.0, CASELESS: 2.0, NAME_WORDS: 1.0, QUESTION_WORDS: 0.0}
_TIER_BASES = np.array([_TIER_BASE.get(tier, np.nan) for tier in range(max(_TIER_BASE) + 1)])




class StructuralRetriever:
    """Definitions by exact, case-insensitive and word-wise name, then by question words."""

    name = "structural"

    def retrieve(self, reader: IndexReader, query: Query, limit: int) -> list[Candidate]:
        if limit <= 0:
            return []
        table = symbol_table(reader)
        if not table.count:
            return []
        classification = query.classification
        kind = KIND_KEYWORDS.get((classification.kind or "").strip().lower())
        family = KIND_FAMILIES[kind] if kind is not None else None
        subjects, subject_words, question = _read_query(query.text, classification.subject, kind is not None)

        # Each tier runs only while the tiers above it leave room in the list. The kind filters
        # strictly unless the best names found are all of other kinds ("class parse_config" when
        # parse_config is a function): then it only orders them. A filter restricts the symbols
        # before each tier counts or ranks them, so that a tier's best are the best inside it.
        within = table.within(query.allowed) if query.allowed is not None else None
        matches: dict[int, tuple[int, float]] = {}
        for subject in subjects:
            table.match_name(subject, matches)
        if within is not None:
            matches = {s: m for s, m in matches.items() if within[s]}
        strict = _strict(table, matches, family)
        if _chunk_count(table, matches, family if strict else None) < limit:
            shortlist = limit * 4 + 16
            for group in subject_words:
                table.match_words(group, kind, matches, shortlist, within)
            if not any(tier < NAME_WORDS for tier, _ in matches.values()):
                strict = _strict(table, matches, family)
            if question and _chunk_count(table, matches, family if strict else None) < limit:
                for symbol, quality in table.words().score(question, family if strict else None, limit * 2 + 8, within):
                    matches.setdefault(symbol, (QUESTION_WORDS, quality))
        return _rank(table, matches, kind, strict, limit)


def _strict(table: SymbolTable, matches: dict[int, tuple[int, float]], family: frozenset[str] | None) -> bool:
    """Whether the kind filters the matches: it does unless they are all of other kinds."""
    if family is None:
        return False
    kinds = table.kind
    return not matches or any(kinds[s] in family for s in matches)


def _chunk_count(table: SymbolTable, matches: dict[int, tuple[int, float]], family: frozenset[str] | None) -> int:
    """How many chunks the matches fill, counting only symbols of `family` when given."""
    chunks = table.chunk
    if family is not None:
        kinds = table.kind
        return len({chunks[s] for s in matches if kinds[s] in family})
    return len({chunks[s] for s in matches})


def _read_query(text: str, subject: str | None, has_kind: bool) -> tuple[list[str], list[list[str]], list[str]]:
    """(names to look up, word groups that must all be in a name, question words) of a query."""
    body = text.strip()
    leading = body.split()
    if len(leading) >= 2 and leading[0].lower() in KIND_KEYWORDS and (has_kind or len(leading) == 2):
        # "class Session", "def parse_config": the keyword is not part of what is asked about.
        body = body.split(None, 1)[1]
    subject = (subject or "").strip()
    if subject:
        names = [t for t in identifiers(subject) if looks_like_code(t)] if " " in subject else [subject]
    else:
        tokens = identifiers(body)
        names = tokens if len(tokens) == 1 else []
        if len(tokens) > 1:
            for position, token in enumerate(tokens):
                capitalised = position > 0 and token[:1].isupper() and token.lower() not in STOPWORDS
                if looks_like_code(token) or capitalised:
                    names.append(token)
    names = [n for n in dict.fromkeys(normalize_qualified(n) for n in names) if n][:config.current().STRUCTURAL_MAX_NAMES]

    content = _content_words(body, KIND_KEYWORDS if has_kind else frozenset())
    groups: list[list[str]] = []
    if " " in subject:
        groups.append(_content_words(subject))
    for name in names:
        groups.append(_stems(name.rsplit(".", 1)[-1]))
    if not names and 0 < len(content) <= 4 and sum(w in STOPWORDS for w in words(body)) <= 1:
        # A few words, no identifier and hardly a sentence ("parse config", "json serialization"):
        # perhaps a name written as words. "how are cookies persisted" is a question instead.
        groups.append(content)
    groups = [g for g in groups if g]
    question = list(dict.fromkeys(content + [w for name in names for w in _stems(name)]))[:config.current().STRUCTURAL_MAX_QUESTION_WORDS]
    return names, groups, question


def _content_words(text: str, also_drop: Container[str] = frozenset()) -> list[str]:
    """Stemmed words of `text` without stopwords, search-describing words and `also_drop`
    (kind words, when the kind is a filter already), in order."""
    found = [
        w for w in dict.fromkeys(words(text)) if w not in STOPWORDS and w not in NOISE_WORDS and w not in also_drop
    ]
    return list(dict.fromkeys(stem(w) for w in found))


def _stems(name: str) -> list[str]:
    return list(dict.fromkeys(stem(w) for w in split_identifier(name)))


def _rank(
    table: SymbolTable, matches: dict[int, tuple[int, float]], kind: str | None, strict: bool, limit: int
) -> list[Candidate]:
    """The best `limit` chunks of the matched symbols, in the documented order; with `strict`,
    only symbols of the kind's family."""
    if not matches:
        return []
    symbols = list(matches)
    family = KIND_FAMILIES[kind] if kind is not None else None
    kinds = table.kind
    if family is not None and strict:
        symbols = [s for s in symbols if kinds[s] in family] or symbols
    preference = {k: kind_preference(kind, family, k) for k in {kinds[s] for s in symbols}}
    tuning = config.current()
    # The documented order: tier, then quality, kind preference and the table's tie-break, sorted
    # in one numpy call (a Python key per symbol cost more than the rest of the retriever).
    ids = np.asarray(symbols, dtype=np.int64)
    tier_of, quality_of = zip(*map(matches.__getitem__, symbols))
    tiers = np.asarray(tier_of, dtype=np.int64)
    qualities = np.asarray(quality_of, dtype=np.float64)
    preference_of_code = np.zeros(len(table.kind_codes))
    for name, value in preference.items():
        preference_of_code[table.kind_codes[name]] = value
    kind_codes = table.kind_code[ids]
    order = np.lexsort((table.tie_break_array[ids], -preference_of_code[kind_codes], -qualities, tiers))
    # Each chunk once, where its best symbol puts it; symbols outside every chunk are left out.
    chunks = table.chunk_array[ids[order]]
    placed = np.flatnonzero(chunks >= 0)
    _, first = np.unique(chunks[placed], return_index=True)
    picked = placed[np.sort(first)][:limit]  # positions in `order`
    kept = order[picked]
    chosen = ids[kept]
    in_degree = table.in_degree[chosen]
    # Term by term in the formula's order: floating-point sums depend on it.
    within = (
        tuning.STRUCTURAL_WEIGHT_MATCH * qualities[kept] + tuning.STRUCTURAL_WEIGHT_KIND * preference_of_code[kind_codes[kept]]
        + tuning.STRUCTURAL_WEIGHT_PRIMARY * table.primary[chosen]
        + tuning.STRUCTURAL_WEIGHT_DEGREE * in_degree / (in_degree + tuning.STRUCTURAL_DEGREE_HALF)
    )  # fmt: skip
    # Non-increasing down the list: a lower tier's best never passes a higher one's last.
    scores = np.minimum.accumulate(_TIER_BASES[tiers[kept]] + tuning.STRUCTURAL_FRACTION * within)
    return [Candidate(chunk, score) for chunk, score in zip(chunks[picked].tolist(), scores.tolist())]


