"""End to end: every intent answered on a small multi-language repository, through the API
and the command line."""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import textwrap
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from maguyva import Index
from maguyva.serve.cli import main

FILES = {
    "auth/session.py": '''\
        """Sessions: who the user is between requests."""

        from auth.tokens import sign_token, verify_token


        class SessionStore:
            """Keeps authenticated sessions in memory, keyed by their signed token."""

            def __init__(self):
                self.sessions = {}

            def login(self, user, password):
                """Check the password and open a session; returns the session token."""
                if not check_password(user, password):
                    raise PermissionError("invalid credentials")
                token = sign_token(user.id)
                self.sessions[token] = user
                return token

            def current_user(self, token):
                if not verify_token(token):
                    return None
                return self.sessions.get(token)


        def check_password(user, password):
            """Compare a password with the user's stored hash in constant time."""
            return constant_time_equals(user.password_hash, hash_password(password))


        def hash_password(password):
            return "h:" + password


        def constant_time_equals(a, b):
            return len(a) == len(b) and all(x == y for x, y in zip(a, b))
        ''',
    "auth/tokens.py": '''\
        import hmac

        SECRET = b"change-me"


        def sign_token(user_id):
            """Sign a user id so that it cannot be forged."""
            return f"{user_id}." + hmac.new(SECRET, str(user_id).encode(), "sha256").hexdigest()


        def verify_token(token):
            user_id, _, signature = token.partition(".")
            return hmac.compare_digest(sign_token(user_id), token)
        ''',
    "net/client.ts": '''\
        import { parseConfig } from "./config";

        export class HttpClient {
          constructor(private baseUrl: string) {}

          async fetchJson(path: string): Promise<unknown> {
            const response = await fetch(this.baseUrl + path);
            if (!response.ok) {
              throw new Error("ECONNREFUSED: could not reach " + this.baseUrl);
            }
            return response.json();
          }
        }

        export function createClient(env: Record<string, string>): HttpClient {
          const config = parseConfig(env);
          return new HttpClient(config.baseUrl);
        }
        ''',
    "net/config.ts": '''\
        export interface ClientConfig {
          baseUrl: string;
          retries: number;
        }

        export function parseConfig(env: Record<string, string>): ClientConfig {
          return { baseUrl: env.BASE_URL ?? "http://localhost", retries: Number(env.RETRIES ?? 3) };
        }
        ''',
    "jobs/retry.go": '''\
        package jobs

        import "time"

        // Retry calls fn until it succeeds or attempts run out, doubling the wait each time.
        func Retry(attempts int, fn func() error) error {
        	var err error
        	wait := time.Millisecond
        	for i := 0; i < attempts; i++ {
        		if err = fn(); err == nil {
        			return nil
        		}
        		time.Sleep(wait)
        		wait *= 2
        	}
        	return err
        }

        // SyncAll pushes every pending record, retrying each push.
        func SyncAll(records []string) error {
        	for _, r := range records {
        		if err := Retry(5, func() error { return push(r) }); err != nil {
        			return err
        		}
        	}
        	return nil
        }

        func push(record string) error { return nil }
        ''',
    "vendor/lib/session.py": '''\
        class SessionStore:
            """A vendored copy that should rank below the project's own."""
            def login(self, user, password):
                return None
        ''',
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("search") / "repo"
    for rel, content in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content))
    return root


