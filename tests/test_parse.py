"""Parsing and chunking: language detection, bad input, chunk sizes and boundaries, text windows.

Per-language symbols and references are tested in test_parse_languages.py.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maguyva.index import chunk as chunk_module
from maguyva.index.chunk import (
    MAX_CHUNK_CHARS,
    MAX_CHUNK_LINES,
    SMALL_LINES,
    TEXT_WINDOW_LINES,
    TEXT_WINDOW_OVERLAP,
    significant_chars,
)
from maguyva.index.model import ParsedFile
from maguyva.index.parse import compiled as compiled_module
from maguyva.index.parse import language_for, parse_file, without_export_macros
from maguyva.index.parse.languages import LANGUAGES
from maguyva.index.parse.macros import first_branch_of_unbalanced_conditionals
from maguyva.lexicon import code_words, split_identifier, stem


def check_chunks(parsed: ParsedFile, content: bytes, *, overlapping: bool = False) -> None:
    """Invariants of every chunk list: in order, inside the file, true to the text, within the
    cap (a single line may be longer), and covering every non-blank line."""
    lines = content.decode("utf-8", errors="replace").split("\n")
    lines = [line.removesuffix("\r") for line in lines]
    previous_start, previous_end = 0, 0
    covered: set[int] = set()
    for chunk in parsed.chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines), chunk
        assert chunk.start_line > previous_start
        if not overlapping:
            assert chunk.start_line > previous_end, "code chunks do not overlap"
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert lines[chunk.start_line - 1].strip() and lines[chunk.end_line - 1].strip()
        if chunk.start_line != chunk.end_line:
            assert chunk.end_line - chunk.start_line < MAX_CHUNK_LINES
            assert significant_chars(chunk.text) <= MAX_CHUNK_CHARS
        covered.update(range(chunk.start_line, chunk.end_line + 1))
        previous_start, previous_end = chunk.start_line, chunk.end_line
    assert {i + 1 for i, line in enumerate(lines) if line.strip()} <= covered


# --- language detection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("setup.py", "python"),
        ("pkg/stubs/mod.pyi", "python"),
        ("SRC/MAIN.PY", "python"),
        ("src\\win\\tool.py", "python"),
        ("src/lib.rs", "rust"),
        ("cmd/server/main.go", "go"),
        ("app/index.js", "javascript"),
        ("app/index.mjs", "javascript"),
        ("app/view.jsx", "javascript"),
        ("app/index.ts", "typescript"),
        ("app/view.tsx", "tsx"),
        ("src/util.c", "c"),
        ("include/util.h", "c"),
        ("src/util.cpp", "cpp"),
        ("src/util.cc", "cpp"),
        ("include/util.hpp", "cpp"),
        ("Program.cs", "csharp"),
        ("lib/app.ex", "elixir"),
        ("test/app_test.exs", "elixir"),
        ("src/Main.hs", "haskell"),
        ("Main.java", "java"),
        ("build.gradle.kts", "kotlin"),
        ("init.lua", "lua"),
        ("index.php", "php"),
        ("app.rb", "ruby"),
        ("Rakefile", "ruby"),
        ("Main.scala", "scala"),
        ("App.swift", "swift"),
        ("build.zig", "zig"),
        ("install.sh", "bash"),
        ("lib.bash", "bash"),
        (".bashrc", "bash"),
        ("README.md", None),
        ("Makefile", None),
        ("config.yaml", None),
        ("notes.xyz", None),
        ("LICENSE", None),
        ("dir.py/readme", None),
    ],
)
def test_language_for(path: str, language: str | None) -> None:
    assert language_for(path) == language


@pytest.mark.parametrize(
    ("first_line", "language"),
    [
        (b"#!/usr/bin/env python3", "python"),
        (b"#!/usr/bin/python3.11", "python"),
        (b"#!/bin/bash", "bash"),
        (b"#!/bin/sh -e", "bash"),
        (b"#!/usr/bin/env -S node --no-warnings", "javascript"),
        (b"#!/usr/bin/env ruby", "ruby"),
        (b"#!/usr/bin/perl", None),
        (b"no shebang", None),
    ],
)
def test_shebang_decides_for_files_without_extension(
    first_line: bytes, language: str | None
) -> None:
    assert parse_file("bin/tool", first_line + b"\necho hi\n").language == language


def test_header_with_cpp_is_parsed_as_cpp() -> None:
    header = b"#pragma once\nnamespace geo {\nclass Shape {\n public:\n  int id() const;\n};\n}\n"
    parsed = parse_file("include/shape.h", header)
    assert parsed.language == "cpp"
    assert [s.qualified_name for s in parsed.symbols] == ["geo", "geo.Shape", "geo.Shape.id"]
    c_header = (
        b"#ifndef UTIL_H\n#define UTIL_H\nstruct point { int x; };\nint add(int, int);\n#endif\n"
    )
    assert parse_file("include/util.h", c_header).language == "c"


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["empty.py", "empty.rs", "empty.md", "empty"])
def test_empty_file(path: str) -> None:
    parsed = parse_file(path, b"")
    assert parsed.path == path
    assert parsed.chunks == [] and parsed.symbols == [] and parsed.references == []


def test_whitespace_only_file_has_no_chunks() -> None:
    assert parse_file("blank.go", b"\n\n   \n\t\n").chunks == []


def test_invalid_utf8_keeps_lines_right() -> None:
    content = (
        b"# caf\xe9 \xff\xfe broken bytes\n"
        b"NAME = '\xc3\x28'  # and a bad sequence\n"
        b"\n"
        b"def after():\n"
        b'    """Still found \xe2\x82."""\n'
        b"    return call_me()\n"
    )
    parsed = parse_file("bad.py", content)
    after = next(s for s in parsed.symbols if s.name == "after")
    assert (after.start_line, after.end_line) == (4, 6)
    assert after.docstring.startswith("Still found")
    call = next(r for r in parsed.references if r.kind == "call")
    assert (call.name, call.line, call.enclosing) == ("call_me", 6, "after")
    assert "\ufffd" in parsed.chunks[0].text
    check_chunks(parsed, content)


def test_multibyte_text_does_not_shift_lines() -> None:
    content = "# ünïcödé ✓ 日本語\ns = '🎉🎉🎉'\n\nfn = 1\n\ndef target():\n    return s\n".encode()
    parsed = parse_file("uni.py", content)
    target = next(s for s in parsed.symbols if s.name == "target")
    assert (target.start_line, target.end_line) == (6, 7)
    check_chunks(parsed, content)


def test_syntax_errors_still_give_the_valid_definitions() -> None:
    content = (
        b"def ok():\n"
        b"    return 1\n"
        b"\n"
        b"def broken(:\n"
        b"    pass pass )\n"
        b"\n"
        b"class Later:\n"
        b"    def method(self):\n"
        b"        return ok()\n"
    )
    parsed = parse_file("broken.py", content)
    names = {s.qualified_name: (s.start_line, s.end_line) for s in parsed.symbols}
    assert names["ok"] == (1, 2)
    assert names["Later"] == (7, 9)
    assert names["Later.method"] == (8, 9)
    check_chunks(parsed, content)


def test_unbalanced_braces_do_not_raise() -> None:
    content = b"function a() {\n  if (x) {\n    b(\n}\nclass {\n" * 50
    parsed = parse_file("broken.js", content)
    assert parsed.language == "javascript"
    check_chunks(parsed, content)


def test_very_long_line_is_one_chunk() -> None:
    content = b"var data = [" + b"1, " * 100_000 + b"];\nfunction after() { return data; }\n"
    parsed = parse_file("min.js", content)
    assert parsed.chunks[0].start_line == 1
    assert [s.name for s in parsed.symbols] == ["data", "after"]
    check_chunks(parsed, content)


def test_deep_nesting_does_not_raise() -> None:
    content = (
        b"x = " + b"[" * 5_000 + b"]" * 5_000 + b"\n" + b"y = (\n" * 2_000 + b"1" + b")" * 2_000
    )
    parsed = parse_file("deep.py", content)
    check_chunks(parsed, content)


def test_random_bytes_never_raise() -> None:
    rng = random.Random(7)
    alphabet = b"abc xyz(){}[]:;,.=+-*/\"'#\n\t\\\xff\xc3def class fn func if else return"
    for extension in ("py", "rs", "js", "c", "go", "rb", "ex", "hs", "zig", "sh", "txt"):
        for _ in range(3):
            content = bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 3_000)))
            parsed = parse_file(f"fuzz.{extension}", content)
            check_chunks(parsed, content, overlapping=extension == "txt")


def test_crlf_line_ends() -> None:
    content = b"def f():\r\n    '''Doc.'''\r\n    return g()\r\n\r\nX_MAX = 2\r\n"
    parsed = parse_file("crlf.py", content)
    f = parsed.symbols[0]
    assert (f.name, f.start_line, f.end_line, f.docstring) == ("f", 1, 3, "Doc.")
    assert all("\r" not in chunk.text for chunk in parsed.chunks)
    check_chunks(parsed, content)


# --- chunk boundaries -----------------------------------------------------------------------------


def _big_function(statements: int) -> tuple[bytes, list[tuple[int, int]]]:
    """A Python function of multi-line statements, and the line span of each statement."""
    lines = ["def big(items):", '    """A long function."""']
    spans = [(2, 2)]
    for i in range(statements):
        start = len(lines) + 1
        lines += [f"    value_{i} = compute(", f"        items[{i}],", "    )"]
        spans.append((start, start + 2))
    lines.append("    return value_0")
    spans.append((len(lines), len(lines)))
    return ("\n".join(lines) + "\n").encode(), spans


def test_large_function_is_split_at_statement_boundaries() -> None:
    content, statements = _big_function(100)
    parsed = parse_file("big.py", content)
    check_chunks(parsed, content)
    chunks = parsed.chunks
    assert len(chunks) >= 302 // MAX_CHUNK_LINES
    assert all(chunk.symbol == "big" for chunk in chunks)
    assert chunks[0].start_line == 1 and chunks[-1].end_line == len(content.splitlines())
    starts = {start for start, _ in statements}
    ends = {end for _, end in statements}
    for chunk in chunks[1:]:
        assert chunk.start_line in starts, "a chunk starts with a statement"
    for chunk in chunks:
        assert chunk.end_line in ends, "a chunk ends with a statement"


def test_large_class_gives_a_chunk_per_method() -> None:
    methods = "".join(
        f"    def method_{i}(self, x):\n"
        + "".join(f"        x = x + {j}\n" for j in range(8))
        + "        return x\n\n"
        for i in range(6)
    )
    content = f"class Big:\n    '''Docs.'''\n\n{methods}".encode()
    parsed = parse_file("big_class.py", content)
    check_chunks(parsed, content)
    assert [c.symbol for c in parsed.chunks] == [f"Big.method_{i}" for i in range(6)]
    assert parsed.chunks[0].start_line == 1, "the class header goes with its first method"


def test_small_class_is_one_chunk() -> None:
    content = (
        b"class Small:\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n"
    )
    parsed = parse_file("small.py", content)
    assert [(c.start_line, c.end_line, c.symbol) for c in parsed.chunks] == [(1, 6, "Small")]


def test_tiny_neighbours_are_merged() -> None:
    getters = "".join(
        f"    public int get{i}() {{\n        return v{i};\n    }}\n\n" for i in range(15)
    )
    content = (
        "package a;\n\nimport java.util.List;\nimport java.util.Map;\n\n"
        f"public class Bean {{\n{getters}}}\n"
    )
    parsed = parse_file("Bean.java", content.encode())
    check_chunks(parsed, content.encode())
    getter_chunks = [c for c in parsed.chunks if "get" in c.text]
    assert len(getter_chunks) < 15 // 2, "three-line getters are grouped"
    for chunk in getter_chunks:
        # A chunk of several getters sits in the class; a chunk of one is that getter.
        count = chunk.text.count("public int get")
        assert chunk.symbol == ("Bean" if count > 1 else f"Bean.{chunk.text.split('int ')[1][:5]}")
    assert parsed.chunks[0].text.startswith("package a;")
    assert "import java.util.Map;" in parsed.chunks[0].text, "imports go together"


def test_imports_merge_but_stay_out_of_a_large_definition() -> None:
    imports = "".join(f"import module_{i}\n" for i in range(8))
    body = "".join(f"    total += {i}\n" for i in range(20))
    content = f"{imports}\n\ndef work():\n    total = 0\n{body}    return total\n".encode()
    parsed = parse_file("work.py", content)
    check_chunks(parsed, content)
    assert [(c.start_line, c.end_line, c.symbol) for c in parsed.chunks] == [
        (1, 8, None),
        (11, 33, "work"),
    ]


def test_a_name_imported_under_another_is_called_by_the_imported_name() -> None:
    # `post(...)` after `from ledger import post_entry as post` calls post_entry; a qualified call
    # and a name the file defines itself are left as written.
    python = (
        b"from billing.ledger import post_entry as post, close_books\n"
        b"from billing.rates import Rate as BaseRate, Fee as charge\n\n\n"
        b"class LocalRate(BaseRate):\n    pass\n\n\n"
        b"def charge(amount):\n    return amount\n\n\n"
        b"def run():\n    post(1)\n    close_books()\n    charge(2)\n    clerk.post(3)\n"
    )
    references = parse_file("app/main.py", python).references
    calls = {(r.kind, r.name, r.qualifier) for r in references if r.kind not in ("import", "alias")}
    assert calls == {
        ("inherit", "Rate", ""), ("call", "post_entry", ""), ("call", "close_books", ""),
        ("call", "charge", ""), ("call", "post", "clerk"),
    }  # fmt: skip
    imports = [r for r in references if r.kind == "import"]
    assert [r.imported_names for r in imports] == [("post_entry", "close_books"), ("Rate", "Fee")]
    # Each name bound under another is an alias: the name imported, and the name bound to it
    # (what a file importing the bound name from this one means).
    aliases = [(r.name, r.qualifier, r.line) for r in references if r.kind == "alias"]
    assert aliases == [("post_entry", "post", 1), ("Rate", "BaseRate", 2), ("Fee", "charge", 2)]
    script = b"import { computeTotal as total, applyTax } from './cart/total';\nexport function checkout(items) {\n  return total(items) + applyTax(items);\n}\n"
    for path in ("web/checkout.js", "web/checkout.ts"):
        found = {(r.kind, r.name, r.qualifier) for r in parse_file(path, script).references if r.kind != "use"}
        assert found == {
            ("import", "./cart/total", ""), ("alias", "computeTotal", "total"), ("call", "computeTotal", ""),
            ("call", "applyTax", ""),
        }, path  # fmt: skip


def test_a_module_imported_under_another_name_is_written_out_where_it_qualifies_a_call() -> None:
    source = (
        b"import numpy as np\nimport billing.ledger as ledger\nimport os\n\n\n"
        b"def run():\n    np.array([1])\n    np.linalg.norm(2)\n    ledger.post_entry(3)\n    os.path.join('a')\n"
    )
    calls = [(r.name, r.qualifier) for r in parse_file("app/main.py", source).references if r.kind == "call"]
    assert calls == [("array", "numpy"), ("norm", "numpy.linalg"), ("post_entry", "billing.ledger"), ("join", "os.path")]


def test_a_call_on_a_name_bound_to_an_instance_is_qualified_by_its_type() -> None:
    # `s = Courier()` or `courier: Courier` binds the name to the type within its scope; a name
    # bound to two types there, and names of other scopes, stay as written.
    source = (
        b"class Client:\n    def fetch(self, url: str, courier: Courier = None):\n        courier.get(url)\n\n\n"
        b"def run(store: Store):\n    s = Courier()\n    s.get('a')\n    store.save()\n    courier.get('b')\n\n\n"
        b"def mixed():\n    x = Courier()\n    x = Other()\n    x.get()\n"
    )
    calls = [(r.name, r.line, r.qualifier) for r in parse_file("app/main.py", source).references if r.kind == "call" and r.qualifier]
    assert calls == [("get", 3, "Courier"), ("get", 8, "Courier"), ("save", 9, "Store"), ("get", 10, "courier"), ("get", 16, "x")]
    # Java's declared types, TypeScript's annotations and `new`, JavaScript's `new`.
    java = b"class Client {\n  void fetch(Courier courier, String url) {\n    courier.get(url);\n    Cache cache = new Cache();\n    cache.get(url);\n    other.get(url);\n  }\n}\n"
    script = b"export function fetch(courier: Courier, url?: string) {\n  const s = new Store();\n  const c: Cache = make();\n  s.get(url); c.get(url); courier.get(url); other.get(url);\n}\n"
    for path, source, expected in (
        ("src/Client.java", java, ["Courier", "Cache", "other"]),
        ("web/fetch.ts", script, ["Store", "Cache", "Courier", "other"]),
        ("web/fetch.js", script.replace(b": Courier", b"").replace(b"?: string", b"").replace(b": Cache", b""), ["Store", "c", "courier", "other"]),
        # Go: a method's receiver, a parameter, `var`, a composite literal (with `&` or not).
        ("web/meter.go", b"package web\n\nfunc (c *Meter) Reset() {\n\tc.get()\n}\n\nfunc handle(s *Courier, n int) {\n"
         b"\ts.get()\n\tvar e Ledger\n\te.get()\n\tr := &Mailbox{}\n\tr.get()\n\tq := Query{}\n\tq.get()\n\tother.get()\n}\n",
         ["Meter", "Courier", "Ledger", "Mailbox", "Query", "other"]),
    ):
        found = [r.qualifier for r in parse_file(path, source).references if r.kind == "call" and r.name == "get"]
        assert found == expected, path


def test_a_call_on_a_member_of_the_instance_is_qualified_by_the_member_s_type() -> None:
    """`self.courier = Courier()` (or `self.courier: net.Courier`) in one method types
    `self.courier` in every method of the class; a Java field types its bare name and `this.x`,
    a TypeScript field `this.x`. A bare name in a Python method does not see the class's."""
    source = (
        b"class Client:\n    def __init__(self):\n        self.courier: net.Courier = net.Courier()\n"
        b"        self.store = Store()\n        self.both = Store()\n\n"
        b"    def reset(self):\n        self.both = Cache()\n        courier = make()\n\n"
        b"    def run(self):\n        self.courier.get()\n        self.store.get()\n        self.both.get()\n"
        b"        courier.get()\n        other.courier.get()\n\n"
        b"        def later():\n            self.store.get()\n"
    )
    found = [r.qualifier for r in parse_file("app/client.py", source).references if r.name == "get"]
    assert found == ["Courier", "Store", "self.both", "courier", "other.courier", "Store"]
    java = b"class Client {\n  private Courier courier;\n  void run(Store courier2) {\n    courier.get();\n    this.courier.get();\n    courier2.get();\n  }\n}\n"
    script = b"class Client {\n  private courier: Courier;\n  run() {\n    this.courier.get();\n    courier.get();\n  }\n}\n"
    for path, source, expected in (
        ("src/Client.java", java, ["Courier", "Courier", "Store"]),
        ("web/client.ts", script, ["Courier", "courier"]),
    ):
        assert [r.qualifier for r in parse_file(path, source).references if r.name == "get"] == expected, path


