"""Edge resolution, centrality and graph walks on hand-made files, symbols and references."""

from __future__ import annotations

import numpy as np
import pytest
import rustworkx as rx
from hypothesis import example, given, settings
from hypothesis import strategies as st

from maguyva import config
from maguyva._core import graph_centrality
from maguyva.index import graph as graph_module
from maguyva.index.graph import (
    EDGE_KINDS,
    RESOLUTIONS,
    DependencyGraph,
    Edge,
    EdgeColumns,
    FileNode,
    ReferenceRow,
    SymbolNode,
    import_parts,
    import_path,
    node_values,
    resolve_edges,
)

FILES = [
    FileNode(0, "pkg/__init__.py"),
    FileNode(1, "pkg/http.py"),
    FileNode(2, "pkg/retry.py"),
    FileNode(3, "app/main.py"),
    FileNode(4, "other/http.go"),
]


def sym(i, file_id, qualified, kind="function", start=1):
    return SymbolNode(i, file_id, qualified.rsplit(".", 1)[-1], qualified, kind, start, start + 5)


SYMBOLS = [
    sym(0, 1, "Session", "class", 1),
    sym(1, 1, "Session.request", "method", 3),
    sym(2, 1, "Session.get", "method", 10),
    sym(3, 2, "retry", "function", 1),
    sym(4, 3, "main", "function", 1),
    sym(5, 4, "request", "function", 1),  # same name as a method elsewhere
    sym(6, 2, "Backoff", "class", 20),
    sym(7, 2, "ExpBackoff", "class", 30),
]
NODE = {s.qualified_name + f"@{s.file_id}": len(FILES) + s.id for s in SYMBOLS}


def ref(file_id, kind, name, line, enclosing=None, qualifier="", names=()):
    return ReferenceRow(file_id, kind, name, line, enclosing, qualifier, tuple(names))


REFS = [
    ref(1, "import", ".retry", 1, names=["retry"]),
    ref(1, "call", "request", 11, "Session.get", "self"),  # -> Session.request, same file
    ref(1, "call", "retry", 5, "Session.request"),  # -> retry in the imported module
    ref(3, "import", "pkg.http", 1, names=["Session"]),
    ref(3, "call", "Session", 2, "main"),  # constructor -> class, via the import
    ref(3, "call", "get", 3, "main", "s"),  # unique global definition named get
    ref(3, "call", "print", 4, "main"),  # builtin: no definition, no edge
    ref(2, "inherit", "Backoff", 30, "ExpBackoff"),
    ref(4, "call", "retry", 2, "request"),  # Go: not imported, but the only `retry` anywhere
]


def test_resolution_prefers_same_file_then_imports_then_unique_global():
    edges = {(e.src, e.dst, e.kind) for e in resolve_edges(FILES, SYMBOLS, REFS)}
    assert (1, 2, "import") in edges
    assert (3, 1, "import") in edges
    assert (NODE["Session.get@1"], NODE["Session.request@1"], "call") in edges
    assert (NODE["Session.request@1"], NODE["retry@2"], "call") in edges
    assert (NODE["main@3"], NODE["Session@1"], "call") in edges
    assert (NODE["main@3"], NODE["Session.get@1"], "call") in edges
    assert (NODE["ExpBackoff@2"], NODE["Backoff@2"], "inherit") in edges
    assert (NODE["request@4"], NODE["retry@2"], "call") in edges
    assert not any(e[1] == NODE["request@4"] for e in edges), "ambiguous name linked to the wrong file"
    assert len(edges) == 8


def test_each_edge_says_how_it_was_resolved():
    how = {(e.src, e.dst, e.kind): e.how for e in resolve_edges(FILES, SYMBOLS, REFS)}
    assert how[(1, 2, "import")] == "exact"  # `.retry` names one file
    assert how[(NODE["Session.get@1"], NODE["Session.request@1"], "call")] == "exact"  # the caller's own file
    assert how[(NODE["ExpBackoff@2"], NODE["Backoff@2"], "inherit")] == "exact"
    assert how[(NODE["Session.request@1"], NODE["retry@2"], "call")] == "imported"  # in a module it imports
    assert how[(NODE["main@3"], NODE["Session@1"], "call")] == "imported"
    assert how[(NODE["main@3"], NODE["Session.get@1"], "call")] == "imported"  # pkg.http, imported, defines it
    assert how[(NODE["request@4"], NODE["retry@2"], "call")] == "by_name"
    # An import whose module path two files answer equally links both, each a candidate.
    files = [FileNode(0, "a/http.py"), FileNode(1, "b/http.py"), FileNode(2, "main.py")]
    tie = resolve_edges(files, [], [ref(2, "import", "http", 1)])
    assert [(e.dst, e.how) for e in tie] == [(0, "candidate"), (1, "candidate")]


def test_every_call_to_a_name_the_file_imports_is_imported_and_the_edge_keeps_its_first_line():
    files = [FileNode(0, "lib/retry.py"), FileNode(1, "app.py")]
    symbols = [sym(0, 0, "retry"), sym(1, 1, "main")]
    by_name_first = [ref(1, "call", "retry", 3, "main"), ref(1, "import", "lib.retry", 9, names=["retry"]),
                     ref(1, "call", "retry", 12, "main")]
    (edge,) = [e for e in resolve_edges(files, symbols, by_name_first) if e.kind == "call"]
    assert (edge.line, edge.how) == (3, "imported")  # the import, written below, still counts


