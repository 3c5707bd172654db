"""Any sequence of edits, additions, removals, renames and touches, each followed by an update
of the same index, leaves the index a full build of the same tree makes, and the same answers:
whatever the update carried over (rows copied, the graph resolved where the change reaches, the
trigram index's delta or a new base) and whenever it merged."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import time
from pathlib import Path

import numpy as np

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_index_build import snapshot

from maguyva import Index, config
from maguyva.index import store
from maguyva.index.build import build_index
from maguyva.index.segments import CHUNKS, REFS, Segments

NAMES = ["tally", "sift", "grind", "bake", "knead", "proof", "score", "glaze"]
QUESTIONS = ["where is sift defined", "who calls knead", '"proof"', "bake the dough", "glaze"]


def module(calls: list[int], defines: list[int], imports: list[int]) -> str:
    """A small Python module: imports, definitions, each calling some of the names."""
    lines = [f"from bakery.m{i} import {NAMES[i]}" for i in imports]
    for d in defines:
        body = " + ".join(f"{NAMES[c]}(x)" for c in calls) or "x"
        lines += ["", "", f"def {NAMES[d]}(x):", f"    return {body}"]
    return "\n".join(lines) + "\n"


indices = st.lists(st.integers(0, len(NAMES) - 1), max_size=3, unique=True)
sources = st.builds(module, indices, indices.filter(bool), indices)
operations = st.one_of(
    st.tuples(st.just("edit"), st.integers(0, 7), sources),
    st.tuples(st.just("add"), st.integers(0, 7), sources),
    st.tuples(st.just("remove"), st.integers(0, 7), st.none()),
    st.tuples(st.just("rename"), st.integers(0, 7), st.none()),
    st.tuples(st.just("touch"), st.integers(0, 7), st.none()),
)


def write(path: Path, text: str, step: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    # Older than the build's walk (a stat the index records is then trusted) and distinct per step.
    then = time.time() - 600 + step
    os.utime(path, (then, then))


def assert_codes_read_in_place(index_dir: Path) -> None:
    """The codes of the two segments as one array, and each file's as a slice of its segment's,
    are the rows the generation's numbering gathers from the two."""
    generation = store.current_generation(index_dir)
    with contextlib.closing(sqlite3.connect(f"file:{generation / store.META}?mode=ro", uri=True)) as db:
        files = db.execute("SELECT count(*) FROM files").fetchone()[0]
    segments = Segments(generation, files)
    try:
        base, delta = store.load_codes(generation / store.CODES), store.load_codes(generation / store.CODES_DELTA)
        gathered = np.take(np.concatenate([np.asarray(base), np.asarray(delta)]), segments.order.gather(CHUNKS), axis=0)
        assert np.array_equal(segments.codes(base, delta), gathered)
        starts = segments.order.file_starts[CHUNKS]
        per_file = segments.codes_of_files(np.asarray(base), np.asarray(delta))
        assert [f.tobytes() for f in per_file] == [gathered[a:b].tobytes() for a, b in zip(starts, starts[1:])]
    finally:
        segments.close()


def assert_arrays_read_in_one_pass(index_dir: Path) -> None:
    """The chunks' integer columns read in one pass (`Segments.read_arrays`) are those read one
    column at a time, NULL as -1."""
    generation = store.current_generation(index_dir)
    with contextlib.closing(sqlite3.connect(f"file:{generation / store.META}?mode=ro", uri=True)) as db:
        files = db.execute("SELECT count(*) FROM files").fetchone()[0]
    names = ["file_id", "start_line", "end_line", "symbol_id"]
    with config.using(config.DEFAULT.but(SEGMENT_COLUMNS_CACHE_ROWS=0)):  # nothing kept: a column at a time
        segments = Segments(generation, files)
        try:
            alone = [segments.array(CHUNKS, name) for name in names]
        finally:
            segments.close()
    segments = Segments(generation, files)
    try:
        segments.read_arrays(CHUNKS, names)
        together = [segments.array(CHUNKS, name) for name in names]
    finally:
        segments.close()
    assert [a.tolist() for a in together] == [a.tolist() for a in alone]


