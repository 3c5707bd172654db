"""The README's test command is the one CI runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    return [block.strip() for block in blocks]


def test_ci_runs_the_readme_test_command():
    commands = readme_commands()
    assert len(commands) == 2, "the README gives exactly two set-up commands"
    ci_script = (ROOT / ".ci" / "run").read_text().splitlines()
    assert commands[1] in ci_script
