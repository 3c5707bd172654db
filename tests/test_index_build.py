"""Building the on-disk index: content, incremental updates, durability, locking, bad files."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import one_table
import pytest
from one_table import table


def table_rows(db_path: Path, sql: str) -> list[tuple]:
    """The rows of `sql` over one database file as it is."""
    with sqlite3.connect(db_path) as db:
        return db.execute(sql).fetchall()

from maguyva import Index, config
from maguyva.embed import EmbeddingError, make_embedder
from maguyva.index import build as build_module
from maguyva.index import store
from maguyva.index.build import build_index
from maguyva.index.segments import Segments
from maguyva.index.text_layers import LayeredTextIndex

FIXTURE = {
    "pkg/__init__.py": "",
    "pkg/http.py": textwrap.dedent(
        '''\
        from .retry import retry


        class Session:
            """An HTTP session that keeps connections open."""

            def request(self, method, url):
                """Send a request, retrying on connection errors."""
                return retry(lambda: self.send(method, url))

            def send(self, method, url):
                raise ConnectionError("ECONNREFUSED")

            def get(self, url):
                return self.request("GET", url)
        '''
    ),
    "pkg/retry.py": textwrap.dedent(
        '''\
        import time


        def retry(fn, attempts=3):
            """Call fn until it succeeds, sleeping between attempts."""
            for attempt in range(attempts):
                try:
                    return fn()
                except ConnectionError:
                    time.sleep(2 ** attempt)
            raise RuntimeError("gave up")
        '''
    ),
    "web/server.js": textwrap.dedent(
        """\
        const { parseConfig } = require('./config');

        function startServer(port) {
          const config = parseConfig(process.env);
          return listen(port, config);
        }

        module.exports = { startServer };
        """
    ),
    "web/config.js": "function parseConfig(env) {\n  return { debug: env.DEBUG === '1' };\n}\nmodule.exports = { parseConfig };\n",
    "README.md": "# Fixture\n\nA small repository for tests.\n",
}


class CountingEmbedder:
    """The real local embedder, counting the texts it is asked to embed."""

    def __init__(self):
        self.inner = make_embedder("local")
        self.provider, self.model, self.dims = self.inner.provider, self.inner.model, self.inner.dims
        self.embedded: list[str] = []

    def embed_documents(self, texts):
        self.embedded.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # A private embedding cache per test, so counts of embedded texts are exact.
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    write_tree(root, FIXTURE)
    return root


def snapshot(index_dir: Path) -> dict[str, object]:
    """Everything an index holds that a search could see, minus times and sizes."""
    generation = store.current_generation(index_dir)
    meta = generation / store.META
    with contextlib.closing(sqlite3.connect(f"file:{meta}?mode=ro", uri=True)) as db:
        file_count = db.execute("SELECT count(*) FROM files").fetchone()[0]
    segments = Segments(generation, file_count)
    try:
        text = LayeredTextIndex.of_generation(generation, segments)
        documents = [text.doc_bytes(i) for i in range(text.doc_count)]
    finally:
        segments.close()
    return {
        "files": table(meta, "SELECT id, path, language, sha256, roles, role_names FROM files ORDER BY id"),
        "chunks": table(meta, "SELECT * FROM chunks ORDER BY id"),
        "symbols": table(meta, "SELECT * FROM symbols ORDER BY id"),
        "refs": table(meta, "SELECT * FROM refs ORDER BY id"),
        "edges": table(meta, "SELECT * FROM edges ORDER BY src, dst, kind"),
        "code_words": table(meta, "SELECT * FROM code_words ORDER BY word"),
        "codes": one_table.codes(generation).tobytes(),
        "nodes": (generation / store.NODES).read_bytes(),
        # The trigram index's documents, whichever layer holds each (`index.text_layers`).
        "text": documents,
    }


def test_build_stores_files_chunks_symbols_edges_and_codes(repo):
    index = Index.build(repo)
    summary = index.summary
    assert summary.files == 6 and summary.parsed_files == 6
    assert summary.chunks == len(index.reader.chunk_file) > 0
    assert index.reader.codes.shape == (summary.chunks, index.reader.embedder["dims"] // 8)
    meta = store.current_generation(index.index_dir) / store.META
    symbols = {row[0] for row in table(meta, "SELECT qualified_name FROM symbols")}
    assert {"Session", "Session.request", "Session.get", "retry", "startServer", "parseConfig"} <= symbols
    edges = table(
        meta,
        "SELECT s1.qualified_name, s2.qualified_name, e.kind FROM edges e "
        "JOIN symbols s1 ON e.src = (SELECT COUNT(*) FROM files) + s1.id "
        "JOIN symbols s2 ON e.dst = (SELECT COUNT(*) FROM files) + s2.id",
    )
    assert ("Session.request", "retry", "call") in edges
    assert ("Session.get", "Session.request", "call") in edges
    assert ("startServer", "parseConfig", "call") in edges
    assert index.reader.chunk_centrality.max() > 0
    assert summary.skipped == {}
    # What each file's code spells: `retry` is called in http.py and defined in retry.py; the
    # README's words count too (a file with no syntax tree); the docstrings' "keeps" and "succeeds" do not.
    spelled = index.reader.code_word_files(["retri", "fixtur", "keep", "succeed", "nowhere"])
    paths = {word: {index.reader.files[f].path for f in ids.tolist()} for word, ids in spelled.items()}
    assert paths == {"retri": {"pkg/http.py", "pkg/retry.py"}, "fixtur": {"README.md"}}


def test_code_word_postings_read_once_or_again_are_the_same(repo):
    reader = Index.build(repo).reader
    meta = store.current_generation(reader.index_dir) / store.META
    stored = {w: store.decode_file_ids(f).tolist() for w, f in table(meta, "SELECT word, files FROM code_words")}
    words = ["retri", "sess", "pars", "nowhere", "config"]
    expected = {w: stored[w] for w in words if w in stored}
    assert set(expected) == {"retri", "sess", "pars", "config"}
    for cap in (10**6, 0):  # kept in memory, or forgotten at every read
        with config.using(config.DEFAULT.but(CODE_WORD_CACHE_ENTRIES=cap)):
            for order in (words, words[::-1], words[1:3]):
                got = {w: ids.tolist() for w, ids in reader.code_word_files(order).items()}
                assert got == {w: expected[w] for w in order if w in expected}


def test_code_word_postings_kept_are_those_asked_most_recently(repo, monkeypatch):
    reader = Index.build(repo).reader
    sizes = {w: len(ids) for w, ids in reader.code_word_files(["retri", "sess", "pars"]).items()}
    assert set(sizes) == {"retri", "sess", "pars"}
    fresh = Index.open(repo).reader
    reads: list[str] = []
    read = fresh.segments.code_words
    monkeypatch.setattr(fresh.segments, "code_words", lambda words: reads.extend(words) or read(words))
    # Room for any two of the three postings, not for all three (each counts its ids and one more).
    cap = sum(n + 1 for n in sizes.values()) - 1
    with config.using(config.DEFAULT.but(CODE_WORD_CACHE_ENTRIES=cap)):
        for word in ("retri", "sess", "retri", "pars", "retri", "sess"):
            fresh.code_word_files([word])
    # "retri", asked again before "pars" came, stayed; "sess" was the least recent then.
    assert reads == ["retri", "sess", "pars", "sess"]
    assert fresh._code_word_entries <= cap
    assert all(ids is None or ids.dtype == np.uint32 for ids in fresh._code_words.values())


def test_incremental_rebuild_equals_full_rebuild_and_redoes_only_changes(repo, tmp_path):
    counting = CountingEmbedder()
    build_index(repo, embedder=counting)
    first = len(counting.embedded)
    # Edit one file, add one, delete one.
    (repo / "pkg/retry.py").write_text(FIXTURE["pkg/retry.py"].replace("attempts=3", "attempts=5"))
    write_tree(repo, {"pkg/backoff.py": "def backoff(n):\n    return 2 ** n\n"})
    (repo / "web/config.js").unlink()
    counting.embedded.clear()
    summary = build_index(repo, embedder=counting)
    assert summary.parsed_files == 2 and summary.reused_files == 4
    assert all(text.startswith(("pkg/retry.py", "pkg/backoff.py")) for text in counting.embedded)
    assert 0 < len(counting.embedded) < first
    incremental = snapshot(store.default_index_dir(repo))

    full = build_index(repo, index_dir=tmp_path / "fresh", embedder=make_embedder("local"))
    assert full.parsed_files == 6
    assert snapshot(tmp_path / "fresh") == incremental

    # Nothing changed: nothing parsed or embedded, and the result is the same again.
    counting.embedded.clear()
    again = build_index(repo, embedder=counting)
    assert (again.parsed_files, again.embedded_chunks, counting.embedded) == (0, 0, [])
    assert snapshot(store.default_index_dir(repo)) == incremental


def settle(root: Path, seconds_ago: float = 60.0) -> None:
    """Every file's mtime moved into the past, beyond the window in which a stat is suspect."""
    then = time.time() - seconds_ago
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (then, then))


