"""The command line end to end on a small repository written for the test."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from maguyva import Index
from maguyva.index.store import default_index_dir
from maguyva.query.results import Hit, ModalityPart
from maguyva.serve.cli import explanation, main

FILES = {
    ".gitignore": "*.log\nbuild_cache/\n",
    "src/config.py": "def parse_config(path):\n    raise ConnectionError('ECONNREFUSED while loading')\n",
    "src/retry.py": "from config import parse_config\n\ndef retry(fn):\n    return fn()\n",
    "docs/notes.md": "Retry logic lives in src/retry.py.\n",
    "debug.log": "ECONNREFUSED in a log that is ignored\n",
    "build_cache/x.py": "ECONNREFUSED in an ignored folder\n",
    "node_modules/dep/index.js": "ECONNREFUSED in a dependency\n",
    "assets/logo.bin": b"\x89PNG\x00\x00binary",
}


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    for rel, content in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def search_json(capsys, *args: str) -> dict:
    assert main(["search", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_index_then_search_finds_literal_in_indexed_files_only(repo, capsys, tmp_path):
    assert main(["index", str(repo)]) == 0
    assert "indexed 3 files" in capsys.readouterr().err
    index_dir = default_index_dir(repo)
    assert index_dir.parent == tmp_path / "home"
    reader = Index.open(repo).reader
    assert [f.path for f in reader.files] == ["docs/notes.md", "src/config.py", "src/retry.py"]
    assert reader.skipped == {"binary": 1}

    out = search_json(capsys, '"ECONNREFUSED"', str(repo))
    assert out["intent"] == "exact_match"
    assert [r["path"] for r in out["results"]] == ["src/config.py"]
    assert out["results"][0]["start_line"] <= 2 <= out["results"][0]["end_line"]


def test_search_ranks_by_terms_and_builds_index_when_missing(repo, capsys):
    out = search_json(capsys, "how does retry work", str(repo), "--top-k", "2")
    assert out["intent"] == "understand_code"
    # The code first; notes about it (not code) rank below the code that implements it.
    assert out["results"][0]["path"] == "src/retry.py"
    assert "docs/notes.md" not in {r["path"] for r in out["results"]}
    assert main(["search", "ConnectionError", str(repo)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith("src/config.py:")
    assert "raise ConnectionError('ECONNREFUSED while loading')" in text


def test_explicit_index_dir(repo, tmp_path, capsys):
    index_dir = tmp_path / "elsewhere"
    assert main(["index", str(repo), "--index-dir", str(index_dir), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert (index_dir / "CURRENT").exists()
    out = search_json(capsys, "retry", str(repo), "--index-dir", str(index_dir))
    assert out["results"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["search", "   ", "."], "the query is empty"),
        (["search", "x", "/no/such/path"], "path not found"),
        (["search", "x", ".", "--top-k", "0"], "--top-k must be at least 1"),
        (["index", __file__], "not a directory"),
    ],
)
def test_errors_are_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"maguyva: {err.strip().removeprefix('maguyva: ')}"
    assert message in err and err.count("\n") == 1


def test_damaged_index_is_rebuilt_by_the_search_that_finds_it(repo, capsys):
    assert main(["index", str(repo), "--quiet"]) == 0
    capsys.readouterr()
    generation = default_index_dir(repo) / (default_index_dir(repo) / "CURRENT").read_text()
    (generation / "text.idx").write_bytes(b"garbage")
    assert main(["search", "retry", str(repo)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("src/retry.py:")
    assert err.count("\n") == 1 and "text.idx: is damaged" in err and "rebuilt it" in err


def test_module_entry_point(repo, tmp_path):
    env = {"MAGUYVA_HOME": str(tmp_path / "home2"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "maguyva", "search", "ConnectionError", str(repo), "--json"],
        capture_output=True, text=True, env=env, check=True,
    )
    assert json.loads(done.stdout)["results"][0]["path"] == "src/config.py"


def test_no_index_and_no_permission_to_build_one(repo, tmp_path, capsys, monkeypatch):
    index_dir = tmp_path / "locked" / "index"

    def refuse(path, *args, **kwargs):  # what a folder the user may not write to answers
        raise PermissionError(13, "Permission denied", str(path))

    # Root may write anywhere, so the operating system's refusal is stood in for at mkdir.
    monkeypatch.setattr(Path, "mkdir", refuse)
    assert main(["search", "retry", str(repo), "--index-dir", str(index_dir)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("maguyva: ") and err.count("\n") == 1
    assert "Permission denied" in err and "locked" in err


def test_search_answers_from_the_files_on_disk(repo, capsys):
    assert main(["index", str(repo), "--quiet"]) == 0
    (repo / "src" / "retry.py").write_text("def retry(fn):\n    raise TimeoutError('ETIMEDOUT after retries')\n")
    out = search_json(capsys, '"ETIMEDOUT"', str(repo))
    assert [r["path"] for r in out["results"]] == ["src/retry.py"]
    (repo / "src" / "config.py").unlink()
    out = search_json(capsys, '"ECONNREFUSED"', str(repo))
    assert "src/config.py" not in [r["path"] for r in out["results"]]


def test_search_several_repositories_as_one(repo, tmp_path, capsys):
    other = tmp_path / "other"
    (other / "lib").mkdir(parents=True)
    (other / "lib" / "net.js").write_text("function connect() {\n  throw new Error('ECONNREFUSED on connect');\n}\n")
    out = search_json(capsys, '"ECONNREFUSED"', str(repo), str(other))
    assert {(r["repo"], r["path"]) for r in out["results"]} == {("repo", "src/config.py"), ("other", "lib/net.js")}
    assert main(["search", '"ECONNREFUSED"', str(repo), str(other)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if not line.startswith(" ")]
    assert sorted(line.split(":")[0] for line in lines) == ["other", "repo"]
    assert main(["search", "x", str(repo), str(other), "--index-dir", str(tmp_path / "i")]) == 2
    assert "--index-dir applies to one repository" in capsys.readouterr().err


def test_mcp_help_shows_the_tools_and_a_configuration(capsys):
    with pytest.raises(SystemExit) as done:
        main(["mcp", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for tool in ("search(query", "find_symbol(name", "callers(symbol", "impact(symbol", "find_related(path", "index_status("):
        assert tool in text
    assert '"command": "maguyva", "args": ["mcp"' in text


def test_mcp_with_a_missing_path_is_one_line(capsys):
    assert main(["mcp", "/no/such/path"]) == 2
    assert capsys.readouterr().err.strip() == "maguyva: path not found: /no/such/path"


def test_explain_adds_up_the_learned_score(repo, capsys):
    assert main(["search", "how does retry work", str(repo), "--explain", "--top-k", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("intent understand_code") and "ranking ranker.json" in lines[0]
    score_line = next(line for line in lines if line.strip().startswith("score "))
    total, _, weighed = score_line.partition("; score = ")
    # "a fused + b text_contribution - c secondary_code_x_score ...": the terms add up to the score.
    terms = re.findall(r"(?:^|([+-]) )([0-9.]+) [a-z_]+", weighed)
    value = sum(float(v) * (-1 if sign == "-" else 1) for sign, v in terms)
    assert terms and float(total.split()[1]) == pytest.approx(value, abs=2e-4)


def test_explain_adds_up_the_hand_set_score(repo, capsys):
    assert main(["search", "how does retry work", str(repo), "--explain", "--top-k", "1", "--ranking", "hand"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("intent understand_code") and "route rrf" in lines[0] and "ranking hand" in lines[0]
    score_line = next(line for line in lines if line.strip().startswith("score "))
    total, parts = score_line.split("=", 1)
    # Every term is "+value)"; they add up to the score, times the demotions' factors if any.
    values = [float(v.split(")")[0]) for v in parts.split("(+")[1:]]
    factor = math.prod(float(f) for f in re.findall(r" x ([0-9.]+) \(", parts))
    assert float(total.split()[1]) == pytest.approx(sum(values) * factor, abs=2e-4)


def test_explanation_names_each_demotion():
    hit = Hit(
        path="tests/v3/test_retry.py", start_line=1, end_line=9, score=0.03, symbol=None,
        modalities={"text": ModalityPart(rank=0, contribution=0.1)}, snippet="", chunk=0,
        adjustments={"path": 0.1, "secondary_code_factor": 0.3, "older_version_factor": 0.5},
    )
    assert explanation(hit) == "(text #1 (+0.1000) + path (+0.1000)) x 0.3 (secondary code) x 0.5 (older version)"


def test_explanation_says_which_lines_placed_a_file_that_shows_others():
    hit = Hit(
        path="geometry/shapes.py", start_line=24, end_line=40, score=0.5, symbol="circle_area",
        modalities={"structural": ModalityPart(rank=0, contribution=0.2)}, snippet="", chunk=3,
        features={"fused": 0.4, "path": 0.1}, placed_by=(1, 22),
    )
    text = explanation(hit)
    assert text.startswith("structural #1 (+0.2000); score = 0.4000 fused + 0.1000 path")
    assert "lines 1-22" in text
    assert "lines" not in explanation(replace(hit, placed_by=None))


def test_the_word_after_ray_is_its_address_only_when_it_looks_like_one():
    from maguyva.serve.cli import ray_address_joined

    assert ray_address_joined(["search", "--ray", "retry", "a"]) == ["search", "--ray=local", "retry", "a"]
    assert ray_address_joined(["search", "--ray", "auto", "retry"]) == ["search", "--ray=auto", "retry"]
    assert ray_address_joined(["mcp", "--ray", "10.0.0.5:6379", "a"]) == ["mcp", "--ray=10.0.0.5:6379", "a"]
    assert ray_address_joined(["mcp", "--ray", "ray://head:10001"]) == ["mcp", "--ray=ray://head:10001"]
    assert ray_address_joined(["search", "--ray"]) == ["search", "--ray=local"]
    assert ray_address_joined(["search", "--", "--ray", "x"]) == ["search", "--", "--ray", "x"]