def test_python_names_are_linked_by_name_only_where_python_could_see_them():
    """A Python name is visible where it is defined or imported: a bare call of a name defined in
    a file the caller does not import, `self.name` for another class's method, and a call on a
    module from outside the index are not that definition. Go's names cross files unimported."""
    files = [FileNode(0, "lib/cache.py"), FileNode(1, "app/jobs.py"), FileNode(2, "go/cache.go"),
             FileNode(3, "go/jobs.go")]
    symbols = [sym(0, 0, "Store.refresh", "method"), sym(1, 0, "evict"), sym(2, 1, "Job.run", "method"),
               sym(3, 2, "purge"), sym(4, 3, "tick")]
    python_calls = [
        ref(1, "import", "dataclasses", 1),
        ref(1, "call", "evict", 5, "Job.run"),  # bare, not imported
        ref(1, "call", "refresh", 6, "Job.run", "self"),  # Job has no refresh, Store is not imported
        ref(1, "call", "evict", 7, "Job.run", "dataclasses"),  # a module from outside the index
        ref(1, "call", "refresh", 8, "Job.run", "self.store"),  # an attribute of unknown type: by name
    ]
    edges = resolve_edges(files, symbols, python_calls)
    assert [(e.line, e.dst, e.how) for e in edges] == [(8, len(files) + 0, "by_name")]
    assert resolve_edges(files, symbols, [ref(1, "import", "lib.cache", 1), ref(1, "call", "evict", 5, "Job.run")])[1].how == "imported"
    go_call = [ref(3, "call", "purge", 4, "tick")]  # its package's, in another file of its folder
    assert [(e.dst, e.how) for e in resolve_edges(files, symbols, go_call)] == [(len(files) + 3, "exact")]


def test_a_bare_go_call_is_its_own_package_s_name_though_other_packages_define_it():
    files = [FileNode(0, "clock/tick.go"), FileNode(1, "clock/loop.go"), FileNode(2, "timer/tick.go"),
             FileNode(3, "timer/loop.go"), FileNode(4, "clock/sub/run.go")]
    symbols = [sym(0, 0, "Tick"), sym(1, 1, "Loop"), sym(2, 2, "Tick"), sym(3, 3, "Loop"),
               sym(4, 2, "Meter.Read", "method"), sym(5, 4, "Run")]
    refs = [ref(1, "call", "Tick", 3, "Loop"), ref(3, "call", "Tick", 3, "Loop"),
            ref(3, "call", "Read", 4, "Loop"),  # a bare call never names a method
            ref(1, "call", "Tick", 5, "Loop", "timer"),  # another package's, by its qualifier
            ref(4, "call", "Tick", 2, "Run")]  # a subfolder is another package
    found = {(e.src, e.dst, e.how) for e in resolve_edges(files, symbols, refs) if e.kind == "call"}
    n = len(files)
    assert found == {(n + 1, n + 0, "exact"), (n + 3, n + 2, "exact")}


def test_a_call_on_a_type_is_that_type_s_method_before_any_other_of_the_name():
    files = [FileNode(0, "web/courier.py"), FileNode(1, "web/cache.py"), FileNode(2, "app/main.py")]
    symbols = [sym(0, 0, "Courier"), sym(1, 0, "Courier.get", "method", 3), sym(2, 1, "Cache"),
               sym(3, 1, "Cache.get", "method", 3), sym(4, 2, "get", "function", 1), sym(5, 2, "run", "function", 9)]
    imports = [ref(2, "import", "web.cache", 1, names=["Cache"]), ref(2, "import", "web.courier", 2, names=["Courier"])]
    n = len(files)

    def target(qualifier):
        calls = [e for e in resolve_edges(files, symbols, [*imports, ref(2, "call", "get", 10, "run", qualifier)]) if e.kind == "call"]
        return [(e.dst - n, e.how) for e in calls]

    assert target("Courier") == [(1, "imported")]  # not the file's own `get`, nor Cache's
    assert target("Cache") == [(3, "imported")]
    assert target("s") == [(4, "exact")]  # an unknown receiver: as before, the file's own first
    # Go: the type's method in another file of the caller's package, before the caller's own.
    files = [FileNode(0, "web/meter.go"), FileNode(1, "web/render.go"), FileNode(2, "other/meter.go")]
    symbols = [sym(0, 0, "Meter.Advance", "method", 3), sym(1, 1, "Advance", "function", 1), sym(2, 1, "Render"),
               sym(3, 2, "Meter.Advance", "method", 3)]
    (edge,) = [e for e in resolve_edges(files, symbols, [ref(1, "call", "Advance", 8, "Render", "Meter")]) if e.kind == "call"]
    assert (edge.dst - len(files), edge.how) == (0, "exact")


