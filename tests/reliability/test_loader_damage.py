"""Random damage to every file maguyva loads: truncations, flipped bits, overwritten runs and
appended bytes in each part of an index (meta.sqlite, text.idx,
text-delta.idx, codes.npy, nodes.npy, the segments, MANIFEST, CURRENT),
in the embedding cache and in the local model. Each one must end in a one-sentence error naming
the damaged file, or in answers identical to the undamaged ones; and the next build must give
exactly the index a build from scratch gives. Never a traceback, never a wrong answer."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from indexes import contents, write_tree

from maguyva import Index
from maguyva.embed import EmbeddingError
from maguyva.embed.cache import FILE_NAME as CACHE_FILE
from maguyva.embed.local import DEFAULT_MODEL, MODELS_DIR, LocalEmbedder
from maguyva.index import store

#: An invented little project: a kiln controller with a firing schedule and a thermocouple.
TREE = {
    "kiln/schedule.py": (
        "class FiringSchedule:\n"
        '    """Ramps and holds of one firing, in degrees per hour."""\n'
        "\n"
        "    def __init__(self, segments):\n"
        "        self.segments = list(segments)\n"
        "\n"
        "    def total_hours(self):\n"
        "        return sum(abs(s.target - s.start) / s.rate + s.hold for s in self.segments)\n"
    ),
    "kiln/probe.go": (
        "package kiln\n"
        "\n"
        "// ReadThermocouple converts the probe's millivolts to degrees.\n"
        "func ReadThermocouple(mv float64) float64 {\n"
        "\treturn mv * 24.4\n"
        "}\n"
    ),
    "kiln/alarm.py": (
        "from kiln.schedule import FiringSchedule\n"
        "\n"
        "def overheat(reading, schedule: FiringSchedule):\n"
        '    raise RuntimeError("KILN_OVERHEAT past the last segment")\n'
    ),
}
QUESTIONS = ("where is FiringSchedule defined", "convert millivolts to degrees", '"KILN_OVERHEAT"', "who calls overheat")
PRESETS = ("quick", "default", "thorough")
#: Examples per damaged file: enough for every kind of damage to land in every region of a
#: small file many times over a few runs, few enough to keep the suite to seconds.
OPEN_EXAMPLES = 40
BUILD_EXAMPLES = 8


class Built:
    """One pristine index of TREE, copied afresh for every example, and its answers."""

    def __init__(self, base: Path):
        self.base = base
        self.root = write_tree(base / "kiln-repo", TREE)
        self.home = base / "home"
        self.pristine = base / "pristine-index"
        self.embedder = LocalEmbedder()
        with Index.build(self.root, index_dir=self.pristine, embedder=self.embedder) as index:
            self.answers = answers(index)
        self.contents = contents(self.pristine)
        self.generation = store.read_current(self.pristine)

    def copy(self) -> Path:
        target = Path(tempfile.mkdtemp(dir=self.base)) / "index"
        shutil.copytree(self.pristine, target)
        return target


def answers(index: Index) -> list[tuple[str, tuple[tuple[str, int, int], ...]]]:
    return [
        (preset, tuple((hit.path, hit.start_line, hit.end_line) for hit in index.search(q, preset=preset).results))
        for q in QUESTIONS
        for preset in PRESETS
    ]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    base = tmp_path_factory.mktemp("damage")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MAGUYVA_HOME", str(base / "home"))
        yield Built(base)


@st.composite
def damage(draw: st.DrawFn, size: int) -> tuple[str, int, bytes]:
    """One way to damage a file of `size` bytes: (kind, offset, bytes)."""
    kind = draw(st.sampled_from(["truncate", "flip", "overwrite", "append", "empty"] if size else ["append"]))
    if kind == "truncate":
        return kind, draw(st.integers(0, size - 1)), b""
    if kind == "flip":
        return kind, draw(st.integers(0, size - 1)), bytes([1 << draw(st.integers(0, 7))])
    if kind == "overwrite":
        return kind, draw(st.integers(0, size - 1)), draw(st.binary(min_size=1, max_size=64))
    if kind == "append":
        return kind, size, draw(st.binary(min_size=1, max_size=64))
    return kind, 0, b""


def apply(path: Path, how: tuple[str, int, bytes]) -> bool:
    """Damage `path` as `how` says; whether its bytes changed."""
    kind, offset, data = how
    before = path.read_bytes()
    if kind == "truncate":
        after = before[:offset]
    elif kind == "flip":
        after = before[:offset] + bytes([before[offset] ^ data[0]]) + before[offset + 1 :]
    elif kind == "overwrite":
        after = before[:offset] + data + before[offset + len(data) :]
    elif kind == "append":
        after = before + data
    else:
        after = b""
    path.write_bytes(after)
    return after != before


def assert_one_sentence(err: Exception, names: Path) -> None:
    message = str(err)
    assert "\n" not in message and message.endswith(("rebuilds it", "reinstall maguyva")), message
    assert str(names) in message or names.name in message, message


INDEX_PARTS = (*store.PARTS, store.MANIFEST)


def damaged_copy(built: Built, part: str, data: st.DataObject) -> tuple[Path, Path, bool]:
    """A copy of the pristine index with one part damaged: (the index, the part, whether its
    bytes changed)."""
    index_dir = built.copy()
    path = index_dir / part if part == store.CURRENT else index_dir / built.generation / part
    return index_dir, path, apply(path, data.draw(damage(path.stat().st_size)))


@pytest.mark.parametrize("part", [*INDEX_PARTS, store.CURRENT])
@settings(max_examples=OPEN_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_part_is_an_error_naming_it_or_answers_unchanged(built, part, data):
    index_dir, path, changed = damaged_copy(built, part, data)
    try:
        with Index.open(built.root, index_dir=index_dir, embedder=lambda: built.embedder) as index:
            got = answers(index)
    except store.IndexFormatError as err:
        assert changed, f"undamaged {part} refused: {err}"
        assert_one_sentence(err, path)
    else:
        # Only damage that changes nothing read (CURRENT's or MANIFEST's trailing white space)
        # may be read, and then the answers are the undamaged ones.
        assert got == built.answers


@pytest.mark.parametrize("part", [*INDEX_PARTS, store.CURRENT])
@settings(max_examples=BUILD_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_next_build_after_damage_equals_a_build_from_scratch(built, part, data):
    index_dir, _, _ = damaged_copy(built, part, data)
    with Index.build(built.root, index_dir=index_dir, embedder=built.embedder) as index:
        assert answers(index) == built.answers
        for warning in index.summary.warnings:
            assert "\n" not in warning and (part in warning or "CURRENT" in warning), warning
    assert contents(index_dir) == built.contents
    leftovers = {p.name for p in index_dir.iterdir()} - {store.LOCK, store.CURRENT}
    assert len(leftovers) == 1 and leftovers <= {p.name for p in index_dir.glob("gen-*")}


@settings(max_examples=BUILD_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_embedding_cache_never_changes_an_index(built, data):
    """The cache is keyed by text: a damaged one is dropped (or repaired by SQLite), and the
    codes a build stores are those of a build without it."""
    cache = built.home / CACHE_FILE
    assert cache.exists()
    saved = cache.read_bytes()
    try:
        apply(cache, data.draw(damage(len(saved))))
        for sidecar in ("-wal", "-shm", "-journal"):
            Path(f"{cache}{sidecar}").unlink(missing_ok=True)
        index_dir = built.base / "cache-damage-index"
        shutil.rmtree(index_dir, ignore_errors=True)
        with Index.build(built.root, index_dir=index_dir, embedder=built.embedder) as index:
            assert answers(index) == built.answers
            assert all("\n" not in w for w in index.summary.warnings)
        assert contents(index_dir) == built.contents
    finally:
        cache.write_bytes(saved)


MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json", "SHA256SUMS")


@pytest.mark.parametrize("name", MODEL_FILES)
@settings(max_examples=OPEN_EXAMPLES // 2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_model_file_is_an_error_naming_it_or_embeds_the_same(built, name, data):
    folder = Path(tempfile.mkdtemp(dir=built.base)) / DEFAULT_MODEL
    shutil.copytree(MODELS_DIR / DEFAULT_MODEL, folder)
    path = folder / name
    original = path.read_bytes()
    # Damage to the table lands mostly in its numbers, which only a checksum tells from valid
    # ones; to config.json, in what it says (the digests, the skipped tokens) as well.
    changed = apply(path, data.draw(damage(path.stat().st_size)))
    texts = ["def total_hours(self):", "ReadThermocouple converts millivolts"]
    try:
        model = LocalEmbedder(folder)
    except EmbeddingError as err:
        assert changed
        message = str(err)
        assert "\n" not in message and str(folder) in message, message
    else:
        # Only SHA256SUMS is read line by line: its final newline may go.
        assert not changed or (name == "SHA256SUMS" and path.read_bytes().splitlines() == original.splitlines())
        assert (model.embed_documents(texts) == built.embedder.embed_documents(texts)).all()
    finally:
        shutil.rmtree(folder.parent)
