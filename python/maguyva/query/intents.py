"""The numbers that decide how a question is answered, as data.

Everything here is part of the product's design (SPEC §2 and §3): the six intents, the weight
each intent gives to each retrieval modality, the classifier's rules with their confidences, the
search presets, the confidence above which a query skips fusion and the longest query answered.
Code elsewhere reads these tables; it does not repeat the numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

FIND_DEFINITION = "find_definition"
FIND_REFERENCES = "find_references"
UNDERSTAND_CODE = "understand_code"
FIND_SIMILAR = "find_similar"
IMPACT_ANALYSIS = "impact_analysis"
EXACT_MATCH = "exact_match"

#: The six intents, in the order of SPEC §2's weight table.
INTENTS: tuple[str, ...] = (
    FIND_DEFINITION,
    FIND_REFERENCES,
    UNDERSTAND_CODE,
    FIND_SIMILAR,
    IMPACT_ANALYSIS,
    EXACT_MATCH,
)

#: The four retrieval modalities.
MODALITIES: tuple[str, ...] = ("semantic", "text", "structural", "graph")


def _profile(semantic: float, text: float, structural: float, graph: float) -> Mapping[str, float]:
    return MappingProxyType({"semantic": semantic, "text": text, "structural": structural, "graph": graph})


#: intent -> modality -> weight. A modality of weight 0 is not run at all for that intent.
WEIGHTS: Mapping[str, Mapping[str, float]] = MappingProxyType(
    {
        FIND_DEFINITION: _profile(0.2, 0.1, 0.6, 0.1),
        FIND_REFERENCES: _profile(0.1, 0.2, 0.2, 0.5),
        UNDERSTAND_CODE: _profile(0.5, 0.2, 0.2, 0.1),
        FIND_SIMILAR: _profile(0.4, 0.3, 0.2, 0.1),
        IMPACT_ANALYSIS: _profile(0.1, 0.1, 0.1, 0.7),
        EXACT_MATCH: _profile(0.0, 0.9, 0.1, 0.0),
    }
)


#: Intents whose fused results keep only the best chunk of each file (SPEC §4). Their answer is
#: a place to read, and several chunks of one file would crowd out other files. The answer to a
#: references, impact or exact-match question is each call site or matching line: two callers in
#: one file are two answers, so those intents rank chunks, not files.
ONE_RESULT_PER_FILE: frozenset[str] = frozenset({FIND_DEFINITION, UNDERSTAND_CODE, FIND_SIMILAR})

#: Intents whose answer is finer than a chunk, and the modality that finds it: each calling
#: function of a reference or a dependant (graph), each line holding an exact string (text). A
#: result chunk holding several such answers is shown as one result per answer.
ANSWER_SPAN_MODALITY: Mapping[str, str] = MappingProxyType(
    {FIND_REFERENCES: "graph", IMPACT_ANALYSIS: "graph", EXACT_MATCH: "text"}
)


@dataclass(frozen=True, slots=True)
class Rule:
    """One heuristic of the intent classifier and what a match means."""

    #: Stable short name, reported with every classification ("definition_keyword", ...).
    name: str
    intent: str
    confidence: float
    #: The rule's row in SPEC §2's ordered table; 0 for the rules the table does not number (the
    #: find_similar rules and the definition phrase; `maguyva.query.classify` says where they sit
    #: and why).
    spec_row: int


#: The classifier's rules in the order they are tried; the first that matches wins.
RULES: tuple[Rule, ...] = (
    # A pasted block of code. Tried first: a snippet is full of keywords, quotes, exception names
    # and identifiers that would trip every rule below it.
    Rule("snippet", FIND_SIMILAR, 0.80, 0),
    Rule("definition_keyword", FIND_DEFINITION, 0.95, 1),
    Rule("references_phrase", FIND_REFERENCES, 0.90, 2),
    Rule("impact_phrase", IMPACT_ANALYSIS, 0.90, 3),
    # "where is X defined", "definition of X": asks for a definition as plainly as rule 1's
    # declarations do, and as plainly as "where is X used" asks for references (0.90). SPEC's
    # table has no row for it (its rule 5 covers names alone, at 0.60-0.80). Before the
    # error-token rule: "where is ParseError defined" asks where it is defined, not where it is
    # raised.
    Rule("definition_phrase", FIND_DEFINITION, 0.90, 0),
    # "similar to X", "code like this": after the reference and impact phrases, before the quoted
    # string and identifier rules, because the thing compared against is usually quoted or named.
    Rule("similar_phrase", FIND_SIMILAR, 0.80, 0),
    # A crash line first: in `panic: "index out of range"` the quoted message is part of the
    # crash, and the exception or panic named is what to look for.
    Rule("error_token", EXACT_MATCH, 0.85, 4),
    Rule("quoted_string", EXACT_MATCH, 0.90, 4),
    Rule("literal_phrase", EXACT_MATCH, 0.85, 4),
    # The query is an identifier, possibly wrapped ("find X", "show me the X class"), or one word.
    Rule("identifier", FIND_DEFINITION, 0.80, 5),
    # An identifier inside a longer sentence: likely, but the sentence may be asking something else.
    Rule("identifier_in_sentence", FIND_DEFINITION, 0.60, 5),
    Rule("explanation_word", UNDERSTAND_CODE, 0.75, 6),
    Rule("fallback", UNDERSTAND_CODE, 0.40, 7),
    # Not tried in turn: it re-reads a match of the rules in TASK_SPAN_RULES when the query is a
    # task description ("fix race when `flush` runs during shutdown"). The quoted or named span
    # is then a hint about where to look, kept as the subject, not the whole question; SPEC's
    # rules were written for short questions, which keep their intents.
    Rule("task_description", UNDERSTAND_CODE, 0.50, 0),
)

#: The rules a task description overrides: a quoted string. Measured on the mined commit
#: subjects (benches/README.md, "Task descriptions"): read as tasks, quoted strings gain +0.29
#: NDCG@10. A name inside a sentence loses 0.011 (its fused find_definition answer already names
#: places to read) and keeps its rule; so do the references phrases ("call sites of X in the
#: client" is asked as often as written as a task), the literal phrase ("grep for X" asks for the
#: string) and error tokens (a pasted message is searched as written).
TASK_SPAN_RULES: frozenset[str] = frozenset({"quoted_string"})
#: A task description has at least this many words besides its quoted span, and is a
#: statement, not a question or a search (no leading question word or "find", no question
#: mark). On the commit subjects every count from 1 gains (chosen out of fold, 5 folds by
#: repository, the folds pick 1 or 2); no measured set holds short quoted questions of one or
#: two words besides the literal, which the data therefore cannot weigh, so 3 keeps SPEC's short
#: forms ('"Invalid token" errors') as they were.
TASK_MIN_WORDS = 3

#: Rule name -> rule.
RULES_BY_NAME: Mapping[str, Rule] = MappingProxyType({rule.name: rule for rule in RULES})

#: A classification at least this confident (and an ordinary query) goes straight to the
#: intent's dominant modality instead of being fused. The find_similar rules stay below it on
#: purpose: "code like this" is best answered by several modalities agreeing.
DIRECT_CONFIDENCE = 0.85


@dataclass(frozen=True, slots=True)
class Preset:
    """A search preset: which modalities may run, and the RRF constant that merges them."""

    name: str
    #: Modalities that may run, in SPEC order; an intent's zero-weight modalities are skipped.
    modalities: tuple[str, ...]
    #: The k of weighted Reciprocal Rank Fusion; None when the preset never fuses.
    rrf_k: int | None


#: Preset name -> preset. "quick" runs the semantic modality alone and never fuses.
PRESETS: Mapping[str, Preset] = MappingProxyType(
    {
        "quick": Preset("quick", ("semantic",), None),
        "default": Preset("default", ("semantic", "text", "structural"), 40),
        "thorough": Preset("thorough", ("semantic", "text", "structural", "graph"), 60),
    }
)


#: The longest query answered, in characters (code points, as Python's `len` and JSON Schema's
#: `maxLength` count them). Questions, names and literals are short: the longest of the labelled
#: and benchmark query sets has 176 characters. A task description, a pasted stack trace or a
#: snippet of a hundred-odd lines fits with room to spare (`find_related` pastes at most 2,000).
#: Longer text is a file pasted whole or a runaway string: the modalities read only its first
#: names and words usefully, yet each of them costs time in proportion to it. Every surface
#: refuses it with one sentence: `Index.search` (and so `maguyva search`) before classifying it,
#: the MCP tools before touching an index. Up to the limit the cost is linear in the length; a
#: query of 10,000 characters takes 10 to 130 ms over a small index (benches/query_inputs.py).
MAX_QUERY_CHARS = 10_000
