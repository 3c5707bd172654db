"""Runs semble (PyPI package `semble`) over benchmark repositories; invoked by benches/quality.py.

    /path/to/venv-with-semble/bin/python benches/semble_runner.py JOB.json OUT.json

semble lives in its own virtualenv (its pinned dependencies are not maguyva's), so quality.py
writes a job file, runs this script with that virtualenv's interpreter and scores what it writes.
This script imports nothing from maguyva.

JOB.json:

    {"model": "/path/to/model2vec/folder", "top_k": 10,
     "modes": {"hybrid": {"alpha": null, "rerank": true}, ...},
     "repos": [{"name": "gin", "root": "/abs/path/to/indexed/folder", "queries": ["...", ...]}]}

`model` is a folder that `model2vec.StaticModel.from_pretrained` loads without the network
(config.json, model.safetensors with an "embeddings" tensor, tokenizer.json). Each mode is the
keyword arguments of `SembleIndex.search`: `alpha` (None lets semble choose per query; 0.0 is
BM25 only, 1.0 embeddings only) and `rerank` (semble's ranking signals on or off).

OUT.json:

    {"semble_version": "...", "model": "...", "model_load_s": 0.1,
     "repos": [{"name": "gin", "index_s": 0.2, "files": 90, "chunks": 1200,
                "modes": {"hybrid": [{"hits": [[path, start_line, end_line], ...], "ms": 1.2}, ...]}}]}

Hits are semble's chunks as it returns them: paths relative to `root`, 1-based inclusive lines.
Each repository is indexed cold: a fresh, empty semble cache folder (so nothing is loaded from
disk) with the model already in memory (its load time is reported once, as model_load_s). Each
mode answers one query untimed before the timed ones.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

Hit = tuple[str, int, int]


def load_model(model_path: str) -> float:
    """Seconds semble's own model loader takes (it keeps the model in memory per path after that)."""
    from semble.index.dense import load_model as semble_load_model

    started = time.perf_counter()
    semble_load_model(model_path)
    return time.perf_counter() - started


def build_index(root: Path, model_path: str) -> tuple[Any, float]:
    """A fresh semble index of `root` and the seconds it took."""
    from semble import SembleIndex

    started = time.perf_counter()
    index = SembleIndex.from_path(root, model_path=model_path)
    return index, time.perf_counter() - started


def answer(index: Any, query: str, top_k: int, mode: dict[str, Any]) -> tuple[list[Hit], float]:
    """semble's top_k chunks for one query under one mode, and the wall time in ms."""
    started = time.perf_counter()
    results = index.search(query, top_k=top_k, alpha=mode.get("alpha"), rerank=mode.get("rerank"))
    elapsed_ms = (time.perf_counter() - started) * 1000
    hits = [(r.chunk.file_path.replace("\\", "/"), int(r.chunk.start_line), int(r.chunk.end_line)) for r in results]
    return hits, elapsed_ms


def run_repo(repo: dict[str, Any], model_path: str, modes: dict[str, dict[str, Any]], top_k: int) -> dict[str, Any]:
    index, index_s = build_index(Path(repo["root"]), model_path)
    out: dict[str, Any] = {
        "name": repo["name"],
        "index_s": index_s,
        "files": index.stats.indexed_files,
        "chunks": index.stats.total_chunks,
        "modes": {},
    }
    queries: list[str] = repo["queries"]
    for mode_name, mode in modes.items():
        if queries:
            answer(index, queries[0], top_k, mode)  # warm-up, untimed
        rows = []
        for query in queries:
            hits, ms = answer(index, query, top_k, mode)
            rows.append({"hits": hits, "ms": ms})
        out["modes"][mode_name] = rows
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    job = json.loads(Path(argv[0]).read_text())
    # Nothing may come from the network, and nothing is read from or left in the user's cache.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="semble-cache-") as scratch:
        report: dict[str, Any] = {"repos": []}
        for repo in job["repos"]:
            # A new, empty cache folder per repository: the index is built cold, never loaded.
            cache = Path(scratch) / repo["name"]
            cache.mkdir()
            os.environ["SEMBLE_CACHE_LOCATION"] = str(cache)
            if "model_load_s" not in report:
                report["model"], report["model_load_s"] = job["model"], load_model(job["model"])
            report["repos"].append(run_repo(repo, job["model"], job["modes"], int(job.get("top_k", 10))))
            print(f"semble: {repo['name']} indexed in {report['repos'][-1]['index_s']:.2f} s", file=sys.stderr)
    import semble

    report["semble_version"] = semble.__version__
    Path(argv[1]).write_text(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
