"""Type stubs for maguyva._core, the compiled kernels of maguyva (see rust/python/src)."""

from collections.abc import Sequence
from os import PathLike
from pathlib import Path

import numpy as np
import numpy.typing as npt

from maguyva.errors import CorruptIndexError as CorruptIndexError

__version__: str

# Hamming top-k -----------------------------------------------------------------------------

def hamming_kernels() -> list[str]:
    """The popcount kernels this CPU supports, slowest first; the last one is the default.

    Names: "scalar", "popcnt", "avx2", "avx512-vpopcntdq".
    """

def hamming_distances(codes: npt.NDArray[np.uint8], query: npt.NDArray[np.uint8]) -> npt.NDArray[np.int32]:
    """The Hamming distance from one `query` code to every row of `codes`, in row order."""

def hamming_top_k(
    codes: npt.NDArray[np.uint8],
    queries: npt.NDArray[np.uint8],
    k: int,
    allow: npt.ArrayLike | None = None,
    threads: int = 0,
    kernel: str | None = None,
    groups: npt.NDArray[np.uint32] | None = None,
    offsets: npt.NDArray[np.uint32] | None = None,
    scale: int = 1,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
    """The k rows of `codes` nearest to each query by Hamming distance, nearest first.

    `codes` is a C-contiguous (n, bytes) uint8 array of packed bits, read in place. `queries` is
    one code (bytes,) or a batch (q, bytes). Ties are broken by the smaller row id. `allow`
    restricts the search to those row ids. `threads` = 0 uses every core, 1 the calling thread.
    With `groups` (per row, its group id) and `offsets` (per group; (q, groups) for a batch), a
    row's distance is `scale` times its Hamming distance plus its group's offset (below 2^31).
    Returns (rows, distances), shaped (min(k, candidates),) for one query or (q, min(k,
    candidates)) for a batch. The GIL is released during the search.
    """

# Trigram index -----------------------------------------------------------------------------

class PendingChunkCounts:
    """A `chunk_line_counts` running on the core's threads."""

    def result(self) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
        """The three arrays of `chunk_line_counts`, waiting for the search; once (ValueError after)."""

class LiteralMatches:
    """Documents matching a literal, as parallel arrays."""

    doc_ids: npt.NDArray[np.uint32]
    """Matching document ids, ascending."""
    counts: npt.NDArray[np.uint32]
    """Non-overlapping occurrences of the literal per document."""
    line_offsets: npt.NDArray[np.uint64]
    """Document i's lines are lines[line_offsets[i]:line_offsets[i + 1]]."""
    lines: npt.NDArray[np.uint32]
    """1-based numbers of the lines where a match starts."""

    def __len__(self) -> int: ...
    def lines_of(self, i: int) -> npt.NDArray[np.uint32]:
        """The matching line numbers of the i-th matching document."""

class TrigramIndex:
    """A trigram index over documents of bytes, with the documents stored in it.

    Candidates come from posting-list intersections over ASCII-case-folded trigrams and are
    verified against the stored bytes, so answers are exact. `str` arguments are searched as
    UTF-8; any bytes may be indexed.
    """

    @staticmethod
    def build(docs: Sequence[tuple[int, bytes | str]]) -> tuple[TrigramIndex, list[int]]:
        """Index (doc_id, content) pairs in parallel; return the index and the ids of the
        documents skipped as binary (a NUL byte in their first 8 KiB)."""
    def merged(
        self, kept: Sequence[tuple[int, int]], added: Sequence[tuple[int, bytes | str]]
    ) -> tuple[TrigramIndex, list[int]]:
        """This index's documents `kept`, as (old id, new id) pairs in the same order under both,
        and the documents `added`, as one new index: the bytes `build` gives for them, without
        reading the kept documents again. Returns the index and the added ids skipped as binary;
        raises ValueError for an old id not in the index, kept twice or out of order, or a new
        id given twice."""
    @staticmethod
    def load(path: str | PathLike[str]) -> TrigramIndex:
        """Read an index written by `save`; raises CorruptIndexError if it is damaged."""
    @staticmethod
    def from_bytes(data: bytes) -> TrigramIndex:
        """Read an index from the bytes `to_bytes` returned."""
    def save(self, path: str | PathLike[str]) -> None:
        """Write the index atomically (temporary file, then rename)."""
    def to_bytes(self) -> bytes:
        """The serialized index (format version, sections, CRC32)."""
    def search(self, literal: bytes | str, case_insensitive: bool = False) -> LiteralMatches:
        """Documents containing `literal` (ASCII case folded if asked), with counts and lines."""
    def search_regex(self, pattern: str, case_insensitive: bool = False) -> LiteralMatches:
        """Documents matching the regular expression `pattern` (the `regex` crate's syntax, `^`
        and `$` at line ends), with counts of non-empty matches and the lines they start on;
        only documents whose trigrams the pattern allows are read. ValueError for an invalid
        pattern or one past the size limits."""
    def search_lines(
        self, terms: Sequence[bytes | str], case_insensitive: Sequence[bool]
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
        """Every line holding each term, in one call: (term index, doc id, 1-based line) arrays,
        by term then doc then line; case_insensitive[i] says how term i is matched."""
    def chunk_line_counts(
        self,
        terms: Sequence[bytes | str],
        case_insensitive: Sequence[bool],
        chunk_start_key: npt.NDArray[np.int64],
        file_chunk_offsets: npt.NDArray[np.int64],
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
        """How many of the lines holding each term each chunk holds: (term index, chunk, count)
        by term then chunk. Chunk c starts at line `chunk_start_key[c] & 0xffffffff` of document
        `chunk_start_key[c] >> 32`; document d's chunks are `file_chunk_offsets[d]` to
        `file_chunk_offsets[d + 1] - 1`; a line belongs to the last chunk of its document
        starting at or before it (or to the first)."""
    def start_chunk_line_counts(
        self,
        terms: Sequence[bytes | str],
        case_insensitive: Sequence[bool],
        chunk_start_key: npt.NDArray[np.int64],
        file_chunk_offsets: npt.NDArray[np.int64],
    ) -> PendingChunkCounts:
        """`chunk_line_counts`, started on the core's threads: returns at once; the answer's
        `result()` gives the three arrays. Neither array may be written before `result()`
        returns or the answer is dropped (which waits for the search)."""
    def count_terms(
        self, terms: Sequence[bytes | str], case_insensitive: bool = False
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
        """(doc_ids, counts) where counts[i, j] is how often term j occurs in doc_ids[i]; only
        documents holding at least one term."""
    def doc_ids(self) -> npt.NDArray[np.uint32]:
        """The ids of the indexed documents, ascending."""
    def doc_len(self, doc_id: int) -> int | None:
        """Length in bytes of a document, None if it is not indexed."""
    def doc_lines(self, doc_id: int, start: int, end: int) -> bytes | None:
        """Lines start..end (1-based) of a document joined by their newlines; None past its last
        line; ValueError if it is not indexed."""
    def doc_bytes(self, doc_id: int) -> bytes:
        """The stored content of a document; ValueError if it is not indexed."""
    @property
    def doc_count(self) -> int: ...
    @property
    def trigram_count(self) -> int: ...
    @property
    def postings_bytes(self) -> int: ...
    @property
    def word_count(self) -> int: ...
    @property
    def word_bytes(self) -> int: ...
    @property
    def content_bytes(self) -> int: ...
    @property
    def size_bytes(self) -> int: ...
    def __len__(self) -> int: ...

def chunk_term_table(
    terms: npt.NDArray[np.uint32],
    chunks: npt.NDArray[np.uint32],
    counts: npt.NDArray[np.uint32],
    chunk_count: int,
    width: int,
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """(term, chunk, count) columns as the chunks holding any term, ascending, a float64
    (chunks, width) table of their counts (a pair given twice adds up), and each term's count of
    chunks whose count of it is above 0 (`np.count_nonzero(table, axis=0)`); ValueError for a
    term or chunk out of range or columns of different lengths."""

# BM25 -------------------------------------------------------------------------------------------

def word_scores(
    count: int,
    terms: list[tuple[float, bool, list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], float]]]],
    within: npt.NDArray[np.bool_] | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(symbols, total, covered) of a question's terms over `count` symbols. Each term is
    (weight, direct, forms), each form (symbol ids, values, factor): a direct term's one form
    is taken as it is, otherwise each symbol takes its best scaled value over the forms. The
    symbols are listed in the order first reached (only those `within` keeps, when given), with
    the sum of their term values and of their terms' weights. Raises ValueError for a symbol id
    past `count` or a posting whose ids and values differ in length."""

def group_ids(
    keys: list[str], ids: npt.NDArray[np.int64], offsets: npt.NDArray[np.int64]
) -> tuple[list[int], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(firsts, ids, bounds): the ids `ids[offsets[j]:offsets[j + 1]]` of each source j grouped
    by its key `keys[j]`: the keys in the order first met (`firsts`, each one's first source),
    a key's ids those of its sources in source order (`ids[bounds[g]:bounds[g + 1]]`).
    ValueError for offsets that do not rise from 0 to at most len(ids), or not one more than
    the keys."""

def order_rows(columns: list[npt.NDArray[np.int64] | npt.NDArray[np.float64]], descending: list[bool]) -> npt.NDArray[np.int64]:
    """The rows in order of `columns` (the first deciding, the next breaking its ties...), each
    int64 column ascending unless `descending` says otherwise, a float64 column only
    descending (NaN last); rows equal in every column in row order: numpy's `lexsort` of the
    columns listed last first, a descending one negated. ValueError for columns of different
    lengths or another type."""

def key_sums(
    parts: list[npt.NDArray[np.int64]], values: list[npt.NDArray[np.float64]]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """(keys, sums): the distinct keys of `parts` (each ascending), ascending, and the sum of
    each one's `values` (one array per part) added from 0 in the order of the parts
    concatenated: `np.unique` of the concatenated keys with `return_inverse`, then `np.bincount`
    of the inverse weighed by the concatenated values, to the bit. ValueError for a part whose
    keys are not ascending or whose values differ in length, or not one values array a part."""

def bm25_scores(
    tf: npt.NDArray[np.float64],
    lengths: npt.NDArray[np.float64],
    term_weights: npt.NDArray[np.float64],
    k1: float,
    b: float,
    mean_length: float,
) -> npt.NDArray[np.float64]:
    """The BM25 score of each row of `tf` (rows x terms, C order): `lengths` per row,
    `term_weights` per term (its weight times its idf), `mean_length` of the whole collection;
    the same floats as numpy's `(w * tf * (k1 + 1) / (tf + norm[:, None])).sum(axis=1)`.
    ValueError for a table whose shape does not match."""

# Graph centrality ----------------------------------------------------------------------------

def graph_centrality(
    node_count: int,
    src: npt.NDArray[np.int64],
    dst: npt.NDArray[np.int64],
    *,
    alpha: float,
    max_iterations: int,
    tolerance: float,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.uint32], bool]:
    """(ranks, in_degree, converged) of the graph of `node_count` nodes with an edge
    `src[e] -> dst[e]` for every `e`: PageRank (summing to 1; parallel edges weigh their number;
    the floats of `rustworkx.pagerank`; the last step's when it has not converged within
    `max_iterations`) and how many distinct nodes have an edge to each. ValueError for an edge
    outside the graph or columns of different lengths."""

# Names of code ------------------------------------------------------------------------------

def name_words(source: bytes, skip: list[tuple[int, int]] = ...) -> list[str]:
    """The distinct words of the distinct ASCII identifiers (a letter or `_`, then letters,
    digits, `_`) of `source` outside the byte ranges `skip` (start, end), in the order they first
    appear: each identifier cut as `lexicon.split_identifier` cuts it, the parts of three letters
    or more made of letters only, lowercased."""

#: The stemmer's tables (`maguyva.lexicon.stem` reads them): suffixes tried in order as
#: (suffix, replacement, letters that must remain), the agent suffix likewise, the suffixes after
#: which a doubled consonant is undoubled, the consonants kept doubled, and the endings of words
#: whose final "s" is not a plural's.
STEM_SUFFIXES: list[tuple[str, str, int]]
STEM_AGENT: list[tuple[str, str, int]]
STEM_UNDOUBLE: list[str]
STEM_KEEP_DOUBLE: str
STEM_NOT_PLURAL: list[str]

def name_stems(source: bytes, skip: list[tuple[int, int]] = ...) -> list[str]:
    """The stems (`maguyva.lexicon.stem`) of `name_words(source, skip)`, in the same order (a
    stem may come more than once)."""

def text_tokens(
    texts: list[str],
) -> tuple[list[str], npt.NDArray[np.uint32], npt.NDArray[np.uint32], list[int]]:
    """(tokens, ids, counts, not_ascii): the distinct tokens of `texts` (runs of ASCII letters,
    digits, `_` and `$`, as `[\\w$]+` finds them in ASCII text) in the order first met, every
    text's tokens one text after another as indexes into them, each text's count of tokens, and
    the texts left to the caller (a character past ASCII, or not valid UTF-8), by index."""

# Weighted Reciprocal Rank Fusion -----------------------------------------------------------

def centrality_boost(centrality: float) -> float:
    """min(1 + 0.3 ln(1 + centrality), 1.5); negative or NaN centrality counts as 0."""

def rrf_fuse(
    lists: Sequence[npt.ArrayLike],
    weights: Sequence[float],
    k: float,
    centrality: npt.ArrayLike,
    demotion: npt.ArrayLike,
    file_ids: npt.ArrayLike,
    top_k: int,
) -> tuple[
    npt.NDArray[np.uint32], npt.NDArray[np.float64], npt.NDArray[np.int32], npt.NDArray[np.float64]
]:
    """Fuse ranked lists of chunk ids by weighted RRF.

    A chunk at 0-based rank r of list j earns weights[j] / (k + r + 1), times its centrality
    boost and its demotion factor (in [0, 1]); scores sum over lists. One chunk per file is
    kept (file_ids[chunk]), best first, ties by smaller chunk id, at most top_k.
    Returns (chunks, scores, ranks (n, lists; -1 = not found), contributions (n, lists)).
    """

# Repository walk ---------------------------------------------------------------------------

def walk(
    root: str | PathLike[str],
    max_file_size: int = 1_000_000,
    include_hidden: bool = False,
    include_dependency_dirs: bool = False,
    respect_gitignore: bool = True,
    include_secrets: bool = False,
) -> tuple[list[tuple[str, int, int]], dict[str, int]]:
    """The indexable files under `root` as (relative "/"-separated path, size, mtime_ns), sorted
    by path, and how many were left out by reason ("too_large", "symlink", "unreadable",
    "secret" for files named like keys and credentials unless `include_secrets`, ...).

    Honours .gitignore (also without a .git folder), .ignore and .maguyvaignore; never enters
    VCS folders; skips dependency and cache folders unless asked. Raises FileNotFoundError for a
    missing root, ValueError for a root that is not a directory.
    """

def read_files(
    root: str | PathLike[str], paths: Sequence[str | PathLike[str]], max_file_size: int = 1_000_000
) -> list[bytes | str]:
    """Read files (relative to `root`) in parallel: each item is the file's bytes, or the reason
    it was skipped ("binary", "unreadable", "vanished", "too_large")."""

class TreeWatch:
    """(Linux only.) A watch of the folders of the tree at `root`: `walk` walks as `walk` does
    and watches the folders it entered; `changes` reads what the kernel queued since, without
    blocking, and returns a count that grows whenever something a walk could act on changed
    (a hidden file other than an ignore file is left out; beginning to watch a folder counts).
    While the count stays what it was when a walk began, that walk's files are still the
    tree's. After the first walks, a walk walks only where the events said something changed
    and keeps the rest of the previous walk's findings (the same report as a whole walk).
    ValueError for a root that is not a directory or lies on a network file system, OSError
    when the kernel gives no more watches."""

    def __init__(self, root: str | PathLike[str]) -> None: ...
    def walk(
        self, max_file_size: int = 1_000_000, include_secrets: bool = False
    ) -> tuple[list[tuple[str, int, int]], dict[str, int]]: ...
    def changes(self) -> int: ...
    @property
    def watched(self) -> int:
        """How many folders are watched."""
    @property
    def partial_walks(self) -> int:
        """How many walks walked only what changed since the walk before."""
    @property
    def root(self) -> Path: ...

# Static embeddings -------------------------------------------------------------------------

class WordPieceTokenizer:
    """BERT's WordPiece tokenization (BertNormalizer, BertPreTokenizer, WordPiece), the ids of
    the `tokenizers` library for the same tokenizer.json, without special tokens added.
    Tokenizing and pooling run in threads without the GIL."""

    def __init__(
        self,
        tokens: Sequence[str],
        unknown: int,
        prefix: str,
        max_chars: int,
        clean_text: bool,
        chinese_chars: bool,
        strip_accents: bool,
        lowercase: bool,
        added: Sequence[tuple[str, int]],
    ) -> None:
        """`tokens[i]` is token i; `unknown` the id of a word no pieces spell (or longer than
        `max_chars`); `prefix` marks a piece continuing a word; `added` (text, id) pairs are
        found in the raw text before normalization. ValueError for an unknown id outside the
        vocabulary or an added token without text."""
    def token_ids(self, lines: Sequence[str]) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """Every line's ids, one after another, and each line's number of ids."""
    def pooled_sums(
        self,
        texts: Sequence[str],
        table: npt.NDArray[np.float32] | npt.NDArray[np.float16],
        skip: npt.NDArray[np.uint32],
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Per text, the sum of its tokens' rows of `table` ((len(texts), dims) float32; a
        float16 table's rows widened exactly as they are read), each line summed in order and
        then the lines, and its token count, tokens in `skip` left out. ValueError if a token has
        no row in `table`, or `table` is not a C-contiguous float32 or float16 array."""
