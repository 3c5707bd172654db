"""The symbol table: every definition of one index in memory, and the one way a name becomes
symbols.

A name matches a symbol in one of four tiers, and every match of a higher tier ranks above every
match of a lower one:

1. exact: the name, or the qualified name, as written. A qualified name ("Session.request",
   "Foo::bar", "Foo#bar", "pkg.Func") matches a qualified name or its tail; a qualifier that is
   not part of the qualified name may instead name the symbol's folder or file (Go packages,
   Python modules).
2. case-insensitive: the same, ignoring case; also the bare name of a qualified name whose
   qualifier matched nothing.
3. words: every word of the name is a word of the symbol's name (`parse config`, `parse_config`,
   `ParseConfig` all find `parseConfig` and `parse_config_file`), after stemming. Within the
   tier, names with fewer other words rank first.
4. question words (`WordIndex`): words against the words of names (strong), of qualifiers,
   signatures, docstrings and file names (weaker), ranked BM25-style over symbols. A word that is a
   prefix of a name's word, or the other way round (`auth` / `authentication`), counts half.

`SymbolTable.match_name` and `match_words` add tiers 1-3 to a match set, with a quality within
each tier, and the structural retriever (`maguyva.query.retrievers.structural`) turns matches
into candidates; `defined_as` is tier 1 for an unqualified name, the definitions the ranking and
the text retriever put first. `named` is tiers 1-2 (and SEPARATORLESS) without qualities and
without the table, for navigation and the graph's seeds, which need no more than the names'
ids; every form compares qualified names with `qualifies`. The table is read once per
opened index, on first use, into dictionaries keyed by name, lowercased name, qualified name and
name word; the word index for tier 4 is built on the first question that needs it.
"""

from __future__ import annotations

import bisect
import re
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from maguyva import config
from maguyva._core import group_ids, key_sums, order_rows, text_tokens, word_scores
from maguyva.arrays import distinct, union
from maguyva.index import gc_pause, roles
from maguyva.index.reader import IndexReader, PerMask, per_layout, per_reader
from maguyva.index.segments import gather_runs
from maguyva.lexicon import (
    KIND_FAMILIES,
    MINOR_KINDS,
    SIGNATURE_KEYWORDS,
    STOPWORDS,
    normalize_qualified,
    split_identifier,
    stem,
)

#: The tiers of a match, best first (see the module's docs).
EXACT, CASELESS, NAME_WORDS, QUESTION_WORDS = 1, 2, 3, 4
#: A tier of `named` only: the name ignoring case and word separators.
SEPARATORLESS = 3



@per_layout
def path_ranks(reader: IndexReader) -> list[int]:
    """Each file's rank by file id: 0 for the project's own code, 1 for tests, 2 for vendored,
    built or generated files. Read from the roles the build stored (their vendored and test bits
    are `path_demotion` and `is_test_path` of the path), not from the paths again (0.4 s at
    59,280 files): of the paths alone, so an edit in place keeps it."""
    bits = reader.file_roles
    ranks: list[int] = np.where(bits & roles.VENDORED, 2, np.where(bits & roles.TEST, 1, 0)).tolist()
    return ranks


def kind_preference(kind: str | None, family: frozenset[str] | None, symbol_kind: str) -> int:
    """2 for the kind asked for, 1 for its family, 0 otherwise; with no kind asked for, 2 for
    types and callables and 1 for variables and fields."""
    if family is None:
        return 1 if symbol_kind in MINOR_KINDS else 2
    return 2 if symbol_kind == kind else (1 if symbol_kind in family else 0)


def _add(matches: dict[int, tuple[int, float]], symbol: int, tier: int, quality: float) -> None:
    """Record a match, keeping a symbol's best (lowest tier, then highest quality)."""
    best = matches.get(symbol)
    if best is None or tier < best[0] or (tier == best[0] and quality > best[1]):
        matches[symbol] = (tier, quality)