def test_a_name_passed_as_an_argument_is_a_use() -> None:
    """Positional and keyword arguments, bare or on a receiver; a call's own callee and a call
    passed as an argument are calls, not uses. An alias is its imported name."""
    source = (
        b"from bells import ring as chime\n\n\n"
        b"def hang(bus, rows):\n    bus.on('x', chime)\n    rows.sort(key=by_weight)\n"
        b"    return list(map(self.polish, rows)), count(tally(rows))\n"
    )
    uses = [(r.name, r.qualifier, r.line) for r in parse_file("tower/hang.py", source).references if r.kind == "use"]
    assert uses == [("ring", "", 5), ("by_weight", "", 6), ("polish", "self", 7), ("rows", "", 7), ("rows", "", 7)]
    script = b"app.use(logger);\nitems.map(this.render);\nwrap(make(x));\n"
    for path in ("web/app.js", "web/app.ts"):
        uses = [(r.name, r.qualifier) for r in parse_file(path, script).references if r.kind == "use"]
        assert uses == [("logger", ""), ("render", "this"), ("x", "")], path


def test_a_rust_receiver_s_type_comes_from_its_declaration() -> None:
    """A parameter's type (behind `&`, `&mut` or generics), a `let` with a type, `Type { .. }`,
    `Type::new(..)`, and a field of the type for `self.field` in its methods: a call on such a
    name is recorded on the type; on a name bound to anything else, on the name."""
    source = (
        b"pub struct Mill { stone: Stone, sacks: Vec<Sack> }\n"
        b"impl Mill {\n    fn grind(&self, hopper: &mut Hopper<u8>) { self.stone.turn(); hopper.pour(); }\n}\n"
        b"fn run(belt: Belt, gate: &Gate) {\n"
        b"    belt.roll(); gate.open();\n"
        b"    let wheel = Wheel::new(); wheel.spin();\n"
        b"    let clock: Clock = make(); clock.tick();\n"
        b"    let sieve = Sieve { holes: 3 }; sieve.shake();\n"
        b"    let bag = fill(); bag.tie();\n"
        b"}\n"
    )
    calls = {(r.name, r.qualifier) for r in parse_file("mill/src/lib.rs", source).references if r.kind == "call"}
    assert {("turn", "Stone"), ("pour", "Hopper"), ("roll", "Belt"), ("open", "Gate"), ("spin", "Wheel"),
            ("tick", "Clock"), ("shake", "Sieve"), ("tie", "bag")} <= calls, calls


