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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

from maguyva.index import roles
from maguyva.index.reader import IndexReader, per_reader
from maguyva.query.classify import Classification
from maguyva.query.intents import MODALITIES
from maguyva.query.rerank import DEMOTIONS, Adjustment, FusedParts

#: The version of the feature layout; a model trained on another layout is refused.
FEATURES_VERSION = 1

_BONUSES = ("definition", "path", "file_name", "coherence", "agreement")

#: The named features, in column order.
FEATURES: tuple[str, ...] = (
    "fused",
    *(f"{m}_contribution" for m in MODALITIES),
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


@per_reader
def file_facts(reader: IndexReader) -> FileFacts:
    return FileFacts(reader)


class FileFacts:
    """What the features need to know about each file of one index, worked out once."""

    def __init__(self, reader: IndexReader):
        files = reader.files
        self.test = ((reader.file_roles & roles.TEST) > 0).astype(np.float64)
        self.no_language = np.fromiter((f.language is None for f in files), dtype=np.float64, count=len(files))
        self.depth = np.fromiter((min(f.path.count("/"), 8) / 8 for f in files), dtype=np.float64, count=len(files))
        importers: dict[int, set[int]] = {}
        for src, dst in reader.sql("SELECT src, dst FROM edges WHERE kind = 'import'"):
            if dst < len(files) and src < len(files) and src != dst:
                importers.setdefault(dst, set()).add(src)
        counts = np.zeros(len(files))
        for dst, srcs in importers.items():
            counts[dst] = len(srcs)
        most = counts.max() if len(counts) else 0.0
        # How many files import this one, on a log scale relative to the most imported.
        self.imported_by = np.log1p(counts) / math.log1p(most) if most else counts


def score_unit(scored: Mapping[int, float]) -> float:
    """The unit of the score-like features: the best fused score (1 when there is none)."""
    return (max(scored.values()) if scored else 0.0) or 1.0


def features(
    reader: IndexReader,
    candidates: Sequence[int],
    scored: Mapping[int, float],
    adjustments: Mapping[int, Adjustment],
    parts: FusedParts,
    modalities: Sequence[str],
) -> np.ndarray:
    """The feature matrix (len(candidates), len(FEATURES)) of `candidates`, chunks of `reader`'s
    index: `scored` holds their fused scores (absent: brought by a signal), `adjustments` what
    the hand-set signals made of each, `parts` each fused chunk's contribution per modality (the
    columns named by `modalities`)."""
    n = len(candidates)
    x = np.zeros((n, len(FEATURES)))
    if not n:
        return x
    chunk_ids = np.asarray(candidates, dtype=np.int64)
    best = score_unit(scored)
    fused = np.fromiter((scored.get(c, 0.0) for c in candidates), dtype=np.float64, count=n) / best
    x[:, _COLUMN["fused"]] = fused
    row_of = {int(c): i for i, c in enumerate(parts.chunks.tolist())}
    rows = np.fromiter((row_of.get(int(c), -1) for c in candidates), dtype=np.int64, count=n)
    have = rows >= 0
    contributions = np.asarray(parts.contributions, dtype=np.float64)
    for j, name in enumerate(modalities):
        column = np.zeros(n)
        column[have] = contributions[rows[have], j] / best
        x[:, _COLUMN[f"{name}_contribution"]] = column
    bonus_sum = fused.copy()
    for k, name in enumerate(_BONUSES):
        values = np.fromiter((getattr(adjustments[c], name) for c in candidates), dtype=np.float64, count=n) / best
        x[:, _COLUMN[name]] = values
        bonus_sum += values
    for i, c in enumerate(candidates):
        for why, _ in adjustments[c].demotions:
            x[i, _COLUMN[why]] = 1.0
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
    return x


def hand_weights() -> np.ndarray:
    """The weights that reproduce the hand-set signals' ranking (for one demotion at a time; two
    demotions of one candidate add where the hand-set factors multiply)."""
    from maguyva.query import rerank

    w = np.zeros(len(FEATURES))
    w[_COLUMN["fused"]] = 1.0
    for name in _BONUSES:
        w[_COLUMN[name]] = 1.0
    for why, factor in rerank.demotion_factors().items():
        w[_COLUMN[f"{why}_x_score"]] = factor - 1.0
    return w


class RankModelError(ValueError):
    """A ranking model file that cannot be used: unreadable, or trained for other features."""


@dataclass(frozen=True)
class RankModel:
    """Linear weights over `FEATURES`, one vector per question group (`GROUPS`)."""

    weights: Mapping[str, np.ndarray]
    #: Where the weights come from, shown by `--explain` and recorded by the benchmarks.
    name: str = "learned"

    def score(self, group: str, x: np.ndarray) -> np.ndarray:
        return x @ self.weights[group]

    def contributions(self, group: str, row: np.ndarray) -> dict[str, float]:
        """Each feature's part of one candidate's score (nonzero parts only)."""
        parts = row * self.weights[group]
        return {FEATURES[i]: float(parts[i]) for i in np.flatnonzero(parts).tolist()}

    def to_json(self, meta: Mapping[str, object] | None = None) -> str:
        document = {
            "features_version": FEATURES_VERSION,
            "features": list(FEATURES),
            "weights": {g: [round(float(v), 6) for v in w] for g, w in self.weights.items()},
            **({"meta": dict(meta)} if meta else {}),
        }
        return json.dumps(document, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str, name: str = "learned") -> RankModel:
        try:
            document = json.loads(text)
            version, names, weights = document["features_version"], document["features"], document["weights"]
        except (ValueError, KeyError, TypeError) as error:
            raise RankModelError(f"the ranking model is not a model file ({error})") from None
        if version != FEATURES_VERSION or names != list(FEATURES):
            raise RankModelError(
                f"the ranking model was trained for feature layout {version}, this version computes "
                f"layout {FEATURES_VERSION}"
            )
        if set(weights) != set(GROUPS) or any(len(w) != len(FEATURES) for w in weights.values()):
            raise RankModelError("the ranking model does not have one weight per feature for every question group")
        return cls({g: np.asarray(w, dtype=np.float64) for g, w in weights.items()}, name)

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
    text = resources.files("maguyva.query").joinpath("ranker.json").read_text(encoding="utf-8")
    return RankModel.from_json(text, name="ranker.json")
