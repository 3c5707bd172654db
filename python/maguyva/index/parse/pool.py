"""Parsing many files on several cores.

    from maguyva.index.parse.pool import parse_files

    parsed = parse_files([("src/app.py", content), ...], progress=lambda count: ...)

Parsing is Python around tree-sitter and holds the GIL, so threads do not run it side by side;
processes do. The calling process parses batches itself and hands others to worker processes
(`python -m maguyva.index.parse.worker`, one per further core), each taking the next batch when it
is done, so a slow file holds up one worker, not the build. Workers are plain subprocesses
talking over pipes rather than a multiprocessing pool: they never re-import the caller's main
module and never fork a process whose other threads hold locks.

The answer is the list `parse_file` would give file by file, in the order given: a worker that
cannot start or dies leaves its batches to the others and to the caller, and a file whose parse
raised in a worker is parsed again by the caller, so it raises there as it would have.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import IO

from maguyva import config
from maguyva.index.model import ParsedFile
from maguyva.index.parse import parse_file

#: The command that starts a worker (tests point it at a worker that fails).
WORKER_COMMAND = (sys.executable, "-m", "maguyva.index.parse.worker")

#: Each message: a marker, then the length of the pickle that follows. The marker tells a stream
#: that is not a worker's answers from one that is before its length is trusted.
_HEAD = struct.Struct("<4sQ")
_MARK = b"MGPW"


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_count(total_bytes: int, cores: int | None = None) -> int:
    """How many worker processes parsing `total_bytes` of files is worth: none below
    `config.PARSE_PARALLEL_MIN_BYTES` (a worker's start costs more than it saves), else one per
    further core, at most `config.PARSE_MAX_WORKERS`."""
    if total_bytes < config.current().PARSE_PARALLEL_MIN_BYTES:
        return 0
    cores = usable_cores() if cores is None else cores
    return max(0, min(cores - 1, config.current().PARSE_MAX_WORKERS))


def parse_files(
    files: Sequence[tuple[str, bytes]],
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[ParsedFile]:
    """`parse_file` of each (path, content), in order; `workers` processes help (None: as many
    as `worker_count` says for these files), and `progress` hears how many files each finished
    batch held."""
    if workers is None:
        workers = worker_count(sum(len(content) for _, content in files))
    told = progress or (lambda _count: None)
    if workers <= 0 or len(files) < 2:
        results = []
        for path, content in files:
            results.append(parse_file(path, content))
            told(1)
        return results
    return _Scheduler(files, told).run(workers)


def _batches(files: Sequence[tuple[str, bytes]]) -> list[range]:
    """Consecutive ranges of `files` of about `config.PARSE_BATCH_BYTES` each (at least one file)."""
    batches: list[range] = []
    start, size = 0, 0
    for i, (_, content) in enumerate(files):
        size += len(content) + 256  # a file costs something however small
        if size >= config.current().PARSE_BATCH_BYTES:
            batches.append(range(start, i + 1))
            start, size = i + 1, 0
    if start < len(files):
        batches.append(range(start, len(files)))
    return batches


class _Scheduler:
    """Batches taken in turn by the caller and by one thread per worker process."""

    def __init__(self, files: Sequence[tuple[str, bytes]], progress: Callable[[int], None]):
        self.files = files
        self.progress = progress
        self.results: list[ParsedFile | None] = [None] * len(files)
        self.pending = deque(_batches(files))
        self.lock = threading.Lock()

    def run(self, workers: int) -> list[ParsedFile]:
        threads = [threading.Thread(target=self._feed, daemon=True) for _ in range(workers)]
        for thread in threads:
            thread.start()
        try:
            while (batch := self._next()) is not None:
                self._parse_here(batch)
        except BaseException:
            with self.lock:  # an interrupted build does not wait for the rest to be parsed
                self.pending.clear()
            raise
        finally:
            for thread in threads:
                thread.join()
        # Batches a worker took and lost (it died, or a parse raised there) are parsed here.
        for i, result in enumerate(self.results):
            if result is None:
                self.results[i] = parse_file(*self.files[i])
        return [r for r in self.results if r is not None]

    def _next(self) -> range | None:
        with self.lock:
            return self.pending.popleft() if self.pending else None

    def _done(self, batch: range, parsed: list[ParsedFile]) -> None:
        for i, result in zip(batch, parsed):
            self.results[i] = result
        with self.lock:
            self.progress(len(batch))

    def _parse_here(self, batch: range) -> None:
        self._done(batch, [parse_file(*self.files[i]) for i in batch])

    def _feed(self) -> None:
        """Run one worker process until no batch is left; return quietly if it fails (what it
        held stays unparsed and the caller parses it)."""
        try:
            process = subprocess.Popen(
                WORKER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
            )  # fmt: skip
        except OSError:
            return
        assert process.stdin is not None and process.stdout is not None
        try:
            while (batch := self._next()) is not None:
                _send(process.stdin, [self.files[i] for i in batch])
                answer = _receive(process.stdout)
                if not isinstance(answer, list) or len(answer) != len(batch):
                    return  # a parse raised there: the caller parses the batch and raises
                self._done(batch, answer)
        except Exception:  # nothing a worker sends back is trusted: the caller parses what it held
            return
        finally:
            for stream in (process.stdin, process.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


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
    """A worker's loop: read batches of (path, content) until the input closes, answer each with
    its `ParsedFile`s, or with None when one raised."""
    while True:
        try:
            batch = _receive(source)
        except EOFError:
            return
        assert isinstance(batch, list)
        answer: list[ParsedFile] | None
        try:
            answer = [parse_file(path, content) for path, content in batch]
        except Exception:
            answer = None
        _send(sink, answer)
