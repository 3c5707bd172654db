"""The learned ranking of maguyva.query.rank: collect features, train with repository folds, report.

    python benches/ranker.py collect --bench ../shared/bench --repos DIR --out dev.pkl.gz
    python benches/ranker.py collect --bench MINED --repos MINED/trees --out mined.pkl.gz
    python benches/ranker.py train dev.pkl.gz mined.pkl.gz [--folds 5] [--seed 0] [--jobs N]
                                   [--groups shared|per-group|both] [--min-gain G,...] [--max-loss L,...]
                                   [--extend FEATURE ... [--extend-max-loss L,...]] [--hold FEATURE ...]
                                   [--json report.json]
    python benches/ranker.py choose dev.pkl.gz mined.pkl.gz [--model ranker.json] [--l2 L,...] [--json choice.json]
    python benches/ranker.py write REPORT.json [REPORT.json ...] [--choice choice.json]
                                   [--out python/maguyva/query/rank/ranker.json]
    python benches/ranker.py speed --bench ../shared/bench --repos DIR [--repos-subset NAME ...]

`collect` builds every repository's index cold (as quality.py does), asks each annotated query
with the default preset and the hand-set ranking, and records, for each question whose
candidates are ranked (the intents that answer with one place per file), every candidate's
features (`rank.FEATURES`), its hand-set score and its result (path and lines). Queries that are
not ranked (direct answers, references, exact strings) keep the NDCG@10 they got: the ranking
does not change them. The first part of --out's name names the set (`dev`; `mined`, whose
`NAME.docstring` and `NAME.header` entries are the sets `mined.docstring` and `mined.header`).

`train` scores a ranking offline exactly as the harness does (best first, one chunk per file, top
10, queries.py's NDCG@10, the mean over a repository's queries, then over repositories); it
checks itself by replaying the hand-set scores, which must give the NDCG@10 the searches got.

The model is linear, one weight vector per question group (`rank.GROUPS`) or one shared by all,
fitted by coordinate ascent on the mean NDCG@10 from the hand-set weights (`rank.hand_weights`):
each weight in turn is moved by each of STEPS, and the best move is kept when it gains more than
--min-gain over all and costs no set more than --max-loss of its own mean (every set weighs the
same, then every repository in it, then every query in it); ROUNDS passes. Folds are by
repository (folds.py's dealing: a mined repository's entries stay together): each fold's model is
fitted on the other folds and scores its own. Of the settings tried, the best out of fold (mean
over the sets) is reported per category and language; `--json` keeps every setting's figures and
the weights fitted on all the data, and `write` ships the best of such reports as the package's
model, with its in-fold and out-of-fold figures. `--extend` judges features added to a fitted
model: they are left out of the ascent (which then fits what it fitted without them), and each
in turn gets the weight of EXTEND_GRID that does best on the training folds without costing any
set more than `--extend-max-loss` (a row per value), so a new feature's out-of-fold gain is its
own, not a different path of the ascent's; `--hold` keeps features out of the ascent at their
hand-set weight (the features a shipped model was fitted without).

`choose` fits the choice within a file: where a file stands is its best candidate's score under
the ranking, but which of its chunks the result shows is scored apart, by weights fitted on the
questions whose targets are spans (a definition, not a file) and that describe rather than name
(`CHOICE_GROUPS`): pairwise logistic regression (Newton's method, L2 penalty from --l2) on the
feature differences of a chunk hitting a target and another chunk of its file, every question
weighing the same. Folds as `train`'s; questions whose targets are files cannot change.
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import os
import pickle
import random
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import folds  # noqa: E402  (the sets and repositories of entries)
import queries  # noqa: E402  (the metric)

TOP_K = 10
#: Candidates of each query that training ranks: the hand-set top this many.
CANDIDATES = 80


# ---------------------------------------------------------------------------------------------
# collect


def collect(args: argparse.Namespace) -> int:
    import quality

    from maguyva.query import rank

    queries._self_check()
    quality.LOCAL_MODEL = args.local_model
    selected = json.loads((args.bench / "repos.json").read_text())
    if args.repos_subset:
        selected = [r for r in selected if r["name"] in set(args.repos_subset)]
    repos = quality.load_repos(args.bench, args.repos, selected)
    report = args.out.name.split(".")[0]
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="maguyva-ranker-") as scratch:
        for repo in repos:
            quality.build_cold([repo], Path(scratch))
            searcher = quality.searcher_of(repo.index)
            reader = repo.index.reader
            seen: list[tuple] = []
            searcher.record = lambda *recorded: seen.append(recorded)
            source, repository = folds.split_entry(report, repo.name)
            for q in repo.queries:
                seen.clear()
                # The hand-set scores are the reference (and what training starts from).
                response = repo.index.search(q["query"], top_k=TOP_K, preset="default", ranking="hand")
                results = [(repo.full_path(h.path), h.start_line, h.end_line) for h in response.results]
                entry: dict[str, Any] = {
                    "set": source, "repo": repo.name, "repository": repository, "language": repo.language,
                    "category": q["category"], "query": q["query"], "targets": q["_targets"],
                    "covered": q["_covered"], "ndcg": queries.ndcg(results, q["_targets"], q["_covered"], TOP_K),
                }
                if seen:
                    _, classification, candidates, x, hand = seen[-1]
                    ids = np.asarray(candidates, dtype=np.int64)
                    file_ids = reader.chunk_file[ids].astype(np.int64)
                    entry.update(
                        group=rank.group_of(classification), chunks=ids, files=file_ids,
                        paths=[repo.full_path(reader.files[f].path) for f in file_ids.tolist()],
                        starts=reader.chunk_start[ids].astype(np.int64), ends=reader.chunk_end[ids].astype(np.int64),
                        x=x.astype(np.float32), hand=hand,
                    )
                records.append(entry)
            repo.index.close()
            shutil_rmtree(Path(scratch) / repo.name)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wb") as f:
        pickle.dump({"features": list(rank.FEATURES), "records": records}, f)
    ranked = sum("x" in r for r in records)
    print(f"wrote {args.out}: {len(records)} queries, {ranked} ranked")
    return 0


def shutil_rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# offline scoring


def ranked_ndcg(record: dict[str, Any], scores: np.ndarray) -> float:
    """NDCG@10 of a ranked query's candidates ordered by `scores`, as the searcher presents them."""
    order = np.lexsort((record["chunks"], -scores))
    seen: set[int] = set()
    best: list[int] = []
    others: list[int] = []
    for i in order.tolist():
        f = int(record["files"][i])
        (others if f in seen else best).append(i)
        seen.add(f)
    shown = (best + others)[:TOP_K]
    results = [(record["paths"][i], int(record["starts"][i]), int(record["ends"][i])) for i in shown]
    return queries.ndcg(results, record["targets"], record["covered"], TOP_K)


