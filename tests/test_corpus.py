"""Several repositories as one corpus: results carry their repository, fusion is one RRF over
every repository's lists, and a larger repository does not starve a smaller one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fixture_repos import SHOP, TOOLS, write_file, write_tree

from maguyva import Index
from maguyva.serve.corpus import (
    Corpus,
    NotIndexedError,
    OutsideRootsError,
    RequestError,
    UnknownRepositoryError,
    distinct_names,
)


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.fixture()
def shop(home: Path) -> Path:
    return write_tree(home / "shop", SHOP)


@pytest.fixture()
def tools(home: Path) -> Path:
    return write_tree(home / "tools", TOOLS)


def big_and_small(home: Path) -> tuple[Path, Path]:
    """A large repository where many files match a question well, and a small one where one does."""
    big = {
        f"pkg/worker_{i:02d}.py": (
            f"def retry_job_{i}(job, attempts=3):\n"
            f'    """Retry the job when it fails, up to attempts times."""\n'
            f"    for attempt in range(attempts):\n"
            f"        try:\n"
            f"            return job()\n"
            f"        except Exception:\n"
            f"            continue\n"
        )
        for i in range(60)
    }
    small = {
        "net/backoff.py": (
            "def retry_request(send, attempts=5):\n"
            '    """Retry a request that fails, waiting longer each time."""\n'
            "    for attempt in range(attempts):\n"
            "        try:\n"
            "            return send()\n"
            "        except Exception:\n"
            "            continue\n"
        ),
        "net/client.py": "def get(url):\n    return url\n",
        "README.md": "A tiny network client.\n",
    }
    return write_tree(home / "big", big), write_tree(home / "small", small)


def test_results_carry_their_repository_and_each_keeps_its_own_index(shop, tools):
    with Corpus.open([shop, tools]) as corpus:
        assert corpus.names() == ["shop", "tools"]
        answer = corpus.search("in-memory cache with expiry", top_k=5)
        assert answer.repos[0] == "tools" and answer.results[0].path == "lib/cache.js"
        answer = corpus.search('"ECONNREFUSED"')
        assert list(zip(answer.repos, [h.path for h in answer.results])) == [("shop", "app/server.py")]
        assert answer.to_dict()["results"][0]["repo"] == "shop"
        index_dirs = {r.index_dir for r in corpus.repositories}
        assert len(index_dirs) == 2 and all((d / "CURRENT").exists() for d in index_dirs)


def test_one_repository_answers_exactly_like_index_search(shop):
    queries = ["where is parse_config defined", "how is the server started", "who calls parse_config",
               '"ECONNREFUSED"', "retry_start", "what breaks if I change load_settings"]  # fmt: skip
    with Corpus.open([shop]) as corpus:
        corpus.refresh()
        index = Index.open(shop)
        for preset in ("default", "thorough"):
            for query in queries:
                ours = corpus.search(query, top_k=5, preset=preset).response
                theirs = index.search(query, top_k=5, preset=preset)
                assert (ours.intent, ours.fusion_strategy, ours.modalities_run) == (
                    theirs.intent, theirs.fusion_strategy, theirs.modalities_run)  # fmt: skip
                assert [(h.path, h.start_line, h.end_line, h.symbol, h.snippet) for h in ours.results] == [
                    (h.path, h.start_line, h.end_line, h.symbol, h.snippet) for h in theirs.results
                ], query
                assert [h.score for h in ours.results] == pytest.approx([h.score for h in theirs.results])
                assert [h.modalities for h in ours.results] == [h.modalities for h in theirs.results]
        index.close()


@pytest.mark.parametrize("small_first", [False, True])
def test_a_larger_repository_does_not_starve_a_smaller_one(home, small_first):
    big, small = big_and_small(home)
    paths = [small, big] if small_first else [big, small]
    with Corpus.open(paths) as corpus:
        answer = corpus.search("retry when it fails", top_k=10)
        assert len(answer.results) == 10
        ranked = list(zip(answer.repos, [h.path for h in answer.results]))
        # Sixty files of the big repository match as well as or better than the small one's;
        # its best match still ranks with the big one's best, whatever the order of the roots.
        assert ("small", "net/backoff.py") in ranked[:2]
        assert answer.results[ranked.index(("small", "net/backoff.py"))].modalities.keys() >= {"text", "semantic"}


def test_a_lookalike_name_does_not_rank_beside_an_exact_definition(shop, tools):
    with Corpus.open([tools, shop]) as corpus:  # the lookalike's repository first: ties favour it
        answer = corpus.search("parse_config", top_k=5)
        assert (answer.repos[0], answer.results[0].path) == ("shop", "app/config.py")
        callers = corpus.search("who calls parse_config", top_k=5)
        assert {repo for repo in callers.repos} == {"shop"}
        assert [h.path for h in callers.results] == ["app/server.py"]


def test_select_by_name_or_path_and_unknown_repository(shop, tools):
    with Corpus.open([shop, tools]) as corpus:
        assert [r.name for r in corpus.select("tools")] == ["tools"]
        assert [r.name for r in corpus.select(str(shop))] == ["shop"]
        with pytest.raises(UnknownRepositoryError, match="unknown repository 'nope'; the repositories are shop, tools"):
            corpus.search("x", repo="nope")
        answer = corpus.search("parse", repo="tools", top_k=5)
        assert set(answer.repos) == {"tools"}


def test_empty_query_and_bad_options_are_request_errors(shop):
    with Corpus.open([shop]) as corpus:
        for call in (lambda: corpus.search("   "), lambda: corpus.search("x", top_k=0),
                     lambda: corpus.search("x", preset="fast"), lambda: corpus.find_symbol("")):  # fmt: skip
            with pytest.raises(RequestError):
                call()


def test_distinct_names():
    roots = [Path("/a/x/src"), Path("/b/y/src"), Path("/c/lib")]
    assert distinct_names(roots) == ["x/src", "y/src", "lib"]
    assert distinct_names([Path("/a/src"), Path("/b/src")]) == ["a/src", "b/src"]


def test_locate_keeps_every_path_inside_the_roots(shop, tools, home):
    secret = home / "secret.txt"
    secret.write_text("TOP SECRET\n")
    os.symlink(secret, shop / "app" / "leak.py")
    os.symlink(home, shop / "outside")
    os.symlink(shop / "app", shop / "alias")
    with Corpus.open([shop, tools]) as corpus:
        assert corpus.locate("app/config.py") == (corpus.select("shop")[0], "app/config.py")
        assert corpus.locate(str(shop / "app" / ".." / "app" / "config.py"))[1] == "app/config.py"
        assert corpus.locate("alias/config.py")[1] == "app/config.py"  # a link inside the root
        for outside in ("../secret.txt", "app/../../secret.txt", str(secret), "app/leak.py",
                        "outside/secret.txt", "/etc/passwd", str(home)):  # fmt: skip
            with pytest.raises(OutsideRootsError, match="outside the indexed roots"):
                corpus.locate(outside)
        with pytest.raises(RequestError):
            corpus.locate("app/\0config.py")
        with pytest.raises(NotIndexedError, match="not an indexed file of shop"):
            corpus.find_related("assets/logo.png", 1)
        with pytest.raises(NotIndexedError, match="line 99 is outside app/config.py"):
            corpus.find_related("app/config.py", 99)
        for query in ("TOP SECRET", '"TOP SECRET"'):
            assert all("SECRET" not in h.snippet for h in corpus.search(query).results)


def test_find_related_leaves_the_location_out_and_searches_every_repository(shop, tools):
    with Corpus.open([shop, tools]) as corpus:
        location, answer = corpus.find_related("app/retry.py", 6)
        assert (location.repo, location.path, location.symbol) == ("shop", "app/retry.py", "retry_start")
        assert location.start_line <= 6 <= location.end_line
        assert answer.response.intent == "find_similar" and answer.response.fusion_strategy == "rrf"
        assert all(not (repo == "shop" and h.chunk == location.chunk) for repo, h in zip(answer.repos, answer.results))
        assert set(answer.repos) == {"shop", "tools"}
        # A blank line between two definitions belongs to the nearer one.
        body = "".join(f"    step_{i} = run(step_{i - 1} if {i} else seed, {i})\n" for i in range(30))
        write_file(shop, "app/steps.py", f"def first(seed):\n{body}    return step_29\n\n\ndef second(seed):\n{body}")
        assert [corpus.find_related("app/steps.py", line)[0].symbol for line in (32, 33, 34, 35)] == [
            "first", "first", "second", "second"]  # fmt: skip


def test_find_symbol_tiers_and_kinds(shop, tools):
    with Corpus.open([shop, tools]) as corpus:
        [(repo, exact)] = corpus.find_symbol("parse_config")
        assert (repo, exact.path, exact.kind, exact.tier) == ("shop", "app/config.py", "function", 1)
        assert exact.docstring.startswith("Read the configuration")
        assert [(r, d.qualified_name) for r, d in corpus.find_symbol("Server.start")] == [("shop", "Server.start")]
        assert [d.name for _, d in corpus.find_symbol("server", kind="class")] == ["Server"]
        assert corpus.find_symbol("Server", kind="constant") == []
        assert [(r, d.name, d.tier) for r, d in corpus.find_symbol("createcache")] == [("tools", "createCache", 2)]
        assert [(r, d.name, d.tier) for r, d in corpus.find_symbol("retryStart")] == [("shop", "retry_start", 3)]
        with pytest.raises(RequestError, match="unknown kind"):
            corpus.find_symbol("Server", kind="klass")


def test_callers_and_impact_say_how_far_to_trust_each_link(home: Path):
    """Each dependant carries the least certain resolution on its way to the symbol: a chain is
    only as certain as its weakest call."""
    garden = write_tree(home / "garden", {
        "lib/soil.py": "def moisten(bed):\n    return bed\n",
        "lib/beds.py": (
            "from lib.soil import moisten\n\n\n"
            "def water(bed):\n    return moisten(bed)\n\n\n"  # moisten: imported
            "def tend(bed):\n    return water(bed)\n"  # water: in its own file
        ),
        "app/keeper.py": "from lib.beds import tend\n\n\ndef daily(bed):\n    return tend(bed)\n",
        # Go: a package's files see each other's names without an import.
        "svc/clock.go": "package svc\n\nfunc Tick() int {\n\treturn 1\n}\n",
        "svc/loop.go": "package svc\n\nfunc Run() int {\n\treturn Tick()\n}\n",
    })  # fmt: skip
    with Corpus.open([garden]) as corpus:
        chain = corpus.callers("moisten", depth=3)
        assert [(d.symbol, d.depth, d.resolution) for _, d in chain.dependants] == [
            ("water", 1, "imported"), ("tend", 2, "imported"), ("daily", 3, "imported")]  # fmt: skip
        near = corpus.callers("water", depth=2)
        assert [(d.symbol, d.depth, d.resolution) for _, d in near.dependants] == [
            ("tend", 1, "exact"), ("daily", 2, "imported")]  # fmt: skip
        found = {(d.symbol or d.path, d.via, d.resolution) for _, d in corpus.impact("water", depth=2).dependants}
        assert found == {("tend", "call", "exact"), ("daily", "call", "imported")}
        assert [(d.symbol, d.resolution) for _, d in corpus.callers("Tick").dependants] == [("Run", "exact")]


def test_overloads_each_answer_for_their_own_lines(home: Path):
    """`typing.overload` stubs share the name of the definition after them, as Java's overloads
    share theirs: a call is made by the definition whose lines hold it, and callers of the name
    reach that one."""
    kiln = write_tree(home / "kiln", {
        "glaze/fire.py": (
            "from typing import overload\n\n\n"
            "def heat(piece):\n    return piece\n\n\n"
            "class Kiln:\n"
            "    @overload\n    def bake(self, piece: int) -> int: ...\n\n"
            "    @overload\n    def bake(self, piece: str) -> str: ...\n\n"
            "    def bake(self, piece):\n        return heat(piece)\n\n"
            "    def run(self, piece):\n        return self.bake(piece)\n"
        ),
        "glaze/Tile.java": (
            "class Tile {\n"
            "    int press(int clay) { return press(clay, 2); }\n\n"
            "    int press(int clay, int times) {\n        return stamp(clay) * times;\n    }\n\n"
            "    int stamp(int clay) { return clay; }\n"
            "}\n"
        ),
    })  # fmt: skip
    answer = Index.build(kiln).search("who calls heat").results[0]
    assert (answer.path, answer.start_line, answer.end_line) == ("glaze/fire.py", 15, 16), "the body, not a stub"
    with Corpus.open([kiln]) as corpus:
        (caller,) = [d for _, d in corpus.callers("heat").dependants]
        assert (caller.symbol, caller.line) == ("Kiln.bake", 16)
        reached = {(d.symbol, d.depth) for _, d in corpus.impact("heat", depth=2).dependants}
        assert ("Kiln.run", 2) in reached, "the name's callers reach the body that calls heat"
        (stamper,) = [d for _, d in corpus.callers("stamp").dependants]
        assert (stamper.symbol, stamper.line) == ("Tile.press", 5)
        assert ("Tile.press", 2) in {(d.symbol, d.depth) for _, d in corpus.impact("stamp", depth=2).dependants}


def test_a_call_of_an_overridden_method_may_run_the_override(home: Path):
    """`kiln.fire()` on a `Kiln` may run `GasKiln.fire`: changing the override reaches that
    caller, as a candidate, after what calls the override itself."""
    pottery = write_tree(home / "pottery", {
        "kilns/base.py": "class Kiln:\n    def fire(self, pot):\n        return pot\n",
        "kilns/gas.py": (
            "from kilns.base import Kiln\n\n\n"
            "class GasKiln(Kiln):\n    def fire(self, pot):\n        return pot + 1\n"
        ),
        "studio/run.py": (
            "from kilns.base import Kiln\nfrom kilns.gas import GasKiln\n\n\n"
            "def batch(kiln: Kiln, pot):\n    return kiln.fire(pot)\n\n\n"
            "def gas_batch(kiln: GasKiln, pot):\n    return kiln.fire(pot)\n"
        ),
    })  # fmt: skip
    with Corpus.open([pottery]) as corpus:
        found = [(d.symbol, d.resolution) for _, d in corpus.callers("GasKiln.fire").dependants]
        assert found == [("gas_batch", "imported"), ("batch", "candidate")]
        reached = {(d.symbol, d.resolution) for _, d in corpus.impact("GasKiln.fire", depth=2).dependants}
        assert {("gas_batch", "imported"), ("batch", "candidate")} <= reached
        # The base's own callers are its, as before.
        assert [(d.symbol, d.resolution) for _, d in corpus.callers("Kiln.fire").dependants] == [("batch", "imported")]


def test_a_caller_through_an_aliased_import_is_a_caller(home: Path):
    """`from m import f as g` then `g()`, and `import { f as g }` then `g()`: callers of f."""
    till = write_tree(home / "till", {
        "ledger/post.py": "def post_entry(amount):\n    return amount\n",
        "ledger/grid.py": "def array(values):\n    return list(values)\n",
        "desk/sums.py": "import numpy as np\n\n\ndef column_total(values):\n    return np.array(values).sum()\n",
        "desk/clerk.py": "from ledger.post import post_entry as post\n\n\ndef file_receipt(amount):\n    return post(amount)\n",
        "web/total.js": "export function computeTotal(items) {\n  return items.length;\n}\n",
        "web/checkout.js": "import { computeTotal as total } from './total';\n\nexport function checkout(items) {\n  return total(items);\n}\n",
    })  # fmt: skip
    with Corpus.open([till]) as corpus:
        assert [(d.symbol, d.resolution) for _, d in corpus.callers("post_entry").dependants] == [("file_receipt", "imported")]
        # `import numpy as np`, then `np.array(...)`: numpy's, not the index's only `array`.
        assert corpus.callers("array").dependants == []
        assert [(d.symbol, d.resolution) for _, d in corpus.callers("computeTotal").dependants] == [("checkout", "imported")]


def test_a_call_on_an_instance_is_a_call_of_its_type_s_method(home: Path):
    """`s = Courier()` or `s: Courier`, then `s.get()`: a caller of Courier.get, not of Cache.get."""
    web = write_tree(home / "web", {
        "net/courier.py": "class Courier:\n    def get(self, url):\n        return url\n",
        "net/cache.py": "class Cache:\n    def get(self, key):\n        return key\n",
        "app/main.py": (
            "from net.cache import Cache\nfrom net.courier import Courier\n\n\n"
            "def fetch(url):\n    s = Courier()\n    return s.get(url)\n\n\n"
            "def lookup(cache: Cache, key):\n    return cache.get(key)\n"
        ),
    })  # fmt: skip
    with Corpus.open([web]) as corpus:
        assert [(d.symbol, d.resolution) for _, d in corpus.callers("Courier.get").dependants] == [("fetch", "imported")]
        assert [(d.symbol, d.resolution) for _, d in corpus.callers("Cache.get").dependants] == [("lookup", "imported")]


def test_a_caller_outside_any_definition_is_answered_where_it_calls(home: Path):
    """A call in a module's own statements, or in a callback handed to a test runner, belongs to
    no definition: the answer is the chunk holding the call, not the file's first."""
    helpers = "".join(f"def helper_{i}(value):\n    return value + {i}\n\n\n" for i in range(30))
    ledger = write_tree(home / "ledger", {
        "money/cents.py": "def round_cents(amount):\n    return round(amount, 2)\n",
        "reports/totals.py": f"from money.cents import round_cents\n\n\n{helpers}GRAND_TOTAL = round_cents(1234.5678)\n",
        "web/cents.ts": "export function toCents(amount: number): number {\n  return Math.round(amount * 100);\n}\n",
        "web/cents.test.ts": (
            "import { toCents } from './cents';\n\n"
            + "describe('zero', () => {\n  it('stays', () => {\n    expect(toCents(0)).toBe(0);\n  });\n});\n\n"
            + "".join(f"describe('case {i}', () => {{\n  it('holds', () => {{\n    expect({i}).toBe({i});\n  }});\n}});\n\n" for i in range(25))
            + "describe('toCents', () => {\n  it('rounds', () => {\n    expect(toCents(1.234)).toBe(123);\n  });\n});\n"
        ),
    })  # fmt: skip
    # Each call of the file outside any definition is an answer, the line that calls: the test
    # file calls twice.
    call_lines = {"reports/totals.py": [124], "web/cents.test.ts": [5, 161]}
    with Corpus.open([ledger]) as corpus:
        for question, path in (("who calls round_cents", "reports/totals.py"), ("who calls toCents", "web/cents.test.ts")):
            hits = [(h.path, h.start_line, h.end_line) for h in corpus.search(question).results]
            for line in call_lines[path]:
                assert (path, line, line) in hits, (question, line, hits)


