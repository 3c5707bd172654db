"""What fusion cannot see, applied to its top candidates: where code lives and what it defines.

RRF keeps only ranks, so three signals that decide many questions are lost in it. They are
applied to the fused candidates of the intents that answer with places to read
(`ONE_RESULT_PER_FILE`), before one chunk per file is kept:

- **Path agreement.** Code is filed under names that say what it is: "the line formatter" lives
  in `LineFormatter.php`, "radix tree" in `tree.go`. A chunk whose file name or folder shares
  words with the question gains the best fused score times the share of the question's words it
  matches (word parts of identifiers compared, a prefix of 3+ letters counting as a match, and
  so do words of one stem: "dependency" and dependencies/, "utility" and utils.go, and a run of
  words spelled by its initials: "file system" and fs.c).
  Words on the paths of most of the index's files (the project's own name) are not counted.
  A file whose whole name the question spells ("YAML node hierarchy" and YamlNode.java,
  "the floating window" and float.lua) gains config.FILE_NAME_BONUS more: a name made only of the
  question's words says the file is about what is asked, where a longer name sharing one word
  of it (raw_form.rs for "form extractor") is about something narrower.
  Not for a question that is a bare name with a definition in the index: that is the answer.
- **Definition over mention.** When the question names a symbol (a bare name, a declaration, a
  definition phrase, or CamelCase names inside a sentence), the chunks defining a symbol of that
  exact name gain a multiple of the best fused score (types before callables, which get half;
  more when the file is named after the symbol), so the definition outranks the places that
  merely use it. A name defined nowhere in the index (it comes from a package that is not
  indexed) is answered by the file the code imports it from: its re-export, where the rest of
  the code gets it.
- **File coherence.** The code that explains a subsystem is a file of its own, and several of
  its chunks come up together: for explanation questions (understand_code) and sentences that
  name a symbol along the way ("TypeHandler and custom type mapping"), each file's best chunk
  gains config.COHERENCE_BONUS times the best fused score, scaled by its file's share of the
  largest sum of fused scores over one file's chunks.
- **File agreement.** With one result per file, a result stands for its file: a modality that
  found the file through another of its chunks agrees with it all the same (the semantic
  modality finds the class's docstring, the text modality its method; chunk-level fusion sees
  two half-found chunks). Each file's best chunk gains config.FILE_AGREEMENT times the best
  contribution, within the file, of every modality that did not find that chunk itself.
- **Secondary code.** Tests, examples, benchmarks, compatibility shims and files in no
  programming language (docs, data) match questions about a concept as well as the code that
  implements it, but are rarely what is asked for: their scores are multiplied by config.SECONDARY_CODE_FACTOR.
  A C or C++ header beside a source file of the same name (`idna.h` next to `idna.c`) declares
  what the source defines and explains: its scores are multiplied by config.HEADER_BESIDE_SOURCE_FACTOR. Code
  under a version folder with a newer sibling (`v3/` beside `v4/`) is kept for compatibility; a
  question that names no version is about the newest: its scores are multiplied by config.OLDER_VERSION_FACTOR.
  A file named as a part of another beside it (`EntryMapper.Async.cs` beside `EntryMapper.cs`, a
  partial class split by concern) answers only questions that name its part: otherwise its
  scores are multiplied by config.PART_BESIDE_WHOLE_FACTOR, and the whole goes first.
  A file written once per platform (`win/serial.c` beside `unix/serial.c`, `term_windows.go` beside
  `term_unix.go`) answers a question that names no platform by its POSIX side, the code most
  builds run and the Windows port mirrors: the Windows twin's scores are multiplied by
  config.WINDOWS_PORT_FACTOR unless the question names Windows.

Bonuses are relative to the best fused score, so they mean the same whatever k and weights
produced it. Every number is here, as data.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import repeat
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from maguyva import config
from maguyva.arrays import distinct
from maguyva.index import roles
from maguyva.index.graph import EDGE_KINDS
from maguyva.index.reader import IndexReader, per_layout, per_reader
from maguyva.index.symbols import defined_as, symbol_table
from maguyva.lexicon import (
    NAMESPACE_KINDS,
    STOPWORDS,
    VALUE_KINDS,
    camel_case_words,
    last_part,
    split_identifier,
    stem,
)
from maguyva.query.classify import Classification

# Its numbers are in `maguyva.config` (the factors of the file roles, the bonuses and their
# thresholds); what a question says that lifts a role's factor, and whom a bonus is for, is here.

#: A question naming a version ("v3") asks for the code of that version, older or not.
_VERSION_IN_QUESTION = re.compile(r"\bv(\d+)\b", re.I)
#: A question naming Windows asks for the Windows port.
_WINDOWS_IN_QUESTION = re.compile(r"\b(?:win(?:32|64|dows|sock)?|iocp|msvc|mingw)\b", re.I)
#: The intents and classifier rules whose answers gain the file coherence bonus.
COHERENCE_INTENTS = frozenset({"understand_code"})
COHERENCE_RULES = frozenset({"identifier_in_sentence"})
#: Rules whose subject is a symbol's name.
_NAME_RULES = frozenset({"definition_keyword", "definition_phrase", "identifier"})

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LETTERS = re.compile(r"[A-Za-z]+")
#: No initials: what `initialisms` finds in a question without runs of words.
EMPTY_INITIALS: Mapping[str, frozenset[str]] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class FusedParts:
    """What fusion saw of each candidate: `chunks` (n,), each one's contribution per modality
    `contributions` (n, modalities), 0 where a modality did not find the chunk, and its fused
    score `scores` (n,)."""

    chunks: np.ndarray
    contributions: np.ndarray
    scores: np.ndarray


@dataclass(frozen=True, slots=True)
class Signals:
    """Which of the signals to apply (all by default; the benchmarks switch them off one by one)."""

    paths: bool = True
    definitions: bool = True
    secondary: bool = True
    coherence: bool = True
    agreement: bool = True


@per_layout
def headers_beside_sources(reader: IndexReader) -> frozenset[int]:
    """The files of `reader`'s index that are C/C++ headers in the folder of a source file of
    the same name (a role found at build time)."""
    return frozenset(np.flatnonzero(reader.file_roles & roles.HEADER_BESIDE_SOURCE).tolist())


@per_layout
def older_versions(reader: IndexReader) -> dict[int, frozenset[str]]:
    """The files of `reader`'s index under a version folder (`v3/`) that has a newer sibling
    (`v4/`), with the versions of those folders."""
    return {
        file_id: frozenset(reader.file_role_names[file_id]["versions"])
        for file_id in np.flatnonzero(reader.file_roles & roles.OLDER_VERSION).tolist()
    }


@per_layout
def parts_beside_wholes(reader: IndexReader) -> dict[int, frozenset[str]]:
    """The files of `reader`'s index named `Name.Part.ext` in the folder of a `Name.ext` (a C#
    partial class split by concern, a module's declarations or variant), with the words of
    their part names."""
    return {
        file_id: frozenset().union(*map(_name_words, reader.file_role_names[file_id]["parts"]))
        for file_id in np.flatnonzero(reader.file_roles & roles.PART_BESIDE_WHOLE).tolist()
    }


@per_layout
def windows_ports(reader: IndexReader) -> frozenset[int]:
    """The files of `reader`'s index that are the Windows side of a file written once per
    platform (`src/win/serial.c` beside `src/unix/serial.c`, `term_windows.go` beside `term_unix.go`)."""
    return frozenset(np.flatnonzero(reader.file_roles & roles.WINDOWS_PORT).tolist())


@lru_cache(maxsize=65536)
def path_words(path: str) -> frozenset[str]:
    """The lower-cased words of a file's name (without extension) and of its folder."""
    *folders, name = path.split("/")
    words = _part_words(name.split(".")[0] or name)
    return words | _part_words(folders[-1]) if folders else words


