"""Progress: a redrawn bar on a terminal, silence when piped."""

from __future__ import annotations

import io

from maguyva.index.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_on_a_terminal_ends_with_the_final_count():
    out = Terminal()
    progress = Progress(out)
    progress.start("parsing", 4)
    for _ in range(4):
        progress.advance()
    progress.finish()
    text = out.getvalue()
    assert text.startswith("\rparsing")
    assert text.endswith("[" + "#" * 30 + "] 4/4\n")


def test_nothing_when_piped():
    out = io.StringIO()
    progress = Progress(out)
    progress.start("embedding", 10)
    progress.advance(10)
    progress.finish()
    assert out.getvalue() == ""
