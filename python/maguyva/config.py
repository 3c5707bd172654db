"""Every tuned number of the pipeline, in one frozen object, grouped by stage.

    from maguyva import config

    config.DEFAULT.PATH_BONUS                      # the shipped value
    variant = config.DEFAULT.but(PATH_BONUS=0.5)   # another, for an ablation
    Searcher(reader, tuning=variant)               # questions answered with it
    build_index(root, tuning=variant)              # an index built with it

`Tuning` is passed in where work starts (a `Searcher`, `build_index`), and the stages of that
work read it with `config.current()`: within `config.using(tuning)`, which those entry points
enter, and which follows the work into the threads they hand it to. Outside any, `current()` is
`DEFAULT`. Two searchers with different tunings answer side by side in one process, each with
its own; nothing changes a number for anyone else. Tables derived from an index with these
numbers are kept per tuning (`index.reader.per_reader`).

The names are upper case, as the documentation and the benchmarks' `--sweep NAME=...` spell them.
The intent weights, presets and the classifier's confidences are SPEC's table and live with it, in
`maguyva.query.intents`."""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Tuning:
    """The tuned numbers (see the module's documentation)."""

    # BM25's usual constants, for every scorer of words (the text retriever over chunks, the symbol
    # table's word index over symbols): k1 sets how fast repeated matches saturate, b how much a
    # longer text's matches count less.
    BM25_K1: float = 1.2
    BM25_B: float = 0.75

    # --- Routing ------------------------------------------------------------------------------
    #: A confident question goes to one modality only when it is one line of at most this many
    #: characters (and the classifier found its subject).
    ORDINARY_MAX_CHARS: int = 200
    #: How far a blast radius reaches: edges from the symbol of an impact question.
    IMPACT_DEPTH: int = 3

    # --- Retrieval ----------------------------------------------------------------------------
    #: How many candidates each modality hands to fusion, per result asked for (and at least
    #: MIN_CANDIDATES): enough for agreement between modalities to show below the top.
    CANDIDATES_PER_RESULT: int = 5
    MIN_CANDIDATES: int = 50
    #: The modalities run in parallel over indexes of at least this many chunks. Below it each one
    #: takes a fraction of a millisecond, mostly in Python under the GIL, and handing them to threads
    #: costs more than it saves: over the 400 dev-split queries (repositories of 80 to 10,700 chunks,
    #: 2 cores) one after the other gave p50 2.1-2.4 ms (default) and 2.5-3.0 ms (thorough), a pool
    #: of 4 threads 2.3-3.4 and 2.8-3.2. Over large indexes the kernels (Hamming scan, trigram
    #: verification) run for milliseconds without the GIL, and running them side by side pays.
    PARALLEL_MIN_CHUNKS: int = 50_000
    #: Weight of an identifier's parts relative to the identifier itself.
    TEXT_PART_WEIGHT: float = 0.5
    #: Each term's count of lines by chunk over an index (or over a filter's chunks) is kept for
    #: that index's next questions, up to this many bytes in all in the process, for every index
    #: it has open (packed, about 3 bytes a chunk holding the term), the least recently asked let
    #: go first. The words of one repository's questions recur: 200 questions over 59,280 files
    #: ask 1,007 terms, 553 of them distinct, whose first askings are 38% of the terms' counting
    #: (11.9 million entries; 32 MB holds 448 of the 553). An index of fewer chunks than the
    #: minimum counts every time: its terms cost tens of microseconds (the dev split's
    #: repositories, 80 to 10,700 chunks, gained nothing), while over 46,000 chunks the first
    #: askings' p50 fell 13% and their p95 25-35%.
    TEXT_COUNTS_KEPT_BYTES: int = 32_000_000
    TEXT_COUNTS_KEPT_MIN_CHUNKS: int = 20_000
    #: A chunk holding no definition and at most this many lines (an import block, a stray
    #: `#endif`) is not an answer by meaning: its embedding is mostly its file's path, so it comes up
    #: for any question that names the file. Such chunks are left out of this modality's list (the
    #: text modality still finds them), unless the chunk is all of its file (a three-line module
    #: that re-exports a class is found by its path or not at all).
    SEMANTIC_MAX_BARE_LINES: int = 5
    #: In the quick preset (the semantic modality alone), a chunk's distance to the question plus
    #: this times its file path's (the path's words embedded as a text): a question that describes
    #: a file often says what its path does ("fetch sources over git+ssh", fetch/git_ssh.lua), and
    #: quick has no path signal of its own. Chosen out of fold by repository over the dev split and
    #: the mined sets (benches/README.md, "Paths in the quick preset"): 0.1 in most folds. The
    #: fused presets weigh paths in their ranking stage, and chose 0 there.
    QUICK_PATH_WEIGHT: float = 0.1
    #: A pasted snippet can hold hundreds of names and words; the first this many of each are used.
    STRUCTURAL_MAX_NAMES: int = 32
    STRUCTURAL_MAX_QUESTION_WORDS: int = 48
    #: Personalized PageRank starts from at most this many symbols: a word that names dozens of
    #: definitions says little about which code is meant.
    PPR_MAX_SEEDS: int = 16
    #: Personalized PageRank: restart probability 1 - PPR_ALPHA, the neighbourhood it walks, and
    #: when its power iteration stops.
    PPR_ALPHA: float = 0.85
    PPR_DEPTH: int = 2
    PPR_MAX_NODES: int = 2000
    PPR_ITERATIONS: int = 50
    PPR_TOLERANCE: float = 1e-6

    # --- The structural retriever's order within a tier ---------------------------------------
    #: A symbol's score is its tier's base (3 exact, 2 caseless, 1 name words, 0 question words)
    #: plus STRUCTURAL_FRACTION times a mix, in [0, 1], of how well it matched, its kind's fit to
    #: the question, whether it is primary code, and how many depend on it (in_degree / (in_degree
    #: + STRUCTURAL_DEGREE_HALF)).
    STRUCTURAL_FRACTION: float = 0.999
    STRUCTURAL_WEIGHT_MATCH: float = 0.6
    STRUCTURAL_WEIGHT_KIND: float = 0.075
    STRUCTURAL_WEIGHT_PRIMARY: float = 0.15
    STRUCTURAL_WEIGHT_DEGREE: float = 0.1
    STRUCTURAL_DEGREE_HALF: float = 4.0
    #: How well a symbol matches a name (`SymbolTable.match_name`): its name, or its whole
    #: qualified name, as written; a name that is not the qualified one; the qualified name's
    #: tail; the last part with the qualifier fitting; caseless with and without that fit.
    MATCH_WHOLE: float = 1.0
    MATCH_NAME_ONLY: float = 0.95
    MATCH_TAIL: float = 0.9
    MATCH_QUALIFIER_FITS: float = 0.8
    MATCH_QUALIFIER_DIFFERS: float = 0.5
    MATCH_CASELESS_FITS: float = 0.45
    MATCH_CASELESS_DIFFERS: float = 0.4

    # --- The symbol table's word index (the structural retriever's fourth tier) ---------------
    # Tier 4 weights: how much a word counts in each part of a symbol, and in its file's name.
    WORD_WEIGHT_NAME: float = 3.0
    WORD_WEIGHT_QUALIFIER: float = 1.0
    WORD_WEIGHT_SIGNATURE: float = 0.75
    WORD_WEIGHT_DOCSTRING: float = 1.0
    WORD_WEIGHT_PATH: float = 0.4
    #: A query word that is a prefix of an indexed word, or has one as its prefix, counts this much.
    WORD_WEIGHT_PREFIX: float = 0.5
    WORD_MIN_PREFIX: int = 4
    WORD_MAX_EXPANSIONS: int = 24
    #: Tier 4 relevance of a test or vendored file's symbol is multiplied by this.
    WORD_SECONDARY_FACTOR: float = 0.75

    # --- Graph -------------------------------------------------------------------------------
    #: A call no evidence resolves to one definition is linked to each definition of its name
    #: (`candidate`) when the name has at most this many (0: left unlinked). Each is a caller
    #: an agent should see, marked as a guess; more than a few is noise.
    AMBIGUOUS_CALL_MAX_DEFINITIONS: int = 3

    # --- Fusion: centrality and demotion ------------------------------------------------------
    #: The index's PageRank (`maguyva.index.graph.centrality`): damping, and when its power
    #: iteration stops.
    PAGERANK_ALPHA: float = 0.85
    PAGERANK_ITERATIONS: int = 200
    PAGERANK_TOLERANCE: float = 1e-8
    #: Divides the excess PageRank (see `maguyva.index.graph.centrality`). Measured on the dev split with the default
    #: preset (benches/queries.py --ablation): NDCG@10 0.725 with divisor 1 (about 5% of chunks at
    #: the boost's cap), 0.753 with 4, 0.760 with 16, 0.754 with no boost at all.
    CENTRALITY_DIVISOR: float = 16.0
    #: Score multiplier of vendored, built, archived, minified or generated code in fusion.
    VENDORED_DEMOTION: float = 0.5

    # --- The hand-set post-fusion signals (maguyva.query.rank.signals) ------------------------
    #: Score multiplier of tests, examples, compatibility code and non-code files.
    SECONDARY_CODE_FACTOR: float = 0.3
    #: Score multiplier of a C/C++ header in the folder of a source file of the same name.
    HEADER_BESIDE_SOURCE_FACTOR: float = 0.5
    #: Score multiplier of code under a version folder that has a newer sibling, for a question that
    #: does not name that version.
    OLDER_VERSION_FACTOR: float = 0.5
    #: Score multiplier of a part of a file beside the whole (`EntryMapper.Async.cs` beside `EntryMapper.cs`).
    PART_BESIDE_WHOLE_FACTOR: float = 0.5
    #: Score multiplier of a Windows port of a file that has a twin for other systems.
    WINDOWS_PORT_FACTOR: float = 0.5
    #: File coherence bonus, in units of the best fused score, for the file whose chunks add up to
    #: the most (for the intents and rules `signals.COHERENCE_INTENTS` and `COHERENCE_RULES` name).
    COHERENCE_BONUS: float = 0.1
    #: Share of a modality's best contribution within a file, found through another of its chunks,
    #: that the file's best chunk gains.
    FILE_AGREEMENT: float = 0.5
    #: Path agreement bonus, in units of the best fused score, for a path matching every word.
    PATH_BONUS: float = 1.0
    #: A path matching fewer than this share of the question's words gains nothing.
    PATH_MIN_SHARE: float = 0.10
    #: Further bonus, in units of the best fused score, for a file whose name the question spells
    #: whole (every word of the name agrees with a question word).
    FILE_NAME_BONUS: float = 0.2
    #: A question word found in the paths of more than this share of the index's files (the
    #: project's own name, "src", "core") says nothing about which file is meant: it is not counted.
    COMMON_PATH_WORD: float = 0.25
    #: Definition bonus, in units of the best fused score: for a question that is a name, for
    #: names inside a sentence, and the factor when the file is named after the symbol.
    DEFINITION_BONUS_NAME: float = 3.0
    DEFINITION_BONUS_IN_SENTENCE: float = 1.5
    DEFINITION_FILE_NAMED: float = 1.5
    #: The factor of a callable's definition bonus when a type of the same name is defined too.
    DEFINITION_CALLABLE_BESIDE_TYPE: float = 0.5
    #: Shortest prefix that counts as agreement: of words as written, and of their stems.
    AGREEMENT_SHORTEST_PREFIX: int = 3
    AGREEMENT_SHORTEST_STEM_PREFIX: int = 4
    #: Folders above a file whose names count for `deep_path_share` (the file's own folder included).
    DEEP_FOLDERS: int = 3
    #: File ids of code-word postings an open index keeps in memory once read (4 bytes each; the
    #: least recently asked words are dropped past it): 16 MB, the words of a few hundred
    #: questions at 59,000 files (60 questions' 194 words spell 1.4 million files there).
    CODE_WORD_CACHE_ENTRIES: int = 4_000_000
    #: Distinct identifiers whose split and stemmed words the process keeps (`symbols._Vocabulary`):
    #: each new generation of an index builds its symbol tables again from the same names.
    TOKEN_PARTS_CACHE_ENTRIES: int = 500_000
    #: Distinct words the process numbers (`symbols._Registry`), a bound on its memory: past it,
    #: tables made after number their words anew.
    WORD_REGISTRY_MAX_WORDS: int = 4_000_000
    #: Paths whose marks (vendored, test) the process keeps (`roles._path_marks`): a generation
    #: whose paths changed derives the files' roles and ranks again from every path.
    PATH_MARKS_CACHE_ENTRIES: int = 1_000_000
    #: `code_coverage` adds each question word's weight to the files of its posting in one pass when
    #: the postings hold at most this many entries per candidate (with the index's file count), and
    #: otherwise looks each candidate up in each posting: a pass is 5 times quicker on the dev
    #: split's indexes (11 against 59 µs a question on zod), a lookup does not grow with the index.
    CODE_COVERAGE_PASS_ENTRIES: int = 64

    # --- Across repositories (maguyva.serve.corpus) -------------------------------------------
    #: A location's chunk used as a find_similar question is cut to this many lines and characters:
    #: the start of a long function says what it is; its whole body would only dilute the terms.
    RELATED_MAX_LINES: int = 40
    RELATED_MAX_CHARS: int = 2000
    #: A graph walk starts from at most this many definitions of the name asked about.
    GRAPH_WALK_MAX_SEEDS: int = 16
    #: A server brings a repository's index up to date once its watched tree has seen no change
    #: for this long (an agent's edit of several files is one update), looking every
    #: FOLLOW_POLL_SECONDS: then the next question finds the update made.
    FOLLOW_QUIET_SECONDS: float = 0.5
    FOLLOW_POLL_SECONDS: float = 0.25

    # --- Building -----------------------------------------------------------------------------
    #: Files to parse, in bytes, from which worker processes help (below it one process parses
    #: alone: a worker starts in about 0.1 s, and parsing runs at about 2-3 MB/s a core).
    PARSE_PARALLEL_MIN_BYTES: int = 1_000_000
    #: Files to parse, in bytes, from which workers kept ready from an earlier build help (they
    #: cost only the pipe and the pickling: about even at 200 KB, 0.13 -> 0.09 s at 440 KB).
    PARSE_KEPT_MIN_BYTES: int = 300_000
    #: Bytes of files read up to which a full build makes its trigram index beside its parse (the
    #: index's build and the parsed records then in memory at once), and up to which a build
    #: embeds beside its graph's resolution and rows (the chunks' texts kept meanwhile): above
    #: them, the memory held at once matters more than the time saved (at 1.15 GB of files, the
    #: embedding beside the graph saved 1.4% of the build's time for 2% more peak memory).
    TEXT_INDEX_BESIDE_MAX_BYTES: int = 32_000_000
    EMBED_BESIDE_MAX_BYTES: int = 256_000_000
    #: Seconds a ready worker is kept after its last batch for the process's next build.
    PARSE_WORKER_KEEP_SECONDS: float = 120.0
    #: At most this many worker processes parse beside the building process.
    PARSE_MAX_WORKERS: int = 7
    #: Bytes of files handed to a worker at a time: big enough that the pipe and pickling cost
    #: little, small enough that the last batches balance the workers.
    PARSE_BATCH_BYTES: int = 256_000
    #: Chunks embedded at a time by a build: their texts exist only meanwhile (about 2 KB each),
    #: so a build's memory does not grow with a second copy of the repository's code.
    EMBED_GROUP_CHUNKS: int = 16_384
    #: A chunk's code is the sign of its mean token vector plus this times its file's (an
    #: embedder that can: the local model), so a chunk carries what its file is about. Chosen
    #: out of fold by repository over the dev split and the mined sets (benches/README.md,
    #: "File context"): 1.0 in 4 of 5 folds for the default preset; 0 embeds chunks alone.
    EMBED_FILE_CONTEXT: float = 1.0
    #: Codes written to the embedding cache at once, sorted by key: random keys inserted a batch
    #: at a time spread over the whole B-tree (100,000 codes: 1.9 s in batches of 2,048, 0.6 s in
    #: sorted runs of 16,384). A run is written sooner once this many seconds have passed since
    #: the last, so a slow embedder's finished work is kept when a run is interrupted.
    EMBED_CACHE_WRITE_ROWS: int = 16_384
    EMBED_CACHE_WRITE_SECONDS: float = 2.0
    #: An update rewrites only the trigram index's delta layer (the documents edited or added
    #: since its base was written) and the rows' delta segment while the delta's content, with
    #: the base's documents of files removed since, is at most this share of the base's; past it,
    #: both are merged into a new base. Each edit then writes at most about this share of a whole
    #: index, and queries search two layers at most.
    TEXT_DELTA_MAX_SHARE: float = 0.1
    #: A base segment's columns read once are kept in this process while anything holds the base
    #: (`segments.BaseColumns`), for tables of at most this many rows: an edit's generation links
    #: the base, so its build and its first question read only the delta's rows (about 80 bytes a
    #: row and column at most; 2,000,000 symbols is a repository of some 150,000 files).
    SEGMENT_COLUMNS_CACHE_ROWS: int = 2_000_000


    # Hashed once: derived tables are looked up by tuning on every question (`per_reader`), and a
    # dataclass's own hash makes a tuple of every field each time.
    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        return hash(dataclasses.astuple(self))

    def but(self, **changes: float) -> Tuning:
        """This tuning with some numbers changed; a name it does not have is a TypeError."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def numbers(cls) -> tuple[str, ...]:
        """The names of the tuned numbers."""
        return tuple(f.name for f in dataclasses.fields(cls))


#: The shipped numbers.
DEFAULT = Tuning()

_current: contextvars.ContextVar[Tuning] = contextvars.ContextVar("maguyva_tuning", default=DEFAULT)


#: The tuning of the work under way (`DEFAULT` outside any `using`). The context variable's own
#: getter, with no Python call around it: the ranking reads it in loops over words and files.
current: Callable[[], Tuning] = _current.get


@contextmanager
def using(tuning: Tuning | None) -> Iterator[Tuning]:
    """Run the block with `tuning` (None: the current one) as `current()`, in this thread and in
    the contexts copied from it (`contextvars.copy_context`)."""
    if tuning is None:
        yield _current.get()
        return
    token = _current.set(tuning)
    try:
        yield tuning
    finally:
        _current.reset(token)
