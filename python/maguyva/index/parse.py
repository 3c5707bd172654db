"""Parsing one file into chunks, symbols and references.

    from maguyva.index.parse import language_for, parse_file

    parsed = parse_file("src/app.py", Path("src/app.py").read_bytes())
    parsed.symbols[0].qualified_name, parsed.references[0].kind, parsed.chunks[0].start_line

`parse_file` never raises on the content of a file: invalid UTF-8, syntax errors, empty files and
very long lines all give a `ParsedFile` (at worst: line-window chunks and no symbols). Files of
a language maguyva does not parse are chunked as text.

One tree-sitter query per language (built from `languages.py`, once per process) finds
definitions, references and comments in a single pass over the syntax tree; parsers are per
thread, so `parse_file` can be called from several threads at once.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from inspect import cleandoc

import tree_sitter_language_pack
from tree_sitter import Node, Parser, Query, QueryCursor

from maguyva.index.chunk import chunk_code, chunk_text, split_lines
from maguyva.index.languages import LANGUAGES, LanguageSpec
from maguyva.index.model import ParsedFile, Reference, Symbol

logger = logging.getLogger(__name__)

#: Raised whenever a change to the rules below changes what a file parses into, so that indexes
#: built before it parse their files again instead of keeping the old symbols and chunks.
PARSER_VERSION = 2

#: Signatures and docstrings longer than this are cut: they are for display and matching, and a
#: few hundred characters carry what a reader needs.
MAX_SIGNATURE_CHARS = 300
MAX_DOCSTRING_CHARS = 2_000
#: Qualifiers of calls are kept as written up to this length (long chains are rarely useful).
MAX_QUALIFIER_CHARS = 120

#: Symbol kinds whose functions are methods.
_CLASS_LIKE = frozenset({"class", "interface", "struct", "enum", "trait", "scope"})

_BY_EXTENSION = {ext: spec.name for spec in LANGUAGES.values() for ext in spec.extensions}
_BY_FILENAME = {name: spec.name for spec in LANGUAGES.values() for name in spec.filenames}
_BY_INTERPRETER = {
    name: spec.name for spec in LANGUAGES.values() for name in spec.interpreters
}
_SHEBANG = re.compile(rb"#![ \t]*(\S+)(?:[ \t]+(?:-\S+[ \t]+)*(\S+))?")
#: Markers of C++ in a `.h` file, which is otherwise read as C.
_CPP_HEADER = re.compile(
    rb"^[ \t]*(?:class|namespace|template)\b|^[ \t]*(?:public|private|protected)[ \t]*:"
    rb"|\bstd::",
    re.MULTILINE,
)


def language_for(path: str) -> str | None:
    """The language of the file at `path` by its name, or None when it is not parsed."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    language = _BY_FILENAME.get(name)
    if language is None:
        dot = name.rfind(".")
        if dot >= 0:
            language = _BY_EXTENSION.get(name[dot:].lower())
    return language


def parse_file(path: str, content: bytes) -> ParsedFile:
    """Chunks, symbols and references of the file at `path` whose bytes are `content`."""
    language = language_for(path)
    if language is None:
        language = _language_from_shebang(content)
    elif language == "c" and path.endswith(".h") and _CPP_HEADER.search(content):
        language = "cpp"
    lines = split_lines(content)
    if language is None:
        return ParsedFile(path=path, language=None, chunks=chunk_text(lines))
    compiled = _compiled_for(language)
    if compiled is None:
        return ParsedFile(path=path, language=language, chunks=chunk_text(lines))
    try:
        return _parse_code(path, compiled, content, lines)
    except Exception:  # a grammar or query failure must not stop an index build
        logger.warning("could not parse %s as %s; chunked as text", path, language, exc_info=True)
        return ParsedFile(path=path, language=language, chunks=chunk_text(lines))


