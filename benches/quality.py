"""Retrieval quality of maguyva, its ablations and its peers: one run, one benchmark, one table.

    python benches/quality.py --bench ../shared/bench --repos DIR \\
                              [--json benches/results/quality.json] [--semble-python ../venv-semble/bin/python]
                              [--repos-subset NAME ...] [--quick] [--no-ablations] [--no-semble]
                              [--variants NAME ...]   # only these presets and ablations, by name
                              [--sweep NAME=V1,V2 ...]   # a number of maguyva.config at other values (folds.py)
                              [--build NAME=V ...]       # indexes built with a number of maguyva.config at V

    python benches/quality.py fetch --dest DIR [--bench DIR] [--repos-subset NAME ...]
                                    [--annotations [--semble-ref REF]]   # --annotations needs --bench

The benchmark is a folder in the format of shared/bench (see its README.md): repos.json lists
{name, language, url, revision, benchmark_root}, annotations/<name>.json the annotated queries.
The source trees are read from --repos/<name>, each at its pinned revision. `fetch` puts them
there for users with internet: it clones each repository and checks out its revision, and with
--annotations first downloads repos.json and the annotations from the public semble repository
(github.com/MinishLab/semble, benchmarks/, MIT licence) into --bench.

Every method answers every annotated query of every repository with its top 10 results:

- maguyva, each preset (quick, default, thorough), over indexes built cold for this run (a new
  index folder and an empty embedding cache per repository, the shipped offline embedder).
- Ablations, each changing one thing at query time over the same indexes: each modality alone
  (the fused route replaced by that one modality, still with the centrality boost and path
  demotion); no centrality boost (every chunk's centrality 0); RRF k = 60 for default (designed 40)
  and k = 40 for thorough (designed 60); no embedder (the semantic modality finds nothing, as in
  an index without embeddings; the other modalities unchanged).
- ripgrep (query words, and the whole query as one literal) and bm25s over 50-line windows,
  exactly as benches/peers.py runs them.
- semble (PyPI) in its own virtualenv, through benches/semble_runner.py, in four modes of
  `SembleIndex.search`: hybrid (its default: BM25 and embeddings fused, alpha chosen per query,
  its ranking signals on), BM25 + ranking (alpha 0), embeddings + ranking (alpha 1) and raw BM25
  (alpha 0, ranking off). semble's default model (minishlab/potion-code-16M-v2) is downloaded
  from the Hugging Face hub at run time; where that is impossible, --semble-model names a local
  folder model2vec can load, by default maguyva's shipped static model: model2vec reads its
  config.json, model.safetensors and tokenizer.json as they are and embeds a text as maguyva
  does, the mean of its tokens' rows with unknown tokens dropped (float vectors; semble ranks by
  cosine, maguyva by Hamming distance between sign bits).

Scoring is queries.py's metric, exactly the benchmark README's: result paths are prefixed with
benchmark_root; a target (relevant + secondary) is found at the rank of the first result whose
path equals it or ends with "/" + it and, for span targets, whose lines overlap the span; a result
hitting several targets counts once; binary relevance; NDCG@k's ideal is min(k, n) ones where n is
the number of targets covered by at least one chunk of maguyva's index of the repository (the same
ideal for every method). Mean over a repository's queries, then over repositories; per category,
the mean over the repositories having it; per language, the mean over that language's
repositories. Also: the share of queries with no result, index time per repository (cold; none
for ripgrep; for semble, with its model already in memory), query latency p50 and p95 (maguyva:
SearchResponse.elapsed_ms; bm25s and semble: the search call; ripgrep: its processes, warm page
cache; each repository and method first answers one query untimed).

Prints the tables as Markdown and writes aggregates (overall, per category, per language, per
repository, latency, zero results, index times) as JSON to --json.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, ContextManager

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers  # noqa: E402  (ripgrep and bm25s, and their aggregation)
import queries  # noqa: E402  (the metric, coverage and the repository selection)
from queries import CATEGORIES, KS, QUICK_REPOS, Coverage, ndcg  # noqa: E402

TOP_K = 10
DEFAULT_BENCH = HERE.parents[1] / "shared" / "bench"
SEMBLE_RAW_BASE = "https://raw.githubusercontent.com/MinishLab/semble/{ref}/benchmarks/"
SEMBLE_MODES: dict[str, dict[str, Any]] = {
    "hybrid": {"alpha": None, "rerank": True},
    "BM25 + ranking": {"alpha": 0.0, "rerank": True},
    "embeddings + ranking": {"alpha": 1.0, "rerank": True},
    "raw BM25": {"alpha": 0.0, "rerank": False},
}
Result = tuple[str, int, int]


# ---------------------------------------------------------------------------------------------
# The benchmark's repositories and queries


@dataclasses.dataclass
class BenchRepo:
    """One repository of the benchmark, with its annotated queries and their coverage."""

    name: str
    language: str
    benchmark_root: str  # relative to the repository root, "" for the whole repository
    tree: Path  # the indexed folder
    queries: list[dict[str, Any]]
    index: Any = None  # maguyva.Index
    index_s: dict[str, float] = dataclasses.field(default_factory=dict)  # method family -> seconds

    def full_path(self, path: str) -> str:
        """A path relative to the indexed folder, made relative to the repository root."""
        return f"{self.benchmark_root}/{path}" if self.benchmark_root else path


def load_repos(bench: Path, trees: Path, selected: list[dict[str, Any]]) -> list[BenchRepo]:
    repos = []
    for spec in selected:
        broot = (spec.get("benchmark_root") or "").strip("/")
        tree = trees / spec["name"] / broot
        if not tree.is_dir():
            print(f"{spec['name']}: missing {tree}; skipped", file=sys.stderr)
            continue
        annotated = json.loads((bench / "annotations" / f"{spec['name']}.json").read_text())
        for position, q in enumerate(annotated):
            q["_position"] = position  # pairs one query's answers across methods
            q["_targets"] = list(q.get("relevant", [])) + list(q.get("secondary", []))
        repos.append(BenchRepo(spec["name"], spec["language"], broot, tree, annotated))
    return repos


def score(method: str, repo: BenchRepo, query: dict[str, Any], results: list[Result], elapsed_ms: float) -> dict:
    """One scored answer; `results` are relative to the indexed folder."""
    full = [(repo.full_path(p), s, e) for p, s, e in results]
    return {
        "method": method, "repo": repo.name, "position": query["_position"], "language": repo.language,
        "category": query["category"],
        "elapsed_ms": elapsed_ms, "n_results": len(results),
        **{f"ndcg@{k}": ndcg(full, query["_targets"], query["_covered"], k) for k in KS},
    }


# ---------------------------------------------------------------------------------------------
# maguyva: cold builds, presets and ablations


#: A local embedding model folder to index and search with instead of the shipped default
#: (`--local-model`: a candidate of tools/train_embedder.py); None for the default.
LOCAL_MODEL: Path | None = None
#: Numbers of maguyva.config the indexes are built (and searched) with instead of the shipped
#: ones (`--build NAME=V`: EMBED_FILE_CONTEXT, ...); empty for the shipped numbers.
BUILD_NUMBERS: dict[str, float] = {}


@functools.lru_cache(maxsize=None)
def _local_embedder(folder: Path) -> Any:
    from maguyva.embed import make_embedder

    return make_embedder("local", model=folder)


def build_cold(repos: list[BenchRepo], index_root: Path) -> None:
    """A fresh index per repository, with an empty embedding cache; sets coverage of the targets."""
    from maguyva import Index

    from maguyva import config

    # An embedder object given to the build embeds the queries too.
    options: dict[str, Any] = {"embedder": _local_embedder(LOCAL_MODEL)} if LOCAL_MODEL is not None else {}
    if BUILD_NUMBERS:
        options["tuning"] = config.DEFAULT.but(**BUILD_NUMBERS)

    previous_home = os.environ.get("MAGUYVA_HOME")
    for repo in repos:
        index_dir = index_root / repo.name
        shutil.rmtree(index_dir, ignore_errors=True)
        with tempfile.TemporaryDirectory(prefix="maguyva-home-") as home:
            os.environ["MAGUYVA_HOME"] = home  # empty embedding cache: nothing is reused
            started = time.perf_counter()
            repo.index = Index.build(repo.tree, index_dir=index_dir, **options)
            repo.index_s["maguyva"] = time.perf_counter() - started
        coverage = Coverage(repo.index.reader, repo.benchmark_root)
        for q in repo.queries:
            q["_covered"] = coverage.count(q["_targets"])
        print(f"maguyva: {repo.name} indexed cold in {repo.index_s['maguyva']:.2f} s "
              f"({len(repo.index.reader.chunk_file)} chunks)", file=sys.stderr)
    if previous_home is None:
        os.environ.pop("MAGUYVA_HOME", None)
    else:
        os.environ["MAGUYVA_HOME"] = previous_home


@contextmanager
def single_modality(modality: str) -> Iterator[None]:
    """Every query answered by one modality, with no fallback to the others."""
    from maguyva.query import route

    default_k = route.PRESETS["default"].rrf_k or 40
    only = route.Plan("direct", ((modality, 1.0),), default_k)
    original_plan, original_fused = route.plan, route.fused
    route.plan = lambda query, classification, preset: only
    route.fused = lambda classification, preset: only
    try:
        yield
    finally:
        route.plan, route.fused = original_plan, original_fused


@contextmanager
def rrf_k(preset: str, k: int) -> Iterator[None]:
    """The preset's RRF constant set to k."""
    from maguyva.query import route

    original = route.PRESETS
    route.PRESETS = {**original, preset: dataclasses.replace(original[preset], rrf_k=k)}
    try:
        yield
    finally:
        route.PRESETS = original