@lru_cache(maxsize=65536)
def _part_words(part: str) -> frozenset[str]:
    """A path part lower-cased whole and split into its words (a folder's files share its)."""
    return frozenset(w for w in (part.lower(), *(p.lower() for p in split_identifier(part))) if w)


def question_words(query: str, name_parts: bool = False) -> frozenset[str]:
    """The words of a question that a path can agree with. With `name_parts` (the question is a
    name), a compound name counts by its parts: `IntoReply` is filed under `reply/`, and
    must not match `into_make_handler.rs` through the prefix "into" of "intoreply"."""
    words = _WORD.findall(query)
    if name_parts:
        words = [part for word in words for part in (split_identifier(word) or [word])]
    return frozenset(w.lower() for w in words if len(w) > 2 and w.lower() not in STOPWORDS)




@lru_cache(maxsize=65536)
def _ordered(words: frozenset[str]) -> tuple[tuple[str, ...], int]:
    """`words` sorted (the words starting with a prefix are one run of them), and the length of
    the longest (no longer prefix of a word can be one of them)."""
    return tuple(sorted(words)), max(map(len, words), default=0)


@lru_cache(maxsize=65536)
def _stems(words: frozenset[str]) -> frozenset[str]:
    return frozenset(stem(w) for w in words)


def _agrees(word: str, words: frozenset[str], shortest: int) -> bool:
    """`word` is one of `words` or a prefix of one, or one of them is a prefix of it (prefixes
    of `shortest`+ letters). A prefix of one of `words` is found by bisection in the sorted
    words, and prefixes of `word` are looked up only as long as the longest of `words`: the cost
    is bounded by the path's words, not by a question word thousands of letters long."""
    if word in words:
        return True
    ordered, longest = _ordered(words)
    if len(word) >= shortest:
        at = bisect_left(ordered, word)
        if at < len(ordered) and ordered[at].startswith(word):
            return True
    return any(word[:i] in words for i in range(shortest, min(len(word), longest + 1)))