# C#: a parameter's type, a local declared with a type or bound to `new T(..)`, a field for
# `this.x` and its bare name. Kotlin: a parameter's type, a property declared with a type or
# bound to a capitalised call (a constructor), a class's constructor properties and properties.
# Both: a name bound to a lower-case call stays as written.
TYPED_RECEIVERS = {
    "mill/Mill.cs": (
        b"namespace Mill {\nclass Mill {\n  Stone stone;\n  Wheel wheel;\n"
        b"  void Run(Hopper hopper) {\n    var sieve = new Sieve(); Clock clock = Make(); var bag = Fill();\n"
        b"    hopper.Pour(); sieve.Shake(); clock.Tick(); bag.Tie(); this.wheel.Spin(); stone.Grind();\n  }\n}}\n"
    ),
    "mill/Mill.kt": (
        b"class Mill(val stone: Stone) {\n  private val wheel: Wheel = Wheel()\n"
        b"  fun Run(hopper: Hopper) {\n    val sieve = Sieve(); val clock: Clock = Make(); val bag = fill()\n"
        b"    hopper.Pour(); sieve.Shake(); clock.Tick(); bag.Tie(); this.wheel.Spin(); stone.Grind()\n  }\n}\n"
    ),
}


@pytest.mark.parametrize("path", sorted(TYPED_RECEIVERS))
def test_a_receiver_s_type_comes_from_its_declaration(path: str) -> None:
    calls = {(r.name, r.qualifier) for r in parse_file(path, TYPED_RECEIVERS[path]).references if r.kind == "call"}
    assert {("Pour", "Hopper"), ("Shake", "Sieve"), ("Tick", "Clock"), ("Tie", "bag"), ("Spin", "Wheel"),
            ("Grind", "Stone")} <= calls, calls