@contextmanager
def reader_attribute(repos: list[BenchRepo], name: str, replace: Callable[[Any], Any]) -> Iterator[None]:
    """Every index's reader.<name> replaced for the duration."""
    originals = [getattr(repo.index.reader, name) for repo in repos]
    for repo, original in zip(repos, originals):
        setattr(repo.index.reader, name, replace(original))
    try:
        yield
    finally:
        for repo, original in zip(repos, originals):
            setattr(repo.index.reader, name, original)


def no_centrality(repos: list[BenchRepo]) -> ContextManager[None]:
    import numpy as np

    return reader_attribute(repos, "chunk_centrality", np.zeros_like)


def no_embeddings(repos: list[BenchRepo]) -> ContextManager[None]:
    # No codes: the semantic modality returns nothing, exactly as over an index without embeddings.
    return reader_attribute(repos, "codes", lambda codes: codes[:0])


def searcher_of(index: Any) -> Any:
    """The index's searcher (created by a first search if there is none yet)."""
    if index._searcher is None:
        index.search("warm up", top_k=1)
    return index._searcher


@contextmanager
def post_fusion_signals(repos: list[BenchRepo], chosen: Any) -> Iterator[None]:
    """Every index searched with the post-fusion signals `chosen` (None: fusion's order)."""
    searchers = [searcher_of(repo.index) for repo in repos]
    originals = [searcher.signals for searcher in searchers]
    for searcher in searchers:
        searcher.signals = chosen
    try:
        yield
    finally:
        for searcher, original in zip(searchers, originals):
            searcher.signals = original