def _language_from_shebang(content: bytes) -> str | None:
    if not content.startswith(b"#!"):
        return None
    match = _SHEBANG.match(content, 0, content.find(b"\n") if b"\n" in content else len(content))
    if match is None:
        return None
    program = match.group(1).rsplit(b"/", 1)[-1]
    if program == b"env" and match.group(2):
        program = match.group(2).rsplit(b"/", 1)[-1]
    name = program.decode("ascii", errors="replace")
    return _BY_INTERPRETER.get(name) or _BY_INTERPRETER.get(name.rstrip("0123456789.-"))


# --- per-language compiled state ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Pattern:
    """What the matches of one pattern of a language's query are."""

    #: "definition", "call", "import", "inherit", "comment", "attribute", "doc", "doc.inner"
    #: or "signature".
    role: str
    #: For definitions, the symbol kind or "scope".
    kind: str = ""


@dataclass(frozen=True, slots=True)
class _Compiled:
    spec: LanguageSpec
    query: Query
    patterns: tuple[_Pattern, ...]


#: Compiled state by language; None for a language whose grammar or query failed to load.
_compiled: dict[str, _Compiled | None] = {}
_compile_lock = threading.Lock()
_thread = threading.local()


def _compiled_for(language: str) -> _Compiled | None:
    if language in _compiled:
        return _compiled[language]
    with _compile_lock:
        if language not in _compiled:
            try:
                _compiled[language] = _compile(LANGUAGES[language])
            except Exception:  # reported once; files of the language are then chunked as text
                logger.exception("could not load the %s grammar; its files are text", language)
                _compiled[language] = None
    return _compiled[language]


def _compile(spec: LanguageSpec) -> _Compiled:
    grammar = tree_sitter_language_pack.get_language(spec.grammar_name)  # type: ignore[arg-type]
    source = "\n".join(
        [
            spec.definitions,
            spec.calls,
            spec.imports,
            spec.inherits,
            spec.docs,
            *(f"({node_type}) @comment" for node_type in sorted(spec.comments)),
            *(f"({node_type}) @attribute" for node_type in sorted(spec.attributes)),
        ]
    )
    query = Query(grammar, source)
    patterns = tuple(
        _pattern_role(source[query.start_byte_for_pattern(i) : query.end_byte_for_pattern(i)])
        for i in range(query.pattern_count)
    )
    return _Compiled(spec, query, patterns)


_DEFINITION_CAPTURE = re.compile(r"@definition\.(\w+)")


def _pattern_role(pattern: str) -> _Pattern:
    definition = _DEFINITION_CAPTURE.search(pattern)
    if definition:
        return _Pattern("definition", definition.group(1))
    for role in ("signature", "call", "import", "inherit", "doc.inner", "doc", "comment"):
        if f"@{role}" in pattern:
            return _Pattern(role)
    return _Pattern("attribute")


def _parser_for(language: str) -> Parser:
    parsers: dict[str, Parser] | None = getattr(_thread, "parsers", None)
    if parsers is None:
        parsers = _thread.parsers = {}
    parser = parsers.get(language)
    if parser is None:
        name = LANGUAGES[language].grammar_name
        grammar = tree_sitter_language_pack.get_language(name)  # type: ignore[arg-type]
        parser = parsers[language] = Parser(grammar)
    return parser


# --- extraction -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Definition:
    node: Node
    kind: str
    name: Node
    pattern: int
    receiver: Node | None = None
    body: Node | None = None


@dataclass(slots=True)
class _Import:
    line: int
    position: int
    modules: list[tuple[int, str]] = field(default_factory=list)
    parts: list[tuple[int, str]] = field(default_factory=list)
    names: list[tuple[int, str]] = field(default_factory=list)


@dataclass(slots=True)
class _Matches:
    """A file's query matches, sorted by role."""

    definitions: dict[tuple[int, int], _Definition] = field(default_factory=dict)
    #: Call name position -> (name, qualifier node, callee node).
    calls: dict[int, tuple[Node, Node | None, Node | None]] = field(default_factory=dict)
    #: Positions of names that look like calls and are not.
    not_calls: set[int] = field(default_factory=set)
    imports: dict[int, _Import] = field(default_factory=dict)
    bases: list[Node] = field(default_factory=list)
    comments: list[Node] = field(default_factory=list)
    attributes: list[Node] = field(default_factory=list)
    docs: list[Node] = field(default_factory=list)
    inner_docs: list[Node] = field(default_factory=list)
    #: Start byte of a type signature node -> the name it is for.
    signatures: dict[int, str] = field(default_factory=dict)


