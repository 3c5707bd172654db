"""voyage-code-3 through Voyage AI's embeddings API, as packed binary codes.

Requests go through the official `voyageai` client with `output_dtype="ubinary"`: the API
returns each embedding as `output_dimension / 8` unsigned bytes, dimension 0 in the most
significant bit of byte 0 and a bit set where the embedding is positive. That is exactly
`numpy.packbits(embedding > 0)`, the layout of every maguyva code, so the bytes are used as they
come (after checking their count and range).

Batches respect the API's limits for voyage-code-3: at most 1,000 texts and 120,000 tokens per
request. Tokens are estimated offline as characters / 3 plus a few for the instruction the API
prepends (the client's exact tokenizer is downloaded from a model hub, so it is not used); if the
API still rejects a batch as too large, the batch is halved and retried.

Rate limits (429), server errors (5xx), timeouts and connection errors are retried with
exponential backoff and full jitter (honouring `Retry-After`), at most `max_retries` times; then
`EmbeddingError` says what failed. The client's own retrying is switched off (`max_retries=0`) so
the two never multiply. The API key is never written to logs, exceptions or reprs.
"""

from __future__ import annotations

import logging
import math
import os
import random
import re
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from maguyva.embed.base import Codes
from maguyva.errors import EmbeddingError, EmbeddingOptionError

log = logging.getLogger(__name__)

DEFAULT_MODEL = "voyage-code-3"
DEFAULT_DIMS = 1024
VALID_DIMS = (256, 512, 1024, 2048)
#: API limits per request (voyage-code-3).
MAX_BATCH_TEXTS = 1000
MAX_BATCH_TOKENS = 120_000
#: voyage-code-3's context length; longer texts are truncated by the API (truncation=True).
MAX_TEXT_TOKENS = 32_000
#: Tokens added to every text by the input_type instruction, rounded up.
PROMPT_TOKENS = 16

# A 400 answer that means "this batch is too big" rather than "this request is wrong".
_TOO_BIG = re.compile(
    r"max allowed tokens|tokens per (submitted )?batch|batch size|too many tokens|"
    r"lower the number of tokens|batch has \d+ tokens",
    re.IGNORECASE,
)


