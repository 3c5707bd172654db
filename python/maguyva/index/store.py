"""Where an index lives and its manifest: the list of files it was built from.

An index is a folder. By default it sits in a per-user cache folder keyed by the repository's
absolute path (so two checkouts of one project never share an index); `MAGUYVA_HOME` moves that
cache, and callers may name any folder. Files are replaced atomically, so a crash mid-write
leaves the previous index readable.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: Version of the index folder layout; a folder of another version is rebuilt, not misread.
FORMAT_VERSION = 1

MANIFEST = "manifest.json"
TEXT_INDEX = "text.idx"


class IndexNotFoundError(FileNotFoundError):
    """There is no usable index where one was expected."""


def cache_home() -> Path:
    """The folder holding every default index: `MAGUYVA_HOME`, else the platform's user cache."""
    if home := os.environ.get("MAGUYVA_HOME"):
        return Path(home).expanduser()
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "maguyva"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / "maguyva"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "maguyva"


def default_index_dir(root: Path) -> Path:
    """The default index folder of the repository at `root`."""
    root = root.resolve()
    key = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return cache_home() / f"{root.name or 'root'}-{key}"


@dataclass(frozen=True)
class FileEntry:
    """One indexed file: its document id, its path relative to the root, and what identifies its
    version (size and modification time)."""

    doc_id: int
    path: str
    size: int
    mtime_ns: int


@dataclass
class Manifest:
    """What an index was built from."""

    root: str
    files: list[FileEntry]
    skipped: dict[str, int] = field(default_factory=dict)
    version: int = FORMAT_VERSION

    def write(self, index_dir: Path) -> None:
        write_atomically(index_dir / MANIFEST, json.dumps(asdict(self), indent=1).encode())

    @staticmethod
    def read(index_dir: Path) -> Manifest:
        path = index_dir / MANIFEST
        try:
            raw = json.loads(path.read_bytes())
        except FileNotFoundError:
            raise IndexNotFoundError(f"no maguyva index in {index_dir}") from None
        except (OSError, ValueError) as err:
            raise IndexNotFoundError(f"{path}: unreadable manifest ({err})") from None
        if raw.get("version") != FORMAT_VERSION:
            raise IndexNotFoundError(
                f"{index_dir}: index format {raw.get('version')} is not {FORMAT_VERSION}; rebuild it"
            )
        return Manifest(
            root=raw["root"],
            files=[FileEntry(**f) for f in raw["files"]],
            skipped=raw.get("skipped", {}),
        )


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