def test_an_update_reads_only_files_whose_stat_changed_and_equals_a_full_build(repo, tmp_path, monkeypatch):
    settle(repo)
    build_index(repo, embedder=make_embedder("local"))
    read: list[str] = []
    real_read = build_module.read_files

    def recording_read(root, paths, max_file_size):
        read.extend(paths)
        return real_read(root, paths, max_file_size)

    monkeypatch.setattr(build_module, "read_files", recording_read)
    (repo / "pkg/retry.py").write_text(FIXTURE["pkg/retry.py"].replace("attempts=3", "attempts=5"))
    write_tree(repo, {"pkg/backoff.py": "def backoff(n):\n    return 2 ** n\n"})
    (repo / "web/config.js").unlink()
    summary = build_index(repo, embedder=make_embedder("local"))
    # The unchanged files keep their records and their documents in the trigram index unread.
    assert sorted(read) == ["pkg/backoff.py", "pkg/retry.py"]
    assert (summary.parsed_files, summary.reused_files) == (2, 4)
    build_index(repo, index_dir=tmp_path / "fresh", embedder=make_embedder("local"), rebuild=True)
    assert snapshot(store.default_index_dir(repo)) == snapshot(tmp_path / "fresh")


def test_an_update_records_each_files_stat_as_a_full_build_does(repo, tmp_path):
    """A file touched (its content the same), a file edited in place, and the rest untouched: the
    update's files table holds every file's size, mtime and digest as they are on disk, or the
    next freshness check would find the touched file changed again and again."""
    settle(repo)
    build_index(repo, embedder=make_embedder("local"))
    retry, config_js = repo / "pkg/retry.py", repo / "web/config.js"
    then = time.time() - 300
    os.utime(config_js, (then, then))  # touched: the same bytes, another mtime
    retry.write_text(FIXTURE["pkg/retry.py"].replace("attempts=3", "attempts=4"))
    os.utime(retry, (then, then))
    summary = build_index(repo, embedder=make_embedder("local"))
    assert summary.parsed_files == 1
    build_index(repo, index_dir=tmp_path / "fresh", embedder=make_embedder("local"), rebuild=True)
    stats = "SELECT id, path, size, mtime_ns, sha256 FROM files ORDER BY id"
    updated = table(store.current_generation(store.default_index_dir(repo)) / store.META, stats)
    assert updated == table(store.current_generation(tmp_path / "fresh") / store.META, stats)
    assert [row for row in updated if row[1] == "web/config.js"][0][3] == config_js.stat().st_mtime_ns
    assert Index.open(repo).changes().stale is False


