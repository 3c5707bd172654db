"""Queries of any length and content: an over-long one is refused with one sentence on every
surface (Index.search, `maguyva search`, the MCP tools), one at the limit is answered, and no
text makes the query path fail or answer with malformed results. The cost of long queries is
measured by benches/query_inputs.py; here the work is bounded structurally (lookups counted,
refusals reached before any work)."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maguyva import Index
from maguyva.index.symbols import symbol_table
from maguyva.query import classify as classify_module
from maguyva.query.classify import Classification, classify
from maguyva.query.intents import INTENTS, MAX_QUERY_CHARS, PRESETS, RULES_BY_NAME
from maguyva.query.rank import signals as rerank
from maguyva.query.search import QueryTooLongError
from maguyva.serve.cli import main as cli_main
from maguyva.serve.corpus import Corpus
from maguyva.serve.mcp import TOOLS, ToolFailure, call_tool

#: A small invented project: a bakery's oven schedule, order queue, shop front and ledger.
TREE = {
    "bakery/__init__.py": "",
    "bakery/oven.py": (
        "from bakery.orders import next_order\n"
        "\n"
        "\n"
        "class OvenSchedule:\n"
        '    """Which trays go into which oven, and when."""\n'
        "\n"
        "    def __init__(self, ovens):\n"
        "        self.ovens = ovens\n"
        "\n"
        "    def bake_batch(self, minutes):\n"
        '        """Bake the next order\'s trays for `minutes`."""\n'
        "        order = next_order()\n"
        "        if order is None:\n"
        '            raise EmptyQueueError("no order waiting")\n'
        "        return [(oven, order, minutes) for oven in self.ovens]\n"
        "\n"
        "\n"
        "class EmptyQueueError(LookupError):\n"
        "    pass\n"
    ),
    "bakery/orders.py": (
        "QUEUE = []\n"
        "\n"
        "\n"
        "def enqueue_order(loaves, rolls=0):\n"
        '    """Put an order at the back of the queue."""\n'
        "    QUEUE.append({'loaves': loaves, 'rolls': rolls})\n"
        "\n"
        "\n"
        "def next_order():\n"
        "    return QUEUE.pop(0) if QUEUE else None\n"
    ),
    "storefront/menu.ts": (
        "// The menu shown in the shop window.\n"
        "export function renderMenu(items: string[]): string {\n"
        "  return items.map((item) => `<li>${item}</li>`).join('');\n"
        "}\n"
    ),
    "ledger/src/lib.rs": (
        "/// Daily takings, in cents.\n"
        "pub struct Ledger { pub cents: u64 }\n"
        "\n"
        "impl Ledger {\n"
        "    pub fn record_sale(&mut self, cents: u64) { self.cents += cents; }\n"
        "}\n"
    ),
    "docs/guide.md": "# Bakery\n\nOrders are queued, then baked in batches; the ledger records each sale.\n",
    "tests/test_oven.py": (
        "from bakery.oven import OvenSchedule\n"
        "\n"
        "\n"
        "def test_bake_batch_uses_every_oven():\n"
        "    assert OvenSchedule([1, 2]).ovens == [1, 2]\n"
    ),
}
LINES = {path: max(1, len(text.splitlines())) for path, text in TREE.items()}
TOO_LONG = "a" * 1_000_000
REFUSAL = "the query is 1,000,000 characters; the limit is 10,000"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory):
    """MAGUYVA_HOME in a scratch folder for the whole module."""
    with pytest.MonkeyPatch.context() as patch:
        folder = tmp_path_factory.mktemp("home")
        patch.setenv("MAGUYVA_HOME", str(folder))
        yield folder