#: C and C++ export and attribute macros (`FMT_EXPORT template <...> class X`, `class FMT_API X :`),
#: which the grammars cannot expand and which leave the declaration they precede unparsed. A macro
#: here is an upper-case name with an underscore, so `DWORD`, `FILE` and other types stay.
_EXPORT_MACRO = rb"[A-Z][A-Z0-9]*_[A-Z0-9_]*"
_DECLARATION_WORDS = (
    rb"(?:template|class|struct|union|enum|namespace|typedef|using|inline|static|extern|constexpr|consteval"
    rb"|explicit|virtual|friend|auto|void|const|unsigned|signed|int|char|bool|long|short|float|double)\b"
)
# The patterns run over the file with a newline put in front, so that every line starts after a
# "\n": a literal first character lets the regex engine skip ahead fast (five times faster than
# `^` in multiline mode).


def _macros_before(what: bytes) -> re.Pattern[bytes]:
    """Export macros opening a line, before `what`."""
    return re.compile(rb"\n[ \t]*(?P<macros>(?:" + _EXPORT_MACRO + rb"[ \t]+)+)(?=" + what + rb")")


_MACRO_BEFORE_DECLARATION = _macros_before(_DECLARATION_WORDS)
#: C++ also before a constructor or a function whose return type the macro is not (C's grammar
#: does not take a definition without a return type).
_MACRO_BEFORE_DEFINITION = _macros_before(_DECLARATION_WORDS + rb"|~?[A-Za-z_]\w*(?:<[^<>\n]*>)?\(")
_MACRO_AFTER_CLASS_KEY = re.compile(
    rb"(?:class|struct|union)[ \t]+(?P<macros>" + _EXPORT_MACRO + rb")"
    rb"(?=[ \t]+[A-Za-z_]\w*[ \t]*(?:final\b|[:{]|\r?\n|\Z))"
)
#: A macro alone on a line, such as `FMT_BEGIN_NAMESPACE` or `G_BEGIN_DECLS` (they open or close
#: scopes the grammar cannot see, and it reads what follows as one broken function).
_MACRO_LINE = re.compile(rb"\n(?P<macros>" + _EXPORT_MACRO + rb")[ \t]*(?=\r?\n|\Z)")
#: `if FMT_CONSTEXPR20 (...)`: a macro for `constexpr` between `if` and its condition.
_MACRO_AFTER_IF = re.compile(rb"if[ \t]+(?P<macros>" + _EXPORT_MACRO + rb")[ \t]*(?=\()")
#: Patterns starting with a keyword, which must not be the end of a longer word ("subclass").
_KEYWORD_FIRST = frozenset({_MACRO_AFTER_CLASS_KEY, _MACRO_AFTER_IF})
_MACRO_PATTERNS = {
    "c": (_MACRO_LINE, _MACRO_BEFORE_DECLARATION, _MACRO_AFTER_CLASS_KEY),
    "cpp": (_MACRO_LINE, _MACRO_BEFORE_DEFINITION, _MACRO_AFTER_CLASS_KEY, _MACRO_AFTER_IF),
}


def _is_word_byte(byte: int) -> bool:
    return byte == 95 or 48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122


def without_export_macros(content: bytes, language: str = "cpp") -> bytes:
    """`content` with the export macros of declarations replaced by spaces: same length, so every
    byte offset and line still points into the file as written."""

    def blank(m: re.Match[bytes]) -> bytes:
        text = m.group(0)
        offset = m.start()
        if m.re in _KEYWORD_FIRST and offset > 0 and _is_word_byte(m.string[offset - 1]):
            return text
        start, end = m.span("macros")
        return text[: start - offset] + b" " * (end - start) + text[end - offset :]

    patterns = _MACRO_PATTERNS.get(language, ())
    if not patterns or b"_" not in content:
        return content
    text = b"\n" + content
    for pattern in patterns:
        text = pattern.sub(blank, text)
    return text[1:]