def test_an_edit_that_keeps_size_and_mtime_inside_the_suspect_window_is_read(repo, tmp_path):
    # Files written just now: their recorded mtimes are too close to the build's walk to trust.
    build_index(repo, embedder=make_embedder("local"))
    retry = repo / "pkg/retry.py"
    recorded = retry.stat().st_mtime_ns
    retry.write_text(FIXTURE["pkg/retry.py"].replace("attempts=3", "attempts=7"))
    os.utime(retry, ns=(recorded, recorded))
    build_index(repo, embedder=make_embedder("local"))
    build_index(repo, index_dir=tmp_path / "fresh", embedder=make_embedder("local"), rebuild=True)
    assert snapshot(store.default_index_dir(repo)) == snapshot(tmp_path / "fresh")
    assert Index.open(repo).search('"attempts=7"').results


def test_an_update_over_a_damaged_trigram_index_reads_every_file_again(repo, tmp_path, monkeypatch):
    settle(repo)
    build_index(repo, embedder=make_embedder("local"))
    text = store.current_generation(store.default_index_dir(repo)) / store.TEXT_INDEX
    data = bytearray(text.read_bytes())
    data[len(data) // 2] ^= 0xFF
    text.write_bytes(bytes(data))
    read: list[str] = []
    real_read = build_module.read_files
    monkeypatch.setattr(build_module, "read_files", lambda root, paths, size: read.extend(paths) or real_read(root, paths, size))
    (repo / "pkg/retry.py").write_text(FIXTURE["pkg/retry.py"].replace("attempts=3", "attempts=5"))
    summary = build_index(repo, embedder=make_embedder("local"))
    assert len(read) == len(FIXTURE) and summary.reused_files == 5
    build_index(repo, index_dir=tmp_path / "fresh", embedder=make_embedder("local"), rebuild=True)
    assert snapshot(store.default_index_dir(repo)) == snapshot(tmp_path / "fresh")


def test_a_build_with_nothing_changed_keeps_the_published_generation(repo):
    settle(repo)
    first = build_index(repo, embedder=make_embedder("local"))
    index_dir = store.default_index_dir(repo)
    published = store.read_current(index_dir)
    before = snapshot(index_dir)
    again = build_index(repo, embedder=make_embedder("local"))
    # Nothing read, parsed, embedded or written: the same generation, described as it was.
    assert store.read_current(index_dir) == published
    assert (again.parsed_files, again.embedded_chunks, again.reused_files) == (0, 0, first.files)
    assert (again.files, again.chunks, again.symbols, again.edges, again.skipped) == (
        first.files, first.chunks, first.symbols, first.edges, first.skipped
    )
    assert snapshot(index_dir) == before


def test_a_build_with_nothing_changed_does_not_load_the_model(repo, monkeypatch):
    from maguyva.embed import identity_of

    assert identity_of("local") == build_module.embedder_identity(make_embedder("local"))
    settle(repo)
    build_index(repo)
    published = store.read_current(store.default_index_dir(repo))

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(build_module, "make_embedder", refuse)
    assert build_index(repo).parsed_files == 0
    assert store.read_current(store.default_index_dir(repo)) == published
    (repo / "pkg/backoff.py").write_text("def backoff(n):\n    return 2 ** n\n")
    with pytest.raises(AssertionError, match="the model was loaded"):  # a change needs it
        build_index(repo)


@pytest.mark.parametrize("change", ["edit", "touch", "add", "remove", "recent"])
def test_any_change_to_the_files_builds_a_new_generation(repo, change):
    settle(repo)
    build_index(repo, embedder=make_embedder("local"))
    index_dir = store.default_index_dir(repo)
    published = store.read_current(index_dir)
    retry = repo / "pkg/retry.py"
    if change == "edit":
        retry.write_text(FIXTURE["pkg/retry.py"].replace("attempts=3", "attempts=12"))
        settle(repo, 45.0)
    elif change == "touch":  # the content as it was, a new mtime: the stat is recorded again
        settle(repo, 30.0)
    elif change == "add":
        write_tree(repo, {"pkg/backoff.py": "def backoff(n):\n    return 2 ** n\n"})
        settle(repo)
    elif change == "remove":
        (repo / "web/config.js").unlink()
    else:  # a file written within the suspect window, content unchanged
        settle(repo, 0.0)
    summary = build_index(repo, embedder=make_embedder("local"))
    assert store.read_current(index_dir) != published
    full = build_index(repo, index_dir=repo.parent / "fresh", embedder=make_embedder("local"))
    assert snapshot(index_dir)["code_words"] == snapshot(repo.parent / "fresh")["code_words"]
    assert summary.files == full.files


def test_a_build_with_nothing_changed_but_its_options_or_a_damaged_index_builds_again(repo):
    settle(repo)
    build_index(repo, embedder=make_embedder("local"))
    index_dir = store.default_index_dir(repo)
    published = store.read_current(index_dir)
    build_index(repo, embedder=make_embedder("local"), max_file_size=500)
    assert store.read_current(index_dir) != published
    published = store.read_current(index_dir)
    codes = store.current_generation(index_dir) / store.CODES
    data = bytearray(codes.read_bytes())
    data[-1] ^= 0xFF
    codes.write_bytes(bytes(data))
    summary = build_index(repo, embedder=make_embedder("local"), max_file_size=500)
    assert store.read_current(index_dir) != published
    assert any("every file indexed again" in w for w in summary.warnings)


def test_new_parsing_rules_parse_every_file_again(repo, monkeypatch):
    build_index(repo)
    monkeypatch.setattr(build_module, "PARSER_VERSION", build_module.PARSER_VERSION + 1)
    assert build_index(repo).parsed_files == 6
    assert build_index(repo).parsed_files == 0


def test_another_embedding_model_indexes_every_file_again_and_says_why(repo):
    build_index(repo)
    other = CountingEmbedder()
    other.model = "another-model-0123abcd"
    summary = build_index(repo, embedder=other)
    assert summary.parsed_files == 6 and len(other.embedded) == summary.embedded_chunks > 0
    (said,) = [w for w in summary.warnings if "embedded by" in w]
    assert other.model in said and make_embedder("local").model in said
    assert "every file indexed again" in said
    # The same model again: nothing to say, nothing to redo.
    again = build_index(repo, embedder=other)
    assert again.parsed_files == 0 and not again.warnings


def test_a_failed_build_leaves_the_previous_index_usable(repo, monkeypatch):
    Index.build(repo)
    index_dir = store.default_index_dir(repo)
    before = snapshot(index_dir)
    (repo / "pkg/retry.py").write_text("def retry():\n    pass\n")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(build_module.store, "publish", interrupted)
        with pytest.raises(KeyboardInterrupt):
            build_index(repo)
    assert snapshot(index_dir) == before
    assert [p.name for p in index_dir.glob("gen-*")] == [store.current_generation(index_dir).name]
    assert build_index(repo).parsed_files == 1


def test_a_small_builds_trigram_index_made_beside_its_parse_is_the_one_made_before_it(repo, tmp_path):
    beside = build_index(repo, tmp_path / "beside")
    apart = config.DEFAULT.but(TEXT_INDEX_BESIDE_MAX_BYTES=0, EMBED_BESIDE_MAX_BYTES=0)
    first = build_index(repo, tmp_path / "first", tuning=apart)
    assert beside.parsed_files == first.parsed_files == 6
    assert snapshot(tmp_path / "beside") == snapshot(tmp_path / "first")
    for part in (store.TEXT_INDEX, store.TEXT_DELTA):
        made = [(store.current_generation(tmp_path / name) / part).read_bytes() for name in ("beside", "first")]
        assert made[0] == made[1]


def test_a_build_past_the_size_embeds_every_chunk_before_it_resolves_the_graph(repo, monkeypatch):
    real = build_module.dependency_edges
    seen: list[bool] = []

    def checking(records, previous):
        # The chunks' texts are dropped as they are embedded: none is left for the graph's time.
        seen.append(all(r.codes is not None and not any(c.text for c in r.chunks) for r in records))
        return real(records, previous)

    monkeypatch.setattr(build_module, "dependency_edges", checking)
    build_index(repo, tuning=config.DEFAULT.but(EMBED_BESIDE_MAX_BYTES=0))
    assert seen == [True]


class FailingEmbedder(CountingEmbedder):
    """Fails the way a model file that cannot be read does."""

    def embed_documents(self, texts):
        raise PermissionError(13, "the model's weights cannot be read")


def test_an_embedding_that_fails_beside_the_graph_fails_the_build_as_itself(repo):
    Index.build(repo)
    index_dir = store.default_index_dir(repo)
    before = snapshot(index_dir)
    (repo / "pkg/retry.py").write_text("def retry():\n    pass\n")
    with pytest.raises(PermissionError, match="cannot be read") as raised:
        build_index(repo, embedder=FailingEmbedder())
    assert not isinstance(raised.value, store.IndexWriteError)
    assert snapshot(index_dir) == before
    assert [p.name for p in index_dir.glob("gen-*")] == [store.current_generation(index_dir).name]


def test_a_named_model_loads_beside_the_parse_and_a_load_that_fails_fails_the_build_as_itself(repo, monkeypatch):
    Index.build(repo)
    index_dir = store.default_index_dir(repo)
    before = snapshot(index_dir)
    (repo / "pkg/retry.py").write_text("def retry():\n    pass\n")
    loaded_on: list[str] = []
    parsed_on: list[str] = []
    collect = build_module.collect_records

    def recording(*args, **kwargs):
        parsed_on.append(threading.current_thread().name)
        return collect(*args, **kwargs)

    def unreadable(name, **options):
        loaded_on.append(threading.current_thread().name)
        raise EmbeddingError("the local model's table is unreadable")

    monkeypatch.setattr(build_module, "make_embedder", unreadable)
    monkeypatch.setattr(build_module, "collect_records", recording)
    with pytest.raises(EmbeddingError, match="unreadable") as raised:
        build_index(repo, embedder="local")
    assert not isinstance(raised.value, store.IndexWriteError)
    assert loaded_on == ["maguyva-model"] and parsed_on == [threading.current_thread().name]
    assert snapshot(index_dir) == before
    assert [p.name for p in index_dir.glob("gen-*")] == [store.current_generation(index_dir).name]
    # A parse that fails while the model loads waits for the load and raises its own error.
    def slow(name, **options):
        time.sleep(0.3)
        return make_embedder(name, **options)

    monkeypatch.setattr(build_module, "make_embedder", slow)

    def failing(*args, **kwargs):
        raise RuntimeError("the parse failed")

    monkeypatch.setattr(build_module, "collect_records", failing)
    with pytest.raises(RuntimeError, match="the parse failed"):
        build_index(repo, embedder="local")
    assert snapshot(index_dir) == before
    assert not any(t.name == "maguyva-model" for t in threading.enumerate())


def test_a_build_that_fails_beside_its_embedding_stops_it_before_the_next_group(repo, monkeypatch):
    made: dict[str, build_module.Beside] = {}

    class Recorded(build_module.Beside):
        def __init__(self, step, name):
            super().__init__(step, name)
            made[name] = self

    embedding = threading.Event()

    class Waiting(CountingEmbedder):
        """Embeds its first group once the build has asked it to stop."""

        def embed_documents(self, texts):
            embedding.set()
            for _ in range(1000):
                if "embed" in made and made["embed"].stop.is_set():
                    break
                time.sleep(0.01)
            return super().embed_documents(texts)

    def failing(records, previous):
        assert embedding.wait(10)
        raise RuntimeError("the graph could not be resolved")

    monkeypatch.setattr(build_module, "Beside", Recorded)
    monkeypatch.setattr(build_module, "dependency_edges", failing)
    embedder = Waiting()
    with pytest.raises(RuntimeError, match="could not be resolved"):
        build_index(repo, embedder=embedder, tuning=config.DEFAULT.but(EMBED_GROUP_CHUNKS=1))
    # One file's chunks were embedded (the first group), and none of the other five files'.
    assert embedder.embedded
    assert len({text.split("\n", 1)[0] for text in embedder.embedded}) == 1
    assert not list(store.default_index_dir(repo).glob("gen-*"))


def test_killed_build_process_leaves_the_previous_index_usable(repo):
    Index.build(repo)
    index_dir = store.default_index_dir(repo)
    before = snapshot(index_dir)
    (repo / "pkg/retry.py").write_text("def retry():\n    pass\n")
    # A child process that stops for good in the middle of writing a generation.
    script = textwrap.dedent(
        f"""
        import os, sys, time
        from pathlib import Path
        from maguyva.index import build, store
        real = build.write_generation
        def slow(generation, *args):
            (generation / "started").write_text("x")
            time.sleep(60)
        build.write_generation = slow
        build.build_index(Path({str(repo)!r}))
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], env=os.environ.copy())
    try:
        deadline = time.time() + 60
        while not list(index_dir.glob("gen-*/started")):
            assert time.time() < deadline, "the build never started writing"
            assert child.poll() is None, "the build process ended early"
            time.sleep(0.05)
        child.kill()
    finally:
        child.wait()
    assert snapshot(index_dir) == before
    summary = build_index(repo)
    assert summary.parsed_files == 1
    assert len(list(index_dir.glob("gen-*"))) == 1


def test_second_builder_is_refused_while_one_holds_the_lock(repo):
    index_dir = store.default_index_dir(repo)
    with store.build_lock(index_dir):
        script = f"from pathlib import Path; from maguyva.index.build import build_index; build_index(Path({str(repo)!r}))"
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=os.environ.copy())
    assert done.returncode != 0
    assert "being indexed by another process" in done.stderr
    Index.build(repo)  # free again


def test_format_mismatch_and_damage_are_clear_errors(repo):
    Index.build(repo)
    index_dir = store.default_index_dir(repo)
    generation = store.current_generation(index_dir)
    with sqlite3.connect(generation / store.META) as db:
        db.execute("UPDATE meta SET value = '1' WHERE key = 'format_version'")
    with pytest.raises(store.IndexFormatError, match="rebuild"):
        Index.open(repo)
    # A rebuild over an unreadable index starts from scratch and works.
    assert build_index(repo).parsed_files == 6
    generation = store.current_generation(index_dir)
    (generation / store.TEXT_INDEX).write_bytes(b"damaged")
    with pytest.raises(store.IndexFormatError, match="rebuild"):
        Index.open(repo)
    with pytest.raises(store.IndexNotFoundError):
        Index.open(repo, index_dir=repo / "nowhere")


def test_a_sealed_part_is_hashed_once_while_it_is_the_same_file_and_again_once_written(repo, monkeypatch):
    Index.build(repo)
    generation = store.current_generation(store.default_index_dir(repo))
    then = time.time_ns() - 10 * store.RACY_WINDOW_NS  # parts old enough for their digest to be kept
    for name in store.PARTS:
        os.utime(generation / name, ns=(then, then))
    hashed = []
    real = store.hashlib.file_digest
    monkeypatch.setattr(store.hashlib, "file_digest", lambda f, d: hashed.append(f.name) or real(f, d))
    store.verify(generation)
    assert sorted(Path(n).name for n in hashed) == sorted(set(store.PARTS) - set(store.SELF_CHECKED))
    hashed.clear()
    store.verify(generation)
    assert hashed == []
    rows = generation / store.ROWS
    damaged = bytearray(rows.read_bytes())
    damaged[len(damaged) // 2] ^= 1
    rows.write_bytes(bytes(damaged))  # the same size; a write moves the mtime
    os.utime(rows, ns=(then + 1, then + 1))
    with pytest.raises(store.IndexFormatError, match="SHA-256"):
        store.verify(generation)
    assert [Path(n).name for n in hashed] == [store.ROWS]


def test_the_reader_after_a_build_takes_the_seal_s_digests_and_a_write_in_place_is_still_caught(repo, monkeypatch):
    # The build's seal hashed every part; opening the generation at once hashes none again. A
    # part written in place at once after (the same size) is another file to the check.
    hashed = []
    real = store.hashlib.file_digest
    monkeypatch.setattr(store.hashlib, "file_digest", lambda f, d: hashed.append(Path(f.name).name) or real(f, d))
    Index.build(repo).close()
    assert sorted(hashed) == sorted(store.PARTS)
    hashed.clear()
    generation = store.current_generation(store.default_index_dir(repo))
    Index.open(repo).close()
    store.verify(generation)
    assert hashed == []
    rows = generation / store.ROWS
    damaged = bytearray(rows.read_bytes())
    damaged[len(damaged) // 2] ^= 1
    rows.write_bytes(bytes(damaged))
    with pytest.raises(store.IndexFormatError, match="SHA-256"):
        store.verify(generation)
    assert hashed == [store.ROWS]


def test_unreadable_and_odd_files_are_skipped_with_reasons(repo):
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02")
    (repo / "latin1.py").write_bytes(b"name = 'caf\xe9'\n")
    (repo / "big.txt").write_text("x" * 2_000)
    secret = repo / "secret.py"
    secret.write_text("x = 1\n")
    secret.chmod(0)
    try:
        summary = build_index(repo, max_file_size=1_000)
    finally:
        secret.chmod(0o644)
    assert summary.skipped.get("binary") == 1
    assert summary.skipped.get("too_large") == 1
    if os.geteuid() != 0:  # root reads everything
        assert summary.skipped.get("unreadable") == 1
    paths = [f.path for f in Index.open(repo).reader.files]
    assert "latin1.py" in paths and "blob.bin" not in paths


def test_graph_walks_lead_to_chunks_with_their_edge_paths(repo):
    reader = Index.build(repo).reader
    meta = store.current_generation(reader.index_dir) / store.META
    names = dict(table(meta, "SELECT (SELECT COUNT(*) FROM files) + id, qualified_name FROM symbols"))
    node_of = {name: node for node, name in names.items()}
    assert reader.node_in_degree[node_of["retry"]] == 1  # Session.request
    reach = reader.graph.dependants(node_of["retry"], depth=2)
    assert [(names[step.node], step.depth) for step in reach] == [("Session.request", 1), ("Session.get", 2)]
    assert [(names[e.src], names[e.dst], e.kind) for e in reach[1].path] == [
        ("Session.get", "Session.request", "call"),
        ("Session.request", "retry", "call"),
    ]
    # Each node is shown by the chunk that holds its definition.
    for node in (node_of["retry"], node_of["Session.get"]):
        chunk = reader.node_chunk(node)
        (start,) = table(meta, f"SELECT start_line FROM symbols WHERE id = {node - len(reader.files)}")[0]
        assert reader.chunk_start[chunk] <= start <= reader.chunk_end[chunk]
    paths = [f.path for f in reader.files]
    assert reader.node_in_degree[paths.index("pkg/retry.py")] == 1  # pkg/http.py


def test_chunks_holding_agrees_with_chunk_at_for_every_line(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text(
        "import os\n\n\ndef one():\n    return 1\n\n\nclass Two:\n    def three(self):\n        return 3\n"
    )
    # Text is cut into overlapping windows: the chunk found is the last one starting at or
    # before the line, as long as it holds it.
    (root / "notes.txt").write_text("".join(f"note {i}\n" for i in range(1, 200)))
    (root / "empty.txt").write_text("")
    reader = Index.build(root).reader
    pairs = [(f, line) for f, info in enumerate(reader.files) for line in range(0, 210)]
    found = reader.chunks_holding([f for f, _ in pairs], [line for _, line in pairs])
    for (file_id, line), chunk in zip(pairs, found):
        expected = reader.chunk_at(file_id, line)
        if expected is None:
            assert chunk == -1
            continue
        assert reader.chunk_file[chunk] == file_id
        if reader.files[file_id].path.endswith(".py"):
            assert chunk == expected  # code chunks do not overlap: the one chunk holding it
        else:
            holds = reader.chunk_start[chunk] <= line <= reader.chunk_end[chunk]
            assert (holds and chunk >= expected) or chunk == expected
    assert [reader.node_chunk(f) for f in range(len(reader.files))] == [reader.chunk_at(f, 1) for f in range(len(reader.files))]


def test_lines_between_matches_splitting_the_file_anywhere(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    long_text = "".join(f"line {i} \u00e9\r\n" if i % 7 == 0 else f"line {i}\n" for i in range(1, 400))
    files = {"long.py": long_text, "trailing.txt": "a\nb\n", "no_newline.txt": "only", "empty.txt": ""}
    for name, text in files.items():
        (root / name).write_text(text, newline="")
    index = Index.build(root, index_dir=tmp_path / "index")
    reader = index.reader
    for info in reader.files:
        data = reader.text.doc_bytes(info.id)
        total = len(data.split(b"\n"))
        for start in (1, 2, 60, 64, 65, 100, total - 1, total, total + 1):
            for end in (start, start + 7, start + 80):
                if start < 1:
                    continue
                expected = [p.decode("utf-8", "replace").rstrip("\r") for p in data.split(b"\n", end)[start - 1 : end]]
                assert reader.lines_between(info.id, start, end) == expected, (info.path, start, end)
    index.close()


GRAPH_TREE = {
    "mill/grind.py": "from mill.sieve import sift\n\ndef grind(grain):\n    return sift(grain) + polish(grain)\n\ndef polish(grain):\n    return grain\n",
    "mill/sieve.py": "def sift(grain):\n    return coarse(grain)\n\ndef coarse(grain):\n    return grain\n",
    "mill/bake.py": "from mill.grind import grind\n\nclass Oven:\n    def bake(self, dough):\n        return grind(dough)\n",
    "mill/shop.py": "from mill.bake import Oven\n\nclass Bakery(Oven):\n    def sell(self):\n        return self.bake(1) + sift(2)\n",
    "mill/ledger.py": "def tally(items):\n    return len(items)\n",
}

#: Edits that move definitions between files, add and drop calls, and change symbol counts, so that
#: the carried-over edges are renumbered and the reach of a change crosses files.
GRAPH_EDITS = [
    {"mill/ledger.py": "def tally(items):\n    return sift(items)\n\ndef sift(items):\n    return items\n"},
    {"mill/sieve.py": "def coarse(grain):\n    return grain\n"},
    {"mill/grind.py": "def grind(grain):\n    return coarse(grain)\n"},
    {"mill/sieve.py": "def sift(grain):\n    return grain\n\ndef coarse(grain):\n    return sift(grain)\n\ndef fine(g):\n    return g\n"},
    {"mill/bake.py": "from mill.grind import grind\n\nclass Oven:\n    def bake(self, dough):\n        return tally(dough)\n"},
    {"mill/ledger.py": "def tally(items):\n    return fine(items)\n"},
    # Files coming and going: ids move, a name gains a second definition or loses its only one,
    # and an import finds another file, or none, by its path.
    {"mill/flour.py": "def coarse(g):\n    return g\n\ndef tally(n):\n    return n\n"},
    {"mill/sieve.py": None},
    {"lib/sieve.py": "def sift(x):\n    return fine(x)\n\ndef fine(x):\n    return x\n"},
    {"mill/sieve.py": "def sift(grain):\n    return grain\n"},
    {"mill/ledger.py": None, "mill/books.py": "from mill.flour import tally\n\ndef audit(items):\n    return tally(items)\n"},
    {"lib/sieve.py": None, "mill/flour.py": None},
    # An import that names a file before it exists, then after, then after it is gone again.
    {"mill/notes.py": "import mill.spice\n\ndef note():\n    return 1\n"},
    {"mill/spice.py": "def pepper():\n    return 2\n"},
    {"mill/spice.py": None},
    # A package that re-exports a name two files define: its importers follow where it takes it
    # from, and are resolved again when that changes.
    {"mill/__init__.py": "from mill.sieve import sift as sift\n", "mill/press.py": "def sift(x):\n    return x\n",
     "mill/cart.py": "from mill import sift\n\nclass Cart:\n    def load(self, g):\n        return sift(g)\n"},
    {"mill/__init__.py": "from mill.press import sift as sift\n"},
    {"mill/__init__.py": "from mill.press import *\n"},
    {"mill/__init__.py": "import mill.press\n"},
    # A function passed on as a value, then the one it names gone.
    {"mill/cart.py": "from mill.press import sift\n\nclass Cart:\n    def load(self, g):\n        return list(map(sift, g))\n"},
    {"mill/press.py": "def press(x):\n    return x\n"},
]


def test_an_update_resolves_the_same_graph_as_a_full_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    resolved: list[set[int]] = []  # the files whose references each resolution was given
    real = build_module.graph.resolve_edges

    def spy(files, symbols, references, *elsewhere):  # type: ignore[no-untyped-def]
        references = list(references)
        resolved.append({r.file_id for r in references})
        return real(files, symbols, references, *elsewhere)

    monkeypatch.setattr(build_module.graph, "resolve_edges", spy)
    root = tmp_path / "mill-repo"
    write_tree(root, GRAPH_TREE)
    index_dir = tmp_path / "updated"
    build_index(root, index_dir)
    for step, edit in enumerate(GRAPH_EDITS):
        write_tree(root, {path: text for path, text in edit.items() if text is not None})
        for path in [path for path, text in edit.items() if text is None]:
            (root / path).unlink()
        resolved.clear()
        updated = build_index(root, index_dir)
        assert updated.parsed_files == sum(text is not None for text in edit.values())
        # Resolved again: the edited files and those the change reaches, not all.
        assert not resolved or len(resolved[-1]) < updated.files
        full = build_index(root, tmp_path / f"full-{step}", rebuild=True)
        edges = "SELECT src, dst, kind, line FROM edges"
        meta = store.current_generation(index_dir) / store.META
        assert table(meta, edges) == table(store.current_generation(tmp_path / f"full-{step}") / store.META, edges)
        assert updated.edges == full.edges > 0
        assert snapshot(index_dir) == snapshot(tmp_path / f"full-{step}")


@pytest.mark.parametrize("share", [1.0, 0.0])
def test_an_edit_in_place_changes_only_the_words_it_changes(tmp_path: Path, share: float) -> None:
    # The files stay the same paths (ids unchanged): one vanishes from every file, one is new,
    # one moves between files, and one stays spelled by another file. Found either way: in a delta
    # segment over the earlier base, or in one new base with every posting renumbered.
    tuning = config.DEFAULT.but(TEXT_DELTA_MAX_SHARE=share)
    root = tmp_path / "granary"
    write_tree(root, {
        "silo/hopper.py": "def fill_hopper(quintal):\n    return measure_bushel(quintal)\n",
        "silo/scale.py": "def measure_bushel(weight):\n    return weight\n",
        "silo/cart.py": "def haul(weight):\n    return weight\n",
    })  # fmt: skip
    index_dir = tmp_path / "updated"
    build_index(root, index_dir, tuning=tuning)
    before = {w for (w,) in table(store.current_generation(index_dir) / store.META, "SELECT word FROM code_words")}
    write_tree(root, {"silo/hopper.py": "def empty_hopper(sack):\n    return haul(sack)\n"})
    settle(root)
    updated = build_index(root, index_dir, tuning=tuning)
    assert updated.parsed_files == 1
    delta = store.current_generation(index_dir) / store.ROWS_DELTA
    assert table_rows(delta, "SELECT file_id FROM held") == ([(1,)] if share else [])
    after = {w for (w,) in table(store.current_generation(index_dir) / store.META, "SELECT word FROM code_words")}
    assert before - after and after - before  # words gone and words new
    build_index(root, tmp_path / "full", rebuild=True)
    assert snapshot(index_dir) == snapshot(tmp_path / "full")


def test_files_rows_are_read_again_from_another_database_at_the_same_path(tmp_path: Path) -> None:
    # The rows a process keeps for a generation are served only while its database is the same
    # file: another written in its place (as a rebuilt index could) is read afresh.
    root = tmp_path / "orchard"
    (root / "press.py").parent.mkdir(parents=True)
    (root / "press.py").write_text("def press(apples):\n    return apples\n")
    build_index(root, tmp_path / "index")
    generation = store.current_generation(tmp_path / "index")
    with contextlib.closing(store.open_database(generation)) as db:
        first = store.file_rows(db, generation)
    assert [row[1] for row in first] == ["press.py"]
    replacement = tmp_path / "replacement.sqlite"
    shutil.copyfile(generation / store.META, replacement)
    with contextlib.closing(sqlite3.connect(replacement)) as db:
        db.execute("UPDATE files SET path = 'cider.py'")
        db.commit()
    os.replace(replacement, generation / store.META)
    with contextlib.closing(store.open_database(generation)) as db:
        assert [row[1] for row in store.file_rows(db, generation)] == ["cider.py"]


def test_collecting_records_gives_up_each_content_it_parses_and_keeps_the_reasons_files_were_skipped():
    from collections import Counter

    from maguyva.index.progress import Silent

    walked = [("a.py", 30, 1), ("notes.bin", 9, 1), ("b.py", 31, 1)]
    contents: list[bytes | str | None] = [b"def alpha():\n    return beta()\n", "binary", b"def beta():\n    return 1\n"]
    skipped: Counter[str] = Counter()
    records, parsed = build_module.collect_records(walked, contents, {}, skipped, Silent())
    assert contents == [None, "binary", None]
    assert parsed == 2 and skipped == Counter({"binary": 1})
    assert [r.path for r in records] == ["a.py", "b.py"]
    assert [s.name for r in records for s in r.symbols] == ["alpha", "beta"]
