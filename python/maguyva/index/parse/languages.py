"""What maguyva knows about each language it parses, as data.

One `LanguageSpec` per language: how files are recognised, and tree-sitter queries that say which
nodes are definitions and which are references, read from `queries/<language>.scm`.
`maguyva.index.parse` runs the queries; nothing in here is logic. The queries follow one naming convention for their captures:

definitions
    ``@definition.<kind>``  the defining node; ``<kind>`` is one of `SYMBOL_KINDS`, or ``scope``
                            for a block that qualifies the names inside it without being a symbol
                            itself (Rust ``impl Type``, Swift ``extension Type``, Haskell
                            ``instance C Type``). A ``function`` directly inside a class-like
                            symbol or a scope is reported as a ``method``. ``typed_<group>``: the
                            kind is read from the ``@_type`` capture by the spec's `typed_kinds`.
    ``@name``               the defined name. A name with separators (``Foo::bar``, ``M.run``,
                            ``Account:deposit``) is split: the last part is the name, the rest
                            qualifies it, as a receiver does.
    ``@receiver``           the receiver type of a method written outside its type (Go).
    ``@body``               where the signature ends, when the node has no ``body`` field and
                            no child of a type in `LanguageSpec.body_types`.
calls
    ``@call.name``          the called name's last identifier.
    ``@call.qualifier``     the receiver or qualifier as written.
    ``@call.callee``        the whole callee, when the qualifier is not a node of its own: the
                            qualifier is then the text before the name.
    ``@call.ignore``        a name that looks like a call but is not one (Elixir ``@attr``).
imports
    ``@import``             the import statement (captures of one statement form one reference
                            per module).
    ``@import.module``      the module or path as written; ``@import.module.part`` pieces of it,
                            joined with ".".
    ``@import.name``        a name the statement imports.
inheritance
    ``@inherit.base``       a base class, implemented interface or trait; the inheriting type is
                            the innermost definition around it.
documentation
    ``@doc``                a documentation attribute for the definition below it (Elixir @doc).
    ``@doc.inner``          a docstring inside the definition it documents (Python, @moduledoc).
    ``@signature``          a separate type signature for the function of the same ``@name``
                            that follows it (Haskell).

Comment and attribute node types are listed per language rather than queried: comments right above
a definition are its docstring, and both attach to the code below them when chunking.

Captures whose name starts with "_" only serve predicates (``#eq?``, ``#match?``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Required, TypedDict, cast


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """How to recognise one language's files and read its syntax trees."""

    #: maguyva's name for the language; also its tree-sitter-language-pack name unless `grammar`.
    name: str
    #: File name endings, lower case, with the dot.
    extensions: tuple[str, ...]
    #: Query for definitions (see the module docs for the capture names).
    definitions: str
    calls: str = ""
    imports: str = ""
    inherits: str = ""
    #: Extra documentation patterns (``@doc``, ``@doc.inner``, ``@signature``).
    docs: str = ""
    #: Node types of comments.
    comments: frozenset[str] = frozenset({"comment"})
    #: Node types that decorate the definition after them (Rust ``#[derive]``, decorators).
    attributes: frozenset[str] = frozenset()
    #: Node types that wrap a definition (decorators, ``export``, ``template<...>``).
    wrappers: frozenset[str] = frozenset()
    #: Node types that hold a definition's body, for nodes without a ``body`` field.
    body_types: frozenset[str] = frozenset()
    #: Separators of a qualified definition name (``Foo::bar``), split into receiver and name.
    name_separators: tuple[str, ...] = ()
    #: Qualifiers dropped from a qualified definition name (``Foo.prototype.bar`` -> Foo.bar).
    ignored_qualifiers: tuple[str, ...] = ()
    #: Whether a definition with a qualified name is a method (C++ ``Foo::bar``).
    qualified_is_method: bool = False
    #: Whether consecutive definitions of one name are clauses of one function (Haskell
    #: equations, Elixir multi-clause functions) and make one symbol.
    merge_clauses: bool = False
    #: Exact file names (``Rakefile``).
    filenames: tuple[str, ...] = ()
    #: Interpreter names of a ``#!`` line.
    interpreters: tuple[str, ...] = ()
    #: tree-sitter-language-pack name, when it differs from `name`.
    grammar: str | None = None
    #: The kind of a definition captured as ``@definition.typed_<group>``, by the text of its
    #: ``@_type`` capture: (group, pattern, kind) triples, the kind of the group's first pattern
    #: found in it (as a ``#match?`` predicate finds its pattern); none found, no definition. One
    #: query pattern then stands for several kinds and compiles once instead of once a kind
    #: (about 20 ms each for Zig's containers, 7-14 ms for Elixir's `def` and `defmodule` forms).
    typed_kinds: tuple[tuple[str, str, str], ...] = ()
    #: What a form captured as ``@keyed.<group>`` is, by the text of its ``@_key`` capture (a
    #: keyword) and the node type of its ``@_arg`` capture: (group, pattern, role, kind, argument
    #: types) tuples, the first whose pattern the keyword matches (as a ``#match?`` predicate would)
    #: and whose types, when any, hold the argument's; none, nothing. The role is "definition"
    #: (of `kind`, the argument its name), "import" (the argument the module, the form the
    #: statement), "inherit" (the argument the base), "doc" or "doc.inner" (the argument the
    #: text). Forms of one shape that differ by their keyword are then one query pattern, which
    #: compiles once instead of once a role (6-7 ms each for Elixir's).
    keyed_roles: tuple[tuple[str, str, str, str, frozenset[str]], ...] = ()

    @property
    def grammar_name(self) -> str:
        """The tree-sitter-language-pack name of the grammar."""
        return self.grammar or self.name