@contextmanager
def rule_confidence(rule: str, confidence: float) -> Iterator[None]:
    """Classifications by `rule` given `confidence` instead of the designed one."""
    from maguyva.query import search

    original = search.classify

    def patched(query: str) -> Any:
        found = original(query)
        return dataclasses.replace(found, confidence=confidence) if found.rule == rule else found

    search.classify = patched
    try:
        yield
    finally:
        search.classify = original


@contextmanager
def no_task_descriptions() -> Iterator[None]:
    """Queries classified by SPEC's ordered rules alone, without the task-description reading."""
    from maguyva.query import classify, search

    original = search.classify
    search.classify = classify.classify_question
    try:
        yield
    finally:
        search.classify = original


def switched_signals(**switches: bool) -> Any:
    """The post-fusion signals with some switched off. Imported when a variant runs, not with
    this module: latency.py drives checkouts of other versions through it."""
    from maguyva.query.rank.signals import Signals

    return Signals(**switches)


@contextmanager
def tuned_number(repos: list[BenchRepo], name: str, value: float) -> Iterator[None]:
    """Every index searched with the tuned number `name` of `maguyva.config.Tuning` at `value`."""
    searchers = [searcher_of(repo.index) for repo in repos]
    originals = [searcher.tuning for searcher in searchers]
    designed = getattr(originals[0], name) if originals else value
    number = int(value) if isinstance(designed, int) and float(value).is_integer() else value
    for searcher, original in zip(searchers, originals):
        searcher.tuning = original.but(**{name: number})
    try:
        yield
    finally:
        for searcher, original in zip(searchers, originals):
            searcher.tuning = original


def sweep_variants(parser: argparse.ArgumentParser, spec: str) -> list[Variant]:
    """The variants of `--sweep NAME=V1,V2`: the default preset with NAME at each value."""
    from maguyva import config

    name, _, values = spec.partition("=")
    designed = getattr(config.DEFAULT, name, None) if name in config.Tuning.numbers() else None
    if not isinstance(designed, int | float) or isinstance(designed, bool) or not values:
        parser.error(f"--sweep {spec}: not NAME=V1,V2,... with NAME a number of maguyva.config")
    try:
        numbers = [float(v) for v in values.split(",")]
    except ValueError:
        parser.error(f"--sweep {spec}: the values must be numbers")
    return [Variant(f"default, {name}={v:g}", "default", f"default preset with {name} = {v:g} (designed {designed:g})",
                    lambda r, v=v: tuned_number(r, name, v), base="maguyva default")
            for v in numbers if v != designed]


@dataclasses.dataclass(frozen=True)
class Variant:
    """One way of running maguyva: a preset, and optionally one change made for its duration."""

    name: str
    preset: str
    description: str
    change: Callable[[list[BenchRepo]], ContextManager[None]] | None = None
    base: str | None = None  # for an ablation, the preset's variant it is compared with
    ranking: str = "learned"  # how the ranking signals are weighed (Index.search's `ranking`)


