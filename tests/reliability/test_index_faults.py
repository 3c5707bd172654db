"""What a user can do to an index, and what maguyva must do then: damaged files are reported
in one sentence and rebuilt, never read as data; readers never lose the generation they open;
a build that cannot write leaves the index as it was; names no terminal should act on are shown
escaped."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from indexes import contents, write_tree

from maguyva import Index
from maguyva.index import store
from maguyva.index.build import build_index, embedding_text
from maguyva.index.model import Chunk
from maguyva.serve.cli import main, printable
from maguyva.serve.corpus import Corpus

#: An invented little project: an inventory service with a ledger and a report.
TREE = {
    "stock/ledger.py": (
        "class Ledger:\n"
        '    """Counts of every article on the shelves."""\n'
        "\n"
        "    def __init__(self):\n"
        "        self.counts = {}\n"
        "\n"
        "    def receive(self, article, amount):\n"
        "        self.counts[article] = self.counts.get(article, 0) + amount\n"
    ),
    "stock/report.py": (
        "from stock.ledger import Ledger\n"
        "\n"
        "\n"
        "def shelf_report(ledger):\n"
        '    """One line per article, fullest shelf first."""\n'
        "    rows = sorted(ledger.counts.items(), key=lambda kv: -kv[1])\n"
        '    return "\\n".join(f"{a}: {n}" for a, n in rows)\n'
    ),
    "stock/errors.py": 'def refuse():\n    raise RuntimeError("SHELF_OVERFLOW while receiving")\n',
}


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    return write_tree(tmp_path / "shop", TREE)


def generation_of(repo: Path) -> Path:
    return store.current_generation(store.default_index_dir(repo))


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("maguyva: "), err
    assert "Traceback" not in err
    return err


# A file name that is not UTF-8 -----------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file systems refuse names that are not UTF-8")
def test_a_file_name_that_is_not_utf8_is_indexed_and_shown_with_replacement_characters(repo, capsys):
    name = os.path.join(os.fsencode(repo / "stock"), b"r\xe9ception.py")
    with open(name, "wb") as out:
        out.write(b"def receive_delivery(crate):\n    return crate.items\n")
    code, _, err = run_cli(capsys, "index", str(repo), "--quiet")
    assert (code, err) == (0, "")
    code, out, _ = run_cli(capsys, "search", "receive_delivery", str(repo), "--json")
    assert code == 0
    assert json.loads(out)["results"][0]["path"] == "stock/r\ufffdception.py"
    # Stored as its bytes, so the freshness check finds nothing changed.
    with Index.open(repo) as index:
        assert index.changes().stale is False
        assert b"stock/r\xe9ception.py" in [os.fsencode(f.path) for f in index.reader.files]


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file systems refuse names that are not UTF-8")
def test_a_repository_that_fails_leaves_the_others_answering(repo, tmp_path, capsys):
    other = write_tree(tmp_path / "tools", {"pack/crate.py": "def seal_crate(crate):\n    return crate\n"})
    with Corpus.open([repo, other]) as corpus:
        corpus.refresh()
        # The index folder of one repository becomes a file: it can be neither read nor built.
        broken = corpus.repositories[1]
        broken.close()
        for entry in broken.index_dir.iterdir():
            if entry.is_dir():
                import shutil

                shutil.rmtree(entry)
            else:
                entry.unlink()
        broken.index_dir.rmdir()
        broken.index_dir.write_text("in the way")
        answer = corpus.search("shelf_report")
        assert answer.results[0].path == "stock/report.py"
        warnings = [w for r in answer.refreshes.values() for w in r.warnings]
        assert len(warnings) == 1 and warnings[0].startswith("tools left out: ")


# Readers and builders at once -------------------------------------------------------------------


def test_searches_through_a_stream_of_builds_never_fail(repo):
    """Readers pin the generation they open; builds in another process keep publishing new
    ones and collecting old ones meanwhile."""
    Index.build(repo).close()
    index_dir = store.default_index_dir(repo)
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from maguyva.index.build import build_index
        repo = Path({str(repo)!r})
        for n in range(400):
            (repo / "stock/churn.py").write_text(f"def churn_{{n}}():\\n    return {{n}}\\n")
            build_index(repo)
            print(n, flush=True)
        """
    )
    builder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    failures: list[str] = []
    searches = 0
    generations: set[str] = set()
    try:
        assert builder.stdout is not None
        builder.stdout.readline()  # builds are under way
        deadline = time.monotonic() + 60
        while searches < 150 and time.monotonic() < deadline and builder.poll() is None:
            try:
                with Index.open(repo) as index:
                    generations.add(index.reader.generation.name)
                    hits = index.search("shelf_report", top_k=3).results
                    if not hits or hits[0].path != "stock/report.py":
                        failures.append(f"wrong answer {hits[:1]}")
            except Exception as err:  # noqa: BLE001 - every failure is what the test counts
                failures.append(f"{type(err).__name__}: {err}")
            searches += 1
    finally:
        builder.kill()
        builder.wait()
    assert searches >= 50 and len(generations) >= 3, (searches, generations)
    assert failures == []
    # Once the readers are gone, the next build collects every generation but the current one.
    build_index(repo)
    assert [p.name for p in index_dir.glob("gen-*")] == [store.current_generation(index_dir).name]