def _parse_code(path: str, compiled: _Compiled, content: bytes, lines: list[str]) -> ParsedFile:
    spec = compiled.spec
    language = spec.name
    source = without_export_macros(content, language)
    tree = _parser_for(language).parse(source)
    root = tree.root_node
    found = _collect(compiled, root)
    file = _File(spec, content, found)
    symbols, spans, scopes = file.symbols()
    references = file.references(spans)
    chunks = chunk_code(root, lines, symbols, spec.comments | spec.attributes, scopes)
    return ParsedFile(
        path=path, language=language, chunks=chunks, symbols=symbols, references=references
    )


def _collect(compiled: _Compiled, root: Node) -> _Matches:
    found = _Matches()
    patterns = compiled.patterns
    for index, captures in QueryCursor(compiled.query).matches(root):
        pattern = patterns[index]
        role = pattern.role
        if role == "call":
            ignored = captures.get("call.ignore")
            if ignored:
                found.not_calls.add(ignored[0].start_byte)
                continue
            name = captures["call.name"][0]
            qualifier = captures.get("call.qualifier")
            callee = captures.get("call.callee")
            previous = found.calls.get(name.start_byte)
            if previous is None or (previous[1] is None and qualifier):
                found.calls[name.start_byte] = (
                    name,
                    qualifier[0] if qualifier else None,
                    callee[0] if callee else None,
                )
        elif role == "comment":
            found.comments.append(captures["comment"][0])
        elif role == "definition":
            names = captures.get("name")
            if not names:
                continue
            node = captures[f"definition.{pattern.kind}"][0]
            key = (node.start_byte, names[0].start_byte)
            previous_definition = found.definitions.get(key)
            if previous_definition is not None and previous_definition.pattern < index:
                continue
            receiver = captures.get("receiver")
            body = captures.get("body")
            found.definitions[key] = _Definition(
                node,
                pattern.kind,
                names[0],
                index,
                receiver[0] if receiver else None,
                body[0] if body else None,
            )
        elif role == "import":
            statement = captures["import"][0]
            entry = found.imports.get(statement.start_byte)
            if entry is None:
                entry = found.imports[statement.start_byte] = _Import(
                    statement.start_point.row + 1, statement.start_byte
                )
            for node in captures.get("import.module", ()):
                _add_once(entry.modules, node)
            for node in captures.get("import.module.part", ()):
                _add_once(entry.parts, node)
            for node in captures.get("import.name", ()):
                _add_once(entry.names, node)
        elif role == "inherit":
            found.bases.append(captures["inherit.base"][0])
        elif role == "attribute":
            found.attributes.append(captures["attribute"][0])
        elif role == "doc":
            found.docs.append(captures["doc"][0])
        elif role == "doc.inner":
            found.inner_docs.append(captures["doc.inner"][0])
        elif role == "signature":
            found.signatures[captures["signature"][0].start_byte] = _text(captures["name"][0])
    return found


def _add_once(items: list[tuple[int, str]], node: Node) -> None:
    entry = (node.start_byte, _text(node))
    if entry not in items:
        items.append(entry)


def _text(node: Node) -> str:
    raw = node.text
    return raw.decode("utf-8", errors="replace") if raw else ""


def _last_line(node: Node) -> int:
    """1-based line of the last character of `node`."""
    row, column = node.end_point
    start = node.start_point.row
    if column == 0 and row > start:
        return row  # the node ends with its line break
    return max(row, start) + 1


@dataclass(slots=True)
class _Span:
    """The byte range of a symbol or scope, for finding what encloses a reference."""

    start: int
    end: int
    qualified_name: str