def test_overloads_are_told_apart_by_line_as_callers_and_are_all_called():
    """Overloads share a qualified name (a Java method by arity, `typing.overload`'s stubs
    before the body): a call is made by the overload whose lines hold it, and a call of the
    name may be any of them."""
    files = [FileNode(0, "ink/Palette.java"), FileNode(1, "ink/Canvas.java")]
    symbols = [
        SymbolNode(0, 0, "Palette", "Palette", "class", 1, 40),
        SymbolNode(1, 0, "blend", "Palette.blend", "method", 3, 5),  # blend(a): blend(a, 0.5)
        SymbolNode(2, 0, "blend", "Palette.blend", "method", 7, 15),  # blend(a, w): the body
        SymbolNode(3, 0, "mix", "Palette.mix", "method", 17, 20),
        SymbolNode(4, 1, "paint", "Canvas.paint", "method", 2, 9),
    ]
    refs = [
        ref(0, "call", "blend", 4, "Palette.blend"),  # the short overload calls the long one
        ref(0, "call", "mix", 11, "Palette.blend"),  # in the long overload's body
        ref(1, "call", "blend", 5, "Canvas.paint", "Palette"),
    ]
    n = len(files)
    edges = {(e.src - n, e.dst - n, e.how) for e in resolve_edges(files, symbols, refs) if e.kind == "call"}
    assert (2, 3, "exact") in edges and (1, 3, "exact") not in edges, "mix is called by the overload holding line 11"
    assert (1, 2, "exact") in edges, "one overload calling the other"
    assert {(4, 1, "by_name"), (4, 2, "candidate")} <= edges, "a call of the name reaches every overload"
    graph = DependencyGraph(n + len(symbols), resolve_edges(files, symbols, refs))
    reached = {step.node - n for step in graph.dependants(n + 3, depth=3)}
    assert {2, 4} <= reached, "changing mix reaches paint through the body's overload"


def test_a_call_on_its_own_object_looks_in_the_class_then_its_bases():
    """`super().x()` is the base class's x, never the caller's own; `self.x()` is the class's own
    x, else its base's; the bases are the ones the class declares (imported for Python)."""
    files = [FileNode(0, "pots/base.py"), FileNode(1, "pots/vase.py"), FileNode(2, "kiln/Shelf.java"),
             FileNode(3, "kiln/Rack.java")]
    symbols = [
        sym(0, 0, "Vessel"), sym(1, 0, "Vessel.fill", "method", 3), sym(2, 0, "Vessel.seal", "method", 10),
        sym(3, 1, "Vase"), sym(4, 1, "Vase.fill", "method", 5), sym(5, 1, "seal", "function", 20),
        sym(6, 2, "Shelf.load", "method", 2), sym(7, 3, "Rack.load", "method", 2), sym(8, 3, "Rack"),
    ]
    refs = [
        ref(1, "import", "pots.base", 1, names=["Vessel"]),
        ref(1, "inherit", "Vessel", 4, "Vase"),
        ref(1, "call", "fill", 6, "Vase.fill", "super()"),  # Vessel.fill, not Vase.fill itself
        ref(1, "call", "seal", 7, "Vase.fill", "self"),  # Vessel.seal, not the module's seal()
        ref(3, "inherit", "Shelf", 1, "Rack"),
        ref(3, "call", "load", 3, "Rack.load", "super"),  # Java: Shelf.load, same package
    ]
    n = len(files)
    edges = {(e.src - n, e.dst - n, e.how) for e in resolve_edges(files, symbols, refs) if e.kind == "call"}
    assert edges == {(4, 1, "imported"), (4, 2, "imported"), (7, 6, "by_name")}
    # A class whose bases define nothing of the name: `super()` links nowhere, `self` as before.
    orphan = [ref(1, "call", "fill", 6, "Vase.fill", "super()"), ref(1, "call", "seal", 7, "Vase.fill", "self")]
    edges = {(e.src - n, e.dst - n) for e in resolve_edges(files, symbols, orphan) if e.kind == "call"}
    assert edges == {(4, 5)}


def test_a_method_called_on_a_subclass_instance_is_found_where_a_base_defines_it():
    """`k.sharpen()` after `k = Knife()`, where Knife does not define sharpen and its base Blade
    does, calls Blade.sharpen; two levels up too; a method the type defines itself stays its own."""
    files = [FileNode(0, "tools/base.py"), FileNode(1, "tools/knife.py"), FileNode(2, "tools/chisel.py"),
             FileNode(3, "shop.py"), FileNode(4, "yard/Crane.java"), FileNode(5, "yard/TowerCrane.java"),
             FileNode(6, "yard/Site.java"), FileNode(7, "other/blade.py"), FileNode(8, "dock/Hoist.java")]
    symbols = [
        sym(0, 0, "Blade", "class"), sym(1, 0, "Blade.sharpen", "method", 3), sym(2, 1, "Knife", "class"),
        sym(3, 1, "Knife.carve", "method", 3), sym(4, 2, "Chisel", "class"), sym(5, 3, "work"),
        sym(6, 4, "Crane", "class"), sym(7, 4, "Crane.lift", "method", 2), sym(8, 5, "TowerCrane", "class"),
        sym(9, 6, "Site.build", "method", 2),
        sym(10, 7, "Blade", "class"), sym(11, 7, "Blade.sharpen", "method", 3),  # another Blade, not Knife's base
        sym(12, 8, "Hoist.lift", "method", 2),  # `lift` has two definitions: only the type tells
    ]
    library = [
        ref(1, "import", "tools.base", 1, names=["Blade"]), ref(1, "inherit", "Blade", 3, "Knife"),
        ref(2, "import", "tools.knife", 1, names=["Knife"]), ref(2, "inherit", "Knife", 3, "Chisel"),
        ref(5, "inherit", "Crane", 1, "TowerCrane"),
    ]
    shop = [
        ref(3, "import", "tools.knife", 1, names=["Knife"]), ref(3, "import", "tools.chisel", 2, names=["Chisel"]),
        ref(3, "call", "sharpen", 5, "work", "Knife"),  # Blade.sharpen, one level up
        ref(3, "call", "sharpen", 6, "work", "Chisel"),  # Blade.sharpen, two levels up
        ref(3, "call", "carve", 7, "work", "Knife"),  # Knife's own
        ref(3, "call", "polish", 8, "work", "Knife"),  # defined nowhere
        ref(6, "call", "lift", 3, "Site.build", "TowerCrane"),  # Java: the one Crane.lift of its package
    ]
    n = len(files)

    def calls(references, rows_of=None, symbols_named=None):
        edges = resolve_edges(files, symbols, references, rows_of, symbols_named)
        return {(e.src - n, e.dst - n, e.line, e.how) for e in edges if e.kind == "call"}

    expected = {(5, 1, 5, "imported"), (5, 1, 6, "imported"), (5, 3, 7, "imported"), (9, 7, 3, "by_name")}
    # Two calls of one name from one caller to one definition are one edge, at the first line.
    expected.discard((5, 1, 6, "imported"))
    assert calls(library + shop) == expected
    chisel_only = [r for r in shop if r.line != 5]
    assert calls(library + chisel_only) == {(5, 1, 6, "imported"), (5, 3, 7, "imported"), (9, 7, 3, "by_name")}
    # An update resolving shop.py and Site.java alone reads the classes' bases and imports, and
    # the bases' definitions, from the rest of the index.
    by_name = {}
    for s in symbols:
        by_name.setdefault(s.name, []).append(s)
    assert calls(shop, lambda ids: [r for r in library if r.file_id in ids], lambda name: by_name.get(name, [])) == expected
    # Without the bases nothing is inherited: `sharpen` on an imported type is that type's, so
    # not guessed at; `lift` on a type of the same package is, each of its two methods a candidate.
    assert calls(shop) == {(5, 3, 7, "imported"), (9, 7, 3, "candidate"), (9, 12, 3, "candidate")}