def test_an_open_reader_keeps_its_generation_until_it_closes(repo):
    first = Index.build(repo)
    (repo / "stock/extra.py").write_text("def extra():\n    pass\n")
    build_index(repo)
    assert first.reader.generation.exists()
    assert first.search("shelf_report").results[0].path == "stock/report.py"
    first.close()
    build_index(repo)
    assert not first.reader.generation.exists()


# Damaged files ------------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", [b"\xff\xfe\x00", b"", b"gen-999999", b"../../etc"])
def test_a_damaged_current_names_the_file_and_index_repairs_it(repo, capsys, damage):
    assert run_cli(capsys, "index", str(repo), "--quiet")[0] == 0
    (store.default_index_dir(repo) / store.CURRENT).write_bytes(damage)
    with pytest.raises(store.IndexFormatError, match="CURRENT"):
        Index.open(repo)
    code, _, err = run_cli(capsys, "index", str(repo), "--quiet")
    assert code == 0 and "CURRENT" in one_line_error(err) and "every file indexed again" in err
    code, out, err = run_cli(capsys, "search", "shelf_report", str(repo))
    assert (code, err) == (0, "") and out.startswith("stock/report.py:")


def flip_header_length(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[8] ^= 0x40  # the .npy header's length field
    path.write_bytes(bytes(data))


def truncate(path: Path) -> None:
    path.write_bytes(b"")


def flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01  # a bit of the last code: nothing but the checksum can tell
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [truncate, flip_header_length, flip_last_byte])
def test_damaged_codes_are_an_error_on_open_and_repaired_by_the_next_search(repo, capsys, damage):
    Index.build(repo).close()
    expected = contents(store.default_index_dir(repo))
    damage(generation_of(repo) / store.CODES)
    with pytest.raises(store.IndexFormatError, match=r"codes\.npy: is damaged"):
        Index.open(repo)
    code, out, err = run_cli(capsys, "search", "shelf_report", str(repo))
    assert code == 0 and out.startswith("stock/report.py:")
    assert "codes.npy: is damaged" in one_line_error(err) and "rebuilt it" in err
    assert contents(store.default_index_dir(repo)) == expected


def forge_a_row(path: Path) -> None:
    db = sqlite3.connect(path)
    table = "files" if path.name == store.META else "symbols"
    assert db.execute(f"UPDATE {table} SET language = 'forged' WHERE rowid = 1" if table == "files" else
                      f"UPDATE {table} SET name = 'forged' WHERE id = 0").rowcount == 1
    db.commit()
    db.close()