def mean_by_repo(records: list[dict[str, Any]], values: list[float]) -> dict[str, float]:
    """Per set: the mean over repositories of the mean over their queries."""
    per_repo: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r, v in zip(records, values):
        per_repo[(r["set"], r["repo"])].append(v)
    per_set: dict[str, list[float]] = defaultdict(list)
    for (source, _), vs in per_repo.items():
        per_set[source].append(sum(vs) / len(vs))
    return {s: sum(vs) / len(vs) for s, vs in sorted(per_set.items())}


def breakdown(records: list[dict[str, Any]], values: list[float], key: str) -> dict[tuple[str, str], float]:
    """Per (set, category or language): the mean over the repositories having it of the mean
    over their queries of it (the benchmark's per-category and per-language figures)."""
    per_repo: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for r, v in zip(records, values):
        per_repo[(r["set"], r[key], r["repo"])].append(v)
    grouped: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (source, value, _), vs in per_repo.items():
        grouped[(source, value)].append(sum(vs) / len(vs))
    return {k: sum(vs) / len(vs) for k, vs in sorted(grouped.items())}


def print_breakdown(records: list[dict[str, Any]], columns: dict[str, list[float]]) -> None:
    for key in ("category", "language"):
        tables = {name: breakdown(records, values, key) for name, values in columns.items()}
        print(f"\n| set | {key} | " + " | ".join(columns) + " |")
        print("| --- | --- |" + " --- |" * len(columns))
        for cell in next(iter(tables.values())):
            print(f"| {cell[0]} | {cell[1]} | " + " | ".join(f"{t[cell]:.3f}" for t in tables.values()) + " |")


# ---------------------------------------------------------------------------------------------
# training


class Prepared:
    """One ranked query made ready for fast scoring: its features, each candidate's file and the
    targets it hits (a bit per target), the ideal DCG, and its weight in the mean."""

    __slots__ = ("x", "files", "chunks", "masks", "ideal", "weight", "group", "index", "source")

    def __init__(self, record: dict[str, Any], weight: float, index: int):
        # Only the hand-set top CANDIDATES can reach the top 10 under any weights training tries.
        keep = np.sort(np.argsort(-record["hand"], kind="stable")[:CANDIDATES])
        self.x = record["x"][keep].astype(np.float64)
        self.files = record["files"][keep]
        self.chunks = record["chunks"][keep]
        self.masks = hit_masks(record)[keep]
        ideal_n = min(TOP_K, record["covered"])
        self.ideal = sum(1.0 / np.log2(i + 2) for i in range(ideal_n))
        self.weight, self.group, self.index, self.source = weight, record["group"], index, record["set"]

    def ndcg(self, scores: np.ndarray) -> float:
        if not self.ideal:
            return 0.0
        order = np.lexsort((self.chunks, -scores))
        _, first = np.unique(self.files[order], return_index=True)
        first.sort()
        shown = order[first[:TOP_K]]
        if len(shown) < TOP_K:  # fewer files than results: the files' other chunks follow
            rest = np.setdiff1d(np.arange(len(order)), first, assume_unique=True)
            shown = np.r_[shown, order[rest[: TOP_K - len(shown)]]]
        seen = dcg = 0
        for position, mask in enumerate(self.masks[shown].tolist(), start=1):
            if mask & ~seen:
                dcg += 1.0 / np.log2(position + 1)
                seen |= mask
        return dcg / self.ideal


