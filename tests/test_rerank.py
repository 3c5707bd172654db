"""The post-fusion signals: path agreement, definition over mention, secondary code."""

from __future__ import annotations

import json
import math
import textwrap
from collections import Counter
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from maguyva import Index, config
from maguyva.index.graph import EDGE_KINDS
from maguyva.index.reader import FileLayout
from maguyva.index.roles import is_secondary_path
from maguyva.lexicon import last_part
from maguyva.query.classify import classify
from maguyva.query.rank.signals import (
    Adjustment,
    FusedParts,
    PathVocabulary,
    Signals,
    definition_bonuses,
    headers_beside_sources,
    import_sources,
    initialisms,
    matched_share,
    name_words,
    named_symbols,
    older_versions,
    parts_beside_wholes,
    path_words,
    question_words,
    rerank,
    spells_name,
    telling_words,
    windows_ports,
)


def test_path_words_split_names_and_the_folder():
    assert path_words("src/http_client/RowPrinter.php") == {
        "rowprinter", "row", "printer", "http_client", "http", "client"
    }
    assert path_words("trie.go") == {"trie"}
    # A name that starts with a dot is its own stem; an empty folder adds nothing; a folder's
    # words come with each of its files.
    assert path_words("lib/.eslintrc.js") == {".eslintrc.js", "eslintrc", "js", "lib"}
    assert path_words("a//b.py") == {"b"}
    for name in ("parseJSON_v2.go", "server.go"):
        assert {"httpserver", "http", "server"} <= path_words(f"src/HTTPServer/{name}")
    assert path_words("src/HTTPServer/parseJSON_v2.go") == {
        "parsejson_v2", "parse", "json", "v2", "httpserver", "http", "server"
    }


def test_matched_share_counts_words_and_prefixes():
    words = question_words("how does the prefix trie store routes")
    assert words == {"prefix", "trie", "store", "routes"}
    assert matched_share(words, path_words("trie.go")) == pytest.approx(0.25)
    # "route" is a prefix of "routes": a file named after the singular still agrees.
    assert matched_share(words, path_words("router/route.go")) == pytest.approx(0.25)
    assert matched_share(frozenset({"ab"}), frozenset({"abc"})) == 0.0  # too short to be a prefix
    assert matched_share(frozenset(), path_words("x.py")) == 0.0


@pytest.mark.parametrize(
    "word, path, agrees",
    [
        ("dependency", "shop/dependencies/helpers.py", True),
        ("utility", "shop/utils.go", True),
        ("routing", "router.go", True),
        ("serialization", "serializer.py", True),
        ("validation", "validators.py", True),
        ("validation", "value.go", False),
        ("formatting", "pool.go", False),
    ],
)
def test_words_of_one_stem_agree(word, path, agrees):
    assert (matched_share(frozenset({word}), path_words(path)) == 1.0) is agrees


def test_a_name_agrees_with_paths_by_its_parts():
    # As a sentence word, "intoreply" would match into_make_handler.rs by the prefix "into".
    sentence = question_words("IntoReply")
    assert matched_share(sentence, path_words("routing/into_make_handler.rs")) == 1.0
    parts = question_words("IntoReply", name_parts=True)
    assert parts == {"reply"}  # "into" is a stopword
    assert matched_share(parts, path_words("routing/into_make_handler.rs")) == 0.0
    assert matched_share(parts, path_words("reply/mod.rs")) == 1.0
    assert question_words("parse_config", name_parts=True) == {"parse", "config"}


class _Reader:
    """What the path vocabulary reads of an index: its files' paths (and their layout, which it
    is kept by)."""

    def __init__(self, *paths: str):
        self.files = [SimpleNamespace(path=p) for p in paths]
        self.layout = FileLayout(tuple((p, None, 0, None) for p in paths))


@pytest.mark.parametrize(
    "question, path, spelled",
    [
        ("YAML node hierarchy and tree model", "docs_tool/YamlNode.java", True),
        ("how the floating window for the UI is created", "ui/panes/float.lua", True),
        ("Form decoder for URL-encoded bodies", "web/form.rs", True),
        ("Form decoder for URL-encoded bodies", "web/decode/raw_form.rs", False),  # "raw" is not asked
        ("streaming YAML reader and token parsing", "docs_tool/YamlParser.java", True),  # parsing ~ parser
        ("YAML node hierarchy and tree model", "docs_tool/Docs.java", False),
        ("YAML node hierarchy and tree model", "docs_tool/yaml/Writer.java", False),  # folders do not count
    ],
)
def test_a_question_spells_a_file_name_when_every_word_of_it_agrees(question, path, spelled):
    assert spells_name(question_words(question), path) is spelled