def damage_pages(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xa5" * (4096 - 100)  # inside the first page, past SQLite's header
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("part", [store.META, store.ROWS])
@pytest.mark.parametrize("damage", [forge_a_row, damage_pages, truncate])
def test_damaged_metadata_is_never_carried_into_the_next_build(repo, capsys, damage, part):
    """An incremental build reuses only what its manifest vouches for: after damage the index
    is exactly what a full build makes."""
    Index.build(repo).close()
    index_dir = store.default_index_dir(repo)
    expected = contents(index_dir)
    damage(generation_of(repo) / part)
    with pytest.raises(store.IndexFormatError, match=part):
        Index.open(repo)
    code, _, err = run_cli(capsys, "index", str(repo), "--quiet")
    assert code == 0 and part in one_line_error(err) and "every file indexed again" in err
    assert contents(index_dir) == expected


def test_every_byte_flip_in_codes_is_caught_before_reuse(repo):
    Index.build(repo).close()
    index_dir = store.default_index_dir(repo)
    expected = contents(index_dir)
    codes = generation_of(repo) / store.CODES
    size = codes.stat().st_size
    rng = np.random.default_rng(7)
    for position in rng.choice(size, size=17, replace=False):
        data = bytearray(codes.read_bytes())
        data[int(position)] ^= 1 << int(rng.integers(8))
        codes.write_bytes(bytes(data))
        summary = build_index(repo)
        assert summary.parsed_files == summary.files and len(summary.warnings) == 1
        assert contents(index_dir) == expected
        codes = generation_of(repo) / store.CODES


def test_opening_and_searching_parse_no_python_source(repo, monkeypatch):
    """CPython 3.11's AST builder keeps its recursion depth in state all threads share: an
    index opened in one thread while another parses Python (numpy's np.load does, for a .npy
    header) could fail with SystemError. Opening and searching must not parse any."""
    import ast
    import builtins

    Index.build(repo).close()
    parsed: list[str] = []
    compile_source = builtins.compile

    def watched(source, filename, mode, flags=0, *args, **kwargs):
        if flags & ast.PyCF_ONLY_AST:
            parsed.append(str(filename))
        return compile_source(source, filename, mode, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", watched)
    for question in ("where is Ledger defined", "how are shelves reported", '"SHELF_OVERFLOW"'):
        with Index.open(repo) as index:
            assert index.search(question, top_k=3).results
    assert parsed == []


def test_codes_that_disagree_with_their_header_are_refused(tmp_path):
    codes = np.arange(6 * 4, dtype=np.uint8).reshape(6, 4)
    path = tmp_path / store.CODES
    path.write_bytes(store.encode_codes(codes))
    assert np.array_equal(store.load_codes(path), codes)
    path.write_bytes(store.encode_codes(codes)[:-1])
    with pytest.raises(ValueError, match="23 bytes of data, not 24"):
        store.load_codes(path)
    path.write_bytes(store.encode_codes(codes).replace(b"|u1", b"<i4"))
    with pytest.raises(ValueError, match="not a matrix of uint8"):
        store.load_codes(path)
    path.write_bytes(b"")
    with pytest.raises(ValueError, match="not a version 1.0 .npy file"):
        store.load_codes(path)
    path.write_bytes(store.encode_codes(np.zeros((0, 4), np.uint8)))
    assert store.load_codes(path).shape == (0, 4)


def test_node_values_round_trip_and_other_matrices_are_refused(tmp_path):
    path = tmp_path / store.NODES
    centrality = np.array([0.0, 1.25, 3.5], dtype=np.float32)
    path.write_bytes(store.encode_nodes(centrality, np.array([0, 2, 7], dtype=np.int32)))
    loaded, degree = store.load_nodes(path)
    assert loaded.tolist() == [0.0, 1.25, 3.5] and degree.tolist() == [0, 2, 7] and degree.dtype == np.int64
    path.write_bytes(store.encode_codes(np.zeros((3, 16), np.uint8)))  # codes are not node values
    with pytest.raises(ValueError, match="not a matrix of float64"):
        store.load_nodes(path)
    path.write_bytes(store._encode_npy(np.zeros((3, 3)), "<f8"))
    with pytest.raises(ValueError, match="3 values a node, not 2"):
        store.load_nodes(path)


def test_metadata_damaged_after_opening_is_an_index_error_not_sqlite(repo):
    index = Index.build(repo)
    meta = index.reader.generation / store.META
    with open(meta, "r+b") as handle:  # in place: the open connection reads the same file
        handle.seek(4096)
        handle.write(b"\x00" * (meta.stat().st_size - 4096))
    with pytest.raises(store.IndexFormatError, match="meta.sqlite: is damaged"):
        index.reader.sql("SELECT name FROM symbols ORDER BY name")
    index.close()


def test_a_code_word_posting_of_a_broken_length_is_damage_and_not_data(repo, capsys):
    index = Index.build(repo)
    rows = index.reader.generation / store.ROWS
    with sqlite3.connect(rows) as db:  # a posting cut short by a byte, the manifest left as it was
        assert db.execute("UPDATE code_words SET files = substr(files, 2) WHERE word = 'ledg'").rowcount == 1
    with pytest.raises(store.IndexFormatError, match="rows.sqlite: is damaged"):
        index.reader.code_word_files(["ledg", "shelf"])
    index.close()
    # The next command finds the part that no longer matches its manifest, and rebuilds.
    code, out, err = run_cli(capsys, "search", "ledger counts of articles", str(repo), "--json")
    assert code == 0, err
    assert "stock/ledger.py" in out


def test_rebuild_parses_every_file(repo, capsys):
    Index.build(repo).close()
    assert build_index(repo).parsed_files == 0
    code, _, err = run_cli(capsys, "index", str(repo), "--rebuild")
    assert code == 0 and f"{len(TREE)} parsed, 0 unchanged" in err


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names descriptors through /proc")
def test_every_part_is_on_disk_before_current_names_its_generation(repo, monkeypatch):
    """What a power loss would test: each part, the manifest and the generation folder are
    flushed before CURRENT is replaced, and CURRENT (and its folder) after."""
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(source, target) -> None:
        events.append(("rename", str(target)))
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    build_index(repo)
    index_dir = store.default_index_dir(repo).resolve()
    generation = store.current_generation(index_dir).resolve()
    publish = events.index(("rename", str(index_dir / store.CURRENT)))
    before, after = events[:publish], events[publish + 1 :]
    flushed = [path for kind, path in before if kind == "fsync"]
    for part in store.PARTS:
        assert str(generation / part) in flushed, part
    assert ("rename", str(generation / store.MANIFEST)) in before
    assert flushed.index(str(generation)) > max(flushed.index(str(generation / p)) for p in store.PARTS)
    assert any(path.startswith(str(index_dir / f".{store.CURRENT}.")) for path in flushed)
    assert ("fsync", str(index_dir)) in after


# The embedding cache ----------------------------------------------------------------------------


def test_an_embedding_cache_that_cannot_be_opened_is_left_out_with_a_warning(repo, tmp_path, capsys):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "embeddings.sqlite").mkdir()  # a folder where the file should be
    code, _, err = run_cli(capsys, "index", str(repo), "--quiet")
    assert code == 0
    assert "embedding cache" in one_line_error(err) and "embedding without the cache" in err
    code, out, _ = run_cli(capsys, "search", "shelf_report", str(repo))
    assert code == 0 and out.startswith("stock/report.py:")


# A build that cannot write --------------------------------------------------------------------


def test_a_full_disk_during_a_build_is_one_line_and_leaves_the_index(repo, capsys, monkeypatch):
    Index.build(repo).close()
    index_dir = store.default_index_dir(repo)
    expected = contents(index_dir)
    (repo / "stock/new.py").write_text("def restock():\n    pass\n")

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "encode_codes", full)
    code, _, err = run_cli(capsys, "index", str(repo))
    assert code == 2 and "No space left on device" in one_line_error(err) and "unchanged" in err
    assert contents(index_dir) == expected
    assert [p.name for p in index_dir.glob("gen-*")] == [store.current_generation(index_dir).name]
    # A search meanwhile answers from the index as it was, and says so.
    code, out, err = run_cli(capsys, "search", "shelf_report", str(repo))
    assert code == 0 and out.startswith("stock/report.py:")
    assert "could not re-index shop" in one_line_error(err) and "answered from the index as it was" in err
    monkeypatch.undo()
    code, out, err = run_cli(capsys, "search", "restock", str(repo))
    assert (code, err) == (0, "") and out.startswith("stock/new.py:")