class _File:
    """Symbols and references of one parsed file, from its query matches."""

    def __init__(self, spec: LanguageSpec, content: bytes, found: _Matches) -> None:
        self.spec = spec
        self.content = content
        self.found = found
        self._docs_by_row: dict[int, tuple[Node, bool]] | None = None
        self._attribute_rows: set[int] = set()

    # symbols

    def symbols(self) -> tuple[list[Symbol], list[_Span], list[tuple[int, int, str]]]:
        """The file's symbols in order, the byte spans of symbols and scopes, and the line
        spans of scopes."""
        definitions = sorted(
            self.found.definitions.values(),
            key=lambda d: (d.node.start_byte, -d.node.end_byte, d.pattern),
        )
        symbols: list[Symbol] = []
        spans: list[_Span] = []
        scopes: list[tuple[int, int, str]] = []
        by_node: dict[int, int] = {}  # definition node start byte -> index in symbols
        open_: list[tuple[int, str, str]] = []  # (end byte, qualified name, kind)
        previous_by_name: dict[str, tuple[Node, int]] = {}
        for definition in definitions:
            node = definition.node
            while open_ and open_[-1][0] < node.end_byte:
                open_.pop()
            parent_name, parent_kind = (open_[-1][1], open_[-1][2]) if open_ else (None, "")
            name, qualifiers = self._name(definition)
            if not name or name == "_":
                continue
            kind = definition.kind
            if kind == "function" and (
                parent_kind in _CLASS_LIKE or (qualifiers and self.spec.qualified_is_method)
            ):
                kind = "method"
            path = [parent_name] if parent_name else []
            qualified_name = ".".join([*path, *qualifiers, name])
            parent = ".".join([*path, *qualifiers]) or None
            open_.append((node.end_byte, qualified_name, kind))
            spans.append(_Span(node.start_byte, node.end_byte, qualified_name))
            if kind == "scope":
                scopes.append((node.start_point.row + 1, _last_line(node), qualified_name))
                continue
            clause = previous_by_name.get(qualified_name)
            if clause is not None and self.spec.merge_clauses and self._follows(node, clause[0]):
                merged = symbols[clause[1]]
                end_line = max(merged.end_line, _last_line(node))
                symbols[clause[1]] = replace(merged, end_line=end_line)
                previous_by_name[qualified_name] = (node, clause[1])
                continue
            start_line = node.start_point.row + 1
            signature = ""
            type_signature = self._type_signature(node, name)
            if type_signature is not None:
                start_line = type_signature.start_point.row + 1
                signature = _clean_signature(_text(type_signature))
            symbols.append(
                Symbol(
                    name=name,
                    kind=kind,
                    qualified_name=qualified_name,
                    signature=signature or self._signature(definition),
                    docstring=self._docstring(node, type_signature),
                    start_line=start_line,
                    end_line=_last_line(node),
                    parent=parent,
                )
            )
            by_node[node.start_byte] = len(symbols) - 1
            previous_by_name[qualified_name] = (node, len(symbols) - 1)
        self._add_inner_docs(symbols, by_node)
        symbols.sort(key=lambda s: (s.start_line, -s.end_line))
        return symbols, spans, scopes

    def _name(self, definition: _Definition) -> tuple[str, list[str]]:
        """The defined name and the qualifiers written with it (receiver, `Foo::` prefix)."""
        text = _text(definition.name).strip()
        qualifiers: list[str] = []
        if definition.kind == "scope":
            return _type_name(text), qualifiers
        if definition.receiver is not None:
            receiver = _type_name(_text(definition.receiver))
            if receiver:
                qualifiers.append(receiver)
        separators = self.spec.name_separators
        if separators and any(sep in text for sep in separators):
            parts = _split_qualified(text, separators)
            text = parts[-1]
            ignored = self.spec.ignored_qualifiers
            qualifiers.extend(part for part in parts[:-1] if part not in ignored)
        return text, qualifiers

    def _follows(self, node: Node, previous: Node) -> bool:
        """Whether `node` is the next definition after `previous` among its siblings."""
        sibling = node.prev_named_sibling
        while sibling is not None and (
            sibling.type in self.spec.comments
            or sibling.type in self.spec.attributes
            or sibling.start_byte in self.found.signatures
        ):
            sibling = sibling.prev_named_sibling
        return sibling is not None and sibling.start_byte == previous.start_byte

    def _type_signature(self, node: Node, name: str) -> Node | None:
        """A separate type signature right before the definition (Haskell `f :: Int -> Int`)."""
        if not self.found.signatures:
            return None
        sibling = node.prev_named_sibling
        while sibling is not None and sibling.type in self.spec.comments:
            sibling = sibling.prev_named_sibling
        if sibling is not None and self.found.signatures.get(sibling.start_byte) == name:
            return sibling
        return None

    def _signature(self, definition: _Definition) -> str:
        node = definition.node
        start = node.start_byte
        outer = node.parent
        row = node.start_point.row
        while outer is not None and outer.type in self.spec.wrappers:
            if outer.start_point.row == row:
                start = outer.start_byte
            outer = outer.parent
        body = definition.body or node.child_by_field_name("body")
        if body is None and self.spec.body_types:
            for child in node.children:
                if child.type in self.spec.body_types:
                    body = child
                    break
        end = body.start_byte if body is not None else -1
        if end > start:
            for child in node.children:  # a comment between the header and the body
                if child.start_byte >= end:
                    break
                if child.type in self.spec.comments and child.start_byte > definition.name.end_byte:
                    end = child.start_byte
                    break
        else:
            # Searched no further than the definition: in a file of one long line, searching to
            # its end for every definition would cost the square of its length.
            line_end = self.content.find(b"\n", start, node.end_byte)
            end = node.end_byte if line_end < 0 else line_end
        return _clean_signature(self.content[start:end].decode("utf-8", errors="replace"))

    # documentation

    def _docstring(self, node: Node, type_signature: Node | None) -> str:
        """The comment block (or doc attribute) right above the definition."""
        docs = self._doc_rows()
        starts = [node]
        if type_signature is not None:
            starts.insert(0, type_signature)
        outer = node.parent
        while outer is not None and outer.type in self.spec.wrappers:
            starts.append(outer)
            outer = outer.parent
        seen: set[int] = set()
        for start in starts:
            row = start.start_point.row
            if row in seen:
                continue
            seen.add(row)
            text = self._doc_above(row, start.start_byte, docs)
            if text:
                return text
        return ""

    def _doc_rows(self) -> dict[int, tuple[Node, bool]]:
        """Comments and doc attributes that start their line, by the row they end on."""
        if self._docs_by_row is None:
            docs: dict[int, tuple[Node, bool]] = {}
            for node in self.found.comments:
                if self._starts_line(node):
                    # Some grammars end a comment at the indentation of the next line.
                    last_row = node.start_point.row + (node.text or b"").rstrip().count(b"\n")
                    docs[last_row] = (node, False)
            for node in self.found.docs:
                docs[_last_line(node) - 1] = (node, True)
            doc_rows = set(docs)
            for node in self.found.attributes:
                for row in range(node.start_point.row, _last_line(node)):
                    if row not in doc_rows:
                        self._attribute_rows.add(row)
            self._docs_by_row = docs
        return self._docs_by_row

    def _starts_line(self, node: Node) -> bool:
        line_start = self.content.rfind(b"\n", 0, node.start_byte) + 1
        return not self.content[line_start : node.start_byte].strip()

    def _doc_above(self, row: int, start_byte: int, docs: dict[int, tuple[Node, bool]]) -> str:
        """The comments ending on the line above `row` (where a definition starts at
        `start_byte`), and the contiguous comments above them."""
        comments: list[Node] = []
        row -= 1
        if row not in docs and row not in self._attribute_rows:
            # A doc comment (`/** ... */`) may be set off from its definition by a blank line.
            entry = docs.get(row - 1)
            if entry is not None and not entry[1] and (entry[0].text or b"").startswith(b"/**"):
                line_start = self.content.rfind(b"\n", 0, start_byte) + 1
                if not self.content[entry[0].end_byte : line_start].strip():
                    row -= 1
        while row >= 0:
            entry = docs.get(row)
            if entry is not None:
                node, is_attribute = entry
                if is_attribute:
                    return "" if comments else _clean_string(_text(node))
                comments.append(node)
                row = node.start_point.row - 1
                continue
            if row in self._attribute_rows and not comments:
                row -= 1
                continue
            break
        if not comments:
            return ""
        return _clean_comments(_text(node) for node in reversed(comments))

    def _add_inner_docs(self, symbols: list[Symbol], by_node: dict[int, int]) -> None:
        """Docstrings inside what they document (Python docstrings, Elixir @moduledoc)."""
        for doc in self.found.inner_docs:
            owner = doc.parent
            for _ in range(4):
                if owner is None or owner.start_byte in by_node:
                    break
                owner = owner.parent
            if owner is None or owner.start_byte not in by_node:
                continue
            index = by_node[owner.start_byte]
            text = _clean_string(_text(doc))
            if text:
                symbols[index] = replace(symbols[index], docstring=text)

    # references

    def references(self, spans: list[_Span]) -> list[Reference]:
        """Calls, imports and inheritance, each with the symbol it is in."""
        found = self.found
        not_calls = found.not_calls | {d.name.start_byte for d in found.definitions.values()}
        # (position, kind, name, line, qualifier, imported names)
        pending: list[tuple[int, str, str, int, str, tuple[str, ...]]] = []
        for position, (name_node, qualifier_node, callee) in found.calls.items():
            if position in not_calls:
                continue  # e.g. the head of a definition written as a call (Elixir `def f(x)`)
            name = _last_identifier(_text(name_node))
            if not name:
                continue
            if qualifier_node is not None:
                qualifier = _clean_qualifier(_text(qualifier_node))
            elif callee is not None:
                prefix = self.content[callee.start_byte : position]
                qualifier = _clean_qualifier(prefix.decode("utf-8", errors="replace"))
            else:
                qualifier = ""
            line = name_node.start_point.row + 1
            pending.append((position, "call", name, line, qualifier, ()))
        for entry in found.imports.values():
            cleaned = (_import_name(text) for _, text in sorted(entry.names))
            names = tuple(dict.fromkeys(name for name in cleaned if name))
            if entry.parts:
                modules = [".".join(_clean_module(text) for _, text in sorted(entry.parts))]
            else:
                modules = [_clean_module(text) for _, text in sorted(entry.modules)]
            for module in dict.fromkeys(modules):
                if module:
                    pending.append((entry.position, "import", module, entry.line, "", names))
        for base in found.bases:
            name = _type_name(_text(base))
            if name:
                pending.append((base.start_byte, "inherit", name, base.start_point.row + 1, "", ()))
        pending.sort(key=lambda item: item[0])
        enclosing = _enclosing([item[0] for item in pending], spans)
        references = [
            Reference(kind, name, line, outer, qualifier, names)
            for (_, kind, name, line, qualifier, names), outer in zip(
                pending, enclosing, strict=True
            )
        ]
        references.sort(key=lambda r: (r.line, r.kind))
        return references