def assert_kept_rows_are_the_stored_ones(index_dir: Path) -> None:
    """A generation's import references with the base's rows kept from earlier generations (the
    base linked into this one) are those read from its segments now."""
    generation = store.current_generation(index_dir)
    with contextlib.closing(sqlite3.connect(f"file:{generation / store.META}?mode=ro", uri=True)) as db:
        files = db.execute("SELECT count(*) FROM files").fetchone()[0]
    segments = Segments(generation, files)
    try:
        columns, where = "file_id, name, line, imported_names", "kind = 'import'"
        read = segments.rows_where(REFS, columns, where)
        assert segments.rows_where(REFS, columns, where, keep=True) == read
        assert segments.rows_where(REFS, columns, where, keep=True) == read  # from what was kept
    finally:
        segments.close()


def assert_kept_file_rows_are_the_stored_ones(index_dir: Path) -> None:
    """The `files` rows the build kept for the next reader and update are what reading the
    table gives, value for value and type for type."""
    generation = store.current_generation(index_dir)
    with contextlib.closing(sqlite3.connect(f"file:{generation / store.META}?mode=ro", uri=True)) as db:
        stored = db.execute(f"SELECT {store.FILE_COLUMNS} FROM files ORDER BY id").fetchall()
    _, kept = store._kept_file_rows[str(generation)]
    assert list(kept) == stored
    assert [tuple(map(type, row)) for row in kept] == [tuple(map(type, row)) for row in stored]


def answer(index: Index, question: str) -> dict[str, object]:
    """An answer as JSON, without how long it took."""
    found = index.search(question).to_dict()
    found.pop("elapsed_ms")
    return found


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.lists(sources, min_size=2, max_size=5),
    steps=st.lists(operations, min_size=1, max_size=4),
    share=st.sampled_from([0.0, 0.1, 1.0]),
)
# A base holding no references, the edited files' in the delta; then a file of the base removed
# (its files mapped) and another: the delta's references are read by the generation's file ids.
@example(
    start=[module([], [0, 1], []), module([], [0], [])],
    steps=[("edit", 0, module([], [0], [0, 1, 2])), ("edit", 2, module([], [0], [0])), ("remove", 1, None), ("remove", 0, None)],
    share=1.0,
)
def test_any_sequence_of_changes_updates_to_what_a_full_build_makes(tmp_path_factory, start, steps, share):
    scratch = tmp_path_factory.mktemp("sequence")
    root, index_dir = scratch / "repo", scratch / "index"
    tuning = config.DEFAULT.but(TEXT_DELTA_MAX_SHARE=share)
    for i, text in enumerate(start):
        write(root / f"bakery/m{i}.py", text, 0)
    # Files with roles (a test; an older version beside a newer one), which an update keeps.
    for path in ("bakery/tests/test_m0.py", "bakery/v1/m0.py", "bakery/v2/m0.py"):
        write(root / path, start[0], 0)
    build_index(root, index_dir, tuning=tuning)
    for step, (kind, pick, text) in enumerate(steps, start=1):
        present = sorted(root.rglob("*.py"))
        target = present[pick % len(present)] if present else None
        if kind == "edit" and target is not None:
            write(target, text, step)
        elif kind == "add":
            write(root / f"bakery/added{step}.py", text, step)
        elif kind == "remove" and target is not None and len(present) > 1:
            target.unlink()
        elif kind == "touch" and target is not None:
            write(target, target.read_text(), step)  # read again, its rows the same
        elif kind == "rename" and target is not None:
            target.rename(target.with_name(f"moved{step}_{target.name}"))
        build_index(root, index_dir, tuning=tuning)
        full = scratch / f"full-{step}"
        build_index(root, full, rebuild=True)
        assert snapshot(index_dir) == snapshot(full), f"after step {step}: {kind}"
        assert_codes_read_in_place(index_dir)
        assert_kept_file_rows_are_the_stored_ones(index_dir)
        assert_kept_rows_are_the_stored_ones(index_dir)
        assert_arrays_read_in_one_pass(index_dir)
        updated, fresh = Index.open(root, index_dir=index_dir), Index.open(root, index_dir=full)
        try:
            for question in QUESTIONS:
                assert answer(updated, question) == answer(fresh, question), question
        finally:
            updated.close()
            fresh.close()
        shutil.rmtree(full)


