"""Building an index: walk, read, parse what changed, embed what the cache lacks, index the
text, link the graph, and publish the result as a new generation.

An update reads only the files whose stat differs from what the previous generation recorded
(the rule of the freshness check, index/freshness.py: a file with its recorded size and mtime,
safely older than the walk that recorded it, is as it was) and re-parses only those whose content
changed (by SHA-256); the others keep their chunks, symbols, references and embeddings, and
their documents in the trigram index, which is merged from the previous one rather than built
again. An update writes only the rows of the files edited or added since the base segment,
linking the base's files (`index.segments`); one whose delta outgrows its share (of removed
files too) writes one new base, the
rows of files carried over copied from the previous segments by SQL, renumbered, never read into
Python; deleted files are dropped. What is derived across files (ids, graph edges, centrality)
is recomputed, and the graph resolved again only where the change reaches, so an update produces
the same index as a full build.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple, TypeVar, cast

import numpy as np

from maguyva import config
from maguyva._core import CorruptIndexError, TrigramIndex, read_files
from maguyva.arrays import distinct
from maguyva.embed import Embedder, EmbeddingCache, EmbeddingCacheError, embed_texts, identity, identity_of, make_embedder
from maguyva.errors import IndexFormatError, IndexNotFoundError, IndexStoreError
from maguyva.index import gc_pause, graph, heap, roles, store
from maguyva.index.beside import Beside
from maguyva.index.chunk import MAX_CHUNK_CHARS
from maguyva.index.freshness import (
    DEFAULT_MAX_FILE_SIZE,
    FreshnessCheck,
    IndexedStat,
    Walk,
    recorded_scope,
    walk_tree,
)
from maguyva.index.model import Chunk, Reference, Symbol
from maguyva.index.parse import PARSER_VERSION, language_for
from maguyva.index.parse.compiled import compile_in_background
from maguyva.index.parse.pool import parse_files, prepare_kept_workers
from maguyva.index.progress import Progress, Silent
from maguyva.index.segments import IN_LIST, REFS, SYMBOLS, SegmentOrder, Segments
from maguyva.index.text_layers import LayeredTextIndex
from maguyva.lexicon import TYPE_KINDS

#: Characters of a chunk's text given to the embedder: four times the longest chunk that lines
#: can make (MAX_CHUNK_CHARS), so only a chunk of one very long line is ever cut.
EMBED_MAX_CHARS = 4 * MAX_CHUNK_CHARS

T = TypeVar("T")


@dataclass(slots=True)
class FileRecord:
    """One file's content identity and everything parsed from it."""

    path: str
    size: int
    mtime_ns: int
    sha256: str
    language: str | None
    chunks: list[Chunk]
    symbols: list[Symbol]
    references: list[Reference]
    #: The words of its names outside comments (`ParsedFile.code_words`).
    code_words: frozenset[str] = frozenset()
    #: (chunks, code bytes): its chunks' codes, once embedded or carried over.
    codes: np.ndarray | None = None
    #: Its file id in the previous generation, when its rows are carried over from there: such a
    #: record holds its symbols (the graph resolves names against every file's) and its codes,
    #: but not its chunks, references or words, which are copied in the database, never read.
    earlier_id: int | None = None

    @property
    def chunk_count(self) -> int:
        return len(self.codes) if self.earlier_id is not None and self.codes is not None else len(self.chunks)


class SkippedFile(NamedTuple):
    """A file the walk found but the index left out (binary, unreadable...), with the stat it
    had, so that a later freshness check knows it is not new."""

    path: str
    reason: str
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class BuildSummary:
    """What a build did."""

    root: Path
    index_dir: Path
    files: int
    chunks: int
    symbols: int
    edges: int
    skipped: dict[str, int]
    parsed_files: int
    reused_files: int
    embedded_chunks: int
    seconds: float
    index_bytes: int = 0
    stages: dict[str, float] = field(default_factory=dict)
    #: What the user should know about how it went (a damaged index rebuilt in full, an
    #: embedding cache left out), one sentence each.
    warnings: tuple[str, ...] = ()


def build_index(
    root: Path,
    index_dir: Path | None = None,
    *,
    embedder: str | Embedder = "local",
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    progress: Progress | None = None,
    rebuild: bool = False,
    include_secrets: bool | None = None,
    tuning: config.Tuning | None = None,
    walked: Walk | None = None,
    scope: tuple[str, ...] | None = None,
) -> BuildSummary:
    """Build or update the index of the repository at `root`; return what was done.

    A repository that is as the published index recorded it (every file with its recorded
    stat, the same options: `unchanged_index`) keeps that generation, and nothing is read or
    written. `rebuild` parses every file again instead of reusing the previous generation's
    records (embeddings still come from the cache). A previous generation that fails its checksums is
    not reused either: the build is a full one, and says so in `warnings`. A build that cannot
    write (disk full, read-only folder) raises `IndexWriteError` and leaves the published index
    as it was. Files named like keys and credentials (`id_rsa`, `*.pem`, `.npmrc`...) are left out
    unless `include_secrets`; None keeps what the index was built with (False for a new one).
    `tuning` holds the numbers the build uses (`config.current()` if None). `walked`, a walk of
    `root` the caller has just taken (a freshness check's), is used instead of walking again when
    it was walked with the build's options. `scope` keeps the index to a part of the tree:
    relative paths of files and folders (`freshness.in_scope`; empty: all of it, None: as the
    index was built before)."""
    with config.using(tuning), gc_pause.paused():
        return _build_index(
            root, index_dir, embedder, max_file_size, progress, rebuild, include_secrets, walked, scope
        )


