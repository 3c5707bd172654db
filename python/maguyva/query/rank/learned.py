"""The rank stage: each fused candidate described by named features, scored by learned weights.

The post-fusion signals of `rerank` are hand-set numbers combined one way: bonuses in units of
the best fused score, added, then demotion factors multiplied in. Here the same facts, and a few
more, are the columns of a feature matrix (one row per candidate), and a linear model learned
from annotated questions weighs them (`RankModel`, shipped as `ranker.json`, trained by
benches/ranker.py with repository folds). A linear score keeps every result's explanation exact:
each feature's weight times its value, summed.

The feature values are in units of the best fused score where they are scores, so weights mean
the same whatever RRF's k and the modality weights produced. Each demotion appears twice: as a
flag, and as the flag times the candidate's hand-set sum of bonuses, which is how a factor acts
(`score * 0.3` is `score - 0.7 * score`); with weights 1 on the bonuses and factor - 1 on the
products, the model reproduces the hand-set ranking, and that is where training starts from.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from importlib import resources
from itertools import repeat
from operator import attrgetter, is_not
from pathlib import Path

import numpy as np

from maguyva import config
from maguyva.arrays import distinct
from maguyva.errors import RankModelError
from maguyva.index import roles
from maguyva.index.graph import EDGE_KINDS
from maguyva.index.reader import IndexReader, per_layout, per_reader
from maguyva.lexicon import BODY_KINDS, CONTRACT_KINDS, coverage_words, split_identifier
from maguyva.query.classify import Classification
from maguyva.query.intents import MODALITIES
from maguyva.query.rank.signals import (
    DEMOTIONS,
    Adjustment,
    FusedParts,
    _heads,
    _name_words,
    agrees,
    matched_words,
    path_vocabulary,
    path_words,
    question_words,
)
from maguyva.query.retrievers.base import Candidate

#: The version of the feature layout; a model trained on another layout is refused.
FEATURES_VERSION = 5

_BONUSES = ("definition", "path", "file_name", "coherence", "agreement")
_BONUS_VALUES = attrgetter(*_BONUSES)

#: The named features, in column order.
FEATURES: tuple[str, ...] = (
    "fused",
    *(f"{m}_contribution" for m in MODALITIES),
    *(f"{m}_score" for m in MODALITIES),
    *_BONUSES,
    *DEMOTIONS,
    *(f"{d}_x_score" for d in DEMOTIONS),
    "test_file",
    "no_language",
    "file_share",
    "file_candidates",
    "first_chunk",
    "chunk_lines",
    "centrality",
    "imported_by",
    "path_depth",
    "deep_path_share",
    "index_file",
    "no_definitions",
    "type_stub",
    "file_chunks",
    "hit_density",
    "has_symbol",
    "symbol_agreement",
    "interface_only",
    "code_coverage",
)
_COLUMN = {name: i for i, name in enumerate(FEATURES)}

#: Question groups with weights of their own: a bare name, a sentence about a task or naming
#: code, and the rest (explanations, similar code).
GROUPS: tuple[str, ...] = ("name", "sentence", "explanation")
_NAME_RULES = frozenset({"definition_keyword", "definition_phrase", "identifier"})


def group_of(classification: Classification) -> str:
    """Which weights answer a question of this classification."""
    if classification.rule in _NAME_RULES and classification.subject:
        return "name"
    if classification.rule in ("task_description", "identifier_in_sentence"):
        return "sentence"
    return "explanation"


#: Files that stand for their folder: a package's or module's index, mostly re-exports.
_INDEX_FILES = frozenset(
    {"__init__.py", "mod.rs", "index.js", "index.ts", "index.mjs", "index.jsx", "index.tsx", "package-info.java"}
)
_STUB_SUFFIXES = (".d.ts", ".pyi")


def deep_path_words(path: str) -> frozenset[str]:
    """`path_words` and the words of the config.DEEP_FOLDERS folders holding the file: code is filed
    under what it is two or three levels up too (`core/cache/backends/base.py` is caching)."""
    return _deep_path_words(path, config.current().DEEP_FOLDERS)


@lru_cache(maxsize=65536)
def _deep_path_words(path: str, depth: int) -> frozenset[str]:
    folders = path.split("/")[:-1][-depth:] if depth else []
    words = set(path_words(path))
    for folder in folders:
        words.add(folder.lower())
        words.update(p.lower() for p in split_identifier(folder))
    return frozenset(w for w in words if w)


def deep_path_shares(reader: IndexReader, query: str, name: bool, file_ids: np.ndarray) -> np.ndarray:
    """Per file of `file_ids`: the share of the question's words its deep path agrees with,
    each word weighed by how rare it is on the index's paths (log of 1 / share of files)."""
    words = sorted(question_words(query, name_parts=name))
    out = np.zeros(len(file_ids))
    if not words:
        return out
    vocabulary = path_vocabulary(reader)
    files = len(reader.files) or 1
    weight = {w: math.log((files + 1) / (vocabulary.share(w) * files + 1)) for w in words}
    total = sum(weight.values())
    if not total:
        return out
    unique, inverse = np.unique(file_ids, return_inverse=True)
    heads = {w[:3] for w in words}
    shares = np.zeros(len(unique))
    for i, f in enumerate(unique.tolist()):
        on = deep_path_words(reader.files[f].path)
        # Agreeing words share their first three letters: most paths are ruled out here.
        if heads.isdisjoint(_heads(on)):
            continue
        shares[i] = sum(weight[w] for w in matched_words(words, on)) / total
    return shares[inverse]