def test_initials_of_adjacent_words_agree_with_paths_and_names():
    query = "file system operations like read and write"
    initials = initialisms(query)
    assert initials["fs"] == {"file", "system"} and initials["fso"] == {"file", "system", "operations"}
    assert "rw" not in initials  # "and" stands between them
    words = question_words(query)
    assert matched_share(words, path_words("os/posix/fs.c"), initials) == pytest.approx(2 / len(words))
    assert matched_share(words, path_words("os/posix/fs.c")) == 0.0
    assert spells_name(words, "os/posix/fs.c", initials) and not spells_name(words, "os/posix/fs.c")
    # Initials count only for the question's own words, and every other word must agree.
    assert not spells_name(frozenset({"operations"}), "os/fs.c", initials)
    assert not spells_name(words, "os/fs-event.c", initials)


def test_name_words_leave_out_extensions_and_single_letters():
    assert name_words("src/YamlNode.java") == {"yaml", "node"}
    assert name_words("x_io.tar.gz") == {"io"}
    assert spells_name(frozenset(), "web/form.rs") is False


def test_words_on_most_paths_tell_nothing():
    reader = _Reader(
        "Ledger/EntryMapper.cs", "Ledger/EntryMapper.Async.cs", "Ledger/QueryParameters.cs",
        "Ledger/CommandDefinition.cs", "Ledger/AmountString.cs", "Ledger/TypeExtensions.cs",
    )
    vocabulary = PathVocabulary(reader)
    assert vocabulary.share("ledger") == 1.0  # the folder of every file
    assert vocabulary.share("mapper") == pytest.approx(2 / 6)  # a part of two file names
    assert vocabulary.share("parameters") == pytest.approx(1 / 6)
    assert vocabulary.share("params") == 0.0  # neither a prefix of a path word nor has one
    assert vocabulary.share("definitions") == pytest.approx(1 / 6)  # "definition" is its prefix
    words = question_words("how Ledger caches typed parameters")
    assert telling_words(reader, words) == {"caches", "typed", "parameters"}


def test_a_file_counts_once_however_many_of_its_words_agree():
    reader = _Reader("TaskQueue.hs", "Core.hs", "Config.hs", "Layout.hs", "Main.hs", "Operations.hs", "Hooks.hs")
    # "taskqueue", "task" and "queue" are all words of one file: 1/7, not 3/7.
    assert PathVocabulary(reader).share("taskqueue") == pytest.approx(1 / 7)
    assert telling_words(reader, frozenset({"taskqueue"})) == {"taskqueue"}


@pytest.mark.parametrize(
    "path, language, secondary",
    [
        ("tests/test_api.py", "python", True),
        ("pkg/api_test.go", "go", True),
        ("src/__tests__/api.ts", "typescript", True),
        ("src/api.test.ts", "typescript", True),
        ("src/main/java/FooTest.java", "java", True),
        ("examples/basic.py", "python", True),
        ("docs/guide.md", None, True),
        ("src/compat/shim.py", "python", True),
        # A test framework's own code is what questions about it are about.
        ("lib/checkkit/test_functions.bash", "bash", False),
        ("src/api.py", "python", False),
        ("src/testing_utils.rs", "rust", False),
    ],
)
def test_secondary_paths(path, language, secondary):
    assert is_secondary_path(path, language) is secondary


def test_named_symbols_by_rule():
    assert named_symbols("Session", classify("Session"))[0] == ["Session"]
    assert named_symbols("where is auth.Session defined", classify("where is auth.Session defined"))[0] == ["Session"]
    names, _ = named_symbols("how does SessionStore keep users", classify("how does SessionStore keep users"))
    assert names == ["SessionStore"]


