"""Side-by-side benchmark of maguyva's compiled kernels against their usual peers.

Measured in one run, on one machine, so the numbers are comparable with each other:

* memory bandwidth (numpy, one thread), the ceiling for any scan;
* Hamming top-k: maguyva vs faiss IndexBinaryFlat vs a numpy baseline, plus every
  maguyva popcount kernel on its own;
* literal search: maguyva's TrigramIndex vs ripgrep over a corpus of real source code;
* weighted RRF fusion latency.

Every comparison checks that the engines agree before it reports a speed, and exits with
an error if they do not.

Full run:   python benches/kernels.py
Smoke test: python benches/kernels.py --quick
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import faiss
import numpy as np
import numpy.typing as npt

import maguyva

BENCH_DIR = Path(__file__).resolve().parent
T = TypeVar("T")

CORPUS_EXTENSIONS = (
    ".py", ".pyi", ".rs", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh",
    ".go", ".js", ".ts", ".java", ".rb", ".sh", ".toml", ".md", ".txt",
)
MAX_FILE_BYTES = 1 << 20
MANIFEST_VERSION = 1
# Tried in order; the first that occurs in the corpus is the "error string" query.
ERROR_PHRASES = (
    "No such file or directory",
    "Permission denied",
    "Invalid argument",
    "does not exist",
)
IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{5,}")  # 6+ characters: at least 4 trigrams
RARE_MIN_LEN = 12
RARE_MAX_FILES = 5
COMMON_MIN_FRACTION = 0.20
SEARCH_SPEEDUP_TARGET = 20.0
RRF_TARGET_US = 100.0


class BenchmarkError(RuntimeError):
    """The engines disagree, or the setup is unusable: the numbers would mean nothing."""


# Timing ------------------------------------------------------------------------------------


def timed(fn: Callable[[], T], reps: int) -> tuple[float, T]:
    """Median wall time in seconds of `reps` calls after one untimed warm-up call.

    The warm-up result is returned so callers can verify what they timed.
    """
    result = fn()
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), result


def gbps(nbytes: float, seconds: float) -> float:
    return nbytes / seconds / 1e9


# Machine -----------------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def rg_version(rg: str) -> str:
    out = subprocess.run([rg, "--version"], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()[0]


def machine_info(rg: str) -> dict[str, Any]:
    return {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "hamming_kernels": maguyva.hamming_kernels(),
        "hamming_kernel_default": maguyva.hamming_kernels()[-1],
        "python": platform.python_version(),
        "maguyva": maguyva.__version__,
        "numpy": np.__version__,
        "faiss": faiss.__version__,
        "ripgrep": rg_version(rg),
    }


# Memory bandwidth --------------------------------------------------------------------------


@dataclass
class Bandwidth:
    megabytes: int
    copy_gbps: float
    """np.copyto of the array: bytes read + bytes written per second."""
    read_gbps: float
    """np.bitwise_or.reduce over a uint64 view: bytes read per second."""


def measure_bandwidth(megabytes: int, reps: int) -> Bandwidth:
    """Single-thread bandwidth, the reference for the single-thread Hamming scan rate.

    The read pass is an OR-reduction: one SIMD OR per 8 bytes is far cheaper than the load,
    so the pass is bound by memory reads. The copy counts read + written bytes but not the
    write-allocate reads the CPU may add, so it understates the bus traffic.
    """
    words = megabytes * (1 << 20) // 8
    src = np.arange(words, dtype=np.uint64)
    dst = np.empty_like(src)
    copy_s, _ = timed(lambda: np.copyto(dst, src), reps)
    read_s, _ = timed(lambda: np.bitwise_or.reduce(src), reps)
    return Bandwidth(megabytes, gbps(2 * src.nbytes, copy_s), gbps(src.nbytes, read_s))


# Hamming top-k -----------------------------------------------------------------------------

Codes = npt.NDArray[np.uint8]
TopK = tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]  # (rows, distances), 2-D


class NumpyHamming:
    """Exact Hamming top-k in numpy: xor, np.bitwise_count, then the k smallest by
    (distance, row) - the same contract as maguyva. Single-threaded.

    Rows are processed in chunks through preallocated buffers, so the temporaries stay in
    cache instead of allocating a full-size array per query.
    """

    CHUNK_ROWS = 16384

    def __init__(self, codes: Codes) -> None:
        self.words = codes.view(np.uint64)
        chunk = min(self.CHUNK_ROWS, len(codes))
        self.xor = np.empty((chunk, self.words.shape[1]), np.uint64)
        self.counts = np.empty(self.xor.shape, np.uint8)
        self.dist = np.empty(len(codes), np.int32)

    def distances(self, query: Codes) -> npt.NDArray[np.int32]:
        q = query.view(np.uint64)
        for start in range(0, len(self.words), len(self.xor)):
            block = self.words[start : start + len(self.xor)]
            m = len(block)
            np.bitwise_xor(block, q, out=self.xor[:m])
            np.bitwise_count(self.xor[:m], out=self.counts[:m])
            np.sum(self.counts[:m], axis=1, dtype=np.int32, out=self.dist[start : start + m])
        return self.dist

    def top_k(self, queries: Codes, k: int) -> TopK:
        k = min(k, len(self.dist))
        rows = np.empty((len(queries), k), np.int64)
        dists = np.empty((len(queries), k), np.int32)
        for i, query in enumerate(queries):
            d = self.distances(query)
            kth = np.partition(d, k - 1)[k - 1]
            # Every row at or under the k-th distance, so ties are broken by row id exactly.
            cand = np.flatnonzero(d <= kth)
            order = np.lexsort((cand, d[cand]))[:k]
            rows[i], dists[i] = cand[order], d[cand[order]]
        return rows, dists


def maguyva_top_k(codes: Codes, queries: Codes, k: int, threads: int) -> TopK:
    # A lone query goes through the 1-D form, the single-query path callers use.
    arg = queries[0] if len(queries) == 1 else queries
    rows, dists = maguyva.hamming_top_k(codes, arg, k, threads=threads)
    return rows.reshape(len(queries), -1), dists.reshape(len(queries), -1)


def faiss_top_k(index: faiss.IndexBinaryFlat, queries: Codes, k: int) -> TopK:
    dists, rows = index.search(queries, k)
    return rows, dists


def true_distances(codes: Codes, queries: Codes, rows: npt.NDArray[np.int64]) -> np.ndarray:
    """Distances of the returned rows recomputed from the codes: catches wrong row ids."""
    diff = np.bitwise_xor(codes[rows], queries[:, None, :])
    return np.bitwise_count(diff).sum(axis=2, dtype=np.int32)


def check_top_k(name: str, codes: Codes, queries: Codes, got: TopK, reference: TopK) -> None:
    """Same multiset of top-k distances per query as the reference, and each returned row
    really is at its reported distance. Rows may differ only among ties at the k-th distance,
    which is why distances, not rows, are compared across engines."""
    rows, dists = got
    if rows.shape != reference[0].shape:
        raise BenchmarkError(f"{name}: result shape {rows.shape} != {reference[0].shape}")
    got_sorted, want_sorted = np.sort(dists, axis=1), np.sort(reference[1], axis=1)
    bad = np.flatnonzero((got_sorted != want_sorted).any(axis=1))
    if bad.size:
        q = int(bad[0])
        raise BenchmarkError(
            f"{name}: top-k distances differ for query {q}: "
            f"{got_sorted[q].tolist()} vs {want_sorted[q].tolist()}"
        )
    if not np.array_equal(true_distances(codes, queries, rows), dists):
        raise BenchmarkError(f"{name}: a returned row is not at its reported distance")


@dataclass
class HammingRun:
    engine: str
    queries: int
    threads: int
    """Threads the engine was given; numpy always runs on one."""
    median_ms: float
    reps: int
    scan_gbps: float
    """rows * code bytes * queries / time."""


@dataclass
class KernelRun:
    kernel: str
    median_ms: float
    scan_gbps: float
    speedup_vs_scalar: float


@dataclass
class HammingReport:
    rows: int
    code_bytes: int
    k: int
    runs: list[HammingRun] = field(default_factory=list)
    kernels: list[KernelRun] = field(default_factory=list)


def bench_hamming(args: argparse.Namespace) -> HammingReport:
    rng = np.random.default_rng(args.seed)
    codes = rng.integers(0, 256, (args.rows, args.code_bytes), dtype=np.uint8)
    batch = rng.integers(0, 256, (args.batch, args.code_bytes), dtype=np.uint8)
    report = HammingReport(args.rows, args.code_bytes, args.k)
    index = faiss.IndexBinaryFlat(args.code_bytes * 8)
    index.add(codes)
    numpy_engine = NumpyHamming(codes)
    all_threads = os.cpu_count() or 1

    for queries, reps in ((batch[:1], args.reps_single), (batch, args.reps_batch)):

        def record(engine: str, threads: int, seconds: float) -> None:
            scanned = codes.nbytes * len(queries)
            run = HammingRun(engine, len(queries), threads, seconds * 1e3, reps,
                             gbps(scanned, seconds))
            report.runs.append(run)

        # numpy has no threads to vary: measured once, shown beside every thread setting.
        np_s, reference = timed(lambda: numpy_engine.top_k(queries, args.k), reps)
        record("numpy", 1, np_s)
        for threads in dict.fromkeys((1, all_threads)):
            mag_threads = 1 if threads == 1 else 0  # 0 = every core
            mag_s, got = timed(lambda: maguyva_top_k(codes, queries, args.k, mag_threads), reps)
            check_top_k("maguyva", codes, queries, got, reference)
            if not np.array_equal(got[0], reference[0]):
                raise BenchmarkError("maguyva: rows differ from the (distance, row) order")
            record("maguyva", threads, mag_s)
            faiss.omp_set_num_threads(threads)
            faiss_s, got = timed(lambda: faiss_top_k(index, queries, args.k), reps)
            check_top_k("faiss", codes, queries, got, reference)
            record("faiss", threads, faiss_s)
    faiss.omp_set_num_threads(all_threads)

    report.kernels = bench_kernels(codes, batch[0], args.k, args.reps_single)
    return report


def bench_kernels(codes: Codes, query: Codes, k: int, reps: int) -> list[KernelRun]:
    """Every popcount kernel the CPU supports, one query on one thread: shows what runtime
    dispatch buys over the portable code."""
    runs: list[tuple[str, float]] = []
    expected = None
    for kernel in maguyva.hamming_kernels():
        seconds, got = timed(
            lambda: maguyva.hamming_top_k(codes, query, k, threads=1, kernel=kernel), reps
        )
        if expected is None:
            expected = got
        elif not (np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])):
            raise BenchmarkError(f"kernel {kernel} disagrees with kernel scalar")
        runs.append((kernel, seconds))
    scalar_s = runs[0][1]
    return [
        KernelRun(kernel, s * 1e3, gbps(codes.nbytes, s), scalar_s / s) for kernel, s in runs
    ]


# Corpus ------------------------------------------------------------------------------------


def default_corpus_roots() -> list[Path]:
    paths = sysconfig.get_paths()
    roots = [paths["stdlib"], paths["purelib"], "~/.cargo/registry/src", "/usr/include"]
    return [Path(r).expanduser() for r in roots]


def source_files(root: Path, skip: Path) -> list[Path]:
    """Regular files with a source extension under `root`, sorted; symlinks are not
    followed, so nothing is visited twice."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if Path(dirpath, d).resolve() != skip)
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if path.suffix in CORPUS_EXTENSIONS and not path.is_symlink():
                found.append(path)
    return found