def hit_masks(record: dict[str, Any]) -> np.ndarray:
    """Per candidate, a bit for each target its result hits."""
    masks = np.zeros(len(record["chunks"]), dtype=object)
    for i, (path, start, end) in enumerate(zip(record["paths"], record["starts"], record["ends"])):
        m = 0
        for t, target in enumerate(record["targets"]):
            if queries.found_ranks([(path, int(start), int(end))], [target]):
                m |= 1 << t
        masks[i] = m
    return masks


def query_weights(records: list[dict[str, Any]]) -> list[float]:
    """Every set weighs the same, then every repository in it, then every query in it."""
    sets = {r["set"] for r in records}
    repos_in_set = {s: len({r["repo"] for r in records if r["set"] == s}) for s in sets}
    in_repo: dict[tuple[str, str], int] = defaultdict(int)
    for r in records:
        in_repo[(r["set"], r["repo"])] += 1
    return [1.0 / (len(sets) * repos_in_set[r["set"]] * in_repo[(r["set"], r["repo"])]) for r in records]


#: The steps coordinate ascent tries on each weight, and how many rounds it makes over them.
STEPS = (-1.0, -0.5, -0.2, -0.1, -0.05, -0.02, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
ROUNDS = 3


def ascend(prepared: list[Prepared], start: np.ndarray, min_gain: float, max_loss: float, seed: int,
           frozen: frozenset[int] = frozenset()) -> np.ndarray:
    """Coordinate ascent on the weighted mean NDCG@10 of `prepared` from `start` (the weight of
    "fused" stays 1: it sets the scale). A step is kept when it gains more than `min_gain` in
    all and costs no set more than `max_loss` of its own mean: a rule that helps one kind of
    question at the price of another is not learned. The weights of `frozen` keep their start."""
    from maguyva.query import rank

    if not prepared:
        return start.copy()
    sets = sorted({p.source for p in prepared})
    set_of = {s: i for i, s in enumerate(sets)}
    set_totals = np.zeros(len(sets))
    for p in prepared:
        set_totals[set_of[p.source]] += p.weight
    total = set_totals.sum()
    w = start.copy()
    fixed = rank.FEATURES.index("fused")
    order = [j for j in range(len(w)) if j != fixed and j not in frozen]
    rng = random.Random(seed)

    def parts(moved: list[Prepared], trial: np.ndarray) -> np.ndarray:
        out = np.zeros(len(sets))
        for p in moved:
            out[set_of[p.source]] += p.weight * p.ndcg(p.x @ trial)
        return out

    for _ in range(ROUNDS):
        rng.shuffle(order)
        improved = False
        for j in order:
            # Only queries where feature j varies can change.
            moved = [p for p in prepared if np.ptp(p.x[:, j]) > 0]
            if not moved:
                continue
            base = parts(moved, w)
            choice, choice_gain = 0.0, min_gain
            for step in STEPS:
                trial = w.copy()
                trial[j] += step
                change = parts(moved, trial) - base
                gain = change.sum() / total
                if gain > choice_gain and (change / set_totals).min() >= -max_loss:
                    choice, choice_gain = step, gain
            if choice:
                w[j] += choice
                improved = True
        if not improved:
            break
    return w


def model_weights(prepared: list[Prepared], hand_w: np.ndarray, groups: tuple[str, ...], min_gain: float,
                  max_loss: float, per_group: bool, seed: int,
                  frozen: frozenset[int] = frozenset()) -> dict[str, np.ndarray]:
    """The weight vector of every group, by coordinate ascent from the hand-set weights."""
    if not per_group:
        w = ascend(prepared, hand_w, min_gain, max_loss, seed, frozen)
        return {g: w for g in groups}
    return {g: ascend([p for p in prepared if p.group == g], hand_w, min_gain, max_loss, seed, frozen) for g in groups}


#: The weights `--extend` tries for each added feature.
EXTEND_GRID = (-1.0, -0.5, -0.3, -0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)


def extend(prepared: list[Prepared], weights: dict[str, np.ndarray], features: list[int],
           max_loss: float) -> dict[str, np.ndarray]:
    """`weights` with each of `features` in turn given the weight of EXTEND_GRID that gains most
    over `prepared` (every set weighing the same) and costs no set more than `max_loss`: a feature
    added to a fitted model, its one number chosen on the same questions."""
    sets = sorted({p.source for p in prepared})
    set_totals = np.array([sum(p.weight for p in prepared if p.source == s) for s in sets])
    out = {g: w.copy() for g, w in weights.items()}
    for j in features:
        moved = [p for p in prepared if np.ptp(p.x[:, j]) > 0]

        def per_set(value: float) -> np.ndarray:
            sums = np.zeros(len(sets))
            for p in moved:
                trial = out[p.group].copy()
                trial[j] = value
                sums[sets.index(p.source)] += p.weight * p.ndcg(p.x @ trial)
            return sums / set_totals

        base = per_set(out[next(iter(out))][j])
        best, best_gain = None, 0.0
        for value in EXTEND_GRID:
            change = per_set(value) - base
            if change.mean() > best_gain and change.min() >= -max_loss:
                best, best_gain = value, change.mean()
        if best is not None:
            for w in out.values():
                w[j] = best
    return out


#: What the forked fitting processes read: (prepared queries, their folds, hand weights, seed,
#: the features added after the ascent, the loss they may cost a set, the features held at 0).
_SHARED: tuple[list[Prepared], list[int], np.ndarray, int, list[int], list[float], frozenset[int]] | None = None


def _fit_fold(job: tuple[int, float, float, bool]) -> tuple[dict[str, np.ndarray], list[dict[str, np.ndarray]]]:
    """The weights fitted on every fold but `job`'s (on all of them for fold -1), and those
    weights with the `--extend` features added, once per `--extend-max-loss`."""
    from maguyva.query import rank

    fold, min_gain, max_loss, per_group = job
    assert _SHARED is not None
    prepared, folds_of, hand_w, seed, added, added_loss, held = _SHARED
    train_part = [p for p, f in zip(prepared, folds_of) if f != fold]
    base = model_weights(train_part, hand_w, rank.GROUPS, min_gain, max_loss, per_group, seed, frozenset(added) | held)
    return base, [extend(train_part, base, added, loss) for loss in added_loss] if added else []


def prepared_ndcg(prepared: list[Prepared], weights: dict[str, np.ndarray], out: list[float]) -> None:
    for p in prepared:
        out[p.index] = p.ndcg(p.x @ weights[p.group])


def evaluate(records: list[dict[str, Any]], weights: dict[str, np.ndarray] | None) -> list[float]:
    """Each query's NDCG@10 under `weights` (None: the hand-set scores)."""
    out = []
    for r in records:
        if "x" not in r:
            out.append(r["ndcg"])
        elif weights is None:
            out.append(ranked_ndcg(r, r["hand"]))
        else:
            out.append(ranked_ndcg(r, r["x"].astype(np.float64) @ weights[r["group"]]))
    return out


def train(args: argparse.Namespace) -> int:
    from maguyva.query import rank

    records = load_records(args.data)
    weights_of = query_weights(records)
    prepared = [Prepared(r, w, i) for i, (r, w) in enumerate(zip(records, weights_of)) if "x" in r]
    hand_w = rank.hand_weights()
    # The offline scoring is the harness's: the searches' own NDCG comes back from the hand-set scores.
    replayed = evaluate(records, None)
    off = sum(abs(a - r["ndcg"]) > 1e-9 for a, r in zip(replayed, records))
    print(f"{len(records)} queries, {sum('x' in r for r in records)} ranked; "
          f"offline replay differs from the searches on {off}")
    hand_as_linear = evaluate(records, {g: hand_w for g in rank.GROUPS})
    fast = [r["ndcg"] for r in records]
    prepared_ndcg(prepared, {g: hand_w for g in rank.GROUPS}, fast)
    cut = sum(abs(a - b) > 1e-9 for a, b in zip(fast, hand_as_linear))
    print(f"scoring only the top {CANDIDATES} candidates changes {cut} queries' NDCG@10")

    fold_of = repository_folds(records, args.folds, args.seed)
    repositories = sorted(fold_of)
    configs = [(per_group, min_gain, max_loss)
               for per_group in {"shared": (False,), "per-group": (True,), "both": (False, True)}[args.groups]
               for min_gain in (float(v) for v in args.min_gain.split(","))
               for max_loss in (float(v) for v in args.max_loss.split(","))]
    rows: dict[str, dict[str, Any]] = {}
    base = mean_by_repo(records, [r["ndcg"] for r in records])
    rows["hand-set signals"] = {"in_fold": base, "out_of_fold": base}
    rows["hand-set, as a linear model"] = {"in_fold": mean_by_repo(records, hand_as_linear),
                                           "out_of_fold": mean_by_repo(records, hand_as_linear)}
    best_name, best_score = None, -1.0
    added = [rank.FEATURES.index(f) for f in args.extend] if args.extend else []
    unknown = (set(args.extend or ()) | set(args.hold or ())) - set(rank.FEATURES)
    if unknown:
        raise SystemExit(f"ranker: no feature {', '.join(sorted(unknown))}")
    for per_group, min_gain, max_loss in configs:
        name = f"learned, {'per group' if per_group else 'shared'}, min gain {min_gain:g}, max loss {max_loss:g}"
        fold_of_prepared = [fold_of[records[p.index]["repository"]] for p in prepared]
        jobs = [(-1, min_gain, max_loss, per_group)] + [(f, min_gain, max_loss, per_group) for f in range(args.folds)]
        global _SHARED
        added_losses = [float(v) for v in args.extend_max_loss.split(",")]
        held = frozenset(rank.FEATURES.index(f) for f in args.hold or ())
        _SHARED = (prepared, fold_of_prepared, hand_w, args.seed, added, added_losses, held)
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            fitted = dict(zip([j[0] for j in jobs], pool.map(_fit_fold, jobs)))
        variants = [(name, None, {k: v[0] for k, v in fitted.items()})]
        for i, loss in enumerate(added_losses if added else []):
            variants.append((f"{name}, then {', '.join(args.extend)} (max loss {loss:g})", loss,
                             {k: v[1][i] for k, v in fitted.items()}))
        for row_name, added_loss, by_fold in variants:
            weights = by_fold[-1]
            in_fold_values = [r["ndcg"] for r in records]
            prepared_ndcg(prepared, weights, in_fold_values)
            in_fold = mean_by_repo(records, in_fold_values)
            oof = [r["ndcg"] for r in records]
            for fold in range(args.folds):
                held = [p for p, f in zip(prepared, fold_of_prepared) if f == fold]
                prepared_ndcg(held, by_fold[fold], oof)
            out = mean_by_repo(records, oof)
            rows[row_name] = {"in_fold": in_fold, "out_of_fold": out, "min_gain": min_gain, "max_loss": max_loss,
                              "per_group": per_group, "oof_per_query": oof,
                              "extend": list(args.extend or ()) if added_loss is not None else [],
                              "extend_max_loss": added_loss, "hold": list(args.hold or ()),
                              "added_per_fold": {str(k): {rank.FEATURES[j]: float(w[rank.GROUPS[0]][j]) for j in added}
                                                 for k, w in by_fold.items()} if added_loss is not None else {},
                              "weights": {g: dict(zip(rank.FEATURES, map(float, v))) for g, v in weights.items()}}
            score = sum(out.values()) / len(out)
            print(f"{row_name}: " + ", ".join(f"{s} {in_fold[s]:.4f}/{out[s]:.4f}" for s in out), flush=True)
            if score > best_score:
                best_name, best_score = row_name, score
    sets = list(base)
    print("\n| ranking | " + " | ".join(f"{s} in fold | {s} out of fold" for s in sets) + " |")
    print("| --- |" + " --- | --- |" * len(sets))
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(f"{row['in_fold'][s]:.3f} | {row['out_of_fold'][s]:.3f}" for s in sets) + " |")
    print(f"\nbest out of fold: {best_name}")
    chosen = rows[best_name]
    in_fold_chosen = [r["ndcg"] for r in records]
    prepared_ndcg(prepared, {g: np.array([chosen["weights"][g][f] for f in rank.FEATURES]) for g in rank.GROUPS},
                  in_fold_chosen)
    print_breakdown(records, {"hand-set": [r["ndcg"] for r in records], "learned, in fold": in_fold_chosen,
                              "learned, out of fold": chosen["oof_per_query"]})
    if args.json:
        settings = {"data": [p.name for p in args.data], "queries": len(records), "repositories": len(repositories),
                    "folds": args.folds, "seed": args.seed}
        args.json.write_text(json.dumps({"rows": rows, "chosen": best_name, "settings": settings}, indent=1) + "\n")
    return 0


