"""Building the text index of a repository: walk, read in parallel, index, save."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from maguyva._core import TrigramIndex, read_files, walk
from maguyva.index.store import TEXT_INDEX, FileEntry, Manifest

Progress = Callable[[str], None]


@dataclass(frozen=True)
class BuildSummary:
    """What a build did."""

    files: int
    skipped: dict[str, int]
    bytes_indexed: int
    index_bytes: int
    seconds: float


def build_text_index(
    root: Path, index_dir: Path, *, max_file_size: int = 1_000_000, progress: Progress | None = None
) -> BuildSummary:
    """Index every indexable file under `root` into `index_dir`."""
    report = progress or (lambda _message: None)
    started = time.perf_counter()
    walked, skipped = walk(root, max_file_size=max_file_size)
    report(f"found {len(walked)} files under {root}")
    contents = read_files(root, [path for path, _, _ in walked], max_file_size)
    skipped_counts = Counter(skipped)
    entries: list[FileEntry] = []
    docs: list[tuple[int, bytes]] = []
    for (path, size, mtime_ns), content in zip(walked, contents):
        if isinstance(content, str):  # the reason it was skipped
            skipped_counts[content] += 1
            continue
        entry = FileEntry(doc_id=len(entries), path=path.as_posix(), size=size, mtime_ns=mtime_ns)
        entries.append(entry)
        docs.append((entry.doc_id, content))
    report(f"read {len(docs)} files ({sum(len(c) for _, c in docs) / 1e6:.1f} MB); indexing")
    text_index, binary = TrigramIndex.build(docs)
    skipped_counts["binary"] += len(binary)
    binary_ids = set(binary)
    entries = [e for e in entries if e.doc_id not in binary_ids]
    index_dir.mkdir(parents=True, exist_ok=True)
    text_index.save(index_dir / TEXT_INDEX)
    # The manifest is written last: a folder with a manifest always has a complete index.
    Manifest(root=str(root), files=entries, skipped=dict(+skipped_counts)).write(index_dir)
    return BuildSummary(
        files=len(entries),
        skipped=dict(+skipped_counts),
        bytes_indexed=text_index.content_bytes,
        index_bytes=text_index.size_bytes,
        seconds=time.perf_counter() - started,
    )
