"""Each language's tree-sitter query, compiled once per process from `languages.py`, and a
parser per thread."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

import tree_sitter_language_pack
from tree_sitter import Parser, Query

from maguyva.index.parse.languages import LANGUAGES, LanguageSpec

#: The parser's log, one for the whole package.
logger = logging.getLogger("maguyva.index.parse")


@dataclass(frozen=True, slots=True)
class _Pattern:
    """What the matches of one pattern of a language's query are."""

    #: "definition", "call", "receiver", "import", "inherit", "comment", "attribute", "doc",
    #: "doc.inner", "signature", or "keyed" (one of those, by the form's keyword).
    role: str
    #: For definitions, the symbol kind or "scope"; for keyed forms, their group.
    kind: str = ""


@dataclass(frozen=True, slots=True)
class _KeyedRole:
    """What a keyed form is (`LanguageSpec.keyed_roles`), its keyword's pattern compiled."""

    key: re.Pattern[str]
    role: str
    kind: str
    argument_types: frozenset[str]


@dataclass(frozen=True, slots=True)
class Compiled:
    spec: LanguageSpec
    query: Query
    patterns: tuple[_Pattern, ...]
    #: `LanguageSpec.typed_kinds` by group, their patterns compiled.
    typed_kinds: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = field(default_factory=dict)

    #: `LanguageSpec.keyed_roles` by group, their patterns compiled.
    keyed_roles: dict[str, tuple[_KeyedRole, ...]] = field(default_factory=dict)

    def typed_kind(self, group: str, type_text: str) -> str | None:
        """The kind of a ``@definition.typed_<group>`` whose ``@_type`` capture reads `type_text`."""
        return next((kind for pattern, kind in self.typed_kinds[group] if pattern.search(type_text)), None)

    def keyed_role(self, group: str, key_text: str, argument_type: str) -> tuple[str, str] | None:
        """(role, kind) of a ``@keyed.<group>`` form whose ``@_key`` capture reads `key_text`
        and whose ``@_arg`` is a node of type `argument_type`; None: the form is none of them."""
        for rule in self.keyed_roles[group]:
            if rule.key.search(key_text) and (not rule.argument_types or argument_type in rule.argument_types):
                return rule.role, rule.kind
        return None


def _typed_kinds(spec: LanguageSpec) -> dict[str, tuple[tuple[re.Pattern[str], str], ...]]:
    groups: dict[str, list[tuple[re.Pattern[str], str]]] = {}
    for group, pattern, kind in spec.typed_kinds:
        groups.setdefault(group, []).append((re.compile(pattern), kind))
    return {group: tuple(rules) for group, rules in groups.items()}


def _keyed_roles(spec: LanguageSpec) -> dict[str, tuple[_KeyedRole, ...]]:
    groups: dict[str, list[_KeyedRole]] = {}
    for group, pattern, role, kind, argument_types in spec.keyed_roles:
        groups.setdefault(group, []).append(_KeyedRole(re.compile(pattern), role, kind, argument_types))
    return {group: tuple(rules) for group, rules in groups.items()}


#: Compiled state by language; None for a language whose grammar or query failed to load.
_compiled: dict[str, Compiled | None] = {}


_compile_lock = threading.Lock()
_thread = threading.local()


def compiled_for(language: str) -> Compiled | None:
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


def compile_in_background(languages: Iterable[str]) -> threading.Thread:
    """Compile the queries of `languages` in a thread of their own, started now: a build knows
    its files' languages from the walk, and compiling (tens of milliseconds a language, 245 ms
    for Zig) then overlaps the work that releases the GIL before the first file is parsed
    (reading files, building the trigram index, loading the model). `compiled_for` waits for a
    language being compiled rather than compiling it twice."""
    wanted = sorted(set(languages) & LANGUAGES.keys())
    thread = threading.Thread(target=lambda: [compiled_for(name) for name in wanted], name="maguyva-compile", daemon=True)
    thread.start()
    return thread


def _compile(spec: LanguageSpec) -> Compiled:
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
    return Compiled(spec, query, patterns, _typed_kinds(spec), _keyed_roles(spec))


_DEFINITION_CAPTURE = re.compile(r"@definition\.(\w+)")
_KEYED_CAPTURE = re.compile(r"@keyed\.(\w+)")


def _pattern_role(pattern: str) -> _Pattern:
    keyed = _KEYED_CAPTURE.search(pattern)
    if keyed:
        return _Pattern("keyed", keyed.group(1))
    definition = _DEFINITION_CAPTURE.search(pattern)
    if definition:
        return _Pattern("definition", definition.group(1))
    for role in ("signature", "receiver", "call", "use", "import", "inherit", "doc.inner", "doc", "comment"):
        if f"@{role}" in pattern:
            return _Pattern(role)
    return _Pattern("attribute")


def parser_for(language: str) -> Parser:
    parsers: dict[str, Parser] | None = getattr(_thread, "parsers", None)
    if parsers is None:
        parsers = _thread.parsers = {}
    parser = parsers.get(language)
    if parser is None:
        name = LANGUAGES[language].grammar_name
        grammar = tree_sitter_language_pack.get_language(name)  # type: ignore[arg-type]
        parser = parsers[language] = Parser(grammar)
    return parser
