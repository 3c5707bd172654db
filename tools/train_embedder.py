"""Train maguyva's offline embedding table on code: (natural language, code) pairs mined from
public repositories, contrastive training with in-batch negatives.

    python tools/train_embedder.py pin   --mirrors DIR                  # tools/embedder_repos.json
    python tools/train_embedder.py pairs --mirrors DIR --out pairs.jsonl.gz
    python tools/train_embedder.py train --pairs pairs.jsonl.gz --out MODEL_DIR [--name NAME]

Fitting the table to a teacher first (`pip install ".[train]"` for the teacher):

    python tools/train_embedder.py windows --trees DIR --out windows.jsonl.gz
    python tools/teacher_vectors.py windows.jsonl.gz --out vectors.npy
    python tools/train_embedder.py train --pairs pairs.jsonl.gz --fit windows.jsonl.gz vectors.npy ...

A vocabulary that knows code (measured, it loses: benches/README.md):

    python tools/train_embedder.py vocabulary --trees DIR --out words.txt
    python tools/build_local_model.py --vocabulary words.txt --split-identifiers --name NAME --out DIR
    python tools/train_embedder.py train --pairs pairs.jsonl.gz --init DIR/NAME --concat ...

The shipped model (`python/maguyva/embed/models/minilm-l6-code-512`), bit for bit:

    python tools/train_embedder.py train --pairs pairs.jsonl.gz --concat --name minilm-l6-code-512 \
        --out python/maguyva/embed/models/minilm-l6-code-512

The repositories are those of `shared/mining/repos.txt` that are in neither the quality benchmark
nor the mined validation sets (`benches/mined_repos.json`): the model never sees a repository it
is judged on. `pin` records each one's commit (the mirror's HEAD); `pairs` reads only the pins, so
it gives the same pairs whatever the mirrors fetch later. `--mirrors` holds bare clones as for
`benches/mine.py`.

Pairs, one JSON object a line (`repo`, `kind`, `query`, `doc`):

- **docstring**: the first sentence of a definition's docstring or leading comment (as the mined
  docstring set takes it) -> the definition's lines with the doc text removed, after its path;
- **header**: the first sentence of a file's header comment -> the file's first lines without
  the header, after its path (`--whole-files`: the whole file; measured, not shipped);
- **commit**: the subject of a commit among the last 400 first-parent ones before the pin,
  filtered as the mined commit set filters them -> each changed source file's lines before the
  change, around its first changed line, after its path.

A document is written as the index writes a chunk for its embedder (`path\\ntext`).

Training. The table starts from a shipped model (`--init`) and keeps its tokenizer; a text's
vector is the mean of its tokens' rows, as at run time. Each step takes a batch of pairs and
minimizes the symmetric cross-entropy of the cosine similarities (temperature `--temperature`)
between every query and every document of the batch: each query's own document is its positive,
the batch's others its negatives. Adam updates only the rows a batch touched. The epochs are
chosen on repositories held out of training (`--holdout`, by repository), by the mean reciprocal
rank of each held-out query's document among all held-out documents, by Hamming distance of the
binary codes, which is what the index ranks by. `--mix` then writes a blend of the trained
table and the starting one (their rows averaged with those weights): the pairs teach docstrings
and commit subjects, and a table trained on them alone forgets some of what they do not hold
(file headers, bare names). `--concat` keeps both instead: each row of the written table is the
starting row followed by the trained one, so a code is the starting model's bits followed by the
trained table's and its Hamming distance is the sum of the two (an ensemble at twice the bits;
the epoch is chosen by the joined codes). That is the shipped model: it keeps what the starting
table knows and adds what the pairs teach (benches/README.md). `--itq` can rotate the table by iterative quantization before the
sign (a rotation leaves cosines unchanged and commutes with the mean, so it folds into the
table); measured, it loses (benches/README.md), and is off by default.

Only numpy and tokenizers (maguyva's own runtime dependencies) and safetensors are needed; the whole
run takes minutes on two cores.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import shutil
import sys
import time
from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benches"))

import mine  # noqa: E402  (the miners' readers of docstrings, headers and mirrors)

from maguyva.embed.local import segment_positions  # noqa: E402
from maguyva.embed.local import segment_sums  # noqa: E402

REPOS_FILE = ROOT.parent / "shared" / "mining" / "repos.txt"
PINS = ROOT / "tools" / "embedder_repos.json"
BENCH_REPOS = ROOT.parent / "shared" / "bench" / "repos.json"
VALIDATION_REPOS = ROOT / "benches" / "mined_repos.json"

#: Lines of a definition or a file kept in its document (mean pooling dilutes longer texts).
DOC_LINES = 60
#: Tokens of a document kept for training (its first ones).
DOC_TOKENS = 384
SEED = 20261202


# -- pins and pairs -----------------------------------------------------------------------------


def training_specs(repos_file: Path) -> list[mine.RepoSpec]:
    """The repositories of `repos_file` that no benchmark or validation set uses."""
    judged = {r["repo"] for r in json.loads(VALIDATION_REPOS.read_text())["repos"]}
    judged |= {r["repo"] for r in json.loads(VALIDATION_REPOS.read_text()).get("skipped", [])}
    if BENCH_REPOS.is_file():
        judged |= {r["url"].split("github.com/")[1].removesuffix(".git") for r in json.loads(BENCH_REPOS.read_text())}
    return [s for s in mine.read_repos_file(repos_file) if s.repo not in judged]


def pin(args: argparse.Namespace) -> int:
    pinned, skipped = [], []
    for spec in training_specs(args.repos_file):
        mirror = mine.find_mirror(args.mirrors, spec.repo)
        if mirror is None:
            skipped.append({"repo": spec.repo, "reason": "no mirror could be fetched"})
            continue
        head = mine.git(mirror, "rev-parse", "HEAD").strip()
        pinned.append({"repo": spec.repo, "name": spec.name, "language": spec.language, "commit": head})
    PINS.write_text(json.dumps({
        "about": "Repositories the offline embedder is trained on (tools/train_embedder.py): those of "
                 "shared/mining/repos.txt in neither the quality benchmark nor benches/mined_repos.json.",
        "repos": pinned, "skipped": skipped}, indent=1) + "\n")
    print(f"pinned {len(pinned)} repositories, {len(skipped)} skipped: {PINS}")
    return 0


def doc_text(path: str, lines: list[str], limit: int | None = DOC_LINES) -> str:
    body = "".join(lines[:limit]).strip("\n")
    return f"{path}\n{body}"


def repo_pairs(spec: dict[str, Any], tree: Path, whole_files: bool = False) -> Iterator[dict[str, str]]:
    """Docstring and file-header pairs of one tree; with `whole_files`, a header's document is
    its whole file (its mean is what a chunk's file context adds), not the file's first lines."""
    paths = mine.source_files(tree)
    for c in mine.unique(mine.docstring_candidates(tree, paths)):
        lines = mine.read_text(tree / c.path).splitlines(keepends=True)
        symbol = c.symbol
        block = mine.doc_block(lines, symbol.docstring, symbol.start_line - 1)
        if block is None:
            continue
        drop = set(block)
        first, last = symbol.start_line - 1, symbol.end_line
        body = [line for i, line in enumerate(lines[first:last], first) if i not in drop]
        if sum(1 for line in body if line.strip()) < 2:
            continue
        yield {"repo": spec["repo"], "kind": "docstring", "query": c.sentence, "doc": doc_text(c.path, body)}
    for c in mine.header_candidates(tree, paths):
        lines = mine.read_text(tree / c.path).splitlines(keepends=True)
        first, last = c.lines
        body = lines[:first] + lines[last + 1:]
        if sum(1 for line in body if line.strip()) < 2:
            continue
        doc = doc_text(c.path, body, None if whole_files else DOC_LINES)
        yield {"repo": spec["repo"], "kind": "header", "query": c.sentence, "doc": doc}


#: First-parent commits before a repository's pinned commit whose subjects are read.
COMMIT_WINDOW = 400
#: Lines of the changed file kept before and after a commit's first changed line.
HUNK_BEFORE, HUNK_AFTER = 10, 40
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? ", re.M)


def commit_pairs(spec: dict[str, Any], mirror: Path, window: int = COMMIT_WINDOW) -> Iterator[dict[str, str]]:
    """Commit subjects (filtered as the mined commit set filters them) -> the lines of each
    changed source file, before the change, around its first changed line."""
    shas = mine.git(mirror, "rev-list", "--first-parent", f"--max-count={window}", spec["commit"]).split()
    if len(shas) < 2:
        return
    log = mine.git(mirror, "log", "--no-merges", "--no-renames", "--name-only", "--format=%x00%H%x1f%an%x1f%ae%x1f%s",
                   f"{shas[-1]}..{spec['commit']}")
    for record in log.split("\x00")[1:]:
        header, _, names = record.partition("\n")
        sha, author, email, subject = header.split("\x1f", 3)
        changed = [n for n in names.splitlines() if n.strip()]
        if mine.BOT_AUTHOR.search(author) or mine.BOT_AUTHOR.search(email):
            continue
        if any(p.search(subject) for p in mine.SUBJECT_DROPS) or mine.spells_a_file(subject, changed):
            continue
        query = mine.query_of_subject(subject)
        if len(query.split()) < mine.MIN_SUBJECT_WORDS:
            continue
        sources = [p for p in changed if mine.is_source(p)]
        if not sources or len(sources) > mine.MAX_SOURCE_FILES_PER_COMMIT:
            continue
        for path in sources:
            try:
                diff = mine.git(mirror, "show", "--format=", "-U0", sha, "--", path)
                before = mine.git(mirror, "show", f"{sha}^:{path}")
            except RuntimeError:
                continue  # the file is new, or the snapshot lacks the blob
            hunk = _HUNK.search(diff)
            if hunk is None:
                continue
            at = max(int(hunk.group(1)) - 1, 0)
            lines = before.splitlines(keepends=True)
            window = lines[max(0, at - HUNK_BEFORE):at + HUNK_AFTER]
            if sum(1 for line in window if line.strip()) < 2:
                continue
            yield {"repo": spec["repo"], "kind": "commit", "query": query, "doc": doc_text(path, window)}


def pairs(args: argparse.Namespace) -> int:
    pins = json.loads(PINS.read_text())["repos"]
    counts: dict[str, int] = {}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8") as out:
        for spec in pins:
            started = time.perf_counter()
            mirror = mine.find_mirror(args.mirrors, spec["repo"])
            if mirror is None:
                raise SystemExit(f"train_embedder: no mirror of {spec['repo']} under {args.mirrors}")
            tree = args.trees / spec["name"]
            if not tree.is_dir():
                mine.materialize(mirror, spec["commit"], tree)
            kinds: dict[str, int] = {}
            for pair in chain(repo_pairs(spec, tree, args.whole_files), commit_pairs(spec, mirror, args.commit_window)):
                out.write(json.dumps(pair) + "\n")
                kinds[pair["kind"]] = kinds.get(pair["kind"], 0) + 1
            for kind, n in kinds.items():
                counts[kind] = counts.get(kind, 0) + n
            print(f"{spec['name']:24s} {spec['language']:11s} " + "  ".join(f"{k} {n:5d}" for k, n in sorted(kinds.items()))
                  + f"  ({time.perf_counter() - started:.1f} s)", flush=True)
    print(f"wrote {args.out}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    return 0


#: Lines of a window the teacher embeds (the benchmark's chunk size) and windows per file at most.
WINDOW_LINES, WINDOWS_PER_FILE = 40, 2


def windows(args: argparse.Namespace) -> int:
    """Windows of the pinned trees' source files, each written as the index writes a chunk for
    its embedder, for a teacher to embed (`tools/teacher_vectors.py`) and `train --fit` to fit."""
    rng = random.Random(SEED)
    found: list[dict[str, str]] = []
    for spec in json.loads(PINS.read_text())["repos"]:
        tree = args.trees / spec["name"]
        if not tree.is_dir():
            raise SystemExit(f"train_embedder: no tree of {spec['repo']} at {tree} (run `pairs` first)")
        for path in mine.source_files(tree):
            lines = mine.read_text(tree / path).splitlines(keepends=True)
            starts = list(range(0, max(1, len(lines) - WINDOW_LINES // 2), WINDOW_LINES))
            for start in rng.sample(starts, min(WINDOWS_PER_FILE, len(starts))):
                window = lines[start:start + WINDOW_LINES]
                if sum(1 for line in window if line.strip()) >= 5:
                    found.append({"repo": spec["repo"], "text": doc_text(path, window)})
    rng.shuffle(found)
    found = found[:args.count]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8") as out:
        for w in found:
            out.write(json.dumps(w) + "\n")
    print(f"wrote {args.out}: {len(found)} windows from {len({w['repo'] for w in found})} repositories")
    return 0


IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def identifier_words(text: str) -> Iterator[str]:
    """The lower-cased alphabetic parts of a text's identifiers, split at underscores and where
    the case changes (`parseHTTPRequest_v2` -> parse, http, request)."""
    from maguyva.embed.local import IDENTIFIER_BOUNDARY

    boundary = re.compile(IDENTIFIER_BOUNDARY)
    for identifier in IDENTIFIER.findall(text):
        for part in boundary.sub("_", identifier).split("_"):
            if part.isalpha() and 2 <= len(part) <= 24:
                yield part.lower()


def vocabulary(args: argparse.Namespace) -> int:
    """Words of code the starting model's vocabulary lacks: identifier parts found in at least
    `--min-repos` of the pinned trees, most widespread first (for `build_local_model.py --vocabulary`)."""
    from collections import Counter

    from tokenizers import Tokenizer

    from maguyva.embed.local import resolve_model_dir

    known = Tokenizer.from_file(str(resolve_model_dir(args.init) / "tokenizer.json")).get_vocab()
    total: Counter[str] = Counter()
    spread: Counter[str] = Counter()
    for spec in json.loads(PINS.read_text())["repos"]:
        tree = args.trees / spec["name"]
        if not tree.is_dir():
            raise SystemExit(f"train_embedder: no tree of {spec['repo']} at {tree} (run `pairs` first)")
        local: Counter[str] = Counter()
        for path in mine.source_files(tree):
            local.update(identifier_words(mine.read_text(tree / path)))
        total.update(local)
        spread.update(local.keys())
    words = sorted((w for w in total if w not in known and spread[w] >= args.min_repos),
                   key=lambda w: (-spread[w], -total[w], w))[:args.max_words]
    args.out.write_text("".join(w + "\n" for w in words), encoding="utf-8")
    print(f"wrote {args.out}: {len(words)} words in at least {args.min_repos} repositories")
    return 0


def read_pairs(path: Path) -> list[dict[str, str]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


# -- the model ----------------------------------------------------------------------------------


class Texts:
    """Token ids of many texts, concatenated, with each text's start and length."""

    def __init__(self, ids: np.ndarray, lengths: np.ndarray):
        self.ids, self.lengths = ids, lengths
        self.starts = np.cumsum(lengths) - lengths

    def take(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ids of texts `rows`, concatenated, and each one's owner (0..len(rows)-1)."""
        lengths = self.lengths[rows]
        offsets = segment_positions(lengths)
        return self.ids[np.repeat(self.starts[rows], lengths) + offsets], np.repeat(np.arange(len(rows)), lengths)


def tokenize(embedder: Any, texts: list[str], cap: int) -> Texts:
    """Each text's token ids as the embedder sees them (by its own tokenization, skipped ids
    dropped), its first `cap`."""
    ids, counts = embedder._token_ids(texts)
    owner = np.repeat(np.arange(len(texts)), counts)
    keep = ~np.isin(ids, embedder._skip)
    ids, owner = ids[keep], owner[keep]
    lengths = np.bincount(owner, minlength=len(texts))
    first = segment_positions(lengths) < cap
    return Texts(ids[first], np.minimum(lengths, cap))


def pooled(table: np.ndarray, ids: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """Mean rows per text: (n, dims), `owner` sorted (each text's ids are consecutive)."""
    counts = np.bincount(owner, minlength=n)
    return segment_sums(table, ids, counts) / np.maximum(counts, 1)[:, None].astype(table.dtype)


def embed_all(table: np.ndarray, texts: Texts, batch: int = 8192) -> np.ndarray:
    out = np.zeros((len(texts.lengths), table.shape[1]), dtype=np.float32)
    for start in range(0, len(texts.lengths), batch):
        rows = np.arange(start, min(start + batch, len(texts.lengths)))
        ids, owner = texts.take(rows)
        out[rows] = pooled(table, ids, owner, len(rows))
    return out


def hamming_mrr(table: np.ndarray, queries: Texts, docs: Texts) -> float:
    """Mean reciprocal rank of each query's own document among all documents, by the Hamming
    distance of their sign codes (ties broken against the query)."""
    q = np.packbits(embed_all(table, queries) > 0, axis=1)
    d = np.packbits(embed_all(table, docs) > 0, axis=1)
    popcount = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(axis=1)
    ranks = []
    for start in range(0, len(q), 256):
        block = q[start:start + 256]
        dist = popcount[block[:, None, :] ^ d[None, :, :]].sum(axis=2)
        own = dist[np.arange(len(block)), np.arange(start, start + len(block))]
        ranks.append(1 + (dist <= own[:, None]).sum(axis=1) - 1)
    r = np.concatenate(ranks).astype(np.float64)
    return float(np.mean(1.0 / r))


def contrastive_step(
    table: np.ndarray, queries: Texts, docs: Texts, rows: np.ndarray, temperature: float
) -> tuple[float, np.ndarray, np.ndarray]:
    """Loss of one batch and the gradient of the table's touched rows: (loss, row ids, grads)."""
    n = len(rows)
    q_ids, q_owner = queries.take(rows)
    d_ids, d_owner = docs.take(rows)
    q_counts = np.bincount(q_owner, minlength=n).astype(np.float32)
    d_counts = np.bincount(d_owner, minlength=n).astype(np.float32)
    q = pooled(table, q_ids, q_owner, n)
    d = pooled(table, d_ids, d_owner, n)
    q_norm = np.linalg.norm(q, axis=1, keepdims=True) + 1e-8
    d_norm = np.linalg.norm(d, axis=1, keepdims=True) + 1e-8
    qn, dn = q / q_norm, d / d_norm
    logits = (qn @ dn.T) / temperature
    # Symmetric InfoNCE: queries to documents and documents to queries.
    loss = 0.0
    grad_logits = np.zeros_like(logits)
    for axis_logits, transpose in ((logits, False), (logits.T, True)):
        shifted = axis_logits - axis_logits.max(axis=1, keepdims=True)
        probs = np.exp(shifted)
        probs /= probs.sum(axis=1, keepdims=True)
        loss += float(-np.mean(np.log(probs[np.arange(n), np.arange(n)] + 1e-12)))
        g = probs
        g[np.arange(n), np.arange(n)] -= 1.0
        g /= n
        grad_logits += g.T if transpose else g
    loss /= 2
    grad_logits /= 2 * temperature
    grad_qn = grad_logits @ dn
    grad_dn = grad_logits.T @ qn
    grad_q = (grad_qn - qn * (qn * grad_qn).sum(axis=1, keepdims=True)) / q_norm
    grad_d = (grad_dn - dn * (dn * grad_dn).sum(axis=1, keepdims=True)) / d_norm
    # Each token of a text gets its text's gradient over the text's length.
    ids = np.concatenate([q_ids, d_ids])
    per_token = np.concatenate([grad_q[q_owner] / q_counts[q_owner][:, None], grad_d[d_owner] / d_counts[d_owner][:, None]])
    order = np.argsort(ids, kind="stable")
    ids, per_token = ids[order], per_token[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    return loss, ids[starts], np.add.reduceat(per_token, starts, axis=0)


def fit_step(table: np.ndarray, texts: Texts, targets: np.ndarray, rows: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Mean cosine distance between texts `rows`' mean token rows and their unit `targets`, and
    the gradient of the table's touched rows: (loss, row ids, grads)."""
    n = len(rows)
    ids, owner = texts.take(rows)
    counts = np.bincount(owner, minlength=n).astype(np.float32)
    pooled_rows = pooled(table, ids, owner, n)
    norm = np.linalg.norm(pooled_rows, axis=1, keepdims=True) + 1e-8
    unit = pooled_rows / norm
    y = targets[rows]
    cos = (unit * y).sum(axis=1, keepdims=True)
    loss = float(np.mean(1.0 - cos))
    grad_pooled = -(y - unit * cos) / norm / n
    per_token = grad_pooled[owner] / counts[owner][:, None]
    order = np.argsort(ids, kind="stable")
    ids, per_token = ids[order], per_token[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    return loss, ids[starts], np.add.reduceat(per_token, starts, axis=0)


def teacher_targets(table: np.ndarray, texts: Texts, vectors: np.ndarray, ridge: float = 1e-2) -> np.ndarray:
    """The teacher's vectors mapped into the table's space: the linear map (ridge least squares)
    from the teacher's vectors to the table's own mean rows of the same texts, applied to the
    teacher's vectors, normalized. Fitting to them moves the table where the teacher points
    without rotating it away from the basis its other rows (and a joined model) share."""
    own = embed_all(table, texts)
    gram = vectors.T @ vectors + ridge * len(vectors) * np.eye(vectors.shape[1], dtype=np.float32)
    mapped = vectors @ np.linalg.solve(gram, vectors.T @ own)
    return (mapped / (np.linalg.norm(mapped, axis=1, keepdims=True) + 1e-8)).astype(np.float32)


class SparseAdam:
    """Adam whose moments and steps advance only for the rows a gradient touches."""

    def __init__(self, shape: tuple[int, int], lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        self.m = np.zeros(shape, dtype=np.float32)
        self.v = np.zeros(shape, dtype=np.float32)
        self.t = np.zeros(shape[0], dtype=np.int64)
        self.lr, self.betas, self.eps = lr, betas, eps

    def step(self, table: np.ndarray, rows: np.ndarray, grad: np.ndarray) -> None:
        b1, b2 = self.betas
        self.t[rows] += 1
        t = self.t[rows][:, None]
        self.m[rows] = b1 * self.m[rows] + (1 - b1) * grad
        self.v[rows] = b2 * self.v[rows] + (1 - b2) * grad * grad
        m_hat = self.m[rows] / (1 - b1 ** t)
        v_hat = self.v[rows] / (1 - b2 ** t)
        table[rows] -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def itq_rotation(vectors: np.ndarray, iterations: int, seed: int) -> np.ndarray:
    """An orthogonal matrix R that makes sign(V R) close to V R (iterative quantization, Gong &
    Lazebnik 2011), for `vectors` normalized and centred by the caller's choice."""
    rng = np.random.default_rng(seed)
    dims = vectors.shape[1]
    rotation, _ = np.linalg.qr(rng.standard_normal((dims, dims)))
    for _ in range(iterations):
        projected = vectors @ rotation
        signs = np.where(projected >= 0, 1.0, -1.0)
        u, _, vt = np.linalg.svd(signs.T @ vectors)
        rotation = (u @ vt).T
    return rotation.astype(np.float32)


def split_by_repo(records: list[dict[str, str]], holdout: float, seed: int) -> tuple[list[int], list[int]]:
    repos = sorted({r["repo"] for r in records})
    random.Random(seed).shuffle(repos)
    held = set(repos[: max(1, round(holdout * len(repos)))])
    train = [i for i, r in enumerate(records) if r["repo"] not in held]
    test = [i for i, r in enumerate(records) if r["repo"] in held]
    return train, test


def train(args: argparse.Namespace) -> int:
    from maguyva.embed.local import LocalEmbedder

    embedder = LocalEmbedder(args.init)
    start = np.asarray(embedder._table, dtype=np.float32)
    table = np.array(start, dtype=np.float32, copy=True)
    records = read_pairs(args.pairs)
    if args.kinds:
        records = [r for r in records if r["kind"] in args.kinds]
    started = time.perf_counter()
    queries = tokenize(embedder, [r["query"] for r in records], cap=64)
    docs = tokenize(embedder, [r["doc"] for r in records], cap=DOC_TOKENS)
    train_rows, held_rows = split_by_repo(records, args.holdout, SEED) if args.holdout else (list(range(len(records))), [])
    repeats = dict(args.repeat)
    # A kind with few pairs can be seen several times an epoch (`--repeat header=4`).
    train_rows = [i for i in train_rows for _ in range(repeats.get(records[i]["kind"], 1))]
    print(f"{len(records)} pairs from {len({r['repo'] for r in records})} repositories ({len(train_rows)} to train on,"
          f" {len(held_rows)} held out), tokenized in {time.perf_counter() - started:.1f} s", flush=True)

    def written(t: np.ndarray) -> np.ndarray:
        """The table a model folder gets from the trained `t`: with `--concat`, the starting
        table's columns then the trained ones, so a code's Hamming distance is the sum of the
        two tables' (an ensemble in one code, at twice the bits)."""
        return np.hstack([start, t]) if args.concat else t

    def held_score(t: np.ndarray) -> float:
        if not held_rows:
            return float("nan")
        rows = np.asarray(held_rows)
        return hamming_mrr(written(t), _subset(queries, rows), _subset(docs, rows))

    print(f"epoch 0: held-out Hamming MRR {held_score(table):.4f}", flush=True)
    rng = np.random.default_rng(SEED)
    fitting: dict[str, int] = {}
    if args.fit:
        table, fitting = fit_to_teacher(args, embedder, table, rng, held_score)
    optimizer = SparseAdam(table.shape, args.lr)
    best = (held_score(table), 0, table.copy())
    history = [{"epoch": 0, "held_out_mrr": best[0]}]
    for epoch in range(1, args.epochs + 1):
        started = time.perf_counter()
        order = rng.permutation(np.asarray(train_rows))
        losses = []
        for first in range(0, len(order) - args.batch + 1, args.batch):
            loss, rows, grad = contrastive_step(table, queries, docs, order[first:first + args.batch], args.temperature)
            optimizer.step(table, rows, grad)
            losses.append(loss)
        score = held_score(table)
        history.append({"epoch": epoch, "loss": float(np.mean(losses)), "held_out_mrr": score})
        print(f"epoch {epoch}: loss {np.mean(losses):.4f}, held-out Hamming MRR {score:.4f}"
              f" ({time.perf_counter() - started:.1f} s)", flush=True)
        if not held_rows or score > best[0]:
            best = (score, epoch, table.copy())
    score, epoch, table = best
    if held_rows:
        print(f"kept epoch {epoch} (held-out MRR {score:.4f})")
    if args.mix < 1.0:
        # Halfway back to the starting table: what the pairs teach, without forgetting what
        # they do not hold (names alone, file headers, architecture questions).
        table = args.mix * table + (1.0 - args.mix) * start
        print(f"mixed {args.mix:g} of the trained table with {1 - args.mix:g} of the first: held-out MRR {held_score(table):.4f}")
    rotated_kept = False
    if args.itq:
        sample = embed_all(table, _subset(docs, rng.permutation(len(records))[:20000]))
        sample /= np.linalg.norm(sample, axis=1, keepdims=True) + 1e-8
        rotation = itq_rotation(sample, args.itq, SEED)
        rotated = table @ rotation
        print(f"ITQ rotation ({args.itq} iterations): held-out Hamming MRR {held_score(table):.4f} -> {held_score(rotated):.4f}")
        if not held_rows or held_score(rotated) > held_score(table):
            table, rotated_kept = rotated, True
    table = written(table)
    write_model(args, embedder, table, {"pairs": len(records), "kinds": sorted({r["kind"] for r in records}),
                                        "repositories": len({r["repo"] for r in records}), "kept_epoch": epoch,
                                        "sources": sorted({r["repo"] for r in records}),
                                        "history": history, "lr": args.lr, "batch": args.batch,
                                        "temperature": args.temperature, "itq_iterations": args.itq, "rotated": rotated_kept, "mix": args.mix, "concat": args.concat,
                                        **fitting,
                                        "repeat": dict(args.repeat),
                                        "holdout": args.holdout})
    return 0


def fit_to_teacher(args: argparse.Namespace, embedder: Any, table: np.ndarray, rng: np.random.Generator,
                   held_score: Any) -> tuple[np.ndarray, dict[str, int]]:
    """The table fitted so that each window's mean row points where the teacher's vector of it
    does (`--fit WINDOWS VECTORS`), the epoch chosen by the held-out pairs' MRR (0: unfitted)."""
    windows_path, vectors_path = args.fit
    with gzip.open(windows_path, "rt", encoding="utf-8") as f:
        texts = tokenize(embedder, [json.loads(line)["text"] for line in f], cap=DOC_TOKENS)
    vectors = np.load(vectors_path).astype(np.float32)
    if len(vectors) != len(texts.lengths):
        raise SystemExit(f"train_embedder: {vectors_path} has {len(vectors)} vectors for {len(texts.lengths)} windows")
    targets = teacher_targets(table, texts, vectors)
    optimizer = SparseAdam(table.shape, args.fit_lr)
    best = (held_score(table), 0, table.copy())
    for epoch in range(1, args.fit_epochs + 1):
        started = time.perf_counter()
        order = rng.permutation(len(vectors))
        losses = []
        for first in range(0, len(order) - args.batch + 1, args.batch):
            loss, rows, grad = fit_step(table, texts, targets, order[first:first + args.batch])
            optimizer.step(table, rows, grad)
            losses.append(loss)
        score = held_score(table)
        print(f"fit epoch {epoch}: cosine distance {np.mean(losses):.4f}, held-out Hamming MRR {score:.4f}"
              f" ({time.perf_counter() - started:.1f} s)", flush=True)
        if score > best[0]:
            best = (score, epoch, table.copy())
    print(f"kept fit epoch {best[1]} (held-out MRR {best[0]:.4f})", flush=True)
    return best[2], {"fit_windows": len(vectors), "fit_kept_epoch": best[1]}


def _subset(texts: Texts, rows: np.ndarray) -> Texts:
    ids, _ = texts.take(rows)
    return Texts(ids, texts.lengths[rows])


def write_model(args: argparse.Namespace, embedder: Any, table: np.ndarray, training: dict[str, Any]) -> None:
    from safetensors.numpy import save_file

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    source = Path(embedder.folder)
    save_file({"embeddings": table.astype(np.float16)}, str(out / "model.safetensors"))
    shutil.copyfile(source / "tokenizer.json", out / "tokenizer.json")
    for name in ("LICENSE",):
        if (source / name).is_file():
            shutil.copyfile(source / name, out / name)
    config = dict(embedder.config)
    config["name"] = args.name
    config["dims"] = int(table.shape[1])
    config["training"] = {"tool": "tools/train_embedder.py", "init": embedder.config["name"], **training}
    config["sha256"] = {name: hashlib.sha256((out / name).read_bytes()).hexdigest()
                        for name in ("model.safetensors", "tokenizer.json")}
    text = json.dumps(config, indent=1) + "\n"
    (out / "config.json").write_text(text)
    (out / "SHA256SUMS").write_text(f"{hashlib.sha256(text.encode()).hexdigest()}  config.json\n")
    notice = (source / "NOTICE").read_text() if (source / "NOTICE").is_file() else ""
    notice = notice.replace(f'"{embedder.config["name"]}"', f'"{args.name}"', 1)
    (out / "NOTICE").write_text(notice + trained_notice(embedder.config["name"], training))
    print(f"wrote {out}")


KIND_TEXTS = {
    "docstring": "first sentences of docstrings with the definitions they describe",
    "header": "first sentences of file headers with the files' code",
    "commit": "commit subjects with the lines of the files they changed",
}


def trained_notice(init: str, training: dict[str, Any]) -> str:
    """What a trained model's NOTICE adds to its starting model's: the changes made by training."""
    kinds = "; ".join(KIND_TEXTS[k] for k in training["kinds"])
    lines = [
        f"\nFurther changes, by tools/train_embedder.py of maguyva, starting from the model \"{init}\":",
        f"- the token vectors were trained contrastively on {training['pairs']} (natural language, code)",
        f"  pairs from the public source of {training['repositories']} repositories listed in",
        f"  tools/embedder_repos.json ({kinds});",
    ]
    if training.get("rotated"):
        lines.append("- the table was multiplied by an orthogonal rotation found by iterative quantization;")
    if training.get("mix", 1.0) < 1.0:
        lines.append(f"- the trained vectors were averaged with the starting model's, weights {training['mix']:g} and"
                     f" {1 - training['mix']:g};")
    if training.get("concat"):
        lines.append("- the starting model's vectors were kept as the first half of each row, the trained ones as the second;")
    lines.append("- the vectors are stored as float16.")
    pins = {r["repo"]: r["commit"] for r in json.loads(PINS.read_text())["repos"]}
    lines.append("")
    lines.append("The pairs were read from these public repositories, each at the commit named, under their")
    lines.append("own licences; no part of their source is in this folder:")
    lines += [f"- {repo} {pins.get(repo, '(commit not pinned)')}" for repo in training["sources"]]
    return "\n".join(lines) + "\n"


def _kind_count(text: str) -> tuple[str, int]:
    kind, sep, count = text.partition("=")
    if not sep or kind not in ("docstring", "header", "commit") or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not KIND=N with KIND docstring, header or commit and N >= 1")
    return kind, int(count)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("pin", help="record the training repositories' commits")
    s.add_argument("--mirrors", type=Path, required=True)
    s.add_argument("--repos-file", type=Path, default=REPOS_FILE)
    s.set_defaults(run=pin)
    s = sub.add_parser("pairs", help="mine (natural language, code) pairs from the pinned trees")
    s.add_argument("--mirrors", type=Path, required=True)
    s.add_argument("--whole-files", action="store_true",
                   help="a file header's document is its whole file, not its first lines")
    s.add_argument("--trees", type=Path, default=Path("/tmp/maguyva-embedder-trees"))
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--commit-window", type=int, default=COMMIT_WINDOW,
                   help=f"first-parent commits before each pin whose subjects are read ({COMMIT_WINDOW})")
    s.set_defaults(run=pairs)
    s = sub.add_parser("windows", help="sample source windows of the pinned trees for a teacher to embed")
    s.add_argument("--trees", type=Path, default=Path("/tmp/maguyva-embedder-trees"))
    s.add_argument("--count", type=int, default=20000)
    s.add_argument("--out", type=Path, required=True)
    s.set_defaults(run=windows)
    s = sub.add_parser("vocabulary", help="list the words of code the starting vocabulary lacks")
    s.add_argument("--trees", type=Path, default=Path("/tmp/maguyva-embedder-trees"))
    s.add_argument("--init", default=str(ROOT / "tools" / "models" / "minilm-l6-static-256"))
    s.add_argument("--min-repos", type=int, default=4)
    s.add_argument("--max-words", type=int, default=8000)
    s.add_argument("--out", type=Path, required=True)
    s.set_defaults(run=vocabulary)
    s = sub.add_parser("train", help="train a table on the pairs and write a model folder")
    s.add_argument("--pairs", type=Path, required=True)
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--name", default="code-static-256")
    s.add_argument("--init", default=str(ROOT / "tools" / "models" / "minilm-l6-static-256"),
                   help="the model to start from (a folder, or the name of a shipped one)")
    s.add_argument("--kinds", nargs="+", choices=["docstring", "header", "commit"])
    s.add_argument("--repeat", nargs="+", type=_kind_count, default=[], metavar="KIND=N",
                   help="train on each pair of KIND N times an epoch")
    s.add_argument("--epochs", type=int, default=10)
    s.add_argument("--batch", type=int, default=256)
    s.add_argument("--lr", type=float, default=0.003)
    s.add_argument("--temperature", type=float, default=0.1)
    s.add_argument("--holdout", type=float, default=0.2, help="share of repositories held out to choose the epoch")
    s.add_argument("--itq", type=int, default=0, help="ITQ iterations (0: no rotation)")
    s.add_argument("--mix", type=float, default=1.0,
                   help="the share of the trained table in the one written, the rest the starting table's")
    s.add_argument("--fit", nargs=2, type=Path, metavar=("WINDOWS", "VECTORS"),
                   help="first fit the table to a teacher's vectors of these windows (tools/teacher_vectors.py)")
    s.add_argument("--fit-epochs", type=int, default=4)
    s.add_argument("--fit-lr", type=float, default=0.003)
    s.add_argument("--concat", action="store_true",
                   help="write the starting table's columns followed by the trained table's (twice the bits)")
    s.set_defaults(run=train)
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
