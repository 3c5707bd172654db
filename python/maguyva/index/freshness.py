"""Is an index still true to its repository? A cheap check, run before every answer.

The check walks the repository the way a build does (same ignore rules, same size limit) and
compares each file's (size, mtime) with what the index recorded. Only files whose stat differs
are read and hashed; a file whose content hashes the same as the indexed one was merely touched
and is remembered, so it is not read again on the next check. A file added, removed, or whose
content differs makes the index stale.

Stat comparison alone can miss an edit that keeps the size and lands in the same clock tick as
the stat the build took ("racily clean", as git calls it). Files whose recorded mtime falls
within RACY_WINDOW_NS before the build's walk started are therefore always hashed, until their
content has been seen to match at a time their mtime lies safely in the past.

A server that keeps an index open can skip the walk when nothing changed: `TreeWatch` watches
the folders its walk entered (Linux's inotify), and a check that finds the watch's count of
changes where it was when its last walk found the index fresh answers fresh without walking
(`Changes.watched`). A change the kernel reports counts before the call that made it returns,
so a question asked after an edit always walks.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from maguyva import _core
from maguyva._core import read_files, walk
from maguyva.index import gc_pause, store
from maguyva.index.reader import FileInfo, IndexReader
from maguyva.index.store import RACY_WINDOW_NS

#: The walk's size limit unless told otherwise: larger files are left out of the index.
DEFAULT_MAX_FILE_SIZE = 1_000_000

logger = logging.getLogger("maguyva.index.freshness")


def recorded_scope(meta: dict[str, str]) -> tuple[str, ...]:
    """The scope an index's build walked, from its metadata (empty: the whole tree)."""
    return tuple(json.loads(meta.get("scope", "[]")))


class IndexedStat(NamedTuple):
    """What the index recorded about one file the walk found."""

    size: int
    mtime_ns: int
    #: SHA-256 of the indexed content; None for a file left out of the index (binary,
    #: unreadable), whose content was never indexed.
    sha256: str | None


@dataclass(frozen=True, slots=True)
class Changes:
    """How a repository differs from its index, by relative path."""

    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    #: Files whose stat differed (or was racy), read to compare their content.
    hashed: int = 0
    #: Files the walk found (0 when it was not walked).
    walked: int = 0
    seconds: float = 0.0
    #: Whether the tree's watch said nothing changed since a walk found the index fresh, so
    #: it was not walked.
    watched: bool = False

    @property
    def stale(self) -> bool:
        return bool(self.added or self.modified or self.removed)

    @property
    def count(self) -> int:
        return len(self.added) + len(self.modified) + len(self.removed)

    def to_dict(self, limit: int = 20) -> dict[str, object]:
        """A JSON-ready summary, listing at most `limit` paths of each kind."""
        return {
            "added": list(self.added[:limit]),
            "modified": list(self.modified[:limit]),
            "removed": list(self.removed[:limit]),
            "changed_files": self.count,
            "hashed_files": self.hashed,
            "walked_files": self.walked,
            "watched": self.watched,
            "check_ms": round(self.seconds * 1e3, 3),
        }


class Walk(NamedTuple):
    """What a walk of a repository found, and how it was walked: a build handed one walks no
    second time (an update right after the check that found the change)."""

    root: Path
    #: time.time_ns() when the walk started: a file modified since may differ from its stat.
    started_ns: int
    #: (path, size, mtime_ns) of the files walked.
    files: list[tuple[str, int, int]]
    #: Files left out, by reason.
    skipped: dict[str, int]
    max_file_size: int
    include_secrets: bool
    #: The generation (its folder's name) whose recorded stats this walk was found to differ
    #: from, if any: a build of that generation from this walk need not compare them again.
    differs_from: str | None = None
    #: The part of the tree walked (`in_scope`); empty for all of it.
    scope: tuple[str, ...] = ()
    #: The tree's watch's count of changes when the walk began (None: no watch): a generation
    #: built from this walk is the tree's while the count stays there.
    watch_count: int | None = None