def repository_folds(records: list[dict[str, Any]], folds_n: int, seed: int) -> dict[str, int]:
    """Each repository's fold: the repositories shuffled by `seed`, then dealt in turn."""
    repositories = sorted({r["repository"] for r in records})
    random.Random(seed).shuffle(repositories)
    return {repo: i % folds_n for i, repo in enumerate(repositories)}


def load_records(paths: list[Path]) -> list[dict[str, Any]]:
    from maguyva.query import rank

    records: list[dict[str, Any]] = []
    for path in paths:
        with gzip.open(path, "rb") as f:
            data = pickle.load(f)
        if data["features"] != list(rank.FEATURES):
            raise SystemExit(f"ranker: {path} was collected for other features; collect it again")
        records += data["records"]
    return records


# ---------------------------------------------------------------------------------------------
# the choice within a file


#: The question groups the choice is fitted for and applied to: descriptions. A bare name's
#: answer is its definition, which the ranking's definition bonus already puts first in its file.
CHOICE_GROUPS = ("sentence", "explanation")


def has_span_target(record: dict[str, Any]) -> bool:
    return any(isinstance(t, dict) and t.get("start_line") for t in record["targets"])


def choice_ndcg(record: dict[str, Any], masks: np.ndarray, scores: np.ndarray, preference: np.ndarray) -> float:
    """NDCG@10 with files placed by `scores` (their best chunk's) and each showing its candidate
    of highest `preference`, as the searcher presents them."""
    order = np.lexsort((record["chunks"], -scores)).tolist()
    files: list[int] = []
    shown: dict[int, int] = {}
    for i in order:
        f = int(record["files"][i])
        if f not in shown:
            files.append(f)
            shown[f] = i
        elif preference[i] > preference[shown[f]]:
            shown[f] = i
    ideal = sum(1.0 / np.log2(i + 2) for i in range(min(TOP_K, record["covered"])))
    if not ideal:
        return 0.0
    seen = dcg = 0
    for position, f in enumerate(files[:TOP_K], start=1):
        mask = masks[shown[f]]
        if mask & ~seen:
            dcg += 1.0 / np.log2(position + 1)
            seen |= mask
    return dcg / ideal