PRESET_VARIANTS = [
    Variant("maguyva quick", "quick", "preset quick (semantic modality only)"),
    Variant("maguyva default", "default", "preset default (semantic, text, structural; RRF k 40)"),
    Variant("maguyva thorough", "thorough", "preset thorough (all four modalities; RRF k 60)"),
]
ABLATION_VARIANTS = [
    *[Variant(f"{m} alone", "default", f"the {m} modality alone for every query", lambda _r, m=m: single_modality(m),
              base="maguyva default") for m in ("semantic", "text", "structural", "graph")],
    Variant("default, no centrality boost", "default", "default preset, every chunk's centrality 0",
            no_centrality, base="maguyva default"),
    Variant("thorough, no centrality boost", "thorough", "thorough preset, every chunk's centrality 0",
            no_centrality, base="maguyva thorough"),
    Variant("default, RRF k 60", "default", "default preset with RRF k = 60 (designed 40)",
            lambda _r: rrf_k("default", 60), base="maguyva default"),
    Variant("thorough, RRF k 40", "thorough", "thorough preset with RRF k = 40 (designed 60)",
            lambda _r: rrf_k("thorough", 40), base="maguyva thorough"),
    Variant("default, hand-set ranking", "default",
            "default preset, the ranking signals weighed by their hand-set numbers, not the learned model",
            base="maguyva default", ranking="hand"),
    Variant("default, no post-fusion signals", "default",
            "default preset, fused candidates in RRF order (no path, definition or secondary-code signal)",
            lambda r: post_fusion_signals(r, None), base="maguyva default"),
    Variant("default, no path agreement", "default", "default preset without the file-name agreement bonus",
            lambda r: post_fusion_signals(r, switched_signals(paths=False)), base="maguyva default"),
    Variant("default, no definition bonus", "default", "default preset without the definition-over-mention bonus",
            lambda r: post_fusion_signals(r, switched_signals(definitions=False)), base="maguyva default"),
    Variant("default, no secondary-code demotion", "default",
            "default preset without demoting tests, examples, compatibility code and non-code files",
            lambda r: post_fusion_signals(r, switched_signals(secondary=False)), base="maguyva default"),
    Variant("default, no file coherence", "default",
            "default preset without the file coherence bonus of explanation questions",
            lambda r: post_fusion_signals(r, switched_signals(coherence=False)), base="maguyva default"),
    Variant("default, no file agreement", "default",
            "default preset without counting a modality that found a result's file through another chunk",
            lambda r: post_fusion_signals(r, switched_signals(agreement=False)), base="maguyva default"),
    Variant("default, identifier rule 0.90", "default",
            "default preset with SPEC's identifier rule at 0.90 instead of 0.80 (bare names go direct)",
            lambda _r: rule_confidence("identifier", 0.90), base="maguyva default"),
    Variant("default, no task-description rule", "default",
            "default preset, task descriptions classified by SPEC's rules alone (a quoted or named span decides)",
            lambda _r: no_task_descriptions(), base="maguyva default"),
    Variant("default, no embedder", "default", "default preset, semantic modality off (no embeddings)",
            no_embeddings, base="maguyva default"),
    Variant("thorough, no embedder", "thorough", "thorough preset, semantic modality off (no embeddings)",
            no_embeddings, base="maguyva thorough"),
]


def run_variant(variant: Variant, repos: list[BenchRepo]) -> list[dict]:
    rows = []
    with variant.change(repos) if variant.change else nullcontext():
        for repo in repos:
            repo.index.search(repo.queries[0]["query"], top_k=TOP_K, preset=variant.preset)  # warm-up
            for q in repo.queries:
                response = repo.index.search(q["query"], top_k=TOP_K, preset=variant.preset, ranking=variant.ranking)
                results = [(h.path, h.start_line, h.end_line) for h in response.results]
                rows.append(score(variant.name, repo, q, results, response.elapsed_ms))
    return rows


# ---------------------------------------------------------------------------------------------
# Peers in this process: ripgrep and bm25s (benches/peers.py)

RG_WORDS = "ripgrep, query words"
RG_LITERAL = "ripgrep, whole query"
BM25S = "bm25s, 50-line windows"


def run_local_peers(repos: list[BenchRepo], rg: str) -> list[dict]:
    from maguyva.lexicon import STOPWORDS

    rows = []
    for repo in repos:
        lines = peers.LineCounts(repo.tree)
        bm = peers.Bm25Windows(repo.tree)
        repo.index_s["bm25s"] = bm.index_s
        first = repo.queries[0]["query"]
        peers.rg_search(rg, repo.tree, [first], lines)  # warm the page cache, untimed
        bm.search(first)
        for q in repo.queries:
            answers = {
                RG_WORDS: peers.rg_search(rg, repo.tree, peers.rg_words(q["query"], STOPWORDS), lines),
                RG_LITERAL: peers.rg_search(rg, repo.tree, [q["query"]], lines),
                BM25S: bm.search(q["query"]),
            }
            rows.extend(score(method, repo, q, results, ms) for method, (results, ms) in answers.items())
    return rows