def in_scope(path: str, scope: frozenset[str]) -> bool:
    """Whether the relative path `path` is one of the paths in `scope` or lies under one of
    its folders (an empty scope holds every path)."""
    if not scope or path in scope:
        return True
    cut = path.find("/")
    while cut != -1:
        if path[:cut] in scope:
            return True
        cut = path.find("/", cut + 1)
    return False


def walk_tree(
    root: Path, max_file_size: int, include_secrets: bool, scope: tuple[str, ...] = ()
) -> tuple[list[tuple[str, int, int]], dict[str, int]]:
    """The files of `root` an index covers, (path, size, mtime_ns) in path order, and those
    left out by reason: a walk by the index's rules, kept to `scope` when it names a part of
    the tree (a shard of a repository split by path)."""
    walked, skipped = walk(root, max_file_size=max_file_size, include_secrets=include_secrets)
    return kept_to_scope(walked, scope), skipped


def kept_to_scope(walked: list[tuple[str, int, int]], scope: tuple[str, ...]) -> list[tuple[str, int, int]]:
    """The files of `walked` in `scope` (`in_scope`)."""
    if not scope:
        return walked
    kept = frozenset(scope)
    return [entry for entry in walked if in_scope(entry[0], kept)]


class TreeWatch:
    """The folders of one repository watched (`maguyva._core.TreeWatch`, Linux), shared by the
    checks of its index's generations. A watch that fails (the kernel's limit of watches
    reached as the tree grew, its queue unreadable) is given up, said once in the log, and
    the checks walk again."""

    def __init__(self, core: _core.TreeWatch):
        self._core = core
        self._lock = threading.Lock()
        #: Why the watch was given up, or None while it works.
        self.failed: str | None = None

    @classmethod
    def of(cls, root: Path) -> TreeWatch | None:
        """A watch of the tree at `root`, or None where there can be none: not on Linux, a
        network file system (changes made elsewhere raise no event), the kernel out of watch
        instances, or `MAGUYVA_NO_WATCH` set."""
        make = getattr(_core, "TreeWatch", None)
        if make is None or os.environ.get("MAGUYVA_NO_WATCH"):
            return None
        try:
            return cls(make(root))
        except (OSError, ValueError) as err:
            logger.info("%s is walked before every answer: %s", root, err)
            return None

    @property
    def folders(self) -> int:
        """How many folders are watched."""
        return 0 if self.failed else self._core.watched

    def changes(self) -> int | None:
        """The count of changes so far (None once given up)."""
        with self._lock:
            if self.failed is not None:
                return None
            try:
                return self._core.changes()
            except OSError as err:
                self._give_up(err)
                return None

    def walk(self, max_file_size: int, include_secrets: bool) -> tuple[list[tuple[str, int, int]], dict[str, int]] | None:
        """The walk of `walk_tree` (the whole tree), its folders then watched; None once given
        up (the caller walks on its own)."""
        with self._lock:
            if self.failed is not None:
                return None
            try:
                return self._core.walk(max_file_size=max_file_size, include_secrets=include_secrets)
            except OSError as err:
                if not self._core.root.is_dir():
                    raise  # the tree is gone: the walk of the caller says so
                self._give_up(err)
                return None

    def _give_up(self, err: OSError) -> None:
        self.failed = str(err)
        logger.warning("stopped watching %s (%s); it is walked before every answer", self._core.root, err)