@pytest.fixture(scope="module")
def index(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Index:
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MAGUYVA_HOME", str(home))
        return Index.build(repo)


def top(index: Index, query: str, n: int = 1, **options) -> list[tuple[str, str | None]]:
    return [(h.path, h.symbol) for h in index.search(query, **options).results[:n]]


@pytest.mark.parametrize(
    "query, path, symbol_part",
    [
        ("def check_password", "auth/session.py", "check_password"),
        ("class SessionStore", "auth/session.py", "SessionStore"),
        ("where is parseConfig defined", "net/config.ts", "parseConfig"),
        ("sign_token", "auth/tokens.py", "sign_token"),
        ("func Retry", "jobs/retry.go", "Retry"),
    ],
)
def test_find_definition_ranks_the_definition_first(index, query, path, symbol_part):
    response = index.search(query)
    assert response.intent == "find_definition"
    first = response.results[0]
    # The chunk holding the definition (small neighbours share a chunk, so its label may differ).
    assert first.path == path and symbol_part in first.snippet


def test_direct_route_for_a_confident_ordinary_query(index):
    response = index.search("def check_password")
    assert (response.fusion_strategy, response.modalities_run) == ("direct", ("structural",))
    assert response.confidence == 0.95


def test_find_references_lists_callers(index):
    response = index.search("who calls sign_token", preset="thorough")
    assert response.intent == "find_references"
    found = {(h.path, h.symbol) for h in response.results[:3]}
    assert any(path == "auth/session.py" for path, _ in found)
    assert any(path == "auth/tokens.py" for path, _ in found)  # verify_token calls it too


def test_impact_analysis_reaches_transitive_dependants(index):
    response = index.search("what breaks if I change Retry")
    assert response.intent == "impact_analysis"
    assert response.results[0].path == "jobs/retry.go"
    assert "SyncAll" in (response.results[0].symbol or "") or any(
        "SyncAll" in (h.symbol or "") for h in response.results[:3]
    )


def test_exact_match_finds_the_literal_without_the_embedder(index, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the embedder must not be called for exact_match")

    searcher_index = Index(index.reader)
    monkeypatch.setattr("maguyva.query.search.make_embedder", refuse)
    response = searcher_index.search('"ECONNREFUSED"')
    assert response.intent == "exact_match"
    assert response.results[0].path == "net/client.ts"
    assert "semantic" not in response.modalities_run


def test_understand_code_puts_the_right_code_in_the_top_three(index):
    response = index.search("how does password checking work")
    assert response.intent == "understand_code"
    assert response.fusion_strategy == "rrf"
    assert any(h.path == "auth/session.py" for h in response.results[:3])


def test_vendored_copy_ranks_below_the_project_code(index):
    paths = [h.path for h in index.search("SessionStore login password").results]
    assert paths.index("auth/session.py") < paths.index("vendor/lib/session.py")


@pytest.mark.parametrize("ranking", ["hand", "learned"])
def test_results_explain_themselves_and_are_one_per_file(index, ranking):
    response = index.search("parse config base url", top_k=3, ranking=ranking)
    assert len(response.results) == 3
    paths = [h.path for h in response.results]
    assert len(paths) == len(set(paths))
    # Asked for more results than there are files to show: the best chunk of every file first,
    # then further chunks of the same files, never fewer results than the candidates allow.
    many = index.search("parse config base url", top_k=40, ranking=ranking)
    paths = [h.path for h in many.results]
    files = len(set(paths))
    assert len(paths) > files and len(set(paths[:files])) == files
    assert len({(h.path, h.start_line) for h in many.results}) == len(paths)
    for hit in response.results + many.results:
        assert set(hit.modalities) <= set(response.modalities_run)
        if ranking == "learned":
            # Each feature's weight times its value: they add up to the score.
            assert not hit.adjustments and hit.score == pytest.approx(sum(hit.features.values()))
            continue
        assert hit.modalities or hit.adjustments.get("definition")
        bonus = sum(hit.adjustments.get(k, 0.0) for k in ("definition", "path", "file_name", "coherence", "agreement"))
        factor = math.prod(v for k, v in hit.adjustments.items() if k.endswith("_factor"))
        fused = sum(p.contribution for p in hit.modalities.values())
        assert hit.score == pytest.approx((fused + bonus) * factor)
        assert 1 <= hit.start_line <= hit.end_line and hit.snippet


def test_the_graph_walk_starts_from_code_shaped_names_only(index):
    # "login" and "secret" are names of this repository's symbols (`login`, `SECRET`) as well as
    # plain words: a sentence using them does not mean those symbols. `check_password` does.
    plain = index.search("how does a login keep the secret", preset="thorough")
    assert "graph" in plain.modalities_run
    assert not any("graph" in hit.modalities for hit in plain.results)
    named = index.search("what surrounds check_password in the login flow", preset="thorough")
    walked = [hit for hit in named.results if "graph" in hit.modalities]
    assert walked and any(hit.symbol and "check_password" in hit.symbol for hit in walked)


def test_presets(index):
    quick = index.search("how are tokens signed", preset="quick")
    assert quick.modalities_run == ("semantic",) and quick.fusion_strategy == "direct"
    thorough = index.search("how are tokens signed", preset="thorough")
    assert "graph" in thorough.modalities_run
    with pytest.raises(ValueError, match="unknown preset"):
        index.search("x", preset="fast")
    with pytest.raises(ValueError, match="empty"):
        index.search("  ")


def test_search_is_safe_from_several_threads(index):
    queries = ["def check_password", '"ECONNREFUSED"', "who calls Retry", "how does login work"] * 5
    expected = [[h.path for h in index.search(q).results] for q in queries[:4]]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda q: [h.path for h in index.search(q).results], queries))
    assert results == expected * 5