def matched_share(
    words: frozenset[str], path: frozenset[str], initials: Mapping[str, frozenset[str]] = EMPTY_INITIALS
) -> float:
    """Share of `words` that agree with the path words `path` (`matched_words`)."""
    return len(matched_words(words, path, initials)) / len(words) if words else 0.0


def matched_words(
    words: Iterable[str], path: frozenset[str], initials: Mapping[str, frozenset[str]] = EMPTY_INITIALS
) -> list[str]:
    """The words of `words` that agree with the path words `path`: as written, one a prefix (3+
    letters) of the other ("route" and "routes"), or by their stems, one a prefix (4+ letters) of
    the other ("dependency" and "dependencies", "utility" and "utils", "routing" and "router"),
    or spelled by their initials (`initials`, from `initialisms`: "file system" and fs.c)."""
    heads = _heads(path)
    by_initials = frozenset().union(*(run for short, run in initials.items() if short in path)) if initials else ()
    return [word for word in words if word in by_initials or agrees(word, path, heads)]


def agrees(word: str, path: frozenset[str], heads: frozenset[str]) -> bool:
    """Whether `word` agrees with one of the words `path` (whose `_heads` are `heads`): as
    written, or one a prefix (3+ letters) of the other, or by their stems (4+ letters)."""
    # Agreeing words share their first three letters, and so do their stems (a stem keeps at
    # least three letters of its word): most words are ruled out here.
    return word in path or (
        word[:config.current().AGREEMENT_SHORTEST_PREFIX] in heads
        and (_agrees(word, path, config.current().AGREEMENT_SHORTEST_PREFIX) or _agrees(stem(word), _stems(path), config.current().AGREEMENT_SHORTEST_STEM_PREFIX))
    )


def initialisms(query: str) -> dict[str, frozenset[str]]:
    """The initials of each run of two or three adjacent words of a question (words of three or
    more letters, no stopword), with the words: code names things by them ("file system" in fs.c,
    "user interface" under ui/, "abstract syntax tree" in ast.py)."""
    words = [w.lower() for w in _LETTERS.findall(query)]
    found: dict[str, set[str]] = {}
    for size in (2, 3):
        for at in range(len(words) - size + 1):
            run = words[at : at + size]
            if all(len(w) >= 3 and w not in STOPWORDS for w in run):
                found.setdefault("".join(w[0] for w in run), set()).update(run)
    return {short: frozenset(run) for short, run in found.items()}


def _name_words(name: str) -> frozenset[str]:
    """The lower-cased words of an identifier-like name, words of one letter left out."""
    return frozenset(w for w in (p.lower() for p in (split_identifier(name) or [name])) if len(w) > 1)


@lru_cache(maxsize=65536)
def name_words(path: str) -> frozenset[str]:
    """The words of a file's name without extension (`YamlNode.java`: yaml, node)."""
    name = path.rpartition("/")[2]
    return _name_words(name.split(".")[0] or name)


def spells(words: frozenset[str], name: frozenset[str], initials: Mapping[str, frozenset[str]] = EMPTY_INITIALS) -> bool:
    """Whether every word of `name` agrees with one of the question's `words` (as
    `matched_share` has them agree) or is the initials of a run of them."""
    rest = frozenset(w for w in name if w not in initials or not (initials[w] & words))
    return bool(name and words) and (not rest or matched_share(rest, words) == 1.0)


def spells_name(words: frozenset[str], path: str, initials: Mapping[str, frozenset[str]] = EMPTY_INITIALS) -> bool:
    """Whether the question spells the file's whole name ("JSON element hierarchy" and
    YamlNode.java, "the floating window" and float.lua, "file system operations" and fs.c)."""
    return spells(words, name_words(path), initials)


