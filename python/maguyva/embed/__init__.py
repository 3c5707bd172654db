"""Embedding providers for the semantic modality, and the cache that keeps their output.

Every provider turns text into packed binary codes (one bit per dimension, `numpy.packbits`
order), compared by Hamming distance:

    from maguyva.embed import EmbeddingCache, embed_texts, make_embedder

    embedder = make_embedder("local")          # offline default; "voyage" for voyage-code-3
    with EmbeddingCache() as cache:            # shared by every repository and run
        codes = embed_texts(embedder, chunks, cache, progress=lambda done, total: ...)
    query = embedder.embed_query("how are failed requests retried")

- "local" (`LocalEmbedder`): a static embedding model shipped in the package; runs on the CPU
  with no key, no network and no download.
- "voyage" (`VoyageEmbedder`): voyage-code-3 through Voyage AI's API (`VOYAGE_API_KEY`).
"""

from maguyva.embed.base import (
    PROVIDERS,
    Embedder,
    default_provider,
    embed_texts,
    file_context,
    identity,
    identity_of,
    make_embedder,
    text_key,
)
from maguyva.embed.cache import EmbeddingCache, default_cache_path
from maguyva.errors import EmbeddingCacheError, EmbeddingError

__all__ = [
    "PROVIDERS",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingCacheError",
    "EmbeddingError",
    "default_cache_path",
    "default_provider",
    "embed_texts",
    "file_context",
    "identity",
    "identity_of",
    "make_embedder",
    "text_key",
]
