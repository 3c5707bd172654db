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

The steps, a module each: `detect` (which language), `macros` (C export macros blanked),
`compiled` (the compiled query and parser of each language), `extract` (captures to symbols,
references and chunks) and `text` (signatures, qualifiers and comments cleaned up).
"""

from __future__ import annotations

import logging

from maguyva.index.chunk import chunk_text, split_lines
from maguyva.index.model import ParsedFile
from maguyva.index.parse.compiled import compiled_for
from maguyva.index.parse.detect import CPP_HEADER, language_for, language_from_shebang
from maguyva.index.parse.extract import parse_code
from maguyva.index.parse.macros import without_export_macros
from maguyva.lexicon import code_words

__all__ = ["PARSER_VERSION", "language_for", "parse_file", "without_export_macros"]

logger = logging.getLogger("maguyva.index.parse")


#: Raised whenever a change to the rules below changes what a file parses into (or what its
#: references resolve to), so that indexes built before it parse their files again instead of
#: keeping the old symbols, chunks and edges.
PARSER_VERSION = 18


def parse_file(path: str, content: bytes) -> ParsedFile:
    """Chunks, symbols and references of the file at `path` whose bytes are `content`."""
    language = language_for(path)
    if language is None:
        language = language_from_shebang(content)
    elif language == "c" and path.endswith(".h") and CPP_HEADER.search(content):
        language = "cpp"
    lines = split_lines(content)
    compiled = None if language is None else compiled_for(language)
    if compiled is not None:
        try:
            return parse_code(path, compiled, content, lines)
        except Exception:  # a grammar or query failure must not stop an index build
            logger.warning("could not parse %s as %s; chunked as text", path, language, exc_info=True)
    # Without a syntax tree, nothing tells comments apart: every name counts.
    words = code_words(content)
    return ParsedFile(path=path, language=language, chunks=chunk_text(lines), code_words=words)
