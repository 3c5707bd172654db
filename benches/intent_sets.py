"""Query sets for the intents the public benchmark leaves out: definitions, references, impact
and exact strings, on the development repositories, with ground truth from tools that share
nothing with maguyva's own parsing (tree-sitter).

    python benches/intent_sets.py [--repos /work/benchdata/repos] [--bench ../shared/bench]
                                  [--out benches/intent_queries] [--seed 20261130] [--per-repo 30]
                                  [--python-repos NAME ...]

Writes OUT/<intent>.jsonl for find_definition, find_references, impact_analysis and exact_match,
one query per line:

    {"repo", "language", "intent", "query", "subject", "kind", "targets": [{"path", "start_line", "end_line"}]}

Target paths are relative to the repository root (like the benchmark's annotations), lines are
1-based and inclusive. OUT/manifest.json records the seed, the tool versions and the counts.
The output depends only on the trees, the tools' versions and the seed.

Ground truth
------------
Python (fastapi, requests, click): the standard `ast` module and jedi.
- Definitions: every `def`, `async def` and `class` under benchmark_root. A definition's span runs
  from its first decorator (or the `def`/`class` line) to its last line (`end_lineno`).
- Call sites: every `ast.Call`, and every bare decorator (`@name`, `@obj.name`: applying it is a
  call). The caller is the innermost enclosing function or method. Decorators, default values and
  base classes run in the enclosing scope, so they belong to it. A call made in a class body or at
  module level belongs to the statement that makes it (its span, decorators included, is the target).
- Resolution: jedi's `goto(follow_imports=True)` on the called name. jedi's search path is the
  repository's import root plus the standard library, never site-packages, where other copies of
  click and requests are installed. A call site refers to a definition when jedi lands on that
  definition's name. Call sites are only resolved when their name is the name of some function or
  method of the repository. A site jedi cannot resolve at all (an attribute of an object of unknown
  type) makes its name *incomplete*: the true callers of a definition by that name are unknown.

Go (gin), Java (gson), C (libuv); C# (dapper) and Ruby (sinatra) for definitions only:
universal-ctags (`--fields=+neKZS`, JSON output; for C, `.h` files are parsed as C).
- Definitions: ctags tags of these kinds that carry an end line: Go func, struct, interface,
  type; Java class, interface, enum, annotation, method; C function, struct, union, enum;
  C# class, interface, struct, enum, method; Ruby class, module, method, singletonMethod.
  The span runs from the tag's line to its end line.
- Call sites (Go, Java, C): a regular expression, NAME followed by "(", over the source with its
  comments and string and character literals blanked out by a small lexer written for these
  three languages. Not calls: the name on its own definition's line (the declaration), after
  `new` or `@` (Java constructors, annotations), and in Go a call qualified by a package the file
  imports from outside the module (`strings.Index(`, `json.Marshal(`). The caller is the innermost
  function (Go func, Java method, C function) whose ctags span holds the line; call sites outside
  every function (package-level initializers, macros, prototypes) are dropped.
- A name can only be attributed by its spelling, so only names that ctags defines exactly once in
  the tree, that are at least 4 characters long and that are not on a short list of method names
  every standard library has (String, Close, toString, ...) get callers; every other name is
  incomplete. In C, names the C library's headers declare (`scandir`, which libuv reimplements
  for one platform) are incomplete too: the headers are those of Debian's libc6-dev
  (`dpkg -L libc6-dev`), or /usr/include/*.h without dpkg.

TypeScript (zod) and JavaScript (express), references and impact: the TypeScript compiler's own
parser and type checker (`ts_facts.js`, run by node with the `typescript` package, Debian's
node-typescript; its version is in the manifest).
- Definitions: function declarations, methods, classes, and variables, object properties and
  assignments (`app.use = function`) bound to a function or an arrow function. The span is the
  declaration's.
- Call sites: every call and `new` whose callee is a name or a property; the checker resolves the
  name (through imports and aliases) to its declarations, and a site counts for the one
  definition of the repository it resolves to. The caller is the innermost function holding the
  site; a site outside every function (a module's statements, a callback handed to a test
  runner) is its own line. A site the checker resolves to nothing (a property of an untyped
  object, most of JavaScript's), or to several definitions, makes its name incomplete. `.d.ts`
  files are not read.

Exact strings (every language listed in LITERAL_REPOS): candidate literals are taken from the
source (Python: `ast` string constants that are not docstrings and appear verbatim on one line;
other languages: double-quoted, and for JavaScript, TypeScript, PHP and Ruby also single-quoted,
literals found with a regular expression per line). A candidate is 15-80 characters of words,
spaces and light punctuation (no escapes, quotes, format placeholders or interpolation), with at
least three space-separated words. Its targets are every line holding it, found by ripgrep
(`rg -F -n --no-ignore --hidden`) over benchmark_root; candidates found on more than 10 lines are
dropped (they are boilerplate, not messages one greps for).

Query rules
-----------
- Subjects are names defined exactly once under benchmark_root (a tag nested in a tag of the same
  name, a Java or C# constructor, is part of it and is never a subject itself), plain identifiers
  of at least 4 characters, not dunder, not ctags' made-up names of anonymous types, not on the
  common-method list, not test functions (test_*, testX*, Test*, Benchmark*, Example*, Fuzz*).
  Test functions are taken to have no callers (a test framework runs them).
- find_definition: targets are the definition's span. Wording by kind and language:
  "def NAME", "class NAME", "func NAME", "type NAME", "function NAME", "struct NAME",
  "interface NAME", "enum NAME", "module NAME", or "where is NAME defined" (a third of the time,
  and always for Java and C# methods, which have no keyword of their own).
- find_references: functions and methods with at least one caller and a complete name; targets
  are the callers' spans. Wording: "who calls NAME", "what calls NAME", "callers of NAME",
  "where is NAME used".
- impact_analysis: the callers to depth 2, i.e. the callers and the callers of the callers
  (the definition itself left out). The subject and each of its callers must have a complete
  name, so that depth 2 is known; at least two targets, so that the set asks more than
  find_references does. Wording: "what depends on NAME", "what breaks if I change NAME",
  "impact of changing NAME".
- exact_match: targets are the lines. Wording: '"TEXT"', 'find "TEXT"',
  'where does the message "TEXT" come from'.
- Sampling: for every repository and intent, the candidates in a fixed order, then
  `random.Random(f"{seed}:{repo}:{intent}").sample` of at most --per-repo of them; each query's
  wording is drawn from the same generator.

Limits
------
- Python references are calls only: a function passed as a value (`Depends(get_db)`, a callback)
  is not a call site; neither is a call jedi resolves to a different definition (so a name
  shadowed by a local variable does not count).
- jedi follows `self.method()` through the class hierarchy to the definition it finds first;
  overrides in subclasses are not callers of the base method.
- Go, Java and C call sites are matched by name: a method of an outside type that has the same
  spelling as a repository function (beyond the common-method list) would be counted as a caller;
  a function called through a pointer or an interface is not seen. Names defined more than once
  (interface methods with implementations, overloads, platform variants in libuv) are left out.
- Exact-string targets include lines in files maguyva does not index (documentation, data); the
  scorer counts only targets covered by the index, like the benchmark does.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import json
import os
import random
import re
import shutil
import subprocess
import sys
import sysconfig
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

INTENTS = ("find_definition", "find_references", "impact_analysis", "exact_match")

#: Which repositories feed which intent, and with which tool.
PYTHON_REPOS = ("fastapi", "requests", "click")
#: ctags language name and the source globs of each repository read through ctags.
CTAGS_REPOS: dict[str, tuple[str, tuple[str, ...]]] = {
    "gin": ("Go", ("*.go",)),
    "gson": ("Java", ("*.java",)),
    "libuv": ("C", ("*.c", "*.h")),
    "dapper": ("C#", ("*.cs",)),
    "sinatra": ("Ruby", ("*.rb",)),
}
#: Repositories whose call sites the regular expression can find (parenthesised calls only).
CALL_GRAPH_CTAGS_REPOS = ("gin", "gson", "libuv")
#: Repositories read by the TypeScript compiler (`ts_facts.js`): their source globs.
TYPESCRIPT_REPOS: dict[str, tuple[str, ...]] = {"zod": ("*.ts",), "express": ("*.js",)}
#: What a definition kind of `ts_facts.js` may be asked as ("function NAME", "class NAME").
TYPESCRIPT_KEYWORDS: dict[str, str | None] = {"function": "function", "class": "class", "method": None}
LITERAL_REPOS = ("fastapi", "requests", "click", "gin", "gson", "libuv", "express", "zod", "monolog",
                 "sinatra", "axum", "dapper")
#: Source globs per language for picking literals (ripgrep still searches every file).
LITERAL_GLOBS: dict[str, tuple[str, ...]] = {
    "python": ("*.py",), "go": ("*.go",), "java": ("*.java",), "c": ("*.c", "*.h"),
    "javascript": ("*.js",), "typescript": ("*.ts",), "php": ("*.php",), "ruby": ("*.rb",),
    "rust": ("*.rs",), "csharp": ("*.cs",),
}
SINGLE_QUOTED_LANGUAGES = frozenset({"javascript", "typescript", "php", "ruby"})

#: ctags kinds taken as definitions, per ctags language, mapped to the query keyword they get
#: (None: only "where is NAME defined" fits).
DEFINITION_KINDS: dict[str, dict[str, str | None]] = {
    "Go": {"func": "func", "struct": "type", "interface": "type", "type": "type"},
    "Java": {"class": "class", "interface": "interface", "enum": "enum", "annotation": None, "method": None},
    "C": {"function": "function", "struct": "struct", "union": "union", "enum": "enum"},
    "C#": {"class": "class", "interface": "interface", "struct": "struct", "enum": "enum", "method": None},
    "Ruby": {"class": "class", "module": "module", "method": "def", "singletonMethod": "def"},
}
#: The kinds that are functions (callers and callees) per ctags language.
FUNCTION_KINDS: dict[str, frozenset[str]] = {
    "Go": frozenset({"func"}), "Java": frozenset({"method"}), "C": frozenset({"function"}),
    "C#": frozenset({"method"}), "Ruby": frozenset({"method", "singletonMethod"}),
}
#: Tags that do not define a name in the program (documents, package clauses, imports).
IGNORED_CTAGS_KINDS = frozenset({"package", "packageName", "chapter", "section", "subsection",
                                 "subsubsection", "target", "message", "anonMember"})

#: Method names that standard libraries define on many types, so that a call spelled so is as
#: likely to reach an outside type as the repository's one definition.
COMMON_METHODS = frozenset("""
    Error String Write Read Close Less Swap ServeHTTP Reset Flush Lock Unlock Done Value Deadline
    Handle Unwrap Format Scan WriteHeader WriteString Header Marshal Unmarshal MarshalJSON
    UnmarshalJSON Hijack Push Status Size Copy Load Store Delete Range Next Bytes Name Type Kind
    Elem Field Index Init Open Call Start Stop Wait Parse Print Printf Println Sprintf Errorf
    equals hashCode toString clone compareTo iterator hasNext next remove size isEmpty contains
    containsKey append length charAt substring indexOf valueOf close flush read write print
    println format getClass getName getMessage getValue getKey getType apply accept test create
    build parse peek push clear values ordinal name main init open start stop reset
    """.split())

REFERENCE_TEMPLATES = ("who calls {name}", "what calls {name}", "callers of {name}", "where is {name} used")
IMPACT_TEMPLATES = ("what depends on {name}", "what breaks if I change {name}", "impact of changing {name}")
LITERAL_TEMPLATES = ('"{text}"', 'find "{text}"', 'where does the message "{text}" come from')
WHERE_DEFINED = "where is {name} defined"

MIN_NAME_CHARS = 4
#: How ctags names an anonymous struct, union or enum ("__anon90c940e10308").
CTAGS_ANONYMOUS = "__anon"
LITERAL_CHARS = (15, 80)
LITERAL_MIN_WORDS = 3
LITERAL_MAX_LINES = 10
_LITERAL_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9 ,.:;!?()/_\-]*[A-Za-z0-9.!?)]")
_WORD = re.compile(r"[A-Za-z]{2,}")
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_TEST_NAME = re.compile(r"^(test_|test[A-Z]|Test|Benchmark|Example|Fuzz)")
#: A name a person would type as is: an identifier (Ruby's may end in ? or !), no qualification.
_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[?!]?")


# ---------------------------------------------------------------------------------------------
# Facts about one repository


@dataclass(frozen=True, slots=True)
class Span:
    path: str  # relative to the repository root
    start_line: int
    end_line: int

    def as_target(self) -> dict:
        return {"path": self.path, "start_line": self.start_line, "end_line": self.end_line}


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    kind: str  # the tool's own word: "function", "method", "class" (ast); ctags kinds otherwise
    span: Span
    name_line: int  # the line holding the name: jedi and ctags report this one
    is_function: bool
    keyword: str | None  # the definition keyword a query may use ("def", "func", ...)


#: A caller is a function (a Definition, whose own callers make depth 2) or, for Python, the
#: top-level statement of a class body or module that makes the call.
Caller = Definition | Span


@dataclass
class RepoFacts:
    name: str
    language: str
    root: Path  # the repository root
    definitions: list[Definition] = field(default_factory=list)
    callers: dict[Definition, set[Caller]] = field(default_factory=lambda: defaultdict(set))
    #: Names whose call sites could not all be attributed: their callers are unknown.
    incomplete: set[str] = field(default_factory=set)
    #: How many times each name is defined (nested same-name tags not counted).
    name_counts: dict[str, int] = field(default_factory=dict)

    def is_plain_name(self, name: str) -> bool:
        """Unambiguous enough to ask about by name alone."""
        return (self.name_counts.get(name) == 1 and len(name) >= MIN_NAME_CHARS
                and _PLAIN_IDENTIFIER.fullmatch(name) is not None and not name.startswith(CTAGS_ANONYMOUS)
                and not (name.startswith("__") and name.endswith("__"))
                and name not in COMMON_METHODS and not _TEST_NAME.match(name))

    def has_known_callers(self, definition: Definition) -> bool:
        """Whether every caller of this function is known (a test function has none)."""
        return definition.is_function and definition.name not in self.incomplete


def _inside(inner: Definition, outer: Definition) -> bool:
    return (inner is not outer and inner.span != outer.span and inner.span.path == outer.span.path
            and outer.span.start_line <= inner.span.start_line and inner.span.end_line <= outer.span.end_line)


def nested_in_namesake(definitions: list[Definition]) -> set[int]:
    """Positions of definitions lying inside one of the same name (Java and C# constructors)."""
    by_name: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(definitions):
        by_name[d.name].append(i)
    return {i for same in by_name.values() for i in same
            if any(_inside(definitions[i], definitions[j]) for j in same)}


def count_names(definitions: list[Definition]) -> dict[str, int]:
    """Definitions per name, a definition nested in one of the same name (a constructor) not counted."""
    nested = nested_in_namesake(definitions)
    counts: dict[str, int] = defaultdict(int)
    for i, d in enumerate(definitions):
        if i not in nested:
            counts[d.name] += 1
    return dict(counts)


def source_files(root: Path, globs: Iterable[str]) -> list[Path]:
    """Files under root matching any of the globs, in a fixed order."""
    found = {p for g in globs for p in root.rglob(g) if p.is_file() and not p.is_symlink()}
    return sorted(found)


def read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------------------------
# Python: ast + jedi


@dataclass(frozen=True, slots=True)
class PythonCallSite:
    path: Path
    line: int
    column: int  # of the called name, in characters (jedi's unit), 0-based
    name: str
    caller: Caller


class _PythonFileFacts(ast.NodeVisitor):
    """Definitions and call sites of one Python file."""

    def __init__(self, path: Path, rel: str, lines: list[str]):
        self.path, self.rel, self.lines = path, rel, lines
        self.definitions: list[Definition] = []
        self.calls: list[PythonCallSite] = []
        self._scopes: list[Definition] = []
        self._statement: ast.stmt | None = None  # the current top-level statement of a class or module

    def _in_function(self) -> bool:
        return bool(self._scopes) and self._scopes[-1].is_function

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.stmt) and not self._in_function():
            outer, self._statement = self._statement, node
            super().visit(node)
            self._statement = outer
        else:
            super().visit(node)

    def _caller(self) -> Caller:
        if self._in_function():
            return self._scopes[-1]
        statement = self._statement
        assert statement is not None
        start = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", [])])
        return Span(self.rel, start, statement.end_lineno or statement.lineno)

    def _define(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> Definition:
        is_function = not isinstance(node, ast.ClassDef)
        in_class = bool(self._scopes) and not self._scopes[-1].is_function
        kind = "class" if not is_function else ("method" if in_class else "function")
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        definition = Definition(node.name, kind, Span(self.rel, start, node.end_lineno or node.lineno),
                                node.lineno, is_function, "class" if not is_function else "def")
        self.definitions.append(definition)
        return definition

    def _visit_definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        definition = self._define(node)
        # Decorators, defaults, annotations and bases are evaluated in the enclosing scope.
        for decorator in node.decorator_list:
            if isinstance(decorator, (ast.Name, ast.Attribute)):
                self._record_call(decorator)
            self.visit(decorator)
        if isinstance(node, ast.ClassDef):
            for expr in [*node.bases, *node.keywords]:
                self.visit(expr)
        else:
            self.visit(node.args)
            if node.returns is not None:
                self.visit(node.returns)
        self._scopes.append(definition)
        for statement in node.body:
            self.visit(statement)
        self._scopes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _visit_definition

    def visit_Call(self, node: ast.Call) -> None:
        self._record_call(node.func)
        self.generic_visit(node)

    def _record_call(self, func: ast.expr) -> None:
        if isinstance(func, ast.Name):
            line, byte_col, name = func.lineno, func.col_offset, func.id
        elif isinstance(func, ast.Attribute) and func.end_lineno is not None and func.end_col_offset is not None:
            line, byte_col, name = func.end_lineno, func.end_col_offset - len(func.attr), func.attr
        else:
            return
        # ast counts UTF-8 bytes, jedi counts characters.
        column = len(self.lines[line - 1].encode()[:byte_col].decode(errors="replace"))
        self.calls.append(PythonCallSite(self.path, line, column, name, self._caller()))


def python_import_root(root: Path, broot: str) -> Path:
    """The folder to put on sys.path so that the package at benchmark_root imports by its name."""
    package = root / broot
    return package.parent if (package / "__init__.py").exists() else package


def python_facts(name: str, root: Path, broot: str) -> RepoFacts:
    import jedi

    facts = RepoFacts(name, "python", root)
    files: list[tuple[Path, str]] = []
    calls: list[PythonCallSite] = []
    for path in source_files(root / broot, ("*.py",)):
        text = read_text(path)
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        visitor = _PythonFileFacts(path, path.relative_to(root).as_posix(), text.splitlines())
        visitor.visit(tree)
        facts.definitions.extend(visitor.definitions)
        calls.extend(visitor.calls)
        files.append((path, text))
    facts.name_counts = count_names(facts.definitions)

    by_name_line = {(d.span.path, d.name_line, d.name): d for d in facts.definitions}
    function_names = {d.name for d in facts.definitions if d.is_function}
    project = jedi.Project(path=str(root), smart_sys_path=False, load_unsafe_extensions=False,
                           sys_path=[str(python_import_root(root, broot)), sysconfig.get_paths()["stdlib"]])
    scripts = {path: jedi.Script(text, path=str(path), project=project) for path, text in files}
    for site in calls:
        if site.name not in function_names:
            continue
        try:
            landed = scripts[site.path].goto(site.line, site.column, follow_imports=True)
        except Exception:  # jedi gives up on some constructs; the site is then unresolved
            landed = []
        if not landed:
            facts.incomplete.add(site.name)
            continue
        for target in landed:
            if target.module_path is None or target.line is None:
                continue
            try:
                rel = Path(target.module_path).resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                continue  # outside the repository: the standard library
            callee = by_name_line.get((rel, target.line, target.name))
            if callee is not None and callee.is_function and callee != site.caller:
                facts.callers[callee].add(site.caller)
    return facts


# ---------------------------------------------------------------------------------------------
# Other languages: universal-ctags + a regular expression over code with comments blanked


def ctags_definitions(root: Path, broot: str, ctags_language: str) -> list[tuple[dict, str]]:
    """(tag, path relative to the repository root) of every tag ctags emits for the language."""
    command = ["ctags", "-R", f"--languages={ctags_language}", "--fields=+neKZS", "--output-format=json",
               "-f", "-", "."]
    if ctags_language == "C":
        command.insert(2, "--map-C=+.h")
    out = subprocess.run(command, cwd=root / broot, capture_output=True, text=True, check=True).stdout
    tags = []
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or tag["kind"] in IGNORED_CTAGS_KINDS:
            continue
        rel = (Path(broot) / tag["path"]).as_posix() if broot else Path(tag["path"]).as_posix()
        tags.append((tag, rel.removeprefix("./")))
    return sorted(tags, key=lambda t: (t[1], t[0]["line"], t[0]["name"]))


def blank_comments_and_strings(text: str, language: str) -> str:
    """The text with comments and string and character literals turned into spaces (line breaks
    kept), for Go, Java and C: a regular expression over the result sees code only."""
    out = list(text)
    n = len(text)

    def blank(start: int, end: int) -> None:
        for j in range(start, min(end, n)):
            if out[j] != "\n":
                out[j] = " "

    i = 0
    while i < n:
        c = text[i]
        pair = text[i:i + 2]
        if pair == "//":
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif pair == "/*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif c in "\"'" or (c == "`" and language == "go"):
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\\" and c != "`":
                    j += 2
                    continue
                if text[j] == "\n" and c != "`":
                    break  # an unterminated quote: stop at the end of the line
                j += 1
            blank(i + 1, j)
            i = j + 1
        else:
            i += 1
    return "".join(out)


_GO_IMPORT_BLOCK = re.compile(r"^import\s*\((.*?)^\)", re.S | re.M)
_GO_IMPORT_LINE = re.compile(r'^\s*(?:import\s+)?([A-Za-z_][A-Za-z0-9_]*|\.|_)?\s*"([^"]+)"', re.M)


def go_module_path(root: Path) -> str | None:
    mod = root / "go.mod"
    if not mod.exists():
        return None
    match = re.search(r"^module\s+(\S+)", read_text(mod), re.M)
    return match.group(1) if match else None


def go_outside_packages(text: str, module: str | None) -> set[str]:
    """Names by which a Go file refers to packages from outside the module."""
    names = set()
    blocks = [m.group(1) for m in _GO_IMPORT_BLOCK.finditer(text)]
    single = [line for line in text.splitlines() if line.startswith("import ") and "(" not in line]
    for chunk in blocks + single:
        for alias, path in _GO_IMPORT_LINE.findall(chunk):
            if module and (path == module or path.startswith(module + "/")):
                continue
            names.add(alias or path.rsplit("/", 1)[-1])
    return names


def c_library_names(rg: str) -> frozenset[str]:
    """Names followed by "(" in the C library's headers (functions and function-like macros)."""
    listing = subprocess.run(["dpkg", "-L", "libc6-dev"], capture_output=True, text=True).stdout \
        if shutil.which("dpkg") else ""
    headers = sorted(line for line in listing.splitlines() if line.endswith(".h") and Path(line).is_file()) \
        or sorted(str(p) for p in Path("/usr/include").glob("*.h"))
    out = subprocess.run([rg, "-o", "-N", "-I", "--no-filename", "--no-config", r"\b[A-Za-z_][A-Za-z0-9_]*\s*\(",
                          *headers], capture_output=True, text=True, errors="replace").stdout if headers else ""
    return frozenset(line.rstrip("( \t") for line in out.splitlines())


def ctags_facts(name: str, language: str, root: Path, broot: str, with_calls: bool,
                outside_names: frozenset[str] = frozenset()) -> RepoFacts:
    ctags_language, globs = CTAGS_REPOS[name]
    facts = RepoFacts(name, language, root)
    kinds = DEFINITION_KINDS[ctags_language]
    function_kinds = FUNCTION_KINDS[ctags_language]
    all_tags = ctags_definitions(root, broot, ctags_language)
    every: list[Definition] = []
    for tag, rel in all_tags:
        line = int(tag["line"])
        end = int(tag.get("end", line))
        keyword = kinds.get(tag["kind"])
        definition = Definition(tag["name"], tag["kind"], Span(rel, line, end), line,
                                tag["kind"] in function_kinds, keyword)
        every.append(definition)
        if tag["kind"] in kinds and "end" in tag:
            facts.definitions.append(definition)
    # Uniqueness counts every tag (fields, variables, macros...): a name that is also a field or a
    # macro is not unambiguous.
    facts.name_counts = count_names(every)
    if not with_calls:
        return facts

    functions_by_path: dict[str, list[Definition]] = defaultdict(list)
    for d in facts.definitions:
        if d.is_function:
            functions_by_path[d.span.path].append(d)
    callees = {d.name: d for d in facts.definitions
               if d.is_function and facts.is_plain_name(d.name) and d.name not in outside_names}
    # Test functions are run by a test framework, never called: they have no callers to miss.
    facts.incomplete = {d.name for d in facts.definitions if d.name not in callees and not _TEST_NAME.match(d.name)}
    declaration_lines = {(d.span.path, d.name_line, d.name) for d in every}
    module = go_module_path(root) if language == "go" else None
    for path in source_files(root / broot, globs):
        rel = path.relative_to(root).as_posix()
        text = read_text(path)
        code = blank_comments_and_strings(text, language)
        outside = go_outside_packages(text, module) if language == "go" else set()
        line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        for match in _CALL.finditer(code):
            callee = callees.get(match.group(1))
            if callee is None:
                continue
            line = bisect.bisect_right(line_starts, match.start())
            if (rel, line, callee.name) in declaration_lines or not is_call(code, match.start(), outside):
                continue
            caller = innermost_function(functions_by_path[rel], line)
            if caller is not None and caller != callee:
                facts.callers[callee].add(caller)
    return facts


def typescript_facts(name: str, language: str, root: Path, broot: str) -> RepoFacts:
    """Definitions and callers of a JavaScript or TypeScript repository by the TypeScript compiler
    (`ts_facts.js`, its parser and type checker): a call site counts for the one definition of
    the repository the checker resolves it to (through imports and aliases); a name with a call
    site the checker resolves to nothing, or to several definitions, has unknown callers."""
    node = shutil.which("node")
    if node is None:
        raise SystemExit("the JavaScript and TypeScript sets need node and the typescript package")
    files = [p.relative_to(root).as_posix() for p in source_files(root / broot, TYPESCRIPT_REPOS[name])
             if not p.name.endswith(".d.ts")]
    environment = {**os.environ, "NODE_PATH": os.environ.get("NODE_PATH", "/usr/share/nodejs")}
    found = json.loads(subprocess.run([node, str(HERE / "ts_facts.js"), str(root), *files], capture_output=True,
                                      text=True, check=True, env=environment).stdout)
    facts = RepoFacts(name, language, root)
    every = [
        Definition(d["name"], d["kind"], Span(d["path"], d["start_line"], d["end_line"]), d["name_line"],
                   d["kind"] != "class", TYPESCRIPT_KEYWORDS[d["kind"]])
        for d in found["definitions"]
    ]
    facts.definitions = every
    facts.name_counts = count_names(every)
    facts.incomplete = set(found["unresolved"])
    for call in found["calls"]:
        callee = every[call["callee"]]
        caller: Caller = every[call["caller"]] if call["caller"] >= 0 else Span(call["path"], call["line"], call["line"])
        if caller != callee:
            facts.callers[callee].add(caller)
    return facts


def is_call(code: str, start: int, outside_packages: set[str]) -> bool:
    """Whether NAME( at `start` is a call to a repository function: not a constructor, not an
    annotation, not a method of a package from outside the module."""
    before = code[max(0, start - 64):start]
    if before.endswith("@") or re.search(r"\bnew\s+$", before):
        return False
    qualifier = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\.\s*$", before)
    return not (qualifier and qualifier.group(1) in outside_packages)


def innermost_function(functions: list[Definition], line: int) -> Definition | None:
    holding = [f for f in functions if f.span.start_line <= line <= f.span.end_line]
    return min(holding, key=lambda f: (f.span.end_line - f.span.start_line, f.span.start_line), default=None)


# ---------------------------------------------------------------------------------------------
# Exact strings


def python_literals(path: Path) -> Iterator[str]:
    """String constants of a Python file that are not docstrings and appear verbatim on one line."""
    text = read_text(path)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    lines = text.splitlines()
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                and node.lineno == node.end_lineno and node.value in lines[node.lineno - 1]):
            yield node.value