def _build_index(
    root: Path,
    index_dir: Path | None,
    embedder: str | Embedder,
    max_file_size: int,
    progress: Progress | None,
    rebuild: bool,
    include_secrets: bool | None,
    handed_walk: Walk | None,
    scope: tuple[str, ...] | None,
) -> BuildSummary:
    started = time.perf_counter()
    root = root.resolve()
    if not root.is_dir():
        raise NotADirectoryError(f"not a directory: {root}")
    index_dir = index_dir or store.default_index_dir(root)
    progress = progress or Silent()
    # An embedder named is made only when something is to be embedded: an index that is as the
    # repository is needs no more than the identity it was embedded by.
    model = None if isinstance(embedder, str) else embedder
    identity = identity_of(embedder) if isinstance(embedder, str) else embedder_identity(embedder)
    stages: dict[str, float] = {}
    warnings: list[str] = []
    with store.build_lock(index_dir):
        clock = time.perf_counter()
        # Taken before the walk: a file modified after this instant may have changed after
        # its stat was taken, so the freshness check hashes it (see index/freshness.py).
        walked_at_ns = time.time_ns()
        if include_secrets is None:
            include_secrets = previous_walk_option(index_dir, "include_secrets", False)
        if scope is None:
            scope = previous_scope(index_dir)
        known_stale = False
        if handed_walk is not None and (
            handed_walk.root, handed_walk.max_file_size, handed_walk.include_secrets, handed_walk.scope
        ) == (root, max_file_size, include_secrets, scope):
            walked_at_ns, walked, walk_skipped = handed_walk.started_ns, handed_walk.files, handed_walk.skipped
            known_stale = handed_walk.differs_from is not None and handed_walk.differs_from == _current_name(index_dir)
        else:
            walked, walk_skipped = walk_tree(root, max_file_size, include_secrets, scope)
        unchanged = None if rebuild or identity is None or known_stale else unchanged_index(
            index_dir, root, identity, walked, walk_skipped, max_file_size, include_secrets, scope
        )
        if unchanged is not None:
            progress.finish()
            published, counts, skipped_counts = unchanged
            return BuildSummary(
                root=root, index_dir=index_dir, files=counts["files"], chunks=counts["chunks"],
                symbols=counts["symbols"], edges=counts["edges"], skipped=skipped_counts, parsed_files=0,
                reused_files=counts["files"], embedded_chunks=0, seconds=time.perf_counter() - started,
                index_bytes=sum(f.stat().st_size for f in published.iterdir()),
                stages={"walk+check": time.perf_counter() - clock},
            )  # fmt: skip
        # The walk says which languages the files are in: their queries compile meanwhile. An
        # update parses only what it reads, and compiles a language when it first parses one (a
        # pass over every file to find them first cost more than it saved).
        first_build = rebuild or _current_name(index_dir) is None
        if first_build:
            _compile_languages(path for path, _, _ in walked)
        if model is None and identity is None:  # an embedder whose identity only it knows
            assert isinstance(embedder, str)
            model = make_embedder(embedder)
            identity = embedder_identity(model)
        assert identity is not None
        previous = Previous() if rebuild else load_previous_records(index_dir, identity, warnings)
        with contextlib.closing(previous):
            # A local model named is loaded beside the reading and the parse, which do not need
            # it: reading its table and checking its hash release the GIL. A build that fails
            # before it embeds waits for the load (`cancel`), so no thread is left behind.
            loading: Beside[Embedder] | None = None
            if model is None:
                name = embedder
                assert isinstance(name, str)
                loading = Beside(lambda _: make_embedder(name), "model")
            try:
                earlier_text = previous.text_index(walked, max_file_size, include_secrets)
                contents = read_changed(root, walked, previous if earlier_text is not None else None, max_file_size)
            except BaseException:
                if loading is not None:
                    loading.cancel()
                raise
            stages["walk+read"] = time.perf_counter() - clock

            generation: Path | None = None
            writing = True  # whether a failure now is a failed write (not one of parsing or embedding)
            try:
                # Generations no reader pins any more, and what interrupted builds left.
                store.collect(index_dir)
                generation = made = store.new_generation(index_dir)
                readable = [(path, content) for (path, _, _), content in zip(walked, contents) if not isinstance(content, str)]
                # A build up to a size runs its native steps (the GIL released) beside its Python
                # ones: on two cores it then waits for the longer of them, not for both. A larger one
                # keeps them apart, each step's memory freed before the next one's is taken.
                read_bytes = sum(len(content) for _, content in readable if content is not None)
                # The trigram index of a small full build is built beside its parse. Otherwise it
                # comes first, while the contents are all the build holds: built beside or after the
                # parse it would sit on top of every parsed record; an update's merges little.
                text_index = Beside(lambda _: _timed(write_text_index, made, readable, previous, earlier_text), "text")
                beside = earlier_text is None and read_bytes <= config.current().TEXT_INDEX_BESIDE_MAX_BYTES
                if not beside:
                    layered, stages["text index"] = text_index.result()
                    heap.release()  # the trigram index's build, freed in the core's threads
                del readable, earlier_text

                writing = False
                clock = time.perf_counter()
                skipped = Counter(walk_skipped)
                skipped_files: list[SkippedFile] = []
                try:
                    records, parsed = collect_records(walked, contents, previous.records, skipped, progress, skipped_files)
                except BaseException:
                    text_index.cancel()
                    raise
                del contents  # parsed: no stage needs the files' contents any more
                stages["parse"] = time.perf_counter() - clock
                if beside:
                    writing = True
                    layered, stages["text index"] = text_index.result()
                    writing = False
                heap.release()
                if loading is not None:
                    model = loading.result()  # a model that cannot load is not a failed write
                assert model is not None

                # The embedding works beside the graph's resolution and the rows' writing, which wait
                # for its codes only at the end. A large build's comes first: the chunks' texts,
                # dropped as they are embedded, are gone before the graph takes its memory.
                embedding = Beside(lambda stop: _timed(embed_missing, records, model, progress, warnings, stop), "embed")
                embedded = 0

                def codes_ready() -> None:
                    nonlocal embedded, writing
                    if "embed" not in stages:
                        writing = False  # a failed embedding is not a failed write
                        embedded, stages["embed"] = embedding.result()
                        writing = True

                try:
                    if read_bytes > config.current().EMBED_BESIDE_MAX_BYTES:
                        codes_ready()
                        heap.release()  # the chunks' texts, dropped as they were embedded
                    clock = time.perf_counter()
                    edges = dependency_edges(records, previous)
                    stages["graph"] = time.perf_counter() - clock

                    writing = True
                    clock = time.perf_counter()
                    walk_state = {
                        "walked_at_ns": walked_at_ns,
                        "max_file_size": max_file_size,
                        "include_secrets": include_secrets,
                        "scope": list(scope),
                        "skipped_files": [list(f) for f in skipped_files],
                    }
                    counts, file_rows = write_generation(
                        generation, root, records, model, edges, codes_ready, dict(+skipped), walk_state, previous, layered
                    )
                finally:
                    embedding.cancel()
                store.seal(generation, previous.generation)
                # What the generation's reader, and the next update, would read back (once sealed:
                # the seal dates its database file).
                store.keep_file_rows(generation, file_rows)
                store.publish(index_dir, generation)
                stages["write"] = time.perf_counter() - clock
            except BaseException as err:
                if loading is not None:
                    loading.cancel()
                if generation is not None and _current_name(index_dir) != generation.name:
                    shutil.rmtree(generation, ignore_errors=True)
                if writing and isinstance(err, sqlite3.OperationalError | OSError) and not isinstance(err, IndexStoreError):
                    raise store.write_error(index_dir, _as_os_error(err)) from err
                raise
    progress.finish()
    return BuildSummary(
        root=root,
        index_dir=index_dir,
        files=len(records),
        chunks=counts["chunks"],
        symbols=counts["symbols"],
        edges=counts["edges"],
        skipped=dict(+skipped),
        parsed_files=parsed,
        reused_files=len(records) - parsed,
        embedded_chunks=embedded,
        seconds=time.perf_counter() - started,
        index_bytes=sum(f.stat().st_size for f in generation.iterdir()),
        stages=stages,
        warnings=tuple(warnings),
    )


