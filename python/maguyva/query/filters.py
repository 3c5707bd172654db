"""Filters written in a question, the way code searchers write them, read before it is
classified:

    lang:go path:internal/ retry          -path:test    -lang:markdown    file:*_test.go

- `lang:NAME` / `-lang:NAME`: files of that language (or not); names as the index knows them
  (`python`, `go`, `typescript`...) or their usual short forms (`py`, `golang`, `ts`, `js`...),
  and `text` for files of no parsed language;
- `path:P` / `-path:P`: a path starting with P, or matching P when it is a glob (`*`, `?`, `[`),
  `**` crossing folders;
- `file:GLOB`: a file name (the last part of the path) matching GLOB;
- `repo:NAME`: one repository of a corpus;
- `sym:NAME`: the chunks that define a symbol called NAME;
- `case:yes`: the text modality's terms matched with their case.

Filters are whole words outside quotes; what is left is the question. They restrict every
modality before ranking (`allowed_chunks`) and every result after it.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from maguyva.errors import QueryError
from maguyva.index.reader import IndexReader, per_layout

#: Short names of languages, as people type them.
LANGUAGE_ALIASES = {
    "py": "python", "golang": "go", "js": "javascript", "jsx": "javascript", "ts": "typescript",
    "rs": "rust", "rb": "ruby", "cs": "csharp", "c#": "csharp", "c++": "cpp", "cxx": "cpp", "kt": "kotlin",
    "ex": "elixir", "hs": "haskell", "sh": "bash", "shell": "bash", "md": "text", "markdown": "text", "none": "text",
}  # fmt: skip
_FILTER = re.compile(r"(?<!\S)(?P<not>-?)(?P<key>lang|path|file|repo|sym|case):(?P<value>\S+)")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'|`[^`]*`")
_GLOB = re.compile(r"[*?\[]")


@dataclass(frozen=True, slots=True)
class Filters:
    languages: tuple[str, ...] = ()
    not_languages: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    not_paths: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    repo: str | None = None
    symbol: str | None = None
    case_sensitive: bool = False

    def __bool__(self) -> bool:
        return self != Filters()

    @property
    def narrows_files(self) -> bool:
        """Whether some files are left out (every filter but `repo` and `case`)."""
        return bool(self.languages or self.not_languages or self.paths or self.not_paths or self.files or self.symbol)

    def to_dict(self) -> dict[str, Any]:
        """The filters that are set, JSON-ready."""
        out: dict[str, Any] = {}
        for key, value in (("lang", self.languages), ("-lang", self.not_languages), ("path", self.paths),
                           ("-path", self.not_paths), ("file", self.files)):  # fmt: skip
            if value:
                out[key] = list(value)
        if self.repo is not None:
            out["repo"] = self.repo
        if self.symbol is not None:
            out["sym"] = self.symbol
        if self.case_sensitive:
            out["case"] = "yes"
        return out

    def merged(self, *, paths: tuple[str, ...] = (), languages: tuple[str, ...] = ()) -> Filters:
        """These filters with more paths and languages (the `paths=`, `languages=` arguments)."""
        if not paths and not languages:
            return self
        return Filters(
            tuple(dict.fromkeys((*self.languages, *map(language_name, languages)))), self.not_languages,
            tuple(dict.fromkeys((*self.paths, *paths))), self.not_paths, self.files, self.repo, self.symbol,
            self.case_sensitive,
        )  # fmt: skip


def language_name(given: str) -> str:
    name = given.strip().lower()
    return LANGUAGE_ALIASES.get(name, name)


def parse(query: str) -> tuple[Filters, str]:
    """The filters written in `query` and the question left once they are taken out. QueryError
    for a filter that cannot be used (`case:` other than yes or no, a second `repo:`)."""
    masked = _QUOTED.sub(lambda m: " " * len(m.group()), query)
    found = [m for m in _FILTER.finditer(masked)]
    if not found:
        return Filters(), query
    values: dict[str, list[str]] = {}
    case_sensitive = False
    for m in found:
        key, value, negated = m["key"], query[m.start("value") : m.end("value")], bool(m["not"])
        if key == "case":
            if negated or value.lower() not in ("yes", "no"):
                raise QueryError(f"case: takes yes or no, not {value!r}")
            case_sensitive = value.lower() == "yes"
            continue
        if negated and key not in ("lang", "path"):
            raise QueryError(f"-{key}: is not a filter; only lang: and path: can be negated")
        values.setdefault(("-" if negated else "") + key, []).append(value)
    for key in ("repo", "sym"):
        if len(values.get(key, [])) > 1:
            raise QueryError(f"{key}: is given {len(values[key])} times; give it once")
    rest = query
    for m in reversed(found):
        rest = rest[: m.start()] + rest[m.end() :]
    filters = Filters(
        tuple(language_name(v) for v in values.get("lang", [])),
        tuple(language_name(v) for v in values.get("-lang", [])),
        tuple(values.get("path", [])), tuple(values.get("-path", [])), tuple(values.get("file", [])),
        next(iter(values.get("repo", [])), None), next(iter(values.get("sym", [])), None), case_sensitive,
    )  # fmt: skip
    return filters, " ".join(rest.split())


def path_matches(path: str, pattern: str) -> bool:
    """`path:` semantics: a glob matched against the whole path (`**` crossing folders, `*`
    not), or else a prefix of the path."""
    if _GLOB.search(pattern):
        return _glob_regex(pattern).fullmatch(path) is not None
    return path.startswith(pattern.removeprefix("./"))


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            inside = pattern[i + 1 : end]
            negated = inside.startswith("!")
            inside = (inside[1:] if negated else inside).replace("\\", "\\\\")
            out.append(f"[{'^' if negated else ''}{inside}]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


@dataclass(frozen=True, slots=True)
class _FileColumns:
    paths: np.ndarray  # str
    names: list[str]
    languages: np.ndarray  # str; "text" for no parsed language


@per_layout
def _file_columns(reader: IndexReader) -> _FileColumns:
    paths = [f.path for f in reader.files]
    return _FileColumns(
        np.array(paths, dtype=str), [p.rsplit("/", 1)[-1] for p in paths],
        np.array([f.language or "text" for f in reader.files], dtype=str),
    )  # fmt: skip


def _matching(columns: _FileColumns, pattern: str) -> np.ndarray:
    """Which files `path_matches` `pattern` (a prefix is compared in one vectorized pass)."""
    if _GLOB.search(pattern):
        compiled = _glob_regex(pattern)
        return np.fromiter((compiled.fullmatch(p) is not None for p in columns.paths.tolist()), bool, len(columns.paths))
    if not len(columns.paths):
        return np.zeros(0, dtype=bool)
    return np.char.startswith(columns.paths, pattern.removeprefix("./"))


def allowed_files(reader: IndexReader, filters: Filters) -> np.ndarray:
    """Which files of `reader` the filters keep (by file id), as a bool array."""
    columns = _file_columns(reader)
    keep = np.ones(len(columns.paths), dtype=bool)
    if filters.languages:
        keep &= np.isin(columns.languages, list(filters.languages))
    if filters.not_languages:
        keep &= ~np.isin(columns.languages, list(filters.not_languages))
    if filters.paths:
        keep &= np.logical_or.reduce([_matching(columns, p) for p in filters.paths])
    for pattern in filters.not_paths:
        keep &= ~_matching(columns, pattern)
    if filters.files:
        keep &= np.fromiter(
            (any(fnmatch.fnmatchcase(name, g) for g in filters.files) for name in columns.names), bool, len(columns.names)
        )
    return keep


def allowed_chunks(reader: IndexReader, filters: Filters, defining: list[int] | None = None) -> np.ndarray | None:
    """Which chunks the filters keep, as a bool array over chunks; None when they keep all.
    `defining`: the chunks that define the `sym:` name."""
    if not filters.narrows_files:
        return None
    files = allowed_files(reader, filters)
    chunks = files[np.asarray(reader.chunk_file, dtype=np.int64)]
    if filters.symbol is not None:
        only = np.zeros(len(chunks), dtype=bool)
        only[np.asarray(defining or [], dtype=np.int64)] = True
        chunks &= only
    return chunks


__all__ = ["Filters", "allowed_chunks", "allowed_files", "parse", "path_matches"]
