"""Repositories given by git URL: cloned shallowly into the cache folder, searched like a
folder, brought up to date on request, with one-sentence errors when git or the repository
cannot be reached. Every URL here is a local one (file://) or a closed port on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fixture_repos import write_file, write_tree

from maguyva.errors import CloneError
from maguyva.serve import clones
from maguyva.serve.cli import main


def git(root: Path, *arguments: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *arguments],
                   cwd=root, check=True, capture_output=True)  # fmt: skip


@pytest.fixture()
def origin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    root = write_tree(tmp_path / "ledger", {
        "books/post.py": "def post_entry():\n    return 'FIRSTMARK'\n",
        "README.md": "# ledger\n",
    })  # fmt: skip
    git(root, "init", "--quiet", "--initial-branch", "main")
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "first")
    return root


def search_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["search", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_repository_given_by_url_is_cloned_once_and_searched(origin, capsys):
    url = origin.as_uri()
    answer = search_json(capsys, '"FIRSTMARK"', url)
    assert [(r["path"], r["start_line"]) for r in answer["results"]] == [("books/post.py", 2)]
    clone = clones.clone_folder(url)
    assert clone.name == "ledger" and (clone / ".git").is_dir()
    # Shallow: one commit.
    count = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=clone, capture_output=True, text=True)
    assert count.stdout.strip() == "1"
    # A new commit upstream is seen only when asked for.
    write_file(origin, "books/post.py", "def post_entry():\n    return 'SECONDMARK'\n")
    git(origin, "commit", "--quiet", "-am", "second")
    assert search_json(capsys, '"SECONDMARK"', url)["results"] == []
    pulled = search_json(capsys, '"SECONDMARK"', url, "--pull")
    assert [r["path"] for r in pulled["results"]] == ["books/post.py"]


def test_urls_are_told_from_paths():
    for url in ["https://github.com/owner/name", "git@github.com:owner/name.git", "ssh://host/x.git", "file:///srv/r"]:
        assert clones.is_git_url(url), url
    for path in [".", "src/app", "/abs/path", "C:relative"]:
        assert not clones.is_git_url(path), path


def test_an_unreachable_repository_is_one_sentence(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    with pytest.raises(CloneError, match="could not clone") as caught:
        clones.checkout("https://127.0.0.1:9/nobody/nothing.git")
    assert "\n" not in str(caught.value)
    assert not list((tmp_path / "home" / "clones").rglob("*.py")), "nothing half cloned is left"
    assert main(["search", "anything", (tmp_path / "missing").as_uri()]) == 2
    assert capsys.readouterr().err.startswith("maguyva: could not clone")


def test_without_git_the_error_says_so(origin, monkeypatch):
    monkeypatch.setattr(clones.shutil, "which", lambda name: None)
    with pytest.raises(CloneError, match="needs git, which is not installed"):
        clones.checkout(origin.as_uri())
