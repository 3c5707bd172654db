"""The torture benchmark at its CI size (`benches/torture.py --quick`): kill -9 during builds,
builders and readers racing, a full disk and a read-only index folder, with nothing failed, lost
or left behind. The full run's figures are in benches/README.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TORTURE = Path(__file__).resolve().parents[2] / "benches" / "torture.py"


def test_the_quick_torture_run_loses_nothing(tmp_path):
    figures = tmp_path / "torture.json"
    done = subprocess.run(
        [sys.executable, str(TORTURE), "--quick", "--json", str(figures)],
        env={**os.environ, "MAGUYVA_HOME": str(tmp_path / "home")},
        capture_output=True, text=True, timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    scenarios = json.loads(figures.read_text())["scenarios"]
    assert len(scenarios) == 4
    for scenario in scenarios:
        assert (scenario["failures"], scenario["lost"], scenario["leftovers"]) == (0, 0, 0), scenario["name"]
    kills, races = scenarios[0], scenarios[1]
    assert kills["figures"]["kills_landed"] >= 10
    assert races["figures"]["api searches during a build"] >= 50
