"""Torture test of the index's durability and concurrency: kill -9 during builds, builders and
readers racing, a full disk and a read-only index folder.

    python benches/torture.py                 # full run: 100 kills, 1000 searches during builds
    python benches/torture.py --quick         # CI-sized: 20 kills, 200 searches (about 2 minutes)
    python benches/torture.py [--trials N] [--files N] [--seed S] [--json out.json]

Everything happens in a temporary folder (MAGUYVA_HOME, the embedding cache, included) on an
invented repository: a few hundred small files in seven languages (Python, JavaScript, Go, Rust,
Java, C, Ruby) whose functions call each other, generated from the seed. `--trials N` is the
number of kill trials; every other count scales with it (searches 10 N, disk-full levels N / 5,
read-only trials N / 20). Every loop is bounded in count and in time (`--time-limit`).

1. kill -9 during builds. Per trial the repository is changed, `maguyva index` is started and
   SIGKILLed (with its process group) at a random moment: uniform over the build's duration as
   measured by the first, unkilled builds of each kind, or, for a quarter of the trials,
   shortly after the new generation folder appears, so kills land in the write and publish
   steps too. Kinds of build: incremental (a few files changed: the previous generation is
   merged), full (every file changed), --rebuild (when the command has it) and first (no index
   yet). Checks: the killed index opens and equals exactly the old or the new state (files and
   their SHA-256, chunk, symbol and edge counts, the results of two searches), compared with a
   reference index built to separate folders without kills; the next `maguyva index` succeeds
   and gives the new state with every file of the tree indexed at its current content; no
   stray files or generation folders remain after it (compared with the reference folder).
2. Concurrent builders and readers. One thread changes files and starts several `maguyva index`
   at once (a refusal "being indexed by another process" is correct behaviour), while readers
   search continuously: `maguyva search --json` processes and in-process
   `Index.open(...).search(...)`, opened afresh every time. Any error, crash or malformed answer
   is a failure; afterwards a build must give the final tree, nothing lost.
3. Disk full. The index lives on a small tmpfs filled so a build runs out of space at various
   points of its write; `maguyva index` must fail with one line on stderr (no traceback), exit
   code 2, the old index opening and answering identically; once space is freed, the next build
   succeeds with nothing lost. Skipped (not failed) when tmpfs cannot be mounted.
4. Read-only index folder. The tmpfs is remounted read-only after a build and the repository
   changed: `maguyva search` should answer from the intact index with a warning on stderr
   (exit 0); `maguyva index` should fail with one line, exit 2, nothing lost.

Prints a table per scenario (trials, failures, lost, leftovers, skipped) with the first
failures' error lines, and exits 1 if anything failed, was lost or was left behind.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

#: The two questions whose answers are part of an index's fingerprint.
NATURAL_QUERY = "merge the cached totals and retry when over the limit"
CLI_TIMEOUT = 240.0  # seconds: a command taking longer is counted as hung
LOCKED = "being indexed by another process"
RECENT = 6  # the typical duration of a kind of build: median of its latest finished builds
MAX_SHOWN_FAILURES = 5


# The invented repository ----------------------------------------------------------------------

SYLLABLES = ("ka", "vel", "tor", "mi", "quon", "ras", "bel", "dri", "sef", "nox", "pul", "gar",
             "zin", "lo", "mer", "vas", "ty", "orn", "cal", "fek", "jun", "wep", "hiv", "sor")  # fmt: skip
WORDS = ("merge", "cache", "total", "limit", "retry", "parse", "queue", "token", "batch", "flush",
         "window", "ledger", "route", "score", "digest", "render", "sweep", "bucket")  # fmt: skip
LANGUAGES = {"py": "python", "js": "javascript", "go": "go", "rs": "rust", "java": "java", "c": "c", "rb": "ruby"}


@dataclass
class SourceFile:
    path: str
    ext: str
    functions: list[str]
    calls: dict[str, list[str]]
    version: int = 0


class SyntheticRepo:
    """A tree of small source files whose functions call each other, all from one random
    generator: the same seed gives the same files and the same changes."""

    def __init__(self, root: Path, rng: random.Random):
        self.root = root
        self.rng = rng
        self.files: dict[str, SourceFile] = {}
        self.where: dict[str, str] = {}  # function -> path
        self.used: set[str] = set()
        self.ever: set[str] = set()  # every path that ever existed
        self.folders = sorted({self._word(2) for _ in range(8)})
        self.lock = threading.Lock()

    def _word(self, parts: int) -> str:
        return "".join(self.rng.choice(SYLLABLES) for _ in range(parts))

    def _unique(self, parts: int) -> str:
        while True:
            name = self._word(parts) + "_" + self._word(2)
            if name not in self.used:
                self.used.add(name)
                return name

    def create(self, count: int) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        for _ in range(count):
            self.add_file()

    def live_functions(self) -> list[str]:
        return sorted(self.where)

    def add_file(self) -> str:
        ext = self.rng.choice(sorted(LANGUAGES))
        while True:
            stem = self._unique(2)
            path = f"{self.rng.choice(self.folders)}/{stem}.{ext}"
            if path not in self.files:
                break
        pool = self.live_functions()
        functions = [self._unique(self.rng.randint(1, 2)) for _ in range(self.rng.randint(2, 6))]
        calls = {f: self.rng.sample(pool, min(len(pool), self.rng.randint(1, 3))) for f in functions}
        spec = SourceFile(path, ext, functions, calls)
        self.files[path] = spec
        for f in functions:
            self.where[f] = path
        self.ever.add(path)
        self.write(spec)
        return path

    def edit_file(self, path: str) -> None:
        spec = self.files[path]
        spec.version += 1
        choice = self.rng.random()
        if choice < 0.4:  # a new function calling existing ones
            name = self._unique(2)
            spec.functions.append(name)
            spec.calls[name] = self.rng.sample(self.live_functions(), min(len(self.where), 2))
            self.where[name] = path
        elif choice < 0.7 and len(spec.functions) > 1:  # one function removed
            gone = spec.functions.pop(self.rng.randrange(len(spec.functions)))
            del spec.calls[gone], self.where[gone]
        self.write(spec)

    def delete_file(self, path: str) -> None:
        spec = self.files.pop(path)
        for f in spec.functions:
            del self.where[f]
        (self.root / path).unlink()

    def mutate(self, changes: int) -> list[str]:
        """Edit, add and delete files, `changes` in all; what was done, one word per change."""
        with self.lock:
            done = []
            for _ in range(changes):
                roll = self.rng.random()
                if roll < 0.6 or len(self.files) < 20:
                    self.edit_file(self.rng.choice(sorted(self.files)))
                    done.append("edit")
                elif roll < 0.8:
                    self.add_file()
                    done.append("add")
                else:
                    self.delete_file(self.rng.choice(sorted(self.files)))
                    done.append("delete")
            return done

    def rewrite_all(self) -> None:
        """Change every file (a new version of each), plus one file added and one deleted."""
        with self.lock:
            for spec in self.files.values():
                spec.version += 1
                self.write(spec)
            self.add_file()
            self.delete_file(self.rng.choice(sorted(self.files)))

    def write(self, spec: SourceFile) -> None:
        target = self.root / spec.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(spec, self))

    def state(self) -> dict[str, str]:
        """SHA-256 of every file of the tree, by relative path, read from disk."""
        found = {}
        for folder, _, names in os.walk(self.root):
            for name in names:
                path = Path(folder) / name
                found[path.relative_to(self.root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        return found


def render(spec: SourceFile, repo: SyntheticRepo) -> str:
    folder, stem = spec.path.split("/")[0], spec.path.split("/")[1].rsplit(".", 1)[0]
    rng = random.Random(f"{spec.path}:{spec.version}")
    phrase = " ".join(rng.choice(WORDS) for _ in range(4))
    header = f"{stem} revision {spec.version}: {phrase}"
    body = []
    for f in spec.functions:
        literal = f"{f.upper()}_R{spec.version}"
        limit = rng.randint(2, 99)
        calls = spec.calls[f]
        doc = f"{rng.choice(WORDS).capitalize()} the {rng.choice(WORDS)} for {f}."
        body.append(function_source(spec.ext, f, calls, literal, limit, doc))
    if spec.ext == "py":
        imports = sorted({(repo.where[c], c) for f in spec.functions for c in spec.calls[f]
                          if c in repo.where and repo.where[c].endswith(".py") and repo.where[c] != spec.path})
        lines = [f"from {p[:-3].replace('/', '.')} import {c}" for p, c in imports]
        return f'"""{header}."""\n\n' + "\n".join(lines) + "\n\n\n" + "\n\n".join(body)
    if spec.ext == "js":
        imports = sorted({(repo.where[c], c) for f in spec.functions for c in spec.calls[f]
                          if c in repo.where and repo.where[c].endswith(".js") and repo.where[c] != spec.path})
        lines = [f'import {{ {c} }} from "{os.path.relpath(p, folder)}";' for p, c in imports]
        return f"// {header}\n" + "\n".join(lines) + "\n\n" + "\n".join(body)
    if spec.ext == "go":
        return f"// {header}\npackage {folder}\n\n" + "\n".join(body)
    if spec.ext == "rs":
        return f"//! {header}\n\n" + "\n".join(body)
    if spec.ext == "java":
        name = "".join(part.capitalize() for part in stem.split("_"))
        inner = "\n".join("    " + line if line else "" for b in body for line in b.splitlines())
        return f"// {header}\npackage {folder};\n\npublic class {name} {{\n{inner}\n}}\n"
    if spec.ext == "c":
        return f"/* {header} */\n#include <string.h>\n\n" + "\n".join(body)
    name = "".join(part.capitalize() for part in stem.split("_"))
    inner = "\n".join("  " + line if line else "" for b in body for line in b.splitlines())
    return f"# {header}\nmodule {name}\n{inner}\nend\n"


#: Per language: (one call's line, the function around them). The calls go in at {steps};
#: {f} is the function's name, {doc} its comment, {limit} and {literal} its constants.
FUNCTION_TEMPLATES = {
    "py": ("    total = {c}(total, limit)\n",
           'def {f}(value, limit={limit}):\n    """{doc}"""\n    total = value\n{steps}'
           '    if total > limit:\n        return "{literal}"\n    return total\n'),
    "js": ("  total = {c}(total, limit);\n",
           "/** {doc} */\nexport function {f}(value, limit = {limit}) {{\n  let total = value;\n{steps}"
           '  if (total > limit) {{\n    return "{literal}";\n  }}\n  return total;\n}}\n'),
    "go": ("\ttotal = {c}(total, limit)\n",
           "// {f}: {doc}\nfunc {f}(value int, limit int) int {{\n\ttotal := value + {limit}\n{steps}"
           '\tif total > limit {{\n\t\treturn len("{literal}")\n\t}}\n\treturn total\n}}\n'),
    "rs": ("    total = {c}(total, limit);\n",
           "/// {doc}\npub fn {f}(value: i64, limit: i64) -> i64 {{\n    let mut total = value + {limit};\n{steps}"
           '    if total > limit {{\n        return "{literal}".len() as i64;\n    }}\n    total\n}}\n'),
    "java": ("    total = {c}(total, limit);\n",
             "/** {doc} */\npublic static int {f}(int value, int limit) {{\n    int total = value + {limit};\n{steps}"
             '    if (total > limit) {{\n        return "{literal}".length();\n    }}\n    return total;\n}}\n'),
    "c": ("    total = {c}(total, limit);\n",
          "/* {doc} */\nint {f}(int value, int limit) {{\n    int total = value + {limit};\n{steps}"
          '    if (total > limit) {{\n        return (int)strlen("{literal}");\n    }}\n    return total;\n}}\n'),
    "rb": ("  total = {c}(total, limit)\n",
           "# {doc}\ndef self.{f}(value, limit = {limit})\n  total = value\n{steps}"
           '  if total > limit\n    return "{literal}"\n  end\n  total\nend\n'),
}


def function_source(ext: str, f: str, calls: list[str], literal: str, limit: int, doc: str) -> str:
    call, function = FUNCTION_TEMPLATES[ext]
    steps = "".join(call.format(c=c) for c in calls)
    return function.format(f=f, doc=doc, limit=limit, literal=literal, steps=steps)


# Child processes ------------------------------------------------------------------------------

_children: set[subprocess.Popen] = set()
_children_lock = threading.Lock()


def spawn(args: list[str], stderr=subprocess.PIPE) -> subprocess.Popen:
    """`python -m maguyva ARGS` in a process group of its own (so a kill takes its helpers too)."""
    process = subprocess.Popen([sys.executable, "-m", "maguyva", *args], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)  # fmt: skip
    with _children_lock:
        _children.add(process)
    return process


def kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def reap(process: subprocess.Popen) -> None:
    with _children_lock:
        _children.discard(process)


def kill_children() -> None:
    with _children_lock:
        running = list(_children)
    for process in running:
        if process.poll() is None:
            kill_group(process)
        with contextlib.suppress(Exception):
            process.wait(timeout=10)
        reap(process)


@dataclass
class Run:
    rc: int | None  # None: hung, killed after CLI_TIMEOUT
    out: str
    err: str
    seconds: float

    def error_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]

    def one_line_error(self) -> bool:
        """Exit 2 with exactly one line on stderr, the command's own, and no traceback."""
        lines = self.error_lines()
        return self.rc == 2 and len(lines) == 1 and lines[0].startswith("maguyva:") and "Traceback" not in self.err

    def refused(self) -> bool:
        return self.one_line_error() and LOCKED in self.err

    def describe(self) -> list[str]:
        lines = self.error_lines()
        shown = lines if len(lines) <= 4 else [*lines[:1], "...", *lines[-3:]]
        return [f"exit {self.rc if self.rc is not None else 'hung'} after {self.seconds:.1f} s", *shown]


