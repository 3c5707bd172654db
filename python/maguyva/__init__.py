"""maguyva: code search that classifies the question and blends semantic, text, structural and
graph retrieval.

The compiled kernels are re-exported here: Hamming top-k over packed binary codes, the trigram
index and weighted Reciprocal Rank Fusion.
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

__all__ = [
    "CorruptIndexError",
    "LiteralMatches",
    "TrigramIndex",
    "__version__",
    "centrality_boost",
    "hamming_kernels",
    "hamming_top_k",
    "rrf_fuse",
]