@dataclass(slots=True)
class FreshnessCheck:
    """The stat state of one index generation, compared with the repository on demand.

    Not thread-safe: one check at a time (the Repository holding it serialises them).
    """

    root: Path
    indexed: dict[str, IndexedStat]
    #: When the build's walk started (time.time_ns()).
    walked_at_ns: int
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    #: Whether the build walked files named like keys and credentials.
    include_secrets: bool = False
    #: The part of the tree the build walked (`in_scope`); empty for all of it.
    scope: tuple[str, ...] = ()
    #: (size, mtime_ns) of files whose content was found equal to the indexed content since
    #: this generation was built.
    verified: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: The latest check's walk.
    last_walk: Walk | None = None
    #: The tree's watch, when it has one: a check may then skip the walk.
    watch: TreeWatch | None = None
    #: The watch's count of changes when the latest walk began that found the index fresh.
    fresh_at: int | None = None

    @classmethod
    def of(
        cls,
        reader: IndexReader,
        earlier: dict[str, IndexedStat] | None = None,
        earlier_files: Sequence[FileInfo] | None = None,
    ) -> FreshnessCheck:
        """The check of an opened index, from the stats its build recorded; `earlier`, the
        stats of an earlier generation's check, lends the ones that are the same (an edit keeps
        most, and objects kept are not new work for the cyclic collector). With `earlier_files`,
        the files those stats were made from (a reader's `files`, which keeps a file's object
        while it is unchanged), the stats of the same files in the same order are copied whole
        and only those of the files whose objects differ are made again."""
        indexed = _carried_stats(reader, earlier, earlier_files) if earlier is not None and earlier_files is not None else None
        if indexed is None:
            indexed = {}
            for f in reader.files:
                stat = IndexedStat(f.size, f.mtime_ns, f.sha256)
                kept = earlier.get(f.path) if earlier is not None else None
                indexed[f.path] = kept if kept == stat else stat
        return cls.of_stats(reader.root, reader.meta, indexed)

    @classmethod
    def of_database(cls, db: sqlite3.Connection) -> FreshnessCheck:
        """The check of a generation from its metadata alone, without opening its other parts."""
        meta = store.read_meta(db)
        indexed = {
            store.path_from_db(path): IndexedStat(size, mtime_ns, digest)
            for path, size, mtime_ns, digest in db.execute("SELECT path, size, mtime_ns, sha256 FROM files")
        }
        return cls.of_stats(Path(meta["root"]), meta, indexed)

    @classmethod
    def of_stats(cls, root: Path, meta: dict[str, str], indexed: dict[str, IndexedStat]) -> FreshnessCheck:
        """The check of a generation from the stats of its indexed files and its metadata (which
        holds the skipped files and the walk's options and time)."""
        for path, _reason, size, mtime_ns in json.loads(meta.get("skipped_files", "[]")):
            indexed[path] = IndexedStat(size, mtime_ns, None)
        if "walked_at_ns" in meta:
            walked_at_ns = int(meta["walked_at_ns"])
        else:  # an index built before the walk time was recorded: its end time is later, so safe
            walked_at_ns = int(float(meta.get("built_at", "0")) * 1e9)
        max_file_size = int(meta.get("max_file_size", DEFAULT_MAX_FILE_SIZE))
        include_secrets = meta.get("include_secrets") == "true"
        return cls(root, indexed, walked_at_ns, max_file_size, include_secrets, recorded_scope(meta))

    def check(self) -> Changes:
        """How the repository differs from the index now: without a walk when the tree's
        watch has seen nothing change since a walk found the index fresh."""
        started = time.perf_counter()
        watch = self.watch
        seen = watch.changes() if watch is not None else None
        if seen is not None and seen == self.fresh_at:
            return Changes(seconds=time.perf_counter() - started, watched=True)
        started_ns = time.time_ns()
        # The walk creates a few objects per file, all freed by reference counting; left on, the
        # cyclic collector would run several times meanwhile, each pass over every object of
        # the process (a loaded index holds hundreds of thousands), and cost more than the walk.
        with gc_pause.paused():
            found = watch.walk(self.max_file_size, self.include_secrets) if watch is not None and seen is not None else None
            if found is None:
                seen = None
                walked, skipped = walk_tree(self.root, self.max_file_size, self.include_secrets, self.scope)
            else:
                walked, skipped = kept_to_scope(found[0], self.scope), found[1]
            self.last_walk = Walk(
                self.root, started_ns, walked, skipped, self.max_file_size, self.include_secrets,
                scope=self.scope, watch_count=seen,
            )  # fmt: skip
            changes = self.compare(walked, started)
        # Counted before the walk began: whatever changed during it counts after.
        self.fresh_at = seen if not changes.stale else None
        return changes

    def compare(self, walked: list[tuple[str, int, int]], started: float | None = None) -> Changes:
        """How the files a walk found (path, size, mtime_ns) differ from the index; `started`
        (a perf_counter reading) is when the check began."""
        started = time.perf_counter() if started is None else started
        indexed = self.indexed
        added: list[str] = []
        suspects: list[tuple[str, int, int, IndexedStat]] = []
        for at in self.changed_positions(walked):
            path, size, mtime_ns = walked[at]
            stat = indexed.get(path)
            if stat is None:
                added.append(path)
            else:
                suspects.append((path, size, mtime_ns, stat))
        removed: list[str] = []
        if len(walked) - len(added) != len(indexed):
            present = {p for p, _, _ in walked}
            removed = sorted(p for p in indexed if p not in present)
        modified = self._compare_contents(suspects)
        return Changes(
            added=tuple(added),
            modified=tuple(modified),
            removed=tuple(removed),
            hashed=len(suspects),
            walked=len(walked),
            seconds=time.perf_counter() - started,
        )

    def changed_positions(self, walked: Sequence[tuple[str, int, int]]) -> list[int]:
        """The positions in `walked` (path, size, mtime_ns) of the files whose stat does not say
        they are as the index recorded them: unchanged is the stat it recorded, taken safely
        before the walk, or one since seen to hold the same content. (This loop runs over every
        file before an answer.)"""
        indexed, verified = self.indexed, self.verified
        racy_after = self.walked_at_ns - RACY_WINDOW_NS
        changed: list[int] = []
        for at, (path, size, mtime_ns) in enumerate(walked):
            stat = indexed.get(path)
            if stat is not None and (
                (size == stat.size and mtime_ns == stat.mtime_ns and mtime_ns < racy_after)
                or verified.get(path) == (size, mtime_ns)
            ):
                continue
            changed.append(at)
        return changed

    def _compare_contents(self, suspects: list[tuple[str, int, int, IndexedStat]]) -> list[str]:
        """The suspects whose content differs from the indexed content; the others are
        remembered as verified once their mtime is old enough to be trusted."""
        if not suspects:
            return []
        read_at_ns = time.time_ns()
        contents = read_files(self.root, [path for path, _, _, _ in suspects], self.max_file_size)
        modified: list[str] = []
        for (path, size, mtime_ns, stat), content in zip(suspects, contents):
            if isinstance(content, str):  # unreadable now: changed unless it was left out before too
                same = stat.sha256 is None
            else:
                same = stat.sha256 is not None and hashlib.sha256(content).hexdigest() == stat.sha256
            if not same:
                modified.append(path)
            elif mtime_ns < read_at_ns - RACY_WINDOW_NS:
                self.verified[path] = (size, mtime_ns)
        return modified


def _carried_stats(
    reader: IndexReader, earlier: dict[str, IndexedStat], earlier_files: Sequence[FileInfo]
) -> dict[str, IndexedStat] | None:
    """`FreshnessCheck.of`'s stats from `earlier` (made from `earlier_files`) when the reader's
    files are the same paths in the same order: a copy without the files the earlier generation
    skipped (`of_stats` adds this one's), the stats of the files whose objects changed made
    again (kept when equal). None when the paths differ."""
    files = reader.files
    if len(files) != len(earlier_files):
        return None
    changed = [i for i, (now, before) in enumerate(zip(files, earlier_files)) if now is not before]
    if any(files[i].path != earlier_files[i].path for i in changed):
        return None
    indexed = dict(earlier)
    if len(indexed) != len(files):  # the earlier generation's skipped files, added by `of_stats`
        paths = {f.path for f in earlier_files}
        for path in [path for path in indexed if path not in paths]:
            del indexed[path]
    for i in changed:
        f = files[i]
        stat = IndexedStat(f.size, f.mtime_ns, f.sha256)
        if indexed.get(f.path) != stat:
            indexed[f.path] = stat
    return indexed if len(indexed) == len(files) else None
