"""Each ranking rule's gain in fold and out of fold, folds by repository, from quality.py's runs.

    python benches/folds.py RUN.json [RUN.json ...] [--folds 5] [--seed 0] [--json out.json]
    python benches/folds.py --model SHIPPED=DEV.json,MINED.json --model OTHER=DEV.json,MINED.json ... [--method M]

Every ablation of a `quality.py` report (a variant with a `vs_base`: the preset with one rule
switched off) says what that rule is worth: per repository, the base's NDCG@10 minus the
ablation's. Given several reports (the dev split, the mined sets of `mine.py`), the repositories
of all of them are dealt into folds, a repository's entries together (`NAME`, `NAME.docstring`
and `NAME.header` of a mined set are one repository), so no fold is judged on code it has seen.

For each rule and each fold, the rule is kept when its mean gain over the other folds' entries is
positive, and the fold then scores its own entries' gain (0 when the rule was dropped). In fold is
the plain mean gain over every entry; out of fold the mean of what the held-out folds scored.
A rule worth keeping has a positive out-of-fold gain and is kept in every fold.

The variants of `quality.py --sweep NAME=V1,V2` (a tuned number of maguyva.config at other
values) are read as choices: per fold, the value with the best mean improvement over the designed
one on the other folds (or the designed value, when none improves on it) scores its fold; the
table gives each value's in-fold improvement, the best, and the out-of-fold improvement of
choosing. A constant whose out-of-fold improvement is not positive keeps its designed value.

Which model to ship (`--model NAME=DEV.json,MINED.json`, once per model, the one shipped first;
`--method`, the presets compared): per entry, each model's NDCG@10 minus the shipped one's; per
fold, the model with the best mean improvement on the other folds (or the shipped one, when none
improves) scores its fold. The models' reports are quality.py's runs with `--local-model`.

Both are given
for all the reports together and for each set (a report, its mined variants apart: `mined`,
`mined.docstring`, `mined.header` for a report `mined.json`); an entry's gain is weighted by its
queries.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

#: Suffixes of mined tree variants: the same repository as the entry without them.
VARIANT_SUFFIXES = (".docstring", ".header")


@dataclass(frozen=True)
class Entry:
    """One benchmark entry's gain from one rule."""

    source: str  # the set: the report's file name, with a mined variant's suffix
    name: str  # the entry as the report names it
    repository: str  # what folds keep together
    queries: int
    gain: float


def split_entry(report: str, name: str) -> tuple[str, str]:
    """(the set an entry belongs to, its repository): `NAME.docstring` of report `mined` is set
    `mined.docstring`, repository `mined:NAME`."""
    for suffix in VARIANT_SUFFIXES:
        if name.endswith(suffix):
            return report + suffix, f"{report}:{name[: -len(suffix)]}"
    return report, f"{report}:{name}"


def read_gains(paths: list[Path]) -> dict[str, list[Entry]]:
    """Per rule (the ablation's name): every entry's gain, over every report."""
    gains: dict[str, list[Entry]] = defaultdict(list)
    for path in paths:
        try:
            report = json.loads(path.read_text())
            methods = report["methods"]
            queries = {r["name"]: r["queries"] for r in report["repositories"]}
        except (OSError, ValueError, KeyError) as err:
            raise SystemExit(f"folds: {path} is not a quality.py report ({type(err).__name__}: {err})") from None
        for name, method in methods.items():
            base = (method.get("vs_base") or {}).get("base")
            if base is None or base not in methods:
                continue
            base_scores = methods[base]["per_repo"]
            for entry, score in method["per_repo"].items():
                gain = base_scores[entry]["ndcg@10"] - score["ndcg@10"]
                source, repository = split_entry(path.stem, entry)
                gains[name].append(Entry(source, entry, repository, queries.get(entry, 1), gain))
    return gains


def weighted_mean(entries: list[Entry]) -> float:
    total = sum(e.queries for e in entries)
    return sum(e.gain * e.queries for e in entries) / total if total else 0.0


def deal_folds(entries: list[Entry], folds: int, seed: int) -> dict[str, int]:
    """Each repository's fold: the repositories shuffled by `seed`, then dealt in turn."""
    repositories = sorted({e.repository for e in entries})
    random.Random(seed).shuffle(repositories)
    return {repo: i % folds for i, repo in enumerate(repositories)}


def out_of_fold(entries: list[Entry], folds: int, seed: int) -> tuple[float, int]:
    """The out-of-fold gain of a rule over `entries`, and in how many folds it was kept."""
    fold_of = deal_folds(entries, folds, seed)
    scored: list[Entry] = []
    kept = 0
    for fold in range(folds):
        train = [e for e in entries if fold_of[e.repository] != fold]
        test = [e for e in entries if fold_of[e.repository] == fold]
        keep = weighted_mean(train) > 0
        kept += keep
        scored += [e if keep else Entry(e.source, e.name, e.repository, e.queries, 0.0) for e in test]
    return weighted_mean(scored), kept


#: A `quality.py --sweep` variant's name: the constant and the value it was set to.
_SWEPT = re.compile(r"^default, (?P<name>[A-Z_]+)=(?P<value>[-0-9.e]+)$")