def _heads(words: frozenset[str]) -> frozenset[str]:
    """The first AGREEMENT_SHORTEST_PREFIX letters of each of `words`."""
    return _heads_of(words, config.current().AGREEMENT_SHORTEST_PREFIX)


@lru_cache(maxsize=65536)
def _heads_of(words: frozenset[str], length: int) -> frozenset[str]:
    return frozenset(w[:length] for w in words)


class _Postings:
    """Words, sorted, and the files of each: the files of every word starting with a prefix are
    one slice of one array."""

    def __init__(self, files_of: dict[str, np.ndarray]):
        self.files_of = files_of
        self.words = sorted(files_of)
        lengths = np.fromiter((len(files_of[w]) for w in self.words), dtype=np.int64, count=len(self.words))
        self._offsets = np.concatenate(([0], np.cumsum(lengths)))
        self._flat = np.concatenate([files_of[w] for w in self.words]) if self.words else np.zeros(0, dtype=np.int64)
        #: No prefix of a word longer than this is one of the words.
        self.longest = max(map(len, self.words), default=0)

    def starting(self, prefix: str) -> np.ndarray:
        """The files of the words starting with `prefix` (the word itself included), a file once
        per word."""
        # The words starting with `prefix` are one run of the sorted words, which ends before
        # the prefix followed by the last code point (past it only if a word holds that point).
        words = self.words
        first = bisect_left(words, prefix)
        last = bisect_left(words, prefix + "\U0010ffff", first)
        while last < len(words) and words[last].startswith(prefix):
            last += 1
        return self._flat[self._offsets[first]:self._offsets[last]]


class PathVocabulary:
    """Which of an index's files each path word is on, to tell how many files a question word
    agrees with as written (a prefix of 3+ letters of one another, not by stems: a word is common
    when the paths spell it, like the project's name; "router" is not made common by a large
    routing/ folder)."""

    def __init__(self, reader: IndexReader):
        self.files = len(reader.files)
        files_of: dict[str, list[int]] = {}
        for file_id, info in enumerate(reader.files):
            for word in path_words(info.path):
                files_of.setdefault(word, []).append(file_id)
        self._words = _Postings({word: np.asarray(ids, dtype=np.int64) for word, ids in files_of.items()})
        self._shares: dict[str, float] = {}

    def share(self, word: str) -> float:
        """Share of the files whose paths agree with `word` as written."""
        known = self._shares.get(word)
        if known is not None:
            return known
        on = np.zeros(self.files, dtype=bool)
        on[self._words.starting(word)] = True
        for i in range(config.current().AGREEMENT_SHORTEST_PREFIX, min(len(word), self._words.longest + 1)):
            ids = self._words.files_of.get(word[:i])
            if ids is not None:
                on[ids] = True
        share = self._shares[word] = float(on.sum()) / self.files if self.files else 0.0
        return share

    def agreeing_files(self, word: str, initials: Mapping[str, frozenset[str]] = EMPTY_INITIALS) -> np.ndarray:
        """Whether each file's path words agree with the question word `word` as `matched_words`
        has them agree (as written, by stems, or by initials spelled on the path), as one mask
        over the index's files: worked out from the vocabulary once, not file by file."""
        on = np.zeros(self.files, dtype=bool)
        tuning = config.current()
        for found in (_agreeing(word, self._words, tuning.AGREEMENT_SHORTEST_PREFIX),
                      _agreeing(stem(word), self._stems, tuning.AGREEMENT_SHORTEST_STEM_PREFIX)):
            for ids in found:
                on[ids] = True
        for short, run in initials.items():
            initial_ids = self._words.files_of.get(short)
            if initial_ids is not None and word in run:
                on[initial_ids] = True
        return on

    @cached_property
    def _stems(self) -> _Postings:
        by_stem: dict[str, list[np.ndarray]] = {}
        for word, ids in self._words.files_of.items():
            by_stem.setdefault(stem(word), []).append(ids)
        return _Postings({s: parts[0] if len(parts) == 1 else distinct(np.concatenate(parts)) for s, parts in by_stem.items()})


def _agreeing(word: str, postings: _Postings, shortest: int) -> list[np.ndarray]:
    """The files of the words of `postings` that `_agrees` would match `word` with: the word
    itself, the words it is a prefix of (`shortest`+ letters), and those that are prefixes of it."""
    files_of = postings.files_of
    if len(word) >= shortest:
        found = [postings.starting(word)]  # the word itself among them
    else:
        found = [files_of[word]] if word in files_of else []
    found.extend(files_of[word[:i]] for i in range(shortest, min(len(word), postings.longest + 1)) if word[:i] in files_of)
    return found


