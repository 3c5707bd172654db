"""The tuned numbers: one frozen object, passed in where work starts, read by the stages of that
work only, so that variants answer side by side without touching anyone else's numbers."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest

from maguyva import Index, config
from maguyva.index.reader import chunk_demotion

FILES = {
    "app/ledger.py": "def settle_ledger(entries):\n    '''Settle every ledger entry.'''\n    return sum(entries)\n",
    "vendor/ledgerlib/settle.py": "def settle_ledger(entries):\n    '''Settle a ledger, vendored.'''\n    return entries\n",
    "app/report.py": "from app.ledger import settle_ledger\n\ndef report(rows):\n    return settle_ledger(rows)\n",
}


@pytest.fixture()
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Index:
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    root = tmp_path / "books"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return Index.build(root)


def test_a_tuning_is_frozen_and_a_variant_names_only_its_numbers() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.DEFAULT.PATH_BONUS = 2.0  # type: ignore[misc]
    variant = config.DEFAULT.but(PATH_BONUS=2.0)
    assert variant.PATH_BONUS == 2.0 and config.DEFAULT.PATH_BONUS == config.Tuning().PATH_BONUS
    assert variant != config.DEFAULT and config.DEFAULT.but() == config.DEFAULT
    with pytest.raises(TypeError):
        config.DEFAULT.but(NO_SUCH_NUMBER=1.0)
    assert "PATH_BONUS" in config.Tuning.numbers()


def test_using_is_scoped_and_nests() -> None:
    assert config.current() is config.DEFAULT
    outer, inner = config.DEFAULT.but(MIN_CANDIDATES=7), config.DEFAULT.but(MIN_CANDIDATES=9)
    with config.using(outer):
        with config.using(inner):
            assert config.current() is inner
        assert config.current() is outer
        with config.using(None):  # None keeps the current one
            assert config.current() is outer
        seen: list[config.Tuning] = []
        thread = threading.Thread(target=lambda: seen.append(config.current()))
        thread.start()
        thread.join()
        assert seen == [config.DEFAULT]  # a new thread starts from the default, not this block's
    assert config.current() is config.DEFAULT


def test_a_table_derived_with_one_tuning_is_not_served_to_another(index: Index) -> None:
    reader = index.reader
    vendored = [i for i, path in enumerate(reader.chunk_file) if reader.files[path].path.startswith("vendor/")]
    assert vendored
    with config.using(config.DEFAULT.but(VENDORED_DEMOTION=0.25)):
        assert set(chunk_demotion(reader)[vendored].tolist()) == {0.25}
    assert set(chunk_demotion(reader)[vendored].tolist()) == {config.DEFAULT.VENDORED_DEMOTION}


def _scores(index: Index, query: str) -> dict[str, float]:
    return {hit.path: hit.score for hit in index.search(query, preset="thorough").results}


def test_searchers_with_different_tunings_answer_side_by_side(index: Index) -> None:
    # Modalities in parallel threads (PARALLEL_MIN_CHUNKS 0), so the tuning must reach them too.
    query = "settle the ledger entries"
    kept = config.DEFAULT.but(PARALLEL_MIN_CHUNKS=0, VENDORED_DEMOTION=1.0)
    demoted = config.DEFAULT.but(PARALLEL_MIN_CHUNKS=0, VENDORED_DEMOTION=0.01)
    other = Index.open(index.root, tuning=demoted)
    index.searcher.tuning = kept
    alone = (_scores(index, query), _scores(other, query))
    vendored = "vendor/ledgerlib/settle.py"
    assert vendored in alone[0] and alone[1].get(vendored, 0.0) < alone[0][vendored]

    answers: list[tuple[int, dict[str, float]]] = []
    lock = threading.Lock()

    def ask(which: int, searched: Index) -> None:
        for _ in range(20):
            found = _scores(searched, query)
            with lock:
                answers.append((which, found))

    threads = [threading.Thread(target=ask, args=(i, searched)) for i, searched in enumerate((index, other))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == 40 and all(found == alone[which] for which, found in answers)
    assert config.current() is config.DEFAULT
    other.close()
