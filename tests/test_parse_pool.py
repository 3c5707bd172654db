"""Parsing on several cores: the same answers as parsing file by file, in the same order, whatever
the workers do (start, die, fail a parse)."""

from __future__ import annotations

import io
import sqlite3
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from maguyva import config
from maguyva.index import store
from maguyva.index.build import build_index
from maguyva.index.parse import parse_file, pool


def invented_files(count: int) -> list[tuple[str, bytes]]:
    """Files of several languages, each different, some large enough to fill a batch alone."""
    files: list[tuple[str, bytes]] = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            text = f"def handler_{i}(event):\n    '''Handle event {i}.'''\n    return dispatch_{i}(event)\n"
        elif kind == 1:
            text = f"int ledger_{i}(int x) {{ return x * {i}; }}\nstatic int tally_{i};\n" * (1 + i % 7)
        elif kind == 2:
            text = f"export function render{i}(props) {{ return props.title + '{i}'; }}\n"
        else:
            text = f"Notes for step {i}.\n" * (1 + i % 5)
        path = ["svc/h.py", "core/l.c", "ui/r.js", "docs/n.txt"][kind].replace(".", f"{i}.")
        files.append((path, text.encode()))
    files.append(("svc/big.py", b"".join(f"def f{j}(a):\n    return a + {j}\n".encode() for j in range(4000))))
    return files


@pytest.fixture()
def small_batches() -> Iterator[None]:
    with config.using(config.current().but(PARSE_BATCH_BYTES=2_000)):
        yield


def test_workers_give_what_parsing_file_by_file_gives(small_batches: None) -> None:
    files = invented_files(120)
    told: list[int] = []
    assert pool.parse_files(files, workers=2, progress=told.append) == [parse_file(p, c) for p, c in files]
    assert sum(told) == len(files)
    assert len(told) > 3  # several batches, so the workers did take some


@pytest.mark.parametrize("workers", [0, 2])
def test_a_released_file_list_gives_each_content_up_once_its_file_is_parsed(small_batches: None, workers: int) -> None:
    files = invented_files(40)
    expected = [parse_file(p, c) for p, c in files]
    given = list(files)
    seen: list[int] = []

    def told(count: int) -> None:
        # Every file counted so far is parsed, and its content given up.
        seen.append(sum(1 for _, content in given if content == b""))

    assert pool.parse_files(given, workers=workers, progress=told, release=True) == expected
    assert [path for path, _ in given] == [path for path, _ in files]
    assert all(content == b"" for _, content in given)
    assert seen[-1] == len(files) and seen == sorted(seen) and len(seen) > 3
    with pytest.raises(TypeError, match="empties a list"):
        pool.parse_files(tuple(files), release=True)


def test_batches_hold_every_file_once_a_large_file_alone_and_the_largest_go_first(small_batches: None) -> None:
    files = invented_files(60)
    files.insert(10, ("core/huge.c", b"int spare;\n" * 900))  # past the batch size, mid-list
    batches = pool._batches(files, parsers=2)
    assert sorted(i for batch in batches for i in batch) == list(range(len(files)))
    assert all(batch.step == 1 for batch in batches)  # consecutive files
    sizes = [sum(len(files[i][1]) + 256 for i in batch) for batch in batches]
    assert sizes == sorted(sizes, reverse=True)
    target = 2_000
    assert range(10, 11) in batches and range(len(files) - 1, len(files)) in batches
    # A batch of several files stays within the size: a large file does not gather small ones.
    assert all(size <= target for batch, size in zip(batches, sizes) if len(batch) > 1)


