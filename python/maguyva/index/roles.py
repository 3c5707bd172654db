"""The roles of a repository's files: facts about what each file is, found once at build time.

A question about a concept matches its tests, examples and documentation as well as the code
that implements it, and a file written once per platform or kept for an older version as well as
the one most readers mean. The ranking weighs these facts (`maguyva.query.rank.signals`,
`maguyva.query.rank`); they depend only on the paths of the index, so the build works them out
and stores them with each file (`files.roles`, a bit per role, and `files.role_names`), and no
query works them out again.

- TEST: a test by its name in the broad reading (`ANY_TEST_NAME`) or under a test folder
  (`is_test_path`).
- SECONDARY: tests under a test folder or by their language's convention (`CONVENTIONAL_TEST_NAME`:
  a test framework's own `test_functions.bash` is the code asked about), examples, benchmarks,
  compatibility shims and files in no programming language (`is_secondary_path`).
- VENDORED: vendored, built, archived, minified or generated code (`path_demotion` < 1).
- HEADER_BESIDE_SOURCE: a C/C++ header in the folder of a source file of the same name.
- PART_BESIDE_WHOLE: `Name.Part.ext` in the folder of `Name.ext` (a partial class split by
  concern); its part names are stored (a question naming the part asks for it).
- OLDER_VERSION: under a version folder (`v3/`) with a newer sibling (`v4/`); the versions of its
  folders are stored (a question naming the version asks for it).
- WINDOWS_PORT: the Windows side of a file written once per platform (`win/serial.c` beside
  `unix/serial.c`, `term_windows.go` beside `term_unix.go`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from maguyva import config

TEST = 1
SECONDARY = 2
VENDORED = 4
HEADER_BESIDE_SOURCE = 8
PART_BESIDE_WHOLE = 16
OLDER_VERSION = 32
WINDOWS_PORT = 64


_DEMOTED_FOLDERS = frozenset(
    {
        "vendor", "vendors", "third_party", "third-party", "thirdparty", "node_modules",
        "bower_components", "build", "dist", "target", "out", "archive", "archives",
        "generated", "gen", "__generated__",
    }
)
_DEMOTED_NAMES = re.compile(
    r"""(\.min\.(js|css|mjs)$)|(\.(js|css)\.map$)|(_pb2(_grpc)?\.pyi?$)|(\.pb(\.gw)?\.go$)
    |(\.pb\.(h|cc)$)|(\.g\.dart$)|(\.(generated|gen)\.\w+$)|(_generated\.\w+$)|(\.designer\.cs$)
    |(\.(tar|tgz|zip|jar|whl)$)|(^(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|poetry\.lock)$)""",
    re.VERBOSE,
)

_TEST_FOLDERS = frozenset({"test", "tests", "spec", "specs", "__tests__", "__mocks__", "testing", "testdata"})
# A file's name says it is a test in two readings, and every name of the first is one of the second
# (tests/test_roles.py checks it):
#: By its language's own convention (`test_x.py`, `x_test.go`, `x.spec.ts`, `XTest.java`): the
#: reading the ranking demotes by (SECONDARY), since there a test framework's own
#: `test_functions.bash` or a `tests.rs` module is the code being asked about, not a test of it.
CONVENTIONAL_TEST_NAME = re.compile(
    r"^test_\w*\.py$|^conftest\.py$|_test\.(?:go|py|rb|c|cc|cpp|exs?|lua|dart)$|_spec\.rb$"
    r"|[._](?:test|spec)\.[cm]?[jt]sx?$|[a-z0-9](?:Test|Tests|Spec|IT)\.(?:java|kt|cs|swift|scala|php|groovy)$"
)
#: By the same marks in any language and a `test_` / `tests-` prefix (`x_test.rs`,
#: `test_helpers.sh`): the reading that orders navigation and the symbol ranking (TEST), where
#: putting a test after other code costs little when it was the code asked about.
ANY_TEST_NAME = re.compile(r"^tests?[_-]|^conftest\.py$|[._-](?:tests?|specs?)\.\w+$|[a-z0-9](?:Test|Tests|Spec|IT)\.\w+$")
_SECONDARY_FOLDERS = frozenset(
    {"example", "examples", "_examples", "docs_src", "compat", "_compat", "legacy"}
    | {"bench", "benches", "benchmark", "benchmarks"}
    | _TEST_FOLDERS
)
_HEADER_EXTENSIONS = frozenset({"h", "hh", "hpp", "hxx"})
_SOURCE_EXTENSIONS = ("c", "cc", "cpp", "cxx", "m", "mm")
_VERSION_FOLDER = re.compile(r"v(\d+)")
_WINDOWS_FOLDERS = frozenset({"win", "win32", "windows"})
_WINDOWS_SUFFIX = re.compile(r"^(?P<base>.+)_windows$")
_PLATFORM_SUFFIX = re.compile(r"^(?P<base>.+)_(?:unix|posix|linux|darwin|bsd|freebsd|openbsd|netbsd|solaris|aix)$")


#: path -> (vendored, built or generated; test code): of the path alone, so kept for the process
#: (up to config.PATH_MARKS_CACHE_ENTRIES paths): a generation whose paths changed asks again for
#: every path's, through the roles and the symbol ranking.
_PATH_MARKS: dict[str, tuple[bool, bool]] = {}


def _path_marks(path: str) -> tuple[bool, bool]:
    found = _PATH_MARKS.get(path)
    if found is None:
        if len(_PATH_MARKS) >= config.current().PATH_MARKS_CACHE_ENTRIES:
            _PATH_MARKS.clear()
        *folders, name = path.split("/")
        lowered = [folder.lower() for folder in folders]
        demoted = any(folder in _DEMOTED_FOLDERS for folder in lowered) or bool(_DEMOTED_NAMES.search(name))
        test = any(folder in _TEST_FOLDERS for folder in lowered) or bool(ANY_TEST_NAME.search(name))
        found = _PATH_MARKS[path] = (demoted, test)
    return found


def path_demotion(path: str) -> float:
    """config.VENDORED_DEMOTION for vendored, built or generated code (a relative, '/'-separated path), else 1."""
    return config.current().VENDORED_DEMOTION if _path_marks(path)[0] else 1.0


def is_test_path(path: str) -> bool:
    """Whether a relative '/'-separated path is test code by the usual conventions."""
    return _path_marks(path)[1]


def is_secondary_path(path: str, language: str | None) -> bool:
    """Tests, examples, compatibility shims, and files in no programming language."""
    *folders, name = path.split("/")
    if language is None or CONVENTIONAL_TEST_NAME.search(name):
        return True
    return any(folder.lower() in _SECONDARY_FOLDERS for folder in folders)


def headers_beside_sources(paths: Sequence[str]) -> set[int]:
    """The positions in `paths` of C/C++ headers in the folder of a source file of the same name."""
    present = set(paths)
    found = set()
    for file_id, path in enumerate(paths):
        base, dot, extension = path.rpartition(".")
        if dot and extension.lower() in _HEADER_EXTENSIONS and any(f"{base}.{e}" in present for e in _SOURCE_EXTENSIONS):
            found.add(file_id)
    return found


def older_versions(paths: Sequence[str]) -> dict[int, list[str]]:
    """The positions in `paths` of files under a version folder (`v3/`) that has a newer sibling
    (`v4/`), with the versions of those folders."""
    newest: dict[str, int] = {}
    found: list[tuple[int, list[tuple[str, int]]]] = []
    for file_id, path in enumerate(paths):
        folders = path.split("/")[:-1]
        versions = []
        for depth, folder in enumerate(folders):
            m = _VERSION_FOLDER.fullmatch(folder)
            if m is not None:
                parent = "/".join(folders[:depth])
                newest[parent] = max(newest.get(parent, 0), int(m[1]))
                versions.append((parent, int(m[1])))
        if versions:
            found.append((file_id, versions))
    return {
        file_id: sorted({str(v) for _, v in versions})
        for file_id, versions in found
        if any(v < newest[parent] for parent, v in versions)
    }


def parts_beside_wholes(paths: Sequence[str]) -> dict[int, list[str]]:
    """The positions in `paths` of files named `Name.Part.ext` in the folder of a `Name.ext` (a
    C# partial class split by concern, a module's declarations or variant), with their part
    names (`Part`)."""
    present = set(paths)
    found: dict[int, list[str]] = {}
    for file_id, path in enumerate(paths):
        folder, slash, name = path.rpartition("/")
        first, *rest = name.split(".")
        if not first or len(rest) < 2:
            continue
        *middle, extension = rest
        if f"{folder}{slash}{first}.{extension}" in present:
            found[file_id] = middle
    return found


def windows_ports(paths: Sequence[str]) -> set[int]:
    """The positions in `paths` of the Windows side of a file written once per platform: under
    a Windows folder with a same-named file under a sibling folder (`src/win/serial.c` beside
    `src/unix/serial.c`), or named for Windows beside a file of the same base name
    (`term_windows.go` beside `term_unix.go` or `term.go`)."""
    wanted: dict[tuple[str, str], list[int]] = {}  # (parent, rest) -> Windows files
    for file_id, path in enumerate(paths):
        parts = path.split("/")
        for depth, folder in enumerate(parts[:-1]):
            if folder.lower() in _WINDOWS_FOLDERS:
                key = ("/".join(parts[:depth]), "/".join(parts[depth + 1 :]))
                wanted.setdefault(key, []).append(file_id)
    found: set[int] = set()
    if wanted:
        for path in paths:
            parts = path.split("/")
            for depth in range(len(parts) - 1):
                if parts[depth].lower() in _WINDOWS_FOLDERS:
                    continue
                ports = wanted.get(("/".join(parts[:depth]), "/".join(parts[depth + 1 :])))
                if ports:
                    found.update(ports)
    bases: set[tuple[str, str, str]] = set()  # (folder, base name, extension) of other files
    ported: list[tuple[int, tuple[str, str, str]]] = []
    for file_id, path in enumerate(paths):
        folder, _, name = path.rpartition("/")
        stem, dot, extension = name.rpartition(".")
        if not dot:
            continue
        windows = _WINDOWS_SUFFIX.fullmatch(stem)
        if windows is not None:
            ported.append((file_id, (folder, windows["base"], extension)))
            continue
        other = _PLATFORM_SUFFIX.fullmatch(stem)
        bases.add((folder, other["base"] if other else stem, extension))
    found.update(file_id for file_id, key in ported if key in bases)
    return found


@dataclass(frozen=True, slots=True)
class FileRoles:
    """One file's roles (a bit each) and the names that qualify two of them."""

    bits: int = 0
    #: PART_BESIDE_WHOLE: the part names of `Name.Part.ext`.
    parts: tuple[str, ...] = ()
    #: OLDER_VERSION: the versions of its version folders.
    versions: tuple[str, ...] = ()


def roles_of(paths: Sequence[str], languages: Sequence[str | None]) -> list[FileRoles]:
    """The roles of every file of one index (`paths` relative, '/'-separated; `languages` the
    detected language of each, None for no programming language)."""
    headers = headers_beside_sources(paths)
    older = older_versions(paths)
    parts = parts_beside_wholes(paths)
    ports = windows_ports(paths)
    found = []
    for file_id, (path, language) in enumerate(zip(paths, languages)):
        bits = (
            TEST * is_test_path(path)
            | SECONDARY * is_secondary_path(path, language)
            | VENDORED * (path_demotion(path) < 1.0)
            | HEADER_BESIDE_SOURCE * (file_id in headers)
            | PART_BESIDE_WHOLE * (file_id in parts)
            | OLDER_VERSION * (file_id in older)
            | WINDOWS_PORT * (file_id in ports)
        )
        found.append(FileRoles(bits, tuple(parts.get(file_id, ())), tuple(older.get(file_id, ()))))
    return found