@per_layout
def path_vocabulary(reader: IndexReader) -> PathVocabulary:
    """The path vocabulary of `reader`'s index, built on first use and kept while the reader lives."""
    return PathVocabulary(reader)


def telling_words(reader: IndexReader, words: frozenset[str]) -> frozenset[str]:
    """`words` without those common to most of the index's paths (`config.COMMON_PATH_WORD`)."""
    vocabulary = path_vocabulary(reader)
    return frozenset(w for w in words if vocabulary.share(w) <= config.current().COMMON_PATH_WORD)


def _file_named_after(path: str, name: str) -> bool:
    """`EntryMapper.cs` is named after EntryMapper; `EntryMapper.Async.cs` holds part of it."""
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    bare = stem.replace("_", "")
    name = name.lower()
    return name in (stem, bare, stem.rstrip("s"), bare.rstrip("s"))


def named_symbols(query: str, classification: Classification) -> tuple[list[str], float]:
    """The symbol names the question asks about, and the bonus their definitions get."""
    subject = classification.subject
    if classification.rule in _NAME_RULES and subject:
        return [last_part(subject)], config.current().DEFINITION_BONUS_NAME
    return camel_case_words(query), config.current().DEFINITION_BONUS_IN_SENTENCE


class ImportSources:
    """Where the code of one index imports each name from: per name, the indexed files its
    imports resolve to (by the graph's import edges), for names the index defines nowhere.
    Made for every generation (an edit's first question naming such a name pays for it): each
    import's names are read once per distinct import (`_imported_names`), and what they resolve
    to is looked up only for the names asked about."""

    def __init__(self, reader: IndexReader):
        files = len(reader.files)
        imports = reader.edges[reader.edges.kind == EDGE_KINDS.index("import")]
        within = imports.dst < files  # nodes below the file count are files
        # The file each (importing file, line) resolves to: the last such edge, as a dict made
        # from them in order keeps it.
        keys = _import_keys(imports.src[within], imports.line[within])
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        last = np.empty(len(ordered), dtype=bool)
        last[-1:] = True
        np.not_equal(ordered[1:], ordered[:-1], out=last[:-1])
        self._resolved_keys = ordered[last]
        self._resolved_files = imports.dst[within][order][last]
        rows = reader.import_references()
        self._files = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        self._lines = np.fromiter((row[2] for row in rows), dtype=np.int64, count=len(rows))
        #: name -> the imports naming it (positions among the rows, once per time they name it).
        self._imports: dict[str, list[int]] = {}
        for position, (_, module, _, listed) in enumerate(rows):
            for name in _imported_names(module, listed):
                self._imports.setdefault(name, []).append(position)

    def source_line(self, name: str) -> tuple[int, int | None] | None:
        """(file, line) of the indexed file most imports of `name` come from (the lowest file id
        among as many), with the line where that file imports it in turn (a re-export), or None
        when no import of it resolves."""
        positions = self._imports.get(name)
        if not positions:
            return None
        files, lines = self._files[positions], self._lines[positions]
        keys = _import_keys(files, lines)
        at = np.minimum(np.searchsorted(self._resolved_keys, keys), max(len(self._resolved_keys) - 1, 0))
        resolved = self._resolved_keys[at] == keys if len(self._resolved_keys) else np.zeros(len(keys), dtype=bool)
        if not resolved.any():
            return None
        file_id = int(np.argmax(np.bincount(self._resolved_files[at[resolved]])))
        own = lines[files == file_id]
        return file_id, (int(own.min()) if len(own) else None)


def _import_keys(files: np.ndarray, lines: np.ndarray) -> np.ndarray:
    """One int64 per (file, line): the file in the high 32 bits."""
    return (files.astype(np.int64) << 32) | lines.astype(np.int64)


@lru_cache(maxsize=65536)
def _imported_names(module: str, listed: str | None) -> tuple[str, ...]:
    """The names an import brings (the last part of each it lists, or of its module)."""
    items = json.loads(listed) if listed else []
    return tuple(last_part(item) for item in (items or [module]))


@per_reader
def import_sources(reader: IndexReader) -> ImportSources:
    return ImportSources(reader)


def _source_chunk(reader: IndexReader, name: str) -> int | None:
    """For a name the index defines nowhere (it comes from a package that is not indexed, such as
    a framework's core package, re-exported by the framework), the chunk of the file the code imports it from, at its
    re-export when it has one."""
    found = import_sources(reader).source_line(name)
    if found is None:
        return None
    file_id, line = found
    # Without a re-export line, the file's first chunk (chunk_at falls back to it).
    return reader.chunk_at(file_id, 1 if line is None else line)