def test_a_name_imported_from_a_module_that_reexports_it_is_defined_where_it_comes_from():
    files = [FileNode(0, "loom/__init__.py"), FileNode(1, "loom/shuttle.py"), FileNode(2, "kit/shuttle.py"),
             FileNode(3, "app.py"), FileNode(4, "loom/spool.py")]
    symbols = [sym(0, 1, "Shuttle"), sym(1, 1, "Shuttle.throw", "method", 3), sym(2, 2, "Shuttle"),
               sym(3, 2, "Shuttle.throw", "method", 3), sym(4, 1, "weave"), sym(5, 2, "weave"), sym(6, 3, "main"),
               sym(7, 4, "wind"), sym(8, 2, "wind")]
    package = [ref(0, "import", ".shuttle", 1, names=["Shuttle", "weave"]), ref(0, "import", ".spool", 2, names=["*"])]
    app = [ref(3, "import", "loom", 1, names=["Shuttle", "weave", "wind"]), ref(3, "call", "throw", 5, "main", "Shuttle"),
           ref(3, "call", "weave", 6, "main"), ref(3, "call", "wind", 7, "main")]
    n = len(files)

    def calls(references, import_rows=None):
        return {(e.dst - n, e.how) for e in resolve_edges(files, symbols, references, import_rows) if e.kind == "call"}

    assert calls(package + app) == {(1, "imported"), (4, "imported"), (7, "imported")}
    # An update resolving app.py alone reads the package's imports from the generation before.
    assert calls(app, lambda ids: [r for r in package if r.file_id in ids]) == {(1, "imported"), (4, "imported"), (7, "imported")}
    # Without the package's imports each name has two definitions, and `Shuttle` is an imported
    # name: nothing is guessed at.
    assert calls(app) == set()


def test_a_name_a_module_reexports_under_another_name_is_the_original_where_it_comes_from():
    """`from .stitch import hem_edge as hem` in a package, then `from quilt import hem; hem()`:
    the call is hem_edge's, in the file the package takes it from, and so is a method on the
    renamed class (`export { Frame as Hoop } from './frame'`)."""
    files = [FileNode(0, "quilt/__init__.py"), FileNode(1, "quilt/stitch.py"), FileNode(2, "patch/stitch.py"),
             FileNode(3, "bed.py"), FileNode(4, "hoops/index.ts"), FileNode(5, "hoops/frame.ts"),
             FileNode(6, "easel/frame.ts"), FileNode(7, "studio.ts")]
    symbols = [sym(0, 1, "hem_edge"), sym(1, 2, "hem_edge"), sym(2, 3, "make_bed"),
               sym(3, 5, "Frame", "class"), sym(4, 5, "Frame.tighten", "method", 3),
               sym(5, 6, "Frame", "class"), sym(6, 6, "Frame.tighten", "method", 3), sym(7, 7, "mount")]
    package = [ref(0, "import", ".stitch", 1, names=["hem_edge"]), ref(0, "alias", "hem_edge", 1, qualifier="hem"),
               ref(4, "import", "./frame", 1, names=["Frame"]), ref(4, "alias", "Frame", 1, qualifier="Hoop")]
    users = [ref(3, "import", "quilt", 1, names=["hem"]), ref(3, "call", "hem", 4, "make_bed"),
             ref(7, "import", "./hoops", 1, names=["Hoop"]), ref(7, "call", "tighten", 3, "mount", "Hoop")]
    n = len(files)

    def calls(references, rows_of=None, symbols_named=None):
        edges = resolve_edges(files, symbols, references, rows_of, symbols_named)
        return {(e.src - n, e.dst - n, e.how) for e in edges if e.kind == "call"}

    assert calls(package + users) == {(2, 0, "imported"), (7, 4, "imported")}
    # An update resolving the users alone reads the package's imports and aliases from the
    # generation before, and the originals' definitions from the rest of the index.
    by_name = {}
    for s in symbols:
        by_name.setdefault(s.name, []).append(s)
    rows_of = lambda ids: [r for r in package if r.file_id in ids]  # noqa: E731
    assert calls(users, rows_of, lambda name: by_name.get(name, [])) == {(2, 0, "imported"), (7, 4, "imported")}
    # `hem` and `Hoop` are defined nowhere under those names; `Hoop` is an imported name, so
    # `tighten` is not guessed at.
    assert calls(users) == set()


