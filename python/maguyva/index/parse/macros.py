"""What C and C++ grammars cannot parse, blanked before parsing (same length, so every offset
and line still points into the file as written):

- export macros (`FOO_API class X`, `BAR_EXPORT int f(...)`): the grammars cannot tell them from
  a type, and would lose the definition after them;
- the other branches of a preprocessor conditional whose branches each open (or close) the same
  number of braces (`#ifdef A` / `if (x) {` / `#else` / `if (y) {` / `#endif`): the grammars
  read every branch, see one brace too many, and lose the function around them."""

from __future__ import annotations

import bisect
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


_CONDITIONAL = re.compile(rb"(?m)^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")
#: What braces are counted among: comments and literals are skipped whole.
_BRACE_TOKENS = re.compile(rb'//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[{}\n]', re.DOTALL)


def first_branch_of_unbalanced_conditionals(content: bytes) -> bytes:
    """`content` with every `#if` / `#elif` / `#else` group whose branches each open (or close)
    the same non-zero number of braces reduced to its first branch's code: its directives and
    other branches blanked. The code after the group is written for any one branch, and the
    grammars read a directive inside a statement it cut in two as the end of that statement.
    Groups whose branches balance are left alone (each may hold definitions of its own); braces
    in comments and literals do not count. Same length."""
    if b"#" not in content or not re.search(rb"(?m)^[ \t]*#[ \t]*(?:else|elif)", content):
        return content
    line_starts = [0, *(m.end() for m in re.finditer(rb"\n", content))]
    delta = [0] * len(line_starts)
    in_comment: set[int] = set()  # lines that begin inside a block comment
    line = 0
    for token in _BRACE_TOKENS.finditer(content):
        text = token.group()
        if text == b"\n":
            line += 1
        elif text == b"{":
            delta[line] += 1
        elif text == b"}":
            delta[line] -= 1
        elif b"\n" in text:  # a block comment over several lines
            newlines = text.count(b"\n")
            in_comment.update(range(line + 1, line + newlines + 1))
            line += newlines
    # Per open group: its directives' first lines and, per branch, [first body line, last].
    groups: list[tuple[list[int], list[list[int]]]] = []
    blank: list[tuple[int, int]] = []
    for match in _CONDITIONAL.finditer(content):
        at = bisect.bisect_right(line_starts, match.start()) - 1
        if at in in_comment:
            continue
        body = at + 1
        while body < len(line_starts) and content[line_starts[body] - 2 : line_starts[body] - 1] == b"\\":
            body += 1  # a directive continued on the next line
        word = match.group(1)
        if word.startswith(b"if"):
            groups.append(([at], [[body, -1]]))
        elif not groups:
            continue  # an #else or #endif without its #if
        elif word == b"endif":
            directives, branches = groups.pop()
            branches[-1][1] = at - 1
            nets = [sum(delta[first : last + 1]) for first, last in branches]
            if len(branches) > 1 and nets[0] != 0 and all(net == nets[0] for net in nets):
                blank.append((directives[0], branches[0][0] - 1))  # the `#if` line(s)
                blank.append((directives[1], at))  # the other branches, with their directives
                for n in range(directives[1], at + 1):
                    delta[n] = 0
        else:
            groups[-1][0].append(at)
            groups[-1][1][-1][1] = at - 1
            groups[-1][1].append([body, -1])
    if not blank:
        return content
    out = bytearray(content)
    for first, last in blank:
        start, end = line_starts[first], (line_starts[last + 1] if last + 1 < len(line_starts) else len(content))
        out[start:end] = re.sub(rb"[^\r\n]", b" ", bytes(out[start:end]))
    return bytes(out)
