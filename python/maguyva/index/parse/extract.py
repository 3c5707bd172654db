"""From a syntax tree to a file's symbols, references and chunks: the captures of the language's
query, collected in one pass, named, qualified and documented."""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node, QueryCursor

from maguyva.index.chunk import chunk_code
from maguyva.index.model import ParsedFile, Reference, Symbol
from maguyva.index.parse.compiled import Compiled, parser_for
from maguyva.index.parse.languages import LanguageSpec
from maguyva.index.parse.macros import first_branch_of_unbalanced_conditionals, without_export_macros
from maguyva.index.parse.text import (
    clean_comments,
    clean_module,
    clean_qualifier,
    clean_signature,
    clean_string,
    import_name,
    last_identifier,
    split_qualified,
    type_name,
)
from maguyva.lexicon import code_words

#: Symbol kinds whose functions are methods.
_CLASS_LIKE = frozenset({"class", "interface", "struct", "enum", "trait", "scope"})


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
    #: The names it binds under another name (`from m import y as z`, `import { y as z }`):
    #: the name as bound -> the name imported.
    aliases: dict[str, str] = field(default_factory=dict)
    #: The modules it binds under another name (`import x.y as z`): the name as bound -> the
    #: module.
    module_aliases: dict[str, str] = field(default_factory=dict)
    #: The Rust modules written inside the file around it (`mod tests { use super::*; }`),
    #: outermost first: its `self` and `super` start there, not at the file's module.
    inline_modules: tuple[str, ...] = ()


@dataclass(slots=True)
class _Matches:
    """A file's query matches, sorted by role."""

    definitions: dict[tuple[int, int], _Definition] = field(default_factory=dict)
    #: Call name position -> (name, qualifier node, callee node).
    calls: dict[int, tuple[Node, Node | None, Node | None]] = field(default_factory=dict)
    #: Positions of names that look like calls and are not.
    not_calls: set[int] = field(default_factory=set)
    #: Position of a name passed as a value -> (name, qualifier node).
    uses: dict[int, tuple[Node, Node | None]] = field(default_factory=dict)
    imports: dict[int, _Import] = field(default_factory=dict)
    bases: list[Node] = field(default_factory=list)
    comments: list[Node] = field(default_factory=list)
    attributes: list[Node] = field(default_factory=list)
    docs: list[Node] = field(default_factory=list)
    inner_docs: list[Node] = field(default_factory=list)
    #: Start byte of a type signature node -> the name it is for.
    signatures: dict[int, str] = field(default_factory=dict)
    #: (position, name, type) of each name bound to an instance of a type (`s = Session()`,
    #: `s: Session` as a parameter).
    receivers: list[tuple[int, str, str]] = field(default_factory=list)


def parse_code(path: str, compiled: Compiled, content: bytes, lines: list[str]) -> ParsedFile:
    spec = compiled.spec
    language = spec.name
    source = without_export_macros(content, language)
    if language in ("c", "cpp"):
        source = first_branch_of_unbalanced_conditionals(source)
    tree = parser_for(language).parse(source)
    root = tree.root_node
    found = _collect(compiled, root)
    file = _File(spec, content, found)
    symbols, spans, scopes = file.symbols()
    references = file.references(spans)
    chunks = chunk_code(root, lines, symbols, spec.comments | spec.attributes, scopes)
    words = code_words(source, [(n.start_byte, n.end_byte) for n in (*found.comments, *found.docs, *found.inner_docs)])
    return ParsedFile(
        path=path, language=language, chunks=chunks, symbols=symbols, references=references, code_words=words
    )


#: The capture a keyed form's argument is, for the roles whose patterns capture the argument alone.
_KEYED_ARGUMENT = {"inherit": "inherit.base", "doc": "doc", "doc.inner": "doc.inner"}


