"""Answering a question: classify, plan, retrieve (in parallel), fuse, present."""

from __future__ import annotations

import contextvars
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

# Imported here, once, not by numpy on a search's first np.unique: numpy.ma's import parses
# Python (inspect.signature), and CPython 3.11's AST builder shares its recursion depth between
# threads, so that import in one search thread beside any parsing in another can fail with
# SystemError.
import numpy as np
import numpy.ma  # noqa: F401

from maguyva import config
from maguyva.embed import Embedder, make_embedder
from maguyva.errors import IndexFormatError, QueryError, QueryTooLongError
from maguyva.index.reader import IndexReader
from maguyva.index.symbols import defined_as, symbol_table
from maguyva.query import filters, present, rank, route
from maguyva.query.classify import Classification, classify
from maguyva.query.fuse import fuse_modalities
from maguyva.query.intents import MAX_QUERY_CHARS, ONE_RESULT_PER_FILE
from maguyva.query.rank.signals import Signals
from maguyva.query.rank.stage import HandSetRanking, LearnedRanking, Question, Ranked, Ranking, Recorder
from maguyva.query.results import Hit, ModalityPart, SearchResponse
from maguyva.query.retrievers.base import Candidate, Query, Retriever
from maguyva.query.retrievers.graph import GraphRetriever
from maguyva.query.retrievers.semantic import SemanticRetriever
from maguyva.query.retrievers.structural import StructuralRetriever
from maguyva.query.retrievers.text import TextRetriever

#: How the post-fusion signals are weighed: "learned" (`rank.shipped_model`, trained with
#: repository folds by benches/ranker.py) or "hand" (the numbers of `rerank`).
RANKINGS = ("learned", "hand")
DEFAULT_RANKING = "learned"


def check_query_length(query: str) -> None:
    """QueryTooLongError (one sentence) when `query` is longer than `MAX_QUERY_CHARS`."""
    if len(query) > MAX_QUERY_CHARS:
        raise QueryTooLongError(f"the query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}")


#: Chunk masks of the filters asked most recently, kept by each searcher.
_KEPT_FILTER_MASKS = 32


def _alive(method: weakref.WeakMethod[Callable[[], Embedder]]) -> Callable[[], Embedder]:
    """The method a weak reference holds, while its searcher lives."""
    found = method()
    if found is None:
        raise RuntimeError("the searcher of this retriever was closed")
    return found