def test_a_javascript_reexport_brings_its_names() -> None:
    """`export { a } from './m'` and `export * from './m'` import as they export: the graph
    follows a name imported from such an index file to where it is defined."""
    source = b"export { spin, weave as loom } from './shuttle';\nexport * from './spool';\nexport * as all from './kit';\n"
    for path in ("loom/index.ts", "loom/index.js"):
        references = parse_file(path, source).references
        imports = [(r.name, r.imported_names) for r in references if r.kind == "import"]
        assert imports == [("./shuttle", ("spin", "weave")), ("./spool", ("*",)), ("./kit", ())], path
        assert [(r.name, r.qualifier) for r in references if r.kind == "alias"] == [("weave", "loom")], path


def test_chunks_do_not_straddle_the_edge_of_a_definition() -> None:
    body = "".join(f"    step_{i}()\n" for i in range(90))
    content = f"x = 1\ny = 2\nz = x + y\n\n\ndef long():\n{body}".encode()
    parsed = parse_file("long.py", content)
    check_chunks(parsed, content)
    assert parsed.chunks[0].end_line == 3
    assert parsed.chunks[1].start_line == 6
    assert {c.symbol for c in parsed.chunks[1:]} == {"long"}


def test_comment_above_a_definition_is_in_its_chunk() -> None:
    content = (
        b"package main\n\n"
        b"// Handle serves a request.\n"
        b"// It never fails.\n"
        b"func Handle(w Writer) {\n" + b"\tw.Write(1)\n" * 12 + b"}\n\n"
        b"// Other does something else entirely.\n"
        b"func Other() {\n" + b"\tdo()\n" * 12 + b"}\n"
    )
    parsed = parse_file("handle.go", content)
    check_chunks(parsed, content)
    spans = {c.symbol: (c.start_line, c.end_line) for c in parsed.chunks}
    assert spans["Handle"][0] <= 3 and spans["Handle"][1] == 18
    assert spans["Other"] == (20, 34)
    assert parsed.symbols[0].docstring == "Handle serves a request.\nIt never fails."