class IdGroups:
    """Keys (in the order first met) each with a list of ids, held as one flat list and offsets:
    what a dict of lists built by appending would hold, made with a pass over the keys and a sort
    instead of an append per id (a symbol table of 588,979 symbols: 3.1-3.7 -> 1.7-2.0 s)."""

    __slots__ = ("_index", "_ids", "_offsets", "_id_array", "_offset_array")

    def __init__(self, index: dict[str, int], ids: np.ndarray, offsets: np.ndarray):
        self._index = index
        self._id_array, self._offset_array = ids, offsets
        self._ids: list[int] = ids.tolist()
        self._offsets: list[int] = offsets.tolist()

    @classmethod
    def of(cls, keys: Sequence[str], ids: np.ndarray, offsets: np.ndarray) -> IdGroups:
        """Key `keys[j]` for the ids `ids[offsets[j]:offsets[j + 1]]` of each source j; a key's
        list is its sources' ids, in source order."""
        firsts, grouped, bounds = group_ids(keys if isinstance(keys, list) else list(keys), ids, offsets)
        return cls({keys[j]: g for g, j in enumerate(firsts)}, grouped, bounds)

    def regrouped(self, keys: Sequence[str], groups: np.ndarray | None = None) -> IdGroups:
        """Groups of these groups: key `keys[j]` for group `groups[j]` (by default group j, in
        the order first met), a key's ids those of its groups in turn."""
        if groups is None:
            groups = np.arange(len(self._index), dtype=np.int64)
        starts = self._offset_array[groups]
        lengths = self._offset_array[groups + 1] - starts
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        return IdGroups.of(keys, gather_runs(self._id_array, starts, lengths), offsets)

    def get(self, key: str, default: Sequence[int] = ()) -> Sequence[int]:
        k = self._index.get(key)
        if k is None:
            return default
        return self._ids[self._offsets[k] : self._offsets[k + 1]]

    def __getitem__(self, key: str) -> list[int]:
        k = self._index[key]
        return self._ids[self._offsets[k] : self._offsets[k + 1]]

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def items(self) -> Iterator[tuple[str, list[int]]]:
        return ((key, self[key]) for key in self._index)


#: Symbol masks of the chunk masks asked most recently, kept by each table (`SymbolTable.within`).
_KEPT_WITHIN_MASKS = 32