def _enclosing(positions: list[int], spans: list[_Span]) -> list[str | None]:
    """For sorted byte `positions`, the qualified name of the innermost span around each."""
    ordered = sorted(spans, key=lambda s: (s.start, -s.end))
    result: list[str | None] = []
    open_: list[_Span] = []
    next_span = 0
    for position in positions:
        while next_span < len(ordered) and ordered[next_span].start <= position:
            span = ordered[next_span]
            while open_ and open_[-1].end <= span.start:
                open_.pop()
            open_.append(span)
            next_span += 1
        while open_ and open_[-1].end <= position:
            open_.pop()
        result.append(open_[-1].qualified_name if open_ else None)
    return result


# --- text clean-up ----------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_$@][\w$!?]*|~\w+")
_TYPE_PREFIX = re.compile(r"^(?:[&*(\[\s]|'\w+\s|mut\s|dyn\s|impl\s|const\s|struct\s|class\s)+")
_GENERIC_ARGS = re.compile(r"<[^<>]*>")


def _type_name(text: str) -> str:
    """The bare type name in a type as written: `*pkg.Server[T]` -> `Server`."""
    text = _TYPE_PREFIX.sub("", text.strip())
    for stop in "<[({ \n\t":
        index = text.find(stop)
        if index > 0:
            text = text[:index]
    return _last_identifier(text)


