"""The structural modality on a small Python, TypeScript and Go repository, and the identifier
and query-word helpers it is built on."""

from __future__ import annotations

import re

import textwrap
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maguyva import Index
from maguyva.index import symbols
from maguyva.index.roles import is_test_path
from maguyva.index.symbols import symbol_table
from maguyva.lexicon import (
    camel_case_words,
    identifiers,
    last_part,
    literal_parts,
    looks_like_code,
    normalize_qualified,
    query_words,
    split_identifier,
    stem,
    words,
)
from maguyva.query.classify import Classification, classify
from maguyva.query.retrievers.base import Query
from maguyva.query.retrievers.structural import StructuralRetriever

FILES = {
    "src/session.py": '''\
        """HTTP sessions: connection reuse, cookies and retries."""

        import time

        MAX_RETRIES = 5


        class Session:
            """A persistent HTTP session that keeps cookies between requests."""

            def __init__(self, base_url):
                self.base_url = base_url
                self.cookies = {}
                self.closed = False
                self.history = []
                self.timeout = 30

            def request(self, method, url, body=None):
                """Send an HTTP request and return the response."""
                full = self.base_url + url
                self.history.append((method, full))
                for attempt in range(MAX_RETRIES):
                    if attempt:
                        time.sleep(compute_backoff(attempt))
                    return {"method": method, "url": full, "body": body}
                return None

            def close(self):
                """Close the session and forget its cookies."""
                self.cookies.clear()
                self.closed = True
                self.history = []
                self.timeout = 0
                return None


        def session(base_url="http://localhost"):
            """Return a new Session for the given base URL."""
            created = Session(base_url)
            created.timeout = 10
            created.cookies = {}
            return created


        def parse_config(path):
            """Read the settings file at path and return its key/value pairs."""
            values = {}
            with open(path) as handle:
                for line in handle:
                    key, _, value = line.partition("=")
                    values[key.strip()] = value.strip()
            return values


        def compute_backoff(attempt):
            """Exponential delay, in seconds, before the next retry attempt."""
            delay = 0.5 * (2 ** attempt)
            if delay > 30:
                delay = 30
            jitter = delay * 0.1
            return delay + jitter
        ''',
    "tests/test_session.py": '''\
        from src.session import Session


        def parse_config(path):
            """Test helper: a fixed configuration."""
            values = {"path": path}
            values["debug"] = "1"
            values["mode"] = "test"
            values["retries"] = "0"
            return values


        def test_request_returns_response():
            session = Session("http://example")
            response = session.request("GET", "/")
            assert response["method"] == "GET"
            assert response["url"] == "http://example/"
            assert session.history
        ''',
    "web/auth.ts": """\
        /**
         * Authentication middleware: rejects requests without a valid bearer token.
         */
        export function authMiddleware(req: Request, next: () => void): void {
          const header = req.headers.get("authorization");
          if (!header || !header.startsWith("Bearer ")) {
            throw new Error("unauthorized");
          }
          next();
        }

        /** The profile of a signed-in user. */
        export interface UserProfile {
          id: string;
          name: string;
          email: string;
          roles: string[];
          createdAt: Date;
        }

        export class TokenStore {
          private tokens = new Map<string, string>();

          get(key: string): string | undefined {
            return this.tokens.get(key);
          }

          set(key: string, token: string): void {
            this.tokens.set(key, token);
          }
        }

        /** Parse the JSON configuration text into an object. */
        export function parseConfig(text: string): Record<string, unknown> {
          const parsed = JSON.parse(text);
          if (typeof parsed !== "object") {
            throw new Error("bad config");
          }
          return parsed;
        }

        export function sessionToken(store: TokenStore): string {
          const token = store.get("session");
          if (!token) {
            return "";
          }
          return token;
        }
        """,
    "server/server.go": """\
        package server

        import "net/http"

        // Server serves HTTP requests on one address.
        type Server struct {
        \tAddr    string
        \tHandler http.Handler
        \tstarted bool
        \terrors  []error
        }

        // ListenAndServe starts listening on the configured address.
        func (s *Server) ListenAndServe() error {
        \ts.started = true
        \tif s.Addr == "" {
        \t\ts.Addr = ":8080"
        \t}
        \treturn http.ListenAndServe(s.Addr, s.Handler)
        }

        // NewServer creates a server for the given address.
        func NewServer(addr string) *Server {
        \tserver := &Server{Addr: addr}
        \tserver.errors = nil
        \tserver.started = false
        \treturn server
        }

        // DefaultPort is the port used when none is configured.
        const DefaultPort = 8080
        """,
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("structural")
    repo = root / "repo"
    for path, text in FILES.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MAGUYVA_HOME", str(root / "home"))
        built = Index.build(repo, index_dir=root / "idx")
    yield built
    built.close()


@pytest.fixture(scope="module")
def reader(index):
    return index.reader


def search(reader, text, subject=None, kind=None, limit=10, intent="find_definition"):
    classification = Classification(intent, 0.9, "test", subject, kind)
    return StructuralRetriever().retrieve(reader, Query(text, classification), limit)


def chunk_of(reader, qualified_name, path=None):
    """The chunk that holds the definition of `qualified_name` (in `path`, when given)."""
    rows = [
        (file_id, start, reader.files[file_id].path)
        for file_id, start, qualified in reader.symbol_rows("file_id, start_line, qualified_name")
        if qualified == qualified_name
    ]
    rows = [r for r in rows if path is None or r[2] == path]
    assert len(rows) == 1, (qualified_name, rows)
    return reader.chunk_at(rows[0][0], rows[0][1])


def chunks(results):
    return [c.chunk for c in results]


# -- the fixture: definitions that the tests tell apart must be in chunks of their own ----------


def test_fixture_definitions_have_their_own_chunks(reader):
    names = [
        ("Session", None),
        ("Session.request", None),
        ("session", None),
        ("parse_config", "src/session.py"),
        ("parse_config", "tests/test_session.py"),
        ("compute_backoff", None),
        ("parseConfig", None),
        ("authMiddleware", None),
        ("sessionToken", None),
        ("NewServer", None),
    ]
    found = [chunk_of(reader, name, path) for name, path in names]
    assert len(set(found)) == len(found)


# -- tier 1: exact names --------------------------------------------------------------------------


def test_exact_name_comes_first(reader):
    results = search(reader, "parseConfig", subject="parseConfig")
    assert results[0].chunk == chunk_of(reader, "parseConfig")
    assert results[0].score >= 3.0


def test_qualified_name_comes_first(reader):
    results = search(reader, "Session.request", subject="Session.request")
    assert results[0].chunk == chunk_of(reader, "Session.request")
    assert results[0].score >= 3.0


@pytest.mark.parametrize("written", ["Session::request", "Session#request", "Session->request", "Session.request()"])
def test_other_qualifier_separators_mean_the_same(reader, written):
    assert search(reader, written, subject=written)[0].chunk == chunk_of(reader, "Session.request")


def test_package_qualified_go_name(reader):
    results = search(reader, "server.NewServer", subject="server.NewServer")
    assert results[0].chunk == chunk_of(reader, "NewServer")
    assert results[0].score >= 3.0


def test_module_qualified_python_name(reader):
    results = search(reader, "session.parse_config", subject="session.parse_config")
    assert results[0].chunk == chunk_of(reader, "parse_config", "src/session.py")


def test_go_method_by_receiver(reader):
    results = search(reader, "func (s *Server) ListenAndServe", subject="Server.ListenAndServe", kind="function")
    assert results[0].chunk == chunk_of(reader, "Server.ListenAndServe")


def test_unmatched_qualifier_falls_back_to_the_name_below_exact(reader):
    results = search(reader, "Client.request", subject="Client.request")
    assert results[0].chunk == chunk_of(reader, "Session.request")
    assert 2.0 <= results[0].score < 3.0


# -- tier 2: case-insensitive ---------------------------------------------------------------------


def test_case_insensitive_name(reader):
    results = search(reader, "newserver", subject="newserver")
    assert results[0].chunk == chunk_of(reader, "NewServer")
    assert 2.0 <= results[0].score < 3.0


def test_exact_case_outranks_other_case(reader):
    results = search(reader, "session", subject="session")
    assert chunks(results)[:2] == [chunk_of(reader, "session"), chunk_of(reader, "Session")]
    assert results[0].score >= 3.0 > results[1].score >= 2.0


# -- tier 3: words of names -----------------------------------------------------------------------


def test_words_find_every_spelling_of_the_name(reader):
    results = search(reader, "parse config")
    top = chunks(results)[:3]
    assert chunk_of(reader, "parseConfig") in top
    assert chunk_of(reader, "parse_config", "src/session.py") in top
    assert all(1.0 <= c.score < 2.0 for c in results[:3])


def test_snake_case_subject_finds_camel_case_name(reader):
    results = search(reader, "parse_config", subject="parse_config")
    ranked = chunks(results)
    assert ranked.index(chunk_of(reader, "parseConfig")) < 4
    camel = results[ranked.index(chunk_of(reader, "parseConfig"))]
    assert 1.0 <= camel.score < 2.0


def test_stemmed_words_match(reader):
    # "parsing configs" -> pars, config: the same words as parseConfig and parse_config.
    top = chunks(search(reader, "parsing configs"))[:3]
    assert chunk_of(reader, "parseConfig") in top


# -- kinds ------------------------------------------------------------------------------------------


def test_kind_filter_keeps_classes_only(reader):
    results = search(reader, "class Session", subject="Session", kind="class")
    assert results[0].chunk == chunk_of(reader, "Session")
    assert chunk_of(reader, "session") not in chunks(results)


def test_kind_filter_keeps_functions_only(reader):
    results = search(reader, "def session", subject="session", kind="function")
    assert results[0].chunk == chunk_of(reader, "session")
    # The class's chunk may still come back for a method in it (__init__), but not by name.
    assert chunk_of(reader, "Session") not in [c.chunk for c in results if c.score >= 1.0]


def test_kind_from_the_real_classifier(reader):
    query = Query("class Session", classify("class Session"))
    results = StructuralRetriever().retrieve(reader, query, 10)
    assert results[0].chunk == chunk_of(reader, "Session")
    assert chunk_of(reader, "session") not in chunks(results)


def test_interface_and_go_type_kinds(reader):
    assert search(reader, "interface UserProfile", "UserProfile", "interface")[0].chunk == chunk_of(
        reader, "UserProfile"
    )
    assert search(reader, "type Server struct", "Server", "struct")[0].chunk == chunk_of(reader, "Server")


def test_kind_that_matches_nothing_does_not_empty_the_result(reader):
    results = search(reader, "class parse_config", subject="parse_config", kind="class")
    assert results[0].chunk == chunk_of(reader, "parse_config", "src/session.py")


# -- tier 4: question words -------------------------------------------------------------------------


def test_docstring_words_find_the_symbol(reader):
    results = search(reader, "exponential delay before retrying", intent="understand_code")
    assert results[0].chunk == chunk_of(reader, "compute_backoff")
    assert results[0].score < 1.0


def test_abbreviated_name_words_meet_full_words(reader):
    # "authentication" in the question, "auth" in the name (and the docstring says it too).
    results = search(reader, "how does authentication middleware work", intent="understand_code")
    assert results[0].chunk == chunk_of(reader, "authMiddleware")


def test_question_through_the_real_classifier(reader):
    text = "where is parseConfig defined"
    results = StructuralRetriever().retrieve(reader, Query(text, classify(text)), 10)
    assert results[0].chunk == chunk_of(reader, "parseConfig")


# -- ordering, limits, misses -------------------------------------------------------------------------


def test_test_file_definition_ranks_below_the_real_one(reader):
    results = search(reader, "parse_config", subject="parse_config")
    ranked = chunks(results)
    real = ranked.index(chunk_of(reader, "parse_config", "src/session.py"))
    helper = ranked.index(chunk_of(reader, "parse_config", "tests/test_session.py"))
    assert real == 0 and helper == 1
    assert results[real].score > results[helper].score >= 3.0


def test_limit_is_respected(reader):
    assert len(search(reader, "session", subject="session", limit=1)) == 1
    assert len(search(reader, "session", subject="session", limit=3)) == 3
    assert search(reader, "session", subject="session", limit=0) == []


def test_one_entry_per_chunk(reader):
    for text in ("session", "parse config", "how are http requests sent"):
        found = chunks(search(reader, text, limit=50))
        assert len(found) == len(set(found))


def test_unknown_names_find_nothing(reader):
    assert search(reader, "Qwxyzzy", subject="Qwxyzzy") == []
    assert search(reader, "frobnicate_quux") == []


def test_scores_are_ordered_and_banded_by_tier(reader):
    # "session": the function (exact), the class (other case), sessionToken (a word of the name),
    # then symbols that only mention sessions.
    results = search(reader, "session", subject="session", limit=50)
    scores = [c.score for c in results]
    assert scores == sorted(scores, reverse=True)
    tiers = [3 - int(s) for s in scores]  # 3.x -> tier 0 ... 0.x -> tier 3
    assert tiers == sorted(tiers)
    assert set(tiers) == {0, 1, 2, 3}
    assert results[0].chunk == chunk_of(reader, "session")
    assert results[1].chunk == chunk_of(reader, "Session")
    assert results[2].chunk == chunk_of(reader, "sessionToken")


def test_symbol_table_is_built_once_per_reader(reader):
    assert symbol_table(reader) is symbol_table(reader)


def test_lookups_are_fast(reader):
    retriever = StructuralRetriever()
    query = Query("parseConfig", Classification("find_definition", 0.8, "identifier", "parseConfig"))
    retriever.retrieve(reader, query, 10)
    started = time.perf_counter()
    for _ in range(200):
        retriever.retrieve(reader, query, 10)
    assert (time.perf_counter() - started) / 200 < 0.005


def test_empty_index(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("Nothing to define here.\n")
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    with Index.build(repo, index_dir=tmp_path / "idx") as empty:
        assert search(empty.reader, "anything at all", subject="anything") == []


def test_test_paths():
    tests = [
        "tests/test_x.py", "pkg/x_test.go", "src/__tests__/a.ts", "a/b.spec.ts", "spec/x_spec.rb",
        "src/test/java/FooTest.java", "conftest.py", "lib/foo.test.js",
    ]  # fmt: skip
    assert all(is_test_path(p) for p in tests)
    assert not any(is_test_path(p) for p in ("src/session.py", "latest/contest.py", "src/attest.go", "Testament.md"))


# -- tokens ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("identifier", "expected"),
    [
        ("parseConfigHTTPServer_v2", ["parse", "config", "http", "server", "v2"]),
        ("parse_config", ["parse", "config"]),
        ("ParseConfig", ["parse", "config"]),
        ("kebab-case-name", ["kebab", "case", "name"]),
        ("XMLHttpRequest", ["xml", "http", "request"]),
        ("IOError", ["io", "error"]),
        ("HTTP2Server", ["http2", "server"]),
        ("utf8Decoder", ["utf8", "decoder"]),
        ("x86_64", ["x86", "64"]),
        ("MAX_RETRIES", ["max", "retries"]),
        ("__init__", ["init"]),
        ("getX", ["get", "x"]),
        ("Session.request", ["session", "request"]),
        ("naïveBayes", ["naïve", "bayes"]),
        ("session", ["session"]),
        ("", []),
    ],
)
def test_split_identifier(identifier, expected):
    assert split_identifier(identifier) == expected


def test_literal_parts_keep_digits_apart_where_names_keep_them_with_their_word():
    assert literal_parts("utf8Decoder") == ["utf", "8", "decoder"] and split_identifier("utf8Decoder") == ["utf8", "decoder"]
    assert literal_parts("XMLHttpRequest") == split_identifier("XMLHttpRequest")


def test_last_part_and_camel_case_words():
    assert [last_part(n) for n in ("Ledger::post", "books.Ledger.post", "App\\Books\\Ledger", "row->post", "post")] == [
        "post", "post", "Ledger", "post", "post",
    ]  # fmt: skip
    assert camel_case_words("does LedgerBook call postEntry or Ledger") == ["LedgerBook", "postEntry"]


def test_query_words_drop_stopwords_unless_nothing_is_left():
    assert query_words("how does authentication middleware work") == ["authentication", "middleware", "work"]
    assert query_words("Where is parseConfig defined?") == ["parse", "config", "defined"]
    assert query_words("what is it") == ["what", "is", "it"]
    assert query_words("the session and the Session") == ["session"]


def test_words_keeps_order_and_repeats():
    assert words("get_user getUser") == ["get", "user", "get", "user"]


def test_identifiers_and_code_likeness():
    assert identifiers("who calls Session.request or Foo::bar and pkg.Func()") == [
        "who", "calls", "Session.request", "or", "Foo::bar", "and", "pkg.Func",
    ]  # fmt: skip
    assert [t for t in ("parseConfig", "parse_config", "Session.request", "ECONNREFUSED", "v2") if looks_like_code(t)]
    assert not any(looks_like_code(t) for t in ("session", "Session", "A", "hello"))


def test_normalize_qualified():
    assert normalize_qualified("Foo::bar") == "Foo.bar"
    assert normalize_qualified("Foo#bar") == "Foo.bar"
    assert normalize_qualified("`retry()`") == "retry"
    assert normalize_qualified("std::io::Read") == "std.io.Read"


@pytest.mark.parametrize(
    "forms",
    [
        ("parse", "parses", "parsing", "parsed", "parser"),
        ("authenticate", "authenticated", "authentication", "authenticator"),
        ("config", "configs"),
        ("configure", "configured", "configuration"),
        ("match", "matches"),
        ("entry", "entries"),
        ("class", "classes"),
        ("stop", "stopped"),
        ("user", "users"),
        ("handle", "handler", "handling"),
        ("filter", "filters", "filtering", "filtered"),
        ("refer", "reference", "referred"),
        ("cookie", "cookies"),
        ("retry", "retries", "retried"),
        ("persist", "persistence", "persisted"),
    ],
)
def test_stem_folds_forms_together(forms):
    assert len({stem(f) for f in forms}) == 1, {f: stem(f) for f in forms}


def test_stem_leaves_short_words_and_non_words_alone():
    for word in ("get", "set", "is", "v2", "utf8", "status", "process", "embed", "speed"):
        assert stem(word) == word


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(
        st.one_of(
            st.text(alphabet=st.sampled_from("aZ_$9 .(x\x00-é中\u0301ǅ٣"), max_size=24),
            st.text(max_size=12),
            st.sampled_from(["parseHTTPConfig2", "the loaf's crust", "$scope.bake()", "glaze\x00proof"]),
        ),
        max_size=10,
    ),
    drop=st.sampled_from([frozenset(), symbols.STOPWORDS, frozenset({"bake", "the", "pars"})]),
)
def test_the_words_of_texts_are_those_of_each_token_the_pattern_finds(texts, drop):
    # Each text's words, in order: the stems of every token `[\w$]+` finds in it (Unicode's word
    # characters), whether the core tokenized the text (ASCII) or Python did (any other).
    registry = symbols._Registry(0)
    numbers, counts = registry.numbers(texts, drop)
    per_text = [[w for t in re.findall(r"[\w$]+", text) for w in symbols._token_words(t, drop)] for text in texts]
    assert counts.tolist() == [len(words) for words in per_text]
    assert [registry.words[n] for n in numbers.tolist()] == [w for words in per_text for w in words]


