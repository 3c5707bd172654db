"""The distributed corpus on Ray clusters simulated on this machine: the same answers as a
`Corpus` over the same repositories, shards split by path, partial answers when a shard's
actor dies or is late, recovery once Ray restarts it, and failures kept to their shard.

Every node binds 127.0.0.1 (`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`), usage reporting is off, and
each cluster keeps its files in a temporary folder of its own.
"""

from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
from fixture_repos import SHOP, TOOLS, write_file, write_tree
from ray.cluster_utils import Cluster

from maguyva.distributed import RayCorpus
from maguyva.distributed.shards import split_by_path
from maguyva.errors import OutsideRootsError, RequestError, UnknownRepositoryError
from maguyva.serve.corpus import Corpus

pytestmark = pytest.mark.ray

#: An invented third repository: a scheduler whose jobs call each other across files.
QUEUE = {
    "queue/jobs.py": (
        "from queue.clock import next_tick\n\n\n"
        "def schedule_job(job, delay):\n"
        '    """Put a job on the queue to run after a delay."""\n'
        "    return next_tick() + delay\n\n\n"
        "def retry(job):\n"
        '    """Schedule a failed job again, later."""\n'
        "    return schedule_job(job, 30)\n"
    ),
    "queue/clock.py": "import time\n\n\ndef next_tick():\n    return int(time.time()) + 1\n",
    "queue/worker.py": (
        "from queue.jobs import retry, schedule_job\n\n\n"
        "def run_once(job):\n"
        "    try:\n"
        "        return job()\n"
        "    except OSError:\n"
        "        retry(job)\n"
        "        raise RuntimeError('EQUEUEFULL')\n"
    ),
    # The shop's package, imported: callers and impact cross into this repository.
    "queue/settings.py": "from app.config import parse_config\n\n\ndef load_jobs(path):\n    return parse_config(path)\n",
    "README.md": "# queue\n\nJobs are retried with a delay when they fail.\n",
}