def choice_pairs(records: list[dict[str, Any]], masks: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Feature differences (a chunk hitting a target - another chunk of its file that does not),
    and each pair's weight: every question weighs the same, whatever its number of pairs."""
    rows: list[np.ndarray] = []
    weights: list[float] = []
    for record, mask in zip(records, masks):
        hits = np.array([bool(m) for m in mask])
        x = record["x"].astype(np.float64)
        found = []
        for f in np.unique(record["files"][hits]).tolist():
            inside = np.flatnonzero(record["files"] == f)
            good, bad = inside[hits[inside]], inside[~hits[inside]]
            if len(good) and len(bad):
                found.append((x[good][:, None, :] - x[bad][None, :, :]).reshape(-1, x.shape[1]))
        if found:
            pairs = np.vstack(found)
            rows.append(pairs)
            weights += [1.0 / len(pairs)] * len(pairs)
    if not rows:
        return np.zeros((0, 0)), np.zeros(0)
    return np.vstack(rows), np.asarray(weights)


def fit_choice(pairs: np.ndarray, weights: np.ndarray, l2: float) -> np.ndarray:
    """Pairwise logistic regression (no intercept: a difference of candidates), by Newton's method:
    the weights under which a hitting chunk outranks its file's other chunks most often."""
    w = np.zeros(pairs.shape[1])
    total = weights.sum()
    for _ in range(50):
        z = pairs @ w
        p = 1.0 / (1.0 + np.exp(-z))
        gradient = pairs.T @ (weights * (p - 1.0)) / total + l2 * w
        hessian = (pairs.T * (weights * p * (1.0 - p))) @ pairs / total + l2 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    # Features that do not vary within a file have no say in the choice: exactly 0, not computed.
    w[np.abs(w) < 1e-9] = 0.0
    return w


def choose(args: argparse.Namespace) -> int:
    """Fit the within-file choice on the questions whose targets are spans, with repository folds."""
    from maguyva.query import rank

    records = load_records(args.data)
    model = rank.RankModel.load(args.model) if args.model else rank.shipped_model()
    spans = [r for r in records if "x" in r and has_span_target(r)]
    described = [r["group"] in CHOICE_GROUPS for r in spans]
    masks = [hit_masks(r) for r in spans]
    scores = [r["x"].astype(np.float64) @ model.weights[r["group"]] for r in spans]
    fold_of = repository_folds(records, args.folds, args.seed)
    print(f"{len(spans)} ranked questions whose targets are spans, of {len(records)}; "
          f"{sum(described)} of them descriptions ({', '.join(CHOICE_GROUPS)})")
    best_first = [choice_ndcg(r, m, s, s) for r, m, s in zip(spans, masks, scores)]
    oracle = [choice_ndcg(r, m, s, np.array([float(bool(v)) for v in m]) + 1e-9 * s)
              for r, m, s in zip(spans, masks, scores)]
    rows: dict[str, dict[str, Any]] = {
        "best-scored chunk": {"in_fold": mean_by_repo(spans, best_first), "out_of_fold": mean_by_repo(spans, best_first)},
        "a hitting chunk when the file has one (the bound)": {"in_fold": mean_by_repo(spans, oracle),
                                                             "out_of_fold": mean_by_repo(spans, oracle)},
    }
    best_name, best_score = None, -1.0
    for l2 in (float(v) for v in args.l2.split(",")):
        fitted = {}
        for fold in [-1, *range(args.folds)]:
            part = [(r, m) for r, m, d in zip(spans, masks, described) if d and fold_of[r["repository"]] != fold]
            fitted[fold] = fit_choice(*choice_pairs([r for r, _ in part], [m for _, m in part]), l2)
        def shown(fold_weights: Any) -> list[float]:
            return [choice_ndcg(r, m, s, r["x"].astype(np.float64) @ fold_weights(r) + 1e-9 * s if d else s)
                    for r, m, s, d in zip(spans, masks, scores, described)]

        in_fold = shown(lambda r: fitted[-1])
        oof = shown(lambda r: fitted[fold_of[r["repository"]]])
        name = f"learned choice, l2 {l2:g}"
        out = mean_by_repo(spans, oof)
        rows[name] = {"in_fold": mean_by_repo(spans, in_fold), "out_of_fold": out, "l2": l2,
                      "choice": dict(zip(rank.FEATURES, map(float, fitted[-1])))}
        score = sum(out.values()) / len(out)
        if score > best_score:
            best_name, best_score = name, score
    sets = list(rows["best-scored chunk"]["in_fold"])
    print("\n| shown chunk of each file | " + " | ".join(f"{s} in fold | {s} out of fold" for s in sets) + " |")
    print("| --- |" + " --- | --- |" * len(sets))
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(f"{row['in_fold'][s]:.3f} | {row['out_of_fold'][s]:.3f}" for s in sets) + " |")
    chosen = rows[best_name]
    print(f"\nbest out of fold: {best_name}; weights: "
          + ", ".join(f"{f} {v:+.3f}" for f, v in chosen["choice"].items() if v))
    if args.json:
        settings = {"data": [p.name for p in args.data], "questions": len(spans), "folds": args.folds,
                    "seed": args.seed, "model": args.model.name if args.model else "shipped"}
        args.json.write_text(json.dumps({"rows": rows, "chosen": best_name, "settings": settings}, indent=1) + "\n")
    return 0