def can_mount() -> bool:
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return False
    probe = Path(f"/tmp/maguyva-mount-probe-{os.getpid()}")
    probe.mkdir(exist_ok=True)
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(probe)], capture_output=True)
        if done.returncode != 0:
            return False
        subprocess.run(["umount", str(probe)], check=True)
        return True
    except OSError:
        return False
    finally:
        probe.rmdir()


@pytest.mark.skipif(not can_mount(), reason="needs root to mount a file system it can make read-only")
def test_a_read_only_index_folder_still_answers(repo, tmp_path, capsys):
    """The real thing: a file system mounted read-only after the build (root ignores mode bits)."""
    mount = tmp_path / "ro"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], check=True)
    try:
        index_dir = mount / "index"
        assert run_cli(capsys, "index", str(repo), "--index-dir", str(index_dir), "--quiet")[0] == 0
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        (repo / "stock/new.py").write_text("def restock():\n    pass\n")
        code, out, err = run_cli(capsys, "search", "shelf_report", str(repo), "--index-dir", str(index_dir))
        assert code == 0 and out.startswith("stock/report.py:")
        assert "Read-only file system" in one_line_error(err) and "answered from the index as it was" in err
        code, out, err = run_cli(capsys, "search", "shelf_report", str(repo), "--index-dir", str(index_dir), "--json")
        assert code == 0 and json.loads(out)["results"][0]["path"] == "stock/report.py"
        assert "answered from the index as it was" in one_line_error(err)
        code, _, err = run_cli(capsys, "index", str(repo), "--index-dir", str(index_dir))
        assert code == 2 and "Read-only file system" in one_line_error(err)
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes whatever the mode bits say")
def test_an_index_folder_without_write_permission_still_answers(repo, tmp_path, capsys):
    index_dir = tmp_path / "index"
    assert run_cli(capsys, "index", str(repo), "--index-dir", str(index_dir), "--quiet")[0] == 0
    index_dir.chmod(0o555)
    try:
        (repo / "stock/new.py").write_text("def restock():\n    pass\n")
        code, out, err = run_cli(capsys, "search", "shelf_report", str(repo), "--index-dir", str(index_dir))
        assert code == 0 and out.startswith("stock/report.py:")
        assert "answered from the index as it was" in one_line_error(err)
    finally:
        index_dir.chmod(0o755)