@pytest.mark.parametrize(
    "command",
    [
        ("/nonexistent/python", "-m", "maguyva.index.parse.worker"),  # cannot start
        (sys.executable, "-c", "import sys; sys.stdin.buffer.read(10); sys.exit(3)"),  # dies on its first batch
        (sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'not a pickle at all'); sys.stdout.flush()"),
    ],
    ids=["cannot-start", "dies", "garbles"],
)
def test_a_failing_worker_leaves_its_files_to_the_caller(
    small_batches: None, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    monkeypatch.setattr(pool, "WORKER_COMMAND", command)
    files = invented_files(40)
    assert pool.parse_files(files, workers=2) == [parse_file(p, c) for p, c in files]


def test_a_parse_that_raised_in_a_worker_is_parsed_again_by_the_caller(
    small_batches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A worker whose every parse raises answers None; the caller parses those batches itself.
    raising = textwrap.dedent(
        """\
        import sys
        from maguyva.index.parse import pool
        def broken(path, content):
            raise ValueError(path)
        pool.parse_file = broken
        pool.serve(sys.stdin.buffer, sys.stdout.buffer)
        """
    )
    monkeypatch.setattr(pool, "WORKER_COMMAND", (sys.executable, "-c", raising))
    files = invented_files(30)
    assert pool.parse_files(files, workers=1) == [parse_file(p, c) for p, c in files]


def test_serve_says_it_is_ready_then_answers_each_batch_and_none_for_one_that_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    good = [("a.py", b"def a():\n    return 1\n"), ("b.txt", b"words\n")]
    source = io.BytesIO()
    pool._send(source, good)
    pool._send(source, [("c.py", b"x = 1\n")])
    source.seek(0)
    sink = io.BytesIO()
    real = pool.parse_file

    def raising_on_c(path: str, content: bytes) -> object:
        if path == "c.py":
            raise ValueError("no")
        return real(path, content)

    monkeypatch.setattr(pool, "parse_file", raising_on_c)
    pool.serve(source, sink)
    sink.seek(0)
    assert pool._receive(sink) == "ready"
    assert pool._receive(sink) == [real(p, c) for p, c in good]
    assert pool._receive(sink) is None
    with pytest.raises(EOFError):
        pool._receive(sink)


def test_serve_compiles_the_languages_it_is_told_and_answers_only_the_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    batch = [("a.py", b"def a():\n    return 1\n")]
    source = io.BytesIO()
    pool._send(source, (pool._PREPARE, ["c", "python"]))
    pool._send(source, batch)
    source.seek(0)
    compiled: list[str] = []
    monkeypatch.setattr(pool, "compiled_for", compiled.append)
    sink = io.BytesIO()
    pool.serve(source, sink)
    sink.seek(0)
    assert compiled == ["c", "python"]
    assert pool._receive(sink) == "ready"
    assert pool._receive(sink) == [parse_file(p, c) for p, c in batch]
    with pytest.raises(EOFError):
        pool._receive(sink)


def test_worker_count_follows_size_and_cores() -> None:
    with config.using(config.DEFAULT.but(PARSE_PARALLEL_MIN_BYTES=1000, PARSE_MAX_WORKERS=3)):
        assert pool.worker_count(999, cores=8) == 0
        assert pool.worker_count(1000, cores=1) == 0  # the caller parses alone
        assert pool.worker_count(1000, cores=2) == 1
        assert pool.worker_count(10**9, cores=16) == 3


def _contents(index_dir: Path) -> dict[str, object]:
    """Everything an index holds, but the times it records."""
    generation = store.current_generation(index_dir)
    db = sqlite3.connect(generation / store.META)
    try:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        held: dict[str, object] = {
            table: sorted(map(repr, db.execute(f"SELECT * FROM {table}"))) for table in tables if table != "meta"
        }
        held["meta"] = {k: v for k, v in db.execute("SELECT * FROM meta") if k not in ("built_at", "walked_at_ns")}
    finally:
        db.close()
    for part in (store.TEXT_INDEX, store.CODES):
        held[part] = (generation / part).read_bytes()
    return held


def test_an_index_built_with_workers_is_the_index_built_without(
    tmp_path: Path, small_batches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    for path, content in invented_files(60):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(content)
    alone = build_index(root, tmp_path / "alone", tuning=config.current().but(PARSE_PARALLEL_MIN_BYTES=10**12))
    monkeypatch.setattr(pool, "usable_cores", lambda: 3)
    helped = build_index(root, tmp_path / "helped", tuning=config.current().but(PARSE_PARALLEL_MIN_BYTES=0))
    assert helped.parsed_files == alone.parsed_files == 61
    assert _contents(tmp_path / "helped") == _contents(tmp_path / "alone")


@pytest.fixture()
def no_kept_workers() -> Iterator[None]:
    # A worker an earlier test started may become ready (and kept) after that test ended.
    pool.close_kept_workers()
    threading.Event().wait(1.0)
    pool.close_kept_workers()
    yield
    pool.close_kept_workers()


def _kept_pids() -> list[int]:
    with pool._kept.lock:
        return [worker.process.pid for worker, _ in pool._kept.idle]


def _kept_once_ready() -> list[int]:
    """The kept workers' pids, once one is kept (a worker may still be starting when the caller
    is done: it is kept once ready), or none after a bounded wait."""
    for _ in range(200):
        if _kept_pids():
            break
        threading.Event().wait(0.05)
    return _kept_pids()


def test_a_ready_worker_is_kept_for_the_next_builds_told_their_languages_and_closed_on_request(
    small_batches: None, no_kept_workers: None
) -> None:
    files = invented_files(60)
    expected = [parse_file(p, c) for p, c in files]
    assert pool.parse_files(files, workers=1) == expected
    first = _kept_once_ready()
    assert len(first) == 1
    with config.using(config.current().but(PARSE_KEPT_MIN_BYTES=1)):
        assert pool.worker_count(10, cores=4) == 1  # small files: only the kept worker helps
    assert pool.parse_files(files, workers=1) == expected
    assert _kept_once_ready() == first  # the same process served the second build
    # Told a build's languages, it serves the build and is kept again: every answer it gave was
    # the answer to a batch, none to being told languages.
    pool.prepare_kept_workers(["python", "c", "javascript", "no such language"])
    assert pool.parse_files(files, workers=1) == expected
    assert _kept_once_ready() == first
    process = pool._kept.idle[0][0].process
    pool.close_kept_workers()
    assert _kept_pids() == [] and process.poll() is not None


def test_no_worker_is_kept_when_keeping_is_off(small_batches: None, no_kept_workers: None) -> None:
    files = invented_files(30)
    with config.using(config.current().but(PARSE_WORKER_KEEP_SECONDS=0.0)):
        assert pool.parse_files(files, workers=1) == [parse_file(p, c) for p, c in files]
    threading.Event().wait(1.0)  # time for a late worker to become ready and be let go
    assert _kept_pids() == []


def test_the_caller_parses_what_a_stalled_worker_holds(
    small_batches: None, no_kept_workers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A kept worker that takes a batch and never answers: the caller parses that batch itself
    # rather than wait, and the worker is not kept again.
    stalled = textwrap.dedent(
        """\
        import sys
        from maguyva.index.parse import pool
        pool._send(sys.stdout.buffer, pool._READY)
        pool._receive(sys.stdin.buffer)
        sys.stdin.buffer.read()
        """
    )
    monkeypatch.setattr(pool, "WORKER_COMMAND", (sys.executable, "-c", stalled))
    worker = pool._Worker()
    assert worker.wait_ready()
    pool._kept.give(worker, 60.0)
    real = pool.parse_file

    def unhurried(path: str, content: bytes) -> object:
        threading.Event().wait(0.005)  # the caller leaves the worker time to take a batch
        return real(path, content)

    monkeypatch.setattr(pool, "parse_file", unhurried)
    files = invented_files(40)
    answers: list[object] = []
    caller = threading.Thread(target=lambda: answers.append(pool.parse_files(files, workers=1)), daemon=True)
    caller.start()
    caller.join(timeout=60)  # a bound on a hang, not a speed check: the caller never waits on the worker
    try:
        assert answers == [[real(p, c) for p, c in files]]
        assert _kept_pids() == []
        assert worker.process.poll() is None  # it still holds its batch
    finally:
        worker.process.kill()
        worker.process.wait()