def write(args: argparse.Namespace) -> int:
    """The model of the best learned row of `train --json` reports (mean out-of-fold NDCG@10 over
    the sets), with the best choice within a file of a `choose --json` report when given, written
    as the package's ranking model."""
    from maguyva.query import rank

    if not args.reports:
        # The shipped ranking stays as it is; only the choice within a file is replaced.
        shipped = json.loads(args.out.read_text())
        model = rank.RankModel.from_json(args.out.read_text())
        weights, meta = dict(model.weights), dict(shipped.get("meta", {}))
        return _write(args, weights, meta, "the shipped ranking")
    best: tuple[float, str, dict[str, Any], dict[str, Any]] | None = None
    for path in args.reports:
        report = json.loads(path.read_text())
        for name, row in report["rows"].items():
            if "weights" not in row:
                continue
            score = sum(row["out_of_fold"].values()) / len(row["out_of_fold"])
            if best is None or score > best[0]:
                best = (score, name, row, {**report["settings"], "hand_set": report["rows"]["hand-set signals"]["in_fold"]})
    if best is None:
        raise SystemExit("ranker: no learned model in these reports")
    _, name, row, settings = best
    weights = {g: vector(row["weights"][g]) for g in rank.GROUPS}
    meta: dict[str, Any] = {
        "model": name, **settings, "in_fold": row["in_fold"], "out_of_fold": row["out_of_fold"],
        "command": "python benches/ranker.py train " + " ".join(settings["data"])
        + f" --groups {'per-group' if row['per_group'] else 'shared'} --min-gain {row['min_gain']:g}"
        + f" --max-loss {row['max_loss']:g} --folds {settings['folds']} --seed {settings['seed']}"
        + (f" --extend {' '.join(row['extend'])} --extend-max-loss {row['extend_max_loss']:g}" if row.get("extend") else "")
        + (f" --hold {' '.join(row['hold'])}" if row.get("hold") else "")
        + " --json REPORT",
    }
    return _write(args, weights, meta, name)


