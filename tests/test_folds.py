"""Choosing which model ships out of fold (benches/folds.py --model): a model is chosen in a fold
only for what it gains on the other folds' repositories, and each fold is judged on its own."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))

import folds  # noqa: E402

METHOD = "maguyva default"


def report(path: Path, scores: dict[str, float]) -> Path:
    """A quality.py report holding one method's NDCG@10 per entry, 10 queries each."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "repositories": [{"name": name, "queries": 10} for name in scores],
        "methods": {METHOD: {"per_repo": {name: {"ndcg@10": v} for name, v in scores.items()}}},
    }))
    return path


def spec(tmp_path: Path, name: str, dev: dict[str, float], mined: dict[str, float]) -> str:
    return f"{name}={report(tmp_path / name / 'dev.json', dev)},{report(tmp_path / name / 'mined.json', mined)}"


REPOS = [f"r{i}" for i in range(10)]


def test_a_model_better_everywhere_is_chosen_in_every_fold(tmp_path):
    shipped = spec(tmp_path, "shipped", {r: 0.5 for r in REPOS}, {"m1": 0.3, "m1.docstring": 0.2})
    better = spec(tmp_path, "better", {r: 0.6 for r in REPOS}, {"m1": 0.4, "m1.docstring": 0.3})
    designed, gains = folds.read_model_gains([shipped, better], METHOD)
    table = folds.model_table(designed, gains, folds=5, seed=0)
    assert designed == "shipped" and table["chosen_per_fold"] == ["better"] * 5
    assert table["out_of_fold"]["all"] == pytest.approx(0.1)
    # The mined repository's two sets stay in one fold: both scored by the same choice.
    assert table["out_of_fold"]["mined"] == pytest.approx(0.1)
    assert table["out_of_fold"]["mined.docstring"] == pytest.approx(0.1)


def test_a_gain_on_one_repository_does_not_carry_to_the_fold_that_holds_it(tmp_path):
    """A model that wins big on one repository and loses a little elsewhere wins in fold, but
    only the fold holding that repository would need it, and that fold cannot see it."""
    base = {r: 0.5 for r in REPOS}
    lucky = {r: 0.49 for r in REPOS}
    lucky["r3"] = 0.9
    shipped = spec(tmp_path, "shipped", base, {"m1": 0.3})
    fitted = spec(tmp_path, "lucky", lucky, {"m1": 0.29})
    designed, gains = folds.read_model_gains([shipped, fitted], METHOD)
    table = folds.model_table(designed, gains, folds=5, seed=0)
    assert table["in_fold"]["lucky"]["all"] > 0
    fold_of = folds.deal_folds(gains["lucky"], 5, 0)
    assert table["chosen_per_fold"][fold_of["dev:r3"]] == "shipped"
    assert table["out_of_fold"]["all"] < 0


def test_reports_that_do_not_pair_up_are_refused(tmp_path):
    shipped = spec(tmp_path, "shipped", {"r0": 0.5}, {"m1": 0.3})
    with pytest.raises(SystemExit, match="at least one other"):
        folds.read_model_gains([shipped], METHOD)
    with pytest.raises(SystemExit, match="NAME=REPORT"):
        folds.read_model_gains([shipped, "no-reports"], METHOD)
