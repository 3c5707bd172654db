"""What parsing a file yields: chunks to retrieve, symbols to look up, references to link.

These plain records are the contract between the parser (tree-sitter, per language) and the
stages after it: the structural modality reads symbols, the graph is built from references, the
text and semantic modalities rank chunks. Lines are 1-based and inclusive everywhere.

Chunks, symbols and references are named tuples: a build makes one of each per chunk, definition
and reference of every file, and reads them back for every file it reuses, and a tuple is made
(and unpickled, from a parsing worker) several times faster than a frozen dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class Symbol(NamedTuple):
    """A definition: a function, method, class, type, constant..."""

    name: str
    #: One of SYMBOL_KINDS.
    kind: str
    #: Dotted path inside the file: "Session.request", "Outer.Inner.method".
    qualified_name: str
    #: The definition's header as written (first line(s), up to the body), whitespace-trimmed.
    signature: str
    #: Docstring, or the comment block right above the definition; "" when there is none.
    docstring: str
    start_line: int
    end_line: int
    #: Qualified name of the enclosing symbol, None at file level.
    parent: str | None = None


SYMBOL_KINDS = frozenset(
    {
        "function",
        "method",
        "class",
        "interface",
        "struct",
        "enum",
        "trait",
        "type",
        "constant",
        "variable",
        "module",
        "macro",
        "field",
    }
)


class Reference(NamedTuple):
    """A use of a name that links this file to code elsewhere."""

    #: "call", "import", "inherit", "use" (a name passed as a value) or "alias" (an imported
    #: name bound under another).
    kind: str
    #: For a call, the called name's last identifier (`get` in `self.session.get(...)`); for an
    #: import, the imported module or path as written (`os.path`, `./utils`, `fmt`); for
    #: inheritance, the base type's name; for an alias, the name imported.
    name: str
    line: int
    #: Qualified name of the symbol the reference is in, None at file level.
    enclosing: str | None = None
    #: For a call, the receiver or qualifier as written (`self.session`, `pkg`), else ""; in
    #: Python, a module alias written out (`numpy` for `np`) and a name bound to an instance of
    #: one type in its scope given as that type (`Session` for `s` after `s = Session()`). For
    #: an alias, the name it is bound to (`z` in `from m import y as z`).
    qualifier: str = ""
    #: For an import, the names it imports (`from a import b, c` -> ("b", "c")), else ().
    imported_names: tuple[str, ...] = ()


class Chunk(NamedTuple):
    """A span of a file retrieved as one result."""

    start_line: int
    end_line: int
    text: str
    #: Qualified name of the symbol this chunk defines or sits in, None outside any symbol.
    symbol: str | None = None


@dataclass(slots=True)
class ParsedFile:
    """Everything parsing one file produced."""

    path: str
    #: Language name (e.g. "python", "tsx"), or None for text chunked by line windows.
    language: str | None
    chunks: list[Chunk] = field(default_factory=list)
    symbols: list[Symbol] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    #: The words of the file's names outside its comments and docstrings (`lexicon.code_words`):
    #: what the file's code spells, as against what its prose says about it.
    code_words: frozenset[str] = frozenset()
