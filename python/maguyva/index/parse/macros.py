"""C and C++ export macros (`FOO_API class X`, `BAR_EXPORT int f(...)`) blanked before parsing:
the grammars cannot tell them from a type, and would lose the definition after them."""

from __future__ import annotations

import re

#: C and C++ export and attribute macros (`FMT_EXPORT template <...> class X`, `class FMT_API X :`),
#: which the grammars cannot expand and which leave the declaration they precede unparsed. A macro
#: here is an upper-case name with an underscore, so `DWORD`, `FILE` and other types stay.
_EXPORT_MACRO = rb"[A-Z][A-Z0-9]*_[A-Z0-9_]*"
_DECLARATION_WORDS = (
    rb"(?:template|class|struct|union|enum|namespace|typedef|using|inline|static|extern|constexpr|consteval"
    rb"|explicit|virtual|friend|auto|void|const|unsigned|signed|int|char|bool|long|short|float|double)\b"
)


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