FILES = {
    "store/session_store.py": '''\
        class SessionStore:
            """Keeps who is logged in between requests."""

            def get(self, key):
                return self.items.get(key)
        ''',
    "web/handlers.py": '''\
        from store.session_store import SessionStore

        def login(request):
            sessions = SessionStore()
            sessions.put(request.user)
            return SessionStore().get(request.user)
        ''',
    "tests/test_handlers.py": '''\
        from web.handlers import login
        from store.session_store import SessionStore

        def test_login_keeps_session():
            store = SessionStore()
            login(FakeRequest(store))
            assert store.get("user") is not None
        ''',
    "ratelimit/limiter.py": '''\
        def allow(bucket, now):
            """Token bucket: refill by elapsed time, spend one token per request."""
            bucket.tokens = min(bucket.capacity, bucket.tokens + (now - bucket.last) * bucket.rate)
            bucket.last = now
            return bucket.tokens >= 1
        ''',
}


def built_index(tmp_path_factory: pytest.TempPathFactory, name: str, files: dict[str, str]):
    """An index of a repository holding `files` (dedented)."""
    root = tmp_path_factory.mktemp(f"{name}-repo")
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    built = Index.build(root, index_dir=tmp_path_factory.mktemp(f"{name}-index"))
    yield built
    built.close()


def index_fixture(name: str, files: dict[str, str]):
    """A module-scoped fixture `name`: the index of a repository holding `files`."""

    @pytest.fixture(scope="module", name=name)
    def fixture(tmp_path_factory: pytest.TempPathFactory):
        yield from built_index(tmp_path_factory, name, files)

    return fixture


index = index_fixture("index", FILES)


def chunk_of(index: Index, path: str) -> int:
    reader = index.reader
    file_id = next(f.id for f in reader.files if f.path == path)
    return int(reader.file_chunk_offsets[file_id])


def test_definition_outranks_mentions(index: Index):
    results = index.search("SessionStore", ranking="hand").results
    assert results[0].path == "store/session_store.py"
    assert results[0].adjustments["definition"] > 0
    # Without the signals, fusion alone may put a chunk that mentions it more often first; with
    # them the definition is first whatever fusion did.
    scored = {c: 1.0 for c in (chunk_of(index, "web/handlers.py"), chunk_of(index, "tests/test_handlers.py"))}
    adjusted = rerank(index.reader, "SessionStore", classify("SessionStore"), scored)
    definition = chunk_of(index, "store/session_store.py")
    assert definition in adjusted, "a definition fusion did not bring is added"
    assert adjusted[definition].apply(0.0) > max(a.apply(scored[c]) for c, a in adjusted.items() if c != definition)


def test_tests_are_demoted_and_signals_switch_off(index: Index):
    reader = index.reader
    test_chunk = chunk_of(index, "tests/test_handlers.py")
    query = "what keeps a login session"
    adjusted = rerank(reader, query, classify(query), {test_chunk: 1.0})
    assert adjusted[test_chunk].factor == config.DEFAULT.SECONDARY_CODE_FACTOR
    off = rerank(reader, query, classify(query), {test_chunk: 1.0}, Signals(secondary=False))
    assert off[test_chunk].factor == 1.0


def test_path_agreement_lifts_the_file_named_like_the_question(index: Index):
    reader = index.reader
    query = "how does the rate limiter refill tokens"
    limiter, handlers = chunk_of(index, "ratelimit/limiter.py"), chunk_of(index, "web/handlers.py")
    adjusted = rerank(reader, query, classify(query), {limiter: 1.0, handlers: 1.0})
    assert adjusted[limiter].path > 0 and adjusted[handlers].path == 0
    # The question spells all of "limiter.py", and none of "handlers.py".
    assert adjusted[limiter].file_name == config.DEFAULT.FILE_NAME_BONUS and adjusted[handlers].file_name == 0
    off = rerank(reader, query, classify(query), {limiter: 1.0}, Signals(paths=False))
    assert off[limiter].path == off[limiter].file_name == 0
    results = index.search(query, ranking="hand").results
    assert results[0].path == "ratelimit/limiter.py"
    # The explanation adds up to the score.
    for hit in results:
        fused = sum(p.contribution for p in hit.modalities.values())
        bonus = sum(hit.adjustments.get(k, 0.0) for k in ("definition", "path", "file_name", "coherence", "agreement"))
        factor = math.prod(v for k, v in hit.adjustments.items() if k.endswith("_factor"))
        assert hit.score == pytest.approx((fused + bonus) * factor)


SPAN_FILES = {
    "pkg/codec.py": '''\
        def encode(value):
            return "<" + value + ">"


        def wrap_one(x):
            return encode(x)


        def wrap_two(x):
            return encode(x) + "!"


        def wrap_three(x):
            return encode(x) * 2
        ''',
    "pkg/errors.py": '''\
        MESSAGE = "value out of range"


        def check(v):
            if v > 10:
                raise ValueError("value out of range")
            if v < 0:
                raise ValueError("value out of range")
            return v
        ''',
}


