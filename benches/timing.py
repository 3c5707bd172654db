"""How the small timing scripts of benches/ (previous_records, metadata_write, cli_cold) report
repeated runs: one format, so their tables read alike; the wall time spent inside named
functions of the package (open_edits, build_stages); and the checkouts a script compares
(latency, cold_builds)."""

from __future__ import annotations

import collections
import functools
import importlib
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def runs_ms(seconds: Sequence[float]) -> str:
    """`best B ms, median M ms (N runs: all in ms)` of repeated timings in seconds."""
    listed = ", ".join(f"{t * 1e3:.0f}" for t in seconds)
    return f"best {min(seconds) * 1e3:.0f} ms, median {statistics.median(seconds) * 1e3:.0f} ms ({len(seconds)} runs: {listed})"


def timed_steps(steps: Sequence[tuple[str, str]]) -> collections.defaultdict[str, float]:
    """Wraps each of `steps` ((module, function or Class.method)) in a timer adding its wall
    time to the returned counter (seconds, by the qualified name); nested steps count in their
    callers too."""
    spent: collections.defaultdict[str, float] = collections.defaultdict(float)
    for module_name, qualified in steps:
        owner: Any = importlib.import_module(module_name)
        *path, name = qualified.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, name)

        def wrapper(*args: Any, __original: Any = original, __label: str = qualified, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return __original(*args, **kwargs)
            finally:
                spent[__label] += time.perf_counter() - started

        setattr(owner, name, functools.wraps(original)(wrapper))
    return spent


def checkouts(specs: Sequence[str], tool: str) -> dict[str, Path]:
    """The checkouts named by `--checkout NAME=DIR` options (DIR holds its `maguyva` package), by
    name; a malformed one ends `tool` with a one-sentence error."""
    found: dict[str, Path] = {}
    for spec in specs:
        name, sep, folder = spec.partition("=")
        if not name or not sep or not (Path(folder) / "maguyva").is_dir():
            raise SystemExit(f"{tool}: --checkout wants NAME=DIR with DIR/maguyva, not {spec!r}")
        found[name] = Path(folder).resolve()
    return found
