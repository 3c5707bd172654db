"""What serves one shard: its index opened in a long-lived process (a Ray actor, see
`maguyva.distributed.corpus`), kept fresh as a single repository's is, answering each question
the way `maguyva.serve.corpus.Corpus` answers it for one repository.

Every method brings the shard up to date first (`Repository.refresh`) and answers with a
`Reply`: what it found, or the one sentence saying why the shard could not answer (its folder
missing on this node, its index damaged past rebuilding, a folder it may not write), which the
corpus reports as that shard's failure rather than failing the others.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from maguyva.distributed.shards import Shard
from maguyva.errors import EmbeddingError, IndexStoreError, MaguyvaError, NotIndexedError, RequestError, ShardError
from maguyva.index.build import build_index
from maguyva.index.freshness import in_scope
from maguyva.serve import navigate
from maguyva.serve.corpus import (
    Corpus,
    Location,
    RepositoryAnswer,
    RepositoryWalk,
    answer_repository,
    locate_line,
    walk_repository,
)
from maguyva.serve.repository import Refresh, Repository
from maguyva.serve.status import repository_status

T = TypeVar("T")

#: The walks of the graph a shard answers, by name.
WALKS: dict[str, Callable[..., tuple[list[navigate.Dependant], int]]] = {
    "callers": navigate.callers,
    "impact": navigate.impact,
}


@dataclass(frozen=True, slots=True)
class Reply(Generic[T]):
    """A shard's answer: `value` with the refresh it took, or `failure`, one sentence."""

    shard: str
    value: T | None = None
    refresh: Refresh | None = None
    failure: str | None = None
    #: A mistake in the question itself (the same for every shard): raised to the asker.
    error: MaguyvaError | None = None


def build_shard(shard: Shard, embedder: str) -> dict[str, Any]:
    """Build (or bring up to date) the index of `shard` on this node: what it took, and where."""
    root = Path(shard.root)
    if not root.is_dir():
        raise ShardError(f"the folder {shard.root} is missing on the node that indexes it")
    summary = build_index(root, Path(shard.index_dir), embedder=embedder, scope=shard.scope)
    return {
        "node": node_id(),
        "files": summary.files,
        "parsed_files": summary.parsed_files,
        "seconds": summary.seconds,
        "index_bytes": summary.index_bytes,
    }


def node_id() -> str:
    """The Ray node this process runs on ("" outside Ray)."""
    try:
        import ray

        return str(ray.get_runtime_context().get_node_id())
    except Exception:  # noqa: BLE001 - not in a Ray worker
        return ""


class ShardServer:
    """One shard's index, served. Thread-safe: questions run in parallel."""

    def __init__(self, shard: Shard, embedder: str = "local"):
        self.shard = shard
        self.started_at = time.time()
        self.pid = os.getpid()
        self._failure: str | None = None
        self._repository: Repository | None = None
        try:
            self._repository = Repository(shard.root, name=shard.repo, index_dir=shard.index_dir,
                                          embedder=embedder, scope=shard.scope)  # fmt: skip
            # Opens the index the build task left on this node (reopened, not rebuilt, when a
            # restarted actor comes back), indexing what changed meanwhile.
            self.opened = self._repository.refresh()
        except (MaguyvaError, OSError) as err:
            self._failure = _sentence(shard, err)

    # What the corpus asks ----------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """Which process and node serve the shard, since when, and whether it could open it."""
        opened = getattr(self, "opened", None)
        return {
            "shard": self.shard.name, "node": node_id(), "pid": self.pid, "started_at": self.started_at,
            "failure": self._failure, "built_on_open": opened is not None and opened.build is not None,
        }  # fmt: skip

    def search(
        self, query: str, top_k: int, preset: str, ranking: str, exclude_chunk: int | None, several: bool
    ) -> Reply[RepositoryAnswer]:
        return self._answer(
            lambda index: answer_repository(self.shard.name, index, query, top_k, preset, ranking, exclude_chunk, several)
        )

    def definitions(self, name: str, kind: str | None, limit: int) -> Reply[list[navigate.Definition]]:
        return self._answer(lambda index: navigate.find_definitions(index.reader, name, kind, limit))

    def walk(self, symbol: str, depth: int, limit: int, how: str) -> Reply[RepositoryWalk]:
        walk = WALKS[how]
        return self._answer(lambda index: walk_repository(self.shard.name, index.reader, symbol, depth, limit, walk))

    def locate(self, path: str, line: int) -> Reply[tuple[Location, str] | None]:
        """The chunk at `path`:`line` and its text, when `path` is a file of this shard (None
        when it is not)."""

        def find(index: Any) -> tuple[Location, str] | None:
            assert self._repository is not None
            try:
                _, relative = Corpus([self._repository]).locate(path)
            except (NotIndexedError, RequestError):
                return None
            if not in_scope(relative, frozenset(self.shard.scope)):
                return None
            if not any(f.path == relative for f in index.reader.files):
                return None
            location = locate_line(self.shard.repo, index, relative, line)
            return location, index.reader.chunk_text(location.chunk)

        return self._answer(find)

    def status(self) -> Reply[dict[str, Any]]:
        repository = self._repository
        return self._answer(lambda _index: repository_status(repository) if repository is not None else {})

    def file_sizes(self, paths: Sequence[str]) -> Reply[dict[str, int]]:
        wanted = set(paths)
        return self._answer(lambda index: {f.path: f.size for f in index.reader.files if f.path in wanted})

    # ------------------------------------------------------------------------------------

    def _answer(self, ask: Callable[[Any], T]) -> Reply[T]:
        name = self.shard.name
        if self._failure is not None or self._repository is None:
            return Reply(name, failure=self._failure)
        try:
            refresh = self._repository.refresh()
        except (IndexStoreError, OSError, EmbeddingError) as err:
            return Reply(name, failure=_sentence(self.shard, err))
        try:
            with self._repository.open() as index:
                return Reply(name, ask(index), refresh)
        except (RequestError, ValueError) as err:
            if isinstance(err, MaguyvaError):
                return Reply(name, refresh=refresh, error=err)
            raise
        except (IndexStoreError, OSError) as err:
            return Reply(name, refresh=refresh, failure=_sentence(self.shard, err))

    def close(self) -> None:
        if self._repository is not None:
            self._repository.close()


def _sentence(shard: Shard, err: BaseException) -> str:
    said = " ".join(str(err).split()) or type(err).__name__
    return f"{shard.name} left out: {said}"