def _write(args: argparse.Namespace, weights: dict[str, np.ndarray], meta: dict[str, Any], name: str) -> int:
    from maguyva.query import rank

    choice: dict[str, np.ndarray] = {}
    meta.pop("choice", None)
    if args.choice:
        report = json.loads(args.choice.read_text())
        chosen = report["rows"][report["chosen"]]
        choice = {g: vector(chosen["choice"]) for g in CHOICE_GROUPS}
        settings = dict(report["settings"])
        # The ranking the choice was fitted under is named apart from the choice's own model.
        meta["choice"] = {"model": report["chosen"], "ranking": settings.pop("model", "shipped"), **settings,
                          "in_fold": chosen["in_fold"],
                          "out_of_fold": chosen["out_of_fold"],
                          "command": "python benches/ranker.py choose " + " ".join(report["settings"]["data"])
                          + (f" --model {Path(report['settings']['model']).name}"
                             if report["settings"].get("model", "shipped") != "shipped" else "")
                          + f" --l2 {chosen['l2']:g} --json REPORT"}
    args.out.write_text(rank.RankModel(weights, choice=choice).to_json(meta))
    print(f"wrote {args.out}: {name}" + (f"; {report['chosen']}" if args.choice else ""))
    return 0


def vector(weights: dict[str, float]) -> np.ndarray:
    """A report's weights in the layout of rank.FEATURES, refusing a report of another layout."""
    from maguyva.query import rank

    if set(weights) != set(rank.FEATURES):
        raise SystemExit("ranker: the report was made for other features; train again")
    return np.array([weights[f] for f in rank.FEATURES])


# ---------------------------------------------------------------------------------------------
# speed