def definition_bonuses(reader: IndexReader, names: list[str], scale: float) -> dict[int, float]:
    """chunk -> bonus (in units of the best score) for the chunks defining one of `names`; for a
    name defined nowhere in the index, the chunk of the file the code imports it from."""
    table = symbol_table(reader)
    bonuses: dict[int, float] = {}
    for name in names:
        defined = defined_as(table, name)
        if not defined:
            chunk = _source_chunk(reader, name)
            if chunk is not None:
                bonuses[chunk] = max(bonuses.get(chunk, 0.0), scale)
            continue
        symbols = [s for s in defined if table.kind[s] not in VALUE_KINDS]
        has_type = any(table.kind[s] in NAMESPACE_KINDS for s in symbols)
        for s in symbols:
            chunk = table.chunk[s]
            if chunk < 0:
                continue
            bonus = scale * (config.current().DEFINITION_FILE_NAMED if _file_named_after(reader.files[table.file_id[s]].path, name) else 1.0)
            if has_type and table.kind[s] not in NAMESPACE_KINDS:
                # `Inject` may be a class in markers.py and a function in marker_functions.py:
                # both are definitions, the type first.
                bonus *= config.current().DEFINITION_CALLABLE_BESIDE_TYPE
            bonuses[chunk] = max(bonuses.get(chunk, 0.0), bonus)
    return bonuses


class Adjustment(NamedTuple):
    """How the signals changed one chunk's fused score: bonuses added, then its demotions'
    factors applied. A tuple: a question makes dozens, and a frozen dataclass costs several
    times more to make."""

    definition: float = 0.0
    path: float = 0.0
    file_name: float = 0.0
    coherence: float = 0.0
    agreement: float = 0.0
    #: (why, factor) of each demotion: "secondary_code", "header_beside_source",
    #: "part_beside_whole", "older_version", "windows_port".
    demotions: tuple[tuple[str, float], ...] = ()

    @property
    def factor(self) -> float:
        """The product of the demotions' factors (1 when there is none)."""
        product = 1.0
        for _, factor in self.demotions:
            product *= factor
        return product

    def apply(self, fused: float) -> float:
        return (fused + self.definition + self.path + self.file_name + self.coherence + self.agreement) * self.factor

    def explain(self) -> dict[str, float]:
        """The nonzero parts, for a result's explanation: bonuses by name, then each demotion as
        "<why>_factor"."""
        parts = {
            "definition": self.definition,
            "path": self.path,
            "file_name": self.file_name,
            "coherence": self.coherence,
            "agreement": self.agreement,
        }
        explained = {name: value for name, value in parts.items() if value}
        explained.update((f"{why}_factor", factor) for why, factor in self.demotions)
        return explained


#: The demotions, in the order an explanation lists them.
DEMOTIONS: tuple[str, ...] = ("secondary_code", "header_beside_source", "part_beside_whole", "older_version", "windows_port")


def demotion_factors() -> dict[str, float]:
    """Each demotion's factor (read when used: the benchmarks sweep them)."""
    return {
        "secondary_code": config.current().SECONDARY_CODE_FACTOR,
        "header_beside_source": config.current().HEADER_BESIDE_SOURCE_FACTOR,
        "part_beside_whole": config.current().PART_BESIDE_WHOLE_FACTOR,
        "older_version": config.current().OLDER_VERSION_FACTOR,
        "windows_port": config.current().WINDOWS_PORT_FACTOR,
    }


def _demotions(factors: dict[str, float], *applies: bool) -> tuple[tuple[str, float], ...]:
    """(why, factor) of each demotion of `DEMOTIONS` that `applies` (one flag each, in order)."""
    if not any(applies):
        return ()
    return tuple((why, factors[why]) for why, on in zip(DEMOTIONS, applies) if on)


def _coherence(reader: IndexReader, scored: dict[int, float]) -> dict[int, float]:
    """Each file's best chunk -> config.COHERENCE_BONUS times its file's share of the largest sum of
    one file's fused scores."""
    sums: dict[int, float] = {}
    best: dict[int, int] = {}
    chunks = list(scored)
    # The files of all chunks in one lookup: a numpy scalar a chunk costs more than the sum.
    for chunk, file_id, score in zip(chunks, reader.chunk_file[chunks].tolist(), scored.values()):
        sums[file_id] = sums.get(file_id, 0.0) + score
        if file_id not in best or score > scored[best[file_id]]:
            best[file_id] = chunk
    largest = max(sums.values())
    bonus = config.current().COHERENCE_BONUS
    return {chunk: bonus * sums[file_id] / largest for file_id, chunk in best.items()}


