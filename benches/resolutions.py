"""How far each kind of graph edge can be trusted: the callers maguyva lists, by how their call
was resolved, checked against the ground truth of the references set.

    python benches/resolutions.py [--repos /work/benchdata/repos] [--bench ../shared/bench]
                                  [--index-root /tmp/maguyva-bench-indexes] [--sets benches/intent_queries]
                                  [--json benches/results/resolutions.json]

For every query of find_references.jsonl (benches/intent_sets.py: Python's callers from jedi,
Go's, Java's and C's from call sites found by a lexer and universal-ctags), the definitions of
its subject are looked up as the `callers` tool looks them up, and every direct caller (depth 1,
no limit) is checked: it is right when its call line lies inside one of the query's targets (the
calling definitions, or the statements making the call), by path suffix as the benchmark
matches. Per language and per resolution (`graph.RESOLUTIONS`): the callers listed, the share of
them that is right (precision), and the share of all targets that some listed caller of that
resolution hits. A subject defined more than once counts the callers of every definition of that
name, so precision is a lower bound where names repeat.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import intents  # noqa: E402  (the sets, and the repositories' indexes as intents.py builds them)
import queries  # noqa: E402


def inside(path: str, line: int, target: dict) -> bool:
    """Whether `line` of the file `path` (from the repository root) lies in `target`."""
    return (path == target["path"] or path.endswith("/" + target["path"]) or target["path"].endswith("/" + path)) and (
        target["start_line"] <= line <= target["end_line"]
    )


def check(item: dict) -> list[dict]:
    """One row per (query, caller): its resolution and whether a target holds it; and one row per
    query with the targets hit by each resolution."""
    from maguyva.serve import navigate

    reader, broot = item["index"].reader, item["broot"]
    rows = []
    for q in item["queries"]:
        definitions = navigate.find_definitions(reader, q["subject"])
        if not definitions:
            rows.append({"repo": q["repo"], "language": q["language"], "query": q["query"], "callers": [],
                         "targets": len(q["targets"]), "hit_by": {}})
            continue
        found, _ = navigate.callers(reader, definitions, depth=1, limit=1_000_000)
        callers = []
        hit_by: dict[str, set[int]] = defaultdict(set)
        for d in found:
            path = f"{broot}/{d.path}" if broot else d.path
            hits = [i for i, t in enumerate(q["targets"]) if inside(path, d.line, t)]
            callers.append({"path": path, "line": d.line, "resolution": d.resolution, "right": bool(hits)})
            hit_by[d.resolution].update(hits)
        rows.append({"repo": q["repo"], "language": q["language"], "query": q["query"], "callers": callers,
                     "targets": len(q["targets"]), "hit_by": {k: sorted(v) for k, v in hit_by.items()}})
    return rows


def table(rows: list[dict]) -> dict[str, dict[str, dict[str, float]]]:
    """language -> resolution -> callers, right, precision, target share."""
    from maguyva.index.graph import RESOLUTIONS

    out: dict[str, dict[str, dict[str, float]]] = {}
    for language in sorted({r["language"] for r in rows} | {"all"}):
        mine = rows if language == "all" else [r for r in rows if r["language"] == language]
        targets = sum(r["targets"] for r in mine)
        entry = {}
        for how in (*RESOLUTIONS, "any"):
            listed = [c for r in mine for c in r["callers"] if how in ("any", c["resolution"])]
            right = sum(c["right"] for c in listed)
            hit = sum(len(set().union(*r["hit_by"].values())) if how == "any" else len(r["hit_by"].get(how, ()))
                      for r in mine)
            entry[how] = {"callers": len(listed), "right": right,
                          "precision": right / len(listed) if listed else float("nan"),
                          "targets_hit": hit / targets if targets else float("nan")}
        out[language] = entry
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    queries.add_dataset_arguments(parser, f"smoke test: the {len(queries.QUICK_REPOS)} repositories of queries.py --quick")
    parser.add_argument("--sets", type=Path, default=HERE / "intent_queries", help="folder of <intent>.jsonl")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "resolutions.json")
    args = parser.parse_args()
    args.index_root.mkdir(parents=True, exist_ok=True)
    os.environ["MAGUYVA_HOME"] = str(args.index_root / "_home")
    sets = intents.load_sets(args.sets, ["find_references"])
    opened = intents.open_repositories(args, parser, sets)
    if not opened:
        print("no repository found under --repos", file=sys.stderr)
        return 1
    rows: list[dict] = []
    for item in opened:
        rows.extend(check(item))
        item["index"].close()
    report = table(rows)
    print("\n| language | resolution | callers listed | right | precision | targets hit |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for language, entry in report.items():
        for how, e in entry.items():
            if e["callers"]:
                print(f"| {language} | {how} | {e['callers']} | {e['right']} | {e['precision']:.3f} | {e['targets_hit']:.3f} |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"table": report, "queries": rows}, indent=1))
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
