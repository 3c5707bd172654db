"""The Voyage embedder against a local HTTP server that speaks the embeddings API."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import socket
import threading
import time
import traceback
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from maguyva.embed import EmbeddingCache, EmbeddingError, embed_texts, make_embedder
from maguyva.embed.voyage import VoyageEmbedder, estimate_tokens

KEY = "pa-test-SECRET-key-0123456789"
# The server's notion of a text's tokens: fewer than the embedder's estimate, as real ones are.
CHARS_PER_REAL_TOKEN = 4


def fake_code(text: str, input_type: str, dims: int) -> bytes:
    """The server's deterministic 'embedding' of a text."""
    out = b""
    counter = 0
    while len(out) < dims // 8:
        out += hashlib.sha256(f"{input_type}\0{counter}\0{text}".encode()).digest()
        counter += 1
    return out[: dims // 8]


def expected(texts: list[str], input_type: str = "document", dims: int = 1024) -> np.ndarray:
    return np.array([list(fake_code(t, input_type, dims)) for t in texts], dtype=np.uint8)


class FakeVoyage:
    """State of the fake API: what it received and what it will do next.

    `script` holds actions for the next requests, consumed in order; `default` applies after
    it: "ok", an HTTP status (429, 500, 503, 401...), "sleep:SECONDS" (answer late) or "drop"
    (close the connection without answering).
    """

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.auth: list[str | None] = []
        self.script: list[object] = []
        self.default: object = "ok"
        self.list_format = False
        self.max_tokens = 120_000
        self.max_texts = 1000
        self.lock = threading.Lock()

    def next_action(self) -> object:
        with self.lock:
            return self.script.pop(0) if self.script else self.default


def make_handler(state: FakeVoyage) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep test output quiet
            pass

        def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
            body = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length))
            with state.lock:
                state.requests.append({"path": self.path, **body})
                state.auth.append(self.headers.get("Authorization"))
            action = state.next_action()
            if action == "drop":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if isinstance(action, str) and action.startswith("sleep:"):
                time.sleep(float(action.split(":")[1]))
                action = "ok"
            if isinstance(action, int):
                headers = {"Retry-After": "0"} if action == 429 else {}
                self._send(action, {"detail": f"fake error {action}"}, headers)
                return
            if self.path != "/v1/embeddings":
                self._send(404, {"detail": "not found"})
                return
            texts = body["input"]
            if len(texts) > state.max_texts:
                self._send(
                    400,
                    {
                        "detail": f"The batch size limit is {state.max_texts}. "
                        f"Your batch size is {len(texts)}."
                    },
                )
                return
            tokens = sum(math.ceil(len(t) / CHARS_PER_REAL_TOKEN) + 8 for t in texts)
            if tokens > state.max_tokens:
                self._send(
                    400,
                    {
                        "detail": f"Request to model '{body['model']}' failed. The max allowed "
                        f"tokens per submitted batch is {state.max_tokens}. Your batch has "
                        f"{tokens} tokens after truncation. Please lower the number of tokens "
                        "in the batch."
                    },
                )
                return
            dims = body.get("output_dimension") or 1024
            data = []
            for i, text in enumerate(texts):
                code = fake_code(text, body.get("input_type") or "none", dims)
                if body.get("encoding_format") == "base64" and not state.list_format:
                    emb: object = base64.b64encode(code).decode()
                else:
                    emb = list(code)
                data.append({"object": "embedding", "embedding": emb, "index": i})
            self._send(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": body["model"],
                    "usage": {"total_tokens": tokens},
                },
            )

    return Handler


@pytest.fixture
def server() -> Iterator[tuple[FakeVoyage, str]]:
    state = FakeVoyage()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)
    monkeypatch.delenv("VOYAGE_BASE_URL", raising=False)
    monkeypatch.delenv("VOYAGE_API_KEY_PATH", raising=False)


def embedder(url: str, **options: object) -> VoyageEmbedder:
    options = {"backoff": 0.001, "backoff_max": 0.01, "timeout": 5.0, **options}
    return VoyageEmbedder(base_url=url, **options)  # type: ignore[arg-type]