def test_a_function_passed_as_a_value_is_a_use_that_impact_counts_and_callers_do_not():
    files = [FileNode(0, "bell/ring.py"), FileNode(1, "bell/tower.py"), FileNode(2, "bell/far.py")]
    symbols = [sym(0, 0, "chime"), sym(1, 0, "Clapper"), sym(2, 1, "hang"), sym(3, 1, "toll"),
               sym(4, 2, "swing"), sym(5, 1, "start")]
    refs = [
        ref(1, "import", "bell.ring", 1, names=["chime", "Clapper"]),
        ref(1, "use", "chime", 3, "hang"),  # register(chime): a function passed on
        ref(1, "use", "Clapper", 4, "hang"),  # a class passed on
        ref(1, "use", "rope", 5, "hang"),  # a variable: no definition
        ref(1, "use", "swing", 6, "hang"),  # the only `swing`, but not imported: not a use
        ref(1, "call", "chime", 9, "toll"),
        ref(1, "call", "hang", 12, "start"),
    ]
    n = len(files)
    edges = resolve_edges(files, symbols, refs)
    assert {(e.src - n, e.dst - n, e.kind, e.how) for e in edges if e.kind in ("use", "call")} == {
        (2, 0, "use", "imported"), (2, 1, "use", "imported"), (3, 0, "call", "imported"), (5, 2, "call", "exact")}  # fmt: skip
    graph = DependencyGraph(n + len(symbols), edges)
    assert [s.node - n for s in graph.callers(n + 0)] == [3], "passing chime on is not calling it"
    walk = [(s.node - n, s.depth) for s in graph.dependants(n + 0, depth=2)]
    assert walk == [(3, 1), (2, 1), (5, 2)], "what a call reaches first, then what a value passed on adds"
    # Centrality and in-degree count what code relies on: the use edges are not counted.
    columns = EdgeColumns.of(edges)
    assert node_values(n + len(symbols), columns)[1][n + 0] == 1


def test_ambiguous_names_are_not_linked():
    symbols = [sym(0, 1, "parse"), sym(1, 4, "parse"), sym(2, 3, "main")]
    edges = resolve_edges(FILES, symbols, [ref(3, "call", "parse", 2, "main")])
    assert edges == []


def test_import_parts():
    assert import_parts(".utils", "pkg/sub/a.py") == ["pkg", "sub", "utils"]
    assert import_parts("..core", "pkg/sub/a.py") == ["pkg", "core"]
    assert import_parts("./lib/x", "src/a.js") == ["src", "lib", "x"]
    assert import_parts("../y", "src/a/b.ts") == ["src", "y"]
    assert import_parts("net/http.h", "a.c") == ["net", "http"]
    # Rust: from the crate's root folder, the importer's module, or a module above it.
    assert import_parts("crate::walk", "src/lib.rs") == ["src", "walk"]
    assert import_parts("crate::walk::Step", "tool/src/cli/args.rs") == ["tool", "src", "walk", "Step"]
    assert import_parts("self::walk", "src/cli/mod.rs") == ["src", "cli", "walk"]
    assert import_parts("super::walk", "src/cli/args.rs") == ["src", "cli", "walk"]
    assert import_parts("super::super::walk", "src/cli/args.rs") == ["src", "walk"]
    assert import_parts("walk::Step", "src/cli/args.rs") == ["src", "cli", "args", "walk", "Step"]
    # ...where the importer's module stands before a path that may not start there: a file
    # matching only those components is not what it names.
    assert import_path("walk::Step", "src/cli/args.rs") == (["src", "cli", "args", "walk", "Step"], 3)
    files = [FileNode(0, "src/cli/args.rs"), FileNode(1, "src/cli/args.stderr"), FileNode(2, "src/cli/args/walk.rs")]
    edges = resolve_edges(files, [], [ref(0, "import", "serde::Serialize", 1), ref(0, "import", "walk::Step", 2)])
    assert [(e.src, e.dst) for e in edges] == [(0, 2)]
    assert import_parts("os.path", "a.py") == ["os", "path"]


def test_module_resolution_picks_the_longest_matching_path():
    files = [FileNode(0, "a/http.py"), FileNode(1, "b/http.py"), FileNode(2, "b/client.py")]
    edges = resolve_edges(files, [], [ref(2, "import", "b.http", 1)])
    assert [(e.src, e.dst) for e in edges] == [(2, 1)]
    edges = resolve_edges(files, [], [ref(2, "import", "b.http.Thing", 1)])
    assert [(e.src, e.dst) for e in edges] == [(2, 1)]


def centrality(node_count: int, columns: EdgeColumns) -> np.ndarray:
    return node_values(node_count, columns)[0]


