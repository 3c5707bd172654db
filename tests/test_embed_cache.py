"""The embedding cache and cached batch embedding (`embed_texts`)."""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from maguyva import config
from maguyva.embed import (
    EmbeddingCache,
    EmbeddingError,
    default_cache_path,
    embed_texts,
    text_key,
)


def key(i: int) -> bytes:
    return hashlib.sha256(str(i).encode()).digest()


def code(i: int, width: int = 4) -> bytes:
    return hashlib.shake_128(f"code{i}".encode()).digest(width)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "embeddings.sqlite"


# -- the cache --------------------------------------------------------------------------------


def test_hits_and_misses(path: Path) -> None:
    with EmbeddingCache(path) as cache:
        assert cache.get_many("local", "m", 32, [key(1)]) == {}
        cache.put_many("local", "m", 32, [(key(i), code(i)) for i in range(10)])
        found = cache.get_many("local", "m", 32, [key(3), key(3), key(42), key(9)])
        assert found == {key(3): code(3), key(9): code(9)}
        assert len(cache) == 10 and cache.count("local") == 10 and cache.count("voyage") == 0
        # Overwriting a key keeps one row.
        cache.put_many("local", "m", 32, [(key(3), code(99))])
        assert cache.get_many("local", "m", 32, [key(3)]) == {key(3): code(99)}
        assert len(cache) == 10


def test_many_keys_in_one_call(path: Path) -> None:
    with EmbeddingCache(path) as cache:
        cache.put_many("local", "m", 32, [(key(i), code(i)) for i in range(3000)])
        found = cache.get_many("local", "m", 32, [key(i) for i in range(0, 6000, 2)])
        assert len(found) == 1500 and found[key(2998)] == code(2998)


def test_shared_across_instances(path: Path) -> None:
    first = EmbeddingCache(path)
    second = EmbeddingCache(path)
    first.put_many("voyage", "voyage-code-3", 1024, [(key(1), code(1, 128))])
    assert second.get_many("voyage", "voyage-code-3", 1024, [key(1)]) == {key(1): code(1, 128)}
    first.close()
    second.close()
    with EmbeddingCache(path) as third:
        assert third.count() == 1


def test_key_includes_provider_model_and_dims(path: Path) -> None:
    with EmbeddingCache(path) as cache:
        cache.put_many("local", "m", 32, [(key(1), code(1))])
        assert cache.get_many("voyage", "m", 32, [key(1)]) == {}
        assert cache.get_many("local", "other", 32, [key(1)]) == {}
        assert cache.get_many("local", "m", 64, [key(1)]) == {}
        cache.put_many("local", "m", 64, [(key(1), code(1, 8))])
        assert cache.get_many("local", "m", 32, [key(1)]) == {key(1): code(1)}
        assert cache.get_many("local", "m", 64, [key(1)]) == {key(1): code(1, 8)}


def test_wrong_code_length_is_refused(path: Path) -> None:
    with EmbeddingCache(path) as cache, pytest.raises(ValueError, match="4 bytes"):
        cache.put_many("local", "m", 32, [(key(1), b"abc")])


def test_default_location_follows_maguyva_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    assert default_cache_path() == tmp_path / "home" / "embeddings.sqlite"
    with EmbeddingCache() as cache:
        assert cache.path == tmp_path / "home" / "embeddings.sqlite"
    assert cache.path.exists()


