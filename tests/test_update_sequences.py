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

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_index_build import snapshot

from maguyva import Index, config
from maguyva.index import store
from maguyva.index.build import build_index
from maguyva.index.segments import CHUNKS, Segments

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


def answer(index: Index, question: str) -> dict[str, object]:
    """An answer as JSON, without how long it took."""
    found = index.search(question).to_dict()
    found.pop("elapsed_ms")
    return found


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.lists(sources, min_size=2, max_size=5),
    steps=st.lists(operations, min_size=1, max_size=4),
    share=st.sampled_from([0.0, 0.1, 1.0]),
)
def test_any_sequence_of_changes_updates_to_what_a_full_build_makes(tmp_path_factory, start, steps, share):
    scratch = tmp_path_factory.mktemp("sequence")
    root, index_dir = scratch / "repo", scratch / "index"
    tuning = config.DEFAULT.but(TEXT_DELTA_MAX_SHARE=share)
    for i, text in enumerate(start):
        write(root / f"bakery/m{i}.py", text, 0)
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
        updated, fresh = Index.open(root, index_dir=index_dir), Index.open(root, index_dir=full)
        try:
            for question in QUESTIONS:
                assert answer(updated, question) == answer(fresh, question), question
        finally:
            updated.close()
            fresh.close()
        shutil.rmtree(full)