def cli(*args: str, timeout: float = CLI_TIMEOUT) -> Run:
    return finish(spawn([str(a) for a in args]), time.perf_counter(), timeout)


def finish(process: subprocess.Popen, started: float, timeout: float = CLI_TIMEOUT) -> Run:
    """Wait for a spawned command (killed, with its group, past `timeout`: rc None) and reap it."""
    try:
        out, err = process.communicate(timeout=timeout)
        rc = process.returncode
    except subprocess.TimeoutExpired:
        kill_group(process)
        out, err = process.communicate()
        rc = None
    finally:
        reap(process)
    return Run(rc, out.decode(errors="replace"), err.decode(errors="replace"), time.perf_counter() - started)


# Looking at an index --------------------------------------------------------------------------

_model = None


def model():
    """One embedder for every index opened here (loaded once, safe to share between threads)."""
    global _model
    if _model is None:
        from maguyva.embed import make_embedder

        _model = make_embedder("local")
    return _model


def queries_for(repo: SyntheticRepo) -> list[str]:
    functions = repo.live_functions()
    return [f"where is {functions[len(functions) // 3]} defined", NATURAL_QUERY]


def fingerprint(root: Path, index_dir: Path, queries: list[str]) -> dict | None:
    """What an index holds, as one comparable value; None when there is no index. Raises when
    the index cannot be opened or read."""
    from maguyva import Index
    from maguyva.index.store import IndexNotFoundError

    try:
        index = Index.open(root, index_dir=index_dir, embedder=model)
    except IndexNotFoundError:
        return None
    with index:
        reader = index.reader
        files = [list(row) for row in sorted(reader.sql("SELECT path, sha256, size FROM files"))]
        counts = {"symbols": len(reader.symbol_locations), "edges": len(reader.edges)}
        answers = []
        for query in queries:
            answers.append([[h.path, h.start_line, h.end_line] for h in index.search(query, top_k=5).results])
    return {"files": files, "chunks": int(len(reader.chunk_file)), **counts, "answers": answers}