def quoted_literals(path: Path, language: str) -> Iterator[str]:
    """Quoted literals of a source file, found per line."""
    quotes = "\"'" if language in SINGLE_QUOTED_LANGUAGES else '"'
    patterns = [re.compile(f"{q}([^{q}\\\\\\n]+){q}") for q in quotes]
    for line in read_text(path).splitlines():
        for pattern in patterns:
            yield from pattern.findall(line)


def is_message_like(text: str) -> bool:
    return (LITERAL_CHARS[0] <= len(text) <= LITERAL_CHARS[1] and _LITERAL_TEXT.fullmatch(text) is not None
            and sum(1 for word in text.split() if _WORD.search(word)) >= LITERAL_MIN_WORDS)


def rg_lines(rg: str, root: Path, broot: str, literal: str) -> list[Span]:
    """Every line under benchmark_root holding the literal (ripgrep, fixed string, case-sensitive)."""
    out = subprocess.run([rg, "-F", "-n", "--no-ignore", "--hidden", "--no-messages", "--no-heading",
                          "--with-filename", "--null", "--no-config", "-e", literal, "."],
                         cwd=root / broot, capture_output=True, text=True, errors="replace").stdout
    spans = []
    for row in out.splitlines():
        path, _, rest = row.partition("\0")
        line = rest.split(":", 1)[0]
        if line.isdigit():
            rel = path.removeprefix("./")
            spans.append(Span(f"{broot}/{rel}" if broot else rel, int(line), int(line)))
    return sorted(spans, key=lambda s: (s.path, s.start_line))


