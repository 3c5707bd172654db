"""File roles: found from the paths at build time, stored with each file."""

from __future__ import annotations

from maguyva import Index, config
from maguyva.index import roles
from maguyva.index.reader import chunk_demotion
from maguyva.index.roles import roles_of
from maguyva.index.symbols import path_ranks

PATHS = [
    "kiln/glaze.c",
    "kiln/glaze.h",
    "kiln/win/fire.c",
    "kiln/posix/fire.c",
    "kiln/api/v1/shapes.py",
    "kiln/api/v2/shapes.py",
    "kiln/Mold.cs",
    "kiln/Mold.Drying.cs",
    "kiln/tests/test_glaze.py",
    "kiln/vendor/clay/clay.c",
    "kiln/README.md",
]
LANGUAGES = ["c", "c", "c", "c", "python", "python", "csharp", "csharp", "python", "c", None]


def bits_of(path: str, found: list[roles.FileRoles]) -> int:
    return found[PATHS.index(path)].bits


def test_every_role_is_found_from_the_paths_together():
    found = roles_of(PATHS, LANGUAGES)
    assert bits_of("kiln/glaze.h", found) == roles.HEADER_BESIDE_SOURCE
    assert bits_of("kiln/glaze.c", found) == 0
    assert bits_of("kiln/win/fire.c", found) == roles.WINDOWS_PORT
    assert bits_of("kiln/posix/fire.c", found) == 0
    older = found[PATHS.index("kiln/api/v1/shapes.py")]
    assert older.bits == roles.OLDER_VERSION and older.versions == ("1",)
    assert bits_of("kiln/api/v2/shapes.py", found) == 0
    part = found[PATHS.index("kiln/Mold.Drying.cs")]
    assert part.bits == roles.PART_BESIDE_WHOLE and part.parts == ("Drying",)
    assert bits_of("kiln/tests/test_glaze.py", found) == roles.TEST | roles.SECONDARY
    assert bits_of("kiln/vendor/clay/clay.c", found) == roles.VENDORED
    assert bits_of("kiln/README.md", found) == roles.SECONDARY


def test_a_role_needs_its_sibling():
    # Alone, a header declares code found nowhere else, v1 is the newest version, and so on.
    alone = ["glaze.h", "api/v1/shapes.py", "Mold.Drying.cs", "win/fire.c"]
    assert [r.bits for r in roles_of(alone, ["c", "python", "csharp", "c"])] == [0, 0, 0, 0]


def test_an_index_stores_the_roles_of_its_files(tmp_path):
    root = tmp_path / "repo"
    for path in PATHS:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("# shaping clay\n" if path.endswith(".py") else "/* shaping clay */\n")
    index = Index.build(root, index_dir=tmp_path / "index")
    try:
        reader = index.reader
        stored = {f.path: (int(reader.file_roles[f.id]), reader.file_role_names.get(f.id)) for f in reader.files}
        assert stored["kiln/Mold.Drying.cs"] == (roles.PART_BESIDE_WHOLE, {"parts": ["Drying"], "versions": []})
        assert stored["kiln/api/v1/shapes.py"] == (roles.OLDER_VERSION, {"parts": [], "versions": ["1"]})
        assert stored["kiln/glaze.h"] == (roles.HEADER_BESIDE_SOURCE, None)
        assert stored["kiln/tests/test_glaze.py"] == (roles.TEST | roles.SECONDARY, None)
        assert stored["kiln/glaze.c"] == (0, None)
        # Vendored code's chunks are demoted in fusion by the stored role.
        vendored = next(f.id for f in reader.files if f.path == "kiln/vendor/clay/clay.c")
        assert set(chunk_demotion(reader)[reader.chunk_file == vendored].tolist()) == {config.DEFAULT.VENDORED_DEMOTION}
        # The structural modality ranks files by the stored roles as it would by their paths.
        by_paths = [2 if roles.path_demotion(f.path) < 1 else 1 if roles.is_test_path(f.path) else 0 for f in reader.files]
        assert path_ranks(reader) == by_paths
        assert set(by_paths) == {0, 1, 2}
    finally:
        index.close()


def test_a_conventional_test_name_is_a_test_name_in_the_broad_reading_too():
    stems = ["ledger", "test", "tests", "Ledger", "spec", "contest", "x"]
    marks = ["", "_test", ".test", "-test", "_tests", ".spec", "_spec", "Test", "Tests", "Spec", "IT", "_it"]
    prefixes = ["", "test_", "tests-", "test-", "conftest"]
    extensions = ["py", "go", "rb", "ts", "mjs", "jsx", "java", "kt", "rs", "bash", "exs", "md"]
    names = [f"{p}{s}{m}.{e}" for p in prefixes for s in stems for m in marks for e in extensions] + ["conftest.py"]
    conventional = [n for n in names if roles.CONVENTIONAL_TEST_NAME.search(n)]
    assert len(conventional) > 100
    assert [n for n in conventional if not roles.ANY_TEST_NAME.search(n)] == []
    # The readings differ where a language has no such convention, or the name only begins so.
    for name in ("ledger_test.rs", "test_functions.bash", "tests-ledger.js"):
        assert roles.is_test_path(f"src/{name}") and not roles.is_secondary_path(f"src/{name}", "rust")
    assert roles.is_test_path("src/ledger_test.go") and roles.is_secondary_path("src/ledger_test.go", "go")
    assert not roles.is_test_path("src/contest.py") and not roles.is_secondary_path("src/contest.py", "python")


def test_a_path_remembered_still_takes_the_tuning_in_use():
    path = "third_party/kiln/firing.py"
    assert roles.path_demotion(path) == config.current().VENDORED_DEMOTION < 1.0
    with config.using(config.DEFAULT.but(VENDORED_DEMOTION=0.25)):
        assert roles.path_demotion(path) == 0.25  # the path's mark is kept, the number is not
    assert roles.path_demotion("kiln/firing.py") == 1.0 and not roles.is_test_path("kiln/firing.py")
    assert roles.is_test_path("kiln/tests/firing.py") and roles.is_test_path("kiln/tests/firing.py")
