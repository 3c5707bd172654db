"""Cleaning up the text of signatures, qualifiers, module names, strings and comments."""

from __future__ import annotations

import re
from collections.abc import Iterable
from inspect import cleandoc

#: Signatures and docstrings longer than this are cut: they are for display and matching, and a
#: few hundred characters carry what a reader needs.
MAX_SIGNATURE_CHARS = 300
MAX_DOCSTRING_CHARS = 2_000
#: Qualifiers of calls are kept as written up to this length (long chains are rarely useful).
MAX_QUALIFIER_CHARS = 120

_IDENTIFIER = re.compile(r"[A-Za-z_$@][\w$!?]*|~\w+")
_TYPE_PREFIX = re.compile(r"^(?:[&*(\[\s]|'\w+\s|mut\s|dyn\s|impl\s|const\s|struct\s|class\s)+")
_GENERIC_ARGS = re.compile(r"<[^<>]*>")


def type_name(text: str) -> str:
    """The bare type name in a type as written: `*pkg.Server[T]` -> `Server`."""
    text = _TYPE_PREFIX.sub("", text.strip())
    for stop in "<[({ \n\t":
        index = text.find(stop)
        if index > 0:
            text = text[:index]
    return last_identifier(text)


def last_identifier(text: str) -> str:
    if text.isidentifier():
        return text
    found = _IDENTIFIER.findall(text)
    return found[-1] if found else ""


def split_qualified(text: str, separators: tuple[str, ...]) -> list[str]:
    """`ns::Foo<T>::bar` -> ["ns", "Foo", "bar"]."""
    if "operator" not in text:
        previous = None
        while previous != text:
            previous, text = text, _GENERIC_ARGS.sub("", text)
    pattern = "|".join(re.escape(sep) for sep in sorted(separators, key=len, reverse=True))
    parts = [part.strip() for part in re.split(pattern, text)]
    return [part for part in parts if part] or [text]


def clean_signature(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines()]
    lines = [line for line in lines if line]
    while len(lines) > 1 and lines[0].startswith(("@", "#[", "[")):
        lines.pop(0)  # annotations and attributes on lines of their own
    signature = "\n".join(lines).rstrip(" \t{=")
    if len(signature) > MAX_SIGNATURE_CHARS:
        signature = signature[:MAX_SIGNATURE_CHARS].rstrip() + "…"
    return signature


def clean_qualifier(text: str) -> str:
    if text.isidentifier():
        return text
    text = " ".join(text.split())
    text = text.rstrip(".:->\\ ")
    if text.endswith("?"):  # optional chaining, `a?.b()`
        text = text[:-1]
    if len(text) > MAX_QUALIFIER_CHARS:
        text = "…" + text[-MAX_QUALIFIER_CHARS:]
    return text


def clean_module(text: str) -> str:
    text = text.strip().strip("\"'`<>").strip()
    return text


def import_name(text: str) -> str:
    text = text.strip()
    if text.startswith("*") or text in ("_",):
        return "*"
    for stop in (" ", "(", "{", "\n", "\t", ","):
        index = text.find(stop)
        if index > 0:
            text = text[:index]
    return text.rstrip(":")


_STRING_PREFIX = re.compile(r"^[rRuUbBfF]*(\"\"\"|'''|\"|')(.*)\1$", re.DOTALL)


def clean_string(text: str) -> str:
    """The text of a string literal used as a docstring."""
    text = text.strip()
    match = _STRING_PREFIX.match(text)
    if match:
        text = match.group(2)
    elif text.startswith("~") and len(text) > 3:  # an Elixir sigil, ~S\"\"\"...\"\"\"
        return clean_string(text[2:])
    elif text in ("false", "nil"):
        return ""
    return _cap(cleandoc(text))


_COMMENT_START = re.compile(r"^(?:/\*+!?|///?!?|#+!?|--+\s*[|^]?|;+|%+|\{-\s*\|?|=begin)\s?")
_COMMENT_END = re.compile(r"\s*(?:\*+/|-\}|=end)$")
_XML_DOC_TAG = re.compile(r"</?(?:summary|remarks|returns|para)>")


def clean_comments(texts: Iterable[str]) -> str:
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