span_index = index_fixture("span_index", SPAN_FILES)


def test_each_caller_is_its_own_result(span_index: Index):
    # The three small callers share one chunk; each is an answer of its own, with its lines.
    response = span_index.search("who calls encode")
    assert response.intent == "find_references"
    spans = {(h.symbol, h.start_line, h.end_line) for h in response.results}
    callers = {(h.start_line, h.end_line) for h in response.results}
    assert {(5, 6), (9, 10), (13, 14)} <= callers, spans
    assert len({h.chunk for h in response.results}) < len(response.results)


def test_each_matching_line_is_its_own_result(span_index: Index):
    response = span_index.search('"value out of range"')
    assert response.intent == "exact_match"
    lines = [(h.path, h.start_line, h.end_line) for h in response.results]
    assert sorted(lines) == [("pkg/errors.py", n, n) for n in (1, 6, 8)]
    assert all("value out of range" in h.snippet for h in response.results)
    # top_k counts answers, not chunks.
    assert len(span_index.search('"value out of range"', top_k=2).results) == 2


def test_coherence_lifts_the_best_chunk_of_the_file_many_chunks_come_from(index: Index):
    reader = index.reader
    paths = ("web/handlers.py", "tests/test_handlers.py", "ratelimit/limiter.py")
    handlers, tests, limiter = (chunk_of(index, p) for p in paths)
    # One chunk per file here, so each file's sum is its chunk's score.
    scored = {handlers: 1.0, tests: 0.9, limiter: 0.95}
    how = "how are logins remembered"
    assert classify(how).intent == "understand_code"
    adjusted = rerank(reader, how, classify(how), scored, Signals(paths=False, secondary=False))
    largest = max(scored.values())
    assert adjusted[handlers].coherence == pytest.approx(0.1 * largest)  # its file sums the most
    assert 0 < adjusted[limiter].coherence < adjusted[handlers].coherence
    # Not for a definition question, and switched off by its flag.
    name = "where is login defined"
    assert all(a.coherence == 0 for a in rerank(reader, name, classify(name), scored).values())
    # A sentence that names a symbol along the way is a question about code to read too.
    sentence = "SessionStore and remembered logins"
    assert classify(sentence).rule == "identifier_in_sentence"
    named = rerank(reader, sentence, classify(sentence), scored, Signals(paths=False, secondary=False))
    assert named[handlers].coherence == pytest.approx(0.1 * largest)
    off = rerank(reader, how, classify(how), scored, Signals(coherence=False))
    assert all(a.coherence == 0 for a in off.values())


TYPE_AND_FUNCTION = {
    "markers.py": '''\
        class Inject:
            """A dependency marker."""

            def __init__(self, dependency=None):
                self.dependency = dependency
        ''',
    "marker_functions.py": '''\
        from markers import Inject as InjectMarker

        def Inject(dependency=None):
            """Declare a dependency."""
            return InjectMarker(dependency)
        ''',
    "routing.py": '''\
        from marker_functions import Inject

        def route(handler, user=Inject(get_user)):
            return handler(user)
        ''',
}


type_and_function = index_fixture("type_and_function", TYPE_AND_FUNCTION)


def test_a_callable_beside_a_type_of_its_name_is_a_definition_too(type_and_function: Index):
    index = type_and_function
    chunks = {path: chunk_of(index, path) for path in TYPE_AND_FUNCTION}
    adjusted = rerank(index.reader, "Inject", classify("Inject"), {c: 1.0 for c in chunks.values()})
    type_bonus = adjusted[chunks["markers.py"]].definition
    function_bonus = adjusted[chunks["marker_functions.py"]].definition
    assert type_bonus > function_bonus > 0 == adjusted[chunks["routing.py"]].definition
    assert [h.path for h in index.search("Inject").results][:2] == ["markers.py", "marker_functions.py"]


HEADER_AND_SOURCE = {
    "src/punycode.h": '''\
        /* Convert a UTF-8 domain name to IDNA 2008 / Punycode. */
        long punycode_toascii(const char* s, const char* se, char* d, char* de);
        ''',
    "src/punycode.c": '''\
        #include "punycode.h"

        /* IDNA: the Punycode encoding of each label of a domain name. */
        long punycode_toascii(const char* s, const char* se, char* d, char* de) {
          return punycode_encode(s, se, d, de);
        }
        ''',
    "include/api.h": '''\
        /* The public API: resolve a domain name. */
        int resolve(const char* name);
        ''',
}