def digest(fp: dict | None) -> str:
    return "absent" if fp is None else hashlib.sha256(json.dumps(fp).encode()).hexdigest()[:10]


def difference(got: dict | None, want: dict | None) -> str:
    """How two fingerprints differ, in a few words."""
    if got is None or want is None:
        return f"{'no index' if got is None else 'an index'} where {'none' if want is None else 'one'} was expected"
    parts = []
    mine, theirs = {tuple(f) for f in got["files"]}, {tuple(f) for f in want["files"]}
    if mine != theirs:
        parts.append(f"{len(theirs - mine)} files missing or stale, {len(mine - theirs)} unexpected")
    for key in ("chunks", "symbols", "edges"):
        if got[key] != want[key]:
            parts.append(f"{key} {got[key]} not {want[key]}")
    if got["answers"] != want["answers"]:
        parts.append("search answers differ")
    return "; ".join(parts) or "equal"


def lost_files(root_state: dict[str, str], fp: dict | None) -> list[str]:
    """Files of the tree the index lacks or holds at other content, and files it holds that the
    tree no longer has."""
    indexed = {} if fp is None else {path: sha for path, sha, _ in fp["files"]}
    lost = [p for p, sha in root_state.items() if indexed.get(p) != sha]
    ghosts = [p for p in indexed if p not in root_state]
    return sorted(lost) + [f"{p} (deleted, still indexed)" for p in sorted(ghosts)]


_GENERATION = re.compile(r"gen-\d+")


def generations(index_dir: Path) -> set[str]:
    with contextlib.suppress(FileNotFoundError):
        return {e.name for e in os.scandir(index_dir) if _GENERATION.fullmatch(e.name)}
    return set()


def layout(index_dir: Path) -> tuple[Counter, int, set[str]]:
    """An index folder's entries with digits blurred: top-level names, number of generation
    folders, names found inside the generation folders."""
    top, inner, count = Counter(), set(), 0
    for entry in os.scandir(index_dir):
        if _GENERATION.fullmatch(entry.name) and entry.is_dir():
            count += 1
            inner.update(re.sub(r"\d+", "N", name) for name in os.listdir(entry.path))
        else:
            top[re.sub(r"\d+", "N", entry.name)] += 1
    return top, count, inner


def leftovers(index_dir: Path, reference: Path) -> list[str]:
    """What `index_dir` holds beyond what a folder that never saw a crash (`reference`, built
    by the same code) holds: stray files, extra generation folders. Independent of the exact
    file list of the layout."""
    top, count, inner = layout(index_dir)
    ref_top, ref_count, ref_inner = layout(reference)
    extra = [f"{name} (x{n})" for name, n in (top - ref_top).items()]
    extra += [f"gen-*/{name}" for name in sorted(inner - ref_inner)]
    if count > ref_count:
        extra.append(f"{count - ref_count} extra generation folder(s)")
    return extra