def test_callers_and_impact_cross_repositories_that_import_each_other(home: Path):
    """A service calling a library of the same corpus, by the library's package name: its callers
    and dependants are found in the service too, and the walk goes on in the service's graph."""
    library = write_tree(home / "shelf", {
        "shelf/__init__.py": "",
        "shelf/cart.py": (
            "def checkout(items):\n    return sum(items)\n\n\n"
            "class Basket:\n    def weigh(self):\n        return 0\n"
        ),
        "go.mod": "module example.com/kit\n\ngo 1.22\n",
        "retry/retry.go": "package retry\n\nfunc Attempt(n int) int {\n\treturn n\n}\n",
    })  # fmt: skip
    service = write_tree(home / "store", {
        "store/__init__.py": "",
        "store/orders.py": (
            "import shelf\n"
            "from shelf.cart import checkout\n\n\n"
            "def place(items):\n    return checkout(items)\n\n\n"  # a name the import brings
            "def refund(items):\n    return shelf.cart.checkout(items)\n\n\n"  # on the bound package
            "def weigh_all(basket):\n    return basket.weigh()\n\n\n"  # a method, receiver unknown
            "def main():\n    return place([1])\n"
        ),
        "store/unrelated.py": "def checkout(x):\n    return x\n\n\ndef run():\n    return checkout(1)\n",
        "cmd/main.go": (
            "package main\n\nimport \"example.com/kit/retry\"\n\n"
            "func handle() int {\n\treturn retry.Attempt(3)\n}\n"
        ),
    })  # fmt: skip
    with Corpus.open([library, service]) as corpus:
        direct = corpus.callers("checkout")
        found = {(r, d.symbol, d.depth, d.resolution) for r, d in direct.dependants}
        assert ("store", "place", 1, "imported") in found and ("store", "refund", 1, "imported") in found
        assert ("store", "run", 1, "exact") in found  # the service's own checkout, in its own file
        assert not any(r == "store" and d.symbol == "run" and d.uses == "checkout" and d.resolution == "imported"
                       for r, d in direct.dependants)
        deeper = {(r, d.symbol, d.depth, d.resolution) for r, d in corpus.callers("checkout", depth=2).dependants}
        assert ("store", "main", 2, "imported") in deeper
        assert {(r, d.symbol, d.resolution) for r, d in corpus.callers("Basket.weigh").dependants} == {
            ("store", "weigh_all", "candidate")}  # fmt: skip
        assert {(r, d.symbol, d.resolution) for r, d in corpus.callers("Attempt").dependants} == {
            ("store", "handle", "imported")}  # fmt: skip
        impact = {(r, d.symbol) for r, d in corpus.impact("checkout", depth=2).dependants}
        assert {("store", "place"), ("store", "refund"), ("store", "main")} <= impact
        # Asked of one repository, the walk stays in it.
        assert corpus.callers("Attempt", repo="shelf").dependants == []


def test_callers_and_impact(shop, tools):
    with Corpus.open([shop, tools]) as corpus:
        answer = corpus.callers("parse_config")
        assert [(r, d.symbol, d.path, d.line, d.depth) for r, d in answer.dependants] == [
            ("shop", "Server.__init__", "app/server.py", 8, 1)
        ]
        deeper = corpus.callers("Server.start", depth=3)
        assert [(d.symbol, d.depth, d.uses) for _, d in deeper.dependants] == [
            ("retry_start", 1, "Server.start"), ("main", 2, "retry_start")]  # fmt: skip
        assert deeper.total == 2 and len(corpus.callers("Server.start", depth=1).dependants) == 1
        impact = corpus.impact("load_settings", depth=4)
        found = {(d.symbol or d.path, d.depth) for _, d in impact.dependants}
        assert {("parse_config", 1), ("Server.__init__", 2)} <= found
        assert impact.total == len(impact.dependants)
        assert corpus.callers("no_such_symbol").dependants == []
        with pytest.raises(RequestError, match="depth must be at least 1"):
            corpus.callers("parse_config", depth=0)