def sweeps(gains: dict[str, list[Entry]]) -> dict[str, dict[str, list[Entry]]]:
    """constant -> value -> entries whose gain is the value's improvement over the designed one."""
    found: dict[str, dict[str, list[Entry]]] = defaultdict(dict)
    for rule, entries in gains.items():
        m = _SWEPT.match(rule)
        if m:
            # gain = base - ablation; the value improves on the designed one by minus that.
            found[m["name"]][m["value"]] = [Entry(e.source, e.name, e.repository, e.queries, -e.gain) for e in entries]
    return found


def choose_out_of_fold(values: dict[str, list[Entry]], folds: int, seed: int) -> tuple[float, list[str]]:
    """The out-of-fold improvement of choosing a constant's value on the training folds (the
    designed value, improvement 0, among them), and the value each fold chose."""
    any_entries = next(iter(values.values()))
    fold_of = deal_folds(any_entries, folds, seed)
    total = weight = 0.0
    chosen = []
    for fold in range(folds):
        best, best_gain = "designed", 0.0
        for value, entries in values.items():
            train = weighted_mean([e for e in entries if fold_of[e.repository] != fold])
            if train > best_gain:
                best, best_gain = value, train
        chosen.append(best)
        test = [e for e in any_entries if fold_of[e.repository] == fold]
        if best != "designed":
            test = [e for e in values[best] if fold_of[e.repository] == fold]
            total += sum(e.gain * e.queries for e in test)
        weight += sum(e.queries for e in test)
    return (total / weight if weight else 0.0), chosen


def sweep_table(found: dict[str, dict[str, list[Entry]]], folds: int, seed: int) -> list[dict]:
    rows = []
    for name, values in sorted(found.items()):
        in_fold = {value: weighted_mean(entries) for value, entries in values.items()}
        best = max(in_fold, key=lambda v: in_fold[v])
        oof, chosen = choose_out_of_fold(values, folds, seed)
        rows.append({"constant": name, "values": in_fold, "in_fold_best": best if in_fold[best] > 0 else "designed",
                     "in_fold_gain": max(0.0, in_fold[best]), "out_of_fold_gain": oof, "chosen_per_fold": chosen})
    return rows


def table(gains: dict[str, list[Entry]], folds: int, seed: int) -> list[dict]:
    rows = []
    for rule, entries in gains.items():
        if _SWEPT.match(rule):
            continue  # a constant's other values: sweep_table
        oof, kept = out_of_fold(entries, folds, seed)
        per_source = {}
        for source in sorted({e.source for e in entries}):
            mine = [e for e in entries if e.source == source]
            per_source[source] = {"in_fold": weighted_mean(mine), "out_of_fold": out_of_fold(mine, folds, seed)[0]}
        rows.append({"rule": rule, "in_fold": weighted_mean(entries), "out_of_fold": oof, "kept_in_folds": kept,
                     "entries": len(entries), "per_source": per_source})
    return rows


def read_model_gains(specs: list[str], method: str) -> tuple[str, dict[str, list[Entry]]]:
    """`NAME=REPORT,REPORT...` per model, the first the designed (shipped) one, each with the same
    sets in the same order: per other model, every entry's improvement of `method`'s NDCG@10 over
    the designed model's. A set is named by the designed model's report file."""
    runs: list[tuple[str, list[Path]]] = []
    for spec in specs:
        name, sep, paths = spec.partition("=")
        if not sep or not name or not paths:
            raise SystemExit(f"folds: --model takes NAME=REPORT[,REPORT...], not {spec!r}")
        runs.append((name, [Path(p) for p in paths.split(",")]))
    if len(runs) < 2 or len({len(paths) for _, paths in runs}) != 1:
        raise SystemExit("folds: --model needs the designed model and at least one other, each with as many reports")

    def scores(path: Path) -> tuple[dict[str, float], dict[str, int]]:
        try:
            report = json.loads(path.read_text())
            per_repo = report["methods"][method]["per_repo"]
            return {k: v["ndcg@10"] for k, v in per_repo.items()}, {r["name"]: r["queries"] for r in report["repositories"]}
        except (OSError, ValueError, KeyError) as err:
            raise SystemExit(f"folds: {path} has no {method!r} of a quality.py report ({type(err).__name__}: {err})") from None

    designed, designed_paths = runs[0]
    base = [scores(p) for p in designed_paths]
    gains: dict[str, list[Entry]] = {}
    for name, paths in runs[1:]:
        gains[name] = []
        for set_path, (base_scores, queries), path in zip(designed_paths, base, paths):
            other, _ = scores(path)
            for entry, score in base_scores.items():
                source, repository = split_entry(set_path.stem, entry)
                gains[name].append(Entry(source, entry, repository, queries.get(entry, 1), other[entry] - score))
    return designed, gains