#: The queries, one file per language (`queries/<name>.scm`): sections headed ";; definitions",
#: ";; calls", ";; imports", ";; inherits" and ";; docs"; a line ";; include <fragment>" stands for
#: the file `queries/_<fragment>.scm`, written once for the languages that share it.
_QUERY_FOLDER = resources.files("maguyva.index.parse") / "queries"
_SECTION = re.compile(r"^;; (definitions|calls|imports|inherits|docs)[ \t]*$", re.M)
_INCLUDE = re.compile(r"^[ \t]*;; include (\w+)[ \t]*$", re.M)


def _query_text(name: str) -> str:
    """The text of `queries/<name>.scm` with its includes expanded."""
    text = (_QUERY_FOLDER / f"{name}.scm").read_text(encoding="utf-8")
    return _INCLUDE.sub(lambda m: _query_text("_" + m.group(1)), text)


class _QuerySections(TypedDict, total=False):
    definitions: Required[str]
    calls: str
    imports: str
    inherits: str
    docs: str


def _queries(language: str) -> _QuerySections:
    """The query sections of `language`, by `LanguageSpec` field."""
    parts = _SECTION.split(_query_text(language))
    sections = {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}
    return cast(_QuerySections, sections)


BASH = LanguageSpec(
    name="bash",
    extensions=(".sh", ".bash", ".bats", ".zsh", ".ksh"),
    filenames=(".bashrc", ".bash_profile", ".profile", ".zshrc"),
    interpreters=("bash", "sh", "zsh", "ksh", "dash"),
    **_queries("bash"),
)


C = LanguageSpec(
    name="c",
    extensions=(".c", ".h"),
    **_queries("c"),
)

CPP = LanguageSpec(
    name="cpp",
    extensions=(
        ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp", ".inl",
        ".cu", ".cuh",
    ),
    wrappers=frozenset({"template_declaration"}),
    name_separators=("::",),
    qualified_is_method=True,
    **_queries("cpp"),
)


CSHARP = LanguageSpec(
    name="csharp",
    extensions=(".cs", ".csx"),
    name_separators=(".",),
    **_queries("csharp"),
)


ELIXIR = LanguageSpec(
    name="elixir",
    extensions=(".ex", ".exs"),
    interpreters=("elixir",),
    attributes=frozenset({"unary_operator"}),
    body_types=frozenset({"do_block"}),
    name_separators=(".",),
    merge_clauses=True,
    typed_kinds=(
        ("def", "^(def|defp|defguard|defguardp|defdelegate)$", "function"),
        ("def", "^(defmacro|defmacrop)$", "macro"),
    ),
    keyed_roles=(
        # `defmodule Name`, `defprotocol Name`, `import Mod` (and alias, require, use), `defimpl Proto`.
        ("call_alias", "^defmodule$", "definition", "module", frozenset()),
        ("call_alias", "^defprotocol$", "definition", "interface", frozenset()),
        ("call_alias", "^(import|alias|require|use)$", "import", "", frozenset()),
        ("call_alias", "^defimpl$", "inherit", "", frozenset()),
        # `@behaviour Mod`, `@doc "..."` (and typedoc), `@moduledoc "..."`.
        ("attribute", "^behaviour$", "inherit", "", frozenset({"alias"})),
        ("attribute", "^(doc|typedoc)$", "doc", "", frozenset()),
        ("attribute", "^moduledoc$", "doc.inner", "", frozenset()),
    ),
    **_queries("elixir"),
)

GO = LanguageSpec(
    name="go",
    extensions=(".go",),
    wrappers=frozenset({"type_declaration", "const_declaration", "var_declaration"}),
    **_queries("go"),
)

