"""Shards: the parts a distributed corpus is indexed and served in.

One shard per repository; a repository of more than `max_files` files is split by path into
several, each a scope of whole folders and files (`maguyva.index.freshness.in_scope`) taken in
the walk's path order, so that a shard holds neighbouring code (a folder and its subfolders
together, as far as the size allows) and every file is in exactly one shard.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from maguyva.errors import ShardError
from maguyva.index import store
from maguyva.index.freshness import DEFAULT_MAX_FILE_SIZE, walk_tree

#: A repository with more files than this is split into shards of at most this many files
#: (a folder is split only when it is larger).
MAX_SHARD_FILES = 20_000


@dataclass(frozen=True, slots=True)
class Shard:
    """One part of a corpus, indexed and served on its own."""

    #: Distinct within the corpus: the repository's name, with "[i/n]" when it is split.
    name: str
    #: The repository its results are reported under.
    repo: str
    #: The repository's root, as the nodes see it.
    root: str
    #: The files and folders it covers, relative to the root (empty: all of them).
    scope: tuple[str, ...]
    #: Where its index lives on the node that serves it.
    index_dir: str

    @property
    def key(self) -> str:
        """A name for the shard that stays the same from one corpus to the next."""
        text = "\0".join((self.root, *self.scope))
        return hashlib.sha256(os.fsencode(text)).hexdigest()[:16]


def plan_repository(root: Path, repo: str, max_files: int = MAX_SHARD_FILES) -> list[Shard]:
    """The shards of the repository at `root` (walked by the index's rules): one, or several
    of at most `max_files` files each when it is larger."""
    if max_files < 1:
        raise ValueError(f"max_files must be at least 1, not {max_files}")
    if not root.is_dir():
        raise ShardError(f"the folder {root} is missing on the node that indexes it")
    walked, _ = walk_tree(root, DEFAULT_MAX_FILE_SIZE, False)
    scopes = split_by_path([path for path, _, _ in walked], max_files)
    if len(scopes) == 1:
        return [Shard(repo, repo, str(root), (), str(store.default_index_dir(root)))]
    shards = []
    for number, scope in enumerate(scopes, 1):
        shard = Shard(f"{repo}[{number}/{len(scopes)}]", repo, str(root), scope, "")
        folder = store.cache_home() / "shards" / f"{root.name or 'root'}-{shard.key}"
        shards.append(Shard(shard.name, repo, shard.root, scope, str(folder)))
    return shards


def split_by_path(paths: Sequence[str], max_files: int) -> list[tuple[str, ...]]:
    """Scopes covering `paths` (relative, in the walk's path order) with at most `max_files`
    paths each: the whole tree when it fits; otherwise folders too large are split into their
    entries, and the pieces, in order, are packed into scopes as full as they fit."""
    if len(paths) <= max_files:
        return [()]
    pieces: list[tuple[str, int]] = []
    _split(list(paths), 0, max_files, pieces)
    scopes: list[tuple[str, ...]] = []
    current: list[str] = []
    filled = 0
    for entry, count in pieces:
        if current and filled + count > max_files:
            scopes.append(tuple(current))
            current, filled = [], 0
        current.append(entry)
        filled += count
    if current:
        scopes.append(tuple(current))
    return scopes


def _split(paths: list[str], depth: int, max_files: int, pieces: list[tuple[str, int]]) -> None:
    """Append to `pieces` the entries (folders that fit, or files) of the folder at `depth`
    holding `paths`, splitting its subfolders that do not fit."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        parts = path.split("/", depth + 1)
        groups.setdefault("/".join(parts[: depth + 1]), []).append(path)
    for entry, members in groups.items():
        if len(members) <= max_files or members == [entry]:
            pieces.append((entry, len(members)))
        else:
            _split(members, depth + 1, max_files, pieces)