def _collect(compiled: Compiled, root: Node) -> _Matches:
    found = _Matches()
    patterns = compiled.patterns
    for index, captures in QueryCursor(compiled.query).matches(root):
        pattern = patterns[index]
        role, kind = pattern.role, pattern.kind
        if role == "keyed":
            # A form whose keyword says what it is: its captures as that role's pattern has them.
            form, argument = captures[f"keyed.{kind}"][0], captures["_arg"][0]
            keyed = compiled.keyed_role(kind, _text(captures["_key"][0]), argument.type)
            if keyed is None:
                continue
            role, kind = keyed
            if role == "definition":
                captures = {"name": [argument], f"definition.{kind}": [form]}
            elif role == "import":
                captures = {"import": [form], "import.module": [argument]}
            else:
                captures = {_KEYED_ARGUMENT[role]: [argument]}
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
        elif role == "use":
            name = captures["use.name"][0]
            qualifier = captures.get("use.qualifier")
            found.uses[name.start_byte] = (name, qualifier[0] if qualifier else None)
        elif role == "receiver":
            var, type_node = captures["receiver.var"][0], captures["receiver.type"][0]
            found.receivers.append((var.start_byte, _text(var), _text(type_node)))
        elif role == "comment":
            found.comments.append(captures["comment"][0])
        elif role == "definition":
            names = captures.get("name")
            if not names:
                continue
            node = captures[f"definition.{kind}"][0]
            definition_kind = kind
            if definition_kind.startswith("typed_"):
                typed = compiled.typed_kind(definition_kind[len("typed_"):], _text(captures["_type"][0]))
                if typed is None:
                    continue
                definition_kind = typed
            key = (node.start_byte, names[0].start_byte)
            previous_definition = found.definitions.get(key)
            if previous_definition is not None and previous_definition.pattern < index:
                continue
            receiver = captures.get("receiver")
            body = captures.get("body")
            found.definitions[key] = _Definition(
                node,
                definition_kind,
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
                    statement.start_point.row + 1, statement.start_byte, inline_modules=_inline_modules(statement)
                )
            for node in captures.get("import.module", ()):
                _add_once(entry.modules, node)
            for node in captures.get("import.module.part", ()):
                _add_once(entry.parts, node)
            for node in captures.get("import.name", ()):
                _add_once(entry.names, node)
            # A match holds one imported name (or module), with its alias when it has one.
            alias, imported = captures.get("import.alias", ()), captures.get("import.name", ())
            if len(alias) == 1 and len(imported) == 1:
                entry.aliases[_text(alias[0])] = _text(imported[0])
            elif len(alias) == 1 and not imported and len(module := captures.get("import.module") or []) == 1:
                entry.module_aliases[_text(alias[0])] = _text(module[0])
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


def _inline_modules(statement: Node) -> tuple[str, ...]:
    """The names of the Rust `mod` items around `statement`, outermost first."""
    names: list[str] = []
    node = statement.parent
    while node is not None:
        if node.type == "mod_item" and (name := node.child_by_field_name("name")) is not None:
            names.append(_text(name))
        node = node.parent
    return tuple(reversed(names))