HASKELL = LanguageSpec(
    name="haskell",
    extensions=(".hs",),
    interpreters=("runghc", "runhaskell", "stack"),
    comments=frozenset({"comment", "haddock"}),
    body_types=frozenset({"class_declarations", "instance_declarations"}),
    merge_clauses=True,
    **_queries("haskell"),
)

JAVA = LanguageSpec(
    name="java",
    extensions=(".java",),
    comments=frozenset({"line_comment", "block_comment"}),
    **_queries("java"),
)


JAVASCRIPT = LanguageSpec(
    name="javascript",
    extensions=(".js", ".mjs", ".cjs", ".jsx"),
    interpreters=("node", "nodejs"),
    attributes=frozenset({"decorator"}),
    wrappers=frozenset({"export_statement"}),
    name_separators=(".",),
    ignored_qualifiers=("prototype", "exports", "module"),
    **_queries("javascript"),
)


TYPESCRIPT = LanguageSpec(
    name="typescript",
    extensions=(".ts", ".mts", ".cts"),
    interpreters=("deno", "ts-node", "tsx"),
    attributes=frozenset({"decorator"}),
    wrappers=frozenset({"export_statement", "ambient_declaration"}),
    name_separators=(".",),
    ignored_qualifiers=("prototype", "exports", "module"),
    **_queries("typescript"),
)

TSX = LanguageSpec(
    name="tsx",
    extensions=(".tsx",),
    attributes=frozenset({"decorator"}),
    wrappers=frozenset({"export_statement", "ambient_declaration"}),
    name_separators=(".",),
    ignored_qualifiers=("prototype", "exports", "module"),
    # TSX is TypeScript with JSX in it: the same definitions, calls and imports.
    **_queries("typescript"),
)

KOTLIN = LanguageSpec(
    name="kotlin",
    extensions=(".kt", ".kts"),
    comments=frozenset({"line_comment", "multiline_comment"}),
    body_types=frozenset({"function_body", "class_body", "enum_class_body"}),
    **_queries("kotlin"),
)

LUA = LanguageSpec(
    name="lua",
    extensions=(".lua",),
    interpreters=("lua", "luajit"),
    name_separators=(".", ":"),
    **_queries("lua"),
)

PHP = LanguageSpec(
    name="php",
    extensions=(".php", ".phtml", ".php3", ".php4", ".php5", ".php7", ".phps"),
    interpreters=("php",),
    attributes=frozenset({"attribute_list"}),
    name_separators=("\\",),
    **_queries("php"),
)

PYTHON = LanguageSpec(
    name="python",
    extensions=(".py", ".pyi", ".pyw"),
    interpreters=("python", "python2", "python3", "pypy", "pypy3"),
    attributes=frozenset({"decorator"}),
    wrappers=frozenset({"decorated_definition"}),
    **_queries("python"),
)

RUBY = LanguageSpec(
    name="ruby",
    extensions=(".rb", ".rake", ".gemspec", ".ru"),
    filenames=("Rakefile", "Gemfile", "Guardfile", "Vagrantfile", "Podfile", "Brewfile"),
    interpreters=("ruby", "jruby"),
    name_separators=("::",),
    **_queries("ruby"),
)

RUST = LanguageSpec(
    name="rust",
    extensions=(".rs",),
    comments=frozenset({"line_comment", "block_comment"}),
    attributes=frozenset({"attribute_item"}),
    **_queries("rust"),
)

SCALA = LanguageSpec(
    name="scala",
    extensions=(".scala", ".sc", ".sbt"),
    interpreters=("scala",),
    comments=frozenset({"comment", "block_comment"}),
    attributes=frozenset({"annotation"}),
    **_queries("scala"),
)

SWIFT = LanguageSpec(
    name="swift",
    extensions=(".swift",),
    comments=frozenset({"comment", "multiline_comment"}),
    **_queries("swift"),
)

ZIG = LanguageSpec(
    name="zig",
    extensions=(".zig", ".zon"),
    comments=frozenset({"line_comment", "doc_comment", "container_doc_comment"}),
    typed_kinds=(
        ("container", "^enum", "enum"),
        ("container", "^(struct|union)", "struct"),
        ("container", "^opaque", "type"),
    ),
    **_queries("zig"),
)

#: Every language maguyva parses, by name.
LANGUAGES: dict[str, LanguageSpec] = {
    spec.name: spec
    for spec in (
        BASH, C, CPP, CSHARP, ELIXIR, GO, HASKELL, JAVA, JAVASCRIPT, KOTLIN, LUA, PHP, PYTHON,
        RUBY, RUST, SCALA, SWIFT, TYPESCRIPT, TSX, ZIG,
    )
}