def model_table(designed: str, gains: dict[str, list[Entry]], folds: int, seed: int) -> dict:
    """Each model's in-fold improvement over the designed one, per set, and the out-of-fold
    improvement of choosing the model (or keeping the designed one) on the other folds."""
    sources = sorted({e.source for entries in gains.values() for e in entries})
    in_fold = {name: {"all": weighted_mean(entries),
                      **{s: weighted_mean([e for e in entries if e.source == s]) for s in sources}}
               for name, entries in gains.items()}
    oof, chosen = choose_out_of_fold(gains, folds, seed)
    # Each set's share of the choice made over all of them: the entries of the model each fold
    # chose (0 where it kept the designed one).
    any_entries = next(iter(gains.values()))
    fold_of = deal_folds(any_entries, folds, seed)
    picked = [Entry(e.source, e.name, e.repository, e.queries, 0.0) for e in any_entries
              if chosen[fold_of[e.repository]] == "designed"]
    picked += [e for name, es in gains.items() for e in es if chosen[fold_of[e.repository]] == name]
    per_source = {s: weighted_mean([e for e in picked if e.source == s]) for s in sources}
    return {"designed": designed, "in_fold": in_fold, "out_of_fold": {"all": oof, **per_source},
            "chosen_per_fold": [designed if c == "designed" else c for c in chosen], "sources": sources}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="*", type=Path, help="quality.py --json reports")
    parser.add_argument("--model", action="append", default=[], metavar="NAME=REPORT[,REPORT...]",
                        help="a model's quality.py reports (the first --model is the designed one): "
                             "which model to ship, chosen out of fold")
    parser.add_argument("--method", action="append", default=[], metavar="METHOD",
                        help="with --model, the quality.py methods compared (default: maguyva default)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0, help="how repositories are dealt into folds")
    parser.add_argument("--json", type=Path, help="also write the table here")
    args = parser.parse_args(argv)
    if args.folds < 2:
        parser.error(f"--folds must be at least 2, not {args.folds}")
    if args.model:
        for method in args.method or ["maguyva default"]:
            designed, model_gains = read_model_gains(args.model, method)
            t = model_table(designed, model_gains, args.folds, args.seed)
            print(f"{method}: each model's NDCG@10 minus {designed}'s, in fold; out of fold, the model chosen on the"
                  f" other folds (or {designed}) scores its fold ({args.folds} folds by repository, seed {args.seed})\n")
            header = ["model", "all"] + t["sources"]
            print("| " + " | ".join(header) + " |")
            print("| " + " | ".join(["---"] + ["---:"] * (len(header) - 1)) + " |")
            for name, row in t["in_fold"].items():
                print("| " + " | ".join([name] + [f"{row[c]:+.4f}" for c in ["all", *t["sources"]]]) + " |")
            row = t["out_of_fold"]
            print("| " + " | ".join(["chosen out of fold"] + [f"{row[c]:+.4f}" for c in ["all", *t["sources"]]]) + " |")
            print(f"\nchosen per fold: {', '.join(t['chosen_per_fold'])}\n")
            if args.json:
                args.json.with_name(f"{args.json.stem}.{method.replace(' ', '-')}{args.json.suffix}").write_text(
                    json.dumps(t, indent=1) + "\n")
        return 0
    if not args.reports:
        parser.error("give quality.py reports, or --model")
    gains = read_gains(args.reports)
    if not gains:
        print("folds: no ablation with a base in these reports (run quality.py without --no-ablations)",
              file=sys.stderr)
        return 2
    rows = table(gains, args.folds, args.seed)
    sources = sorted({s for r in rows for s in r["per_source"]})
    print(f"gain of each rule (base minus ablation, NDCG@10), {args.folds} folds by repository, seed {args.seed}\n")
    header = ["rule (what the ablation switches off)", "in fold", "out of fold", "kept in folds"]
    header += [f"{s}: in / out" for s in sources]
    print("| " + " | ".join(header) + " |")
    print("| " + " | ".join(["---"] + ["---:"] * (len(header) - 1)) + " |")
    for r in sorted(rows, key=lambda r: -r["out_of_fold"]):
        cells = [r["rule"], f"{r['in_fold']:+.4f}", f"{r['out_of_fold']:+.4f}", f"{r['kept_in_folds']}/{args.folds}"]
        for s in sources:
            p = r["per_source"].get(s)
            cells.append(f"{p['in_fold']:+.4f} / {p['out_of_fold']:+.4f}" if p else "")
        print("| " + " | ".join(cells) + " |")
    swept = sweep_table(sweeps(gains), args.folds, args.seed)
    if swept:
        print("\nconstants of the post-fusion signals: each other value's improvement over the designed one;"
              " out of fold, the value chosen on the other folds (or the designed one) scores its fold\n")
        print("| constant | other values: in-fold improvement | best in fold | out of fold | chosen per fold |")
        print("| --- | --- | --- | ---: | --- |")
        for r in swept:
            values = ", ".join(f"{v}: {g:+.4f}" for v, g in sorted(r["values"].items(), key=lambda kv: float(kv[0])))
            print(f"| {r['constant']} | {values} | {r['in_fold_best']} ({r['in_fold_gain']:+.4f}) | "
                  f"{r['out_of_fold_gain']:+.4f} | {', '.join(r['chosen_per_fold'])} |")
    if args.json:
        args.json.write_text(json.dumps({"rules": rows, "constants": swept}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
