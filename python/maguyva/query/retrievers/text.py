"""The text modality: query terms counted exactly through the trigram index, ranked by BM25.

Trigrams find the candidate files, the index verifies each term against the real bytes, and
BM25 turns the verified counts into a ranking: rare terms weigh more than common ones, repeated
matches saturate, and long files do not win by size alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from maguyva._core import TrigramIndex

# BM25's usual constants: k1 sets how fast repeated matches saturate, b how much length counts.
K1 = 1.2
B = 0.75

#: Words too common in questions to say anything about code.
STOPWORDS = frozenset(
    """a an and are as at be by does do for from how i in is it of on or that the this to was
    what when where which who why with""".split()
)

_WORD = re.compile(r"[A-Za-z0-9_$]+|[^\sA-Za-z0-9_$]{3,}")


def query_terms(query: str) -> list[str]:
    """Distinct terms of a query, in order: a quoted phrase stays whole, words are split out,
    stopwords are dropped (unless nothing else is left)."""
    phrases = re.findall(r'"([^"]+)"', query)
    rest = re.sub(r'"[^"]*"', " ", query)
    words = _WORD.findall(rest)
    kept = [w for w in words if w.lower() not in STOPWORDS] or words
    seen: dict[str, None] = {}
    for term in [*phrases, *kept]:
        seen.setdefault(term.lower(), None)
    return list(seen)


@dataclass(frozen=True)
class TextHit:
    """A file the text modality found, with its BM25 score."""

    doc_id: int
    score: float


def bm25_rank(index: TrigramIndex, terms: list[str], top_k: int) -> list[TextHit]:
    """The `top_k` documents by BM25 over ASCII-case-insensitive verified term counts."""
    if not terms or index.doc_count == 0:
        return []
    doc_ids, counts = index.count_terms(terms, case_insensitive=True)
    if len(doc_ids) == 0:
        return []
    n_docs = index.doc_count
    document_frequency = (counts > 0).sum(axis=0)
    idf = np.log1p((n_docs - document_frequency + 0.5) / (document_frequency + 0.5))
    lengths = np.array([index.doc_len(int(d)) for d in doc_ids], dtype=np.float64)
    average_length = index.content_bytes / n_docs
    tf = counts.astype(np.float64)
    norm = K1 * (1 - B + B * lengths / average_length)
    scores = (idf * tf * (K1 + 1) / (tf + norm[:, None])).sum(axis=1)
    order = np.lexsort((doc_ids, -scores))[:top_k]
    return [TextHit(int(doc_ids[i]), float(scores[i])) for i in order]


def matching_lines(index: TrigramIndex, doc_ids: list[int], terms: list[str]) -> dict[int, list[int]]:
    """For each of `doc_ids`, the 1-based lines where any term occurs (case-insensitive)."""
    wanted = set(doc_ids)
    lines: dict[int, set[int]] = {d: set() for d in doc_ids}
    for term in terms:
        matches = index.search(term, case_insensitive=True)
        for i, doc_id in enumerate(matches.doc_ids.tolist()):
            if doc_id in wanted:
                lines[doc_id].update(matches.lines_of(i).tolist())
    return {d: sorted(found) for d, found in lines.items()}