header_and_source = index_fixture("header_and_source", HEADER_AND_SOURCE)


def demotions_of(index: Index, query: str, signals: Signals = Signals()) -> dict[str, tuple[tuple[str, float], ...]]:
    """path -> the demotions of its first chunk when every file of `index` is a candidate of
    `query` with the same fused score."""
    chunks = {info.path: chunk_of(index, info.path) for info in index.reader.files}
    adjusted = rerank(index.reader, query, classify(query), {c: 1.0 for c in chunks.values()}, signals)
    return {path: adjusted[chunk].demotions for path, chunk in chunks.items()}


def assert_first(index: Index, query: str, first: str, then: str) -> None:
    paths = [h.path for h in index.search(query).results]
    assert paths.index(first) < paths.index(then)


def test_a_header_beside_its_source_goes_after_it(header_and_source: Index):
    reader = header_and_source.reader
    assert {reader.files[f].path for f in headers_beside_sources(reader)} == {"src/punycode.h"}
    query = "IDNA domain name encoding"
    assert demotions_of(header_and_source, query) == {
        "src/punycode.h": (("header_beside_source", config.DEFAULT.HEADER_BESIDE_SOURCE_FACTOR),),
        "src/punycode.c": (),
        "include/api.h": (),
    }
    assert demotions_of(header_and_source, query, Signals(secondary=False))["src/punycode.h"] == ()
    assert_first(header_and_source, query, "src/punycode.c", "src/punycode.h")


#: `fill_cup` is defined in code and in a test, the fake pot's maker in the test alone.
only_in_tests = index_fixture(
    "only_in_tests",
    {
        "src/kettle/boil.py": "def boil_water(pot):\n    return heat_pot(pot)\n\n\ndef heat_pot(pot):\n    return pot\n",
        "src/kettle/pour.py": "def pour_tea(cup):\n    return fill_cup(cup)\n\n\ndef fill_cup(cup):\n    return cup\n",
        "tests/test_kettle.py": "def make_fake_pot_for_boil_water():\n    return {}\n\n\ndef fill_cup():\n    return None\n",
    },
)


def test_a_name_defined_only_in_tests_is_its_definition_there(only_in_tests: Index):
    """Tests are demoted for primary code that answers as well. A name defined in a test file
    alone has its definition there: it is not demoted below code that only shares its words;
    a name defined in both keeps the primary definition first."""
    only = "make_fake_pot_for_boil_water"
    assert demotions_of(only_in_tests, only)["tests/test_kettle.py"] == ()
    assert [h.path for h in only_in_tests.search(only).results][0] == "tests/test_kettle.py"
    both = demotions_of(only_in_tests, "fill_cup")
    assert both["tests/test_kettle.py"] == (("secondary_code", config.DEFAULT.SECONDARY_CODE_FACTOR),)
    assert_first(only_in_tests, "fill_cup", "src/kettle/pour.py", "tests/test_kettle.py")
    # A question about a concept still puts the tests after the code.
    concept = demotions_of(only_in_tests, "how is the water boiled")
    assert concept["tests/test_kettle.py"] == (("secondary_code", config.DEFAULT.SECONDARY_CODE_FACTOR),)


VERSIONS = {
    "src/v3/shapes.ts": "export class TextShape {\n  parse(input: string) { return checkString(input); }\n}\n",
    "src/v4/shapes.ts": "export class TextShape {\n  parse(input: string) { return checkString(input); }\n}\n",
    "src/util/v1/helpers.ts": "export function checkString(input: string) { return typeof input === 'string'; }\n",
}


versions = index_fixture("versions", VERSIONS)


def test_older_version_folders_go_after_the_newest_unless_named(versions: Index):
    reader = versions.reader
    # v1 has no newer sibling: it is the only version of util/.
    assert {reader.files[f].path: v for f, v in older_versions(reader).items()} == {"src/v3/shapes.ts": {"3"}}
    query = "string schema parsing"
    assert demotions_of(versions, query) == {
        "src/v3/shapes.ts": (("older_version", config.DEFAULT.OLDER_VERSION_FACTOR),),
        "src/v4/shapes.ts": (),
        "src/util/v1/helpers.ts": (),
    }
    assert demotions_of(versions, "v3 string schema parsing")["src/v3/shapes.ts"] == ()
    assert_first(versions, query, "src/v4/shapes.ts", "src/v3/shapes.ts")