@settings(max_examples=80, deadline=None)
@given(
    texts=st.lists(st.sampled_from(["parseConfig(path)", "retry_count", "", "a\x00b", "the loaf's crust", "$scope.bake"]), max_size=8),
    earlier=st.lists(st.sampled_from(["retry_count", "knead(dough)", "parseConfig"]), max_size=4),
)
def test_the_words_of_texts_are_the_same_worked_out_or_remembered(texts, earlier):
    def words_and_places(vocabulary: symbols._Vocabulary, asked: list[str]) -> list[tuple[str, int]]:
        ids, at = vocabulary.pairs(asked, symbols.STOPWORDS)
        return [(vocabulary.words[i], p) for i, p in zip(ids.tolist(), at.tolist())]

    def cold(asked: list[list[str]]) -> tuple[list[list[tuple[str, int]]], list[str]]:
        saved = dict(symbols._TOKEN_WORDS)
        symbols._TOKEN_WORDS.clear()
        try:
            vocabulary = symbols._Vocabulary()
            return [words_and_places(vocabulary, part) for part in asked], vocabulary.words
        finally:
            symbols._TOKEN_WORDS.clear()
            symbols._TOKEN_WORDS.update(saved)

    cold([["retry_count", "parseConfig(path)"]])  # nothing remembered after
    warm = symbols._Vocabulary()
    before = words_and_places(warm, earlier)  # some texts and words known before
    remembered = words_and_places(warm, texts)
    (_, worked_out), words = cold([earlier, texts])
    # The same words at the same places, and ids in the order the words are first met.
    assert remembered == worked_out
    assert warm.words == words == list(dict.fromkeys(word for word, _ in before + remembered))


def test_a_name_ending_in_a_bang_or_a_question_mark_is_found_as_written(tmp_path):
    """Ruby's `save!` beside `save`: the question names the one it spells; a `?` that is only
    punctuation still finds the name without it."""
    root = tmp_path / "ledger"
    root.mkdir()
    # Bodies long enough that each method is a chunk of its own.
    body = "".join(f"    step_{i} = {i}\n" for i in range(40))
    (root / "entry.rb").write_text(
        f"class Entry\n  def save\n{body}    true\n  end\n\n  def save!\n{body}    save || raise('unsaved')\n  end\n\n"
        f"  def archive\n{body}    false\n  end\nend\n"
    )
    index = Index.build(root, index_dir=tmp_path / "index")
    assert index.search("def save!").results[0].symbol == "Entry.save!"
    assert index.search("def save").results[0].symbol == "Entry.save"
    assert index.search("def archive?").results[0].symbol == "Entry.archive"
