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
from maguyva.errors import (
    EmbeddingError,
    IndexStoreError,
    MaguyvaError,
    NotIndexedError,
    OutsideRootsError,
    RequestError,
    ShardError,
)
from maguyva.index.build import build_index
from maguyva.index.freshness import in_scope
from maguyva.serve import across, navigate
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
    #: Whether the shard's server gave no reply at all (late, or not running): a failure of
    #: the moment, not of the shard.
    absent: bool = False


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
        "peak_rss_mb": peak_rss_mb(),
    }


def node_id() -> str:
    """The Ray node this process runs on ("" outside Ray)."""
    try:
        import ray

        return str(ray.get_runtime_context().get_node_id())
    except Exception:  # noqa: BLE001 - not in a Ray worker
        return ""


@dataclass(slots=True)
class _Served:
    """One shard as its server holds it: its repository, or why it could not be opened."""

    shard: Shard
    repository: Repository | None
    opened: Refresh | None
    failure: str | None


class ShardServer:
    """The indexes of one or more shards, served. Thread-safe: questions run in parallel.

    One process serves several shards of a node (`RayCorpus`'s `shards_per_actor`): a process
    costs some 140 MB before it holds any index, too much to spend on every small repository."""

    def __init__(self, shards: Sequence[Shard], embedder: str = "local"):
        self.started_at = time.time()
        self.pid = os.getpid()
        self._served: dict[str, _Served] = {}
        for shard in shards:
            repository = None
            try:
                repository = Repository(shard.root, name=shard.repo, index_dir=shard.index_dir,
                                        embedder=embedder, scope=shard.scope)  # fmt: skip
                # Opens the index the build task left on this node (reopened, not rebuilt, when
                # a restarted actor comes back), indexing what changed meanwhile.
                self._served[shard.name] = _Served(shard, repository, repository.refresh(), None)
            except (MaguyvaError, OSError) as err:
                self._served[shard.name] = _Served(shard, repository, None, _sentence(shard, err))

    # What the corpus asks ----------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """Which process and node serve the shards, since when, its peak resident size, and for
        each shard whether opening it built it and why it could not be opened."""
        return {
            "node": node_id(), "pid": self.pid, "started_at": self.started_at,
            "peak_rss_mb": peak_rss_mb(),
            "shards": {
                name: {"failure": served.failure, "built_on_open": served.opened is not None and served.opened.build is not None}
                for name, served in self._served.items()
            },
        }  # fmt: skip

    def search(
        self, shard: str, query: str, top_k: int, preset: str, ranking: str, exclude_chunk: int | None, several: bool
    ) -> Reply[RepositoryAnswer]:
        return self._answer(
            shard, lambda index: answer_repository(shard, index, query, top_k, preset, ranking, exclude_chunk, several)
        )

    def definitions(self, shard: str, name: str, kind: str | None, limit: int) -> Reply[list[navigate.Definition]]:
        return self._answer(shard, lambda index: navigate.find_definitions(index.reader, name, kind, limit))

    def walk(self, shard: str, symbol: str, depth: int, limit: int, how: str) -> Reply[RepositoryWalk]:
        walk = WALKS[how]
        return self._answer(shard, lambda index: walk_repository(shard, index.reader, symbol, depth, limit, walk))

    def packages(self, shard: str) -> Reply[across.Packages]:
        """The names other repositories import the shard's repository by (`across.packages`)."""
        return self._answer(shard, lambda index: across.packages(index.reader))

    def across(
        self, shard: str, into: across.Packages, seeds: list[navigate.Definition], depth: int, how: str
    ) -> Reply[list[navigate.Dependant]]:
        """What in the shard depends on `seeds`, definitions of another repository that `into`
        names (`across.calls_into`, `across.walk_into`)."""
        impact = WALKS[how] is navigate.impact
        return self._answer(
            shard,
            lambda index: across.walk_into(index.reader, across.calls_into(index.reader, into, seeds), seeds, depth, impact),
        )

    def locate(self, shard: str, path: str, line: int) -> Reply[tuple[Location, str] | None]:
        """The chunk at `path`:`line` and its text, when `path` is a file of the shard (None
        when it is not)."""
        served = self._served[shard]

        def find(index: Any) -> tuple[Location, str] | None:
            assert served.repository is not None
            try:
                _, relative = Corpus([served.repository]).locate(path)
            except OutsideRootsError:
                if Path(path).is_absolute():
                    return None  # another shard's root may hold it
                raise  # a relative path out of the root (`..`, a link) leaves every root
            except (NotIndexedError, RequestError):
                return None
            if not in_scope(relative, frozenset(served.shard.scope)):
                return None
            if not any(f.path == relative for f in index.reader.files):
                return None
            location = locate_line(served.shard.repo, index, relative, line)
            return location, index.reader.chunk_text(location.chunk)

        return self._answer(shard, find)

    def status(self, shard: str) -> Reply[dict[str, Any]]:
        repository = self._served[shard].repository
        return self._answer(shard, lambda _index: repository_status(repository) if repository is not None else {})

    def file_sizes(self, shard: str, paths: Sequence[str]) -> Reply[dict[str, int]]:
        wanted = set(paths)
        return self._answer(shard, lambda index: {f.path: f.size for f in index.reader.files if f.path in wanted})

    # ------------------------------------------------------------------------------------

    def _answer(self, name: str, ask: Callable[[Any], T]) -> Reply[T]:
        served = self._served.get(name)
        if served is None:
            return Reply(name, failure=f"{name} left out: this server does not hold it")
        repository = served.repository
        if served.failure is not None or repository is None:
            return Reply(name, failure=served.failure)
        try:
            refresh = repository.refresh()
        except (IndexStoreError, OSError, EmbeddingError) as err:
            return Reply(name, failure=_sentence(served.shard, err))
        try:
            with repository.open() as index:
                return Reply(name, ask(index), refresh)
        except (RequestError, ValueError) as err:
            if isinstance(err, MaguyvaError):
                return Reply(name, refresh=refresh, error=err)
            raise
        except (IndexStoreError, OSError) as err:
            return Reply(name, refresh=refresh, failure=_sentence(served.shard, err))

    def close(self) -> None:
        for served in self._served.values():
            if served.repository is not None:
                served.repository.close()


def peak_rss_mb() -> float:
    """This process's peak resident size so far, in MB (Linux reports it in kB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _sentence(shard: Shard, err: BaseException) -> str:
    said = " ".join(str(err).split()) or type(err).__name__
    return f"{shard.name} left out: {said}"
