"""A repository kept fresh: changed files are re-indexed before answering, old chunks never
reach results, generations are swapped under running questions, and another process's build
is waited for rather than failed on."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from fixture_models import small_model
from fixture_repos import SHOP, write_file, write_tree

from maguyva import config
from maguyva._core import walk
from maguyva.index import store
from maguyva.embed.local import LocalEmbedder
from maguyva.errors import IndexFormatError
from maguyva.index.build import build_index
from maguyva.serve.api import Index
from maguyva.serve.repository import Repository


@pytest.fixture()
def shop(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "shop", SHOP)


def repository(root: Path, tmp_path: Path, **options) -> Repository:
    return Repository(root, index_dir=tmp_path / "index", **options)


def literal_hits(repo: Repository, literal: str) -> list[tuple[str, int, int]]:
    """The spans where the text modality found `literal` (other modalities step in when it
    finds nothing; they are not what these tests are about)."""
    with repo.open() as index:
        hits = [h for h in index.search(f'"{literal}"').results if "text" in h.modalities]
        return [(h.path, h.start_line, h.end_line) for h in hits]


def test_first_refresh_builds_then_checks_are_cheap(shop, tmp_path):
    repo = repository(shop, tmp_path)
    first = repo.refresh()
    assert first.build is not None and first.build.files == 6
    second = repo.refresh()
    assert second.build is None and not second.changes.stale and second.changes.hashed == 0
    assert repo.last_refresh is second and second.to_dict()["reindexed_files"] == 0


def holding(hits: list[tuple[str, int, int]], line: int) -> list[str]:
    """The paths of the spans that hold `line`."""
    return [path for path, start, end in hits if start <= line <= end]


def test_an_edit_is_answered_at_once_and_old_chunks_never_appear(shop, tmp_path):
    repo = repository(shop, tmp_path)
    repo.refresh()
    assert holding(literal_hits(repo, "ECONNREFUSED"), 11) == ["app/server.py"]
    # Move the literal to another file, and shift the server's lines down by three.
    write_file(shop, "app/server.py", "# moved\n\n\n" + SHOP["app/server.py"].replace("ECONNREFUSED", "EHOSTDOWN"))
    write_file(shop, "app/retry.py", SHOP["app/retry.py"] + "\n\nREFUSED = 'ECONNREFUSED'\n")
    refresh = repo.refresh()
    assert set(refresh.changes.modified) == {"app/server.py", "app/retry.py"}
    assert refresh.build is not None and refresh.build.parsed_files == 2
    moved = literal_hits(repo, "ECONNREFUSED")
    assert [path for path, _, _ in moved] == ["app/retry.py"] and holding(moved, 13) == ["app/retry.py"]
    renamed = literal_hits(repo, "EHOSTDOWN")
    assert [path for path, _, _ in renamed] == ["app/server.py"] and holding(renamed, 14) == ["app/server.py"]
    with repo.open() as index:
        hit = index.search("class Server").results[0]
        assert hit.path == "app/server.py" and hit.start_line <= 7 <= hit.end_line
        file_id = next(f.id for f in index.reader.files if f.path == "app/server.py")
        assert index.reader.lines_between(file_id, 7, 7) == ["class Server:"], "the index holds the new file"
    (shop / "app" / "retry.py").unlink()
    repo.refresh()
    assert literal_hits(repo, "ECONNREFUSED") == []


def test_an_edit_keeps_the_records_of_the_files_it_left_as_they_were(shop, tmp_path):
    # The new generation's files and freshness stats are the earlier one's own objects where a
    # file is unchanged (so a served index's edits make no new work for the cyclic collector),
    # and new ones, as stored, where it changed.
    repo = repository(shop, tmp_path)
    repo.refresh()
    with repo.open() as index:
        files_before = {f.path: f for f in index.reader.files}
        stats_before = dict(index._freshness.indexed)
    write_file(shop, "app/config.py", SHOP["app/config.py"] + "\n\ndef reload_settings(path):\n    return parse_config(path)\n")
    assert repo.refresh().build is not None
    repo.refresh()  # a check of the new generation: its stats made
    with repo.open() as index:
        files_after = {f.path: f for f in index.reader.files}
        stats_after = index._freshness.indexed
        assert index.search('"reload_settings"').results[0].path == "app/config.py"
    assert files_after.keys() == files_before.keys()
    for path, info in files_after.items():
        if path == "app/config.py":
            assert info is not files_before[path] and info.size == (shop / path).stat().st_size
            assert stats_after[path] is not stats_before[path] and stats_after[path].size == info.size
        else:
            assert info is files_before[path] and stats_after[path] is stats_before[path]


def test_a_question_running_on_the_old_generation_finishes_on_it(shop, tmp_path):
    repo = repository(shop, tmp_path)
    repo.refresh()
    with repo.open() as old:
        write_file(shop, "app/config.py", SHOP["app/config.py"] + "\nTIMEOUT = 30\n")
        assert repo.refresh().build is not None
        # The swap happened; the held generation still answers, from its own content.
        assert [h.path for h in old.search('"ECONNREFUSED"').results] == ["app/server.py"]
        assert old.search('"TIMEOUT = 30"').results == []
        with repo.open() as new:
            assert new is not old and [h.path for h in new.search('"TIMEOUT = 30"').results] == ["app/config.py"]
    with pytest.raises(Exception):  # released by its last user: closed
        old.reader.sql("SELECT 1")


def test_concurrent_questions_while_files_change(shop, tmp_path):
    repo = repository(shop, tmp_path)
    repo.refresh()
    errors: list[BaseException] = []
    stop = threading.Event()

    def ask() -> None:
        while not stop.is_set():
            try:
                repo.refresh()
                with repo.open() as index:
                    hits = [h for h in index.search('"VERSION ="').results if "text" in h.modalities]
                    assert [h.path for h in hits] in ([], ["app/version.py"])
            except BaseException as err:  # noqa: BLE001 - any failure fails the test
                errors.append(err)
                return

    askers = [threading.Thread(target=ask) for _ in range(4)]
    for thread in askers:
        thread.start()
    for n in range(5):
        write_file(shop, "app/version.py", f"VERSION = {n}\n" + "# padding\n" * n)
        time.sleep(0.05)
    stop.set()
    for thread in askers:
        thread.join()
    assert not errors, errors
    repo.refresh()
    assert [p for p, _, _ in literal_hits(repo, "VERSION = 4")] == ["app/version.py"]
    assert literal_hits(repo, "VERSION = 3") == []


def test_waits_for_another_builder_then_re_indexes(shop, tmp_path):
    repo = repository(shop, tmp_path, lock_wait=10)
    repo.refresh()
    write_file(shop, "app/extra.py", "def extra():\n    return 'WAITED'\n")
    with store.build_lock(repo.index_dir):  # another process's build, as far as flock can tell
        done: list = []
        waiter = threading.Thread(target=lambda: done.append(repo.refresh()))
        waiter.start()
        time.sleep(0.3)
        assert not done, "the refresh waits while the lock is held"
    waiter.join(timeout=10)
    [refresh] = done
    assert refresh.stale_reason is None and refresh.build is not None
    assert [p for p, _, _ in literal_hits(repo, "WAITED")] == ["app/extra.py"]


def test_answers_from_the_current_generation_when_the_lock_is_held_too_long(shop, tmp_path):
    repo = repository(shop, tmp_path, lock_wait=0.2)
    repo.refresh()
    write_file(shop, "app/extra.py", "def extra():\n    return 'LATE'\n")
    with store.build_lock(repo.index_dir):
        refresh = repo.refresh()
    assert refresh.build is None and refresh.changes.added == ("app/extra.py",)
    assert "another process has been indexing shop" in (refresh.stale_reason or "")
    assert literal_hits(repo, "LATE") == []
    assert repo.refresh().stale_reason is None and literal_hits(repo, "LATE")


def test_the_index_embedder_is_kept_for_rebuilds_and_queries(shop, tmp_path):
    repo = repository(shop, tmp_path)
    repo.refresh()
    model = repo.embedder()
    with repo.open() as index:
        assert index.reader.embedder == {
            "provider": model.provider, "model": model.model, "dims": model.dims,
            "file_context": config.current().EMBED_FILE_CONTEXT,
        }
        index.search("how is the server configured")
        assert index.searcher.embedder() is model
    reopened = repository(shop, tmp_path)
    assert reopened.embedder() is model, "one loaded model per kind, shared in the process"


def test_an_index_of_an_earlier_local_model_is_built_again_when_opened_and_says_why(shop, tmp_path):
    """A new version ships another model: the codes of the one before cannot be compared with
    its questions', so a refresh indexes every file again (and says so), and an index opened
    without a refresh refuses to answer in one sentence rather than compare them."""
    earlier = LocalEmbedder(small_model(tmp_path / "earlier", dims=16, seed=1, name="earlier-model"))
    build_index(shop, tmp_path / "index", embedder=earlier)
    with pytest.raises(IndexFormatError, match=r"embedded by local model earlier-model\S* \(16 bits\), not by this"
                                              r" version's .*; `maguyva index` rebuilds it"):
        Index.open(shop, index_dir=tmp_path / "index").search("how is the server configured")
    repo = repository(shop, tmp_path)
    refresh = repo.refresh()
    assert refresh.build is not None and refresh.build.parsed_files == 6
    assert any("embedded by local model earlier-model" in w and "every file indexed again" in w
               for w in refresh.warnings)
    with repo.open() as index:
        assert index.reader.embedder["model"] == LocalEmbedder().model
        assert index.search("how is the server configured").results
    assert repo.refresh().build is None  # the same model now: nothing to redo


def test_an_index_of_chunks_embedded_alone_is_built_again_in_file_context(shop, tmp_path):
    """Codes made without their files' context (an index of an earlier version) are not what
    this version makes: a refresh embeds every chunk again, and says why."""
    with config.using(config.DEFAULT.but(EMBED_FILE_CONTEXT=0.0)):
        build_index(shop, tmp_path / "index")
    repo = repository(shop, tmp_path)
    refresh = repo.refresh()
    assert refresh.build is not None and refresh.build.embedded_chunks > 0
    (said,) = [w for w in refresh.warnings if "embedded by" in w]
    assert "bits), not local model" in said and "bits, file context 1)" in said
    with repo.open() as index:
        assert index.reader.embedder["file_context"] == 1.0
    assert repo.refresh().build is None


def test_questions_arriving_together_share_one_check(shop, tmp_path, monkeypatch):
    repo = repository(shop, tmp_path)
    repo.refresh()
    checks = []
    with repo.open() as index:
        original = type(index).changes

        def counted(self, *args):
            checks.append(time.monotonic())
            time.sleep(0.2)  # a slow check: questions pile up behind it
            return original(self, *args)

        monkeypatch.setattr(type(index), "changes", counted)
        threads = [threading.Thread(target=repo.refresh) for _ in range(6)]
        for thread in threads:
            thread.start()
            time.sleep(0.01)
        for thread in threads:
            thread.join()
    # The first check ran alone; every question that arrived during it shares the next one.
    assert len(checks) == 2
    write_file(shop, "app/late.py", "LATE = 1\n")
    assert repo.refresh().changes.added == ("app/late.py",), "a question after an edit gets its own check"


def test_an_update_walks_the_repository_once_the_check_and_the_build_sharing_the_walk(shop, tmp_path, monkeypatch):
    from maguyva.index import freshness

    repo = repository(shop, tmp_path)
    repo.refresh()
    walks: list[Path] = []
    original, watched = freshness.walk, freshness.TreeWatch.walk

    def counted(root, *args, **kwargs):  # type: ignore[no-untyped-def]
        walks.append(Path(root))
        return original(root, *args, **kwargs)

    # Builds walk through `freshness.walk_tree`, checks through it or the tree's watch.
    monkeypatch.setattr(freshness, "walk", counted)
    monkeypatch.setattr(freshness.TreeWatch, "walk", lambda self, *a: walks.append(shop) or watched(self, *a))
    write_file(shop, "app/late.py", "def tardy():\n    return 'EWOULDBLOCK'\n")
    refresh = repo.refresh()
    assert refresh.build is not None and refresh.build.parsed_files == 1
    assert len(walks) == 1, "the build used the walk of the check that found the edit"
    assert holding(literal_hits(repo, "EWOULDBLOCK"), 2) == ["app/late.py"]


def test_a_walk_found_to_differ_from_the_published_generation_is_not_compared_with_it_again(shop, tmp_path, monkeypatch):
    from maguyva.index import build
    from maguyva.index.build import build_index
    from maguyva.index.freshness import DEFAULT_MAX_FILE_SIZE, Walk

    compared: list[Path] = []
    original = build.unchanged_index
    monkeypatch.setattr(build, "unchanged_index", lambda index_dir, *a: compared.append(index_dir) or original(index_dir, *a))
    repo = repository(shop, tmp_path)
    repo.refresh()  # the first build
    compared.clear()
    write_file(shop, "app/late.py", "def tardy():\n    return 'EWOULDBLOCK'\n")
    refresh = repo.refresh()
    assert refresh.build is not None and refresh.build.parsed_files == 1
    assert compared == [], "the check that handed the walk had found it differs"
    assert holding(literal_hits(repo, "EWOULDBLOCK"), 2) == ["app/late.py"]
    # Found to differ from a generation that is no longer the published one: compared again,
    # and found unchanged (another build published this state meanwhile).
    index_dir = tmp_path / "other-index"
    build_index(shop, index_dir)
    compared.clear()
    files, skipped = walk(shop)
    walked = Walk(shop.resolve(), 0, files, skipped, DEFAULT_MAX_FILE_SIZE, False, differs_from="gen-000000")
    assert build_index(shop, index_dir, walked=walked).parsed_files == 0
    assert compared == [index_dir]


def test_a_walk_taken_with_other_options_is_not_used_by_the_build(shop, tmp_path, monkeypatch):
    from maguyva.index import freshness
    from maguyva.index.build import build_index
    from maguyva.index.freshness import DEFAULT_MAX_FILE_SIZE, Walk

    index_dir = tmp_path / "index"
    build_index(shop, index_dir)
    write_file(shop, "app/late.py", "LATE = 'EWOULDBLOCK'\n")
    files, skipped = walk(shop, max_file_size=10)  # as a walk with a 10-byte limit sees it
    walks: list[Path] = []
    original = freshness.walk
    monkeypatch.setattr(freshness, "walk", lambda root, *a, **k: walks.append(root) or original(root, *a, **k))
    summary = build_index(shop, index_dir, walked=Walk(shop.resolve(), 0, files, skipped, 10, False))
    assert walks == [shop.resolve()] and summary.files == 7
    # The build's own options: used, and nothing walked again.
    files, skipped = original(shop)
    write_file(shop, "app/later.py", "LATER = 1\n")
    summary = build_index(shop, index_dir, walked=Walk(shop.resolve(), 0, files, skipped, DEFAULT_MAX_FILE_SIZE, False))
    assert len(walks) == 1 and summary.files == 7, "the handed walk is the state the build records"


def test_a_scoped_repository_indexes_and_watches_only_its_part_of_the_tree(tmp_path):
    from maguyva.index.freshness import in_scope

    tree = write_tree(tmp_path / "estate", {
        "billing/ledger.py": "def post_entry():\n    return 'LEDGER_MARK'\n",
        "billing/tax/rates.py": "RATE = 'RATES_MARK'\n",
        "billing-old/ledger.py": "def legacy():\n    return 'LEGACY_MARK'\n",
        "shipping/route.py": "def plan_route():\n    return 'ROUTE_MARK'\n",
        "setup.py": "NAME = 'SETUP_MARK'\n",
    })  # fmt: skip
    assert in_scope("billing/tax/rates.py", frozenset({"billing"}))
    assert not in_scope("billing-old/ledger.py", frozenset({"billing"})), "a scope names whole folders"
    repo = repository(tree, tmp_path, scope=("billing", "setup.py"))
    assert repo.refresh().build.files == 3
    assert [p for p, _, _ in literal_hits(repo, "LEDGER_MARK")] == ["billing/ledger.py"]
    assert literal_hits(repo, "ROUTE_MARK") == [] and literal_hits(repo, "LEGACY_MARK") == []
    # An edit outside the scope is none of its business; one inside is re-indexed.
    write_file(tree, "shipping/route.py", "ROUTE = 'MOVED_MARK'\n")
    assert not repo.refresh().changes.stale
    write_file(tree, "billing/tax/rates.py", "RATE = 'NEW_RATES_MARK'\n")
    refresh = repo.refresh()
    assert refresh.changes.modified == ("billing/tax/rates.py",) and refresh.build.parsed_files == 1
    assert [p for p, _, _ in literal_hits(repo, "NEW_RATES_MARK")] == ["billing/tax/rates.py"]
    # The scope is kept by the index: a build that does not name one keeps it.
    from maguyva.index.build import build_index

    assert build_index(tree, tmp_path / "index").files == 3


def counting_walks(monkeypatch) -> list[str]:
    """Every walk a check or a build takes from now on, by who took it."""
    from maguyva.index import freshness

    walks: list[str] = []
    original, watched = freshness.walk, freshness.TreeWatch.walk
    monkeypatch.setattr(freshness, "walk", lambda root, *a, **k: walks.append("walk") or original(root, *a, **k))
    monkeypatch.setattr(freshness.TreeWatch, "walk", lambda self, *a: walks.append("watch") or watched(self, *a))
    return walks


needs_a_watch = pytest.mark.skipif(
    not hasattr(__import__("maguyva._core").__dict__["_core"], "TreeWatch"), reason="folders are watched on Linux only"
)


def settled(repo: Repository) -> None:
    """Refreshed until a check trusts the watch (a check after a walk that began watching
    folders walks once more)."""
    for _ in range(4):
        if repo.refresh().changes.watched:
            return
    raise AssertionError("the watch never settled")


@needs_a_watch
def test_a_watched_tree_is_not_walked_while_nothing_changes(shop, tmp_path, monkeypatch):
    repo = repository(shop, tmp_path)
    repo.refresh()
    settled(repo)
    walks = counting_walks(monkeypatch)
    for _ in range(5):
        refresh = repo.refresh()
        assert refresh.changes.watched and refresh.changes.walked == 0 and not refresh.changes.stale
        assert refresh.to_dict()["changed_files"] == 0
    (shop / "app" / "config.py").read_bytes()  # reading changes nothing
    write_file(shop, "app/.config.py.swp", b"\x00swap")  # nor does an editor's hidden swap file
    assert repo.refresh().changes.watched
    assert walks == []
    assert holding(literal_hits(repo, "ECONNREFUSED"), 11) == ["app/server.py"]


@needs_a_watch
def test_every_edit_of_a_watched_tree_is_answered_by_the_question_right_after_it(shop, tmp_path, monkeypatch):
    repo = repository(shop, tmp_path)
    repo.refresh()
    settled(repo)
    walks = counting_walks(monkeypatch)
    # Each edit, then at once a question whose check must see it (no pause: the kernel queued
    # the event before the edit's call returned).
    edits = [
        ("modified", lambda: write_file(shop, "app/retry.py", SHOP["app/retry.py"] + "\nMARK_ONE = 'TENTATIVE'\n"), "TENTATIVE", "app/retry.py"),
        ("added", lambda: write_file(shop, "app/fresh/queue.py", "PENDING = 'QUEUED_MARK'\n"), "QUEUED_MARK", "app/fresh/queue.py"),
        ("added", lambda: write_file(shop, "app/fresh/deeper/worker.py", "W = 'WORKER_MARK'\n"), "WORKER_MARK", "app/fresh/deeper/worker.py"),
        ("renamed", lambda: (shop / "app/fresh/queue.py").rename(shop / "app/fresh/jobs.py"), "QUEUED_MARK", "app/fresh/jobs.py"),
        ("touched old", lambda: write_file(shop, "app/config.py", SHOP["app/config.py"] + "OLD_MARK = 1\n", old=True), "OLD_MARK", "app/config.py"),
        ("ignored", lambda: write_file(shop, ".gitignore", "app/fresh/deeper/\n"), "WORKER_MARK", None),
        ("removed", lambda: (shop / "app/retry.py").unlink(), "TENTATIVE", None),
    ]  # fmt: skip
    for what, edit, literal, where in edits:
        walks.clear()
        edit()
        refresh = repo.refresh()
        assert not refresh.changes.watched and refresh.changes.stale, what
        assert walks[0] == "watch", what
        assert [p for p, _, _ in literal_hits(repo, literal)] == ([where] if where else []), what
        if "fresh" not in (where or ""):
            # Built from that walk, the new generation trusts the watch from where the walk
            # began; an edit that made a folder walks once more (its watch began after the walk).
            assert repo.refresh().changes.watched, what
        settled(repo)
    # The index is what a build of the tree from nothing makes.
    with repo.open() as index:
        kept = sorted((f.path, f.sha256) for f in index.reader.files)
    fresh = Index.build(shop, index_dir=tmp_path / "from-nothing")
    assert kept == sorted((f.path, f.sha256) for f in fresh.reader.files)


@needs_a_watch
def test_a_watch_that_fails_is_given_up_and_the_tree_walked_again(shop, tmp_path, monkeypatch, caplog):
    from maguyva.index import freshness

    repo = repository(shop, tmp_path)
    repo.refresh()
    settled(repo)
    watch = repo._tree_watch()
    assert watch is not None and watch.folders >= 2

    class Unreadable:
        root = shop

        def changes(self) -> int:
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(watch, "_core", Unreadable())
    walks = counting_walks(monkeypatch)
    write_file(shop, "app/late.py", "LATE = 'LATE_MARK'\n")
    refresh = repo.refresh()
    assert refresh.changes.added == ("app/late.py",) and walks == ["walk"]
    assert watch.failed and "stopped watching" in caplog.text
    assert [p for p, _, _ in literal_hits(repo, "LATE_MARK")] == ["app/late.py"]
    assert not repo.refresh().changes.watched, "walked before every answer from now on"
    assert freshness.TreeWatch.of(shop) is not None, "another watch may still be made"


def test_a_tree_is_walked_before_every_answer_when_not_watched(shop, tmp_path, monkeypatch):
    from maguyva.index.freshness import TreeWatch

    repo = repository(shop, tmp_path, watch=False)
    repo.refresh()
    walks = counting_walks(monkeypatch)
    for _ in range(3):
        assert not repo.refresh().changes.watched
    assert walks == ["walk"] * 3
    monkeypatch.setenv("MAGUYVA_NO_WATCH", "1")
    assert TreeWatch.of(shop) is None
