"""`RayCorpus`: a corpus indexed by Ray tasks and served by Ray actors (up to eight shards each).

    with RayCorpus.build(["path/a", "path/b"], address=None) as corpus:   # None: a local Ray
        answer = corpus.search("how are retries scheduled", top_k=10)
        answer.partial          # the shards that did not answer in time (empty when all did)

Each shard (`maguyva.distributed.shards`) is indexed by a task on some node, then served by an
actor placed on the node that built it (it memory-maps the index there); where each shard was
placed is recorded, so that a restarted actor, or the next corpus over the same repositories,
reopens the index on that node instead of building it again. A question fans out to every
shard's actor at once and waits at most `deadline` seconds; the shards' answers are merged by
the same functions as `Corpus`'s (`merge_answers`, `merge_definitions`, `merge_walks`, shards in
the order of their repositories), so that over the same unsplit repositories the answer is
`Corpus`'s. A shard past the deadline, whose actor died, or that cannot answer is left out and
named in the answer's `partial` (with why, among the refresh warnings): never silently. Ray
restarts a dead actor (up to `max_restarts` times), and its shard answers again.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from maguyva import config
from maguyva.distributed.server import Reply, ShardServer, build_shard
from maguyva.distributed.shards import MAX_SHARD_FILES, Shard, plan_repository
from maguyva.errors import (
    MaguyvaError,
    NotIndexedError,
    OutsideRootsError,
    RequestError,
    ShardError,
    UnknownRepositoryError,
)
from maguyva.index import store
from maguyva.index.freshness import Changes
from maguyva.index.progress import Progress, Silent
from maguyva.query.classify import classify
from maguyva.query.results import SearchResponse
from maguyva.query.search import DEFAULT_RANKING
from maguyva.serve import across, navigate
from maguyva.serve.corpus import (
    CorpusResponse,
    Definitions,
    GraphAnswer,
    Location,
    RepositoryAnswer,
    RepositoryWalk,
    check_options,
    distinct_names,
    filtered_repo,
    merge_answers,
    merge_definitions,
    merge_walks,
    with_dependants,
)
from maguyva.serve.repository import Refresh

try:
    import ray
    from ray.exceptions import GetTimeoutError, RayActorError, RayError
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
except ImportError as err:  # pragma: no cover - the extra is not installed
    raise ImportError(f'maguyva.distributed needs Ray: pip install "maguyva[ray]" ({err})') from err

T = TypeVar("T")

#: How long a question waits for the shards, in seconds, unless told otherwise.
DEFAULT_DEADLINE = 30.0
#: How many times Ray restarts a shard's actor that died.
MAX_RESTARTS = 5
#: Questions one actor answers at once (over all of its shards).
SHARD_CONCURRENCY = 8
#: Shards one actor serves, unless told otherwise.
SHARDS_PER_ACTOR = 8

# Ray's decorators and node listing are typed loosely; the handles they make are used as Any.
_ray: Any = ray
_ShardActor = _ray.remote(num_cpus=0, max_restarts=MAX_RESTARTS, max_task_retries=0,
                         max_concurrency=SHARD_CONCURRENCY)(ShardServer)  # fmt: skip
_plan = _ray.remote(num_cpus=1, max_retries=1)(plan_repository)
_build = _ray.remote(num_cpus=1, max_retries=1)(build_shard)


@dataclass(slots=True)
class ShardState:
    """A shard of the corpus, the node it was placed on and the actor serving it."""

    shard: Shard
    node: str
    actor: Any
    #: What its build task did, or why it failed.
    built: dict[str, Any] = field(default_factory=dict)


class RayCorpus:
    """Repositories indexed and served as shards on a Ray cluster, answered as one."""

    def __init__(self, shards: Sequence[ShardState], failed: dict[str, str], *, deadline: float, started_ray: bool):
        self._shards = list(shards)
        #: Repositories (or shards) that could not be planned or built: named in every answer.
        self.failed = dict(failed)
        self.deadline = deadline
        self._started_ray = started_ray
        self._closed = False

    @classmethod
    def build(
        cls,
        paths: Sequence[str | os.PathLike[str]],
        address: str | None = None,
        *,
        embedder: str = "local",
        max_shard_files: int = MAX_SHARD_FILES,
        deadline: float = DEFAULT_DEADLINE,
        num_cpus: int | None = None,
        placement_file: str | os.PathLike[str] | None = None,
        progress: Progress | None = None,
        shards_per_actor: int = SHARDS_PER_ACTOR,
    ) -> RayCorpus:
        """Index the repositories at `paths` on Ray and serve them. `address` joins a running
        cluster ("auto", "ray://host:port"); None uses the Ray this process has started, or
        starts a local one (on 127.0.0.1, with `num_cpus`), shut down with the corpus.
        `progress` shows the shards built as their tasks finish. Each actor serves up to
        `shards_per_actor` shards of its node."""
        if not paths:
            raise RequestError("a corpus needs at least one repository")
        if deadline <= 0:
            raise RequestError(f"the deadline must be positive, not {deadline:g} s")
        if shards_per_actor < 1:
            raise RequestError(f"an actor serves at least one shard, not {shards_per_actor}")
        if max_shard_files < 1:
            raise RequestError(f"a shard holds at least one file, not {max_shard_files}")
        started_ray = connect(address, num_cpus)
        roots: list[Path] = []
        for path in paths:
            root = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
            if root not in roots:
                roots.append(root)
        names = distinct_names(roots)
        placements = Placements(Path(placement_file) if placement_file is not None else store.cache_home() / "ray-placement.json")
        failed: dict[str, str] = {}
        planned: list[Shard] = []
        plans = [_plan.remote(root, name, max_shard_files) for root, name in zip(roots, names)]
        for name, plan in zip(names, plans):
            try:
                planned.extend(ray.get(plan))
            except RayError as err:
                failed[name] = f"{name} left out: {_cause(err)}"
        alive = {n["NodeID"] for n in _ray.nodes() if n.get("Alive")}
        builds = []
        for shard in planned:
            node = placements.node_of(shard) or ""
            # Where it was built before, if that node is up: its index is there to reuse.
            options = {"scheduling_strategy": NodeAffinitySchedulingStrategy(node, soft=True)} if node in alive else {}
            builds.append(_build.options(**options).remote(shard, embedder))
        progress = progress or Silent()
        progress.start("shards", len(builds))
        outcomes: dict[Any, dict[str, Any] | str] = {}
        pending = list(builds)
        while pending:  # in the order they finish, to show progress
            done, pending = ray.wait(pending, num_returns=1)
            for build in done:
                try:
                    outcomes[build] = ray.get(build)
                except RayError as err:
                    outcomes[build] = _cause(err)
                progress.advance()
        progress.finish()
        built_on: dict[str, list[tuple[Shard, dict[str, Any]]]] = {}
        for shard, build in zip(planned, builds):
            built = outcomes[build]
            if isinstance(built, str):
                failed[shard.name] = f"{shard.name} left out: {built}"
            else:
                built_on.setdefault(str(built["node"]), []).append((shard, built))
        # Each node's shards, served by as few processes as `shards_per_actor` allows.
        by_name: dict[str, ShardState] = {}
        for node, served in built_on.items():
            for first in range(0, len(served), shards_per_actor):
                group = served[first : first + shards_per_actor]
                strategy = NodeAffinitySchedulingStrategy(node, soft=True)
                actor = _ShardActor.options(scheduling_strategy=strategy).remote([shard for shard, _ in group], embedder)
                by_name.update((shard.name, ShardState(shard, node, actor, built)) for shard, built in group)
        states = [by_name[shard.name] for shard in planned if shard.name in by_name]
        placements.record(states)
        corpus = cls(states, failed, deadline=deadline, started_ray=started_ray)
        # Every server has opened its shards before the first question is asked (one that
        # could not says so in each answer).
        corpus._gather([actor.describe.remote() for actor in corpus.servers()], deadline * 10)
        return corpus

    # Introspection -------------------------------------------------------------------------

    def shards(self) -> list[Shard]:
        return [s.shard for s in self._shards]

    def shard_actors(self) -> dict[str, Any]:
        """The Ray actor serving each shard, by shard name."""
        return {s.shard.name: s.actor for s in self._shards}

    def servers(self) -> list[Any]:
        """The Ray actors serving the shards, each once."""
        return list({id(s.actor): s.actor for s in self._shards}.values())

    def placement(self) -> dict[str, str]:
        """The node each shard was built on and is served from, by shard name."""
        return {s.shard.name: s.node for s in self._shards}

    def names(self) -> list[str]:
        return list(dict.fromkeys(s.shard.repo for s in self._shards))

    # Questions -----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        top_k: int = 10,
        preset: str = "default",
        repo: str | None = None,
        ranking: str = DEFAULT_RANKING,
        deadline: float | None = None,
    ) -> CorpusResponse:
        """`Corpus.search`'s answer, from every shard (or those of the repository `repo`) that
        answers within `deadline` seconds; the others are named in `partial`."""
        if not query.strip():
            raise RequestError("the query is empty")
        check_options(top_k, preset, ranking)
        return self._search(self._select(filtered_repo(query, repo)), query, top_k, preset, ranking, None, deadline)

    def find_related(
        self, path: str, line: int, *, repo: str | None = None, top_k: int = 10, preset: str = "default",
        deadline: float | None = None,
    ) -> tuple[Location, CorpusResponse]:  # fmt: skip
        """Code like the code at `path`:`line` (`Corpus.find_related`), from every shard."""
        check_options(top_k, preset)
        if not path.strip():
            raise RequestError("the path is empty")
        candidates = self._select(repo)
        replies = self._ask(candidates, lambda s: s.actor.locate.remote(s.shard.name, path, line), deadline)
        found = [(state, reply.value) for state, reply in zip(candidates, replies) if reply.value is not None]
        if not found:
            unanswered = [state.shard.name for state, reply in zip(candidates, replies) if reply.failure]
            if unanswered:
                raise NotIndexedError(f"{path!r} was not found in the shards that answered ({', '.join(unanswered)} did not)")
            if Path(path).is_absolute():
                raise OutsideRootsError(f"path {path!r} is not an indexed file under the corpus's roots")
            raise NotIndexedError(f"{path!r} is not a file of any repository ({', '.join(self.names())})")
        if len({state.shard.repo for state, _ in found}) > 1:
            names = ", ".join(state.shard.repo for state, _ in found)
            raise RequestError(f"path {path!r} is in several repositories ({names}); name one with repo")
        owner, (location, text) = found[0]
        lines = text.splitlines()[: config.current().RELATED_MAX_LINES]
        snippet = "\n".join(lines)[: config.current().RELATED_MAX_CHARS]
        exclude = (owner.shard.name, location.chunk)
        return location, self._search(self._shards, snippet, top_k, preset, DEFAULT_RANKING, exclude, deadline)

    def find_symbol(
        self, name: str, *, kind: str | None = None, repo: str | None = None, limit: int = 20,
        deadline: float | None = None,
    ) -> Definitions:  # fmt: skip
        """`Corpus.find_symbol`'s answer, from the shards that answer in time."""
        if not name.strip():
            raise RequestError("the name is empty")
        if kind is not None and kind not in navigate.KINDS:
            raise RequestError(f"unknown kind {kind!r}; use one of {', '.join(navigate.KINDS)}")
        chosen = self._select(repo)
        replies = self._ask(chosen, lambda s: s.actor.definitions.remote(s.shard.name, name, kind, limit), deadline)
        found = [(s.shard.repo, r.value) for s, r in zip(chosen, replies) if r.value is not None]
        return merge_definitions(found, limit, self._partial(replies))

    def callers(self, symbol: str, *, depth: int = 1, repo: str | None = None, limit: int = 50,
                deadline: float | None = None) -> GraphAnswer:  # fmt: skip
        """`Corpus.callers`'s answer, from the shards that answer in time."""
        return self._walk(symbol, depth, repo, limit, "callers", deadline)

    def impact(self, symbol: str, *, depth: int = 3, repo: str | None = None, limit: int = 100,
               deadline: float | None = None) -> GraphAnswer:  # fmt: skip
        """`Corpus.impact`'s answer, from the shards that answer in time."""
        return self._walk(symbol, depth, repo, limit, "impact", deadline)

    def index_status(self, repo: str | None = None) -> list[dict[str, Any]]:
        """What each shard has indexed and how fresh it is (the shards that answer)."""
        chosen = self._select(repo)
        return [r.value for r in self._ask(chosen, lambda s: s.actor.status.remote(s.shard.name), None) if r.value]

    def file_sizes(self, files: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """Size in bytes, as indexed, of each of the (repository, path) files that is indexed."""
        wanted: dict[str, list[str]] = {}
        for repo, path in files:
            wanted.setdefault(repo, []).append(path)
        chosen = [s for s in self._shards if s.shard.repo in wanted]
        replies = self._ask(chosen, lambda s: s.actor.file_sizes.remote(s.shard.name, wanted[s.shard.repo]), None)
        return {(s.shard.repo, path): size for s, r in zip(chosen, replies) for path, size in (r.value or {}).items()}

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for actor in self.servers():
            try:
                ray.kill(actor, no_restart=True)
            except (RayError, ValueError):
                pass
        if self._started_ray:
            ray.shutdown()

    def __enter__(self) -> RayCorpus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Fan-out -------------------------------------------------------------------------------

    def _select(self, repo: str | None) -> list[ShardState]:
        if repo is None:
            return list(self._shards)
        chosen = [s for s in self._shards if repo in (s.shard.repo, s.shard.name)]
        if not chosen:
            raise UnknownRepositoryError(f"unknown repository {repo!r}; the repositories are {', '.join(self.names())}")
        return chosen

    def _search(
        self,
        chosen: list[ShardState],
        query: str,
        top_k: int,
        preset: str,
        ranking: str,
        exclude: tuple[str, int] | None,
        deadline: float | None,
    ) -> CorpusResponse:
        started = time.perf_counter()
        several = len(chosen) > 1

        def ask(state: ShardState) -> Any:
            excluded = exclude[1] if exclude is not None and exclude[0] == state.shard.name else None
            return state.actor.search.remote(state.shard.name, query, top_k, preset, ranking, excluded, several)

        replies = self._ask(chosen, ask, deadline)
        answers: list[RepositoryAnswer] = []
        refreshes: dict[str, Refresh] = {}
        names = {s.shard.name: s.shard.repo for s in chosen}
        for reply in replies:
            if reply.refresh is not None:
                refreshes[reply.shard] = reply.refresh
            if reply.value is not None:
                # Results are reported under the shard's repository.
                answer = reply.value
                answers.append(RepositoryAnswer(names[reply.shard], answer.response, answer.file_sizes, answer.tier))
            elif reply.failure:
                refreshes[reply.shard] = Refresh(time.time(), Changes(), None, 0.0, None, (reply.failure,))
        for name, why in self.failed.items():
            refreshes[name] = Refresh(time.time(), Changes(), None, 0.0, None, (why,))
        partial = self._partial(replies)
        if not answers:
            # As with `Corpus`: when no shard can answer at all, why the first could not; a
            # shard merely late or restarting leaves an empty, partial answer.
            failures = [r.failure for r in replies if r.failure]
            if failures and len(failures) == len(replies) and not any(r.absent for r in replies):
                raise ShardError(failures[0])
            return CorpusResponse(_empty_response(query, preset), (), (), refreshes, partial)
        return merge_answers(answers, top_k, preset, refreshes, started, partial)

    def _walk(self, symbol: str, depth: int, repo: str | None, limit: int, how: str, deadline: float | None) -> GraphAnswer:
        if not symbol.strip():
            raise RequestError("the symbol is empty")
        if depth < 1:
            raise RequestError(f"depth must be at least 1, not {depth}")
        chosen = self._select(repo)
        replies = self._ask(chosen, lambda s: s.actor.walk.remote(s.shard.name, symbol, depth, limit, how), deadline)
        walks = [
            RepositoryWalk(s.shard.repo, r.value.seeds, r.value.dependants, r.value.total)
            for s, r in zip(chosen, replies)
            if r.value is not None
        ]
        answer = merge_walks(walks, limit, self._partial(replies))
        if repo is None and len({s.shard.repo for s in chosen}) > 1 and answer.definitions:
            answer = with_dependants(answer, self._across(chosen, answer, depth, how, deadline), limit)
        return answer

    def _across(
        self, chosen: list[ShardState], answer: GraphAnswer, depth: int, how: str, deadline: float | None
    ) -> list[tuple[str, navigate.Dependant]]:
        """`Corpus`'s walk across repositories (`across_repositories`), shard by shard: the names
        each home repository is imported by, then what every other repository's shards find."""
        seeds: dict[str, list[navigate.Definition]] = {}
        for name, definition in answer.definitions:
            seeds.setdefault(name, []).append(definition)
        homes = [s for s in chosen if s.shard.repo in seeds]
        named = self._ask(homes, lambda s: s.actor.packages.remote(s.shard.name), deadline)
        packages: dict[str, across.Packages] = {}
        for s, reply in zip(homes, named):
            if reply.value is not None:
                known = packages.get(s.shard.repo, across.Packages())
                packages[s.shard.repo] = across.Packages(known.python | reply.value.python, known.paths | reply.value.paths)
        found: list[tuple[str, navigate.Dependant]] = []
        for home, into in packages.items():
            others = [s for s in chosen if s.shard.repo != home]
            replies = self._ask(
                others, lambda s: s.actor.across.remote(s.shard.name, into, seeds[home], depth, how), deadline
            )
            found.extend((s.shard.repo, d) for s, r in zip(others, replies) if r.value is not None for d in r.value)
        return found

    def _ask(
        self,
        chosen: list[ShardState],
        call: Callable[[ShardState], Any],
        deadline: float | None,
    ) -> list[Reply[Any]]:
        """Ask every chosen shard at once and wait up to `deadline` seconds: each shard's reply,
        a failure for those that did not answer in time or whose actor died; a mistake in the
        question, which every shard would make, is raised."""
        if self._closed:
            raise RequestError("the corpus is closed")
        refs = [call(s) for s in chosen]
        outcomes = self._gather(refs, self.deadline if deadline is None else deadline)
        replies: list[Reply[Any]] = []
        for state, outcome in zip(chosen, outcomes):
            if isinstance(outcome, str):
                replies.append(Reply(state.shard.name, failure=f"{state.shard.name} left out: {outcome}", absent=True))
            else:
                if outcome.error is not None:
                    raise outcome.error
                replies.append(outcome)
        return replies

    def _gather(self, refs: list[Any], deadline: float) -> list[Any]:
        """Each object's value, or why it has none (past the deadline, its actor dead)."""
        if not refs:
            return []
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=deadline, fetch_local=True)
        done = set(ready)
        outcomes: list[Any] = []
        for ref in refs:
            if ref not in done:
                ray.cancel(ref)
                outcomes.append(f"no answer within {deadline:g} s")
                continue
            try:
                outcomes.append(ray.get(ref, timeout=deadline))
            except GetTimeoutError:
                outcomes.append(f"no answer within {deadline:g} s")
            except RayActorError as err:
                outcomes.append(f"its server stopped ({_cause(err)}); Ray restarts it")
            except RayError as err:
                outcomes.append(_cause(err))
        return outcomes

    def _partial(self, replies: Sequence[Reply[Any]]) -> tuple[str, ...]:
        left = [r.shard for r in replies if r.failure is not None]
        return tuple(dict.fromkeys([*left, *self.failed]))


