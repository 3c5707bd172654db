"""The embedder protocol, the factory that picks a provider, and cached batch embedding.

Every embedder turns text into *packed binary codes*: one bit per dimension, set when that
dimension of the embedding is positive, packed eight to a byte in `numpy.packbits` order (the
first dimension is the most significant bit of the first byte). Codes of one embedder are
compared by Hamming distance (`maguyva.hamming_top_k`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from maguyva import config
from maguyva.errors import EmbeddingCacheError, EmbeddingError, EmbeddingOptionError

if TYPE_CHECKING:
    from maguyva.embed.cache import EmbeddingCache

#: Names accepted by `make_embedder`.
PROVIDERS = ("local", "voyage")

#: `progress(done, total)`: `done` of `total` texts have a code.
Progress = Callable[[int, int], None]

Codes = npt.NDArray[np.uint8]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into packed binary codes of `dims` bits (`dims // 8` bytes each)."""

    #: Provider name, part of every cache key: "local", "voyage".
    provider: str
    #: Model identifier, part of every cache key; it changes whenever the codes would.
    model: str
    #: Code length in bits, a multiple of 8.
    dims: int

    def embed_documents(self, texts: Sequence[str]) -> Codes:
        """Codes of documents (chunks of code), shaped (len(texts), dims // 8), uint8."""
        ...

    def embed_query(self, text: str) -> Codes:
        """Code of a search query, shaped (dims // 8,), uint8."""
        ...


def make_embedder(name: str = "local", **options: object) -> Embedder:
    """The embedder called `name`, built with `options`.

    - "local": the offline model shipped with maguyva (`LocalEmbedder`, loaded once per process
      and shared: `shared_local_embedder`; options: `model`, `batch_size`).
    - "voyage": voyage-code-3 through Voyage AI's API (`VoyageEmbedder`; options: `api_key`,
      `model`, `dims`, `base_url`, `timeout`, `max_retries`, ...). Needs `VOYAGE_API_KEY` or
      `api_key=`.
    - "auto": "voyage" when `VOYAGE_API_KEY` is set, else "local".
    """
    key = _provider(name)
    if key == "local":
        from maguyva.embed.local import shared_local_embedder

        return shared_local_embedder(**options)  # type: ignore[arg-type]
    if key == "voyage":
        from maguyva.embed.voyage import VoyageEmbedder

        return VoyageEmbedder(**options)  # type: ignore[arg-type]
    raise EmbeddingOptionError(
        f"unknown embedder {name!r}: choose one of {', '.join(map(repr, PROVIDERS))} or 'auto'"
    )


def identity_of(name: str, **options: object) -> dict[str, object] | None:
    """`{"provider", "model", "dims"}` of the embedder `make_embedder(name, **options)` would
    make, when it can be known without making it (the local model's, from its config); None
    otherwise."""
    if _provider(name) != "local" or set(options) - {"model", "batch_size"}:
        return None
    from maguyva.embed.local import DEFAULT_MODEL, model_identity

    model, dims = model_identity(str(options.get("model", DEFAULT_MODEL)))
    return {"provider": "local", "model": model, "dims": dims}


def _provider(name: str) -> str:
    """The provider an embedder name asks for ("auto" resolved)."""
    key = name.strip().lower()
    return default_provider() if key == "auto" else key


def default_provider() -> str:
    """"voyage" when a Voyage API key is in the environment (`VOYAGE_API_KEY`), else "local"."""
    return "voyage" if os.environ.get("VOYAGE_API_KEY", "").strip() else "local"