def test_small_definition_below_the_merge_threshold_is_counted_in_lines() -> None:
    # A function of SMALL_LINES lines merges with a neighbour; one line more does not.
    small = "def s():\n" + "    a = 1\n" * (SMALL_LINES - 2) + "    return a\n"
    large = "def l():\n" + "    a = 1\n" * (SMALL_LINES - 1) + "    return a\n"
    merged = parse_file("m.py", (small + "\n" + small.replace("s()", "t()")).encode())
    apart = parse_file("a.py", (large + "\n" + large.replace("l()", "k()")).encode())
    assert len(merged.chunks) == 1
    assert len(apart.chunks) == 2


# --- language details -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        (
            "deco.py",
            "class A:\n    @property\n    def x(self):\n        return 1\n\n"
            "    @staticmethod\n    async def fetch(url):\n        await get(url)\n\n"
            "async def top():\n    pass\n",
            [("A", "class"), ("A.x", "method"), ("A.fetch", "method"), ("top", "function")],
        ),
        (
            "members.js",
            "export default class Foo {\n  async bar() { await baz(); }\n  static qux() {}\n"
            "  get size() { return 1; }\n}\n"
            "module.exports.handler = async (event) => ok(event);\n"
            "Foo.prototype.render = function () { return 1; };\n",
            [
                ("Foo", "class"),
                ("Foo.bar", "method"),
                ("Foo.qux", "method"),
                ("Foo.size", "method"),
                ("handler", "function"),
                ("Foo.render", "function"),
            ],
        ),
        (
            "generic.rs",
            "impl<T: Clone> fmt::Display for Wrapper<T> {\n"
            '    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { write!(f, "x") }\n}\n',
            [("Wrapper.fmt", "method")],
        ),
        (
            "generic.go",
            "package x\nfunc Map[T any](xs []T) []T { return xs }\n"
            "func (l *List[T]) Push(v T) { l.items = append(l.items, v) }\n",
            [("Map", "function"), ("List.Push", "method")],
        ),
        (
            "kinds.kt",
            "enum class Color { RED; fun hex() = 1 }\nsealed interface S\n"
            "object Registry { fun get() = 1 }\n",
            [
                ("Color", "enum"),
                ("Color.hex", "method"),
                ("S", "interface"),
                ("Registry", "class"),
                ("Registry.get", "method"),
            ],
        ),
        (
            "outofline.cpp",
            "namespace a::b {\nvoid Widget::draw() const { paint(); }\n"
            "template <typename T> T Box<T>::get() { return v; }\n}\n",
            [("a.b", "module"), ("a.b.Widget.draw", "method"), ("a.b.Box.get", "method")],
        ),
        (
            "clauses.ex",
            'defmodule M do\n  @doc "Sum."\n  def sum([]), do: 0\n'
            "  def sum([h | t]), do: h + sum(t)\nend\n",
            [("M", "module"), ("M.sum", "function")],
        ),
    ],
)
def test_language_details(path: str, source: str, expected: list[tuple[str, str]]) -> None:
    parsed = parse_file(path, source.encode())
    assert [(s.qualified_name, s.kind) for s in parsed.symbols] == expected
    check_chunks(parsed, source.encode())


#: A C++ header written the way libraries with export macros write them.
_MACRO_HEADER = """#define LIB_EXPORT
LIB_BEGIN_NAMESPACE
namespace detail {
class helper {
  template <typename A>
  LIB_CONSTEXPR helper(const A& a) : value(a) {}
  int value;
};
}  // namespace detail

LIB_EXPORT template <typename C> class arg_store {
 public:
  LIB_CONSTEXPR20 void clear() {
    if LIB_CONSTEXPR20 (sizeof(C) > 1) { reset(); }
  }
};

class LIB_API format_error : public std::runtime_error {
 public:
  LIB_INLINE explicit format_error(const char* m) : std::runtime_error(m) {}
};
LIB_END_NAMESPACE
"""