class _Secret:
    """A string that never shows itself in a repr or a message."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def get(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__


def estimate_tokens(text: str, chars_per_token: float = 3.0) -> int:
    """A deliberately high estimate of the tokens one text costs in a request."""
    return min(math.ceil(len(text) / chars_per_token), MAX_TEXT_TOKENS) + PROMPT_TOKENS


class VoyageEmbedder:
    """Binary codes from Voyage AI's embedding API.

    `api_key` defaults to `VOYAGE_API_KEY`, `base_url` to `VOYAGE_BASE_URL` (else the client's
    default endpoint). `dims` is the `output_dimension` (256, 512, 1024 or 2048 bits).
    `timeout` is per request, in seconds. A failed request is tried again up to `max_retries`
    times, waiting a random time up to `backoff * 2**attempt` seconds (at most `backoff_max`).
    """

    provider = "voyage"

    def __init__(
        self,
        api_key: str | None = None,
        *,
        model: str = DEFAULT_MODEL,
        dims: int = DEFAULT_DIMS,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 6,
        backoff: float = 1.0,
        backoff_max: float = 30.0,
        max_batch_texts: int = MAX_BATCH_TEXTS,
        max_batch_tokens: int = MAX_BATCH_TOKENS,
        chars_per_token: float = 3.0,
    ):
        key = (api_key if api_key is not None else os.environ.get("VOYAGE_API_KEY", "")).strip()
        if not key:
            raise EmbeddingError(
                "no Voyage API key: set VOYAGE_API_KEY or pass api_key= (or use the local embedder)"
            )
        if dims not in VALID_DIMS:
            raise EmbeddingOptionError(f"Voyage output dimension must be one of {VALID_DIMS}, not {dims}")
        if max_retries < 0 or max_batch_texts < 1 or max_batch_tokens < 1 or timeout <= 0:
            raise EmbeddingOptionError(
                "max_retries >= 0, max_batch_texts >= 1, max_batch_tokens >= 1 and timeout > 0"
                " are required"
            )
        try:
            import voyageai
            from voyageai.client import Client
        except ImportError as err:  # pragma: no cover - voyageai is the optional "voyage" extra
            raise EmbeddingError(
                f'the voyage embedder needs the voyageai package: pip install "maguyva[voyage]" ({err})'
            ) from None

        self.model = model
        self.dims = dims
        self.base_url = base_url or os.environ.get("VOYAGE_BASE_URL") or None
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.backoff_max = backoff_max
        self.max_batch_texts = min(max_batch_texts, MAX_BATCH_TEXTS)
        self.max_batch_tokens = max_batch_tokens
        self.chars_per_token = chars_per_token
        #: Tokens the API reported using, summed over this object's requests.
        self.total_tokens = 0
        #: HTTP requests sent (including retries).
        self.requests = 0
        self._key = _Secret(key)
        self._errors = voyageai.error
        # max_retries=0: the client makes exactly one attempt; retrying happens here.
        self._client = Client(
            api_key=key, max_retries=0, timeout=timeout, base_url=self.base_url
        )

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"VoyageEmbedder(model={self.model!r}, dims={self.dims}{where})"

    # -- batching -------------------------------------------------------------------------------

    def split_batches(self, texts: Sequence[str]) -> Iterator[range]:
        """Consecutive ranges of `texts`, each within one request's count and token limits."""
        start = 0
        tokens = 0
        for i, text in enumerate(texts):
            cost = estimate_tokens(text, self.chars_per_token)
            if i > start and (
                i - start >= self.max_batch_texts or tokens + cost > self.max_batch_tokens
            ):
                yield range(start, i)
                start, tokens = i, 0
            tokens += cost
        if start < len(texts):
            yield range(start, len(texts))

    # -- the protocol ---------------------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str]) -> Codes:
        """Codes of documents (`input_type="document"`), one request per batch."""
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of texts, not one string")
        out = np.empty((len(texts), self.dims // 8), dtype=np.uint8)
        for batch in self.split_batches(texts):
            out[batch.start : batch.stop] = self._embed([texts[i] for i in batch], "document")
        return out

    def embed_query(self, text: str) -> Codes:
        """Code of a query (`input_type="query"`)."""
        code: Codes = self._embed([text], "query")[0]
        return code

    # -- requests -------------------------------------------------------------------------------

    def _scrub(self, message: object) -> str:
        text = str(message)
        key = self._key.get()
        return text.replace(key, "***") if key else text

    def _retryable(self, err: BaseException) -> bool:
        e = self._errors
        if isinstance(
            err,
            (e.RateLimitError, e.ServiceUnavailableError, e.ServerError, e.Timeout,
             e.APIConnectionError, e.TryAgain),
        ):
            return True
        status = getattr(err, "http_status", None)
        return isinstance(err, e.APIError) and isinstance(status, int) and status >= 500

    def _delay(self, attempt: int, err: BaseException) -> float:
        delay = random.uniform(0, min(self.backoff_max, self.backoff * 2**attempt))
        headers = getattr(err, "headers", None) or {}
        retry_after = headers.get("retry-after") or headers.get("Retry-After")
        try:
            if retry_after is not None:
                delay = max(delay, min(float(retry_after), self.backoff_max))
        except ValueError:
            pass
        return delay

    def _describe(self, err: BaseException) -> str:
        status = getattr(err, "http_status", None)
        kind = type(err).__name__
        detail = self._scrub(getattr(err, "user_message", None) or err)
        return f"{kind}{f' (HTTP {status})' if status else ''}: {detail}"

    def _embed(self, texts: list[str], input_type: str) -> Codes:
        """One batch, retried as configured; halved if the API finds it too large."""
        e = self._errors
        attempt = 0
        while True:
            self.requests += 1
            try:
                result = self._client.embed(
                    texts,
                    model=self.model,
                    input_type=input_type,
                    truncation=True,
                    output_dtype="ubinary",
                    output_dimension=self.dims,
                )
                break
            except e.InvalidRequestError as err:
                if len(texts) > 1 and _TOO_BIG.search(str(err)):
                    half = len(texts) // 2
                    log.info("Voyage API: batch of %d texts too large, splitting", len(texts))
                    first = self._embed(texts[:half], input_type)
                    return np.concatenate([first, self._embed(texts[half:], input_type)])
                raise EmbeddingError(
                    f"Voyage API rejected the request: {self._describe(err)}"
                ) from None
            except e.VoyageError as err:
                if not self._retryable(err):
                    raise EmbeddingError(
                        f"Voyage API request failed: {self._describe(err)}"
                    ) from None
                if attempt >= self.max_retries:
                    raise EmbeddingError(
                        f"Voyage API request failed after {attempt + 1} attempts "
                        f"({len(texts)} texts, {self._where()}): {self._describe(err)}"
                    ) from None
                delay = self._delay(attempt, err)
                log.warning(
                    "Voyage API: %s; retrying in %.2f s (attempt %d of %d)",
                    self._describe(err), delay, attempt + 2, self.max_retries + 1,
                )
                time.sleep(delay)
                attempt += 1
        self.total_tokens += int(getattr(result, "total_tokens", 0) or 0)
        return self._codes(result.embeddings, len(texts))

    def _where(self) -> str:
        return self.base_url or "default endpoint"

    def _codes(self, embeddings: Any, count: int) -> Codes:
        width = self.dims // 8
        try:
            arr = np.asarray(embeddings, dtype=np.int64)
        except (TypeError, ValueError) as err:
            raise EmbeddingError(f"Voyage API returned malformed embeddings ({err})") from None
        if arr.shape != (count, width):
            raise EmbeddingError(
                f"Voyage API returned embeddings shaped {arr.shape}, expected ({count}, {width})"
                f" for ubinary output of {self.dims} dimensions"
            )
        if arr.size and (arr.min() < 0 or arr.max() > 255):
            raise EmbeddingError("Voyage API returned ubinary values outside 0..255")
        return arr.astype(np.uint8)
