"""Parsing many files on several cores.

    from maguyva.index.parse.pool import parse_files

    parsed = parse_files([("src/app.py", content), ...], progress=lambda count: ...)

Parsing is Python around tree-sitter and holds the GIL, so threads do not run it side by side;
processes do. The calling process parses batches itself and hands others to worker processes
(`python -m maguyva.index.parse.worker`, one per further core), each taking the next batch when it
is done, so a slow file holds up one worker, not the build. Workers are plain subprocesses
talking over pipes rather than a multiprocessing pool: they never re-import the caller's main
module and never fork a process whose other threads hold locks.

A worker says when it is ready (its imports done); until then the caller goes on parsing, and a
build that ends first does not wait for it. Workers are kept for the process's next builds
(`config.PARSE_WORKER_KEEP_SECONDS`), so a process that builds again (a server, a corpus of
several repositories) parses beside ready workers from its first batch. A build tells the kept
workers its files' languages as soon as it has walked them (`prepare_kept_workers`), so they
compile those languages' queries while the build reads its files, not on their first batch.

The answer is the list `parse_file` would give file by file, in the order given: a worker that
cannot start or dies leaves its batches to the others and to the caller, and a file whose parse
raised in a worker is parsed again by the caller, so it raises there as it would have.
"""

from __future__ import annotations

import atexit
import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import IO

from maguyva import config
from maguyva.index.model import ParsedFile
from maguyva.index.parse import parse_file
from maguyva.index.parse.compiled import compiled_for
from maguyva.index.parse.languages import LANGUAGES

#: The command that starts a worker (tests point it at a worker that fails).
WORKER_COMMAND = (sys.executable, "-m", "maguyva.index.parse.worker")

#: Each message: a marker, then the length of the pickle that follows. The marker tells a stream
#: that is not a worker's answers from one that is before its length is trusted.
_HEAD = struct.Struct("<4sQ")
_MARK = b"MGPW"
#: A worker's first message: its imports are done.
_READY = "ready"
#: A message to a worker that names languages to compile (no answer): (_PREPARE, [language, ...]).
_PREPARE = "prepare"


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_count(total_bytes: int, cores: int | None = None) -> int:
    """How many worker processes parsing `total_bytes` of files is worth: one per further core,
    at most `config.PARSE_MAX_WORKERS`, from `config.PARSE_PARALLEL_MIN_BYTES` (below, a worker
    started would not be ready before the caller is done), or, of the workers kept ready from an
    earlier build, from `config.PARSE_KEPT_MIN_BYTES`."""
    cores = usable_cores() if cores is None else cores
    most = max(0, min(cores - 1, config.current().PARSE_MAX_WORKERS))
    if total_bytes >= config.current().PARSE_PARALLEL_MIN_BYTES:
        return most
    if total_bytes >= config.current().PARSE_KEPT_MIN_BYTES:
        return min(most, _kept.count())
    return 0


def parse_files(
    files: Sequence[tuple[str, bytes]],
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    release: bool = False,
) -> list[ParsedFile]:
    """`parse_file` of each (path, content), in order; `workers` processes help (None: as many
    as `worker_count` says for these files), and `progress` hears how many files each finished
    batch held. With `release`, `files` (a list) has each content replaced by b"" once the file
    is parsed: a large build's contents are then freed as its records grow, not held beside
    all of them."""
    if release and not isinstance(files, list):
        raise TypeError("parse_files(release=True) empties a list of files as it parses them")
    if workers is None:
        workers = worker_count(sum(len(content) for _, content in files))
    told = progress or (lambda _count: None)
    if workers <= 0 or len(files) < 2:
        results = []
        for i, (path, content) in enumerate(files):
            results.append(parse_file(path, content))
            if release:
                files[i] = (path, b"")  # type: ignore[index]
            told(1)
        return results
    return _Scheduler(files, told, workers + 1, release).run(workers)