class SymbolTable:
    """Every definition of one index, held in memory with lookups by name."""

    def __init__(self, reader: IndexReader):
        file_ids = reader.symbol_array("file_id")
        self.file_id: list[int] = file_ids.tolist()
        self.count = n = len(self.file_id)
        self._reader = weakref.ref(reader)
        self._paths = [f.path for f in reader.files]
        self._path_parts: dict[int, frozenset[str]] = {}
        self._words: WordIndex | None = None
        self._lock = threading.Lock()
        self._within = PerMask(_KEPT_WITHIN_MASKS)
        self.name: list[str] = reader.symbol_column("name")
        self.kind: list[str] = reader.symbol_column("kind")
        self.qualified_name: list[str] = reader.symbol_column("qualified_name")
        start_lines = reader.symbol_array("start_line")
        self.start_line: list[int] = start_lines.tolist()
        files = len(reader.files)
        in_degree = reader.node_in_degree[files : files + n].astype(np.int64)
        centrality = reader.node_centrality[files : files + n].astype(np.float64)
        self.in_degree = in_degree
        self.centrality = centrality
        self.chunk: list[int] = reader.chunks_holding(file_ids, start_lines)
        self.chunk_array = np.asarray(self.chunk, dtype=np.int64)

        path_rank = np.asarray(path_ranks(reader), dtype=np.int64)[file_ids]
        self.path_rank = path_rank
        #: Whether each symbol is in the repository's own code (not a test, not vendored).
        self.primary = path_rank == 0
        #: Position of each symbol in the order that breaks ties between equal matches (after the
        #: kind): code before tests and vendored files, more depended-on first, shorter qualified
        #: names first, then by file path and line.
        order = order_rows(
            [
                path_rank,
                in_degree,
                centrality,
                np.fromiter(map(len, self.qualified_name), dtype=np.int64, count=n),
                file_ids,
                start_lines,
            ],
            [False, True, True, False, False, False],
        )
        tie_break = np.empty(n, dtype=np.int64)
        tie_break[order] = np.arange(n)
        self.tie_break: list[int] = tie_break.tolist()
        self.tie_break_array = tie_break
        kind_names = sorted(set(self.kind))
        self.kind_codes = {k: c for c, k in enumerate(kind_names)}
        self.kind_code = np.array([self.kind_codes[k] for k in self.kind], dtype=np.int64)

        # Symbols by name, then names by their lowercase; dotted qualified names likewise, and by
        # each of their tails of two parts or more. Each lookup's ids are in the order one pass
        # over the symbols, then over the first-met keys, would list them.
        self.by_name = IdGroups.of(self.name, np.arange(n, dtype=np.int64), np.arange(n + 1, dtype=np.int64))
        self.by_lower = self.by_name.regrouped([name.lower() for name in self.by_name])
        dotted = np.fromiter((i for i, q in enumerate(self.qualified_name) if "." in q), dtype=np.int64)
        self.by_qualified = IdGroups.of(
            [self.qualified_name[i] for i in dotted], dotted, np.arange(len(dotted) + 1, dtype=np.int64)
        )
        lowered = [qualified.lower() for qualified in self.by_qualified]
        self.by_lower_qualified = self.by_qualified.regrouped(lowered)
        tails: list[str] = []
        tail_sources: list[int] = []
        for group, lower in enumerate(lowered):
            parts = lower.split(".")
            for start in range(1, len(parts) - 1):
                tails.append(".".join(parts[start:]))
                tail_sources.append(group)
        self.by_tail = self.by_qualified.regrouped(tails, np.asarray(tail_sources, dtype=np.int64))

        # Words of names (tier 3), split once per distinct name.
        self.vocabulary = _Vocabulary()
        names = list(self.by_name)
        width = max(len(names), 1)
        word_ids, position = self.vocabulary.pairs(names, frozenset())
        keys = distinct(word_ids * width + position)  # a word repeated in a name counts once
        word_ids, position = keys // width, keys % width
        index = {name: p for p, name in enumerate(names)}
        name_of = np.fromiter(map(index.__getitem__, self.name), dtype=np.int64, count=n)
        #: How many distinct words each symbol's name has.
        self.name_word_count = np.bincount(position, minlength=len(names))[name_of]
        #: word id * max(count, 1) + symbol, for every word of every symbol's name, ascending.
        self.name_pairs = _expand(word_ids, position, _csr(name_of, len(names)), max(n, 1))
        #: word -> the symbols whose name has it, ascending.
        self.by_word: dict[str, np.ndarray] = _split_by_word(self.name_pairs, max(n, 1), self.vocabulary.words)

    # -- tiers 1 and 2 -------------------------------------------------------------------------

    def match_name(self, subject: str, matches: dict[int, tuple[int, float]]) -> None:
        """Add the symbols named or qualified `subject` (dotted) to `matches`."""
        parts = subject.split(".")
        last = parts[-1]
        lower = subject.lower()
        qualified_name = self.qualified_name
        t = config.current()
        if len(parts) == 1:
            for i in self.by_name.get(subject, ()):
                _add(matches, i, EXACT, t.MATCH_WHOLE if qualified_name[i] == subject else t.MATCH_NAME_ONLY)
            for i in self.by_lower.get(lower, ()):
                _add(matches, i, CASELESS, t.MATCH_WHOLE if qualified_name[i].lower() == lower else t.MATCH_NAME_ONLY)
            return
        for i in self.by_qualified.get(subject, ()):
            _add(matches, i, EXACT, t.MATCH_WHOLE)
        for i in self.by_lower_qualified.get(lower, ()):
            _add(matches, i, CASELESS, t.MATCH_NAME_ONLY)
        for i in self.by_tail.get(lower, ()):
            if qualifies(qualified_name[i], subject):
                _add(matches, i, EXACT, t.MATCH_TAIL)
            else:
                _add(matches, i, CASELESS, t.MATCH_TAIL)
        qualifier = [p.lower() for p in parts[:-1]]
        for i in self.by_name.get(last, ()):
            if self._qualifier_fits(i, qualifier):
                _add(matches, i, EXACT, t.MATCH_QUALIFIER_FITS)
            else:
                _add(matches, i, CASELESS, t.MATCH_QUALIFIER_DIFFERS)
        for i in self.by_lower.get(last.lower(), ()):
            _add(matches, i, CASELESS, t.MATCH_CASELESS_FITS if self._qualifier_fits(i, qualifier) else t.MATCH_CASELESS_DIFFERS)

    def _qualifier_fits(self, symbol: int, qualifier: list[str]) -> bool:
        """Whether `qualifier` (lowercase parts) ends with the symbol's enclosing symbols and the
        rest names its folders or file: "shop.get" fits a top-level `get` in shop/api.py,
        not `CartSession.get` there; "server.Server.Run" fits `Server.Run` in server/."""
        enclosing = self.qualified_name[symbol].lower().split(".")[:-1]
        if len(enclosing) > len(qualifier) or (enclosing and qualifier[-len(enclosing) :] != enclosing):
            return False
        rest = qualifier[: len(qualifier) - len(enclosing)]
        if not rest:
            return True
        file_id = self.file_id[symbol]
        places = self._path_parts.get(file_id)
        if places is None:
            *folders, name = self._paths[file_id].lower().split("/")
            places = self._path_parts[file_id] = frozenset([*folders, name.split(".", 1)[0], name.rsplit(".", 1)[0]])
        return all(q in places for q in rest)

    # -- tier 3 --------------------------------------------------------------------------------

    def within(self, allowed_chunks: np.ndarray) -> np.ndarray:
        """Per symbol, whether its chunk is one of `allowed_chunks` (a mask over chunks): the
        symbols a filtered question may answer with. Kept for the masks asked most recently (a
        searcher asks with the same mask for the same filters)."""
        chunks = self.chunk_array
        return self._within.get(allowed_chunks, lambda allowed: (chunks >= 0) & allowed[np.maximum(chunks, 0)])

    def match_words(
        self, group: list[str], kind: str | None, matches: dict[int, tuple[int, float]], top: int,
        within: np.ndarray | None = None,
    ) -> None:
        """Add the symbols whose name has every (stemmed) word of `group`: the best `top` of them
        (and the best `top` of the kind's family), among those `within` keeps (a mask over
        symbols) when given."""
        group = list(dict.fromkeys(group))
        maybe = [self.by_word.get(w) for w in group]
        postings = [p for p in maybe if p is not None]
        if not postings or len(postings) < len(maybe):
            return
        postings.sort(key=len)
        found = postings[0]
        if len(postings) > 1:
            # Intersect by marking (sorting is the slow way here); postings are ascending.
            count = np.zeros(self.count, dtype=np.int32)
            for p in postings:
                count[p] += 1
            found = found[count[found] == len(postings)]
        if within is not None:
            found = found[within[found]]
        if not len(found):
            return
        quality = len(group) / np.maximum(self.name_word_count[found], len(group))
        if len(found) > top:
            family = KIND_FAMILIES[kind] if kind is not None else None
            by_code = np.array([kind_preference(kind, family, k) for k in self.kind_codes], dtype=np.int64)
            preference = by_code[self.kind_code[found]]
            order = np.lexsort((self.tie_break_array[found], -preference, -quality))
            keep = order[:top]
            if family is not None:
                in_family = np.flatnonzero(preference[order] > 0)[:top]
                keep = union(keep, order[in_family])
            found, quality = found[keep], quality[keep]
        for i, q in zip(found.tolist(), quality.tolist()):
            _add(matches, i, NAME_WORDS, q)

    # -- tier 4 --------------------------------------------------------------------------------

    def words(self) -> WordIndex:
        """The word index over names, qualifiers, signatures, docstrings and paths."""
        if self._words is None:
            with self._lock:
                if self._words is None:
                    reader = self._reader()
                    if reader is None:
                        raise RuntimeError("the index this symbol table belongs to was closed")
                    with gc_pause.paused():
                        self._words = WordIndex(reader, self)
        return self._words