def check_next_build(result: Scenario, trial: str, what: str, repo: SyntheticRepo, index_dir: Path, queries: list[str],
                     reference: Path, new: dict) -> tuple[Run, dict]:
    """Run `maguyva index` after a fault and check it: it succeeds, loses no file, equals the
    reference state `new` and leaves nothing behind. The build's run, and the state to expect
    from now on."""
    again = cli("index", repo.root, "--index-dir", index_dir, "--quiet")
    if again.rc != 0:
        result.fail(trial, f"{what} failed", again.describe())
    try:
        current = fingerprint(repo.root, index_dir, queries)
    except Exception as err:  # noqa: BLE001
        result.fail(trial, f"the index does not open after {what}", [f"{type(err).__name__}: {err}"])
        current = None
    lost = lost_files(repo.state(), current)
    if lost:
        result.lost += len(lost)
        result.fail(trial, f"{len(lost)} files lost after {what}", lost[:5])
    elif current != new:
        result.fail(trial, f"{what} does not equal the reference build", [difference(current, new)])
    extra = leftovers(index_dir, reference)
    if extra:
        result.leftovers += len(extra)
        result.fail(trial, f"leftovers after {what}", extra)
    return again, new if current is None else current


def build_reference(root: Path, reference: Path, queries: list[str]) -> dict:
    """Bring the reference index (never interrupted) up to the tree; its fingerprint."""
    from maguyva import Index

    Index.build(root, index_dir=reference, embedder=model()).close()
    return fingerprint(root, reference, queries)


# Results --------------------------------------------------------------------------------------


@dataclass
class Scenario:
    name: str
    trials: int = 0
    failures: int = 0
    lost: int = 0
    leftovers: int = 0
    skipped: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)
    figures: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def fail(self, trial: str, what: str, lines: list[str] | None = None) -> None:
        with self._lock:
            self.failures += 1
            self.failed.append({"trial": trial, "what": what, "lines": [line[:300] for line in (lines or [])[:8]]})

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}


class Deadline:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def passed(self) -> bool:
        return time.monotonic() >= self.end


# 1. kill -9 during builds --------------------------------------------------------------------


@dataclass
class Kill:
    kind: str
    mode: str
    delay_ms: float
    fraction: float  # of the kind's typical duration
    phase: str
    landed: bool


def scenario_kills(work: Path, args: argparse.Namespace, rng: random.Random, deadline: Deadline) -> Scenario:
    result = Scenario("1 kill -9 during builds")
    repo = SyntheticRepo(work / "repo", random.Random(rng.random()))
    repo.create(args.files)
    index_dir, reference = work / "index", work / "reference"
    queries = queries_for(repo)
    first = cli("index", repo.root, "--index-dir", index_dir, "--quiet")
    if first.rc != 0:
        result.fail("setup", "the first build failed", first.describe())
        return result
    current = fingerprint(repo.root, index_dir, queries)
    if len(current["files"]) != len(repo.files):
        result.fail("setup", f"{len(current['files'])} of {len(repo.files)} generated files indexed")
        return result
    build_reference(repo.root, reference, queries)
    has_rebuild = "--rebuild" in cli("index", "--help").out
    kinds = {"incremental": 0.45, "full": 0.2, "first": 0.15}
    if has_rebuild:
        kinds["rebuild"] = 0.2
    else:
        result.notes.append("`maguyva index` has no --rebuild: full builds are forced by changing every file")
    durations: dict[str, list[float]] = {k: [] for k in kinds}
    writes: dict[str, list[float]] = {k: [] for k in kinds}  # generation folder seen -> exit
    kills: list[Kill] = []
    calibrations = args.calibrations
    schedule = [k for k in kinds for _ in range(calibrations)]
    target, attempts = args.trials, 0
    while not deadline.passed():
        landed = sum(k.landed for k in kills)
        if not schedule and (landed >= target or attempts >= 2 * target):
            break
        kind = schedule.pop(0) if schedule else rng.choices(list(kinds), weights=list(kinds.values()))[0]
        calibrating = len(durations[kind]) < calibrations
        trial = f"{'calibration' if calibrating else 'kill'} {result.trials + 1} ({kind})"
        result.trials += 1
        attempts += 0 if calibrating else 1

        # The change, and the two states the index may be in afterwards.
        if kind == "full":
            repo.rewrite_all()
        else:
            repo.mutate(rng.randint(1, 5))
        old = None if kind == "first" else current
        new = build_reference(repo.root, reference, queries)
        if new == old:
            result.notes.append(f"{trial}: the change left the fingerprint as it was: old and new look alike")
        if kind == "first":
            shutil.rmtree(index_dir)
        command = ["index", repo.root, "--index-dir", index_dir, "--quiet"]
        if kind == "rebuild":
            command.append("--rebuild")

        # The build, killed at a random moment (or, calibrating, left to finish).
        before = generations(index_dir)
        mode, delay = "none", float("inf")
        if not calibrating:
            typical = statistics.median(durations[kind][-RECENT:])
            if rng.random() < 0.25 and writes[kind]:
                mode, delay = "write", rng.uniform(0, 1.5 * statistics.median(writes[kind][-RECENT:]))
            else:
                mode, delay = "uniform", rng.uniform(0, typical)
        with tempfile.TemporaryFile() as err:
            process = spawn(command, stderr=err)
            started = time.perf_counter()
            seen_generation = None
            try:
                while process.poll() is None:
                    now = time.perf_counter() - started
                    if seen_generation is None and generations(index_dir) - before:
                        seen_generation = now
                    due = delay if mode != "write" else None if seen_generation is None else seen_generation + delay
                    if due is not None and now >= due:
                        break
                    if now > CLI_TIMEOUT:
                        break
                    time.sleep(0.001)
                killed_at = time.perf_counter() - started
                if process.poll() is None:
                    kill_group(process)
                process.wait()
            finally:
                reap(process)
            elapsed = time.perf_counter() - started
            err.seek(0)
            run = Run(process.returncode, "", err.read().decode(errors="replace"), elapsed)
        landed_kill = run.rc == -signal.SIGKILL
        if calibrating and run.rc != 0:
            result.fail(trial, "an unkilled build failed", run.describe())
        if run.rc == 0:  # every build that finished is a sample of the kind's duration
            durations[kind].append(elapsed)
            if seen_generation is not None:
                writes[kind].append(elapsed - seen_generation)
        if not calibrating and not landed_kill and run.rc != 0:
            result.fail(trial, "the build failed before the kill", run.describe())

        # The index as the kill left it: old or new, nothing else.
        try:
            after = fingerprint(repo.root, index_dir, queries)
        except Exception as err:  # noqa: BLE001 - any error here is the finding
            result.fail(trial, "the index does not open after the kill", [f"{type(err).__name__}: {err}"])
            after = "unreadable"
        if after != "unreadable":
            if after == new:
                # Killed after the swap of CURRENT: before or after the older generation went.
                phase = "published" if len(generations(index_dir)) == 1 else "published, not yet collected"
            elif after == old:
                phase = "writing" if seen_generation is not None else "before write"
            else:
                phase = "neither"
                result.fail(trial, "after the kill the index is neither the old nor the new state",
                            [f"vs old: {difference(after, old)}", f"vs new: {difference(after, new)}"])
        else:
            phase = "unreadable"
        if not calibrating:
            outcome = phase if landed_kill else "completed"
            kills.append(Kill(kind, mode, killed_at * 1e3, killed_at / typical, outcome, landed_kill))

        # The next build: it succeeds and gives the new state, every file at its content.
        again, current = check_next_build(result, trial, "the next build", repo, index_dir, queries, reference, new)
        if again.rc == 0 and landed_kill and after == old and kind != "rebuild":
            # It did the killed build's work again from the same start: a sample of its duration
            # that, unlike builds finishing before their kill, is not biased towards short ones.
            durations[kind].append(again.seconds)

    landed = [k for k in kills if k.landed]
    result.figures = {
        "has_rebuild": has_rebuild,
        "typical_build_s": {k: round(statistics.median(v), 3) for k, v in durations.items() if v},
        "typical_write_s": {k: round(statistics.median(v), 3) for k, v in writes.items() if v},
        "kill_attempts": len(kills),
        "kills_landed": len(landed),
        "completed_before_kill": len(kills) - len(landed),
        "by_kind": {k: dict(Counter(x.phase for x in kills if x.kind == k)) for k in kinds},
        "by_mode": dict(Counter(k.mode for k in landed)),
        "phases": dict(Counter(k.phase for k in landed)),
        "kill_ms": quantiles([k.delay_ms for k in landed]),
        "kill_fraction_histogram": histogram([k.fraction for k in landed]),
        "kills": [k.__dict__ for k in kills],
    }
    if landed and len(landed) < target:
        result.notes.append(f"only {len(landed)} kills landed (target {target}): time limit or builds finishing first")
    return result


def quantiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    pick = lambda q: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)  # noqa: E731
    return {"min": round(ordered[0], 1), "p10": pick(0.1), "median": pick(0.5), "p90": pick(0.9),
            "max": round(ordered[-1], 1)}  # fmt: skip


def histogram(fractions: list[float]) -> dict[str, int]:
    """Kill moments in tenths of the typical build duration (the last bin: beyond it)."""
    bins = Counter(min(int(f * 10), 10) for f in fractions)
    return {(f"{b / 10:.1f}-{(b + 1) / 10:.1f}" if b < 10 else ">1.0"): bins[b] for b in range(11)}


# 2. Concurrent builders and readers -----------------------------------------------------------


class Activity:
    """Builds running now, and how many have started, to tell which searches overlapped one."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running = 0
        self.started = 0

    def begin(self) -> None:
        with self.lock:
            self.running += 1
            self.started += 1

    def end(self) -> None:
        with self.lock:
            self.running -= 1

    def snapshot(self) -> tuple[int, int]:
        with self.lock:
            return self.running, self.started


def scenario_concurrency(work: Path, args: argparse.Namespace, rng: random.Random, deadline: Deadline) -> Scenario:
    from maguyva import Index

    result = Scenario("2 concurrent builders and readers")
    repo = SyntheticRepo(work / "repo", random.Random(rng.random()))
    repo.create(args.files)
    index_dir, reference = work / "index", work / "reference"
    first = cli("index", repo.root, "--index-dir", index_dir, "--quiet")
    if first.rc != 0:
        result.fail("setup", "the first build failed", first.describe())
        return result
    functions = repo.live_functions()
    questions = [f"where is {functions[i]} defined" for i in range(0, len(functions), max(1, len(functions) // 6))]
    questions += [NATURAL_QUERY, f"who calls {functions[1]}", f'"{functions[2].upper()}_R0"']
    target = args.searches
    stop = threading.Event()
    activity = Activity()
    counts = Counter()
    counts_lock = threading.Lock()

    def count(key: str, n: int = 1) -> None:
        with counts_lock:
            counts[key] += n

    def overlapped(before: tuple[int, int]) -> bool:
        running, started = activity.snapshot()
        return before[0] > 0 or running > 0 or started != before[1]

    def check_answer(results: object) -> str | None:
        if not isinstance(results, list):
            return "results is not a list"
        for hit in results:
            path, start, end = hit["path"], hit["start_line"], hit["end_line"]
            if path not in repo.ever:
                return f"a result names a file that never existed: {path!r}"
            if not (isinstance(start, int) and isinstance(end, int) and 1 <= start <= end):
                return f"a result has lines {start!r}-{end!r}"
        return None

    def builders(local: random.Random) -> None:
        while not stop.is_set():
            repo.mutate(local.randint(1, 3))
            processes = []
            for _ in range(local.randint(1, 3)):
                activity.begin()
                command = ["index", str(repo.root), "--index-dir", str(index_dir), "--quiet"]
                processes.append((spawn(command), time.perf_counter()))
                time.sleep(local.uniform(0, 0.05))
            if local.random() < 0.5:  # files changing under a running build
                time.sleep(local.uniform(0, 0.5))
                repo.mutate(1)
            for process, started in processes:
                try:
                    run = finish(process, started)
                finally:
                    activity.end()
                if run.rc == 0:
                    count("builds ok")
                elif run.refused():
                    count("builds refused (locked)")
                else:
                    count("builds failed")
                    result.fail(f"build {sum(v for k, v in counts.items() if k.startswith('builds'))}",
                                "a concurrent build failed", run.describe())
            stop.wait(local.uniform(0, 0.3))

    def cli_reader(local: random.Random) -> None:
        while not stop.is_set():
            question = local.choice(questions)
            before = activity.snapshot()
            run = cli("search", question, repo.root, "--index-dir", index_dir, "--json", "--top-k", "5")
            during = overlapped(before)
            count("cli searches")
            count("cli searches during a build", during)
            problem = None
            if run.rc == 0:
                try:
                    problem = check_answer(json.loads(run.out)["results"])
                except (ValueError, KeyError, TypeError) as err:
                    problem = f"malformed JSON output ({type(err).__name__}: {err})"
                if problem is None and "Traceback" in run.err:
                    problem = "a traceback on stderr"
                if problem is None and run.error_lines():
                    count("cli searches with a warning")
            elif run.refused():
                count("cli searches refused (locked)")
            else:
                problem = "exit status"
            if problem:
                count("cli searches failed")
                result.fail(f"cli search {counts['cli searches']}", f"maguyva search: {problem}", run.describe())

    def api_reader(local: random.Random) -> None:
        while not stop.is_set():
            question = local.choice(questions)
            before = activity.snapshot()
            problem = None
            try:
                with Index.open(repo.root, index_dir=index_dir, embedder=model) as index:
                    response = index.search(question, top_k=5)
                problem = check_answer([{"path": h.path, "start_line": h.start_line, "end_line": h.end_line}
                                        for h in response.results])
            except Exception as err:  # noqa: BLE001 - every error is the finding
                problem = f"{type(err).__name__}: {err}"
            during = overlapped(before)
            count("api searches")
            count("api searches during a build", during)
            if problem:
                count("api searches failed")
                result.fail(f"api search {counts['api searches']}",
                            "Index.open(...).search(...) raised or answered wrongly", [problem])

    # One search in this thread first: the model is loaded and every module the query path
    # imports lazily is imported once, not compiled by several reader threads at once.
    with Index.open(repo.root, index_dir=index_dir, embedder=model) as index:
        for question in questions:
            index.search(question, top_k=5)
    threads = [threading.Thread(target=builders, args=(random.Random(rng.random()),), daemon=True)]
    threads += [threading.Thread(target=cli_reader, args=(random.Random(rng.random()),), daemon=True)]
    threads += [threading.Thread(target=api_reader, args=(random.Random(rng.random()),), daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        while not deadline.passed():
            with counts_lock:
                during = counts["cli searches during a build"] + counts["api searches during a build"]
                builds = sum(v for k, v in counts.items() if k.startswith("builds"))
            if during >= target and builds >= max(10, target // 20):
                break
            time.sleep(0.2)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=CLI_TIMEOUT + 10)
    if deadline.passed():
        result.notes.append("stopped by the time limit")

    # Quiet again: one build must give the final tree, nothing lost.
    final = cli("index", repo.root, "--index-dir", index_dir, "--quiet")
    if final.rc != 0:
        result.fail("final build", "the build after the storm failed", final.describe())
    queries = queries_for(repo)
    want = build_reference(repo.root, reference, queries)
    try:
        got = fingerprint(repo.root, index_dir, queries)
    except Exception as err:  # noqa: BLE001
        result.fail("final build", "the index does not open after the storm", [f"{type(err).__name__}: {err}"])
        got = None
    lost = lost_files(repo.state(), got)
    result.lost = len(lost)
    if lost:
        result.fail("final build", f"{len(lost)} files lost", lost[:5])
    elif got != want:
        result.fail("final build", "the final index does not equal the reference build", [difference(got, want)])
    extra = leftovers(index_dir, reference)
    result.leftovers = len(extra)
    if extra:
        result.fail("final build", "leftovers after the final build", extra)
    builds = sum(v for k, v in counts.items() if k.startswith("builds"))
    result.trials = counts["cli searches"] + counts["api searches"] + builds
    result.figures = dict(sorted(counts.items()))
    return result


# 3 and 4. A small tmpfs for the index ---------------------------------------------------------


@contextlib.contextmanager
def tmpfs(mount_point: Path, size_kb: int):
    """A tmpfs of `size_kb` at `mount_point`, always unmounted afterwards; yields None when it
    cannot be mounted (not root, no permission in a container)."""
    mount_point.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(mount_point)],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        yield None, (done.stderr.strip() or f"mount exited {done.returncode}")
        return
    try:
        yield mount_point, None
    finally:
        kill_children()  # nothing of ours may keep the mount busy
        if subprocess.run(["umount", str(mount_point)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def remount(mount_point: Path, mode: str) -> str | None:
    """Remount read-only or read-write; why not, or None. A read-only remount is refused while
    any file of the mount is open for writing or deleted but still open (memory maps of a
    collected generation this process no longer uses are released first)."""
    for _ in range(20):
        gc.collect()
        done = subprocess.run(["mount", "-o", f"remount,{mode}", str(mount_point)], capture_output=True, text=True)
        if done.returncode == 0:
            return None
        time.sleep(0.25)
    return done.stderr.strip() or f"mount exited {done.returncode}"


def generation_bytes(index_dir: Path) -> int:
    sizes = [sum(f.stat().st_size for f in (index_dir / g).iterdir()) for g in generations(index_dir)]
    return max(sizes, default=0)


def free_bytes(path: Path) -> int:
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize


def fill(mount_point: Path, leave: int) -> int:
    """Write a filler file so that about `leave` bytes stay free; the filler's size."""
    filler = mount_point / "filler"
    want = max(0, free_bytes(mount_point) - leave)
    with open(filler, "ab") as out:
        block = b"\0" * (1 << 16)
        written = 0
        while written < want:
            try:
                written += out.write(block[: min(len(block), want - written)])
                out.flush()
            except OSError:  # the disk is full already
                break
    return filler.stat().st_size