# -- requests ---------------------------------------------------------------------------------


def test_request_fields_and_codes(server: tuple[FakeVoyage, str]) -> None:
    state, url = server
    emb = embedder(url)
    texts = ["def retry(): pass", "class Session:\n    pass"]
    codes = emb.embed_documents(texts)
    assert codes.dtype == np.uint8 and codes.shape == (2, 128)
    np.testing.assert_array_equal(codes, expected(texts))
    req = state.requests[0]
    assert req["path"] == "/v1/embeddings"
    assert req["model"] == "voyage-code-3"
    assert req["input"] == texts
    assert req["input_type"] == "document"
    assert req["output_dtype"] == "ubinary"
    assert req["output_dimension"] == 1024
    assert req["truncation"] is True
    assert state.auth[0] == f"Bearer {KEY}"

    query = emb.embed_query("how are requests retried")
    assert query.shape == (128,) and query.dtype == np.uint8
    np.testing.assert_array_equal(query, expected(["how are requests retried"], "query")[0])
    assert state.requests[1]["input_type"] == "query"
    assert emb.total_tokens > 0


def test_ints_response_and_dimension(server: tuple[FakeVoyage, str]) -> None:
    """Embeddings sent as lists of ints (no base64) decode to the same codes."""
    state, url = server
    state.list_format = True
    emb = embedder(url, dims=256)
    codes = emb.embed_documents(["a", "b", "c"])
    assert codes.shape == (3, 32)
    np.testing.assert_array_equal(codes, expected(["a", "b", "c"], dims=256))
    assert state.requests[0]["output_dimension"] == 256