def rerank(
    reader: IndexReader,
    query: str,
    classification: Classification,
    scored: dict[int, float],
    signals: Signals = Signals(),
    parts: FusedParts | None = None,
) -> dict[int, Adjustment]:
    """How each chunk of `scored` (chunk -> fused score) is adjusted by the signals, plus the
    chunks defining a named symbol that fusion did not bring (their fused score is 0). `parts`
    holds each fused chunk's contribution per modality: file agreement needs them, and is left
    out without them."""
    if not scored:
        return {}
    best = max(scored.values())
    definition: dict[int, float] = {}
    names, scale = named_symbols(query, classification)
    if signals.definitions and names:
        definition = {chunk: bonus * best for chunk, bonus in definition_bonuses(reader, names, scale).items()}
    # A name's definition answers a question that is a name; file names matter only when the
    # index holds no definition of it.
    is_name = classification.rule in _NAME_RULES and bool(classification.subject)
    words: frozenset[str] = frozenset()
    if signals.paths and not (is_name and definition):
        words = telling_words(reader, question_words(query, name_parts=is_name))
    wants_coherence = classification.intent in COHERENCE_INTENTS or classification.rule in COHERENCE_RULES
    coherence = _coherence(reader, scored) if signals.coherence and wants_coherence else {}
    of_file = _FileSignals(reader, query, words, best, signals)
    # The path and demotion signals depend on the file only: worked out once per file.
    chunks = list(scored.keys() | definition.keys())
    file_ids = reader.chunk_file[chunks].tolist()
    per_file = of_file.of_files(list(dict.fromkeys(file_ids)))
    # Most chunks have only their file's signals: they share its (immutable) adjustment.
    adjustments = dict(zip(chunks, map(per_file.__getitem__, file_ids)))
    for chunk in definition.keys() | coherence.keys():
        bonus, share = definition.get(chunk, 0.0), coherence.get(chunk, 0.0)
        if bonus or share:
            known = adjustments[chunk]
            adjustments[chunk] = Adjustment(
                definition=bonus,
                path=known.path,
                file_name=known.file_name,
                coherence=share * best,
                demotions=known.demotions,
            )
    if is_name and definition and all(_secondary(adjustments[chunk]) for chunk in definition):
        # A name defined only in secondary code (a test's helper, an example) has its
        # definition there all the same: the demotion that puts primary code first has none
        # to put first, and would rank a partial match elsewhere above the answer.
        for chunk in definition:
            known = adjustments[chunk]
            adjustments[chunk] = known._replace(demotions=tuple(d for d in known.demotions if d[0] != "secondary_code"))
    if signals.agreement and parts is not None and len(parts.chunks):
        _add_file_agreement(reader, scored, definition, parts, adjustments)
    return adjustments


def _secondary(adjustment: Adjustment) -> bool:
    return any(why == "secondary_code" for why, _ in adjustment.demotions)