CLASSES = ["Oven", "Mixer", "Proofer", "Sheeter"]
METHODS = ["heat", "spin", "rest", "roll"]


def class_module(slot: int, base: int | None, methods: list[str]) -> str:
    """Module `kitchen/k{slot}.py`: its class, deriving from another slot's or from none, with
    `methods`, each calling the next method on `self` (which may be inherited)."""
    # Every other class imported, used or not: a change of bases alone changes no import.
    lines = [f"from kitchen.k{c} import {CLASSES[c]}" for c in range(len(CLASSES)) if c != slot]
    lines += ["", "", f"class {CLASSES[slot]}({CLASSES[base]}):" if base is not None else f"class {CLASSES[slot]}:"]
    lines += [f"    def {m}(self):\n        return self.{METHODS[(METHODS.index(m) + 1) % len(METHODS)]}()" for m in methods]
    lines += ["    pass"] if not methods else []
    return "\n".join(lines) + "\n"


def caller_module(calls: list[tuple[int, str]]) -> str:
    """A module calling methods on instances of classes (which may inherit them), importing
    only those classes."""
    lines = [f"from kitchen.k{c} import {CLASSES[c]}" for c in sorted({c for c, _ in calls})]
    lines += ["", "", "def work():"]
    lines += [f"    item{n} = {CLASSES[c]}()\n    item{n}.{m}()" for n, (c, m) in enumerate(calls)] or ["    pass"]
    return "\n".join(lines) + "\n"


@st.composite
def class_modules(draw: st.DrawFn, slot: int) -> str:
    base = draw(st.one_of(st.none(), st.sampled_from([i for i in range(len(CLASSES)) if i != slot])))
    return class_module(slot, base, draw(st.lists(st.sampled_from(METHODS), max_size=2, unique=True)))


slot_changes = st.integers(0, len(CLASSES) - 1).flatmap(
    lambda slot: st.tuples(st.just(slot), st.one_of(st.none(), class_modules(slot)))
)
callers = st.lists(
    st.lists(st.tuples(st.integers(0, len(CLASSES) - 1), st.sampled_from(METHODS)), min_size=1, max_size=3),
    min_size=1,
    max_size=3,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.lists(slot_changes, min_size=2, max_size=4),
    calls=callers,
    steps=st.lists(slot_changes, min_size=1, max_size=4),
)
# Mixer inherits heat from Oven, which Sheeter defines too; then Mixer's base goes, its imports
# the same: the call on a Mixer is no longer Oven's.
@example(
    start=[(0, class_module(0, None, ["heat"])), (1, class_module(1, 0, [])), (3, class_module(3, None, ["heat"]))],
    calls=[[(1, "heat")]],
    steps=[(1, class_module(1, None, []))],
)
def test_calls_through_class_hierarchies_update_to_what_a_full_build_makes(tmp_path_factory, start, calls, steps):
    """A method called on an instance of a class that inherits it is resolved through the bases
    of classes in other files: any change of a class, its bases or its methods reaches those calls."""
    scratch = tmp_path_factory.mktemp("hierarchy")
    root, index_dir = scratch / "repo", scratch / "index"
    write(root / "kitchen/__init__.py", "", 0)
    for n, made in enumerate(calls):
        write(root / f"shop/u{n}.py", caller_module(made), 0)
    for slot, text in start:
        if text is not None:
            write(root / f"kitchen/k{slot}.py", text, 0)
    build_index(root, index_dir)
    for step, (slot, text) in enumerate(steps, start=1):
        path = root / f"kitchen/k{slot}.py"
        if text is not None:
            write(path, text, step)
        elif path.exists():
            path.unlink()
        build_index(root, index_dir)
        full = scratch / f"full-{step}"
        build_index(root, full, rebuild=True)
        assert snapshot(index_dir) == snapshot(full), f"after step {step}"
        shutil.rmtree(full)


