"""What an agent can send down `maguyva mcp`'s stdin: lines that are not JSON, not JSON-RPC, not
UTF-8, or calls with arguments of the wrong type or size. After each one the server still
answers the next request, an error about a call is one short sentence, and a search afterwards
answers correctly."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from indexes import write_tree
from mcp_types import LATEST_PROTOCOL_VERSION

TREE = {
    "roast/drum.py": "def roast_beans(batch, minutes):\n    return [bean.darker(minutes) for bean in batch]\n",
    "roast/grind.go": "package roast\n\n// GrindSize picks the burr gap for a brew method.\nfunc GrindSize(method string) int {\n\treturn 7\n}\n",
}
#: Seconds to wait for one answer: the first call may index the repository.
ANSWER_SECONDS = 60

MALFORMED = [
    b"garbage",
    b"{",
    b"[]",
    b"{}",
    b"null",
    b'"a string"',
    b"\xff\xfe\x00not utf-8",
    b'{"jsonrpc":"2.0","id":5}',
    b'{"jsonrpc":"1.0","id":6,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":[1],"method":"ping"}',
    b'{"jsonrpc":"2.0","id":7,"method":"no/such/method"}',
    b'{"jsonrpc":"2.0","id":8,"method":"tools/call"}',
    b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}',
    b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"search","arguments":[]}}',
    b'[{"jsonrpc":"2.0","id":11,"method":"ping"}]',
    b'{"jsonrpc":"2.0","method":"notifications/unknown","params":{"x":' + b"[" * 5000 + b"]" * 5000 + b"}}",
    b" " * 100_000,
]
#: Tool calls refused with one short sentence each.
REFUSED_CALLS = [
    {"query": 5},
    {"query": "x", "top_k": 1e308},
    {"query": "x", "top_k": "ten"},
    {"query": "x", "preset": "p" * 50_000},
    {"query": ["roast"] * 10_000},
    {"query": "x" * 1_000_000},
    {"query": "x\u0000y"},
    {},
]


class Server:
    """`maguyva mcp` as a subprocess, spoken to line by line."""

    def __init__(self, root: Path, home: Path):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "maguyva", "mcp", str(root)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "MAGUYVA_HOME": str(home)},
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 1000

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> dict:
        """Send one request and return its response, whatever else arrives first."""
        self.next_id += 1
        wanted = self.next_id
        message = {"jsonrpc": "2.0", "id": wanted, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message).encode())
        while True:
            try:
                line = self.lines.get(timeout=ANSWER_SECONDS)
            except queue.Empty:
                pytest.fail(f"no answer to {method} within {ANSWER_SECONDS} s")
            answer = json.loads(line)
            if answer.get("id") == wanted:
                return answer

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=30)


@pytest.fixture()
def server(tmp_path: Path):
    root = write_tree(tmp_path / "roastery", TREE)
    running = Server(root, tmp_path / "home")
    try:
        init = running.request("initialize", {
            "protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "wire-test", "version": "1"},
        })
        assert init["result"]["serverInfo"]["name"] == "maguyva"
        running.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        yield running
    finally:
        if running.process.poll() is None:
            running.process.kill()
            running.process.wait()


def search(server: Server, arguments: dict) -> dict:
    return server.request("tools/call", {"name": "search", "arguments": arguments})["result"]


def test_malformed_lines_leave_the_server_answering(server):
    for line in MALFORMED:
        server.send(line)
        assert server.request("ping") == {"jsonrpc": "2.0", "id": server.next_id, "result": {}}, line[:60]
    result = search(server, {"query": "who picks the burr gap"})
    assert not result.get("isError") and result["structuredContent"]["results"][0]["path"] == "roast/grind.go"
    assert server.close() == 0


def test_refused_arguments_are_one_short_sentence_and_change_nothing(server):
    for arguments in REFUSED_CALLS:
        result = search(server, arguments)
        assert result["isError"], arguments
        message = result["content"][0]["text"]
        assert "\n" not in message and len(message) < 200 and "Traceback" not in message, message
    result = search(server, {"query": "roast the beans for some minutes"})
    assert not result.get("isError") and result["structuredContent"]["results"][0]["path"] == "roast/drum.py"