def _last_identifier(text: str) -> str:
    if text.isidentifier():
        return text
    found = _IDENTIFIER.findall(text)
    return found[-1] if found else ""


def _split_qualified(text: str, separators: tuple[str, ...]) -> list[str]:
    """`ns::Foo<T>::bar` -> ["ns", "Foo", "bar"]."""
    if "operator" not in text:
        previous = None
        while previous != text:
            previous, text = text, _GENERIC_ARGS.sub("", text)
    pattern = "|".join(re.escape(sep) for sep in sorted(separators, key=len, reverse=True))
    parts = [part.strip() for part in re.split(pattern, text)]
    return [part for part in parts if part] or [text]


def _clean_signature(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines()]
    lines = [line for line in lines if line]
    while len(lines) > 1 and lines[0].startswith(("@", "#[", "[")):
        lines.pop(0)  # annotations and attributes on lines of their own
    signature = "\n".join(lines).rstrip(" \t{=")
    if len(signature) > MAX_SIGNATURE_CHARS:
        signature = signature[:MAX_SIGNATURE_CHARS].rstrip() + "…"
    return signature


def _clean_qualifier(text: str) -> str:
    if text.isidentifier():
        return text
    text = " ".join(text.split())
    text = text.rstrip(".:->\\ ")
    if text.endswith("?"):  # optional chaining, `a?.b()`
        text = text[:-1]
    if len(text) > MAX_QUALIFIER_CHARS:
        text = "…" + text[-MAX_QUALIFIER_CHARS:]
    return text