def test_export_macros_do_not_hide_cpp_definitions() -> None:
    parsed = parse_file("lib/args.h", _MACRO_HEADER.encode())
    assert [(s.qualified_name, s.kind, s.start_line) for s in parsed.symbols] == [
        ("LIB_EXPORT", "constant", 1),
        ("detail", "module", 3),
        ("detail.helper", "class", 4),
        ("detail.helper.helper", "method", 6),
        ("arg_store", "class", 11),
        ("arg_store.clear", "method", 13),
        ("format_error", "class", 18),
        ("format_error.format_error", "method", 20),
    ]
    # The macros are blanked for the grammar only: what is shown is the file as written.
    signatures = {s.qualified_name: s.signature for s in parsed.symbols}
    assert signatures["format_error"] == "class LIB_API format_error : public std::runtime_error"
    assert any(c.text.startswith("LIB_EXPORT template <typename C> class arg_store {") for c in parsed.chunks)
    check_chunks(parsed, _MACRO_HEADER.encode())


def test_macro_blanking_keeps_offsets_and_leaves_other_code_alone() -> None:
    source = b"#define LIB_API __attribute__((visibility(\"default\")))\nLIB_API int f(void) { return MAX_LEN; }\n"
    blanked = without_export_macros(source, "c")
    assert len(blanked) == len(source)
    assert blanked.startswith(b"#define LIB_API ")  # a macro's own definition is kept
    assert b"MAX_LEN" in blanked  # a constant in an expression is code
    assert without_export_macros(source, "python") == source
    # A keyword must be a word of its own: "subclass" and "#elif" are not "class" and "if".
    other = b"subclass LIB_API x {\n#elif LIB_VERSION (2)\n"
    assert without_export_macros(other, "cpp") == other
    assert [(s.name, s.kind) for s in parse_file("f.c", source).symbols][-1] == ("f", "function")


_PLATFORM_BRANCHES = b"""static int drain(struct pipe* p) {
  int n = 0;
#if defined(HAVE_FAST_POLL)
  while (fast_ready(p)) {
#elif defined(HAVE_SLOW_POLL)
  while (slow_ready(p)) {
#else
  for (;;) {
#endif
    n += take(p);
  }
  /* #else { a brace in a comment */
  return n;
}

#ifdef _WIN32
int wait_pipe(struct pipe* p) { return win_wait(p); }
#else
int wait_pipe(struct pipe* p) { return posix_wait(p); }
#endif

int after(void) { return drain(0); }
"""


def test_branches_that_each_open_a_brace_do_not_hide_the_function_around_them() -> None:
    """The grammar reads every branch of an `#if`: three loops opened, one closed. Reduced to
    its first branch, the function is whole; branches that balance keep their definitions."""
    parsed = parse_file("pipes/drain.c", _PLATFORM_BRANCHES)
    assert [(s.name, s.start_line, s.end_line) for s in parsed.symbols] == [
        ("drain", 1, 14), ("wait_pipe", 17, 17), ("wait_pipe", 19, 19), ("after", 22, 22)]  # fmt: skip
    calls = {(r.name, r.enclosing) for r in parsed.references if r.kind == "call"}
    assert {("fast_ready", "drain"), ("take", "drain"), ("drain", "after")} <= calls
    assert ("slow_ready", "drain") not in calls  # the other branches are blanked for the grammar
    reduced = first_branch_of_unbalanced_conditionals(_PLATFORM_BRANCHES)
    assert len(reduced) == len(_PLATFORM_BRANCHES) and reduced.count(b"\n") == _PLATFORM_BRANCHES.count(b"\n")
    assert b"#if defined" not in reduced and b"slow_ready" not in reduced and b"#ifdef _WIN32" in reduced
    # What is shown is the file as written.
    assert any(b"slow_ready" in c.text.encode() for c in parsed.chunks)
    two = b"#if A\nint f(void) {\n#else\nint f(int x) {\n#endif\n  return 0;\n}\n#if B\nint g;\n#else\nlong g;\n#endif\n"
    assert first_branch_of_unbalanced_conditionals(two).count(b"#") == 3  # the balanced group is kept


def test_elixir_clauses_are_one_symbol_with_the_doc() -> None:
    source = (
        'defmodule M do\n  @doc "Sum."\n  def sum([]), do: 0\n'
        "  def sum([h | t]), do: h + sum(t)\nend\n"
    )
    total = parse_file("m.ex", source.encode()).symbols[1]
    assert (total.start_line, total.end_line, total.docstring) == (3, 4, "Sum.")


def test_doc_comment_set_off_by_a_blank_line() -> None:
    source = "/**\n * Send a response.\n */\n\nres.send = function send(body) {\n  return 1;\n};\n"
    send = parse_file("response.js", source.encode()).symbols[0]
    assert (send.qualified_name, send.docstring) == ("res.send", "Send a response.")
    # A plain comment is not taken across a blank line.
    plain = parse_file("a.js", b"// unrelated\n\nfunction f() {}\n").symbols[0]
    assert plain.docstring == ""


# --- text -----------------------------------------------------------------------------------------


def test_text_files_are_cut_into_overlapping_windows() -> None:
    paragraphs = []
    for i in range(40):
        paragraphs.append(f"## Section {i}\n\nSome words about topic {i}.\nAnother line.\n")
    content = "\n".join(paragraphs).encode()
    parsed = parse_file("docs/guide.md", content)
    assert parsed.language is None and parsed.symbols == [] and parsed.references == []
    check_chunks(parsed, content, overlapping=True)
    chunks = parsed.chunks
    assert len(chunks) > 1
    for previous, chunk in zip(chunks, chunks[1:], strict=False):
        assert chunk.end_line - chunk.start_line < TEXT_WINDOW_LINES
        assert previous.start_line < chunk.start_line
        assert previous.end_line - chunk.start_line + 1 <= TEXT_WINDOW_OVERLAP
        assert chunk.symbol is None


