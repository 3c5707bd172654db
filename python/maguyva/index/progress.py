"""Progress of long work: a bar on an interactive terminal, nothing when output is piped."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Reports stages of work as `label [#####.....] done/total` lines redrawn in place."""

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.label = ""
        self.total = 0
        self.done = 0
        self._drawn_at = 0.0

    def start(self, label: str, total: int) -> None:
        self.finish()
        self.label, self.total, self.done = label, total, 0
        self._draw(force=True)

    def advance(self, count: int = 1) -> None:
        self.done += count
        self._draw(force=self.done >= self.total)

    def finish(self) -> None:
        if self.label and self.enabled:
            self._draw(force=True)
            self.stream.write("\n")
            self.stream.flush()
        self.label = ""

    def _draw(self, force: bool) -> None:
        now = time.monotonic()
        # Redrawing more than ~20 times a second only costs time.
        if not self.enabled or (not force and now - self._drawn_at < 0.05):
            return
        self._drawn_at = now
        width = 30
        filled = width * self.done // self.total if self.total else width
        bar = "#" * filled + "." * (width - filled)
        self.stream.write(f"\r{self.label:<18} [{bar}] {self.done}/{self.total}")
        self.stream.flush()


class Silent(Progress):
    """Progress that reports nothing."""

    def __init__(self) -> None:
        super().__init__(enabled=False)