class WordIndex:
    """An inverted index from stemmed words to the symbols whose text holds them, each posting
    weighted by where the word occurs (name, qualifier, signature, docstring, path) and by the
    word's rarity (idf)."""

    def __init__(self, reader: IndexReader, table: SymbolTable):
        n = max(table.count, 1)
        vocabulary = table.vocabulary
        # Presence in a name, a qualifier or a path counts once; names are already pairs.
        name_keys = table.name_pairs
        word_ids, symbol = vocabulary.column_pairs(reader, "qualified_name", STOPWORDS, _enclosing)
        qualifier_keys = distinct(word_ids * n + symbol)
        # Of a path, only the file's name: folder names ("src", "tests", "packages") are shared by
        # so many symbols that they would cost more than they tell.
        file_names = [p.rsplit("/", 1)[-1].split(".", 1)[0] for p in table._paths]
        word_ids, file_of = vocabulary.pairs(file_names, STOPWORDS)
        file_keys = distinct(word_ids * max(len(table._paths), 1) + file_of)
        symbols_of_file = _csr(np.asarray(table.file_id, dtype=np.int64), len(table._paths))
        path_keys = _expand(
            file_keys // max(len(table._paths), 1), file_keys % max(len(table._paths), 1), symbols_of_file, n
        )
        parts_keys = [name_keys, qualifier_keys, path_keys]
        parts_values = [
            np.full(len(name_keys), config.current().WORD_WEIGHT_NAME),
            np.full(len(qualifier_keys), config.current().WORD_WEIGHT_QUALIFIER),
            np.full(len(path_keys), config.current().WORD_WEIGHT_PATH),
        ]
        # Signatures and docstrings: BM25 term frequency with length normalisation.
        for column, drop, weight, exclude in (
            ("signature", _SIGNATURE_DROP, config.current().WORD_WEIGHT_SIGNATURE, name_keys),  # its own name is no news
            ("docstring", STOPWORDS, config.current().WORD_WEIGHT_DOCSTRING, None),
        ):
            word_ids, symbol = vocabulary.column_pairs(reader, column, drop, _or_empty)
            if not len(word_ids):
                continue
            keys, tf = np.unique(word_ids * n + symbol, return_counts=True)
            if exclude is not None and len(exclude):
                # Both ascending: each key looked for by binary search (`np.isin` sorts both again).
                at = np.minimum(np.searchsorted(exclude, keys), len(exclude) - 1)
                keep = exclude[at] != keys
                keys, tf = keys[keep], tf[keep]
            lengths = np.bincount(symbol, minlength=n).astype(np.float64)
            average = max(1.0, float(lengths.sum()) / n)
            k1, b = config.current().BM25_K1, config.current().BM25_B
            norm = k1 * (1 - b + b * lengths[keys % n] / average)
            parts_keys.append(keys)
            parts_values.append(weight * tf * (k1 + 1) / (tf + norm))

        # Each part's keys are ascending: merged, each key's values added in the parts' order.
        keys, values = key_sums(
            [np.ascontiguousarray(part, dtype=np.int64) for part in parts_keys],
            [np.ascontiguousarray(part, dtype=np.float64) for part in parts_values],
        )
        word_of = keys // n
        size = len(vocabulary.words)
        df = np.bincount(word_of, minlength=size).astype(np.float64)
        idf = np.log1p((table.count - df + 0.5) / (df + 0.5))
        #: Postings of word id w: symbols[offsets[w]:offsets[w + 1]], with their values (idf included).
        self.symbols = keys % n
        self.values = values * idf[word_of]
        self.offsets = np.searchsorted(word_of, np.arange(size + 1))
        self.idf = idf
        self.ids = dict(vocabulary.ids)
        #: Words of names, sorted, for prefix expansion.
        self.name_vocabulary = sorted(table.by_word)
        self._name_set = frozenset(table.by_word)
        #: No prefix of a question word longer than this is a name word.
        self._longest_name = max(map(len, self._name_set), default=0)
        self.count = table.count
        self.kind_codes = table.kind_codes
        self.kind_code = table.kind_code
        self.secondary = ~table.primary

    def posting(self, word: str) -> tuple[np.ndarray, np.ndarray, float] | None:
        """(symbols, values, idf) of a word, or None when no symbol has it."""
        w = self.ids.get(word)
        if w is None or w + 1 >= len(self.offsets):
            return None
        start, end = self.offsets[w], self.offsets[w + 1]
        if start == end:
            return None
        return self.symbols[start:end], self.values[start:end], float(self.idf[w])

    def expansions(self, word: str) -> list[str]:
        """Name words that `word` is a prefix of, or that are prefixes of it (at least
        config.WORD_MIN_PREFIX letters), at most config.WORD_MAX_EXPANSIONS, shortest first. Linear in the length of
        `word`: its prefixes are looked up only as long as the longest name word."""
        if len(word) < config.current().WORD_MIN_PREFIX:
            return []
        longest = min(len(word), self._longest_name + 1)
        found = [word[:k] for k in range(config.current().WORD_MIN_PREFIX, longest) if word[:k] in self._name_set]
        start = bisect.bisect_right(self.name_vocabulary, word)
        longer: list[str] = []
        for candidate in self.name_vocabulary[start:]:
            if not candidate.startswith(word):
                break
            longer.append(candidate)
        longer.sort(key=len)
        return (found + longer)[:config.current().WORD_MAX_EXPANSIONS]

    def score(
        self, question: list[str], family: frozenset[str] | None, top: int, within: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The best `top` symbols for the question words, with relevance scaled to (0, 1]; only
        symbols of the kinds in `family` when there are any, and only those `within` keeps (a
        mask over symbols) when given."""
        # The sums are the core's: its work is proportional to the postings read, where numpy's
        # was to every symbol of the index for each word.
        terms = []
        mass = 0.0
        prefix = config.current().WORD_WEIGHT_PREFIX
        for word in question:
            exact = self.posting(word)
            expanded = [p for p in map(self.posting, self.expansions(word)) if p is not None]
            if exact is None and not expanded:
                continue
            weight = exact[2] if exact is not None else max(p[2] for p in expanded)
            # A symbol with several forms of the word counts its best one.
            forms = ([(exact[0], exact[1], 1.0)] if exact is not None else []) + [(p[0], p[1], prefix) for p in expanded]
            terms.append((weight, exact is not None and not expanded, forms))
            mass += weight
        if mass == 0.0:
            return []
        hits, total, covered = word_scores(self.count, terms, within)
        if not len(hits):
            return []
        # Symbols matching more of the question's (idf-weighted) words rank higher.
        scores = total * (0.5 + 0.5 * covered / mass)
        scores[self.secondary[hits]] *= config.current().WORD_SECONDARY_FACTOR
        if family is not None:
            codes = [self.kind_codes[k] for k in family if k in self.kind_codes]
            allowed = np.isin(self.kind_code[hits], codes)
            if allowed.any():
                hits, scores = hits[allowed], scores[allowed]
        if len(hits) > top:
            best = np.argpartition(-scores, top - 1)[:top]
            hits, scores = hits[best], scores[best]
        scores = scores / scores.max()
        return list(zip(hits.tolist(), scores.tolist()))


#: drop set -> token -> the stems of its words not dropped: a function of the token and the set
#: alone, so kept across indexes and their generations (each bounded by
#: config.TOKEN_PARTS_CACHE_ENTRIES tokens).
_TOKEN_WORDS: dict[frozenset[str], dict[str, tuple[str, ...]]] = {}
#: A token of text: what the core's `text_tokens` finds in ASCII text, here with Unicode's word
#: characters (for the texts it leaves to Python).
_TOKEN = re.compile(r"[\w$]+")


#: The tokens and words a signature's words leave out.
_SIGNATURE_DROP = SIGNATURE_KEYWORDS | STOPWORDS


def _or_empty(text: str | None) -> str:
    return text or ""


def _enclosing(qualified_name: str) -> str:
    """What a qualified name's last part is defined in (`Session` of `Session.request`)."""
    return qualified_name.rpartition(".")[0]


class _Registry:
    """Every word met by the process, numbered in the order met: the words of a base segment's
    texts are kept as these numbers while the base is (`Segments.runs_of_column`), so a new
    generation's tables look up only the words of the files edited. Replaced by a new one past
    config.WORD_REGISTRY_MAX_WORDS words (`epoch` tells them apart)."""

    def __init__(self, epoch: int):
        self.epoch = epoch
        self.ids: dict[str, int] = {}
        self.words: list[str] = []
        self.lock = threading.Lock()

    def numbers(self, texts: list[str], drop: frozenset[str]) -> tuple[np.ndarray, np.ndarray]:
        """(the numbers of every word of every text, in order, int64; each text's count of words),
        without the tokens and words in `drop`. The core finds the texts' tokens (`text_tokens`);
        each distinct token's words (`_token_words`) are found once and laid out over its
        occurrences by arrays (290,000 symbols' texts at 59,280 files: millions of tokens)."""
        tokens, found, counts, not_ascii = text_tokens(texts)
        occurrences, per_text = found.astype(np.int64), counts.astype(np.int64)
        if not_ascii:
            occurrences, per_text = _with_other_tokens(texts, not_ascii, tokens, occurrences, per_text)
        parts = _parts_of_tokens(tokens, drop)
        ids = self.ids
        with self.lock:
            for words in parts:
                for word in words:
                    if word not in ids:
                        ids[word] = len(self.words)
                        self.words.append(word)
            numbered = np.fromiter(
                (ids[word] for words in parts for word in words), dtype=np.int64, count=sum(map(len, parts))
            )
        lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
        # Every occurrence's words, occurrence after occurrence: a run of `numbered` each.
        spans = lengths[occurrences]
        ends = np.cumsum(spans)
        positions = np.repeat((np.cumsum(lengths) - lengths)[occurrences] - (ends - spans), spans) + np.arange(
            int(ends[-1]) if len(ends) else 0
        )
        words_to = np.concatenate(([0], ends))[np.cumsum(per_text)]
        return numbered[positions], np.diff(np.concatenate(([0], words_to)))


def _with_other_tokens(
    texts: list[str], indexes: list[int], tokens: list[str], occurrences: np.ndarray, per_text: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`occurrences` and `per_text` with the tokens of the texts `indexes` (those `text_tokens`
    left to Python) in their places, found with Unicode's word characters; a token not among
    `tokens` is added to it."""
    number = {token: i for i, token in enumerate(tokens)}
    starts = np.cumsum(per_text) - per_text
    pieces: list[np.ndarray] = []
    at = 0
    per_text = per_text.copy()
    for index in indexes:
        found = _TOKEN.findall(texts[index])
        for token in found:
            if token not in number:
                number[token] = len(tokens)
                tokens.append(token)
        start = int(starts[index])
        pieces += [occurrences[at:start], np.fromiter(map(number.__getitem__, found), dtype=np.int64, count=len(found))]
        at = start
        per_text[index] = len(found)
    pieces.append(occurrences[at:])
    return np.concatenate(pieces), per_text


def _parts_of_tokens(tokens: list[str], drop: frozenset[str]) -> list[tuple[str, ...]]:
    """The words of each of `tokens` (`_token_words`), kept per token for the process."""
    known = _TOKEN_WORDS.get(drop)
    if known is None or len(known) > config.current().TOKEN_PARTS_CACHE_ENTRIES:
        known = _TOKEN_WORDS[drop] = {}
    parts = list(map(known.get, tokens))
    for i, found in enumerate(parts):
        if found is None:
            parts[i] = known[tokens[i]] = _token_words(tokens[i], drop)
    return parts  # type: ignore[return-value]


_registry = _Registry(0)
_registry_lock = threading.Lock()


def _current_registry() -> _Registry:
    """The process's word registry, a new one when it has grown past its bound."""
    global _registry
    with _registry_lock:
        if len(_registry.words) > config.current().WORD_REGISTRY_MAX_WORDS:
            _registry = _Registry(_registry.epoch + 1)
        return _registry


class _Vocabulary:
    """Stemmed words and their ids, and the words of texts (identifiers split, stemmed) as
    arrays. The words of each distinct token, and of each text, are worked out once per
    process; ids are given in the order the words are first met."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.words: list[str] = []
        self.registry = _current_registry()
        #: The id of each registry number (-1 for a word not met here yet).
        self._of_number = np.full(0, -1, dtype=np.int64)

    def pairs(self, texts: list[str], drop: frozenset[str]) -> tuple[np.ndarray, np.ndarray]:
        """(word ids, text positions) of every word of every text, in order, without the tokens
        and words in `drop`."""
        if not texts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return self.numbered(*self.registry.numbers(texts, drop))

    def column_pairs(self, reader: IndexReader, name: str, drop: frozenset[str], text: Callable[[Any], str]) -> tuple[np.ndarray, np.ndarray]:
        """`pairs` of `text(value)` of each symbol's column `name`, in symbol id order; the words
        of the base segment's rows looked up once while the base is kept."""

        def make(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
            if not values:
                return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
            return self.registry.numbers(list(map(text, values)), drop)

        key = ("words", name, drop, text, self.registry.epoch)
        return self.numbered(*reader.symbol_runs(name, key, make))

    def numbered(self, numbers: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(word ids, text positions) of the registry's `numbers` of the words of texts holding
        `counts` words each; words not met before take ids in the order first met."""
        registry = self.registry
        if len(self._of_number) < len(registry.words):
            grown = np.full(len(registry.words), -1, dtype=np.int64)
            grown[: len(self._of_number)] = self._of_number
            self._of_number = grown
        found = self._of_number[numbers] if len(numbers) else np.zeros(0, dtype=np.int64)
        unknown = found < 0
        if unknown.any():
            distinct, first = np.unique(numbers[unknown], return_index=True)
            fresh = distinct[np.argsort(first, kind="stable")]
            self._of_number[fresh] = np.arange(len(self.words), len(self.words) + len(fresh))
            for number in fresh.tolist():
                word = registry.words[number]
                self.ids[word] = len(self.words)
                self.words.append(word)
            found = self._of_number[numbers]
        return found, np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def _token_words(token: str, drop: frozenset[str]) -> tuple[str, ...]:
    """The stems of `token`'s words (`split_identifier`), without the token, words and stems in
    `drop`."""
    if token.lower() in drop:
        return ()
    return tuple(
        word for part in split_identifier(token) if part not in drop and (word := stem(part)) not in drop
    )


def _csr(groups: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, members): members[offsets[g]:offsets[g + 1]] are the positions i (ascending)
    with groups[i] == g."""
    order = np.argsort(groups, kind="stable")
    offsets = np.searchsorted(groups[order], np.arange(count + 1))
    return offsets, order


def _expand(word_ids: np.ndarray, owner: np.ndarray, members: tuple[np.ndarray, np.ndarray], n: int) -> np.ndarray:
    """Sorted unique keys word * n + symbol for each (word, owner) pair and each symbol of the
    owner (a name shared by several symbols, a file holding many)."""
    offsets, order = members
    counts = offsets[owner + 1] - offsets[owner]
    symbols = gather_runs(order, offsets[owner], counts)
    return distinct(np.repeat(word_ids, counts) * n + symbols)


def _split_by_word(keys: np.ndarray, n: int, words_by_id: list[str]) -> dict[str, np.ndarray]:
    """Ascending keys word id * n + symbol as word -> ascending symbols."""
    if not len(keys):
        return {}
    word_of = keys // n
    bounds = np.flatnonzero(np.diff(word_of)) + 1
    starts = np.concatenate(([0], bounds)).tolist()
    ends = np.concatenate((bounds, [len(keys)])).tolist()
    symbols = keys % n
    return {words_by_id[w]: symbols[a:b] for w, a, b in zip(word_of[starts].tolist(), starts, ends)}


@per_reader
def symbol_table(reader: IndexReader) -> SymbolTable:
    """The symbol table of `reader`'s index, read on first use and kept while the reader lives."""
    with gc_pause.paused():
        return SymbolTable(reader)


def defined_as(table: SymbolTable, name: str) -> list[int]:
    """The symbols named `name`, or `$name`: JavaScript and PHP code marks core or internal
    definitions with a `$` that questions leave out ("ZodType" for `$ZodType`)."""
    return [*table.by_name.get(name, ()), *table.by_name.get("$" + name, ())]


def named(reader: IndexReader, name: str, tier: int = EXACT, *, narrow: str = "keep") -> list[int]:
    """The symbols `name` names at `tier`, for a lookup that needs no symbol table (navigation,
    the graph's seeds): by its last part as written (EXACT), ignoring case (CASELESS), or
    ignoring case and word separators (SEPARATORLESS: `parse_config` finds `parseConfig`). A
    qualified `name` (`Session.request`, `Foo::bar`) then keeps those whose qualified name is it
    or ends with it, compared at the same tier: with `narrow="keep"` only those, with
    `narrow="prefer"` all of them when none fits (the qualifier guides, it does not exclude)."""
    name = normalize_qualified(name)
    tail = name.rsplit(".", 1)[-1]
    by_name = reader.symbols_by_name
    if tier == SEPARATORLESS:
        key = squashed(tail)
        ids = [i for n, found in by_name.items() if n.startswith("\0") and squashed(n[1:]) == key for i in found]
    elif tier == CASELESS:
        ids = list(by_name.get("\0" + tail.lower(), ()))
    else:
        ids = list(by_name.get(tail, ()))
    if "." not in name or not ids:
        return ids
    rows = reader.symbols_at(ids, "qualified_name")
    caseless = tier != EXACT
    wanted = name.lower() if caseless else name
    fitting = sorted(i for i, qualified in rows if qualifies(qualified.lower() if caseless else qualified, wanted))
    return fitting or (ids if narrow == "prefer" else [])


def qualifies(qualified: str, name: str) -> bool:
    """Whether a symbol of qualified name `qualified` is what the dotted `name` names: the
    whole of it, or its end after a dot (`Session.request` names `http.Session.request`)."""
    return qualified == name or qualified.endswith("." + name)


def squashed(name: str) -> str:
    """A name without case, word separators or a closing `!` / `?`: parse_config, parseConfig,
    parse_config? -> parseconfig."""
    return name.lower().replace("_", "").replace("-", "").rstrip("!?")
