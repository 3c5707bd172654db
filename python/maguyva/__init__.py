"""maguyva: code search that classifies the question and blends semantic, text, structural and
graph retrieval.

`Index` builds, updates and opens the index of a repository. The compiled kernels are
re-exported too: Hamming top-k over packed binary codes, the trigram index and weighted
Reciprocal Rank Fusion.
"""

from maguyva._core import (
    CorruptIndexError,
    LiteralMatches,
    TrigramIndex,
    __version__,
    centrality_boost,
    hamming_kernels,
    hamming_top_k,
    rrf_fuse,
)
from maguyva.api import Index

__all__ = [
    "CorruptIndexError",
    "Index",
    "LiteralMatches",
    "TrigramIndex",
    "__version__",
    "centrality_boost",
    "hamming_kernels",
    "hamming_top_k",
    "rrf_fuse",
]