def test_text_windows_respect_the_character_cap() -> None:
    content = ("x" * 400 + "\n").encode() * 30
    parsed = parse_file("data.txt", content)
    check_chunks(parsed, content, overlapping=True)
    assert all(significant_chars(c.text) <= MAX_CHUNK_CHARS for c in parsed.chunks)
    assert len(parsed.chunks) >= 30 * 400 // MAX_CHUNK_CHARS


def _windows_by_steps(first: int, last: int, sizer: chunk_module._Sizer) -> list[tuple[int, int]]:
    """The cap applied one line at a time: the definition the bisections must agree with."""
    out, start = [], first
    while start <= last:
        end = start
        while end < last and sizer.fits(start, end + 1):
            end += 1
        out.append((start, end))
        start = end + 1
    return out


def _text_chunks_by_steps(lines: list[str]) -> list[tuple[int, int]]:
    sizer = chunk_module._Sizer(lines)
    out, start, count = [], 0, len(lines)
    while start < count:
        while start < count and sizer.blank(start):
            start += 1
        if start >= count:
            break
        end = start + 1
        while end < count and end - start < TEXT_WINDOW_LINES and sizer.fits(start, end):
            end += 1
        if end < count:
            for candidate in range(end - 1, start + (end - start) // 2, -1):
                if sizer.blank(candidate):
                    end = candidate + 1
                    break
        last = end - 1
        while last > start and sizer.blank(last):
            last -= 1
        out.append((start + 1, last + 1))
        if end >= count:
            break
        start = max(start + 1, end - min(TEXT_WINDOW_OVERLAP, (end - start) // 4))
    return out


# Lines from blank to several times the character cap, so that windows end at every limit.
_LINES = st.lists(
    st.one_of(st.just(""), st.just("   "), st.integers(1, 2 * MAX_CHUNK_CHARS).map(lambda n: " " + "w" * n)),
    max_size=3 * MAX_CHUNK_LINES,
)


@settings(max_examples=300)
@given(_LINES, st.data())
def test_windows_end_where_the_cap_is_first_passed(lines: list[str], data: st.DataObject) -> None:
    chunks = chunk_module.chunk_text(lines)
    assert [(c.start_line, c.end_line) for c in chunks] == _text_chunks_by_steps(lines)
    if lines:
        sizer = chunk_module._Sizer(lines)
        first = data.draw(st.integers(0, len(lines) - 1))
        last = data.draw(st.integers(first, len(lines) - 1))
        assert list(chunk_module._windows(first, last, sizer)) == _windows_by_steps(first, last, sizer)


def test_unknown_extension_is_text() -> None:
    content = b"\n".join(b"line %d" % i for i in range(100))
    parsed = parse_file("weird.unknownext", content)
    assert parsed.language is None
    assert parsed.chunks[0].start_line == 1 and parsed.chunks[-1].end_line == 100
    check_chunks(parsed, content, overlapping=True)


# --- threads --------------------------------------------------------------------------------------


def test_parse_file_from_several_threads() -> None:
    from test_parse_languages import CASES

    inputs = [(case.path, case.source.encode()) for case in CASES.values()] * 4
    expected = [parse_file(path, content) for path, content in inputs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda item: parse_file(*item), inputs))
    assert got == expected


CODE_AND_PROSE = {
    "ledger/accounts.py": (
        b'"""Ledger accounts: balances reconciled nightly."""\n'
        b"# Reconcile with the bank feed.\n"
        b"class AccountBook:\n"
        b'    """Holds every posting of a customer."""\n\n'
        b"    def settle_balance(self, amount):  # rounding happens upstream\n"
        b'        return self.postings.apply(amount, label="carry over")\n'
    ),
    "ledger/accounts.ts": (
        b"/** Ledger accounts: balances reconciled nightly. */\n"
        b"export class AccountBook {\n"
        b"  // rounding happens upstream\n"
        b"  settleBalance(amount: number) { return this.postings.apply(amount, 'carry over'); }\n"
        b"}\n"
    ),
}


@pytest.mark.parametrize("path", sorted(CODE_AND_PROSE))
def test_code_words_are_the_names_outside_comments_and_docstrings(path: str) -> None:
    words = parse_file(path, CODE_AND_PROSE[path]).code_words
    # Names, split and stemmed, and the words of string literals: what the code spells.
    assert {"account", "book", "settl", "balanc", "amount", "post", "appli", "carri", "over"} <= words
    # Comments and docstrings (a module's too) are prose about the code: left out.
    assert not {"ledger", "reconcil", "nightli", "bank", "feed", "round", "upstream", "hold", "custom"} & words
    # Too short to say anything.
    assert "on" not in words and "by" not in words


def test_a_file_without_a_syntax_tree_counts_every_name() -> None:
    words = parse_file("NOTES.txt", b"# Reconcile nightly\nsettle_balance after the bank feed\n").code_words
    assert {"reconcil", "nightli", "settl", "balanc", "aft", "the", "bank", "feed"} <= words


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="abcXYZ019_", min_size=1, max_size=24).filter(lambda s: not s[0].isdigit()))
def test_the_core_splits_an_ascii_name_as_split_identifier_does(name: str) -> None:
    expected = {stem(p) for p in (split_identifier(name) or [name.lower()]) if len(p) >= 3 and p.isalpha()}
    assert code_words(name.encode()) == expected
    # A name is a name wherever it stands, and a skipped span hides it.
    assert code_words(f"x = {name}(y);".encode()) == expected | code_words(b"x y")
    assert code_words(f"/*{name}*/".encode(), [(0, len(name) + 4)]) == frozenset()