def from_file_module(path: str, inline_modules: tuple[str, ...]) -> str:
    """A Rust path written inside the inline modules `inline_modules`, from the file's module
    instead: `super::x` in `mod tests` is the file's `self::x`, `self::x` there `self::tests::x`."""
    head, _, rest = path.partition("::")
    if head == "self":
        return "::".join(["self", *inline_modules, rest] if rest else ["self", *inline_modules])
    if head != "super":
        return path
    scopes = list(inline_modules)
    parts = path.split("::")
    while parts and parts[0] == "super" and scopes:
        parts.pop(0)
        scopes.pop()
    if parts and parts[0] == "super":
        return "::".join(parts)  # above the file's module
    return "::".join(["self", *scopes, *parts])


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
            spans.append(_Span(self._wrapped_start(node), node.end_byte, qualified_name))
            if kind == "scope":
                scopes.append((node.start_point.row + 1, _last_line(node), qualified_name))
                continue
            clause = previous_by_name.get(qualified_name)
            if clause is not None and self.spec.merge_clauses and self._follows(node, clause[0]):
                merged = symbols[clause[1]]
                end_line = max(merged.end_line, _last_line(node))
                symbols[clause[1]] = merged._replace(end_line=end_line)
                previous_by_name[qualified_name] = (node, clause[1])
                continue
            start_line = node.start_point.row + 1
            signature = ""
            type_signature = self._type_signature(node, name)
            if type_signature is not None:
                start_line = type_signature.start_point.row + 1
                signature = clean_signature(_text(type_signature))
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
            return type_name(text), qualifiers
        if definition.receiver is not None:
            receiver = type_name(_text(definition.receiver))
            if receiver:
                qualifiers.append(receiver)
        separators = self.spec.name_separators
        if separators and any(sep in text for sep in separators):
            parts = split_qualified(text, separators)
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

    def _wrapped_start(self, node: Node) -> int:
        """Where a definition starts with what wraps it (its decorators, `export`): a decorator
        is applied by the definition it decorates, so what it calls is that definition's use."""
        start, outer = node.start_byte, node.parent
        while outer is not None and outer.type in self.spec.wrappers:
            start, outer = outer.start_byte, outer.parent
        return start

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
        return clean_signature(self.content[start:end].decode("utf-8", errors="replace"))

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
                    return "" if comments else clean_string(_text(node))
                comments.append(node)
                row = node.start_point.row - 1
                continue
            if row in self._attribute_rows and not comments:
                row -= 1
                continue
            break
        if not comments:
            return ""
        return clean_comments(_text(node) for node in reversed(comments))

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
            text = clean_string(_text(doc))
            if text:
                symbols[index] = symbols[index]._replace(docstring=text)

    # references

    def references(self, spans: list[_Span]) -> list[Reference]:
        """Calls, imports and inheritance, each with the symbol it is in."""
        found = self.found
        not_calls = found.not_calls | {d.name.start_byte for d in found.definitions.values()}
        # (position, kind, name, line, qualifier, imported names)
        pending: list[tuple[int, str, str, int, str, tuple[str, ...]]] = []
        # A name bound by an import under another name is the imported name where it is
        # called or inherited bare (`post(...)` after `from ledger import post_entry as post`):
        # what the graph resolves is the definition's own name.
        defined = {_text(d.name) for d in found.definitions.values()}
        aliases = {
            alias: original
            for entry in found.imports.values()
            for alias, imported in entry.aliases.items()
            if (original := import_name(imported)) and original != alias and alias not in defined
        }
        # A module bound under another name is written out where it qualifies a call
        # (`np.array` after `import numpy as np` is `numpy.array`): what it names is the module.
        module_aliases = {
            alias: clean_module(module)
            for entry in found.imports.values()
            for alias, module in entry.module_aliases.items()
            if alias not in defined
        }
        for position, (name_node, qualifier_node, callee) in found.calls.items():
            if position in not_calls:
                continue  # e.g. the head of a definition written as a call (Elixir `def f(x)`)
            name = last_identifier(_text(name_node))
            if not name:
                continue
            if qualifier_node is not None:
                qualifier = clean_qualifier(_text(qualifier_node))
            elif callee is not None:
                prefix = self.content[callee.start_byte : position]
                qualifier = clean_qualifier(prefix.decode("utf-8", errors="replace"))
            else:
                qualifier = ""
                name = aliases.get(name, name)
            if module_aliases and qualifier:
                head, dot, rest = qualifier.partition(".")
                if head in module_aliases:
                    qualifier = module_aliases[head] + dot + rest
            line = name_node.start_point.row + 1
            pending.append((position, "call", name, line, qualifier, ()))
        for position, (name_node, qualifier_node) in found.uses.items():
            if position in found.calls:
                continue
            name = last_identifier(_text(name_node))
            if not name:
                continue
            qualifier = clean_qualifier(_text(qualifier_node)) if qualifier_node is not None else ""
            if not qualifier:
                name = aliases.get(name, name)
            pending.append((position, "use", name, name_node.start_point.row + 1, qualifier, ()))
        for entry in found.imports.values():
            cleaned = (import_name(text) for _, text in sorted(entry.names))
            names = tuple(dict.fromkeys(name for name in cleaned if name))
            if entry.parts:
                modules = [".".join(clean_module(text) for _, text in sorted(entry.parts))]
            else:
                modules = [clean_module(text) for _, text in sorted(entry.modules)]
            if entry.inline_modules:
                modules = [from_file_module(module, entry.inline_modules) for module in modules]
            for module in dict.fromkeys(modules):
                if module:
                    pending.append((entry.position, "import", module, entry.line, "", names))
            # A name bound under another (`from .ledger import post_entry as post`, `export {
            # a as b } from`): a file importing the bound name from this one takes the original.
            for bound, imported in entry.aliases.items():
                original = import_name(imported)
                if original and original not in ("*", bound):
                    pending.append((entry.position, "alias", original, entry.line, bound, ()))
        for base in found.bases:
            name = type_name(_text(base))
            name = aliases.get(name, name)
            if name:
                pending.append((base.start_byte, "inherit", name, base.start_point.row + 1, "", ()))
        pending.sort(key=lambda item: item[0])
        enclosing = _enclosing([item[0] for item in pending], spans)
        typed = _receiver_types_of(found, spans)
        bare_members = self.spec.name in _BARE_MEMBERS
        references = [
            Reference(kind, name, line, outer, _receiver_type(typed, outer, qualifier, bare_members) if kind in ("call", "use") else qualifier, names)
            for (_, kind, name, line, qualifier, names), outer in zip(
                pending, enclosing, strict=True
            )
        ]
        references.sort(key=lambda r: (r.line, r.kind))
        return references