def small_disk_setup(work: Path, args: argparse.Namespace,
                     rng: random.Random) -> tuple[SyntheticRepo, Path, list[str], int]:
    """A new repository, its reference index and questions, and a tmpfs size (KB) that holds a
    few generations of it: what scenarios 3 and 4 start from."""
    repo = SyntheticRepo(work / "repo", random.Random(rng.random()))
    repo.create(args.files)
    reference = work / "reference"
    queries = queries_for(repo)
    build_reference(repo.root, reference, queries)
    return repo, reference, queries, max(4096, 4 * generation_bytes(reference) // 1024)


def scenario_disk_full(work: Path, args: argparse.Namespace, rng: random.Random, deadline: Deadline) -> Scenario:
    result = Scenario("3 disk full")
    repo, reference, queries, size_kb = small_disk_setup(work, args, rng)
    levels = args.disk_levels
    with tmpfs(work / "mnt", size_kb) as (mount_point, why):
        if mount_point is None:
            result.skipped = levels
            result.notes.append(f"skipped: cannot mount a tmpfs ({why})")
            return result
        index_dir = mount_point / "index"
        first = cli("index", repo.root, "--index-dir", index_dir, "--quiet")
        if first.rc != 0:
            result.fail("setup", "the first build on the tmpfs failed", first.describe())
            return result
        old = fingerprint(repo.root, index_dir, queries)
        outcomes = []
        for n in range(levels):
            if deadline.passed():
                result.notes.append(f"stopped by the time limit after {n} levels")
                break
            result.trials += 1
            trial = f"level {n + 1}"
            if n % 2:
                repo.rewrite_all()
            else:
                repo.mutate(rng.randint(1, 5))
            new = build_reference(repo.root, reference, queries)
            needed = generation_bytes(reference)
            # Free space stratified over 0 .. 1.25 times the new generation's final size: every
            # point of its write, and near the top enough for it (the build must then succeed).
            level = 0.0 if n == 0 else (n - 1 + rng.random()) / max(1, levels - 1) * 1.25
            fill(mount_point, int(level * needed))
            left = free_bytes(mount_point)
            try:
                run = cli("index", repo.root, "--index-dir", index_dir, "--quiet")
                try:
                    now = fingerprint(repo.root, index_dir, queries)
                except Exception as err:  # noqa: BLE001
                    now = f"{type(err).__name__}: {err}"
                junk = leftovers(index_dir, reference)
            finally:
                (mount_point / "filler").unlink(missing_ok=True)
            outcome = {"level": round(level, 3), "free_kb": left // 1024, "needed_kb": needed // 1024, "rc": run.rc,
                       "error": (run.error_lines() or [""])[-1][:200], "junk_after_failure": junk}  # fmt: skip
            outcomes.append(outcome)
            if run.rc == 0:
                outcome["result"] = "space sufficed"
                if now != new:
                    result.fail(trial, "a build that succeeded on a nearly full disk gave the wrong state",
                                [difference(now, new) if isinstance(now, dict) else now])
            else:
                outcome["result"] = "out of space"
                if not run.one_line_error():
                    result.fail(trial, f"with {left // 1024} KB free: not a one-line error with exit 2", run.describe())
                if now != old:
                    result.fail(trial, "the old index changed or does not open after the failed build",
                                [now if isinstance(now, str) else difference(now, old)])
            _, old = check_next_build(result, trial, "the build after freeing space", repo, index_dir, queries,
                                      reference, new)
    result.figures = {"tmpfs_kb": size_kb, "levels": outcomes,
                      "out_of_space": sum(o["result"] == "out of space" for o in outcomes),
                      "space_sufficed": sum(o["result"] == "space sufficed" for o in outcomes),
                      "errors": dict(Counter(re.sub(r"'[^']*'|/\S+", "…", o["error"])
                                             for o in outcomes if o["rc"]))}  # fmt: skip
    return result


def scenario_read_only(work: Path, args: argparse.Namespace, rng: random.Random, deadline: Deadline) -> Scenario:
    result = Scenario("4 read-only index folder")
    repo, reference, queries, size_kb = small_disk_setup(work, args, rng)
    with tmpfs(work / "mnt", size_kb) as (mount_point, why):
        if mount_point is None:
            result.skipped = args.ro_trials
            result.notes.append(f"skipped: cannot mount a tmpfs ({why})")
            return result
        index_dir = mount_point / "index"
        outcomes = Counter()
        for n in range(args.ro_trials):
            if deadline.passed():
                result.notes.append(f"stopped by the time limit after {n} trials")
                break
            result.trials += 1
            trial = f"trial {n + 1}"
            built = cli("index", repo.root, "--index-dir", index_dir, "--quiet")
            if built.rc != 0:
                result.fail(trial, "the build before the remount failed", built.describe())
                continue
            old = fingerprint(repo.root, index_dir, queries)
            old_paths = {path for path, _, _ in old["files"]}
            question = f"where is {rng.choice(repo.live_functions())} defined"
            refused = remount(mount_point, "ro")
            if refused:
                result.trials -= 1
                result.skipped += 1
                result.notes.append(f"{trial} skipped: cannot remount read-only ({refused})")
                continue
            try:
                repo.mutate(rng.randint(1, 5))
                # Both forms of the answer: the text one and --json; each must answer from the
                # intact index (exit 0) and warn on stderr that it may be stale.
                for form in ("text", "json"):
                    extra_args = ["--json"] if form == "json" else []
                    search = cli("search", question, repo.root, "--index-dir", index_dir, "--top-k", "5", *extra_args)
                    outcomes[f"search ({form}) exit {search.rc}"] += 1
                    problem = None
                    if search.rc != 0:
                        problem = "did not answer (expected: exit 0, the intact index's answer, a warning)"
                    elif form == "json":
                        try:
                            paths = [hit["path"] for hit in json.loads(search.out)["results"]]
                            if not set(paths) <= old_paths:
                                problem = "answered with files the intact index does not hold"
                        except (ValueError, KeyError, TypeError) as err:
                            problem = f"malformed JSON output ({type(err).__name__})"
                    elif not search.out.strip():
                        problem = "printed no answer"
                    if problem is None and "Traceback" in search.err:
                        problem = "a traceback on stderr"
                    if problem is None and not search.error_lines():
                        problem = "no warning on stderr that the answer may be stale"
                    if problem:
                        result.fail(trial, f"maguyva search{' --json' if form == 'json' else ''} on a read-only "
                                    f"index: {problem}", search.describe())
                index = cli("index", repo.root, "--index-dir", index_dir, "--quiet")
                outcomes[f"index exit {index.rc}"] += 1
                if not index.one_line_error():
                    result.fail(trial, "maguyva index on a read-only index: not a one-line error with exit 2",
                                index.describe())
                try:
                    still = fingerprint(repo.root, index_dir, queries)
                except Exception as err:  # noqa: BLE001
                    still = f"{type(err).__name__}: {err}"
                if still != old:
                    kept = set() if isinstance(still, str) else {tuple(f) for f in still["files"]}
                    result.lost += len({tuple(f) for f in old["files"]} - kept)
                    result.fail(trial, "the read-only index no longer opens or answers as before",
                                [still if isinstance(still, str) else difference(still, old)])
            finally:
                if refused := remount(mount_point, "rw"):
                    raise RuntimeError(f"cannot remount {mount_point} read-write: {refused}")
            new = build_reference(repo.root, reference, queries)
            again = cli("index", repo.root, "--index-dir", index_dir, "--quiet")
            if again.rc != 0:
                result.fail(trial, "the build after the remount read-write failed", again.describe())
            now = fingerprint(repo.root, index_dir, queries)
            lost = lost_files(repo.state(), now)
            if lost:
                result.lost += len(lost)
                result.fail(trial, f"{len(lost)} files lost after the remount read-write", lost[:5])
            elif now != new:
                result.fail(trial, "the build after the remount does not equal the reference", [difference(now, new)])
            extra = leftovers(index_dir, reference)
            if extra:
                result.leftovers += len(extra)
                result.fail(trial, "leftovers after the build that followed", extra)
        result.figures = dict(outcomes)
    return result


# Report ---------------------------------------------------------------------------------------


def report(scenarios: list[Scenario], total: float) -> None:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nmaguyva torture: {os.cpu_count()} cores, load average {load} at the end, {total:.0f} s in all")
    header = (f"{'scenario':<36} {'trials':>7} {'failures':>9} {'lost':>5} {'leftovers':>10} "
              f"{'skipped':>8} {'seconds':>8}")
    print()
    print(header)
    print("-" * len(header))
    for s in scenarios:
        print(f"{s.name:<36} {s.trials:>7} {s.failures:>9} {s.lost:>5} {s.leftovers:>10} "
              f"{s.skipped:>8} {s.seconds:>8.1f}")
    print(f"{'total':<36} {'':>7} {sum(s.failures for s in scenarios):>9} {sum(s.lost for s in scenarios):>5} "
          f"{sum(s.leftovers for s in scenarios):>10} {sum(s.skipped for s in scenarios):>8} {total:>8.1f}")
    for s in scenarios:
        print(f"\n{s.name}")
        for note in s.notes:
            print(f"  note: {note}")
        for key, value in s.figures.items():
            if key in ("kills", "levels"):
                continue
            print(f"  {key}: {json.dumps(value) if isinstance(value, (dict, list)) else value}")
        if s.name.startswith("3") and s.figures.get("levels"):
            print("  levels (free KB / needed KB -> exit): " + ", ".join(
                f"{o['free_kb']}/{o['needed_kb']}->{o['rc']}" for o in s.figures["levels"]))
        if s.failed:
            kinds = Counter(f["what"] for f in s.failed)
            print(f"  failures by kind: {json.dumps(dict(kinds))}")
            for f in s.failed[:MAX_SHOWN_FAILURES]:
                print(f"  FAIL {f['trial']}: {f['what']}")
                for line in f["lines"]:
                    print(f"      {line}")
            if len(s.failed) > MAX_SHOWN_FAILURES:
                print(f"  ... and {len(s.failed) - MAX_SHOWN_FAILURES} more")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int,
                        help="kill trials; every other count scales with it (default 100, --quick 20)")
    parser.add_argument("--quick", action="store_true",
                        help="a CI-sized run: 20 kills, 200 searches, a smaller repository")
    parser.add_argument("--files", type=int, help="files in the invented repository (default 300, --quick 80)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the repository, its changes and the kill moments")
    parser.add_argument("--scenarios", default="1234", help="which scenarios to run (default: 1234)")
    parser.add_argument("--time-limit", type=float, help="seconds per scenario (default 1800, --quick 120)")
    parser.add_argument("--json", type=Path, help="also write every figure as JSON here")
    args = parser.parse_args()
    args.trials = args.trials or (20 if args.quick else 100)
    args.files = args.files or (80 if args.quick else 300)
    args.time_limit = args.time_limit or (120.0 if args.quick else 1800.0)
    args.calibrations = 1 if args.quick else 2
    args.searches = 10 * args.trials
    args.disk_levels = max(3, args.trials // 5)
    args.ro_trials = max(2, args.trials // 20)

    started = time.perf_counter()
    scenarios: list[Scenario] = []
    rng = random.Random(args.seed)
    runners = {"1": scenario_kills, "2": scenario_concurrency, "3": scenario_disk_full, "4": scenario_read_only}
    with tempfile.TemporaryDirectory(prefix="maguyva-torture-") as scratch:
        os.environ["MAGUYVA_HOME"] = str(Path(scratch) / "home")  # the embedding cache too
        os.environ.pop("VOYAGE_API_KEY", None)
        try:
            for key, run in runners.items():
                scenario_rng = random.Random(rng.random())  # each scenario its own stream
                if key not in args.scenarios:
                    continue
                clock = time.perf_counter()
                print(f"scenario {key} ...", file=sys.stderr, flush=True)
                outcome = run(Path(scratch) / f"s{key}", args, scenario_rng, Deadline(args.time_limit))
                outcome.seconds = time.perf_counter() - clock
                scenarios.append(outcome)
        finally:
            kill_children()
    total = time.perf_counter() - started
    report(scenarios, total)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        options = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
        args.json.write_text(json.dumps({"options": options, "seconds": round(total, 1),
                                         "scenarios": [s.to_dict() for s in scenarios]}, indent=1))  # fmt: skip
    bad = any(s.failures or s.lost or s.leftovers for s in scenarios)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