#: One question of each intent.
QUESTIONS = [
    "where is schedule_job defined",
    "who calls retry",
    "what breaks if I change schedule_job",
    '"EQUEUEFULL"',
    "how are failed jobs retried later",
    "def run_once(job):\n    try:\n        return job()\n    except OSError:\n        retry(job)",
    "ECONNREFUSED",
]


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Three repositories and the cache folder their indexes live in (shared by the test
    process and the Ray workers, which inherit it from the nodes started below)."""
    base = tmp_path_factory.mktemp("estate")
    home = base / "home"
    previous = os.environ.get("MAGUYVA_HOME")
    os.environ["MAGUYVA_HOME"] = str(home)
    yield {
        "shop": write_tree(base / "shop", SHOP),
        "tools": write_tree(base / "tools", TOOLS),
        "queue": write_tree(base / "queue", QUEUE),
        "home": home,
    }
    if previous is None:
        os.environ.pop("MAGUYVA_HOME", None)
    else:
        os.environ["MAGUYVA_HOME"] = previous


@pytest.fixture(scope="module")
def cluster(estate: dict[str, Path]) -> Iterator[Cluster]:
    """A head and two more nodes on this machine, and this process connected to them."""
    temp = tempfile.mkdtemp(prefix="maguyva-ray-test-")
    # Ray's files, the record of the current cluster included, in a folder of this run's own.
    previous = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = temp
    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    nodes.add_node(num_cpus=1)
    nodes.add_node(num_cpus=1)
    ray.init(address=nodes.address, log_to_driver=False)
    yield nodes
    ray.shutdown()
    nodes.shutdown()
    if previous is None:
        os.environ.pop("RAY_TMPDIR", None)
    else:
        os.environ["RAY_TMPDIR"] = previous
    shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def paths(estate: dict[str, Path]) -> list[Path]:
    return [estate["shop"], estate["tools"], estate["queue"]]


@pytest.fixture(scope="module")
def distributed(cluster: Cluster, paths: list[Path], estate: dict[str, Path]) -> Iterator[RayCorpus]:
    with RayCorpus.build(paths, placement_file=estate["home"] / "placement.json") as corpus:
        yield corpus


def comparable(answer: dict[str, object]) -> dict[str, object]:
    """An answer without its timings (the one part that differs from run to run)."""
    return {k: v for k, v in answer.items() if k not in ("elapsed_ms", "timings_ms")}


def test_every_intent_answers_as_the_single_process_corpus_does(distributed, paths):
    with Corpus.open(paths) as local:
        for question in QUESTIONS:
            far, near = distributed.search(question, top_k=8), local.search(question, top_k=8)
            assert far.partial == ()
            assert comparable(far.to_dict()) == comparable(near.to_dict()), question
            assert far.file_sizes == near.file_sizes
        assert distributed.find_symbol("retry") == local.find_symbol("retry")
        assert distributed.find_symbol("schedule_job", kind="function") == local.find_symbol("schedule_job", kind="function")
        for name in ("retry", "schedule_job", "Retry", "parse_config"):
            assert distributed.callers(name, depth=2) == local.callers(name, depth=2)
            assert distributed.impact(name) == local.impact(name)
        crossing = {(r, d.symbol, d.resolution) for r, d in distributed.callers("parse_config").dependants}
        assert ("queue", "load_jobs", "imported") in crossing
        line = QUEUE["queue/worker.py"].splitlines().index("def run_once(job):") + 1
        far_at, far_like = distributed.find_related("queue/worker.py", line, top_k=5)
        near_at, near_like = local.find_related("queue/worker.py", line, top_k=5)
        assert far_at == near_at
        assert comparable(far_like.to_dict()) == comparable(near_like.to_dict())
        assert distributed.search("who calls retry", repo="queue").results == local.search("who calls retry", repo="queue").results
        with pytest.raises(OutsideRootsError, match="outside"):
            distributed.find_related("../elsewhere.py", 1)
        wanted = [("queue", "queue/jobs.py"), ("shop", "app/retry.py"), ("queue", "nowhere.py")]
        assert distributed.file_sizes(wanted) == local.file_sizes(wanted)
        assert [s["files"] for s in distributed.index_status()] == [s["files"] for s in local.index_status()]


def test_shards_are_spread_over_the_nodes_and_their_placement_is_reused(cluster, distributed, paths, estate):
    nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    placed = distributed.placement()
    assert set(placed) == {"shop", "tools", "queue"} and set(placed.values()) <= nodes
    # A second corpus over the same repositories builds each shard where its index already is:
    # nothing is parsed again.
    with RayCorpus.build(paths, placement_file=estate["home"] / "placement.json") as again:
        assert again.placement() == placed
        assert [s.built["parsed_files"] for s in again._shards] == [0, 0, 0]


def test_a_repository_split_by_path_answers_under_its_own_name(cluster, estate):
    files = {f"svc/part_{i}/handler_{i}.py": f"def handle_{i}():\n    return 'SPLITMARK_{i}'\n" for i in range(7)}
    files["svc/part_3/extra.py"] = "def extra():\n    return 'SPLITMARK_X'\n"
    files["setup.py"] = "NAME = 'SPLITMARK_TOP'\n"
    root = write_tree(estate["home"].parent / "split", files)
    with RayCorpus.build([root], max_shard_files=3, placement_file=estate["home"] / "placement.json") as corpus:
        shards = corpus.shards()
        assert len(shards) >= 3 and all(s.repo == "split" for s in shards)
        covered = sorted(path for s in shards for path in s.scope)
        assert len(covered) == len(set(covered)), "each file and folder is in one shard"
        answer = corpus.search('"SPLITMARK_"', top_k=20)
        assert answer.partial == ()
        assert sorted(hit.path for hit in answer.results) == sorted(files)
        assert set(answer.repos) == {"split"}
        found = corpus.find_symbol("handle_5")
        assert [(repo, d.path) for repo, d in found] == [("split", "svc/part_5/handler_5.py")]
        # An edit is seen by the shard holding the file, as a single index sees it.
        write_file(root, "svc/part_6/handler_6.py", "def handle_6():\n    return 'FRESHMARK'\n")
        assert [hit.path for hit in corpus.search('"FRESHMARK"').results] == ["svc/part_6/handler_6.py"]


def test_split_by_path_keeps_folders_whole_and_every_path_once():
    paths = [f"a/{i}.py" for i in range(4)] + [f"b/c/{i}.py" for i in range(5)] + ["b/d.py", "top.py"]
    scopes = split_by_path(paths, 4)
    assert scopes == [("a",), ("b/c/0.py", "b/c/1.py", "b/c/2.py", "b/c/3.py"), ("b/c/4.py", "b/d.py", "top.py")]
    assert split_by_path(paths, 100) == [()]


def restarted_server(actor: object, first_pid: int) -> dict[str, object]:
    """What the shard's server says of itself once Ray has restarted it (another process)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            described = ray.get(actor.describe.remote(), timeout=10)  # type: ignore[attr-defined]
        except ray.exceptions.RayActorError:
            continue
        if described["pid"] != first_pid:
            return described
    raise AssertionError("the shard's server was not restarted within a minute")


