"""maguyva: code search that classifies the question and blends semantic, text, structural and
graph retrieval.

`Index` builds, updates and opens the index of a repository and answers questions with a
`SearchResponse` of `Hit`s; `Corpus` searches several repositories as one. Every error either
reports is a `MaguyvaError`. The compiled kernels are re-exported too: Hamming top-k over packed binary codes, the trigram index and weighted
Reciprocal Rank Fusion.

Names are loaded on first use, so that importing a submodule (the command line among them)
does not load the whole library first.
"""

from __future__ import annotations

# Not `typing.TYPE_CHECKING`: importing `typing` is itself a few milliseconds of the time before
# the command line can catch Ctrl-C.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from maguyva._core import (
        LiteralMatches,
        TrigramIndex,
        __version__,
        centrality_boost,
        hamming_kernels,
        hamming_top_k,
        rrf_fuse,
    )
    from maguyva.errors import CorruptIndexError, MaguyvaError
    from maguyva.query.results import Hit, SearchResponse
    from maguyva.serve.api import Index
    from maguyva.serve.corpus import Corpus

#: Each public name and the module it comes from.
_SOURCES = {
    "Corpus": "maguyva.serve.corpus",
    "CorruptIndexError": "maguyva.errors",
    "Hit": "maguyva.query.results",
    "Index": "maguyva.serve.api",
    "LiteralMatches": "maguyva._core",
    "MaguyvaError": "maguyva.errors",
    "SearchResponse": "maguyva.query.results",
    "TrigramIndex": "maguyva._core",
    "__version__": "maguyva._core",
    "centrality_boost": "maguyva._core",
    "hamming_kernels": "maguyva._core",
    "hamming_top_k": "maguyva._core",
    "rrf_fuse": "maguyva._core",
}

__all__ = sorted(_SOURCES)


def __getattr__(name: str) -> Any:
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module 'maguyva' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(source), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SOURCES))