def connect(address: str | None, num_cpus: int | None = None) -> bool:
    """Join the Ray cluster at `address`, or use this process's Ray, or start a local one on
    127.0.0.1; whether this call started it."""
    if ray.is_initialized():
        return False
    if address is None:
        # Loopback only, and Ray's temporary files in a folder of their own: a stale record of
        # a dead cluster elsewhere is never joined.
        ray.init(num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
                 _temp_dir=tempfile.mkdtemp(prefix="maguyva-ray-"), log_to_driver=False)  # fmt: skip
        return True
    try:
        ray.init(address=address, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise RequestError(f"cannot join the Ray cluster at {address}: {' '.join(str(err).split())}") from err
    return True


class Placements:
    """Where each shard was built and served: a JSON file of shard keys to node ids."""

    def __init__(self, path: Path):
        self.path = path
        try:
            recorded = json.loads(path.read_text())
            self.nodes: dict[str, str] = {str(k): str(v["node"]) for k, v in recorded.items()}
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            self.nodes = {}

    def node_of(self, shard: Shard) -> str | None:
        return self.nodes.get(shard.key)

    def record(self, states: Sequence[ShardState]) -> None:
        for state in states:
            self.nodes[state.shard.key] = state.node
        data = {key: {"node": node} for key, node in self.nodes.items()}
        try:
            store.write_atomically(self.path, json.dumps(data, indent=1).encode())
        except OSError:
            pass  # a record not kept costs a rebuild next time, not an answer


def _cause(err: BaseException) -> str:
    """The one sentence of a Ray error: the shard's own error when there is one."""
    cause = getattr(err, "cause", None)
    if isinstance(cause, MaguyvaError | OSError):
        return " ".join(str(cause).split())
    text = str(err).strip().splitlines()
    return text[-1].strip() if text else type(err).__name__


def _empty_response(query: str, preset: str) -> SearchResponse:
    """The answer of no shard: the question's classification, and no results."""
    asked = classify(query)
    return SearchResponse(query, asked.intent, asked.confidence, "rrf", preset, [], asked.subject, asked.rule)