@per_reader
def file_facts(reader: IndexReader) -> FileFacts:
    return FileFacts(reader)


@per_layout
def _path_facts(reader: IndexReader) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Of each file's path and language alone (so kept while an edit leaves them as they are):
    whether it has no language, its depth in folders (up to 8, over 8), whether it is an index
    file, whether it is a type stub. Read-only: generations share them."""
    files = reader.files
    names = [f.path.rpartition("/")[2] for f in files]
    facts = (
        np.fromiter((f.language is None for f in files), dtype=np.float64, count=len(files)),
        np.fromiter((min(f.path.count("/"), 8) / 8 for f in files), dtype=np.float64, count=len(files)),
        np.fromiter((n in _INDEX_FILES for n in names), dtype=np.float64, count=len(files)),
        np.fromiter((n.endswith(_STUB_SUFFIXES) for n in names), dtype=np.float64, count=len(files)),
    )
    for values in facts:
        values.flags.writeable = False
    return facts


class FileFacts:
    """What the features need to know about each file of one index, worked out once."""

    def __init__(self, reader: IndexReader):
        files = reader.files
        self.test = ((reader.file_roles & roles.TEST) > 0).astype(np.float64)
        self.no_language, self.depth, self.index_file, self.type_stub = _path_facts(reader)
        # How many other files import each file (each importer once).
        edges = reader.edges
        between = (edges.kind == EDGE_KINDS.index("import")) & (edges.src < len(files)) & (edges.dst < len(files))
        between &= edges.src != edges.dst
        pairs = distinct(edges.dst[between] * max(len(files), 1) + edges.src[between])
        counts = np.bincount(pairs // max(len(files), 1), minlength=len(files)).astype(np.float64)
        most = counts.max() if len(counts) else 0.0
        # How many files import this one, on a log scale relative to the most imported.
        self.imported_by = np.log1p(counts) / math.log1p(most) if most else counts
        defining = np.zeros(len(files))
        contracts = np.zeros(len(files))
        bodies = np.zeros(len(files))
        owners = reader.symbol_array("file_id")
        kinds = reader.symbol_column("kind")
        contract = np.fromiter(map(CONTRACT_KINDS.__contains__, kinds), dtype=bool, count=len(kinds))
        body = np.fromiter(map(BODY_KINDS.__contains__, kinds), dtype=bool, count=len(kinds)) & ~contract
        defining[owners] = 1.0
        contracts[owners[contract]] = 1.0
        bodies[owners[body]] = 1.0
        # A file that declares an interface or trait and implements nothing outside it: it says
        # what a part of the code does, and its implementations say how.
        self.interface_only = contracts * (1.0 - bodies)
        # Code that defines nothing of its own: a module that gathers and re-exports others.
        self.no_definitions = (1.0 - defining) * (1.0 - self.no_language)
        self.chunks = np.diff(reader.file_chunk_offsets).astype(np.float64)


#: Each modality's candidates as arrays: chunk ids (int64) and the modality's own scores (float64).
Listed = Mapping[str, tuple[np.ndarray, np.ndarray]]


def chunk_ids(candidates: Sequence[Candidate]) -> np.ndarray:
    """The chunks of a modality's candidates, in its order, as int64."""
    return np.fromiter((c.chunk for c in candidates), dtype=np.int64, count=len(candidates))


