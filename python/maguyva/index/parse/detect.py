"""Which language a file is in: by its extension or name, by its `#!` line, and C++ in a `.h`
file by its markers."""

from __future__ import annotations

import re

from maguyva.index.parse.languages import LANGUAGES

_BY_EXTENSION = {ext: spec.name for spec in LANGUAGES.values() for ext in spec.extensions}
_BY_FILENAME = {name: spec.name for spec in LANGUAGES.values() for name in spec.filenames}
_BY_INTERPRETER = {
    name: spec.name for spec in LANGUAGES.values() for name in spec.interpreters
}
_SHEBANG = re.compile(rb"#![ \t]*(\S+)(?:[ \t]+(?:-\S+[ \t]+)*(\S+))?")
#: Markers of C++ in a `.h` file, which is otherwise read as C.
CPP_HEADER = re.compile(
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


def language_from_shebang(content: bytes) -> str | None:
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