def test_a_dead_shard_is_named_in_every_answer_while_the_others_answer(cluster, paths, estate):
    # One process a shard, so that killing one takes one shard away.
    with RayCorpus.build(paths, placement_file=estate["home"] / "placement.json", shards_per_actor=1) as corpus:
        assert len(corpus.servers()) == 3
        question = "how are failed jobs retried later"
        whole = corpus.search(question)
        ray.kill(corpus.shard_actors()["queue"], no_restart=True)
        answer = corpus.search(question)
        assert answer.partial == ("queue",) and "queue" not in answer.repos and answer.results
        assert any("queue left out" in w for w in answer.refreshes["queue"].warnings)
        others = [(repo, hit.path) for repo, hit in zip(whole.repos, whole.results) if repo != "queue"]
        assert [(repo, hit.path) for repo, hit in zip(answer.repos, answer.results)][: len(others)] == others[: len(answer.results)]
        assert corpus.find_symbol("retry").partial == ("queue",)
        assert corpus.callers("retry").partial == ("queue",)


def test_a_killed_actor_is_restarted_and_serves_again_without_rebuilding(distributed):
    question = "how are failed jobs retried later"
    whole = distributed.search(question)
    actor = distributed.shard_actors()["queue"]
    before = ray.get(actor.describe.remote())
    # The process serves every shard of its node that was built there (up to 8).
    assert "queue" in before["shards"] and set(before["shards"]) <= {"shop", "tools", "queue"}
    ray.kill(actor, no_restart=False)
    # While it restarts, questions are answered (from every shard, or partially: under load any
    # shard may miss so short a deadline), never failed.
    during = distributed.search(question, deadline=0.05)
    assert set(during.partial) <= {"shop", "tools", "queue"}
    after = restarted_server(actor, before["pid"])
    assert set(after["shards"]) == set(before["shards"])
    assert not any(s["built_on_open"] for s in after["shards"].values()), "it reopened the indexes its node holds"
    answer = distributed.search(question)
    assert answer.partial == ()
    assert comparable(answer.to_dict()) == comparable(whole.to_dict())


def test_a_deadline_is_honoured(distributed):
    started = time.monotonic()
    answer = distributed.search("how are failed jobs retried later", deadline=0.001)
    assert time.monotonic() - started < 5.0  # the deadline, then cancelling the late calls
    # Whatever did not answer within a millisecond is named, never dropped silently.
    assert set(answer.partial) | set(answer.repos) <= {"shop", "tools", "queue"}
    assert len(set(answer.repos)) + len(answer.partial) >= 1


def test_a_repository_missing_on_the_nodes_is_its_own_failure(cluster, estate):
    missing = estate["home"].parent / "not-there"
    with RayCorpus.build([estate["queue"], missing], placement_file=estate["home"] / "placement.json") as corpus:
        assert set(corpus.failed) == {"not-there"}
        answer = corpus.search('"EQUEUEFULL"')
        assert answer.partial == ("not-there",)
        assert [hit.path for hit in answer.results] == ["queue/worker.py"]
        assert any("not found" in w or "missing" in w for w in answer.refreshes["not-there"].warnings)