def _clean_module(text: str) -> str:
    text = text.strip().strip("\"'`<>").strip()
    return text


def _import_name(text: str) -> str:
    text = text.strip()
    if text.startswith("*") or text in ("_",):
        return "*"
    for stop in (" ", "(", "{", "\n", "\t", ","):
        index = text.find(stop)
        if index > 0:
            text = text[:index]
    return text.rstrip(":")


_STRING_PREFIX = re.compile(r"^[rRuUbBfF]*(\"\"\"|'''|\"|')(.*)\1$", re.DOTALL)


def _clean_string(text: str) -> str:
    """The text of a string literal used as a docstring."""
    text = text.strip()
    match = _STRING_PREFIX.match(text)
    if match:
        text = match.group(2)
    elif text.startswith("~") and len(text) > 3:  # an Elixir sigil, ~S\"\"\"...\"\"\"
        return _clean_string(text[2:])
    elif text in ("false", "nil"):
        return ""
    return _cap(cleandoc(text))


_COMMENT_START = re.compile(r"^(?:/\*+!?|///?!?|#+!?|--+\s*[|^]?|;+|%+|\{-\s*\|?|=begin)\s?")
_COMMENT_END = re.compile(r"\s*(?:\*+/|-\}|=end)$")
_XML_DOC_TAG = re.compile(r"</?(?:summary|remarks|returns|para)>")


def _clean_comments(texts: Iterable[str]) -> str:
    """The text of a block of comments, comment markers removed."""
    lines: list[str] = []
    for text in texts:
        for line in text.splitlines():
            line = line.strip()
            line = _COMMENT_START.sub("", line, count=1)
            line = _COMMENT_END.sub("", line)
            if line.startswith("*") and not line.startswith("*/"):
                line = line[1:].removeprefix(" ")
            line = _XML_DOC_TAG.sub("", line)
            lines.append(line.rstrip())
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return _cap(cleandoc("\n".join(lines)))


def _cap(text: str) -> str:
    if len(text) > MAX_DOCSTRING_CHARS:
        return text[:MAX_DOCSTRING_CHARS].rstrip() + "…"
    return text