class _FileSignals:
    """The signals of one file, the same for all of its chunks: path agreement, the file's name
    spelled by the question, and the demotions."""

    def __init__(self, reader: IndexReader, query: str, words: frozenset[str], best: float, signals: Signals):
        self.reader, self.words, self.best = reader, words, best
        self.initials = initialisms(query) if words else EMPTY_INITIALS
        self.secondary = signals.secondary
        self.headers = headers_beside_sources(reader) if signals.secondary else frozenset()
        self.parts = parts_beside_wholes(reader) if signals.secondary else {}
        self.older = older_versions(reader) if signals.secondary else {}
        self.named_versions = frozenset(_VERSION_IN_QUESTION.findall(query)) if self.older else frozenset()
        wants_ports = signals.secondary and not _WINDOWS_IN_QUESTION.search(query)
        self.ports = windows_ports(reader) if wants_ports else frozenset()
        # The tuned numbers once per question, not once per file (`config.current` is a lookup).
        tuning = config.current()
        self.path_bonus, self.path_min_share = tuning.PATH_BONUS * best, tuning.PATH_MIN_SHARE
        self.file_name_bonus = tuning.FILE_NAME_BONUS * best
        self.factors = demotion_factors()

    def _shares(self, file_ids: list[int]) -> list[float]:
        """Per file of `file_ids`, the share of the question's words its path agrees with
        (`matched_share`), each word's agreeing files worked out from the vocabulary once."""
        vocabulary = path_vocabulary(self.reader)
        ids = np.asarray(file_ids, dtype=np.int64)
        agreeing = np.zeros(len(ids))
        for word in self.words:
            # Summed over the files asked about, not over every file of the index.
            agreeing += vocabulary.agreeing_files(word, self.initials)[ids]
        shares: list[float] = (agreeing / len(self.words)).tolist()
        return shares

    def __call__(self, file_id: int) -> Adjustment:
        return self.of_files([file_id])[file_id]

    def of_files(self, file_ids: list[int]) -> dict[int, Adjustment]:
        """The adjustment of each of `file_ids`; their shares and roles are read in one lookup
        each (a numpy scalar a file costs more than the rest of its signals)."""
        shares = self._shares(file_ids) if self.words else [0.0] * len(file_ids)
        if self.secondary:
            secondary = (self.reader.file_roles[file_ids] & roles.SECONDARY).astype(bool).tolist()
        else:
            secondary = [False] * len(file_ids)
        files = self.reader.files
        headers, parts, older, ports = self.headers, self.parts, self.older, self.ports
        out = {}
        for file_id, share, is_secondary in zip(file_ids, shares, secondary):
            if not (share or is_secondary or file_id in headers or file_id in parts or file_id in older or file_id in ports):
                out[file_id] = _UNADJUSTED  # most files: no signal of its own, the same tuple for each
                continue
            outdated = file_id in older and not (older[file_id] & self.named_versions)
            part = parts.get(file_id)
            unasked_part = part is not None and not spells(self.words, part)
            out[file_id] = Adjustment(
                path=self.path_bonus * share if share >= self.path_min_share else 0.0,
                file_name=(
                    self.file_name_bonus if share and spells_name(self.words, files[file_id].path, self.initials) else 0.0
                ),
                demotions=_demotions(
                    self.factors,
                    is_secondary,
                    file_id in headers,
                    unasked_part,
                    outdated,
                    file_id in ports,
                ),
            )
        return out


#: The adjustment of a file no signal of its own applies to.
_UNADJUSTED = Adjustment()


def _add_file_agreement(
    reader: IndexReader,
    scored: dict[int, float],
    definition: dict[int, float],
    parts: FusedParts,
    adjustments: dict[int, Adjustment],
) -> None:
    """Give each file's best chunk config.FILE_AGREEMENT times the best contribution, within its file,
    of each modality that found the file but not that chunk. A file's best chunk is the one with
    the most fused score and definition bonus (the lower chunk id on a tie): the other signals
    are the same for all of a file's chunks, or go to that chunk (coherence)."""
    chunks = parts.chunks.astype(np.int64)
    contributions = np.asarray(parts.contributions, dtype=np.float64)
    chunk_list = chunks.tolist()
    score = np.fromiter(map(scored.get, chunk_list, repeat(0.0)), dtype=np.float64, count=len(chunks))
    if definition:
        score += np.fromiter(map(definition.get, chunk_list, repeat(0.0)), dtype=np.float64, count=len(chunks))
    # Chunks by file, each file's best first: each file's best contribution per modality (a
    # maximum over its run of rows), and the best of its fused chunks (the run's first).
    file_of = reader.chunk_file[chunks]
    order = np.lexsort((chunks, -score, file_of))
    in_order = file_of[order]
    boundary = np.empty(len(in_order), dtype=bool)
    boundary[:1] = True
    np.not_equal(in_order[1:], in_order[:-1], out=boundary[1:])
    starts = np.flatnonzero(boundary)
    files = in_order[starts]
    best = np.maximum.reduceat(contributions[order], starts, axis=0)
    first = order[starts]
    # What each file's best chunk did not find of what its file's other chunks did.
    extras = (best * (contributions[first] == 0.0)).sum(axis=1)
    shown_chunks = chunks[first].tolist()
    shown_scores = score[first].tolist()
    for chunk, bonus in definition.items():
        if chunk in scored:
            continue
        file_id = reader.chunk_file[chunk]
        at = int(np.searchsorted(files, file_id))
        # A definition fusion did not bring, first in its file: it gets all of the file's agreement.
        if at < len(files) and files[at] == file_id and (bonus, -chunk) > (shown_scores[at], -shown_chunks[at]):
            shown_chunks[at], shown_scores[at] = chunk, bonus
            extras[at] = best[at].sum()
    agreement = config.current().FILE_AGREEMENT
    for chunk, extra in zip(shown_chunks, extras.tolist()):
        if extra:
            a = adjustments[chunk]
            # Built directly: `dataclasses.replace` costs several times more, for dozens of files a question.
            adjustments[chunk] = Adjustment(a.definition, a.path, a.file_name, a.coherence, agreement * extra, a.demotions)