def literal_candidates(root: Path, broot: str, language: str) -> list[str]:
    """Message-like literals of the repository, each once, in a fixed order."""
    seen: dict[str, None] = {}
    for path in source_files(root / broot, LITERAL_GLOBS[language]):
        found = python_literals(path) if language == "python" else quoted_literals(path, language)
        for text in found:
            if is_message_like(text):
                seen.setdefault(text, None)
    return sorted(seen)


# ---------------------------------------------------------------------------------------------
# Queries


def query_row(repo: str, language: str, intent: str, query: str, subject: str, kind: str,
              targets: Iterable[Span]) -> dict:
    ordered = sorted(set(targets), key=lambda s: (s.path, s.start_line, s.end_line))
    return {"repo": repo, "language": language, "intent": intent, "query": query, "subject": subject,
            "kind": kind, "targets": [s.as_target() for s in ordered]}


def sampler(seed: int, repo: str, intent: str) -> random.Random:
    return random.Random(f"{seed}:{repo}:{intent}")


def caller_span(caller: Caller) -> Span:
    return caller.span if isinstance(caller, Definition) else caller


def definition_queries(facts: RepoFacts, seed: int, per_repo: int) -> list[dict]:
    nested = nested_in_namesake(facts.definitions)  # a constructor stands for its class: ask for the class
    candidates = [d for i, d in enumerate(facts.definitions) if i not in nested and facts.is_plain_name(d.name)]
    rng = sampler(seed, facts.name, "find_definition")
    rows = []
    for d in rng.sample(candidates, min(per_repo, len(candidates))):
        where = d.keyword is None or rng.random() < 1 / 3
        query = WHERE_DEFINED.format(name=d.name) if where else f"{d.keyword} {d.name}"
        rows.append(query_row(facts.name, facts.language, "find_definition", query, d.name, d.kind, [d.span]))
    return rows