PARTS = {
    "Ledger/EntryMapper.cs": "public static partial class EntryMapper\n{\n    public static T QueryRow<T>(string sql) { return Read<T>(sql); }\n}\n",
    "Ledger/EntryMapper.Async.cs": "public static partial class EntryMapper\n{\n    public static Task<T> QueryRowAsync<T>(string sql) { return ReadAsync<T>(sql); }\n}\n",
    "Ledger/EntryMapper.TypeHandler.cs": "public static partial class EntryMapper\n{\n    public abstract class TypeHandler<T> { }\n}\n",
    "Ledger/Other.Async.cs": "public static class Other\n{\n    public static Task QueryRowAsync() { return null; }\n}\n",
}


parts = index_fixture("parts", PARTS)


def test_a_part_beside_its_whole_goes_after_it_unless_the_question_names_the_part(parts: Index):
    reader = parts.reader
    # Other.Async.cs has no Other.cs beside it: it is a whole of its own.
    assert {reader.files[f].path: w for f, w in parts_beside_wholes(reader).items()} == {
        "Ledger/EntryMapper.Async.cs": {"async"},
        "Ledger/EntryMapper.TypeHandler.cs": {"type", "handler"},
    }
    part = (("part_beside_whole", config.DEFAULT.PART_BESIDE_WHOLE_FACTOR),)
    query = "how query rows are read and mapped"
    assert demotions_of(parts, query) == {
        "Ledger/EntryMapper.cs": (),
        "Ledger/EntryMapper.Async.cs": part,
        "Ledger/EntryMapper.TypeHandler.cs": part,
        "Ledger/Other.Async.cs": (),
    }
    asked = demotions_of(parts, "how async query rows are read")
    assert asked["Ledger/EntryMapper.Async.cs"] == () and asked["Ledger/EntryMapper.TypeHandler.cs"] == part
    assert_first(parts, query, "Ledger/EntryMapper.cs", "Ledger/EntryMapper.Async.cs")


PLATFORMS = {
    "src/unix/serial.c": "int serial_connect(serial_t* handle) {\n  return connect(handle->fd);\n}\n",
    "src/win/serial.c": "int serial_connect(serial_t* handle) {\n  return WSAConnect(handle->socket);\n}\n",
    "src/win/winglue.c": "void winglue_init(void) {\n  load_serial_functions();\n}\n",
    "net/fd_unix.go": "package net\n\nfunc dialTCP(addr string) error {\n\treturn connectTCP(addr)\n}\n",
    "net/fd_windows.go": "package net\n\nfunc dialTCP(addr string) error {\n\treturn connectTCP(addr)\n}\n",
    "net/pipe_windows.go": "package net\n\nfunc openPipe(name string) error {\n\treturn nil\n}\n",
}


platforms = index_fixture("platforms", PLATFORMS)


def test_windows_ports_of_twinned_files_go_after_them_unless_windows_is_named(platforms: Index):
    reader = platforms.reader
    # winglue.c and pipe_windows.go have no twin for other systems: they are the only answer.
    assert {reader.files[f].path for f in windows_ports(reader)} == {"src/win/serial.c", "net/fd_windows.go"}
    port = (("windows_port", config.DEFAULT.WINDOWS_PORT_FACTOR),)
    query = "serial connect implementation"
    assert demotions_of(platforms, query) == {
        "src/unix/serial.c": (),
        "src/win/serial.c": port,
        "src/win/winglue.c": (),
        "net/fd_unix.go": (),
        "net/fd_windows.go": port,
        "net/pipe_windows.go": (),
    }
    assert demotions_of(platforms, "serial connect on Windows")["src/win/serial.c"] == ()
    assert_first(platforms, query, "src/unix/serial.c", "src/win/serial.c")


def test_demotions_multiply_and_are_named():
    both = Adjustment(path=0.5, demotions=(("secondary_code", config.DEFAULT.SECONDARY_CODE_FACTOR), ("older_version", config.DEFAULT.OLDER_VERSION_FACTOR)))
    assert both.factor == pytest.approx(config.DEFAULT.SECONDARY_CODE_FACTOR * config.DEFAULT.OLDER_VERSION_FACTOR)
    assert both.apply(1.0) == pytest.approx(1.5 * config.DEFAULT.SECONDARY_CODE_FACTOR * config.DEFAULT.OLDER_VERSION_FACTOR)
    assert both.explain() == {
        "path": 0.5,
        "secondary_code_factor": config.DEFAULT.SECONDARY_CODE_FACTOR,
        "older_version_factor": config.DEFAULT.OLDER_VERSION_FACTOR,
    }
    assert Adjustment().factor == 1.0 and Adjustment().explain() == {}