class Searcher:
    """Answers questions over one opened index. Safe to call from several threads."""

    def __init__(
        self,
        reader: IndexReader,
        embedder: Callable[[], Embedder] | None = None,
        signals: Signals | None = Signals(),
        ranker: rank.RankModel | None = None,
        tuning: config.Tuning | None = None,
    ):
        self.reader = reader
        self._masks: dict[filters.Filters, np.ndarray | None] = {}
        self._masks_lock = threading.Lock()
        #: The tuned numbers every question is answered with (`config.DEFAULT` unless given).
        self.tuning = tuning or config.DEFAULT
        #: The post-fusion signals of `rerank` (None: fusion's order as it is, for comparison).
        self.signals = signals
        #: The learned weights of the signals (`rank.FEATURES`) that ranking "learned" uses: the
        #: shipped model unless another is given.
        self.ranker = ranker or rank.shipped_model()
        #: Called with (query, classification, candidates, features, hand-set scores) for every
        #: question whose candidates are ranked: how the benchmarks collect training data.
        self.record: Recorder | None = None
        # Neither holds the searcher itself (a bound method of it would): a searcher, and the
        # reader with every table derived from it, is then freed as soon as it is dropped, not
        # left to the cyclic collector (which a served index would meet with several
        # generations' tables at once).
        self._embedder_factory = embedder
        self._embedder: Embedder | None = None
        self._embedder_lock = threading.Lock()
        own_embedder = weakref.WeakMethod(self.embedder)
        self.retrievers: dict[str, Retriever] = {
            r.name: r
            for r in (
                SemanticRetriever(lambda: _alive(own_embedder)()),
                TextRetriever(),
                StructuralRetriever(),
                GraphRetriever(),
            )
        }
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="maguyva-retrieve")

    def _index_embedder(self) -> Embedder:
        """An embedder of the kind that embedded the index (queries must share its space)."""
        identity = self.reader.embedder
        options = {} if identity["provider"] == "local" else {"dims": identity["dims"]}
        model = make_embedder(str(identity["provider"]), **options)
        if identity["provider"] == "local" and identity["model"] != model.model:
            # The shipped model changed since the index was built: its codes and the questions'
            # would not be comparable (an index opened through a refresh is built again).
            raise IndexFormatError(
                f"the index in {self.reader.index_dir} was embedded by local model {identity['model']}"
                f" ({identity['dims']} bits), not by this version's {model.model} ({model.dims} bits)"
            )
        return model

    def embedder(self) -> Embedder:
        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = self._index_embedder() if self._embedder_factory is None else self._embedder_factory()
            return self._embedder

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
        """`ranking` "learned" weighs the post-fusion signals by `self.ranker`, "hand" by the
        hand-set numbers of `rerank` (kept for comparison). Filters written in the question
        (`maguyva.query.filters`), and `paths` and `languages` as `path:` and `lang:` filters,
        restrict every modality and every result."""
        check_query_length(query)
        if ranking not in RANKINGS:
            raise QueryError(f"unknown ranking {ranking!r}; use one of {', '.join(RANKINGS)}")
        if not query.strip():
            raise QueryError("the query is empty")
        if top_k < 1:
            raise QueryError(f"top_k must be at least 1, not {top_k}")
        asked, question = filters.parse(query)
        asked = asked.merged(paths=tuple(paths), languages=tuple(languages))
        if asked and not question.strip():
            raise QueryError("the query holds only filters; add what to look for")
        with config.using(self.tuning):
            return self._search(question, top_k, preset, ranking, asked)

    def _search(
        self, query: str, top_k: int, preset: str, ranking: str, asked: filters.Filters = filters.Filters()
    ) -> SearchResponse:
        started = time.perf_counter()
        classification = classify(query)
        plan = route.plan(query, classification, preset)
        planned = plan.strategy
        request = route.request(query, classification, preset)
        if asked:
            request = replace(request, allowed=self._allowed(asked), case_sensitive=asked.case_sensitive)
        limit = max(top_k * config.current().CANDIDATES_PER_RESULT, config.current().MIN_CANDIDATES)
        lists, timings = self._retrieve(plan, request, limit)
        if plan.strategy == "direct" and not any(lists.values()) and preset != "quick":
            # The dominant modality found nothing: let the others try rather than answer nothing.
            plan = route.fused(classification, preset)
            lists, more = self._retrieve(plan, request, limit)
            timings.update(more)
        ranked_by: Ranking = LearnedRanking(self.ranker) if ranking == "learned" else HandSetRanking()
        hits = self._fuse(plan, query, classification, lists, top_k, ranked_by, request.allowed)
        return SearchResponse(
            query=query,
            intent=classification.intent,
            confidence=classification.confidence,
            fusion_strategy=plan.strategy,
            preset=preset,
            results=hits,
            ranking=ranked_by.name,
            subject=classification.subject,
            rule=classification.rule,
            modalities_run=tuple(name for name, _ in plan.modalities),
            elapsed_ms=(time.perf_counter() - started) * 1e3,
            timings_ms=timings,
            planned_strategy=planned,
            filters=asked.to_dict(),
        )

    def _retrieve(
        self, plan: route.Plan, request: Query, limit: int
    ) -> tuple[dict[str, list[Candidate]], dict[str, float]]:
        def run(name: str) -> tuple[list[Candidate], float]:
            t = time.perf_counter()
            found = self.retrievers[name].retrieve(self.reader, request, limit)
            return found, (time.perf_counter() - t) * 1e3

        names = [name for name, _ in plan.modalities]
        if len(names) == 1:
            outcomes = [run(names[0])]
        elif self._searched_chunks(request) < config.current().PARALLEL_MIN_CHUNKS:
            # One after another on this thread; a modality that can start early (the text
            # modality's counting, on the core's threads) is finished after the others, its
            # work beside theirs. The modalities are independent: the order changes no answer.
            early: dict[str, tuple[Callable[[], list[Candidate]], float]] = {}
            for name in names:
                # An attribute looked up, not a runtime protocol check (several µs each).
                start: Callable[[IndexReader, Query, int], Callable[[], list[Candidate]]] | None = getattr(
                    self.retrievers[name], "start", None
                )
                if start is not None:
                    t = time.perf_counter()
                    early[name] = (start(self.reader, request, limit), (time.perf_counter() - t) * 1e3)
            done = {name: run(name) for name in names if name not in early}
            for name, (finish, started_ms) in early.items():
                t = time.perf_counter()
                done[name] = (finish(), started_ms + (time.perf_counter() - t) * 1e3)
            outcomes = [done[name] for name in names]
        else:
            # Each in a copy of this context: the retrievers read this question's tuning.
            context = contextvars.copy_context()
            outcomes = list(self._pool.map(lambda name: context.copy().run(run, name), names))
        return (
            {name: found for name, (found, _) in zip(names, outcomes)},
            {name: ms for name, (_, ms) in zip(names, outcomes)},
        )

    def _searched_chunks(self, request: Query) -> int:
        """How many chunks the modalities search: the filter's, when the question has one."""
        if request.allowed is None:
            return len(self.reader.chunk_file)
        return int(np.count_nonzero(request.allowed))

    def _fuse(
        self,
        plan: route.Plan,
        query: str,
        classification: Classification,
        lists: dict[str, list[Candidate]],
        top_k: int,
        ranking: Ranking,
        allowed: np.ndarray | None = None,
    ) -> list[Hit]:
        """The top results, fused (`fuse_modalities`). The intents that answer with places to read
        (`ONE_RESULT_PER_FILE`) keep one chunk per file (more only when the candidates hold fewer
        files than `top_k`), and their fused candidates are first ranked by the rank stage
        (`ranking`: the hand-set signals, or the learned weights)."""
        reader = self.reader
        names = [name for name, _ in plan.modalities]
        direct = plan.strategy == "direct"
        per_file = classification.intent in ONE_RESULT_PER_FILE
        adjust = per_file and not direct and self.signals is not None
        listed_chunks = {name: rank.chunk_ids(found) for name, found in lists.items()}
        # Candidates to adjust are all kept, files and all; others are cut to one per file here.
        keep = sum(len(found) for found in lists.values()) if adjust else top_k
        fused_lists = fuse_modalities(reader, plan, listed_chunks, one_per_file=per_file and not adjust, keep=keep)
        chunks, scores, ranks, contributions = (
            fused_lists.chunks, fused_lists.scores, fused_lists.ranks, fused_lists.contributions
        )
        chunk_list = chunks.tolist()
        row_of = {chunk: i for i, chunk in enumerate(chunk_list)}

        def parts(chunk: int) -> dict[str, ModalityPart]:
            i = row_of.get(chunk)
            if i is None:  # brought by a post-fusion signal, not by a modality
                return {}
            # The row as Python numbers first: a numpy scalar a cell costs more than the part.
            return {
                name: ModalityPart(rank_at, contribution)
                for name, rank_at, contribution in zip(names, ranks[i].tolist(), contributions[i].tolist())
                if rank_at >= 0
            }

        scored = dict(zip(chunk_list, scores.tolist()))
        ranked: Ranked | None = None
        if adjust:
            assert self.signals is not None  # `adjust` says so
            question = Question(reader, query, classification, fused_lists, names, lists, listed_chunks, scored, top_k)
            ranked = ranking.rank(question, self.signals, self.record)
            scored = ranked.scored
        # Best first, the lower chunk on a tie: one numpy sort, not a Python key per chunk.
        by_chunk = np.fromiter(scored.keys(), dtype=np.int64, count=len(scored))
        by_score = np.fromiter(scored.values(), dtype=np.float64, count=len(scored))
        order = by_chunk[np.lexsort((by_chunk, -by_score))].tolist()
        placed_by: dict[int, int] = {}
        if ranked is not None:
            order, placed_by = present.best_per_file(order, reader.chunk_file, ranked.preference)
        spans = present.answer_spans(classification.intent, lists)
        hits: list[Hit] = []
        for chunk in order:
            if allowed is not None and not allowed[chunk]:
                continue  # brought by a post-fusion signal from outside the filters
            # A file's place, its score and what made it are its best chunk's, whichever chunk it shows.
            placer = placed_by.get(chunk, chunk)
            features = ranked.explain(placer) if ranked is not None and ranked.explain is not None else None
            adjustment = None if features is not None or ranked is None else ranked.adjustments.get(placer)
            for span in spans.get(chunk) or (None,):
                hit = present.hit(self.reader, chunk, scored[placer], parts(chunk), adjustment, span, features, placed_by.get(chunk))
                hits.append(hit)
            if len(hits) >= top_k:
                break
        return hits[:top_k]

    def _allowed(self, asked: filters.Filters) -> np.ndarray | None:
        """The chunks `asked` keeps, kept for the next questions with the same filters."""
        with self._masks_lock:
            if asked in self._masks:
                return self._masks[asked]
        defining = None
        if asked.symbol is not None:
            table = symbol_table(self.reader)
            defining = [chunk for s in defined_as(table, asked.symbol) if (chunk := table.chunk[s]) >= 0]
        allowed = filters.allowed_chunks(self.reader, asked, defining)
        with self._masks_lock:
            if len(self._masks) >= _KEPT_FILTER_MASKS:
                self._masks.pop(next(iter(self._masks)))  # the oldest
            self._masks[asked] = allowed
        return allowed

    def close(self) -> None:
        self._pool.shutdown(wait=False)
