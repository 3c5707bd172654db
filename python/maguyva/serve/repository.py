"""One repository served over time: its index opened, kept fresh before every answer, and
swapped for a newer generation without disturbing the questions still being answered.

    repo = Repository("path/to/repo")
    repo.refresh()                   # build if missing; re-index incrementally if files changed
    with repo.open() as index:       # the current generation, held open for the block
        index.search("where is parseConfig defined")

`refresh` costs a stat walk when nothing changed (see `maguyva.index.freshness`), and on Linux
not even that: the folders are watched, and while the watch has seen nothing change since a
walk found the index fresh, the check does not walk (`watch=False` walks every time). When files
changed it runs an incremental build (only changed files are parsed and embedded) and swaps the
new generation in; a question already running on the old generation finishes on it, and the
old one is closed when its last reader lets go. If another process is indexing the repository,
`refresh` waits for it up to `lock_wait` seconds, then answers from the generation it has and
says so (`Refresh.stale_reason`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from maguyva.embed import Embedder, EmbeddingError, identity_of, make_embedder
from maguyva.errors import IndexFormatError, IndexLockedError, IndexNotFoundError, IndexStoreError, IndexWriteError
from maguyva.index import gc_pause, store
from maguyva.index.build import BuildSummary, build_index, embedder_identity
from maguyva.index.freshness import DEFAULT_MAX_FILE_SIZE, Changes, TreeWatch, Walk
from maguyva.index.progress import Progress, Silent
from maguyva.index.reader import IndexReader
from maguyva.serve.api import Index, repository_root

#: How long a refresh waits for another process that holds the index's build lock.
LOCK_WAIT_SECONDS = 30.0
#: Polling interval while waiting for that lock: short at first, then backing off to the cap.
_LOCK_POLL_FIRST, _LOCK_POLL_MAX = 0.05, 0.5
_builds = threading.Lock()


@dataclass(frozen=True, slots=True)
class Refresh:
    """What bringing a repository up to date took before an answer."""

    #: When the check ran (time.time()).
    checked_at: float
    #: What the freshness check found (empty when the index was current).
    changes: Changes
    #: The build it took, when the index was missing or stale (None otherwise).
    build: BuildSummary | None
    #: Check plus build plus reopening, in seconds.
    seconds: float
    #: Why the answer may not reflect the latest changes, else None.
    stale_reason: str | None = None
    #: What else the user should know (a damaged index rebuilt, a cache left out), one
    #: sentence each.
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "checked_at": self.checked_at,
            "check_ms": round(self.changes.seconds * 1e3, 3),
            "changed_files": self.changes.count,
            "reindexed_files": self.build.parsed_files if self.build else 0,
            "refresh_ms": round(self.seconds * 1e3, 3),
            "stale": self.stale_reason,
            "warnings": list(self.warnings),
        }


class _Lease:
    """An opened generation and how many questions are using it."""

    __slots__ = ("index", "users", "retired")

    def __init__(self, index: Index):
        self.index = index
        self.users = 0
        self.retired = False


class Repository:
    """A repository root, its own index, and the machinery that keeps that index fresh.

    Thread-safe: refreshes are serialised per repository; questions run in parallel.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        name: str | None = None,
        index_dir: str | os.PathLike[str] | None = None,
        embedder: str | Embedder = "local",
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
        lock_wait: float = LOCK_WAIT_SECONDS,
        progress: Progress | None = None,
        scope: tuple[str, ...] = (),
        watch: bool = True,
    ):
        self.root = repository_root(root)
        #: The part of the tree indexed (relative paths of files and folders; empty: all of
        #: it): a shard of a repository split by path.
        self.scope = tuple(scope)
        self.name = name or self.root.name or str(self.root)
        self.index_dir = Path(index_dir) if index_dir is not None else store.default_index_dir(self.root)
        self.max_file_size = max_file_size
        self.lock_wait = lock_wait
        self._provider = embedder
        self._progress = progress or Silent()
        self._model: Embedder | None = None
        self._model_lock = threading.Lock()
        self._refresh_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._current: _Lease | None = None
        #: The outcome of the latest refresh (None before the first).
        self.last_refresh: Refresh | None = None
        # When the latest successful refresh began (time.monotonic()).
        self._checked_from = float("-inf")
        # The tree's watch, made on the first check (None: walked before every answer).
        self._watch: TreeWatch | None = None
        self._watch_wanted = watch

    def refresh(self) -> Refresh:
        """Open the index (building it if there is none), then re-index whatever changed.

        Questions arriving together share one check: a check that started after a question
        arrived saw every change made before it, so its outcome answers that question too.
        """
        asked = time.monotonic()
        # The check, the update and the new generation's open allocate objects that stay alive
        # (`gc_pause`).
        with self._refresh_lock, gc_pause.paused():
            last = self.last_refresh
            if last is not None and last.stale_reason is None and self._checked_from >= asked:
                return last
            checking_from = time.monotonic()
            started = time.perf_counter()
            build = None
            warnings: list[str] = []
            opened = self._current is None
            if opened:
                build = self._open_or_build(warnings)
            assert self._current is not None
            changes = self._current.index.changes(self._tree_watch())
            stale_reason = None
            if changes.stale or (opened and build is None and self._embedded_by_another_model()):
                # The build says why when the model changed (every file indexed again).
                walked = self._current.index.last_walk()
                build, stale_reason = self._rebuild(walked)
                if build is not None and stale_reason is None and walked is not None and changes.stale:
                    self._current.index.built_from(walked, self._watch)
            if build is not None:
                # A repair already said is not said again by the build that made it.
                said = {w.split("; ")[0] for w in warnings}
                warnings.extend(w for w in build.warnings if w.split("; ")[0] not in said)
            refresh = Refresh(
                time.time(), changes, build, time.perf_counter() - started, stale_reason, tuple(warnings)
            )
            # Recorded only on success: a failed check answers no one.
            self.last_refresh, self._checked_from = refresh, checking_from
            return refresh

    def prepare(self) -> Refresh:
        """`refresh`, then what its first question would otherwise do next: the check that
        follows the walk which began watching the tree (a folder may have changed before its
        watch began: the whole tree is walked once more), and the tables questions derive
        (`Index.warm`). What the first `refresh` took is returned; a failure of any step is raised."""
        refresh = self.refresh()
        if self.watched_changes() is not None:  # an unwatched tree is walked by every check anyway
            self.refresh()
        with self.open() as index:
            index.warm()
        return refresh

    def update(self) -> Refresh:
        """`refresh`, and the new index warmed when it built one (a repository a server keeps up
        to date between questions)."""
        refresh = self.refresh()
        if refresh.build is not None:
            with self.open() as index:
                index.warm()
        return refresh

    def watched_changes(self) -> int | None:
        """How many changes the tree's watch has seen (None: the tree is not watched, or not yet:
        its first refresh makes the watch)."""
        watch = self._watch
        return None if watch is None else watch.changes()

    def _tree_watch(self) -> TreeWatch | None:
        """The tree's watch, made the first time it is asked for (when wanted and possible)."""
        if self._watch_wanted:
            self._watch_wanted = False
            self._watch = TreeWatch.of(self.root)
        return self._watch

    @contextmanager
    def open(self) -> Iterator[Index]:
        """The current generation of the index, kept open until the block ends even if a
        refresh swaps in a newer one meanwhile. Opens (or builds) the index on first use."""
        if self._current is None:
            self.refresh()
        with self._state_lock:
            lease = self._current
            assert lease is not None
            lease.users += 1
        try:
            yield lease.index
        finally:
            with self._state_lock:
                lease.users -= 1
                finished = lease.retired and lease.users == 0
            if finished:
                lease.index.close()

    def close(self) -> None:
        """Close the current generation once no question uses it, and stop watching the tree."""
        if self._watch is not None:
            self._watch, self._watch_wanted = None, True
        with self._state_lock:
            lease, self._current = self._current, None
            if lease is None:
                return
            lease.retired = True
            finished = lease.users == 0
        if finished:
            lease.index.close()

    def _install(self, index: Index) -> None:
        with self._state_lock:
            old, self._current = self._current, _Lease(index)
            finished = False
            if old is not None:
                old.retired = True
                finished = old.users == 0
        if finished:
            assert old is not None
            old.index.close()

    def _open(self) -> Index:
        # The generation being replaced lends the new one what they share (`IndexReader`).
        current = self._current
        earlier = current.index if current is not None else None
        return Index(IndexReader(self.index_dir, earlier.reader if earlier else None), embedder=self.embedder, earlier=earlier)

    def _embedded_by_another_model(self) -> bool:
        """Whether the open index's codes were made by another local model than the one its
        questions would be embedded by (the shipped model changed since it was built): codes of
        two models cannot be compared, so it is built again. Known from the model's config,
        without loading it."""
        assert self._current is not None
        stored = self._current.index.reader.embedder
        if stored.get("provider") != "local":
            return False
        wanted = identity_of("local") if isinstance(self._provider, str) else embedder_identity(self._provider)
        return wanted is not None and stored != wanted

    def _open_or_build(self, warnings: list[str]) -> BuildSummary | None:
        """Open the published index; build one first when there is none, or when the one
        there is damaged or of another format version (said in `warnings`)."""
        deadline = time.monotonic() + self.lock_wait
        delay = _LOCK_POLL_FIRST
        while True:
            try:
                self._install(self._open())
                return None
            except IndexNotFoundError:
                pass
            except IndexFormatError as err:
                # Damaged, or of another format version: the build below replaces it (it
                # checks what it could reuse and indexes the rest again).
                if err.problem not in " ".join(warnings):
                    warnings.append(f"{err.problem}; rebuilt it")
            try:
                summary = self._build()
                self._install(self._open())
                return summary
            except IndexLockedError:
                # Another process is building the first index: it will publish one to open.
                if time.monotonic() >= deadline:
                    raise
                time.sleep(delay)
                delay = min(2 * delay, _LOCK_POLL_MAX)

    def _rebuild(self, walked: Walk | None) -> tuple[BuildSummary | None, str | None]:
        """Re-index incrementally (from `walked`, the check's walk that found the change) and
        swap the new generation in; if another process holds the index past the wait, keep the
        current generation and say why."""
        deadline = time.monotonic() + self.lock_wait
        delay = _LOCK_POLL_FIRST
        while True:
            try:
                summary = self._build(walked)
                break
            except IndexLockedError:
                if time.monotonic() >= deadline:
                    return None, (
                        f"another process has been indexing {self.name} for over {self.lock_wait:g} s; "
                        "answered from the index as it was"
                    )
                time.sleep(delay)
                delay = min(2 * delay, _LOCK_POLL_MAX)
            except (IndexWriteError, EmbeddingError) as err:
                # Disk full, a read-only index folder, an embedder that cannot answer: the index
                # as it was still answers, and the next question tries again.
                return None, f"could not re-index {self.name} ({_one_line(err)}); answered from the index as it was"
        self._install(self._open())
        return summary, None

    def _build(self, walked: Walk | None = None) -> BuildSummary:
        # One build at a time in the process: a build already uses every core, and builds of
        # several repositories share the embedding cache, whose creation is not safe to race.
        with _builds:
            return build_index(
                self.root,
                self.index_dir,
                embedder=self.embedder(),
                max_file_size=self.max_file_size,
                progress=self._progress,
                walked=walked,
                scope=self.scope,
            )

    def embedder(self) -> Embedder:
        """The embedder of this repository's index, loaded once and shared by its builds and
        queries: the kind that embedded the existing index (a query must share its space),
        or the one asked for when there is no index yet."""
        with self._model_lock:
            if self._model is None:
                self._model = self._make_embedder()
            return self._model

    def _make_embedder(self) -> Embedder:
        if not isinstance(self._provider, str):
            return self._provider
        try:  # the metadata alone: opening the whole index only for this would be wasted
            pinned = store.PinnedGeneration.open(self.index_dir)
        except IndexStoreError:
            return shared_embedder(self._provider)
        try:
            db = store.open_database(pinned.path)
            try:
                identity = json.loads(store.read_meta(db)["embedder"])
            finally:
                db.close()
            provider = str(identity["provider"])
            dims = None if provider == "local" else int(identity["dims"])
        except (IndexStoreError, KeyError, ValueError, TypeError, sqlite3.DatabaseError):
            return shared_embedder(self._provider)
        finally:
            pinned.close()
        return shared_embedder(provider, dims)

    def __repr__(self) -> str:
        return f"Repository(name={self.name!r}, root={str(self.root)!r})"


_embedders: dict[tuple[str, int | None], Embedder] = {}
_embedders_lock = threading.Lock()


def shared_embedder(provider: str, dims: int | None = None) -> Embedder:
    """One embedder per (provider, dims) in the process: the repositories of a corpus share a
    loaded model (embedders are safe to call from several threads)."""
    key = (provider, dims)
    with _embedders_lock:
        if key not in _embedders:
            _embedders[key] = make_embedder(provider, **({} if dims is None else {"dims": dims}))
        return _embedders[key]


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__