def test_names_a_package_reexports_under_other_names_update_to_what_a_full_build_makes(tmp_path):
    """`from .seam import hem_edge as hem` in a package and `from quilt import hem` elsewhere:
    each edit of the definition, the alias or the package's imports reaches the call of `hem`."""
    root, index_dir = tmp_path / "repo", tmp_path / "index"
    user = "from quilt import hem\n\n\ndef make_bed():\n    return hem()\n"
    steps = [
        {"quilt/__init__.py": "from .seam import hem_edge as hem\n", "quilt/seam.py": "def hem_edge():\n    return 1\n",
         "patch/seam.py": "def hem_edge():\n    return 2\n", "bed.py": user},
        {"quilt/seam.py": "\n\ndef hem_edge():\n    return 1\n"},  # the definition moves down
        {"quilt/seam.py": "def other():\n    return 1\n"},  # and goes: the alias stays, unresolved
        {"quilt/seam.py": "def hem_edge():\n    return 3\n"},  # back
        {"quilt/__init__.py": "from .seam import hem_edge\n"},  # the alias goes
        {"quilt/__init__.py": "from .seam import hem_edge as hem\n"},  # and comes back
    ]
    for step, files in enumerate(steps):
        for path, text in files.items():
            write(root / path, text, step)
        build_index(root, index_dir)
        full = tmp_path / f"full-{step}"
        build_index(root, full, rebuild=True)
        assert snapshot(index_dir) == snapshot(full), f"after step {step}"
    # The call resolves where it should at the end: to quilt/seam.py's hem_edge.
    made = snapshot(index_dir)
    paths = {row[0]: row[1] for row in made["files"]}
    nodes = {**paths, **{len(paths) + row[0]: f"{paths[row[1]]}:{row[2]}" for row in made["symbols"]}}
    calls = {(nodes[src], nodes[dst], how) for src, dst, kind, _, how in made["edges"] if kind == "call"}
    assert calls == {("bed.py:make_bed", "quilt/seam.py:hem_edge", "imported")}


def test_a_removal_resolves_again_the_calls_into_the_removed_file_when_the_name_keeps_many(tmp_path):
    # A Go package's two files define `knead` for two platforms; another file of the package
    # calls it, resolved within the package to the first. Four other packages define `knead`
    # too, so the name keeps many definitions once the first file goes: the call still moves,
    # to the other file of its package, as a full build has it.
    root, index_dir = tmp_path / "repo", tmp_path / "index"
    files = {
        "bakery/dough/knead_linux.go": "package dough\n\nfunc knead() int {\n\treturn 1\n}\n",
        "bakery/dough/knead_other.go": "package dough\n\nfunc knead() int {\n\treturn 2\n}\n",
        "bakery/dough/shape.go": "package dough\n\nfunc shape() int {\n\treturn knead() + 1\n}\n",
        **{f"bakery/stall{i}/knead.go": f"package stall{i}\n\nfunc knead() int {{\n\treturn {i}\n}}\n" for i in range(4)},
    }
    for path, text in files.items():
        write(root / path, text, 0)
    build_index(root, index_dir)
    (root / "bakery/dough/knead_linux.go").unlink()
    build_index(root, index_dir)
    full = tmp_path / "full"
    build_index(root, full, rebuild=True)
    made = snapshot(index_dir)
    assert made == snapshot(full)
    paths = {row[0]: row[1] for row in made["files"]}
    nodes = {**paths, **{len(paths) + row[0]: f"{paths[row[1]]}:{row[2]}" for row in made["symbols"]}}
    calls = {(nodes[src], nodes[dst]) for src, dst, kind, _, _ in made["edges"] if kind == "call"}
    assert ("bakery/dough/shape.go:shape", "bakery/dough/knead_other.go:knead") in calls


