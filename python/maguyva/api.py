"""The Python surface: `maguyva.Index`."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from maguyva.embed import Embedder
from maguyva.index import store
from maguyva.index.build import DEFAULT_MAX_FILE_SIZE, BuildSummary, build_index
from maguyva.index.progress import Progress
from maguyva.index.reader import IndexReader
from maguyva.query.results import SearchResponse
from maguyva.query.search import Searcher


class Index:
    """A searchable index of one repository.

    `Index.build(path)` builds the index, or brings an existing one up to date, and opens it;
    `Index.open(path)` opens an existing one. The index lives in `index_dir`, by default a
    per-user cache folder keyed by the repository's absolute path (`MAGUYVA_HOME` moves it).
    """

    def __init__(self, reader: IndexReader, summary: BuildSummary | None = None):
        self.reader = reader
        #: What the build that produced this object did (None when opened).
        self.summary = summary
        self._searcher: Searcher | None = None
        self._searcher_lock = threading.Lock()

    def search(self, query: str, top_k: int = 10, preset: str = "default") -> SearchResponse:
        """Answer `query` with at most `top_k` results, one per file, best first.

        `preset` is "quick" (semantic only), "default" (semantic, text, structural) or
        "thorough" (all four modalities). Safe to call from several threads.
        """
        with self._searcher_lock:
            if self._searcher is None:
                self._searcher = Searcher(self.reader)
        return self._searcher.search(query, top_k=top_k, preset=preset)

    @classmethod
    def build(
        cls,
        path: str | os.PathLike[str],
        *,
        index_dir: str | os.PathLike[str] | None = None,
        embedder: str | Embedder = "local",
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
        progress: bool | Progress = False,
    ) -> Index:
        root = repository_root(path)
        directory = Path(index_dir) if index_dir is not None else store.default_index_dir(root)
        reporter = progress if isinstance(progress, Progress) else Progress(enabled=None if progress else False)
        summary = build_index(root, directory, embedder=embedder, max_file_size=max_file_size, progress=reporter)
        return cls(IndexReader(directory), summary)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, index_dir: str | os.PathLike[str] | None = None) -> Index:
        root = repository_root(path)
        directory = Path(index_dir) if index_dir is not None else store.default_index_dir(root)
        return cls(IndexReader(directory))

    @property
    def root(self) -> Path:
        return self.reader.root

    @property
    def index_dir(self) -> Path:
        return self.reader.index_dir

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
        self.reader.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Index(root={str(self.root)!r}, files={len(self.reader.files)}, chunks={len(self.reader.chunk_file)})"


def repository_root(path: str | os.PathLike[str]) -> Path:
    """The absolute root of the repository at `path`, which must be an existing folder."""
    root = Path(path).expanduser()
    if not root.exists():
        raise FileNotFoundError(f"path not found: {path}")
    if not root.is_dir():
        raise NotADirectoryError(f"not a directory: {path}")
    return root.resolve()