REEXPORTED = {
    "app/extract/__init__.py": '''\
        """Extractors: what a handler can take from a request."""
        from corelib.extract import FromRequest
        from app.extract.query import Query
        ''',
    "app/extract/query.py": '''\
        from app.extract import FromRequest

        class Query(FromRequest):
            def parse(self, request):
                return request.query
        ''',
    "app/form.py": '''\
        from app.extract import FromRequest

        class Form(FromRequest):
            def parse(self, request):
                return request.form
        ''',
    "app/request_middleware.py": '''\
        def wrap_request(handler, extractor):
            return lambda request: handler(extractor.parse(request))
        ''',
}


reexported = index_fixture("reexported", REEXPORTED)


def test_a_name_defined_outside_the_index_is_answered_by_its_reexport(reexported: Index):
    reader = reexported.reader
    sources = import_sources(reader)
    root = next(f.id for f in reader.files if f.path == "app/extract/__init__.py")
    assert sources.source_line("FromRequest") == (root, 2)  # imported from there twice; re-exported on line 2
    assert sources.source_line("Nowhere") is None
    chunk = reader.chunk_at(root, 2)
    assert definition_bonuses(reader, ["FromRequest"], 3.0) == {chunk: 3.0}
    # A name the index defines keeps its definition, not its importers.
    assert set(definition_bonuses(reader, ["Query"], 3.0)) == {chunk_of(reexported, "app/extract/query.py")}
    results = reexported.search("FromRequest", ranking="hand").results
    assert results[0].path == "app/extract/__init__.py"
    assert results[0].adjustments["definition"] > 0


TIED = {
    # Two packages re-export `Widget` (defined nowhere here) to as many importers each: the file
    # of the lower id is its source, at that file's own import of it. `Sprocket` is imported from
    # a package that never imports it itself: its source has no re-export line. (Of a file's
    # imports of one file, the graph's edge keeps the first line: one import a file here.)
    "ui/alpha/__init__.py": "from vendor.kit import Widget\n",
    "ui/beta/__init__.py": "import os\nfrom vendor.kit import Widget, Gadget\n",
    "ui/one.py": "from ui.alpha import Widget\n",
    "ui/five.py": "from ui.alpha import Sprocket\n",
    "ui/two.py": "from ui.beta import Widget\n",
    "ui/four.py": "import json\nfrom ui.beta import Gadget\n",
    "ui/three.py": "from ui.alpha import Widget\nfrom ui.beta import Widget\n",
}

tied = index_fixture("tied", TIED)


@pytest.mark.parametrize("fixture", ["reexported", "tied"])
def test_import_sources_count_every_import_that_resolves(fixture: str, request: pytest.FixtureRequest) -> None:
    # What a name's imports resolve to, counted one import at a time from the index's rows.
    reader = request.getfixturevalue(fixture).reader
    files = len(reader.files)
    edges = reader.edges[reader.edges.kind == EDGE_KINDS.index("import")]
    resolved = {(s, ln): d for s, d, ln in zip(edges.src.tolist(), edges.dst.tolist(), edges.line.tolist()) if d < files}
    imports: dict[str, list[tuple[int, int]]] = {}
    for file_id, module, line, listed in reader.import_references():
        for item in json.loads(listed) if listed else [module]:
            imports.setdefault(last_part(item), []).append((file_id, line))
    sources = import_sources(reader)
    for name, found in imports.items():
        counted = Counter(resolved[f] for f in found if f in resolved)
        if not counted:
            assert sources.source_line(name) is None, name
            continue
        source = max(counted, key=lambda f: (counted[f], -f))
        own = [line for importer, line in found if importer == source]
        assert sources.source_line(name) == (source, min(own) if own else None), name
    assert sources.source_line("Nowhere") is None


