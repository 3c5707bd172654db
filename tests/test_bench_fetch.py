"""`benches/quality.py fetch`: pinned checkouts and the annotation download, on local stand-ins."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCHES = Path(__file__).resolve().parent.parent / "benches"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture(scope="module")
def quality():
    """benches/quality.py as a module (it puts benches/ on sys.path for its siblings; undone after)."""
    path_before = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location("bench_quality", BENCHES / "quality.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)
        yield module
    finally:
        for name in ("bench_quality", "queries", "peers"):
            sys.modules.pop(name, None)
        sys.path[:] = path_before


def git(cwd: Path, *args: str) -> str:
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"]
    return subprocess.run(["git", *identity, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository with two commits; returns its path and both commit ids (pinned, newer)."""
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "--quiet")
    (repo / "a.py").write_text("pinned\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "--quiet", "-m", "pinned")
    pinned = git(repo, "rev-parse", "HEAD")
    (repo / "a.py").write_text("newer\n")
    git(repo, "commit", "--quiet", "-am", "newer")
    return repo, pinned, git(repo, "rev-parse", "HEAD")


def test_checkout_pinned_gets_the_pinned_revision_not_the_newest(quality, upstream, tmp_path):
    repo, pinned, _ = upstream
    dest = tmp_path / "trees" / "demo"
    assert quality.checkout_pinned(repo.as_uri(), pinned, dest) == "cloned"
    assert (dest / "a.py").read_text() == "pinned\n"
    assert quality.head_revision(dest) == pinned
    # a second run leaves it alone
    assert quality.checkout_pinned(repo.as_uri(), pinned, dest) == "already at revision"


def test_checkout_pinned_does_not_touch_a_folder_it_did_not_make(quality, upstream, tmp_path):
    repo, pinned, _ = upstream
    dest = tmp_path / "materialized"
    dest.mkdir()
    (dest / "a.py").write_text("mine\n")
    assert quality.checkout_pinned(repo.as_uri(), pinned, dest).startswith("left as is")
    assert (dest / "a.py").read_text() == "mine\n"


def test_fetch_downloads_annotations_then_clones(quality, upstream, tmp_path):
    repo, pinned, _ = upstream
    benchmarks = tmp_path / "semble" / "benchmarks"
    (benchmarks / "annotations").mkdir(parents=True)
    listing = [{"name": "demo", "language": "python", "url": repo.as_uri(), "revision": pinned,
                "benchmark_root": None},
               {"name": "other", "language": "go", "url": repo.as_uri(), "revision": pinned}]
    (benchmarks / "repos.json").write_text(json.dumps(listing))
    queries = [{"query": "pinned", "relevant": ["a.py"], "secondary": [], "category": "semantic"}]
    (benchmarks / "annotations" / "demo.json").write_text(json.dumps(queries))

    bench, trees = tmp_path / "bench", tmp_path / "trees"
    parser = quality.fetch_parser()
    args = parser.parse_args(["--dest", str(trees), "--bench", str(bench), "--annotations", "--annotations-url",
                              benchmarks.as_uri() + "/", "--repos-subset", "demo"])
    assert quality.fetch(args, parser) == 0
    assert json.loads((bench / "repos.json").read_text()) == listing
    assert json.loads((bench / "annotations" / "demo.json").read_text()) == queries
    assert not (bench / "annotations" / "other.json").exists()
    assert (trees / "demo" / "a.py").read_text() == "pinned\n"
    assert not (trees / "other").exists()


def test_fetch_will_not_download_annotations_over_the_default_benchmark(quality, tmp_path):
    parser = quality.fetch_parser()
    args = parser.parse_args(["--dest", str(tmp_path / "trees"), "--annotations"])
    with pytest.raises(SystemExit):
        quality.fetch(args, parser)


def test_fetch_reports_a_revision_that_does_not_exist(quality, upstream, tmp_path, capsys):
    repo, _, _ = upstream
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "repos.json").write_text(json.dumps(
        [{"name": "demo", "language": "python", "url": repo.as_uri(), "revision": "0" * 40}]))
    parser = quality.fetch_parser()
    args = parser.parse_args(["--dest", str(tmp_path / "trees"), "--bench", str(bench)])
    assert quality.fetch(args, parser) == 1
    assert "FAILED" in capsys.readouterr().out
    assert not (tmp_path / "trees" / "demo").exists()  # nothing half-made is left to block a retry