def unchanged_index(
    index_dir: Path,
    root: Path,
    identity: dict[str, object],
    walked: list[tuple[str, int, int]],
    walk_skipped: dict[str, int],
    max_file_size: int,
    include_secrets: bool,
    scope: tuple[str, ...] = (),
) -> tuple[Path, dict[str, int], dict[str, int]] | None:
    """The published generation, its counts and its skipped files by reason, when a build would
    write it again as it is: the walk found the files the index recorded, each with the stat it
    recorded and none recent enough to be suspect (`FreshnessCheck`), with the same options,
    embedder and parsing rules, and its parts pass their checks. None when it must be built (a
    damaged index included: it is built again, and says so)."""
    try:
        generation = store.current_generation(index_dir)
        if not (generation / store.MANIFEST).exists():
            return None
        db = store.open_database(generation)
    except IndexStoreError:
        return None
    try:
        meta = store.read_meta(db)
        if (
            meta.get("root") != str(root)
            or meta.get("embedder") != json.dumps(identity)
            or meta.get("parser") != parsing_rules()
        ):
            return None
        check = FreshnessCheck.of_database(db)
        if (check.max_file_size, check.include_secrets, check.scope) != (max_file_size, include_secrets, scope):
            return None
        changes = check.compare(walked)
        if changes.stale or changes.hashed:
            return None
        recorded: dict[str, int] = json.loads(meta.get("skipped", "{}"))
        skipped = Counter(walk_skipped) + Counter(reason for _, reason, _, _ in json.loads(meta.get("skipped_files", "[]")))
        if dict(skipped) != recorded:
            return None
        counts = {name: int(meta[f"count_{name}"]) for name in ("files", "chunks", "symbols", "edges")}
        # Last, as it reads every part: a repository that changed is told by its stats alone.
        store.verify(generation)
    except (IndexStoreError, sqlite3.DatabaseError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None
    finally:
        db.close()
    return generation, counts, recorded


def _compile_languages(paths: Iterable[str]) -> None:
    """The queries of the languages of `paths` compiled in the background (`compile_in_background`),
    and by the parsing workers kept from earlier builds (`prepare_kept_workers`)."""
    languages = {language for path in paths if (language := language_for(path)) is not None}
    prepare_kept_workers(languages)
    compile_in_background(languages)


def previous_walk_option(index_dir: Path, key: str, default: bool) -> bool:
    """A walk option as the published index recorded it (JSON true/false), else `default`."""
    try:
        db = store.open_database(store.current_generation(index_dir))
    except IndexStoreError:
        return default
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except (sqlite3.DatabaseError, UnicodeDecodeError):
        return default
    finally:
        db.close()
    return default if row is None else row[0] == "true"


def previous_scope(index_dir: Path) -> tuple[str, ...]:
    """The scope the published index was built with (empty: the whole tree, or no index)."""
    try:
        db = store.open_database(store.current_generation(index_dir))
    except IndexStoreError:
        return ()
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'scope'").fetchone()
        return () if row is None else recorded_scope({"scope": row[0]})
    except (sqlite3.DatabaseError, UnicodeDecodeError, ValueError, TypeError):
        return ()
    finally:
        db.close()


def _current_name(index_dir: Path) -> str | None:
    try:
        return store.read_current(index_dir)
    except IndexStoreError:
        return None


def _as_os_error(err: BaseException) -> OSError:
    """SQLite reports a full disk as an OperationalError; said as the OSError it is."""
    if isinstance(err, OSError):
        return err
    text = str(err)
    if "disk is full" in text or "disk I/O" in text:
        import errno

        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return OSError(None, text)


def collect_records(
    walked: Sequence[tuple[str, int, int]],
    contents: list[bytes | str | None],
    previous: dict[str, FileRecord],
    skipped: Counter[str],
    progress: Progress,
    skipped_files: list[SkippedFile] | None = None,
) -> tuple[list[FileRecord], int]:
    """A record per readable file (in the order of `contents`, whose bytes or None are the
    readable ones: None for a file not read, as the previous build saw it), reusing the previous
    one where the content is unchanged. Returns the records and how many files were parsed anew;
    files the walk found but could not index are counted in `skipped` and listed in
    `skipped_files`. `contents` is emptied of its bytes, each freed once its file is parsed (at
    60,000 files, a gigabyte held beside the records until the parse ended)."""
    # Each file's record in walk order: the previous one where it is kept (its stat as walked
    # now), else a placeholder until its parse is done (where in `records`, and its identity).
    records: list[FileRecord | None] = []
    placed: list[tuple[int, str, int, int, str]] = []
    to_parse: list[tuple[str, bytes]] = []
    for at, ((path, size, mtime_ns), content) in enumerate(zip(walked, contents)):
        if content is None:
            reused = previous[path]
        elif isinstance(content, str):  # the reason the file was skipped
            skipped[content] += 1
            if skipped_files is not None:
                skipped_files.append(SkippedFile(path, content, size, mtime_ns))
            continue
        else:
            contents[at] = None
            digest = hashlib.sha256(content).hexdigest()
            earlier = previous.get(path)
            if earlier is None or earlier.sha256 != digest:
                placed.append((len(records), path, size, mtime_ns, digest))
                records.append(None)
                to_parse.append((path, content))
                continue
            reused = earlier
        reused.size, reused.mtime_ns = size, mtime_ns
        records.append(reused)
    content = None  # the loop's last file: held by `to_parse` alone
    progress.start("parsing", len(records))
    progress.advance(len(records) - len(to_parse))
    results = parse_files(to_parse, progress=progress.advance, release=True)
    if len(results) != len(placed):
        raise RuntimeError(f"the parse gave {len(results)} results for {len(placed)} files")
    for (at, path, size, mtime_ns, digest), result in zip(placed, results):
        records[at] = FileRecord(
            path, size, mtime_ns, digest, result.language, result.chunks, result.symbols, result.references,
            result.code_words,
        )
    return cast(list[FileRecord], records), len(placed)


def read_changed(
    root: Path, walked: Sequence[tuple[str, int, int]], previous: Previous | None, max_file_size: int
) -> list[bytes | str | None]:
    """What a build knows of each walked file's content: its bytes, or why it is skipped, read
    now unless the `previous` build's stats say it is as that build saw it (`FreshnessCheck.changed_positions`):
    then None for a file it indexed (its record and document are kept), or the reason it skipped
    the file. Everything is read when there is no previous build to trust."""
    if previous is None or previous.stats is None:
        return list(read_files(root, [path for path, _, _ in walked], max_file_size))
    to_read, skipped = previous.stats.changed_positions(walked), previous.skipped
    contents: list[bytes | str | None] = [None] * len(walked)
    if skipped:  # why each file it skipped was: those read again below are judged again
        for i, (path, _, _) in enumerate(walked):
            if path in skipped:
                contents[i] = skipped[path]
    read = read_files(root, [walked[i][0] for i in to_read], max_file_size)
    for i, content in zip(to_read, read):
        contents[i] = content
    return contents


def embedding_text(path: str, chunk: Chunk) -> str:
    """What the embedder sees for a chunk: its path (names carry meaning) and its text, cut at
    EMBED_MAX_CHARS (a chunk is longer only when one line is: a minified file, a data blob), so
    an embedder's memory is bounded by chunk size, not by the size of a file's longest line."""
    return f"{store.shown_path(path)}\n{chunk.text[:EMBED_MAX_CHARS]}"


def embed_missing(
    records: list[FileRecord],
    model: Embedder,
    progress: Progress,
    warnings: list[str] | None = None,
    stop: threading.Event | None = None,
) -> int:
    """Give every record without codes its chunks' codes; return how many chunks that took
    (`stop`, once set, ends it before the next group: the build it serves has failed).
    Records are embedded a group of about `config.EMBED_GROUP_CHUNKS` chunks at a time, and a
    chunk's text, there only to be embedded, is dropped once it is: the texts handed to the
    embedder never all exist at once, nor do the chunks' texts outlive their codes (the memory
    of a large build). An embedding cache that cannot be used is left out, with a warning: it
    saves time, never decides what is indexed."""
    pending = [r for r in records if r.codes is None]
    total = sum(len(r.chunks) for r in pending)
    progress.start("embedding", total)
    said = warnings if warnings is not None else []
    cache: EmbeddingCache | None = None
    if total:
        try:
            cache = EmbeddingCache()
        except EmbeddingCacheError as err:
            said.append(f"{err}; embedding without the cache")
    embedded = 0
    try:
        for group in _record_groups(pending, config.current().EMBED_GROUP_CHUNKS):
            if stop is not None and stop.is_set():
                break
            inputs = [embedding_text(r.path, c) for r in group for c in r.chunks]

            def advance(done: int, _total: int, before: int = embedded) -> None:
                progress.advance(before + done - progress.done)

            files = [len(r.chunks) for r in group]
            codes = embed_texts(model, inputs, cache, files=files, progress=advance, warn=said.append)
            start = 0
            for record in group:
                record.codes = codes[start : start + len(record.chunks)]
                record.chunks = [chunk._replace(text="") for chunk in record.chunks]
                start += len(record.chunks)
            embedded += len(inputs)
    finally:
        if cache is not None:
            cache.close()
    return embedded


def _timed(step: Callable[..., T], *args: Any) -> tuple[T, float]:
    """What `step(*args)` returns, and the seconds it took."""
    started = time.perf_counter()
    return step(*args), time.perf_counter() - started


def _record_groups(records: list[FileRecord], chunks_per_group: int) -> Iterator[list[FileRecord]]:
    """Consecutive runs of `records` holding at least `chunks_per_group` chunks each (the last
    one fewer)."""
    group: list[FileRecord] = []
    held = 0
    for record in records:
        group.append(record)
        held += len(record.chunks)
        if held >= chunks_per_group:
            yield group
            group, held = [], 0
    if group:
        yield group


@dataclass(slots=True)
class Previous:
    """What a build starts from: the published generation's records by path, and its dependency
    graph (`EarlierGraph`), which an update resolves again only where the change reaches."""

    records: dict[str, FileRecord] = field(default_factory=dict)
    graph: EarlierGraph | None = None
    #: The generation they come from, whose trigram index an update merges into its own.
    generation: Path | None = None
    #: The stats that generation recorded (of its files and of those it skipped), to tell which
    #: files are as it saw them.
    stats: FreshnessCheck | None = None
    #: Why that generation left out each file it skipped.
    skipped: dict[str, str] = field(default_factory=dict)
    #: Its segments, open while the build runs (`close`): where each file's rows are.
    segments: Segments | None = None
    #: Each of its files' language, role bits and role names as stored (`roles.roles_of`, which
    #: depends only on the paths and languages of all files).
    file_roles: list[tuple[str | None, int, str | None]] = field(default_factory=list)
    #: Its `files` rows as stored (`store.file_rows`).
    file_rows: Sequence[tuple[Any, ...]] = ()
    _file_ids: tuple[EarlierGraph, dict[str, int]] | None = field(default=None, repr=False)

    def close(self) -> None:
        if self.segments is not None:
            self.segments.close()
            self.segments = None

    def same_files(self, records: Sequence[FileRecord]) -> bool:
        """Whether `records` are this generation's files, path for path (ids unchanged)."""
        return self.graph is not None and self.graph.paths == [r.path for r in records]

    def file_ids(self) -> dict[str, int]:
        """The previous generation's file id of each of its files (made once for its graph; not
        to be changed by the caller)."""
        if self.graph is None:
            return {}
        if self._file_ids is None or self._file_ids[0] is not self.graph:
            self._file_ids = (self.graph, {path: i for i, path in enumerate(self.graph.paths)})
        return self._file_ids[1]

    def earlier_ids(self, paths: list[str]) -> np.ndarray:
        """The previous generation's file id of each of `paths` (-1: not one of its files)."""
        if self.graph is not None and self.graph.paths == paths:  # an edit in place: the same files
            return np.arange(len(paths), dtype=np.int64)
        old_id = self.file_ids()
        return np.fromiter((old_id.get(path, -1) for path in paths), dtype=np.int64, count=len(paths))

    def references(self, file_ids: Sequence[int]) -> dict[int, list[Reference]]:
        """The references of the previous generation's files `file_ids`, read from its segments."""
        found: dict[int, list[Reference]] = {i: [] for i in file_ids}
        if not found or self.segments is None:
            return found
        columns = "file_id, kind, name, line, enclosing, qualifier, imported_names"
        rows: Iterable[tuple[Any, ...]]
        if len(found) > IN_LIST:
            rows = self.segments.rows(REFS, columns)
        else:
            rows = [row[1:] for row in self.segments.rows_of_files(REFS, columns, list(found))]
        new = tuple.__new__
        for file_id, run in groupby(rows, key=itemgetter(0)):
            if (listed := found.get(file_id)) is not None:
                listed.extend(
                    new(Reference, (kind, name, line, enclosing, qualifier, _names_from_db(names)))
                    for _, kind, name, line, enclosing, qualifier, names in run
                )
        return found

    def importers_of(self, tails: set[str]) -> set[int]:
        """The previous generation's files with an import that one of `tails` could resolve
        (a component of the path it names, `graph.import_parts`)."""
        if not tails or self.segments is None or self.graph is None:
            return set()
        paths, segments = self.graph.paths, self.segments
        order = segments.order

        def by_part(columns: list[list[Any]]) -> dict[str, np.ndarray]:
            # Of the base's own rows: a base file's path never changes (a renamed file is another
            # file), so the files live when this is made give their paths for good.
            found: defaultdict[str, set[int]] = defaultdict(set)
            for stored, kind, name in zip(*columns):
                now = int(order.base_files[stored]) if order.mapped else stored
                if kind == "import" and now >= 0:
                    for part in graph.import_parts(name, paths[now]):
                        found[part].add(stored)
            return {part: np.array(sorted(ids), dtype=np.int64) for part, ids in found.items()}

        parts = segments.base_derived("importers by part", by_part, REFS, ["file_id", "kind", "name"])
        hits = [ids for tail in tails if (ids := parts.get(tail)) is not None]
        importers = order.map_base_files(distinct(np.concatenate(hits))) if hits else np.zeros(0, dtype=np.int64)
        importers = importers[importers >= 0]
        found = set(importers[~order.in_delta[importers]].tolist())
        found.update(
            file_id
            for file_id, name in segments.delta_rows_where(REFS, "file_id, name", "kind = 'import'")
            if not tails.isdisjoint(graph.import_parts(name, paths[file_id]))
        )
        return found

    def on_types(self, types: set[str]) -> set[int]:
        """The previous generation's files whose calls on a receiver of one of `types` (or of a
        class deriving from one, `graph._BASE_LEVELS` levels down) may mean a method inherited
        through it, and the files declaring those classes (`self.x()` in them)."""
        if not types or self.segments is None:
            return set()
        found: set[int] = set()
        seen, frontier = set(types), sorted(types)
        for _ in range(graph.BASE_LEVELS):
            derived: set[str] = set()
            for file_id, enclosing in self._references_named(frontier, "file_id, enclosing", "kind = 'inherit'"):
                found.add(file_id)
                if enclosing:
                    derived.add(graph.receiver_type(enclosing))
            frontier = sorted(derived - seen)
            seen.update(frontier)
            if not frontier:
                break
        wanted = sorted(seen)
        # A qualifier is the type itself or ends with it (`http.Session`); no index answers the
        # second, so this reads every reference, which only a changed type or base asks for.
        for start in range(0, len(wanted), IN_LIST // 2):
            part = wanted[start : start + IN_LIST // 2]
            marks = ", ".join("?" * len(part))
            tails = " OR ".join("qualifier LIKE ?" for _ in part)
            where = f"kind != 'import' AND qualifier != '' AND (qualifier IN ({marks}) OR {tails})"
            parameters = [*part, *(f"%.{name}" for name in part)]
            found.update(file_id for _, file_id in self.segments.rows_where(REFS, "file_id", where, parameters))
        return found

    def aliases_of(self, names: set[str]) -> set[str]:
        """The names the previous generation's files bind `names` to when they import them
        under another name."""
        return {bound for (bound,) in self._references_named(names, "qualifier", "kind = 'alias'")}

    def definitions_of(self, names: set[str]) -> list[tuple[Any, ...]]:
        """(file id, name, kind, qualified name) of the previous generation's definitions of one
        of `names`."""
        return self._rows_named(SYMBOLS, names, "file_id, name, kind, qualified_name")

    def callers_of(self, names: set[str]) -> set[int]:
        """The previous generation's files that call or inherit one of `names`."""
        return {file_id for (file_id,) in self._references_named(names, "file_id", "kind != 'import'")}

    def _references_named(self, names: Iterable[str], columns: str, kinds: str) -> list[tuple[Any, ...]]:
        """`columns` of the previous generation's references to one of `names` whose kind meets
        `kinds` (an SQL condition), by the `refs_name` index."""
        return self._rows_named(REFS, names, columns, f"{kinds} AND ")

    def _rows_named(self, table: int, names: Iterable[str], columns: str, also: str = "") -> list[tuple[Any, ...]]:
        """`columns` of the previous generation's rows of `table` named one of `names` (and
        meeting the SQL condition `also`, ending in AND), a batch of names at a time."""
        if self.segments is None:
            return []
        wanted = sorted(set(names))
        found: list[tuple[Any, ...]] = []
        for start in range(0, len(wanted), IN_LIST):
            part = wanted[start : start + IN_LIST]
            marks = ", ".join("?" * len(part))
            found.extend(row[1:] for row in self.segments.rows_where(table, columns, f"{also}name IN ({marks})", part))
        return found

    def text_index(
        self, walked: Sequence[tuple[str, int, int]], max_file_size: int, include_secrets: bool
    ) -> LayeredTextIndex | None:
        """The previous generation's trigram index (both layers), when a build of the files `walked` with these
        walk options can keep its documents (in their order: ids are positions); None when there
        is none, or it is damaged (the build then reads and indexes every file)."""
        if self.generation is None or self.stats is None or self.graph is None or self.segments is None:
            return None
        if (self.stats.max_file_size, self.stats.include_secrets) != (max_file_size, include_secrets):
            return None
        skipped = self.skipped
        earlier = self.earlier_ids([path for path, _, _ in walked if path not in skipped])
        if np.any(np.diff(earlier[earlier >= 0]) <= 0):
            return None
        try:
            return LayeredTextIndex.of_generation(self.generation, self.segments)
        except (CorruptIndexError, OSError, ValueError):
            return None


@dataclass(slots=True)
class EarlierGraph:
    """A generation's files in id order, each one's symbol count, and its edges (src, dst, kind,
    line, resolution), numbered as that generation numbered its nodes."""

    paths: list[str]
    symbol_counts: np.ndarray
    edges: graph.EdgeColumns


#: The parts an update carries rows from, checked before it reads them.
_RECORD_PARTS = (store.META, store.ROWS, store.ROWS_DELTA, store.CODES, store.CODES_DELTA, store.EDGES)


def load_previous_records(index_dir: Path, wanted: dict[str, object], warnings: list[str] | None = None) -> Previous:
    """The current generation's records and graph, or nothing if there is no usable index.

    With another embedder than the one `wanted` identifies (`embedder_identity`: provider, model
    or size) nothing is carried over: the stored chunks
    keep no text to embed again from, and a full rebuild is what a model change needs anyway.
    Nor when the files were parsed by another version of the parsing rules (`PARSER_VERSION`).
    Nor from a damaged generation: its metadata and codes are checked against its manifest
    first, so damage is never carried into the next one (said in `warnings`).
    """
    try:
        generation = store.current_generation(index_dir)
        # Checked before anything is read from them. A folder without a manifest is checked
        # after its format version, which an older layout fails (and says so).
        checked = (generation / store.MANIFEST).exists()
        if checked:
            store.verify(generation, _RECORD_PARTS)
        db = store.open_database(generation)
    except IndexNotFoundError:
        return Previous()
    except IndexStoreError as err:
        _say_damaged(warnings, err)
        return Previous()
    if not checked:
        try:
            store.verify(generation, _RECORD_PARTS)
        except IndexStoreError as err:
            db.close()
            _say_damaged(warnings, err)
            return Previous()
    try:
        meta = store.read_meta(db)
        if meta.get("embedder") != json.dumps(wanted):
            if warnings is not None:
                warnings.append(f"the index was embedded by {_stored_embedder_name(meta.get('embedder'))}, not"
                                f" {_embedder_name(wanted)}; every file indexed again")
            return Previous()
        if meta.get("parser") != parsing_rules():
            # Parsed by older rules: every file is parsed again (codes come from the cache).
            return Previous()
        previous = _read_records(db, generation)
        previous.generation = generation
        indexed = {path: IndexedStat(r.size, r.mtime_ns, r.sha256) for path, r in previous.records.items()}
        previous.stats = FreshnessCheck.of_stats(Path(meta["root"]), meta, indexed)
        previous.skipped = {path: reason for path, reason, _, _ in json.loads(meta.get("skipped_files", "[]"))}
        return previous
    except IndexStoreError as err:
        _say_damaged(warnings, err)
        return Previous()
    except (sqlite3.DatabaseError, OSError, ValueError, KeyError, TypeError, EOFError) as err:
        _say_damaged(warnings, store.damaged(generation, f"is damaged ({type(err).__name__})"))
        return Previous()
    finally:
        db.close()


def _embedder_name(identity: dict[str, object]) -> str:
    """"provider model NAME (dims bits)" of an `embedder_identity`, for messages."""
    context = f", file context {identity['file_context']:g}" if identity.get("file_context") else ""
    return f"{identity['provider']} model {identity['model']} ({identity['dims']} bits{context})"


def _stored_embedder_name(stored: str | None) -> str:
    try:
        return _embedder_name(json.loads(stored or ""))
    except (ValueError, KeyError, TypeError):
        return "an unknown embedder"


def _say_damaged(warnings: list[str] | None, err: IndexStoreError) -> None:
    if warnings is not None:
        problem = err.problem if isinstance(err, IndexFormatError) else str(err)
        warnings.append(f"{problem}; every file indexed again")


#: The columns of a `Symbol`, in its order.
_SYMBOL_COLUMNS = ", ".join(Symbol._fields)


def _read_records(db: sqlite3.Connection, generation: Path) -> Previous:
    """The previous generation's files as records to carry over: with their symbols and codes,
    and their segments (`Previous.segments`), where their other rows are."""
    files = store.file_rows(db, generation)
    if [row[0] for row in files] != list(range(len(files))):
        raise ValueError("file ids are not 0 .. files - 1")
    segments = Segments(generation, len(files))
    try:
        order = segments.order
        # Slices of plain views (slicing the memory map itself costs a memmap object per file),
        # each of the segment that holds the file: the two are not copied into one.
        codes = segments.codes_of_files(
            store.load_codes(generation / store.CODES).view(np.ndarray),
            store.load_codes(generation / store.CODES_DELTA).view(np.ndarray),
        )
        records = [
            FileRecord(
                store.path_from_db(path), size, mtime_ns, digest, language, [], [], [], codes=codes[i], earlier_id=i
            )
            for i, path, language, size, mtime_ns, digest, _, _ in files
        ]  # fmt: skip
        by_file = segments.per_file(SYMBOLS, _SYMBOL_COLUMNS, Symbol._make)
        for record, symbols in zip(records, by_file):
            record.symbols.extend(symbols)
        symbol_counts = np.diff(order.file_starts[SYMBOLS])
        earlier = EarlierGraph(
            [r.path for r in records],
            symbol_counts,
            graph.EdgeColumns.of_matrix(store.load_edges(generation / store.EDGES), len(records) + int(symbol_counts.sum())),
        )
    except BaseException:
        segments.close()
        raise
    file_roles = [(language, bits, names) for _, _, language, _, _, _, bits, names in files]
    return Previous({r.path: r for r in records}, earlier, segments=segments, file_roles=file_roles, file_rows=files)


def _most_shared(definitions: Sequence[graph.DefinitionSpan], first: int, last: int) -> int | None:
    """The id of the definition sharing the most of lines first..last (the first on a tie)."""
    if not definitions:
        return None
    return max(definitions, key=lambda d: min(d.end_line, last) - max(d.start_line, first)).id


def embedder_identity(model: Embedder) -> dict[str, object]:
    return identity(model)


def write_generation(
    generation: Path,
    root: Path,
    records: list[FileRecord],
    model: Embedder,
    edges: graph.EdgeColumns,
    codes_ready: Callable[[], None],
    skipped: dict[str, int],
    walk_state: dict[str, object] | None = None,
    previous: Previous | None = None,
    layered: bool = False,
) -> tuple[dict[str, int], list[tuple[Any, ...]]]:
    """Write the metadata, the segments and the graph (`edges`, from `dependency_edges`) of
    `records` into `generation` (`write_text_index` has written its trigram index); the records'
    codes are read once `codes_ready()` has returned, after their rows; `walk_state` (when the walk
    started, its size limit, the files it skipped) goes into the metadata for the freshness
    check. `layered` (the trigram index kept its base): the previous generation's base segment
    is linked, and the delta holds the rows of every file edited since; otherwise one new base
    holds every file's. The rows of the records carried over from `previous` are copied from its
    segments, renumbered, and the edges of those out of the change's reach are carried over
    (`dependency_edges`). Returns the counts of what it wrote, and the rows of its `files` table
    as reading them back gives them."""
    symbol_count = sum(len(r.symbols) for r in records)
    node_count = len(records) + symbol_count
    nodes = store.encode_nodes(*graph.node_values(node_count, edges))
    (generation / store.NODES).write_bytes(nodes)
    (generation / store.EDGES).write_bytes(store.encode_edges(edges.matrix()))

    order = previous.segments.order if previous is not None and previous.segments is not None else None
    if layered:
        if previous is None or previous.generation is None or order is None or previous.graph is None:
            raise RuntimeError("a delta segment needs the previous generation's segments")
        for name in (store.ROWS, store.CODES):
            _link_or_copy(previous.generation / name, generation / name)
        held = [i for i, r in enumerate(records) if r.earlier_id is None or order.in_delta[r.earlier_id]]
        base_files = _base_files_now(order, previous.graph.paths, records)
        write_segment(
            generation / store.ROWS_DELTA, generation / store.CODES_DELTA, records, held, previous, model.dims, codes_ready,
            base_files,
        )
    else:
        write_segment(
            generation / store.ROWS, generation / store.CODES, records, range(len(records)), previous, model.dims, codes_ready
        )
        write_segment(generation / store.ROWS_DELTA, generation / store.CODES_DELTA, records, [], None, model.dims, codes_ready)

    counts = {
        "files": len(records),
        "chunks": sum(r.chunk_count for r in records),
        "symbols": symbol_count,
        "edges": len(edges),
    }
    db = store.create_database(generation / store.META)
    try:
        rows = _insert_files(db, records, previous)
        store.write_meta(
            db,
            {
                "root": str(root),
                "embedder": json.dumps(embedder_identity(model)),
                "parser": parsing_rules(),
                "skipped": skipped,
                "built_at": time.time(),
                **{f"count_{k}": v for k, v in counts.items()},
                **(walk_state or {}),
            },
        )
        store.finish_database(db)
    finally:
        db.close()
    return counts, rows


def _base_files_now(order: SegmentOrder, paths: list[str], records: list[FileRecord]) -> np.ndarray | None:
    """The id among `records` of each file of the base that the previous generation (files
    `paths`, segments in `order`) was laid over, -1 for one gone; None when they are its own."""
    if not order.mapped and paths == [r.path for r in records]:
        return None
    new_id = {r.path: i for i, r in enumerate(records)}
    now = np.fromiter((new_id.get(path, -1) for path in paths), dtype=np.int64, count=len(paths))
    earlier = order.base_files
    found: np.ndarray = np.where(earlier >= 0, now[np.maximum(earlier, 0)], -1)
    return None if len(found) == len(records) and np.array_equal(found, np.arange(len(records))) else found


def write_segment(
    path: Path,
    codes_path: Path,
    records: list[FileRecord],
    held: Sequence[int],
    previous: Previous | None,
    dims: int,
    codes_ready: Callable[[], None],
    base_files: np.ndarray | None = None,
) -> None:
    """A segment of the files `held` (ids among `records`, ascending): its database at `path`,
    its codes at `codes_path`, written once `codes_ready()` has returned; a delta over a base whose files have other ids now records them
    (`base_files`, `segments.SegmentOrder`). The rows of records carried over are copied from
    the `previous` generation's segments (attached as `earlier` and `earlier_delta`), the others'
    come from the records."""
    wanted = [records[i] for i in held]
    carried = previous is not None and previous.segments is not None and any(r.earlier_id is not None for r in wanted)
    attached = {}
    if carried:
        assert previous is not None and previous.generation is not None
        attached = {"earlier": previous.generation / store.ROWS, "earlier_delta": previous.generation / store.ROWS_DELTA}
    db = store.create_database(path, attached, store.SEGMENT_SCHEMA)
    try:
        counts = _insert_rows(db, records, held, previous if carried else None)
        db.executemany("INSERT INTO held VALUES (?, ?, ?, ?)", [(i, *c) for i, c in zip(held, counts)])
        if base_files is not None:
            db.execute("INSERT INTO base_files VALUES (?)", (store.encode_base_files(base_files),))
        db.executemany("INSERT INTO code_words VALUES (?, ?)", _code_word_rows(db, records, held, previous if carried else None))
        store.finish_database(db, store.SEGMENT_SCHEMA)
    finally:
        db.close()
    codes_ready()
    codes = [r.codes for r in wanted if r.codes is not None and len(r.codes)]
    matrix = np.concatenate(codes) if codes else np.zeros((0, dims // 8), dtype=np.uint8)
    if matrix.shape[0] != sum(r.chunk_count for r in wanted):
        raise RuntimeError("embedding count does not match chunk count")
    # Saved through Python's own file writes, not numpy's (a short write there says "N requested
    # and M written" without the reason): a full disk is then the ENOSPC it is. The codes are
    # small (dims / 8 bytes a chunk), so the copy in memory costs little.
    codes_path.write_bytes(store.encode_codes(matrix))


def write_text_index(
    generation: Path, readable: list[tuple[str, bytes | None]], previous: Previous, earlier: LayeredTextIndex | None
) -> bool:
    """The trigram index of the `readable` files (path and content; document id = file id: the
    position among them) into `generation`, its two layers (`index.text_layers`); freed once
    written, as nothing of a build reads it. A file whose content is None is as the `previous`
    generation indexed it: its document is kept from that generation's index `earlier`
    (`Previous.text_index`), the others are added. While the delta, with the base's documents of
    files removed since, stays small, the earlier base is kept as it is (linked, its documents
    mapped to the files' ids now) and only the delta written again: then True, and the rows
    follow it (`write_generation`)."""
    added = [(i, content) for i, (_, content) in enumerate(readable) if content is not None]
    unread = np.ones(len(readable), dtype=bool)
    unread[[i for i, _ in added]] = False
    empty, _ = TrigramIndex.build([])
    if earlier is None:
        if len(added) != len(readable):
            raise RuntimeError("files were left unread without an earlier trigram index to keep them from")
        base, binary = TrigramIndex.build(added)
        delta = empty
    else:
        assert previous.generation is not None
        # Files unread are the previous generation's, as it indexed them: (old id, new id) each.
        old_of = previous.earlier_ids([path for path, _ in readable])
        kept_new = np.flatnonzero(unread)
        kept_old = old_of[kept_new]
        if np.any(kept_old < 0):
            raise RuntimeError("a file left unread is not one of the previous generation's")
        in_delta = earlier.replaced[kept_old]
        kept_in_delta = list(zip(kept_old[in_delta].tolist(), kept_new[in_delta].tolist()))
        delta_size = sum(len(content) for _, content in added) + sum(
            earlier.delta.doc_len(old) or 0 for old, _ in kept_in_delta
        )
        # The base's documents of files gone since it was written are carried as dead weight.
        present = np.zeros(earlier.doc_count, dtype=bool)
        present[old_of[old_of >= 0]] = True
        gone = earlier.base_docs(np.flatnonzero(~present))
        dead = earlier.removed_bytes() + sum(earlier.base.doc_len(doc) or 0 for doc in gone[gone >= 0].tolist())
        if delta_size + dead <= config.current().TEXT_DELTA_MAX_SHARE * earlier.base.content_bytes:
            # The base stays (its files keep their places among the others, as the segments map
            # them), the delta holds every document edited or added since.
            _link_or_copy(previous.generation / store.TEXT_INDEX, generation / store.TEXT_INDEX)
            delta, binary = earlier.delta.merged(kept_in_delta, added)
            if binary:
                raise RuntimeError(f"binary content reached the text index: documents {binary}")
            delta.save(generation / store.TEXT_DELTA)
            return True
        # One new base: the documents of the delta are given to it as new ones.
        from_delta = [(new, earlier.delta.doc_bytes(old)) for old, new in kept_in_delta]
        from_base = list(zip(earlier.base_docs(kept_old[~in_delta]).tolist(), kept_new[~in_delta].tolist()))
        base, binary = earlier.base.merged(from_base, sorted(added + from_delta))
        delta = empty
    if binary:  # read_files already left binary files out, by the same rule
        raise RuntimeError(f"binary content reached the text index: documents {binary}")
    base.save(generation / store.TEXT_INDEX)
    delta.save(generation / store.TEXT_DELTA)
    return False


def _link_or_copy(source: Path, target: Path) -> None:
    """`target` as a second name of the immutable file `source` (a copy where the file system
    has no hard links)."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _code_word_rows(
    db: sqlite3.Connection, records: list[FileRecord], held: Sequence[int], previous: Previous | None
) -> Iterator[tuple[str, bytes]]:
    """The rows of a segment's `code_words` table, by word, made as they are taken: each word with the ids of the files
    `held` whose code spells it (`store.encode_file_ids`). The words of records parsed anew are
    theirs; those of records carried over are read from the `previous` generation's segments
    (attached as `earlier` and `earlier_delta`) and renumbered."""
    ids: dict[str, int] = {}
    # Each (word, file) pair as two int32 columns, a record at a time: at 60,000 files they are
    # tens of millions of pairs, which as Python lists of numbers took a gigabyte.
    fresh = [i for i in held if records[i].earlier_id is None]
    word_parts = [
        np.fromiter((ids.setdefault(word, len(ids)) for word in records[i].code_words), dtype=np.int32,
                    count=len(records[i].code_words))
        for i in fresh
    ]  # fmt: skip
    words: np.ndarray = np.concatenate(word_parts) if word_parts else np.zeros(0, dtype=np.int32)
    del word_parts
    files: np.ndarray = np.repeat(np.asarray(fresh, dtype=np.int32), [len(records[i].code_words) for i in fresh])
    if previous is not None and previous.segments is not None:
        order = previous.segments.order
        renumber = np.full(len(order.in_delta), -1, dtype=np.int64)
        for i in held:
            if (old := records[i].earlier_id) is not None:
                renumber[old] = i
        for schema, from_delta in (("earlier", False), ("earlier_delta", True)):
            # The base's postings of files the delta holds are not theirs any more.
            sources = order.in_delta == from_delta
            if not np.any(sources & (renumber >= 0)):
                continue
            stored = db.execute(f"SELECT word, files FROM {schema}.code_words").fetchall()
            blobs = [posting for _, posting in stored]
            old_files = store.decode_file_ids(b"".join(blobs))
            if not from_delta and order.mapped:
                if len(old_files) and old_files.max() >= len(order.base_files):
                    raise ValueError("a code_words posting names a file the base lacks")
                old_files = order.map_base_files(old_files)  # the base's own ids as the generation's
            if len(old_files) and old_files.max() >= len(renumber):
                raise ValueError("a code_words posting names a file the generation lacks")
            owner = np.repeat(np.arange(len(stored)), [len(posting) // 4 for posting in blobs])
            moved = np.where(old_files >= 0, renumber[np.maximum(old_files, 0)], -1)
            keep = (moved >= 0) & sources[np.maximum(old_files, 0)]
            if not np.any(keep):
                continue
            vocabulary = [ids.setdefault(word, len(ids)) for word, _ in stored]
            words = np.concatenate([words, np.asarray(vocabulary, dtype=np.int64)[owner[keep]]])
            files = np.concatenate([files, moved[keep]])
    if not len(words):
        return iter(())
    # One sort by (word, file): each word's files ascending, each word one run.
    order_of = np.lexsort((files, words))
    postings = store.encode_file_ids(files[order_of])
    ends = (np.cumsum(np.bincount(words, minlength=len(ids))) * 4).tolist()
    del order_of, words, files
    vocabulary_list = list(ids)
    # Made as they are inserted: a word's row holds a copy of its posting.
    return (
        (vocabulary_list[i], postings[(ends[i - 1] if i else 0) : ends[i]])
        for i in sorted(range(len(vocabulary_list)), key=vocabulary_list.__getitem__)
        if ends[i] > (ends[i - 1] if i else 0)
    )


def graph_nodes(
    records: list[FileRecord], references: Sequence[graph.ReferenceRow]
) -> tuple[list[graph.FileNode], list[graph.SymbolNode]]:
    """Every file's node, and the nodes of the symbols a resolution of `references` looks at
    (`graph.asked_for`), numbered as among every symbol's."""
    names, enclosing_files = graph.asked_for(references)
    files: list[graph.FileNode] = []
    symbols: list[graph.SymbolNode] = []
    first = 0
    for file_id, record in enumerate(records):
        files.append(graph.FileNode(file_id, record.path))
        every = file_id in enclosing_files
        for offset, s in enumerate(record.symbols):
            if every or s.name in names:
                symbols.append(
                    graph.SymbolNode(first + offset, file_id, s.name, s.qualified_name, s.kind, s.start_line, s.end_line)
                )
        first += len(record.symbols)
    return files, symbols


def _resolved_edges(records: list[FileRecord], file_ids: Iterable[int], previous: Previous | None) -> list[graph.Edge]:
    """`graph.resolve_edges` of the references of the files `file_ids`."""
    references = graph_references(records, file_ids, previous)
    files, symbols = graph_nodes(records, references)
    return graph.resolve_edges(
        files, symbols, references, lambda ids: graph_references(records, ids, previous), _SymbolsNamed(records), _NestedIn(records)
    )


class _NestedIn:
    """The graph's ids of each file's definitions made inside a function's body
    (`graph.nested_definitions`), worked out for a file when resolution first asks."""

    def __init__(self, records: list[FileRecord]):
        self.records = records
        self.first: list[int] | None = None
        self.found: dict[int, frozenset[int]] = {}

    def __call__(self, file_id: int) -> frozenset[int]:
        found = self.found.get(file_id)
        if found is None:
            if self.first is None:
                self.first = [0, *np.cumsum([len(r.symbols) for r in self.records]).tolist()]
            start = self.first[file_id]
            found = self.found[file_id] = frozenset(start + i for i in graph.nested_definitions(self.records[file_id].symbols))
        return found


class _SymbolsNamed:
    """The graph nodes of a name's definitions among every record's, found by a scan: resolution
    asks for the few names `graph_nodes` left out (a base class of a file not resolved again)."""

    def __init__(self, records: list[FileRecord]):
        self.records = records

    def __call__(self, name: str) -> list[graph.SymbolNode]:
        found: list[graph.SymbolNode] = []
        first = 0
        for file_id, record in enumerate(self.records):
            for offset, s in enumerate(record.symbols):
                if s.name == name:
                    found.append(graph.SymbolNode(first + offset, file_id, s.name, s.qualified_name, s.kind, s.start_line, s.end_line))
            first += len(record.symbols)
        return found


def graph_references(
    records: list[FileRecord], file_ids: Iterable[int], previous: Previous | None = None
) -> list[graph.ReferenceRow]:
    """The references of the files `file_ids`, in their order, as the graph resolves them (those
    of records carried over read from the `previous` generation)."""
    wanted = list(file_ids)
    earlier_ids = [i for f in wanted if (i := records[f].earlier_id) is not None]
    stored = previous.references(earlier_ids) if previous is not None else {}
    rows: list[graph.ReferenceRow] = []
    for file_id in wanted:
        record = records[file_id]
        found = record.references if record.earlier_id is None else stored[record.earlier_id]
        rows.extend(
            graph.ReferenceRow(file_id, r.kind, r.name, r.line, r.enclosing, r.qualifier, r.imported_names)
            for r in found
        )
    return rows


def _still_many(previous: Previous, removed: list[str], removed_ids: list[int], names: set[str]) -> set[str]:
    """Of `names`, defined by the files `removed` (previous ids `removed_ids`) and by no file
    changed or added, those whose resolution elsewhere the removal cannot change: every kind
    the removed files defined the name as keeps more than `config.AMBIGUOUS_CALL_MAX_DEFINITIONS`
    top-level definitions (a definition at a file's top level is never one made inside a
    function's body). A call resolves to a definition by the first of the resolver's tiers that
    finds one (`graph._Resolver.definition`); within a tier, to the first by file and line: a
    definition that was not chosen changes no choice when removed. What a removal can change
    is a name becoming one definition, or few enough to be guessed at (`_Resolver.ambiguous`),
    and the resolution of the calls that went into the removed file (`_linked_into`)."""
    if not names:
        return set()
    limit = config.current().AMBIGUOUS_CALL_MAX_DEFINITIONS
    kinds: defaultdict[str, set[str]] = defaultdict(set)
    for path in removed:
        for symbol in previous.records[path].symbols:
            if symbol.name in names:
                kinds[symbol.name].add(symbol.kind)
    gone = set(removed_ids)
    remaining: defaultdict[tuple[str, str], set[tuple[int, str]]] = defaultdict(set)
    for file_id, name, kind, qualified in previous.definitions_of(names):
        if file_id not in gone and "." not in qualified:
            remaining[(name, kind)].add((file_id, qualified))
    return {name for name, of_kinds in kinds.items() if all(len(remaining[(name, kind)]) > limit for kind in of_kinds)}


def _linked_into(earlier: EarlierGraph, removed_ids: list[int], old_first: np.ndarray, old_files: int) -> set[int]:
    """The previous generation's files with an edge into one of the files `removed_ids` (their
    nodes or their definitions')."""
    edges = earlier.edges
    if not len(edges) or not removed_ids:
        return set()
    into = np.zeros(old_files + int(old_first[-1]), dtype=bool)
    for old in removed_ids:
        into[old] = True
        into[old_files + int(old_first[old]) : old_files + int(old_first[old + 1])] = True
    sources = edges.src[into[edges.dst]]
    owners = np.where(sources < old_files, sources, np.searchsorted(old_first, sources - old_files, side="right") - 1)
    return set(distinct(owners).tolist())


def dependency_edges(records: list[FileRecord], previous: Previous | None) -> graph.EdgeColumns:
    """The edges of the graph over `records`, as `graph.resolve_edges` gives them from every file.

    An update resolves again only the files the change can reach, and carries the others' edges
    over from the previous generation, renumbered. A file's edges start at its own nodes and
    depend on its references, on the files an import can mean and on the definitions of the
    names it calls (`graph._Resolver`). So a file that is unchanged keeps its edges unless it
    calls or inherits a name that a changed, added or removed file defined or defines (a name
    only removed, of which many definitions remain, only where its calls went into a removed
    file: `_still_many`), or imports a module one of its path components could name
    (`graph.module_tails`) of a file added or removed; the changed files and those are resolved
    again."""
    earlier = previous.graph if previous is not None else None
    if earlier is None or previous is None or previous.generation is None:
        return graph.EdgeColumns.of(_resolved_edges(records, range(len(records)), previous))
    paths = [r.path for r in records]
    if paths == earlier.paths:  # an edit in place: every file keeps its id
        old_to_new = np.arange(len(paths), dtype=np.int64)
    else:
        new_id = {path: i for i, path in enumerate(paths)}
        old_to_new = np.array([new_id.get(path, -1) for path in earlier.paths], dtype=np.int64)
    kept_ids = old_to_new[old_to_new >= 0]
    if np.any(np.diff(kept_ids) <= 0):  # ids are by path: never so, but then nothing is carried
        return graph.EdgeColumns.of(_resolved_edges(records, range(len(records)), previous))
    changed = [i for i, r in enumerate(records) if r.earlier_id is None]
    removed_ids: list[int] = np.flatnonzero(old_to_new < 0).tolist()
    removed = [earlier.paths[old] for old in removed_ids]
    added = [records[i].path for i in changed if records[i].path not in previous.records]
    old_files, new_files = len(earlier.paths), len(records)
    old_first = np.concatenate(([0], np.cumsum(earlier.symbol_counts)))
    new_first = np.concatenate(([0], np.cumsum([len(r.symbols) for r in records])))
    # The names whose definitions changed: their callers are resolved again. A changed file's
    # other definitions keep their places among the same-named ones (what resolution looks at),
    # so edges into them are carried over, to their new nodes (`moved_symbols`).
    removed_names = {s.name for path in removed for s in previous.records[path].symbols}
    grown: set[str] = set()  # names defined anew or again by a changed or added file
    moved_symbols: dict[int, int] = {}
    changed_file = np.zeros(old_files, dtype=bool)  # earlier files changed, still present
    for i in changed:
        before = previous.records.get(records[i].path)
        if before is None or before.earlier_id is None:
            grown.update(s.name for s in records[i].symbols)
            continue
        changed_file[before.earlier_id] = True
        old_base = old_files + int(old_first[before.earlier_id])
        new_base = new_files + int(new_first[i])
        grown.update(_moved_definitions(before.symbols, records[i].symbols, old_base, new_base, moved_symbols))
    names = removed_names | grown
    # A name only removed, of which many definitions remain, resolves as before wherever it did
    # not resolve into a removed file (`_still_many`): only those files are resolved again.
    settled = _still_many(previous, removed, removed_ids, removed_names - grown)
    # A name bound under another by a module (`from .ledger import post_entry as post`) is
    # called by the other name where it is imported from there (`graph.Reexports.renamed`).
    reached = previous.callers_of((names - settled) | previous.aliases_of(names))
    if settled:
        reached.update(_linked_into(earlier, removed_ids, old_first, old_files))
    # A file importing names from a module takes them from where that module imports them
    # (`graph._reexported`): a file whose imports changed has its importers resolved again.
    kept_before = {i: e for i in changed if (e := _earlier_id(previous, records[i].path)) is not None}
    before_refs = previous.references(sorted(kept_before.values())) if kept_before else {}
    imports_changed = [
        records[i].path for i, e in kept_before.items() if _imports(before_refs[e]) != _imports(records[i].references)
    ]
    moved = added + removed + imports_changed
    reached.update(previous.importers_of({t for path in moved for t in graph.module_tails(path)}))
    # A call on an instance of a type may mean a method its bases define (`graph._Resolver.
    # through_type`): where a type was defined or removed, or a class's bases, or the imports
    # its bases are found by, changed, calls on it and its subclasses are resolved again.
    retyped = _retyped(records, changed, removed, previous, names, kept_before, before_refs, imports_changed)
    reached.update(previous.on_types(retyped))
    redo = [i for i, r in enumerate(records) if r.earlier_id is None or r.earlier_id in reached]
    resolved = _resolved_edges(records, redo, previous)
    if not len(earlier.edges):
        return graph.EdgeColumns.of(resolved)
    # The earlier edges of the files kept, in the new numbering: a file node is its file's new
    # id, a symbol node moves with its file's first symbol, or, in a changed file, to the
    # definition that took its place.
    old = earlier.edges

    def file_of(nodes: np.ndarray) -> np.ndarray:
        owner = np.searchsorted(old_first, nodes - old_files, side="right") - 1
        return np.where(nodes < old_files, nodes, owner)

    def renumbered(nodes: np.ndarray) -> np.ndarray:
        owner = file_of(nodes)
        moved = old_to_new[owner]
        symbol = new_files + new_first[np.maximum(moved, 0)] + (nodes - old_files - old_first[owner])
        found = np.where(moved < 0, -1, np.where(nodes < old_files, moved, symbol))
        in_changed = (nodes >= old_files) & changed_file[owner]
        if np.any(in_changed):
            found[in_changed] = [moved_symbols.get(node, -1) for node in nodes[in_changed].tolist()]
        return found

    source = old_to_new[file_of(old.src)]
    kept = old[(source >= 0) & ~np.isin(source, np.array(redo, dtype=np.int64))]
    kept = graph.EdgeColumns(renumbered(kept.src), renumbered(kept.dst), kept.kind, kept.line, kept.how)
    if np.any(kept.dst < 0):  # an edge kept into a removed file: its caller should have been redone
        raise RuntimeError("an edge carried over leads into a file that was removed")
    return graph.EdgeColumns.of(resolved).sorted_with(kept)


def _retyped(
    records: list[FileRecord],
    changed: list[int],
    removed: list[str],
    previous: Previous,
    names: set[str],
    kept_before: dict[int, int],
    before_refs: dict[int, list[Reference]],
    imports_changed: list[str],
) -> set[str]:
    """The types whose inherited methods an update may resolve differently: those whose
    definitions changed (of `names`), and the classes of the changed files whose bases, or whose
    file's imports, changed."""
    definitions = [previous.records[path].symbols for path in removed]
    for i in changed:
        definitions.append(records[i].symbols)
        if (before := previous.records.get(records[i].path)) is not None:
            definitions.append(before.symbols)
    types = {s.name for symbols in definitions for s in symbols if s.kind in TYPE_KINDS and s.name in names}
    imports_moved = set(imports_changed)
    for i, earlier in kept_before.items():
        now = {(r.enclosing, r.name) for r in records[i].references if r.kind == "inherit" and r.enclosing}
        was = {(r.enclosing, r.name) for r in before_refs[earlier] if r.kind == "inherit" and r.enclosing}
        differ = now ^ was if records[i].path not in imports_moved else now | was
        types.update(graph.receiver_type(enclosing) for enclosing, _ in differ)
    return types


def parsing_rules() -> str:
    """What an index's records and edges were made by: the parsing rules' version, and the
    tuned number that decides which calls are linked as guesses (an update carries edges over,
    so an index made with another must be made again)."""
    return f"{PARSER_VERSION}/{config.current().AMBIGUOUS_CALL_MAX_DEFINITIONS}"


def _earlier_id(previous: Previous, path: str) -> int | None:
    before = previous.records.get(path)
    return before.earlier_id if before is not None else None


def _imports(references: Sequence[Reference]) -> set[tuple[str, str, tuple[str, ...]]]:
    """What a file imports, as resolution reads it: each module with the names it brings, and
    the names it binds under others."""
    return {(r.name, r.qualifier, tuple(r.imported_names)) for r in references if r.kind in ("import", "alias")}


def _moved_definitions(
    before: Sequence[Symbol], after: Sequence[Symbol], old_base: int, new_base: int, moved: dict[int, int]
) -> set[str]:
    """The names a file's definitions changed for resolution, `before` and `after` an edit (its
    symbols in id order; node ids `old_base + i` and `new_base + j`): a name whose definitions
    differ in number, qualified names, kinds or order by line. Those of the others are paired,
    in that order, into `moved` (old node -> new node)."""

    def by_name(symbols: Sequence[Symbol]) -> dict[str, list[tuple[int, int, str, str]]]:
        found: dict[str, list[tuple[int, int, str, str]]] = defaultdict(list)
        for position, s in enumerate(symbols):
            found[s.name].append((s.start_line, position, s.qualified_name, s.kind))
        return found

    old, new = by_name(before), by_name(after)
    differ: set[str] = set()
    for name in old.keys() | new.keys():
        was, now = sorted(old.get(name, ())), sorted(new.get(name, ()))
        if [(q, k) for _, _, q, k in was] != [(q, k) for _, _, q, k in now]:
            differ.add(name)
            continue
        moved.update((old_base + a[1], new_base + b[1]) for a, b in zip(was, now))
    return differ


def _insert_files(db: sqlite3.Connection, records: list[FileRecord], previous: Previous | None) -> list[tuple[Any, ...]]:
    """The rows of the generation's `files` table: ids in the records' order. Returns them as
    the table gives them back (`store.file_rows`)."""
    # Roles depend on every file's path and language only: an update that changes neither keeps
    # the stored ones, and the previous generation's rows are copied whole (SQLite copies the
    # table's pages: 59,280 files 143 -> 40 ms), those of the files edited then rewritten.
    if previous is not None and previous.same_files(records) and [
        language for language, _, _ in previous.file_roles
    ] == [r.language for r in records]:
        if previous.generation is not None and previous.stats is not None:
            db.execute("ATTACH DATABASE ? AS earlier", (str(previous.generation / store.META),))
            try:
                db.execute("INSERT INTO files SELECT * FROM earlier.files")
            finally:
                db.commit()
                db.execute("DETACH DATABASE earlier")
            # As the previous generation recorded them (a record carried over takes its file's
            # new stat when only that changed).
            stored = previous.stats.indexed
            restated = [
                (file_id, r.size, r.mtime_ns, r.sha256)
                for file_id, r in enumerate(records)
                if stored[r.path] != (r.size, r.mtime_ns, r.sha256)
            ]
            db.executemany(
                "UPDATE files SET size = ?, mtime_ns = ?, sha256 = ? WHERE id = ?",
                [(size, mtime_ns, digest, file_id) for file_id, size, mtime_ns, digest in restated],
            )
            rows = list(previous.file_rows)
            for file_id, size, mtime_ns, digest in restated:
                i, path, language, _, _, _, role_bits, role_names = rows[file_id]
                rows[file_id] = (i, path, language, size, mtime_ns, digest, role_bits, role_names)
            return rows
        stored_roles = [(bits, names) for _, bits, names in previous.file_roles]
    else:
        stored_roles = [
            (role.bits, json.dumps({"parts": list(role.parts), "versions": list(role.versions)}))
            if role.parts or role.versions else (role.bits, None)
            for role in roles.roles_of([r.path for r in records], [r.language for r in records])
        ]  # fmt: skip
    rows = [
        (file_id, store.path_to_db(r.path), r.language, r.size, r.mtime_ns, r.sha256, role_bits, role_names)
        for file_id, (r, (role_bits, role_names)) in enumerate(zip(records, stored_roles))
    ]
    db.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return rows


def _insert_rows(
    db: sqlite3.Connection, records: list[FileRecord], held: Sequence[int], previous: Previous | None
) -> list[tuple[int, int, int]]:
    """The rows of a segment's chunks, symbols and references tables for the files `held`. Ids
    are the segment's, given file by file in the order of `held`; the rows of records carried
    over from `previous` (its segments attached as `earlier` and `earlier_delta`) are copied from
    there in runs of consecutive files, renumbered by the run's shift of file, chunk, symbol and
    reference ids. Returns each held file's count of chunks, symbols and references."""
    chunk_id = symbol_id = ref_id = 0
    counts: list[tuple[int, int, int]] = []
    # The records parsed anew, each with its first chunk, symbol and reference id: their rows
    # are made as they are inserted, a table at a time, never all held at once (at 60,000 files
    # they were a gigabyte of tuples on top of the records).
    fresh: list[tuple[FileRecord, int, int, int, int]] = []
    # (source schema, first and last earlier file id, then the shifts of file, chunk, symbol and
    # reference ids)
    runs: list[tuple[str, int, int, int, int, int, int]] = []
    order = previous.segments.order if previous is not None and previous.segments is not None else None
    base_starts = order.base.starts.tolist() if order is not None else []
    delta_starts = order.delta.starts.tolist() if order is not None else []
    delta_at = {f: i for i, f in enumerate(order.delta.files.tolist())} if order is not None else {}
    base_of = order.base_of if order is not None else None
    for file_id in held:
        r = records[file_id]
        if (old := r.earlier_id) is not None and order is not None and base_of is not None:
            # The file's id in the segment its rows are in: the delta's are the generation's,
            # the base's its own.
            at = delta_at.get(old)
            if at is None:
                stored = int(base_of[old])
                schema, starts, position = "earlier", base_starts, stored
            else:
                schema, starts, position, stored = "earlier_delta", delta_starts, at, old
            (chunk_start, symbol_start, ref_start), ends = starts[position], starts[position + 1]
            shifts = (file_id - stored, chunk_id - chunk_start, symbol_id - symbol_start, ref_id - ref_start)
            if runs and runs[-1][0] == schema and runs[-1][2] == stored - 1 and runs[-1][3:] == shifts:
                runs[-1] = (schema, runs[-1][1], stored, *shifts)
            else:
                runs.append((schema, stored, stored, *shifts))
            counts.append((ends[0] - chunk_start, ends[1] - symbol_start, ends[2] - ref_start))
            chunk_id += ends[0] - chunk_start
            symbol_id += ends[1] - symbol_start
            ref_id += ends[2] - ref_start
            continue
        counts.append((len(r.chunks), len(r.symbols), len(r.references)))
        fresh.append((r, file_id, chunk_id, symbol_id, ref_id))
        chunk_id += len(r.chunks)
        symbol_id += len(r.symbols)
        ref_id += len(r.references)

    def symbol_rows() -> Iterator[tuple[object, ...]]:
        for r, file_id, _, first, _ in fresh:
            for symbol_id, s in enumerate(r.symbols, first):
                yield (symbol_id, file_id, s.name, s.kind, s.qualified_name, s.signature, s.docstring,
                       s.start_line, s.end_line, s.parent)  # fmt: skip

    def chunk_rows() -> Iterator[tuple[object, ...]]:
        for r, file_id, first, first_symbol, _ in fresh:
            # A chunk is as central as the symbol it holds (of the definitions of that name, the
            # one it shares most lines with: overloads share a name), loose code as its file: the
            # symbol's id is kept for the reader to look its centrality up.
            by_name: dict[str, list[graph.DefinitionSpan]] = {}
            for symbol_id, s in enumerate(r.symbols, first_symbol):
                by_name.setdefault(s.qualified_name, []).append(graph.DefinitionSpan(symbol_id, s.start_line, s.end_line))
            for chunk_id, c in enumerate(r.chunks, first):
                owner = _most_shared(by_name.get(c.symbol, ()), c.start_line, c.end_line) if c.symbol else None
                yield (chunk_id, file_id, c.start_line, c.end_line, c.symbol, owner)

    def ref_rows() -> Iterator[tuple[object, ...]]:
        for r, file_id, _, _, first in fresh:
            for ref_id, x in enumerate(r.references, first):
                yield (ref_id, file_id, x.kind, x.name, x.line, x.enclosing, x.qualifier, _names_to_db(x.imported_names))

    db.executemany("INSERT INTO symbols VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", symbol_rows())
    db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)", chunk_rows())
    db.executemany("INSERT INTO refs VALUES (?, ?, ?, ?, ?, ?, ?, ?)", ref_rows())
    for schema, first, last, file_shift, chunk_shift, symbol_shift, ref_shift in runs:
        span = (first, last)
        db.execute(
            "INSERT INTO chunks SELECT id + ?, file_id + ?, start_line, end_line, symbol, symbol_id + ?"
            f" FROM {schema}.chunks WHERE file_id BETWEEN ? AND ?",
            (chunk_shift, file_shift, symbol_shift, *span),
        )
        db.execute(
            "INSERT INTO symbols SELECT id + ?, file_id + ?, name, kind, qualified_name, signature, docstring,"
            f" start_line, end_line, parent FROM {schema}.symbols WHERE file_id BETWEEN ? AND ?",
            (symbol_shift, file_shift, *span),
        )
        db.execute(
            "INSERT INTO refs SELECT id + ?, file_id + ?, kind, name, line, enclosing, qualifier, imported_names"
            f" FROM {schema}.refs WHERE file_id BETWEEN ? AND ?",
            (ref_shift, file_shift, *span),
        )
    return counts


# Most references import no names; their column is the same short text every time.
_NO_NAMES = json.dumps([])


def _names_to_db(names: tuple[str, ...]) -> str:
    return json.dumps(list(names)) if names else _NO_NAMES


def _names_from_db(text: str) -> tuple[str, ...]:
    return () if text == _NO_NAMES else tuple(json.loads(text))