# Inputs the terminal must not act on ------------------------------------------------------------


def test_control_characters_in_file_names_are_escaped_on_the_terminal(repo, capsys):
    (repo / "stock" / "forged\nfake.py:1-1").write_text("def forged_name():\n    pass\n")
    (repo / "stock" / "\x1b[2Jcolour.py").write_text("def forged_name_too():\n    pass\n")
    code, out, _ = run_cli(capsys, "search", "forged_name", str(repo))
    assert code == 0
    assert "stock/forged\\nfake.py:1-1:1-2" in [line.split("  ")[0] for line in out.splitlines()]
    assert "\x1b" not in out and "stock/\\x1b[2Jcolour.py:1-2  forged_name_too" in out.splitlines()
    code, out, _ = run_cli(capsys, "search", "forged_name", str(repo), "--json")
    assert "stock/forged\nfake.py:1-1" in [r["path"] for r in json.loads(out)["results"]]


def test_printable_escapes_what_a_terminal_acts_on_and_keeps_the_rest():
    assert printable("caf\u00e9 \u4e2d\t\u2192") == "caf\u00e9 \u4e2d\t\u2192"
    assert printable("a\rb\x00c\x7f\x9b\u202egnp.exe") == "a\\rb\\x00c\\x7f\\x9b\\u202egnp.exe"
    assert printable("x\udce9y") == "x\ufffdy"


