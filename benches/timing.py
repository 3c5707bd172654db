"""How the small timing scripts of benches/ (previous_records, metadata_write, cli_cold) report
repeated runs: one format, so their tables read alike."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def runs_ms(seconds: Sequence[float]) -> str:
    """`best B ms, median M ms (N runs: all in ms)` of repeated timings in seconds."""
    listed = ", ".join(f"{t * 1e3:.0f}" for t in seconds)
    return f"best {min(seconds) * 1e3:.0f} ms, median {statistics.median(seconds) * 1e3:.0f} ms ({len(seconds)} runs: {listed})"
