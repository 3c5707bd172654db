"""The package type-checks under mypy's strict mode: every function says what it takes and
gives, and no value's type is left to chance (the settings are pyproject.toml's [tool.mypy])."""

from __future__ import annotations

from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[1]


def test_the_package_type_checks_strictly(tmp_path: Path) -> None:
    out, err, status = api.run(
        ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path), str(ROOT / "python" / "maguyva")]
    )
    assert status == 0, out + err