def test_a_damaged_shard_index_is_rebuilt_by_its_server(cluster, estate, tmp_path):
    root = write_tree(tmp_path / "fragile", {"mod/a.py": "def fragile():\n    return 'FRAGILEMARK'\n"})
    with RayCorpus.build([root], placement_file=estate["home"] / "placement.json") as corpus:
        from maguyva.index import store

        for part in store.current_generation(Path(corpus.shards()[0].index_dir)).iterdir():
            if part.suffix in (".npy", ".idx", ".sqlite"):
                part.write_bytes(b"damaged")
        actor = corpus.shard_actors()["fragile"]
        first = ray.get(actor.describe.remote())["pid"]
        ray.kill(actor, no_restart=False)
        # The restarted server finds the index damaged when it opens it, and builds it again.
        assert restarted_server(actor, first)["shards"]["fragile"]["built_on_open"] is True
        answer = corpus.search('"FRAGILEMARK"')
        assert answer.partial == () and [hit.path for hit in answer.results] == ["mod/a.py"]


def test_questions_are_checked_before_they_fan_out(distributed):
    with pytest.raises(RequestError, match="empty"):
        distributed.search("   ")
    with pytest.raises(RequestError, match="top_k"):
        distributed.search("retry", top_k=0)
    with pytest.raises(UnknownRepositoryError, match="unknown repository"):
        distributed.search("retry", repo="elsewhere")
    with pytest.raises(RequestError, match="depth"):
        distributed.callers("retry", depth=0)


def test_the_command_line_searches_on_a_local_ray_it_starts(estate, tmp_path):
    env = {**os.environ, "MAGUYVA_HOME": str(tmp_path / "home")}
    env.pop("RAY_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, "-m", "maguyva", "search", "--ray", '"EQUEUEFULL"', str(estate["queue"]), "--json"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert [r["path"] for r in answer["results"]] == ["queue/worker.py"]


def without_timings(payload: dict[str, object]) -> dict[str, object]:
    """A tool's answer without what differs from run to run (freshness timings and the token
    count of the text holding them)."""
    kept = {k: v for k, v in payload.items() if k != "freshness"}
    if isinstance(kept.get("tokens"), dict):
        kept["tokens"] = {k: v for k, v in kept["tokens"].items() if k != "returned"}
    return kept


def test_the_agent_tools_answer_from_shards_as_from_one_process(distributed, paths):
    import jsonschema

    from maguyva.serve.mcp.tools import TOOLS, call_tool

    calls = [
        ("search", {"query": "who calls retry", "top_k": 5, "preset": "default"}),
        ("find_symbol", {"name": "schedule_job"}),
        ("callers", {"symbol": "retry", "depth": 2}),
        ("impact", {"symbol": "next_tick", "depth": 3}),
        ("find_related", {"path": "queue/jobs.py", "line": 4, "top_k": 5, "preset": "default"}),
    ]
    with Corpus.open(paths) as local:
        for tool, arguments in calls:
            far, _ = call_tool(distributed, tool, dict(arguments))
            near, _ = call_tool(local, tool, dict(arguments))
            jsonschema.validate(far, TOOLS[tool].output_schema)
            assert without_timings(far) == without_timings(near), tool
        far, _ = call_tool(distributed, "index_status", {})
        assert [r["name"] for r in far["repositories"]] == ["shop", "tools", "queue"]


def test_the_mcp_server_serves_from_a_local_ray(estate, tmp_path):
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "maguyva", "mcp", "--ray", str(estate["queue"])],
        env={**env, "MAGUYVA_HOME": str(tmp_path / "home")},
    )  # fmt: skip

    async def scenario() -> None:
        with anyio.fail_after(240), open(os.devnull, "w") as quiet:
            async with stdio_client(parameters, errlog=quiet) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    result = await session.call_tool("search", {"query": '"EQUEUEFULL"'})
                    assert not result.is_error, result.content[0].text
                    assert [r["path"] for r in result.structured_content["results"]] == ["queue/worker.py"]
                    result = await session.call_tool("callers", {"symbol": "schedule_job"})
                    assert {c["caller"] for c in result.structured_content["callers"]} == {"retry"}

    anyio.run(scenario)