def test_wal_mode(path: Path) -> None:
    EmbeddingCache(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# -- damage -----------------------------------------------------------------------------------


def test_a_file_that_is_not_a_database_is_replaced(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not sqlite" * 100)
    with caplog.at_level(logging.WARNING), EmbeddingCache(path) as cache:
        assert cache.get_many("local", "m", 32, [key(1)]) == {}
        cache.put_many("local", "m", 32, [(key(1), code(1))])
        assert cache.get_many("local", "m", 32, [key(1)]) == {key(1): code(1)}
    assert "damaged" in caplog.text
    assert any(p.name.startswith("embeddings.sqlite.corrupt-") for p in path.parent.iterdir())


def test_a_damaged_row_is_a_miss_never_a_wrong_code(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with EmbeddingCache(path) as cache:
        cache.put_many("local", "m", 32, [(key(i), code(i)) for i in range(5)])
    with sqlite3.connect(path) as conn:
        update = "UPDATE codes SET code = ? WHERE text_sha256 = ?"
        conn.execute(update, (b"\xff\xff\xff\xff", key(2)))  # flipped bits: CRC mismatch
        conn.execute(update, (b"\x00", key(3)))  # wrong length
    with caplog.at_level(logging.WARNING), EmbeddingCache(path) as cache:
        found = cache.get_many("local", "m", 32, [key(i) for i in range(5)])
        assert found == {key(i): code(i) for i in (0, 1, 4)}
        assert cache.count() == 3  # the damaged rows were dropped
    assert "damaged rows" in caplog.text


def test_a_corrupted_page_is_detected_and_the_cache_rebuilt(path: Path) -> None:
    with EmbeddingCache(path) as cache:
        for start in range(0, 20000, 1000):
            cache.put_many(
                "local", "m", 32, [(key(i), code(i)) for i in range(start, start + 1000)]
            )
    with sqlite3.connect(path) as conn:  # fold the WAL into the main file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    assert len(data) > 64 * 4096
    for page in range(4, len(data) // 4096, 3):  # scribble over many pages past the schema
        data[page * 4096 + 8 : page * 4096 + 600] = b"\xa5" * 592
    path.write_bytes(bytes(data))

    with EmbeddingCache(path) as cache:
        found = cache.get_many("local", "m", 32, [key(i) for i in range(20000)])
        # Whatever survives is right; nothing wrong is returned.
        assert all(found[k] == code(i) for i in range(20000) if (k := key(i)) in found)
        cache.put_many("local", "m", 32, [(key(-1), code(-1))])
        assert cache.get_many("local", "m", 32, [key(-1)]) == {key(-1): code(-1)}
    assert any(p.name.startswith("embeddings.sqlite.corrupt-") for p in path.parent.iterdir())


def test_another_format_version_is_replaced(path: Path) -> None:
    with EmbeddingCache(path) as cache:
        cache.put_many("local", "m", 32, [(key(1), code(1))])
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '999' WHERE key = 'format_version'")
    with EmbeddingCache(path) as cache:
        assert cache.count() == 0


# -- several processes ------------------------------------------------------------------------


def _writer(path: str, worker: int) -> None:
    with EmbeddingCache(path, timeout=30) as cache:
        for batch in range(40):
            base = worker * 100_000 + batch * 25
            cache.put_many("local", "m", 32, [(key(i), code(i)) for i in range(base, base + 25)])
            cache.get_many("local", "m", 32, [key(i) for i in range(base - 50, base)])


def test_concurrent_processes(path: Path) -> None:
    EmbeddingCache(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    with EmbeddingCache(path) as cache:
        assert cache.count() == 3 * 40 * 25
        keys = [key(w * 100_000 + i) for w in range(3) for i in range(1000)]
        assert len(cache.get_many("local", "m", 32, keys)) == 3000


# -- embed_texts ------------------------------------------------------------------------------


class CountingEmbedder:
    """Codes from text hashes; records what it was asked; can fail after some batches."""

    provider = "test"
    model = "hash"
    dims = 64
    batch_size = 4

    def __init__(self, fail_after: int | None = None):
        self.calls: list[list[str]] = []
        self.fail_after = fail_after

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise EmbeddingError("provider went away")
        self.calls.append(list(texts))
        return np.array([list(text_key(t)[:8]) for t in texts], dtype=np.uint8)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def expected(texts: Sequence[str]) -> np.ndarray:
    return np.array([list(text_key(t)[:8]) for t in texts], dtype=np.uint8)


def test_embed_texts_embeds_only_misses_and_each_text_once(path: Path) -> None:
    texts = [f"text {i % 12}" for i in range(20)]  # 12 distinct texts, some repeated
    emb = CountingEmbedder()
    progress: list[tuple[int, int]] = []
    with EmbeddingCache(path) as cache:
        codes = embed_texts(emb, texts, cache, progress=lambda d, t: progress.append((d, t)))
        np.testing.assert_array_equal(codes, expected(texts))
        sent = [t for call in emb.calls for t in call]
        assert sorted(sent) == sorted(set(texts)) and all(len(c) <= 4 for c in emb.calls)
        assert progress[0] == (0, 20) and progress[-1] == (20, 20)
        assert [d for d, _ in progress] == sorted(d for d, _ in progress)

        more = texts + ["new one", "new two"]
        emb.calls.clear()
        progress.clear()
        codes = embed_texts(emb, more, cache, progress=lambda d, t: progress.append((d, t)))
        np.testing.assert_array_equal(codes, expected(more))
        assert emb.calls == [["new one", "new two"]]
        assert progress == [(20, 22), (22, 22)]


def test_embed_texts_keeps_finished_batches_when_interrupted(path: Path) -> None:
    texts = [f"chunk {i}" for i in range(10)]
    with EmbeddingCache(path) as cache:
        failing = CountingEmbedder(fail_after=2)
        with pytest.raises(EmbeddingError, match="went away"):
            embed_texts(failing, texts, cache, batch_size=3)
        assert cache.count("test") == 6

        rerun = CountingEmbedder()
        codes = embed_texts(rerun, texts, cache, batch_size=3)
        np.testing.assert_array_equal(codes, expected(texts))
        assert sorted(t for call in rerun.calls for t in call) == texts[6:]


def test_embed_texts_writes_finished_codes_before_the_next_batch_once_the_interval_has_passed(path: Path) -> None:
    """A process killed mid-run (nothing runs after it) loses at most the interval's work."""
    texts = [f"part {i}" for i in range(9)]
    seen: list[int] = []

    class Watching(CountingEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
            with EmbeddingCache(path) as other:  # as another process would see the file
                seen.append(other.count("test"))
            return super().embed_documents(texts)

    with EmbeddingCache(path) as cache:
        with config.using(config.DEFAULT.but(EMBED_CACHE_WRITE_SECONDS=0.0)):
            embed_texts(Watching(), texts, cache, batch_size=3)
        assert seen == [0, 3, 6] and cache.count("test") == 9
        seen.clear()
        with config.using(config.DEFAULT.but(EMBED_CACHE_WRITE_SECONDS=3600.0)):
            embed_texts(Watching(), [f"other {i}" for i in range(9)], cache, batch_size=3)
        assert seen == [9, 9, 9] and cache.count("test") == 18  # one run, written at the end


def test_embed_texts_without_a_cache_and_empty_input() -> None:
    emb = CountingEmbedder()
    np.testing.assert_array_equal(embed_texts(emb, ["a", "b", "a"]), expected(["a", "b", "a"]))
    assert embed_texts(emb, []).shape == (0, 8)


def test_embed_texts_checks_what_the_embedder_returns(path: Path) -> None:
    class Broken(CountingEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
            return np.zeros((len(texts), 3), dtype=np.uint8)

    with EmbeddingCache(path) as cache, pytest.raises(EmbeddingError, match="shaped"):
        embed_texts(Broken(), ["a"], cache)
    with EmbeddingCache(path) as cache:
        assert cache.count() == 0


class FileEmbedder(CountingEmbedder):
    """Embeds a file's chunks together: each code hashes the chunk's text with its whole file's."""

    def __init__(self) -> None:
        super().__init__()
        self.files: list[list[list[str]]] = []

    def embed_files(self, files: Sequence[Sequence[str]], context: float) -> np.ndarray:
        self.files.append([list(f) for f in files])
        return np.concatenate([in_file(list(f)) for f in files]) if files else np.zeros((0, 8), np.uint8)


def in_file(chunks: list[str]) -> np.ndarray:
    return expected([f"{'|'.join(chunks)}/{chunk}" for chunk in chunks])


def test_chunks_are_embedded_in_their_files_and_cached_by_text_and_file(path: Path) -> None:
    """A chunk's code depends on its file, so its cache key does too: the same text in another
    file is embedded again, a file seen before is not, and an edited file is embedded whole."""
    files = [["open", "read"], ["open", "write"], ["open", "read"], ["alone"]]
    texts = [t for f in files for t in f]
    emb = FileEmbedder()
    with EmbeddingCache(path) as cache:
        codes = embed_texts(emb, texts, cache, files=[len(f) for f in files])
        np.testing.assert_array_equal(codes, np.concatenate([in_file(f) for f in files]))
        assert codes[0].tobytes() != codes[2].tobytes(), "the same text in another file"
        assert [f for call in emb.files for f in call] == [files[0], files[1], files[3]]  # the copy once
        assert not emb.calls

        emb.files.clear()
        edited = [["open", "read"], ["open", "write", "close"], ["alone"], ["read", "open"]]
        texts = [t for f in edited for t in f]
        codes = embed_texts(emb, texts, cache, files=[len(f) for f in edited])
        np.testing.assert_array_equal(codes, np.concatenate([in_file(f) for f in edited]))
        # The edited file, all of its chunks; and a file of texts all seen, but in another file.
        assert emb.files == [[edited[1], edited[3]]]

        # Chunks embedded alone (no file context) are another space of the cache.
        emb.files.clear()
        with config.using(config.DEFAULT.but(EMBED_FILE_CONTEXT=0.0)):
            codes = embed_texts(emb, texts, cache, files=[len(f) for f in edited])
        np.testing.assert_array_equal(codes, expected(texts))
        assert not emb.files and sorted(t for call in emb.calls for t in call) == sorted(set(texts))
    with pytest.raises(ValueError, match="files hold 2 texts, not 3"):
        embed_texts(FileEmbedder(), ["a", "b", "c"], files=[1, 1])


def test_an_embedder_that_cannot_embed_files_embeds_each_chunk_alone(path: Path) -> None:
    emb = CountingEmbedder()
    texts = ["open", "read", "open", "write"]
    with EmbeddingCache(path) as cache:
        np.testing.assert_array_equal(embed_texts(emb, texts, cache, files=[2, 2]), expected(texts))
    assert sorted(t for call in emb.calls for t in call) == ["open", "read", "write"]


def test_text_key_is_sha256_of_the_exact_text() -> None:
    assert text_key("abc") == hashlib.sha256(b"abc").digest()
    assert text_key("abc ") != text_key("abc")
    assert len(text_key("\ud800 lone surrogate")) == 32