def text_key(text: str) -> bytes:
    """SHA-256 of the exact text (UTF-8; lone surrogates kept as they are), the cache key."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def code_bytes(dims: int) -> int:
    """Bytes per code of `dims` bits."""
    if dims <= 0 or dims % 8:
        raise ValueError(f"code length must be a positive multiple of 8 bits, not {dims}")
    return dims // 8


def check_codes(embedder: Embedder, codes: object, count: int) -> Codes:
    """`codes` as a C-contiguous (count, dims // 8) uint8 array; EmbeddingError if it is not."""
    width = code_bytes(embedder.dims)
    arr = np.asarray(codes)
    if arr.dtype != np.uint8 or arr.shape != (count, width):
        raise EmbeddingError(
            f"{embedder.provider} embedder {embedder.model!r} returned codes shaped "
            f"{arr.shape} ({arr.dtype}), expected ({count}, {width}) uint8"
        )
    return np.ascontiguousarray(arr)


def _fixed_batches(count: int, size: int) -> Iterable[range]:
    for start in range(0, count, size):
        yield range(start, min(start + size, count))


def embed_texts(
    embedder: Embedder,
    texts: Sequence[str],
    cache: EmbeddingCache | None = None,
    *,
    batch_size: int | None = None,
    progress: Progress | None = None,
    warn: Callable[[str], None] | None = None,
) -> Codes:
    """Codes of `texts` as documents, shaped (len(texts), dims // 8), reusing `cache`.

    Only texts whose code is not cached are embedded (each distinct text once), in batches;
    their codes are written to the cache in runs sorted by key (`config.EMBED_CACHE_WRITE_ROWS`,
    or sooner once `config.EMBED_CACHE_WRITE_SECONDS` have passed) and when the call ends or
    fails, so an interrupted run keeps everything it finished. `progress(done, total)` is called once after the cache
    look-up and after every batch. Batches follow the embedder's own `split_batches(texts)` when
    it has one (the Voyage embedder sizes them to one API request each), else `batch_size`
    texts (default: the embedder's `batch_size`, else 256). A cache that fails (disk full, a
    file it cannot write) is left out for the rest of the run, said once through `warn`.
    """
    total = len(texts)
    width = code_bytes(embedder.dims)
    out = np.zeros((total, width), dtype=np.uint8)
    keys = [text_key(t) for t in texts]

    found: dict[bytes, bytes] = {}
    if cache is not None:
        try:
            found = cache.get_many(embedder.provider, embedder.model, embedder.dims, keys)
        except EmbeddingCacheError as err:
            _without_cache(err, warn)
            cache = None
    # Distinct missing texts, each with every position it occupies.
    pending: dict[bytes, list[int]] = {}
    done = 0
    for i, key in enumerate(keys):
        code = found.get(key)
        if code is not None:
            out[i] = np.frombuffer(code, dtype=np.uint8)
            done += 1
        else:
            pending.setdefault(key, []).append(i)
    if progress:
        progress(done, total)
    if not pending:
        return out

    miss_keys = list(pending)
    miss_texts = [texts[pending[k][0]] for k in miss_keys]
    splitter = getattr(embedder, "split_batches", None)
    if callable(splitter):
        batches: Iterable[range] = splitter(miss_texts)
    else:
        size = batch_size or int(getattr(embedder, "batch_size", 0) or 256)
        batches = _fixed_batches(len(miss_texts), max(1, size))

    unwritten: list[tuple[bytes, bytes]] = []
    written_at = time.monotonic()
    tuning = config.current()

    def write() -> None:
        nonlocal cache, unwritten, written_at
        if cache is not None and unwritten:
            try:
                cache.put_many(embedder.provider, embedder.model, embedder.dims, sorted(unwritten))
            except EmbeddingCacheError as err:
                _without_cache(err, warn)
                cache = None
        unwritten, written_at = [], time.monotonic()

    try:
        for batch in batches:
            batch_texts = [miss_texts[j] for j in batch]
            codes = check_codes(embedder, embedder.embed_documents(batch_texts), len(batch_texts))
            if cache is not None:
                unwritten.extend((miss_keys[j], codes[n].tobytes()) for n, j in enumerate(batch))
                if (
                    len(unwritten) >= tuning.EMBED_CACHE_WRITE_ROWS
                    or time.monotonic() - written_at >= tuning.EMBED_CACHE_WRITE_SECONDS
                ):
                    write()
            for n, j in enumerate(batch):
                rows = pending[miss_keys[j]]
                out[rows] = codes[n]
                done += len(rows)
            if progress:
                progress(done, total)
    finally:
        write()
    if done != total:
        raise EmbeddingError(
            f"{embedder.provider} embedder batched {done} of {total} texts; some were never sent"
        )
    return out


def _without_cache(err: EmbeddingCacheError, warn: Callable[[str], None] | None) -> None:
    """Say that the cache failed and embedding goes on without it."""
    message = f"{err}; embedding without the cache"
    if warn is not None:
        warn(message)
    else:
        logging.getLogger(__name__).warning("%s", message)