# ---------------------------------------------------------------------------------------------
# semble, in its own virtualenv


def semble_method(mode: str) -> str:
    return f"semble, {mode}"


def run_semble(repos: list[BenchRepo], python: Path, model: Path) -> tuple[list[dict], dict[str, Any]]:
    """semble's answers, scored; and what ran (version, model, load time, per-repository sizes)."""
    job = {
        "model": str(model), "top_k": TOP_K, "modes": SEMBLE_MODES,
        "repos": [{"name": r.name, "root": str(r.tree.resolve()), "queries": [q["query"] for q in r.queries]}
                  for r in repos],
    }
    with tempfile.TemporaryDirectory(prefix="semble-job-") as scratch:
        job_path, out_path = Path(scratch) / "job.json", Path(scratch) / "out.json"
        job_path.write_text(json.dumps(job))
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        subprocess.run([str(python), str(HERE / "semble_runner.py"), str(job_path), str(out_path)],
                       check=True, env=env)
        report = json.loads(out_path.read_text())
    rows = []
    by_name = {r.name: r for r in repos}
    for answered in report["repos"]:
        repo = by_name[answered["name"]]
        repo.index_s["semble"] = answered["index_s"]
        for mode, answers in answered["modes"].items():
            for q, answer in zip(repo.queries, answers):
                hits = [(p, int(s), int(e)) for p, s, e in answer["hits"]]
                rows.append(score(semble_method(mode), repo, q, hits, answer["ms"]))
    info = {"version": report.get("semble_version"), "model": report.get("model"),
            "model_load_s": report.get("model_load_s"),
            "repos": {r["name"]: {"files": r["files"], "chunks": r["chunks"]} for r in report["repos"]}}
    return rows, info


def default_semble_model() -> Path:
    from maguyva.embed.local import DEFAULT_MODEL, MODELS_DIR

    return MODELS_DIR / DEFAULT_MODEL


# ---------------------------------------------------------------------------------------------
# Aggregation and tables


@dataclasses.dataclass(frozen=True)
class MethodInfo:
    name: str
    group: str  # "maguyva", "ablation" or "peer"
    description: str
    index_family: str | None  # key of BenchRepo.index_s whose times are this method's index times
    base: str | None = None  # the method it is compared with, query by query


def summarize(rows: list[dict], method: MethodInfo, repos: list[BenchRepo]) -> dict[str, Any]:
    section = peers.aggregate([r for r in rows if r["method"] == method.name])
    section["per_repo"] = {name: {f"ndcg@{k}": e[f"ndcg@{k}"] for k in KS} for name, e in section["per_repo"].items()}
    section["group"], section["description"] = method.group, method.description
    if method.base:
        section["vs_base"] = paired_delta(rows, method.name, method.base)
    times = [r.index_s[method.index_family] for r in repos if method.index_family in r.index_s]
    section["index_s"] = ({"p50": statistics.median(times), "max": max(times), "total": sum(times)}
                          if times else None)
    return section


def paired_delta(rows: list[dict], method: str, base: str, k: int = 10) -> dict[str, Any]:
    """NDCG@k of method minus that of base with a 95% interval, from per-query differences.

    The metric is a mean over repositories of per-repository means, so the difference is too,
    and its variance is the sum over repositories of (variance of the query differences / queries)
    divided by the number of repositories squared (normal approximation).
    """
    of_base = {(r["repo"], r["position"]): r[f"ndcg@{k}"] for r in rows if r["method"] == base}
    by_repo: dict[str, list[float]] = {}
    for r in rows:
        if r["method"] == method:
            by_repo.setdefault(r["repo"], []).append(r[f"ndcg@{k}"] - of_base[(r["repo"], r["position"])])
    n_repos = len(by_repo)
    delta = sum(statistics.fmean(d) for d in by_repo.values()) / n_repos
    variance = sum(statistics.variance(d) / len(d) for d in by_repo.values() if len(d) > 1) / n_repos**2
    return {"base": base, f"delta_ndcg@{k}": delta, "ci95": 1.96 * variance**0.5}


def fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def fmt_ms(value: float) -> str:
    return f"{value:.3f} ms" if value < 1 else f"{value:.2f} ms" if value < 10 else f"{value:.1f} ms"