def speed(args: argparse.Namespace) -> int:
    """The rank stage's own time per question (features, then the model's scores), and whole
    questions under the hand-set ranking, the learned ranking without its choice within a file and
    with it, asked in turn question by question (latency.py) so that the machine's drift is shared."""
    import dataclasses
    import statistics
    import time

    import latency
    import quality

    from maguyva.query import rank

    selected = json.loads((args.bench / "repos.json").read_text())
    if args.repos_subset:
        selected = [r for r in selected if r["name"] in set(args.repos_subset)]
    repos = quality.load_repos(args.bench, args.repos, selected)
    model = rank.shipped_model()
    timings: list[float] = []
    scoring: list[float] = []
    sizes: list[int] = []
    with tempfile.TemporaryDirectory(prefix="maguyva-ranker-") as scratch:
        for repo in repos:
            quality.build_cold([repo], Path(scratch))
            searcher = quality.searcher_of(repo.index)
            original = rank.features

            def timed(*a: Any, **k: Any) -> np.ndarray:
                started = time.perf_counter()
                x = original(*a, **k)
                timings.append((time.perf_counter() - started) * 1e3)
                sizes.append(len(x))
                started = time.perf_counter()
                model.score("explanation", x)
                scoring.append((time.perf_counter() - started) * 1e3)
                return x

            rank.features = timed
            try:
                for _ in range(args.rounds):
                    for q in repo.queries:
                        searcher.search(q["query"], top_k=TOP_K)
            finally:
                rank.features = original
            repo.index.close()
    print(f"{len(timings)} ranked questions, candidates p50 {statistics.median(sizes):.0f} (max {max(sizes)})")
    print(f"features p50 {statistics.median(timings):.3f} ms, p95 {sorted(timings)[int(0.95 * len(timings))]:.3f} ms; "
          f"scores p50 {statistics.median(scoring) * 1e3:.1f} us")
    without_choice = dataclasses.replace(model, choice={})

    def use(ranker: rank.RankModel) -> Any:
        return lambda searcher: setattr(searcher, "ranker", ranker)

    arms = {"hand-set": (None, "hand"), "learned, no choice": (use(without_choice), "learned"),
            "learned, with its choice (shipped)": (use(model), "learned")}
    latency.report(latency.alternate(args.bench, args.repos, args.repos_subset, arms, args.rounds))
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="record every ranked candidate's features")
    c.add_argument("--bench", type=Path, required=True)
    c.add_argument("--repos", type=Path, required=True)
    c.add_argument("--repos-subset", nargs="+", metavar="NAME")
    c.add_argument("--out", type=Path, required=True, help="a .pkl.gz file; its first name part names the set")
    c.add_argument("--local-model", type=Path, metavar="DIR",
                   help="index and search with this local embedding model folder instead of the shipped one")
    t = sub.add_parser("train", help="fit and score the model with repository folds")
    t.add_argument("data", type=Path, nargs="+")
    t.add_argument("--folds", type=int, default=5)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--groups", choices=["shared", "per-group", "both"], default="both",
                   help="one weight vector for every question group, one per group, or try both")
    t.add_argument("--max-loss", default="0.0,0.002",
                   help="the most a step may cost any one set's mean NDCG@10 (values to choose from)")
    t.add_argument("--min-gain", default="0.0005",
                   help="the smallest mean NDCG@10 gain a step must make to be kept (values to choose from)")
    t.add_argument("--extend", nargs="+", metavar="FEATURE",
                   help="features left out of the ascent, then each given the weight of EXTEND_GRID that does best "
                        "on the training folds (a second row per setting)")
    t.add_argument("--hold", nargs="+", metavar="FEATURE",
                   help="features the ascent leaves at their hand-set weight (0 for those it has no use for)")
    t.add_argument("--extend-max-loss", default="0.001",
                   help="the most an added feature's weight may cost any one set's mean NDCG@10 (values: a row each)")
    t.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="fitting processes")
    t.add_argument("--json", type=Path)
    w = sub.add_parser("write", help="ship the best model of train --json reports")
    w.add_argument("reports", type=Path, nargs="*", help="train --json reports (none: keep the shipped ranking)")
    w.add_argument("--choice", type=Path, help="a choose --json report: its best choice within a file goes too")
    w.add_argument("--out", type=Path, default=HERE.parent / "python" / "maguyva" / "query" / "rank" / "ranker.json")
    h = sub.add_parser("choose", help="fit the choice of the chunk each file shows, with repository folds")
    h.add_argument("data", type=Path, nargs="+")
    h.add_argument("--model", type=Path, help="the ranking model placing the files (default: the shipped one)")
    h.add_argument("--folds", type=int, default=5)
    h.add_argument("--seed", type=int, default=0)
    h.add_argument("--l2", default="0.001,0.01,0.1", help="L2 penalties to choose from")
    h.add_argument("--json", type=Path)
    b = sub.add_parser("speed", help="time the rank stage per question")
    b.add_argument("--bench", type=Path, required=True)
    b.add_argument("--repos", type=Path, required=True)
    b.add_argument("--repos-subset", nargs="+", metavar="NAME")
    b.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    return {"collect": collect, "train": train, "choose": choose, "write": write, "speed": speed}[args.command](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