def _receiver_types_of(found: _Matches, spans: list[_Span]) -> dict[tuple[str | None, str], str]:
    """(enclosing symbol, name) -> the type of the instance the name is bound to there, for the
    names bound to one type only in their scope: a call on such a name is a call of the type's
    method (`s.get()` after `s = Session()` is `Session.get`)."""
    if not found.receivers:
        return {}
    receivers = sorted(found.receivers)
    scopes = _enclosing([position for position, _, _ in receivers], spans)
    types: dict[tuple[str | None, str], str | None] = {}
    for (_, name, kind), scope in zip(receivers, scopes, strict=True):
        if name.startswith(_OWN) and scope and "." in scope:
            scope = scope.rsplit(".", 1)[0]  # `self.x` set in a method: the class's member
        key = (scope, name)
        types[key] = kind if types.get(key, kind) == kind else None
    return {key: kind for key, kind in types.items() if kind is not None}


#: How a method names its own object's members.
_OWN = ("self.", "this.")
#: Languages whose methods see their class's fields by their bare names.
_BARE_MEMBERS = frozenset({"java", "csharp", "kotlin"})


def _receiver_type(
    typed: dict[tuple[str | None, str], str], scope: str | None, qualifier: str, bare_members: bool
) -> str:
    """The type a call's qualifier is an instance of, where known, else the qualifier: bound in
    the call's own scope, or a member of a class around it (`self.router`, `this.router`, and a
    field's bare name where the language lets a method see it)."""
    found = typed.get((scope, qualifier))
    if found is not None:
        return found
    member = qualifier.startswith(_OWN)
    if not (member or (bare_members and qualifier and "." not in qualifier)):
        return qualifier
    names = (qualifier, qualifier.split(".", 1)[1]) if member else (qualifier,)
    while scope and "." in scope:
        scope = scope.rsplit(".", 1)[0]
        for name in names:
            found = typed.get((scope, name))
            if found is not None:
                return found
    return qualifier


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