def main_table(methods: list[MethodInfo], report: dict[str, Any]) -> list[str]:
    header = ["method", "NDCG@10", "NDCG@5", "Δ@10 vs preset (95% CI)", *CATEGORIES, "zero results", "index p50 (cold)", "query p50",
              "query p95"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for m in methods:
        s = report["methods"][m.name]
        if m.group == "ablation":
            index = "same index"
        elif s["index_s"] is None:
            index = "—"
        else:
            index = f"{s['index_s']['p50'] * 1000:.0f} ms"
        vs = s.get("vs_base")
        delta = f"{round(vs['delta_ndcg@10'], 3) + 0.0:+.3f} ± {vs['ci95']:.3f}" if vs else ""  # no "-0.000"
        cells = [m.name, fmt(s["overall"]["ndcg@10"]), fmt(s["overall"]["ndcg@5"]), delta,
                 *[fmt(s["per_category"][c]["ndcg@10"]) for c in CATEGORIES],
                 f"{s['zero_result_rate'] * 100:.1f}%", index,
                 fmt_ms(s["latency"]["p50_ms"]), fmt_ms(s["latency"]["p95_ms"])]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def language_table(methods: list[MethodInfo], report: dict[str, Any], repos: list[BenchRepo]) -> list[str]:
    languages = sorted({r.language for r in repos})
    count = {lang: sum(r.language == lang for r in repos) for lang in languages}
    lines = ["| language (repositories) | " + " | ".join(m.name for m in methods) + " |",
             "|" + " --- |" * (len(methods) + 1)]
    for lang in languages:
        cells = [fmt(report["methods"][m.name]["per_language"].get(lang, {}).get("ndcg@10")) for m in methods]
        lines.append(f"| {lang} ({count[lang]}) | " + " | ".join(cells) + " |")
    return lines


def index_table(repos: list[BenchRepo], families: list[str]) -> list[str]:
    lines = ["| repository | language | queries | " + " | ".join(f"{f} index s" for f in families) + " |",
             "|" + " --- |" * (len(families) + 3)]
    for r in repos:
        cells = [fmt(r.index_s.get(f), 2) for f in families]
        lines.append(f"| {r.name} | {r.language} | {len(r.queries)} | " + " | ".join(cells) + " |")
    return lines


def rounded(value: Any, digits: int = 4) -> Any:
    """value with every float rounded, for a small, readable JSON file."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v, digits) for v in value]
    return value


def checkout_state() -> str:
    """The commit of this checkout, marked when the work tree has changes."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=HERE, capture_output=True, text=True).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD")
    return f"{commit} (with uncommitted changes)" if commit and git("status", "--porcelain") else commit


# ---------------------------------------------------------------------------------------------
# The run


def find_rg() -> str | None:
    """The rg of this Python's environment (the `ripgrep` wheel of the bench extra), else the one on PATH."""
    beside = Path(sys.executable).parent / "rg"
    return str(beside) if beside.is_file() else shutil.which("rg")


def run_methods(repos: list[BenchRepo], rg: str, ablations: bool, semble_python: Path | None,
                semble_model: Path | None, only: list[str] | None = None, sweeps: list[Variant] | None = None,
                ) -> tuple[list[dict], list[MethodInfo], dict[str, Any] | None]:
    """Every method's scored answers, the methods in table order, and what semble ran as.
    `only` names the maguyva variants to run (default: the presets, and the ablations);
    `sweeps` are run besides them."""
    variants = PRESET_VARIANTS + (ABLATION_VARIANTS if ablations or only else [])
    if only:
        variants = [v for v in variants if v.name in only]
    variants += sweeps or []
    methods = [MethodInfo(v.name, "ablation" if v.base else "maguyva", v.description, "maguyva", v.base)
               for v in variants]
    rows: list[dict] = []
    for variant in variants:
        print(f"maguyva: {variant.name}", file=sys.stderr)
        rows += run_variant(variant, repos)

    print("ripgrep and bm25s", file=sys.stderr)
    rows += run_local_peers(repos, rg)
    methods += [
        MethodInfo(RG_WORDS, "peer", "rg -F -i -c per query word (stopwords dropped), files ranked by total count, "
                   "whole files as results", None),
        MethodInfo(RG_LITERAL, "peer", "rg -F -i -c with the whole query as one literal, whole files", None),
        MethodInfo(BM25S, "peer", "bm25s over 50-line windows of every text file", "bm25s"),
    ]
    if semble_python is None:
        return rows, methods, None
    model = semble_model or default_semble_model()
    print(f"semble ({semble_python}, model {model})", file=sys.stderr)
    semble_rows, semble_info = run_semble(repos, semble_python, model)
    methods += [MethodInfo(semble_method(mode), "peer",
                           f"semble SembleIndex.search(alpha={opts['alpha']}, rerank={opts['rerank']}), "
                           f"model {model.name}", "semble") for mode, opts in SEMBLE_MODES.items()]
    return rows + semble_rows, methods, semble_info


def build_report(repos: list[BenchRepo], rows: list[dict], methods: list[MethodInfo],
                 environment: dict[str, Any]) -> dict[str, Any]:
    return {
        "date": datetime.date.today().isoformat(),
        "command": "python benches/quality.py " + " ".join(sys.argv[1:]),
        "environment": environment,
        "benchmark": {"repositories": len(repos), "queries": sum(len(r.queries) for r in repos), "top_k": TOP_K},
        "repositories": [
            {"name": r.name, "language": r.language, "queries": len(r.queries),
             "uncovered_targets": sum(len(q["_targets"]) - q["_covered"] for q in r.queries),
             "maguyva_chunks": int(len(r.index.reader.chunk_file)),
             "index_s": {k: round(v, 4) for k, v in r.index_s.items()}} for r in repos],
        "methods": {m.name: summarize(rows, m, repos) for m in methods},
    }