def reference_queries(facts: RepoFacts, seed: int, per_repo: int) -> list[dict]:
    candidates = [d for d in facts.definitions
                  if facts.is_plain_name(d.name) and facts.has_known_callers(d) and facts.callers.get(d)]
    rng = sampler(seed, facts.name, "find_references")
    rows = []
    for d in rng.sample(candidates, min(per_repo, len(candidates))):
        query = rng.choice(REFERENCE_TEMPLATES).format(name=d.name)
        targets = [caller_span(c) for c in facts.callers[d]]
        rows.append(query_row(facts.name, facts.language, "find_references", query, d.name, d.kind, targets))
    return rows


def dependants_to_depth_2(facts: RepoFacts, definition: Definition) -> set[Caller] | None:
    """Callers and callers of callers; None when a caller's own callers are unknown."""
    found: set[Caller] = set(facts.callers.get(definition, ()))
    for caller in list(found):
        if isinstance(caller, Definition):
            if not facts.has_known_callers(caller):
                return None
            found |= facts.callers.get(caller, set())
    found.discard(definition)
    return found


def impact_queries(facts: RepoFacts, seed: int, per_repo: int) -> list[dict]:
    candidates = []
    for d in facts.definitions:
        if facts.is_plain_name(d.name) and facts.has_known_callers(d):
            dependants = dependants_to_depth_2(facts, d)
            if dependants is not None and len({caller_span(c) for c in dependants}) >= 2:
                candidates.append((d, dependants))
    rng = sampler(seed, facts.name, "impact_analysis")
    rows = []
    for d, dependants in rng.sample(candidates, min(per_repo, len(candidates))):
        query = rng.choice(IMPACT_TEMPLATES).format(name=d.name)
        rows.append(query_row(facts.name, facts.language, "impact_analysis", query, d.name, d.kind,
                              [caller_span(c) for c in dependants]))
    return rows