def interleave(lists: Sequence[list[Path]]) -> list[Path]:
    """Round-robin over the roots, so the corpus mixes languages instead of being filled
    by whichever root comes first."""
    out: list[Path] = []
    for i in range(max(map(len, lists), default=0)):
        out.extend(paths[i] for paths in lists if i < len(paths))
    return out


def corpus_settings(roots: Sequence[Path], megabytes: int) -> dict[str, Any]:
    return {
        "version": MANIFEST_VERSION,
        "roots": [str(r) for r in roots],
        "corpus_mb": megabytes,
        "extensions": list(CORPUS_EXTENSIONS),
        "max_file_bytes": MAX_FILE_BYTES,
    }


def build_corpus(corpus_dir: Path, roots: Sequence[Path], megabytes: int) -> dict[str, Any]:
    """Copy source files into corpus_dir/files/ until `megabytes` MB (10^6 bytes) are
    reached; skips empty files, files over 1 MiB and binaries (a NUL byte anywhere)."""
    budget = megabytes * 1_000_000
    skip = corpus_dir.resolve()
    candidates = interleave([source_files(r, skip) for r in roots if r.is_dir()])
    files, total, seen = [], 0, set()
    for source in candidates:
        if total >= budget:
            break
        real = source.resolve()
        if real in seen or not 0 < source.stat().st_size <= MAX_FILE_BYTES:
            continue
        seen.add(real)
        data = source.read_bytes()
        if b"\0" in data:
            continue
        doc_id = len(files)
        rel = Path("files", f"{doc_id // 1000:04d}", f"{doc_id:06d}{source.suffix}")
        (corpus_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (corpus_dir / rel).write_bytes(data)
        files.append({"id": doc_id, "path": str(rel), "source": str(source), "bytes": len(data)})
        total += len(data)
    if total < budget:
        print(f"warning: only {total / 1e6:.1f} MB of source found under the roots")
    return {**corpus_settings(roots, megabytes), "total_bytes": total, "files": files}


def load_or_build_corpus(corpus_dir: Path, roots: Sequence[Path], megabytes: int) -> dict:
    """Reuse a corpus made with the same settings; refuse to touch a directory that holds
    something else."""
    manifest_path = corpus_dir / "manifest.json"
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        settings = corpus_settings(roots, megabytes)
        if {key: manifest.get(key) for key in settings} != settings:
            raise BenchmarkError(
                f"{corpus_dir} holds a corpus built with other settings; "
                "delete it or pass another --corpus-dir"
            )
        for entry in manifest["files"]:
            path = corpus_dir / entry["path"]
            if not path.is_file() or path.stat().st_size != entry["bytes"]:
                raise BenchmarkError(f"{path} is missing or changed; delete {corpus_dir}")
        return manifest
    if corpus_dir.exists() and any(corpus_dir.iterdir()):
        raise BenchmarkError(f"{corpus_dir} is not empty and has no manifest.json")
    corpus_dir.mkdir(parents=True, exist_ok=True)
    manifest = build_corpus(corpus_dir, roots, megabytes)
    manifest_path.write_text(json.dumps(manifest, indent=1))
    return manifest


# Literal search ----------------------------------------------------------------------------


@dataclass
class Query:
    label: str
    literal: str
    case_insensitive: bool = False
    #: `literal` is a regular expression (`TrigramIndex.search_regex`; rg without
    #: --fixed-strings: the same `regex` crate syntax).
    regex: bool = False


def choose_queries(
    docs: Sequence[bytes], index: maguyva.TrigramIndex, extra: Sequence[str]
) -> list[Query]:
    """Pick the queries by fixed rules from the corpus itself, so any machine's corpus
    yields the same kinds of query.

    rare:   the median (in sorted order) of the identifiers of 12+ characters that occur as
            a whole token in 1-5 files;
    common: the identifier of 6+ characters that occurs in the most files (ties:
            alphabetical), required to be in at least 20% of them;
    error:  the first of ERROR_PHRASES that occurs, also searched case-insensitively;
    regex prefix:       the rare identifier's first 8 characters, then \\w+;
    regex alternation:  the rare identifier or the error phrase, also case-insensitively.
    """
    doc_freq: Counter[bytes] = Counter()
    for data in docs:
        doc_freq.update(set(IDENTIFIER.findall(data)))
    rare = sorted(
        t for t, n in doc_freq.items() if len(t) >= RARE_MIN_LEN and n <= RARE_MAX_FILES
    )
    if not rare:
        raise BenchmarkError("no rare identifier in the corpus")
    common, common_files = min(doc_freq.items(), key=lambda item: (-item[1], item[0]))
    if common_files < COMMON_MIN_FRACTION * len(docs):
        raise BenchmarkError(f"the most common identifier is in only {common_files} files")
    error = next((p for p in ERROR_PHRASES if len(index.search(p))), None)
    if error is None:
        raise BenchmarkError(f"none of {ERROR_PHRASES} occurs in the corpus")
    return [
        Query("rare", rare[len(rare) // 2].decode()),
        Query("common", common.decode()),
        Query("error", error),
        Query("error -i", error, case_insensitive=True),
        Query("regex prefix", re.escape(rare[len(rare) // 2].decode()[:8]) + r"\w+", regex=True),
        Query("regex alternation", f"({re.escape(rare[len(rare) // 2].decode())}|{re.escape(error)})", regex=True),
        Query("regex alternation -i", f"({re.escape(rare[len(rare) // 2].decode())}|{re.escape(error)})",
              case_insensitive=True, regex=True),
        *(Query("user", q) for q in extra),
    ]


def rg_command(rg: str, query: Query, target: Path, *extra: str) -> list[str]:
    cmd = [rg, *([] if query.regex else ["--fixed-strings"]), "--line-number", "--no-ignore", "--hidden",
           "--no-config", "-j", str(os.cpu_count() or 1), *extra]
    if query.case_insensitive:
        # rg folds Unicode case, maguyva ASCII case: the count check would expose a literal
        # where that matters.
        cmd.append("--ignore-case")
    return [*cmd, "--", query.literal, str(target)]


def run_rg(cmd: list[str], stdout: int | None = subprocess.DEVNULL) -> str:
    # Exit status 1 means "no match", which is an answer, not a failure.
    proc = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True)
    if proc.returncode not in (0, 1):
        raise BenchmarkError(f"{' '.join(cmd)} failed: {proc.stderr.strip()}")
    return proc.stdout or ""


def rg_counts(rg: str, query: Query, target: Path) -> tuple[int, int]:
    """(files, lines) matching per ripgrep: --count prints one "path:lines" per file."""
    out = run_rg(rg_command(rg, query, target, "--count", "--with-filename"), subprocess.PIPE)
    per_file = [int(line.rsplit(":", 1)[1]) for line in out.splitlines()]
    return len(per_file), sum(per_file)


@dataclass
class SearchRun:
    label: str
    literal: str
    case_insensitive: bool
    files: int
    lines: int
    maguyva_ms: float
    rg_ms: float
    speedup: float
    """rg time / maguyva time."""


def bench_query(
    index: maguyva.TrigramIndex, rg: str, target: Path, query: Query, reps: int
) -> SearchRun:
    if query.regex:
        mag_s, matches = timed(lambda: index.search_regex(query.literal, query.case_insensitive), reps)
    else:
        mag_s, matches = timed(lambda: index.search(query.literal, query.case_insensitive), reps)
    files, lines = rg_counts(rg, query, target)
    # rg counts matching lines; maguyva lists each line where a match starts once, and a
    # literal (or one of these patterns) without a newline cannot span lines, so both counts
    # must agree.
    if (len(matches), len(matches.lines)) != (files, lines):
        raise BenchmarkError(
            f"{query.label} {query.literal!r}: maguyva finds {len(matches)} files / "
            f"{len(matches.lines)} lines, rg finds {files} files / {lines} lines"
        )
    cmd = rg_command(rg, query, target)
    rg_s, _ = timed(lambda: run_rg(cmd), reps)  # files are in the page cache by now
    return SearchRun(query.label, query.literal, query.case_insensitive, files, lines,
                     mag_s * 1e3, rg_s * 1e3, rg_s / mag_s)


@dataclass
class TrigramReport:
    corpus_dir: str
    roots: list[str]
    files: int
    corpus_mb: float
    build_s: float
    build_mbps: float
    build_extra_mb: float
    """The resident size the build added at its peak (sampled every 5 ms), over the corpus held."""
    doc_count: int
    trigram_count: int
    size_bytes: int
    postings_bytes: int
    content_bytes: int
    word_bytes: int
    """Vocabulary and word postings (common words answered without reading documents)."""
    postings_fraction: float
    """postings_bytes / corpus bytes."""
    size_fraction: float
    """size_bytes / corpus bytes."""
    file_bytes: int
    save_s: float
    load_s: float
    rg_threads: int
    rg_floor_ms: float
    """The same rg command over an empty directory: process start-up, paid by every query."""
    searches: list[SearchRun]


class PeakResident:
    """The largest resident size of this process above its size on entry, sampled every 5 ms on
    a thread of its own while the block runs (`ru_maxrss` cannot tell a step's peak from an
    earlier one)."""

    def __init__(self) -> None:
        self.extra_mb = 0.0
        self._done = threading.Event()

    @staticmethod
    def _resident_bytes() -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _sample(self, base: int) -> None:
        most = base
        while not self._done.wait(0.005):
            most = max(most, self._resident_bytes())
        self.extra_mb = (max(most, self._resident_bytes()) - base) / 2**20

    def __enter__(self) -> PeakResident:
        self._thread = threading.Thread(target=self._sample, args=(self._resident_bytes(),), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()


def bench_trigram(args: argparse.Namespace, rg: str) -> TrigramReport:
    manifest = load_or_build_corpus(args.corpus_dir, args.corpus_root, args.corpus_mb)
    docs = [(f["id"], (args.corpus_dir / f["path"]).read_bytes()) for f in manifest["files"]]
    corpus_bytes = sum(len(data) for _, data in docs)

    start = time.perf_counter()
    with PeakResident() as peak:
        built, skipped = maguyva.TrigramIndex.build(docs)
    build_s = time.perf_counter() - start
    if skipped:
        raise BenchmarkError(f"corpus files {skipped[:5]} were skipped as binary")

    index_path = args.corpus_dir / "index.mgv"
    start = time.perf_counter()
    built.save(index_path)
    save_s = time.perf_counter() - start
    start = time.perf_counter()
    index = maguyva.TrigramIndex.load(index_path)
    load_s = time.perf_counter() - start
    if (index.doc_count, index.size_bytes) != (built.doc_count, built.size_bytes):
        raise BenchmarkError("the loaded index differs from the one saved")
    del built

    queries = choose_queries([data for _, data in docs], index, args.query)
    target = args.corpus_dir / "files"
    searches = [bench_query(index, rg, target, q, args.reps_search) for q in queries]
    empty = args.corpus_dir / "empty"
    empty.mkdir(exist_ok=True)
    floor_s, _ = timed(lambda: run_rg(rg_command(rg, queries[0], empty)), args.reps_search)
    return TrigramReport(
        corpus_dir=str(args.corpus_dir),
        roots=manifest["roots"],
        files=len(docs),
        corpus_mb=corpus_bytes / 1e6,
        build_s=build_s,
        build_mbps=corpus_bytes / build_s / 1e6,
        build_extra_mb=peak.extra_mb,
        doc_count=index.doc_count,
        trigram_count=index.trigram_count,
        size_bytes=index.size_bytes,
        postings_bytes=index.postings_bytes,
        content_bytes=index.content_bytes,
        word_bytes=index.word_bytes,
        postings_fraction=index.postings_bytes / corpus_bytes,
        size_fraction=index.size_bytes / corpus_bytes,
        file_bytes=index_path.stat().st_size,
        save_s=save_s,
        load_s=load_s,
        rg_threads=os.cpu_count() or 1,
        rg_floor_ms=floor_s * 1e3,
        searches=searches,
    )


# RRF ---------------------------------------------------------------------------------------


@dataclass
class RrfReport:
    chunks: int
    lists: int
    list_len: int
    top_k: int
    reps: int
    median_us: float
    p90_us: float


RRF_WEIGHTS = [1.0, 0.8, 0.6, 0.4]  # one per ranked list


def rrf_inputs(chunks: int, list_len: int, seed: int) -> dict[str, Any]:
    """Ranked lists that each take half their ids from a shared pool, as retrievers that
    partly agree do; 8 chunks per file, so the one-chunk-per-file rule has work to do."""
    rng = np.random.default_rng(seed)
    pool = rng.choice(chunks, 2 * list_len, replace=False)
    ranked = []
    for _ in RRF_WEIGHTS:
        ids = np.concatenate([rng.choice(pool, list_len // 2, replace=False),
                              rng.choice(chunks, 2 * list_len, replace=False)])
        unique = np.asarray(list(dict.fromkeys(ids.tolist()))[:list_len], np.uint32)
        rng.shuffle(unique)
        ranked.append(unique)
    demotion = np.where(rng.random(chunks) < 0.1, 0.5, 1.0).astype(np.float32)
    return {
        "lists": ranked,
        "weights": RRF_WEIGHTS,
        "k": 60.0,
        "centrality": rng.exponential(2.0, chunks).astype(np.float32),
        "demotion": demotion,
        "file_ids": (np.arange(chunks) // 8).astype(np.uint32),
    }


def bench_rrf(args: argparse.Namespace) -> RrfReport:
    inputs = rrf_inputs(args.rrf_chunks, args.rrf_list_len, args.seed)
    top_k = 10

    def call() -> None:
        maguyva.rrf_fuse(**inputs, top_k=top_k)

    for _ in range(min(50, args.reps_rrf)):
        call()
    samples = []
    for _ in range(args.reps_rrf):
        start = time.perf_counter_ns()
        call()
        samples.append(time.perf_counter_ns() - start)
    chunks, scores, _, _ = maguyva.rrf_fuse(**inputs, top_k=top_k)
    files = inputs["file_ids"][chunks]
    if len(chunks) != top_k or len(set(files.tolist())) != top_k or np.any(np.diff(scores) > 0):
        raise BenchmarkError("rrf_fuse: expected top_k chunks of distinct files, best first")
    return RrfReport(
        chunks=args.rrf_chunks,
        lists=len(RRF_WEIGHTS),
        list_len=args.rrf_list_len,
        top_k=top_k,
        reps=args.reps_rrf,
        median_us=statistics.median(samples) / 1e3,
        p90_us=float(np.percentile(samples, 90)) / 1e3,
    )


# Output ------------------------------------------------------------------------------------


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def print_machine(info: dict[str, Any], bw: Bandwidth) -> None:
    print("== Machine ==")
    print(f"cpu: {info['cpu_model']}, {info['cpu_count']} cores (os.cpu_count())")
    print(f"hamming kernel in use: {info['hamming_kernel_default']} "
          f"(supported: {', '.join(info['hamming_kernels'])})")
    print(f"python {info['python']}, maguyva {info['maguyva']}, numpy {info['numpy']}, "
          f"faiss {info['faiss']}, {info['ripgrep']}")
    print(f"\n== Memory bandwidth (numpy, 1 thread, {bw.megabytes} MiB array) ==")
    print(f"copy (np.copyto, read + write): {bw.copy_gbps:6.1f} GB/s")
    print(f"read (np.bitwise_or.reduce):    {bw.read_gbps:6.1f} GB/s")


def print_hamming(rep: HammingReport) -> None:
    print(f"\n== Hamming top-{rep.k}: {rep.rows:,} codes x {rep.code_bytes * 8} bits ==")
    by_key = {(r.engine, r.queries, r.threads): r for r in rep.runs}
    rows = []
    for r in (r for r in rep.runs if r.engine == "maguyva"):
        f = by_key["faiss", r.queries, r.threads]
        n = by_key["numpy", r.queries, 1]
        rows.append([
            r.queries, r.threads,
            f"{r.median_ms:.2f}", f"{r.scan_gbps:.1f}",
            f"{f.median_ms:.2f}", f"{f.scan_gbps:.1f}",
            f"{n.median_ms:.2f}", f"{n.scan_gbps:.1f}",
            f"{f.median_ms / r.median_ms:.1f}x", f"{n.median_ms / r.median_ms:.1f}x",
        ])
    print(table(["queries", "threads", "maguyva ms", "GB/s", "faiss ms", "GB/s",
                 "numpy(1T) ms", "GB/s", "faiss/mag", "numpy/mag"], rows))
    print("top-k distances agree across maguyva, faiss and numpy; maguyva rows match the "
          "(distance, row) order exactly")
    print("\nper kernel, 1 query, 1 thread:")
    print(table(["kernel", "ms", "GB/s", "vs scalar"],
                [[k.kernel, f"{k.median_ms:.2f}", f"{k.scan_gbps:.1f}",
                  f"{k.speedup_vs_scalar:.1f}x"] for k in rep.kernels]))


def print_trigram(rep: TrigramReport) -> None:
    print(f"\n== Trigram index: {rep.files:,} files, {rep.corpus_mb:.1f} MB ==")
    print(f"corpus: {rep.corpus_dir} (from {', '.join(rep.roots)})")
    print(f"build: {rep.build_s:.2f} s ({rep.build_mbps:.0f} MB/s), {rep.build_extra_mb:.0f} MB resident at its peak "
          f"beyond the corpus held; save {rep.save_s:.2f} s, load {rep.load_s:.2f} s")
    print(f"size: {rep.size_bytes / 1e6:.1f} MB = {rep.size_fraction:.2f}x corpus "
          f"(postings {rep.postings_bytes / 1e6:.1f} MB = {rep.postings_fraction:.2f}x, "
          f"words {rep.word_bytes / 1e6:.1f} MB = {rep.word_bytes / (rep.corpus_mb * 1e6):.2f}x, "
          f"content {rep.content_bytes / 1e6:.1f} MB); {rep.trigram_count:,} trigrams")
    rows = [[s.label, s.literal if len(s.literal) <= 32 else s.literal[:29] + "...",
             s.files, s.lines, f"{s.maguyva_ms:.3f}", f"{s.rg_ms:.1f}",
             f"{s.speedup:.0f}x", "ok" if s.speedup >= SEARCH_SPEEDUP_TARGET else "MISS"]
            for s in rep.searches]
    print(f"\nliteral search (maguyva index.search vs rg -j {rep.rg_threads}; "
          f"target >= {SEARCH_SPEEDUP_TARGET:.0f}x):")
    print(table(["query", "literal", "files", "lines", "maguyva ms", "rg ms", "rg/mag",
                 "target"], rows))
    print(f"file and line counts agree with rg; rg start-up floor (empty directory): "
          f"{rep.rg_floor_ms:.1f} ms")


def print_rrf(rep: RrfReport) -> None:
    verdict = "ok" if rep.median_us < RRF_TARGET_US else "MISS"
    print(f"\n== RRF: {rep.lists} lists x {rep.list_len:,} ids over {rep.chunks:,} chunks, "
          f"top {rep.top_k} ==")
    print(f"median {rep.median_us:.1f} us, p90 {rep.p90_us:.1f} us over {rep.reps} calls "
          f"(target < {RRF_TARGET_US:.0f} us: {verdict})")


# Main --------------------------------------------------------------------------------------

QUICK = {
    "rows": 50_000,
    "batch": 20,
    "corpus_mb": 10,
    "bandwidth_mb": 64,
    "reps_search": 3,
}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true",
                   help=f"smoke-test sizes: {QUICK}; default outputs get a -quick suffix")
    p.add_argument("--json", type=Path, help="results file "
                   "(default benches/results/kernels.json, or kernels-quick.json)")
    p.add_argument("--seed", type=int, default=0, help="seed of all random inputs")
    g = p.add_argument_group("memory bandwidth")
    g.add_argument("--bandwidth-mb", type=int, default=512, help="array size in MiB")
    g = p.add_argument_group("hamming")
    g.add_argument("--rows", type=int, default=1_000_000, help="number of codes")
    g.add_argument("--code-bytes", type=int, default=128,
                   help="bytes per code, a multiple of 8 (128 = 1024 bits)")
    g.add_argument("--k", type=int, default=10, help="neighbours per query")
    g.add_argument("--batch", type=int, default=100, help="queries in the batch workload")
    g.add_argument("--reps-single", type=int, default=7, help="repetitions, one query")
    g.add_argument("--reps-batch", type=int, default=3, help="repetitions, batch")
    g = p.add_argument_group("trigram")
    g.add_argument("--corpus-root", type=Path, action="append",
                   help="directory to take source files from (repeatable; default: the "
                        "Python stdlib and site-packages, ~/.cargo/registry/src, /usr/include)")
    g.add_argument("--corpus-dir", type=Path,
                   help="where the corpus is copied and reused "
                        "(default benches/data/corpus, or corpus-quick)")
    g.add_argument("--corpus-mb", type=int, default=150, help="corpus size in MB (10^6 bytes)")
    g.add_argument("--query", action="append", default=[],
                   help="extra literal to search for (repeatable)")
    g.add_argument("--reps-search", type=int, default=9, help="repetitions per query")
    g.add_argument("--rg", default=None, help="ripgrep binary (default: the one beside "
                   "this Python, else rg on PATH)")
    g = p.add_argument_group("rrf")
    g.add_argument("--rrf-chunks", type=int, default=100_000, help="chunk id space")
    g.add_argument("--rrf-list-len", type=int, default=1_000, help="ids per ranked list")
    g.add_argument("--reps-rrf", type=int, default=1_000, help="timed calls")
    args = p.parse_args(argv)

    if args.quick:
        # Only options left at their default are shrunk, so --quick --rows 1000 works.
        for name, value in QUICK.items():
            if getattr(args, name) == p.get_default(name):
                setattr(args, name, value)
    suffix = "-quick" if args.quick else ""
    args.json = args.json or BENCH_DIR / "results" / f"kernels{suffix}.json"
    args.corpus_dir = (args.corpus_dir or BENCH_DIR / "data" / f"corpus{suffix}").resolve()
    args.corpus_root = args.corpus_root or default_corpus_roots()
    args.corpus_root = list(dict.fromkeys(r.expanduser().resolve() for r in args.corpus_root))
    if args.code_bytes % 8:
        p.error("--code-bytes must be a multiple of 8")
    return args


def find_rg(explicit: str | None) -> str:
    beside_python = Path(sys.executable).parent / "rg"
    rg = explicit or (str(beside_python) if beside_python.exists() else shutil.which("rg"))
    if rg is None:
        raise BenchmarkError("ripgrep not found: pip install ripgrep, or pass --rg")
    return rg


def main(argv: Sequence[str] | None = None) -> int:
    if not hasattr(np, "bitwise_count"):
        raise BenchmarkError(f"numpy >= 2.0 is needed for np.bitwise_count ({np.__version__})")
    args = parse_args(argv)
    rg = find_rg(args.rg)
    info = machine_info(rg)
    bandwidth = measure_bandwidth(args.bandwidth_mb, reps=5)
    print_machine(info, bandwidth)
    hamming = bench_hamming(args)
    print_hamming(hamming)
    trigram = bench_trigram(args, rg)
    print_trigram(trigram)
    rrf = bench_rrf(args)
    print_rrf(rrf)

    results = {
        "quick": args.quick,
        "machine": info,
        "bandwidth": asdict(bandwidth),
        "hamming": asdict(hamming),
        "trigram": asdict(trigram),
        "rrf": asdict(rrf),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nresults written to {args.json}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchmarkError as err:
        sys.exit(f"benchmark failed: {err}")