def print_report(report: dict[str, Any], methods: list[MethodInfo], repos: list[BenchRepo]) -> None:
    env = report["environment"]
    semble = env["semble"]
    print(f"\n{len(repos)} repositories, {report['benchmark']['queries']} queries, top {TOP_K}; {env['ripgrep']}, "
          f"bm25s {env['bm25s']}" + (f", semble {semble['version']} with {semble['model']}" if semble else "") + "\n")
    print("\n".join(main_table(methods, report)) + "\n")
    shown = [m for m in methods if m.group == "maguyva"] + [
        m for m in methods if m.name in (semble_method("hybrid"), semble_method("BM25 + ranking"), BM25S, RG_WORDS)]
    print("NDCG@10 per language (mean over that language's repositories)\n")
    print("\n".join(language_table(shown, report, repos)) + "\n")
    print("Index time per repository, cold\n")
    families = ["maguyva", "bm25s"] + (["semble"] if semble else [])
    print("\n".join(index_table(repos, families)) + "\n")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    queries._self_check()
    global LOCAL_MODEL, BUILD_NUMBERS
    LOCAL_MODEL = args.local_model
    BUILD_NUMBERS = dict(queries.build_number(parser, spec) for spec in args.build or [])
    rg = find_rg()
    if rg is None:
        parser.error("rg not found on PATH (pip install ripgrep)")
    semble_python: Path | None = None if args.no_semble else args.semble_python
    if semble_python is not None and not semble_python.exists():
        parser.error(f"{semble_python} not found: create it (python3 -m venv DIR && DIR/bin/pip install "
                     f"semble==0.7.0) and pass --semble-python DIR/bin/python, or pass --no-semble")
    repos = load_repos(args.bench, args.repos, queries.selected_repos(parser, args))
    if not repos:
        print("no repository found under --repos", file=sys.stderr)
        return 1

    args.index_root.mkdir(parents=True, exist_ok=True)
    build_cold(repos, args.index_root)
    sweeps = [v for spec in args.sweep or [] for v in sweep_variants(parser, spec)]
    rows, methods, semble_info = run_methods(repos, rg, not args.no_ablations, semble_python, args.semble_model,
                                             args.variants, sweeps)

    import bm25s

    import maguyva

    environment = {"python": platform.python_version(), "cpus": os.cpu_count(),
                   "maguyva": f"{maguyva.__version__}, checkout {checkout_state()}",
                   "ripgrep": subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.split("\n")[0],
                   "bm25s": bm25s.__version__, "semble": semble_info}
    report = build_report(repos, rows, methods, environment)
    for r in repos:
        r.index.close()
    print_report(report, methods, repos)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rounded(report), indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


# ---------------------------------------------------------------------------------------------
# fetch: the pinned repositories and the annotations, for users with internet


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def head_revision(tree: Path) -> str | None:
    """The commit checked out in tree, or None when it is not a git work tree of its own."""
    if not (tree / ".git").exists():
        return None
    try:
        return git("rev-parse", "HEAD", cwd=tree)
    except subprocess.CalledProcessError:
        return None


def checkout_pinned(url: str, revision: str, dest: Path) -> str:
    """Clone url into dest at revision (detached). Returns what was done."""
    if head_revision(dest) == revision:
        return "already at revision"
    if dest.exists() and any(dest.iterdir()):
        return "left as is: the folder exists and is not a checkout of the revision"
    dest.mkdir(parents=True, exist_ok=True)
    try:
        clone_at(url, revision, dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)  # so that a later run starts afresh
        raise
    return "cloned"


def clone_at(url: str, revision: str, dest: Path) -> None:
    """Fill the empty folder dest with url's tree at revision."""
    git("init", "--quiet", cwd=dest)
    git("remote", "add", "origin", url, cwd=dest)
    try:
        # Only the pinned commit, no history: most hosts (GitHub among them) serve a commit by id.
        git("fetch", "--quiet", "--depth", "1", "--no-tags", "origin", revision, cwd=dest)
        git("checkout", "--quiet", "--detach", "FETCH_HEAD", cwd=dest)
    except subprocess.CalledProcessError:
        # A server that refuses to serve a commit by id: fetch every branch, then check it out.
        git("fetch", "--quiet", "--no-tags", "origin", "+refs/heads/*:refs/remotes/origin/*", cwd=dest)
        git("checkout", "--quiet", "--detach", revision, cwd=dest)
    if head_revision(dest) != revision:
        raise RuntimeError(f"{dest}: checked out {head_revision(dest)}, not {revision}")