def test_tied_sources_go_to_the_lower_file_at_its_reexport(tied: Index) -> None:
    reader = tied.reader
    file_of = {f.path: f.id for f in reader.files}
    sources = import_sources(reader)
    assert sources.source_line("Widget") == (file_of["ui/alpha/__init__.py"], 1)
    assert sources.source_line("Gadget") == (file_of["ui/beta/__init__.py"], 2)
    assert sources.source_line("Sprocket") == (file_of["ui/alpha/__init__.py"], None)


def _long_function(name: str) -> str:
    body = "".join(f"    total += step_{i}(value)\n" for i in range(30))
    return f"def {name}(value):\n    total = 0\n{body}    return total\n\n\n"


AGREEMENT = {
    "store/cache.py": _long_function("load_cache") + _long_function("evict_cache"),
    "store/other.py": "def other(value):\n    return value\n",
}


agreement_index = index_fixture("agreement_index", AGREEMENT)


def test_a_modality_that_found_the_file_elsewhere_agrees_with_its_best_chunk(agreement_index: Index):
    reader = agreement_index.reader
    cache = next(f.id for f in reader.files if f.path == "store/cache.py")
    first, end = int(reader.file_chunk_offsets[cache]), int(reader.file_chunk_offsets[cache + 1])
    assert end - first == 2, "the two long functions are two chunks"
    load, evict = first, first + 1
    other = chunk_of(agreement_index, "store/other.py")
    # (semantic, text): the semantic modality found one function, the text modality the other;
    # other.py was found by both, so chunk-level fusion ranks it first.
    contributions = {load: (0.012, 0.0), evict: (0.0, 0.010), other: (0.008, 0.006)}
    scored = {chunk: sum(p) for chunk, p in contributions.items()}
    parts = FusedParts(np.array(list(contributions), dtype=np.uint32), np.array(list(contributions.values())),
                       np.array(list(scored.values())))
    query = "cache eviction"
    signals = Signals(paths=False, secondary=False, coherence=False, definitions=False)
    adjusted = rerank(reader, query, classify(query), scored, signals, parts)
    assert adjusted[load].agreement == pytest.approx(config.DEFAULT.FILE_AGREEMENT * 0.010)
    assert adjusted[evict].agreement == 0.0  # not the chunk that stands for its file
    assert adjusted[other].agreement == 0.0  # both modalities found it already
    assert adjusted[load].apply(scored[load]) > adjusted[other].apply(scored[other])
    assert adjusted[load].explain() == {"agreement": pytest.approx(config.DEFAULT.FILE_AGREEMENT * 0.010)}
    # Switched off by its flag, and left out without the modalities' parts.
    off = rerank(reader, query, classify(query), scored, replace(signals, agreement=False), parts)
    assert all(a.agreement == 0.0 for a in off.values())
    assert all(a.agreement == 0.0 for a in rerank(reader, query, classify(query), scored, signals).values())


VOCABULARY_FILES = {
    "fs/file_system.c": "int mount(void) { return 0; }\n",
    "routing/router.py": "def route(path):\n    return path\n",
    "utils/utility.rb": "def helper; end\n",
    "deps/dependencies.go": "package deps\n",
    "ui/user_interface.ts": "export const ui = 1;\n",
    "core/filtering.py": "def keep(x):\n    return x\n",
}
vocabulary_index = index_fixture("vocabulary_index", VOCABULARY_FILES)


@pytest.mark.parametrize("query", [
    "how does the file system mount disks",    # as written, and initials (fs)
    "where are routes dispatched",              # prefixes: routes / routing, router
    "which utilities help here",                # stems: utilities / utility, utils
    "dependency resolution",                    # stems: dependency / dependencies, deps (a prefix)
    "the user interface constants",             # initials: ui
    "filter the input",                         # stems: filter / filtering
    "xyzzy",                                    # nothing agrees
])
def test_path_agreement_for_all_files_at_once_is_each_files_own(vocabulary_index: Index, query: str):
    from maguyva.query.rank import signals as rerank

    reader = vocabulary_index.reader
    words = rerank.question_words(query)
    signals = rerank._FileSignals(reader, query, words, 1.0, Signals())
    agreeing = []
    for file_id, info in enumerate(reader.files):
        own = rerank.matched_share(words, rerank.path_words(info.path), rerank.initialisms(query)) if words else 0.0
        assert signals(file_id).path == (own if own >= config.DEFAULT.PATH_MIN_SHARE else 0.0) * config.DEFAULT.PATH_BONUS, info.path
        agreeing += [info.path] if own else []
    assert bool(agreeing) == (query != "xyzzy")