def test_centrality_scaling_makes_hubs_stand_out():
    # A hub that 200 leaves call is far above average: it reaches the boost's cap.
    star = centrality(201, EdgeColumns.of([Edge(i, 200, "call", 1, "exact") for i in range(200)]))
    assert star.dtype == np.float32
    assert star[200] > 4.3
    assert np.all(star[:200] == 0)
    # In a ring every node is average: no boost anywhere.
    ring = centrality(10, EdgeColumns.of([Edge(i, (i + 1) % 10, "call", 1, "exact") for i in range(10)]))
    assert np.allclose(ring, 0, atol=1e-5)
    # A node called by ten of eleven is well above average, but not a hub of the cap's size.
    small = centrality(11, EdgeColumns.of([Edge(i, 10, "call", 1, "exact") for i in range(10)]))
    assert 0 < small[10] < 4.3
    assert centrality(0, EdgeColumns.of([])).shape == (0,)


def test_centrality_leaves_out_overload_candidates_and_values_passed_on():
    # Ten callers of node 10; the same ten also reach node 11 only as a candidate overload or by
    # passing it on as a value, which neither its centrality nor its in-degree counts.
    calls = [Edge(i, 10, "call", 1, "exact") for i in range(10)]
    weak = [Edge(i, 11, "call", 2, "candidate") for i in range(10)] + [Edge(i, 11, "use", 3, "imported") for i in range(10)]
    ranks, degree = node_values(12, EdgeColumns.of(calls + weak))
    assert ranks[10] > 0 and ranks[11] == 0
    assert degree.tolist() == [0] * 10 + [10, 0]
    assert np.array_equal(ranks, centrality(12, EdgeColumns.of(calls)))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=160))))  # fmt: skip
def test_pagerank_is_rustworkx_float_for_float(graph_spec):
    """The core's PageRank gives rustworkx's floats to the last bit (dangling nodes, parallel edges,
    self-loops included), so no centrality, and no answer, moved when the index stopped using it."""
    n, pairs = graph_spec
    graph = rx.PyDiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from_no_data(pairs)
    expected = np.fromiter(rx.pagerank(graph, alpha=0.85, max_iter=200, tol=1e-8).values(), dtype=np.float64, count=n)
    src = np.array([s for s, _ in pairs], dtype=np.int64)
    dst = np.array([d for _, d in pairs], dtype=np.int64)
    ranks, in_degree, converged = graph_centrality(n, src, dst, alpha=0.85, max_iterations=200, tolerance=1e-8)
    assert converged
    assert ranks.tobytes() == expected.tobytes()
    assert in_degree.tolist() == [len({s for s, d in pairs if d == node}) for node in range(n)]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.integers(-1, 2), st.integers(0, 4)), max_size=12),
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.integers(-1, 2), st.integers(0, 4)), max_size=40),
    st.booleans(),
    st.booleans(),
)  # fmt: skip
@example([(1, 1, 0, 1, 0)], [(0, 0, 0, 0, 0), (1, 1, 0, 1, 3), (2, 2, 0, 0, 0)], True, False)  # a tie across the parts
def test_edges_merged_in_order_as_a_stable_sort_would(resolved, carried, carried_sorted, huge_lines):
    """`sorted_with` (merge of a sorted part, one key's sort, or four keys') gives the rows of a
    stable sort by (src, dst, kind, line): equal rows in their order, this part's first."""
    if carried_sorted:
        carried = sorted(carried, key=lambda row: row[:4])
    if huge_lines:  # too large for one int64 key: the sort of four keys
        resolved = [(s, d, k, line * 2**60, h) for s, d, k, line, h in resolved]
    def columns(rows):
        matrix = np.array(rows, dtype=np.int64).reshape(-1, EdgeColumns.WIDTH)
        return EdgeColumns(*(np.ascontiguousarray(matrix[:, i]) for i in range(EdgeColumns.WIDTH)))
    merged = columns(resolved).sorted_with(columns(carried))
    tagged = [(row, 0, i) for i, row in enumerate(resolved)] + [(row, 1, i) for i, row in enumerate(carried)]
    expected = [row for row, _, _ in sorted(tagged, key=lambda t: (t[0][:4], t[1], t[2]))]
    assert merged.matrix().tolist() == [list(row) for row in expected]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["run", "A.run", "b.A.run", "B.run", "A.B.run", "Arun", "a.A.run"])), max_size=25),
    st.sets(st.integers(0, 6)),
    st.sampled_from(["A.run", "B.run", "b.A.run", "run", "A.B.run", "x.run"]),
    st.booleans(),
)  # fmt: skip
def test_a_names_lookups_are_its_definitions_filtered_in_order(rows, files, method, by_file):
    """The lookups of one name's definitions by file and by qualified tail give what filtering
    every definition would, in their order, whether each file's definitions come together (as
    nodes do) or not."""
    if by_file:  # each file's definitions together, the files in an order of their own
        rows = sorted(rows, key=lambda row: (row[0] * 5) % 6)
    symbols = [SymbolNode(i, f, "run", q, "method", i, i) for i, (f, q) in enumerate(rows)]
    named = graph_module._Named(symbols)
    assert named.in_files(files) == [s for s in symbols if s.file_id in files]
    assert named.in_files(frozenset(files)) == [s for s in symbols if s.file_id in files]
    expected = [s for s in symbols if s.qualified_name == method or s.qualified_name.endswith("." + method)]
    assert named.typed(method) == expected


