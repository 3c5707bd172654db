"""Repositories named by git URL: cloned shallowly into the cache folder, then indexed like
any folder.

    root = checkout("https://github.com/OWNER/NAME")          # cloned once, then reused
    root = checkout("https://github.com/OWNER/NAME", pull=True)  # the newest commit first

A clone lives in `clones/` of the cache folder (`MAGUYVA_HOME`), one folder per URL. It is made
in a temporary folder beside it and renamed into place, so an interrupted clone leaves nothing
that looks like a repository. git must be installed; without it, or when the URL cannot be
reached, the error says so in one sentence.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from maguyva.errors import CloneError
from maguyva.index import store

#: A URL git can clone from: a scheme git speaks, or scp-like `user@host:path`.
_GIT_URL = re.compile(r"(?:(?:https?|ssh|git|file)://\S+|[\w.-]+@[\w.-]+:[\w./~-]+)")
#: How long a clone or a fetch may take, in seconds.
GIT_TIMEOUT_SECONDS = 600


def is_git_url(text: str) -> bool:
    return _GIT_URL.fullmatch(text.strip()) is not None


def clone_folder(url: str) -> Path:
    """Where the clone of `url` lives: a folder named after the repository (the URL's last
    part, so that results are reported under that name) in a folder keyed by the whole URL."""
    cleaned = url.strip().rstrip("/").removesuffix(".git")
    name = re.sub(r"[^\w.-]", "_", re.split(r"[/:]", cleaned)[-1]) or "repo"
    key = hashlib.sha256(url.strip().encode()).hexdigest()[:16]
    return store.cache_home() / "clones" / key / name


def checkout(url: str, *, pull: bool = False) -> Path:
    """The local root of the repository at `url`: cloned (depth 1) the first time, its newest
    commit fetched first when `pull`."""
    if shutil.which("git") is None:
        raise CloneError(f"searching {url} needs git, which is not installed")
    folder = clone_folder(url)
    if (folder / ".git").is_dir():
        if pull:
            _git(["fetch", "--depth", "1", "--quiet", "origin", "HEAD"], url, folder)
            _git(["reset", "--hard", "--quiet", "FETCH_HEAD"], url, folder)
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        _git(["clone", "--depth", "1", "--quiet", "--", url, str(staging / "tree")], url)
        os.replace(staging / "tree", folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _git(arguments: list[str], url: str, cwd: Path | None = None) -> None:
    # No prompt for credentials: a private URL fails at once instead of waiting on a terminal.
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(["git", *arguments], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_SECONDS)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise CloneError(f"git {arguments[0]} of {url} took over {GIT_TIMEOUT_SECONDS} s; is the network reachable?") from None
    if done.returncode != 0:
        said = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        reason = said[-1] if said else f"exit status {done.returncode}"
        raise CloneError(f"could not {arguments[0]} {url}: {reason}")
