"""The package's import rules: data flows one way, from the build side to the answer side to the
surfaces. Every import of every module counts, those inside functions included.

- The build side (`maguyva.index`, `maguyva.embed`) never imports the answer side
  (`maguyva.query`) or the surfaces (`maguyva.serve`, `maguyva.distributed`).
- A retriever never imports the ranking after fusion: retrievers find, the ranking orders; and
  it never reads the question's intent: the plan tells it the grain and depth of its answer.
- Nothing imports the surfaces but the surfaces themselves and the entry points.
- The shared leaves (`errors`, `lexicon`, `config`) import no stage of the pipeline.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "maguyva"

BUILD = ("maguyva.index", "maguyva.embed")
ANSWER = ("maguyva.query",)
#: The API, command line and MCP server, and their distributed twin on Ray.
SURFACES = ("maguyva.serve", "maguyva.distributed")
RETRIEVERS = ("maguyva.query.retrievers",)
RANKING = ("maguyva.query.rank",)
ENTRY_POINTS = ("maguyva", "maguyva.__main__")
LEAVES = ("maguyva.errors", "maguyva.lexicon", "maguyva.config")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, root: Path) -> set[str]:
    """Every module `path` imports, anywhere in it, as absolute names (relative imports resolved;
    `from a import b` counts as both `a` and `a.b`, since `b` may be a module)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {m for m in found if m == "maguyva" or m.startswith("maguyva.")}


def within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def broken_rules(root: Path) -> list[str]:
    """Each import of the package at `root` that breaks a rule, as 'module imports target (rule)'."""
    broken = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        for target in sorted(imports_of(path, root)):
            if within(module, BUILD) and within(target, ANSWER + SURFACES):
                broken.append(f"{module} imports {target} (the build side never imports the answer side)")
            if within(module, RETRIEVERS) and within(target, RANKING):
                broken.append(f"{module} imports {target} (retrievers never import the ranking)")
            if within(target, SURFACES) and not within(module, SURFACES) and module not in ENTRY_POINTS:
                broken.append(f"{module} imports {target} (only the entry points import the surfaces)")
            if module in LEAVES and within(target, BUILD + ANSWER + SURFACES):
                broken.append(f"{module} imports {target} (a shared leaf imports no stage)")
    return broken


def test_the_package_keeps_its_import_rules():
    assert broken_rules(PACKAGE) == []


def intent_readings(path: Path) -> list[str]:
    """Where the code at `path` reads an intent: `.intent`, or an intent's name as a string."""
    from maguyva.query.intents import INTENTS

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr == "intent":
            found.append(f"{path.name}:{node.lineno} reads .intent")
        elif isinstance(node, ast.Constant) and node.value in INTENTS:
            found.append(f"{path.name}:{node.lineno} names {node.value!r}")
    return found


def test_no_retriever_reads_the_intent():
    retrievers = PACKAGE / "query" / "retrievers"
    assert [reading for path in sorted(retrievers.glob("*.py")) for reading in intent_readings(path)] == []


def test_an_intent_reading_is_seen(tmp_path: Path):
    module = tmp_path / "words.py"
    module.write_text('def f(q):\n    return q.classification.intent == "exact_match"\n')
    assert intent_readings(module) == ["words.py:2 reads .intent", "words.py:2 names 'exact_match'"]


def test_every_kind_of_import_is_seen(tmp_path: Path):
    """The rules see imports inside functions and relative imports: an invented package whose
    build side asks the answer side in three ways is caught three times."""
    root = tmp_path / "maguyva"
    for folder in ("index", "query", "query/retrievers", "serve"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "query" / "plan.py").write_text("STEPS = 3\n")
    (root / "query" / "rank.py").write_text("BONUS = 2\n")
    (root / "index" / "build.py").write_text(
        "import maguyva.query.plan\n"
        "def later():\n    from maguyva.query import plan\n"
        "def relative():\n    from ..query.plan import STEPS\n"
    )
    (root / "query" / "retrievers" / "words.py").write_text("from ..rank import BONUS\n")
    (root / "query" / "search.py").write_text("from maguyva.serve import api\n")
    broken = broken_rules(root)
    assert sum("maguyva.index.build imports maguyva.query" in b for b in broken) >= 3
    assert any(b.startswith("maguyva.query.retrievers.words imports maguyva.query.rank") for b in broken)
    assert any(b.startswith("maguyva.query.search imports maguyva.serve") for b in broken)


@pytest.mark.parametrize("name", BUILD + ANSWER + SURFACES + RETRIEVERS + RANKING + LEAVES)
def test_the_rules_name_real_modules(name: str):
    """A rule over a module or package that moved away would hold without checking anything."""
    path = PACKAGE / name.removeprefix("maguyva.").replace(".", "/")
    assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()
