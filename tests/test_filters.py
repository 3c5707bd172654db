"""Filters written in a question (`lang:`, `path:`, `-path:`, `file:`, `repo:`, `sym:`,
`case:yes`): read out of the question, and every result of a filtered question inside them,
whatever the question is."""

from __future__ import annotations

import fnmatch

import pytest
from fixture_repos import write_tree
from hypothesis import given, settings
from hypothesis import strategies as st

from maguyva import Index
from maguyva.errors import QueryError, RequestError
from maguyva.query.filters import Filters, parse, path_matches
from maguyva.serve.corpus import Corpus

#: An invented estate: the same names in several languages and folders, so that a filter has
#: something to leave out.
TREE = {
    "billing/ledger.py": "def post_entry(entry):\n    \"\"\"Post an entry to the ledger, retrying on ETIMEDOUT.\"\"\"\n    return retry(entry)\n",
    "billing/retry.py": "def retry(entry, attempts=3):\n    \"\"\"Retry a failed posting.\"\"\"\n    return entry\n",
    "billing/ledger_test.py": "from billing.ledger import post_entry\n\ndef test_post_entry():\n    assert post_entry(1) == 1\n",
    "gateway/retry.go": "package gateway\n\n// Retry a failed request after ETIMEDOUT.\nfunc Retry(n int) int {\n\treturn n\n}\n",
    "gateway/retry_test.go": "package gateway\n\nfunc TestRetry(t *T) { Retry(1) }\n",
    "web/src/retry.ts": "export function retry(entry: number): number {\n  // ETIMEDOUT retried here\n  return entry\n}\n",
    "docs/retry.md": "# Retrying\n\nFailed postings are retried on ETIMEDOUT.\n",
}  # fmt: skip

QUESTIONS = ["how are failed postings retried", "retry", '"ETIMEDOUT"', "/ETIMED(OUT|IN)/", "who calls retry",
             "where is post_entry defined", "what breaks if I change retry"]  # fmt: skip
FILTERS = ["lang:python", "lang:go", "-lang:python", "path:billing/", "-path:billing", "file:*_test.*",
           "path:**/*.ts", "lang:text", "-path:gateway -lang:text", "lang:py path:billing/"]  # fmt: skip


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    base = tmp_path_factory.mktemp("filters")
    root = write_tree(base / "estate", TREE)
    return Index.build(root, index_dir=base / "index")


def inside(path: str, language: str | None, filters: Filters) -> bool:
    language = language or "text"
    name = path.rsplit("/", 1)[-1]
    return (
        (not filters.languages or language in filters.languages)
        and language not in filters.not_languages
        and (not filters.paths or any(path_matches(path, p) for p in filters.paths))
        and not any(path_matches(path, p) for p in filters.not_paths)
        and (not filters.files or any(fnmatch.fnmatchcase(name, g) for g in filters.files))
    )


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(QUESTIONS), st.sampled_from(FILTERS), st.sampled_from(["default", "thorough", "quick"]))
def test_every_result_of_a_filtered_question_is_inside_its_filters(index, question, written, preset):
    filters, rest = parse(f"{written} {question}")
    assert rest == question
    languages = {f.path: f.language for f in index.reader.files}
    answer = index.search(f"{written} {question}", top_k=10, preset=preset)
    assert answer.filters == filters.to_dict()
    for hit in answer.results:
        assert inside(hit.path, languages[hit.path], filters), (written, question, hit.path)
    # The question is classified without its filters.
    assert answer.intent == index.search(question, top_k=1, preset=preset).intent


def test_a_filter_keeps_what_it_names(index):
    found = {h.path for h in index.search("lang:go retry", top_k=10).results}
    assert found and found <= {"gateway/retry.go", "gateway/retry_test.go"}
    found = {h.path for h in index.search('-path:billing "ETIMEDOUT"', top_k=10).results}
    assert found == {"gateway/retry.go", "web/src/retry.ts", "docs/retry.md"}
    assert {h.path for h in index.search("retry", paths=["web/"]).results} == {"web/src/retry.ts"}
    assert {h.path for h in index.search("retry", languages=["ts"]).results} == {"web/src/retry.ts"}
    # sym: keeps the chunks defining the name.
    assert [(h.path, h.symbol) for h in index.search("sym:post_entry how are entries posted").results] == [
        ("billing/ledger.py", "post_entry")
    ]


def test_case_yes_keeps_the_terms_to_their_case(index):
    assert {h.path for h in index.search("case:yes Retry", top_k=10, preset="default").results if "text" in h.modalities} <= {
        "gateway/retry.go", "gateway/retry_test.go", "billing/retry.py", "docs/retry.md"}  # fmt: skip
    exact = index.search("case:yes lang:text RETRYING", top_k=5, preset="default")
    assert [h for h in exact.results if "text" in h.modalities] == []


def test_filters_are_read_out_of_the_question():
    filters, rest = parse('lang:go path:internal/ retry -path:test "lang:kept" case:yes')
    assert rest == 'retry "lang:kept"', "a filter inside quotes is part of the question"
    assert filters == Filters(("go",), (), ("internal/",), ("test",), (), None, None, True)
    assert parse("how does path: work")[0] == Filters(), "a key with no value is a word"
    assert parse("repo:api sym:Retry retry")[0].to_dict() == {"repo": "api", "sym": "Retry"}
    for bad, said in [("case:maybe x", "case: takes yes or no"), ("repo:a repo:b x", "repo: is given 2 times"),
                      ("-file:x y", "only lang: and path: can be negated")]:  # fmt: skip
        with pytest.raises(QueryError, match=said):
            parse(bad)


