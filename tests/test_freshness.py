"""The freshness check: a stat walk that notices every added, removed and modified file, reads
only files whose stat changed, and catches same-size edits inside the build's clock tick."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from maguyva import Index
from maguyva.index.freshness import RACY_WINDOW_NS, FreshnessCheck

FILES = {
    "src/config.py": "def parse_config(path):\n    return open(path).read()\n",
    "src/retry.py": "def retry(fn):\n    return fn()\n",
    "README.md": "Configuration and retries.\n",
    "logo.png": b"\x89PNG\x00\x00binary",
}
#: An mtime safely older than any build in the test: stat comparison alone is trusted for it.
OLD = time.time_ns() - 3600 * 10**9


def write(root: Path, rel: str, content: str | bytes, mtime_ns: int | None = OLD) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel, content in FILES.items():
        write(root, rel, content)
    return root


def index_of(root: Path, tmp_path: Path) -> Index:
    return Index.build(root, index_dir=tmp_path / "index")


def test_unchanged_repository_is_fresh_without_reading_a_file(repo, tmp_path):
    index = index_of(repo, tmp_path)
    changes = index.changes()
    assert not changes.stale and changes.count == 0
    assert changes.hashed == 0, "an unchanged file with an old mtime is trusted by its stat"
    assert changes.walked == 4  # the binary file is walked, known to be left out, not "added"


def test_added_removed_and_modified_files_are_reported(repo, tmp_path):
    index = index_of(repo, tmp_path)
    write(repo, "src/new.py", "def new(): pass\n", mtime_ns=None)
    (repo / "README.md").unlink()
    write(repo, "src/retry.py", "def retry(fn, attempts=3):\n    return fn()\n", mtime_ns=None)
    changes = index.changes()
    assert changes.stale
    assert changes.added == ("src/new.py",)
    assert changes.removed == ("README.md",)
    assert changes.modified == ("src/retry.py",)
    assert changes.count == 3


def test_touched_file_is_hashed_once_then_trusted(repo, tmp_path):
    index = index_of(repo, tmp_path)
    later = OLD + 60 * 10**9  # a new mtime, still far in the past: content the same
    os.utime(repo / "src/config.py", ns=(later, later))
    first = index.changes()
    assert not first.stale and first.hashed == 1
    second = index.changes()
    assert not second.stale and second.hashed == 0, "verified content is not read again"


def test_same_size_edit_with_the_same_mtime_is_caught_when_racy(repo, tmp_path):
    # Written just before the build: its mtime falls in the build's clock window.
    write(repo, "src/retry.py", "def retry(fn):\n    return fn()\n", mtime_ns=None)
    index = index_of(repo, tmp_path)
    stat = (repo / "src/retry.py").stat()
    write(repo, "src/retry.py", "def rerun(fn):\n    return fn()\n", mtime_ns=stat.st_mtime_ns)
    assert (repo / "src/retry.py").stat().st_size == stat.st_size
    assert index.changes().modified == ("src/retry.py",)


def test_the_build_records_when_its_walk_started(repo, tmp_path):
    before = time.time_ns()
    index = index_of(repo, tmp_path)
    check = FreshnessCheck.of(index.reader)
    assert before <= check.walked_at_ns <= float(index.reader.meta["built_at"]) * 1e9
    # A file written during the build is inside the racy window, so its stat is not trusted.
    assert check.walked_at_ns - RACY_WINDOW_NS < before


def test_the_walk_follows_the_build_ignore_rules(repo, tmp_path):
    write(repo, ".gitignore", "*.log\n")
    index = index_of(repo, tmp_path)
    write(repo, "build.log", "noise\n", mtime_ns=None)
    write(repo, "node_modules/dep/index.js", "module.exports = 1\n", mtime_ns=None)
    assert not index.changes().stale, "ignored and dependency files are not new to the index"
    write(repo, "notes.txt", "a new note\n", mtime_ns=None)
    assert index.changes().added == ("notes.txt",)


def test_binary_file_turning_into_text_is_a_change(repo, tmp_path):
    index = index_of(repo, tmp_path)
    write(repo, "logo.png", "now text\n", mtime_ns=None)
    assert index.changes().modified == ("logo.png",)


def test_rebuilt_index_is_fresh_again(repo, tmp_path):
    index_of(repo, tmp_path)
    write(repo, "src/retry.py", "def retry(fn, n):\n    return fn()\n")
    rebuilt = index_of(repo, tmp_path)
    assert rebuilt.summary is not None and rebuilt.summary.parsed_files == 1
    assert not rebuilt.changes().stale


@pytest.mark.parametrize(
    "change",
    ["edit", "binary becomes text", "text becomes binary", "add", "remove", "rename", "skipped file removed", "nothing"],
)
def test_stats_carried_from_the_earlier_generation_are_the_stats_made_anew(repo, tmp_path, change):
    # A new generation's check copies the earlier one's stats where the files are the same, in
    # the same order: what it holds is what making them from its files gives, and the stats of
    # the files left as they were are the earlier objects.
    from maguyva.index.reader import IndexReader

    earlier = IndexReader(Index.build(repo, index_dir=tmp_path / "index").reader.index_dir)
    earlier_stats = FreshnessCheck.of(earlier).indexed
    if change == "edit":
        write(repo, "src/retry.py", "def retry(fn, times=3):\n    return fn()\n")
    elif change == "binary becomes text":
        write(repo, "logo.png", "now a text file\n")
    elif change == "text becomes binary":
        write(repo, "README.md", b"\x00\x01binary now")
    elif change == "add":
        write(repo, "src/backoff.py", "def backoff(n):\n    return 2 ** n\n")
    elif change == "remove":
        (repo / "src/retry.py").unlink()
    elif change == "rename":
        (repo / "src/retry.py").rename(repo / "src/again.py")
    elif change == "skipped file removed":
        (repo / "logo.png").unlink()
    Index.build(repo, index_dir=tmp_path / "index")
    now = IndexReader(tmp_path / "index", earlier)
    carried = FreshnessCheck.of(now, earlier_stats, earlier.files).indexed
    assert carried == FreshnessCheck.of(now).indexed
    assert list(carried) == list(FreshnessCheck.of(now).indexed)  # in the same order
    for f in now.files:
        if f.path in earlier_stats and earlier_stats[f.path] == carried[f.path]:
            assert carried[f.path] is earlier_stats[f.path]