def test_rows_of_a_delta_over_a_base_without_such_rows_name_the_generation_files(tmp_path):
    # A base whose files define and reference nothing (notes, a module of comments), then the
    # module edited (its rows in the delta) and then a note removed (the base's files mapped): the
    # delta's rows keep the generation's file ids, which a base without rows of the table must
    # not send through the base's mapping.
    root, index_dir = tmp_path / "repo", tmp_path / "index"
    tuning = config.DEFAULT.but(TEXT_DELTA_MAX_SHARE=1.0)
    for n in range(3):
        write(root / f"notes/n{n}.txt", f"Proof the dough for {n} hours.\n", 0)
    write(root / "oven.py", "# the oven, to come\n", 0)
    build_index(root, index_dir, tuning=tuning)
    write(root / "oven.py", "from bakery.tray import load\n\n\ndef knead_dough(x):\n    return load(x)\n", 1)
    build_index(root, index_dir, tuning=tuning)
    (root / "notes/n0.txt").unlink()
    build_index(root, index_dir, tuning=tuning)
    with Index.open(root, index_dir=index_dir) as index:
        reader = index.reader
        assert reader.segments.order.mapped  # the base's files are mapped: n0 is gone
        paths = {f.id: f.path for f in reader.files}
        symbols = reader.symbols_at(range(len(reader.symbol_column("name"))), "file_id, name")
        assert [(paths[file_id], name) for _, file_id, name in symbols] == [("oven.py", "knead_dough")]
        oven = next(f.id for f in reader.files if f.path == "oven.py")
        references = reader.segments.rows_of_files(REFS, "file_id, name", [oven])
        assert {(file_id, name) for _, file_id, name in references} >= {(oven, "bakery.tray"), (oven, "load")}
        assert index.search('"knead_dough"').results[0].path == "oven.py"


@given(st.data())
def test_rows_taken_by_runs_are_those_taken_one_by_one(data):
    # A generation's rows are its base's and its delta's in the order `gather` gives; taken as
    # slices of consecutive rows (an edit's generation: a few long runs), they are the same.
    from maguyva.index.segments import consecutive_runs, take_runs

    base, delta = data.draw(st.integers(0, 60)), data.draw(st.integers(0, 20))
    rows = [f"row {i}" for i in range(base + delta)]
    shape = data.draw(st.sampled_from(["edit", "whole", "any"]))
    if shape == "whole":  # every row in order: one run, from the base's rows into the delta's
        gather = np.arange(base + delta, dtype=np.int64)
    elif shape == "edit" and base:
        # An edit's shape: the base in order, some of its rows replaced by the delta's.
        gather = np.arange(base, dtype=np.int64)
        replaced = data.draw(st.lists(st.integers(0, base - 1), max_size=min(delta, base), unique=True))
        gather[sorted(replaced)] = base + np.arange(len(replaced))
    else:
        picked = data.draw(st.lists(st.integers(0, max(base + delta - 1, 0)), max_size=80)) if rows else []
        gather = np.asarray(picked, dtype=np.int64)
    runs = consecutive_runs(gather)
    assert runs is not None  # few rows: few runs
    assert take_runs(runs, rows[:base], rows[base:]) == [rows[i] for i in gather.tolist()]
    assert consecutive_runs(np.arange(0, 4000, 2, dtype=np.int64)) is None  # a run a row: row by row
    few = [f"row {i}" for i in range(7)]  # a base of 2 rows run on into a delta of 5
    assert take_runs(consecutive_runs(np.arange(7, dtype=np.int64)) or [], few[:2], few[2:]) == few