#: Run as a program: Ctrl-C arrives while the module named in argv[1] is being imported, which
#: `main` does lazily (what takes the first ~150 ms of a run: numpy, the parsers, the model).
_INTERRUPT_AT_IMPORT = """
import os, signal, sys
target = sys.argv.pop(1)
# As at a terminal: a shell's background job starts with Ctrl-C ignored, which Python keeps.
signal.signal(signal.SIGINT, signal.default_int_handler)

class Interrupt:
    def find_spec(self, name, path=None, target_module=None):
        if name == target:
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupt())
from maguyva.serve.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize("module", ["numpy", "maguyva.serve.api", "maguyva.index.build", "tree_sitter", "tokenizers"])
def test_ctrl_c_while_the_command_starts_exits_130_quietly(repo, tmp_path, module):
    env = {**os.environ, "MAGUYVA_HOME": str(tmp_path / "home-sigint")}
    done = subprocess.run(
        [sys.executable, "-c", _INTERRUPT_AT_IMPORT, module, "index", str(repo)],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert (done.returncode, done.stderr) == (130, "")


def test_the_command_line_imports_nothing_before_main():
    """Whatever `import maguyva.serve.cli` loads is time in which Ctrl-C would print a traceback."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys; before = set(sys.modules); import maguyva.serve.cli; "
         "print(sorted(set(sys.modules) - before))"],
        capture_output=True, text=True, check=True,
    )
    loaded = set(json.loads(done.stdout.replace("'", '"')))
    entry = {"maguyva", "maguyva.serve", "maguyva.serve.cli"}
    assert entry <= loaded <= entry | {"__future__"}


# Secrets and size ------------------------------------------------------------------------------


def test_keys_and_credentials_are_left_out_unless_asked_for(repo, capsys):
    (repo / "deploy").mkdir()
    (repo / "deploy" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAsecretsecret\n")
    (repo / "deploy" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\nAAAAsecretsecret\n")
    (repo / "deploy" / "credentials").write_text("[default]\naws_secret_access_key = AAAAsecretsecret\n")
    code, _, err = run_cli(capsys, "index", str(repo))
    assert code == 0 and "3 secret" in err
    code, out, _ = run_cli(capsys, "search", '"AAAAsecretsecret"', str(repo))
    assert out == "no results\n"
    with Index.open(repo) as index:
        assert index.changes().stale is False  # left out by the freshness walk too
    code, _, err = run_cli(capsys, "index", str(repo), "--include-secrets")
    assert code == 0 and "skipped: none" in err
    # The choice is kept by later updates, the one before each answer included.
    (repo / "deploy" / "api.key").write_text("AAAAsecretsecret\n")
    code, out, _ = run_cli(capsys, "search", '"AAAAsecretsecret"', str(repo), "--top-k", "10")
    assert sorted(line.split(":")[0] for line in out.splitlines() if not line.startswith(" ")) == [
        "deploy/api.key", "deploy/credentials", "deploy/id_ed25519", "deploy/server.pem"
    ]


def test_a_chunk_of_one_huge_line_is_embedded_and_shown_in_part(repo, capsys):
    assert len(embedding_text("a.js", Chunk(1, 1, "x" * 900_000, None))) < 10_000
    (repo / "web").mkdir()
    (repo / "web" / "bundle.min.js").write_text("var shelfWidget=1;" + "q=1;" * 200_000 + "\n")
    code, out, _ = run_cli(capsys, "search", '"shelfWidget"', str(repo), "--json")
    assert code == 0
    hit = json.loads(out)["results"][0]
    assert hit["path"] == "web/bundle.min.js" and len(hit["snippet"]) <= 401