def _batches(files: Sequence[tuple[str, bytes]], parsers: int = 1) -> list[range]:
    """Consecutive ranges of `files` of about `config.PARSE_BATCH_BYTES` each (at least one file),
    smaller when the files are few, so that each of `parsers` has about four to take; largest
    first. A file past the size is a batch of its own, and the large batches are taken first, so
    the build does not end with one parser on a large file while the others wait."""
    total = sum(len(content) + 256 for _, content in files)  # a file costs something however small
    target = max(1, min(config.current().PARSE_BATCH_BYTES, total // (4 * max(parsers, 1))))
    batches: list[tuple[int, range]] = []
    start, size = 0, 0
    for i, (_, content) in enumerate(files):
        cost = len(content) + 256
        if size and size + cost > target:
            batches.append((size, range(start, i)))
            start, size = i, 0
        size += cost
    if start < len(files):
        batches.append((size, range(start, len(files))))
    batches.sort(key=lambda sized: -sized[0])  # stable: equal sizes keep the files' order
    return [batch for _, batch in batches]


class _Worker:
    """A worker process, its pipes, and the command that started it."""

    def __init__(self) -> None:
        self.command = WORKER_COMMAND
        self.owner = os.getpid()
        self.process = subprocess.Popen(
            self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
        )  # fmt: skip
        self.ready = False

    def wait_ready(self) -> bool:
        """Whether the worker said it is ready (read once; False when it said anything else)."""
        if not self.ready:
            assert self.process.stdout is not None
            self.ready = _receive(self.process.stdout) == _READY
        return self.ready

    def prepare(self, languages: list[str]) -> None:
        """Have the worker compile the queries of `languages` before its next batch (it answers
        nothing to this)."""
        assert self.process.stdin is not None
        _send(self.process.stdin, (_PREPARE, languages))

    def parse(self, files: list[tuple[str, bytes]]) -> object:
        """The worker's answer to one batch (untrusted)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        _send(self.process.stdin, files)
        return _receive(self.process.stdout)

    def usable(self) -> bool:
        """Whether this process may hand it batches: started here, by today's command, running."""
        return self.owner == os.getpid() and self.command == WORKER_COMMAND and self.process.poll() is None

    def close(self) -> None:
        """Close its input, which ends it, and wait for it."""
        if self.owner != os.getpid():
            return  # a forked copy's: its parent still uses it
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class _KeptWorkers:
    """Ready workers kept between builds, each for `config.PARSE_WORKER_KEEP_SECONDS` after its
    last batch, then closed; all are closed when the process exits."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: list[tuple[_Worker, float]] = []

    def count(self) -> int:
        with self.lock:
            return sum(1 for worker, _ in self.idle if worker.usable())

    def take(self) -> _Worker | None:
        """A kept worker, or None."""
        stale = []
        found = None
        with self.lock:
            while self.idle and found is None:
                worker, _ = self.idle.pop()
                if worker.usable():
                    found = worker
                else:
                    stale.append(worker)
        for worker in stale:
            worker.close()
        return found

    def prepare(self, languages: list[str]) -> None:
        """Have every idle worker compile the queries of `languages` (sent under the lock: a
        build that takes one writes to it only once it is taken)."""
        with self.lock:
            for worker, _ in self.idle:
                if worker.usable():
                    try:
                        worker.prepare(languages)
                    except (OSError, ValueError):
                        pass  # it has ended: `take` finds it unusable and closes it

    def give(self, worker: _Worker, keep: float) -> None:
        """Keep a ready worker whose answers were all read whole, for `keep` seconds (none: closed)."""
        if keep <= 0 or not worker.usable():
            worker.close()
            return
        with self.lock:
            self.idle.append((worker, time.monotonic()))
        timer = threading.Timer(keep, self.close_idle, args=(keep,))
        timer.daemon = True
        timer.start()

    def close_idle(self, seconds: float = 0.0) -> None:
        """Close the workers idle for at least `seconds` (0: every kept worker)."""
        now = time.monotonic()
        with self.lock:
            old = [(w, t) for w, t in self.idle if now - t >= seconds]
            self.idle = [(w, t) for w, t in self.idle if now - t < seconds]
        for worker, _ in old:
            worker.close()


_kept = _KeptWorkers()
atexit.register(_kept.close_idle)


def prepare_kept_workers(languages: Iterable[str]) -> None:
    """Have the workers kept from earlier builds compile the queries of `languages` now, each in
    its own process, while this one goes on: a build that hands them batches then does not wait
    for each to compile a language it meets for the first time."""
    wanted = sorted(set(languages) & LANGUAGES.keys())
    if wanted:
        _kept.prepare(wanted)


def close_kept_workers() -> None:
    """Close every worker kept for later builds (they end on their own after
    `config.PARSE_WORKER_KEEP_SECONDS`, or with the process)."""
    _kept.close_idle()


class _Scheduler:
    """Batches taken in turn by the caller and by one thread per worker process. A batch is done
    by whoever answers it first: the caller, once no batch is left to take, parses those the
    workers still hold (a worker may be slow to load a language's grammar for the first time), so
    a build never waits on a worker longer than its own parse of the batch would take."""

    def __init__(
        self, files: Sequence[tuple[str, bytes]], progress: Callable[[int], None], parsers: int = 1, release: bool = False
    ):
        self.files = files
        #: Whether a parsed file's content is dropped from `files` (`parse_files`).
        self.release = release
        self.progress = progress
        self.results: list[ParsedFile | None] = [None] * len(files)
        self.pending = deque(_batches(files, parsers))
        self.lock = threading.Lock()
        #: Read here: the feeding threads do not see the caller's tuning.
        self.keep = config.current().PARSE_WORKER_KEEP_SECONDS
        #: Batches workers hold, not yet answered, in the order taken.
        self.held: list[range] = []

    def run(self, workers: int) -> list[ParsedFile]:
        for _ in range(workers):
            threading.Thread(target=self._feed, args=(_kept.take(),), daemon=True).start()
        try:
            while (batch := self._next_here()) is not None:
                self._parse_here(batch)
        finally:
            with self.lock:  # a build that ends, or is interrupted, leaves no batch to take
                self.pending.clear()
        # Batches a worker took and lost (it died, or a parse raised there) are parsed here.
        for i, result in enumerate(self.results):
            if result is None:
                self.results[i] = parse_file(*self.files[i])
        return [r for r in self.results if r is not None]

    def _next_here(self) -> range | None:
        """The next batch for the caller: one nobody took, else the oldest a worker holds."""
        with self.lock:
            if self.pending:
                return self.pending.popleft()
            return self.held.pop(0) if self.held else None

    def _take(self) -> range | None:
        with self.lock:
            if not self.pending:
                return None
            batch = self.pending.popleft()
            self.held.append(batch)
            return batch

    def _fill(self, batch: range, parsed: list[ParsedFile]) -> None:
        """Keep the answer to `batch` unless the other side gave it first; the lock held."""
        if self.results[batch.start] is None:
            for i, result in zip(batch, parsed):
                self.results[i] = result
                if self.release:
                    self.files[i] = (self.files[i][0], b"")  # type: ignore[index]
            self.progress(len(batch))

    def _answered(self, batch: range, parsed: list[ParsedFile] | None) -> None:
        with self.lock:
            if batch in self.held:
                self.held.remove(batch)
            if parsed is not None:
                self._fill(batch, parsed)

    def _parse_here(self, batch: range) -> None:
        parsed = [parse_file(*self.files[i]) for i in batch]
        with self.lock:
            self._fill(batch, parsed)

    def _feed(self, worker: _Worker | None) -> None:
        """Hand batches to one worker (`worker`, kept from an earlier build, or a new one) until
        none is left, then keep it for the next build; drop it quietly if it fails (what it held
        stays unparsed and the caller parses it)."""
        try:
            worker = worker or _Worker()
        except OSError:
            return
        kept = False  # whether the worker answered everything as asked: then it is kept
        try:
            if not worker.wait_ready():
                return
            kept = True
            while (batch := self._take()) is not None:
                kept = False
                answer: object = None
                try:
                    answer = worker.parse([self.files[i] for i in batch])
                finally:
                    kept = isinstance(answer, list) and len(answer) == len(batch)
                    self._answered(batch, answer if kept else None)  # type: ignore[arg-type]
                if not kept:
                    return  # a parse raised there, or the answer is not one: the caller parses the batch
        except Exception:  # nothing a worker sends back is trusted: the caller parses what it held
            return
        finally:
            if kept:
                _kept.give(worker, self.keep)
            else:
                worker.close()


def _send(stream: IO[bytes], value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEAD.pack(_MARK, len(data)))
    stream.write(data)
    stream.flush()


def _receive(stream: IO[bytes]) -> object:
    head = stream.read(_HEAD.size)
    if len(head) < _HEAD.size:
        raise EOFError("the worker closed its output")
    mark, length = _HEAD.unpack(head)
    if mark != _MARK:
        raise ValueError("not a parsing worker's answer")
    data = stream.read(length)
    if len(data) < length:
        raise EOFError("the worker closed its output")
    return pickle.loads(data)


def serve(source: IO[bytes], sink: IO[bytes]) -> None:
    """A worker's loop: say it is ready, then read batches of (path, content) until the input
    closes, answer each with its `ParsedFile`s, or with None when one raised. A caller gone
    (its end of the pipes closed) ends it quietly."""
    try:
        _send(sink, _READY)
        while True:
            try:
                batch = _receive(source)
            except EOFError:
                return
            if isinstance(batch, tuple) and len(batch) == 2 and batch[0] == _PREPARE:
                for language in batch[1]:
                    compiled_for(language)  # one that fails is reported, and its files are text
                continue
            assert isinstance(batch, list)
            answer: list[ParsedFile] | None
            try:
                answer = [parse_file(path, content) for path, content in batch]
            except Exception:
                answer = None
            _send(sink, answer)
    except BrokenPipeError:
        return