def literal_queries(rg: str, repo: dict, root: Path, seed: int, per_repo: int) -> list[dict]:
    broot = (repo.get("benchmark_root") or "").strip("/")
    language = repo["language"]
    rng = sampler(seed, repo["name"], "exact_match")
    candidates = literal_candidates(root, broot, language)
    rng.shuffle(candidates)
    rows = []
    for text in candidates:  # shuffled, then the first per_repo that ripgrep finds on few enough lines
        if len(rows) == per_repo:
            break
        lines = rg_lines(rg, root, broot, text)
        if 1 <= len(lines) <= LITERAL_MAX_LINES:
            query = rng.choice(LITERAL_TEMPLATES).format(text=text)
            rows.append(query_row(repo["name"], language, "exact_match", query, text, "literal", lines))
    return rows


# ---------------------------------------------------------------------------------------------
# The run


def find_rg() -> str | None:
    """ripgrep next to this interpreter (the `ripgrep` wheel) first, else on PATH."""
    beside = Path(sys.executable).parent / "rg"
    return str(beside) if beside.exists() else shutil.which("rg")


def tool_versions(rg: str) -> dict[str, str]:
    import jedi

    def first_line(command: list[str]) -> str:
        return subprocess.run(command, capture_output=True, text=True).stdout.split("\n")[0]

    node = shutil.which("node")
    typescript = ""
    if node is not None:
        typescript = subprocess.run(
            [node, "-e", "process.stdout.write(require('typescript').version)"], capture_output=True, text=True,
            env={**os.environ, "NODE_PATH": os.environ.get("NODE_PATH", "/usr/share/nodejs")},
        ).stdout
    return {"python": sys.version.split()[0], "jedi": jedi.__version__,
            "ctags": first_line(["ctags", "--version"]), "ripgrep": first_line([rg, "--version"]),
            "typescript": typescript}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", type=Path, default=Path("/work/benchdata/repos"),
                        help="folder with one tree per repository (default /work/benchdata/repos)")
    parser.add_argument("--bench", type=Path, default=HERE.parents[1] / "shared" / "bench",
                        help="benchmark folder holding repos.json (default ../shared/bench)")
    parser.add_argument("--out", type=Path, default=HERE / "intent_queries")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--per-repo", type=int, default=30, help="at most this many queries per repository and intent")
    parser.add_argument("--python-repos", nargs="+", metavar="NAME",
                        help="make the sets of these Python repositories of repos.json alone, by ast and jedi "
                             "(to check on trees outside the benchmark, such as the mined ones)")
    args = parser.parse_args()

    rg = find_rg()
    if rg is None or shutil.which("ctags") is None:
        parser.error("needs ripgrep (pip install ripgrep) and universal-ctags (apt-get install universal-ctags)")
    repos = {r["name"]: r for r in json.loads((args.bench / "repos.json").read_text())}
    python_repos = tuple(args.python_repos or PYTHON_REPOS)
    unknown = set(python_repos) - set(repos)
    if unknown:
        parser.error(f"not in {args.bench / 'repos.json'}: {', '.join(sorted(unknown))}")
    wanted = list(python_repos) if args.python_repos else list(
        dict.fromkeys([*PYTHON_REPOS, *CTAGS_REPOS, *LITERAL_REPOS, *TYPESCRIPT_REPOS]))
    rows: dict[str, list[dict]] = {intent: [] for intent in INTENTS}
    print(f"{'repository':<10} {'language':<11} {'definitions':>11} {'references':>10} {'impact':>6} {'literals':>8}")
    for name in wanted:
        repo = repos[name]
        root = args.repos / name
        broot = (repo.get("benchmark_root") or "").strip("/")
        if not (root / broot).is_dir():
            print(f"{name:<10} missing: {root / broot}", file=sys.stderr)
            continue
        counts = {}
        facts = None
        if name in python_repos:
            facts = python_facts(name, root, broot)
        elif name in CTAGS_REPOS:
            outside = c_library_names(rg) if repo["language"] == "c" else frozenset()
            facts = ctags_facts(name, repo["language"], root, broot, name in CALL_GRAPH_CTAGS_REPOS, outside)
        elif name in TYPESCRIPT_REPOS:
            facts = typescript_facts(name, repo["language"], root, broot)
        if facts is not None:
            if name not in TYPESCRIPT_REPOS:  # the definitions set predates them; kept as it was
                counts["find_definition"] = definition_queries(facts, args.seed, args.per_repo)
            if name in python_repos or name in CALL_GRAPH_CTAGS_REPOS or name in TYPESCRIPT_REPOS:
                counts["find_references"] = reference_queries(facts, args.seed, args.per_repo)
                counts["impact_analysis"] = impact_queries(facts, args.seed, args.per_repo)
        if name in LITERAL_REPOS:
            counts["exact_match"] = literal_queries(rg, repo, root, args.seed, args.per_repo)
        for intent, made in counts.items():
            rows[intent].extend(made)
        print(f"{name:<10} {repo['language']:<11} " + " ".join(
            f"{len(counts.get(i, [])):>{w}}" for i, w in zip(INTENTS, (11, 10, 6, 8))))

    args.out.mkdir(parents=True, exist_ok=True)
    manifest = {"seed": args.seed, "per_repo": args.per_repo, "tools": tool_versions(rg), "intents": {}}
    for intent, made in rows.items():
        (args.out / f"{intent}.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in made))
        per_language: dict[str, int] = defaultdict(int)
        for r in made:
            per_language[r["language"]] += 1
        manifest["intents"][intent] = {"queries": len(made), "per_language": dict(sorted(per_language.items())),
                                       "targets": sum(len(r["targets"]) for r in made)}
        print(f"{intent:<16} {len(made):>4} queries  " + ", ".join(f"{k} {v}" for k, v in sorted(per_language.items())))
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