def download_annotations(base_url: str, bench: Path, names: list[str] | None = None) -> list[str]:
    """repos.json and annotations/<name>.json from base_url into bench; returns the names fetched.

    base_url is the benchmarks/ folder of semble's repository as raw files (SEMBLE_RAW_BASE);
    names restricts the annotation files to those repositories.
    """
    def read(relative: str) -> bytes:
        with urllib.request.urlopen(base_url + relative, timeout=60) as response:
            return response.read()

    listing = read("repos.json")
    repos = json.loads(listing)
    wanted = [r["name"] for r in repos if names is None or r["name"] in names]
    (bench / "annotations").mkdir(parents=True, exist_ok=True)
    for name in wanted:
        (bench / "annotations" / f"{name}.json").write_bytes(read(f"annotations/{name}.json"))
    (bench / "repos.json").write_bytes(listing)
    return wanted


def fetch(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.bench is None:
        if args.annotations:
            parser.error("--annotations needs --bench: the folder the downloaded benchmark goes in")
        args.bench = DEFAULT_BENCH
    if args.annotations:
        base = args.annotations_url or SEMBLE_RAW_BASE.format(ref=args.semble_ref)
        fetched = download_annotations(base, args.bench, args.repos_subset)
        print(f"annotations of {len(fetched)} repositories from {base} into {args.bench}")
    repos = json.loads((args.bench / "repos.json").read_text())
    if args.repos_subset:
        repos = [r for r in repos if r["name"] in set(args.repos_subset)]
    failed = 0
    for repo in repos:
        dest = args.dest / repo["name"]
        try:
            outcome = checkout_pinned(repo["url"], repo["revision"], dest)
        except (subprocess.CalledProcessError, RuntimeError) as err:
            detail = err.stderr.strip() if isinstance(err, subprocess.CalledProcessError) else str(err)
            outcome, failed = f"FAILED: {detail}", failed + 1
        print(f"{repo['name']:<20} {repo['revision'][:12]}  {outcome}")
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------------
# Command line


def run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    queries.add_dataset_arguments(parser, f"smoke test: {len(QUICK_REPOS)} repositories ({', '.join(QUICK_REPOS)})")
    # Indexes are rebuilt from scratch: not in the folder queries.py and peers.py reuse.
    parser.set_defaults(index_root=Path(tempfile.gettempdir()) / "maguyva-quality-indexes")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "quality.json",
                        help="where the aggregates go (default benches/results/quality.json)")
    parser.add_argument("--semble-python", type=Path, default=HERE.parents[1] / "venv-semble" / "bin" / "python",
                        help="python of a virtualenv with semble installed (default ../venv-semble/bin/python)")
    parser.add_argument("--semble-model", type=Path,
                        help="model2vec model folder for semble (default: maguyva's shipped static model)")
    parser.add_argument("--no-semble", action="store_true", help="skip semble")
    parser.add_argument("--no-ablations", action="store_true", help="maguyva's presets only")
    parser.add_argument("--sweep", action="append", metavar="NAME=V1,V2,...",
                        help="also run the default preset with a constant of maguyva.query.rank.signals set to each "
                             "value (repeatable); benches/folds.py then chooses among them out of fold")
    parser.add_argument("--build", action="append", metavar="NAME=V",
                        help="build (and search) every index with this number of maguyva.config at V, such as "
                             "EMBED_FILE_CONTEXT=0 (repeatable)")
    parser.add_argument("--local-model", type=Path, metavar="DIR",
                        help="index and search with this local embedding model folder instead of the shipped one")
    parser.add_argument("--variants", nargs="+", metavar="NAME",
                        help="only these maguyva presets and ablations, by name (\"maguyva default\" ...)")
    return parser


def fetch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quality.py fetch",
        description="Clone the benchmark's repositories at their pinned revisions into DEST/<name> (needs "
                    "git and internet); with --annotations, first download repos.json and the annotations "
                    "from semble's public repository into --bench.")
    parser.add_argument("--dest", type=Path, required=True, help="folder to clone into, one folder per repository")
    parser.add_argument("--bench", type=Path,
                        help="benchmark folder holding repos.json (default ../shared/bench); with "
                             "--annotations, required: the folder the download goes in")
    parser.add_argument("--repos-subset", nargs="+", metavar="NAME", help="only these repositories")
    parser.add_argument("--annotations", action="store_true",
                        help="download repos.json and annotations/*.json from github.com/MinishLab/semble")
    parser.add_argument("--semble-ref", default="main", help="branch, tag or commit of semble's repository")
    parser.add_argument("--annotations-url", help="base URL of the benchmarks/ folder (overrides --semble-ref)")
    return parser


def main(argv: list[str]) -> int:
    if argv[:1] == ["fetch"]:
        parser = fetch_parser()
        return fetch(parser.parse_args(argv[1:]), parser)
    parser = run_parser()
    return run(parser.parse_args(argv), parser)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