def test_pagerank_refuses_an_edge_outside_the_graph():
    with pytest.raises(ValueError, match="edge target 3 is not a node of a graph of 3 nodes"):
        graph_centrality(3, np.array([0]), np.array([3]), alpha=0.85, max_iterations=200, tolerance=1e-8)


def test_walks_callers_callees_and_dependants_with_paths():
    edges = [
        Edge(1, 0, "call", 5, "exact"),
        Edge(2, 1, "call", 7, "exact"),
        Edge(3, 1, "import", 1, "exact"),
        Edge(4, 2, "call", 9, "exact"),
        Edge(0, 5, "call", 2, "exact"),
    ]
    g = DependencyGraph(6, edges)
    assert [s.node for s in g.callers(0)] == [1]
    assert [s.node for s in g.callees(0)] == [5]
    reach = g.dependants(0, depth=2)
    assert [(s.node, s.depth) for s in reach] == [(1, 1), (2, 2), (3, 2)]
    assert [(e.src, e.dst) for e in reach[1].path] == [(2, 1), (1, 0)]
    assert [s.node for s in g.dependants(0, depth=3)] == [1, 2, 3, 4]


def test_in_degree_counts_distinct_dependants():
    edges = [Edge(0, 2, "call", 1, "exact"), Edge(0, 2, "import", 1, "exact"), Edge(1, 2, "call", 3, "exact"), Edge(2, 0, "call", 4, "exact")]
    assert node_values(3, EdgeColumns.of(edges))[1].tolist() == [1, 0, 2]
    assert node_values(3, EdgeColumns.of([]))[1].tolist() == [0, 0, 0]
    assert node_values(0, EdgeColumns.of([]))[1].tolist() == []


def test_edge_columns_keep_every_edge_and_sort_as_the_tuples_do():
    edges = [Edge(3, 1, "inherit", 2, "exact"), Edge(0, 2, "import", 1, "candidate"), Edge(0, 2, "call", 9, "by_name"),
             Edge(3, 1, "call", 4, "imported")]
    columns = EdgeColumns.of(edges)
    assert columns.rows() == [tuple(e) for e in edges]
    as_codes = np.array([(e.src, e.dst, code, e.line, how) for e, code, how in zip(edges, [2, 1, 0, 0], [0, 3, 2, 1])],
                        dtype=np.int64)
    assert EdgeColumns.of_matrix(as_codes, nodes=4).rows() == columns.rows()
    more = EdgeColumns.of([Edge(0, 2, "call", 3, "exact"), Edge(1, 0, "call", 1, "by_name")])
    assert columns.sorted_with(more).rows() == sorted([*map(tuple, edges), (0, 2, "call", 3, "exact"), (1, 0, "call", 1, "by_name")])
    assert len(EdgeColumns.of([])) == 0 and EdgeColumns.of([]).rows() == []


def test_edges_round_trip_as_a_matrix_and_one_out_of_range_is_refused(tmp_path):
    from maguyva.index import store

    edges = EdgeColumns.of([Edge(0, 3, "call", 7, "exact"), Edge(1, 0, "import", 1, "exact"), Edge(2, 1, "inherit", 4, "exact")])
    path = tmp_path / store.EDGES
    path.write_bytes(store.encode_edges(edges.matrix()))
    assert EdgeColumns.of_matrix(store.load_edges(path), nodes=4).rows() == edges.rows()
    with pytest.raises(ValueError, match="past the graph's 3"):
        EdgeColumns.of_matrix(store.load_edges(path), nodes=3)
    unknown = edges.matrix().copy()
    unknown[1, 2] = len(EDGE_KINDS)
    with pytest.raises(ValueError, match="kind out of range"):
        EdgeColumns.of_matrix(unknown, nodes=4)
    unknown = edges.matrix().copy()
    unknown[2, 4] = len(RESOLUTIONS)
    with pytest.raises(ValueError, match="resolution out of range"):
        EdgeColumns.of_matrix(unknown, nodes=4)


def test_python_builtin_method_names_are_methods_of_the_builtin_types():
    import io

    from maguyva.lexicon import PYTHON_BUILTIN_METHODS

    types = (dict, list, set, frozenset, str, bytes, bytearray, tuple, int, float, io.StringIO, io.BytesIO, io.TextIOWrapper)
    assert all(any(callable(getattr(t, name, None)) for t in types) for name in PYTHON_BUILTIN_METHODS)
    assert {"update", "append", "getvalue", "items"} <= PYTHON_BUILTIN_METHODS


def test_a_builtin_method_name_on_a_receiver_of_unknown_type_is_not_linked_by_name():
    files = [FileNode(0, "lib/progress.py"), FileNode(1, "app/run.py")]
    symbols = [sym(0, 0, "Bar.update", "method"), sym(1, 0, "Bar.advance", "method"), sym(2, 1, "main")]
    calls = [ref(1, "call", "update", 3, "main", "row.fields"), ref(1, "call", "advance", 4, "main", "bar")]
    assert [(e.line, e.how) for e in resolve_edges(files, symbols, calls)] == [(4, "by_name")]


