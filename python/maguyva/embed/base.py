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
    return _with_context({"provider": "local", "model": model, "dims": dims}, file_context(name))


def identity(embedder: Embedder) -> dict[str, object]:
    """`{"provider", "model", "dims"}` of `embedder`, with its `file_context` when it has one:
    what an index records, and compares to know whether its codes are this embedder's."""
    return _with_context(
        {"provider": embedder.provider, "model": embedder.model, "dims": embedder.dims}, file_context(embedder)
    )


def _with_context(identity: dict[str, object], context: float) -> dict[str, object]:
    # Left out when 0, so an index embedded with chunks alone keeps the identity it had.
    return {**identity, "file_context": context} if context else identity


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


def file_context(embedder: Embedder | str) -> float:
    """How much of its file a chunk's code carries (`config.EMBED_FILE_CONTEXT`) for an embedder
    that can embed chunks in their files (the local model's `embed_files`), else 0. Part of an
    index's embedder identity: codes made with another weight are not comparable."""
    if isinstance(embedder, str):
        able = _provider(embedder) == "local"
    else:
        able = callable(getattr(embedder, "embed_files", None))
    return float(config.current().EMBED_FILE_CONTEXT) if able else 0.0


def embed_texts(
    embedder: Embedder,
    texts: Sequence[str],
    cache: EmbeddingCache | None = None,
    *,
    files: Sequence[int] | None = None,
    batch_size: int | None = None,
    progress: Progress | None = None,
    warn: Callable[[str], None] | None = None,
) -> Codes:
    """Codes of `texts` as documents, shaped (len(texts), dims // 8), reusing `cache`.

    `files`, when given, counts the consecutive texts that are one file's chunks; an embedder
    with a `file_context` then embeds each file's chunks together (`embed_files`), and a
    chunk's cache key is its file's texts and its place among them. Only texts (or files) with a code missing
    from the cache are embedded, each distinct one once, in batches; their codes are written to
    the cache in runs sorted by key (`config.EMBED_CACHE_WRITE_ROWS`, or sooner once
    `config.EMBED_CACHE_WRITE_SECONDS` have passed) and when the call ends or fails, so an
    interrupted run keeps everything it finished. `progress(done, total)` is called once after
    the cache look-up and after every batch. Batches follow the embedder's own
    `split_batches(texts)` when it has one (the Voyage embedder sizes them to one API request
    each), else about `batch_size` texts (default: the embedder's `batch_size`, else 256). A
    cache that fails (disk full, a file it cannot write) is left out for the rest of the run,
    said once through `warn`.
    """
    total = len(texts)
    width = code_bytes(embedder.dims)
    out = np.zeros((total, width), dtype=np.uint8)
    context = file_context(embedder) if files is not None else 0.0
    space = embedder.model
    if files is not None and context:
        if sum(files) != total:
            raise ValueError(f"files hold {sum(files)} texts, not {total}")
        # A unit is what is embedded together: a file's chunks, else one text.
        bounds = [0, *np.cumsum(files, dtype=np.int64).tolist()]
        units = [range(bounds[u], bounds[u + 1]) for u in range(len(bounds) - 1)]
        unit_keys = [_file_key([texts[i] for i in unit]) for unit in units]
        # The file's key covers every text of it: a chunk's is that key (224 of its bits) and
        # its place.
        keys = [unit_key[:28] + n.to_bytes(4, "little") for unit_key, unit in zip(unit_keys, units) for n in range(len(unit))]
        space = f"{embedder.model}+file-context-{context:g}"
    else:
        units = [range(i, i + 1) for i in range(total)]
        keys = unit_keys = [text_key(t) for t in texts]

    found: dict[bytes, bytes] = {}
    if cache is not None:
        try:
            found = cache.get_many(embedder.provider, space, embedder.dims, keys)
        except EmbeddingCacheError as err:
            _without_cache(err, warn)
            cache = None
    # Distinct units with a code missing, each with every unit it stands for.
    pending: dict[bytes, list[int]] = {}
    done = 0
    for u, unit in enumerate(units):
        cached = [found[keys[i]] for i in unit if keys[i] in found]
        if len(cached) == len(unit):
            for i, code in zip(unit, cached):
                out[i] = np.frombuffer(code, dtype=np.uint8)
            done += len(unit)
        else:
            pending.setdefault(unit_keys[u], []).append(u)
    if progress:
        progress(done, total)
    if not pending:
        return out

    missing = [units[same[0]] for same in pending.values()]
    splitter = getattr(embedder, "split_batches", None)
    if callable(splitter) and not context:
        batches: Iterable[range] = splitter([texts[unit[0]] for unit in missing])
    else:
        size = batch_size or int(getattr(embedder, "batch_size", 0) or 256)
        batches = _unit_batches([len(unit) for unit in missing], max(1, size))

    unwritten: list[tuple[bytes, bytes]] = []
    written_at = time.monotonic()
    tuning = config.current()

    def write() -> None:
        nonlocal cache, unwritten, written_at
        if cache is not None and unwritten:
            try:
                cache.put_many(embedder.provider, space, embedder.dims, sorted(unwritten))
            except EmbeddingCacheError as err:
                _without_cache(err, warn)
                cache = None
        unwritten, written_at = [], time.monotonic()

    stands_for = list(pending.values())
    try:
        for batch in batches:
            batch_units = [missing[j] for j in batch]
            count = sum(map(len, batch_units))
            if context:
                made = embedder.embed_files([[texts[i] for i in unit] for unit in batch_units], context)  # type: ignore[attr-defined]
            else:
                made = embedder.embed_documents([texts[unit[0]] for unit in batch_units])
            codes = check_codes(embedder, made, count)
            row = 0
            for j, unit in zip(batch, batch_units):
                unit_codes = codes[row : row + len(unit)]
                row += len(unit)
                if cache is not None:
                    unwritten.extend((keys[i], code.tobytes()) for i, code in zip(unit, unit_codes))
                for u in stands_for[j]:
                    out[units[u].start : units[u].stop] = unit_codes
                    done += len(unit)
            if cache is not None and (
                len(unwritten) >= tuning.EMBED_CACHE_WRITE_ROWS
                or time.monotonic() - written_at >= tuning.EMBED_CACHE_WRITE_SECONDS
            ):
                write()
            if progress:
                progress(done, total)
    finally:
        write()
    if done != total:
        raise EmbeddingError(
            f"{embedder.provider} embedder batched {done} of {total} texts; some were never sent"
        )
    return out


def _file_key(texts: Sequence[str]) -> bytes:
    """SHA-256 of a file's chunk texts in order, each with its length, so no two lists share it."""
    parts = [text.encode("utf-8", "surrogatepass") for text in texts]
    return hashlib.sha256(b"".join(len(part).to_bytes(8, "little") + part for part in parts)).digest()


def _unit_batches(sizes: Sequence[int], size: int) -> Iterable[range]:
    """Runs of consecutive units of at least `size` texts in all (the last one fewer)."""
    start, held = 0, 0
    for n, count in enumerate(sizes):
        held += count
        if held >= size:
            yield range(start, n + 1)
            start, held = n + 1, 0
    if start < len(sizes):
        yield range(start, len(sizes))


def _without_cache(err: EmbeddingCacheError, warn: Callable[[str], None] | None) -> None:
    """Say that the cache failed and embedding goes on without it."""
    message = f"{err}; embedding without the cache"
    if warn is not None:
        warn(message)
    else:
        logging.getLogger(__name__).warning("%s", message)
