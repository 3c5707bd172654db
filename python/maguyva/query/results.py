"""What a search returns."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ModalityPart:
    """A modality's part in a result: its 0-based rank there and what it added to the score."""

    rank: int
    contribution: float


@dataclass(frozen=True, slots=True)
class Hit:
    """One result: a span of a file."""

    path: str  # relative to the indexed root, '/'-separated
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    score: float
    symbol: str | None
    modalities: dict[str, ModalityPart]
    snippet: str
    chunk: int
    #: What the post-fusion signals changed (`maguyva.query.rank.signals`): "definition" and "path"
    #: bonuses added to the fused score, then each demotion's "<why>_factor" applied (why:
    #: secondary_code, header_beside_source, part_beside_whole, older_version, windows_port); empty
    #: if none.
    adjustments: dict[str, float] = field(default_factory=dict)
    #: With a learned ranking (`maguyva.query.rank`), each feature's part of the score: the
    #: score is their sum. Empty under the hand-set signals, or when nothing was ranked.
    features: dict[str, float] = field(default_factory=dict)
    #: When the result shows another chunk of its file than the one whose score placed it (a
    #: learned ranking's choice within the file): that chunk's lines. The score, `features` and
    #: `adjustments` are then the placing chunk's; `modalities`, the shown chunk's.
    placed_by: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """The answer to one question, with how it was reached."""

    query: str
    intent: str
    confidence: float
    fusion_strategy: str  # "direct" or "rrf"
    preset: str
    results: list[Hit]
    subject: str | None = None
    rule: str = ""
    modalities_run: tuple[str, ...] = ()
    elapsed_ms: float = 0.0
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: What weighed the post-fusion signals: the learned model's name, or "hand".
    ranking: str = "hand"
    #: The strategy planned for the question ("direct" or "rrf"), before a direct answer that
    #: found nothing fell back to fusing.
    planned_strategy: str = ""
    #: The filters written in the question or given as arguments (`Filters.to_dict()`).
    filters: dict[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dictionary (the `--json` output of the command line)."""
        return {
            "query": self.query,
            "intent": self.intent,
            "confidence": self.confidence,
            "rule": self.rule,
            "subject": self.subject,
            "fusion_strategy": self.fusion_strategy,
            "preset": self.preset,
            "ranking": self.ranking,
            "modalities_run": list(self.modalities_run),
            "elapsed_ms": round(self.elapsed_ms, 3),
            "results": [
                {
                    "path": h.path,
                    "start_line": h.start_line,
                    "end_line": h.end_line,
                    "score": round(h.score, 6),
                    "symbol": h.symbol,
                    "modalities": {
                        name: {"rank": p.rank, "contribution": round(p.contribution, 6)}
                        for name, p in h.modalities.items()
                    },
                    **({"adjustments": {k: round(v, 6) for k, v in h.adjustments.items()}} if h.adjustments else {}),
                    **({"features": {k: round(v, 6) for k, v in h.features.items()}} if h.features else {}),
                    **({"placed_by": {"start_line": h.placed_by[0], "end_line": h.placed_by[1]}} if h.placed_by else {}),
                    "snippet": h.snippet,
                }
                for h in self.results
            ],
            **({"filters": self.filters} if self.filters else {}),
        }
