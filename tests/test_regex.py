"""Regular-expression search: the trigram plan never loses a match (the same documents and
lines as reading everything, and as ripgrep), questions written `/pattern/` or `regex:pattern`
are answered line by line, and bad patterns are one-sentence errors."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from fixture_repos import write_file, write_tree
from hypothesis import given
from hypothesis import strategies as st

from maguyva import Index, TrigramIndex
from maguyva.errors import QueryError
from maguyva.query.classify import REGEX_RULE, classify, regex_pattern

#: Patterns whose meaning is the same in Python's `re` and in the `regex` crate.
PATTERNS = [
    "retry", "ret(ry|urn)", "conn(ect|ection)_[a-z]+", r"\bread\w*", "^def ", r"\d{2,}", "[A-Z][a-z]+Error",
    "time?out", "(?i)TIMEOUT", "x+y", "a|bc|def", r"\(\)",
]  # fmt: skip

WORDS = ["retry", "return", "connect_db", "connection_pool", "read", "reader", "def ", "42", "7", "ValueError",
         "timeout", "timout", "TimeOut", "xxy", "bc", "def", "()", " ", "\n", "a", "z"]  # fmt: skip


def scanned(docs: list[tuple[int, bytes]], pattern: str) -> list[tuple[int, int, list[int]]]:
    """(doc id, matches, lines they start on) by reading every document with `re`."""
    expected = []
    compiled = re.compile(pattern.encode(), re.M)
    for doc_id, data in docs:
        starts = [m.start() for m in compiled.finditer(data) if m.end() > m.start()]
        if starts:
            lines = sorted({data.count(b"\n", 0, s) + 1 for s in starts})
            expected.append((doc_id, len(starts), lines))
    return expected


def found(index: TrigramIndex, pattern: str) -> list[tuple[int, int, list[int]]]:
    matches = index.search_regex(pattern)
    offsets = matches.line_offsets.tolist()
    return [
        (int(doc), int(count), matches.lines[offsets[i] : offsets[i + 1]].tolist())
        for i, (doc, count) in enumerate(zip(matches.doc_ids, matches.counts))
    ]


@given(st.lists(st.lists(st.sampled_from(WORDS), max_size=40).map("".join), min_size=1, max_size=12))
def test_the_plan_never_loses_a_match(texts):
    docs = [(i * 3 + 1, text.encode()) for i, text in enumerate(texts)]
    index, _ = TrigramIndex.build(docs)
    for pattern in PATTERNS:
        assert found(index, pattern) == scanned(docs, pattern), pattern


def test_case_insensitive_search_folds_the_pattern():
    docs = [(1, b"TimeOut here\n"), (2, b"timeout\n"), (3, b"time out\n")]
    index, _ = TrigramIndex.build(docs)
    assert [d for d, _, _ in found(index, "(?i)timeout")] == [1, 2]
    assert index.search_regex("TIMEOUT", case_insensitive=True).doc_ids.tolist() == [1, 2]


def test_bad_patterns_are_refused_in_one_sentence():
    index, _ = TrigramIndex.build([(1, b"x")])
    for bad in ["(", "[z-a]", "a{2,1}", "x" * 5000]:
        with pytest.raises(ValueError) as caught:
            index.search_regex(bad)
        assert "\n" not in str(caught.value)


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
def test_the_same_files_and_lines_as_ripgrep(tmp_path):
    tree = write_tree(tmp_path / "tree", {
        "svc/net.py": "def dial():\n    raise OSError('ECONNREFUSED')\n\n\ndef again():\n    return 'ECONNRESET'\n",
        "svc/log.txt": "ECONNRESET at 10:42\nECONNABORTED at 10:43\nok\n",
        "lib/wire.go": "package wire\n\nfunc Reset() error { return errReset } // ECONNRESET\n",
        "README.md": "Connections are retried.\n",
    })  # fmt: skip
    files = sorted(p for p in tree.rglob("*") if p.is_file())
    docs = [(i, p.read_bytes()) for i, p in enumerate(files)]
    index, _ = TrigramIndex.build(docs)
    for pattern in ["ECONN(REFUSED|RESET)", r"ECONN[A-Z]+ at \d+", "^def ", r"(?i)connections? are"]:
        done = subprocess.run(["rg", "--line-number", "--no-heading", "--with-filename", "--no-config", "-e", pattern,
                               *map(str, files)], capture_output=True, text=True)  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        by_rg = sorted((str(Path(path)), int(line)) for path, line, _ in (row.split(":", 2) for row in done.stdout.splitlines()))
        ours = sorted((str(files[doc]), line) for doc, _, lines in found(index, pattern) for line in lines)
        assert ours == by_rg, pattern


def test_slashes_or_the_regex_prefix_make_a_regular_expression_question():
    assert regex_pattern("/ECONN(REFUSED|RESET)/") == "ECONN(REFUSED|RESET)"
    assert regex_pattern("regex: retry_\\d+") == "retry_\\d+"
    assert regex_pattern("where is /etc/hosts read") is None and regex_pattern("//") is None
    asked = classify("/ECONN(REFUSED|RESET)/")
    assert (asked.intent, asked.rule, asked.subject) == ("exact_match", REGEX_RULE, "ECONN(REFUSED|RESET)")


def test_a_regex_question_is_answered_line_by_line_and_sees_edits(tmp_path, monkeypatch):
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    tree = write_tree(tmp_path / "tree", {
        "net/dial.py": "def dial():\n    raise OSError('ECONNREFUSED')\n\n\ndef reset():\n    return 'ECONNRESET'\n",
        "net/other.py": "ABORTED = 'ECONNABORTED'\n",
    })  # fmt: skip
    index = Index.build(tree)
    answer = index.search("/ECONN(REFUSED|RESET)/")
    assert (answer.intent, answer.rule, answer.fusion_strategy) == ("exact_match", REGEX_RULE, "direct")
    assert [(h.path, h.start_line, h.end_line) for h in answer.results] == [("net/dial.py", 2, 2), ("net/dial.py", 6, 6)]
    with pytest.raises(QueryError, match="invalid regular expression") as caught:
        index.search("/ECONN(/")
    assert "\n" not in str(caught.value)
    # An edit lands in the index's newer layer: the regex sees it, and not the old lines.
    write_file(tree, "net/other.py", "ABORTED = 'ECONNRESET'\n")
    index = Index.build(tree)
    answer = index.search("regex:ECONN(REFUSED|RESET)")
    assert sorted((h.path, h.start_line) for h in answer.results) == [("net/dial.py", 2), ("net/dial.py", 6), ("net/other.py", 1)]