def test_a_question_of_filters_alone_is_refused(index):
    with pytest.raises(QueryError, match="only filters"):
        index.search("lang:go path:gateway/")


def test_paths_are_prefixes_or_globs():
    assert path_matches("internal/net/dial.go", "internal/")
    assert path_matches("a/b/c_test.go", "**/*_test.go") and path_matches("c_test.go", "**/*_test.go")
    assert path_matches("src/x.py", "src/*.py") and not path_matches("src/a/x.py", "src/*.py")
    assert path_matches("src/b.py", "src/[ab].py") and not path_matches("src/c.py", "src/[ab].py")


def test_repo_filter_chooses_a_repository_of_a_corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    first = write_tree(tmp_path / "orders", {"orders/retry.py": "def retry_order():\n    return 'ORDERMARK'\n"})
    second = write_tree(tmp_path / "users", {"users/retry.py": "def retry_user():\n    return 'USERMARK'\n"})
    with Corpus.open([first, second]) as corpus:
        answer = corpus.search("repo:users retry")
        assert set(answer.repos) == {"users"}
        with pytest.raises(QueryError):
            corpus.search("repo:users repo:orders retry")
        with pytest.raises(RequestError, match="asks for repo:users"):
            corpus.search("repo:users retry", repo="orders")


def test_the_agent_search_tool_takes_paths_and_languages(tmp_path, monkeypatch):
    from maguyva.serve.mcp.tools import ToolFailure, call_tool

    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    root = write_tree(tmp_path / "estate", TREE)
    with Corpus.open([root]) as corpus:
        found, _ = call_tool(corpus, "search", {"query": "how are failed postings retried", "languages": ["go"]})
        assert found["results"] and {r["path"] for r in found["results"]} <= {"gateway/retry.go", "gateway/retry_test.go"}
        found, _ = call_tool(corpus, "search", {"query": '"ETIMEDOUT"', "paths": ["web/", "docs/"]})
        assert {r["path"] for r in found["results"]} == {"web/src/retry.ts", "docs/retry.md"}
        with pytest.raises(ToolFailure):
            call_tool(corpus, "search", {"query": "retry", "paths": ["has space/"]})


def test_the_text_modality_counts_only_the_allowed_chunks_and_counts_them_the_same(index):
    import numpy as np

    from maguyva.query.filters import allowed_chunks
    from maguyva.query.retrievers.text import _by_chunk_counts, query_terms

    reader = index.reader
    terms = query_terms("retry failed postings ETIMEDOUT entry")
    every_ids, every_tf, _ = _by_chunk_counts(reader, terms)
    masks = {written: allowed_chunks(reader, parse(f"{written} x")[0]) for written in FILTERS}
    # Asked again, in another order and as equal copies: a layout kept for one mask (a few are
    # kept, so some are made again) serves only that mask.
    asked = [*masks.items(), *reversed(masks.items()), *((w, m.copy()) for w, m in masks.items() if m is not None)]
    for written, allowed in asked:
        assert allowed is not None
        ids, tf, document_frequency = _by_chunk_counts(reader, terms, allowed=allowed)
        kept = allowed[every_ids]
        assert np.array_equal(ids, every_ids[kept]) and np.array_equal(tf, every_tf[kept]), written
        # Every chunk counted is the filter's: the count of each term's chunks is the filter's.
        assert np.array_equal(document_frequency, np.count_nonzero(every_tf[kept], axis=0)), written


def test_what_a_filter_s_mask_gives_is_kept_for_that_mask_alone():
    import numpy as np

    from maguyva.index.reader import PerMask

    made: list[int] = []
    kept = PerMask(2)

    def make(mask):
        made.append(int(mask.sum()))
        return int(mask.sum())

    first, second, third = (np.arange(6) < n for n in (1, 2, 3))
    assert [kept.get(first, make), kept.get(first, make), kept.get(first.copy(), make)] == [1, 1, 1]
    assert made == [1, 1], "the same mask is made once; an equal copy is another mask"
    kept.get(second, make), kept.get(third, make)
    assert kept.get(first, make) == 1 and made == [1, 1, 2, 3, 1], "the oldest masks are let go"


def test_the_structural_modality_ranks_inside_the_filter(tmp_path):
    """A filtered question's definitions are the best inside the filter, even when many better
    named ones outside it would fill every list the tiers keep before the filter."""
    from maguyva.query.classify import classify
    from maguyva.query.filters import allowed_chunks
    from maguyva.query.retrievers.base import Query
    from maguyva.query.retrievers.structural import StructuralRetriever

    tree = {f"core/meter_{i}.py": f"def meter_reading_{i}(x):\n    return x + {i}\n" for i in range(90)}
    tree["plugins/solar.py"] = "def solar_panel_meter_reading_export(x):\n    return x\n"
    tree["plugins/wind.py"] = "def wind_turbine_meter_reading_export(x):\n    return x\n"
    index = Index.build(write_tree(tmp_path / "estate", tree), index_dir=tmp_path / "index")
    reader = index.reader
    text = "meter reading"
    allowed = allowed_chunks(reader, parse(f"path:plugins/ {text}")[0])
    found = StructuralRetriever().retrieve(reader, Query(text, classify(text), allowed=allowed), 10)
    paths = {reader.files[int(reader.chunk_file[c.chunk])].path for c in found}
    assert paths == {"plugins/solar.py", "plugins/wind.py"}