def test_base_url_from_environment(
    server: tuple[FakeVoyage, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state, url = server
    monkeypatch.setenv("VOYAGE_BASE_URL", url)
    emb = make_embedder("voyage", backoff=0.001)
    assert emb.embed_query("x").shape == (128,)
    assert len(state.requests) == 1


def test_batches_respect_the_count_limit(server: tuple[FakeVoyage, str]) -> None:
    state, url = server
    texts = [f"t{i}" for i in range(2500)]
    codes = embedder(url).embed_documents(texts)
    assert [len(r["input"]) for r in state.requests] == [1000, 1000, 500]
    np.testing.assert_array_equal(codes, expected(texts))


def test_batches_respect_the_token_limit(server: tuple[FakeVoyage, str]) -> None:
    state, url = server
    texts = [f"{i} " + "x" * 30_000 for i in range(30)]
    codes = embedder(url).embed_documents(texts)
    assert len(state.requests) > 1
    for req in state.requests:
        assert sum(estimate_tokens(t) for t in req["input"]) <= 120_000
    assert [t for r in state.requests for t in r["input"]] == texts
    np.testing.assert_array_equal(codes, expected(texts))


def test_a_batch_the_api_finds_too_large_is_halved(server: tuple[FakeVoyage, str]) -> None:
    state, url = server
    texts = [f"{i} " + "y" * 20_000 for i in range(40)]
    # A wildly optimistic estimate makes the embedder send more than the API accepts.
    codes = embedder(url, chars_per_token=1000.0).embed_documents(texts)
    np.testing.assert_array_equal(codes, expected(texts))
    assert len(state.requests[0]["input"]) == 40  # rejected, then split
    assert len(state.requests) > 2


# -- retries ----------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", [429, 500, 502, 503, 504])
def test_transient_http_errors_are_retried(server: tuple[FakeVoyage, str], fault: int) -> None:
    state, url = server
    state.script = [fault, fault]
    codes = embedder(url).embed_documents(["a", "b"])
    np.testing.assert_array_equal(codes, expected(["a", "b"]))
    assert len(state.requests) == 3


def test_a_timeout_is_retried(server: tuple[FakeVoyage, str]) -> None:
    state, url = server
    state.script = ["sleep:1.0"]
    started = time.monotonic()
    codes = embedder(url, timeout=0.25).embed_documents(["slow"])
    np.testing.assert_array_equal(codes, expected(["slow"]))
    assert len(state.requests) == 2
    assert time.monotonic() - started < 5


def test_a_dropped_connection_is_retried(server: tuple[FakeVoyage, str]) -> None:
    state, url = server
    state.script = ["drop"]
    codes = embedder(url).embed_documents(["a"])
    np.testing.assert_array_equal(codes, expected(["a"]))
    assert len(state.requests) == 2


def test_persistent_failure_is_a_clear_error_without_the_key(
    server: tuple[FakeVoyage, str], caplog: pytest.LogCaptureFixture
) -> None:
    state, url = server
    state.default = 503
    emb = embedder(url, max_retries=3)
    with caplog.at_level(logging.DEBUG), pytest.raises(EmbeddingError) as info:
        emb.embed_documents(["a"])
    assert len(state.requests) == 4
    message = str(info.value)
    assert "4 attempts" in message and "503" in message
    rendered = "".join(traceback.format_exception(info.value))
    for text in (message, repr(info.value), rendered, caplog.text, repr(emb), str(vars(emb))):
        assert KEY not in text
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_errors_that_retrying_cannot_fix_are_not_retried(server: tuple[FakeVoyage, str]) -> None:
    state, url = server
    state.default = 401
    with pytest.raises(EmbeddingError, match="401") as info:
        embedder(url).embed_documents(["a"])
    assert len(state.requests) == 1
    assert KEY not in str(info.value)


def test_missing_key_and_bad_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOYAGE_API_KEY")
    with pytest.raises(EmbeddingError, match="VOYAGE_API_KEY"):
        VoyageEmbedder()
    with pytest.raises(ValueError, match="output dimension"):
        VoyageEmbedder(api_key=KEY, dims=300)
    emb = VoyageEmbedder(api_key=KEY, dims=2048)
    assert KEY not in repr(emb) and emb.dims == 2048 and emb.provider == "voyage"


# -- with the cache ---------------------------------------------------------------------------


def test_a_connection_drop_midway_keeps_finished_batches(
    server: tuple[FakeVoyage, str], tmp_path
) -> None:
    """What was embedded before the fault stays cached; the rerun embeds only the rest."""
    state, url = server
    texts = [f"chunk {i}\n" + "z" * (i % 7) for i in range(50)]
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")
    emb = embedder(url, max_batch_texts=10, max_retries=2)
    state.script = ["ok", "ok"]
    state.default = "drop"  # the server goes away after two batches
    seen: list[tuple[int, int]] = []
    with pytest.raises(EmbeddingError, match="3 attempts"):
        embed_texts(emb, texts, cache, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(0, 50), (10, 50), (20, 50)]
    assert len(state.requests) == 2 + 3
    assert cache.count("voyage") == 20

    state.requests.clear()
    state.default = "ok"
    codes = embed_texts(emb, texts, cache)
    np.testing.assert_array_equal(codes, expected(texts))
    resent = [t for r in state.requests for t in r["input"]]
    assert len(state.requests) == 3
    assert sorted(resent) == sorted(texts[20:])
    # Everything is cached now: a third run sends nothing.
    state.requests.clear()
    np.testing.assert_array_equal(embed_texts(emb, texts, cache), codes)
    assert state.requests == []
    cache.close()


# -- in an index build ------------------------------------------------------------------------


def test_index_build_with_the_voyage_embedder(
    server: tuple[FakeVoyage, str], tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from maguyva import Index

    state, url = server
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "retry.py").write_text("def retry(fn):\n    return fn()\n")
    (repo / "src" / "http.py").write_text("from .retry import retry\n\ndef get(url):\n    return retry(lambda: url)\n")
    index = Index.build(repo, embedder=embedder(url))
    assert index.reader.embedder == {"provider": "voyage", "model": "voyage-code-3", "dims": 1024}
    assert index.reader.codes.shape == (index.summary.chunks, 128)
    first_requests = len(state.requests)
    assert first_requests >= 1
    assert all(r["input_type"] == "document" and r["output_dtype"] == "ubinary" for r in state.requests)
    # An unchanged repository needs no request at all.
    again = Index.build(repo, embedder=embedder(url))
    assert again.summary.embedded_chunks == 0 and len(state.requests) == first_requests
