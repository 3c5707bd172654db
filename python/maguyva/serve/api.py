"""The Python surface: `maguyva.Index`."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from maguyva import config
from maguyva.embed import Embedder
from maguyva.index import store
from maguyva.index.build import BuildSummary, build_index
from maguyva.index.freshness import DEFAULT_MAX_FILE_SIZE, Changes, FreshnessCheck, TreeWatch, Walk
from maguyva.index.progress import Progress
from maguyva.index.reader import IndexReader
from maguyva.query.results import SearchResponse
from maguyva.query.search import DEFAULT_RANKING, Searcher

#: What `Index.warm` asks: a question in words (every modality of the default preset and the
#: rank stage), a bare name (the lookups by name) and a question about callers (the graph's
#: symbols by name: 1.8 s at 87,000 files).
WARMING_QUESTIONS = ("how does this code handle errors and retries", "Config", "who calls main")


class Index:
    """A searchable index of one repository.

    `Index.build(path)` builds the index, or brings an existing one up to date, and opens it;
    `Index.open(path)` opens an existing one. The index lives in `index_dir`, by default a
    per-user cache folder keyed by the repository's absolute path (`MAGUYVA_HOME` moves it).
    """

    def __init__(
        self,
        reader: IndexReader,
        summary: BuildSummary | None = None,
        *,
        embedder: Callable[[], Embedder] | None = None,
        tuning: config.Tuning | None = None,
        earlier: Index | None = None,
    ):
        """`earlier`, an index of an earlier generation of the same repository, lends the new
        one what the two share (its freshness check's stats of the files unchanged)."""
        self.reader = reader
        #: The tuned numbers its questions are answered with (`config.DEFAULT` unless given).
        self.tuning = tuning or config.DEFAULT
        #: What the build that produced this object did (None when opened).
        self.summary = summary
        # Makes the query embedder; by default one of the kind that embedded the index. Passing
        # one lets successive generations of an index share a loaded model.
        self._embedder = embedder
        self._searcher: Searcher | None = None
        self._searcher_lock = threading.Lock()
        self._freshness: FreshnessCheck | None = None
        self._freshness_lock = threading.Lock()
        self._earlier_stats = earlier._freshness.indexed if earlier is not None and earlier._freshness is not None else None
        #: The files those stats were made from (kept until this index's check is made).
        self._earlier_files = earlier.reader.files if self._earlier_stats is not None and earlier is not None else None

    def search(
        self,
        query: str,
        top_k: int = 10,
        preset: str = "default",
        ranking: str = DEFAULT_RANKING,
        *,
        paths: Sequence[str] = (),
        languages: Sequence[str] = (),
    ) -> SearchResponse:
        """Answer `query` with at most `top_k` results, one per file, best first.

        `preset` is "quick" (semantic only), "default" (semantic, text, structural) or
        "thorough" (all four modalities). `ranking` is "learned" (the shipped model weighs the
        ranking signals) or "hand" (their hand-set weights, for comparison). Safe to call from
        several threads. Filters in the question (`lang:go path:internal/ retry`, see
        `maguyva.query.filters`) and `paths` (prefixes or globs) and `languages` restrict every
        modality and every result.
        """
        return self.searcher.search(query, top_k=top_k, preset=preset, ranking=ranking, paths=paths, languages=languages)

    def warm(self) -> None:
        """Derive now what questions read from the index, rather than on the first one: the query
        embedder, the symbol table and its word index, the path vocabulary, the rank stage's
        tables, the graph's lookups (at 60,000 files, seconds). It answers `WARMING_QUESTIONS` and drops the answers,
        so whatever a question derives is derived, whatever that comes to be. A server warms
        each index once it is open, while its client connects."""
        for question in WARMING_QUESTIONS:
            self.search(question)

    @property
    def searcher(self) -> Searcher:
        """The query pipeline over this index (made on first use, then shared)."""
        with self._searcher_lock:
            if self._searcher is None:
                self._searcher = Searcher(self.reader, embedder=self._embedder, tuning=self.tuning)
            return self._searcher

    def changes(self, watch: TreeWatch | None = None) -> Changes:
        """How the repository on disk differs from this index: files added, modified and
        removed since it was built. Cheap when little changed: files are compared by size and
        mtime, and only those that differ are read and hashed. With the tree's `watch`
        (`TreeWatch.of`, kept by whoever asks again and again), a check after one that found
        the index fresh does not walk while the watch has seen nothing change."""
        with self._freshness_lock:
            if self._freshness is None:
                self._freshness = FreshnessCheck.of(self.reader, self._earlier_stats, self._earlier_files)
                self._earlier_stats, self._earlier_files = None, None
            if watch is not self._freshness.watch:
                self._freshness.watch, self._freshness.fresh_at = watch, None
            changes = self._freshness.check()
            walked = self._freshness.last_walk
            if changes.stale and walked is not None:
                self._freshness.last_walk = walked._replace(differs_from=self.reader.generation.name)
            return changes

    def built_from(self, walked: Walk, watch: TreeWatch | None) -> None:
        """This index was built from `walked`, a walk of the tree that `watch` watches: its
        checks trust the watch from the count the walk began at (a change since counts after
        it), instead of walking once more to find the index fresh."""
        if watch is None or walked.watch_count is None:
            return
        with self._freshness_lock:
            if self._freshness is None:
                self._freshness = FreshnessCheck.of(self.reader, self._earlier_stats, self._earlier_files)
                self._earlier_stats, self._earlier_files = None, None
            self._freshness.watch, self._freshness.fresh_at = watch, walked.watch_count

    def last_walk(self) -> Walk | None:
        """The walk of the latest `changes()` (None before one), for a build that follows it."""
        with self._freshness_lock:
            return None if self._freshness is None else self._freshness.last_walk

    @classmethod
    def build(
        cls,
        path: str | os.PathLike[str],
        *,
        index_dir: str | os.PathLike[str] | None = None,
        embedder: str | Embedder = "local",
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
        progress: bool | Progress = False,
        rebuild: bool = False,
        include_secrets: bool | None = None,
        tuning: config.Tuning | None = None,
    ) -> Index:
        """Build the index of the repository at `path`, or bring it up to date (only changed
        files are parsed and embedded; `rebuild` parses every file again), and open it. Files
        named like keys and credentials are left out unless `include_secrets` (None: as the
        index was built before). `tuning` holds the numbers of the build and of its questions
        (`config.DEFAULT` if None)."""
        root = repository_root(path)
        directory = Path(index_dir) if index_dir is not None else store.default_index_dir(root)
        reporter = progress if isinstance(progress, Progress) else Progress(enabled=None if progress else False)
        summary = build_index(
            root, directory, embedder=embedder, max_file_size=max_file_size, progress=reporter, rebuild=rebuild,
            include_secrets=include_secrets, tuning=tuning,
        )
        if isinstance(embedder, str):
            return cls(IndexReader(directory), summary, tuning=tuning)
        # An embedder object given for the build also embeds the queries: it is already loaded.
        model = embedder
        return cls(IndexReader(directory), summary, embedder=lambda: model, tuning=tuning)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        index_dir: str | os.PathLike[str] | None = None,
        embedder: Callable[[], Embedder] | None = None,
        tuning: config.Tuning | None = None,
    ) -> Index:
        root = repository_root(path)
        directory = Path(index_dir) if index_dir is not None else store.default_index_dir(root)
        return cls(IndexReader(directory), embedder=embedder, tuning=tuning)

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