def test_cli_json_and_explain(repo, index, capsys):
    assert main(["search", "where is parseConfig defined", str(repo), "--index-dir", str(index.index_dir), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"query", "intent", "confidence", "fusion_strategy", "preset", "results"}
    assert out["intent"] == "find_definition" and out["results"][0]["path"] == "net/config.ts"
    assert set(out["results"][0]) == {"path", "start_line", "end_line", "score", "symbol", "modalities", "snippet"}
    assert main(["search", "who calls sign_token", str(repo), "--index-dir", str(index.index_dir), "--explain"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("intent find_references (0.90")
    assert "route " in text and "score " in text
    with pytest.raises(SystemExit) as exit_info:
        main(["search", "x", str(repo), "--preset", "fast"])
    assert exit_info.value.code == 2


def test_exact_match_searches_the_literal_alone(index):
    response = index.search("ECONNREFUSED")
    assert response.intent == "exact_match" and response.subject == "ECONNREFUSED"
    assert [h.path for h in response.results] == ["net/client.ts"]


def test_a_word_of_one_character_is_no_text_term():
    # The "s" of a possessive, a one-letter name, a lone digit: as substrings they are in most
    # lines of code. Quoted, a phrase is still looked for as written; alone, a letter still is.
    from maguyva.query.retrievers.text import query_terms

    assert [t.text for t in query_terms("how the ledger's X entries reach v 2 of the vault")] == [
        "ledger", "entries", "reach", "vault",
    ]
    assert [t.text for t in query_terms('where is "q" set in the ledger')] == ["q", "set", "ledger"]
    assert [t.text for t in query_terms("q")] == ["q"]


def test_find_similar_for_a_pasted_snippet(index):
    snippet = (
        "for i := 0; i < attempts; i++ {\n"
        "    if err = fn(); err == nil {\n"
        "        return nil\n"
        "    }\n"
        "    time.Sleep(wait)\n"
        "}\n"
    )
    response = index.search(snippet)
    assert response.intent == "find_similar" and response.fusion_strategy == "rrf"
    assert response.results[0].path == "jobs/retry.go"


@pytest.mark.parametrize(
    "query, intent, path",
    [
        ("class SessionStore", "find_definition", "auth/session.py"),
        ("who calls sign_token", "find_references", "auth/session.py"),
        ("what depends on parseConfig", "impact_analysis", "net/client.ts"),
        ('"invalid credentials"', "exact_match", "auth/session.py"),
        ("how is the session token signed", "understand_code", "auth/tokens.py"),
    ],
)
def test_cli_answers_each_intent(repo, index, capsys, query, intent, path):
    assert main(["search", query, str(repo), "--index-dir", str(index.index_dir), "--json", "--preset", "thorough"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["intent"] == intent
    assert path in [r["path"] for r in out["results"][:3]]


def test_parallel_and_sequential_retrieval_agree(index, monkeypatch):
    # Small indexes run their modalities one after the other; large ones in parallel.

    queries = ["how does login work", "who calls check_password", '"ECONNREFUSED"', "verify tokens"]
    sequential = [[(h.path, h.start_line, h.score) for h in index.search(q, preset="thorough").results] for q in queries]
    index.searcher.tuning = index.searcher.tuning.but(PARALLEL_MIN_CHUNKS=0)
    parallel = [[(h.path, h.start_line, h.score) for h in index.search(q, preset="thorough").results] for q in queries]
    assert parallel == sequential and all(sequential)


def test_the_text_modality_started_early_answers_as_it_does_at_once(index):
    # A question's text modality counts on the core's threads while the others run; finished,
    # its answer is the one it gives asked alone: quoted phrases found with their case only,
    # in any case, or nowhere, filters and exact strings included.
    from maguyva.query import route
    from maguyva.query.classify import classify
    from maguyva.query.retrievers.text import TextRetriever

    text = TextRetriever()
    questions = ["how does login work", '"ECONNREFUSED" handling', '"econnrefused" handling', '"Nowhere At All" retry',
                 "verify tokens", "check_password", "where is session stored"]
    files = index.reader.chunk_file
    # Filters: the chunks of every other file, of all files but the first (each chunk's place
    # among those kept differs from its id), of one file alone.
    masks = [None, (files % 2) == 1, files != files[0], files == files[len(files) // 2]]
    for question in questions:
        for allowed in masks:
            request = dataclasses.replace(route.request(question, classify(question)), allowed=allowed)
            for limit in (5, 40):
                started = text.start(index.reader, request, limit)()
                assert started == text.retrieve(index.reader, request, limit), question
                assert allowed is None or all(allowed[c.chunk] for c in started), question
    # Answering one search started early, then another question, leaves nothing behind.
    unanswered = text.start(index.reader, route.request("login", classify("login")), 10)
    del unanswered


def test_term_counts_from_the_core_are_those_of_every_matching_line(index):
    # The text retriever counts a term's lines per chunk in the core; the same counts come from
    # every matching line mapped to its chunk in numpy (the path kept for answers with spans).
    import numpy as np

    from maguyva.query.retrievers import text
    from maguyva.query.retrievers.text import Term

    reader = index.reader
    words = ["retry", "session", "def", "return", "config", "ECONNREFUSED", "nowhere", "a", "(", "self."]
    for case_sensitive in (False, True):
        terms = [Term(w, case_sensitive, 1.0) for w in words]
        ids, tf, document_frequency = text._by_chunk_counts(reader, terms)
        _, _, line_ids, line_tf = text._by_lines(reader, terms)
        np.testing.assert_array_equal(ids, line_ids)
        np.testing.assert_array_equal(tf, line_tf)
        np.testing.assert_array_equal(document_frequency, np.count_nonzero(line_tf, axis=0))
        assert tf.sum() > 0


@pytest.mark.parametrize("capacity", [0, 300, 32_000_000])
def test_kept_term_counts_answer_as_counting_again(index, capacity, monkeypatch):
    # A large index keeps each term's count for its next questions, up to a capacity in bytes:
    # whether a term is kept, let go, or never fits, the counts a question gets are the core's,
    # started early or asked at once, with terms that recur across questions and within one.
    from maguyva import config
    from maguyva.query.retrievers import text
    from maguyva.query.retrievers.text import Term

    monkeypatch.setattr(text, "_kept", text.KeptCounts())  # this test's counts alone
    reader = index.reader
    asked = [["retry", "session"], ["session", "def", "retry"], ["ECONNREFUSED", "nowhere"], ["def"],
             ["retry", "return", "self."], ["Session", "session"], ["session", "retry"]]
    files = reader.chunk_file
    # Each filter's counts are its own: every other file, a file's chunks but its first, and
    # the same filter as another array.
    masks = [None, (files % 2) == 1, np.arange(len(files)) != reader.file_chunk_offsets[1], (files % 2) == 1]
    tuning = config.DEFAULT.but(TEXT_COUNTS_KEPT_MIN_CHUNKS=0, TEXT_COUNTS_KEPT_BYTES=capacity)
    with config.using(tuning):
        for round_ in range(2):
            for words in asked:
                terms = [Term(w, w[0].isupper(), 1.0) for w in words]
                texts, folds = [t.text for t in terms], [not t.case_sensitive for t in terms]
                for allowed in masks:
                    start_key, file_offsets, kept_ids, _ = text._layout(reader, allowed)
                    expected = text._numbered(
                        reader.text.chunk_line_counts(texts, folds, start_key, file_offsets), kept_ids
                    )
                    for start in (False, True):
                        found = text._counted(reader, terms, allowed, start=start)()
                        for column, want in zip(found, expected):
                            np.testing.assert_array_equal(column, want)
                            assert column.dtype == want.dtype
        kept, owner = text._kept, text._counts_owner(reader)
        assert kept._bytes <= capacity
        digests = {text._layout(reader, allowed)[3] for allowed in masks}
        assert len(digests) == 3
        distinct = {(owner, w, w[0].isupper(), digest) for words in asked for w in words for digest in digests}
        if capacity == 0:  # only what takes no room: terms found nowhere
            assert all(not len(counts) for _, _, counts in kept._kept.values())
        if capacity > 1_000_000:
            assert {key for key in kept._kept if key[0] is owner} == distinct


def test_kept_counts_let_go_of_the_least_recently_asked_first():
    from maguyva.query.retrievers.text import KeptCounts

    def entry(n: int) -> tuple[np.ndarray, np.ndarray]:
        return np.arange(0, 3 * n, 3, dtype=np.uint32), np.ones(n, dtype=np.uint32)

    kept, capacity = KeptCounts(), 3 * 200  # packed: 2 bytes a chunk here, so 300 chunks
    one, other = object(), object()  # two indexes: one capacity for both
    for index, name in ((one, "a"), (other, "b"), (one, "c")):
        kept.keep((index, name, False, None), *entry(100), capacity)
    assert kept.get((one, "a", False, None)) is not None  # now the most recently asked
    kept.keep((other, "d", False, None), *entry(100), capacity)  # past the capacity: "b" goes, not "a"
    assert kept.get((other, "b", False, None)) is None
    assert all(kept.get(key) is not None for key in ((one, "a", False, None), (one, "c", False, None), (other, "d", False, None)))
    assert kept.get((other, "a", False, None)) is None  # another index's count of the same term
    kept.keep((one, "huge", False, None), *entry(400), capacity)  # larger than the capacity: not kept
    assert kept.get((one, "huge", False, None)) is None and kept.get((one, "c", False, None)) is not None
    chunks, counts = kept.get((other, "d", False, None))
    np.testing.assert_array_equal(chunks, entry(100)[0])
    np.testing.assert_array_equal(counts, entry(100)[1])
    assert kept._bytes <= capacity


@given(
    steps=st.lists(st.integers(min_value=1, max_value=2**24), max_size=60),
    first=st.integers(min_value=0, max_value=2**24),
    counts=st.data(),
)
def test_packed_counts_unpack_to_the_same_arrays(steps, first, counts):
    from maguyva.query.retrievers.text import _packed, _unpacked

    chunks = np.asarray(np.cumsum([first, *steps]) if steps or first else [], dtype=np.uint32)
    values = np.asarray(
        counts.draw(st.lists(st.integers(1, 2**32 - 1), min_size=len(chunks), max_size=len(chunks))), dtype=np.uint32
    )
    packed = _packed(chunks, values)
    again = _unpacked(*packed)
    np.testing.assert_array_equal(again[0], chunks)
    np.testing.assert_array_equal(again[1], values)
    assert again[0].dtype == again[1].dtype == np.uint32
    if len(chunks) > 1 and max(steps) < 256 and values.max() < 256:
        assert packed[1].itemsize == packed[2].itemsize == 1


@given(
    scores=st.lists(st.sampled_from([0.5, 1.0, 1.25, 2.0, 3.5]), max_size=300),
    limit=st.integers(min_value=1, max_value=60),
)
def test_the_best_scores_come_in_the_order_a_full_sort_gives(scores, limit):
    # Only the scores at or above the limit-th are sorted; ties (drawn from five values, so
    # there are many) still go to the lower chunk id, as sorting every score would have them.
    import numpy as np

    from maguyva.query.retrievers.text import best_first

    rng = np.random.default_rng(len(scores) * 61 + limit)
    ids = rng.permutation(len(scores) * 3)[: len(scores)].astype(np.int64)
    values = np.asarray(scores, dtype=np.float64)
    expected = np.lexsort((ids, -values))[:limit]
    np.testing.assert_array_equal(best_first(ids, values, limit), expected)


def test_a_quoted_name_is_found_where_it_is_defined_first(tmp_path: Path) -> None:
    # Used many times over in three files, defined in one (and as `$glaze_cone` in a script):
    # the definitions go first, found by name without the symbol table being made.
    users = "from kiln.cones import glaze_cone\n\n" + "".join(
        f"def fire_{i}(pot):\n    return glaze_cone(pot) + glaze_cone(pot.lid) + glaze_cone(pot.foot)\n\n" for i in range(6)
    )
    tree = {
        "kiln/a_batch.py": users,
        "kiln/b_batch.py": users,
        "kiln/c_batch.py": users,
        "kiln/cones.py": "def glaze_cone(pot):\n    return pot.temperature // 20\n",
        "web/cone.js": "function $glaze_cone(pot) {\n  return pot.temperature / 20;\n}\n",
    }
    for path, text in tree.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    with Index.build(tmp_path, index_dir=tmp_path / ".index") as built:
        response = built.search('"glaze_cone"')
        assert response.intent == "exact_match"
        assert {h.path for h in response.results[:2]} == {"kiln/cones.py", "web/cone.js"}
        rest = {h.path for h in response.results[2:]}
        assert rest and rest <= {"kiln/a_batch.py", "kiln/b_batch.py", "kiln/c_batch.py"}


def test_a_closed_index_is_freed_at_once(repo: Path, tmp_path: Path) -> None:
    # Nothing of a searcher refers back to it, so its reader and every table derived from it go
    # when the index is dropped, not at some later pass of the cyclic collector (which a served
    # index, edited often, would meet holding several generations' tables).
    built = Index.build(repo, index_dir=tmp_path / "index")
    for question in ("how does password checking work", "who calls hash_password", '"ECONNREFUSED"'):
        built.search(question)
    reader = weakref.ref(built.reader)
    collecting = gc.isenabled()
    gc.disable()
    try:
        built.close()
        del built
        assert reader() is None
    finally:
        if collecting:
            gc.enable()
