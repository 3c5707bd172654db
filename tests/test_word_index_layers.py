"""A word index of an edited index (its base segment's words kept from an earlier reader, the
delta's looked up again) holds what a full build's holds: each word's symbols and weights."""

from __future__ import annotations

import os
import time
from pathlib import Path

from maguyva import Index, config
from maguyva.index import symbols
from maguyva.index.build import build_index

KEEPER = '''"""Keeping bees: hives, frames and the honey they hold."""


def count_frames(hive):
    """How many frames a hive holds, brood and honey together."""
    return len(hive.frames)


class Smoker:
    """Calms the colony before a frame is lifted."""

    def puff(self, strength):
        """One puff of cool smoke at the entrance."""
        return strength * 2
'''


ALARM = '''def swarm_alarm(hive):
    """Rings when a queen leaves with half the bees."""
    return hive


'''


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    then = time.time() - 600
    os.utime(path, (then, then))


def postings(index: Index) -> dict[str, tuple[list[int], list[float], float]]:
    table = symbols.symbol_table(index.reader)
    words = symbols.WordIndex(index.reader, table)
    found = {}
    for word in words.ids:
        posting = words.posting(word)
        if posting is not None:
            found[word] = (posting[0].tolist(), posting[1].tolist(), posting[2])
    return found


def test_an_edited_index_has_the_word_index_of_a_full_build(tmp_path: Path) -> None:
    root = tmp_path / "apiary"
    for i, place in enumerate(["meadow", "orchard", "heath", "garden"]):
        write(root / f"{place}/keeper.py", KEEPER.replace("hive", f"{place}_hive").replace("Smoker", f"Smoker{i}"))
    tuning = config.DEFAULT.but(TEXT_DELTA_MAX_SHARE=1.0)  # the edit goes into a delta over the base
    build_index(root, tmp_path / "index", tuning=tuning)
    with Index.open(root, index_dir=tmp_path / "index") as before:
        assert "fram" in postings(before)  # the base's words looked up, and kept

    write(
        root / "orchard/keeper.py",
        KEEPER.replace("def count_frames", ALARM + "def count_frames").replace("frames", "combs"),
    )
    build_index(root, tmp_path / "index", tuning=tuning)
    build_index(root, tmp_path / "full", rebuild=True)
    with Index.open(root, index_dir=tmp_path / "index") as edited, Index.open(root, index_dir=tmp_path / "full") as full:
        assert not edited.reader.segments.order.identity  # read from a base and a delta
        found, expected = postings(edited), postings(full)
        assert "queen" in found and "ring" in found
        assert found == expected