def test_a_zig_container_is_of_the_kind_its_keyword_says() -> None:
    source = b"""const Shape = union(enum) { circle: f32, square: f32 };
const Handle = opaque {};
const Flags = packed struct { fast: bool, safe: bool };
const Wire = extern struct { len: u32 };
const MODE = enum { fast, slow };
const LIMIT = 10;
const Tagged = enum(u8) { one = 1 };
fn local() void {
    const Inner = struct { v: u8 };
    _ = Inner;
}
"""
    kinds = {symbol[0]: symbol[1] for symbol in parse_file("src/kinds.zig", source).symbols}
    # An enum named in capitals is the enum, not a constant; a container inside a function body
    # is no declaration of the file.
    assert kinds == {
        "Shape": "struct",
        "Handle": "type",
        "Flags": "struct",
        "Wire": "struct",
        "MODE": "enum",
        "LIMIT": "constant",
        "Tagged": "enum",
        "local": "function",
    }


def test_a_typed_definition_takes_the_first_kind_its_type_matches() -> None:
    rules = (("container", "^enum", "enum"), ("container", "^(enum|struct)", "struct"), ("container", "opaque", "type"))
    typed = compiled_module._compile(replace(LANGUAGES["zig"], typed_kinds=(*rules, ("keyword", "^enum", "macro"))))
    assert typed.typed_kind("container", "enum(u8)") == "enum"
    assert typed.typed_kind("container", "struct") == "struct"
    # Searched anywhere unless anchored, as a #match? predicate searches.
    assert typed.typed_kind("container", "packed opaque") == "type"
    assert typed.typed_kind("container", "error") is None
    # Each group has rules of its own.
    assert typed.typed_kind("keyword", "enum") == "macro"
    assert typed.typed_kind("keyword", "struct") is None


def test_an_elixir_form_is_of_the_kind_its_keyword_says() -> None:
    source = b"""defmodule Billing.Ledger do
  alias Billing.Entry
  import Billing.Math
  defstruct [:entries]

  def post(ledger, entry), do: add(ledger, entry)
  defp add(ledger, entry), do: %{ledger | entries: [entry | ledger.entries]}
  defguard positive(x) when x > 0
  defmacro audited(do: body), do: body
  defmacrop quiet(expr), do: expr
end

defprotocol Billing.Printable do
  def render(item)
end
"""
    parsed = parse_file("lib/ledger.ex", source)
    kinds = {symbol[0]: symbol[1] for symbol in parsed.symbols}
    # `alias` and `import` take a module as `defmodule` does: they define nothing.
    assert kinds == {
        "Ledger": "module",
        "post": "function",
        "add": "function",
        "positive": "function",
        "audited": "macro",
        "quiet": "macro",
        "Printable": "interface",
        "render": "method",
    }


def test_an_elixir_form_is_the_definition_import_base_or_doc_its_keyword_says() -> None:
    source = b"""defmodule Billing.Gateway do
  @moduledoc \"\"\"
  Talks to the card network.
  \"\"\"
  @behaviour Billing.Adapter
  @behaviour :gen_server
  import Billing.Math
  alias Billing.{Entry, Refund}
  use Billing.Logging

  @doc "Charges a card."
  def charge(card, cents), do: Billing.Math.round(cents)
end

defimpl Billing.Printable, for: Billing.Gateway do
  def render(gateway), do: inspect(gateway)
end
"""
    parsed = parse_file("lib/gateway.ex", source)
    assert [(s.name, s.kind, s.docstring) for s in parsed.symbols] == [
        ("Gateway", "module", "Talks to the card network."),
        ("charge", "function", "Charges a card."),
        ("render", "function", ""),
    ]
    # `@behaviour` names a base only as a module (an atom names an Erlang one, not indexed).
    assert [(r.kind, r.name, r.line) for r in parsed.references if r.kind in ("import", "inherit")] == [
        ("inherit", "Adapter", 5),
        ("import", "Billing.Math", 7),
        ("import", "Billing", 8),
        ("import", "Billing.Logging", 9),
        ("inherit", "Printable", 15),
    ]


def test_every_keyed_form_of_a_query_has_rules() -> None:
    for name in LANGUAGES:
        compiled = compiled_module.compiled_for(name)
        assert compiled is not None
        used = {pattern.kind for pattern in compiled.patterns if pattern.role == "keyed"}
        assert used == set(compiled.keyed_roles), name


def test_every_typed_definition_of_a_query_has_rules() -> None:
    for name, spec in LANGUAGES.items():
        typed = compiled_module.compiled_for(name)
        assert typed is not None
        used = {pattern.kind.removeprefix("typed_") for pattern in typed.patterns if pattern.kind.startswith("typed_")}
        assert used == set(typed.typed_kinds), name


_SUFFIXED = st.builds(
    lambda head, tail: head + tail,
    st.text(alphabet="abcdelorstuyzAEIOUXY", min_size=0, max_size=8),
    st.sampled_from(
        ["", "ations", "ation", "ators", "ator", "ating", "ated", "ates", "ate", "ions", "ion", "ences", "ence",
         "ings", "ing", "ers", "er", "ies", "ied", "ed", "sses", "ches", "shes", "xes", "zes", "s", "ss", "us",
         "is", "e", "y", "ay", "tted", "lled", "ting", "zzing", "ser", "ying"]
    ),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_SUFFIXED, min_size=1, max_size=6))
def test_the_core_stems_the_names_of_a_source_as_stem_does(names: list[str]) -> None:
    from maguyva._core import name_stems, name_words

    source = " ".join(f"{name}_x({name.upper()})" for name in names).encode()
    assert name_stems(source, []) == [stem(word) for word in name_words(source, [])]
    assert code_words(source) == frozenset(map(stem, name_words(source, [])))