def listed(found: Mapping[str, Sequence[Candidate]], chunks: Mapping[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """`found` (each modality's candidates, best first) as `Listed` arrays, with each
    modality's `chunk_ids` already worked out in `chunks`."""
    return {
        name: (chunks[name], np.fromiter((c.score for c in cands), dtype=np.float64, count=len(cands)))
        for name, cands in found.items()
    }


def score_unit(scored: Mapping[int, float]) -> float:
    """The unit of the score-like features: the best fused score (1 when there is none)."""
    return (max(scored.values()) if scored else 0.0) or 1.0


def features(
    reader: IndexReader,
    query: str,
    classification: Classification,
    candidates: Sequence[int],
    scored: Mapping[int, float],
    adjustments: Mapping[int, Adjustment],
    parts: FusedParts,
    modalities: Sequence[str],
    found: Listed,
    needed: frozenset[str] | None = None,
) -> np.ndarray:
    """The feature matrix (len(candidates), len(FEATURES)) of `candidates`, chunks of `reader`'s
    index: the chunks of `parts` (each one's contribution per modality, the columns named by
    `modalities`) in their order, then any brought by a signal. `scored` holds the fused scores,
    `adjustments` what the hand-set signals made of each candidate, `found` each modality's
    candidates with its own scores (`listed`). With `needed` (the features a model weighs), the costlier
    features it gives no weight are left 0."""
    n = len(candidates)
    x = np.zeros((n, len(FEATURES)))
    if not n:
        return x
    fused_count = len(parts.chunks)
    if list(candidates[:fused_count]) != parts.chunks.tolist():
        raise ValueError("the candidates must start with the fused chunks, in their order")
    chunk_ids = np.asarray(candidates, dtype=np.int64)
    best = score_unit(scored)
    # The fused chunks come first, with fusion's scores; a chunk a signal brought has none.
    fused = np.zeros(n)
    fused[:fused_count] = parts.scores
    fused /= best
    x[:, _COLUMN["fused"]] = fused
    contributions = np.asarray(parts.contributions, dtype=np.float64) / best
    for j, name in enumerate(modalities):
        x[:fused_count, _COLUMN[f"{name}_contribution"]] = contributions[:, j]
    adjusted = [adjustments[c] for c in candidates]
    bonuses = np.array(list(map(_BONUS_VALUES, adjusted))) / best
    x[:, [_COLUMN[name] for name in _BONUSES]] = bonuses
    bonus_sum = fused + bonuses.sum(axis=1)
    # Every demotion's flag set in one assignment (numpy's per-call cost dwarfs a row's).
    flag_rows: list[int] = []
    flag_columns: list[int] = []
    for i, a in enumerate(adjusted):
        for why, _ in a.demotions:
            flag_rows.append(i)
            flag_columns.append(_COLUMN[why])
    x[flag_rows, flag_columns] = 1.0
    for why in DEMOTIONS:
        x[:, _COLUMN[f"{why}_x_score"]] = x[:, _COLUMN[why]] * bonus_sum
    file_ids = reader.chunk_file[chunk_ids].astype(np.int64)
    facts = file_facts(reader)
    x[:, _COLUMN["test_file"]] = facts.test[file_ids]
    x[:, _COLUMN["no_language"]] = facts.no_language[file_ids]
    x[:, _COLUMN["path_depth"]] = facts.depth[file_ids]
    x[:, _COLUMN["imported_by"]] = facts.imported_by[file_ids]
    # How much of the fused evidence each candidate's file holds, and in how many chunks.
    files, group = np.unique(file_ids, return_inverse=True)
    sums = np.bincount(group, weights=fused, minlength=len(files))
    counts = np.bincount(group, minlength=len(files)).astype(np.float64)
    x[:, _COLUMN["file_share"]] = sums[group] / (sums.max() or 1.0)
    x[:, _COLUMN["file_candidates"]] = np.log1p(counts[group]) / math.log1p(counts.max())
    x[:, _COLUMN["first_chunk"]] = (reader.file_chunk_offsets[file_ids] == chunk_ids).astype(np.float64)
    x[:, _COLUMN["chunk_lines"]] = np.log2(1.0 + reader.chunk_lines[chunk_ids]) / 10.0
    x[:, _COLUMN["centrality"]] = reader.chunk_centrality[chunk_ids]
    x[:, _COLUMN["index_file"]] = facts.index_file[file_ids]
    x[:, _COLUMN["no_definitions"]] = facts.no_definitions[file_ids]
    x[:, _COLUMN["type_stub"]] = facts.type_stub[file_ids]
    x[:, _COLUMN["interface_only"]] = facts.interface_only[file_ids]
    in_file = facts.chunks[file_ids]
    x[:, _COLUMN["file_chunks"]] = np.log2(1.0 + in_file) / 10.0
    x[:, _COLUMN["hit_density"]] = counts[group] / np.maximum(in_file, 1.0)
    is_name = group_of(classification) == "name"
    if needed is None or "deep_path_share" in needed:
        x[:, _COLUMN["deep_path_share"]] = deep_path_shares(reader, query, is_name, file_ids)
    if needed is None or "code_coverage" in needed:
        x[:, _COLUMN["code_coverage"]] = code_coverages(reader, query, file_ids)
    chunk_evidence(x, reader, query, candidates, found, needed)
    return x


def code_coverages(reader: IndexReader, query: str, file_ids: np.ndarray) -> np.ndarray:
    """Per file of `file_ids`: how much of the question its code spells, relative to the
    candidate that spells the most. Each of the question's `coverage_words` weighs its rarity
    in the index's code (log of files over files that spell it); a file's coverage is the weight
    of the words its code spells. A task ("fix race when flush runs
    during shutdown") is answered by the file whose code has flush and shutdown in it, not by
    the files whose comments or tests talk about them."""
    out = np.zeros(len(file_ids))
    words = sorted(coverage_words(query))
    if not words or not len(file_ids):
        return out
    postings = list(reader.code_word_files(words).values())
    if not postings:
        return out
    files = len(reader.files)
    lengths = np.fromiter(map(len, postings), dtype=np.int64, count=len(postings))
    weights = np.log((files + 1) / (lengths + 0.5))
    if int(lengths.sum()) + files <= config.current().CODE_COVERAGE_PASS_ENTRIES * len(file_ids):
        covered = np.bincount(np.concatenate(postings), weights=np.repeat(weights, lengths), minlength=files)[file_ids]
    else:
        covered = np.zeros(len(file_ids))
        for spelled_by, weight in zip(postings, weights.tolist()):
            # Which candidates' files the word's ascending posting holds.
            found = spelled_by[np.minimum(np.searchsorted(spelled_by, file_ids), len(spelled_by) - 1)] == file_ids
            covered += weight * found
    best = covered.max()
    if best <= 0:
        return out
    shares: np.ndarray = covered / best
    return shares


#: The features that tell a file's chunks apart (and are filled in by `chunk_evidence`).
CHUNK_EVIDENCE: frozenset[str] = frozenset({*(f"{m}_score" for m in MODALITIES), "has_symbol", "symbol_agreement"})


def chunk_evidence(
    x: np.ndarray,
    reader: IndexReader,
    query: str,
    candidates: Sequence[int],
    found: Listed,
    needed: frozenset[str] | None = None,
    rows: np.ndarray | None = None,
) -> None:
    """Fill in, in place, the features of `CHUNK_EVIDENCE` (those of `needed`) for the rows
    `rows` of `x` (None: all of them): each modality's own score, from 0 for its weakest
    candidate to 1 for its best (how close a candidate came to the best, which ranks alone do
    not say), and the name a chunk defines. The choice within a file needs them only for the
    files a result shows."""
    wanted = CHUNK_EVIDENCE if needed is None else CHUNK_EVIDENCE & needed
    if not wanted or not len(candidates):
        return
    candidate_ids = np.asarray(candidates, dtype=np.int64)
    by_chunk = np.argsort(candidate_ids, kind="stable")
    sorted_ids = candidate_ids[by_chunk]
    selected = None
    if rows is not None:
        selected = np.zeros(len(candidates), dtype=bool)
        selected[rows] = True
    for name, (chunks, values) in found.items():
        if not len(chunks) or f"{name}_score" not in wanted:
            continue
        low, span = values.min(), float(np.ptp(values))
        # Each listed chunk's row among the candidates (a candidate is listed once per modality).
        slot = np.minimum(np.searchsorted(sorted_ids, chunks), len(sorted_ids) - 1)
        keep = sorted_ids[slot] == chunks
        at = by_chunk[slot[keep]]
        values = values[keep]
        if selected is not None:
            chosen = selected[at]
            at, values = at[chosen], values[chosen]
        x[at, _COLUMN[f"{name}_score"]] = (values - low) / span if span else 1.0
    if {"has_symbol", "symbol_agreement"} & wanted:
        at = np.arange(len(candidates)) if rows is None else np.asarray(rows, dtype=np.int64)
        chunks = np.asarray(candidates, dtype=np.int64)[at]
        names = defined_names(reader)
        x[at, _COLUMN["has_symbol"]] = names.named[chunks]
        x[at, _COLUMN["symbol_agreement"]] = names.agreements(query, chunks)


def symbol_agreements(query: str, symbols: Sequence[str | None]) -> np.ndarray:
    """Per symbol (None: the chunk defines nothing): the share of the words of the name it
    defines (its last part: `Parser.dump_code` is dump, code) that the question agrees with.
    Within a file it tells which definition a description is about ("Dump the bytecode into the
    file" and `dump_bytecode`), where the file-level evidence is the same for every chunk."""
    return DefinedNames(symbols).agreements(query, np.arange(len(symbols)))


@per_reader
def defined_names(reader: IndexReader) -> DefinedNames:
    return DefinedNames(reader.chunk_symbol)


class DefinedNames:
    """The words of the name each chunk defines (`symbols`, one per chunk), as word ids, worked
    out for a chunk the first time a question needs it (a large index's first question would
    otherwise pay for every chunk): a chunk's agreement with a question is then a sum over an
    array, and each word is matched against the question once."""

    def __init__(self, symbols: Sequence[str | None]):
        self._symbols = symbols
        self._ids: dict[str, int] = {}
        self._of_chunk: dict[int, tuple[int, ...]] = {}
        self._lock = threading.Lock()
        #: Whether each chunk defines a name.
        self.named = np.fromiter(map(is_not, symbols, repeat(None)), dtype=np.float64, count=len(symbols))
        self.vocabulary: list[str] = []

    def _words_of(self, chunks: list[int]) -> list[tuple[int, ...]]:
        known = self._of_chunk
        missing = [c for c in chunks if c not in known]
        if missing:
            with self._lock:  # several searching threads share one index's tables
                ids, vocabulary = self._ids, self.vocabulary
                for chunk in missing:
                    symbol = self._symbols[chunk]
                    words = defined_name_words(symbol) if symbol is not None else ()
                    found = []
                    for word in words:
                        at = ids.get(word)
                        if at is None:
                            at = ids[word] = len(vocabulary)
                            vocabulary.append(word)
                        found.append(at)
                    known[chunk] = tuple(found)
        return [known[c] for c in chunks]

    def agreements(self, query: str, chunks: np.ndarray) -> np.ndarray:
        """`symbol_agreements` of `chunks`."""
        out = np.zeros(len(chunks))
        words = question_words(query, name_parts=True)
        if not words or not len(chunks):
            return out
        of_chunk = self._words_of(chunks.tolist())
        counts = np.fromiter(map(len, of_chunk), dtype=np.int64, count=len(of_chunk))
        if not counts.any():
            return out
        # The word ids of every chunk, one after another.
        ids = np.fromiter((w for found in of_chunk for w in found), dtype=np.int64, count=int(counts.sum()))
        owner = np.repeat(np.arange(len(chunks)), counts)
        unique, inverse = np.unique(ids, return_inverse=True)
        heads = _heads(words)
        vocabulary = self.vocabulary
        # `agrees` called only for the words past its first test (most are not): a call a word
        # cost more than the rest of the agreement.
        prefix = config.current().AGREEMENT_SHORTEST_PREFIX
        agreeing = np.fromiter(
            (
                word in words or (word[:prefix] in heads and agrees(word, words, heads))
                for word in map(vocabulary.__getitem__, unique.tolist())
            ),
            dtype=np.float64,
            count=len(unique),
        )
        hits = np.bincount(owner, weights=agreeing[inverse], minlength=len(chunks))
        named = counts > 0
        out[named] = hits[named] / counts[named]
        return out


#: What separates the parts of a qualified name (`Type.method`, `mod::fn`, `Class#method`, `Ns\Type`).
_LAST_PART = re.compile(r"::|->|[.#\\/]")


@lru_cache(maxsize=65536)
def defined_name_words(symbol: str) -> frozenset[str]:
    """The words of the name a qualified symbol defines: its last part's."""
    return _name_words(_LAST_PART.split(symbol)[-1])


def rows_of_shown_files(file_ids: np.ndarray, scores: np.ndarray, candidates: Sequence[int], top_k: int) -> np.ndarray:
    """The rows of the candidates whose files are among the first `top_k` in the order of
    `scores` (best first, the lower chunk on a tie), as the searcher shows one result per file,
    and hold more than one candidate: the files with a chunk to choose."""
    order = np.lexsort((np.asarray(candidates), -scores))
    _, first, inverse = np.unique(file_ids[order], return_index=True, return_inverse=True)
    # Each file's place: the rank of its first candidate among the files' first candidates.
    place = np.empty(len(first), dtype=np.int64)
    place[np.argsort(first, kind="stable")] = np.arange(len(first))
    several = np.bincount(inverse, minlength=len(first)) > 1
    return np.sort(order[(place < top_k)[inverse] & several[inverse]])


def hand_weights() -> np.ndarray:
    """The weights that reproduce the hand-set signals' ranking (for one demotion at a time; two
    demotions of one candidate add where the hand-set factors multiply)."""
    from maguyva.query.rank import signals as rerank

    w = np.zeros(len(FEATURES))
    w[_COLUMN["fused"]] = 1.0
    for name in _BONUSES:
        w[_COLUMN[name]] = 1.0
    for why, factor in rerank.demotion_factors().items():
        w[_COLUMN[f"{why}_x_score"]] = factor - 1.0
    return w


@dataclass(frozen=True)
class RankModel:
    """Linear weights over `FEATURES`, one vector per question group (`GROUPS`), and optionally,
    for some groups, the weights of the choice within a file: which of a file's candidates its
    result shows."""

    weights: Mapping[str, np.ndarray]
    #: Where the weights come from, shown by `--explain` and recorded by the benchmarks.
    name: str = "learned"
    #: Per question group, weights over `FEATURES` scoring a file's candidates against each other
    #: (a group without them: the file shows its best-scored candidate). Where a file stands is
    #: its best candidate's score; which of its chunks answers a description of one definition is
    #: another matter, told by chunk-level evidence (the name a chunk defines, each modality's own
    #: score). A bare name has its answer scored already: the definition bonus.
    choice: Mapping[str, np.ndarray] = field(default_factory=dict)

    @cached_property
    def needed(self) -> frozenset[str]:
        """The features some question group or the choice gives a weight: the only ones worth computing."""
        return frozenset().union(*(ranking | choice for ranking, choice in self._needed_by_group.values()))

    @cached_property
    def _needed_by_group(self) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
        def named(w: np.ndarray | None) -> frozenset[str]:
            return frozenset() if w is None else frozenset(FEATURES[i] for i in np.flatnonzero(w).tolist())

        return {g: (named(self.weights[g]), named(self.choice.get(g))) for g in self.weights}

    def ranking_needed(self, group: str) -> frozenset[str]:
        """The features the ranking of `group` weighs."""
        return self._needed_by_group[group][0]

    def choice_needed(self, group: str) -> frozenset[str]:
        """The features the choice within a file of `group` weighs (none without one)."""
        return self._needed_by_group[group][1]

    def score(self, group: str, x: np.ndarray) -> np.ndarray:
        """Each candidate's score under `group`'s weights."""
        scores: np.ndarray = x @ self.weights[group]
        return scores

    def preference(self, group: str, x: np.ndarray) -> np.ndarray | None:
        """Each candidate's standing among its file's candidates (None: the group has no choice weights)."""
        weights = self.choice.get(group)
        return None if weights is None else x @ weights

    def contributions(self, group: str, row: np.ndarray) -> dict[str, float]:
        """Each feature's part of one candidate's score (nonzero parts only)."""
        parts = row * self.weights[group]
        nonzero = np.flatnonzero(parts)
        return dict(zip([FEATURES[i] for i in nonzero.tolist()], parts[nonzero].tolist()))

    def to_json(self, meta: Mapping[str, object] | None = None) -> str:
        document = {
            "features_version": FEATURES_VERSION,
            "features": list(FEATURES),
            "weights": {g: [round(float(v), 6) for v in w] for g, w in self.weights.items()},
            **({"choice": {g: [round(float(v), 6) for v in w] for g, w in self.choice.items()}} if self.choice else {}),
            **({"meta": dict(meta)} if meta else {}),
        }
        return json.dumps(document, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str, name: str = "learned") -> RankModel:
        try:
            document = json.loads(text)
            version, names, weights = document["features_version"], document["features"], document["weights"]
            choice = document.get("choice") or {}
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise RankModelError(f"the ranking model is not a model file ({error})") from None
        if version != FEATURES_VERSION or names != list(FEATURES):
            raise RankModelError(
                f"the ranking model was trained for feature layout {version}, this version computes "
                f"layout {FEATURES_VERSION}"
            )
        if set(weights) != set(GROUPS) or any(len(w) != len(FEATURES) for w in weights.values()):
            raise RankModelError("the ranking model does not have one weight per feature for every question group")
        if not set(choice) <= set(GROUPS) or any(len(w) != len(FEATURES) for w in choice.values()):
            raise RankModelError("the ranking model's choice within a file does not have one weight per feature")
        return cls(
            {g: np.asarray(w, dtype=np.float64) for g, w in weights.items()},
            name,
            {g: np.asarray(w, dtype=np.float64) for g, w in choice.items()},
        )

    @classmethod
    def load(cls, path: str | Path) -> RankModel:
        return cls.from_json(Path(path).read_text(encoding="utf-8"), name=str(path))

    @classmethod
    def hand(cls) -> RankModel:
        """The hand-set signals as a linear model (the start of training)."""
        w = hand_weights()
        return cls({g: w for g in GROUPS}, "hand")


@cache
def shipped_model() -> RankModel:
    """The model trained on the benchmark and mined sets, shipped in the package."""
    text = resources.files("maguyva.query.rank").joinpath("ranker.json").read_text(encoding="utf-8")
    return RankModel.from_json(text, name="ranker.json")