@pytest.fixture(scope="module")
def root(home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bakery") / "bakery-shop"
    for rel, text in TREE.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def index(root: Path):
    with Index.build(root) as built:
        yield built


@pytest.fixture(scope="module")
def corpus(index: Index, root: Path):
    with Corpus.open([root]) as opened:
        yield opened


def _one_sentence(message: str) -> None:
    assert "\n" not in message and ". " not in message and message.strip() == message


# The refusal, on every surface ---------------------------------------------------------------


def test_the_limit_is_ten_thousand_characters():
    assert MAX_QUERY_CHARS == 10_000


@pytest.mark.parametrize("preset", list(PRESETS))
def test_index_search_refuses_a_million_characters_with_one_sentence(index, preset):
    with pytest.raises(QueryTooLongError) as caught:
        index.search(TOO_LONG, preset=preset)
    assert isinstance(caught.value, ValueError)
    assert str(caught.value) == REFUSAL
    _one_sentence(str(caught.value))


def test_the_refusal_comes_before_any_work(index, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("an over-long query must not be classified")

    monkeypatch.setattr("maguyva.query.search.classify", refuse)
    with pytest.raises(QueryTooLongError):
        index.search("x" * (MAX_QUERY_CHARS + 1))


def test_the_refusal_counts_characters_not_bytes(index):
    index.search("é" * MAX_QUERY_CHARS)  # 20,000 bytes of UTF-8, 10,000 characters: answered
    with pytest.raises(QueryTooLongError, match="the query is 10,001 characters; the limit is 10,000"):
        index.search("é" * (MAX_QUERY_CHARS + 1))


def test_the_command_line_refuses_it_with_one_line_and_exit_2(index, root, capsys):
    assert cli_main(["search", TOO_LONG, str(root)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"maguyva: {REFUSAL}\n"


def test_the_command_line_refuses_it_without_a_traceback(index, root, home):
    # One argument of a command line holds at most 128 KiB on Linux: a million characters cannot
    # be passed to a process, so the process is given a query just past the limit's tenfold.
    query = "b" * 100_001
    done = subprocess.run(
        [sys.executable, "-m", "maguyva", "search", query, str(root)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "MAGUYVA_HOME": str(home)},
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == "maguyva: the query is 100,001 characters; the limit is 10,000\n"


def test_mcp_search_refuses_it_with_one_sentence_before_refreshing(corpus, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("an over-long query must be refused before the index is brought up to date")

    monkeypatch.setattr(corpus, "refresh", refuse)
    with pytest.raises(ToolFailure) as caught:
        call_tool(corpus, "search", {"query": TOO_LONG})
    assert str(caught.value) == REFUSAL


@pytest.mark.parametrize(
    "tool, argument, extra",
    [
        ("search", "query", {}),
        ("find_symbol", "name", {}),
        ("callers", "symbol", {}),
        ("impact", "symbol", {}),
        ("find_related", "path", {"line": 1}),
    ],
)
def test_mcp_query_like_arguments_have_a_max_length_that_is_enforced(corpus, tool, argument, extra):
    schema = TOOLS[tool].input_schema["properties"][argument]
    assert schema["maxLength"] == MAX_QUERY_CHARS
    with pytest.raises(ToolFailure) as caught:
        call_tool(corpus, tool, {argument: TOO_LONG, **extra})
    message = str(caught.value)
    assert message == f"the {argument} is 1,000,000 characters; the limit is 10,000"
    _one_sentence(message)


def test_mcp_search_answers_a_query_at_the_limit(corpus):
    payload, _ = call_tool(corpus, "search", {"query": "oven " * (MAX_QUERY_CHARS // 5)})
    assert payload["intent"] in INTENTS


# At the limit: answered ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "a" * MAX_QUERY_CHARS,  # one word
        "bakeBatch" * (MAX_QUERY_CHARS // 9),  # one camelCase identifier
        ("oven" * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS],  # one word starting like path and name words
        ("how are the orders baked in batches " * 300)[:MAX_QUERY_CHARS],  # many words
        ("bakery." * 2000)[:MAX_QUERY_CHARS],  # a dotted run
        "{" + "x" * (MAX_QUERY_CHARS - 1),  # an unclosed brace
        ('"no order waiting" `bake_batch` ' * 400)[:MAX_QUERY_CHARS],  # quotes and backticks
        ("order = next_order();\n" * 500)[:MAX_QUERY_CHARS],  # pasted code
    ],
    ids=["word", "camel", "path-word", "words", "dotted", "brace", "quotes", "code"],
)
@pytest.mark.parametrize("preset", list(PRESETS))
def test_a_query_at_the_limit_is_answered(index, query, preset):
    assert len(query) <= MAX_QUERY_CHARS
    response = index.search(query, preset=preset)
    _well_formed(response, query, 10, preset)


# Linear work, counted ------------------------------------------------------------------------


class _CountingSet(frozenset):
    """A frozenset that counts membership tests."""

    lookups = 0

    def __contains__(self, item) -> bool:
        type(self).lookups += 1
        return frozenset.__contains__(self, item)


class _CountingDict(dict):
    lookups = 0

    def get(self, key, default=None):
        type(self).lookups += 1
        return dict.get(self, key, default)


def test_structural_prefix_expansion_looks_up_no_prefix_longer_than_a_name_word(index, monkeypatch):
    words = symbol_table(index.reader).words()
    counting = _CountingSet(words._name_set)
    monkeypatch.setattr(words, "_name_set", counting)
    longest = max(counting, key=len)
    _CountingSet.lookups = 0
    expanded = words.expansions(longest + "x" * 200_000)
    assert longest in expanded  # the name word it starts with
    assert _CountingSet.lookups <= len(longest)


def test_path_vocabulary_looks_up_no_prefix_longer_than_a_path_word(index, monkeypatch):
    vocabulary = rerank.PathVocabulary(index.reader)
    counting = _CountingDict(vocabulary._words.files_of)
    monkeypatch.setattr(vocabulary._words, "files_of", counting)
    longest = max(map(len, counting))
    _CountingDict.lookups = 0
    share = vocabulary.share("oven" + "x" * 200_000)
    assert _CountingDict.lookups <= longest
    assert share == vocabulary.share("oven") > 0


def test_path_agreement_looks_up_no_prefix_longer_than_the_path_words():
    path = _CountingSet({"oven", "bakery"})
    _CountingSet.lookups = 0
    assert rerank._agrees("oven" + "x" * 200_000, path, 3)
    assert not rerank._agrees("ove" + "x" * 200_000, path, 3)
    assert _CountingSet.lookups <= 2 * (1 + len("bakery"))


def _agrees_by_every_prefix(word: str, words: frozenset[str], shortest: int) -> bool:
    """`rerank._agrees` as it was written first, building every prefix (quadratic)."""
    prefixes = {w[:i] for w in words for i in range(shortest, len(w) + 1)}
    return word in words or (len(word) >= shortest and word in prefixes) or any(
        word[:i] in words for i in range(shortest, len(word))
    )


_SHORT_WORDS = st.text(alphabet="abo", max_size=7)


@settings(max_examples=300, deadline=None)
@given(_SHORT_WORDS, st.frozensets(_SHORT_WORDS, max_size=5), st.sampled_from([3, 4]))
def test_path_agreement_agrees_with_every_prefix_built(word, words, shortest):
    assert rerank._agrees(word, words, shortest) == _agrees_by_every_prefix(word, words, shortest)


#: The classifier's exception pattern as it was written first: quadratic on a long dotted run.
_EXCEPTION_IN_ONE_PATTERN = re.compile(
    r"\b(?:[a-z_][\w]*\.)*(?:[A-Z][A-Za-z0-9]*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault|Panic)"
    r"|StopIteration|StopAsyncIteration|KeyboardInterrupt|GeneratorExit|SystemExit)\b"
)
_TRACE_PIECES = st.sampled_from(["a", "os", "b_", "X", ".", " ", "Error", "ValueError", "StopIteration", "é", "1", "\n"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_TRACE_PIECES, max_size=12).map("".join))
def test_exception_names_are_those_of_the_one_pattern(text):
    assert list(classify_module._exceptions(text)) == _EXCEPTION_IN_ONE_PATTERN.findall(text)


# Any text: never an exception, always well-formed -------------------------------------------

#: Text of every kind: all of Unicode but surrogates, with control characters, NUL, right-to-left
#: and other invisible marks, quotes, backticks and code punctuation over-represented.
_SPECIAL = st.sampled_from(
    ["\x00", "\x01", "\x1b", "\t", "\n", "\r", "\u200b", "\u200e", "\u200f", "\u202e", "\u2066", "\ufeff",
     '"', "'", "`", "“", "”", "{", "}", "(", ")", ".", ":", "#", "-", ">", ";", "=", "_", "$", "\\", " "]
)
_CHARS = st.characters(blacklist_categories=("Cs",))
_PIECE = st.text(st.one_of(_CHARS, _SPECIAL), min_size=1, max_size=40)
_LONG = st.builds(lambda piece, n: (piece * (n // len(piece) + 1))[:n], _PIECE, st.integers(1, MAX_QUERY_CHARS))
QUERIES = st.one_of(
    st.text(st.one_of(_CHARS, _SPECIAL), max_size=200),
    st.lists(st.sampled_from(["oven", "bake_batch", "OvenSchedule", "who calls", "where is", "defined", "\"no order",
                              "`", "EmptyQueueError", "how", "similar to", ".", "::", "{", "}", ";", "\n", " "]),
             max_size=30).map(" ".join),
    _LONG,
)


def _well_formed(response, query: str, top_k: int, preset: str) -> None:
    assert response.query == query and response.preset == preset
    assert response.intent in INTENTS
    assert len(response.results) <= top_k
    for hit in response.results:
        assert hit.path in TREE
        assert 1 <= hit.start_line <= hit.end_line <= LINES[hit.path]
        assert math.isfinite(hit.score)
        assert all(math.isfinite(part.contribution) for part in hit.modalities.values())


@settings(max_examples=100, deadline=None)
@given(QUERIES)
def test_the_classifier_answers_any_text(query):
    found = classify(query)
    assert isinstance(found, Classification)
    rule = RULES_BY_NAME[found.rule]
    assert (found.intent, found.confidence) == (rule.intent, rule.confidence)
    assert found.subject is None or (isinstance(found.subject, str) and found.subject)
    assert found.kind is None or isinstance(found.kind, str)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(query=QUERIES, preset=st.sampled_from(list(PRESETS)), top_k=st.integers(1, 12))
def test_search_answers_any_text_with_well_formed_results(index, query, preset, top_k):
    if not query.strip():
        with pytest.raises(ValueError, match="^the query is empty$"):
            index.search(query, top_k=top_k, preset=preset)
        return
    _well_formed(index.search(query, top_k=top_k, preset=preset), query, top_k, preset)


@settings(max_examples=30, deadline=None)
@given(query=st.builds(lambda piece, extra: (piece * (MAX_QUERY_CHARS // len(piece) + 2))[: MAX_QUERY_CHARS + extra],
                       _PIECE, st.integers(1, 10 * MAX_QUERY_CHARS)))
def test_search_refuses_any_text_past_the_limit(index, query):
    with pytest.raises(QueryTooLongError) as caught:
        index.search(query)
    assert str(caught.value) == f"the query is {len(query):,} characters; the limit is 10,000"