def parsed_calls(sources: dict[str, str]) -> set[tuple[str, str, str]]:
    """(caller, callee, resolution) of every call edge of files parsed as an index parses them,
    each node named `path:qualified name`."""
    from maguyva.index.parse import parse_file

    files, symbols, references, names = [], [], [], {}
    for file_id, (path, text) in enumerate(sorted(sources.items())):
        parsed = parse_file(path, text.encode())
        files.append(FileNode(file_id, path))
        for s in parsed.symbols:
            symbols.append(SymbolNode(len(symbols), file_id, s.name, s.qualified_name, s.kind, s.start_line, s.end_line))
        references += [ReferenceRow(file_id, r.kind, r.name, r.line, r.enclosing, r.qualifier, r.imported_names)
                       for r in parsed.references]
    for node, path in enumerate(sorted(sources)):
        names[node] = path
    for s in symbols:
        names[len(files) + s.id] = f"{files[s.file_id].path}:{s.qualified_name}"
    return {(names[e.src], names[e.dst], e.how) for e in resolve_edges(files, symbols, references) if e.kind == "call"}


def test_rust_items_reexported_by_pub_use_are_found_where_they_are_defined():
    """`pub use self::boiler::Boiler;` and `pub use boiler::Valve as Tap;` in a crate's root, then
    `use crate::Boiler;` and `use crate::Tap;` in another module: the calls reach the
    definitions in `boiler.rs`, not those of the same names in another crate; `use super::*` in
    a module's inline tests is the module itself."""
    boiler = (
        "pub struct Boiler;\nimpl Boiler {\n    pub fn ignite() -> Self { Boiler }\n}\n"
        "pub struct Valve;\nimpl Valve {\n    pub fn open() {}\n}\n"
    )
    sources = {
        "plant/src/lib.rs": "pub mod boiler;\npub mod room;\npub use self::boiler::Boiler;\npub use boiler::Valve as Tap;\n",
        "plant/src/boiler.rs": boiler,
        "plant/src/room.rs": (
            "use crate::Boiler;\nuse crate::Tap;\n\npub fn heat() {\n    Boiler::ignite();\n    Tap::open();\n}\n\n"
            "mod tests {\n    use super::*;\n    fn warm() { heat(); }\n}\n"
        ),
        "kettle/src/boiler.rs": boiler,
    }
    calls = parsed_calls(sources)
    assert ("plant/src/room.rs:heat", "plant/src/boiler.rs:Boiler.ignite", "imported") in calls
    assert ("plant/src/room.rs:heat", "plant/src/boiler.rs:Valve.open", "imported") in calls
    assert ("plant/src/room.rs:tests.warm", "plant/src/room.rs:heat", "exact") in calls
    assert not {c for c in calls if c[1].startswith("kettle/")}, calls


def test_a_definition_inside_a_function_body_is_seen_only_in_its_own_file():
    """A test's local helper `fallback` nested in a test function is not what another file's
    `.fallback(...)` calls, though that file imports the test module; a module-level function of
    the same name is."""
    sources = {
        "mill/src/tests/mod.rs": (
            "use crate::Grinder;\n\nfn grinds() {\n    fn fallback() {}\n    fallback();\n}\n"
        ),
        "mill/src/tests/speed.rs": "use super::*;\n\nfn fast() {\n    Grinder::new().fallback();\n    helper();\n}\n",
        "mill/src/tests/util.rs": "pub fn helper() {}\n",
    }
    calls = parsed_calls(sources)
    assert ("mill/src/tests/mod.rs:grinds", "mill/src/tests/mod.rs:grinds.fallback", "exact") in calls
    assert not {c for c in calls if c[0].endswith(":fast") and c[1].endswith("fallback")}, calls
    symbols = [SymbolNode(0, 0, "grinds", "grinds", "function", 1, 9), sym(1, 0, "grinds.fallback", "function", 2),
               sym(2, 0, "Pan", "class", 20), sym(3, 0, "Pan.fallback", "method", 21)]
    assert graph_module.nested_definitions(symbols) == [1], "a method of a class is not nested in a function"


def test_a_call_no_evidence_resolves_links_each_of_a_few_definitions_as_a_candidate():
    """`pump.prime()` on a receiver of unknown type, with `prime` a method of two classes: both
    are candidates, never a certain edge; with more definitions than the limit, none. A bare C
    call of a function two platforms' files define is either; a bare call elsewhere, or one
    Python could not see, is left unlinked."""
    files = [FileNode(0, "well/hand.py"), FileNode(1, "well/electric.py"), FileNode(2, "farm.py"),
             FileNode(3, "src/unix/poll.c"), FileNode(4, "src/win/poll.c"), FileNode(5, "src/loop.c")]
    symbols = [sym(0, 0, "HandPump.prime", "method"), sym(1, 1, "ElectricPump.prime", "method"), sym(2, 2, "water"),
               sym(3, 3, "poll_once"), sym(4, 4, "poll_once"), sym(5, 5, "run"), sym(6, 0, "refill")]
    refs = [ref(2, "call", "prime", 3, "water", "pump"), ref(2, "call", "refill", 4, "water"),
            ref(5, "call", "poll_once", 2, "run")]
    n = len(files)

    def calls(limit):
        with config.using(config.DEFAULT.but(AMBIGUOUS_CALL_MAX_DEFINITIONS=limit)):
            return {(e.src - n, e.dst - n, e.how) for e in resolve_edges(files, symbols, refs) if e.kind == "call"}

    assert calls(2) == {(2, 0, "candidate"), (2, 1, "candidate"), (5, 3, "candidate"), (5, 4, "candidate")}
    assert calls(1) == set()
    assert calls(0) == set()
