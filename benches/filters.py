"""How much faster a filtered question is than the same question unfiltered.

    python benches/filters.py ROOT [--index-dir DIR] [--queries BENCH] [--questions 60] [--spread] [--modalities]

The filter is `path:FOLDER/` for the top-level folder of ROOT whose share of the files is
nearest 10%, and `lang:L` for the language nearest 10%. Once the index is warmed (`Index.warm`,
as a server does), each question (the first of the benchmark's annotations, or with `--spread`
as many taken in turn from every repository's, or a few built in) is asked unfiltered, in turn,
then filtered: p50 of the first askings, and of three more rounds asking them again (over a
large index a term's count is kept from its first asking within the same filter, or none:
`text.KeptCounts`), with the default preset, and the ratios. Every filtered result is checked
to lie inside the filter.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from itertools import zip_longest
from pathlib import Path

from maguyva import Index
from maguyva.query.filters import parse, path_matches


def questions(bench: Path | None, limit: int, spread: bool = False) -> list[str]:
    """The first `limit` questions of the benchmark's annotation files in name order, or with
    `spread` the same number taken in turn from every file (the first of each, then the
    second...), so that no one repository's questions make up the set."""
    if bench is None:
        return ["how are errors reported", "where is the configuration parsed", "retry with backoff"]
    per_file = [[q["query"] for q in json.loads(path.read_text())] for path in sorted((bench / "annotations").glob("*.json"))]
    if not spread:
        return [question for asked in per_file for question in asked][:limit]
    turns = zip_longest(*per_file)
    return [question for turn in turns for question in turn if question is not None][:limit]


def p50(index: Index, asked: list[str], prefix: str) -> tuple[float, float]:
    """p50 of each question's first asking, in turn, and of three more rounds asking them again."""
    times: list[list[float]] = [[], []]
    for round_ in range(4):
        for question in asked:
            started = time.perf_counter()
            index.search(prefix + question)
            times[min(round_, 1)].append((time.perf_counter() - started) * 1e3)
    return statistics.median(times[0]), statistics.median(times[1])


def modality_p50s(index: Index, asked: list[str]) -> dict[str, float]:
    """Each modality's p50 alone over the unfiltered questions (each asked once untimed, then
    three times timed), with the default preset's candidate count: where a question's time goes."""
    from maguyva import config
    from maguyva.query import route
    from maguyva.query.classify import classify

    searcher = index.searcher
    requests = [route.request(question, classify(question)) for question in asked]
    tuning = config.current()
    limit = max(10 * tuning.CANDIDATES_PER_RESULT, tuning.MIN_CANDIDATES)
    found = {}
    for name, retriever in searcher.retrievers.items():
        for request in requests:
            retriever.retrieve(searcher.reader, request, limit)
        times = []
        for _ in range(3):
            for request in requests:
                started = time.perf_counter()
                retriever.retrieve(searcher.reader, request, limit)
                times.append((time.perf_counter() - started) * 1e3)
        found[name] = statistics.median(times)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--index-dir", type=Path)
    parser.add_argument("--queries", type=Path)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--spread", action="store_true", help="questions taken in turn from every repository's annotations")
    parser.add_argument("--modalities", action="store_true", help="also each modality's p50 alone, unfiltered")
    args = parser.parse_args()
    index = Index.build(args.root, index_dir=args.index_dir)
    files = index.reader.files
    asked = questions(args.queries, args.questions, args.spread)
    folders = Counter(f.path.split("/", 1)[0] for f in files if "/" in f.path)
    languages = Counter(f.language or "text" for f in files)
    folder = min(folders, key=lambda name: abs(folders[name] / len(files) - 0.10))
    language = min(languages, key=lambda name: abs(languages[name] / len(files) - 0.10))
    index.warm()
    whole, whole_again = p50(index, asked, "")
    print(f"{len(files)} files, {len(asked)} questions; unfiltered p50 {whole:.2f} ms (asked again {whole_again:.2f} ms)")
    if args.modalities:
        print("each modality alone, p50: " + ", ".join(f"{name} {ms:.2f} ms" for name, ms in modality_p50s(index, asked).items()))
    for written, share in ((f"path:{folder}/", folders[folder]), (f"lang:{language}", languages[language])):
        filters, _ = parse(written + " x")
        filtered, filtered_again = p50(index, asked, written + " ")
        for question in asked:
            for hit in index.search(f"{written} {question}").results:
                file = next(f for f in files if f.path == hit.path)
                if filters.paths and not any(path_matches(hit.path, p) for p in filters.paths):
                    raise SystemExit(f"{hit.path} is outside {written}")
                if filters.languages and (file.language or "text") not in filters.languages:
                    raise SystemExit(f"{hit.path} is outside {written}")
        print(f"{written:<24} {share / len(files):6.1%} of the files: p50 {filtered:.2f} ms, {whole / filtered:.2f}x faster "
              f"(asked again {filtered_again:.2f} ms, {whole_again / filtered_again:.2f}x); every result inside the filter")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
