"""Several repositories searched as one corpus, each keeping its own index.

    corpus = Corpus.open(["path/to/service", "path/to/library"])
    answer = corpus.search("how are failed requests retried")
    for repo, hit in zip(answer.repos, answer.results):
        repo, hit.path, hit.start_line

Every answer first brings the repositories it reads up to date (`Repository.refresh`).

Each repository answers with its own index and the whole of `Index.search` (classification,
routing, its modalities fused, its ranking), so with one repository the answer is exactly
`Index.search`'s. Several answers are fused by the same weighted Reciprocal Rank Fusion loop
(`maguyva.query.fuse.fuse_rankings`), each repository's ranking one list of equal weight: a result's
place depends on its rank within its own repository, so each repository's best answer ranks
beside the others' best, and a larger repository, however many candidates it has, does not push
a smaller one out of the top results. Answers that are not comparable are left out first: a
fallback answer beside a direct one, a lookalike of a name beside its exact definition
(`_comparable_answers`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from maguyva import config
from maguyva.embed import Embedder, EmbeddingError
from maguyva.errors import IndexStoreError, NotIndexedError, OutsideRootsError, RequestError, UnknownRepositoryError
from maguyva.index.freshness import DEFAULT_MAX_FILE_SIZE, Changes
from maguyva.index.progress import Progress
from maguyva.index.reader import IndexReader
from maguyva.index.symbols import SEPARATORLESS
from maguyva.query import filters
from maguyva.query.fuse import fuse_rankings
from maguyva.query.intents import FIND_DEFINITION, FIND_REFERENCES, IMPACT_ANALYSIS, MODALITIES, PRESETS
from maguyva.query.results import Hit, SearchResponse
from maguyva.query.search import DEFAULT_RANKING, RANKINGS
from maguyva.serve import across, navigate
from maguyva.serve.api import Index, repository_root
from maguyva.serve.repository import LOCK_WAIT_SECONDS, Refresh, Repository
from maguyva.serve.status import repository_status


@dataclass(frozen=True, slots=True)
class CorpusResponse:
    """The answer to one question over a corpus."""

    #: Intent, route and results, as `Index.search` answers them; paths are relative to the
    #: root of each result's repository.
    response: SearchResponse
    #: The repository of each result, in order.
    repos: tuple[str, ...]
    #: Size in bytes of each result's whole file (as indexed), in order.
    file_sizes: tuple[int, ...]
    #: What bringing each repository up to date took before answering.
    refreshes: dict[str, Refresh] = field(default_factory=dict)
    #: Shards that did not answer in time or at all, left out of the answer (a corpus served
    #: by `maguyva.distributed.RayCorpus`; always empty for a `Corpus`).
    partial: tuple[str, ...] = ()

    @property
    def results(self) -> list[Hit]:
        return self.response.results

    def to_dict(self) -> dict[str, object]:
        """`SearchResponse.to_dict()` with each result's repository under "repo" (and the
        shards left out under "partial", when any were)."""
        out = self.response.to_dict()
        results: list[dict[str, object]] = out["results"]  # type: ignore[assignment]
        out["results"] = [{"repo": repo, **hit} for repo, hit in zip(self.repos, results)]
        if self.partial:
            out["partial"] = list(self.partial)
        return out


@dataclass(frozen=True, slots=True)
class GraphAnswer:
    """Definitions found by name and the code that depends on them."""

    definitions: list[tuple[str, navigate.Definition]]
    #: (repository, dependant), nearest first, at most the limit asked for.
    dependants: list[tuple[str, navigate.Dependant]]
    #: How many dependants there are in all.
    total: int
    #: Shards left out of the answer (see `CorpusResponse.partial`).
    partial: tuple[str, ...] = ()


class Definitions(list[tuple[str, navigate.Definition]]):
    """(repository, definition) pairs, best first, and the shards left out of the answer
    (see `CorpusResponse.partial`)."""

    partial: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RepositoryAnswer:
    """One repository's (or shard's) answer to a question, with what fusing it with others
    needs to know of its index."""

    name: str
    response: SearchResponse
    #: Size in bytes of each result's whole file, in order.
    file_sizes: tuple[int, ...]
    #: How well the question's subject names a definition of the index (navigate's tiers; one
    #: past the last when nothing matches); None when the question is not about a symbol.
    tier: int | None


@dataclass(frozen=True, slots=True)
class RepositoryWalk:
    """One repository's part of a walk of the graph from a symbol: the definitions it starts
    from (those matching the name best within the repository) and what the walk found."""

    name: str
    seeds: list[navigate.Definition]
    dependants: list[navigate.Dependant]
    total: int


@dataclass(frozen=True, slots=True)
class Location:
    """A line of an indexed file and the chunk that holds it."""

    repo: str
    path: str
    line: int
    start_line: int
    end_line: int
    symbol: str | None
    chunk: int


class Searchable(Protocol):
    """What the surfaces (the MCP tools, the command line) ask of a corpus: `Corpus`, or its
    distributed twin `maguyva.distributed.RayCorpus`."""

    def search(
        self, query: str, *, top_k: int = 10, preset: str = "default", repo: str | None = None,
        ranking: str = DEFAULT_RANKING,
    ) -> CorpusResponse: ...  # fmt: skip

    def find_related(
        self, path: str, line: int, *, repo: str | None = None, top_k: int = 10, preset: str = "default"
    ) -> tuple[Location, CorpusResponse]: ...

    def find_symbol(
        self, name: str, *, kind: str | None = None, repo: str | None = None, limit: int = 20
    ) -> Definitions: ...

    def callers(self, symbol: str, *, depth: int = 1, repo: str | None = None, limit: int = 50) -> GraphAnswer: ...

    def impact(self, symbol: str, *, depth: int = 3, repo: str | None = None, limit: int = 100) -> GraphAnswer: ...

    def index_status(self, repo: str | None = None) -> list[dict[str, Any]]: ...

    def file_sizes(self, files: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]: ...

    def close(self) -> None: ...


class Corpus:
    """Repositories answered as one. Thread-safe."""

    def __init__(self, repositories: Sequence[Repository]):
        if not repositories:
            raise RequestError("a corpus needs at least one repository")
        names = [r.name for r in repositories]
        if len(set(names)) != len(names):
            raise RequestError(f"repository names must be distinct, not {names}")
        self.repositories: tuple[Repository, ...] = tuple(repositories)
        self._by_name = {r.name: r for r in repositories}
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="maguyva-corpus")

    @classmethod
    def open(
        cls,
        paths: Sequence[str | os.PathLike[str]],
        *,
        index_dir: str | os.PathLike[str] | None = None,
        embedder: str | Embedder = "local",
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
        lock_wait: float = LOCK_WAIT_SECONDS,
        progress: Progress | None = None,
    ) -> Corpus:
        """A corpus of the repositories at `paths` (named after their folders, made distinct
        with parent folders where two share a name). `index_dir` is for a single repository."""
        if index_dir is not None and len(paths) != 1:
            raise RequestError("index_dir applies to one repository; leave it out to index several")
        roots: list[Path] = []
        for path in paths:
            root = repository_root(path)
            if root not in roots:
                roots.append(root)
        return cls(
            [
                Repository(
                    root, name=name, index_dir=index_dir, embedder=embedder,
                    max_file_size=max_file_size, lock_wait=lock_wait, progress=progress,
                )
                for root, name in zip(roots, distinct_names(roots))
            ]
        )  # fmt: skip

    def names(self) -> list[str]:
        return [r.name for r in self.repositories]

    def select(self, repo: str | None = None) -> list[Repository]:
        """Every repository, or the one called `repo` (by name, or by its root's path)."""
        if repo is None:
            return list(self.repositories)
        if repo in self._by_name:
            return [self._by_name[repo]]
        try:
            as_path = Path(repo).expanduser().resolve()
        except (OSError, ValueError, RuntimeError):
            as_path = None
        for r in self.repositories:
            if as_path == r.root:
                return [r]
        raise UnknownRepositoryError(f"unknown repository {repo!r}; the repositories are {', '.join(self.names())}")

    def refresh(self, repositories: Sequence[Repository] | None = None) -> dict[str, Refresh]:
        """Bring repositories (all by default) up to date, in parallel; what each took."""
        chosen = list(repositories) if repositories is not None else list(self.repositories)
        if len(chosen) == 1:
            return {chosen[0].name: chosen[0].refresh()}
        outcomes = list(self._pool.map(lambda r: r.refresh(), chosen))
        return {r.name: outcome for r, outcome in zip(chosen, outcomes)}

    def follow(self, stop: threading.Event, failed: Callable[[Repository, Exception], None] = lambda _r, _e: None) -> None:
        """Until `stop` is set: bring each repository whose watched tree changed up to date, and
        warm its new index (`Repository.update`), once the tree has been quiet for
        `config.FOLLOW_QUIET_SECONDS`. An agent edits, then asks: the update (a second at 60,000
        files, and as much again for the new index's tables) is then made between the two, not in
        the question's time; a question arriving meanwhile waits for it. `failed` hears what an
        update raised (the question that meets it says it again)."""
        tuning = config.current()
        seen = {repository.name: repository.watched_changes() for repository in self.repositories}
        changed_at: dict[str, float] = {}
        while not stop.wait(tuning.FOLLOW_POLL_SECONDS):
            for repository in self.repositories:
                name, count = repository.name, repository.watched_changes()
                if count != seen.get(name):
                    seen[name], changed_at[name] = count, time.monotonic()
                    continue
                if name not in changed_at or time.monotonic() - changed_at[name] < tuning.FOLLOW_QUIET_SECONDS:
                    continue
                del changed_at[name]
                try:
                    repository.update()
                except Exception as err:
                    failed(repository, err)

    def refresh_usable(self, repositories: Sequence[Repository]) -> tuple[list[Repository], dict[str, Refresh]]:
        """Bring `repositories` up to date and return those that can answer, with what each
        took. Of several, one whose index can be neither opened nor built (a folder it may not
        write, a file system error) is left out of the answer with a warning rather than
        failing the others; when none can answer, the first one's error is raised."""
        chosen = list(repositories)
        if len(chosen) == 1:
            return chosen, {chosen[0].name: chosen[0].refresh()}

        def attempt(r: Repository) -> Refresh | Exception:
            try:
                return r.refresh()
            except (IndexStoreError, OSError, EmbeddingError) as err:
                return err

        usable: list[Repository] = []
        refreshes: dict[str, Refresh] = {}
        failures: list[Exception] = []
        for r, outcome in zip(chosen, self._pool.map(attempt, chosen)):
            if isinstance(outcome, Exception):
                failures.append(outcome)
                said = " ".join(str(outcome).split()) or type(outcome).__name__
                refreshes[r.name] = Refresh(time.time(), Changes(), None, 0.0, None, (f"{r.name} left out: {said}",))
            else:
                usable.append(r)
                refreshes[r.name] = outcome
        if not usable:
            raise failures[0]
        return usable, refreshes

    @contextmanager
    def opened(self, repositories: Sequence[Repository]) -> Iterator[list[tuple[Repository, Index]]]:
        """The current index of each repository, held open for the block."""
        with ExitStack() as stack:
            yield [(r, stack.enter_context(r.open())) for r in repositories]

    # Questions ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        top_k: int = 10,
        preset: str = "default",
        repo: str | None = None,
        ranking: str = DEFAULT_RANKING,
    ) -> CorpusResponse:
        """Answer `query` over the corpus (or the repository `repo`), after refreshing it.
        `ranking` is "learned" or "hand" (`Index.search`)."""
        if not query.strip():
            raise RequestError("the query is empty")
        check_options(top_k, preset, ranking)
        repo = filtered_repo(query, repo)
        repositories, refreshes = self.refresh_usable(self.select(repo))
        with self.opened(repositories) as opened:
            return self._answer(opened, query, top_k, preset, refreshes, ranking=ranking)

    def find_related(
        self, path: str, line: int, *, repo: str | None = None, top_k: int = 10, preset: str = "default"
    ) -> tuple[Location, CorpusResponse]:
        """Code like the code at `path`:`line` (the find_similar intent), from every
        repository; the location's own chunk is left out."""
        check_options(top_k, preset)
        owner, relative = self.locate(path, repo)
        usable, refreshes = self.refresh_usable(self.repositories)
        if owner not in usable:
            owner.refresh()  # raises what kept it out
        with self.opened(usable) as opened:
            index = next(index for r, index in opened if r is owner)
            location = locate_line(owner.name, index, relative, line)
            lines = index.reader.chunk_text(location.chunk).splitlines()[: config.current().RELATED_MAX_LINES]
            # Pasted code is the find_similar intent (the classifier's snippet rule).
            text = "\n".join(lines)[: config.current().RELATED_MAX_CHARS]
            exclude = (owner.name, location.chunk)
            return location, self._answer(opened, text, top_k, preset, refreshes, exclude)

    def locate(self, path: str, repo: str | None = None) -> tuple[Repository, str]:
        """The repository holding `path` (absolute, or relative to a repository's root) and the
        path relative to its root. Symbolic links and `..` are resolved first, and the result
        must lie inside the repository's root, so neither can name a file outside the roots."""
        if not path.strip():
            raise RequestError("the path is empty")
        if "\0" in path:
            raise RequestError("the path holds a NUL character")
        candidates = self.select(repo)
        given = Path(path)
        if given.is_absolute():
            resolved = _resolve(given, path)
            inside = [r for r in candidates if resolved.is_relative_to(r.root)]
            if not inside:
                raise OutsideRootsError(f"path {path!r} is outside the indexed roots ({_roots(candidates)})")
            deepest = max(inside, key=lambda r: len(r.root.parts))  # roots may nest
            return deepest, resolved.relative_to(deepest.root).as_posix()
        # A relative path names a file of the repository where it exists. Where it exists
        # nowhere it may still be a file not indexed yet; but if it leads out of any root
        # (`..`, a link), it is refused as outside.
        existing: list[tuple[Repository, str]] = []
        missing: list[tuple[Repository, str]] = []
        escapes = False
        for r in candidates:
            target = r.root / given
            resolved = _resolve(target, path)
            if not resolved.is_relative_to(r.root):
                escapes = True
            elif os.path.lexists(target):
                existing.append((r, resolved.relative_to(r.root).as_posix()))
            else:
                missing.append((r, resolved.relative_to(r.root).as_posix()))
        if len(existing) == 1:
            return existing[0]
        if existing:
            names = ", ".join(r.name for r, _ in existing)
            raise RequestError(f"path {path!r} is in several repositories ({names}); name one with repo")
        if escapes:
            raise OutsideRootsError(f"path {path!r} is outside the indexed roots ({_roots(candidates)})")
        if len(missing) == 1:
            return missing[0]
        raise NotIndexedError(f"{path!r} is not a file of any repository ({', '.join(self.names())})")

    def find_symbol(
        self, name: str, *, kind: str | None = None, repo: str | None = None, limit: int = 20
    ) -> Definitions:
        """Definitions called `name` in each repository, best matches first."""
        if not name.strip():
            raise RequestError("the name is empty")
        if kind is not None and kind not in navigate.KINDS:
            raise RequestError(f"unknown kind {kind!r}; use one of {', '.join(navigate.KINDS)}")
        repositories, _ = self.refresh_usable(self.select(repo))
        with self.opened(repositories) as opened:
            return merge_definitions(
                [(r.name, navigate.find_definitions(index.reader, name, kind, limit)) for r, index in opened], limit
            )

    def callers(self, symbol: str, *, depth: int = 1, repo: str | None = None, limit: int = 50) -> GraphAnswer:
        """The definitions called `symbol` and the code calling them, through up to `depth`
        calls, nearest first (at most `limit`)."""
        return self._walk(symbol, depth, repo, limit, navigate.callers)

    def impact(self, symbol: str, *, depth: int = 3, repo: str | None = None, limit: int = 100) -> GraphAnswer:
        """The definitions called `symbol` and everything that depends on them (calls,
        imports, inherits) within `depth` edges, nearest first (at most `limit`)."""
        return self._walk(symbol, depth, repo, limit, navigate.impact)

    def _walk(
        self,
        symbol: str,
        depth: int,
        repo: str | None,
        limit: int,
        walk: Callable[[IndexReader, list[navigate.Definition], int, int], tuple[list[navigate.Dependant], int]],
    ) -> GraphAnswer:
        if not symbol.strip():
            raise RequestError("the symbol is empty")
        if depth < 1:
            raise RequestError(f"depth must be at least 1, not {depth}")
        repositories, _ = self.refresh_usable(self.select(repo))
        with self.opened(repositories) as opened:
            answer = merge_walks([walk_repository(r.name, index.reader, symbol, depth, limit, walk) for r, index in opened], limit)
            if repo is None and len(opened) > 1:
                readers = [(r.name, index.reader) for r, index in opened]
                answer = with_dependants(answer, across_repositories(readers, answer.definitions, depth, walk is navigate.impact), limit)
            return answer

    def index_status(self, repo: str | None = None) -> list[dict[str, Any]]:
        """What each repository (or the one called `repo`) has indexed and how fresh it is,
        after bringing it up to date (`status.repository_status`)."""
        repositories = self.select(repo)
        self.refresh(repositories)
        return [repository_status(r) for r in repositories]

    def file_sizes(self, files: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """Size in bytes, as indexed, of each of the (repository, path) files that is indexed."""
        wanted: dict[str, set[str]] = {}
        for repo, path in files:
            wanted.setdefault(repo, set()).add(path)
        sizes: dict[tuple[str, str], int] = {}
        for repository in self.repositories:
            paths = wanted.get(repository.name)
            if paths:
                with repository.open() as index:
                    sizes.update(((repository.name, f.path), f.size) for f in index.reader.files if f.path in paths)
        return sizes

    def close(self) -> None:
        self._pool.shutdown(wait=False)
        for r in self.repositories:
            r.close()

    def __enter__(self) -> Corpus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Fusion ------------------------------------------------------------------------------

    def _answer(
        self,
        opened: list[tuple[Repository, Index]],
        query: str,
        top_k: int,
        preset: str,
        refreshes: dict[str, Refresh],
        exclude: tuple[str, int] | None = None,
        ranking: str = DEFAULT_RANKING,
    ) -> CorpusResponse:
        """Each repository's answer (`Index.search`, all of its ranking), fused into one."""
        started = time.perf_counter()
        several = len(opened) > 1

        def answer(position: int) -> RepositoryAnswer:
            repo, index = opened[position]
            excluded = exclude[1] if exclude is not None and exclude[0] == repo.name else None
            return answer_repository(repo.name, index, query, top_k, preset, ranking, excluded, several)

        if not several:
            return merge_answers([answer(0)], top_k, preset, refreshes, started)
        return merge_answers(list(self._pool.map(answer, range(len(opened)))), top_k, preset, refreshes, started)


#: Intents about a named symbol: a repository that does not define the name (or only a
#: lookalike of it) while another does has nothing to say about it.
_SYMBOL_INTENTS = frozenset({FIND_DEFINITION, FIND_REFERENCES, IMPACT_ANALYSIS})


def answer_repository(
    name: str,
    index: Index,
    query: str,
    top_k: int,
    preset: str,
    ranking: str,
    exclude_chunk: int | None = None,
    with_tier: bool = True,
) -> RepositoryAnswer:
    """One repository's answer (`Index.search`, all of its ranking), without the chunk
    `exclude_chunk`, and what fusing it needs (`with_tier`: how well it defines the subject)."""
    response = index.search(query, top_k=top_k + (exclude_chunk is not None), preset=preset, ranking=ranking)
    results = [h for h in response.results if h.chunk != exclude_chunk][:top_k]
    response = replace(response, results=results)
    tier = None
    if with_tier and response.subject and response.intent in _SYMBOL_INTENTS:
        found = navigate.find_definitions(index.reader, response.subject, limit=1)
        tier = found[0].tier if found else SEPARATORLESS + 1
    return RepositoryAnswer(name, response, _file_sizes(index, results), tier)


def merge_answers(
    answers: Sequence[RepositoryAnswer],
    top_k: int,
    preset: str,
    refreshes: dict[str, Refresh],
    started: float,
    partial: tuple[str, ...] = (),
) -> CorpusResponse:
    """The repositories' answers as one: a single answer as it is; several fused by Reciprocal
    Rank Fusion (`fuse_rankings`) after leaving out those not comparable with the rest
    (`comparable_answers`)."""
    if len(answers) == 1:
        only = answers[0]
        names = (only.name,) * len(only.response.results)
        return CorpusResponse(only.response, names, only.file_sizes, refreshes, partial)
    return _fuse(answers, comparable_answers(answers), top_k, preset, refreshes, started, partial)


def comparable_answers(answers: Sequence[RepositoryAnswer]) -> list[int]:
    """The repositories whose answers take part in the fusion.

    Each repository answers on its own, so two of them can answer the same question in ways that
    should not be ranked side by side: one finds the literal or the callers asked for, another
    finds nothing that way and falls back to fusing its other modalities; one defines the symbol
    asked about, another only a lookalike of it (`Parse_Config` for `parse_config`). As within
    one repository, the better way of answering wins: a fallback answer counts only when no
    repository answered directly, and only the repositories defining the name best (exact, then
    ignoring case, then ignoring separators) answer a question about a symbol.
    """
    taking = [p for p, answer in enumerate(answers) if answer.response.results]
    if not answers:
        return taking
    # The question was classified and planned once per repository, the same way each time.
    asked = answers[0].response
    if asked.planned_strategy == "direct":
        direct = [p for p in taking if answers[p].response.fusion_strategy == "direct"]
        taking = direct or taking
    if asked.subject and asked.intent in _SYMBOL_INTENTS and len(taking) > 1:
        tier = {p: _tier_of(answers[p]) for p in taking}
        best = min(tier.values())
        if best <= SEPARATORLESS:
            taking = [p for p in taking if tier[p] == best]
    return taking


def _tier_of(answer: RepositoryAnswer) -> int:
    return SEPARATORLESS + 1 if answer.tier is None else answer.tier


def _fuse(
    answers: Sequence[RepositoryAnswer],
    taking: list[int],
    top_k: int,
    preset: str,
    refreshes: dict[str, Refresh],
    started: float,
    partial: tuple[str, ...],
) -> CorpusResponse:
    """The repositories' rankings merged by Reciprocal Rank Fusion (`fuse_rankings`): each
    answer is one list of weight 1, its results already boosted, demoted and one per file within
    their repository; results of equal rank tie, and a tie goes to the higher score within its
    repository."""
    k = float(PRESETS[preset].rrf_k or PRESETS["default"].rrf_k or 40)
    fused = fuse_rankings([[hit.score for hit in answers[p].response.results] for p in taking], k, top_k)
    chosen = [(answers[taking[which]], rank) for which, rank in fused]
    answered = [answers[p].response for p in taking] or [answers[0].response]
    timings: dict[str, float] = {}
    for response in answered:
        for name, ms in response.timings_ms.items():
            timings[name] = timings.get(name, 0.0) + ms
    run = {name for response in answered for name in response.modalities_run}
    merged = replace(
        answered[0],
        fusion_strategy="direct" if all(r.fusion_strategy == "direct" for r in answered) else "rrf",
        results=[answer.response.results[rank] for answer, rank in chosen],
        modalities_run=tuple(name for name in MODALITIES if name in run),
        elapsed_ms=(time.perf_counter() - started) * 1e3,
        timings_ms=timings,
    )
    repos = tuple(answer.name for answer, _ in chosen)
    sizes = tuple(answer.file_sizes[rank] for answer, rank in chosen)
    return CorpusResponse(merged, repos, sizes, refreshes, partial)


def merge_definitions(
    found: Sequence[tuple[str, Sequence[navigate.Definition]]], limit: int, partial: tuple[str, ...] = ()
) -> Definitions:
    """Each repository's definitions of a name as one list: as within one repository, the best
    tier found anywhere hides the weaker ones; best matches first, at most `limit`."""
    pairs = [(name, d) for name, definitions in found for d in definitions]
    best = min((d.tier for _, d in pairs), default=0)
    kept = sorted((item for item in pairs if item[1].tier == best), key=lambda item: navigate.definition_order(item[1]))
    merged = Definitions(kept[:limit])
    merged.partial = partial
    return merged


def walk_repository(
    name: str,
    reader: IndexReader,
    symbol: str,
    depth: int,
    limit: int,
    walk: Callable[[IndexReader, list[navigate.Definition], int, int], tuple[list[navigate.Dependant], int]],
) -> RepositoryWalk:
    """One repository's part of a walk from `symbol`: from the definitions matching it best
    there, what `walk` finds within `depth` edges (at most `limit`)."""
    found = navigate.find_definitions(reader, symbol, limit=config.current().GRAPH_WALK_MAX_SEEDS)
    if not found:
        return RepositoryWalk(name, [], [], 0)
    best = min(d.tier for d in found)
    seeds = [d for d in found if d.tier == best]
    walked, count = walk(reader, seeds, depth, limit)
    return RepositoryWalk(name, seeds, walked, count)


def across_repositories(
    readers: Sequence[tuple[str, IndexReader]], definitions: Sequence[tuple[str, navigate.Definition]], depth: int, impact: bool
) -> list[tuple[str, navigate.Dependant]]:
    """What depends, in the other repositories of a corpus, on `definitions` (found in theirs):
    the code that imports a definition's repository by its package name and calls it, and what
    depends on that code within `depth` edges in all (`across`)."""
    found: list[tuple[str, navigate.Dependant]] = []
    by_repository: dict[str, list[navigate.Definition]] = {}
    for name, definition in definitions:
        by_repository.setdefault(name, []).append(definition)
    reader_of = dict(readers)
    for home, seeds in by_repository.items():
        names = across.packages(reader_of[home])
        for name, reader in readers:
            if name != home:
                calls = across.calls_into(reader, names, seeds)
                found.extend((name, d) for d in across.walk_into(reader, calls, seeds, depth, impact))
    return found


def with_dependants(answer: GraphAnswer, more: Sequence[tuple[str, navigate.Dependant]], limit: int) -> GraphAnswer:
    """`answer` with `more` dependants, nearest first (within a depth, `answer`'s first)."""
    if not more:
        return answer
    dependants = sorted([*answer.dependants, *more], key=lambda item: item[1].depth)
    return replace(answer, dependants=dependants[:limit], total=answer.total + len(more))


def merge_walks(walks: Sequence[RepositoryWalk], limit: int, partial: tuple[str, ...] = ()) -> GraphAnswer:
    """The repositories' walks as one: the best match of the name anywhere decides (an exact
    name in one repository hides a case-insensitive lookalike in another); dependants nearest
    first, repositories in order within a depth, at most `limit`."""
    best = min((w.seeds[0].tier for w in walks if w.seeds), default=0)
    definitions: list[tuple[str, navigate.Definition]] = []
    dependants: list[tuple[str, navigate.Dependant]] = []
    total = 0
    for w in walks:
        if not w.seeds or w.seeds[0].tier != best:
            continue
        definitions.extend((w.name, d) for d in w.seeds)
        dependants.extend((w.name, d) for d in w.dependants)
        total += w.total
    dependants.sort(key=lambda item: item[1].depth)  # stable
    return GraphAnswer(definitions, dependants[:limit], total, partial)


def _file_sizes(index: Index, hits: Sequence[Hit]) -> tuple[int, ...]:
    """Size in bytes of each hit's whole file, as indexed."""
    reader = index.reader
    return tuple(reader.files[int(reader.chunk_file[hit.chunk])].size for hit in hits)


def locate_line(repo: str, index: Index, path: str, line: int) -> Location:
    """The chunk of `index` holding `line` of the indexed file `path`."""
    reader = index.reader
    file_id = next((f.id for f in reader.files if f.path == path), None)
    if file_id is None:
        raise NotIndexedError(f"{path!r} is not an indexed file of {repo}")
    length = len(reader.file_lines(file_id))
    if not 1 <= line <= max(length, 1):
        raise NotIndexedError(f"line {line} is outside {path} (lines 1-{length})")
    chunk = _chunk_near(index, file_id, line)
    if chunk is None:
        raise NotIndexedError(f"{path} has no indexed code at line {line}")
    start, end = int(reader.chunk_start[chunk]), int(reader.chunk_end[chunk])
    return Location(repo, path, line, start, end, reader.chunk_symbol[chunk], chunk)


def _resolve(path: Path, given: str) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a link loop, an unreadable folder
        raise RequestError(f"path {given!r} cannot be resolved") from None


def _roots(repositories: Sequence[Repository]) -> str:
    return ", ".join(str(r.root) for r in repositories)


def _chunk_near(index: Index, file_id: int, line: int) -> int | None:
    """The chunk of a file holding `line`; on a line between chunks (blank lines the chunker
    left out), the nearest chunk, the following one on a tie (a blank line above a definition
    belongs with it)."""
    reader = index.reader
    first, end = int(reader.file_chunk_offsets[file_id]), int(reader.file_chunk_offsets[file_id + 1])
    if first == end:
        return None
    starts = reader.chunk_start[first:end].astype(np.int64)
    ends = reader.chunk_end[first:end].astype(np.int64)
    holding = np.flatnonzero((starts <= line) & (ends >= line))
    if len(holding):
        return first + int(holding[0])
    distance = np.where(ends < line, line - ends, starts - line)
    # Lexicographic: nearest first, then the later chunk.
    return first + int(np.lexsort((-starts, distance))[0])


def distinct_names(roots: Sequence[Path]) -> list[str]:
    """A short, distinct name for each root: its folder name, with as many parent folders as
    it takes to tell apart roots that share one."""
    depth = {root: 1 for root in roots}

    def name(root: Path) -> str:
        parts = root.parts[-depth[root]:]
        return "/".join(p for p in parts if p != root.anchor) or str(root)

    while True:
        names = [name(r) for r in roots]
        clashing = {n for n in names if names.count(n) > 1}
        if not clashing:
            return names
        grew = False
        for root, n in zip(roots, names):
            if n in clashing and depth[root] < len(root.parts):
                depth[root] += 1
                grew = True
        if not grew:
            return [str(r) for r in roots]


def filtered_repo(query: str, repo: str | None) -> str | None:
    """The repository asked for: `repo`, or the question's `repo:` filter (they must agree)."""
    asked = filters.parse(query)[0].repo
    if asked is None or asked == repo:
        return repo
    if repo is not None:
        raise RequestError(f"the question asks for repo:{asked} but the repository given is {repo}")
    return asked


def check_options(top_k: int, preset: str, ranking: str = DEFAULT_RANKING) -> None:
    if top_k < 1:
        raise RequestError(f"top_k must be at least 1, not {top_k}")
    if preset not in PRESETS:
        raise RequestError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    if ranking not in RANKINGS:
        raise RequestError(f"unknown ranking {ranking!r}; use one of {', '.join(RANKINGS)}")
