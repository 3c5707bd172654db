"""Deciding how a query is answered: one modality directly, or several fused by RRF.

Direct route: when the classifier is confident (>= DIRECT_CONFIDENCE) and the query is
*ordinary*, only the intent's dominant modality runs. A query is ordinary when it is one line of
at most config.ORDINARY_MAX_CHARS characters and the classifier pulled out what it is about (the symbol
of a definition, reference or impact question; the literal of an exact-match one): then the
dominant modality has exactly what it needs, and running the others would only dilute it.
The quick preset always runs the semantic modality alone.

Fused route: every modality of the preset whose weight for the intent is above zero runs (a
modality of weight 0 is not run at all: an exact-match query never calls the embedder), and the
ranked lists are merged by weighted RRF with the preset's k.
"""

from __future__ import annotations

from dataclasses import dataclass

from maguyva import config
from maguyva.errors import QueryError
from maguyva.query.classify import REGEX_RULE, Classification
from maguyva.query.intents import (
    DIRECT_CONFIDENCE,
    EXACT_MATCH,
    FIND_REFERENCES,
    IMPACT_ANALYSIS,
    PRESETS,
    WEIGHTS,
)
from maguyva.query.retrievers.base import Query


@dataclass(frozen=True, slots=True)
class Plan:
    """Which modalities run, with which weights, and how their lists are merged."""

    strategy: str  # "direct" or "rrf"
    modalities: tuple[tuple[str, float], ...]
    rrf_k: int


def is_ordinary(query: str, classification: Classification) -> bool:
    return "\n" not in query.strip() and len(query) <= config.current().ORDINARY_MAX_CHARS and bool(classification.subject)


def plan(query: str, classification: Classification, preset: str) -> Plan:
    """The plan for `query` under `preset` ("quick", "default" or "thorough")."""
    if preset not in PRESETS:
        raise QueryError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    chosen = PRESETS[preset]
    weights = WEIGHTS[classification.intent]
    default_k = PRESETS["default"].rrf_k or 40
    if preset == "quick":
        return Plan("direct", (("semantic", 1.0),), default_k)
    if classification.confidence >= DIRECT_CONFIDENCE and is_ordinary(query, classification):
        dominant = max(weights, key=lambda m: weights[m])
        return Plan("direct", ((dominant, weights[dominant]),), chosen.rrf_k or default_k)
    return fused(classification, preset)


def fused(classification: Classification, preset: str) -> Plan:
    """The fused plan: the preset's modalities that the intent weighs above zero."""
    chosen = PRESETS[preset]
    weights = WEIGHTS[classification.intent]
    modalities = tuple((m, weights[m]) for m in chosen.modalities if weights[m] > 0)
    return Plan("rrf", modalities, chosen.rrf_k or PRESETS["default"].rrf_k or 40)


def request(text: str, classification: Classification, preset: str = "default") -> Query:
    """The question as the retrievers are told it: an exact-string question's literal, answered
    line by line; a reference or impact question's walk from its symbol and how deep it goes;
    in the quick preset, how much the semantic modality weighs the files' paths."""
    intent, subject = classification.intent, classification.subject
    walk_depth = None
    if intent in (FIND_REFERENCES, IMPACT_ANALYSIS) and subject:
        walk_depth = 1 if intent == FIND_REFERENCES else config.current().IMPACT_DEPTH
    path_weight = config.current().QUICK_PATH_WEIGHT if preset == "quick" else 0.0
    if classification.rule == REGEX_RULE:
        return Query(text, classification, pattern=subject, line_spans=True, path_weight=path_weight)
    return Query(
        text,
        classification,
        literal=subject if intent == EXACT_MATCH and subject else None,
        line_spans=intent == EXACT_MATCH,
        walk_depth=walk_depth,
        path_weight=path_weight,
    )
